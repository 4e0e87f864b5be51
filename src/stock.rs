//! Stock counters for flash sales: a count of units on the server, taken by
//! one script that checks and decrements (never below zero), with per-buyer
//! limits, idempotency keys, and optionally the order task enqueued in the
//! same step. No lock: a buy costs one round trip.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use redis::{Cmd, FromRedisValue, ToRedisArgs};

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::queue;
use crate::scripts::{Invocation, NumberOr, Script, script};

static TAKE: LazyLock<Script> = script!("stock_take.lua");
static TAKE_AND_ORDER: LazyLock<Script> = script!("stock_order.lua");
static SET: LazyLock<Script> = script!("stock_set.lua");
static GIVE: LazyLock<Script> = script!("stock_give.lua");
static READ: LazyLock<Script> = script!("stock_read.lua");
static MOVE_OUT: LazyLock<Script> = script!("stock_move_out.lua");
static MOVE_IN: LazyLock<Script> = script!("stock_move_in.lua");
static UNTAKE: LazyLock<Script> = script!("stock_untake.lua");
/// The types of a stock script's keys (see `Invocation::types_checked`):
/// the stock, its buyers and its takes, then for a take with its order the
/// orders queue's (its tasks, payloads, attempts, leases, line and stats).
const TYPES: &[&str] = &[
    "string", "hash", "hash", "zset", "hash", "hash", "zset", "list", "hash",
];

/// The keys of one stock, all in one hash slot: of the whole stock, or of
/// one shard of a sharded stock.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Keys {
    /// The units left (a Redis integer).
    pub stock: Vec<u8>,
    /// Buyer -> units taken.
    pub buyers: Vec<u8>,
    /// Idempotency key -> units left after that take.
    pub takes: Vec<u8>,
    /// A shard's journal of moves out (`stock_move_out.lua`).
    pub moves: Vec<u8>,
    /// The moves a shard received (`stock_move_in.lua`).
    pub received: Vec<u8>,
}

impl Keys {
    /// The stock `name` under `prefix` (see `keys`).
    pub fn new(prefix: &[u8], name: &[u8]) -> Self {
        Self::at(Place::new(prefix, Kind::Stock, name))
    }

    /// Shard `i` of `n` of the stock `name` under `prefix`.
    pub fn shard(prefix: &[u8], name: &[u8], i: usize, n: usize) -> Self {
        Self::at(Place::shard(prefix, Kind::Stock, name, i, n))
    }

    fn at(place: Place) -> Self {
        Keys {
            buyers: place.beside(":buyers"),
            takes: place.beside(":takes"),
            moves: place.beside(":moves"),
            received: place.beside(":received"),
            stock: place.main,
        }
    }

    fn all(&self) -> [&[u8]; 5] {
        [
            &self.stock,
            &self.buyers,
            &self.takes,
            &self.moves,
            &self.received,
        ]
    }
}

/// A stock of a deployment: its server, its keys (of its one slot, or of
/// each shard) and the queue each take enqueues its order task on, if any.
pub struct Stock {
    config: Arc<Config>,
    name: Vec<u8>,
    shards: Vec<Keys>,
    orders: Option<queue::Queue>,
    cut_short: Duration,
    /// Replicas that must acknowledge a take, and how long to wait for them.
    replicas: Option<(u64, Duration)>,
}

/// A stock and its orders queue that no one script can reach: on a
/// Cluster, in two hash slots.
#[derive(Debug)]
pub struct SlotsApart;

/// Shards that would all be in one slot: on a Cluster whose prefix holds a
/// hash tag (`{app}:`), every key of the deployment is in that tag's slot.
#[derive(Debug)]
pub struct OneSlotPrefix;

/// How many times more a take of a sharded stock with orders gathers
/// units when other takes took those moved for it.
const GATHERS: usize = 3;

/// The most shards a stock has.
pub const MAX_SHARDS: u64 = 128;

/// How long a shard remembers a move it received: a move finished twice
/// within it adds its units once (docs/decisions/0006-sharded-stock.md).
const KEEP_RECEIVED: Duration = Duration::from_secs(3600);

/// A move out of a shard, to be added to its target shard.
#[derive(Clone, Debug)]
struct Move {
    source: usize,
    id: Vec<u8>,
    target: usize,
    units: u64,
}

impl Move {
    /// What the target shard remembers it by: the move's id and its source.
    fn received(&self) -> Vec<u8> {
        [&self.id[..], b":", self.source.to_string().as_bytes()].concat()
    }
}

/// One take.
#[derive(Default)]
pub struct Take<'a> {
    pub units: u64,
    pub buyer: Option<&'a [u8]>,
    /// Units per buyer at most (0: no limit).
    pub per_buyer: u64,
    /// A retried take with the same key takes nothing again.
    pub key: Option<&'a [u8]>,
    /// The order task's id (stocks with an orders queue): by default the
    /// `key` (a retry finds its own order), else a new unique id.
    pub task: Option<&'a [u8]>,
    /// The order task's payload.
    pub payload: Option<&'a [u8]>,
}

/// What a take did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Taken; this many units are left.
    Done(u64),
    /// Taken before under the same idempotency key; that take left this many.
    Before(u64),
    /// Not enough left (this many; 0 when the stock does not exist).
    SoldOut(u64),
    /// The buyer would pass the limit; it has this many units.
    Limit(u64),
    /// The order task's id (this one) is already queued or leased: nothing
    /// was taken.
    TaskExists(Vec<u8>),
    /// Only `acked` of the `wanted` replicas acknowledged the take (or the
    /// moves of units it needed) in time: nothing is taken (a take made on
    /// the primary was undone: its units given back, the buyer's count
    /// lowered, its key forgotten).
    Unconfirmed { acked: u64, wanted: u64 },
}

/// What giving units back did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Given {
    /// Given back; this many units are left.
    Done(u64),
    /// The stock does not exist (never set, expired or deleted).
    NoStock,
    /// The buyer has fewer units than it gives back: this many.
    TooMany(u64),
    /// It would take the stock past [`MAX_UNITS`]; this many are left.
    Full(u64),
}

/// The most units a stock holds: 2^53 - 1 (PHP and Lua count in doubles,
/// exact up to there).
pub const MAX_UNITS: u64 = (1 << 53) - 1;

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Stock {
    /// The stock `name` of the deployment `config`; `orders`: the name of
    /// the queue each take enqueues its order task on.
    pub fn new(
        config: Arc<Config>,
        name: Vec<u8>,
        orders: Option<Vec<u8>>,
    ) -> Result<Self, SlotsApart> {
        let keys = Keys::new(&config.prefix, &name);
        let orders = orders.map(|q| queue::Queue::new(config.clone(), q));
        if let Some(queue) = &orders
            && !config.one_slot(&[&keys.stock, &queue.keys().queue])
        {
            return Err(SlotsApart);
        }
        Ok(Stock {
            config,
            name,
            shards: vec![keys],
            orders,
            cut_short: Duration::from_secs(5),
            replicas: None,
        })
    }

    /// The stock `name` kept in `shards` shards (1 to [`MAX_SHARDS`]), each
    /// in a slot of its own: a Cluster spreads them over its primaries.
    /// One shard is the stock [`Stock::new`] makes.
    pub fn sharded(
        config: Arc<Config>,
        name: Vec<u8>,
        shards: usize,
    ) -> Result<Self, OneSlotPrefix> {
        let n = shards.max(1);
        if n > 1 && !config.spreads() {
            return Err(OneSlotPrefix);
        }
        let shards = if n == 1 {
            vec![Keys::new(&config.prefix, &name)]
        } else {
            (0..n)
                .map(|i| Keys::shard(&config.prefix, &name, i, n))
                .collect()
        };
        Ok(Stock {
            config,
            name,
            shards,
            orders: None,
            cut_short: Duration::from_secs(5),
            replicas: None,
        })
    }

    /// Each take enqueues its order task on the queue `orders` kept in as
    /// many partitions as the stock has shards, partition i beside shard i
    /// (in its slot when the two names share a hash tag): the take in a
    /// buyer's shard writes the task in the same step.
    pub fn with_orders(mut self, orders: Vec<u8>) -> Result<Self, SlotsApart> {
        let n = self.shards.len();
        let queue = queue::Queue::partitioned(self.config.clone(), orders, n);
        for (i, keys) in self.shards.iter().enumerate() {
            if !self.config.one_slot(&[&keys.stock, &queue.part(i).queue]) {
                return Err(SlotsApart);
            }
        }
        self.orders = Some(queue);
        Ok(self)
    }

    /// A move older than `age` was cut short (its process died or lost its
    /// connection between its two steps): the next take that reads it
    /// finishes it. 5 s unless set.
    pub fn cut_short_after(mut self, age: Duration) -> Self {
        self.cut_short = age;
        self
    }

    /// A take counts only once `replicas` replicas acknowledged it (Redis'
    /// `WAIT`, up to `timeout`); one that fewer did is undone
    /// ([`Taken::Unconfirmed`]). 0: takes do not wait.
    pub fn confirmed_by(mut self, replicas: u64, timeout: Duration) -> Self {
        self.replicas = (replicas > 0).then_some((replicas, timeout));
        self
    }

    /// The keys of each shard (one for a stock of one slot).
    pub fn shards(&self) -> &[Keys] {
        &self.shards
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// The queue each take enqueues its order task on, if any.
    pub fn orders(&self) -> Option<&queue::Queue> {
        self.orders.as_ref()
    }

    /// The shard a buyer's takes (or, without a buyer, an idempotency
    /// key's) go to: its buyers' counts and takes are kept there. Other
    /// takes and restocks go round the shards.
    fn home(&self, buyer: Option<&[u8]>, key: Option<&[u8]>) -> usize {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = self.shards.len();
        if n == 1 {
            return 0;
        }
        match buyer.or(key) {
            Some(who) => crate::keys::spread(who, n),
            None => (NEXT.fetch_add(1, Ordering::Relaxed) + std::process::id() as usize) % n,
        }
    }

    /// Takes units of the stock, on the server in one step (in the shard
    /// of the take's buyer; when that shard holds too few, units move to it
    /// from the others first, see [`Stock::gather`]).
    pub fn take(&self, take: &Take<'_>) -> Result<Taken, Error> {
        let op = crate::telemetry::locks::take(&self.name, take.units);
        let taken = self.take_traced(take);
        crate::telemetry::locks::ended(op, &taken, |t| {
            matches!(t, Taken::Done(_) | Taken::Before(_))
        });
        taken
    }

    fn take_traced(&self, take: &Take<'_>) -> Result<Taken, Error> {
        let home = self.home(take.buyer, take.key);
        match self.take_in(home, take, &[])? {
            Taken::SoldOut(left) if self.shards.len() > 1 => {
                // With orders a move and its take are two steps: another
                // buyer of the shard may take the units moved in between,
                // and the take gathers again (a few times, then sold out).
                let mut taken = self.gather(home, take, left)?;
                for _ in 0..GATHERS {
                    match taken {
                        (Taken::SoldOut(left), true) => taken = self.gather(home, take, left)?,
                        _ => break,
                    }
                }
                Ok(taken.0)
            }
            taken => self.confirmed(home, take, taken, self.acked(home)),
        }
    }

    /// The replicas that acknowledged this connection's writes to shard
    /// `shard`'s server (`WAIT` there; on a Cluster, that primary only),
    /// when takes wait for replicas; else `u64::MAX`. A wait that failed
    /// counts none.
    fn acked(&self, shard: usize) -> u64 {
        let Some((wanted, timeout)) = self.replicas else {
            return u64::MAX;
        };
        let wait = redis::cmd("WAIT")
            .arg(wanted)
            .arg(crate::time::millis(timeout))
            .clone();
        let key = &self.shards[shard].stock;
        conn::with(&self.config, |c| {
            c.on_server_of(key, &wait)
                .and_then(|v| u64::from_redis_value(v).map_err(Into::into))
        })
        .unwrap_or(0)
    }

    /// Whether `acked` replicas are as many as takes wait for.
    fn enough(&self, acked: u64) -> bool {
        self.replicas.is_none_or(|(wanted, _)| acked >= wanted)
    }

    /// What the take that made `taken` in shard `home` returns, `acked`
    /// replicas having acknowledged it: a take that fewer acknowledged
    /// than asked is undone (`stock_untake.lua`).
    fn confirmed(
        &self,
        home: usize,
        take: &Take<'_>,
        taken: Taken,
        acked: u64,
    ) -> Result<Taken, Error> {
        let (Taken::Done(_), Some((wanted, _))) = (&taken, self.replicas) else {
            return Ok(taken);
        };
        if acked >= wanted {
            return Ok(taken);
        }
        let keys = &self.shards[home];
        conn::with(&self.config, |c| {
            UNTAKE
                .key(&keys.stock)
                .types_checked(TYPES)
                .key(&keys.buyers)
                .key(&keys.takes)
                .arg(take.units)
                .arg(take.buyer.unwrap_or_default())
                .arg(take.key.unwrap_or_default())
                .invoke::<i64>(c)
        })?;
        Ok(Taken::Unconfirmed { acked, wanted })
    }

    /// The take in shard `home`, after adding the units of `moves` to it.
    fn take_in(&self, home: usize, take: &Take<'_>, moves: &[Move]) -> Result<Taken, Error> {
        let keys = &self.shards[home];
        let order_id = self.orders.as_ref().map(|queue| {
            take.task.or(take.key).map_or_else(
                // In a partitioned queue, an id of its own partition.
                || loop {
                    let id = crate::token::new_token().into_bytes();
                    if queue.partitions() == 1 || queue.partition_of(&id, None) == home {
                        break id;
                    }
                },
                <[u8]>::to_vec,
            )
        });
        // A number alone: taken, this many left.
        let reply: NumberOr<(String, i64)> = conn::with(&self.config, |c| {
            let script = if !moves.is_empty() {
                &MOVE_IN
            } else if self.orders.is_some() {
                &TAKE_AND_ORDER
            } else {
                &TAKE
            };
            let mut call = script.key(&keys.stock);
            call.types_checked(TYPES)
                .key(&keys.buyers)
                .key(&keys.takes)
                .arg(take.units)
                .arg(take.buyer.unwrap_or_default())
                .arg(take.per_buyer)
                .arg(take.key.unwrap_or_default());
            if !moves.is_empty() {
                Self::received(&mut call, &keys.received, "1", moves);
            }
            if let (Some(queue), Some(id)) = (&self.orders, &order_id) {
                let q = queue.part(home);
                call.key(&q.queue)
                    .key(&q.payloads)
                    .key(&q.attempts)
                    .key(&q.leased)
                    .key(&q.line)
                    .key(&q.stats)
                    .arg(id.as_slice())
                    .arg(if take.payload.is_some() { "1" } else { "0" })
                    .arg(take.payload.unwrap_or_default())
                    .arg(&q.waiters)
                    .arg(queue::wake_ms());
            }
            call.invoke(c)
        })?;
        let (outcome, n) = match reply {
            NumberOr::Number(left) => return Ok(Taken::Done(count(left))),
            NumberOr::Other(reply) => reply,
        };
        if let ("taken, register", Some(queue)) = (outcome.as_str(), &self.orders) {
            queue::register(&self.config, queue.part(home))?;
        }
        Ok(match outcome.as_str() {
            "taken, register" => Taken::Done(count(n)),
            "before" => Taken::Before(count(n)),
            "limit" => Taken::Limit(count(n)),
            "task exists" => Taken::TaskExists(order_id.unwrap_or_default()),
            "sold out" => Taken::SoldOut(count(n)),
            _ => {
                return Err(conn::unknown_reply(
                    &self.config,
                    "stock_take.lua",
                    &(outcome, n),
                ));
            }
        })
    }

    /// `stock_move_in.lua`'s keys and arguments after the take's: the
    /// shard's received moves, whether to take, and each move.
    fn received(call: &mut Invocation<'_>, received: &[u8], take: &str, moves: &[Move]) {
        call.key(received)
            .arg(take)
            .arg(crate::time::millis(KEEP_RECEIVED));
        for m in moves {
            call.arg(m.received()).arg(m.units);
        }
    }

    /// A take its shard `home` could not serve (it held `left`): units move
    /// to `home` from the other shards in turn until it holds enough (from
    /// each, what the take lacks, or half of that shard if more), then the
    /// take runs again there, in the step that adds them. Each move is
    /// written in its source's journal first and cleared last; a move a
    /// crash cut short is finished by the next take that reads that
    /// journal (docs/decisions/0006-sharded-stock.md). When takes wait for
    /// replicas, each step goes on only once they acknowledged the one
    /// before: a move out that they did not stays in its journal (a
    /// failover that loses it gives its units back to the source, never
    /// to both), and a journal entry is cleared only once its units'
    /// arrival was acknowledged.
    /// Also says whether units moved for the take were taken by others
    /// first (with orders, where the move and the take are two steps).
    fn gather(&self, home: usize, take: &Take<'_>, left: u64) -> Result<(Taken, bool), Error> {
        let n = self.shards.len();
        let id = crate::token::new_token().into_bytes();
        let mut need = take.units.saturating_sub(left);
        let (mut moves, mut elsewhere) = (Vec::new(), Vec::new());
        // The fewest replicas that acknowledged a move out that was then
        // left in its journal, if any.
        let mut short: Option<u64> = None;
        for step in 1..n {
            let source = (home + step) % n;
            let (moved, cut) = self.move_out(source, need, &id, home, self.cut_short)?;
            for m in cut {
                if m.target == home {
                    moves.push(m);
                } else {
                    elsewhere.push(m);
                }
            }
            let acked = if moved > 0 { self.acked(source) } else { 0 };
            if moved > 0 && !self.enough(acked) {
                short = Some(short.map_or(acked, |s| s.min(acked)));
            } else if moved > 0 {
                moves.push(Move {
                    source,
                    id: id.clone(),
                    target: home,
                    units: moved,
                });
                need = need.saturating_sub(moved);
            }
            if need == 0 {
                break;
            }
        }
        for m in elsewhere {
            self.finish(std::slice::from_ref(&m))?;
        }
        // Refused for want of units that replicas did not confirm: say so.
        let unconfirmed = |taken| match (taken, short, self.replicas) {
            (Taken::SoldOut(_), Some(acked), Some((wanted, _))) => {
                Taken::Unconfirmed { acked, wanted }
            }
            (taken, _, _) => taken,
        };
        if moves.is_empty() {
            return Ok((unconfirmed(Taken::SoldOut(left)), false));
        }
        if self.orders.is_some() {
            // The order script takes no moves: the units arrive first.
            self.finish(&moves)?;
            let taken = self.take_in(home, take, &[])?;
            let raced = matches!(taken, Taken::SoldOut(_));
            return Ok((self.confirmed(home, take, taken, self.acked(home))?, raced));
        }
        let taken = self.take_in(home, take, &moves)?;
        let acked = self.acked(home);
        if self.enough(acked) {
            self.clear(&moves)?;
        }
        Ok((
            unconfirmed(self.confirmed(home, take, taken, acked)?),
            false,
        ))
    }

    /// Moves up to `need` units (or half the shard, if more) out of shard
    /// `source` toward `target` under the move `id` (none when `need` is
    /// 0); returns the units moved and the journal's moves older than
    /// `age`.
    fn move_out(
        &self,
        source: usize,
        need: u64,
        id: &[u8],
        target: usize,
        age: Duration,
    ) -> Result<(u64, Vec<Move>), Error> {
        let keys = &self.shards[source];
        let (moved, cut): (i64, Vec<(Vec<u8>, i64, i64)>) = conn::with(&self.config, |c| {
            MOVE_OUT
                .key(&keys.stock)
                .types_checked(&["string", "hash"])
                .key(&keys.moves)
                .arg(need)
                .arg(id)
                .arg(target)
                .arg(u64::try_from(age.as_millis()).unwrap_or(u64::MAX))
                .invoke(c)
        })?;
        let n = self.shards.len();
        let cut = cut
            .into_iter()
            .filter_map(|(id, target, units)| {
                let target = usize::try_from(target).ok().filter(|&t| t < n)?;
                Some(Move {
                    source,
                    id,
                    target,
                    units: count(units),
                })
            })
            .collect();
        Ok((count(moved), cut))
    }

    /// Adds `moves` (all to one target) to their target, then clears them
    /// from their sources' journals.
    fn finish(&self, moves: &[Move]) -> Result<(), Error> {
        let Some(target) = moves.first().map(|m| m.target) else {
            return Ok(());
        };
        let keys = &self.shards[target];
        conn::with(&self.config, |c| {
            let mut call = MOVE_IN.key(&keys.stock);
            call.types_checked(TYPES)
                .key(&keys.buyers)
                .key(&keys.takes)
                .arg(0)
                .arg("")
                .arg(0)
                .arg("");
            Self::received(&mut call, &keys.received, "0", moves);
            call.invoke::<i64>(c)
        })?;
        if self.enough(self.acked(target)) {
            self.clear(moves)?;
        }
        Ok(())
    }

    /// Clears `moves` from their sources' journals.
    fn clear(&self, moves: &[Move]) -> Result<(), Error> {
        for m in moves {
            conn::with(&self.config, |c| {
                redis::cmd("HDEL")
                    .arg(&self.shards[m.source].moves)
                    .arg(&m.id)
                    .query::<i64>(c)
            })?;
        }
        Ok(())
    }

    /// Finishes every move in the shards' journals, of any age (a move
    /// finished twice adds once): the units are all in shards after it.
    fn finish_all(&self) -> Result<(), Error> {
        if self.shards.len() == 1 {
            return Ok(());
        }
        let mut moves = Vec::new();
        for source in 0..self.shards.len() {
            moves.extend(self.move_out(source, 0, b"", 0, Duration::ZERO)?.1);
        }
        for target in 0..self.shards.len() {
            let to: Vec<Move> = moves
                .iter()
                .filter(|m| m.target == target)
                .cloned()
                .collect();
            self.finish(&to)?;
        }
        Ok(())
    }

    /// Starts a sale of `units`, expiring after `ttl` (None: never); the
    /// buyers and takes of an earlier sale are forgotten. A sharded stock's
    /// units are split evenly over its shards.
    pub fn set(&self, units: u64, ttl: Option<Duration>) -> Result<(), Error> {
        let ms = ttl.map_or(0, crate::time::millis);
        let n = self.shards.len() as u64;
        for (i, keys) in (0..).zip(&self.shards) {
            let share = units / n + u64::from(i < units % n);
            conn::with(&self.config, |c| {
                let mut call = SET.key(&keys.stock);
                call.key(&keys.buyers).key(&keys.takes);
                if n > 1 {
                    call.key(&keys.moves).key(&keys.received);
                }
                call.arg(share).arg(ms).invoke::<i64>(c)
            })?;
        }
        Ok(())
    }

    /// Gives units back (an order cancelled, or a restock), off the buyer's
    /// count when a buyer gives them back (in the buyer's shard).
    pub fn give_back(&self, units: u64, buyer: Option<&[u8]>) -> Result<Given, Error> {
        let keys = &self.shards[self.home(buyer, None)];
        let (outcome, n): (String, i64) = conn::with(&self.config, |c| {
            GIVE.key(&keys.stock)
                .types_checked(TYPES)
                .key(&keys.buyers)
                .arg(units)
                .arg(buyer.unwrap_or_default())
                .arg(MAX_UNITS)
                .invoke(c)
        })?;
        Ok(match outcome.as_str() {
            "done" => Given::Done(count(n)),
            "too many" => Given::TooMany(count(n)),
            "full" => Given::Full(count(n)),
            "no stock" => Given::NoStock,
            _ => {
                return Err(conn::unknown_reply(
                    &self.config,
                    "stock_give.lua",
                    &(outcome, n),
                ));
            }
        })
    }

    /// The units left, or None when the stock does not exist. A sharded
    /// stock's moves under way are finished first: the sum is exact when
    /// no take runs meanwhile.
    pub fn remaining(&self) -> Result<Option<i64>, Error> {
        self.finish_all()?;
        let mut sum = None;
        for shard in 0..self.shards.len() {
            let get = redis::cmd("GET").arg(&self.shards[shard].stock).clone();
            if let Some(units) = self.read::<Option<i64>, _>(shard, &get, &["left"])? {
                sum = Some(sum.unwrap_or(0) + units);
            }
        }
        Ok(sum)
    }

    /// The units `buyer` took.
    pub fn bought(&self, buyer: &[u8]) -> Result<u64, Error> {
        let shard = self.home(Some(buyer), None);
        let plain = redis::cmd("HGET")
            .arg(&self.shards[shard].buyers)
            .arg(buyer)
            .clone();
        let units: Option<i64> = self.read(shard, &plain, &[&b"bought"[..], buyer])?;
        Ok(units.map_or(0, count))
    }

    /// Every buyer with the units it took.
    pub fn buyers(&self) -> Result<Vec<(Vec<u8>, i64)>, Error> {
        let mut all = Vec::new();
        for shard in 0..self.shards.len() {
            let plain = redis::cmd("HGETALL")
                .arg(&self.shards[shard].buyers)
                .clone();
            all.extend(self.read::<Vec<(Vec<u8>, i64)>, _>(shard, &plain, &["buyers"])?);
        }
        Ok(all)
    }

    /// A read of shard `shard` with the `plain` command; what it cannot
    /// take as it is (a key written by hand: another type, or not a whole
    /// number as Rust reads one) is read again by `stock_read.lua` (with
    /// `args`), which reads numbers as the stock's scripts do and fails
    /// naming the key when they would.
    fn read<T: FromRedisValue, A: ToRedisArgs>(
        &self,
        shard: usize,
        plain: &Cmd,
        args: &[A],
    ) -> Result<T, Error> {
        let keys = &self.shards[shard];
        conn::with(&self.config, |c| match plain.query(c) {
            Err(e) if e.code() == Some("WRONGTYPE") || conn::unreadable(&e) => {
                READ.key(&keys.stock).key(&keys.buyers).arg(args).invoke(c)
            }
            read => read,
        })
    }

    /// Deletes the stock with its buyers and takes (of every shard); true
    /// if there was any.
    pub fn delete(&self) -> Result<bool, Error> {
        let mut deleted = 0;
        for keys in &self.shards {
            deleted += conn::with(&self.config, |c| {
                redis::cmd("DEL").arg(&keys.all()).query::<i64>(c)
            })?;
        }
        Ok(deleted > 0)
    }
}
