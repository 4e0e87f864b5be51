//! What of a value may be shown in a message. One rule: nothing that could
//! be a credential. A DSN is shown with its credentials masked (`redact`);
//! any other value only when it is a plain word or number (`shown`), since
//! a mistyped DSN can put a password anywhere; paths, which hold none, are
//! cut short.

/// A file path for an error message (paths hold no credentials, but stay
/// short).
pub(super) fn shown_path(path: &str) -> String {
    let short: String = path.chars().take(200).collect();
    format!("'{short}'")
}

/// A DSN for an error message: without credentials, and cut at 200
/// characters (a megabyte of garbage is not a message).
pub(super) fn shown_dsn(dsn: &str) -> String {
    let redacted = redact(dsn);
    if redacted.chars().count() <= 200 {
        return format!("'{redacted}'");
    }
    let head: String = redacted.chars().take(200).collect();
    format!("'{head}...' ({} bytes)", dsn.len())
}

/// A value for an error message: quoted when it is a plain word or number;
/// otherwise left out, since a mistyped DSN can put credentials anywhere.
pub(crate) fn shown(value: &str) -> String {
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

/// What the redis crate says of an error of its own, without the name of
/// its kind that its `Display` puts after the words ("Missing hostname -
/// InvalidClientConfig"): the kind is the crate's, the words are the cause.
/// (A description that ends in a full stop before its detail, "It failed
/// to check startup nodes.: ...", loses the stop.)
pub fn words(err: &redis::RedisError) -> String {
    err.to_string()
        .replacen(&format!(" - {:?}", err.kind()), "", 1)
        .replacen(".: ", ": ", 1)
}
