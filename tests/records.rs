//! A task's records (queue_record.lua): any payload, and any tags and
//! group a task takes, and the trace context telemetry stores with them,
//! come back as they went in through every path that stores and restores a
//! task. Tags and groups that a task cannot take
//! (spaces, control bytes, empty, too long) are refused before anything is
//! written.

use std::time::Duration;

use crate::common::RedisServer;
use proptest::prelude::*;
use redislock::config::Config;
use redislock::queue::lease::{self, Nack, Peeked, Reserve, Terms};
use redislock::queue::{self, Keys, NewTask, Policy, Put, Tags};

thread_local! {
    static SERVER: RedisServer = RedisServer::start();
}

/// Bytes that the old text records split at, the codec's own version
/// byte, and what MessagePack reads as a header.
const AWKWARD: &[u8] = b" \t\x1d\0\x01\x93\xc2\xdb\xff\n";

fn awkward_bytes(most: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![any::<u8>(), prop::sample::select(AWKWARD)],
        0..most,
    )
}

fn payload() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop_oneof![
        8 => awkward_bytes(300),
        1 => Just(b"z2\x1dgz {\"order\":7}".to_vec()),
        // Past MessagePack's 16-bit string length.
        1 => Just(vec![1u8; 70_000]),
    ])
}

/// Tags a task takes: any byte but a space or a control one, 1 to 100 of
/// them.
fn tag() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(prop_oneof![0x21u8..0x7f, 0x80u8..=0xff], 1..12),
        1 => Just(vec![b'x'; 100]),
        1 => Just(vec![0xff; 100]),
    ]
}

/// A W3C traceparent, as telemetry stores it with a task's tags
/// (`Tags::traced`).
fn trace() -> impl Strategy<Value = Vec<u8>> {
    (any::<u128>(), any::<u64>(), any::<bool>()).prop_map(|(t, s, sampled)| {
        let (t, s) = (t.max(1), s.max(1));
        format!("00-{t:032x}-{s:016x}-0{}", u8::from(sampled)).into_bytes()
    })
}

type Stored = (Vec<Vec<u8>>, Option<Vec<u8>>, Option<Vec<u8>>);

fn tags() -> impl Strategy<Value = Stored> {
    (
        prop::collection::vec(tag(), 0..5),
        prop::option::of(tag()),
        prop::option::of(trace()),
    )
}

/// Tags a task refuses, mostly.
fn odd_tag() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![awkward_bytes(8), Just(vec![b'x'; 101]), tag()]
}

/// The tags as a task takes them (each once, in order), or None when it
/// refuses them.
fn taken(tags: &[Vec<u8>], group: &Option<Vec<u8>>) -> Option<(Tags, Vec<Vec<u8>>)> {
    let fits =
        |t: &Vec<u8>| (1..=100).contains(&t.len()) && t.iter().all(|&b| b > b' ' && b != 0x7f);
    let made = Tags::new(tags).and_then(|t| match group {
        Some(g) => t.with_group(g),
        None => Ok(t),
    });
    let fit = tags.iter().all(fits) && group.iter().all(fits);
    assert_eq!(made.is_ok(), fit, "{tags:?} {group:?}: {made:?}");
    let mut once: Vec<Vec<u8>> = Vec::new();
    for t in tags {
        if !once.contains(t) {
            once.push(t.clone());
        }
    }
    made.ok().map(|t| (t, once))
}

/// One version of a task: what went in, and what comes back.
#[derive(Clone, Debug)]
struct Version {
    payload: Option<Vec<u8>>,
    tags: Tags,
    list: Vec<Vec<u8>>,
    group: Option<Vec<u8>>,
    trace: Option<Vec<u8>>,
}

impl Version {
    fn put(&self, config: &Config, keys: &Keys, id: &[u8]) {
        let task = NewTask {
            id: id.to_vec(),
            payload: self.payload.clone(),
        };
        let put = queue::put_tagged(config, keys, &[task], -1.0, Policy::Replace, 0, &self.tags);
        assert!(matches!(put, Ok(Put::Done(_))), "{put:?}");
    }

    fn check(&self, seen: &Peeked, state: &str, path: &str) {
        assert_eq!(seen.state, state, "{path}");
        assert_eq!(seen.payload, self.payload, "{path}: payload");
        assert_eq!(seen.tags, self.list, "{path}: tags");
        assert_eq!(seen.group, self.group, "{path}: group");
        assert_eq!(seen.trace, self.trace, "{path}: trace context");
    }
}

fn version(payload: Option<Vec<u8>>, (tags, group, trace): Stored) -> Option<Version> {
    let (made, list) = taken(&tags, &group)?;
    let tp = |t: &Vec<u8>| String::from_utf8(t.clone()).expect("a traceparent is text");
    Some(Version {
        payload,
        tags: trace.as_ref().map_or(made.clone(), |t| made.traced(&tp(t))),
        list,
        group,
        trace,
    })
}

fn reserve_one(config: &Config, keys: &Keys, terms: Terms) -> lease::Leased {
    let how = Reserve {
        count: 1,
        wait: Duration::ZERO,
        recheck: Duration::from_secs(1),
    };
    let (_, mut got) = lease::reserve(config, &[(keys, terms)], &how)
        .unwrap()
        .expect("a task is due");
    assert_eq!(got.len(), 1);
    got.remove(0)
}

fn find(config: &Config, keys: &Keys, id: &[u8]) -> Peeked {
    lease::find(config, keys, id)
        .unwrap()
        .expect("the task is there")
}

fn dead_one(config: &Config, keys: &Keys, v: &Version, path: &str) {
    let dead = lease::dead(config, keys, 10).unwrap();
    assert_eq!(dead.len(), 1, "{path}");
    assert_eq!(dead[0].payload, v.payload, "{path}: payload");
    assert_eq!(dead[0].tags, v.list, "{path}: tags");
    assert_eq!(dead[0].group, v.group, "{path}: group");
}

/// The paths a task takes, each checked: enqueue, find, peek, reserve,
/// leased, a rerun queued by a nack and by an ack, bury, dead, retryDead
/// (of a dead letter whose id is free, and of one whose id is leased: a
/// rerun), a nack on the last attempt, a lease that runs out, recent,
/// move, and the drop-in pop.
fn every_path(id: &[u8], a: &Version, b: &Version, c: &Version) {
    let config = SERVER.with(RedisServer::config);
    let name = uuid::Uuid::new_v4().simple().to_string();
    let keys = Keys::new(b"", name.as_bytes());
    let long = Terms::own(Duration::from_secs(30), 0);
    let last = Terms::own(Duration::from_secs(30), 1);

    a.put(&config, &keys, id);
    a.check(&find(&config, &keys, id), "queued", "enqueue, find");
    a.check(
        &lease::queued(&config, &keys, 10).unwrap()[0],
        "queued",
        "peek",
    );
    let got = reserve_one(&config, &keys, long);
    assert_eq!(
        (got.id.as_slice(), &got.payload),
        (id, &a.payload),
        "reserve"
    );
    a.check(
        &lease::leased(&config, &keys, 10).unwrap()[0].0,
        "leased",
        "leased",
    );

    // A rerun, queued when the lease ends with a nack.
    b.put(&config, &keys, id);
    a.check(
        &find(&config, &keys, id),
        "leased",
        "leased beside its rerun",
    );
    let nacked = lease::nack(&config, &keys, id, &got.token, 0.0, long, b"no \t\x1d way").unwrap();
    assert_eq!(nacked, Nack::Requeued);
    b.check(&find(&config, &keys, id), "queued", "rerun after a nack");

    // Buried, retried.
    let got = reserve_one(&config, &keys, long);
    assert_eq!(got.payload, b.payload, "reserve of the rerun");
    assert!(lease::bury(&config, &keys, id, &got.token, b"bad").unwrap());
    dead_one(&config, &keys, b, "bury, dead");
    b.check(&find(&config, &keys, id), "dead", "find of a dead letter");
    assert_eq!(
        lease::retry_dead(&config, &keys, &[], 0).unwrap().retried,
        1
    );
    b.check(&find(&config, &keys, id), "queued", "retryDead");

    // A rerun queued when the lease ends with an ack.
    let got = reserve_one(&config, &keys, long);
    c.put(&config, &keys, id);
    assert!(lease::ack(&config, &keys, id, &got.token).unwrap());
    c.check(&find(&config, &keys, id), "queued", "rerun after an ack");

    // A nack on the last attempt.
    let got = reserve_one(&config, &keys, last);
    assert_eq!(got.payload, c.payload);
    let nacked = lease::nack(&config, &keys, id, &got.token, 0.0, last, b"").unwrap();
    assert_eq!(nacked, Nack::Dead);
    dead_one(&config, &keys, c, "nack on the last attempt");

    // A dead letter retried while its id is leased: the rerun.
    a.put(&config, &keys, id);
    let got = reserve_one(&config, &keys, long);
    assert_eq!(got.payload, a.payload);
    assert_eq!(
        lease::retry_dead(&config, &keys, &[id.to_vec()], 0)
            .unwrap()
            .retried,
        1
    );
    assert!(lease::ack(&config, &keys, id, &got.token).unwrap());
    c.check(
        &find(&config, &keys, id),
        "queued",
        "retryDead of a leased id",
    );

    // A lease that runs out on the last attempt.
    let short = Terms::own(Duration::from_millis(20), 1);
    let got = reserve_one(&config, &keys, short);
    assert_eq!(got.payload, c.payload);
    std::thread::sleep(Duration::from_millis(40));
    let how = Reserve {
        count: 1,
        wait: Duration::ZERO,
        recheck: Duration::from_secs(1),
    };
    assert!(
        lease::reserve(&config, &[(&keys, short)], &how)
            .unwrap()
            .is_none()
    );
    dead_one(&config, &keys, c, "a lease that ran out");

    // Every attempt's record: newest first.
    let (_, recent) = lease::recent(&config, &keys, 100, None, None).unwrap();
    let seen: Vec<String> = recent
        .iter()
        .map(|r| {
            assert_eq!(r.id, id, "recent: id");
            format!("{} {:?} {:?}", r.outcome, r.tags, r.group)
        })
        .collect();
    let want = |outcome: &str, v: &Version| format!("{outcome} {:?} {:?}", v.list, v.group);
    assert_eq!(
        seen,
        [
            want("dead", c),
            want("acked", a),
            want("dead", c),
            want("acked", b),
            want("dead", b),
            want("nacked", a),
        ],
        "recent"
    );
    assert_eq!(recent[5].reason.as_deref(), Some(&b"no \t\x1d way"[..]));

    // Moved to another queue, then taken by the drop-in pop.
    assert_eq!(
        lease::retry_dead(&config, &keys, &[], 0).unwrap().retried,
        1
    );
    let there = Keys::new(b"", format!("{name}-moved").as_bytes());
    let moved = lease::move_to((&config, &keys), (&config, &there), 0).unwrap();
    assert_eq!(
        moved,
        lease::Moved::Done {
            moved: 1,
            paused: false
        }
    );
    c.check(&find(&config, &there, id), "queued", "move");
    let popped = queue::pop(&config, &there, 1).unwrap();
    assert_eq!(popped.len(), 1);
    assert_eq!(popped[0].id, id, "pop");
    assert_eq!(lease::find(&config, &there, id).unwrap(), None, "popped");
}

fn cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok());
    ProptestConfig::with_cases(cases.map_or(64, |c: u32| c / 20))
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn any_payload_tags_and_group_come_back_through_every_path(
        id in prop::collection::vec(any::<u8>(), 1..100),
        versions in [(payload(), tags()), (payload(), tags()), (payload(), tags())],
    ) {
        let [a, b, c] = versions.map(|(p, t)| version(p, t));
        every_path(&id, &a.unwrap(), &b.unwrap(), &c.unwrap());
    }

    #[test]
    fn tags_and_groups_are_taken_or_refused_by_one_rule(
        tags in prop::collection::vec(odd_tag(), 0..4),
        group in prop::option::of(odd_tag()),
    ) {
        let _ = taken(&tags, &group);
    }
}

/// Records written by the release before queue_record: a rerun and a dead
/// letter with one tag, and recent attempts of each shape, read as that
/// release wrote them.
#[test]
fn records_of_the_release_before_are_read() {
    let config = SERVER.with(RedisServer::config);
    let keys = Keys::new(b"", b"older-records");
    let mut c = SERVER.with(RedisServer::client);
    let now: (u64, u64) = redis::cmd("TIME").query(&mut c).unwrap();
    let ms = now.0 * 1000 + now.1 / 1000;
    let _: () = redis::pipe()
        .cmd("ZADD")
        .arg(&keys.dead)
        .arg(1)
        .arg(b"d 1")
        .cmd("HSET")
        .arg(&keys.graves)
        .arg(b"d 1")
        .arg(b"3\tred\x1dg {\"x\": 1}")
        .cmd("LPUSH")
        .arg(&keys.recent)
        .arg(format!("{ms} acked - * a b"))
        .arg(format!(
            "{ms} nacked 0123456789abcdef0123456789abcdef:3.2@{}+20 5 a b\0cno  way",
            ms - 1500
        ))
        .arg(format!("{ms} nacked - 3/8 a bred blueoops"))
        .arg(format!("{ms} acked - 1/9 xred"))
        .ignore()
        .query(&mut c)
        .unwrap();
    let dead = lease::dead(&config, &keys, 10).unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(
        (
            dead[0].attempts,
            &dead[0].payload,
            &dead[0].tags,
            &dead[0].group
        ),
        (
            3,
            &Some(b"{\"x\": 1}".to_vec()),
            &vec![b"red".to_vec()],
            &Some(b"g".to_vec())
        )
    );
    let (_, recent) = lease::recent(&config, &keys, 10, None, None).unwrap();
    // The newest, too short for its lengths, is passed over.
    assert_eq!(recent.len(), 3, "{recent:?}");
    assert_eq!(recent[0].id, b"a b");
    assert_eq!(recent[0].tags, [b"red".to_vec(), b"blue".to_vec()]);
    assert_eq!(recent[0].reason.as_deref(), Some(&b"oops"[..]));
    assert_eq!(recent[1].id, b"a b\0c");
    assert_eq!(recent[1].reason.as_deref(), Some(&b"no  way"[..]));
    assert_eq!(
        (
            recent[1].attempts,
            recent[1].runtime,
            recent[1].worker.as_deref()
        ),
        (Some(2), Some(1.5), Some("0123456789ab"))
    );
    assert_eq!(
        (recent[2].id.as_slice(), &recent[2].reason),
        (&b"a b"[..], &None)
    );
    let tagged = lease::recent(&config, &keys, 10, None, Some(b"blue"))
        .unwrap()
        .1;
    assert_eq!(tagged.len(), 1);
}
