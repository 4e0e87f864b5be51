//! The terms a producer sets for a queue's tasks (`maxAttempts`, the
//! lease), stored with the queue, in its `:stats` hash (fields
//! `maxAttempts` and `lease`): a consumer that was not given a term of its
//! own takes the stored one, so a task is handled on its producer's terms
//! whichever worker reserves it (docs/queues.md). And the queue's rate,
//! which every worker keeps.

use std::time::Duration;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::queue::Keys;
use crate::scripts::Invocation;

/// Stores the terms given (None: not given, the stored one stays).
pub fn set_terms(
    config: &Config,
    keys: &Keys,
    max_attempts: Option<u64>,
    lease: Option<Duration>,
) -> Result<(), Error> {
    let mut fields: Vec<(&str, String)> = Vec::new();
    if let Some(max) = max_attempts {
        fields.push(("maxAttempts", max.to_string()));
    }
    if let Some(lease) = lease {
        fields.push(("lease", crate::queue::score_arg(lease.as_secs_f64())));
    }
    if fields.is_empty() {
        return Ok(());
    }
    conn::with(config, |c| {
        let mut cmd = redis::cmd("HSET");
        cmd.arg(&keys.stats);
        for (field, value) in &fields {
            cmd.arg(*field).arg(value);
        }
        // Redis' WRONGTYPE names no key: the error does.
        cmd.query::<i64>(c)
            .map_err(|e| Invocation::keys_of(&["hash"]).key(&keys.stats).naming(c, e))
    })
    .map(drop)
}

/// A queue's rate: at most `burst` tasks reserved at once and `limit` per
/// `per`, across every worker (a token bucket on the server's clock).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub limit: u64,
    pub per: Duration,
    pub burst: u64,
}

impl Rate {
    /// The rate as the scripts read it: '<limit> <per seconds> <burst>'
    /// (`scripts/lib/queue_rate.lua`).
    pub(crate) fn stored(&self) -> String {
        format!(
            "{} {} {}",
            self.limit,
            crate::queue::score_arg(self.per.as_secs_f64()),
            self.burst
        )
    }
}

/// Stores the queue's rate (None: it has none), kept in its `:stats`
/// hash (field `rate`; `rateTat` is the bucket's state), which `reserve()`
/// reads.
pub fn set_rate(config: &Config, keys: &Keys, rate: Option<Rate>) -> Result<(), Error> {
    conn::with(config, |c| {
        let cmd = match rate {
            Some(r) => {
                let mut cmd = redis::cmd("HSET");
                cmd.arg(&keys.stats).arg("rate").arg(r.stored());
                cmd
            }
            None => {
                let mut cmd = redis::cmd("HDEL");
                cmd.arg(&keys.stats).arg("rate").arg("rateTat");
                cmd
            }
        };
        cmd.query::<i64>(c)
            .map_err(|e| Invocation::keys_of(&["hash"]).key(&keys.stats).naming(c, e))
    })
    .map(drop)
}
