//! The engine tests against real redis-servers, linked as one binary (one
//! link instead of one per file, and the tests of every file share the
//! test threads: most of them wait on a server's clock, not the CPU).
//! `cargo test --no-default-features --test engine lock::` runs one file's.

mod common;

mod batch;
mod cluster;
mod contract;
mod flow;
mod functions;
mod layers;
mod lease;
mod lease_queue;
mod limit;
mod line;
mod lock;
mod permits;
mod properties;
mod queue;
mod queue_trust;
mod records;
mod redlock;
mod sentinel;
mod stock;
mod structure;
mod tls;
mod wire;
