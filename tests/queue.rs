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
