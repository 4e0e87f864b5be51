//! Workflows (`queue::flow`) against a real redis-server and a Redis
//! Cluster: threads, each on its own connection, ack the children of
//! parents on a partitioned queue at once; every parent is released once,
//! with every result. On the Cluster the partitions are in several slots,
//! so each flow is made in steps; a creator that stops half way is
//! finished by a later caller, forward or back, and a busy task in any
//! slot leaves nothing of the flow.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{self, Cluster, RedisServer};
use redislock::config::{Config, Defaults};
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
    let ids: Vec<String> = (0..n).map(|i| format!("{id}-{i}")).collect();
    add_named(parents, children, id, &ids).unwrap()
}

/// The flow of parent `id` on `parents` with the children `ids` on
/// `children`.
fn add_named(
    parents: &Queue,
    children: &Queue,
    id: &str,
    ids: &[String],
) -> Result<Added, redislock::conn::Error> {
    flow::add(parents.config(), &nodes_of(parents, children, id, ids))
}

/// The tasks of the flow of [`add_named`].
fn nodes_of<'a>(
    parents: &'a Queue,
    children: &'a Queue,
    id: &str,
    ids: &[String],
) -> Vec<Node<'a>> {
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
    for child in ids {
        let child = child.clone();
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
    nodes
}

#[test]
fn threads_acking_children_release_each_parent_once_with_every_result() {
    let server = RedisServer::start();
    release_each_parent_once(Arc::new(server.config()));
}

#[test]
fn a_flow_across_the_slots_of_a_cluster_is_made_whole_or_not_at_all() {
    let cluster = Cluster::start();
    let config = || Arc::new(Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap());
    // Partitions have a slot each: every flow here spans several.
    release_each_parent_once(config());

    let config = config();
    let parents = Queue::partitioned(config.clone(), b"made".to_vec(), 1);
    let children = Queue::partitioned(config.clone(), b"steps".to_vec(), 3);
    let on = |key: &[u8], cmd: &redis::Cmd| {
        let node = cluster
            .primary_of(std::str::from_utf8(key).unwrap())
            .unwrap();
        common::ask::<redis::Value>(cluster.nodes[node].port, cmd).unwrap();
    };
    let id_in = |part: usize, n: usize| {
        (0..)
            .map(|i| format!("f-{i}"))
            .filter(|id| children.partition_of(id.as_bytes(), None) == part)
            .nth(n)
            .unwrap()
    };
    let nothing_of = |id: &str, ids: &[String]| {
        let root = parents.part(0);
        assert_eq!(flow::waiting(&config, root, id.as_bytes()).unwrap(), None);
        for c in ids {
            assert_eq!(children.find(c.as_bytes()).unwrap(), None, "{c}");
        }
        let mut empty = vec![root.making.clone()];
        for i in 0..3 {
            let k = children.part(i);
            empty.extend([k.links.clone(), k.staged.clone(), k.flows.clone()]);
        }
        for key in &empty {
            let node = cluster
                .primary_of(std::str::from_utf8(key).unwrap())
                .unwrap();
            let n: i64 =
                common::ask(cluster.nodes[node].port, redis::cmd("EXISTS").arg(key)).unwrap();
            assert_eq!(n, 0, "{}", String::from_utf8_lossy(key));
        }
    };

    // A child's id queued already in one slot: nothing of the flow stays
    // in any slot.
    let taken = id_in(2, 0);
    let task = queue::NewTask {
        id: taken.clone().into_bytes(),
        payload: None,
    };
    children
        .put(
            &[task],
            0.0,
            queue::Policy::Keep,
            0,
            &queue::Tags::default(),
        )
        .unwrap();
    let ids = [id_in(0, 0), id_in(1, 0), taken.clone()];
    assert_eq!(
        add_named(&parents, &children, "p", &ids),
        Ok(Added::Busy(3))
    );
    nothing_of("p", &ids[..2]);
    let (_, part, tasks) = queue::reserve(&[(&children, TERMS)], &how(1))
        .unwrap()
        .unwrap();
    children
        .ack_many(&[(part, &tasks[0].id, &tasks[0].token)])
        .unwrap();

    // A creator that stops while staging (a slot's key of another type
    // fails its step, and the undoing of that slot): a later caller undoes
    // the slots staged, and nothing of the flow is left.
    let ids = [id_in(0, 1), id_in(1, 1), id_in(2, 1)];
    let staged = children.part(2).staged.clone();
    on(&staged, redis::cmd("SET").arg(&staged).arg("not a hash"));
    assert!(add_named(&parents, &children, "p", &ids).is_err());
    on(&staged, redis::cmd("DEL").arg(&staged));
    assert_eq!(
        flow::finish_stalled(&config, parents.part(0), Duration::ZERO),
        Ok(1)
    );
    nothing_of("p", &ids);

    // A creator that stops after each of its steps in turn (4 slots
    // staged, the record to committing, 4 queues committed, the record
    // gone): a later caller undoes the flow when it stopped staging, and
    // queues the rest when it stopped committing; the parent runs once,
    // with every result, or not at all with nothing left.
    let mut made = Vec::new();
    for k in 0..=10 {
        let ids = [
            id_in(0, 10 + k),
            id_in(1, 10 + k),
            id_in(2, 10 + k),
            id_in(2, 30 + k),
        ];
        let parent = format!("p{k}");
        let nodes = nodes_of(&parents, &children, &parent, &ids);
        let added = flow::add_halting(&config, &nodes, k);
        assert_eq!(added.is_ok(), k == 10, "{k}: {added:?}");
        flow::finish_stalled(&config, parents.part(0), Duration::ZERO).unwrap();
        if k < 5 {
            nothing_of(&parent, &ids);
        } else {
            made.push((parent, ids));
        }
    }
    let mut acked = 0;
    while let Some((_, part, tasks)) = queue::reserve(&[(&children, TERMS)], &how(10)).unwrap() {
        for t in &tasks {
            let result = [b"r:".as_slice(), &t.id].concat();
            acked += children
                .ack_with(&[(part, &t.id, &t.token)], &[Some(&result)])
                .unwrap();
        }
    }
    assert_eq!(
        acked,
        4 * made.len() as u64,
        "every child of the flows made, once"
    );
    let mut ran = HashMap::new();
    while let Some((_, part, tasks)) = queue::reserve(&[(&parents, TERMS)], &how(100)).unwrap() {
        for t in &tasks {
            let got: Vec<(Vec<u8>, Vec<u8>)> = parents
                .child_results(part, &t.id)
                .unwrap()
                .into_iter()
                .map(|c| (c.name, c.value.unwrap_or_default()))
                .collect();
            *ran.entry(t.id.clone()).or_insert(0) += 1;
            let (_, ids) = made.iter().find(|(p, _)| p.as_bytes() == t.id).unwrap();
            let want: Vec<(Vec<u8>, Vec<u8>)> = ids
                .iter()
                .map(|c| {
                    (
                        format!("steps/{c}").into_bytes(),
                        format!("r:{c}").into_bytes(),
                    )
                })
                .collect();
            assert_eq!(got, want);
            parents.ack_many(&[(part, &t.id, &t.token)]).unwrap();
        }
    }
    assert_eq!(ran.len(), made.len());
    assert!(ran.values().all(|&n| n == 1), "{ran:?}");
    assert_eq!(parents.metrics().unwrap().waiting, 0);

    // Nobody calls finish_stalled() by hand: a reserve on the root's queue
    // finishes a flow stalled for longer than STALLED.
    let ids = [id_in(0, 50), id_in(1, 50), id_in(2, 50), id_in(2, 51)];
    let nodes = nodes_of(&parents, &children, "late", &ids);
    assert!(
        flow::add_halting(&config, &nodes, 6).is_err(),
        "stopped committing"
    );
    std::thread::sleep(flow::STALLED + Duration::from_millis(500));
    assert_eq!(
        queue::reserve(&[(&parents, TERMS)], &how(10)).unwrap(),
        None
    );
    let mut left = ids.len();
    while let Some((_, part, tasks)) = queue::reserve(&[(&children, TERMS)], &how(10)).unwrap() {
        for t in &tasks {
            children.ack_many(&[(part, &t.id, &t.token)]).unwrap();
            left -= 1;
        }
    }
    assert_eq!(left, 0, "every child queued by the reserve's tending");
    let (_, part, tasks) = queue::reserve(&[(&parents, TERMS)], &how(100))
        .unwrap()
        .unwrap();
    assert_eq!(tasks[0].id, b"late");
    parents
        .ack_many(&[(part, &tasks[0].id, &tasks[0].token)])
        .unwrap();
}

fn release_each_parent_once(config: Arc<redislock::config::Config>) {
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
