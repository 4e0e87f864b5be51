//! The queue engine against a real redis-server.

use crate::common::RedisServer;
use redislock::queue;

fn ids(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn enqueue_keeps_the_first_score_and_pops_due_tasks_in_order() {
    let server = RedisServer::start();
    let config = server.config();
    assert_eq!(
        queue::enqueue(&config, &queue::Keys::new(b"", b"q"), &ids(&["a"]), 0.0).unwrap(),
        1
    );
    assert_eq!(
        queue::enqueue(
            &config,
            &queue::Keys::new(b"", b"q"),
            &ids(&["b", "a"]),
            0.0
        )
        .unwrap(),
        1
    );
    let top = queue::top(&config, &queue::Keys::new(b"", b"q"), 10).unwrap();
    assert_eq!(
        top.iter().map(|t| t.id.as_slice()).collect::<Vec<_>>(),
        [b"a".as_slice(), b"b"]
    );
    assert!(top[0].score <= top[1].score);
    let popped = queue::pop(&config, &queue::Keys::new(b"", b"q"), 1).unwrap();
    assert_eq!(popped, top[..1]);
    let card: i64 = redis::cmd("ZCARD")
        .arg("Queue:q")
        .query(&mut server.client())
        .unwrap();
    assert_eq!(card, 1);
}

#[test]
fn delayed_tasks_are_not_due_before_their_time_on_the_server_clock() {
    let server = RedisServer::start();
    let config = server.config();
    queue::enqueue(
        &config,
        &queue::Keys::new(b"", b"d"),
        &ids(&["later"]),
        3600.0,
    )
    .unwrap();
    queue::enqueue(&config, &queue::Keys::new(b"", b"d"), &ids(&["now"]), 0.0).unwrap();
    let popped = queue::pop(&config, &queue::Keys::new(b"", b"d"), 10).unwrap();
    assert_eq!(popped.len(), 1);
    assert_eq!(popped[0].id, b"now");
    assert!(
        queue::top(&config, &queue::Keys::new(b"", b"d"), 10)
            .unwrap()
            .is_empty()
    );
    let (secs, micros): (f64, f64) = redis::cmd("TIME").query(&mut server.client()).unwrap();
    let score: f64 = redis::cmd("ZSCORE")
        .arg("Queue:d")
        .arg("later")
        .query(&mut server.client())
        .unwrap();
    let now = secs + micros / 1e6;
    assert!(
        score > now + 3590.0 && score < now + 3610.0,
        "due in an hour by server time"
    );
}

#[test]
fn dequeue_needs_the_exact_score_and_it_round_trips() {
    let server = RedisServer::start();
    let config = server.config();
    queue::enqueue(
        &config,
        &queue::Keys::new(b"", b"s"),
        &ids(&["t"]),
        -0.123_456_789,
    )
    .unwrap();
    let seen = queue::top(&config, &queue::Keys::new(b"", b"s"), 1)
        .unwrap()
        .remove(0);
    assert!(
        !queue::dequeue(
            &config,
            &queue::Keys::new(b"", b"s"),
            b"t",
            seen.score + 1e-6
        )
        .unwrap()
    );
    assert!(
        !queue::dequeue(
            &config,
            &queue::Keys::new(b"", b"s"),
            b"t",
            f64::from_bits(seen.score.to_bits() + 1)
        )
        .unwrap()
    );
    assert!(queue::dequeue(&config, &queue::Keys::new(b"", b"s"), b"t", seen.score).unwrap());
    assert!(!queue::dequeue(&config, &queue::Keys::new(b"", b"s"), b"t", seen.score).unwrap());
}

#[test]
fn binary_ids_survive() {
    let server = RedisServer::start();
    let config = server.config();
    let id = vec![0u8, 255, b'\n', 0, b'x'];
    queue::enqueue(
        &config,
        &queue::Keys::new(b"", b"\0bin"),
        std::slice::from_ref(&id),
        0.0,
    )
    .unwrap();
    let popped = queue::pop(&config, &queue::Keys::new(b"", b"\0bin"), 5).unwrap();
    assert_eq!(popped.len(), 1);
    assert_eq!(popped[0].id, id);
}

#[test]
fn concurrent_poppers_never_get_the_same_task() {
    let server = RedisServer::start();
    let config = std::sync::Arc::new(server.config());
    let all: Vec<Vec<u8>> = (0..2000)
        .map(|i| format!("task-{i}").into_bytes())
        .collect();
    queue::enqueue(&config, &queue::Keys::new(b"", b"c"), &all, 0.0).unwrap();
    let threads: Vec<_> = (0..6)
        .map(|_| {
            let config = config.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let batch = queue::pop(&config, &queue::Keys::new(b"", b"c"), 7).unwrap();
                    if batch.is_empty() {
                        return got;
                    }
                    got.extend(batch.into_iter().map(|t| t.id));
                }
            })
        })
        .collect();
    let mut seen: Vec<Vec<u8>> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let total = seen.len();
    seen.sort();
    seen.dedup();
    assert_eq!(total, 2000, "every task delivered");
    assert_eq!(seen.len(), 2000, "no task delivered twice");
}

#[test]
fn large_pops_and_tops_run_in_bounded_batches_and_return_everything_asked() {
    let server = RedisServer::start();
    let config = server.config();
    let all: Vec<Vec<u8>> = (0..3000).map(|i| format!("{i:05}").into_bytes()).collect();
    for chunk in all.chunks(500) {
        queue::enqueue(&config, &queue::Keys::new(b"", b"big"), chunk, -1.0).unwrap();
    }
    let top = queue::top(&config, &queue::Keys::new(b"", b"big"), 2500).unwrap();
    assert_eq!(top.len(), 2500);
    let top_ids: Vec<&[u8]> = top.iter().map(|t| t.id.as_slice()).collect();
    let popped = queue::pop(&config, &queue::Keys::new(b"", b"big"), 2500).unwrap();
    assert_eq!(
        popped.iter().map(|t| t.id.as_slice()).collect::<Vec<_>>(),
        top_ids
    );
    let rest = queue::pop(&config, &queue::Keys::new(b"", b"big"), u64::MAX).unwrap();
    assert_eq!(rest.len(), 500);
    let mut seen: Vec<&[u8]> = top_ids.clone();
    seen.extend(rest.iter().map(|t| t.id.as_slice()));
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 3000, "every task exactly once");
}

/// What a queue object was given decides in the engine: its terms stored
/// with the queue at its first enqueue (read back by a worker given none),
/// the defaults otherwise, and a full queue's refusal with its numbers
/// (`QueueFullException`'s message).
#[test]
fn a_handle_stores_its_terms_once_and_says_what_a_full_queue_refused() {
    use queue::handle::{DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS, Full, Handle, Options};
    use std::sync::Arc;
    use std::time::Duration;
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let options = |lease: Option<u64>, max_length: u64, partitions: u64| Options {
        lease: lease.map(Duration::from_secs),
        max_attempts: None,
        max_length,
        rate: None,
        partitions,
    };
    let task = |id: &str| queue::NewTask {
        id: id.as_bytes().to_vec(),
        payload: None,
    };
    let tags = queue::Tags::default();
    let worker = Handle::new(config.clone(), b"bounded".to_vec(), options(None, 2, 1));
    let terms = worker.terms(None);
    assert_eq!(
        (terms.lease, terms.max_attempts),
        (DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS)
    );
    assert!(terms.defaults.lease && terms.defaults.max_attempts);

    let producer = Handle::new(config.clone(), b"bounded".to_vec(), options(Some(90), 2, 1));
    let stats = queue::Keys::new(b"", b"bounded").stats;
    let lease = || -> Option<String> {
        redis::cmd("HGET")
            .arg(&stats)
            .arg("lease")
            .query(&mut server.client())
            .unwrap()
    };
    assert_eq!(lease(), None, "nothing stored before the first enqueue");
    producer
        .put(&[task("a")], 0.0, queue::Policy::Keep, &tags)
        .unwrap()
        .unwrap();
    assert_eq!(
        lease().as_deref(),
        Some("90"),
        "stored at the first enqueue"
    );
    // Another producer's term since: this object does not store its own
    // again.
    let _: i64 = redis::cmd("HSET")
        .arg(&stats)
        .arg("lease")
        .arg("7")
        .query(&mut server.client())
        .unwrap();
    producer
        .put(&[task("b")], 0.0, queue::Policy::Keep, &tags)
        .unwrap()
        .unwrap();
    assert_eq!(lease().as_deref(), Some("7"), "stored once per object");
    let full = producer
        .put(&[task("c"), task("d")], 0.0, queue::Policy::Keep, &tags)
        .unwrap()
        .unwrap_err();
    assert_eq!(
        full.to_string(),
        "redislock: queue 'bounded' is full: 2 tasks of at most 2; nothing was enqueued"
    );
    assert!(matches!(
        full,
        Full::Put {
            length: 2,
            enqueued: 0,
            batch: 2,
            ..
        }
    ));

    let small = Handle::new(config.clone(), b"small".to_vec(), options(None, 3, 1));
    small
        .put(&[task("x"), task("y")], 0.0, queue::Policy::Keep, &tags)
        .unwrap()
        .unwrap();
    let full = small
        .put(&[task("z"), task("w")], 0.0, queue::Policy::Keep, &tags)
        .unwrap()
        .unwrap_err();
    assert_eq!(
        full.to_string(),
        "redislock: queue 'small' has room for 1 more task (at most 3), fewer than the batch adds; nothing was enqueued"
    );
    let full = producer.move_to(&small).unwrap().unwrap_err();
    assert_eq!(
        full.to_string(),
        "redislock: queue 'small' is full: 2 tasks of at most 3; 0 task(s) of queue 'bounded' moved before, the rest stay"
    );
    assert_eq!(
        small.move_to(&small).unwrap(),
        Ok(None),
        "a queue to itself"
    );

    let parts = Handle::new(config, b"parts".to_vec(), options(None, 4, 2));
    let many: Vec<queue::NewTask> = (0..8).map(|i| task(&format!("t{i}"))).collect();
    let full = parts
        .put(&many, 0.0, queue::Policy::Keep, &tags)
        .unwrap()
        .unwrap_err();
    let Full::Put {
        length, enqueued, ..
    } = full
    else {
        panic!("{full:?}");
    };
    assert_eq!(
        full.to_string(),
        format!(
            "redislock: a partition of queue 'parts' is full: {length} tasks of at most 2 (its share of maxLength 4 over 2 partitions); {enqueued} of the 8 tasks were enqueued, the others not"
        )
    );
}
