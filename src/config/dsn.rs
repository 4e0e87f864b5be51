//! The DSN's syntax: one server, a Cluster's seed nodes or a Sentinel
//! master, its query parameters, and the TLS files it names.

use anyhow::{Context, Result, bail};
use redis::{ClientTlsConfig, ConnectionAddr, ConnectionInfo, IntoConnectionInfo, TlsCertificates};

use super::Topology;
use super::shown::{shown_dsn, shown_path};

/// The parameters a DSN's query string may hold.
pub(super) const DSN_PARAMS: &[&str] = &[
    "timeout",
    "read_timeout",
    "prefix",
    "database",
    "tls_ca",
    "tls_cert",
    "tls_key",
];

pub(super) fn split_query(dsn: &str) -> Result<(&str, Vec<(String, String)>)> {
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

pub(super) fn parse_base(dsn: &str) -> Result<(ConnectionInfo, Topology)> {
    let invalid =
        |why: &dyn std::fmt::Display| anyhow::anyhow!("invalid DSN {}: {why}", shown_dsn(dsn));
    let (scheme, rest) = dsn.split_once("://").unwrap_or(("", dsn));
    let (base, topology) = match scheme {
        "redis" | "rediss" | "unix" | "redis+unix" => {
            return Ok((server_url(dsn).map_err(|e| invalid(&e))?, Topology::Single));
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
        let info =
            server_url(&format!("{base}://{userinfo}{host}{db}")).map_err(|e| invalid(&e))?;
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

/// One server's URL (`redis://`, `rediss://`, `unix://`) as the redis
/// crate reads it, or why not, in words that never quote it (it can hold a
/// password).
fn server_url(text: &str) -> std::result::Result<ConnectionInfo, String> {
    // A character that ends a URL's user name or password early ('#', '/',
    // '?', '@') leaves a URL that parses wrong or not at all.
    let hint = |why: &str| {
        if text.contains('@') {
            format!(
                "{why} (in a user name or password, write '#' as %23, '/' as %2F, '?' as %3F and '@' as %40)"
            )
        } else {
            why.to_owned()
        }
    };
    let url = url::Url::parse(text).map_err(|e| hint(&e.to_string()))?;
    match url.fragment() {
        None => {}
        Some("insecure") => {
            return Err(
                "'#insecure' is not supported: TLS always verifies the server's certificate \
                 (tls_ca names the CA to trust)"
                    .to_owned(),
            );
        }
        Some(_) => return Err(hint("a DSN has no '#' part")),
    }
    let info = url.into_connection_info().map_err(|e| {
        // The crate's words, as a clause of ours ("Missing hostname").
        let words = super::words(&e);
        let mut chars = words.chars();
        chars.next().map_or(String::new(), |first| {
            first.to_lowercase().chain(chars).collect()
        })
    })?;
    let db = info.redis_settings().db();
    if db < 0 {
        return Err(format!("the database must be an integer >= 0, got '{db}'"));
    }
    Ok(info)
}

/// The PEM files named by `tls_ca`, `tls_cert` and `tls_key`, read now so a
/// wrong path is reported where it was given.
pub(super) fn tls_files(
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

/// `host:port`, an IPv6 address in brackets (`[::1]:6379`, not `::1:6379`).
fn host_port(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

pub(crate) fn describe(addr: &ConnectionAddr) -> String {
    match addr {
        ConnectionAddr::Tcp(host, port) => host_port(host, *port),
        ConnectionAddr::Unix(path) => format!("unix:{}", path.display()),
        ConnectionAddr::TcpTls { host, port, .. } => format!("{} (TLS)", host_port(host, *port)),
        other => other.to_string(),
    }
}
