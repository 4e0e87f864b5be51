//! Where to find Redis and how long to wait for it: one `Config` value built
//! from a DSN, an options map, or the `redislock.*` INI defaults.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use percent_encoding::percent_decode_str;
use redis::{ClientTlsConfig, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, TlsCertificates};

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

/// The parameters a DSN's query string may hold.
const DSN_PARAMS: &[&str] = &[
    "timeout",
    "read_timeout",
    "prefix",
    "database",
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
        let (mut info, mut topology) = parse_base(base)?;
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
        info = info.set_addr(addr).set_redis_settings(redis);
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
        let prefix = match raw.iter().rev().find(|(name, _)| name == "prefix") {
            Some((_, bytes)) => bytes.clone(),
            None => match query.iter().rev().find(|(name, _)| name == "prefix") {
                Some((_, encoded)) => percent_decode_str(encoded).collect(),
                None => defaults.prefix.clone(),
            },
        };
        if matches!(topology, Topology::Cluster { .. }) {
            if let Some(problem) = crate::keys::cluster_prefix_problem(&prefix) {
                bail!(
                    "prefix {}: {problem}",
                    shown(&String::from_utf8_lossy(&prefix))
                );
            }
        }

        let server = match &topology {
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
        };
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

    /// Whether one script may use all of `keys`: always on one server; on a
    /// Cluster only when they hash to one slot.
    pub fn one_slot(&self, keys: &[&[u8]]) -> bool {
        if !matches!(self.topology, Topology::Cluster { .. }) {
            return true;
        }
        let slot = redis::cluster_routing::Slot::for_key;
        keys.windows(2).all(|w| slot(w[0]) == slot(w[1]))
    }

    /// The full key for a name: the prefix, then the name.
    pub fn key(&self, name: &[u8]) -> Vec<u8> {
        let mut key = Vec::with_capacity(self.prefix.len() + name.len());
        key.extend_from_slice(&self.prefix);
        key.extend_from_slice(name);
        key
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

/// A timeout in seconds: finite, > 0, at most a day; below a millisecond
/// it is one (the sockets' and scripts' smallest unit: 1e-10 was taken as 0).
pub fn parse_seconds(name: &str, text: &str) -> Result<Duration> {
    let value: f64 = text
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0 && *v <= 86400.0)
        .with_context(|| {
            format!(
                "'{name}' must be a number of seconds in (0, 86400], got {}",
                shown(text)
            )
        })?;
    Ok(Duration::from_secs_f64(value).max(Duration::from_millis(1)))
}

/// A byte count as php.ini writes one: digits with an optional K, M or G.
/// At least 1K (every reply of the engines' own fits), at most 1T.
pub fn parse_size(name: &str, text: &str) -> Result<u64> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&t[..i], c.to_ascii_uppercase()),
        _ => (t, 'B'),
    };
    let shift = match unit {
        'B' => Some(0),
        'K' => Some(10),
        'M' => Some(20),
        'G' => Some(30),
        _ => None,
    };
    shift
        .filter(|_| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|shift| digits.parse::<u64>().ok()?.checked_mul(1 << shift))
        .filter(|n| (1 << 10..=1 << 40).contains(n))
        .with_context(|| {
            format!(
                "'{name}' must be a size from 1K to 1024G (bytes, or with K, M or G), got {}",
                shown(text)
            )
        })
}

fn split_query(dsn: &str) -> Result<(&str, Vec<(String, String)>)> {
    let Some((base, query)) = dsn.split_once('?') else {
        return Ok((dsn, Vec::new()));
    };
    let pairs = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            // Values stay percent-encoded here: decoded as text where text
            // is read, as bytes for the prefix.
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (k.to_owned(), v.to_owned())
        })
        .collect::<Vec<_>>();
    for (k, _) in &pairs {
        if !DSN_PARAMS.contains(&k.as_str()) {
            // Shown only when it is a plain word: a mistyped DSN can put
            // credentials where a parameter name should be.
            let shown = if !k.is_empty()
                && k.len() <= 32
                && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            {
                format!("'{k}'")
            } else {
                "(not shown: not a plain name)".to_owned()
            };
            bail!(
                "unknown DSN parameter {shown} (known: {})",
                DSN_PARAMS.join(", ")
            );
        }
    }
    Ok((base, pairs))
}

fn parse_base(dsn: &str) -> Result<(ConnectionInfo, Topology)> {
    let invalid =
        |why: &dyn std::fmt::Display| anyhow::anyhow!("invalid DSN {}: {why}", shown_dsn(dsn));
    let (scheme, rest) = dsn.split_once("://").unwrap_or(("", dsn));
    let (base, topology) = match scheme {
        "redis" | "rediss" | "unix" | "redis+unix" => {
            return Ok((
                dsn.into_connection_info().map_err(|e| invalid(&e))?,
                Topology::Single,
            ));
        }
        "redis+cluster" => ("redis", "cluster"),
        "rediss+cluster" => ("rediss", "cluster"),
        "redis+sentinel" => ("redis", "sentinel"),
        "rediss+sentinel" => ("rediss", "sentinel"),
        _ => bail!(
            "invalid DSN {}: expected redis[s]://[user:pass@]host:port[/db], unix:///path.sock, \
             redis[s]+cluster://[user:pass@]host:port,host:port,... or \
             redis[s]+sentinel://[user:pass@]host:port,host:port,.../master[/db]",
            shown_dsn(dsn)
        ),
    };
    // [user:pass@]host:port,host:port[/path]
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (userinfo, hosts) = match authority.rfind('@') {
        Some(at) => (&authority[..=at], &authority[at + 1..]),
        None => ("", authority),
    };
    let (master, db) = match topology {
        "sentinel" => {
            let mut parts = path.trim_start_matches('/').splitn(2, '/');
            let master = parts.next().unwrap_or("");
            if master.is_empty() {
                return Err(invalid(&"a sentinel DSN ends with /<master name>[/db]"));
            }
            (master, parts.next().unwrap_or(""))
        }
        _ if !path.is_empty() && path != "/" => {
            return Err(invalid(
                &"a cluster DSN has no path (Redis Cluster has only database 0)",
            ));
        }
        _ => ("", ""),
    };
    let mut nodes = Vec::new();
    for host in hosts.split(',') {
        if host.is_empty() {
            return Err(invalid(&"empty host in the node list"));
        }
        let db = if db.is_empty() {
            String::new()
        } else {
            format!("/{db}")
        };
        let info = format!("{base}://{userinfo}{host}{db}")
            .into_connection_info()
            .map_err(|e| invalid(&e))?;
        nodes.push(info);
    }
    let info = nodes[0].clone();
    let topology = match topology {
        "cluster" => Topology::Cluster { nodes },
        _ => Topology::Sentinel {
            sentinels: nodes.into_iter().map(|n| n.addr().clone()).collect(),
            master: master.to_owned(),
        },
    };
    Ok((info, topology))
}

/// The PEM files named by `tls_ca`, `tls_cert` and `tls_key`, read now so a
/// wrong path is reported where it was given.
fn tls_files(
    [ca, cert, key]: [Option<&str>; 3],
    addr: &ConnectionAddr,
) -> Result<Option<TlsCertificates>> {
    let read = |name: &str, path: Option<&str>| -> Result<Option<Vec<u8>>> {
        let Some(path) = path else { return Ok(None) };
        std::fs::read(path)
            .map(Some)
            .with_context(|| format!("option '{name}': cannot read {}", shown_path(path)))
    };
    let (ca, cert, key) = (
        read("tls_ca", ca)?,
        read("tls_cert", cert)?,
        read("tls_key", key)?,
    );
    if ca.is_none() && cert.is_none() && key.is_none() {
        return Ok(None);
    }
    if !matches!(addr, ConnectionAddr::TcpTls { .. }) {
        bail!("options tls_ca, tls_cert and tls_key need a rediss:// DSN");
    }
    let client_tls = match (cert, key) {
        (Some(client_cert), Some(client_key)) => Some(ClientTlsConfig {
            client_cert,
            client_key,
        }),
        (None, None) => None,
        _ => bail!("options tls_cert and tls_key go together"),
    };
    Ok(Some(TlsCertificates {
        client_tls,
        root_cert: ca,
    }))
}

/// A file path for an error message (paths hold no credentials, but stay
/// short).
fn shown_path(path: &str) -> String {
    let short: String = path.chars().take(200).collect();
    format!("'{short}'")
}

/// A DSN for an error message: without credentials, and cut at 200
/// characters (a megabyte of garbage is not a message).
fn shown_dsn(dsn: &str) -> String {
    let redacted = redact(dsn);
    if redacted.chars().count() <= 200 {
        return format!("'{redacted}'");
    }
    let head: String = redacted.chars().take(200).collect();
    format!("'{head}...' ({} bytes)", dsn.len())
}

/// A value for an error message: quoted when it is a plain word or number;
/// otherwise left out, since a mistyped DSN can put credentials anywhere.
fn shown(value: &str) -> String {
    let plain = value.len() <= 32
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-+".contains(&b));
    if plain {
        format!("'{value}'")
    } else {
        "a value that is not shown (not a plain word or number)".to_owned()
    }
}

/// A DSN with its credentials replaced by `***`, safe to show even when it
/// does not parse: everything before the last `@` but a leading scheme and
/// the user name, and the value of any query parameter named like a
/// password.
pub fn redact(dsn: &str) -> String {
    let mut out = String::with_capacity(dsn.len());
    let rest = match dsn.rfind('@') {
        Some(at) => {
            let scheme = dsn
                .find("://")
                .filter(|&i| {
                    i < at
                        && dsn[..i]
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b"+.-".contains(&b))
                })
                .map_or(0, |i| i + 3);
            out.push_str(&dsn[..scheme]);
            if let Some((user, _)) = dsn[scheme..at].split_once(':') {
                out.push_str(user);
            }
            out.push_str(":***");
            &dsn[at..]
        }
        None => dsn,
    };
    let (path, query) = rest.split_at(rest.find('?').unwrap_or(rest.len()));
    out.push_str(path);
    let mut first = true;
    for pair in query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty())
    {
        out.push(if first { '?' } else { '&' });
        first = false;
        match pair.split_once('=') {
            Some((name, _)) if name.to_ascii_lowercase().contains("pass") => {
                out.push_str(name);
                out.push_str("=***");
            }
            _ => out.push_str(pair),
        }
    }
    out
}

fn describe(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(host, port) => format!("{host}:{port}"),
        ConnectionAddr::Unix(path) => format!("unix:{}", path.display()),
        ConnectionAddr::TcpTls { host, port, .. } => format!("{host}:{port} (TLS)"),
        other => other.to_string(),
    }
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
