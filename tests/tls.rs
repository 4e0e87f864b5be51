//! TLS with a private CA and client certificates, and ACL users.

use std::time::Duration;

use crate::common;
use crate::common::{NO_WAIT, TlsServer};
use redislock::config::{Config, Defaults};
use redislock::conn::Error;
use redislock::lock;

fn config(dsn: &str) -> Config {
    Config::from_dsn(dsn, &Defaults::default()).unwrap()
}

#[test]
fn an_acl_user_locks_over_tls() {
    if !common::has(common::features().tls, "TLS (built without it)") {
        return;
    }
    let tls = TlsServer::start();
    let config = config(&tls.dsn("app:s3cret", true));
    assert_eq!(config.server, format!("127.0.0.1:{} (TLS)", tls.tls_port));
    let token = redislock::token::new_token();
    assert!(
        common::acquired(
            &config,
            b"lock:{t}",
            &token,
            Duration::from_secs(5),
            NO_WAIT
        )
        .unwrap()
    );
    assert!(
        tls.server.pttl("lock:{t}") > 0,
        "written through the TLS port"
    );
    assert!(common::release(&config, b"lock:{t}", token.as_bytes()).unwrap());
}

#[test]
fn a_wrong_password_is_a_clear_error_without_the_password() {
    if !common::has(common::features().tls, "TLS (built without it)") {
        return;
    }
    let tls = TlsServer::start();
    let err = lock::holds(&config(&tls.dsn("app:wrong-pw", true)), b"k", "t").unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Connection { .. }), "{text}");
    assert!(
        text.contains("authentication failed: wrong user name or password"),
        "{text}"
    );
    assert!(
        !text.contains("wrong-pw") && !text.contains("s3cret"),
        "{text}"
    );
}

#[test]
fn certificates_are_checked_both_ways() {
    if !common::has(common::features().tls, "TLS (built without it)") {
        return;
    }
    let tls = TlsServer::start();
    // No client certificate: the server refuses the handshake.
    assert!(lock::holds(&config(&tls.dsn("app:s3cret", false)), b"k", "t").is_err());
    // The system's CAs do not know the test CA.
    let dsn = format!("rediss://app:s3cret@127.0.0.1:{}?timeout=1", tls.tls_port);
    let err = lock::holds(&config(&dsn), b"k", "t")
        .unwrap_err()
        .to_string();
    assert!(err.to_lowercase().contains("certificate"), "{err}");
    // A missing CA file is refused when the config is made.
    let err = Config::from_dsn(
        &tls.dsn("app:s3cret", false).replace("ca.crt", "nope.crt"),
        &Defaults::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("tls_ca") && err.contains("nope.crt"), "{err}");
}

/// A `rediss://` DSN for a server that does not speak TLS fails saying so:
/// one that answers in plain text (Redis' `-ERR` to the TLS hello), and one
/// that answers nothing within the timeout (a socket timeout reads as
/// EAGAIN, "Resource temporarily unavailable", without it).
#[test]
fn tls_to_a_server_that_does_not_speak_it_says_so() {
    if !common::has(common::features().tls, "TLS (built without it)") {
        return;
    }
    for answer in [Some(&b"-ERR unknown command\r\n"[..]), None] {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let (mut sock, _) = listener.accept().unwrap();
            let mut hello = [0u8; 512];
            let _ = sock.read(&mut hello);
            if let Some(answer) = answer {
                let _ = sock.write_all(answer);
            }
            // Held open until the client gives up.
            let _ = sock.read(&mut hello);
        });
        let dsn = format!("rediss://:s3cret@127.0.0.1:{port}?timeout=0.3&read_timeout=0.3");
        let err = lock::holds(&config(&dsn), b"k", "t").unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Connection { .. }), "{text}");
        assert!(
            text.contains("is the server at this address speaking TLS?"),
            "{text}"
        );
        let expected = if answer.is_some() {
            "an answer that is not TLS"
        } else {
            "no TLS handshake within the timeout"
        };
        assert!(text.contains(expected), "{text}");
        assert!(
            !text.contains("s3cret") && !text.contains("os error"),
            "{text}"
        );
        server.join().unwrap();
    }
}
