//! One lazily opened connection per process, thread and server, reused across
//! requests, never carried across a fork, and dropped after any I/O error or
//! timeout (the outcome of a command is then unknown, so the stream is too).

use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;

use redis::{Connection, ConnectionLike, ErrorKind, RedisError, RedisResult};

use crate::config::Config;

/// Why a Redis call failed. Messages name the server, never a password.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// Unreachable, refused, reset, timed out: the outcome is unknown.
    Connection { server: String, cause: String },
    /// Redis answered with an error (wrong type, script error, OOM...).
    Server { server: String, cause: String },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Connection { server, cause } => {
                write!(f, "Redis at {server} is unavailable: {cause}")
            }
            Error::Server { server, cause } => {
                write!(f, "Redis at {server} answered with an error: {cause}")
            }
        }
    }
}

impl std::error::Error for Error {}

/// An error reply leaves the stream in step; anything else may not have.
fn keeps_connection(err: &RedisError) -> bool {
    matches!(
        err.kind(),
        ErrorKind::Server(_) | ErrorKind::Extension | ErrorKind::UnexpectedReturnType
    )
}

fn classify(config: &Config, err: RedisError) -> Error {
    let server = config.server.clone();
    let cause = err.to_string();
    if keeps_connection(&err) {
        Error::Server { server, cause }
    } else {
        Error::Connection { server, cause }
    }
}

struct Slot {
    pid: u32,
    conn: Connection,
}

thread_local! {
    static POOL: RefCell<HashMap<String, Slot>> = RefCell::new(HashMap::new());
}

/// Which pool a connection belongs to: commands, or waiting on pub/sub (a
/// subscribed connection cannot run commands).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Command,
    Subscriber,
}

fn pool_key(config: &Config, role: Role) -> String {
    match role {
        Role::Command => config.id.clone(),
        Role::Subscriber => format!("{}\0sub", config.id),
    }
}

fn connect(config: &Config) -> RedisResult<Connection> {
    let client = redis::Client::open(config.info.clone())?;
    let mut conn = client.get_connection_with_timeout(config.connect_timeout)?;
    conn.set_read_timeout(Some(config.read_timeout))?;
    conn.set_write_timeout(Some(config.read_timeout))?;
    // `CLIENT LIST` then shows which process owns each connection. An error
    // reply (an ACL user may not name itself) is fine; a broken stream is not.
    let name = format!("redislock-{}", std::process::id());
    match redis::cmd("CLIENT")
        .arg("SETNAME")
        .arg(name)
        .query::<()>(&mut conn)
    {
        Err(e) if !keeps_connection(&e) => Err(e),
        _ => Ok(conn),
    }
}

/// Takes this process's connection for `config` out of the pool, opening one
/// if there is none (or only one inherited from a parent process).
fn take(config: &Config, key: &str) -> Result<Connection, Error> {
    let pid = std::process::id();
    let slot = POOL.with(|pool| pool.borrow_mut().remove(key));
    match slot {
        // A connection inherited through fork() shares its socket with the
        // parent: dropping our copy closes only our descriptor.
        Some(slot) if slot.pid == pid => Ok(slot.conn),
        _ => connect(config).map_err(|e| classify(config, e)),
    }
}

fn put(key: String, conn: Connection) {
    let pid = std::process::id();
    POOL.with(|pool| {
        pool.borrow_mut().insert(key, Slot { pid, conn });
    });
}

/// Runs `f` on this process's command connection to `config`'s server.
pub fn with<T>(
    config: &Config,
    f: impl FnOnce(&mut Connection) -> RedisResult<T>,
) -> Result<T, Error> {
    with_role(config, Role::Command, f)
}

/// Runs `f` on the connection of the given role; the connection goes back to
/// the pool unless `f` failed in a way that leaves its state unknown.
pub fn with_role<T>(
    config: &Config,
    role: Role,
    f: impl FnOnce(&mut Connection) -> RedisResult<T>,
) -> Result<T, Error> {
    let key = pool_key(config, role);
    let mut conn = take(config, &key)?;
    match f(&mut conn) {
        Ok(value) => {
            put(key, conn);
            Ok(value)
        }
        Err(err) => {
            if keeps_connection(&err) && conn.is_open() {
                put(key, conn);
            }
            Err(classify(config, err))
        }
    }
}
