//! A process's identity, by which inspections name who holds a lock or a
//! lease (`lock::hold` is a held lock; `lock::registry` the locks a
//! process holds). The owner and lease tokens a process makes
//! start with an id of the process (12 hex digits, new after a fork), and
//! the process describes itself once per server in a hash of its own,
//! `redislock:holder:<id>`: host, pid, since when (its first description)
//! and what the process runs (the SAPI and the script's file name: never
//! its command line, which can carry a password). An inspection finds the
//! holder of a token there. The acquire or reserve that writes it pays one
//! round trip more, the others nothing (one write per process, server and
//! prefix, renewed every [`RENEW`]).

use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::config::Config;
use crate::conn;

/// How long a process's description outlives its last renewal: a process
/// that died is forgotten a day later.
const KEEP: Duration = Duration::from_secs(24 * 3600);
/// How often a living process renews its description (also bounds how long
/// a description lost with the server's data stays missing).
const RENEW: Duration = Duration::from_secs(60);
/// The hex digits of a token that name its process.
const ID_LEN: usize = 12;

/// The process behind an owner token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub host: String,
    pub pid: u32,
    /// What it runs: `cli worker.php`, `fpm-fcgi index.php`, ...
    pub process: String,
    /// When it first described itself (Unix seconds, its own clock; 0 when
    /// a release before this one described it).
    pub since: u64,
}

struct Me {
    pid: u32,
    id: String,
    /// When this process was first described (Unix seconds).
    since: u64,
    /// When this process last described itself, per server and prefix (a
    /// process talks to one or a few: a list, searched without copying the
    /// caller's server and prefix).
    published: Vec<(String, Vec<u8>, Instant)>,
}

thread_local! {
    static ME: RefCell<Option<Me>> = const { RefCell::new(None) };
}

/// The 32 lowercase hex digits of a new random (v4) UUID: digits 12 to 19
/// carry its version and variant, every other digit is random.
fn random_hex(buf: &mut [u8; 32]) -> &str {
    uuid::Uuid::new_v4().simple().encode_lower(buf)
}

/// The key of a process's description (before the prefix).
fn key(id: &str) -> Vec<u8> {
    format!("redislock:holder:{id}").into_bytes()
}

/// This process's id, new after a fork; with `f`, its record of when it
/// last described itself to each server.
fn me<T>(f: impl FnOnce(&mut Me) -> T) -> T {
    let pid = crate::process::id();
    ME.with_borrow_mut(|me| {
        let me = match me {
            Some(me) if me.pid == pid => me,
            _ => me.insert(Me {
                pid,
                id: random_hex(&mut [0; 32])[..ID_LEN].to_owned(),
                since: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
                published: Vec::new(),
            }),
        };
        f(me)
    })
}

/// A fresh owner token of this process: its id, then 80 random bits (32
/// hex digits in all, like the seed's tokens).
pub fn token() -> String {
    let mut buf = [0; 32];
    let random = random_hex(&mut buf);
    me(|me| [me.id.as_str(), &random[..12], &random[20..28]].concat())
}

/// Describes this process on the server of `config` when it has not lately;
/// called once a lock or a lease is taken. Best effort: a lock whose holder is not
/// described is still held, and the lock's own calls report a server that
/// fails.
pub fn introduce(config: &Config) {
    let due = me(|me| {
        let now = Instant::now();
        let known = me
            .published
            .iter_mut()
            .find(|(id, prefix, _)| *id == config.id && *prefix == config.prefix);
        let due = match known {
            Some((_, _, at)) if now.duration_since(*at) < RENEW => false,
            Some((_, _, at)) => {
                *at = now;
                true
            }
            None => {
                me.published
                    .push((config.id.clone(), config.prefix.clone(), now));
                true
            }
        };
        due.then(|| (me.id.clone(), me.pid, me.since))
    });
    if let Some((id, pid, since)) = due {
        publish(config, &id, pid, since);
    }
}

fn publish(config: &Config, id: &str, pid: u32, since: u64) {
    let key = config.key(&key(id));
    let _ = conn::with(config, |c| {
        redis::pipe()
            .cmd("HSET")
            .arg(&key)
            .arg("host")
            .arg(host())
            .arg("pid")
            .arg(pid)
            .arg("process")
            .arg(process())
            .arg("since")
            .arg(since)
            .ignore()
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(crate::time::millis(KEEP))
            .ignore()
            .query::<()>(c)
    });
}

/// The process id in `token`, if [`token`] made it (a lease token is
/// such a token, then `:` and more).
pub fn id_of(token: &[u8]) -> Option<&[u8]> {
    let token = match token.get(32) {
        Some(b':') => &token[..32],
        _ => token,
    };
    token
        .get(..ID_LEN)
        .filter(|_| token.len() == 32 && token.iter().all(u8::is_ascii_hexdigit))
}

/// This process's id, as its tokens start with it.
pub fn my_id() -> String {
    me(|me| me.id.clone())
}

/// The processes behind `tokens` (those [`token`] made whose process is
/// still described on the server): each process looked up once, all of
/// them in one round trip.
pub fn of(config: &Config, tokens: &[Option<&[u8]>]) -> Result<Vec<Option<Holder>>, conn::Error> {
    let ids: Vec<Option<&[u8]>> = tokens.iter().map(|t| t.and_then(id_of)).collect();
    of_processes(config, &ids)
}

/// The descriptions of the processes `ids` (see [`of`]).
pub fn of_processes(
    config: &Config,
    ids: &[Option<&[u8]>],
) -> Result<Vec<Option<Holder>>, conn::Error> {
    let mut unique: Vec<&[u8]> = ids.iter().flatten().copied().collect();
    unique.sort_unstable();
    unique.dedup();
    let holders: HashMap<&[u8], Holder> = unique
        .iter()
        .copied()
        .zip(of_ids(config, &unique)?)
        .filter_map(|(id, holder)| Some((id, holder?)))
        .collect();
    Ok(ids
        .iter()
        .map(|id| id.and_then(|id| holders.get(id)).cloned())
        .collect())
}

/// The descriptions of the processes `ids` (in their order), in one round
/// trip; None for a process not (or no longer) described.
fn of_ids(config: &Config, ids: &[&[u8]]) -> Result<Vec<Option<Holder>>, conn::Error> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let described: Vec<HashMap<String, String>> = conn::with(config, |c| {
        let mut pipe = redis::pipe();
        for id in ids {
            pipe.cmd("HGETALL")
                .arg(config.key(&key(&String::from_utf8_lossy(id))));
        }
        pipe.query(c)
    })?;
    Ok(described
        .into_iter()
        .map(|fields| {
            Some(Holder {
                host: fields.get("host")?.clone(),
                pid: fields.get("pid").and_then(|p| p.parse().ok()).unwrap_or(0),
                process: fields.get("process").cloned().unwrap_or_default(),
                since: fields
                    .get("since")
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0),
            })
        })
        .collect())
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}

static RUNS: std::sync::OnceLock<fn() -> String> = std::sync::OnceLock::new();

/// Sets how this process says what it runs (the front end knows: `cli
/// worker.php`), asked when it describes itself, on the thread that took
/// the lock. Only names, never arguments.
pub fn runs(what: fn() -> String) {
    let _ = RUNS.set(what);
}

/// What this process runs, as [`runs`] says; else its executable's name.
fn process() -> String {
    let said = RUNS.get().map(|f| f()).unwrap_or_default();
    if !said.is_empty() {
        return said;
    }
    std::fs::read_link("/proc/self/exe")
        .ok()
        .and_then(|exe| Some(exe.file_name()?.to_string_lossy().into_owned()))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_the_process_id_then_random_hex_digits() {
        let (a, b) = (token(), token());
        for t in [&a, &b] {
            assert_eq!(t.len(), 32, "{t}");
            assert!(
                t.bytes()
                    .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
                "{t}"
            );
        }
        assert_eq!(a[..ID_LEN], b[..ID_LEN]);
        assert_eq!(a[..ID_LEN], me(|me| me.id.clone()));
        assert_ne!(a[ID_LEN..], b[ID_LEN..]);
        // No digit of the UUID's version or variant: all 80 are random.
        let tokens: Vec<String> = (0..64).map(|_| token()).collect();
        for at in ID_LEN..32 {
            let first = tokens[0].as_bytes()[at];
            assert!(
                tokens.iter().any(|t| t.as_bytes()[at] != first),
                "digit {at} is fixed"
            );
        }
    }
}
