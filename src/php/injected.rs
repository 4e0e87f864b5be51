//! A constructor's connection parameter may be a connection the app already
//! has (`new RedisLock($redis)`, as copies of the seed classes were given
//! one): a phpredis `\Redis` or a Predis client stands for its server,
//! database, credentials and key prefix, which the extension reads from it
//! and connects to with its own connection.

use ext_php_rs::convert::FromZval;
use ext_php_rs::flags::DataType;
use ext_php_rs::types::{ZendObject, Zval};

use super::value::Value;

/// Options as `Config::from_options` takes them.
pub type Options = Vec<(String, Vec<u8>)>;

/// A connection parameter: any value, and for a phpredis or Predis client
/// the options that describe its connection (or why they cannot be read).
pub struct Connection {
    pub value: Value,
    pub injected: Option<Result<Options, String>>,
}

impl<'a> FromZval<'a> for Connection {
    const TYPE: DataType = DataType::Mixed;
    const NULLABLE: bool = true;

    fn from_zval(zval: &'a Zval) -> Option<Self> {
        let zval = zval.dereference();
        let injected = zval.object().and_then(|object| {
            let class = object.get_class_name().ok()?;
            match class.as_str() {
                "Redis" => Some(phpredis(object)),
                "Predis\\Client" => Some(predis(object)),
                _ => None,
            }
        });
        Some(Self {
            value: Value::copy_of(zval),
            injected,
        })
    }

    fn from_missing() -> Option<Self> {
        Some(Self {
            value: Value::Null,
            injected: None,
        })
    }
}

fn call(object: &ZendObject, method: &str) -> Option<Zval> {
    object.try_call_method(method, vec![]).ok()
}

fn text(zv: &Zval) -> Option<String> {
    zv.string().filter(|s| !s.is_empty())
}

/// The options of a phpredis connection: it tells its host (a socket path,
/// or `tls://host`), port, database, credentials and prefix once connected.
fn phpredis(redis: &ZendObject) -> Result<Options, String> {
    let host = call(redis, "getHost")
        .as_ref()
        .and_then(text)
        .ok_or("the \\Redis object given is not connected (connect() it first, or pass a DSN)")?;
    let mut options = Vec::new();
    if host.starts_with('/') {
        options.push(("socket".to_owned(), host.into_bytes()));
    } else {
        let port = call(redis, "getPort")
            .and_then(|p| p.long())
            .unwrap_or(6379);
        let (scheme, host) = match host.split_once("://") {
            Some(("tls" | "ssl", host)) => ("rediss", host.to_owned()),
            Some((_, host)) => ("redis", host.to_owned()),
            None => ("redis", host),
        };
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host
        };
        options.push((
            "dsn".to_owned(),
            format!("{scheme}://{host}:{port}").into_bytes(),
        ));
    }
    if let Some(db) = call(redis, "getDbNum").and_then(|d| d.long()) {
        options.push(("database".to_owned(), db.to_string().into_bytes()));
    }
    if let Some(auth) = call(redis, "getAuth") {
        // null, a password, or [user, password].
        if let Some(password) = text(&auth) {
            options.push(("password".to_owned(), password.into_bytes()));
        } else if let Some(pair) = auth.array() {
            let mut values = pair.values().filter_map(text);
            match (values.next(), values.next()) {
                (Some(user), Some(password)) => {
                    options.push(("username".to_owned(), user.into_bytes()));
                    options.push(("password".to_owned(), password.into_bytes()));
                }
                (Some(password), None) => {
                    options.push(("password".to_owned(), password.into_bytes()))
                }
                _ => {}
            }
        }
    }
    // Redis::OPT_PREFIX
    if let Some(prefix) = redis
        .try_call_method("getOption", vec![&2_i64])
        .ok()
        .as_ref()
        .and_then(|p| p.zend_str().map(|s| s.as_bytes().to_vec()))
        .filter(|p| !p.is_empty())
    {
        options.push(("prefix".to_owned(), prefix));
    }
    Ok(options)
}

/// The options of a Predis client: its connection's parameters, and the
/// prefix of its options.
fn predis(client: &ZendObject) -> Result<Options, String> {
    let unreadable = || {
        "the Predis client given has no single connection to read (a cluster or replication \
         client): pass a DSN"
            .to_owned()
    };
    let parameters = call(client, "getConnection")
        .and_then(|c| c.object().and_then(|c| call(c, "getParameters")))
        .and_then(|p| p.object().and_then(|p| call(p, "toArray")))
        .ok_or_else(unreadable)?;
    let parameters = parameters.array().ok_or_else(unreadable)?;
    let get = |name: &str| parameters.get(name).and_then(text);
    let get_number = |name: &str| {
        parameters
            .get(name)
            .and_then(|v| v.long().or_else(|| v.string()?.parse().ok()))
    };
    let mut options = Vec::new();
    let scheme = get("scheme").unwrap_or_else(|| "tcp".to_owned());
    if scheme == "unix" {
        let path = get("path").ok_or_else(unreadable)?;
        options.push(("socket".to_owned(), path.into_bytes()));
    } else {
        let host = get("host").unwrap_or_else(|| "127.0.0.1".to_owned());
        let host = if host.contains(':') && !host.starts_with('[') {
            format!("[{host}]")
        } else {
            host
        };
        let port = get_number("port").unwrap_or(6379);
        let tls = matches!(scheme.as_str(), "tls" | "rediss");
        let scheme = if tls { "rediss" } else { "redis" };
        options.push((
            "dsn".to_owned(),
            format!("{scheme}://{host}:{port}").into_bytes(),
        ));
    }
    if let Some(db) = get_number("database") {
        options.push(("database".to_owned(), db.to_string().into_bytes()));
    }
    if let Some(user) = get("username") {
        options.push(("username".to_owned(), user.into_bytes()));
    }
    if let Some(password) = get("password") {
        options.push(("password".to_owned(), password.into_bytes()));
    }
    let prefix = call(client, "getOptions")
        .and_then(|o| o.object()?.try_call_method("__get", vec![&"prefix"]).ok())
        .and_then(|p| p.object().and_then(|p| call(p, "getPrefix")))
        .and_then(|p| text(&p));
    if let Some(prefix) = prefix {
        options.push(("prefix".to_owned(), prefix.into_bytes()));
    }
    Ok(options)
}
