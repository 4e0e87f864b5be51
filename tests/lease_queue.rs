//! The leased queue engine against a real redis-server.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use crate::common;
use crate::common::RedisServer;
use redislock::config::Config;
use redislock::queue::lease::{self, Leased, Nack, Reserve, Terms};
use redislock::queue::{self, Keys, NewTask, Policy, Put, Status};

fn task(id: &str, payload: Option<&str>) -> NewTask {
    NewTask {
        id: id.as_bytes().to_vec(),
        payload: payload.map(|p| p.as_bytes().to_vec()),
    }
}

/// Up to `count` tasks under a lease of `lease_ms` and 3 attempts at most,
/// waiting up to `wait_ms`.
fn how(count: u64, lease_ms: u64, wait_ms: u64) -> (Reserve, Terms) {
    let how = Reserve {
        count,
        wait: Duration::from_millis(wait_ms),
        recheck: Duration::from_secs(10),
    };
    let terms = Terms::own(Duration::from_millis(lease_ms), 3);
    (how, terms)
}

fn reserve(config: &Config, keys: &Keys, (how, terms): (Reserve, Terms)) -> Vec<Leased> {
    lease::reserve(config, &[(keys, terms)], &how)
        .unwrap()
        .map(|(_, tasks)| tasks)
        .unwrap_or_default()
}

fn statuses(put: Put) -> Vec<Status> {
    match put {
        Put::Done(s) => s,
        Put::Full { .. } => panic!("queue full"),
    }
}

fn score(server: &RedisServer, id: &str) -> f64 {
    redis::cmd("ZSCORE")
        .arg("Queue:p")
        .arg(id)
        .query(&mut server.client())
        .unwrap()
}

/// The keys left besides the operator records, which outlive the tasks by
/// design: the queue registry and its prefixes, the queues' stats hashes
/// and workers, the workers' descriptions; and each of those is there.
fn keys_left(server: &RedisServer) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("*")
        .query(&mut server.client())
        .unwrap();
    keys.sort();
    assert!(keys.iter().any(|k| k == "redislock:queues"), "{keys:?}");
    assert!(keys.iter().any(|k| k == "redislock:prefixes"), "{keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("}:stats")), "{keys:?}");
    assert!(keys.iter().any(|k| k.ends_with("}:workers")), "{keys:?}");
    keys.retain(|k| {
        k != "redislock:queues"
            && k != "redislock:prefixes"
            && !k.starts_with("redislock:holder:")
            && !k.ends_with("}:stats")
            && !k.ends_with("}:workers")
            && !k.ends_with("}:workers-done")
            && !k.ends_with("}:recent")
    });
    keys
}

#[test]
fn enqueue_policies_decide_for_ids_already_queued() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"p");
    let put = |delay: f64, policy: Policy| {
        statuses(
            queue::put(
                &config,
                &keys,
                &[task("t", Some(&format!("{delay}")))],
                delay,
                policy,
                0,
            )
            .unwrap(),
        )
    };
    use Status::*;
    assert_eq!(put(100.0, Policy::Keep), [Added]);
    let first = score(&server, "t");
    assert_eq!(put(50.0, Policy::Keep), [Ignored]);
    assert_eq!(score(&server, "t"), first);
    assert_eq!(put(200.0, Policy::Earliest), [Ignored]);
    assert_eq!(put(50.0, Policy::Earliest), [Updated]);
    assert!(score(&server, "t") < first);
    assert_eq!(put(10.0, Policy::Latest), [Ignored]);
    assert_eq!(put(300.0, Policy::Latest), [Updated]);
    assert_eq!(put(20.0, Policy::Replace), [Updated]);
    let payload: String = redis::cmd("HGET")
        .arg("{Queue:p}:payloads")
        .arg("t")
        .query(&mut server.client())
        .unwrap();
    assert_eq!(payload, "20", "the winning task's payload");
    // A batch reports per task, duplicates within it included.
    let batch = [task("t", None), task("u", None), task("u", None)];
    assert_eq!(
        statuses(queue::put(&config, &keys, &batch, 0.0, Policy::Keep, 0).unwrap()),
        [Ignored, Added, Ignored]
    );
}

#[test]
fn payloads_travel_with_their_tasks_and_an_ack_leaves_nothing_behind() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"w");
    let tasks = [
        task("a", Some("alpha\0bin")),
        task("b", None),
        task("c", Some("")),
    ];
    queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap();
    let got = reserve(&config, &keys, how(10, 30_000, 0));
    type Seen<'a> = (&'a [u8], Option<&'a [u8]>, i64);
    let seen: Vec<Seen> = got
        .iter()
        .map(|t| (t.id.as_slice(), t.payload.as_deref(), t.attempts))
        .collect();
    assert_eq!(
        seen,
        [
            (b"a".as_slice(), Some(b"alpha\0bin".as_slice()), 1),
            (b"b", None, 1),
            (b"c", Some(b"".as_slice()), 1)
        ]
    );
    let tokens: HashSet<&str> = got.iter().map(|t| t.token.as_str()).collect();
    assert_eq!(tokens.len(), 3, "one lease token per task");
    for t in &got {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
        assert!(
            !lease::ack(&config, &keys, &t.id, &t.token).unwrap(),
            "acked once"
        );
    }
    assert_eq!(keys_left(&server), Vec::<String>::new());
}

#[test]
fn an_expired_lease_is_handed_to_the_next_worker_and_the_stale_ack_refused() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"x");
    queue::put(
        &config,
        &keys,
        &[task("job", Some("p"))],
        0.0,
        Policy::Keep,
        0,
    )
    .unwrap();
    let first = reserve(&config, &keys, how(1, 100, 0)).remove(0);
    assert!(reserve(&config, &keys, how(1, 100, 0)).is_empty(), "leased");
    std::thread::sleep(Duration::from_millis(150));
    let second = reserve(&config, &keys, how(1, 30_000, 0)).remove(0);
    assert_eq!(
        (second.attempts, second.payload.as_deref()),
        (2, Some(b"p".as_slice()))
    );
    assert!(
        !lease::ack(&config, &keys, &first.id, &first.token).unwrap(),
        "stale ack"
    );
    assert!(
        !lease::extend(
            &config,
            &keys,
            &first.id,
            &first.token,
            Duration::from_secs(9)
        )
        .unwrap()
    );
    assert_eq!(
        lease::nack(
            &config,
            &keys,
            &first.id,
            &first.token,
            0.0,
            Terms::own(Duration::ZERO, 3),
            b""
        )
        .unwrap(),
        Nack::NotLeased
    );
    assert!(
        lease::extend(
            &config,
            &keys,
            &second.id,
            &second.token,
            Duration::from_secs(60)
        )
        .unwrap()
    );
    assert!(lease::ack(&config, &keys, &second.id, &second.token).unwrap());
    assert_eq!(keys_left(&server), Vec::<String>::new());
}

/// A reserve that acks the finished tasks first counts them, and a task
/// whose lease ran out but which its worker finished is done: not handed
/// out again as an expired lease in the same script.
#[test]
fn a_reserve_acks_the_finished_tasks_first() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"x");
    let tasks = [task("a", Some("p")), task("b", None)];
    queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap();
    let a = reserve(&config, &keys, how(1, 100, 0)).remove(0);
    std::thread::sleep(Duration::from_millis(150));
    let (r, terms) = how(10, 30_000, 0);
    let done: &[(&[u8], &str)] = &[(&a.id, &a.token)];
    let (acked, got) = lease::ack_and_reserve(&config, &[(&keys, terms)], &r, done).unwrap();
    let ids: Vec<&[u8]> = got
        .iter()
        .flat_map(|(_, t)| t.iter().map(|t| t.id.as_slice()))
        .collect();
    assert_eq!(
        (acked, ids),
        (1, vec![b"b".as_slice()]),
        "a done, b reserved"
    );
    let (acked, got) = lease::ack_and_reserve(&config, &[(&keys, terms)], &r, done).unwrap();
    assert_eq!((acked, got.is_none()), (0, true), "acked once");
}

#[test]
fn a_poison_task_dies_after_its_attempts_and_can_be_retried_or_purged() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"poison");
    queue::put(
        &config,
        &keys,
        &[task("bad", Some("x")), task("worse", None)],
        0.0,
        Policy::Keep,
        0,
    )
    .unwrap();
    // "bad" fails by nack, "worse" by lease expiry (its worker died).
    for attempt in 1..=3 {
        let got = reserve(&config, &keys, how(2, 50, 0));
        assert_eq!(got.len(), 2, "attempt {attempt}");
        let bad = got.iter().find(|t| t.id == b"bad").unwrap();
        assert_eq!(bad.attempts, attempt);
        let expected = if attempt < 3 {
            Nack::Requeued
        } else {
            Nack::Dead
        };
        assert_eq!(
            lease::nack(
                &config,
                &keys,
                &bad.id,
                &bad.token,
                0.0,
                Terms::own(Duration::ZERO, 3),
                b""
            )
            .unwrap(),
            expected
        );
        std::thread::sleep(Duration::from_millis(80));
    }
    assert!(
        reserve(&config, &keys, how(2, 50, 0)).is_empty(),
        "both dead"
    );
    let dead = lease::dead(&config, &keys, 10).unwrap();
    let mut seen: Vec<(&[u8], i64)> = dead.iter().map(|d| (d.id.as_slice(), d.attempts)).collect();
    seen.sort();
    assert_eq!(seen, [(b"bad".as_slice(), 3), (b"worse", 3)]);
    assert!(dead.iter().all(|d| d.died_at > 1.7e9));
    let m = lease::metrics(&config, &keys).unwrap();
    assert_eq!((m.ready, m.leased, m.dead), (0, 0, 2));

    assert_eq!(
        lease::retry_dead(&config, &keys, &[b"bad".to_vec(), b"nope".to_vec()], 0)
            .unwrap()
            .retried,
        1
    );
    let again = reserve(&config, &keys, how(5, 30_000, 0));
    assert_eq!(again.len(), 1);
    assert_eq!(
        (again[0].attempts, again[0].payload.as_deref()),
        (1, Some(b"x".as_slice()))
    );
    assert_eq!(lease::purge_dead(&config, &keys, &[]).unwrap(), 1);
    assert!(lease::ack(&config, &keys, &again[0].id, &again[0].token).unwrap());
    assert_eq!(keys_left(&server), Vec::<String>::new());
}

#[test]
fn delayed_tasks_wait_for_their_due_time_and_a_blocking_reserve_wakes_then() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"later");
    queue::put(&config, &keys, &[task("soon", None)], 0.4, Policy::Keep, 0).unwrap();
    assert!(
        reserve(&config, &keys, how(1, 1000, 0)).is_empty(),
        "not due yet"
    );
    let m = lease::metrics(&config, &keys).unwrap();
    assert_eq!((m.ready, m.delayed, m.oldest_due_ms), (0, 1, None));
    let started = Instant::now();
    // The recheck is 10 s: only the due time known from the try can wake it.
    let got = reserve(&config, &keys, how(1, 1000, 5000));
    assert_eq!(got.len(), 1);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(300) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
}

/// Due tasks a reserve leaves (it took fewer than are due) wake the next
/// consumer in line, one per task: here the one waiting.
#[test]
fn due_tasks_a_reserve_leaves_wake_the_next_consumer_in_line() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"left");
    let tasks = [task("a", None), task("b", None), task("c", None)];
    statuses(queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap());
    let wake = server.consumer_in_line(&keys.line, &keys.waiters, "other");

    assert_eq!(reserve(&config, &keys, how(1, 30_000, 0)).len(), 1);
    assert_eq!(
        server.list(&wake),
        [b"1".to_vec()],
        "the consumer in line is woken"
    );
    assert!(
        server.list(&keys.line).is_empty(),
        "and taken out of the line"
    );
}

#[test]
fn a_blocking_reserve_on_several_queues_wakes_on_an_enqueue() {
    let server = RedisServer::start();
    let config = server.config();
    let (a, b) = (Keys::new(b"", b"a"), Keys::new(b"", b"b"));
    let producer_config = config.clone();
    let producer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let keys = Keys::new(b"", b"b");
        queue::put(
            &producer_config,
            &keys,
            &[task("hello", None)],
            0.0,
            Policy::Keep,
            0,
        )
        .unwrap();
    });
    let started = Instant::now();
    let (wait, terms) = how(1, 1000, 20_000);
    let (index, tasks) = lease::reserve(&config, &[(&a, terms), (&b, terms)], &wait)
        .unwrap()
        .expect("woken by the enqueue");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "not the 10 s recheck"
    );
    assert_eq!((index, tasks[0].id.as_slice()), (1, b"hello".as_slice()));
    producer.join().unwrap();
    assert!(
        lease::reserve(&config, &[(&a, terms), (&b, terms)], &how(1, 1000, 100).0)
            .unwrap()
            .is_none()
    );
}

#[test]
fn a_maximum_length_refuses_a_batch_whole() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"max");
    let two = [task("1", None), task("2", None)];
    assert!(matches!(
        queue::put(&config, &keys, &two, 0.0, Policy::Keep, 3).unwrap(),
        Put::Done(_)
    ));
    let got = reserve(&config, &keys, how(1, 30_000, 0));
    let more = [task("3", None), task("4", None)];
    assert_eq!(
        queue::put(&config, &keys, &more, 0.0, Policy::Keep, 3).unwrap(),
        Put::Full {
            length: 2,
            enqueued: 0
        },
        "leased tasks count"
    );
    assert_eq!(
        lease::metrics(&config, &keys).unwrap().ready,
        1,
        "nothing added"
    );
    let queued = if got[0].id == b"1" {
        &two[1..]
    } else {
        &two[..1]
    };
    assert!(
        matches!(
            queue::put(&config, &keys, queued, 0.0, Policy::Replace, 3).unwrap(),
            Put::Done(_)
        ),
        "updates are not growth"
    );
    assert!(matches!(
        queue::put(&config, &keys, &more[..1], 0.0, Policy::Keep, 3).unwrap(),
        Put::Done(_)
    ));
}

/// A batch decides each id in order and writes once per key: an id twice
/// in it ends as its later winning task left it (payload included), a
/// payload a seed pop left behind is not inherited, a leased id waits as a
/// rerun. The same on a server without `ZMSCORE` (Redis before 6.2), where
/// the script reads the ids' scores one by one.
#[test]
fn a_batch_ends_as_its_tasks_in_order_would_leave_it() {
    let with = RedisServer::start();
    // (Before 6.2 neither server has it, and the rename would not start.)
    let zmscore = common::features().zmscore;
    let without = RedisServer::start_with(|_, _| {
        if zmscore {
            vec!["--rename-command".into(), "ZMSCORE".into(), "".into()]
        } else {
            Vec::new()
        }
    });
    let outcome = |server: &RedisServer| {
        let config = server.config();
        let keys = Keys::new(b"", b"b");
        let put = |tasks: &[NewTask], policy: Policy| {
            statuses(queue::put(&config, &keys, tasks, 0.0, policy, 100).unwrap())
        };
        put(&[task("stale", Some("old"))], Policy::Keep);
        assert_eq!(queue::pop(&config, &keys, 1).unwrap().len(), 1);
        put(&[task("run", Some("r"))], Policy::Keep);
        assert_eq!(reserve(&config, &keys, how(1, 30_000, 0)).len(), 1);
        use Status::*;
        let batch = [
            task("a", Some("1")),
            task("a", None),
            task("b", None),
            task("b", Some("2")),
            task("stale", None),
            task("run", Some("again")),
            task("c", Some("3")),
        ];
        assert_eq!(
            put(&batch, Policy::Replace),
            [Added, Updated, Added, Updated, Added, Added, Added]
        );
        let batch = [task("c", Some("4")), task("c", Some("5")), task("d", None)];
        assert_eq!(put(&batch, Policy::Keep), [Ignored, Ignored, Added]);
        let mut c = server.client();
        let payloads: std::collections::BTreeMap<String, String> = redis::cmd("HGETALL")
            .arg("{Queue:b}:payloads")
            .query(&mut c)
            .unwrap();
        let reruns: Vec<String> = redis::cmd("HKEYS")
            .arg("{Queue:b}:reruns")
            .query(&mut c)
            .unwrap();
        let mut queued: Vec<String> = redis::cmd("ZRANGE")
            .arg("Queue:b")
            .arg(0)
            .arg(-1)
            .query(&mut c)
            .unwrap();
        queued.sort();
        (payloads, reruns, queued)
    };
    let got = outcome(&with);
    let payloads = [("b", "2"), ("c", "3"), ("run", "r")];
    assert_eq!(
        got.0,
        payloads
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    );
    assert_eq!(got.1, ["run"]);
    assert_eq!(got.2, ["a", "b", "c", "d", "stale"]);
    assert_eq!(outcome(&without), got, "without ZMSCORE");
    assert_eq!(with.calls(&["zmscore"]) > 0, zmscore);
    assert_eq!(without.calls(&["zmscore"]), 0);
}

/// An ack of many finishes each task still the caller's once: a rerun
/// waiting behind one is queued, a task acked twice in the call counts once,
/// a wrong token finishes nothing, and nothing is left of a finished task.
#[test]
fn an_ack_of_many_finishes_each_of_the_callers_tasks_once() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"acks");
    let tasks: Vec<NewTask> = (0..5).map(|i| task(&format!("t{i}"), Some("p"))).collect();
    queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap();
    let mut got = reserve(&config, &keys, how(5, 30_000, 0));
    got.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(got.len(), 5);
    let again = [task("t0", Some("again"))];
    queue::put(&config, &keys, &again, 0.0, Policy::Keep, 0).unwrap();
    let mut done: Vec<(&[u8], &str)> = got[..4]
        .iter()
        .map(|t| (t.id.as_slice(), t.token.as_str()))
        .collect();
    done.push((&got[1].id, &got[1].token));
    done.push((&got[4].id, "not its token"));
    assert_eq!(lease::ack_many(&config, &keys, &done).unwrap(), 4);
    let mut c = server.client();
    // The members of a sorted set (ZRANGE) or the fields of a hash, sorted.
    let mut fields = |command: &str, key: &[u8]| {
        let mut cmd = redis::cmd(command);
        cmd.arg(key);
        if command == "ZRANGE" {
            cmd.arg(0).arg(-1);
        }
        let mut got: Vec<String> = cmd.query(&mut c).unwrap();
        got.sort();
        got
    };
    assert_eq!(fields("ZRANGE", &keys.queue), ["t0"], "the rerun");
    assert_eq!(fields("ZRANGE", &keys.leased), ["t4"]);
    assert_eq!(fields("HKEYS", &keys.leases), ["t4"]);
    assert_eq!(fields("HKEYS", &keys.payloads), ["t0", "t4"]);
    assert_eq!(fields("HKEYS", &keys.attempts), ["t4"]);
    assert_eq!(fields("HKEYS", &keys.reruns), Vec::<String>::new());
    let rerun = reserve(&config, &keys, how(5, 30_000, 0));
    assert_eq!(
        (rerun.len(), rerun[0].payload.as_deref()),
        (1, Some(b"again".as_slice()))
    );
}

#[test]
fn keys_share_the_queues_hash_slot() {
    let plain = Keys::new(b"", b"q");
    assert_eq!(plain.leased, b"{Queue:q}:leased");
    let tagged = Keys::new(b"", b"{q}");
    assert_eq!(tagged.dead, b"{q}#Queue:3:{q}:dead");
}

#[test]
fn a_seed_enqueue_never_hands_an_old_payload_to_a_new_task() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"mixed");
    queue::put(
        &config,
        &keys,
        &[task("x", Some("old"))],
        0.0,
        Policy::Keep,
        0,
    )
    .unwrap();
    // A seed worker pops it: no lease, and the payload stays behind.
    assert_eq!(queue::pop(&config, &keys, 1).unwrap().len(), 1);
    assert_eq!(
        queue::enqueue(&config, &keys, &[b"x".to_vec(), b"y".to_vec()], 0.0).unwrap(),
        2
    );
    let got = reserve(&config, &keys, how(10, 30_000, 0));
    assert_eq!(got.len(), 2);
    assert!(got.iter().all(|t| t.payload.is_none()), "{got:?}");
    // Without payloads or attempts around, the seed's batch takes the fast path.
    for t in &got {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
    }
    let ids: Vec<Vec<u8>> = (0..2500).map(|i| format!("{i}").into_bytes()).collect();
    assert_eq!(queue::enqueue(&config, &keys, &ids, 0.0).unwrap(), 2500);
    assert_eq!(queue::enqueue(&config, &keys, &ids, 0.0).unwrap(), 0);
}

#[test]
fn a_queues_workers_stay_bounded_in_time_and_number() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"crowd");
    let mut c = server.client();
    let now: f64 = {
        let (s, us): (f64, f64) = redis::cmd("TIME").query(&mut c).unwrap();
        s + us / 1e6
    };
    // 50 workers gone for two days, and more than the most remembered that
    // were seen a minute ago, each with a count.
    let mut zadd = redis::cmd("ZADD");
    zadd.arg(&keys.workers);
    for i in 0..50 {
        zadd.arg(now - 2.0 * 86400.0).arg(format!("old{i}"));
    }
    for i in 0..lease::MOST + 20 {
        zadd.arg(now - 60.0 + i as f64 / 1e4)
            .arg(format!("w{i:05}"));
    }
    zadd.query::<()>(&mut c).unwrap();
    redis::cmd("HSET")
        .arg(&keys.worked)
        .arg("old0")
        .arg(3)
        .arg("w00000")
        .arg(5)
        .query::<()>(&mut c)
        .unwrap();

    // This process reserves (nothing is queued): it notes itself.
    assert!(reserve(&config, &keys, how(1, 30_000, 0)).is_empty());
    let left: u64 = redis::cmd("ZCARD")
        .arg(&keys.workers)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        left,
        lease::MOST,
        "the old ones and the longest unseen went"
    );
    let old: u64 = redis::cmd("ZCOUNT")
        .arg(&keys.workers)
        .arg("-inf")
        .arg(now - 86400.0)
        .query(&mut c)
        .unwrap();
    assert_eq!(old, 0);
    let counts: Vec<String> = redis::cmd("HKEYS").arg(&keys.worked).query(&mut c).unwrap();
    assert!(counts.is_empty(), "their counts went with them: {counts:?}");
    let listed = lease::workers(&config, &keys, 3).unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(
        listed[0].id,
        redislock::identity::my_id(),
        "this process, seen last"
    );
    assert_eq!(
        listed[0].holder.as_ref().map(|h| h.pid),
        Some(std::process::id())
    );
}

#[test]
fn each_ended_attempt_is_recorded_newest_first_within_the_queues_bounds() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"r");
    let ids = ["a", "b", "c\0 d", "e"];
    let tasks: Vec<NewTask> = ids.iter().map(|id| task(id, Some("p"))).collect();
    queue::put(&config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let got = reserve(&config, &keys, how(4, 200, 0));
    assert_eq!(got.len(), 4);
    assert!(lease::ack(&config, &keys, &got[0].id, &got[0].token).unwrap());
    let nacked = lease::nack(
        &config,
        &keys,
        &got[1].id,
        &got[1].token,
        0.0,
        Terms::own(Duration::ZERO, 3),
        b"why",
    );
    assert_eq!(nacked.unwrap(), Nack::Requeued);
    assert!(lease::bury(&config, &keys, &got[2].id, &got[2].token, b"").unwrap());
    // Not an ended attempt: a release, and a stale ack.
    std::thread::sleep(Duration::from_millis(250));
    assert!(!lease::ack(&config, &keys, &got[2].id, &got[2].token).unwrap());
    // This reserve finds e's lease run out (and takes b and e again).
    let again = reserve(&config, &keys, how(4, 30_000, 0));
    assert_eq!(again.len(), 2);
    assert!(lease::release(&config, &keys, &again[0].id, &again[0].token, 0.0).unwrap());

    let (now, recent) = lease::recent(&config, &keys, 100, None, None).unwrap();
    let me = redislock::identity::my_id();
    type Seen<'a> = (&'a [u8], &'a str, Option<i64>, Option<&'a [u8]>);
    let seen: Vec<Seen> = recent
        .iter()
        .map(|a| {
            (
                a.id.as_slice(),
                a.outcome.as_str(),
                a.attempts,
                a.reason.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (&b"e"[..], "expired", Some(1), Some(&b"lease ran out"[..])),
            (b"c\0 d", "dead", Some(1), None),
            (b"b", "nacked", Some(1), Some(b"why")),
            (b"a", "acked", Some(1), None),
        ]
    );
    for a in &recent {
        assert_eq!(a.worker.as_deref(), Some(me.as_str()));
        assert!(a.at <= now && a.at > now - 5.0, "{a:?} at {now}");
        let wait = a.wait.unwrap();
        assert!(
            (0.025..5.0).contains(&wait),
            "due 30 ms before its reserve: {a:?}"
        );
        assert!(a.runtime.unwrap() < 5.0, "{a:?}");
    }
    assert!(
        recent[0].runtime.unwrap() >= 0.2,
        "ran until its lease ran out"
    );
    let only_b = lease::recent(&config, &keys, 100, Some(b"b"), None)
        .unwrap()
        .1;
    assert_eq!(only_b, [recent[2].clone()]);
    assert_eq!(
        lease::recent(&config, &keys, 1, None, None)
            .unwrap()
            .1
            .len(),
        1
    );

    // Kept: the last `keep`, trimmed now.
    lease::keep_recent(&config, &keys, 2, Duration::from_secs(60), None).unwrap();
    let llen = |server: &RedisServer| -> i64 {
        redis::cmd("LLEN")
            .arg(&keys.recent)
            .query(&mut server.client())
            .unwrap()
    };
    assert_eq!(llen(&server), 2);
    for t in &again[1..] {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
    }
    assert_eq!(llen(&server), 2);
    assert_eq!(
        lease::recent(&config, &keys, 100, None, None).unwrap().1[0].outcome,
        "acked"
    );

    // For as long as set: older ones are not shown, and an idle list goes.
    lease::keep_recent(&config, &keys, 10, Duration::from_millis(100), None).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(
        lease::recent(&config, &keys, 100, None, None).unwrap().1,
        []
    );
    assert_eq!(llen(&server), 0);

    // None kept: nothing written.
    lease::keep_recent(&config, &keys, 0, Duration::from_secs(60), None).unwrap();
    queue::put(&config, &keys, &[task("f", None)], 0.0, Policy::Keep, 0).unwrap();
    let f = reserve(&config, &keys, how(1, 30_000, 0));
    assert!(lease::ack(&config, &keys, &f[0].id, &f[0].token).unwrap());
    assert_eq!(llen(&server), 0);

    // Terms written by hand are read as whole numbers in range.
    for (keep, kept) in [("abc", 100), ("2.5", 2), ("-4", 0), ("1e99", 100_000)] {
        redis::cmd("HSET")
            .arg(&keys.stats)
            .arg("recentKeep")
            .arg(keep)
            .arg("recentMs")
            .arg("nan")
            .query::<()>(&mut server.client())
            .unwrap();
        redis::cmd("DEL")
            .arg(&keys.recent)
            .query::<()>(&mut server.client())
            .unwrap();
        let ids: Vec<NewTask> = (0..3).map(|i| task(&format!("h{i}"), None)).collect();
        queue::put(&config, &keys, &ids, 0.0, Policy::Keep, 0).unwrap();
        let got = reserve(&config, &keys, how(3, 30_000, 0));
        let done: Vec<(&[u8], &str)> = got.iter().map(|t| (&t.id[..], &t.token[..])).collect();
        assert_eq!(lease::ack_many(&config, &keys, &done).unwrap(), 3);
        assert_eq!(llen(&server), kept.min(3), "recentKeep {keep}");
    }
}

/// The recent attempts within a bound of bytes: after every ack, nack and
/// expired lease, the records' bytes are within it, the newest that fit
/// are kept, and the count kept beside them is their exact sum, also when
/// the list went (deleted by hand) and when the bound is set over a longer
/// list.
#[test]
fn recent_attempts_fit_in_their_bound_of_bytes() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"bounded");
    let records = || -> Vec<Vec<u8>> {
        redis::cmd("LRANGE")
            .arg(&keys.recent)
            .arg(0)
            .arg(-1)
            .query(&mut server.client())
            .unwrap()
    };
    let counted = || -> Option<u64> {
        redis::cmd("HGET")
            .arg(&keys.stats)
            .arg("recentSize")
            .query(&mut server.client())
            .unwrap()
    };
    // Unbounded first: 30 records, some long (their nack's reason).
    let ids: Vec<NewTask> = (0..30).map(|i| task(&format!("t{i}"), None)).collect();
    queue::put(&config, &keys, &ids, 0.0, Policy::Keep, 0).unwrap();
    let mut n = 0;
    let settle = |t: &Leased, n: &mut usize| {
        *n += 1;
        if n.is_multiple_of(3) {
            let why = "x".repeat(37 * (*n % 7));
            lease::nack(
                &config,
                &keys,
                &t.id,
                &t.token,
                0.0,
                Terms::own(Duration::ZERO, 100),
                why.as_bytes(),
            )
            .map(drop)
            .unwrap();
        } else {
            assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
        }
    };
    for t in reserve(&config, &keys, how(30, 30_000, 0)) {
        settle(&t, &mut n);
    }
    let before = records();
    assert_eq!(before.len(), 30);
    assert_eq!(counted(), None, "no count without a bound");
    let total: usize = before.iter().map(Vec::len).sum();

    // A bound over a longer list keeps the newest that fit.
    let bound = (total / 3) as u64;
    lease::keep_recent(&config, &keys, 1000, Duration::from_secs(60), Some(bound)).unwrap();
    let after = records();
    let size: usize = after.iter().map(Vec::len).sum();
    assert!(size as u64 <= bound && !after.is_empty());
    assert_eq!(after[..], before[..after.len()], "the newest kept");
    assert!(
        size + before[after.len()].len() > bound as usize,
        "as many as fit"
    );
    assert_eq!(counted(), Some(size as u64));
    let footprint = lease::footprint(&config, &keys).unwrap();
    assert_eq!(
        (footprint.kept, footprint.max_bytes),
        (after.len() as u64, Some(bound))
    );

    // Acks, nacks and expired leases, one and several at once.
    let more: Vec<NewTask> = (0..40).map(|i| task(&format!("m{i}"), None)).collect();
    queue::put(&config, &keys, &more, 0.0, Policy::Keep, 0).unwrap();
    let check = |step: &str| {
        let kept = records();
        let size: u64 = kept.iter().map(|r| r.len() as u64).sum();
        assert!(size <= bound, "{step}: {size} bytes kept, over {bound}");
        assert!(!kept.is_empty(), "{step}: the newest fits");
        assert_eq!(counted(), Some(size), "{step}: the count is the sum");
    };
    for round in 0..12 {
        let got = reserve(&config, &keys, how(1 + round % 4, 30_000, 0));
        assert!(!got.is_empty());
        for t in &got {
            settle(t, &mut n);
        }
        check(&format!("round {round}"));
        if round == 5 {
            // The list gone: its count starts again.
            redis::cmd("DEL")
                .arg(&keys.recent)
                .query::<()>(&mut server.client())
                .unwrap();
        }
    }
    let got = reserve(&config, &keys, how(3, 50, 0));
    assert_eq!(got.len(), 3);
    std::thread::sleep(Duration::from_millis(80));
    let again = reserve(&config, &keys, how(1, 30_000, 0));
    check("expired leases");
    assert!(
        lease::recent(&config, &keys, 3, None, None)
            .unwrap()
            .1
            .iter()
            .all(|a| a.outcome == "expired"),
        "the expired leases are the newest"
    );
    assert!(lease::ack(&config, &keys, &again[0].id, &again[0].token).unwrap());
    check("after them");

    // A record past the bound alone is not kept; no bound: no count.
    lease::keep_recent(&config, &keys, 1000, Duration::from_secs(60), Some(10)).unwrap();
    assert_eq!((records().len(), counted()), (0, Some(0)));
    let got = reserve(&config, &keys, how(1, 30_000, 0));
    assert!(lease::ack(&config, &keys, &got[0].id, &got[0].token).unwrap());
    assert_eq!((records().len(), counted()), (0, Some(0)));
    lease::keep_recent(&config, &keys, 1000, Duration::from_secs(60), None).unwrap();
    let got = reserve(&config, &keys, how(1, 30_000, 0));
    assert!(lease::ack(&config, &keys, &got[0].id, &got[0].token).unwrap());
    assert_eq!((records().len(), counted()), (1, None));
    assert_eq!(lease::footprint(&config, &keys).unwrap().max_bytes, None);
}

#[test]
fn tags_go_with_their_task_wherever_it_goes_and_find_it() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"tagged");
    let tags = |list: &[&str]| queue::Tags::new(list).unwrap();
    let put = |tasks: &[NewTask], policy: Policy, t: &queue::Tags| {
        statuses(queue::put_tagged(&config, &keys, tasks, 0.0, policy, 0, t).unwrap())
    };
    let tags_of = |id: &str| -> Option<(String, Vec<String>)> {
        lease::find(&config, &keys, id.as_bytes())
            .unwrap()
            .map(|t| {
                let tags = t
                    .tags
                    .iter()
                    .map(|t| String::from_utf8_lossy(t).into_owned());
                (t.state, tags.collect())
            })
    };
    let found = |tag: &str| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = lease::tagged(&config, &keys, tag.as_bytes(), 100)
            .unwrap()
            .into_iter()
            .map(|t| (String::from_utf8_lossy(&t.id).into_owned(), t.state))
            .collect();
        found.sort();
        found
    };
    let s = |a: &str, b: &str| (a.to_owned(), b.to_owned());
    let v = |list: &[&str]| list.iter().map(|t| t.to_string()).collect::<Vec<_>>();

    // Tags given twice count once; a task added or replaced takes the
    // call's tags, or loses its own, as it takes its payload.
    let shop = tags(&["shop-1", "vip", "shop-1"]);
    assert_eq!(shop.as_bytes(), b"shop-1 vip");
    put(
        &[task("a", Some("p")), task("b", None)],
        Policy::Keep,
        &shop,
    );
    put(&[task("c", None)], Policy::Keep, &queue::Tags::default());
    assert_eq!(
        tags_of("a"),
        Some((s("queued", "").0, v(&["shop-1", "vip"])))
    );
    assert_eq!(tags_of("c").unwrap().1, Vec::<String>::new());
    assert_eq!(
        put(&[task("b", None)], Policy::Replace, &queue::Tags::default()),
        [Status::Updated]
    );
    assert_eq!(
        tags_of("b").unwrap().1,
        Vec::<String>::new(),
        "replaced without tags"
    );
    assert_eq!(
        put(&[task("a", None)], Policy::Keep, &tags(&["other"])),
        [Status::Ignored]
    );
    assert_eq!(
        tags_of("a").unwrap().1,
        v(&["shop-1", "vip"]),
        "kept: its own tags"
    );
    assert_eq!(found("vip"), [s("a", "queued")]);
    assert_eq!(found("shop"), [], "a whole tag, not a part of one");

    // A rerun of a running task keeps its own tags until it is queued.
    std::thread::sleep(Duration::from_millis(30));
    let got = reserve(&config, &keys, how(3, 30_000, 0));
    assert_eq!(got.len(), 3);
    let [a, b, c] = [0, 1, 2].map(|i| got.iter().find(|t| t.id == [b'a' + i]).unwrap().clone());
    assert_eq!(
        put(&[task("a", Some("again"))], Policy::Keep, &tags(&["rerun"])),
        [Status::Added]
    );
    assert_eq!(
        tags_of("a"),
        Some((s("leased", "").0, v(&["shop-1", "vip"])))
    );
    assert!(lease::ack(&config, &keys, &a.id, &a.token).unwrap());
    assert_eq!(tags_of("a"), Some((s("queued", "").0, v(&["rerun"]))));
    assert!(lease::ack(&config, &keys, &b.id, &b.token).unwrap());

    // A dead letter keeps its tags, apart from a new task of its id.
    assert!(lease::bury(&config, &keys, &c.id, &c.token, b"no").unwrap());
    put(&[task("d", Some("pd"))], Policy::Keep, &tags(&["x"]));
    std::thread::sleep(Duration::from_millis(30));
    let mut got = reserve(&config, &keys, how(2, 30_000, 0));
    got.sort_by(|l, r| l.id.cmp(&r.id));
    assert_eq!(
        got.iter().map(|t| t.id.clone()).collect::<Vec<_>>(),
        [b"a".to_vec(), b"d".to_vec()]
    );
    assert!(lease::bury(&config, &keys, &got[1].id, &got[1].token, b"bad").unwrap());
    assert!(lease::ack(&config, &keys, &got[0].id, &got[0].token).unwrap());
    put(&[task("d", Some("new"))], Policy::Keep, &tags(&["y"]));
    assert_eq!(tags_of("d"), Some((s("queued", "").0, v(&["y"]))));
    let dead = lease::dead(&config, &keys, 10).unwrap();
    let dead_d = dead.iter().find(|t| t.id == b"d").unwrap();
    assert_eq!(dead_d.tags, [b"x".to_vec()]);
    assert_eq!(found("x"), [s("d", "dead")]);
    assert_eq!(found("y"), [s("d", "queued")]);

    // Removed, its tags go; retried, the dead letter's come back with it.
    assert_eq!(lease::remove(&config, &keys, &[b"d".to_vec()]).unwrap(), 1);
    assert_eq!(found("y"), []);
    assert_eq!(
        lease::retry_dead(&config, &keys, &[b"d".to_vec()], 0)
            .unwrap()
            .retried,
        1
    );
    assert_eq!(tags_of("d"), Some((s("queued", "").0, v(&["x"]))));

    // The recent attempts keep the tags the task had.
    let recent = |tag: &str| -> Vec<(String, String)> {
        lease::recent(&config, &keys, 100, None, Some(tag.as_bytes()))
            .unwrap()
            .1
            .into_iter()
            .map(|a| (String::from_utf8_lossy(&a.id).into_owned(), a.outcome))
            .collect()
    };
    assert_eq!(recent("vip"), [s("a", "acked")]);
    assert_eq!(recent("rerun"), [s("a", "acked")]);
    assert_eq!(recent("x"), [s("d", "dead")]);
    assert_eq!(recent("nothing"), []);
    let all = lease::recent(&config, &keys, 100, None, None).unwrap().1;
    let bury_c = all.iter().find(|a| a.id == b"c").unwrap();
    assert_eq!(
        (bury_c.tags.len(), bury_c.reason.as_deref()),
        (0, Some(&b"no"[..]))
    );
    let bury_d = all.iter().find(|a| a.id == b"d").unwrap();
    assert_eq!(
        (bury_d.tags.clone(), bury_d.reason.as_deref()),
        (vec![b"x".to_vec()], Some(&b"bad"[..]))
    );

    // A move takes them along.
    let to = Keys::new(b"", b"tagged-to");
    lease::move_to((&config, &keys), (&config, &to), 0).unwrap();
    let moved = lease::find(&config, &to, b"d").unwrap().unwrap();
    assert_eq!(
        (moved.state.as_str(), moved.tags),
        ("queued", vec![b"x".to_vec()])
    );
    assert_eq!(lease::tagged(&config, &to, b"x", 10).unwrap().len(), 1);

    // Done, nothing of them is left.
    lease::purge_dead(&config, &keys, &[]).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    for t in reserve(&config, &to, how(10, 30_000, 0)) {
        assert!(lease::ack(&config, &to, &t.id, &t.token).unwrap());
    }
    assert_eq!(keys_left(&server), Vec::<String>::new());

    // What a tag may be.
    for bad in [&["a b"][..], &[""], &["tab\t"], &["\x7f"]] {
        assert!(queue::Tags::new(bad).is_err(), "{bad:?}");
    }
    assert!(queue::Tags::new(&["x".repeat(101)]).is_err());
    assert!(queue::Tags::new(&["x".repeat(100)]).is_ok());
    let eleven: Vec<String> = (0..11).map(|i| format!("t{i}")).collect();
    assert!(queue::Tags::new(&eleven).is_err());
    assert!(queue::Tags::new(&eleven[..10]).is_ok());
}

#[test]
fn groups_take_turns_so_a_big_group_cannot_hold_up_a_small_one() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"fair");
    let group = |g: &str| queue::Tags::default().with_group(g.as_bytes()).unwrap();
    let ids = |prefix: &str, n: usize| -> Vec<NewTask> {
        (0..n)
            .map(|i| task(&format!("{prefix}{i}"), None))
            .collect()
    };
    // Queued before the queue had groups: no group, no hint.
    queue::put(&config, &keys, &ids("old", 3), 0.0, Policy::Keep, 0).unwrap();
    let put = |tasks: &[NewTask], g: &str, delay: f64| {
        statuses(
            queue::put_tagged(&config, &keys, tasks, delay, Policy::Keep, 0, &group(g)).unwrap(),
        )
    };
    put(&ids("a", 10_000), "big", 0.0);
    put(&ids("b", 10), "small", 0.0);
    let found = lease::find(&config, &keys, b"b3").unwrap().unwrap();
    assert_eq!(found.group.as_deref(), Some(&b"small"[..]));
    std::thread::sleep(Duration::from_millis(30));

    // One at a time, as workers reserve: the small group's ten, and the
    // three queued before the queue had groups (the group ''), start
    // within the first 23: a turn each, as long as each has some.
    let mut order = Vec::new();
    for _ in 0..23 {
        let got = reserve(&config, &keys, how(1, 30_000, 0));
        assert_eq!(got.len(), 1);
        order.push(String::from_utf8(got[0].id.clone()).unwrap());
    }
    let count = |p: &str| order.iter().filter(|id| id.starts_with(p)).count();
    assert_eq!((count("b"), count("old")), (10, 3), "{order:?}");
    assert_eq!(
        &order[..6],
        ["old0", "a0", "b0", "old1", "a1", "b1"],
        "in turn"
    );
    // Ten at once: in turn too (the small group has none left: the big one
    // and the tasks without a group share what is due).
    put(&ids("c", 5), "small", 0.0);
    std::thread::sleep(Duration::from_millis(30));
    let got = reserve(&config, &keys, how(10, 30_000, 0));
    let small = got.iter().filter(|t| t.id.starts_with(b"c")).count();
    assert_eq!(
        small,
        5,
        "{:?}",
        got.iter()
            .map(|t| String::from_utf8_lossy(&t.id).into_owned())
            .collect::<Vec<_>>()
    );

    // Hints that went stale never lose or double a task: removed, popped by
    // the drop-in, due later since, or moved.
    put(&ids("d", 20), "small", 0.0);
    assert_eq!(
        lease::remove(&config, &keys, &[b"d0".to_vec(), b"d1".to_vec()]).unwrap(),
        2
    );
    let replaced = queue::put_tagged(
        &config,
        &keys,
        &ids("d", 3)[2..],
        3600.0,
        Policy::Replace,
        0,
        &group("small"),
    );
    assert_eq!(statuses(replaced.unwrap()), [Status::Updated]);
    let popped = queue::pop(&config, &keys, 5).unwrap();
    assert_eq!(popped.len(), 5);
    std::thread::sleep(Duration::from_millis(30));
    let mut seen: HashSet<Vec<u8>> = popped.into_iter().map(|t| t.id).collect();
    seen.extend(order.iter().map(|id| id.as_bytes().to_vec()));
    seen.extend(got.iter().map(|t| t.id.clone()));
    loop {
        let got = reserve(&config, &keys, how(1000, 30_000, 0));
        if got.is_empty() {
            break;
        }
        for t in got {
            assert!(
                seen.insert(t.id.clone()),
                "{} twice",
                String::from_utf8_lossy(&t.id)
            );
            assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
        }
    }
    // All of them once (d0, d1 removed; d2 due in an hour).
    assert_eq!(seen.len(), 3 + 10_000 + 10 + 5 + 18 - 1);
    assert!(!seen.contains(b"d2".as_slice()));
    let d2 = lease::find(&config, &keys, b"d2").unwrap().unwrap();
    assert_eq!(
        (d2.state.as_str(), d2.group.as_deref()),
        ("queued", Some(&b"small"[..]))
    );
    assert_eq!(lease::remove(&config, &keys, &[b"d2".to_vec()]).unwrap(), 1);
    // Once every hint is used or dropped, the groups go.
    reserve(&config, &keys, how(1, 30_000, 0));
    let mut c = server.client();
    let left: Vec<String> = redis::cmd("KEYS").arg("*group*").query(&mut c).unwrap();
    assert_eq!(left, Vec::<String>::new());
}

#[test]
fn tasks_queued_before_the_first_group_have_their_turns_however_busy_the_groups() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"pre-group");
    let group = |g: &str| queue::Tags::default().with_group(g.as_bytes()).unwrap();
    let put = |id: String, g: &str| {
        let tasks = [task(&id, None)];
        queue::put_tagged(&config, &keys, &tasks, 0.0, Policy::Keep, 0, &group(g)).unwrap();
    };
    // Tasks without a group (three due in 300 ms, more than a step of
    // hints due in an hour); then a backlog of grouped tasks due now, and
    // producers that keep adding to it.
    let old: Vec<NewTask> = (0..3).map(|i| task(&format!("old{i}"), None)).collect();
    queue::put(&config, &keys, &old, 0.3, Policy::Keep, 0).unwrap();
    let later: Vec<NewTask> = (0..1500)
        .map(|i| task(&format!("later{i}"), None))
        .collect();
    queue::put(&config, &keys, &later, 3600.0, Policy::Keep, 0).unwrap();
    for i in 0..300 {
        put(format!("a{i}"), if i % 2 == 0 { "big" } else { "other" });
    }
    let mut served = Vec::new();
    let started = std::time::Instant::now();
    for i in 0..120 {
        put(format!("n{i}"), "big");
        put(format!("m{i}"), "other");
        for t in reserve(&config, &keys, how(1, 30_000, 0)) {
            served.push(String::from_utf8(t.id.clone()).unwrap());
            assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
        }
        if i < 3 {
            std::thread::sleep(Duration::from_millis(120));
        }
    }
    assert!(started.elapsed() > Duration::from_millis(300));
    let old_served: Vec<&String> = served.iter().filter(|id| id.starts_with("old")).collect();
    assert_eq!(old_served, ["old0", "old1", "old2"], "{served:?}");
    // Every one of them is hinted to the group '', in steps.
    let groups = lease::groups(&config, &keys, 100).unwrap();
    let unnamed = groups.iter().find(|g| g.name.is_empty());
    assert_eq!(unnamed.map(|g| g.queued), Some(1500), "{groups:?}");
    assert_eq!(
        lease::remove(
            &config,
            &keys,
            &later.iter().map(|t| t.id.clone()).collect::<Vec<_>>()
        )
        .unwrap(),
        1500
    );
    let mut c = server.client();
    let mark: Option<String> = redis::cmd("HGET")
        .arg(&keys.stats)
        .arg("unhinted")
        .query(&mut c)
        .unwrap();
    assert_eq!(mark, None);
}

#[test]
fn a_group_concurrency_counts_the_leased_tasks_in_steps_exactly_while_workers_run() {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};

    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"counting");
    for g in 0..5 {
        let tasks: Vec<NewTask> = (0..4000)
            .map(|i| task(&format!("g{g}-{i}"), None))
            .collect();
        let tags = queue::Tags::default()
            .with_group(format!("g{g}").as_bytes())
            .unwrap();
        queue::put_tagged(&config, &keys, &tasks, 0.0, Policy::Keep, 0, &tags).unwrap();
    }
    let mut leased = Vec::new();
    while leased.len() < 15_000 {
        leased.extend(reserve(&config, &keys, how(1000, 120_000, 0)));
    }
    let stop = AtomicBool::new(false);
    let stepped = AtomicBool::new(false);
    std::thread::scope(|s| {
        // Workers end leases and take new ones while the count goes on.
        let mut slices: Vec<Vec<Leased>> = vec![Vec::new(), Vec::new(), Vec::new()];
        for (i, t) in leased.drain(..).enumerate() {
            slices[i % 3].push(t);
        }
        for mut mine in slices {
            let (config, keys, stop) = (&config, &keys, &stop);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let Some(t) = mine.pop() else { break };
                    assert!(lease::ack(config, keys, &t.id, &t.token).unwrap());
                    mine.insert(0, reserve(config, keys, how(1, 120_000, 0)).remove(0));
                }
            });
        }
        let (stop, stepped) = (&stop, &stepped);
        let mut c = server.client();
        s.spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let v: Option<String> = redis::cmd("HGET")
                    .arg("{Queue:counting}:stats")
                    .arg("groupConcurrency")
                    .query(&mut c)
                    .unwrap();
                if v.is_some_and(|v| v.contains(' ')) {
                    stepped.store(true, Ordering::Relaxed);
                }
            }
        });
        std::thread::sleep(Duration::from_millis(100));
        lease::set_group_concurrency(&config, &keys, 1_000_000).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        stop.store(true, Ordering::Relaxed);
    });
    assert!(stepped.load(Ordering::Relaxed), "counted in one script");
    // The counts are those of the tasks leased now, and no mark is left.
    let mut c = server.client();
    let ids: Vec<Vec<u8>> = redis::cmd("ZRANGE")
        .arg(&keys.leased)
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    let tags: Vec<Option<Vec<u8>>> = redis::cmd("HMGET")
        .arg(&keys.tags)
        .arg(&ids)
        .query(&mut c)
        .unwrap();
    let mut want: HashMap<Vec<u8>, String> = HashMap::new();
    for t in &tags {
        let (_, g) = queue::Tags::parts(t.as_deref());
        let n = want.entry(g.unwrap()).or_default();
        *n = (n.parse::<u64>().unwrap_or(0) + 1).to_string();
    }
    let counts: HashMap<Vec<u8>, String> = redis::cmd("HGETALL")
        .arg(&keys.group_leased)
        .query(&mut c)
        .unwrap();
    assert_eq!(counts, want);
    let v: String = redis::cmd("HGET")
        .arg(&keys.stats)
        .arg("groupConcurrency")
        .query(&mut c)
        .unwrap();
    assert_eq!(v, "1000000");
}

#[test]
fn group_counts_are_exact_after_every_operation_and_emptied_keys_go() {
    use std::collections::BTreeMap;

    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"counted");
    let there = Keys::new(b"", b"counted-there");
    let group = |g: &str| queue::Tags::default().with_group(g.as_bytes()).unwrap();
    let put = |keys: &Keys, ids: &[&str], g: Option<&str>, policy: Policy| {
        let tasks: Vec<NewTask> = ids.iter().map(|id| task(id, None)).collect();
        let tags = g.map(group).unwrap_or_default();
        queue::put_tagged(&config, keys, &tasks, 0.0, policy, 0, &tags).unwrap();
    };
    let mut c = server.client();
    // What groups() says, and what the queue holds, by group.
    let mut check = |keys: &Keys, said: &str| {
        let shown: BTreeMap<String, u64> = lease::groups(&config, keys, 100)
            .unwrap()
            .into_iter()
            .filter(|g| g.queued > 0)
            .map(|g| (String::from_utf8(g.name).unwrap(), g.queued))
            .collect();
        let ids: Vec<Vec<u8>> = redis::cmd("ZRANGE")
            .arg(&keys.queue)
            .arg(0)
            .arg(-1)
            .query(&mut c)
            .unwrap();
        let mut truth = BTreeMap::new();
        if !ids.is_empty() {
            let tags: Vec<Option<Vec<u8>>> = redis::cmd("HMGET")
                .arg(&keys.tags)
                .arg(&ids)
                .query(&mut c)
                .unwrap();
            for t in tags {
                let g = queue::Tags::parts(t.as_deref()).1.unwrap_or_default();
                *truth.entry(String::from_utf8(g).unwrap()).or_insert(0) += 1;
            }
        }
        assert_eq!(shown, truth, "{said}");
        assert_eq!(
            lease::metrics(&config, keys).unwrap().groups,
            truth.len() as u64,
            "{said}: metrics"
        );
        if truth.is_empty() {
            let prefix = String::from_utf8_lossy(&keys.waiters).into_owned();
            let left: Vec<String> = redis::cmd("KEYS")
                .arg(format!("{prefix}group*"))
                .query(&mut c)
                .unwrap();
            assert_eq!(left, Vec::<String>::new(), "{said}: emptied keys gone");
        }
    };
    put(&keys, &["u1"], None, Policy::Keep);
    put(&keys, &["a1", "a2", "a3"], Some("a"), Policy::Keep);
    put(&keys, &["b1", "b2", "b3"], Some("b"), Policy::Keep);
    put(&keys, &["u2"], None, Policy::Keep);
    check(&keys, "enqueued");
    lease::remove(&config, &keys, &[b"a1".to_vec()]).unwrap();
    check(&keys, "remove");
    put(&keys, &["b1"], Some("a"), Policy::Replace);
    check(&keys, "enqueued again into another group");
    std::thread::sleep(Duration::from_millis(20));
    let got = reserve(&config, &keys, how(2, 30_000, 0));
    check(&keys, "reserve");
    assert!(
        lease::nack(
            &config,
            &keys,
            &got[0].id,
            &got[0].token,
            0.0,
            Terms::own(Duration::from_secs(30), 3),
            b""
        )
        .is_ok()
    );
    check(&keys, "nack");
    assert_eq!(queue::pop(&config, &keys, 1).unwrap().len(), 1);
    check(&keys, "the drop-in pop");
    let top = queue::top(&config, &keys, 1).unwrap();
    assert!(queue::dequeue(&config, &keys, &top[0].id, top[0].score).unwrap());
    check(&keys, "the drop-in dequeue");
    // Moved away: the source is empty, its group keys gone.
    lease::move_to((&config, &keys), (&config, &there), 0).unwrap();
    check(&keys, "moved away");
    check(&there, "moved here");
    lease::remove(&config, &there, &[b"b2".to_vec()]).unwrap();
    check(&there, "remove there");
    lease::clear(&config, &there).unwrap();
    check(&there, "clear");
    // Emptied by the drop-in pop.
    put(&keys, &["p1", "p2"], Some("p"), Policy::Keep);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(queue::pop(&config, &keys, 10).unwrap().len(), 2);
    check(&keys, "popped empty");
    // The tasks leased all along are the workers' still.
    assert!(lease::ack(&config, &keys, &got[1].id, &got[1].token).unwrap());
}

#[test]
fn groups_shows_a_group_whose_tasks_all_run() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"all-running");
    let tags = queue::Tags::default().with_group(b"solo").unwrap();
    let tasks = [task("s1", None), task("s2", None)];
    queue::put_tagged(&config, &keys, &tasks, 0.0, Policy::Keep, 0, &tags).unwrap();
    let other = queue::Tags::default().with_group(b"other").unwrap();
    queue::put_tagged(
        &config,
        &keys,
        &[task("o1", None)],
        60.0,
        Policy::Keep,
        0,
        &other,
    )
    .unwrap();
    lease::set_group_concurrency(&config, &keys, 5).unwrap();
    assert_eq!(reserve(&config, &keys, how(10, 30_000, 0)).len(), 2);
    let groups = lease::groups(&config, &keys, 100).unwrap();
    let seen: Vec<(String, u64, Option<u64>)> = groups
        .iter()
        .map(|g| {
            (
                String::from_utf8_lossy(&g.name).into_owned(),
                g.queued,
                g.leased,
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("other".to_owned(), 1, Some(0)),
            ("solo".to_owned(), 0, Some(2))
        ]
    );
}

#[test]
fn group_limits_hold_each_group_to_its_concurrency_rate_and_throttle() {
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU64, Ordering};

    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"limits");
    let group = |g: &str| queue::Tags::default().with_group(g.as_bytes()).unwrap();
    let put = |prefix: &str, n: usize, g: Option<&str>| {
        let tasks: Vec<NewTask> = (0..n)
            .map(|i| task(&format!("{prefix}{i}"), None))
            .collect();
        let tags = g.map(group).unwrap_or_default();
        queue::put_tagged(&config, &keys, &tasks, 0.0, Policy::Keep, 0, &tags).unwrap();
    };
    let group_of = |id: &[u8]| id[0];
    let leased_count = |g: &str| -> Option<u64> {
        redis::cmd("HGET")
            .arg("{Queue:limits}:group-leased")
            .arg(g)
            .query(&mut server.client())
            .unwrap()
    };

    // Tasks leased before the limit is set count from then on.
    put("a", 6, Some("a"));
    put("b", 6, Some("b"));
    put("u", 4, None);
    // In turn: u0 a0 b0, u1 a1 b1 (the group '' of the tasks without one
    // comes first by name).
    let early = reserve(&config, &keys, how(6, 30_000, 0));
    assert_eq!(early.len(), 6);
    lease::set_group_concurrency(&config, &keys, 2).unwrap();
    assert_eq!((leased_count("a"), leased_count("b")), (Some(2), Some(2)));
    // Both groups are full: only the tasks without a group go.
    let got = reserve(&config, &keys, how(10, 30_000, 0));
    let ids: Vec<_> = got.iter().map(|t| String::from_utf8_lossy(&t.id)).collect();
    assert_eq!(ids, ["u2", "u3"]);
    // Every way a lease ends frees its place: ack, nack, bury, release,
    // and a lease that ran out.
    let a: Vec<&Leased> = early.iter().filter(|t| group_of(&t.id) == b'a').collect();
    let b: Vec<&Leased> = early.iter().filter(|t| group_of(&t.id) == b'b').collect();
    assert!(lease::ack(&config, &keys, &a[0].id, &a[0].token).unwrap());
    let terms = Terms::own(Duration::from_secs(30), 3);
    lease::nack(
        &config,
        &keys,
        &a[1].id,
        &a[1].token,
        3600.0,
        terms,
        b"later",
    )
    .unwrap();
    assert_eq!(leased_count("a"), None, "none leased, no field");
    let two = reserve(&config, &keys, how(10, 30_000, 0));
    assert_eq!(two.len(), 2, "a's two places");
    assert!(two.iter().all(|t| group_of(&t.id) == b'a'));
    assert!(lease::bury(&config, &keys, &b[0].id, &b[0].token, b"no").unwrap());
    assert!(lease::release(&config, &keys, &b[1].id, &b[1].token, 0.0).unwrap());
    let short = reserve(&config, &keys, how(10, 50, 0));
    assert_eq!(short.len(), 2, "b's two places");
    assert!(short.iter().all(|t| group_of(&t.id) == b'b'));
    std::thread::sleep(Duration::from_millis(120));
    let again = reserve(&config, &keys, how(10, 30_000, 0));
    assert_eq!(again.len(), 2, "b's leases ran out");
    assert!(again.iter().all(|t| group_of(&t.id) == b'b'));
    assert_eq!((leased_count("a"), leased_count("b")), (Some(2), Some(2)));
    let unheld = early.iter().filter(|t| group_of(&t.id) == b'u');
    for t in two.iter().chain(&again).chain(&got).chain(unheld) {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
    }
    assert_eq!((leased_count("a"), leased_count("b")), (None, None));

    // A group's throttle holds its tasks alone, and a waiting reserve takes
    // them when it ends (woken by its timer, not polling).
    let held = lease::throttle_group(&config, &keys, b"a", 0.3).unwrap();
    assert!(held > Duration::from_millis(250), "{held:?}");
    let got = reserve(&config, &keys, how(10, 30_000, 0));
    assert!(
        !got.is_empty() && got.iter().all(|t| group_of(&t.id) == b'b'),
        "{got:?}"
    );
    let started = Instant::now();
    let later = reserve(&config, &keys, how(10, 30_000, 5_000));
    assert!(!later.is_empty() && later.iter().all(|t| group_of(&t.id) == b'a'));
    assert!(
        started.elapsed() >= Duration::from_millis(200),
        "waited for it"
    );
    for t in got.iter().chain(&later) {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
    }
    lease::set_group_concurrency(&config, &keys, 0).unwrap();

    // A rate per group: each group has a bucket of its own.
    let rate = lease::Rate {
        limit: 3,
        per: Duration::from_secs(60),
        burst: 3,
    };
    lease::set_group_rate(&config, &keys, Some(rate)).unwrap();
    put("c", 10, Some("c"));
    put("d", 10, Some("d"));
    let got = reserve(&config, &keys, how(100, 30_000, 0));
    let count = |tasks: &[Leased], g: u8| tasks.iter().filter(|t| group_of(&t.id) == g).count();
    assert_eq!((count(&got, b'c'), count(&got, b'd')), (3, 3), "{got:?}");
    assert!(reserve(&config, &keys, how(100, 30_000, 0)).is_empty());
    lease::set_group_rate(&config, &keys, None).unwrap();
    let rest = reserve(&config, &keys, how(100, 30_000, 0));
    assert_eq!((count(&rest, b'c'), count(&rest, b'd')), (7, 7));
    for t in got.iter().chain(&rest) {
        assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
    }

    // Eight workers, five groups held to 3 leased tasks each: never more
    // than 3 of a group run at once, and every task runs once.
    lease::set_group_concurrency(&config, &keys, 3).unwrap();
    for g in ["v", "w", "x", "y", "z"] {
        put(g, 60, Some(g));
    }
    put("n", 30, None);
    let running: Mutex<HashMap<u8, u64>> = Mutex::new(HashMap::new());
    let done: Mutex<HashSet<Vec<u8>>> = Mutex::new(HashSet::new());
    let violations = AtomicU64::new(0);
    std::thread::scope(|s| {
        for w in 0..8u64 {
            let (config, keys) = (config.clone(), keys.clone());
            let (running, done, violations) = (&running, &done, &violations);
            s.spawn(move || {
                let mut round = 0u64;
                loop {
                    round += 1;
                    let got = reserve(&config, &keys, how(1 + (w + round) % 4, 30_000, 300));
                    if got.is_empty() {
                        break;
                    }
                    for t in &got {
                        let g = group_of(&t.id);
                        if g == b'n' {
                            continue;
                        }
                        let mut r = running.lock().unwrap();
                        let n = r.entry(g).or_default();
                        *n += 1;
                        if *n > 3 {
                            violations.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    std::thread::sleep(Duration::from_millis(2));
                    for (i, t) in got.iter().enumerate() {
                        let g = group_of(&t.id);
                        if g != b'n' {
                            *running.lock().unwrap().get_mut(&g).unwrap() -= 1;
                        }
                        // Some give their task back once, to run again.
                        if (w + round + i as u64).is_multiple_of(5) && t.attempts == 1 {
                            let terms = Terms::own(Duration::from_secs(30), 3);
                            lease::nack(&config, &keys, &t.id, &t.token, 0.0, terms, b"").unwrap();
                        } else {
                            assert!(lease::ack(&config, &keys, &t.id, &t.token).unwrap());
                            assert!(done.lock().unwrap().insert(t.id.clone()), "acked twice");
                        }
                    }
                }
            });
        }
    });
    assert_eq!(violations.load(Ordering::SeqCst), 0);
    assert_eq!(done.lock().unwrap().len(), 5 * 60 + 30, "every task once");
    let mut c = server.client();
    let mut left: Vec<String> = redis::cmd("KEYS").arg("*group*").query(&mut c).unwrap();
    left.sort();
    // Left: the hint of a1 (given back for an hour), the groups and their
    // counts, and the buckets of the groups that had a rate, which go once
    // full again.
    assert_eq!(
        left,
        [
            "{Queue:limits}:group-count",
            "{Queue:limits}:group-rate:b",
            "{Queue:limits}:group-rate:c",
            "{Queue:limits}:group-rate:d",
            "{Queue:limits}:group:a",
            "{Queue:limits}:groups",
        ]
    );
    for key in left.iter().filter(|k| k.contains("group-rate:")) {
        let ttl: i64 = redis::cmd("PTTL").arg(key).query(&mut c).unwrap();
        assert!((1..=60_000).contains(&ttl), "{key} {ttl}");
    }
}

/// The trace context telemetry stores after a task's tags and group (see
/// `Tags::traced`) goes wherever they go (a dead letter, its retry) and
/// changes nothing that reads them: the tags, the group, a tag search, the
/// groups' turns and counts, the payload.
#[test]
fn a_trace_context_goes_with_its_task_and_changes_no_tag_or_group() {
    let server = RedisServer::start();
    let config = server.config();
    let keys = Keys::new(b"", b"traced");
    let tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let tags = queue::Tags::new(&["a", "b"])
        .unwrap()
        .with_group(b"acme")
        .unwrap();
    let traced = tags.traced(tp);
    assert_eq!(traced.group(), Some(&b"acme"[..]));
    let put = |tasks: &[NewTask], t: &queue::Tags| {
        statuses(queue::put_tagged(&config, &keys, tasks, 0.0, Policy::Keep, 0, t).unwrap())
    };
    put(&[task("t1", Some("p\0q"))], &traced);
    put(&[task("t2", None)], &queue::Tags::default().traced(tp));
    put(&[task("t3", None)], &queue::Tags::new(&["b"]).unwrap());
    let found = lease::find(&config, &keys, b"t1").unwrap().unwrap();
    assert_eq!(
        (found.tags, found.group),
        (vec![b"a".to_vec(), b"b".to_vec()], Some(b"acme".to_vec()))
    );
    let found = lease::find(&config, &keys, b"t2").unwrap().unwrap();
    assert_eq!((found.tags, found.group), (Vec::<Vec<u8>>::new(), None));
    let mut ids: Vec<Vec<u8>> = lease::tagged(&config, &keys, b"b", 10)
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    ids.sort();
    assert_eq!(ids, [b"t1".to_vec(), b"t3".to_vec()]);
    let groups: Vec<(Vec<u8>, u64)> = lease::groups(&config, &keys, 10)
        .unwrap()
        .into_iter()
        .map(|g| (g.name, g.queued))
        .collect();
    assert!(groups.contains(&(b"acme".to_vec(), 1)), "{groups:?}");
    let traces = |ids: &[&[u8]]| -> Vec<Option<Vec<u8>>> {
        let traced = lease::traces(&config, &keys, ids).unwrap();
        traced.into_iter().map(|t| t.trace).collect()
    };
    let groups_of = |ids: &[&[u8]]| -> Vec<Option<Vec<u8>>> {
        let traced = lease::traces(&config, &keys, ids).unwrap();
        traced.into_iter().map(|t| t.group).collect()
    };
    assert_eq!(groups_of(&[b"t1", b"t2"]), [Some(b"acme".to_vec()), None]);
    let tp_bytes = Some(tp.as_bytes().to_vec());
    assert_eq!(
        traces(&[b"t1", b"t2", b"t3", b"none"]),
        [tp_bytes.clone(), tp_bytes.clone(), None, None]
    );

    // Dead (one attempt), retried, reserved again: the trace is still there.
    let (how1, _) = how(3, 30_000, 0);
    let one = Terms::own(Duration::from_secs(30), 1);
    let got = lease::reserve(&config, &[(&keys, one)], &how1)
        .unwrap()
        .unwrap()
        .1;
    for t in &got {
        let nacked = lease::nack(&config, &keys, &t.id, &t.token, 0.0, one, b"down").unwrap();
        assert_eq!(nacked, Nack::Dead);
    }
    assert_eq!(
        lease::retry_dead(&config, &keys, &[], 0).unwrap().retried,
        3
    );
    let again = reserve(&config, &keys, how(3, 30_000, 0));
    let t1 = again.iter().find(|t| t.id == b"t1").expect("t1 again");
    assert_eq!(t1.payload.as_deref(), Some(&b"p\0q"[..]));
    assert_eq!(
        traces(&[b"t1", b"t2", b"t3"]),
        [tp_bytes.clone(), tp_bytes, None]
    );
    let found = lease::find(&config, &keys, b"t1").unwrap().unwrap();
    assert_eq!(
        (found.tags, found.group),
        (vec![b"a".to_vec(), b"b".to_vec()], Some(b"acme".to_vec()))
    );

    // Given back and moved to another queue: the trace moves with it.
    assert!(lease::release(&config, &keys, &t1.id, &t1.token, 0.0).unwrap());
    let other = Keys::new(b"", b"traced-too");
    lease::move_to((&config, &keys), (&config, &other), 0).unwrap();
    let moved = lease::traces(&config, &other, &[b"t1"]).unwrap();
    assert_eq!(moved[0].trace.as_deref(), Some(tp.as_bytes()));
    let found = lease::find(&config, &other, b"t1").unwrap().unwrap();
    assert_eq!(
        (found.tags, found.group),
        (vec![b"a".to_vec(), b"b".to_vec()], Some(b"acme".to_vec()))
    );
}
