//! The terms a producer sets for a queue's tasks (`maxAttempts`, the
//! lease), stored with the queue, in its `:stats` hash (fields
//! `maxAttempts` and `lease`): a consumer that was not given a term of its
//! own takes the stored one, so a task is handled on its producer's terms
//! whichever worker reserves it (docs/queues.md).

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
