//! The CPU time of each experiment, so that the cost of `concord reproduce` can be
//! attributed: `cargo run --release -p concord-repro --example cost -- [--quick] [--jobs N]
//! [ID_PREFIX...]`. Prints one line per experiment as it finishes: its id and the CPU seconds
//! of the thread that ran it (user + system); the run's total is the process's CPU time
//! (`/usr/bin/time -v`).

use concord_repro::{registry, Ctx};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// This thread's CPU time (user + system), from /proc/thread-self/stat (fields 14 and 15, in
/// clock ticks of 1/100 s on Linux).
fn thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = after
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // After the `)` the state is field 3, so utime (14) and stime (15) are at 11 and 12.
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let jobs_at = args.iter().position(|a| a == "--jobs");
    let jobs: usize = jobs_at
        .and_then(|i| args.get(i + 1))
        .and_then(|j| j.parse().ok())
        .unwrap_or(1);
    let prefixes: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && jobs_at.is_none_or(|j| *i != j + 1))
        .map(|(_, a)| a)
        .collect();
    let mut experiments = registry();
    experiments
        .retain(|e| prefixes.is_empty() || prefixes.iter().any(|p| e.id.starts_with(p.as_str())));
    let ctx = Ctx {
        quick,
        seed_base: 0,
        // What `concord reproduce` does: the replicate seed block too (docs/analysis.md).
        replicate: true,
    };
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(e) = experiments.get(i) else { break };
                let before = thread_cpu();
                let r = concord_repro::replicate::run(e, &ctx);
                let cpu = thread_cpu() - before;
                println!(
                    "{:<24} cpu {:>7.1} s  {}",
                    e.id,
                    cpu.as_secs_f64(),
                    if r.is_ok() { "ok" } else { "ERROR" }
                );
            });
        }
    });
}
