//! The lock contract, written once and run against every kind of hold: a
//! lock, the write lock of a read-write lock, a semaphore of one permit, a
//! multi-lock of one lock, and a Redlock (over three servers), the way
//! symfony/lock runs one test trait over every store. Then Redlock's quorum
//! over every subset of its nodes, as redsync tests it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::RedisServer;
use redislock::config::Config;
use redislock::lock::Keys;
use redislock::lock::contract::Holding;
use redislock::lock::hold::{Hold, Options, Refused};
use redislock::lock::multi::MultiHold;
use redislock::lock::redlock::{Nodes, Redlock};

fn options(lease: Duration) -> Options {
    Options {
        lease,
        reentrant: false,
        auto_renew: false,
        max_hold: Duration::from_secs(3600),
        replicas: 0,
        replica_timeout: Duration::from_secs(1),
        release_at_end: true,
        owner: None,
        exact_key: false,
    }
}

/// A refusal as the contract tells them apart: "not held", "lost", or
/// none it expects.
fn word(done: Result<(), Refused>) -> Result<(), &'static str> {
    done.map_err(|refused| match refused {
        Refused::NotHeld => "not held",
        Refused::Lost(_) => "lost",
        other => panic!("unexpected refusal {other:?}"),
    })
}

/// Where the holds live: one server, and three for Redlock.
struct World {
    config: Arc<Config>,
    nodes: Nodes,
    _servers: Vec<RedisServer>,
}

impl World {
    fn new() -> Self {
        let servers: Vec<RedisServer> = (0..3).map(|_| RedisServer::start()).collect();
        World {
            config: Arc::new(servers[0].config()),
            nodes: Nodes {
                nodes: servers.iter().map(|s| Arc::new(s.config())).collect(),
                drift_factor: 0.01,
                drift_fixed: Duration::from_millis(2),
                retry_delay: Duration::from_millis(20),
            },
            _servers: servers,
        }
    }
}

/// A kind of hold: its name, and a new hold of `name` with `lease`.
type Kind = (
    &'static str,
    fn(&World, &[u8], Duration) -> Box<dyn Holding>,
);

const KINDS: [Kind; 5] = [
    ("lock", |w, name, lease| {
        Box::new(Hold::new(w.config.clone(), name, options(lease)))
    }),
    ("write lock", |w, name, lease| {
        Box::new(Hold::read_write(
            w.config.clone(),
            name,
            true,
            options(lease),
        ))
    }),
    ("semaphore of 1", |w, name, lease| {
        Box::new(Hold::semaphore(
            w.config.clone(),
            name,
            1,
            1,
            options(lease),
        ))
    }),
    ("multi-lock of 1", |w, name, lease| {
        Box::new(MultiHold::new(
            w.config.clone(),
            vec![name.to_vec()],
            options(lease),
        ))
    }),
    ("redlock", |w, name, lease| {
        Box::new(Redlock::new(w.nodes.clone(), name.to_vec(), lease).unwrap())
    }),
];

const LONG: Duration = Duration::from_secs(30);

/// Runs `case` against every kind, each on its own lock name.
fn for_every_kind(case: impl Fn(&World, &str, &(dyn Fn(Duration) -> Box<dyn Holding> + Sync))) {
    let world = World::new();
    for (i, (kind, make)) in KINDS.iter().enumerate() {
        let name = format!("contract-{i}");
        let new = |lease| make(&world, name.as_bytes(), lease);
        case(&world, kind, &new);
    }
}

#[test]
fn one_holder_at_a_time() {
    for_every_kind(|_, kind, new| {
        let (mut a, mut b) = (new(LONG), new(LONG));
        assert!(
            a.acquire(Duration::ZERO).unwrap(),
            "{kind}: a free lock is taken"
        );
        assert!(
            !b.acquire(Duration::ZERO).unwrap(),
            "{kind}: a held lock is not"
        );
        assert!(a.is_held().unwrap(), "{kind}");
        assert!(
            !b.is_held().unwrap(),
            "{kind}: the other object does not hold it"
        );
        let left = a.remaining().unwrap().expect("held: a lease left");
        assert!(
            left > LONG - Duration::from_secs(5) && left <= LONG,
            "{kind}: {left:?}"
        );
        assert_eq!(
            b.remaining().unwrap(),
            None,
            "{kind}: nothing left to one that holds nothing"
        );
        assert_eq!(word(b.release()), Err("not held"), "{kind}");
        assert!(
            a.is_held().unwrap(),
            "{kind}: a refused release changes nothing"
        );
        assert_eq!(word(a.release()), Ok(()), "{kind}");
        assert!(!a.is_held().unwrap(), "{kind}");
        assert_eq!(word(a.release()), Err("not held"), "{kind}: released once");
        assert!(
            b.acquire(Duration::ZERO).unwrap(),
            "{kind}: free again after release"
        );
        assert_eq!(word(b.release()), Ok(()), "{kind}");
    });
}

#[test]
fn a_lease_runs_out_and_the_late_holder_hears_it_was_lost() {
    for_every_kind(|_, kind, new| {
        let (mut a, mut b) = (new(Duration::from_millis(300)), new(LONG));
        assert!(a.acquire(Duration::ZERO).unwrap(), "{kind}");
        std::thread::sleep(Duration::from_millis(500));
        assert!(!a.is_held().unwrap(), "{kind}: the lease ran out");
        assert!(
            b.acquire(Duration::ZERO).unwrap(),
            "{kind}: another takes it"
        );
        assert_eq!(word(a.release()), Err("lost"), "{kind}: the late release");
        assert!(
            b.is_held().unwrap(),
            "{kind}: the late release left the new holder be"
        );
        assert_eq!(
            word(a.extend(Some(LONG))),
            Err("not held"),
            "{kind}: nothing to extend"
        );
        assert_eq!(word(b.release()), Ok(()), "{kind}");
    });
}

#[test]
fn an_extended_lease_outlives_the_first_one() {
    for_every_kind(|_, kind, new| {
        let (mut a, mut b) = (new(Duration::from_millis(400)), new(LONG));
        assert_eq!(
            word(a.extend(Some(LONG))),
            Err("not held"),
            "{kind}: not held yet"
        );
        assert!(a.acquire(Duration::ZERO).unwrap(), "{kind}");
        assert_eq!(
            word(a.extend(Some(Duration::from_secs(10)))),
            Ok(()),
            "{kind}"
        );
        std::thread::sleep(Duration::from_millis(600));
        assert!(a.is_held().unwrap(), "{kind}: held past the first lease");
        assert!(!b.acquire(Duration::ZERO).unwrap(), "{kind}");
        assert_eq!(word(a.release()), Ok(()), "{kind}");
    });
}

#[test]
fn a_waiter_gets_the_lock_when_it_is_released() {
    for_every_kind(|_, kind, new| {
        let mut a = new(LONG);
        assert!(a.acquire(Duration::ZERO).unwrap(), "{kind}");
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut b = new(LONG);
                let started = Instant::now();
                let got = b.acquire(Duration::from_secs(10)).unwrap();
                let held = b.is_held().unwrap();
                let _ = word(b.release());
                (got, held, started.elapsed())
            });
            std::thread::sleep(Duration::from_millis(200));
            assert_eq!(word(a.release()), Ok(()), "{kind}");
            let (got, held, _) = waiter.join().unwrap();
            assert!(got && held, "{kind}: the waiter took it");
        });
        // A wait that runs out answers false and leaves no hold behind.
        let (mut c, mut d) = (new(LONG), new(LONG));
        assert!(c.acquire(Duration::ZERO).unwrap(), "{kind}");
        assert!(!d.acquire(Duration::from_millis(100)).unwrap(), "{kind}");
        assert!(!d.is_held().unwrap(), "{kind}");
        assert_eq!(word(c.release()), Ok(()), "{kind}");
    });
}

#[test]
fn fencing_tokens_grow_with_every_acquire() {
    for_every_kind(|_, kind, new| {
        let (mut a, mut b) = (new(LONG), new(LONG));
        assert!(a.acquire(Duration::ZERO).unwrap(), "{kind}");
        let Some(first) = a.fence() else {
            assert_eq!(kind, "redlock", "only Redlock hands out no fencing token");
            return;
        };
        word(a.release()).unwrap();
        assert_eq!(a.fence(), None, "{kind}: none when not held");
        assert!(b.acquire(Duration::ZERO).unwrap(), "{kind}");
        let second = b.fence().unwrap();
        assert!(second > first, "{kind}: {second} after {first}");
        word(b.release()).unwrap();
    });
}

/// Redlock over five nodes with every subset of them held by someone else:
/// taken exactly when a majority is free, and never left behind on the
/// free nodes when not.
#[test]
fn redlock_takes_the_lock_exactly_when_a_majority_of_nodes_is_free() {
    let servers: Vec<RedisServer> = (0..5).map(|_| RedisServer::start()).collect();
    let nodes = Nodes {
        nodes: servers.iter().map(|s| Arc::new(s.config())).collect(),
        drift_factor: 0.01,
        drift_fixed: Duration::from_millis(2),
        retry_delay: Duration::from_millis(20),
    };
    let key = Keys::redlock(b"", b"subset").lock;
    let mut connections: Vec<redis::Connection> = servers.iter().map(|s| s.client()).collect();
    for taken in 0u32..(1 << 5) {
        for (i, c) in connections.iter_mut().enumerate() {
            let mut cmd = redis::cmd("SET");
            if taken & (1 << i) != 0 {
                cmd.arg(&key).arg("someone else").arg("PX").arg(60_000);
            } else {
                cmd = redis::cmd("DEL");
                cmd.arg(&key);
            }
            let _: () = cmd.query(c).unwrap();
        }
        let free = 5 - taken.count_ones();
        let mut lock = Redlock::new(nodes.clone(), b"subset".to_vec(), LONG).unwrap();
        let got = Holding::acquire(&mut lock, Duration::ZERO).unwrap();
        assert_eq!(got, free >= 3, "nodes taken {taken:05b}");
        let ours = connections
            .iter_mut()
            .map(|c| {
                redis::cmd("GET")
                    .arg(&key)
                    .query::<Option<String>>(c)
                    .unwrap()
            })
            .filter(|v| v.as_deref().is_some_and(|v| v != "someone else"))
            .count();
        assert_eq!(ours, if got { free as usize } else { 0 }, "{taken:05b}");
        if got {
            Holding::release(&mut lock).unwrap();
        }
    }
}
