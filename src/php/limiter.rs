//! `RedisLock\Limiter` and `RedisLock\Decision`: rate limits decided on
//! the server in one round trip (the `limit` engine).

use std::fmt::Display;
use std::sync::Arc;
use std::time::Duration;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::convert::IntoZval;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::value::{
    Arg, Argument, Float, Int, NullableText, Opt, Value, binary, debug_info, opt, optional_binary,
    read_options, type_error, value_error,
};
use super::{engine, wait_seconds};
use crate::config::Config;
use crate::limit::{self, MAX_LIMIT, MAX_PER, MIN_PER, Policy, Rate};

/// What `limiter()`'s options say, before they are checked together.
#[derive(Default)]
pub struct Options {
    limit: Option<u64>,
    per: Option<f64>,
    policy: Option<String>,
    burst: Option<u64>,
}

/// The options of `RedisLock\Client::limiter()`.
const OPTIONS: &[Opt<Options>] = &[
    opt!("limit" => limit = |v, p| count(v, p).map(Some)),
    opt!("per" => per = |v: &Value, p| v.finite(p).map(Some)),
    opt!("policy" => policy = |v: &Value, p| {
        v.bytes(p).map(|b| Some(String::from_utf8_lossy(&b).into_owned()))
    }),
    opt!("burst" => burst = |v, p| count(v, p).map(Some)),
];

/// A count of cost units: 1 to [`MAX_LIMIT`].
fn count(value: &Value, param: impl Display + Copy) -> PhpResult<u64> {
    super::value::whole_in(value, param, 1..=MAX_LIMIT)
}

/// The rate `options` describe (`method` names them in errors).
pub fn rate(options: &Value, method: &str) -> PhpResult<Rate> {
    let mut o = Options::default();
    read_options(options, method, OPTIONS, &mut o)?;
    let limit = o.limit.ok_or_else(|| {
        value_error(format!(
            "{method} must give 'limit' (admissions per 'per' seconds)"
        ))
    })?;
    let per = o
        .per
        .ok_or_else(|| value_error(format!("{method} must give 'per' (the period, in seconds)")))?;
    if !(MIN_PER.as_secs_f64()..=MAX_PER.as_secs_f64()).contains(&per) {
        return Err(value_error(format!(
            "{method} option 'per' must be between {} and {} seconds, {} given",
            MIN_PER.as_secs_f64(),
            MAX_PER.as_secs(),
            super::value::shown(per)
        )));
    }
    let policy = match o.policy.as_deref() {
        None | Some("token_bucket") => Policy::TokenBucket {
            burst: o.burst.unwrap_or(limit),
        },
        Some(other) => {
            if o.burst.is_some() {
                return Err(value_error(format!(
                    "{method} option 'burst' is the token bucket's: policy '{other}' takes none"
                )));
            }
            match other {
                "sliding_window" => Policy::SlidingWindow,
                "fixed_window" => Policy::FixedWindow,
                other => {
                    return Err(value_error(format!(
                        "{method} option 'policy' must be 'token_bucket', 'sliding_window' or 'fixed_window', {} given",
                        super::value::quoted(other.as_bytes())
                    )));
                }
            }
        }
    };
    Ok(Rate {
        policy,
        limit,
        per: Duration::from_secs_f64(per),
    })
}

/// A decision's cost: 1 up to what every limit of it can ever allow.
fn cost(value: &Value, param: impl Display + Copy, limits: &[&limit::Limiter]) -> PhpResult<u64> {
    let n = count(value, param)?;
    if let Some(l) = limits.iter().find(|l| n > l.rate().capacity()) {
        return Err(value_error(format!(
            "{param} is {n}, more than limiter {} can ever allow ({})",
            super::value::quoted(l.name()),
            l.rate().capacity()
        )));
    }
    Ok(n)
}

/// The limited key: null or a string ('' and null are the same key).
fn key(value: &Value, param: impl Display + Copy) -> PhpResult<Vec<u8>> {
    match value {
        Value::Null => Ok(Vec::new()),
        value => value.bytes(param),
    }
}

/// A rate limiter, from `RedisLock\Client::limiter()` (not constructible
/// with `new`).
#[php_class]
#[php(name = "RedisLock\\Limiter")]
pub struct Limiter {
    limiter: limit::Limiter,
}

impl Limiter {
    pub fn new(config: Arc<Config>, name: Vec<u8>, rate: Rate) -> Self {
        Limiter {
            limiter: limit::Limiter::new(config, name, rate),
        }
    }

    pub fn limiter(&self) -> &limit::Limiter {
        &self.limiter
    }

    fn decided(
        &self,
        m: &'static str,
        key: &Value,
        cost: &Value,
        take: bool,
    ) -> PhpResult<Decision> {
        let key = self::key(key, Argument(m, 1, "key"))?;
        let cost = self::cost(cost, Argument(m, 2, "cost"), &[&self.limiter])?;
        let limits = [(&self.limiter, key.as_slice())];
        let decision = engine(limit::decide(&limits, cost, take))?;
        Ok(Decision::of(decision, &limits))
    }
}

#[php_impl]
impl Limiter {
    /// Not for PHP code: call $client->limiter($name, $options) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Limiter",
            "call $client->limiter($name, $options) on a RedisLock\\Client",
        ))
    }

    /// Consumes `$cost` from `$key`'s limit (null or '': the limiter's one
    /// shared limit) if it allows, deciding in one round trip on the
    /// server's clock. Returns the decision: `allowed()`, `remaining()`,
    /// `retryAfter()`, `resetAfter()`.
    #[php(defaults(cost = 1))]
    pub fn attempt(&self, key: Arg<NullableText>, cost: Arg<Int>) -> PhpResult<Decision> {
        self.decided("RedisLock\\Limiter::attempt()", &key, &cost, true)
    }

    /// What `attempt()` would decide now, consuming nothing.
    #[php(defaults(cost = 1))]
    pub fn peek(&self, key: Arg<NullableText>, cost: Arg<Int>) -> PhpResult<Decision> {
        self.decided("RedisLock\\Limiter::peek()", &key, &cost, false)
    }

    /// Attempts until allowed, sleeping between attempts exactly as long as
    /// the limit says (no polling), for up to `$timeout` seconds (INF: no
    /// limit). Returns the refusal at once when the limit cannot allow
    /// within `$timeout`, and when a signal with a handler arrives.
    #[php(defaults(cost = 1))]
    pub fn wait(
        &self,
        key: Arg<NullableText>,
        timeout: Arg<Float>,
        cost: Arg<Int>,
    ) -> PhpResult<Decision> {
        const M: &str = "RedisLock\\Limiter::wait()";
        let key = self::key(&key, Argument(M, 1, "key"))?;
        let timeout = wait_seconds(&timeout, Argument(M, 2, "timeout"))?;
        let cost = self::cost(&cost, Argument(M, 3, "cost"), &[&self.limiter])?;
        let decision = engine(self.limiter.wait(&key, cost, timeout))?;
        Ok(Decision::of(decision, &[(&self.limiter, key.as_slice())]))
    }

    /// Forgets `$key`'s use (null or '': the shared limit's): it starts
    /// full again. True if there was any.
    pub fn reset(&self, key: Arg<NullableText>) -> PhpResult<bool> {
        let key = self::key(&key, Argument("RedisLock\\Limiter::reset()", 1, "key"))?;
        engine(self.limiter.reset(&key))
    }

    /// The limiter's name.
    pub fn name(&self) -> Zval {
        binary(self.limiter.name())
    }

    /// What `var_dump()` shows: the name, policy, limit, period and burst.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        let rate = self.limiter.rate();
        let (policy, burst) = match rate.policy {
            Policy::TokenBucket { burst } => ("token_bucket", Some(burst)),
            Policy::SlidingWindow => ("sliding_window", None),
            Policy::FixedWindow => ("fixed_window", None),
        };
        let burst = burst.and_then(|b| i64::try_from(b).ok());
        debug_info(vec![
            ("name", self.name()),
            ("policy", policy.into_zval(false)?),
            (
                "limit",
                i64::try_from(rate.limit)
                    .unwrap_or(i64::MAX)
                    .into_zval(false)?,
            ),
            ("per", rate.per.as_secs_f64().into_zval(false)?),
            ("burst", burst.into_zval(false)?),
        ])
    }
}

/// Decides `$cost` against several limits at once (`$limits`: a list of
/// `Limiter` objects, or `[Limiter, key]` pairs), for `RedisLock\Client::attempt()`.
pub fn attempt_all(config: &Config, limits: &ZendHashTable, cost: &Value) -> PhpResult<Decision> {
    const M: &str = "RedisLock\\Client::attempt()";
    let param = Argument(M, 1, "limits");
    let mut asked = limit::Asked::new(config, limits.len());
    for (_, entry) in super::value::entries(limits) {
        let (limiter, key) = match entry.array() {
            Some(pair) => {
                let mut items = pair.values();
                let limiter = items.next().and_then(|zv| zv.extract::<&Limiter>());
                let key = items.next().map(Value::copy_of);
                match (limiter, key, items.next()) {
                    (Some(limiter), Some(key), None) => (limiter, self::key(&key, param)?),
                    _ => {
                        return Err(type_error(format!(
                            "{param} must hold RedisLock\\Limiter objects or [RedisLock\\Limiter, ?string \\$key] pairs"
                        )));
                    }
                }
            }
            None => match entry.extract::<&Limiter>() {
                Some(limiter) => (limiter, Vec::new()),
                None => {
                    return Err(type_error(format!(
                        "{param} must hold RedisLock\\Limiter objects or [RedisLock\\Limiter, ?string \\$key] pairs, {} found",
                        entry.get_type()
                    )));
                }
            },
        };
        asked
            .add(&limiter.limiter, key)
            .map_err(|refused| value_error(format!("{param}{refused}")))?;
    }
    let refused = |refused: limit::Refused| value_error(format!("{param}{refused}"));
    if asked.limiters().is_empty() {
        return Err(refused(limit::Refused::Empty));
    }
    let cost = self::cost(cost, Argument(M, 2, "cost"), &asked.limiters())?;
    let limits = asked.limits().map_err(refused)?;
    let decision = engine(limit::decide(&limits, cost, true))?;
    Ok(Decision::of(decision, &limits))
}

/// What a limiter decided, from `attempt()`, `peek()` and `wait()`.
#[php_class]
#[php(name = "RedisLock\\Decision")]
pub struct Decision {
    decision: limit::Decision,
    /// The limiter and key that refused, if one did.
    refused: Option<(Vec<u8>, Vec<u8>)>,
}

impl Decision {
    fn of(decision: limit::Decision, limits: &[(&limit::Limiter, &[u8])]) -> Self {
        let refused = decision
            .refused_by
            .and_then(|i| limits.get(i))
            .map(|(l, k)| (l.name().to_vec(), k.to_vec()));
        Decision { decision, refused }
    }
}

#[php_impl]
impl Decision {
    /// Not for PHP code: decisions come from a RedisLock\Limiter.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Decision",
            "decisions come from $client->limiter($name, $options)->attempt()",
        ))
    }

    /// Whether it was allowed (and, but for `peek()`, consumed).
    pub fn allowed(&self) -> bool {
        self.decision.allowed()
    }

    /// The cost units left now (after this one, when allowed): the least
    /// over the limits decided.
    pub fn remaining(&self) -> i64 {
        i64::try_from(self.decision.remaining).unwrap_or(i64::MAX)
    }

    /// Seconds until the same attempt could be allowed (0.0 when allowed).
    pub fn retry_after(&self) -> f64 {
        self.decision.retry_after.as_secs_f64()
    }

    /// Seconds until every limit decided is back to its full capacity.
    pub fn reset_after(&self) -> f64 {
        self.decision.reset_after.as_secs_f64()
    }

    /// The server's clock at the decision (Unix time, seconds): with
    /// `resetAfter()`, an HTTP `RateLimit-Reset`.
    pub fn at(&self) -> f64 {
        self.decision.at.as_secs_f64()
    }

    /// The name of the limiter that refused (the first, of several); null
    /// when allowed.
    pub fn limiter(&self) -> Zval {
        optional_binary(self.refused.as_ref().map(|(name, _)| name.as_slice()))
    }

    /// The key of the limit that refused; null when allowed.
    pub fn key(&self) -> Zval {
        optional_binary(self.refused.as_ref().map(|(_, key)| key.as_slice()))
    }

    /// What `var_dump()` shows: each of the answers below, by name.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        debug_info(vec![
            ("allowed", self.allowed().into_zval(false)?),
            ("remaining", self.remaining().into_zval(false)?),
            ("retryAfter", self.retry_after().into_zval(false)?),
            ("resetAfter", self.reset_after().into_zval(false)?),
            ("at", self.at().into_zval(false)?),
            ("limiter", self.limiter()),
            ("key", self.key()),
        ])
    }
}
