//! Batches of jobs: how many a batch has, how many are left and which
//! failed, each count changed in one script, where Laravel's
//! `DatabaseBatchRepository` locks a row of its `job_batches` table for
//! it. What runs the jobs and decides what to do when the last one ends is
//! the caller's (Laravel's `Batch`); this keeps the record, as the table
//! does. Every batch of a name lives in its slot (`batches:{<name>}`,
//! docs/keys.md), so that each step, listing and pruning included, sees
//! the name's indexes and the batch at once.

use std::sync::{Arc, LazyLock};

use redis::Value;

use crate::config::Config;
use crate::conn::{self, Error};
use crate::keys::{Kind, Place};
use crate::scripts::{self, Invocation, Script, script};

static BATCH: LazyLock<Script> = script!("batch.lua");

/// The types `batch.lua` keeps in its keys, in order.
const TYPES: &[&str] = &["zset", "zset", "zset", "zset", "hash", "zset"];

/// How many batches one round trip of `prune` deletes at most.
const PRUNED_AT_ONCE: usize = 1000;

/// The record of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Batch {
    pub id: String,
    pub name: Vec<u8>,
    /// What the caller keeps with it (Laravel's serialized options).
    pub options: Vec<u8>,
    pub total: i64,
    /// Jobs not done: may go below zero, as Laravel's, when a caller says
    /// more jobs were done than were added.
    pub pending: i64,
    pub failed: i64,
    /// The jobs that failed and have not been done since, in the order
    /// they first failed (read by `find` and `list`; empty after a step).
    pub failed_ids: Vec<Vec<u8>>,
    /// Server time, ms since the epoch.
    pub created_ms: u64,
    pub cancelled_ms: Option<u64>,
    pub finished_ms: Option<u64>,
}

/// A batch's counts after a job ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    pub pending: i64,
    pub failed: i64,
}

/// Which ended batches `prune` deletes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pruned {
    /// Finished before the time.
    Finished,
    /// Not finished, made before the time.
    Unfinished,
    /// Cancelled, made before the time.
    Cancelled,
}

impl Pruned {
    fn word(self) -> &'static str {
        match self {
            Pruned::Finished => "finished",
            Pruned::Unfinished => "unfinished",
            Pruned::Cancelled => "cancelled",
        }
    }
}

/// The batches of one name (a Laravel application's `job_batches`).
pub struct Batches {
    config: Arc<Config>,
    place: Place,
}

impl Batches {
    pub fn new(config: Arc<Config>, name: &[u8]) -> Self {
        let place = Place::new(&config.prefix, Kind::Batches, name);
        Batches { config, place }
    }

    /// The keys of every batch: all, finished, unfinished, cancelled.
    fn indexes(&self) -> [Vec<u8>; 4] {
        [":all", ":finished", ":open", ":cancelled"].map(|role| self.place.beside(role))
    }

    fn step(&self, op: &str, id: &[u8]) -> Invocation<'static> {
        let mut call = BATCH.prepare_invoke();
        for key in self.indexes() {
            call.key(key);
        }
        call.key([self.place.beside(":b:").as_slice(), id].concat())
            .key([self.place.beside(":f:").as_slice(), id].concat())
            .arg(op)
            .arg(id)
            .types_checked(TYPES);
        call
    }

    fn run(&self, call: &Invocation<'_>) -> Result<Option<Batch>, Error> {
        let reply: Vec<Value> = conn::with(&self.config, |c| call.invoke(c))?;
        self.batch_of(reply)
    }

    /// The batch `batch.lua` replied, if any.
    fn batch_of(&self, reply: Vec<Value>) -> Result<Option<Batch>, Error> {
        let unknown = |reply: &[Value]| conn::unknown_reply(&self.config, "batch.lua", &reply);
        let mut words = Vec::with_capacity(reply.len());
        for v in &reply {
            match v {
                Value::Int(n) => words.push(n.to_string().into_bytes()),
                Value::BulkString(b) => words.push(b.clone()),
                _ => return Err(unknown(&reply)),
            }
        }
        match words.first().map(Vec::as_slice) {
            Some(b"0") if words.len() == 1 => return Ok(None),
            Some(b"1") if words.len() >= 9 => {}
            _ => return Err(unknown(&reply)),
        }
        let number = |w: &[u8]| std::str::from_utf8(w).ok()?.parse::<i64>().ok();
        let time = |w: &[u8]| u64::try_from(number(w)?).ok();
        let mut fields = words.into_iter().skip(1);
        let mut next = || fields.next().unwrap_or_default();
        let (name, options) = (next(), next());
        let (total, pending, failed) = (number(&next()), number(&next()), number(&next()));
        let (created, cancelled, finished) = (next(), next(), next());
        let (Some(total), Some(pending), Some(failed), Some(created_ms)) =
            (total, pending, failed, time(&created))
        else {
            return Err(unknown(&reply));
        };
        Ok(Some(Batch {
            id: String::new(),
            name,
            options,
            total,
            pending,
            failed,
            failed_ids: fields.collect(),
            created_ms,
            cancelled_ms: time(&cancelled),
            finished_ms: time(&finished),
        }))
    }

    /// Runs `op` on the batch `id`: its record after, if there is one.
    fn on(&self, op: &str, id: &[u8], args: &[&[u8]]) -> Result<Option<Batch>, Error> {
        let mut call = self.step(op, id);
        for a in args {
            call.arg(*a);
        }
        Ok(self.run(&call)?.map(|b| Batch {
            id: String::from_utf8_lossy(id).into_owned(),
            ..b
        }))
    }

    /// Makes a batch named `name` with the caller's `options`, under a new
    /// time-ordered id (UUID v7: the newest sorts last).
    pub fn create(&self, name: &[u8], options: &[u8]) -> Result<Batch, Error> {
        loop {
            let id = uuid::Uuid::now_v7().to_string();
            if let Some(batch) = self.on("create", id.as_bytes(), &[name, options])? {
                return Ok(batch);
            }
        }
    }

    /// The batch `id`, if there is one.
    pub fn find(&self, id: &[u8]) -> Result<Option<Batch>, Error> {
        self.on("read", id, &[])
    }

    /// Up to `limit` batches, newest first, only those older than the batch
    /// `before` when given (the next page after it). Two round trips.
    pub fn list(&self, limit: usize, before: Option<&[u8]>) -> Result<Vec<Batch>, Error> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let [all, ..] = self.indexes();
        let from = before.map_or(b"+".to_vec(), |b| [b"(".as_slice(), b].concat());
        let ids: Vec<Vec<u8>> = conn::with(&self.config, |c| {
            let mut call = Invocation::keys_of(&["zset"]);
            call.key(&all);
            redis::cmd("ZREVRANGEBYLEX")
                .arg(&all)
                .arg(&from)
                .arg("-")
                .arg("LIMIT")
                .arg(0)
                .arg(limit)
                .query(c)
                .map_err(|e| call.naming(c, e))
        })?;
        Ok(self
            .each("read", &ids, &[])?
            .into_iter()
            .flatten()
            .collect())
    }

    /// Runs `op` with `args` on each of the batches `ids` in one round
    /// trip: their records after, in order.
    fn each(&self, op: &str, ids: &[Vec<u8>], args: &[&[u8]]) -> Result<Vec<Option<Batch>>, Error> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let calls: Vec<Invocation<'static>> = ids
            .iter()
            .map(|id| {
                let mut call = self.step(op, id);
                for a in args {
                    call.arg(*a);
                }
                call
            })
            .collect();
        let replies: Vec<Vec<Value>> = conn::with(&self.config, |c| {
            let as_functions = scripts::ready(c, &[&BATCH])?;
            let mut pipe = redis::pipe();
            for call in &calls {
                pipe.add_command(call.pipelined(as_functions));
            }
            pipe.query(c).map_err(|e| {
                // The call that failed, run alone, names the key of another type.
                let failed = e.clone().into_server_errors();
                let at = failed.and_then(|f| f.first().and_then(|(i, _)| calls.get(*i)));
                at.and_then(|call| call.invoke::<Vec<Value>>(c).err())
                    .unwrap_or(e)
            })
        })?;
        ids.iter()
            .zip(replies)
            .map(|(id, reply)| {
                Ok(self.batch_of(reply)?.map(|b| Batch {
                    id: String::from_utf8_lossy(id).into_owned(),
                    ..b
                }))
            })
            .collect()
    }

    /// Adds `jobs` jobs to the batch `id` (total and pending); a finished
    /// batch is unfinished again. False when there is no such batch.
    pub fn add(&self, id: &[u8], jobs: u32) -> Result<bool, Error> {
        Ok(self
            .on("add", id, &[jobs.to_string().as_bytes()])?
            .is_some())
    }

    /// Counts the job `job` of the batch `id` done: one pending less, and
    /// no longer among the failed jobs. The counts after, or None when there
    /// is no such batch.
    pub fn done(&self, id: &[u8], job: &[u8]) -> Result<Option<Counts>, Error> {
        Ok(self.on("done", id, &[job])?.map(|b| b.counts()))
    }

    /// Counts the job `job` of the batch `id` failed (each call counts; the
    /// job is listed once). The counts after, or None.
    pub fn failed(&self, id: &[u8], job: &[u8]) -> Result<Option<Counts>, Error> {
        Ok(self.on("failed", id, &[job])?.map(|b| b.counts()))
    }

    /// Marks the batch finished now (server time); false when there is none.
    pub fn finish(&self, id: &[u8]) -> Result<bool, Error> {
        Ok(self.on("finish", id, &[])?.is_some())
    }

    /// Marks the batch cancelled and finished now; false when there is none.
    pub fn cancel(&self, id: &[u8]) -> Result<bool, Error> {
        Ok(self.on("cancel", id, &[])?.is_some())
    }

    /// Deletes the batch; false when there was none.
    pub fn delete(&self, id: &[u8]) -> Result<bool, Error> {
        Ok(self.on("delete", id, &[])?.is_some())
    }

    /// Deletes the batches `which` names that finished (unfinished and
    /// cancelled ones: that were made) before `before_ms` (ms since the
    /// epoch), up to 1000 a round trip, each checked again as it is
    /// deleted: how many it deleted.
    pub fn prune(&self, which: Pruned, before_ms: u64) -> Result<u64, Error> {
        let [_, finished, open, cancelled] = self.indexes();
        let index = match which {
            Pruned::Finished => finished,
            Pruned::Unfinished => open,
            Pruned::Cancelled => cancelled,
        };
        let before = before_ms.to_string();
        let mut deleted = 0;
        loop {
            let ids: Vec<Vec<u8>> = conn::with(&self.config, |c| {
                let mut call = Invocation::keys_of(&["zset"]);
                call.key(&index);
                redis::cmd("ZRANGEBYSCORE")
                    .arg(&index)
                    .arg("-inf")
                    .arg(format!("({before}"))
                    .arg("LIMIT")
                    .arg(0)
                    .arg(PRUNED_AT_ONCE)
                    .query(c)
                    .map_err(|e| call.naming(c, e))
            })?;
            let gone = self.each("prune", &ids, &[which.word().as_bytes(), before.as_bytes()])?;
            let now = gone.iter().flatten().count() as u64;
            deleted += now;
            // A batch that no longer qualifies (given jobs meanwhile) stays
            // in a later page only if it qualifies again: stop when a page
            // deleted nothing, or was the last.
            if now == 0 || ids.len() < PRUNED_AT_ONCE {
                return Ok(deleted);
            }
        }
    }
}

impl Batch {
    fn counts(&self) -> Counts {
        Counts {
            pending: self.pending,
            failed: self.failed,
        }
    }
}
