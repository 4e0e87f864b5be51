//! Locks as an operator sees them: who holds one, for how long, under which
//! fencing token, and how many wait; and the locks a server has, found with
//! SCAN (never KEYS: a server with millions of keys keeps serving).

use std::sync::LazyLock;
use std::time::Duration;

use super::Keys;
use crate::config::{Config, Topology};
use crate::conn::{self, Error};
use crate::identity::{self, Holder};
use crate::keys;
use crate::scripts::{self, Script, script};
use crate::wait;

static STATE: LazyLock<Script> = script!("lock_state.lua");
static PERMITS: LazyLock<Script> = script!("permits_inspect.lua");

/// Which API a lock belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `RedisLock\Lock` (key `lock:{<name>}`).
    Lock,
    /// The seed's `RedisLock` (key `Lock:<name>`).
    Seed,
    /// `RedisLock\Lock` with `exactKey` (key `<name>`, as Laravel's).
    Exact,
    /// `RedisLock\Semaphore` (holders in `semaphore:{<name>}`).
    Semaphore,
    /// `Client::readLock()`/`writeLock()` (holders in `rwlock:{<name>}`; not
    /// those with `exactKey`, in Symfony's format).
    RwLock,
    /// The seed's `Lock_Service` order lock (key `order_lock_<order id>`;
    /// its name is the order id).
    Order,
}

/// Every kind, in the order lists are sorted by.
pub const KINDS: [Kind; 6] = [
    Kind::Order,
    Kind::Exact,
    Kind::Lock,
    Kind::RwLock,
    Kind::Seed,
    Kind::Semaphore,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Lock => "lock",
            Kind::Seed => "RedisLock",
            Kind::Exact => "exact",
            Kind::Semaphore => "semaphore",
            Kind::RwLock => "rwlock",
            Kind::Order => "Lock_Service",
        }
    }

    /// The kind of this name, if any (`seed`: the drop-in `RedisLock`'s
    /// name before it was named for its class, kept for one release).
    pub fn named(name: &[u8]) -> Option<Kind> {
        if name == b"seed" {
            return Some(Kind::Seed);
        }
        KINDS.into_iter().find(|k| k.name().as_bytes() == name)
    }

    /// The keys of a lock of this kind (a hold of permits: the take and
    /// total do not matter to an operator).
    fn keys(self, config: &Config, name: &[u8]) -> Keys {
        let prefix = &config.prefix;
        match self {
            Kind::Lock => Keys::named(prefix, name),
            Kind::Seed => Keys::seed(prefix, name),
            Kind::Exact => Keys::exact(prefix, name),
            Kind::Semaphore => Keys::permits(prefix, keys::Kind::Semaphore, name, 1, 1),
            Kind::RwLock => Keys::permits(prefix, keys::Kind::RwLock, name, 1, 1),
            Kind::Order => Keys::order(prefix, name),
        }
    }
}

/// How a lock stands.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The holder's owner token (of several, the one whose lease ends
    /// last); None when it is free.
    pub token: Option<Vec<u8>>,
    /// What is left of that lease; None when free or without expiry.
    pub remaining: Option<Duration>,
    /// The fencing token of the last acquire (the holder's, while held).
    pub fence: Option<i64>,
    /// The process that holds it, when it described itself.
    pub holder: Option<Holder>,
    /// The waiters in line.
    pub waiting: u64,
    /// How many hold it (a lock: 0 or 1).
    pub holders: u64,
    /// The permits they hold (a lock: 0 or 1; a write lock: all,
    /// `permits::UNLIMITED`).
    pub permits: u64,
    /// A semaphore's permits in all, as the last holder to take permits
    /// counted them (each object counts with its own); None when unknown
    /// and for the other kinds.
    pub of: Option<u64>,
}

/// How the lock `name` of `kind` stands.
pub fn state(config: &Config, kind: Kind, name: &[u8]) -> Result<State, Error> {
    let keys = kind.keys(config, name);
    let raw: Raw = conn::with(config, |c| invocation(&keys).invoke(c))?;
    Ok(states_of(config, &[(keys, raw)])?.remove(0))
}

/// How the locks stand: a round trip to load each script, one per 1000
/// locks, and one for the holders, each process looked up once.
pub fn states(config: &Config, locks: &[(Kind, Vec<u8>)]) -> Result<Vec<State>, Error> {
    let mut read = Vec::with_capacity(locks.len());
    let as_functions =
        !locks.is_empty() && conn::with(config, |c| scripts::ready(c, &[&STATE, &PERMITS]))?;
    for chunk in locks.chunks(1000) {
        let keys: Vec<Keys> = chunk
            .iter()
            .map(|(kind, name)| kind.keys(config, name))
            .collect();
        let raw: Vec<Raw> = conn::with(config, |c| {
            let mut pipe = redis::pipe();
            for k in &keys {
                pipe.add_command(invocation(k).pipelined(as_functions));
            }
            // A pipeline's error is Redis' reply to one of its calls (all
            // replies read), at its index: that call, run alone, names the
            // key of another type (see `invocation`).
            pipe.query(c).map_err(|e| {
                let failed = e.clone().into_server_errors();
                let at = failed.and_then(|f| f.first().and_then(|(i, _)| keys.get(*i)));
                at.and_then(|k| invocation(k).invoke::<Raw>(c).err())
                    .unwrap_or(e)
            })
        })?;
        read.extend(keys.into_iter().zip(raw));
    }
    states_of(config, &read)
}

/// What `lock_state.lua` and `permits_inspect.lua` return: the token, the
/// lease left in ms, the fencing counter, the waiters, the holders and the
/// permits in use and a semaphore's permits in all (0: unknown).
type Raw = (Option<Vec<u8>>, i64, Option<i64>, u64, u64, u64, u64);

/// The call that reads how the lock of `keys` stands; a key of another
/// type is named.
fn invocation(keys: &Keys) -> crate::scripts::Invocation<'static> {
    let mut call = match &keys.permits {
        Some(p) => {
            let mut call = PERMITS.prepare_invoke();
            call.key(&keys.lock)
                .key(&p.counts)
                .types_checked(super::permits::TYPES);
            call
        }
        None => {
            let mut call = STATE.prepare_invoke();
            call.key(&keys.lock).types_checked(super::TYPES);
            call
        }
    };
    call.key(&keys.fence).key(&keys.line).arg(&keys.waiters);
    call
}

fn states_of(config: &Config, read: &[(Keys, Raw)]) -> Result<Vec<State>, Error> {
    let tokens: Vec<Option<&[u8]>> = read.iter().map(|(_, raw)| raw.0.as_deref()).collect();
    let holders = identity::of(config, &tokens)?;
    Ok(read
        .iter()
        .zip(holders)
        .map(
            |((keys, (token, ms, fence, waiting, holders, permits, of)), holder)| State {
                remaining: (token.is_some() && *ms >= 0).then(|| wait::later_ms(*ms)),
                fence: fence.filter(|_| keys.fenced),
                holder,
                token: token.clone(),
                waiting: *waiting,
                holders: *holders,
                permits: *permits,
                of: (*of > 0).then_some(*of),
            },
        )
        .collect())
}

/// Releases the lock `name` of `kind` whoever holds it, handing it to the
/// next waiter in line (an operator's forced release); true if it was held.
pub fn force_release(config: &Config, kind: Kind, name: &[u8]) -> Result<bool, Error> {
    super::force_release(config, &kind.keys(config, name))
}

/// Whether [`list`] can list the locks: not on a Cluster, whose keys are
/// spread over its masters.
pub fn listable(config: &Config) -> bool {
    !matches!(config.topology, Topology::Cluster { .. })
}

/// The names of up to `limit` locks matching the glob `pattern` (Redis'
/// MATCH syntax), of every kind (exact-key locks: those held now, taken
/// through this API within [`super::FENCE_KEEP`] of the end of their last
/// lease), sorted by kind and name. A lock taken or
/// freed during the scan may be missed or listed. One server's keys: not
/// for a cluster (see [`listable`]).
pub fn list(config: &Config, pattern: &[u8], limit: usize) -> Result<Vec<(Kind, Vec<u8>)>, Error> {
    let mut found = Vec::new();
    let prefix = &config.prefix;
    let seed = Keys::seed(prefix, b"").lock;
    let order = Keys::order(prefix, b"").lock;
    let mut seen = std::collections::HashSet::new();
    let named = |kind: Kind, of: keys::Kind, kept: &'static str| {
        keys::globs(prefix, of, pattern).map(|glob| (kind, glob, kept))
    };
    let [lock, lock_braced] = named(Kind::Lock, keys::Kind::Lock, "string");
    let [semaphore, semaphore_braced] = named(Kind::Semaphore, keys::Kind::Semaphore, "zset");
    let [rwlock, rwlock_braced] = named(Kind::RwLock, keys::Kind::RwLock, "zset");
    let globs: [(Kind, Vec<u8>, &str); 10] = [
        lock,
        lock_braced,
        semaphore,
        semaphore_braced,
        rwlock,
        rwlock_braced,
        (
            Kind::Seed,
            [&keys::literal(&seed)[..], pattern].concat(),
            "string",
        ),
        (
            Kind::Order,
            [&keys::literal(&order)[..], pattern].concat(),
            "string",
        ),
        // An exact-key lock's own key is any key: found by its fencing
        // counter, `exactlock:{<prefix><name>}:fence` (or counted out).
        (
            Kind::Exact,
            [
                &keys::literal(prefix)[..],
                b"exactlock:{",
                &keys::literal(prefix),
                pattern,
                b"}:fence",
            ]
            .concat(),
            "string",
        ),
        (
            Kind::Exact,
            [
                &keys::literal(prefix)[..],
                b"exactlock:{*}#*:",
                pattern,
                b":fence",
            ]
            .concat(),
            "string",
        ),
    ];
    for (kind, glob, kept) in globs {
        let mut cursor = 0u64;
        loop {
            let (next, keys) = conn::scan(config, cursor, &glob, kept)?;
            let mut names: Vec<(Vec<u8>, Vec<u8>)> = keys
                .into_iter()
                .filter_map(|key| {
                    let name = match kind {
                        Kind::Lock => keys::name_of(prefix, keys::Kind::Lock, &key, ""),
                        Kind::Seed => key.strip_prefix(seed.as_slice()).map(<[u8]>::to_vec),
                        Kind::Order => key.strip_prefix(order.as_slice()).map(<[u8]>::to_vec),
                        Kind::Exact => keys::name_of(prefix, keys::Kind::ExactLock, &key, ":fence"),
                        Kind::Semaphore => keys::name_of(prefix, keys::Kind::Semaphore, &key, ""),
                        Kind::RwLock => keys::name_of(prefix, keys::Kind::RwLock, &key, ""),
                    };
                    name.map(|name| (key, name))
                })
                .collect();
            if kind == Kind::Exact && !names.is_empty() {
                // Its counter outlives the lock: only those held now.
                let held: Vec<bool> = conn::with(config, |c| {
                    let mut pipe = redis::pipe();
                    for (_, name) in &names {
                        pipe.exists(Keys::exact(prefix, name).lock);
                    }
                    pipe.query(c)
                })?;
                let mut held = held.into_iter();
                names.retain(|_| held.next().unwrap_or(false));
            }
            for (key, name) in names {
                if found.len() == limit {
                    return Ok(sorted(found));
                }
                // A name ending in `}` with braces matches both globs.
                if seen.insert(key) {
                    found.push((kind, name));
                }
            }
            cursor = next;
            if cursor == 0 {
                break;
            }
        }
    }
    Ok(sorted(found))
}

fn sorted(mut found: Vec<(Kind, Vec<u8>)>) -> Vec<(Kind, Vec<u8>)> {
    found.sort_by(|a, b| (a.0.name(), &a.1).cmp(&(b.0.name(), &b.1)));
    found
}
