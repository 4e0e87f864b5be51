//! `RedisLock\Slot`: a slot of work that runs once, from
//! `RedisLock\Client::once()` (the `once` engine).

use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::value::{Opt, Value, binary, debug_info, flag, opt, read_options, value_error};
use super::{engine, positive_seconds};
use crate::config::Config;
use crate::identity;
use crate::once::{self, Run, Terms};

/// What `once()`'s options say.
pub struct Options {
    pub every: Option<Duration>,
    pub retry: Option<Duration>,
    pub keep: Duration,
    /// False: only read the slot's record.
    pub claim: bool,
}

/// How long a slot's record is kept when the caller does not say.
const DEFAULT_KEEP: Duration = Duration::from_secs(86_400);

/// The options of `RedisLock\Client::once()`.
const OPTIONS: &[Opt<Options>] = &[
    opt!("everySeconds" => every = |v, p| positive_seconds(v, p).map(Some)),
    opt!("retryAfter" => retry = |v: &Value, p| match v {
        Value::Null => Ok(None),
        v => positive_seconds(v, p).map(Some),
    }),
    opt!("keep" => keep = positive_seconds),
    opt!("claim" => claim = flag),
];

/// Reads `once()`'s options (`method` names them in errors).
pub fn options(value: &Value, method: &str) -> PhpResult<Options> {
    let mut o = Options {
        every: None,
        retry: None,
        keep: DEFAULT_KEEP,
        claim: true,
    };
    read_options(value, method, OPTIONS, &mut o)?;
    Ok(o)
}

/// A slot of work, from `RedisLock\Client::once()` (not constructible with
/// `new`): whether this call claimed it, and the record of who did.
#[php_class]
#[php(name = "RedisLock\\Slot")]
pub struct Slot {
    once: once::Once,
    /// Whether this call claimed it.
    won: bool,
    slot: Vec<u8>,
    /// The token this call claimed with.
    token: String,
}

impl Slot {
    /// Claims the slot `slot` (None: `options.every` on the server's clock)
    /// of the work `name`; only names it when `options.claim` is false.
    pub fn claim(
        config: Arc<Config>,
        name: Vec<u8>,
        slot: Option<Vec<u8>>,
        options: &Options,
        method: &str,
    ) -> PhpResult<Self> {
        let at = match (&slot, options.every) {
            (Some(slot), None) => once::Slot::Given(slot),
            (None, Some(every)) => once::Slot::Every(every),
            (Some(_), Some(_)) => {
                return Err(value_error(format!(
                    "{method}: give either a slot or the 'everySeconds' option, not both"
                )));
            }
            (None, None) => {
                return Err(value_error(format!(
                    "{method}: give a slot (a date, an id) or the 'everySeconds' option (a slot of the server's clock)"
                )));
            }
        };
        let token = identity::token();
        let once = once::Once::new(config, name);
        let terms = Terms {
            retry: options.retry,
            keep: options.keep,
        };
        let (won, slot) = if options.claim {
            engine(once.claim(at, &token, terms))?
        } else {
            (false, engine(once.slot(at))?)
        };
        if won {
            identity::introduce(once.config());
        }
        Ok(Slot {
            once,
            won,
            slot,
            token,
        })
    }

    fn record(&self, run: Option<&Run>) -> PhpResult<Zval> {
        let mut out = ZendHashTable::new();
        out.insert("slot", binary(&self.slot))?;
        let Some(run) = run else {
            out.insert("at", ())?;
            out.insert("done", ())?;
            out.insert("runs", 0)?;
            out.insert("holder", ())?;
            let mut zv = Zval::new();
            zv.set_hashtable(out);
            return Ok(zv);
        };
        let seconds = |ms: u64| ms as f64 / 1000.0;
        out.insert("at", seconds(run.at_ms))?;
        out.insert("done", run.done_ms.map(seconds))?;
        out.insert("runs", i64::try_from(run.runs).unwrap_or(i64::MAX))?;
        let holder = engine(identity::of(self.once.config(), &[Some(&run.token)]))?
            .pop()
            .flatten();
        out.insert("holder", super::inspect::holder(holder)?)?;
        let mut zv = Zval::new();
        zv.set_hashtable(out);
        Ok(zv)
    }
}

#[php_impl]
impl Slot {
    /// Not for PHP code: call $client->once($name, $slot) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Slot",
            "call $client->once($name, $slot) on a RedisLock\\Client",
        ))
    }

    /// Whether this call claimed the slot: true for exactly one caller per
    /// name and slot (or, with `retryAfter`, per run that did not finish).
    pub fn won(&self) -> bool {
        self.won
    }

    /// The slot: the one given, or for `everySeconds` the start of the
    /// server's period (Unix seconds, as a string).
    pub fn slot(&self) -> Zval {
        binary(&self.slot)
    }

    /// Says the run finished: true when this call claimed the slot and it
    /// is still its (not taken over after `retryAfter`, not forgotten after
    /// `keep`); false otherwise, and when it was said already.
    pub fn done(&self) -> PhpResult<bool> {
        if !self.won {
            return Ok(false);
        }
        let run = engine(self.once.done(&self.slot, &self.token))?;
        Ok(run.is_some_and(|r| r.won))
    }

    /// Gives the slot back (a run that failed and should be tried again):
    /// true when this call claimed it, has not called `done()` and it is still
    /// its; the next caller then claims it as if nobody had.
    pub fn release(&self) -> PhpResult<bool> {
        if !self.won {
            return Ok(false);
        }
        engine(self.once.release(&self.slot, &self.token))
    }

    /// The slot's record, read now: `slot`, `at` (when it was claimed, server
    /// time; null when there is no record), `done` (when its runner called
    /// `done()`; null: not, or not yet: a run that died half way), `runs` (how
    /// many callers claimed it: more than one when a run that did not finish
    /// was taken over) and `holder` (host, pid and process of the last
    /// runner; null when unknown).
    pub fn state(&self) -> PhpResult<Zval> {
        let run = engine(self.once.read(&self.slot))?;
        self.record(run.as_ref())
    }

    /// What `var_dump()` shows: the name, the slot and whether this call
    /// claimed it.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        debug_info(vec![
            ("name", binary(self.once.name())),
            ("slot", self.slot()),
            ("won", self.won().into_zval(false)?),
        ])
    }
}
