//! Blocking commands on our own connection (`Wire::blocking`): a server
//! answers a blocked client whose timeout passed only at its next cron tick,
//! so the connection nudges it with a PING when the nap is over. The reply
//! must stay the command's own, the PONGs must never be read as the next
//! command's reply, and a value pushed as the nap ends must be received
//! once or stay in the list, never lost.

use std::time::{Duration, Instant};

use crate::common::*;
use redislock::conn;

/// BLPOP on `key` for `nap` (replies within `read_timeout` of its end).
fn blpop<T: redis::FromRedisValue>(
    c: &mut conn::Conn,
    key: &str,
    nap: Duration,
    read_timeout: Duration,
) -> redis::RedisResult<T> {
    let timeout = format!("{:.3}", nap.as_secs_f64());
    let words: [&[u8]; 3] = [b"BLPOP", key.as_bytes(), timeout.as_bytes()];
    Ok(redis::from_redis_value(c.blocking(
        &words,
        nap,
        read_timeout,
    )?)?)
}

/// A server whose cron runs once a second: a blocked client's timeout is
/// found passed only when something turns its event loop.
fn slow_cron() -> RedisServer {
    RedisServer::start_with(|_, _| vec!["--hz".into(), "1".into()])
}

#[test]
fn a_nudged_blocking_call_stays_in_step() {
    let server = slow_cron();
    let config = server.config();
    redis::cmd("SET")
        .arg("x")
        .arg("next")
        .query::<()>(&mut server.client())
        .unwrap();
    let nap = Duration::from_millis(20);
    for round in 0..20 {
        let got: Option<(Vec<u8>, Vec<u8>)> =
            conn::with(&config, |c| blpop(c, "empty", nap, config.read_timeout)).unwrap();
        assert_eq!(got, None, "round {round}");
        // The next reply is the next command's, not a PONG.
        let x: String = conn::with(&config, |c| redis::cmd("GET").arg("x").query(c)).unwrap();
        assert_eq!(x, "next", "round {round}");
    }
    // Each call timed out by a nudge: at 1 Hz, waiting for the cron instead
    // would have outlasted the 1 s read timeout now and then.
    assert!(server.calls(&["ping"]) >= 20, "every call was nudged");
}

#[test]
fn a_value_pushed_as_the_nap_ends_is_received_once() {
    let server = slow_cron();
    let config = server.config();
    let nap = Duration::from_millis(5);
    let values = 300;
    let pusher = {
        let mut c = server.client();
        std::thread::spawn(move || {
            // Pushes land at every offset around the consumer's nap ends:
            // before, during and after its nudges.
            let mut seed = 7u64;
            for i in 0..values {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                std::thread::sleep(Duration::from_micros(2000 + (seed >> 33) % 8000));
                redis::cmd("RPUSH")
                    .arg("l")
                    .arg(i)
                    .query::<()>(&mut c)
                    .unwrap();
            }
        })
    };
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pusher.is_finished() && Instant::now() < deadline {
        let reply: Option<(String, u32)> =
            conn::with(&config, |c| blpop(c, "l", nap, config.read_timeout)).unwrap();
        got.extend(reply.map(|(_, v)| v));
    }
    pusher.join().unwrap();
    let left: Vec<u32> = redis::cmd("LRANGE")
        .arg("l")
        .arg(0)
        .arg(-1)
        .query(&mut server.client())
        .unwrap();
    got.extend(left);
    got.sort_unstable();
    assert_eq!(
        got,
        (0..values).collect::<Vec<_>>(),
        "each value exactly once"
    );
    assert!(server.calls(&["ping"]) > 0, "some naps ended in a nudge");
}
