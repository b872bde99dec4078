//! Output directories never lose data: `kill -9` at random moments of `concord run` and
//! `concord reproduce` leaves `--out` as either the previous whole output or the new whole
//! output (compared file by file, byte by byte, marker included), and a directory holding files
//! concord did not write is refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

mod common;

/// The marker concord writes into every output directory.
const MARKER: &str = ".concord-output";

/// Kills per command; the acceptance asks for at least 20.
const KILLS: usize = 22;

fn temp(name: &str) -> PathBuf {
    common::temp("out-safety", name)
}

/// Every file under `dir` with its bytes, by path relative to `dir`, sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("under dir").to_path_buf();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

/// A small deterministic generator of kill delays (64-bit LCG, Knuth's MMIX constants), so a
/// failure can be replayed.
struct Delays(u64);

impl Delays {
    /// A delay uniform in [0, `max`].
    fn next(&mut self, max: Duration) -> Duration {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let unit = (self.0 >> 11) as f64 / (1u64 << 53) as f64;
        max.mul_f64(unit)
    }
}

/// Runs `concord args` to the end; returns its wall time.
#[allow(clippy::disallowed_methods)] // timing the command under test, not simulated time
fn complete(args: &[String]) -> Duration {
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .output()
        .expect("concord runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    start.elapsed()
}

/// Starts `concord args` and kills it (SIGKILL) after `delay`, or lets it end first.
fn killed_after(args: &[String], delay: Duration) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("concord starts");
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
}

/// Alternates two commands writing to `out`, each killed at a random moment up to 1.5 times its
/// full run time; after each, `out` must be exactly the previous output or exactly the new one.
/// Returns (kills that left the previous output, kills after which the new one was in place).
fn kill_loop(out: &Path, a: &[String], b: &[String], seed: u64) -> (usize, usize) {
    let time_a = complete(a);
    let snap_a = snapshot(out);
    let time_b = complete(b);
    let snap_b = snapshot(out);
    assert_ne!(
        snap_a, snap_b,
        "the two outputs must differ to detect a mix"
    );
    for snap in [&snap_a, &snap_b] {
        assert!(snap.iter().any(|(p, _)| p == Path::new(MARKER)));
    }
    let mut delays = Delays(seed);
    let mut current_is_a = false;
    let (mut old, mut new) = (0, 0);
    for i in 0..KILLS {
        let (args, time) = if current_is_a {
            (b, time_b)
        } else {
            (a, time_a)
        };
        let delay = delays.next(time.mul_f64(1.5));
        killed_after(args, delay);
        let now = snapshot(out);
        let (previous, next) = if current_is_a {
            (&snap_a, &snap_b)
        } else {
            (&snap_b, &snap_a)
        };
        if &now == previous {
            old += 1;
        } else if &now == next {
            new += 1;
            current_is_a = !current_is_a;
        } else {
            let files: Vec<_> = now.iter().map(|(p, b)| (p, b.len())).collect();
            panic!("kill {i} at {delay:?} left a mixed or partial directory: {files:?}");
        }
    }
    (old, new)
}

/// What is left in `base` besides `keep`.
fn leftovers(base: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(base)
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

const SCENARIO_A: &str = r#"# two pairs, a pcap and a cwnd trace
duration = "5s"

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "20Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }

[[flow]]
kind = "tcp"
from = "s1"
to = "d1"

[[flow]]
kind = "tcp"
from = "s2"
to = "d2"

[record]
pcap = ["r1->r2"]
cwnd = ["f1"]
"#;

const SCENARIO_B: &str = r#"# one pair, no traces
duration = "3s"

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }

[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#;

#[test]
fn run_killed_at_random_moments_never_leaves_a_mixed_or_partial_directory() {
    let base = temp("run");
    let (a, b) = (base.join("a.toml"), base.join("b.toml"));
    std::fs::write(&a, SCENARIO_A).expect("write");
    std::fs::write(&b, SCENARIO_B).expect("write");
    let out = base.join("out");
    let args = |file: &Path| -> Vec<String> {
        vec![
            "run".into(),
            file.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ]
    };
    let (old, new) = kill_loop(&out, &args(&a), &args(&b), 0x5eed_0001);
    eprintln!("run: {KILLS} kills, {old} left the previous output, {new} the new one");
    // The first output of A carries its pcap and cwnd trace; B's replaced them whole.
    complete(&args(&b));
    let files: Vec<PathBuf> = snapshot(&out).into_iter().map(|(p, _)| p).collect();
    assert!(!files
        .iter()
        .any(|p| p.ends_with("r1-r2.pcap") || p.ends_with("cwnd.csv")));
    assert_eq!(
        leftovers(&base, &["out", "a.toml", "b.toml"]),
        Vec::<String>::new()
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn reproduce_killed_at_random_moments_never_leaves_a_mixed_or_partial_directory() {
    let base = temp("reproduce");
    let out = base.join("report");
    let args = |seed_base: &str| -> Vec<String> {
        [
            "reproduce",
            "--quick",
            "--paper",
            "baseline",
            "--jobs",
            "1",
            "--seed-base",
            seed_base,
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.display().to_string()])
        .collect()
    };
    let (old, new) = kill_loop(&out, &args("0"), &args("1000"), 0x5eed_0002);
    eprintln!("reproduce: {KILLS} kills, {old} left the previous report, {new} the new one");
    complete(&args("0"));
    assert_eq!(leftovers(&base, &["report"]), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn reproduce_into_a_directory_of_other_files_refuses_before_running_and_deletes_nothing() {
    let base = temp("foreign");
    let proj = base.join("proj");
    std::fs::create_dir_all(proj.join("src")).expect("dir");
    std::fs::write(proj.join("results.json"), "{\"my\":\"data\"}").expect("write");
    std::fs::write(proj.join("precious.txt"), "x").expect("write");
    let before = snapshot(&proj);
    let out = common::concord(&[
        "reproduce",
        "--quick",
        "--paper",
        "baseline",
        "--out",
        &proj.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(MARKER), "{stderr}");
    assert!(
        !stderr.contains("experiments on"),
        "refused before any experiment started: {stderr}"
    );
    assert_eq!(snapshot(&proj), before);
    assert!(proj.join("src").is_dir());
    assert_eq!(leftovers(&base, &["proj"]), Vec::<String>::new());
    // `run` and `sweep` refuse it the same way.
    let scenario = base.join("s.toml");
    std::fs::write(&scenario, SCENARIO_B).expect("write");
    let run = common::concord(&[
        "run",
        &scenario.display().to_string(),
        "--out",
        &proj.display().to_string(),
    ]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    assert_eq!(snapshot(&proj), before);
    let _ = std::fs::remove_dir_all(&base);
}
