//! Batches of jobs (`batch`) against a real redis-server: threads, each on
//! its own connection, count the jobs of one batch done and failed at
//! once; the counts come out exact, and exactly one call sees the last job
//! end, as Laravel's callbacks need.

use std::sync::Arc;

use crate::common::RedisServer;
use redislock::batch::{Batches, Pruned};

#[test]
fn threads_ending_jobs_at_once_leave_exact_counts_and_one_last_job() {
    let server = RedisServer::start();
    let config = Arc::new(server.config());
    let batches = Arc::new(Batches::new(config.clone(), b"job_batches"));
    let batch = batches.create(b"import", b"options\0bytes").unwrap();
    let (threads, each) = (4, 250);
    assert!(batches.add(batch.id.as_bytes(), threads * each).unwrap());
    let workers: Vec<_> = (0..threads)
        .map(|t| {
            let id = batch.id.clone();
            let batches = Batches::new(config.clone(), b"job_batches");
            std::thread::spawn(move || {
                let mut last = 0;
                for j in 0..each {
                    let job = format!("job-{t}-{j}");
                    // Every tenth job fails once before it is done.
                    if j % 10 == 0 {
                        batches
                            .failed(id.as_bytes(), job.as_bytes())
                            .unwrap()
                            .unwrap();
                    }
                    let counts = batches
                        .done(id.as_bytes(), job.as_bytes())
                        .unwrap()
                        .unwrap();
                    if counts.pending == 0 {
                        last += 1;
                    }
                }
                last
            })
        })
        .collect();
    let last: u32 = workers.into_iter().map(|w| w.join().unwrap()).sum();
    assert_eq!(last, 1, "exactly one call saw the last job end");
    let found = batches.find(batch.id.as_bytes()).unwrap().unwrap();
    assert_eq!((found.total, found.pending), (1000, 0));
    assert_eq!(found.failed, 100, "each failure counted");
    assert_eq!(found.failed_ids, Vec::<Vec<u8>>::new(), "done since");
    assert_eq!(found.options, b"options\0bytes");
    assert!(found.finished_ms.is_none(), "finishing is the caller's");

    assert!(batches.finish(batch.id.as_bytes()).unwrap());
    let second = batches.create(b"", b"").unwrap();
    assert!(
        second.id > batch.id,
        "ids sort in the order batches are made"
    );
    let listed: Vec<_> = batches
        .list(10, None)
        .unwrap()
        .into_iter()
        .map(|b| b.id)
        .collect();
    assert_eq!(listed, vec![second.id.clone(), batch.id.clone()]);
    let far = u64::MAX / 2;
    assert_eq!(batches.prune(Pruned::Cancelled, far).unwrap(), 0);
    assert_eq!(batches.prune(Pruned::Finished, far).unwrap(), 1);
    assert_eq!(
        batches.prune(Pruned::Unfinished, 0).unwrap(),
        0,
        "made after the epoch"
    );
    assert_eq!(batches.prune(Pruned::Unfinished, far).unwrap(), 1);
    assert!(
        server.snapshot().is_empty(),
        "nothing left: {:?}",
        server.snapshot()
    );
}

#[test]
fn a_key_of_another_type_is_named_and_nothing_changes() {
    let server = RedisServer::start();
    let batches = Batches::new(Arc::new(server.config()), b"b");
    let batch = batches.create(b"n", b"").unwrap();
    server.by_hand(b"batches:{b}:open");
    let before = server.snapshot();
    let err = batches.add(batch.id.as_bytes(), 1).unwrap_err().to_string();
    assert!(err.contains("batches:{b}:open"), "{err}");
    assert_eq!(server.snapshot(), before);
}
