//! Waiter lines against a real redis-server: locks are handed to waiters in
//! arrival order, dead waiters are skipped within their place's lease, and an
//! enqueue wakes one blocked consumer per task.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::RedisServer;
use redislock::config::Config;
use redislock::lock::{self, Keys, Wait};
use redislock::queue::lease::{self, Reserve, Terms};
use redislock::queue::{self, NewTask, Policy};
use redislock::wait;

fn waiting(secs: u64) -> Wait {
    Wait {
        timeout: Duration::from_secs(secs),
        recheck: Duration::from_millis(250),
    }
}

fn llen(server: &RedisServer, key: &[u8]) -> i64 {
    redis::cmd("LLEN")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

/// Takes the free lock at `keys` at once; the holder's token.
fn taken(config: &Config, keys: &Keys, lease: Duration) -> String {
    let holder = redislock::token::new_token();
    let got = lock::acquire(config, keys, &holder, lease, waiting(0)).unwrap();
    assert!(got.is_some(), "the lock was free");
    holder
}

/// Waits until the line at `key` has `n` waiters.
fn line_reaches(server: &RedisServer, key: &[u8], n: i64) {
    common::wait_for("the line to fill", 10, || llen(server, key) == n);
}

#[test]
fn waiters_are_served_in_arrival_order_and_never_together() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Arc::new(Keys::named(b"", b"fifo"));
    let holder = redislock::token::new_token();
    lock::acquire(&config, &keys, &holder, Duration::from_secs(30), waiting(0))
        .unwrap()
        .unwrap();
    let served = Arc::new(Mutex::new(Vec::new()));
    let inside = Arc::new(AtomicUsize::new(0));
    let violations = Arc::new(AtomicUsize::new(0));
    let mut threads = Vec::new();
    const N: usize = 16;
    for arrival in 0..N {
        // Arrivals one after the other: each joins once the previous one is
        // in line.
        line_reaches(&server, &keys.line, arrival as i64);
        let (config, keys, served, inside, violations) = (
            config.clone(),
            keys.clone(),
            served.clone(),
            inside.clone(),
            violations.clone(),
        );
        threads.push(std::thread::spawn(move || {
            let token = redislock::token::new_token();
            let fence = lock::acquire(&config, &keys, &token, Duration::from_secs(30), waiting(60))
                .unwrap()
                .expect("served within the wait");
            if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                violations.fetch_add(1, Ordering::SeqCst);
            }
            served.lock().unwrap().push((arrival, fence));
            std::thread::sleep(Duration::from_millis(2));
            inside.fetch_sub(1, Ordering::SeqCst);
            assert!(lock::release(&config, &keys, token.as_bytes()).unwrap());
        }));
    }
    line_reaches(&server, &keys.line, N as i64);
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(violations.load(Ordering::SeqCst), 0, "two holders at once");
    let served = served.lock().unwrap();
    let order: Vec<usize> = served.iter().map(|(arrival, _)| *arrival).collect();
    assert_eq!(order, (0..N).collect::<Vec<_>>(), "served in arrival order");
    assert!(
        served.windows(2).all(|w| w[1].1 > w[0].1),
        "fencing tokens increase with every handoff: {served:?}"
    );
    assert_eq!(llen(&server, &keys.line), 0, "nobody left in line");
}

#[test]
fn a_release_hands_the_lock_to_the_waiter_before_it_wakes() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Keys::seed(b"", b"handoff");
    let lease = Duration::from_secs(30);
    let holder = taken(&config, &keys, lease);
    let waiter = redislock::token::new_token();
    let thread = {
        let (config, keys, waiter) = (config.clone(), keys.clone(), waiter.clone());
        std::thread::spawn(move || lock::acquire(&config, &keys, &waiter, lease, waiting(30)))
    };
    line_reaches(&server, &keys.line, 1);
    // A new arrival does not barge ahead of the line, even with time to wait.
    let late = redislock::token::new_token();
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    let owner: String = redis::cmd("GET")
        .arg(&keys.lock)
        .query(&mut server.client())
        .unwrap();
    assert_eq!(owner, waiter, "the release made the waiter the owner");
    assert!(server.pttl("Lock:handoff") > 29_000, "with its own lease");
    assert_eq!(
        lock::acquire(&config, &keys, &late, lease, waiting(0)).unwrap(),
        None
    );
    assert_eq!(thread.join().unwrap().unwrap(), Some(0));
    assert!(lock::release(&config, &keys, waiter.as_bytes()).unwrap());
}

#[test]
fn a_free_lock_with_waiters_goes_to_the_line_not_to_a_new_arrival() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Keys::seed(b"", b"expired");
    // The holder dies: its lease runs out with a waiter in line.
    assert!(
        lock::acquire(
            &config,
            &keys,
            "dead",
            Duration::from_millis(600),
            waiting(0)
        )
        .unwrap()
        .is_some()
    );
    let waiter = {
        let (config, keys) = (config.clone(), keys.clone());
        std::thread::spawn(move || {
            let token = redislock::token::new_token();
            lock::acquire(&config, &keys, &token, Duration::from_secs(5), waiting(30))
                .unwrap()
                .map(|_| token)
        })
    };
    line_reaches(&server, &keys.line, 1);
    let token = waiter.join().unwrap().expect("the waiter got it");
    assert_eq!(
        lock::acquire(
            &config,
            &keys,
            &redislock::token::new_token(),
            Duration::from_secs(5),
            waiting(0)
        )
        .unwrap(),
        None
    );
    assert!(lock::holds(&config, &keys.lock, &token).unwrap());
}

/// A free lock without fencing tokens is taken by plain commands, without
/// a script; a thread that found it taken tries it with the script next
/// (a plain try would cost it a round trip more), until the script finds
/// it free again.
#[test]
fn a_free_lock_is_taken_without_a_script() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Keys::seed(b"", b"plain");
    let lease = Duration::from_secs(30);
    // The scripts loaded first (a lock with fencing tokens always takes
    // the script), so that each runs in one call.
    let warm = Keys::named(b"", b"warm");
    let token = taken(&config, &warm, lease);
    assert!(lock::release(&config, &warm, token.as_bytes()).unwrap());
    let loaded = server.scripts();
    let scripts = || server.scripts() - loaded;
    let try_once = || {
        let token = redislock::token::new_token();
        lock::acquire(&config, &keys, &token, lease, waiting(0))
            .unwrap()
            .map(|_| token)
    };
    let holder = try_once().expect("free");
    assert_eq!(scripts(), 0, "a free lock is taken by plain commands");
    assert!(server.pttl("Lock:plain") > 29_000, "with its lease");
    assert_eq!(try_once(), None, "taken");
    assert_eq!(scripts(), 0, "a single try of a taken lock needs no script");
    assert_eq!(try_once(), None, "still taken");
    assert_eq!(scripts(), 1, "found taken: the next try is the script's");
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    let holder = try_once().expect("free again");
    assert_eq!(scripts(), 3, "the script takes it (after the release's)");
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    let before = scripts();
    let holder = try_once().expect("free again");
    assert_eq!(scripts(), before, "found free by the script: plain again");
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    // A waiting acquire of a free lock takes it the same way.
    let token = redislock::token::new_token();
    assert!(
        lock::acquire(&config, &keys, &token, lease, waiting(5))
            .unwrap()
            .is_some()
    );
    assert_eq!(scripts(), before + 1, "only the release ran a script");
    assert!(lock::release(&config, &keys, token.as_bytes()).unwrap());
}

/// A plain first try that sets a lock whose line is not empty (its holder's
/// lease ran out with a waiter in line, or an old client deleted it) hands
/// the lock on to the first waiter, as a release would, and the arrival
/// waits behind it: nobody in line is passed over.
#[test]
fn a_plain_first_try_hands_a_free_lock_to_its_line() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Keys::seed(b"", b"passed");
    let lease = Duration::from_secs(30);
    for wait in [waiting(0), waiting(1)] {
        let first = dead_waiter(&server, &keys, 20_000, 30_000);
        let arrival = redislock::token::new_token();
        let started = Instant::now();
        assert_eq!(
            lock::acquire(&config, &keys, &arrival, lease, wait).unwrap(),
            None,
            "the arrival passed the waiter in line"
        );
        let owner: String = redis::cmd("GET")
            .arg(&keys.lock)
            .query(&mut server.client())
            .unwrap();
        assert_eq!(owner, first, "handed to the first in line");
        assert!(
            server.pttl("Lock:passed") > 19_000,
            "with the waiter's lease"
        );
        let wake = keys.wake(&first);
        assert_eq!(server.list(&wake).len(), 1, "the waiter was woken");
        if !wait.timeout.is_zero() {
            assert!(
                started.elapsed() >= wait.timeout,
                "the arrival waited in line"
            );
        }
        assert_eq!(llen(&server, &keys.line), 0, "and left it");
        let _: () = redis::cmd("DEL")
            .arg(&keys.lock)
            .arg(&wake)
            .query(&mut server.client())
            .unwrap();
    }
}

/// A line of another type (written by hand) fails the acquire, which
/// leaves no lock behind, whether its first try is plain or the script's.
#[test]
fn a_line_of_another_type_fails_the_acquire_and_takes_nothing() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Keys::seed(b"", b"typed");
    server.by_hand(&keys.line);
    for _ in 0..2 {
        let token = redislock::token::new_token();
        let err = lock::acquire(&config, &keys, &token, Duration::from_secs(30), waiting(0))
            .expect_err("the line is a string");
        assert!(err.cause().starts_with("WRONGTYPE"), "{err}");
        common::wait_for("the lock to be gone", 5, || server.pttl("Lock:typed") == -2);
    }
}

#[test]
fn a_line_busy_for_longer_than_it_lives_unrenewed_keeps_its_waiters() {
    // Waiters that are handed the lock within a renewal never renew their
    // places, and a busy line is never empty: only joining keeps it alive.
    // It once lived 2 places after its first waiter joined, then expired
    // with its waiters in it; they lost their turns to whoever retried first.
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Arc::new(Keys::named(b"", b"busy"));
    const N: usize = 4;
    let end = Instant::now() + 2 * wait::PLACE + Duration::from_millis(1500);
    let turns: Vec<usize> = (0..N)
        .map(|_| {
            let (config, keys) = (config.clone(), keys.clone());
            std::thread::spawn(move || {
                let mut turns = 0;
                while Instant::now() < end {
                    let token = redislock::token::new_token();
                    lock::acquire(&config, &keys, &token, Duration::from_secs(30), waiting(60))
                        .unwrap()
                        .expect("served within the wait");
                    turns += 1;
                    std::thread::sleep(Duration::from_millis(1));
                    assert!(lock::release(&config, &keys, token.as_bytes()).unwrap());
                }
                turns
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|t| t.join().unwrap())
        .collect();
    // First come, first served: every waiter gets as many turns, but for
    // the odd one lost to scheduling (a lost line gave 894 against 1,785).
    let (least, most) = (*turns.iter().min().unwrap(), *turns.iter().max().unwrap());
    assert!(least * 5 >= most * 4, "turns per waiter: {turns:?}");
}

/// Puts a waiter that will never pick anything up in line: `place_ms` is
/// how long its place is still kept (0: it ran out already).
fn dead_waiter(server: &RedisServer, keys: &Keys, lease_ms: u64, place_ms: u64) -> String {
    let token = redislock::token::new_token();
    let mut c = server.client();
    let _: () = redis::cmd("RPUSH")
        .arg(&keys.line)
        .arg(format!("{token}:{lease_ms}"))
        .query(&mut c)
        .unwrap();
    if place_ms > 0 {
        let alive = [keys.waiters.as_slice(), b"a:", token.as_bytes()].concat();
        let _: () = redis::cmd("SET")
            .arg(alive)
            .arg(1)
            .arg("PX")
            .arg(place_ms)
            .query(&mut c)
            .unwrap();
    }
    token
}

/// How long a live waiter behind a dead one waits after the release.
fn stall_behind(dead_place_ms: u64) -> (Duration, Keys, RedisServer) {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Keys::named(b"", b"dead");
    let holder = redislock::token::new_token();
    let lease = Duration::from_secs(60);
    lock::acquire(&config, &keys, &holder, lease, waiting(0))
        .unwrap()
        .unwrap();
    dead_waiter(&server, &keys, 60_000, dead_place_ms);
    let live = {
        let (config, keys) = (config.clone(), keys.clone());
        std::thread::spawn(move || {
            let got = lock::acquire(
                &config,
                &keys,
                &redislock::token::new_token(),
                lease,
                waiting(30),
            );
            (got, Instant::now())
        })
    };
    line_reaches(&server, &keys.line, 2);
    let released = Instant::now();
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    let (got, at) = live.join().unwrap();
    assert!(got.unwrap().is_some(), "the live waiter got the lock");
    (at - released, keys, server)
}

#[test]
fn a_waiter_whose_place_ran_out_is_skipped_at_once() {
    let (stall, keys, server) = stall_behind(0);
    // Handed straight to the live waiter: no lease, no recheck in between.
    assert!(stall < wait::RENEW, "stalled {stall:?}");
    assert_eq!(llen(&server, &keys.line), 0);
}

#[test]
fn a_waiter_that_dies_at_the_handoff_stalls_the_lock_at_most_its_place() {
    // Its place is still kept when the lock is handed to it: the next in
    // line frees the lock once the handoff went unclaimed for half a place,
    // at its next renewal.
    let (stall, _, _server) = stall_behind(wait::PLACE.as_millis() as u64);
    // Plus scheduling slack on a loaded machine: far below a lock lease.
    let bound = wait::PLACE / 2 + wait::RENEW + Duration::from_millis(700);
    assert!(stall <= bound, "stalled {stall:?}, bound {bound:?}");
    // It was handed to the dead waiter first: rescued, not skipped.
    assert!(stall >= wait::PLACE / 2, "stalled {stall:?}");
}

#[test]
fn a_waiter_that_gives_up_leaves_the_line() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::seed(b"", b"gives-up");
    let lease = Duration::from_secs(30);
    let _holder = taken(&config, &keys, lease);
    let wait = Wait {
        timeout: Duration::from_millis(300),
        recheck: Duration::from_millis(100),
    };
    assert_eq!(
        lock::acquire(&config, &keys, &redislock::token::new_token(), lease, wait).unwrap(),
        None
    );
    assert_eq!(llen(&server, &keys.line), 0, "left the line");
    // (The holder's description, from the first acquire, stays by design.)
    let keys_left: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query::<Vec<String>>(&mut server.client())
        .unwrap()
        .into_iter()
        .filter(|k| !k.starts_with("redislock:holder:"))
        .collect();
    assert_eq!(
        keys_left,
        vec!["Lock:gives-up".to_string()],
        "no waiter keys left"
    );
}

fn reserve_one(config: &Config, keys: &queue::Keys) -> Option<Vec<u8>> {
    // No recheck within the test: a consumer rechecking steps out of the
    // line for a moment, and on a loaded machine (CI) one did so just as
    // the test counted the line. Only wake-ups serve these consumers.
    let how = Reserve {
        count: 1,
        wait: Duration::from_secs(30),
        recheck: Duration::from_secs(30),
    };
    let terms = Terms::own(Duration::from_secs(30), 0);
    lease::reserve(config, &[(keys, terms)], &how)
        .unwrap()
        .map(|(_, mut tasks)| tasks.remove(0).id)
}

#[test]
fn an_enqueue_wakes_one_blocked_consumer_per_task() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let keys = Arc::new(queue::Keys::new(b"", b"wake"));
    const CONSUMERS: i64 = 6;
    let got = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            let (config, keys, got) = (config.clone(), keys.clone(), got.clone());
            std::thread::spawn(move || {
                if let Some(id) = reserve_one(&config, &keys) {
                    got.lock().unwrap().push(id);
                }
            })
        })
        .collect();
    line_reaches(&server, &keys.line, CONSUMERS);
    let put = |ids: &[&str]| {
        let tasks: Vec<NewTask> = ids
            .iter()
            .map(|id| NewTask {
                id: id.as_bytes().to_vec(),
                payload: None,
            })
            .collect();
        queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap();
    };
    put(&["a"]);
    common::wait_for("one consumer served", 10, || got.lock().unwrap().len() == 1);
    assert_eq!(
        llen(&server, &keys.line),
        CONSUMERS - 1,
        "one consumer woken"
    );
    put(&["b", "c"]);
    common::wait_for("two more served", 10, || got.lock().unwrap().len() == 3);
    assert_eq!(
        llen(&server, &keys.line),
        CONSUMERS - 3,
        "two consumers woken"
    );
    // A delayed task wakes the first in line only, at its due time.
    queue::put(
        &config,
        &keys,
        &[NewTask {
            id: b"later".to_vec(),
            payload: None,
        }],
        0.3,
        Policy::Keep,
        0,
    )
    .unwrap();
    common::wait_for("the delayed task served", 10, || {
        got.lock().unwrap().len() == 4
    });
    assert_eq!(llen(&server, &keys.line), CONSUMERS - 4);
    put(&["d", "e"]);
    for t in threads {
        t.join().unwrap();
    }
    let mut ids = got.lock().unwrap().clone();
    ids.sort();
    let want: Vec<Vec<u8>> = ["a", "b", "c", "d", "e", "later"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    assert_eq!(ids, want, "every task delivered once");
    assert_eq!(llen(&server, &keys.line), 0);
}

/// A waiter whose recheck fails leaves the line; what was handed to it
/// meanwhile is the wait's outcome (a lock or tasks are never dropped),
/// else the wait fails with the recheck's error.
#[test]
fn a_wait_that_fails_leaves_and_keeps_what_was_handed_over() {
    struct Scripted {
        handed: Option<i64>,
        left: usize,
    }
    impl wait::Waiter<i64> for Scripted {
        fn attempt(&mut self, pass: wait::Pass) -> Result<wait::Try<i64>, redislock::conn::Error> {
            match pass {
                wait::Pass::First => Ok(wait::Try::Later(Duration::from_millis(10))),
                _ => Err(redislock::conn::Error::Server {
                    server: "here".into(),
                    cause: "the recheck failed".into(),
                }),
            }
        }
        fn woken(&mut self, _: usize, _: Vec<u8>) -> wait::Woken<i64> {
            wait::Woken::Again(wait::Pass::Recheck)
        }
        fn leave(&mut self) -> Result<Option<i64>, redislock::conn::Error> {
            self.left += 1;
            Ok(self.handed)
        }
    }
    let server = RedisServer::start();
    let config = server.config();
    for handed in [Some(7), None] {
        let mut waiter = Scripted { handed, left: 0 };
        let done = wait::until(
            &config,
            &[b"scripted:wake".to_vec()],
            Duration::from_secs(5),
            &mut waiter,
        );
        assert_eq!(waiter.left, 1, "left the line once");
        match (handed, done) {
            (Some(7), Ok(Some(7))) => {}
            (None, Err(e)) => assert_eq!(e.cause(), "the recheck failed"),
            (_, other) => panic!("handed {handed:?}: {other:?}"),
        }
    }
}
