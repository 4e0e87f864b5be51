//! Semaphores, read-write locks and stocks against a real redis-server, with
//! threads on connections of their own counting violations.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::common::RedisServer;
use redislock::keys::Kind;
use redislock::lock::permits::{self, UNLIMITED};
use redislock::lock::{self, Keys, Wait};
use redislock::stock::{Stock, Take, Taken};

fn waiting(secs: u64) -> Wait {
    Wait {
        timeout: Duration::from_secs(secs),
        recheck: Duration::from_millis(250),
    }
}

#[test]
fn never_more_permits_held_than_there_are() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    const PERMITS: i64 = 5;
    let used = Arc::new(AtomicI64::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..10)
        .map(|t| {
            let (config, used, violations) = (config.clone(), used.clone(), violations.clone());
            std::thread::spawn(move || {
                for i in 0..30 {
                    let take = 1 + ((t + i) % 3) as i64;
                    let keys =
                        Keys::permits(b"", Kind::Semaphore, b"s", take as u64, PERMITS as u64);
                    let token = redislock::token::new_token();
                    let lease = Duration::from_secs(30);
                    let got = lock::acquire(&config, &keys, &token, lease, waiting(60)).unwrap();
                    assert!(got.is_some(), "not acquired in a minute");
                    if used.fetch_add(take, Ordering::SeqCst) + take > PERMITS {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_micros(300));
                    used.fetch_sub(take, Ordering::SeqCst);
                    assert!(lock::release(&config, &keys, token.as_bytes()).unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    let keys = Keys::permits(b"", Kind::Semaphore, b"s", 1, PERMITS as u64);
    let state = permits::usage(&config, &keys, None).unwrap();
    assert_eq!((state.used, state.waiting), (0, 0));
}

#[test]
fn never_a_reader_beside_a_writer() {
    readers_and_writers(|take| Keys::permits(b"", Kind::RwLock, b"rw", take, UNLIMITED));
}

#[test]
fn never_a_reader_beside_a_writer_in_symfonys_format() {
    readers_and_writers(|take| Keys::symfony(b"", b"rw", take));
}

/// Eight threads, two of them writers, take the read-write lock of `keys`
/// (given the permits to take) 25 times each, counting a writer beside
/// anyone: never; nothing is held at the end.
fn readers_and_writers(keys: fn(u64) -> Keys) {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    // Readers count up by one, a writer by a thousand.
    let inside = Arc::new(AtomicI64::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (config, inside, violations) = (config.clone(), inside.clone(), violations.clone());
            std::thread::spawn(move || {
                let writer = t < 2;
                let (take, weight) = if writer { (UNLIMITED, 1000) } else { (1, 1) };
                for _ in 0..25 {
                    let keys = keys(take);
                    let token = redislock::token::new_token();
                    let fence =
                        lock::acquire(&config, &keys, &token, Duration::from_secs(30), waiting(60))
                            .unwrap()
                            .expect("acquired within a minute");
                    assert_eq!(fence > 0, writer, "only writers get fencing tokens");
                    let now = inside.fetch_add(weight, Ordering::SeqCst) + weight;
                    if (writer && now != 1000) || (!writer && now >= 1000) {
                        violations.fetch_add(1, Ordering::SeqCst);
                    }
                    std::thread::sleep(Duration::from_micros(200));
                    inside.fetch_sub(weight, Ordering::SeqCst);
                    assert!(lock::release(&config, &keys, token.as_bytes()).unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    let state = permits::usage(&config, &keys(1), None).unwrap();
    assert_eq!((state.used, state.waiting), (0, 0));
}

/// The members of sorted set `key`.
fn zset_members(redis: &mut redis::Connection, key: &str) -> Vec<String> {
    redis::cmd("ZRANGE")
        .arg(key)
        .arg(0)
        .arg(-1)
        .query(redis)
        .unwrap()
}

/// Symfony's RedisStore format: a write lock is its token and `__write__`,
/// scored by the lease's end, the key expiring then; a read lock its token
/// alone. A holder that dies is dropped when its lease runs out.
#[test]
fn symfonys_format_on_the_key_itself() {
    let server = RedisServer::start();
    let config = server.config();
    let mut redis = server.client();
    let lease = Duration::from_secs(30);
    let write = Keys::symfony(b"app:", b"res", UNLIMITED);
    let writer = redislock::token::new_token();
    assert!(
        lock::acquire(&config, &write, &writer, lease, waiting(0))
            .unwrap()
            .is_some()
    );
    let held: Vec<(String, i64)> = redis::cmd("ZRANGE")
        .arg("app:res")
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(&mut redis)
        .unwrap();
    let mut members: Vec<&str> = held.iter().map(|(m, _)| m.as_str()).collect();
    let mut expected = ["__write__", writer.as_str()];
    members.sort();
    expected.sort();
    assert_eq!(members, expected);
    assert_eq!(held[0].1, held[1].1, "one lease");
    let pttl = server.pttl("app:res");
    assert!(
        pttl > 29_000 && pttl <= 30_000,
        "the key lives as long as the lease: {pttl}"
    );
    assert!(lock::release(&config, &write, writer.as_bytes()).unwrap());
    let exists: i64 = redis::cmd("EXISTS")
        .arg("app:res")
        .query(&mut redis)
        .unwrap();
    assert_eq!(exists, 0);

    // A reader that dies: the writer waits until its lease runs out.
    let read = Keys::symfony(b"app:", b"res", 1);
    let reader = redislock::token::new_token();
    let short = Duration::from_millis(300);
    assert!(
        lock::acquire(&config, &read, &reader, short, waiting(0))
            .unwrap()
            .is_some()
    );
    let members = zset_members(&mut redis, "app:res");
    assert_eq!(members, std::slice::from_ref(&reader));
    let wait = Wait {
        timeout: Duration::from_secs(5),
        recheck: Duration::from_millis(50),
    };
    assert!(
        lock::acquire(&config, &write, &writer, lease, wait)
            .unwrap()
            .is_some()
    );
    let members = zset_members(&mut redis, "app:res");
    assert_eq!(members.len(), 2);
    assert!(members.contains(&writer) && members.contains(&"__write__".to_string()));

    // A key of another type under the name (but a string: below): a clear
    // error, nothing written.
    server.hash_by_hand(b"app:cached");
    let cached = Keys::symfony(b"app:", b"cached", UNLIMITED);
    let before = server.snapshot();
    let err = lock::acquire(&config, &cached, &writer, lease, waiting(0)).unwrap_err();
    assert!(err.cause().contains("app:cached holds a hash"), "{err}");
    assert!(before == server.snapshot(), "the failed acquire wrote");
}

/// A string on the key is a lock of Symfony before 5.2 (`SET NX`), and
/// held by somebody else, as Symfony's own store reads it: no read or
/// write lock is taken, a waiter takes it when it expires, and nothing of
/// it is extended or released, but by a forced release, which deletes it.
#[test]
fn a_string_in_symfonys_format_is_an_old_symfony_lock_held_by_another() {
    let server = RedisServer::start();
    let config = server.config();
    let mut redis = server.client();
    let lease = Duration::from_secs(30);
    let (write, read) = (
        Keys::symfony(b"", b"res", UNLIMITED),
        Keys::symfony(b"", b"res", 1),
    );
    let old = |ms: u64| {
        let _: () = redis::cmd("SET")
            .arg("res")
            .arg("an-old-symfony-token")
            .arg("PX")
            .arg(ms)
            .query(&mut server.client())
            .unwrap();
    };
    old(700);
    let before = server.snapshot();
    let token = redislock::token::new_token();
    for keys in [&write, &read] {
        let once = lock::acquire(&config, keys, &token, lease, waiting(0));
        assert!(once.unwrap().is_none(), "{}: taken", keys.what());
        let usage = permits::usage(&config, keys, Some(&token)).unwrap();
        assert!(usage.left.is_none(), "{}: held by this token", keys.what());
        assert!(usage.used > 0, "{}: no permit in use", keys.what());
        assert!(!lock::extend_hold(&config, keys, &token, lease).unwrap());
        assert!(!lock::release(&config, keys, token.as_bytes()).unwrap());
        assert!(
            !lock::release(&config, keys, b"an-old-symfony-token").unwrap(),
            "the old token released it"
        );
    }
    assert!(before == server.snapshot(), "a call wrote");
    // A waiter takes it when it expires (looking again at its recheck).
    assert!(
        lock::acquire(&config, &write, &token, lease, waiting(5))
            .unwrap()
            .is_some()
    );
    let members = zset_members(&mut redis, "res");
    assert!(members.contains(&token) && members.contains(&"__write__".to_string()));
    assert!(lock::release(&config, &write, token.as_bytes()).unwrap());
    // Without expiry it is held until deleted: a forced release deletes it.
    old(60_000);
    let _: () = redis::cmd("PERSIST").arg("res").query(&mut redis).unwrap();
    assert!(lock::force_release(&config, &write).unwrap());
    let exists: i64 = redis::cmd("EXISTS").arg("res").query(&mut redis).unwrap();
    assert_eq!(exists, 0);
}

#[test]
fn a_stock_is_never_taken_below_zero() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let sale = Arc::new(Stock::new(config.clone(), b"sale".to_vec(), None).unwrap());
    sale.set(300, None).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let sale = sale.clone();
            std::thread::spawn(move || {
                let buyer = format!("b{t}");
                let mut got = 0;
                loop {
                    let take = Take {
                        units: 1,
                        buyer: Some(buyer.as_bytes()),
                        per_buyer: 0,
                        ..Take::default()
                    };
                    match sale.take(&take).unwrap() {
                        Taken::Done(_) => got += 1,
                        Taken::SoldOut(left) => {
                            assert_eq!(left, 0);
                            return got;
                        }
                        other => panic!("unexpected {other:?}"),
                    }
                }
            })
        })
        .collect();
    let sold: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(sold, 300);
    assert_eq!(sale.remaining().unwrap(), Some(0));
    let by_buyer: i64 = sale.buyers().unwrap().iter().map(|(_, n)| n).sum();
    assert_eq!(by_buyer, 300);
}

#[test]
fn a_take_names_its_order_task_by_the_key_and_refuses_a_task_queued_already() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let sale = Stock::new(config.clone(), b"sale".to_vec(), Some(b"orders".to_vec())).unwrap();
    let orders = redislock::queue::Queue::new(config, b"orders".to_vec());
    sale.set(10, None).unwrap();
    let by_key = Take {
        units: 1,
        key: Some(b"k1"),
        ..Take::default()
    };
    assert_eq!(sale.take(&by_key).unwrap(), Taken::Done(9));
    assert!(
        orders.find(b"k1").unwrap().is_some(),
        "the key names the order task"
    );
    // A retry with the same key finds its own order: nothing more taken.
    assert_eq!(sale.take(&by_key).unwrap(), Taken::Before(9));
    let same_task = Take {
        units: 1,
        task: Some(b"k1"),
        ..Take::default()
    };
    assert_eq!(
        sale.take(&same_task).unwrap(),
        Taken::TaskExists(b"k1".to_vec())
    );
    assert_eq!(sale.remaining().unwrap(), Some(9));
    // Without a key or task id, each take's order gets a new unique id.
    let plain = Take {
        units: 1,
        ..Take::default()
    };
    assert_eq!(sale.take(&plain).unwrap(), Taken::Done(8));
    assert_eq!(sale.take(&plain).unwrap(), Taken::Done(7));
    assert_eq!(orders.metrics().unwrap().ready, 3);
}

/// A semaphore's key written by hand with another type, or a holder's
/// count that is not a number: every call either works or fails with a
/// server error naming the key (never a Lua error of the script's own), and
/// a call that fails changes nothing.
#[test]
fn a_semaphore_key_of_the_wrong_type_fails_a_call_before_it_changes_anything() {
    use redislock::conn::Error;
    use redislock::lock::inspect;
    let server = RedisServer::start();
    let config = server.config();
    const LEASE: Duration = Duration::from_secs(30);
    fn keys(take: u64) -> Keys {
        Keys::permits(b"", Kind::Semaphore, b"s", take, 3)
    }
    let holder = redislock::token::new_token();
    type Call = Box<dyn Fn(&redislock::config::Config, &str) -> Result<(), Error>>;
    let calls: Vec<(&str, Call)> = vec![
        (
            "acquire",
            Box::new(|c, _| lock::acquire(c, &keys(1), "new", LEASE, waiting(0)).map(drop)),
        ),
        (
            "acquire all",
            Box::new(|c, _| lock::acquire(c, &keys(3), "all", LEASE, waiting(0)).map(drop)),
        ),
        (
            "acquire waiting",
            Box::new(|c, _| {
                let wait = Wait {
                    timeout: Duration::from_millis(200),
                    recheck: Duration::from_millis(50),
                };
                lock::acquire(c, &keys(3), "waiter", LEASE, wait).map(drop)
            }),
        ),
        (
            "release",
            Box::new(|c, h| lock::release(c, &keys(1), h.as_bytes()).map(drop)),
        ),
        (
            "release to a waiter for all",
            Box::new(|c, h| lock::release(c, &keys(1), h.as_bytes()).map(drop)),
        ),
        (
            "extend",
            Box::new(|c, h| lock::extend_hold(c, &keys(1), h, LEASE).map(drop)),
        ),
        (
            "usage",
            Box::new(|c, _| permits::usage(c, &keys(1), None).map(drop)),
        ),
        (
            "state",
            Box::new(|c, _| inspect::state(c, inspect::Kind::Semaphore, b"s").map(drop)),
        ),
        (
            "states",
            Box::new(|c, _| {
                let names = [&b"a"[..], b"s", b"b"].map(|n| (inspect::Kind::Semaphore, n.to_vec()));
                inspect::states(c, &names).map(drop)
            }),
        ),
    ];
    let k = keys(1);
    let counts = k.permits.as_ref().unwrap().counts.clone();
    let roles: Vec<(&str, Vec<u8>)> = vec![
        ("holders", k.lock.clone()),
        ("counts", counts.clone()),
        ("fence", k.fence.clone()),
        ("line", k.line.clone()),
        ("a count", counts.clone()),
    ];
    let mut wrong = Vec::new();
    for (role, key) in &roles {
        for (name, call) in &calls {
            let mut c = server.client();
            let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
            // A live holder of one permit, and one whose lease ran out.
            lock::acquire(&config, &keys(1), &holder, LEASE, waiting(0)).unwrap();
            lock::acquire(
                &config,
                &keys(1),
                "gone",
                Duration::from_millis(5),
                waiting(0),
            )
            .unwrap();
            std::thread::sleep(Duration::from_millis(20));
            if *name == "release to a waiter for all" && *role != "line" {
                // In line as a blocked acquire of all 3 permits leaves it:
                // handed them (and a fencing token) once the holder leaves.
                server.waiter_in_line(&k.line, &k.waiters, "W:30000:3:3");
            }
            if *role == "a count" {
                let _: () = redis::cmd("HSET")
                    .arg(key)
                    .arg(&holder)
                    .arg("one")
                    .query(&mut c)
                    .unwrap();
            } else {
                server.by_hand(key);
            }
            let before = server.snapshot();
            match call(&config, &holder) {
                Ok(()) => {}
                Err(Error::Server { cause, .. }) => {
                    let named = format!("WRONGTYPE key {} holds ", String::from_utf8_lossy(key));
                    if !cause.starts_with(&named) {
                        wrong.push(format!("{name}, {role} wrong: not named: {cause}"));
                    }
                    if before != server.snapshot() {
                        wrong.push(format!(
                            "{name}, {role} wrong: failed ({cause}) but changed Redis"
                        ));
                    }
                }
                Err(e) => wrong.push(format!("{name}, {role} wrong: not a server error: {e}")),
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
