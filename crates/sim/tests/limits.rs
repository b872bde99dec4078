//! The documented maximum scenario sizes either fit (`pairs = 100000`, with a flow per pair) or,
//! like the inputs the reliability review saw abort with an allocation failure, are refused up
//! front with a one-line error naming the key (they would not run within the default 8 GiB),
//! in well under a second of loading; scenarios of ordinary size load as before.

use concord_sim::scenario::{self, limits};
use std::time::Instant;

const DUMBBELL: &str = r#"
duration = "60s"
[topology]
kind = "dumbbell"
pairs = 4
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#;

const LINE: &str = r#"
duration = "60s"
[topology]
kind = "KIND"
routers = 100000
link = { rate = "10Mbps", delay = "1ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "src"
to = "dst"
"#;

/// Loads `text`; asserts it is refused in one line that names `key`, quickly.
#[allow(clippy::disallowed_methods)] // a bound on the loader's wall time, not simulated time
fn refused(name: &str, text: &str, key: &str) {
    let start = Instant::now();
    let e = scenario::parse_str(text, None).expect_err(name);
    let took = start.elapsed();
    let line = e.to_string();
    assert!(!line.contains('\n'), "{name}: {line}");
    assert!(line.contains(key), "{name}: `{key}` not named: {line}");
    assert!(line.contains("--max-memory"), "{name}: {line}");
    assert!(took.as_secs_f64() < 5.0, "{name}: refused after {took:?}");
}

#[test]
fn documented_maximum_sizes_are_refused_up_front_naming_the_key() {
    let pairs = DUMBBELL.replace("pairs = 4", "pairs = 100000");
    // Routing keeps tables for the two routers only: the largest dumbbell fits within the
    // default limit, with a flow per pair too (100,000 flows: measured 1.34 GB peak over
    // 1 Gbps / 25 ms for 10 s; here 60 s of samples of 200,001 router queues add 4.8 GB).
    let per_pair = pairs.replace(
        "from = \"s1\"\nto = \"d1\"",
        "from = \"s{i}\"\nto = \"d{i}\"",
    );
    for (name, text) in [
        ("pairs = 100000", pairs.clone()),
        ("a flow per pair", format!("{per_pair}count = 100000\n")),
    ] {
        let sc = scenario::parse_str(&text, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let need = limits::estimate(&sc).bytes();
        assert!(need < limits::DEFAULT_MAX_MEMORY, "{name}: {need} bytes");
    }
    refused("line routers", &LINE.replace("KIND", "line"), "[topology]");
    refused(
        "parking_lot routers",
        &LINE.replace("KIND", "parking_lot"),
        "[topology]",
    );
    refused(
        "bin = 1ns",
        &format!("{DUMBBELL}[record]\nbin = \"1ns\"\n"),
        "[record] bin",
    );
    refused(
        "bin = 1us for 1000000 s",
        &format!("{DUMBBELL}[record]\nbin = \"1us\"\n").replace("\"60s\"", "\"1000000s\""),
        "[record] bin",
    );
    refused(
        "queue_interval = 1ns",
        &format!("{DUMBBELL}[record]\nqueue_interval = \"1ns\"\n"),
        "[record] queue_interval",
    );
    refused(
        "initial_cwnd = 1e9",
        &format!("{DUMBBELL}[defaults.tcp]\ninitial_cwnd = 1000000000\n"),
        "initial_cwnd",
    );
}

#[test]
fn ordinary_scenarios_load_and_every_shipped_scenario_is_within_the_limit() {
    let sc = scenario::parse_str(DUMBBELL, None).expect("loads");
    assert!(limits::estimate(&sc).bytes() < 64 << 20);
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
    let mut todo = vec![std::path::PathBuf::from(root)];
    let mut seen = 0;
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("list").flatten() {
            let p = e.path();
            if p.is_dir() {
                // concord-router's test-bed topology files, not simulator scenarios.
                if p.file_name().is_some_and(|n| n != "testbed") {
                    todo.push(p);
                }
            } else if p.extension().is_some_and(|x| x == "toml") {
                let sc = scenario::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
                let need = limits::estimate(&sc).bytes();
                assert!(need < 1 << 30, "{}: {need} bytes", p.display());
                seen += 1;
            }
        }
    }
    assert!(seen > 10, "{seen} scenarios");
}

#[test]
fn a_file_over_the_size_limit_is_refused_without_reading_it_all() {
    let dir = std::env::temp_dir().join(format!("concord-limits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let big = dir.join("big.toml");
    let mut text = String::from(DUMBBELL);
    let comment = format!("# {}\n", "x".repeat(1000));
    while (text.len() as u64) <= limits::MAX_FILE_BYTES {
        text.push_str(&comment);
    }
    std::fs::write(&big, &text).expect("write");
    let e = scenario::load(&big).expect_err("too big");
    assert!(e.to_string().contains("larger than 16.0 MiB"), "{e}");
    // A device that never ends is read only up to the limit.
    let e = scenario::load(std::path::Path::new("/dev/zero")).expect_err("endless");
    assert!(e.to_string().contains("larger than"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
