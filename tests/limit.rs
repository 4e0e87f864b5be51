//! The rate limiters' engine against a real redis-server: what may be
//! decided together is refused in the engine, each way named.

use std::sync::Arc;
use std::time::Duration;

use crate::common::RedisServer;
use redislock::config::{Config, Defaults};
use redislock::limit::{self, Asked, Limiter, Policy, Rate, Refused};

#[test]
fn limits_asked_together_are_of_one_client_each_once_and_not_none() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let other =
        Arc::new(Config::from_dsn(&format!("{}/1", server.url()), &Defaults::default()).unwrap());
    let rate = Rate {
        policy: Policy::FixedWindow,
        limit: 2,
        per: Duration::from_secs(60),
    };
    let ip = Limiter::new(config.clone(), b"ip".to_vec(), rate);
    let user = Limiter::new(config.clone(), b"user".to_vec(), rate);
    let elsewhere = Limiter::new(other, b"ip".to_vec(), rate);

    let mut asked = Asked::new(&config, 4);
    assert_eq!(asked.limits().err(), Some(Refused::Empty));
    asked.add(&ip, b"203.0.113.9".to_vec()).unwrap();
    asked.add(&user, b"203.0.113.9".to_vec()).unwrap();
    asked.add(&ip, b"198.51.100.1".to_vec()).unwrap();
    assert_eq!(
        asked.add(&elsewhere, b"k".to_vec()),
        Err(Refused::OtherClient)
    );
    let twice = asked.add(&ip, b"203.0.113.9".to_vec()).unwrap_err();
    assert_eq!(
        format!("$limits{twice}"),
        "$limits names limiter 'ip' with key '203.0.113.9' twice"
    );
    let limits = asked.limits().unwrap();
    assert_eq!(limits.len(), 3, "one server: one slot");
    assert!(
        limit::decide(&limits, 2, true)
            .unwrap()
            .refused_by
            .is_none()
    );
    let refused = limit::decide(&limits, 1, true).unwrap().refused_by;
    assert_eq!(refused, Some(0), "all or none: the first limit refuses");
}
