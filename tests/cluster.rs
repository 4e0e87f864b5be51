//! The engines against a Redis Cluster of 3 primaries and 3 replicas: every
//! script's keys share a hash slot, waiting works across nodes, and after a
//! primary dies and its replica is promoted, operations resume.

use std::time::{Duration, Instant};

use crate::common;
use crate::common::{Cluster, NO_WAIT};
use redis::RedisResult;
use redislock::config::{Config, Defaults};
use redislock::conn::Error;
use redislock::lock::{self, Wait};
use redislock::queue::lease::{self, Reserve, Terms};
use redislock::queue::{self, Keys, NewTask, Policy};

fn how(wait_ms: u64) -> Reserve {
    Reserve {
        count: 10,
        wait: Duration::from_millis(wait_ms),
        recheck: Duration::from_secs(10),
    }
}

const TERMS: Terms = Terms::own(Duration::from_secs(5), 2);

/// Locks, order locks, seed queues and leased queues on names spread over
/// the slots of all three primaries.
fn contract(config: &Config, round: &str) {
    for i in 0..12 {
        let name = format!("{round}-{i}");
        let key = lock::Keys::named(b"", name.as_bytes()).lock;
        let (a, b) = (redislock::token::new_token(), redislock::token::new_token());
        let ttl = Duration::from_secs(5);
        let f1 = common::acquire_fenced(config, &key, &a, ttl, NO_WAIT)
            .unwrap()
            .unwrap();
        assert_eq!(
            common::acquire_fenced(config, &key, &b, ttl, NO_WAIT).unwrap(),
            None
        );
        assert!(lock::extend(config, &key, &a, ttl).unwrap());
        assert!(lock::holds(config, &key, &a).unwrap());
        assert!(!common::release(config, &key, b.as_bytes()).unwrap());
        assert!(common::release(config, &key, a.as_bytes()).unwrap());
        let f2 = common::acquire_fenced(config, &key, &b, ttl, NO_WAIT)
            .unwrap()
            .unwrap();
        assert!(f2 > f1, "fencing tokens increase: {f1} then {f2}");
        assert!(common::release(config, &key, b.as_bytes()).unwrap());

        // Lock_Service: the order key and the id counter are in different slots.
        let order = format!("order_lock_{name}");
        let id = lock::order::acquire(config, name.as_bytes(), ttl)
            .unwrap()
            .unwrap();
        assert_eq!(
            lock::order::acquire(config, name.as_bytes(), ttl).unwrap(),
            None
        );
        assert!(common::release(config, order.as_bytes(), id.to_string().as_bytes()).unwrap());

        let seed = queue::Keys::new(b"", name.as_bytes());
        assert_eq!(
            queue::enqueue(config, &seed, &[b"t1".to_vec(), b"t2".to_vec()], 0.0).unwrap(),
            2
        );
        assert_eq!(queue::top(config, &seed, 10).unwrap().len(), 2);
        assert_eq!(queue::pop(config, &seed, 10).unwrap().len(), 2);

        let keys = Keys::new(b"", format!("leased-{name}").as_bytes());
        let tasks = [NewTask {
            id: b"j".to_vec(),
            payload: Some(b"{}".to_vec()),
        }];
        queue::put(config, &keys, &tasks, 0.0, Policy::Keep, 0).unwrap();
        let (_, got) = lease::reserve(config, &[(&keys, TERMS)], &how(0))
            .unwrap()
            .unwrap();
        assert_eq!(got[0].payload.as_deref(), Some(&b"{}"[..]));
        assert!(lease::ack(config, &keys, b"j", &got[0].token).unwrap());
        assert_eq!(lease::metrics(config, &keys).unwrap().leased, 0);
    }
}

#[test]
fn the_contract_holds_on_a_cluster_and_survives_a_failover() {
    let mut cluster = Cluster::start();
    let config = Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap();
    contract(&config, "before");
    scripts_ran_as_functions(&cluster);
    // Libraries flushed from every node are loaded again, on every primary.
    for node in &cluster.nodes {
        let _: RedisResult<()> = common::ask(node.port, redis::cmd("FUNCTION").arg("FLUSH"));
    }
    contract(&config, "flushed");
    scripts_ran_as_functions(&cluster);

    // The ACL user's password goes to every node; a wrong one is refused
    // without being shown.
    let wrong = Config::from_dsn(
        &cluster.dsn().replace("s3cret", "bad-pw"),
        &Defaults::default(),
    )
    .unwrap();
    let err = lock::holds(&wrong, b"lock:{x}", "t")
        .unwrap_err()
        .to_string();
    assert!(
        !err.contains("bad-pw") && err.contains("cluster 127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("authentication failed"), "{err}");

    // A waiter on one node is woken by a release published on another.
    let key = lock::Keys::named(b"", b"handoff").lock;
    let holder = redislock::token::new_token();
    assert!(common::acquired(&config, &key, &holder, Duration::from_secs(30), NO_WAIT).unwrap());
    let waiter = {
        let config = config.clone();
        let key = key.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            let wait = Wait {
                timeout: Duration::from_secs(10),
                recheck: Duration::from_secs(10),
            };
            let got = common::acquired(
                &config,
                &key,
                &redislock::token::new_token(),
                Duration::from_secs(5),
                wait,
            )
            .unwrap();
            (got, start.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(300));
    assert!(common::release(&config, &key, holder.as_bytes()).unwrap());
    let (got, waited) = waiter.join().unwrap();
    assert!(
        got && waited < Duration::from_secs(5),
        "woken by the release, not the recheck: {waited:?}"
    );

    // Waiters queue in the line beside the lock, on the lock's node, and are
    // served in arrival order; a blocked consumer is woken by an enqueue.
    let keys = lock::Keys::named(b"", b"line");
    let holder = redislock::token::new_token();
    lock::acquire(&config, &keys, &holder, Duration::from_secs(30), NO_WAIT)
        .unwrap()
        .unwrap();
    let served = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut waiters = Vec::new();
    for arrival in 0..6 {
        let line = keys.line.clone();
        common::wait_for("the line to fill", 10, || cluster.llen(&line) == arrival);
        let (config, keys, served) = (config.clone(), keys.clone(), served.clone());
        waiters.push(std::thread::spawn(move || {
            let token = redislock::token::new_token();
            let wait = Wait {
                timeout: Duration::from_secs(30),
                recheck: Duration::from_secs(10),
            };
            lock::acquire(&config, &keys, &token, Duration::from_secs(30), wait)
                .unwrap()
                .expect("served");
            served.lock().unwrap().push(arrival);
            assert!(lock::release(&config, &keys, token.as_bytes()).unwrap());
        }));
    }
    common::wait_for("the line to fill", 10, || cluster.llen(&keys.line) == 6);
    assert!(lock::release(&config, &keys, holder.as_bytes()).unwrap());
    for w in waiters {
        w.join().unwrap();
    }
    assert_eq!(*served.lock().unwrap(), (0..6).collect::<Vec<i64>>());
    let queue_keys = Keys::new(b"", b"wake");
    let consumer = {
        let (config, queue_keys) = (config.clone(), queue_keys.clone());
        std::thread::spawn(move || lease::reserve(&config, &[(&queue_keys, TERMS)], &how(20_000)))
    };
    common::wait_for("the consumer in line", 10, || {
        cluster.llen(&queue_keys.line) == 1
    });
    let task = NewTask {
        id: b"t".to_vec(),
        payload: None,
    };
    queue::put(&config, &queue_keys, &[task], 0.0, Policy::Keep, 0).unwrap();
    let (_, tasks) = consumer
        .join()
        .unwrap()
        .unwrap()
        .expect("woken by the enqueue");
    assert_eq!(tasks[0].id, b"t");

    // Kill the primary that holds a lock; once its replica is promoted, the
    // same pooled connection's next calls reach the new primary.
    let key = lock::Keys::named(b"", b"failover").lock;
    let token = redislock::token::new_token();
    assert!(common::acquired(&config, &key, &token, Duration::from_secs(60), NO_WAIT).unwrap());
    let name = std::str::from_utf8(&key).unwrap();
    let primary = cluster.primary_of(name).unwrap();
    cluster.nodes[primary].stop();
    common::wait_for("the replica's promotion", 30, || {
        cluster.primary_of(name).is_some()
    });
    cluster.wait_until_ok();
    // The first call may still use the pooled connection to the dead node:
    // its outcome is unknown, so it fails as a connection error. Then calls
    // resume.
    match lock::holds(&config, &key, &token) {
        Ok(held) => assert!(held),
        Err(e) => assert!(matches!(e, Error::Connection { .. }), "{e}"),
    }
    let held = lock::holds(&config, &key, &token).unwrap();
    // Replication is asynchronous: the lock survives unless the write had
    // not reached the replica (it had, WAIT-free but seconds ago).
    assert!(held, "the promoted replica has the lock");
    assert!(common::release(&config, &key, token.as_bytes()).unwrap());
    contract(&config, "after");
    scripts_ran_as_functions(&cluster);
}

/// On Redis 7 and later the scripts ran as functions on the cluster's
/// nodes, none with `EVALSHA`, and each live primary has the libraries.
fn scripts_ran_as_functions(cluster: &Cluster) {
    if common::features().version.0 < 7 {
        return;
    }
    let live = || cluster.nodes.iter().filter(|n| n.pid() != 0);
    let fcalls: u64 = live().map(|n| n.calls(&["fcall"])).sum();
    let evals: u64 = live().map(|n| n.calls(&["evalsha", "eval"])).sum();
    assert!(fcalls > 0 && evals == 0, "{fcalls} FCALL, {evals} EVALSHA");
    for node in live() {
        let role: String = common::ask(node.port, redis::cmd("INFO").arg("replication")).unwrap();
        let libraries: Vec<redis::Value> = common::ask(
            node.port,
            redis::cmd("FUNCTION")
                .arg("LIST")
                .arg("LIBRARYNAME")
                .arg("redislock_*"),
        )
        .unwrap();
        if role.contains("role:master") {
            assert!(
                libraries.len() >= 4,
                "{} libraries on a primary",
                libraries.len()
            );
        }
    }
}

#[test]
fn a_tls_cluster_with_an_acl_user() {
    if !common::has(common::features().tls, "TLS (built without it)") {
        return;
    }
    let certs = std::env::temp_dir().join(format!(
        "redislock-test-{}-cluster-certs",
        std::process::id()
    ));
    std::fs::create_dir_all(&certs).unwrap();
    common::make_certs(&certs);
    let cluster = Cluster::start_with_tls(Some(&certs));
    let hosts: Vec<String> = cluster
        .tls_ports
        .iter()
        .map(|p| format!("127.0.0.1:{p}"))
        .collect();
    let dsn = format!(
        "rediss+cluster://app:s3cret@{}?timeout=1&read_timeout=1&tls_ca={}",
        hosts.join(","),
        certs.join("ca.crt").display()
    );
    let config = Config::from_dsn(&dsn, &Defaults::default()).unwrap();
    contract(&config, "tls");
    let _ = std::fs::remove_dir_all(&certs);
}

/// A cluster DSN that names a server without cluster mode fails saying so
/// (the crate says only "No connections found").
#[test]
fn a_cluster_dsn_for_a_server_without_cluster_mode_says_so() {
    let server = common::RedisServer::start();
    let dsn = format!(
        "redis+cluster://127.0.0.1:{}?timeout=1&read_timeout=1",
        server.port
    );
    let config = Config::from_dsn(&dsn, &Defaults::default()).unwrap();
    let err = lock::holds(&config, b"k", "t").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Connection { .. }), "{text}");
    assert!(
        text.contains(&format!(
            "not a cluster: 127.0.0.1:{} answered CLUSTER MYID with 'ERR ",
            server.port
        )),
        "{text}"
    );
    // In the server's own words (Redis: "This instance has cluster support
    // disabled").
    let refused =
        common::ask::<String>(server.port, redis::cmd("CLUSTER").arg("MYID")).unwrap_err();
    assert!(text.contains(refused.detail().unwrap()), "{text}");
}

/// No seed node answers: each is named with why, in words (the crate's
/// "It failed to check startup nodes.: ... - Io" without its kind and stop).
#[test]
fn a_cluster_whose_seed_nodes_all_refuse_names_each() {
    // Ports nothing listens on, whatever runs beside: a free port picked
    // now can be a server of another test by the time it is dialed (CI
    // runs the suites side by side), and then it does not refuse.
    let (a, b) = (1, 2);
    let dsn = format!("redis+cluster://127.0.0.1:{a},127.0.0.1:{b}?timeout=0.5&read_timeout=0.5");
    let config = Config::from_dsn(&dsn, &Defaults::default()).unwrap();
    let text = lock::holds(&config, b"k", "t").unwrap_err().to_string();
    assert!(text.contains("startup nodes: "), "{text}");
    assert!(!text.contains(".:") && !text.contains(" - Io"), "{text}");
    for port in [a, b] {
        assert!(
            text.contains(&format!("127.0.0.1:{port}: Connection refused")),
            "{text}"
        );
    }
}

/// One stock in 8 shards: the shards lie on every primary, none holding
/// more than 3 of them; 8 threads of buyers (each thread its own
/// connections) take all of it, one unit at a time, with a limit per
/// buyer: not one unit oversold, none stranded, no buyer past its limit.
#[test]
fn a_sharded_stock_spreads_over_the_primaries_and_sells_each_unit_once() {
    use redislock::stock::{Stock, Take, Taken};
    let cluster = Cluster::start();
    let config =
        std::sync::Arc::new(Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap());
    let stock = Stock::sharded(config.clone(), b"sale".to_vec(), 8).unwrap();
    let mut per_primary = [0; 6];
    for shard in stock.shards() {
        per_primary[cluster
            .primary_of(std::str::from_utf8(&shard.stock).unwrap())
            .unwrap()] += 1;
    }
    let used: Vec<i32> = per_primary.into_iter().filter(|&n| n > 0).collect();
    assert_eq!(used.len(), 3, "{per_primary:?}");
    assert!(used.iter().all(|&n| n <= 3), "{per_primary:?}");

    const UNITS: u64 = 500;
    const PER_BUYER: u64 = 3;
    stock.set(UNITS, None).unwrap();
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let config = config.clone();
            std::thread::spawn(move || {
                let stock = Stock::sharded(config, b"sale".to_vec(), 8).unwrap();
                let mut sold = 0;
                // 8 threads x 30 buyers x 3 units: 720 asked of 500.
                for round in 0..(PER_BUYER + 1) {
                    for b in 0..30 {
                        let buyer = format!("t{t}-b{b}");
                        let take = Take {
                            units: 1,
                            buyer: Some(buyer.as_bytes()),
                            per_buyer: PER_BUYER,
                            ..Take::default()
                        };
                        match stock.take(&take).unwrap() {
                            Taken::Done(_) => sold += 1,
                            Taken::Limit(n) => assert!(round == PER_BUYER && n == PER_BUYER),
                            Taken::SoldOut(_) => {}
                            other => panic!("{other:?}"),
                        }
                    }
                }
                sold
            })
        })
        .collect();
    let sold: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(sold, UNITS, "each unit sold once, and every one");
    assert_eq!(stock.remaining().unwrap(), Some(0));
    let buyers = stock.buyers().unwrap();
    assert!(buyers.iter().all(|(_, n)| *n as u64 <= PER_BUYER));
    assert_eq!(buyers.iter().map(|(_, n)| *n as u64).sum::<u64>(), UNITS);
}

/// A stock in 8 shards whose takes wait for a replica, bought by 6 threads
/// while the primary of one shard is killed (SIGKILL) and its replica
/// promoted: no take the buyers were told of is lost (each is on the new
/// primaries after the failover), and buyers told of their takes, with
/// the last ones' after it, never number more than the units.
#[test]
fn a_sharded_stock_with_replicas_loses_no_told_take_to_a_failover() {
    use redislock::stock::{Stock, Take, Taken};
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut cluster = Cluster::start();
    let config =
        std::sync::Arc::new(Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap());
    let open = |config| {
        Stock::sharded(config, b"failover".to_vec(), 8)
            .unwrap()
            .confirmed_by(1, Duration::from_secs(1))
            .cut_short_after(Duration::ZERO)
    };
    const UNITS: u64 = 3000;
    let stock = open(config.clone());
    stock.set(UNITS, None).unwrap();
    let victim = std::str::from_utf8(&stock.shards()[0].stock)
        .unwrap()
        .to_string();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let (config, stop) = (config.clone(), stop.clone());
            std::thread::spawn(move || {
                let stock = open(config);
                let (mut told, mut failed) = (Vec::new(), 0);
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    let buyer = format!("t{t}-{i}");
                    i += 1;
                    let take = Take {
                        units: 1,
                        buyer: Some(buyer.as_bytes()),
                        ..Take::default()
                    };
                    match stock.take(&take) {
                        Ok(Taken::Done(_)) => told.push(buyer),
                        Ok(Taken::SoldOut(_)) => break,
                        // Unconfirmed (undone), or the outcome unknown.
                        Ok(_) | Err(_) => failed += 1,
                    }
                    // The sale lasts past the kill and the promotion.
                    std::thread::sleep(Duration::from_millis(1));
                }
                (told, failed)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let primary = cluster.primary_of(&victim).unwrap();
    cluster.nodes[primary].stop();
    common::wait_for("the replica's promotion", 30, || {
        cluster.primary_of(&victim).is_some()
    });
    cluster.wait_until_ok();
    std::thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    let mut told = Vec::new();
    let mut failed = 0;
    for t in threads {
        let (t_told, t_failed) = t.join().unwrap();
        told.extend(t_told);
        failed += t_failed;
    }
    assert!(failed > 0, "the failover was seen by the buyers");
    // The first calls after it may still fail on a connection to the dead node.
    let mut left = None;
    for _ in 0..5 {
        if let Ok(n) = stock.remaining() {
            left = n;
            break;
        }
    }
    let left = left.expect("remaining() after the failover") as u64;
    for buyer in &told {
        assert_eq!(
            stock.bought(buyer.as_bytes()).unwrap(),
            1,
            "{buyer}: told, and kept"
        );
    }
    // Sell out: what the buyers were told of and the rest never pass the
    // units. (Without waiting for a replica: the promoted one has none.)
    let stock = Stock::sharded(config, b"failover".to_vec(), 8).unwrap();
    let mut sold = 0u64;
    loop {
        let buyer = format!("last-{sold}");
        let take = Take {
            units: 1,
            buyer: Some(buyer.as_bytes()),
            ..Take::default()
        };
        match stock.take(&take).unwrap() {
            Taken::Done(_) => sold += 1,
            Taken::SoldOut(_) => break,
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(sold, left);
    assert!(
        told.len() as u64 + sold <= UNITS,
        "{} told + {sold} > {UNITS}",
        told.len()
    );
    let bought: i64 = stock.buyers().unwrap().iter().map(|(_, n)| n).sum();
    assert!(bought as u64 <= UNITS);
}

/// A consumer of a queue in 4 partitions blocks on one partition's wake
/// list (a blocking command cannot span slots): an enqueue in any other
/// partition wakes it through the producer (`queue_relayed`), not through
/// its recheck, which here is longer than its wait.
#[test]
fn a_consumer_of_a_partitioned_queue_is_woken_from_every_partition() {
    use redislock::queue::{Queue, Tags};
    use std::sync::Arc;
    let cluster = Cluster::start();
    let config = Arc::new(Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap());
    const N: usize = 4;
    let lines: Vec<Vec<u8>> = (0..N)
        .map(|i| Keys::partition(b"", b"jobs", i, N).line)
        .collect();
    let producer = Queue::partitioned(config.clone(), b"jobs".to_vec(), N);
    // An id for each partition, in turn.
    let ids: Vec<Vec<u8>> = (0..N)
        .map(|p| {
            (0..)
                .map(|i| format!("t{i}").into_bytes())
                .find(|id| producer.partition_of(id, None) == p)
                .unwrap()
        })
        .collect();
    let consumer = std::thread::spawn(move || {
        let queue = Queue::partitioned(config, b"jobs".to_vec(), N);
        let how = Reserve {
            count: 1,
            wait: Duration::from_secs(15),
            recheck: Duration::from_secs(60),
        };
        (0..N)
            .map(|_| {
                let got = queue::reserve(&[(&queue, TERMS)], &how).unwrap();
                got.map(|(_, part, tasks)| (part, tasks[0].id.clone()))
            })
            .collect::<Vec<_>>()
    });
    for id in &ids {
        common::wait_for("the consumer waiting in every line", 20, || {
            lines.iter().all(|line| cluster.llen(line) == 1)
        });
        let task = NewTask {
            id: id.clone(),
            payload: None,
        };
        producer
            .put(&[task], 0.0, Policy::Keep, 0, &Tags::default())
            .unwrap();
    }
    let got = consumer.join().unwrap();
    let expected: Vec<Option<(usize, Vec<u8>)>> =
        ids.iter().cloned().enumerate().map(Some).collect();
    assert_eq!(
        got, expected,
        "each task reserved from its partition in time"
    );

    // The relay itself: a consumer at home in partition 0 waits in
    // partition 2's line; the enqueue there takes it out of the line and
    // pushes its wake-up to its home's wake list, in another slot.
    let (home, there) = (
        Keys::partition(b"", b"jobs", 0, N),
        Keys::partition(b"", b"jobs", 2, N),
    );
    let token = "0123456789abcdef0123456789abcdef";
    let member = format!(
        "{token}@{}",
        percent_encoding::percent_encode(&home.waiters, percent_encoding::NON_ALPHANUMERIC)
    );
    let on = |key: &[u8]| {
        let node = cluster
            .primary_of(std::str::from_utf8(key).unwrap())
            .unwrap();
        cluster.nodes[node].port
    };
    let alive = [there.waiters.as_slice(), b"a:", member.as_bytes()].concat();
    // The consumer's place in partition 2's line, as its reserve keeps it.
    let wait_there = || {
        common::ask::<()>(
            on(&alive),
            redis::cmd("SET").arg(&alive).arg("1").arg("PX").arg(10000),
        )
        .unwrap();
        common::ask::<()>(
            on(&there.line),
            redis::cmd("RPUSH").arg(&there.line).arg(&member),
        )
        .unwrap();
    };
    wait_there();
    let wake = [home.waiters.as_slice(), b"w:", token.as_bytes()].concat();
    // (Not one the consumer holds: that one would wait for its lease.)
    let fresh = (0..)
        .map(|i| format!("u{i}").into_bytes())
        .find(|id| producer.partition_of(id, None) == 2)
        .unwrap();
    assert_ne!(
        on(&wake),
        on(&there.line),
        "the wake list on another primary"
    );
    producer
        .put(
            &[NewTask {
                id: fresh,
                payload: None,
            }],
            0.0,
            Policy::Keep,
            0,
            &Tags::default(),
        )
        .unwrap();
    let woken: Vec<String> =
        common::ask(on(&wake), redis::cmd("LRANGE").arg(&wake).arg(0).arg(-1)).unwrap();
    assert_eq!(woken, ["1"], "the wake-up pushed to the consumer's home");
    assert_eq!(
        cluster.llen(&there.line),
        0,
        "taken out of the line it waited in"
    );

    // A nack there, due again now, wakes it the same way.
    let how = Reserve {
        count: 1,
        wait: Duration::ZERO,
        recheck: Duration::from_secs(1),
    };
    let (_, part, got) = queue::reserve(&[(&producer, TERMS)], &how)
        .unwrap()
        .unwrap();
    assert_eq!(part, 2, "the only task due: the one just enqueued");
    common::ask::<()>(on(&wake), redis::cmd("DEL").arg(&wake)).unwrap();
    wait_there();
    producer
        .nack(part, &got[0].id, &got[0].token, 0.0, TERMS, b"")
        .unwrap();
    let woken: Vec<String> =
        common::ask(on(&wake), redis::cmd("LRANGE").arg(&wake).arg(0).arg(-1)).unwrap();
    assert_eq!(
        woken,
        ["1"],
        "the nack's wake-up pushed to the consumer's home"
    );
}

/// A queue in 6 partitions on a Cluster whose primary serving some of them
/// is killed (SIGKILL): until its replica is promoted, reserves go on
/// taking the other partitions' tasks (a dead primary stalls only its
/// own partitions), and after it every task written before the kill is
/// reserved and acked once.
#[test]
fn a_partitioned_queue_goes_on_past_a_dead_primary() {
    use redislock::queue::{Queue, Tags};
    use std::sync::Arc;
    let mut cluster = Cluster::start();
    let config = Arc::new(Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap());
    const N: usize = 6;
    let queue = Queue::partitioned(config, b"jobs".to_vec(), N);
    let tasks: Vec<NewTask> = (0..120)
        .map(|i| NewTask {
            id: format!("t{i}").into_bytes(),
            payload: None,
        })
        .collect();
    queue
        .put(&tasks, 0.0, Policy::Keep, 0, &Tags::default())
        .unwrap();
    // Replicated before the kill (asynchronously: give it a moment).
    std::thread::sleep(Duration::from_millis(300));
    let victim = Keys::partition(b"", b"jobs", 0, N).queue;
    let victim = std::str::from_utf8(&victim).unwrap().to_string();
    let primary = cluster.primary_of(&victim).unwrap();
    let dead: Vec<usize> = (0..N)
        .filter(|&p| {
            let key = Keys::partition(b"", b"jobs", p, N).queue;
            cluster.primary_of(std::str::from_utf8(&key).unwrap()) == Some(primary)
        })
        .collect();
    cluster.nodes[primary].stop();
    // Waiting: in the lines of every partition it reaches, and out of them
    // again when it got tasks.
    let how = Reserve {
        count: 5,
        wait: Duration::from_millis(200),
        recheck: Duration::from_secs(1),
    };
    // Acks the tasks reserved from partition `part`, each once: their ids.
    // Once the dead primary's slots are marked failed (after the node
    // timeout) the whole cluster answers CLUSTERDOWN until the promotion
    // (cluster-require-full-coverage): an ack refused then ran nothing,
    // and is sent again.
    let ack_all = |part: usize, got: Vec<lease::Leased>| {
        let held: Vec<(usize, &[u8], &str)> = got
            .iter()
            .map(|t| (part, t.id.as_slice(), t.token.as_str()))
            .collect();
        let since = std::time::Instant::now();
        loop {
            match queue.ack_many(&held) {
                Ok(n) => {
                    assert_eq!(n, got.len() as u64);
                    break;
                }
                Err(e)
                    if e.to_string().contains("CLUSTERDOWN")
                        && since.elapsed() < Duration::from_secs(30) =>
                {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => panic!("an ack failed: {e}"),
            }
        }
        got.into_iter().map(|t| t.id).collect::<Vec<_>>()
    };
    let mut acked: Vec<Vec<u8>> = Vec::new();
    let mut during = 0;
    // Before the promotion: the live partitions' tasks, and none of the
    // dead one's.
    loop {
        let (part, got) = match queue::reserve(&[(&queue, TERMS)], &how) {
            Ok(Some((_, part, got))) => (part, got),
            Ok(None) => break,
            // Out of the dead primary's lines too, or the reserve fails.
            Err(e) if cluster.primary_of(&victim).is_none() => {
                panic!("a reserve failed while other partitions answered: {e}")
            }
            Err(_) => break,
        };
        // (Still dead after the reserve: it was dead all along.)
        let promoted = cluster.primary_of(&victim).is_some();
        assert!(
            promoted || !dead.contains(&part),
            "a task of a dead primary's partition"
        );
        acked.extend(ack_all(part, got));
        during += 1;
        if promoted {
            break;
        }
    }
    assert!(during > 0, "reserves went on while a primary was dead");
    common::wait_for("the replica's promotion", 30, || {
        cluster.primary_of(&victim).is_some()
    });
    cluster.wait_until_ok();
    let mut tries = 0;
    while acked.len() < tasks.len() && tries < 200 {
        tries += 1;
        match queue::reserve(&[(&queue, TERMS)], &how) {
            Ok(Some((_, part, got))) => {
                acked.extend(ack_all(part, got));
            }
            // The first calls after it may still meet the dead node.
            Ok(None) | Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    acked.sort();
    let before = acked.len();
    acked.dedup();
    assert_eq!(before, acked.len(), "a task acked twice");
    let mut all: Vec<Vec<u8>> = tasks.into_iter().map(|t| t.id).collect();
    all.sort();
    assert_eq!(acked, all, "every task written before the kill, once");
}

/// A waiting consumer of three queues on a Cluster (`Client::reserve()`),
/// one of them on a primary that died: it joins the first's line, passes
/// over the dead one instead of failing, takes the third's task, and
/// leaves the first's line.
#[test]
fn a_reserve_leaves_its_lines_past_a_dead_primary() {
    use redislock::queue::Tags;
    let mut cluster = Cluster::start();
    let config = Config::from_dsn(&cluster.dsn(), &Defaults::default()).unwrap();
    // Three names on three primaries: empty, dead, with a task.
    let mut names: Vec<(String, usize)> = Vec::new();
    for i in 0.. {
        let name = format!("q{i}");
        let key = Keys::new(b"", name.as_bytes()).queue;
        let primary = cluster
            .primary_of(std::str::from_utf8(&key).unwrap())
            .unwrap();
        if names.iter().all(|(_, p)| *p != primary) {
            names.push((name, primary));
        }
        if names.len() == 3 {
            break;
        }
    }
    let keys: Vec<Keys> = names
        .iter()
        .map(|(n, _)| Keys::new(b"", n.as_bytes()))
        .collect();
    let task = NewTask {
        id: b"t".to_vec(),
        payload: None,
    };
    queue::put_tagged(
        &config,
        &keys[2],
        &[task],
        0.0,
        Policy::Keep,
        0,
        &Tags::default(),
    )
    .unwrap();
    cluster.nodes[names[1].1].stop();
    let how = Reserve {
        count: 1,
        wait: Duration::from_millis(500),
        recheck: Duration::from_secs(1),
    };
    let queues: Vec<(&Keys, Terms)> = keys.iter().map(|k| (k, TERMS)).collect();
    let got = lease::reserve(&config, &queues, &how).unwrap();
    let (index, tasks) = got.expect("the third queue's task");
    assert_eq!((index, tasks[0].id.as_slice()), (2, b"t".as_slice()));
    assert_eq!(cluster.llen(&keys[0].line), 0, "it left the first line");
}
