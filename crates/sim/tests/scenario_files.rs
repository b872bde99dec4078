//! Every scenario file shipped in `scenarios/` loads.

use concord_sim::scenario::load;
use std::path::{Path, PathBuf};

/// `scenarios/testbed` holds concord-router's test-bed topology files, not simulator scenarios.
const NOT_SCENARIOS: &str = "testbed";

/// The `.toml` files under `dir`, recursively, sorted (the test-bed topologies left out).
fn toml_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for entry in entries {
            let path = entry
                .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
                .path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != NOT_SCENARIOS) {
                    pending.push(path);
                }
            } else if path.extension().is_some_and(|x| x == "toml") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn load_ok(path: &Path) -> concord_sim::scenario::Scenario {
    load(path).unwrap_or_else(|e| panic!("{e}"))
}

fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn every_scenario_file_loads() {
    let files = toml_files(&scenarios_dir());
    assert!(!files.is_empty(), "no scenario files found");
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| load(f).err().map(|e| e.to_string()))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_scenario_file_begins_with_a_comment() {
    for f in toml_files(&scenarios_dir()) {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        assert!(
            text.starts_with("# "),
            "{} should begin with a comment saying what it shows",
            f.display()
        );
    }
}

#[test]
fn the_example_scenarios_say_what_their_comments_say() {
    use concord_cc::aqm::{AqmConfig, QueueLimit};
    use concord_cc::time::Duration;
    use concord_cc::units::Rate;
    let dir = scenarios_dir();

    let s = load_ok(&dir.join("basic/single-flow-bdp.toml"));
    let b = &s.links[0];
    assert_eq!(b.forward.rate, Rate::from_mbps(10));
    // 10 Mbps * 100 ms round trip = 125000 bytes of buffer.
    assert_eq!(
        b.forward.queue,
        AqmConfig::DropTail {
            limit: QueueLimit::Bytes(125_000)
        }
    );
    let one_way: Duration = s
        .links
        .iter()
        .map(|l| l.forward.delay)
        .fold(Duration::ZERO, |a, d| a + d);
    assert_eq!(one_way * 2, Duration::from_millis(100));
    assert_eq!(s.duration, Duration::from_secs(300));
    assert_eq!(s.record.warmup, Duration::from_secs(60));

    let s = load_ok(&dir.join("basic/random-loss.toml"));
    assert_eq!(
        (s.links[0].forward.loss, s.links[0].reverse.loss),
        (0.01, 0.0)
    );

    let s = load_ok(&dir.join("bench/dumbbell-64.toml"));
    assert_eq!(s.flows.len(), 64);
    assert!(s.flows.iter().all(|f| f.start < Duration::from_millis(100)));
}
