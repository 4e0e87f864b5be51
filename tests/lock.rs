//! The lock engine against a real redis-server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{NO_WAIT, RedisServer};
use redislock::conn::Error;
use redislock::lock::inspect::{self, Kind};
use redislock::lock::{self, Keys, Wait};

#[test]
fn acquire_is_exclusive_and_only_the_owner_releases() {
    let server = RedisServer::start();
    let config = server.config();
    let (a, b) = (redislock::token::new_token(), redislock::token::new_token());
    assert!(common::acquired(&config, b"Lock:x", &a, Duration::from_secs(5), NO_WAIT).unwrap());
    assert!(!common::acquired(&config, b"Lock:x", &b, Duration::from_secs(5), NO_WAIT).unwrap());
    let ttl = server.pttl("Lock:x");
    assert!(
        ttl > 4000 && ttl <= 5000,
        "lease set with the acquire: {ttl}"
    );
    assert!(!common::release(&config, b"Lock:x", b.as_bytes()).unwrap());
    assert!(lock::holds(&config, b"Lock:x", &a).unwrap());
    assert!(common::release(&config, b"Lock:x", a.as_bytes()).unwrap());
    assert!(!common::release(&config, b"Lock:x", a.as_bytes()).unwrap());
    assert_eq!(server.pttl("Lock:x"), -2, "key gone");
}

#[test]
fn an_expired_owner_cannot_release_the_next_holder() {
    let server = RedisServer::start();
    let config = server.config();
    let (a, b) = (redislock::token::new_token(), redislock::token::new_token());
    assert!(common::acquired(&config, b"Lock:o", &a, Duration::from_millis(50), NO_WAIT).unwrap());
    std::thread::sleep(Duration::from_millis(120));
    assert!(common::acquired(&config, b"Lock:o", &b, Duration::from_secs(5), NO_WAIT).unwrap());
    assert!(!common::release(&config, b"Lock:o", a.as_bytes()).unwrap());
    assert!(!lock::extend(&config, b"Lock:o", &a, Duration::from_secs(9)).unwrap());
    assert!(lock::holds(&config, b"Lock:o", &b).unwrap());
}

#[test]
fn a_key_without_ttl_is_taken_over() {
    let server = RedisServer::start();
    let config = server.config();
    let _: () = redis::cmd("SET")
        .arg("Lock:stale")
        .arg("1700000000")
        .query(&mut server.client())
        .unwrap();
    let token = redislock::token::new_token();
    assert!(
        common::acquired(
            &config,
            b"Lock:stale",
            &token,
            Duration::from_secs(3),
            NO_WAIT
        )
        .unwrap()
    );
    assert!(lock::holds(&config, b"Lock:stale", &token).unwrap());
    assert!(server.pttl("Lock:stale") > 0);
}

#[test]
fn extend_sets_a_new_lease_for_the_owner() {
    let server = RedisServer::start();
    let config = server.config();
    let token = redislock::token::new_token();
    assert!(common::acquired(&config, b"Lock:e", &token, Duration::from_secs(1), NO_WAIT).unwrap());
    assert!(lock::extend(&config, b"Lock:e", &token, Duration::from_secs(30)).unwrap());
    assert!(server.pttl("Lock:e") > 20_000);
}

#[test]
fn a_waiter_wakes_on_release_long_before_its_recheck_interval() {
    let server = RedisServer::start();
    let config = server.config();
    let holder = redislock::token::new_token();
    assert!(
        common::acquired(
            &config,
            b"Lock:w",
            &holder,
            Duration::from_secs(30),
            NO_WAIT
        )
        .unwrap()
    );
    let waiter_config = config.clone();
    let waiter = std::thread::spawn(move || {
        let wait = Wait {
            timeout: Duration::from_secs(20),
            recheck: Duration::from_secs(20),
        };
        let token = redislock::token::new_token();
        common::acquired(
            &waiter_config,
            b"Lock:w",
            &token,
            Duration::from_secs(5),
            wait,
        )
        .unwrap()
    });
    std::thread::sleep(Duration::from_millis(300));
    let released_at = Instant::now();
    assert!(common::release(&config, b"Lock:w", holder.as_bytes()).unwrap());
    assert!(waiter.join().unwrap());
    // Neither the 30 s lease nor the 20 s recheck ran out: only the release
    // message can have woken the waiter.
    assert!(released_at.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_waiter_gives_up_at_its_timeout_and_wakes_when_the_lease_runs_out() {
    let server = RedisServer::start();
    let config = server.config();
    assert!(
        common::acquired(
            &config,
            b"Lock:t",
            &redislock::token::new_token(),
            Duration::from_secs(30),
            NO_WAIT
        )
        .unwrap()
    );
    let wait = Wait {
        timeout: Duration::from_millis(200),
        recheck: Duration::from_secs(10),
    };
    assert!(
        !common::acquired(
            &config,
            b"Lock:t",
            &redislock::token::new_token(),
            Duration::from_secs(1),
            wait
        )
        .unwrap()
    );

    assert!(
        common::acquired(
            &config,
            b"Lock:l",
            &redislock::token::new_token(),
            Duration::from_millis(300),
            NO_WAIT
        )
        .unwrap()
    );
    let wait = Wait {
        timeout: Duration::from_secs(20),
        recheck: Duration::from_secs(20),
    };
    assert!(
        common::acquired(
            &config,
            b"Lock:l",
            &redislock::token::new_token(),
            Duration::from_secs(1),
            wait
        )
        .unwrap()
    );
}

#[test]
fn threads_with_their_own_connections_never_overlap() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let inside = Arc::new(AtomicUsize::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let entries = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (config, inside, violations, entries) = (
                config.clone(),
                inside.clone(),
                violations.clone(),
                entries.clone(),
            );
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let token = redislock::token::new_token();
                    let wait = Wait {
                        timeout: Duration::from_secs(30),
                        recheck: Duration::from_millis(50),
                    };
                    assert!(
                        common::acquired(&config, b"Lock:c", &token, Duration::from_secs(10), wait)
                            .unwrap()
                    );
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    entries.fetch_add(1, Ordering::SeqCst);
                    std::thread::yield_now();
                    inside.fetch_sub(1, Ordering::SeqCst);
                    assert!(common::release(&config, b"Lock:c", token.as_bytes()).unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(entries.load(Ordering::SeqCst), 400);
    assert_eq!(violations.load(Ordering::SeqCst), 0);
}

#[test]
fn order_locks_of_a_layout_of_their_own_keep_its_keys() {
    let server = RedisServer::start();
    let config = server.config();
    let lease = Duration::from_secs(60);
    let layout = lock::order::Layout::new(b"staging_lock_%s", b"staging_lock_id").unwrap();
    let id = lock::order::acquire_in(&config, &layout, b"7", lease)
        .unwrap()
        .unwrap();
    assert_eq!(
        lock::order::acquire_in(&config, &layout, b"7", lease).unwrap(),
        None
    );
    let get = |key: &str| -> Option<String> {
        redis::cmd("GET")
            .arg(key)
            .query(&mut server.client())
            .unwrap()
    };
    assert_eq!(get("staging_lock_7"), Some(id.to_string()));
    assert_eq!(get("staging_lock_id"), Some(id.to_string()));
    assert_eq!(get("order_lock_7"), None);
    assert_eq!(
        get("lock_unique_id"),
        None,
        "the seed's counter is not spent"
    );
    assert!(!lock::order::release_in(&config, &layout, b"7", b"999").unwrap());
    assert!(lock::order::release_in(&config, &layout, b"7", id.to_string().as_bytes()).unwrap());
    assert!(lock::order::next_id_in(&config, &layout).unwrap() > id);
    for (template, counter) in [
        (&b"x"[..], &b"c"[..]),
        (b"%s%s", b"c"),
        (b"%d", b"c"),
        (b"a%s", b""),
    ] {
        assert!(lock::order::Layout::new(template, counter).is_err());
    }
}

#[test]
fn order_locks_take_ids_from_the_shared_counter() {
    let server = RedisServer::start();
    let config = server.config();
    let lease = Duration::from_secs(60);
    let first = lock::order::acquire(&config, b"7", lease).unwrap().unwrap();
    assert_eq!(lock::order::acquire(&config, b"7", lease).unwrap(), None);
    let second = lock::order::acquire(&config, b"8", lease).unwrap().unwrap();
    assert!(second > first);
    assert!(lock::order::next_id(&config).unwrap() > second);
    let stored: String = redis::cmd("GET")
        .arg("order_lock_7")
        .query(&mut server.client())
        .unwrap();
    assert_eq!(stored, first.to_string());
    // A counter written by hand, of another type, with text or at the
    // last id, is named, and no order is locked.
    let hash = redis::pipe()
        .cmd("DEL")
        .arg(lock::order::COUNTER)
        .cmd("HSET")
        .arg(lock::order::COUNTER)
        .arg("x")
        .arg("y")
        .clone();
    let text = redis::pipe()
        .cmd("SET")
        .arg(lock::order::COUNTER)
        .arg("many")
        .clone();
    let last = redis::pipe()
        .cmd("SET")
        .arg(lock::order::COUNTER)
        .arg(i64::MAX)
        .clone();
    for (by_hand, named) in [
        (hash, "WRONGTYPE key lock_unique_id holds a hash"),
        (
            text,
            "WRONGTYPE key lock_unique_id holds \"many\", not a whole number",
        ),
        (
            last,
            "WRONGTYPE key lock_unique_id holds \"9223372036854775807\", too large a count",
        ),
    ] {
        let _: () = by_hand.query(&mut server.client()).unwrap();
        let before = server.snapshot();
        for call in ["acquire", "next id"] {
            let done = match call {
                "acquire" => lock::order::acquire(&config, b"9", lease).map(drop),
                _ => lock::order::next_id(&config).map(drop),
            };
            match done {
                Err(Error::Server { cause, .. }) => {
                    assert!(cause.starts_with(named), "{call}: {cause}")
                }
                other => panic!("{call}: expected the counter named, got {other:?}"),
            }
            assert!(before == server.snapshot(), "{call}: Redis changed");
        }
    }
}

#[test]
fn redis_down_is_a_connection_error_naming_the_server_and_recovery_is_automatic() {
    let mut server = RedisServer::start();
    let config = server.config();
    let token = redislock::token::new_token();
    assert!(common::acquired(&config, b"Lock:r", &token, Duration::from_secs(5), NO_WAIT).unwrap());
    server.stop();
    match lock::holds(&config, b"Lock:r", &token) {
        Err(Error::Connection { server: s, .. }) => {
            assert_eq!(s, format!("127.0.0.1:{}", server.port))
        }
        other => panic!("expected a connection error, got {other:?}"),
    }
    server.restart();
    // The broken connection was dropped; the next call connects again.
    assert!(!lock::holds(&config, b"Lock:r", &token).unwrap());
    assert!(common::acquired(&config, b"Lock:r", &token, Duration::from_secs(5), NO_WAIT).unwrap());
}

fn key_names(server: &RedisServer) -> std::collections::BTreeSet<Vec<u8>> {
    redis::cmd("KEYS")
        .arg("*")
        .query(&mut server.client())
        .unwrap()
}

/// A waiter whose recheck fails (the lock key was written by hand with
/// another type while it waited) leaves the line: the failed acquire leaves
/// nothing behind.
#[test]
fn a_waiter_whose_recheck_fails_leaves_the_line() {
    let server = RedisServer::start();
    let config = server.config();
    for name in [&b"Lock:w"[..], b"lock:{w}"] {
        let keys = common::lock_keys(name);
        let _: () = redis::cmd("FLUSHALL").query(&mut server.client()).unwrap();
        assert!(common::acquired(&config, name, "H", Duration::from_secs(30), NO_WAIT).unwrap());
        let before = key_names(&server);
        let overwrite = {
            let (url, lock) = (server.url(), keys.lock.clone());
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(150));
                let mut c = redis::Client::open(url).unwrap().get_connection().unwrap();
                redis::pipe()
                    .cmd("DEL")
                    .arg(&lock)
                    .cmd("HSET")
                    .arg(&lock)
                    .arg("x")
                    .arg("y")
                    .query::<()>(&mut c)
                    .unwrap();
            })
        };
        let wait = Wait {
            timeout: Duration::from_secs(5),
            recheck: Duration::from_millis(50),
        };
        let done = common::acquired(&config, name, "T", Duration::from_secs(30), wait);
        overwrite.join().unwrap();
        match done {
            Err(Error::Server { cause, .. }) => assert!(
                cause.starts_with(&format!(
                    "WRONGTYPE key {} holds a hash",
                    String::from_utf8_lossy(&keys.lock)
                )),
                "{cause}"
            ),
            other => panic!("expected the lock named, got {other:?}"),
        }
        // The keys there were before T tried: nothing of its wait is left.
        assert_eq!(
            key_names(&server),
            before,
            "{}",
            String::from_utf8_lossy(name)
        );
    }
}

/// A lock's key written by hand with another type or value (the lock, its
/// fencing counter, its line): every call either works or fails with a
/// server error naming the key, and a call that fails, or does not take or
/// release the lock, changes nothing. For the seed's locks and the fenced
/// `RedisLock\` ones; a free lock, a held one, one with a waiter in line,
/// and a release that hands the lock to that waiter.
#[test]
fn a_lock_key_of_the_wrong_type_fails_a_call_before_it_changes_anything() {
    let server = RedisServer::start();
    let config = server.config();
    const LEASE: Duration = Duration::from_secs(30);
    let wait = Wait {
        timeout: Duration::from_millis(150),
        recheck: Duration::from_millis(50),
    };
    let mut wrong = Vec::new();
    let locks = [
        (&b"Lock:s"[..], Kind::Seed, &b"s"[..]),
        (b"lock:{f}", Kind::Lock, b"f"),
    ];
    for (name, kind, short) in locks {
        let keys = common::lock_keys(name);
        let states: [(&str, bool, bool); 9] = [
            ("acquire, free", false, false),
            ("acquire, held", true, false),
            ("acquire, in line", true, true),
            ("release", true, false),
            ("release to a waiter", true, true),
            ("holds", true, false),
            ("extend", true, false),
            ("state", true, true),
            ("states", true, true),
        ];
        for role in ["lock", "fence", "fence text", "fence 7.0", "line"] {
            let key = match role {
                "lock" => &keys.lock,
                "line" => &keys.line,
                _ => &keys.fence,
            };
            for (call, held, in_line) in states {
                if (role == "line" && in_line) || (role.starts_with("fence") && !keys.fenced) {
                    continue; // the waiter is the line; the seed's locks have no tokens
                }
                let mut c = server.client();
                let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
                if held {
                    assert!(common::acquired(&config, name, "H", LEASE, common::NO_WAIT).unwrap());
                }
                if in_line {
                    server.waiter_in_line(&keys.line, &keys.waiters, "W:30000");
                }
                if role == "fence text" {
                    server.by_hand(key);
                } else if role == "fence 7.0" {
                    // A whole number to Lua, not to Redis' INCR.
                    let _: () = redis::cmd("SET").arg(key).arg("7.0").query(&mut c).unwrap();
                } else {
                    server.hash_by_hand(key);
                }
                let before = server.snapshot();
                let done = match call {
                    "holds" => lock::holds(&config, &keys.lock, "H"),
                    "extend" => lock::extend(&config, &keys.lock, "H", LEASE),
                    "state" => inspect::state(&config, kind, short).map(|_| true),
                    "states" => {
                        let others = [b"a".to_vec(), short.to_vec(), b"b".to_vec()];
                        let locks: Vec<_> = others.into_iter().map(|n| (kind, n)).collect();
                        inspect::states(&config, &locks).map(|_| true)
                    }
                    c if c.starts_with("acquire") => {
                        common::acquired(&config, name, "T", LEASE, wait)
                    }
                    _ => common::release(&config, name, b"H"),
                };
                let what = format!("{}, {call}, {role} wrong", String::from_utf8_lossy(name));
                match done {
                    Ok(true) => {}
                    Ok(false) if before == server.snapshot() => {}
                    Ok(false) => wrong.push(format!("{what}: did nothing but changed Redis")),
                    Err(Error::Server { cause, .. }) => {
                        let named = format!("WRONGTYPE key {}", String::from_utf8_lossy(key));
                        if !cause.starts_with(&named) {
                            wrong.push(format!("{what}: not named: {cause}"));
                        }
                        if before != server.snapshot() {
                            wrong.push(format!("{what}: failed ({cause}) but changed Redis"));
                        }
                    }
                    Err(e) => wrong.push(format!("{what}: not a server error: {e}")),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A one-try acquire of a lock whose key holds another type fails naming
/// the key, as a waiting acquire does: "not acquired" would be said of a
/// lock nobody can ever take. For the fenced `RedisLock\` locks and the
/// seed's (whose key without expiry goes to the script as a stale one);
/// nothing changes.
#[test]
fn a_one_try_acquire_of_a_key_of_another_type_fails_naming_it() {
    let server = RedisServer::start();
    let config = server.config();
    for name in [&b"lock:{f}"[..], b"Lock:s"] {
        server.hash_by_hand(name);
        let before = server.snapshot();
        let lease = Duration::from_secs(30);
        match common::acquired(&config, name, "T", lease, common::NO_WAIT) {
            Err(Error::Server { cause, .. }) => {
                let named = format!("WRONGTYPE key {}", String::from_utf8_lossy(name));
                assert!(cause.starts_with(&named), "{cause}");
            }
            other => panic!("{}: {other:?}", String::from_utf8_lossy(name)),
        }
        assert!(before == server.snapshot(), "the failed try changed Redis");
    }
}

/// A multi-lock's one-round-trip try (`acquire_all`) whose locks' keys
/// hold another type fails naming the key, and changes nothing: not the
/// locks before it, not the ones it already checked. A lock's own key of
/// another type is not "taken", which nobody could ever undo.
#[test]
fn a_multi_lock_try_meeting_a_key_of_another_type_fails_and_takes_nothing() {
    let server = RedisServer::start();
    let config = server.config();
    let mut c = server.client();
    let (a, b) = (Keys::named(b"", b"a"), Keys::named(b"", b"b"));
    let tokens = ["A".to_string(), "B".to_string()];
    let mut wrong = Vec::new();
    for (which, keys) in [("first", &a), ("second", &b)] {
        for (role, key) in [
            ("lock", &keys.lock),
            ("fence", &keys.fence),
            ("line", &keys.line),
        ] {
            let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
            server.hash_by_hand(key);
            let before = server.snapshot();
            let what = format!("the {which} lock's {role}");
            match lock::acquire_all(&config, &[&a, &b], &tokens, Duration::from_secs(30)) {
                Err(Error::Server { cause, .. }) => {
                    let named = format!("WRONGTYPE key {}", String::from_utf8_lossy(key));
                    if !cause.starts_with(&named) {
                        wrong.push(format!("{what}: not named: {cause}"));
                    }
                }
                other => wrong.push(format!("{what}: {other:?}")),
            }
            if before != server.snapshot() {
                wrong.push(format!("{what}: the failed try changed Redis"));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A reply the extension cannot read (a process description written by
/// hand with bytes that are not UTF-8) is told as such, a server's answer,
/// not as Redis being unavailable; the connection stays in use.
#[test]
fn a_reply_that_cannot_be_read_is_not_told_as_redis_unavailable() {
    let server = RedisServer::start();
    let config = server.config();
    let token = redislock::identity::token();
    let lease = Duration::from_secs(30);
    assert!(common::acquired(&config, b"lock:{d}", &token, lease, NO_WAIT).unwrap());
    let mut c = server.client();
    let described: Vec<Vec<u8>> = redis::cmd("KEYS").arg("*holder*").query(&mut c).unwrap();
    assert_eq!(described.len(), 1, "the process describes itself");
    let _: () = redis::cmd("HSET")
        .arg(&described[0])
        .arg("host")
        .arg(&b"\xff\xfe"[..])
        .query(&mut c)
        .unwrap();
    let clients = |c: &mut redis::Connection| -> usize {
        let list: String = redis::cmd("CLIENT").arg("LIST").query(c).unwrap();
        list.lines().count()
    };
    let before = clients(&mut c);
    match inspect::state(&config, Kind::Lock, b"d") {
        Err(e @ Error::Reply { .. }) => assert!(
            e.to_string()
                .contains("answered with a reply redislock cannot read"),
            "{e}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(clients(&mut c), before, "the connection was dropped");
    assert!(lock::holds(&config, b"lock:{d}", &token).unwrap());
}
