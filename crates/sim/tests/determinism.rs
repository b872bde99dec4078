//! Same scenario and seed, same bytes of output; another seed, other bytes.

use concord_sim::results::RunResults;
use concord_sim::scenario::{self, LoadOptions};
use concord_sim::Simulator;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SCENARIO: &str = r#"
name = "determinism"
duration = "20s"
seed = 3

[topology]
kind = "dumbbell"
pairs = 3
bottleneck = { rate = "10Mbps", delay = "20ms", queue = { kind = "red", limit = "60pkt", ecn = true }, loss = "0.1%" }
access = { rate = "100Mbps", delay = "2ms" }

[[flow]]
kind = "tcp"
count = 2
name = "t{i}"
from = "s{i}"
to = "d{i}"
start_jitter = "200ms"
tcp = { ecn = true }

[[flow]]
kind = "onoff"
name = "u"
from = "s3"
to = "d3"
rate = "2Mbps"
on = "500ms"
off = "500ms"

[record]
warmup = "2s"
cwnd = ["t1"]
pcap = ["r1->r2"]
"#;

fn run_into(dir: &Path, seed: Option<u64>) -> BTreeMap<String, Vec<u8>> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("temp dir");
    let sc = scenario::parse_str_with(SCENARIO, None, LoadOptions { seed }).expect("valid");
    let mut sim = Simulator::with_capture_dir(&sc, Some(dir)).expect("builds");
    sim.run().expect("runs");
    RunResults::from_simulator(&sim)
        .write_dir(&sim, dir)
        .expect("writes");
    let mut files = BTreeMap::new();
    for e in std::fs::read_dir(dir).expect("listing") {
        let p = e.expect("entry").path();
        files.insert(
            p.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            std::fs::read(&p).expect("read"),
        );
    }
    files
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("concord-determinism-{}-{name}", std::process::id()))
}

#[test]
fn the_same_seed_gives_byte_identical_result_files() {
    let a = run_into(&temp("a"), None);
    let b = run_into(&temp("b"), None);
    for name in [
        "summary.json",
        "flows.csv",
        "channels.csv",
        "goodput.csv",
        "queues.csv",
        "delay.csv",
        "cwnd.csv",
        "r1-r2.pcap",
    ] {
        assert!(a.contains_key(name), "{name} was not written");
    }
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (name, bytes) in &a {
        assert!(
            bytes == &b[name],
            "{name} differs between two runs of the same seed"
        );
    }
}

#[test]
fn a_different_seed_gives_different_results() {
    let a = run_into(&temp("c"), None);
    let b = run_into(&temp("d"), Some(4));
    assert_ne!(a["summary.json"], b["summary.json"]);
    assert_ne!(a["r1-r2.pcap"], b["r1-r2.pcap"]);
}
