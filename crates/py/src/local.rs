//! Runs a sweep's runs on local worker threads (the simulator releases nothing shared, so a
//! thread per core is a process per core without the start-up), retrying a failed run.

use crate::sweep::{RunRecord, Sweep};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// A run that failed on every attempt.
#[derive(Debug, thiserror::Error)]
#[error("run {run} failed {attempts} times; last: {message}")]
pub struct RunFailed {
    /// The run's index.
    pub run: usize,
    /// Attempts made.
    pub attempts: usize,
    /// The last failure.
    pub message: String,
}

/// Runs every run of `sweep` on `jobs` threads, each run attempted up to `1 + retries` times;
/// `progress(done, total)` is called after each run. Returns the records in run order.
pub fn run_local(
    sweep: &Sweep,
    jobs: usize,
    retries: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<RunRecord>, RunFailed> {
    let total = sweep.len();
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<RunRecord, RunFailed>>>> =
        Mutex::new((0..total).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, total.max(1)) {
            scope.spawn(|| loop {
                let run = next.fetch_add(1, Ordering::Relaxed);
                if run >= total {
                    break;
                }
                let mut attempts = 0;
                let outcome = loop {
                    attempts += 1;
                    match sweep.run(run) {
                        Ok(r) => break Ok(r),
                        Err(e) if attempts > retries => {
                            break Err(RunFailed {
                                run,
                                attempts,
                                message: e.to_string(),
                            })
                        }
                        Err(_) => {}
                    }
                };
                if let Ok(mut r) = results.lock() {
                    r[run] = Some(outcome);
                }
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
            });
        }
    });
    let results = results.into_inner().unwrap_or_default();
    results
        .into_iter()
        .enumerate()
        .map(|(run, r)| {
            r.unwrap_or_else(|| {
                Err(RunFailed {
                    run,
                    attempts: 0,
                    message: "a worker thread stopped before running it".into(),
                })
            })
        })
        .collect()
}
