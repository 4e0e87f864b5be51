//! The stock engine's take with an order task, against a real redis-server.

use std::sync::Arc;

use crate::common::RedisServer;
use redislock::conn::Error;
use redislock::queue::Keys as QueueKeys;
use redislock::queue::lease::{self, Reserve, Terms};
use redislock::stock::{self, Stock, Take, Taken};

/// A stock `{s}` of 10 units whose takes enqueue on `{s}:orders`, after one
/// take (its buyer, its idempotency key and its order task exist).
fn sale(server: &RedisServer) -> (Stock, stock::Keys, QueueKeys) {
    redis::cmd("FLUSHALL")
        .query::<()>(&mut server.client())
        .unwrap();
    let config = Arc::new(server.config());
    let stock = Stock::new(config, b"{s}".to_vec(), Some(b"{s}:orders".to_vec())).unwrap();
    stock.set(10, None).unwrap();
    let first = Take {
        units: 1,
        buyer: Some(b"buyer"),
        per_buyer: 5,
        key: Some(b"k0"),
        payload: Some(b"p0"),
        ..Take::default()
    };
    assert_eq!(stock.take(&first).unwrap(), Taken::Done(9));
    (
        stock,
        stock::Keys::new(b"", b"{s}"),
        QueueKeys::new(b"", b"{s}:orders"),
    )
}

/// Each key a take with its order reads or writes, of the wrong type,
/// fails the take before it changes anything: with and without a payload,
/// with and without a consumer waiting.
#[test]
fn a_take_with_its_order_refuses_a_key_of_the_wrong_type_before_it_writes() {
    let server = RedisServer::start();
    let (_, keys, q) = sale(&server);
    let roles: [(&str, &[u8]); 9] = [
        ("stock", &keys.stock),
        ("buyers", &keys.buyers),
        ("takes", &keys.takes),
        ("queue", &q.queue),
        ("payloads", &q.payloads),
        ("attempts", &q.attempts),
        ("leased", &q.leased),
        ("line", &q.line),
        ("stats", &q.stats),
    ];
    for consumer in [false, true] {
        for payload in [None, Some(&b"p1"[..])] {
            for (role, key) in roles {
                let (stock, _, q) = sale(&server);
                if consumer {
                    server.consumer_in_line(&q.line, &q.waiters, "consumer");
                }
                server.by_hand(key);
                let before = server.snapshot();
                let take = Take {
                    units: 1,
                    buyer: Some(b"buyer"),
                    per_buyer: 5,
                    key: Some(b"k1"),
                    payload,
                    ..Take::default()
                };
                match stock.take(&take) {
                    // Named, whether a check or a command's own WRONGTYPE
                    // refused it.
                    Err(Error::Server { cause, .. }) => assert!(
                        cause.starts_with(&format!(
                            "WRONGTYPE key {} holds ",
                            String::from_utf8_lossy(key)
                        )),
                        "take with the {role} a string: {cause}"
                    ),
                    other => panic!("take with the {role} a string: {other:?}"),
                }
                assert!(
                    before == server.snapshot(),
                    "take failed on the {role} but changed Redis (consumer {consumer}, payload {payload:?})"
                );
            }
        }
    }
}

/// The order task is new whatever its id held before: no payload or
/// attempts of an earlier task of the same id; and it wakes the consumer
/// in line.
#[test]
fn a_takes_order_task_starts_anew_and_wakes_a_consumer() {
    let server = RedisServer::start();
    let (stock, _, q) = sale(&server);
    let mut c = server.client();
    for (key, value) in [(&q.payloads, "old"), (&q.attempts, "3")] {
        redis::cmd("HSET")
            .arg(key)
            .arg("order")
            .arg(value)
            .query::<()>(&mut c)
            .unwrap();
    }
    let wake = server.consumer_in_line(&q.line, &q.waiters, "consumer");
    let take = Take {
        units: 2,
        task: Some(b"order"),
        ..Take::default()
    };
    assert_eq!(stock.take(&take).unwrap(), Taken::Done(7));
    assert_eq!(
        server.list(&wake),
        [b"1".to_vec()],
        "the consumer in line is woken"
    );

    let how = Reserve {
        count: 10,
        wait: std::time::Duration::ZERO,
        recheck: std::time::Duration::from_secs(1),
    };
    let terms = Terms::own(std::time::Duration::from_secs(30), 0);
    let (_, tasks) = lease::reserve(&server.config(), &[(&q, terms)], &how)
        .unwrap()
        .unwrap();
    let order = tasks.iter().find(|t| t.id == b"order").unwrap();
    assert_eq!((order.payload.as_deref(), order.attempts), (None, 1));
}

/// A buyer's record or the stock holding what Redis does not count as a
/// whole number (written by hand: text, or '2.0'), or a count too large to
/// count on: a take for that buyer
/// fails naming the key, with or without a limit per buyer, and changes
/// nothing (before, '2.0' passed the check and failed the increment after
/// the take's first writes).
#[test]
fn a_buyer_record_or_stock_that_is_not_a_number_fails_the_take_before_it_writes() {
    let server = RedisServer::start();
    // ('2.0': a whole number to Lua, not to Redis' HINCRBY or DECRBY; the
    // stock too, which the take decrements after it enqueued the order.)
    // (A count at 9e18 or past it is whole, but too large to count on.)
    let (whole, large) = ("not a whole number", "too large a count");
    for (per_buyer, written, stock_too, what) in [
        (0, "many", false, whole),
        (5, "many", false, whole),
        (5, "2.0", false, whole),
        (0, "2.0", true, whole),
        (5, "9223372036854775807", false, large),
        (0, "-9000000000000000000", true, large),
    ] {
        let (stock, keys, _) = sale(&server);
        let key = if stock_too { &keys.stock } else { &keys.buyers };
        let mut by_hand = redis::cmd(if stock_too { "SET" } else { "HSET" });
        by_hand.arg(key);
        if !stock_too {
            by_hand.arg("buyer");
        }
        by_hand
            .arg(written)
            .query::<()>(&mut server.client())
            .unwrap();
        let before = server.snapshot();
        let take = Take {
            units: 1,
            buyer: Some(b"buyer"),
            per_buyer,
            ..Take::default()
        };
        match stock.take(&take) {
            Err(Error::Server { cause, .. }) => assert!(
                cause.contains(&format!(
                    "key {} holds \"{written}\", {what}",
                    String::from_utf8_lossy(key)
                )),
                "limit {per_buyer}: {cause}"
            ),
            other => panic!("limit {per_buyer}: {other:?}"),
        }
        assert!(
            before == server.snapshot(),
            "limit {per_buyer}: Redis changed"
        );
    }
}

/// A stock's keys of another type (written by hand): giving units back
/// fails naming the key, and changes nothing; setting a sale starts it anew
/// (it replaces the stock and forgets the buyers and takes, whatever they
/// held).
#[test]
fn set_and_give_back_name_a_key_of_the_wrong_type() {
    let server = RedisServer::start();
    let (stock, keys, _) = sale(&server);
    for (role, key) in [
        ("stock", &keys.stock),
        ("buyers", &keys.buyers),
        ("takes", &keys.takes),
    ] {
        for call in ["set", "give back"] {
            let _: () = redis::cmd("FLUSHALL").query(&mut server.client()).unwrap();
            stock.set(10, None).unwrap();
            let _: () = redis::pipe()
                .cmd("DEL")
                .arg(key)
                .cmd("RPUSH")
                .arg(key)
                .arg("x")
                .query(&mut server.client())
                .unwrap();
            let before = server.snapshot();
            let done = match call {
                "set" => stock.set(5, None).map(drop),
                _ => stock.give_back(1, Some(b"buyer")).map(drop),
            };
            match done {
                Err(Error::Server { cause, .. }) => {
                    assert!(
                        cause.starts_with(&format!(
                            "WRONGTYPE key {} holds a list",
                            String::from_utf8_lossy(key)
                        )),
                        "{call} with the {role} a list: {cause}"
                    );
                    assert!(
                        before == server.snapshot(),
                        "{call} failed on the {role} but changed Redis"
                    );
                }
                // A sale set anew, or a call that does not read the key.
                Ok(()) => assert!(
                    call == "set" || role == "takes",
                    "{call} with the {role} a list worked"
                ),
                Err(e) => panic!("{call} with the {role} a list: {e}"),
            }
        }
    }
}

/// A stock's keys written by hand (a stock or a buyer's units that are not
/// a whole number, a key of another type): the reads fail naming the key,
/// as a server error (before, text was a reply the extension could not
/// read, told as Redis being unavailable).
#[test]
fn the_reads_name_a_key_written_by_hand() {
    let server = RedisServer::start();
    let (stock, keys, _) = sale(&server);
    let stock_key = String::from_utf8_lossy(&keys.stock).into_owned();
    let buyers_key = String::from_utf8_lossy(&keys.buyers).into_owned();
    let cases: [(&str, redis::Pipeline, String); 3] = [
        (
            "stock text",
            redis::pipe()
                .cmd("SET")
                .arg(&keys.stock)
                .arg("many")
                .clone(),
            format!("WRONGTYPE key {stock_key} holds \"many\", not a whole number"),
        ),
        (
            "stock a list",
            redis::pipe()
                .cmd("DEL")
                .arg(&keys.stock)
                .cmd("RPUSH")
                .arg(&keys.stock)
                .arg("x")
                .clone(),
            format!("WRONGTYPE key {stock_key} holds a list, where redislock keeps a string"),
        ),
        (
            "a buyer's units text",
            redis::pipe()
                .cmd("HSET")
                .arg(&keys.buyers)
                .arg("buyer")
                .arg("lots")
                .clone(),
            format!("WRONGTYPE key {buyers_key} holds \"lots\", not a whole number"),
        ),
    ];
    for (case, write, named) in cases {
        let _: () = redis::cmd("FLUSHALL").query(&mut server.client()).unwrap();
        stock.set(10, None).unwrap();
        let _: () = write.query(&mut server.client()).unwrap();
        let before = server.snapshot();
        let reads = [
            (
                "remaining",
                stock.remaining().map(drop),
                case.starts_with("stock"),
            ),
            (
                "bought",
                stock.bought(b"buyer").map(drop),
                !case.starts_with("stock"),
            ),
            (
                "buyers",
                stock.buyers().map(drop),
                !case.starts_with("stock"),
            ),
        ];
        for (read, done, reads_it) in reads {
            match done {
                Err(Error::Server { cause, .. }) => {
                    assert!(reads_it, "{read}, {case}: failed: {cause}");
                    assert!(cause.starts_with(&named), "{read}, {case}: {cause}");
                }
                Ok(()) => assert!(!reads_it, "{read}, {case}: worked"),
                Err(e) => panic!("{read}, {case}: not a server error: {e}"),
            }
        }
        assert!(before == server.snapshot(), "{case}: Redis changed");
    }
}

/// An order task taken into a queue that has groups is the group ''s, and
/// counted there (see `lease::groups`).
#[test]
fn an_order_into_a_grouped_queue_is_counted_in_the_null_group() {
    let server = RedisServer::start();
    let (stock, _, q) = sale(&server);
    let config = server.config();
    let tags = redislock::queue::Tags::default()
        .with_group(b"vip")
        .unwrap();
    let task = redislock::queue::NewTask {
        id: b"v1".to_vec(),
        payload: None,
    };
    redislock::queue::put_tagged(
        &config,
        &q,
        &[task],
        0.0,
        redislock::queue::Policy::Keep,
        0,
        &tags,
    )
    .unwrap();
    let take = Take {
        units: 1,
        task: Some(b"o2"),
        ..Take::default()
    };
    assert_eq!(stock.take(&take).unwrap(), Taken::Done(8));
    let queued: Vec<(Vec<u8>, u64)> = lease::groups(&config, &q, 10)
        .unwrap()
        .into_iter()
        .map(|g| (g.name, g.queued))
        .collect();
    assert_eq!(queued, [(b"".to_vec(), 2), (b"vip".to_vec(), 1)]);
}

/// The server's clock in ms, as the move scripts write it.
fn now_ms(server: &RedisServer) -> u64 {
    let (s, us): (u64, u64) = redis::cmd("TIME").query(&mut server.client()).unwrap();
    s * 1000 + us / 1000
}

/// A move out of `from` toward `to` that a crash cut short after its first
/// step: the units are off `from` and in its journal. With `applied`, the
/// crash came after the second step too: `to` has them and remembers the
/// move, and only the journal entry is left.
fn cut_short(
    server: &RedisServer,
    shards: &[stock::Keys],
    id: &str,
    (from, to): (usize, usize),
    units: u64,
    applied: bool,
) {
    let mut c = server.client();
    let now = now_ms(server);
    redis::cmd("DECRBY")
        .arg(&shards[from].stock)
        .arg(units)
        .query::<i64>(&mut c)
        .unwrap();
    redis::cmd("HSET")
        .arg(&shards[from].moves)
        .arg(id)
        .arg(format!("{to} {units} {now}"))
        .query::<i64>(&mut c)
        .unwrap();
    if applied {
        redis::cmd("INCRBY")
            .arg(&shards[to].stock)
            .arg(units)
            .query::<i64>(&mut c)
            .unwrap();
        redis::cmd("ZADD")
            .arg(&shards[to].received)
            .arg(now)
            .arg(format!("{id}:{from}"))
            .query::<i64>(&mut c)
            .unwrap();
    }
}

fn journals(server: &RedisServer, shards: &[stock::Keys]) -> i64 {
    let mut c = server.client();
    shards
        .iter()
        .map(|s| {
            redis::cmd("HLEN")
                .arg(&s.moves)
                .query::<i64>(&mut c)
                .unwrap()
        })
        .sum()
}

/// Moves between shards cut short by a crash, after either step, lose no
/// unit and add none: `remaining()` finishes them and counts each unit
/// once, and a take that passes a journal finishes what it finds there.
#[test]
fn a_sharded_stock_loses_and_doubles_no_unit_when_a_move_is_cut_short() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    for finish_by_take in [false, true] {
        let stock = Stock::sharded(config.clone(), b"cut".to_vec(), 4)
            .unwrap()
            .cut_short_after(std::time::Duration::ZERO);
        let shards = stock.shards().to_vec();
        assert_eq!(shards.len(), 4);
        stock.set(40, None).unwrap();
        cut_short(&server, &shards, "m1", (1, 0), 5, false);
        cut_short(&server, &shards, "m2", (2, 0), 3, true);
        cut_short(&server, &shards, "m3", (3, 2), 4, false);
        assert_eq!(journals(&server, &shards), 3);
        if !finish_by_take {
            assert_eq!(stock.remaining().unwrap(), Some(40));
            assert_eq!(journals(&server, &shards), 0);
            // Finished twice (its journal entry read before it was
            // cleared, and finished again): added once.
            redis::cmd("HSET")
                .arg(&shards[2].moves)
                .arg("m2")
                .arg(format!("0 3 {}", now_ms(&server)))
                .query::<i64>(&mut server.client())
                .unwrap();
            assert_eq!(stock.remaining().unwrap(), Some(40));
        }
        // Every unit is sold, one at a time by buyers routed to every
        // shard, and not one more.
        let mut sold = 0;
        for i in 0..100 {
            let buyer = format!("b{i}");
            let take = Take {
                units: 1,
                buyer: Some(buyer.as_bytes()),
                ..Take::default()
            };
            if let Taken::Done(_) = stock.take(&take).unwrap() {
                sold += 1;
            }
        }
        assert_eq!(sold, 40, "finished by a take: {finish_by_take}");
        assert_eq!(stock.remaining().unwrap(), Some(0));
        assert_eq!(journals(&server, &shards), 0);
        let bought: i64 = stock.buyers().unwrap().iter().map(|(_, n)| n).sum();
        assert_eq!(bought, 40);
        assert!(stock.delete().unwrap());
        assert_eq!(stock.remaining().unwrap(), None);
    }
}

/// A take larger than any one shard gathers units from the others, a
/// refusal comes only when all the shards together hold too few, and the
/// buyer's limit, its count and an idempotency key hold across shards.
#[test]
fn a_sharded_stock_takes_across_shards_and_keeps_buyers_and_keys() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let stock = Stock::sharded(config, b"big".to_vec(), 8).unwrap();
    stock.set(20, None).unwrap();
    let take = |units, buyer: &'static str, key: Option<&'static str>, per_buyer| Take {
        units,
        buyer: Some(buyer.as_bytes()),
        key: key.map(str::as_bytes),
        per_buyer,
        ..Take::default()
    };
    assert_eq!(
        stock.take(&take(21, "ann", None, 0)).unwrap(),
        Taken::SoldOut(20)
    );
    assert_eq!(stock.remaining().unwrap(), Some(20));
    assert_eq!(
        stock.take(&take(12, "ann", Some("k"), 15)).unwrap(),
        Taken::Done(8)
    );
    assert_eq!(
        stock.take(&take(12, "ann", Some("k"), 15)).unwrap(),
        Taken::Before(8)
    );
    assert_eq!(
        stock.take(&take(4, "ann", None, 15)).unwrap(),
        Taken::Limit(12)
    );
    assert_eq!(stock.bought(b"ann").unwrap(), 12);
    assert_eq!(
        stock.take(&take(8, "bob", None, 0)).unwrap(),
        Taken::Done(0)
    );
    assert_eq!(
        stock.take(&take(1, "cat", None, 0)).unwrap(),
        Taken::SoldOut(0)
    );
    assert_eq!(
        stock.give_back(2, Some(b"ann")).unwrap(),
        stock::Given::Done(2)
    );
    assert_eq!(stock.bought(b"ann").unwrap(), 10);
    assert_eq!(
        stock.take(&take(2, "cat", None, 0)).unwrap(),
        Taken::Done(0)
    );
    assert_eq!(stock.remaining().unwrap(), Some(0));
    let mut buyers = stock.buyers().unwrap();
    buyers.sort();
    assert_eq!(
        buyers,
        [
            (b"ann".to_vec(), 10),
            (b"bob".to_vec(), 8),
            (b"cat".to_vec(), 2)
        ]
    );
}

/// A stock in 8 shards with orders: a take that needs units of other
/// shards moves them first, then takes and enqueues its order task in one
/// step; a take refused enqueues nothing; an idempotency key takes and
/// enqueues once.
#[test]
fn a_sharded_stocks_take_with_units_moved_enqueues_its_order_once() {
    use redislock::queue::Queue;
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let stock = Stock::sharded(config.clone(), b"{big}".to_vec(), 8)
        .unwrap()
        .with_orders(b"{big}:orders".to_vec())
        .unwrap();
    let orders = Queue::partitioned(config, b"{big}:orders".to_vec(), 8);
    stock.set(20, None).unwrap();
    let take = |units, key: Option<&'static str>| Take {
        units,
        buyer: Some(b"ann"),
        key: key.map(str::as_bytes),
        ..Take::default()
    };
    // 12 units: more than ann's shard holds (20 over 8 shards).
    // (A take says what its shard has left.)
    let Taken::Done(left) = stock.take(&take(12, Some("k"))).unwrap() else {
        panic!("the take of 12 of 20")
    };
    assert_eq!(stock.remaining().unwrap(), Some(8));
    assert_eq!(
        stock.take(&take(12, Some("k"))).unwrap(),
        Taken::Before(left)
    );
    assert!(matches!(
        stock.take(&take(9, None)).unwrap(),
        Taken::SoldOut(_)
    ));
    assert!(matches!(
        stock.take(&take(8, None)).unwrap(),
        Taken::Done(0)
    ));
    assert_eq!(stock.remaining().unwrap(), Some(0));
    let metrics = orders.metrics().unwrap();
    assert_eq!(metrics.ready, 2, "two takes, two order tasks");
    let home = redislock::keys::spread(b"ann", 8);
    assert_eq!(
        orders.partition_metrics().unwrap()[home].ready,
        2,
        "in ann's shard's partition"
    );
    assert!(
        orders.find(b"k").unwrap().is_some(),
        "the keyed take's task"
    );
}
