//! Redlock over 5 real redis-servers.

use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::RedisServer;
use redislock::lock::redlock::{self, NoQuorum, Nodes};
use redislock::token::new_token;

fn nodes(servers: &[RedisServer]) -> Nodes {
    Nodes {
        nodes: servers.iter().map(|s| Arc::new(s.config())).collect(),
        drift_factor: 0.01,
        drift_fixed: Duration::from_millis(2),
        retry_delay: Duration::from_millis(50),
    }
}

fn five() -> Vec<RedisServer> {
    (0..5).map(|_| RedisServer::start()).collect()
}

/// Sends `sig` (`-STOP`, `-CONT`) to a server's process.
fn signal(server: &RedisServer, sig: &str) -> bool {
    Command::new("kill")
        .arg(sig)
        .arg(server.pid().to_string())
        .status()
        .unwrap()
        .success()
}

fn value(server: &RedisServer, key: &str) -> Option<String> {
    redis::cmd("GET")
        .arg(key)
        .query(&mut server.client())
        .unwrap()
}

#[test]
fn a_majority_holds_the_lock_and_validity_never_exceeds_the_ttl() {
    let servers = five();
    let nodes = nodes(&servers);
    let ttl = Duration::from_secs(10);
    let token = new_token();
    let held = redlock::acquire(&nodes, b"rl", &token, ttl, Duration::ZERO).unwrap();
    assert!(held.validity < ttl && held.validity > ttl - Duration::from_secs(1));
    assert!(
        servers
            .iter()
            .all(|s| value(s, "lock:{rl}").as_deref() == Some(token.as_str()))
    );
    assert_eq!(
        redlock::acquire(&nodes, b"rl", &new_token(), ttl, Duration::ZERO),
        Err(NoQuorum::Busy)
    );
    assert_eq!(redlock::holders(&nodes, b"rl", &token, ttl), 5);
    let extended = redlock::extend(&nodes, b"rl", &token, Duration::from_secs(20)).unwrap();
    assert!(extended.validity > ttl);
    assert_eq!(redlock::release(&nodes, b"rl", &token, ttl), 5);
    assert!(servers.iter().all(|s| value(s, "lock:{rl}").is_none()));
}

#[test]
fn two_nodes_down_is_fine_three_down_fails_naming_them() {
    let mut servers = five();
    servers[0].stop();
    servers[1].stop();
    let nodes_ = nodes(&servers);
    let token = new_token();
    let ttl = Duration::from_secs(5);
    assert!(redlock::acquire(&nodes_, b"down", &token, ttl, Duration::ZERO).is_ok());
    redlock::release(&nodes_, b"down", &token, ttl);
    servers[2].stop();
    match redlock::acquire(&nodes_, b"down", &new_token(), ttl, Duration::ZERO) {
        Err(NoQuorum::Unavailable(failed)) => {
            assert_eq!(failed.len(), 3);
            for s in &servers[..3] {
                assert!(
                    failed
                        .iter()
                        .any(|e| e.server() == format!("127.0.0.1:{}", s.port))
                );
            }
        }
        other => panic!("expected the three nodes named, got {other:?}"),
    }
    // A failed attempt leaves nothing on the nodes that said yes.
    assert!(servers[3..].iter().all(|s| value(s, "down").is_none()));
}

#[test]
fn a_minority_taken_by_another_is_released_after_the_failed_attempt() {
    let servers = five();
    let nodes = nodes(&servers);
    for s in &servers[..3] {
        let _: () = redis::cmd("SET")
            .arg("lock:{taken}")
            .arg("other")
            .query(&mut s.client())
            .unwrap();
    }
    let mine = new_token();
    assert_eq!(
        redlock::acquire(
            &nodes,
            b"taken",
            &mine,
            Duration::from_secs(5),
            Duration::ZERO
        ),
        Err(NoQuorum::Busy)
    );
    assert!(
        servers[3..]
            .iter()
            .all(|s| value(s, "lock:{taken}").is_none()),
        "released where it was taken"
    );
}

#[test]
fn a_paused_node_costs_only_its_timeout() {
    let servers = five();
    let nodes = nodes(&servers);
    assert!(signal(&servers[4], "-STOP"));
    let ttl = Duration::from_secs(1);
    let started = Instant::now();
    let result = redlock::acquire(&nodes, b"slow", &new_token(), ttl, Duration::ZERO);
    let took = started.elapsed();
    signal(&servers[4], "-CONT");
    assert!(result.is_ok(), "{result:?}");
    // The node timeout is a tenth of the TTL: 100 ms. A hang would be 1 s+.
    assert!(took < Duration::from_millis(900), "{took:?}");
}

/// The validity counts the time the nodes took once: the keys, set from the
/// start of the attempt, live until `ttl` after it, less the drift; a slow
/// (paused) node made it end earlier by the time it took, twice.
#[test]
fn the_validity_takes_the_time_spent_off_once() {
    let servers = five();
    let nodes = nodes(&servers);
    assert!(signal(&servers[4], "-STOP"));
    let ttl = Duration::from_secs(2);
    let started = Instant::now();
    let held = redlock::acquire(&nodes, b"once", &new_token(), ttl, Duration::ZERO);
    let took = started.elapsed();
    signal(&servers[4], "-CONT");
    let held = held.unwrap();
    assert!(
        took >= Duration::from_millis(150),
        "the paused node's timeout: {took:?}"
    );
    let ends = held.since + held.validity;
    let keys_end = started + ttl - (ttl.mul_f64(nodes.drift_factor) + nodes.drift_fixed);
    let off = if ends > keys_end {
        ends - keys_end
    } else {
        keys_end - ends
    };
    assert!(
        off < Duration::from_millis(50),
        "the validity ends {off:?} away from the keys' end, after {took:?}"
    );
}

#[test]
fn ten_contenders_never_overlap() {
    let servers = five();
    let nodes = Arc::new(nodes(&servers));
    let inside = Arc::new(AtomicUsize::new(0));
    let overlaps = Arc::new(AtomicUsize::new(0));
    let entered = Arc::new(Mutex::new(0));
    let threads: Vec<_> = (0..10)
        .map(|_| {
            let (nodes, inside, overlaps, entered) = (
                nodes.clone(),
                inside.clone(),
                overlaps.clone(),
                entered.clone(),
            );
            std::thread::spawn(move || {
                for _ in 0..5 {
                    let token = new_token();
                    let ttl = Duration::from_secs(5);
                    if redlock::acquire(&nodes, b"c", &token, ttl, Duration::from_secs(30)).is_err()
                    {
                        continue;
                    }
                    if inside.fetch_add(1, Ordering::SeqCst) != 0 {
                        overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                    *entered.lock().unwrap() += 1;
                    std::thread::sleep(Duration::from_millis(2));
                    inside.fetch_sub(1, Ordering::SeqCst);
                    redlock::release(&nodes, b"c", &token, ttl);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(overlaps.load(Ordering::SeqCst), 0);
    assert!(
        *entered.lock().unwrap() >= 40,
        "most got their turn: {}",
        entered.lock().unwrap()
    );
}

#[test]
fn connections_to_the_nodes_last_across_calls() {
    let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
    let nodes = nodes(&servers);
    let received = |s: &RedisServer| -> u64 {
        let info: String = redis::cmd("INFO")
            .arg("stats")
            .query(&mut s.client())
            .unwrap();
        info.lines()
            .find_map(|l| l.strip_prefix("total_connections_received:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let before: Vec<u64> = servers.iter().map(received).collect();
    for _ in 0..20 {
        let token = new_token();
        redlock::acquire(
            &nodes,
            b"reuse",
            &token,
            Duration::from_secs(5),
            Duration::ZERO,
        )
        .unwrap();
        assert_eq!(
            redlock::release(&nodes, b"reuse", &token, Duration::from_secs(5)),
            3
        );
    }
    for (s, before) in servers.iter().zip(before) {
        // One connection by the engine, one by `received` itself.
        assert_eq!(received(s) - before, 2, "40 calls, one connection");
    }
}
