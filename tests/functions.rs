//! The scripts as Redis functions (`FCALL`, Redis 7 and later), and the
//! `EVALSHA` they fall back to: without functions (or with `FCALL` renamed
//! away), for a user the ACL keeps from them, after `FUNCTION FLUSH`, on a
//! server past its `maxmemory`, and on a read-only replica.

use std::time::Duration;

use crate::common;
use crate::common::{NO_WAIT, RedisServer};
use redislock::config::{Config, Defaults};
use redislock::lock::inspect::{self, Kind};
use redislock::{queue, token};

const LEASE: Duration = Duration::from_secs(30);

fn functions() -> bool {
    common::features().version.0 >= 7
}

/// A fenced lock taken, looked at (with a semaphore, in one pipeline) and
/// released, and a task enqueued and popped: six scripts (a fenced lock's
/// acquire is a script too).
fn work(config: &Config, name: &str) {
    let key = format!("lock:{{{name}}}");
    let token = token::new_token();
    assert!(common::acquired(config, key.as_bytes(), &token, LEASE, NO_WAIT).unwrap());
    let looked = [Kind::Lock, Kind::Semaphore].map(|kind| (kind, name.as_bytes().to_vec()));
    let states = inspect::states(config, &looked).unwrap();
    assert_eq!(states[0].token.as_deref(), Some(token.as_bytes()));
    assert_eq!(states[1].holders, 0);
    assert!(common::release(config, key.as_bytes(), token.as_bytes()).unwrap());
    let keys = queue::Keys::new(b"", name.as_bytes());
    assert_eq!(
        queue::enqueue(config, &keys, &[b"t".to_vec()], 0.0).unwrap(),
        1
    );
    let popped = queue::pop(config, &keys, 1).unwrap();
    assert_eq!(popped.len(), 1);
    assert_eq!(popped[0].id, b"t");
}

fn libraries(server: &RedisServer) -> usize {
    let list: Vec<redis::Value> = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg("redislock_*")
        .query(&mut server.client())
        .unwrap();
    list.len()
}

#[test]
fn scripts_run_as_functions_where_the_server_has_them() {
    let server = RedisServer::start();
    work(&server.config(), "f");
    let (fcalls, evals) = (server.calls(&["fcall"]), server.calls(&["evalsha", "eval"]));
    if functions() {
        assert!(fcalls >= 6, "{fcalls} FCALLs");
        assert_eq!(evals, 0, "no EVALSHA where the server has functions");
        // The lock's acquire, inspection and release, the semaphore's
        // inspection, the queue's enqueue and pop.
        assert_eq!(libraries(&server), 6);
    } else {
        assert_eq!(fcalls, 0);
        assert!(evals >= 6, "{evals} scripts with EVALSHA");
    }
}

#[test]
fn a_connection_asks_about_functions_once_in_its_handshake() {
    let server = RedisServer::start();
    let config = server.config();
    work(&config, "once");
    work(&config, "twice");
    // Redis 6 counts nothing: it does not know the commands.
    let asked = server.calls(&["function|list"]);
    assert!(asked <= 1, "{asked} FUNCTION LIST for one connection");
    assert_eq!(asked, u64::from(functions()));
    // Redis 6 counts CLIENT without its subcommand, the harness's too.
    if functions() {
        assert_eq!(server.calls(&["client|setname"]), 1);
    }
}

#[test]
fn a_server_that_renamed_fcall_away_runs_the_scripts_with_evalsha() {
    if !common::has(functions(), "Redis functions") {
        return;
    }
    let server = RedisServer::start_with(|_, _| {
        ["--rename-command", "FCALL", ""].map(String::from).to_vec()
    });
    let config = server.config();
    work(&config, "renamed");
    // Keys that are not text: an unknown FCALL's error would quote them.
    let keys = queue::Keys::new(b"", b"\xff\xfe\x00q");
    assert_eq!(
        queue::enqueue(&config, &keys, &[b"\xff".to_vec()], 0.0).unwrap(),
        1
    );
    assert_eq!(queue::pop(&config, &keys, 1).unwrap()[0].id, b"\xff");
    assert!(server.calls(&["evalsha", "eval"]) >= 8);
    assert_eq!(libraries(&server), 0);
}

#[test]
fn a_flushed_library_is_loaded_again() {
    if !common::has(functions(), "Redis functions") {
        return;
    }
    let server = RedisServer::start();
    let config = server.config();
    work(&config, "a");
    let _: () = redis::cmd("FUNCTION")
        .arg("FLUSH")
        .query(&mut server.client())
        .unwrap();
    assert_eq!(libraries(&server), 0);
    work(&config, "b");
    assert_eq!(libraries(&server), 6);
    assert_eq!(server.calls(&["evalsha", "eval"]), 0);
}

#[test]
fn a_user_kept_from_functions_runs_the_scripts_with_evalsha() {
    if !common::has(functions(), "Redis functions") {
        return;
    }
    let server = RedisServer::start_with(|_, _| {
        let mut args = common::acl_user();
        // app may call functions, not list or load them; old may not call
        // them either.
        args.push("-function".into());
        args.extend(
            [
                "--user",
                "old",
                "on",
                ">s3cret",
                "~*",
                "+@all",
                "-fcall",
                "-function",
            ]
            .map(String::from),
        );
        args
    });
    let as_user = |user: &str| {
        Config::from_dsn(
            &format!(
                "redis://{user}:s3cret@127.0.0.1:{}?timeout=1&read_timeout=1",
                server.port
            ),
            &Defaults::default(),
        )
        .unwrap()
    };
    work(&as_user("old"), "old");
    assert_eq!(server.calls(&["fcall"]), 0);
    let evals = server.calls(&["evalsha", "eval"]);
    assert!(evals >= 6, "{evals} scripts with EVALSHA");
    work(&as_user("app"), "app");
    assert!(
        server.calls(&["evalsha", "eval"]) >= evals + 6,
        "not allowed to ask: EVALSHA"
    );
    assert_eq!(libraries(&server), 0);
}

#[test]
fn past_maxmemory_what_frees_runs_and_what_adds_is_refused() {
    let server = RedisServer::start();
    let config = server.config();
    work(&config, "warm");
    let (a, b) = (token::new_token(), token::new_token());
    assert!(common::acquired(&config, b"lock:{a}", &a, LEASE, NO_WAIT).unwrap());
    assert!(common::acquired(&config, b"lock:{b}", &b, LEASE, NO_WAIT).unwrap());
    let keys = queue::Keys::new(b"", b"m");
    queue::enqueue(&config, &keys, &[b"t".to_vec()], 0.0).unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("maxmemory")
        .arg(1)
        .query(&mut server.client())
        .unwrap();
    let before = server.snapshot();
    let other = token::new_token();
    let refused = common::acquired(&config, b"lock:{n}", &other, LEASE, NO_WAIT).unwrap_err();
    assert!(refused.to_string().contains("OOM"), "{refused}");
    let refused = queue::enqueue(&config, &keys, &[b"u".to_vec()], 0.0).unwrap_err();
    assert!(refused.to_string().contains("OOM"), "{refused}");
    assert_eq!(server.snapshot(), before, "a refused call writes nothing");
    assert!(common::release(&config, b"lock:{a}", a.as_bytes()).unwrap());
    assert_eq!(server.pttl("lock:{a}"), -2);
    // Without its library, which cannot be loaded past maxmemory, a call
    // that frees runs with EVALSHA.
    if functions() {
        let _: () = redis::cmd("FUNCTION")
            .arg("FLUSH")
            .query(&mut server.client())
            .unwrap();
    }
    assert!(common::release(&config, b"lock:{b}", b.as_bytes()).unwrap());
    assert_eq!(server.pttl("lock:{b}"), -2);
    let popped = queue::pop(&config, &keys, 1).unwrap();
    assert_eq!(popped.len(), 1, "a pop frees");
}

#[test]
fn a_replica_runs_the_scripts_that_only_read() {
    let primary = RedisServer::start();
    let replica = RedisServer::start_with(|_, _| {
        vec![
            "--replicaof".into(),
            "127.0.0.1".into(),
            primary.port.to_string(),
        ]
    });
    let token = token::new_token();
    let (on_primary, on_replica) = (primary.config(), replica.config());
    assert!(common::acquired(&on_primary, b"lock:{r}", &token, LEASE, NO_WAIT).unwrap());
    common::wait_for("the replica to have the lock", 10, || {
        replica.pttl("lock:{r}") > 0
    });
    // A replica loads no library, and refuses functions that may write:
    // the script that reads runs with EVALSHA, first unloaded, then loaded
    // on the primary (and so on the replica).
    for _ in 0..2 {
        let left = redislock::lock::remaining(&on_replica, b"lock:{r}", &token).unwrap();
        assert!(
            left.is_some_and(|l| l > Duration::ZERO && l <= LEASE),
            "{left:?}"
        );
        redislock::lock::remaining(&on_primary, b"lock:{r}", &token).unwrap();
    }
    // Looking at many locks (one pipeline) reads on the replica too.
    let states = inspect::states(&on_replica, &[(Kind::Lock, b"r".to_vec())]).unwrap();
    assert_eq!(states[0].token.as_deref(), Some(token.as_bytes()));
    let refused = common::acquired(&on_replica, b"lock:{s}", &token, LEASE, NO_WAIT).unwrap_err();
    assert!(refused.to_string().contains("READONLY"), "{refused}");
}

/// The libraries of the server whose code holds `text`.
fn libraries_holding(server: &RedisServer, text: &str) -> Vec<String> {
    let list: Vec<Vec<redis::Value>> = redis::cmd("FUNCTION")
        .arg("LIST")
        .arg("LIBRARYNAME")
        .arg("redislock_*")
        .arg("WITHCODE")
        .query(&mut server.client())
        .unwrap();
    let text_of = |v: &redis::Value| match v {
        redis::Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        redis::Value::SimpleString(s) => s.clone(),
        _ => String::new(),
    };
    list.iter()
        .filter_map(|fields| {
            let field = |name: &str| {
                fields
                    .chunks(2)
                    .find(|kv| text_of(&kv[0]) == name)
                    .map(|kv| text_of(&kv[1]))
            };
            field("library_code")
                .filter(|code| code.contains(text))
                .and_then(|_| field("library_name"))
        })
        .collect()
}

/// A reply a script was not written to give (here a library of the
/// script's name that answers something else: a server the scripts were
/// not written for) is an error naming the script and the reply, never a
/// plausible answer: the nack read any unknown reply as "not leased".
#[test]
fn a_reply_the_scripts_never_give_is_an_error() {
    if !functions() {
        return;
    }
    let server = RedisServer::start();
    let config = server.config();
    let keys = queue::Keys::new(b"", b"odd");
    let terms = queue::lease::Terms::own(LEASE, 0);
    let how = queue::lease::Reserve::up_to(1, Duration::ZERO);
    let reserve = || {
        queue::lease::reserve(&config, &[(&keys, terms)], &how)
            .unwrap()
            .unwrap()
            .1
            .remove(0)
    };
    queue::enqueue(&config, &keys, &[b"t".to_vec()], 0.0).unwrap();
    let t = reserve();
    let nack = |t: &queue::lease::Leased| {
        queue::lease::nack(&config, &keys, &t.id, &t.token, 0.0, terms, b"")
    };
    assert_eq!(nack(&t).unwrap(), queue::lease::Nack::Requeued);
    let [library] = libraries_holding(&server, "Give a leased task back")
        .try_into()
        .unwrap();
    let odd = format!(
        "#!lua name={library}\nredis.register_function('{library}', function() return 'maybe' end)\n"
    );
    redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("REPLACE")
        .arg(odd)
        .query::<String>(&mut server.client())
        .unwrap();
    let t = reserve();
    match nack(&t) {
        Err(redislock::conn::Error::Reply { cause, .. }) => assert!(
            cause.contains("queue_nack.lua replied \"maybe\""),
            "{cause}"
        ),
        other => panic!("an unknown reply read as {other:?}"),
    }
}
