//! `RedisLock\Batches`: the batches of jobs of a name, from
//! `RedisLock\Client::batches()` (the `batch` engine).

use std::sync::Arc;

use ext_php_rs::boxed::ZBox;
use ext_php_rs::prelude::*;
use ext_php_rs::types::{ZendHashTable, Zval};

use super::engine;
use super::value::{
    Arg, Float, Int, NullableText, Text, Value, array, binary, debug_info, non_empty, value_error,
    whole_in,
};
use crate::batch::{self, Batch, Counts, Pruned};
use crate::config::Config;

/// The most batches `list()` returns at once.
const MOST_LISTED: u64 = 10_000;

/// The batches of jobs of one name (from `RedisLock\Client::batches()`,
/// not constructible with `new`).
#[php_class]
#[php(name = "RedisLock\\Batches")]
pub struct Batches {
    batches: batch::Batches,
    name: Vec<u8>,
}

impl Batches {
    pub fn new(config: Arc<Config>, name: Vec<u8>) -> Self {
        Batches {
            batches: batch::Batches::new(config, &name),
            name,
        }
    }
}

/// `$id`, checked (`method` and `position` name it in errors).
fn id(value: &Value, method: &str) -> PhpResult<Vec<u8>> {
    non_empty(
        value,
        format!("RedisLock\\Batches::{method}(): Argument #1 ($id)").as_str(),
    )
}

/// A batch's record as PHP sees it.
fn record(batch: Batch) -> PhpResult<Zval> {
    let seconds = |ms: u64| ms as f64 / 1000.0;
    let mut failed = ZendHashTable::new();
    for job in &batch.failed_ids {
        failed.push(binary(job))?;
    }
    let mut out = ZendHashTable::new();
    out.insert("id", batch.id.as_str())?;
    out.insert("name", binary(&batch.name))?;
    out.insert("options", binary(&batch.options))?;
    out.insert("total", batch.total)?;
    out.insert("pending", batch.pending)?;
    out.insert("failed", batch.failed)?;
    out.insert("failedIds", array(failed))?;
    out.insert("createdAt", seconds(batch.created_ms))?;
    out.insert("cancelledAt", batch.cancelled_ms.map(seconds))?;
    out.insert("finishedAt", batch.finished_ms.map(seconds))?;
    Ok(array(out))
}

/// A batch's counts as PHP sees them, null when there is no batch.
fn counts(counts: Option<Counts>) -> PhpResult<Zval> {
    let Some(c) = counts else {
        return Ok(Zval::new());
    };
    let mut out = ZendHashTable::new();
    out.insert("pending", c.pending)?;
    out.insert("failed", c.failed)?;
    Ok(array(out))
}

#[php_impl]
impl Batches {
    /// Not for PHP code: call $client->batches($name) on a RedisLock\Client.
    pub fn __construct(args: &[&Zval]) -> PhpResult<Self> {
        let _ = args;
        Err(crate::php::errors::made_by(
            "RedisLock\\Batches",
            "call $client->batches($name) on a RedisLock\\Client",
        ))
    }

    /// Makes a batch named `$name` (any bytes, '' too), keeping `$options`
    /// (any bytes; null: '') with it as given, under a new id (a time-ordered UUID: a later batch's
    /// id sorts after). Returns its record: `id`, `name`, `options`, `total`,
    /// `pending`, `failed` (counts), `failedIds` (the jobs that failed and were
    /// not done since, in the order they first failed), `createdAt`,
    /// `cancelledAt` and `finishedAt` (Unix seconds of the server's clock;
    /// null: not yet).
    pub fn create(&self, name: Arg<Text>, options: Arg<NullableText>) -> PhpResult<Zval> {
        let name = name.bytes("RedisLock\\Batches::create(): Argument #1 ($name)")?;
        let options = match &options.0 {
            Value::Null => Vec::new(),
            v => v.bytes("RedisLock\\Batches::create(): Argument #2 ($options)")?,
        };
        record(engine(self.batches.create(&name, &options))?)
    }

    /// The record of the batch `$id` (see `create()`), null when there is none.
    pub fn find(&self, id: Arg<Text>) -> PhpResult<Zval> {
        let id = self::id(&id, "find")?;
        match engine(self.batches.find(&id))? {
            Some(batch) => record(batch),
            None => Ok(Zval::new()),
        }
    }

    /// Up to `$limit` (at most 10000) records, the newest first; with
    /// `$before`, only the batches made before the batch of that id (the next
    /// page after it). Two round trips.
    #[php(defaults(limit = 50))]
    pub fn list(&self, limit: Arg<Int>, before: Arg<NullableText>) -> PhpResult<Zval> {
        let limit = whole_in(
            &limit,
            "RedisLock\\Batches::list(): Argument #1 ($limit)",
            0..=MOST_LISTED,
        )?;
        let before = match &before.0 {
            Value::Null => None,
            v => Some(non_empty(
                v,
                "RedisLock\\Batches::list(): Argument #2 ($before)",
            )?),
        };
        let mut out = ZendHashTable::new();
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        for batch in engine(self.batches.list(limit, before.as_deref()))? {
            out.push(record(batch)?)?;
        }
        Ok(array(out))
    }

    /// Adds `$jobs` jobs (0 to 2147483647) to the batch `$id`: to its total
    /// and its pending jobs; a finished batch is unfinished again. False when
    /// there is no such batch.
    pub fn add_jobs(&self, id: Arg<Text>, jobs: Arg<Int>) -> PhpResult<bool> {
        let id = self::id(&id, "addJobs")?;
        let jobs = whole_in(
            &jobs,
            "RedisLock\\Batches::addJobs(): Argument #2 ($jobs)",
            0..=i32::MAX as u64,
        )?;
        engine(
            self.batches
                .add(&id, u32::try_from(jobs).unwrap_or(u32::MAX)),
        )
    }

    /// Counts the job `$job` of the batch `$id` done, in one step: one job
    /// less pending (every call counts, as Laravel's), and the job no longer
    /// among the failed ones. Returns the counts after, `['pending' => int,
    /// 'failed' => int]`, or null when there is no such batch.
    pub fn job_done(&self, id: Arg<Text>, job: Arg<Text>) -> PhpResult<Zval> {
        let id = self::id(&id, "jobDone")?;
        let job = non_empty(&job, "RedisLock\\Batches::jobDone(): Argument #2 ($job)")?;
        counts(engine(self.batches.done(&id, &job))?)
    }

    /// Counts the job `$job` of the batch `$id` failed, in one step: one
    /// failure more (every call counts), the job listed once among the failed
    /// ones. Returns the counts after (see `jobDone()`), or null.
    pub fn job_failed(&self, id: Arg<Text>, job: Arg<Text>) -> PhpResult<Zval> {
        let id = self::id(&id, "jobFailed")?;
        let job = non_empty(&job, "RedisLock\\Batches::jobFailed(): Argument #2 ($job)")?;
        counts(engine(self.batches.failed(&id, &job))?)
    }

    /// Marks the batch `$id` finished now; false when there is no such batch.
    pub fn finish(&self, id: Arg<Text>) -> PhpResult<bool> {
        let id = self::id(&id, "finish")?;
        engine(self.batches.finish(&id))
    }

    /// Marks the batch `$id` cancelled, and finished, now; false when there is
    /// no such batch.
    pub fn cancel(&self, id: Arg<Text>) -> PhpResult<bool> {
        let id = self::id(&id, "cancel")?;
        engine(self.batches.cancel(&id))
    }

    /// Deletes the batch `$id`; false when there was none.
    pub fn delete(&self, id: Arg<Text>) -> PhpResult<bool> {
        let id = self::id(&id, "delete")?;
        engine(self.batches.delete(&id))
    }

    /// Deletes the batches that finished before `$before` (Unix seconds), or
    /// with `$which` 'unfinished' those not finished and made before it, or
    /// 'cancelled' those cancelled and made before it (null: 'finished'); up
    /// to 1000 a round trip. Returns how many it deleted.
    pub fn prune(&self, before: Arg<Float>, which: Arg<NullableText>) -> PhpResult<i64> {
        const M: &str = "RedisLock\\Batches::prune()";
        let before = before.finite(format!("{M}: Argument #1 ($before)").as_str())?;
        let which = match &which.0 {
            Value::Null => b"finished".to_vec(),
            v => v.bytes(format!("{M}: Argument #2 ($which)").as_str())?,
        };
        let which = match which.as_slice() {
            b"finished" => Pruned::Finished,
            b"unfinished" => Pruned::Unfinished,
            b"cancelled" => Pruned::Cancelled,
            _ => {
                return Err(value_error(format!(
                    "{M}: Argument #2 ($which) must be 'finished', 'unfinished' or 'cancelled'"
                )));
            }
        };
        // Before the epoch: nothing; past u64 ms: everything.
        let before_ms = (before * 1000.0).clamp(0.0, u64::MAX as f64) as u64;
        let deleted = engine(self.batches.prune(which, before_ms))?;
        Ok(i64::try_from(deleted).unwrap_or(i64::MAX))
    }

    /// What `var_dump()` shows: the name.
    #[php(name = "__debugInfo")]
    pub fn debug_info(&self) -> PhpResult<ZBox<ZendHashTable>> {
        debug_info(vec![("name", binary(&self.name))])
    }
}
