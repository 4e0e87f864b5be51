//! Property tests: DSN and options parsing never panics and never leaks a
//! password; the engines carry any bytes (names, ids, payloads) unchanged.

use std::time::Duration;

use crate::common;
use crate::common::{NO_WAIT, RedisServer};
use proptest::prelude::*;
use redislock::config::{Config, Defaults, redact};
use redislock::lock;
use redislock::queue::lease::{self, Reserve, Terms};
use redislock::queue::{self, Keys, NewTask, Policy, Put};

const PASSWORD: &str = "pw-SECRET-9f3";

thread_local! {
    /// One server per test thread, stopped when the thread ends (a static
    /// would never be dropped, and leak the server after the run).
    static SERVER: RedisServer = RedisServer::start();
}

fn server_config() -> redislock::config::Config {
    SERVER.with(RedisServer::config)
}

/// DSN-like text: schemes, separators and escapes in random order.
fn dsn_like() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("redis://".to_owned()),
        Just("rediss://".to_owned()),
        Just("unix://".to_owned()),
        Just(format!("user:{PASSWORD}@")),
        Just(format!(":{PASSWORD}@")),
        Just("127.0.0.1".to_owned()),
        Just(":6379".to_owned()),
        Just("/3".to_owned()),
        Just("?timeout=".to_owned()),
        Just("&prefix=".to_owned()),
        Just("%".to_owned()),
        Just("[::1]".to_owned()),
        "[ -~]{0,8}",
        any::<String>(),
    ];
    prop::collection::vec(piece, 0..6).prop_map(|p| p.concat())
}

/// 2,000 cases, or `PROPTEST_CASES` (`make faults` runs 20,000).
fn parsing_cases() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok());
    ProptestConfig::with_cases(cases.unwrap_or(2000))
}

proptest! {
    #![proptest_config(parsing_cases())]

    #[test]
    fn a_dsn_parses_or_fails_cleanly_and_never_shows_the_password(dsn in dsn_like()) {
        match Config::from_dsn(&dsn, &Defaults::default()) {
            // A socket path is shown as it is: it holds no credentials.
            Ok(config) => prop_assert!(dsn.starts_with("unix://") || !config.server.contains(PASSWORD)),
            Err(e) => prop_assert!(!e.to_string().contains(PASSWORD), "{e}"),
        }
        prop_assert!(!redact(&dsn).contains(PASSWORD));
    }

    #[test]
    fn options_parse_or_fail_cleanly_and_never_show_the_password(
        options in prop::collection::vec(
            prop_oneof![
                (Just("password"), Just(PASSWORD.to_owned())),
                (Just("dsn"), dsn_like()),
                (prop_oneof![
                    Just("host"), Just("port"), Just("socket"), Just("database"), Just("username"),
                    Just("timeout"), Just("read_timeout"), Just("prefix"), Just("bogus"),
                ], prop_oneof!["[ -~]{0,12}", any::<String>()]),
            ],
            0..8,
        )
    ) {
        let options: Vec<(String, Vec<u8>)> =
            options.into_iter().map(|(k, v)| (k.to_owned(), v.into_bytes())).collect();
        if let Err(e) = Config::from_options(&options, &Defaults::default()) {
            prop_assert!(!e.to_string().contains(PASSWORD), "{e}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn any_lock_name_locks_and_releases(name in prop::collection::vec(any::<u8>(), 1..300)) {
        let config = server_config();
        let mut key = b"Lock:".to_vec();
        key.extend_from_slice(&name);
        let token = redislock::token::new_token();
        prop_assert!(common::acquired(&config, &key, &token, Duration::from_secs(5), NO_WAIT).unwrap());
        prop_assert!(!common::acquired(&config, &key, &redislock::token::new_token(), Duration::from_secs(5), NO_WAIT).unwrap());
        prop_assert!(lock::holds(&config, &key, &token).unwrap());
        prop_assert!(common::release(&config, &key, token.as_bytes()).unwrap());
    }

    #[test]
    fn any_id_and_payload_round_trip_through_a_lease(
        id in prop::collection::vec(any::<u8>(), 1..200),
        payload in prop::option::of(prop::collection::vec(any::<u8>(), 0..2000)),
        name in prop::collection::vec(any::<u8>(), 1..50),
    ) {
        let config = server_config();
        let keys = Keys::new(b"", &name);
        let task = NewTask { id: id.clone(), payload: payload.clone() };
        let put = queue::put(&config, &keys, &[task], -1.0, Policy::Keep, 0).unwrap();
        prop_assert!(matches!(put, Put::Done(_)));
        let how = Reserve {
            count: 10,
            wait: Duration::ZERO,
            recheck: Duration::from_secs(1),
        };
        let terms = Terms::own(Duration::from_secs(30), 3);
        let (_, got) = lease::reserve(&config, &[(&keys, terms)], &how).unwrap().expect("the task is due");
        prop_assert_eq!(got.len(), 1);
        prop_assert_eq!(&got[0].id, &id);
        prop_assert_eq!(&got[0].payload, &payload);
        prop_assert!(lease::ack(&config, &keys, &got[0].id, &got[0].token).unwrap());
    }
}
