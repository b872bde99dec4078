//! The scenario loader under fuzzing: mutants of every shipped scenario, and the regression
//! corpus of the reliability review's mutant kinds (`tests/corpus/`), are each either refused
//! with a one-line error (`concord run` exits 2) or accepted and run; nothing panics.

use concord_cc::time::{Duration, Instant};
use concord_sim::scenario::{self, ScenarioSource};
use concord_sim::Simulator;
use std::path::{Path, PathBuf};

#[path = "fuzz/mutate.rs"]
mod mutate;

/// Every `.toml` file under `dir`, sorted.
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("list").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// An error is one line with a fix.
fn assert_one_line(what: &str, e: &scenario::ScenarioError) {
    let text = e.to_string();
    assert!(!text.contains('\n'), "{what}: {text}");
    assert!(
        text.contains("fix: ") || text.contains("; "),
        "{what}: {text}"
    );
}

#[test]
fn mutants_of_the_shipped_scenarios_load_or_are_refused_in_one_line() {
    let seeds: Vec<Vec<u8>> = toml_files(&repo("../../scenarios"))
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect();
    let tried = mutate::fuzz("scenario loader", &seeds, |bytes| {
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        match scenario::parse_str(text, None) {
            Ok(_) => {}
            Err(e) => assert_one_line("mutant", &e),
        }
    });
    assert!(tried >= seeds.len() as u64);
}

#[test]
fn mutated_overrides_are_checked_like_the_file() {
    let base =
        std::fs::read_to_string(repo("../../scenarios/basic/dumbbell-4-red.toml")).expect("read");
    let seeds: Vec<Vec<u8>> = [
        "topology.bottleneck.rate=20Mbps",
        "flow[0].count=2",
        "record.bin=\"10ms\"",
        "defaults.tcp.initial_cwnd=4",
        "topology.pairs=2",
        "seed=7",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    mutate::fuzz("scenario overrides", &seeds, |bytes| {
        let Ok(assignment) = std::str::from_utf8(bytes) else {
            return;
        };
        let mut source = ScenarioSource::from_text(base.clone(), None);
        if source.set_cli(assignment).is_ok() {
            if let Err(e) = source.build() {
                assert_one_line(assignment, &e);
            }
        }
    });
}

#[test]
fn every_corpus_mutant_is_refused_in_one_line_or_runs() {
    let files = toml_files(&repo("tests/corpus"));
    assert!(files.len() >= 80, "{} corpus files", files.len());
    let (mut refused, mut ran) = (0, 0);
    for path in &files {
        let name = path.display().to_string();
        match scenario::load(path) {
            Err(e) => {
                assert_one_line(&name, &e);
                refused += 1;
            }
            Ok(sc) => {
                // Accepted: it builds and runs (the first 2 ms of simulated time).
                let mut sim = Simulator::new(&sc).unwrap_or_else(|e| panic!("{name}: {e}"));
                let until = sim.end().min(Instant::ZERO + Duration::from_millis(2));
                sim.run_until(until)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                ran += 1;
            }
        }
    }
    eprintln!("corpus: {refused} refused in one line, {ran} accepted and run");
}
