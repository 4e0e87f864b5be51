//! The value syntaxes the DSN, the options and the INI entries share.

use std::time::Duration;

use anyhow::{Context, Result};

use super::shown::shown;

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
