//! Workflows (`queue::flow`) against a real redis-server: threads, each on
//! its own connection, ack the children of parents on a partitioned
//! queue at once; every parent is released once, with every result.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::RedisServer;
use redislock::queue::flow::{self, Added, Node, OnChildFailure};
use redislock::queue::lease::{Reserve, Terms};
use redislock::queue::{self, Queue};

const TERMS: Terms = Terms::own(Duration::from_secs(30), 0);

fn how(count: u64) -> Reserve {
    Reserve {
        count,
        wait: Duration::from_millis(50),
        recheck: Duration::from_secs(1),
    }
}

/// The flow of parent `id` on `parents` with `n` children on `children`.
fn add(parents: &Queue, children: &Queue, id: &str, n: usize) -> Added {
    let part = parents.partition_of(id.as_bytes(), None);
    let mut nodes = vec![Node {
        name: parents.name(),
        part,
        parts: parents.partitions(),
        keys: parents.part(part),
        id: id.as_bytes().to_vec(),
        payload: None,
        parent: None,
        on_failure: OnChildFailure::Fail,
        delay: 0.0,
        tags: b"",
    }];
    for i in 0..n {
        let child = format!("{id}-{i}");
        let part = children.partition_of(child.as_bytes(), None);
        nodes.push(Node {
            name: children.name(),
            part,
            parts: children.partitions(),
            keys: children.part(part),
            id: child.into_bytes(),
            payload: None,
            parent: Some(0),
            on_failure: OnChildFailure::Fail,
            delay: 0.0,
            tags: b"",
        });
    }
    flow::add(parents.config(), &nodes).unwrap().unwrap()
}

#[test]
fn threads_acking_children_release_each_parent_once_with_every_result() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let parents = Arc::new(Queue::partitioned(config.clone(), b"parents".to_vec(), 3));
    let children = Arc::new(Queue::partitioned(config.clone(), b"children".to_vec(), 2));
    let (flows, each) = (20, 10);
    for p in 0..flows {
        assert_eq!(
            add(&parents, &children, &format!("p{p}"), each),
            Added::Added
        );
    }
    assert_eq!(
        add(&parents, &children, "p0", 1),
        Added::Busy(0),
        "a parent waiting already"
    );
    assert_eq!(parents.metrics().unwrap().waiting, flows as u64);
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let children = children.clone();
            std::thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(20);
                let mut acked = 0;
                while Instant::now() < deadline {
                    let Some((_, part, tasks)) =
                        queue::reserve(&[(&children, TERMS)], &how(3)).unwrap()
                    else {
                        if children.metrics().unwrap().ready == 0 {
                            break;
                        }
                        continue;
                    };
                    let held: Vec<_> = tasks
                        .iter()
                        .map(|t| (part, t.id.as_slice(), t.token.as_str()))
                        .collect();
                    let results: Vec<Vec<u8>> = tasks
                        .iter()
                        .map(|t| [b"r:".as_slice(), &t.id].concat())
                        .collect();
                    let results: Vec<Option<&[u8]>> =
                        results.iter().map(|r| Some(r.as_slice())).collect();
                    acked += children.ack_with(&held, &results).unwrap();
                }
                acked
            })
        })
        .collect();
    let acked: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(acked, (flows * each) as u64);

    let mut runs: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut violations = Vec::new();
    while let Some((_, part, tasks)) = queue::reserve(&[(&parents, TERMS)], &how(100)).unwrap() {
        for t in &tasks {
            *runs.entry(t.id.clone()).or_default() += 1;
            let got = parents.child_results(part, &t.id).unwrap();
            for i in 0..each {
                let name = format!("children/{}-{i}", String::from_utf8_lossy(&t.id));
                let want = format!("r:{}-{i}", String::from_utf8_lossy(&t.id));
                let found = got.iter().find(|c| c.name == name.as_bytes());
                if found.map(|c| (c.outcome.as_slice(), c.value.as_deref()))
                    != Some((b"acked", Some(want.as_bytes())))
                {
                    violations.push(format!("{name}: {found:?}"));
                }
            }
        }
        let held: Vec<_> = tasks
            .iter()
            .map(|t| (part, t.id.as_slice(), t.token.as_str()))
            .collect();
        parents.ack_many(&held).unwrap();
    }
    assert_eq!(violations, Vec::<String>::new());
    assert_eq!(runs.len(), flows);
    assert!(runs.values().all(|&n| n == 1), "{runs:?}");
    assert_eq!(parents.metrics().unwrap().waiting, 0);
}
