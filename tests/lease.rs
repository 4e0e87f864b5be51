//! Fencing tokens and lease renewal, against a real redis-server.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common;
use crate::common::{NO_WAIT, RedisServer};
use redislock::config::Config;
use redislock::lock::renew::{self, Lease};
use redislock::lock::{self, Wait};

fn acquire(config: &Config, key: &str, token: &str, lease: Duration) -> i64 {
    common::acquire_fenced(config, key.as_bytes(), token, lease, NO_WAIT)
        .unwrap()
        .expect("lock free")
}

#[test]
fn fencing_tokens_increase_even_after_the_counter_is_gone() {
    let server = RedisServer::start();
    let config = server.config();
    let lease = Duration::from_secs(5);
    let mut last = 0;
    for round in 0..20 {
        if round == 10 {
            // The counter expired (or was deleted): the clock floor still
            // puts the next token above every earlier one.
            let _: () = redis::cmd("DEL")
                .arg("lock:{f}:fence")
                .query(&mut server.client())
                .unwrap();
        }
        let token = redislock::token::new_token();
        let fence = acquire(&config, "lock:{f}", &token, lease);
        assert!(fence > last, "round {round}: {fence} after {last}");
        last = fence;
        let busy = common::acquire_fenced(
            &config,
            b"lock:{f}",
            &redislock::token::new_token(),
            lease,
            NO_WAIT,
        )
        .unwrap();
        assert_eq!(busy, None, "held: no token for a second acquirer");
        assert!(common::release(&config, b"lock:{f}", token.as_bytes()).unwrap());
    }
    let kept = server.pttl("lock:{f}:fence");
    let most = (lease + lock::FENCE_KEEP).as_millis() as i64;
    assert!(kept > 0 && kept <= most, "the counter expires: {kept}");
    // A counter ahead of the clock (tokens issued faster than 1 per µs) wins.
    let ahead = last + 1_000_000_000;
    let _: () = redis::cmd("SET")
        .arg("lock:{f}:fence")
        .arg(ahead)
        .query(&mut server.client())
        .unwrap();
    assert_eq!(acquire(&config, "lock:{f}", "t", lease), ahead + 1);
}

#[test]
fn a_key_without_expiry_is_not_taken_over_by_the_fenced_acquire() {
    let server = RedisServer::start();
    let config = server.config();
    let _: () = redis::cmd("SET")
        .arg("lock:{p}")
        .arg("someone")
        .query(&mut server.client())
        .unwrap();
    let wait = Wait {
        timeout: Duration::from_millis(150),
        recheck: Duration::from_millis(50),
    };
    let got =
        common::acquire_fenced(&config, b"lock:{p}", "me", Duration::from_secs(1), wait).unwrap();
    assert_eq!(got, None);
    assert_eq!(
        lock::remaining(&config, b"lock:{p}", "someone").unwrap(),
        Some(Duration::MAX)
    );
}

#[test]
fn tokens_order_the_critical_sections_of_contending_threads() {
    let _one = one_renewing_test();
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let history = Arc::new(Mutex::new(Vec::new()));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (config, history) = (config.clone(), history.clone());
            std::thread::spawn(move || {
                for _ in 0..40 {
                    let token = redislock::token::new_token();
                    let wait = Wait {
                        timeout: Duration::from_secs(30),
                        recheck: Duration::from_millis(250),
                    };
                    let fence = common::acquire_fenced(
                        &config,
                        b"lock:{c}",
                        &token,
                        Duration::from_secs(10),
                        wait,
                    )
                    .unwrap()
                    .unwrap();
                    let enter = Instant::now();
                    std::thread::yield_now();
                    let exit = Instant::now();
                    history.lock().unwrap().push((fence, enter, exit));
                    assert!(common::release(&config, b"lock:{c}", token.as_bytes()).unwrap());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut history = history.lock().unwrap().clone();
    assert_eq!(history.len(), 320);
    history.sort_by_key(|(fence, _, _)| *fence);
    let overlaps = history
        .windows(2)
        .filter(|w| w[0].0 == w[1].0 || w[0].2 > w[1].1)
        .count();
    assert_eq!(overlaps, 0, "sections in token order never overlap");
}

/// The tests that start renewal threads run one at a time: one of them
/// counts the process's renewal threads, which the others' would change.
fn one_renewing_test() -> std::sync::MutexGuard<'static, ()> {
    static RENEWING: Mutex<()> = Mutex::new(());
    RENEWING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Acquires `key` with a lease of `lease_ms` and starts renewing it;
/// returns the config, the owner token and the renewal's id.
fn renewed(
    server: &RedisServer,
    key: &str,
    lease_ms: u64,
    max_hold: Duration,
) -> (Config, String, u64) {
    let config = server.config();
    let lease = Duration::from_millis(lease_ms);
    let token = redislock::token::new_token();
    acquire(&config, key, &token, lease);
    let id = renew::start(Lease {
        config: Arc::new(config.clone()),
        keys: common::lock_keys(key.as_bytes()).into(),
        token: token.clone(),
        lease,
        until: Instant::now() + max_hold,
        max_hold,
    })
    .unwrap();
    (config, token, id)
}

#[test]
fn renewal_keeps_a_short_lease_alive_until_stopped() {
    let _one = one_renewing_test();
    let server = RedisServer::start();
    let (config, token, id) = renewed(&server, "lock:{r}", 300, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        lock::holds(&config, b"lock:{r}", &token).unwrap(),
        "held after 4 leases"
    );
    assert_eq!(renew::lost(id), None);
    assert_eq!(renew::stop(id), None);
    assert_eq!(renew::active(), 0);
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(server.pttl("lock:{r}"), -2, "not renewed after stop");
    renew::shutdown();
}

#[test]
fn renewal_ends_at_the_maximum_hold_time() {
    let _one = one_renewing_test();
    let server = RedisServer::start();
    let (config, token, id) = renewed(&server, "lock:{m}", 300, Duration::from_millis(700));
    std::thread::sleep(Duration::from_millis(400));
    assert!(lock::holds(&config, b"lock:{m}", &token).unwrap());
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        server.pttl("lock:{m}"),
        -2,
        "expired at the maximum hold time"
    );
    let reason = renew::lost(id).expect("reported lost");
    assert!(reason.contains("maximum hold time"), "{reason}");
    assert!(renew::stop(id).is_some());
    renew::shutdown();
}

#[test]
fn renewal_reports_a_key_deleted_behind_the_holders_back() {
    let _one = one_renewing_test();
    let server = RedisServer::start();
    let (_, _, id) = renewed(&server, "lock:{d}", 300, Duration::from_secs(60));
    let _: () = redis::cmd("DEL")
        .arg("lock:{d}")
        .query(&mut server.client())
        .unwrap();
    std::thread::sleep(Duration::from_millis(250));
    let reason = renew::lost(id).expect("reported lost");
    assert!(reason.contains("deleted"), "{reason}");
    renew::shutdown();
}

#[test]
fn renewal_reports_redis_unreachable_once_the_lease_may_have_run_out() {
    let _one = one_renewing_test();
    let mut server = RedisServer::start();
    // Renewals go every lease/3 = 1 s, so the last one that succeeded was at
    // most 1 s before the stop and its lease runs at least 2 s after it.
    let (_, _, id) = renewed(&server, "lock:{u}", 3000, Duration::from_secs(60));
    server.stop();
    // A renewal has failed by now, but the last lease surely still runs
    // (0.9 s of margin, for suites running side by side on a busy machine).
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(
        renew::lost(id),
        None,
        "not lost while the lease surely runs"
    );
    std::thread::sleep(Duration::from_millis(3400));
    let reason = renew::lost(id).expect("reported lost");
    assert!(
        reason.contains("could not be renewed") && reason.contains("unavailable"),
        "{reason}"
    );
    renew::shutdown();
}

#[test]
fn renewal_reports_the_loss_when_the_lease_runs_out_while_a_renewal_is_unanswered() {
    let _one = one_renewing_test();
    let server = RedisServer::start();
    let (_, _, id) = renewed(&server, "lock:{p}", 400, Duration::from_secs(60));
    // Paused: the renewal due at a third of the lease waits out its read
    // timeout (1 s), well past the lease.
    let pid = server.pid() as libc::pid_t;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(700));
    let reason = renew::lost(id);
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let reason = reason.expect("lost once the lease ran out, before the renewal timed out");
    assert!(reason.contains("did not confirm a renewal"), "{reason}");
    // The renewal's outcome, when it comes, changes nothing.
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(renew::lost(id), Some(reason));
    renew::shutdown();
}

#[test]
fn a_server_that_stops_answering_does_not_hold_up_renewals_on_another() {
    let _one = one_renewing_test();
    let stalled = RedisServer::start();
    let healthy = RedisServer::start();
    let (_, _, slow) = renewed(&stalled, "lock:{s}", 3000, Duration::from_secs(60));
    let (config, token, id) = renewed(&healthy, "lock:{h}", 600, Duration::from_secs(60));
    // The stalled server's renewals each wait out the read timeout (1 s),
    // longer than the other lock's lease.
    let pid = stalled.pid() as libc::pid_t;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    std::thread::sleep(Duration::from_millis(2500));
    let lost = renew::lost(id);
    let held = lock::holds(&config, b"lock:{h}", &token);
    unsafe { libc::kill(pid, libc::SIGCONT) };
    assert_eq!(lost, None, "the healthy server's lock was renewed");
    assert!(held.unwrap(), "and is held");
    renew::stop(slow);
    renew::stop(id);
    renew::shutdown();
}

/// The renewal threads named `redislock-renew` this process runs now.
fn renewal_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim() == "redislock-renew")
        .count()
}

/// Under ZTS each PHP thread has its own held locks, connections and
/// renewal threads (thread-local): threads renewing locks at once each keep
/// theirs, and when a thread ends, its renewal thread is stopped and waited
/// for, not left running the extension's code.
#[test]
fn each_thread_renews_its_own_locks_and_its_renewal_thread_ends_with_it() {
    let _one = one_renewing_test();
    let server = RedisServer::start();
    let before = renewal_threads();
    let threads: Vec<_> = (0..4)
        .map(|i| {
            let key = format!("lock:{{t{i}}}");
            let config = server.config();
            std::thread::spawn(move || {
                let token = redislock::token::new_token();
                // (A lease wide enough that a renewal late by a loaded
                // machine's scheduling, CI's three jobs at once, still
                // lands: renewals come every third of it.)
                acquire(&config, &key, &token, Duration::from_millis(1200));
                let id = renew::start(Lease {
                    config: Arc::new(config.clone()),
                    keys: common::lock_keys(key.as_bytes()).into(),
                    token: token.clone(),
                    lease: Duration::from_millis(1200),
                    until: Instant::now() + Duration::from_secs(60),
                    max_hold: Duration::from_secs(60),
                })
                .unwrap();
                assert_eq!(renew::active(), 1, "only this thread's renewal");
                std::thread::sleep(Duration::from_millis(3700));
                let held = lock::holds(&config, key.as_bytes(), &token).unwrap();
                assert_eq!(renew::stop(id), None);
                held
            })
        })
        .collect();
    for t in threads {
        assert!(
            t.join().unwrap(),
            "held after 3 leases, renewed by its own thread"
        );
    }
    assert_eq!(
        renewal_threads(),
        before,
        "every renewal thread ended with its thread"
    );
}
