//! Where to find Redis and how long to wait for it: one `Config` value built
//! from a DSN, an options map, or the `redislock.*` INI defaults. The DSN's
//! syntax is `dsn.rs`'s, what may be shown of a value `shown.rs`'s.

mod dsn;
mod shown;
mod values;

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use percent_encoding::percent_decode_str;
use redis::{ConnectionAddr, ConnectionInfo, TlsCertificates};

/// An address as messages name it (`host:port`, `unix:path`).
pub(crate) use dsn::describe as describe_addr;
use dsn::{describe, parse_base, split_query, tls_files};
pub(crate) use shown::shown;
pub use shown::{redact, words};
pub use values::{parse_seconds, parse_size};

pub const DEFAULT_DSN: &str = "redis://127.0.0.1:6379";
pub const DEFAULT_CONNECT_TIMEOUT: f64 = 1.0;
pub const DEFAULT_READ_TIMEOUT: f64 = 2.0;
/// The largest reply read from Redis: Redis' own largest string.
pub const DEFAULT_MAX_REPLY: u64 = 512 * 1024 * 1024;

/// Process-wide defaults (the INI values), used where a constructor gets no
/// value of its own.
#[derive(Clone, Debug, PartialEq)]
pub struct Defaults {
    pub dsn: String,
    pub connect_timeout: f64,
    pub read_timeout: f64,
    /// Bytes, as PHP strings are.
    pub prefix: Vec<u8>,
    /// Bytes one reply may have (`redislock.max_reply_size`).
    pub max_reply: u64,
}

impl Default for Defaults {
    fn default() -> Self {
        Self {
            dsn: DEFAULT_DSN.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            prefix: Vec::new(),
            max_reply: DEFAULT_MAX_REPLY,
        }
    }
}

/// How the servers behind a DSN are arranged.
#[derive(Clone, Debug)]
pub enum Topology {
    /// One server: `Config::info`.
    Single,
    /// A Redis Cluster, found through these seed nodes (`Config::info` is
    /// the first one).
    Cluster { nodes: Vec<ConnectionInfo> },
    /// The master these sentinels name `master`; `Config::info` holds the
    /// credentials and database used on it.
    Sentinel {
        sentinels: Vec<ConnectionAddr>,
        master: String,
    },
}

/// One Redis deployment and the client settings used with it.
#[derive(Clone, Debug)]
pub struct Config {
    pub info: ConnectionInfo,
    pub topology: Topology,
    /// The CA and client certificate for `rediss` DSNs, when not the system's.
    pub tls: Option<Arc<TlsCertificates>>,
    /// `host:port`, `unix:/path`, `cluster h:p,h:p` or `sentinel h:p,h:p/master`,
    /// for messages: never holds a password.
    pub server: String,
    pub connect_timeout: Duration,
    pub read_timeout: Duration,
    /// Bytes one reply may have; a larger one fails the call.
    pub max_reply: u64,
    /// Prepended to every key, like phpredis' OPT_PREFIX.
    pub prefix: Vec<u8>,
    /// Identifies the connection in the per-process registry.
    pub(crate) id: String,
}

/// One server's address and login (see [`Config::endpoint`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Endpoint {
    /// A host name or address, or a socket path (then `port` is 0).
    pub host: String,
    pub port: u16,
    pub tls: bool,
    pub database: i64,
    pub username: Option<String>,
    pub password: Option<String>,
    /// The key prefix (phpredis' `OPT_PREFIX`).
    pub prefix: Vec<u8>,
}

/// The option names an options array may hold (besides the DSN parts).
pub const OPTION_NAMES: &[&str] = &[
    "dsn",
    "host",
    "port",
    "socket",
    "database",
    "username",
    "password",
    "timeout",
    "read_timeout",
    "prefix",
    "tls_ca",
    "tls_cert",
    "tls_key",
];

impl Config {
    /// A config from a DSN string, with the defaults for what it does not say.
    /// Query parameters `timeout`, `read_timeout` and `prefix` are read too.
    pub fn from_dsn(dsn: &str, defaults: &Defaults) -> Result<Self> {
        Self::from_options(&[("dsn".to_owned(), dsn.as_bytes().to_vec())], defaults)
    }

    /// A config from `name => value` options (see [`OPTION_NAMES`]); `dsn`
    /// gives the base, the other entries override its parts. Values are
    /// bytes: the prefix is taken as it is, the others must be text.
    pub fn from_options(raw: &[(String, Vec<u8>)], defaults: &Defaults) -> Result<Self> {
        let options: Vec<(String, String)> = raw
            .iter()
            .map(|(name, value)| (name.clone(), String::from_utf8_lossy(value).into_owned()))
            .collect();
        let get = |name: &str| last_value(&options, name);
        for (name, _) in &options {
            if !OPTION_NAMES.contains(&name.as_str()) {
                bail!(
                    "unknown option {} (known: {})",
                    shown(name),
                    OPTION_NAMES.join(", ")
                );
            }
        }
        let dsn = get("dsn").unwrap_or(&defaults.dsn);
        let (base, query) = split_query(dsn)?;
        // Query values are percent-decoded: as text here, as bytes for the
        // prefix.
        let query_text: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    percent_decode_str(v).decode_utf8_lossy().into_owned(),
                )
            })
            .collect();
        let query_get = |name: &str| last_value(&query_text, name);
        let (info, mut topology) = parse_base(base)?;
        let info = address_and_login(info, &topology, &get, &query_get)?;
        if let Topology::Cluster { nodes } = &mut topology {
            for node in nodes.iter_mut() {
                *node = info.clone().set_addr(node.addr().clone());
            }
        }
        let tls_paths = ["tls_ca", "tls_cert", "tls_key"].map(|n| get(n).or_else(|| query_get(n)));
        let tls = tls_files(tls_paths, info.addr())?;

        let seconds = |name: &str, default: f64| -> Result<Duration> {
            match get(name).or_else(|| query_get(name)) {
                Some(text) => parse_seconds(name, text),
                None => parse_seconds(name, &default.to_string()),
            }
        };
        let connect_timeout = seconds("timeout", defaults.connect_timeout)?;
        let read_timeout = seconds("read_timeout", defaults.read_timeout)?;
        let prefix = prefix_of(raw, &query, &topology, defaults)?;
        let server = server_name(&info, &topology);
        let redis = info.redis_settings();
        let id = format!(
            "{server}\0{}\0{}\0{}\0{:?}\0{:?}\0{:?}\0{}",
            redis.db(),
            redis.username().unwrap_or(""),
            redis.password().unwrap_or(""),
            connect_timeout,
            read_timeout,
            tls_paths,
            defaults.max_reply,
        );
        Ok(Self {
            info,
            topology,
            tls: tls.map(Arc::new),
            server,
            connect_timeout,
            read_timeout,
            max_reply: defaults.max_reply,
            prefix,
            id,
        })
    }

    /// What a client shows of itself (`var_dump()`): the server as
    /// messages name it (never a password), the database and the key prefix.
    pub fn described(&self) -> (&str, i64, &[u8]) {
        (&self.server, self.info.redis_settings().db(), &self.prefix)
    }

    /// Where and as whom a single server is reached, for another client to
    /// reach the same (`Lock_Service::getRedisConn()`'s phpredis); `None`
    /// for a Cluster or Sentinel DSN.
    pub fn endpoint(&self) -> Option<Endpoint> {
        if !matches!(self.topology, Topology::Single) {
            return None;
        }
        let (host, port, tls) = match self.info.addr() {
            ConnectionAddr::Tcp(host, port) => (host.clone(), *port, false),
            ConnectionAddr::TcpTls { host, port, .. } => (host.clone(), *port, true),
            ConnectionAddr::Unix(path) => (path.to_string_lossy().into_owned(), 0, false),
            _ => return None,
        };
        let redis = self.info.redis_settings();
        Some(Endpoint {
            host,
            port,
            tls,
            database: redis.db(),
            username: redis.username().map(str::to_owned),
            password: redis.password().map(str::to_owned),
            prefix: self.prefix.clone(),
        })
    }

    /// Whether one script may use all of `keys`: always on one server; on a
    /// Cluster only when they hash to one slot.
    pub fn one_slot(&self, keys: &[&[u8]]) -> bool {
        if !matches!(self.topology, Topology::Cluster { .. }) {
            return true;
        }
        let slot = redis::cluster_routing::Slot::for_key;
        keys.windows(2).all(|w| slot(w[0]) == slot(w[1]))
    }

    /// Whether names spread over slots: not on a Cluster whose prefix holds
    /// a hash tag, which puts every key in that tag's slot (so a stock's
    /// shards or a queue's partitions would gain nothing).
    pub fn spreads(&self) -> bool {
        !matches!(self.topology, Topology::Cluster { .. })
            || crate::keys::hash_tag(&self.prefix).is_none()
    }

    /// The full key for a name: the prefix, then the name.
    pub fn key(&self, name: &[u8]) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.prefix.len() + name.len());
        key.extend_from_slice(&self.prefix);
        key.extend_from_slice(name);
        key
    }
}

/// The DSN's address and login with the options' changes: `socket`,
/// `host`, `port` (one server only), `username`, `password`, `database`.
fn address_and_login<'a>(
    info: ConnectionInfo,
    topology: &Topology,
    get: &dyn Fn(&str) -> Option<&'a str>,
    query_get: &dyn Fn(&str) -> Option<&'a str>,
) -> Result<ConnectionInfo> {
    let mut addr = info.addr().clone();
    let single_only = ["socket", "host", "port"]
        .into_iter()
        .find(|n| get(n).is_some());
    if let (false, Some(name)) = (matches!(topology, Topology::Single), single_only) {
        bail!(
            "option '{name}' cannot be combined with a cluster or sentinel DSN: list the nodes in the DSN"
        );
    }
    if let Some(socket) = get("socket") {
        addr = ConnectionAddr::Unix(socket.into());
    }
    if let Some(host) = get("host") {
        if host.is_empty() {
            bail!("option 'host' is empty");
        }
        let port = match &addr {
            ConnectionAddr::Tcp(_, port) => *port,
            _ => 6379,
        };
        addr = ConnectionAddr::Tcp(host.to_owned(), port);
    }
    if let Some(port) = get("port") {
        let port: u16 = port
            .trim()
            .parse()
            .ok()
            .filter(|p| *p > 0)
            .with_context(|| format!("option 'port' must be 1..65535, got {}", shown(port)))?;
        match &mut addr {
            ConnectionAddr::Tcp(_, p) => *p = port,
            _ => bail!("option 'port' given for a unix socket"),
        }
    }
    let mut redis = info.redis_settings().clone();
    if let Some(user) = get("username") {
        redis = redis.set_username(user);
    }
    if let Some(password) = get("password") {
        redis = redis.set_password(password);
    }
    if let Some(db) = get("database").or_else(|| query_get("database")) {
        let db: i64 = db
            .trim()
            .parse()
            .ok()
            .filter(|d| *d >= 0)
            .with_context(|| {
                format!(
                    "option 'database' must be an integer >= 0, got {}",
                    shown(db)
                )
            })?;
        redis = redis.set_db(db);
    }
    if matches!(topology, Topology::Cluster { .. }) && redis.db() != 0 {
        bail!("Redis Cluster has only database 0");
    }
    Ok(info.set_addr(addr).set_redis_settings(redis))
}

/// The key prefix: the `prefix` option's bytes as they are, else the DSN's
/// (percent-decoded), else the default; on a Cluster one that keeps each
/// name's keys in one slot.
fn prefix_of(
    raw: &[(String, Vec<u8>)],
    query: &[(String, String)],
    topology: &Topology,
    defaults: &Defaults,
) -> Result<Vec<u8>> {
    let prefix = match raw.iter().rev().find(|(name, _)| name == "prefix") {
        Some((_, bytes)) => bytes.clone(),
        None => match query.iter().rev().find(|(name, _)| name == "prefix") {
            Some((_, encoded)) => percent_decode_str(encoded).collect(),
            None => defaults.prefix.clone(),
        },
    };
    if matches!(topology, Topology::Cluster { .. })
        && let Some(problem) = crate::keys::cluster_prefix_problem(&prefix)
    {
        bail!(
            "prefix {}: {problem}",
            shown(&String::from_utf8_lossy(&prefix))
        );
    }
    Ok(prefix)
}

/// Where the deployment is, for messages (never with a password).
fn server_name(info: &ConnectionInfo, topology: &Topology) -> String {
    match topology {
        Topology::Single => describe(info.addr()),
        Topology::Cluster { nodes } => format!(
            "cluster {}",
            nodes
                .iter()
                .map(|n| describe(n.addr()))
                .collect::<Vec<_>>()
                .join(",")
        ),
        Topology::Sentinel { sentinels, master } => format!(
            "sentinel {}/{master}",
            sentinels.iter().map(describe).collect::<Vec<_>>().join(",")
        ),
    }
}

/// The value of the last `name` entry (later entries win, as in a URL query).
fn last_value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dsn_parts_and_defaults() {
        let d = Defaults::default();
        let c = Config::from_dsn(
            "redis://u:secret@10.0.0.1:7000/3?timeout=0.5&prefix=app:",
            &d,
        )
        .unwrap();
        assert_eq!(c.server, "10.0.0.1:7000");
        assert_eq!(c.info.redis_settings().db(), 3);
        assert_eq!(c.info.redis_settings().password(), Some("secret"));
        assert_eq!(c.connect_timeout, Duration::from_millis(500));
        assert_eq!(c.read_timeout, Duration::from_secs(2));
        assert_eq!(c.prefix, b"app:");
        assert!(!c.server.contains("secret"));
    }

    #[test]
    fn a_dsn_prefix_is_percent_decoded_to_bytes() {
        let d = Defaults::default();
        let c = Config::from_dsn("redis://h:1?prefix=%FF%3Aa%20b%7B", &d).unwrap();
        assert_eq!(c.prefix, b"\xff:a b{");
        let opts = vec![("prefix".to_owned(), b"\xfe:".to_vec())];
        assert_eq!(Config::from_options(&opts, &d).unwrap().prefix, b"\xfe:");
    }

    #[test]
    fn options_override_dsn() {
        let d = Defaults::default();
        let opts = vec![
            ("host".to_owned(), b"localhost".to_vec()),
            ("port".to_owned(), b"6380".to_vec()),
            ("database".to_owned(), b"2".to_vec()),
        ];
        let c = Config::from_options(&opts, &d).unwrap();
        assert_eq!(c.server, "localhost:6380");
        assert_eq!(c.info.redis_settings().db(), 2);
    }

    #[test]
    fn sizes_as_php_ini_writes_them() {
        assert_eq!(parse_size("s", "512M").unwrap(), 512 << 20);
        assert_eq!(parse_size("s", " 2k ").unwrap(), 2048);
        assert_eq!(parse_size("s", "1G").unwrap(), 1 << 30);
        assert_eq!(parse_size("s", "4096").unwrap(), 4096);
        for bad in [
            "",
            "M",
            "1",
            "1023",
            "-1K",
            "1.5M",
            "1T",
            "1025G",
            "99999999999999999999G",
            "1 K",
            "0x10K",
        ] {
            assert!(parse_size("s", bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn an_ipv6_address_is_named_in_brackets() {
        let d = Defaults::default();
        assert_eq!(
            Config::from_dsn("redis://[::1]:7000", &d).unwrap().server,
            "[::1]:7000"
        );
        assert_eq!(
            Config::from_dsn("rediss://[fe80::1]:7000", &d)
                .unwrap()
                .server,
            "[fe80::1]:7000 (TLS)"
        );
        assert_eq!(
            Config::from_dsn("redis+cluster://[::1]:1,h:2", &d)
                .unwrap()
                .server,
            "cluster [::1]:1,h:2"
        );
    }

    #[test]
    fn unix_socket() {
        let c = Config::from_dsn("unix:///tmp/r.sock", &Defaults::default()).unwrap();
        assert_eq!(c.server, "unix:/tmp/r.sock");
    }

    #[test]
    fn bad_input_is_an_error_without_password() {
        let d = Defaults::default();
        for dsn in [
            "",
            "http://x",
            "redis://:pw@host:notaport",
            "redis+cluster://:pw@",
            "redis+sentinel://:pw@h:1",
            "redis+cluster://:pw@h:1/2",
            "rediss://:pw@h:1?tls_ca=/nonexistent",
            "redis://h:1?x=1",
            "redis://h:1?timeout=-1",
            "redis://h:1?timeout=nan",
        ] {
            let err = Config::from_dsn(dsn, &d).unwrap_err().to_string();
            assert!(!err.contains("pw@"), "{err}");
        }
        let opts = vec![("bogus".to_owned(), b"1".to_vec())];
        assert!(Config::from_options(&opts, &d).is_err());
        let opts = vec![("port".to_owned(), b"70000".to_vec())];
        assert!(Config::from_options(&opts, &d).is_err());
    }

    #[test]
    fn cluster_and_sentinel_dsns() {
        let d = Defaults::default();
        let c = Config::from_dsn("redis+cluster://u:pw@h1:7000,h2:7001?prefix=p:", &d).unwrap();
        assert_eq!(c.server, "cluster h1:7000,h2:7001");
        let Topology::Cluster { nodes } = &c.topology else {
            panic!("not a cluster")
        };
        assert_eq!(nodes.len(), 2);
        assert_eq!(nodes[1].redis_settings().password(), Some("pw"));
        assert_eq!(nodes[1].redis_settings().username(), Some("u"));
        assert_eq!(c.prefix, b"p:");

        let c = Config::from_dsn("redis+sentinel://:pw@s1:26379,s2:26380/mymaster/2", &d).unwrap();
        assert_eq!(c.server, "sentinel s1:26379,s2:26380/mymaster");
        assert_eq!(c.info.redis_settings().db(), 2);
        assert_eq!(c.info.redis_settings().password(), Some("pw"));
        let Topology::Sentinel { sentinels, master } = &c.topology else {
            panic!("not sentinel")
        };
        assert_eq!((sentinels.len(), master.as_str()), (2, "mymaster"));

        let c = Config::from_dsn("rediss://h:6380", &d).unwrap();
        assert_eq!(c.server, "h:6380 (TLS)");
        for bad in [
            "redis+cluster://h:1/3",
            "redis+sentinel://s:1",
            "redis+cluster://h:1,,h:2",
            "redis://h:1?tls_ca=/etc/hostname",
        ] {
            assert!(Config::from_dsn(bad, &d).is_err(), "{bad}");
        }
        let opts = [("dsn", "redis+cluster://h:1"), ("port", "2")]
            .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()));
        assert!(Config::from_options(&opts, &d).is_err());
    }

    #[test]
    fn a_dsn_that_does_not_parse_says_why_without_the_password() {
        let d = Defaults::default();
        let hint = "write '#' as %23, '/' as %2F, '?' as %3F and '@' as %40";
        for (dsn, why) in [
            ("redis://h:abc", "invalid port number"),
            ("redis://h:99999", "invalid port number"),
            ("redis://[::1", "invalid IPv6 address"),
            ("redis://a b", "invalid domain character"),
            ("redis://h/x", "invalid database number"),
            ("unix://", "missing path"),
            ("redis://0.0.0.0:1", "cannot connect to a wildcard address"),
            // The crate reads a database below 0 that SELECT refuses later.
            (
                "redis://h:1/-1",
                "the database must be an integer >= 0, got '-1'",
            ),
            ("redis+sentinel://:pw@s:1/m/-2", "got '-2'"),
            ("redis+cluster://h:1,[::1", "invalid IPv6 address"),
            ("redis://h:1#x", "a DSN has no '#' part"),
            ("rediss://h:1#insecure", "'#insecure' is not supported"),
            // A password with a character that ends it: the hint.
            ("redis://:pa#ss@h:1", hint),
            ("redis://:pa/ss@h:1", hint),
            ("redis://u:p@h:abc", hint),
        ] {
            let err = Config::from_dsn(dsn, &d).unwrap_err().to_string();
            assert!(err.contains(why), "{dsn}: {err}");
            assert!(!err.contains("InvalidClientConfig"), "{dsn}: {err}");
            assert!(!err.contains("pa#ss") && !err.contains("pa/ss"), "{err}");
        }
        // Without a user name or password, no hint about them.
        let err = Config::from_dsn("redis://h:abc", &d)
            .unwrap_err()
            .to_string();
        assert!(!err.contains("%23"), "{err}");
        // Percent-encoded, such a password is read as it is.
        let c = Config::from_dsn("redis://:pa%23s%2Fs%3F%40@h:1", &d).unwrap();
        assert_eq!(c.info.redis_settings().password(), Some("pa#s/s?@"));
    }

    #[test]
    fn redaction() {
        assert_eq!(redact("redis://u:pw@h:1/2"), "redis://u:***@h:1/2");
        assert_eq!(redact("redis://:pw@h:1"), "redis://:***@h:1");
        assert_eq!(redact("redis://h:1"), "redis://h:1");
    }

    #[test]
    fn a_timeout_below_a_millisecond_is_one() {
        assert_eq!(
            parse_seconds("timeout", "1e-10").unwrap(),
            Duration::from_millis(1)
        );
        assert_eq!(
            parse_seconds("timeout", "0.25").unwrap(),
            Duration::from_millis(250)
        );
        assert!(parse_seconds("timeout", "0").is_err());
    }
}
