//! The lock engine: owner-token locks on one Redis key each, acquired with an
//! atomic SET NX PX, released and extended only by the token's owner. Waiters
//! queue in a line beside the lock, first come first served, and a release
//! hands the lock straight to the next one (see `wait`).

pub mod contract;
pub mod hold;
pub mod inspect;
pub mod leader;
pub mod multi;
pub mod order;
pub mod permits;
pub mod redlock;
pub mod registry;
pub mod renew;
pub mod seed;

use crate::identity;
use std::cell::RefCell;
use std::collections::HashSet;
use std::sync::LazyLock;
use std::time::Duration;

use crate::config::{Config, Topology};
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{Invocation, NumberOr, Script, script};
use crate::time::{lease_ms, millis};
use crate::wait::{self, Pass, Try, Woken};

static ACQUIRE: LazyLock<Script> = script!("lock_acquire.lua");
static RELEASE: LazyLock<Script> = script!("lock_release.lua");
static LEAVE: LazyLock<Script> = script!("lock_leave.lua");
static MANY: LazyLock<Script> = script!("lock_many.lua");
static EXTEND: LazyLock<Script> = script!("lock_extend.lua");
static REMAINING: LazyLock<Script> = script!("lock_remaining.lua");
static EXPIRY: LazyLock<Script> = script!("lock_expiry.lua");
/// The types of a lock script's keys, for each lock (see
/// `Invocation::types_checked`): a lock, its fencing counter and its line,
/// in that order.
const TYPES: &[&str] = &["string", "string", "list"];

/// How long a fence counter outlives the lease of the lock it counts for.
pub const FENCE_KEEP: Duration = Duration::from_secs(3600);

/// The keys of one lock: the lock itself, its fencing counter, its waiter
/// line and the prefix of its waiters' keys, all in one hash slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    pub lock: Vec<u8>,
    pub fence: Vec<u8>,
    pub line: Vec<u8>,
    pub waiters: Vec<u8>,
    /// Whether acquires hand out fencing tokens (the `RedisLock\` API).
    pub fenced: bool,
    /// Whether a key without expiry is stale and taken over (the seed's
    /// rule: an old client died between SETNX and EXPIRE).
    pub stale_without_expiry: bool,
    /// For a hold of permits (semaphores, read-write locks): `lock` is then
    /// the set of holders (see `permits`).
    pub permits: Option<permits::Permits>,
}

impl Keys {
    /// A seed `RedisLock` lock (`Lock:<name>`): no fencing tokens, a key
    /// without expiry is stale.
    pub fn seed(prefix: &[u8], name: &[u8]) -> Self {
        Self::at(&Place::new(prefix, Kind::SeedLock, name), false, true)
    }

    /// A seed `Lock_Service` order lock (`order_lock_<id>`), as the seed's
    /// locks.
    pub fn order(prefix: &[u8], id: &[u8]) -> Self {
        Self::at(&Place::new(prefix, Kind::OrderLock, id), false, true)
    }

    /// An order lock of a layout of its own ([`Place::order`]), as the
    /// seed's.
    pub fn order_at(prefix: &[u8], before: &[u8], after: &[u8], id: &[u8]) -> Self {
        Self::at(&Place::order(prefix, before, after, id), false, true)
    }

    /// A `RedisLock\` lock, with fencing tokens.
    pub fn named(prefix: &[u8], name: &[u8]) -> Self {
        Self::at(&Place::new(prefix, Kind::Lock, name), true, false)
    }

    /// A lock on the key `<prefix><name>` itself, holding its owner token
    /// as a plain string: the key and value other clients' locks use
    /// (Laravel's stock cache locks), so they exclude each other. Fencing
    /// tokens count this API's acquires; a key without expiry is held
    /// (Laravel's locks without seconds), never stale.
    pub fn exact(prefix: &[u8], name: &[u8]) -> Self {
        Self::at(&Place::new(prefix, Kind::ExactLock, name), true, false)
    }

    /// One node's share of a Redlock on `RedisLock\` lock `name`: no
    /// fencing tokens (each node would count its own).
    pub fn redlock(prefix: &[u8], name: &[u8]) -> Self {
        Self::at(&Place::new(prefix, Kind::Lock, name), false, true)
    }

    pub(crate) fn at(place: &Place, fenced: bool, stale_without_expiry: bool) -> Self {
        Keys {
            lock: place.main.clone(),
            fence: place.beside(":fence"),
            line: place.beside(":line"),
            waiters: place.beside(":"),
            fenced,
            stale_without_expiry,
            permits: None,
        }
    }

    /// The wake list of the waiter with `token`.
    pub fn wake(&self, token: &str) -> Vec<u8> {
        wait::wake_key(&self.waiters, token)
    }

    /// How long the fencing counter outlives a lease, as the scripts take
    /// it ("" without fencing tokens).
    pub(crate) fn keep(&self) -> String {
        if self.fenced {
            millis(FENCE_KEEP).to_string()
        } else {
            String::new()
        }
    }
}

/// How long to wait for a lock, and how often at most the first waiter in
/// line looks again when nobody hands the lock over (a holder that dies lets
/// its lease run out, and old clients delete the key without a release).
#[derive(Clone, Copy, Debug)]
pub struct Wait {
    pub timeout: Duration,
    pub recheck: Duration,
}

/// How often at most the first waiter in line looks again on its own:
/// releases hand over at once, so this only bounds the stall a holder that
/// died (or a key deleted by hand) causes.
pub const RECHECK: Duration = Duration::from_millis(250);

impl Wait {
    /// Up to `timeout` (zero: one try), rechecking at [`RECHECK`].
    pub fn up_to(timeout: Duration) -> Self {
        Wait {
            timeout,
            recheck: RECHECK,
        }
    }
}

/// An acquire in progress, as the waiting loop drives it.
struct Acquire<'a> {
    config: &'a Config,
    keys: &'a Keys,
    token: &'a str,
    lease: u64,
    keep: String,
    wait: Wait,
}

impl Acquire<'_> {
    /// Runs the lock's script, or the permits' one for a hold of permits
    /// (which also takes the holders' counts, and the permits wanted and in
    /// all after the common arguments).
    fn call(
        &self,
        scripts: (&Script, fn(&permits::Scripts) -> &Script),
        args: impl Fn(&mut Invocation<'_>),
    ) -> Result<(i64, i64), Error> {
        let permits = self.keys.permits.as_ref();
        conn::with(self.config, |c| {
            let mut call = match permits {
                Some(_) => permits::call(scripts.1(permits::scripts(self.keys)), self.keys),
                None => {
                    let mut call = scripts.0.key(&self.keys.lock);
                    call.types_checked(TYPES);
                    call
                }
            };
            call.key(&self.keys.fence).key(&self.keys.line);
            args(&mut call);
            if let Some(p) = permits {
                call.arg(p.take).arg(p.of);
            }
            // {0, fencing token} when acquired (or handed the lock); when
            // not, {ms, 0} or the ms alone.
            call.invoke(c).map(|reply| match reply {
                NumberOr::Number(left) => (left, 0),
                NumberOr::Other(reply) => reply,
            })
        })
    }
}

thread_local! {
    /// The locks this thread found taken or awaited when it last tried
    /// them: their next acquire goes to the line's script at once, where a
    /// plain first try would cost a round trip (see [`Acquire::plain`]).
    static CONTENDED: RefCell<HashSet<Vec<u8>>> = RefCell::new(HashSet::new());
}

/// How many contended locks a thread remembers (past that, it forgets them
/// all: the cost of forgetting is one round trip per lock).
const CONTENDED_MAX: usize = 1024;

fn contended(lock: &[u8]) -> bool {
    CONTENDED.with(|c| c.borrow().contains(lock))
}

fn set_contended(lock: &[u8], yes: bool) {
    CONTENDED.with(|c| {
        let mut c = c.borrow_mut();
        if !yes {
            c.remove(lock);
        } else if !c.contains(lock) {
            if c.len() >= CONTENDED_MAX {
                c.clear();
            }
            c.insert(lock.to_vec());
        }
    });
}

/// What a plain first try found.
enum Plain {
    /// Acquired, with nobody in line.
    Acquired,
    /// Held by another, and the acquire makes one try only: not acquired,
    /// as the script would say.
    Refused,
    /// Let the script decide (it takes a stale key over, or joins the line).
    Script,
}

impl Acquire<'_> {
    /// The first try of an uncontended lock without fencing tokens (the
    /// seed's `RedisLock`), in plain commands, one round trip: `SET NX PX`,
    /// the line's `LLEN` and the lock's `PTTL` (for a single try of a lock
    /// found taken). A script costs Redis more than the commands it runs;
    /// these are the commands the script would run. A lock set while its line was not empty (the
    /// holder's lease ran out with waiters in line, or an old client
    /// deleted the key) is handed straight on to the first waiter, as a
    /// release hands it, and the acquire joins the line behind it: nobody
    /// in line is passed over. A cluster, a lock without expiry, fencing
    /// tokens or permits take the script.
    fn plain(&self) -> Result<Plain, Error> {
        if self.keys.fenced
            || self.keys.permits.is_some()
            || self.lease == 0
            || matches!(self.config.topology, Topology::Cluster { .. })
            || contended(&self.keys.lock)
        {
            return Ok(Plain::Script);
        }
        let once = self.wait.timeout.is_zero();
        let (set, waiting, ttl): (Option<String>, i64, i64) = conn::with(self.config, |c| {
            let mut lease = itoa::Buffer::new();
            let set: [&[u8]; 6] = [
                b"SET",
                &self.keys.lock,
                self.token.as_bytes(),
                b"NX",
                b"PX",
                lease.format(self.lease).as_bytes(),
            ];
            let llen: [&[u8]; 2] = [b"LLEN", &self.keys.line];
            let pttl: [&[u8]; 2] = [b"PTTL", &self.keys.lock];
            let replies = conn::request(c, &[&set, &llen, &pttl])?;
            let took = replies.first() == Some(&redis::Value::Okay);
            // An error as Redis said it (a pipeline's own error names only
            // its kind: READONLY, without Redis' words).
            match redis::Value::Array(replies).extract_error() {
                Ok(replies) => Ok(redis::from_redis_value(replies)?),
                Err(e) => {
                    // The line holds another type (written by hand): the
                    // lock the SET took is deleted again (a lease below 0),
                    // and the error names the key (Redis' own names none).
                    if took {
                        EXTEND
                            .key(&self.keys.lock)
                            .arg(self.token)
                            .arg(-1)
                            .invoke::<i64>(c)?;
                    }
                    Err(Invocation::keys_of(TYPES)
                        .key(&self.keys.lock)
                        .key(&self.keys.fence)
                        .key(&self.keys.line)
                        .naming(c, e))
                }
            }
        })?;
        if set.is_some() && waiting == 0 {
            return Ok(Plain::Acquired);
        }
        set_contended(&self.keys.lock, true);
        if set.is_some() {
            release(self.config, self.keys, self.token.as_bytes())?;
            return Ok(Plain::Script);
        }
        // A key without expiry may be an old client's stale one (-1), and
        // a key gone since the SET (-2) may be free: the script looks.
        Ok(if once && (waiting > 0 || ttl >= 0) {
            Plain::Refused
        } else {
            Plain::Script
        })
    }
}

impl wait::Waiter<i64> for Acquire<'_> {
    fn attempt(&mut self, pass: Pass) -> Result<Try<i64>, Error> {
        if pass == Pass::First {
            match self.plain()? {
                Plain::Acquired => return Ok(Try::Done(0)),
                Plain::Refused => return Ok(Try::Later(wait::RENEW)),
                Plain::Script => {}
            }
        }
        let place = if self.wait.timeout.is_zero() {
            0
        } else {
            millis(wait::PLACE)
        };
        let first = if pass == Pass::First { "1" } else { "0" };
        let stale = self.keys.stale_without_expiry;
        let (left, fence) = self.call((&ACQUIRE, |s| &s.acquire), |call| {
            call.arg(self.token)
                .arg(self.lease)
                .arg(&self.keep)
                .arg(&self.keys.waiters)
                .arg(place)
                .arg(first);
            if stale {
                call.arg("1");
            }
        })?;
        if pass == Pass::First {
            // Taken at once: the lock was free and nobody waited.
            set_contended(&self.keys.lock, left != 0);
        }
        Ok(match left {
            0 => Try::Done(fence),
            // Not first in line: renewing the place is all there is to do.
            -1 => Try::Later(wait::RENEW),
            ms => Try::Later(wait::later_ms(ms).min(self.wait.recheck)),
        })
    }

    fn woken(&mut self, _: usize, fence: Vec<u8>) -> Woken<i64> {
        // Handed over by a release: the value is the fencing token.
        Woken::Done(
            std::str::from_utf8(&fence)
                .ok()
                .and_then(|f| f.parse().ok())
                .unwrap_or(0),
        )
    }

    fn leave(&mut self) -> Result<Option<i64>, Error> {
        let (left, fence) = self.call((&LEAVE, |s| &s.leave), |call| {
            call.arg(self.token)
                .arg(self.lease)
                .arg(&self.keep)
                .arg(&self.keys.waiters)
                .arg(millis(wait::PLACE));
        })?;
        Ok((left == 0).then_some(fence))
    }
}

/// Takes the lock for `lease`, waiting up to `wait.timeout` in the lock's
/// line, first come first served. Returns the fencing token of this acquire
/// (0 for locks without), or None when it was not acquired in time.
pub fn acquire(
    config: &Config,
    keys: &Keys,
    token: &str,
    lease: Duration,
    wait: Wait,
) -> Result<Option<i64>, Error> {
    let mut acquire = Acquire {
        config,
        keys,
        token,
        lease: lease_ms(lease),
        keep: keys.keep(),
        wait,
    };
    let op = crate::telemetry::locks::acquire(&keys.lock);
    let fence = wait::until(config, &[keys.wake(token)], wait.timeout, &mut acquire);
    let got = fence.as_ref().map(Option::is_some).map_err(|_| ());
    crate::telemetry::locks::acquired(op, &keys.lock, token, got);
    let fence = fence?;
    if fence.is_some() {
        identity::introduce(config);
    }
    Ok(fence)
}

/// Takes all the locks of `keys` (one owner token each) for `lease` in one
/// round trip, or none: each must be free with nobody waiting in its line.
/// The keys must share a hash slot on a Cluster. Returns the fencing tokens,
/// or None when any lock was held or awaited.
pub fn acquire_all(
    config: &Config,
    keys: &[&Keys],
    tokens: &[String],
    lease: Duration,
) -> Result<Option<Vec<i64>>, Error> {
    let keep = keys.first().map(|k| k.keep()).unwrap_or_default();
    let reply: Vec<i64> = conn::with(config, |c| {
        let mut call = MANY.prepare_invoke();
        call.types_checked(TYPES);
        for k in keys {
            call.key(&k.lock).key(&k.fence).key(&k.line);
        }
        call.arg(millis(lease)).arg(&keep);
        for token in tokens {
            call.arg(token);
        }
        call.invoke(c)
    })?;
    let fences = (reply.first() == Some(&1)).then(|| reply[1..].to_vec());
    if fences.is_some() {
        identity::introduce(config);
    }
    Ok(fences)
}

/// Waits up to `timeout` for `replicas` replicas to acknowledge the acquire
/// of the lock with `token` just made on this thread (Redis' `WAIT` on the
/// connection that wrote it). Returns how many did; when that is
/// fewer, or the wait failed, the lock has been released again.
pub fn confirm(
    config: &Config,
    keys: &Keys,
    token: &str,
    replicas: u64,
    timeout: Duration,
) -> Result<u64, Error> {
    // WAIT 0 would wait forever; a timeout is always set.
    let ms = millis(timeout).max(1);
    let acked = conn::with(config, |c| {
        redis::cmd("WAIT").arg(replicas).arg(ms).query(c)
    });
    if !matches!(acked, Ok(n) if n >= replicas) {
        let _ = release(config, keys, token.as_bytes());
    }
    acked
}

/// Releases the lock (or a holder's permits) if it still holds `token`,
/// handing it to the next waiter(s) in line; true if this call released it.
pub fn release(config: &Config, keys: &Keys, token: &[u8]) -> Result<bool, Error> {
    release_as(config, keys, Some(token))
}

/// Releases a lock whoever holds it, handing it to the next waiter in line;
/// true if it was held.
pub fn force_release(config: &Config, keys: &Keys) -> Result<bool, Error> {
    release_as(config, keys, None)
}

fn release_as(config: &Config, keys: &Keys, token: Option<&[u8]>) -> Result<bool, Error> {
    let released: i64 = conn::with(config, |c| {
        let mut call = match &keys.permits {
            Some(_) => permits::call(&permits::scripts(keys).release, keys),
            None => {
                let mut call = RELEASE.key(&keys.lock);
                call.types_checked(TYPES);
                call
            }
        };
        call.key(&keys.fence)
            .key(&keys.line)
            .arg(token.unwrap_or_default())
            .arg(keys.keep())
            .arg(&keys.waiters)
            .arg(millis(wait::PLACE));
        if token.is_none() {
            call.arg("force");
        }
        call.invoke(c)
    })?;
    if let Some(token) = token {
        crate::telemetry::locks::released(token, released == 1);
    }
    Ok(released == 1)
}

/// Sets a new lease if the lock still holds `token`.
pub fn extend(config: &Config, key: &[u8], token: &str, lease: Duration) -> Result<bool, Error> {
    let done: i64 = conn::with(config, |c| {
        EXTEND
            .key(key)
            .types_checked(TYPES)
            .arg(token)
            .arg(lease_ms(lease))
            .invoke(c)
    })?;
    Ok(done == 1)
}

/// Whether the key still holds `token`.
pub fn holds(config: &Config, key: &[u8], token: &str) -> Result<bool, Error> {
    Ok(remaining(config, key, token)?.is_some())
}

/// How long the lease of a lock still holding `token` runs (`Duration::MAX`
/// when it has no expiry); `None` when the key no longer holds `token`.
pub fn remaining(config: &Config, key: &[u8], token: &str) -> Result<Option<Duration>, Error> {
    let left: i64 = conn::with(config, |c| {
        REMAINING.key(key).types_checked(TYPES).arg(token).invoke(c)
    })?;
    Ok(match left {
        -2 => None,
        ms => Some(wait::later_ms(ms)),
    })
}

/// When the lease of a lock still holding `token` ends, in whole unix
/// seconds on the server's clock (`Some(-1)`: it has no expiry); `None`
/// when the key no longer holds `token`.
pub fn expiry(config: &Config, key: &[u8], token: &str) -> Result<Option<i64>, Error> {
    let at: i64 = conn::with(config, |c| {
        EXPIRY.key(key).types_checked(TYPES).arg(token).invoke(c)
    })?;
    Ok((at != -2).then_some(at))
}

/// Sets a new lease on a hold (a lock, or a holder's permits) if it still
/// holds `token`.
pub fn extend_hold(
    config: &Config,
    keys: &Keys,
    token: &str,
    lease: Duration,
) -> Result<bool, Error> {
    match keys.permits {
        Some(_) => permits::extend(config, keys, token, lease),
        None => extend(config, &keys.lock, token, lease),
    }
}

/// What is left of a hold's lease (see [`remaining`]).
pub fn hold_remaining(
    config: &Config,
    keys: &Keys,
    token: &str,
) -> Result<Option<Duration>, Error> {
    match keys.permits {
        Some(_) => Ok(permits::usage(config, keys, Some(token))?.left),
        None => remaining(config, &keys.lock, token),
    }
}
