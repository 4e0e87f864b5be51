//! What a queue promises whatever is in Redis and whatever the callers do:
//! a call that fails changes nothing, an id never runs on two workers at
//! once, a dead letter never shares its payload with a live task, and no
//! call runs an unbounded script.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;
use crate::common::RedisServer;
use redislock::config::Config;
use redislock::conn::Error;
use redislock::queue::lease::{self, Leased, Nack, Reserve, Terms};
use redislock::queue::{self, Keys, NewTask, Policy, Put, Status, Tags};

fn task(id: &str, payload: Option<&str>) -> NewTask {
    NewTask {
        id: id.as_bytes().to_vec(),
        payload: payload.map(|p| p.as_bytes().to_vec()),
    }
}

/// Enqueues `id`, tagged `t`, in the group `g`.
fn put(config: &Config, keys: &Keys, id: &str, payload: &str, policy: Policy) -> Status {
    let tags = Tags::new(&["t"]).unwrap().with_group(b"g").unwrap();
    match queue::put_tagged(
        config,
        keys,
        &[task(id, Some(payload))],
        0.0,
        policy,
        0,
        &tags,
    )
    .unwrap()
    {
        Put::Done(s) => s[0],
        Put::Full { .. } => panic!("full"),
    }
}

const NOW: Reserve = Reserve {
    count: 10,
    wait: Duration::ZERO,
    recheck: Duration::from_secs(1),
};

/// A reserve that waits a little: with nothing due, it joins the line.
const WAITING: Reserve = Reserve {
    count: 10,
    wait: Duration::from_millis(5),
    recheck: Duration::from_secs(1),
};

fn terms(lease_ms: u64, max_attempts: u64) -> Terms {
    Terms::own(Duration::from_millis(lease_ms), max_attempts)
}

fn try_reserve(
    config: &Config,
    keys: &Keys,
    terms: Terms,
    how: &Reserve,
) -> Result<Vec<Leased>, Error> {
    Ok(lease::reserve(config, &[(keys, terms)], how)?
        .map(|(_, tasks)| tasks)
        .unwrap_or_default())
}

fn reserve(config: &Config, keys: &Keys, terms: Terms) -> Vec<Leased> {
    try_reserve(config, keys, terms, &NOW).unwrap()
}

fn payload(t: &Leased) -> &str {
    std::str::from_utf8(t.payload.as_deref().unwrap_or(b"-")).unwrap()
}

/// A queue with a task of each kind: queued (`q`, and `later`), leased
/// with a rerun waiting (`run`), leased and run out (`gone`), and dead
/// (`dead`). Returns the lease of `run`.
fn every_state(server: &RedisServer, config: &Config, keys: &Keys) -> Leased {
    redis::cmd("FLUSHALL")
        .query::<()>(&mut server.client())
        .unwrap();
    // Its group's leased tasks are counted.
    lease::set_group_concurrency(config, keys, 3).unwrap();
    put(config, keys, "dead", "d", Policy::Keep);
    let d = reserve(config, keys, terms(30_000, 1)).remove(0);
    assert_eq!(
        lease::nack(
            config,
            keys,
            &d.id,
            &d.token,
            0.0,
            Terms::own(Duration::ZERO, 1),
            b""
        )
        .unwrap(),
        Nack::Dead
    );
    put(config, keys, "gone", "g", Policy::Keep);
    reserve(config, keys, terms(30_000, 0));
    put(config, keys, "run", "r1", Policy::Keep);
    let run = reserve(config, keys, terms(30_000, 0)).remove(0);
    put(config, keys, "run", "r2", Policy::Keep);
    put(config, keys, "q", "q", Policy::Keep);
    queue::put(
        config,
        keys,
        &[task("later", Some("l"))],
        60.0,
        Policy::Keep,
        0,
    )
    .unwrap();
    // The lease of `gone` ran out: its end set in the past here, as a short
    // lease could run out before the reserve of `run`, which would take
    // `gone` again (it did, on a loaded machine).
    redis::cmd("ZADD")
        .arg(&keys.leased)
        .arg("XX")
        .arg(1)
        .arg("gone")
        .query::<()>(&mut server.client())
        .unwrap();
    run
}

/// A call of the queue, with what `every_state` leased.
type Call = Box<dyn Fn(&Config, &Keys, &Leased) -> Result<(), Error>>;

/// Every call the trust tests try, by name, each on the state
/// `every_state` leaves.
fn calls() -> Vec<(&'static str, Call)> {
    vec![
        (
            "enqueue",
            Box::new(|c, k, _| {
                queue::enqueue(c, k, &[b"new".to_vec(), b"q".to_vec()], 0.0).map(drop)
            }),
        ),
        (
            "put",
            Box::new(|c, k, _| {
                queue::put(
                    c,
                    k,
                    &[task("new", Some("n")), task("run", Some("r3"))],
                    0.0,
                    Policy::Keep,
                    0,
                )
                .map(drop)
            }),
        ),
        (
            "put tagged",
            Box::new(|c, k, _| {
                let tags = Tags::new(&["t", "u"]).unwrap();
                let tasks = [task("new", None), task("run", None), task("q", None)];
                queue::put_tagged(c, k, &tasks, 0.0, Policy::Replace, 0, &tags).map(drop)
            }),
        ),
        (
            "put replace",
            Box::new(|c, k, _| {
                queue::put(c, k, &[task("q", None)], 0.0, Policy::Replace, 0).map(drop)
            }),
        ),
        (
            "put bounded",
            Box::new(|c, k, _| {
                queue::put(c, k, &[task("new", None)], 0.0, Policy::Keep, 100).map(drop)
            }),
        ),
        (
            "reserve",
            Box::new(|c, k, _| try_reserve(c, k, terms(30_000, 1), &NOW).map(drop)),
        ),
        (
            "reserve waiting",
            Box::new(|c, k, _| try_reserve(c, k, terms(30_000, 1), &WAITING).map(drop)),
        ),
        (
            "ack",
            Box::new(|c, k, r| lease::ack(c, k, &r.id, &r.token).map(drop)),
        ),
        (
            "ack many",
            Box::new(|c, k, r| lease::ack_many(c, k, &[(&r.id, &r.token), (b"q", "x")]).map(drop)),
        ),
        (
            "ack and reserve",
            Box::new(|c, k, r| {
                let done: &[(&[u8], &str)] = &[(&r.id, &r.token), (b"q", "x")];
                lease::ack_and_reserve(c, &[(k, terms(30_000, 1))], &NOW, done).map(drop)
            }),
        ),
        (
            // (No lease run out: see below.)
            "ack and reserve, none expired",
            Box::new(|c, k, r| {
                let done: &[(&[u8], &str)] = &[(&r.id, &r.token)];
                lease::ack_and_reserve(c, &[(k, terms(30_000, 1))], &NOW, done).map(drop)
            }),
        ),
        (
            // (Nothing due and no lease run out: see below.)
            "ack and wait",
            Box::new(|c, k, r| {
                let done: &[(&[u8], &str)] = &[(&r.id, &r.token)];
                lease::ack_and_reserve(c, &[(k, terms(30_000, 1))], &WAITING, done).map(drop)
            }),
        ),
        (
            "nack",
            Box::new(|c, k, r| {
                lease::nack(
                    c,
                    k,
                    &r.id,
                    &r.token,
                    0.0,
                    Terms::own(Duration::ZERO, 0),
                    b"why",
                )
                .map(drop)
            }),
        ),
        (
            "nack dead",
            Box::new(|c, k, r| {
                lease::nack(
                    c,
                    k,
                    &r.id,
                    &r.token,
                    0.0,
                    Terms::own(Duration::ZERO, 1),
                    b"why",
                )
                .map(drop)
            }),
        ),
        (
            "extend",
            Box::new(|c, k, r| {
                lease::extend(c, k, &r.id, &r.token, Duration::from_secs(60)).map(drop)
            }),
        ),
        (
            "retry dead",
            Box::new(|c, k, _| lease::retry_dead(c, k, &[], 0).map(drop)),
        ),
        (
            "purge dead",
            Box::new(|c, k, _| lease::purge_dead(c, k, &[b"dead".to_vec()]).map(drop)),
        ),
        (
            "bury",
            Box::new(|c, k, r| lease::bury(c, k, &r.id, &r.token, b"why").map(drop)),
        ),
        (
            "remove",
            Box::new(|c, k, _| {
                lease::remove(c, k, &[b"q".to_vec(), b"run".to_vec(), b"none".to_vec()]).map(drop)
            }),
        ),
        ("clear", Box::new(|c, k, _| lease::clear(c, k).map(drop))),
        (
            "move out",
            Box::new(|c, k, _| {
                let to = Keys::new(b"", b"moved-to");
                lease::move_to((c, k), (c, &to), 0).map(drop)
            }),
        ),
        (
            "move in",
            // (From an empty queue: its checks run before the first task.)
            Box::new(|c, k, _| {
                let from = Keys::new(b"", b"moved-from");
                lease::move_to((c, &from), (c, k), 0).map(drop)
            }),
        ),
        ("pause", Box::new(|c, k, _| lease::pause(c, k).map(drop))),
        (
            "group concurrency",
            Box::new(|c, k, _| lease::set_group_concurrency(c, k, 5)),
        ),
        (
            "no group concurrency",
            Box::new(|c, k, _| lease::set_group_concurrency(c, k, 0)),
        ),
        (
            "group rate",
            Box::new(|c, k, _| {
                let rate = lease::Rate {
                    limit: 2,
                    per: Duration::from_secs(1),
                    burst: 2,
                };
                lease::set_group_rate(c, k, Some(rate))
            }),
        ),
        (
            "group throttle",
            Box::new(|c, k, _| lease::throttle_group(c, k, b"g", 0.5).map(drop)),
        ),
        ("pop", Box::new(|c, k, _| queue::pop(c, k, 10).map(drop))),
        // An operator's looks.
        (
            "metrics",
            Box::new(|c, k, _| lease::metrics(c, k).map(drop)),
        ),
        (
            "history",
            Box::new(|c, k, _| lease::history(c, k).map(drop)),
        ),
        (
            "workers",
            Box::new(|c, k, _| lease::workers(c, k, 10).map(drop)),
        ),
        (
            "recent",
            Box::new(|c, k, _| lease::recent(c, k, 10, None, None).map(drop)),
        ),
        (
            "tagged",
            Box::new(|c, k, _| lease::tagged(c, k, b"t", 10).map(drop)),
        ),
        (
            "keep recent",
            Box::new(|c, k, _| {
                lease::keep_recent(c, k, 5, Duration::from_secs(60), None).map(drop)
            }),
        ),
        (
            "dequeue",
            Box::new(|c, k, _| {
                let top = queue::top(c, k, 1)?;
                queue::dequeue(c, k, b"q", top.first().map_or(0.0, |t| t.score)).map(drop)
            }),
        ),
    ]
}

#[test]
fn a_key_of_the_wrong_type_fails_a_call_before_it_changes_anything() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"typed");
    let calls = calls();
    let roles: Vec<(&str, Vec<u8>)> = vec![
        ("queue", keys.queue.clone()),
        ("payloads", keys.payloads.clone()),
        ("attempts", keys.attempts.clone()),
        ("leased", keys.leased.clone()),
        ("leases", keys.leases.clone()),
        ("reruns", keys.reruns.clone()),
        ("dead", keys.dead.clone()),
        ("dead letters", keys.graves.clone()),
        ("line", keys.line.clone()),
        ("stats", keys.stats.clone()),
        ("failures", keys.failures.clone()),
        ("dead failures", keys.dead_failures.clone()),
        ("workers", keys.workers.clone()),
        ("workers done", keys.worked.clone()),
        ("recent", keys.recent.clone()),
        ("tags", keys.tags.clone()),
        ("groups", keys.groups.clone()),
        ("group leased", keys.group_leased.clone()),
    ];
    let mut refused = HashSet::new();
    for (role, key) in &roles {
        for (name, call) in &calls {
            let run = every_state(&server, &config, &keys);
            if *name == "ack and reserve, none expired" || *name == "ack and wait" {
                // An ack of a task without a rerun, whose reserve settles
                // no run-out lease (either checks every key first): the
                // lease of `gone` runs on, and `run` has no rerun.
                redis::pipe()
                    .cmd("ZADD")
                    .arg(&keys.leased)
                    .arg("XX")
                    .arg("9e9")
                    .arg("gone")
                    .cmd("HDEL")
                    .arg(&keys.reruns)
                    .arg("run")
                    .query::<()>(&mut server.client())
                    .unwrap();
            }
            if *name == "reserve waiting" || *name == "ack and wait" {
                // Nothing due: the consumer joins the line, then leaves it.
                redis::cmd("ZADD")
                    .arg(&keys.queue)
                    .arg("XX")
                    .arg("9e9")
                    .arg("q")
                    .query::<()>(&mut server.client())
                    .unwrap();
                std::thread::sleep(Duration::from_millis(30));
            }
            server.by_hand(key);
            let before = server.snapshot();
            match call(&config, &keys, &run) {
                Ok(()) => {}
                Err(Error::Server { cause, .. }) => {
                    // Named, whether a check before a write or a read's
                    // own WRONGTYPE refused it.
                    assert!(
                        cause.contains(&format!(
                            "key {} holds a string, where redislock keeps a",
                            String::from_utf8_lossy(key)
                        )),
                        "{name} with the {role} a string: {cause}"
                    );
                    let after = server.snapshot();
                    assert!(
                        before == after,
                        "{name} failed on the {role} but changed Redis"
                    );
                    refused.insert((*role, *name));
                }
                Err(e) => panic!("{name} with the {role} a string: not a server error: {e}"),
            }
        }
    }
    // The calls that must touch a key do refuse it.
    for expected in [
        ("leases", "reserve"),
        ("attempts", "reserve"),
        ("dead", "reserve"),
        ("dead letters", "nack dead"),
        ("reruns", "ack"),
        ("stats", "put"),
        ("line", "reserve waiting"),
        ("line", "reserve"),
        ("payloads", "retry dead"),
        ("queue", "enqueue"),
        ("stats", "pop"),
        ("dead letters", "bury"),
        ("reruns", "remove"),
        ("payloads", "clear"),
        ("failures", "nack"),
        ("stats", "pause"),
        ("workers done", "ack"),
        ("failures", "ack"),
        ("dead failures", "bury"),
        ("dead failures", "retry dead"),
        ("dead", "ack and reserve"),
        ("workers done", "ack and reserve"),
        ("failures", "ack and reserve"),
        ("leases", "ack and reserve"),
        ("line", "ack and reserve, none expired"),
        ("line", "ack and wait"),
        ("queue", "metrics"),
        ("leased", "metrics"),
        ("dead", "metrics"),
        ("stats", "history"),
        ("recent", "ack"),
        ("recent", "ack many"),
        ("recent", "nack"),
        ("recent", "nack dead"),
        ("recent", "bury"),
        ("recent", "ack and reserve"),
        ("recent", "ack and reserve, none expired"),
        ("recent", "recent"),
        ("recent", "keep recent"),
        ("stats", "recent"),
        ("stats", "keep recent"),
        ("stats", "ack"),
        ("stats", "nack"),
        ("workers", "workers"),
        ("tags", "put tagged"),
        ("tags", "put replace"),
        ("tags", "ack"),
        ("tags", "nack"),
        ("tags", "nack dead"),
        ("tags", "remove"),
        ("tags", "clear"),
        ("tags", "retry dead"),
        ("tags", "move in"),
        ("tags", "tagged"),
        ("groups", "put"),
        ("groups", "enqueue"),
        ("groups", "reserve"),
        ("groups", "nack"),
        ("groups", "retry dead"),
        ("groups", "move in"),
        ("groups", "ack and reserve"),
        ("group leased", "ack"),
        ("group leased", "ack many"),
        ("group leased", "nack"),
        ("group leased", "bury"),
        ("group leased", "reserve"),
        ("group leased", "ack and reserve"),
        ("group leased", "group concurrency"),
        ("group leased", "no group concurrency"),
        ("stats", "group rate"),
        ("stats", "group throttle"),
        ("leased", "group concurrency"),
    ] {
        assert!(refused.contains(&expected), "{expected:?} was not refused");
    }
}

/// The stats hash's counts written by hand with text: a call that counts
/// (after its writes) starts such a count again instead of failing with its
/// tasks moved, and the metrics read on.
#[test]
fn a_count_written_by_hand_starts_again_instead_of_failing_a_call() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"counted");
    // The calls that count (after their writes).
    let counting = [
        "enqueue",
        "reserve",
        "ack",
        "nack",
        "nack dead",
        "retry dead",
        "pop",
    ];
    let calls: Vec<_> = calls()
        .into_iter()
        .filter(|(name, _)| counting.contains(name))
        .collect();
    assert_eq!(calls.len(), counting.len());
    for (name, call) in &calls {
        let run = every_state(&server, &config, &keys);
        let mut c = server.client();
        let fields: Vec<String> = redis::cmd("HKEYS").arg(&keys.stats).query(&mut c).unwrap();
        let mut by_hand = redis::pipe();
        for field in fields.iter().filter(|f| *f != "registered") {
            by_hand.cmd("HSET").arg(&keys.stats).arg(field).arg("many");
        }
        // A period long gone, which the next count folds into the total.
        for counter in ["enqueued", "acked", "nacked", "retried", "dead", "expired"] {
            by_hand
                .cmd("HSET")
                .arg(&keys.stats)
                .arg(format!("{counter}:1"))
                .arg("many");
            by_hand
                .cmd("HSET")
                .arg(&keys.stats)
                .arg(counter)
                .arg("many");
        }
        by_hand.query::<()>(&mut c).unwrap();
        if let Err(e) = call(&config, &keys, &run) {
            panic!("{name} with counts written by hand: {e}");
        }
        if let Err(e) = lease::metrics(&config, &keys) {
            panic!("metrics after {name}: {e}");
        }
    }
}

/// The seed's enqueue into a queue that holds only bare ids (its fast path,
/// which no state of `every_state` reaches): a key of the wrong type is
/// refused by name, by the command that reads it or first writes it, and
/// nothing changes. With a consumer waiting, the line is read too.
#[test]
fn the_seed_enqueue_of_bare_ids_refuses_a_key_of_the_wrong_type_by_name() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"bare");
    let roles: [(&str, &[u8]); 6] = [
        ("queue", &keys.queue),
        ("payloads", &keys.payloads),
        ("attempts", &keys.attempts),
        ("leased", &keys.leased),
        ("line", &keys.line),
        ("stats", &keys.stats),
    ];
    for waiting in [false, true] {
        for (role, key) in roles {
            redis::cmd("FLUSHALL")
                .query::<()>(&mut server.client())
                .unwrap();
            queue::enqueue(&config, &keys, &[b"old".to_vec()], 0.0).unwrap();
            if waiting {
                server.consumer_in_line(&keys.line, &keys.waiters, "consumer");
            }
            server.by_hand(key);
            let before = server.snapshot();
            let cause = match queue::enqueue(&config, &keys, &[b"new".to_vec()], 0.0) {
                Err(Error::Server { cause, .. }) => cause,
                other => panic!("enqueue with the {role} a string: {other:?}"),
            };
            assert!(
                cause.contains(&format!(
                    "key {} holds a string, where redislock keeps a",
                    String::from_utf8_lossy(key)
                )),
                "enqueue with the {role} a string: {cause}"
            );
            assert!(
                before == server.snapshot(),
                "enqueue failed on the {role} but changed Redis"
            );
        }
    }
}

/// A reserve that leases due tasks while no lease ran out (the worker's
/// common case, which `every_state`, with a lease run out, does not reach):
/// each key it reads or writes, of the wrong type, fails the call before
/// it changes anything.
#[test]
fn a_reserve_of_due_tasks_refuses_a_key_of_the_wrong_type_before_it_writes() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"due");
    // A first reserve records this worker ({Queue:due}:workers), once.
    try_reserve(&config, &keys, terms(30_000, 0), &NOW).unwrap();
    let roles: [(&str, &[u8]); 7] = [
        ("queue", &keys.queue),
        ("payloads", &keys.payloads),
        ("attempts", &keys.attempts),
        ("leased", &keys.leased),
        ("leases", &keys.leases),
        ("line", &keys.line),
        ("stats", &keys.stats),
    ];
    for (role, key) in roles {
        redis::cmd("FLUSHALL")
            .query::<()>(&mut server.client())
            .unwrap();
        put(&config, &keys, "t", "v", Policy::Keep);
        server.by_hand(key);
        let before = server.snapshot();
        match try_reserve(&config, &keys, terms(30_000, 0), &NOW) {
            Err(Error::Server { .. }) => {}
            other => panic!("reserve with the {role} a string: {other:?}"),
        }
        assert!(
            before == server.snapshot(),
            "reserve failed on the {role} but changed Redis"
        );
    }
}

#[test]
fn a_task_enqueued_while_it_runs_runs_once_more_after_never_beside() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"again");
    let long = terms(30_000, 0);
    put(&config, &keys, "t", "v1", Policy::Keep);
    let first = reserve(&config, &keys, long).remove(0);
    assert_eq!(put(&config, &keys, "t", "v2", Policy::Keep), Status::Added);
    assert_eq!(
        put(&config, &keys, "t", "v2b", Policy::Keep),
        Status::Ignored
    );
    assert!(
        reserve(&config, &keys, long).is_empty(),
        "not beside the running one"
    );
    assert_eq!(
        lease::find(&config, &keys, b"t").unwrap().unwrap().state,
        "leased"
    );
    assert!(lease::extend(&config, &keys, b"t", &first.token, Duration::from_secs(30)).unwrap());
    assert!(
        lease::ack(&config, &keys, b"t", &first.token).unwrap(),
        "the first run keeps its lease"
    );
    let second = reserve(&config, &keys, long).remove(0);
    assert_eq!((payload(&second), second.attempts), ("v2", 1));

    // A rerun replaces a retry: nack, and a lease that runs out.
    assert_eq!(
        put(&config, &keys, "t", "v3", Policy::Replace),
        Status::Added
    );
    assert_eq!(
        put(&config, &keys, "t", "v3", Policy::Replace),
        Status::Updated
    );
    assert_eq!(
        lease::nack(
            &config,
            &keys,
            b"t",
            &second.token,
            0.0,
            Terms::own(Duration::ZERO, 0),
            b""
        )
        .unwrap(),
        Nack::Requeued
    );
    let third = reserve(&config, &keys, terms(30, 0)).remove(0);
    assert_eq!((payload(&third), third.attempts), ("v3", 1));
    put(&config, &keys, "t", "v4", Policy::Keep);
    std::thread::sleep(Duration::from_millis(50));
    let fourth = reserve(&config, &keys, long);
    assert_eq!(fourth.len(), 1);
    assert_eq!((payload(&fourth[0]), fourth[0].attempts), ("v4", 1));
    assert!(
        !lease::ack(&config, &keys, b"t", &third.token).unwrap(),
        "run out"
    );

    // A task that dies leaves its dead letter, and its rerun runs.
    put(&config, &keys, "t", "v5", Policy::Keep);
    assert_eq!(
        lease::nack(
            &config,
            &keys,
            b"t",
            &fourth[0].token,
            0.0,
            Terms::own(Duration::ZERO, 1),
            b""
        )
        .unwrap(),
        Nack::Dead
    );
    let dead = lease::dead(&config, &keys, 10).unwrap();
    assert_eq!(
        (dead[0].payload.as_deref(), dead[0].attempts),
        (Some(b"v4".as_slice()), 1)
    );
    let fifth = reserve(&config, &keys, long).remove(0);
    assert_eq!((payload(&fifth), fifth.attempts), ("v5", 1));
    assert!(lease::ack(&config, &keys, b"t", &fifth.token).unwrap());
    assert!(reserve(&config, &keys, long).is_empty());
}

#[test]
fn a_dead_letter_keeps_its_own_payload_beside_a_new_task_of_its_id() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"graves");
    let long = terms(30_000, 1);
    let die = |payload: &str| {
        put(&config, &keys, "t", payload, Policy::Keep);
        let t = reserve(&config, &keys, long).remove(0);
        assert_eq!(
            lease::nack(
                &config,
                &keys,
                b"t",
                &t.token,
                0.0,
                Terms::own(Duration::ZERO, 1),
                b""
            )
            .unwrap(),
            Nack::Dead
        );
    };
    die("old");
    put(&config, &keys, "t", "new", Policy::Keep);
    let dead = lease::dead(&config, &keys, 10).unwrap();
    assert_eq!(
        (dead[0].payload.as_deref(), dead[0].attempts),
        (Some(b"old".as_slice()), 1)
    );
    assert_eq!(lease::purge_dead(&config, &keys, &[]).unwrap(), 1);
    let t = reserve(&config, &keys, long).remove(0);
    assert_eq!(
        (payload(&t), t.attempts),
        ("new", 1),
        "the purge took nothing of the live task"
    );
    assert!(lease::ack(&config, &keys, b"t", &t.token).unwrap());

    // Retried while a newer task of its id is queued: that one stays.
    die("old2");
    put(&config, &keys, "t", "new2", Policy::Keep);
    assert_eq!(
        lease::retry_dead(&config, &keys, &[], 0).unwrap().retried,
        1
    );
    let t = reserve(&config, &keys, long);
    assert_eq!(t.len(), 1);
    assert_eq!(payload(&t[0]), "new2");
    // Retried while its id runs: it runs after.
    assert!(lease::ack(&config, &keys, b"t", &t[0].token).unwrap());
    die("old3");
    put(&config, &keys, "t", "new3", Policy::Keep);
    let running = reserve(&config, &keys, long).remove(0);
    assert_eq!(
        lease::retry_dead(&config, &keys, &[b"t".to_vec()], 0)
            .unwrap()
            .retried,
        1
    );
    assert!(reserve(&config, &keys, long).is_empty());
    assert!(lease::ack(&config, &keys, b"t", &running.token).unwrap());
    let retried = reserve(&config, &keys, long).remove(0);
    assert_eq!((payload(&retried), retried.attempts), ("old3", 1));
}

#[test]
fn a_dead_letter_of_the_previous_layout_keeps_its_payload() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"before");
    // As the previous release left a dead letter: its payload and attempts
    // in the task's own fields.
    let mut c = server.client();
    redis::cmd("ZADD")
        .arg(&keys.dead)
        .arg(1.8e9)
        .arg("t")
        .query::<()>(&mut c)
        .unwrap();
    redis::cmd("HSET")
        .arg(&keys.payloads)
        .arg("t")
        .arg("old")
        .query::<()>(&mut c)
        .unwrap();
    redis::cmd("HSET")
        .arg(&keys.attempts)
        .arg("t")
        .arg(3)
        .query::<()>(&mut c)
        .unwrap();
    let dead = lease::dead(&config, &keys, 10).unwrap();
    assert_eq!(
        (dead[0].payload.as_deref(), dead[0].attempts),
        (Some(b"old".as_slice()), 3)
    );
    put(&config, &keys, "t", "new", Policy::Keep);
    let dead = lease::dead(&config, &keys, 10).unwrap();
    assert_eq!(
        (dead[0].payload.as_deref(), dead[0].attempts),
        (Some(b"old".as_slice()), 3)
    );
    let t = reserve(&config, &keys, terms(30_000, 5)).remove(0);
    assert_eq!((payload(&t), t.attempts), ("new", 1));
}

/// Workers reserve and ack while a producer enqueues the same ids again and
/// again, and leases run out now and then: no id is ever run by two workers
/// at once, and no worker loses a lease it still holds.
#[test]
fn re_enqueued_ids_never_run_on_two_workers_at_once() {
    let server = RedisServer::start();
    let keys = Arc::new(Keys::new(b"", b"busy"));
    let running = Arc::new(Mutex::new(HashSet::<Vec<u8>>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let (overlaps, stale, runs) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let (config, keys, running, stop) =
                (server.config(), keys.clone(), running.clone(), stop.clone());
            let (overlaps, stale, runs) = (overlaps.clone(), stale.clone(), runs.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    for t in reserve(&config, &keys, terms(30_000, 0)) {
                        if !running.lock().unwrap().insert(t.id.clone()) {
                            overlaps.fetch_add(1, Ordering::Relaxed);
                        }
                        std::thread::sleep(Duration::from_micros(200));
                        running.lock().unwrap().remove(&t.id);
                        if !lease::ack(&config, &keys, &t.id, &t.token).unwrap() {
                            stale.fetch_add(1, Ordering::Relaxed);
                        }
                        runs.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let config = server.config();
    for round in 0..400 {
        let tasks: Vec<NewTask> = (0..8)
            .map(|i| task(&format!("id{i}"), Some(&format!("{round}"))))
            .collect();
        queue::put(&config, &keys, &tasks, 0.0, Policy::Replace, 0).unwrap();
    }
    // Everything enqueued runs; then the queue is empty.
    common::wait_for("the queue to drain", 20, || {
        let m = lease::metrics(&config, &keys).unwrap();
        m.ready + m.leased == 0
    });
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    assert_eq!(overlaps.load(Ordering::Relaxed), 0, "ids run twice at once");
    assert_eq!(stale.load(Ordering::Relaxed), 0, "leases lost while held");
    assert!(runs.load(Ordering::Relaxed) >= 8);
    let reruns: i64 = redis::cmd("HLEN")
        .arg(&keys.reruns)
        .query(&mut server.client())
        .unwrap();
    assert_eq!(reruns, 0, "every rerun ran");
}

/// The calls taking many ids send them in bounded scripts.
#[test]
fn big_batches_run_as_bounded_scripts() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"big");
    let scripts = || server.scripts();
    let ids: Vec<Vec<u8>> = (0..2500).map(|i| format!("{i}").into_bytes()).collect();
    // Loads the scripts (the first call of each is sent twice).
    queue::enqueue(&config, &keys, &ids[..1], 0.0).unwrap();
    queue::put(&config, &keys, &[task("p", None)], 0.0, Policy::Keep, 0).unwrap();
    let before = scripts();
    assert_eq!(queue::enqueue(&config, &keys, &ids, 0.0).unwrap(), 2499);
    assert_eq!(scripts() - before, 3, "3 scripts of at most 1000 ids");
    let tasks: Vec<NewTask> = (1..2501)
        .map(|i| task(&format!("p{i}"), Some("x")))
        .collect();
    let before = scripts();
    match queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap() {
        Put::Done(s) => assert_eq!(s.len(), 2500),
        Put::Full { .. } => panic!("full"),
    }
    assert_eq!(scripts() - before, 3);
    let m = lease::metrics(&config, &keys).unwrap();
    assert_eq!(m.ready, 5001);
}

#[test]
fn remove_and_clear_take_waiting_tasks_and_leave_running_ones_to_their_workers() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"removed");
    let run = every_state(&server, &config, &keys);
    // Queued now, queued later, and the rerun waiting behind `run`.
    assert_eq!(
        lease::remove(
            &config,
            &keys,
            &[
                b"q".to_vec(),
                b"q".to_vec(),
                b"run".to_vec(),
                b"dead".to_vec()
            ]
        )
        .unwrap(),
        2,
        "q once, run's rerun; the dead letter is not waiting"
    );
    assert!(lease::find(&config, &keys, b"q").unwrap().is_none());
    let left = lease::find(&config, &keys, b"run")
        .unwrap()
        .expect("run still leased");
    assert_eq!(left.payload.as_deref(), Some(&b"r1"[..]));
    assert!(
        lease::ack(&config, &keys, &run.id, &run.token).unwrap(),
        "its worker settles it"
    );
    assert!(
        lease::find(&config, &keys, b"run").unwrap().is_none(),
        "no rerun came back"
    );
    assert_eq!(lease::dead(&config, &keys, 10).unwrap().len(), 1);

    // Clear: 2,500 queued (three rounds), one delayed, and reruns behind 3
    // leased ids.
    let keys = Keys::new(b"", b"cleared");
    queue::put(
        &config,
        &keys,
        &[task("later", None)],
        60.0,
        Policy::Keep,
        0,
    )
    .unwrap();
    let many: Vec<NewTask> = (0..2500)
        .map(|i| task(&format!("t{i}"), Some("p")))
        .collect();
    queue::put(&config, &keys, &many, 0.0, Policy::Keep, 0).unwrap();
    let leased = try_reserve(
        &config,
        &keys,
        terms(30_000, 0),
        &Reserve {
            count: 3,
            wait: Duration::ZERO,
            recheck: Duration::from_secs(1),
        },
    )
    .unwrap();
    for t in &leased {
        put(
            &config,
            &keys,
            std::str::from_utf8(&t.id).unwrap(),
            "again",
            Policy::Keep,
        );
    }
    assert_eq!(
        lease::clear(&config, &keys).unwrap(),
        2497 + 3 + 1,
        "queued, reruns, and the delayed one"
    );
    let m = lease::metrics(&config, &keys).unwrap();
    assert_eq!((m.ready, m.delayed, m.leased), (0, 0, 3));
    let mut c = server.client();
    let payloads: u64 = redis::cmd("HLEN")
        .arg(&keys.payloads)
        .query(&mut c)
        .unwrap();
    assert_eq!(payloads, 3, "only the running tasks keep theirs");
    let reruns: u64 = redis::cmd("HLEN").arg(&keys.reruns).query(&mut c).unwrap();
    assert_eq!(reruns, 0);
    for t in &leased {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
    }
    assert!(
        try_reserve(&config, &keys, terms(30_000, 0), &NOW)
            .unwrap()
            .is_empty(),
        "nothing comes back"
    );
    assert_eq!(lease::clear(&config, &keys).unwrap(), 0);
}

#[test]
fn a_buried_task_is_a_dead_letter_at_its_first_attempt() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"buried");
    put(&config, &keys, "bad", "undecodable", Policy::Keep);
    let t = reserve(&config, &keys, terms(30_000, 0)).remove(0);
    assert!(!lease::bury(&config, &keys, &t.id, "not its token", b"").unwrap());
    assert!(
        lease::bury(&config, &keys, &t.id, &t.token, b"").unwrap(),
        "no attempt limit, buried all the same"
    );
    assert!(
        !lease::bury(&config, &keys, &t.id, &t.token, b"").unwrap(),
        "its lease is over"
    );
    let dead = lease::dead(&config, &keys, 10).unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (dead[0].attempts, dead[0].payload.as_deref()),
        (1, Some(&b"undecodable"[..]))
    );
    assert!(
        try_reserve(&config, &keys, terms(30_000, 0), &NOW)
            .unwrap()
            .is_empty()
    );
}

/// A reserve that fails (a key of the wrong type) notes no worker and
/// describes no process: a thread that never reserved from this queue
/// (so its worker note is due) leaves Redis as it found it.
#[test]
fn a_reserve_that_fails_notes_no_worker() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"unnoted");
    server.by_hand(&keys.stats);
    let before = server.snapshot();
    let got =
        std::thread::spawn(move || try_reserve(&config, &keys, terms(1000, 3), &NOW).is_err())
            .join()
            .unwrap();
    assert!(got, "the reserve fails on the stats key");
    assert!(before == server.snapshot(), "and changes nothing");
}
