//! The engines behind Redis Sentinel: the master is found through the
//! sentinels, and after it dies and its replica is promoted, operations
//! resume on the new master without a new config.

use std::time::Duration;

use crate::common;
use crate::common::{NO_WAIT, Sentinels};
use redislock::config::{Config, Defaults};
use redislock::conn::Error;
use redislock::lock;
use redislock::queue::{self};

#[test]
fn operations_resume_after_a_failover() {
    let mut set = Sentinels::start();
    let config = Config::from_dsn(&set.dsn(), &Defaults::default()).unwrap();
    let key = lock::Keys::named(b"", b"s").lock;
    let token = redislock::token::new_token();
    assert!(common::acquired(&config, &key, &token, Duration::from_secs(60), NO_WAIT).unwrap());
    assert!(set.master.pttl("lock:{s}") > 0, "written on the master");
    let q = queue::Keys::new(b"", b"jobs");
    assert_eq!(
        queue::enqueue(&config, &q, &[b"a".to_vec()], 0.0).unwrap(),
        1
    );
    common::wait_for("the replica to have the lock", 10, || {
        set.replica.pttl("lock:{s}") > 0
    });

    let old = set.master.port;
    set.master.stop();
    common::wait_for("the sentinels' failover", 30, || set.master_port() != old);
    assert_eq!(set.master_port(), set.replica.port);

    // The pooled connection led to the dead master: that call fails as a
    // connection error (its outcome is unknown). The next asks the sentinels.
    match lock::holds(&config, &key, &token) {
        Ok(held) => assert!(held),
        Err(e) => assert!(matches!(e, Error::Connection { .. }), "{e}"),
    }
    common::wait_for("the promoted replica to accept writes", 10, || {
        lock::extend(&config, &key, &token, Duration::from_secs(60)).unwrap_or(false)
    });
    assert_eq!(queue::pop(&config, &q, 10).unwrap().len(), 1);
    assert!(common::release(&config, &key, token.as_bytes()).unwrap());
    assert_eq!(
        set.replica.pttl("lock:{s}"),
        -2,
        "released on the new master"
    );
}

#[test]
fn an_unknown_master_name_is_a_clear_error() {
    let set = Sentinels::start();
    let dsn = set.dsn().replace("/mymaster", "/nosuchmaster");
    let config = Config::from_dsn(&dsn, &Defaults::default()).unwrap();
    let err = lock::holds(&config, b"k", "t").unwrap_err().to_string();
    assert!(
        err.contains("sentinel") && err.contains("nosuchmaster"),
        "{err}"
    );
}
