//! The `concord` command as a user meets it.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

/// A fresh scratch directory for this suite.
fn temp(name: &str) -> PathBuf {
    common::temp("cli", name)
}

fn repo(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

const VALID: &str = r#"# a small dumbbell
duration = "5s"

[topology]
kind = "dumbbell"
pairs = 1
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }

[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
stop = "4s"
"#;

/// Writes `text` as a scenario file and runs it; returns (exit code, stderr).
fn run_text(dir: &Path, text: &str) -> (Option<i32>, String) {
    let file = dir.join("bad.toml");
    std::fs::write(&file, text).expect("write");
    let out = common::concord(&[
        "run",
        &file.display().to_string(),
        "--out",
        &dir.join("out").display().to_string(),
    ]);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn malformed_scenarios_fail_with_one_line_naming_file_line_and_fix_and_exit_code_2() {
    let dir = temp("bad");
    let cases: [(&str, String, usize); 5] = [
        (
            "unknown key",
            VALID.replace("stop = \"4s\"", "stop = \"4s\"\nrat = \"1Mbps\""),
            15,
        ),
        (
            "negative rate",
            VALID.replace("rate = \"10Mbps\"", "rate = \"-5Mbps\""),
            7,
        ),
        (
            "missing node",
            VALID.replace("to = \"d1\"", "to = \"d9\""),
            13,
        ),
        (
            "link to a missing node",
            format!("{VALID}\n[[link]]\nbetween = [\"r1\", \"r9\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n"),
            17,
        ),
        (
            "stop before start",
            VALID.replace("stop = \"4s\"", "start = \"3s\"\nstop = \"2s\""),
            15,
        ),
    ];
    for (what, text, line) in cases {
        let (code, stderr) = run_text(&dir, &text);
        assert_eq!(code, Some(2), "{what}: exit code; stderr: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: one line expected, got {stderr:?}");
        assert!(
            lines[0].contains(&format!("bad.toml:{line}:")),
            "{what}: no file:line {line} in {stderr:?}"
        );
        assert!(lines[0].contains("fix:"), "{what}: no fix in {stderr:?}");
        assert!(
            !dir.join("out").join("summary.json").exists(),
            "{what}: results written for a bad scenario"
        );
    }
}

#[test]
fn run_writes_its_tables_and_a_pcap_that_tshark_reads() {
    let dir = temp("run");
    let file = dir.join("ok.toml");
    std::fs::write(
        &file,
        VALID.replace(
            "stop = \"4s\"",
            "stop = \"4s\"\n\n[record]\npcap = [\"r1->r2\"]\ncwnd = [\"f1\"]",
        ),
    )
    .expect("write");
    let out_dir = dir.join("out");
    let out = common::concord(&[
        "run",
        &file.display().to_string(),
        "--out",
        &out_dir.display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("goodput") && stdout.contains("Jain"),
        "{stdout}"
    );
    for f in [
        "summary.json",
        "flows.csv",
        "channels.csv",
        "goodput.csv",
        "queues.csv",
        "delay.csv",
        "cwnd.csv",
        "r1-r2.pcap",
    ] {
        let meta = std::fs::metadata(out_dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(meta.len() > 0, "{f} is empty");
    }
    let Some(tshark) = find_tshark() else { return };
    let pcap = out_dir.join("r1-r2.pcap");
    let t = Command::new(tshark)
        .args([
            "-r",
            &pcap.display().to_string(),
            "-o",
            "tcp.check_checksum:TRUE",
            "-o",
            "ip.check_checksum:TRUE",
        ])
        .args([
            "-T",
            "fields",
            "-e",
            "ip.src",
            "-e",
            "tcp.seq_raw",
            "-e",
            "_ws.malformed",
        ])
        .output()
        .expect("tshark runs");
    assert!(
        t.status.success(),
        "tshark failed: {}",
        String::from_utf8_lossy(&t.stderr)
    );
    let text = String::from_utf8_lossy(&t.stdout);
    let rows: Vec<&str> = text.lines().collect();
    assert!(rows.len() > 1000, "only {} packets decoded", rows.len());
    assert!(
        rows.iter()
            .all(|r| r.starts_with("10.0.0.") && !r.contains("Malformed")),
        "{:?}",
        &rows[..3]
    );
    let stderr = String::from_utf8_lossy(&t.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.contains("Running as user"))
        .collect();
    assert!(errors.is_empty(), "tshark complained: {errors:?}");
}

fn find_tshark() -> Option<&'static str> {
    if Command::new("tshark").arg("--version").output().is_ok() {
        return Some("tshark");
    }
    if std::env::var_os("CONCORD_REQUIRE_TSHARK").is_some() {
        panic!("tshark is required here: install it with `apt-get install -y tshark`");
    }
    eprintln!("skipping the tshark check: tshark is not installed");
    None
}

#[test]
fn seed_override_changes_the_results_and_is_reported() {
    let dir = temp("seed");
    let s = repo("scenarios/basic/dumbbell-4-droptail.toml");
    let a = common::concord(&[
        "run",
        &s,
        "--seed",
        "11",
        "--json",
        "--out",
        &dir.join("a").display().to_string(),
    ]);
    let b = common::concord(&[
        "run",
        &s,
        "--seed",
        "12",
        "--json",
        "--out",
        &dir.join("b").display().to_string(),
    ]);
    assert!(a.status.success() && b.status.success());
    let ja: serde_json::Value = serde_json::from_slice(&a.stdout).expect("json");
    let jb: serde_json::Value = serde_json::from_slice(&b.stdout).expect("json");
    assert_eq!(ja["seed"], 11);
    assert_eq!(jb["seed"], 12);
    assert_ne!(ja["flows"], jb["flows"]);
}

/// Runs concord with `args` (which ask for `--json`), requires success and reads the JSON.
fn json_of(args: &[&str]) -> serde_json::Value {
    let out = common::concord(args);
    assert!(
        out.status.success(),
        "concord {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn bench_with_sack_runs_every_flow_with_sack() {
    let args = [
        "bench",
        "--flows",
        "8",
        "--duration",
        "10s",
        "--runs",
        "1",
        "--json",
    ];
    let p = json_of(&args);
    let j = json_of(&[&args[..], &["--sack"]].concat());
    assert_eq!(
        (j["sack"].as_bool(), p["sack"].as_bool()),
        (Some(true), Some(false))
    );
    assert_ne!(j["events"], p["events"], "SACK changes the run");
    let util = j["bottleneck_utilisation"].as_f64().unwrap_or(0.0);
    assert!(util > 0.9, "utilisation {util}");
}

#[test]
fn bench_reports_speed_beside_the_figures_ns3_users_compare() {
    let out = common::concord(&[
        "bench",
        "--flows",
        "8",
        "--duration",
        "10s",
        "--runs",
        "1",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    for key in [
        "events_per_second",
        "bottleneck_packets_per_wall_second",
        "simulated_seconds_per_wall_second",
        "peak_rss_mb",
        "goodput_per_flow_bps",
        "jain_index",
        "bottleneck_drops",
        "bottleneck_utilisation",
    ] {
        assert!(!j[key].is_null(), "{key} missing in {j}");
    }
    assert_eq!(j["goodput_per_flow_bps"].as_array().map(Vec::len), Some(8));
    let util = j["bottleneck_utilisation"].as_f64().unwrap_or(0.0);
    assert!(util > 0.9, "utilisation {util}");
}

#[test]
fn bench_says_which_build_made_its_figures() {
    // This test is compiled with the same profile as the binary it runs, so the binary's debug
    // assertions are this test's.
    let out = common::concord(&["bench", "--flows", "2", "--duration", "1s", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let b = &j["build"];
    assert_eq!(b["debug_assertions"], cfg!(debug_assertions), "{b}");
    assert_eq!(b["profile_guided"], false, "{b}");
    let level = b["opt_level"].as_str().unwrap_or("");
    assert!(["0", "1", "2", "3", "s", "z"].contains(&level), "{b}");
    let release = level == "3" && !cfg!(debug_assertions);

    let out = common::concord(&["bench", "--flows", "2", "--duration", "1s"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("build: "))
        .unwrap_or("");
    assert!(
        line.starts_with(&format!("build: opt-level {level}")),
        "{text}"
    );
    assert_eq!(line.contains("not a release build"), !release, "{line}");

    let out = common::concord(&["bench", "--scaling", "2", "--duration", "1s", "--json"]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(rows[0]["build"], *b);
}

#[test]
fn bench_rwnd_bounds_every_flow_by_its_advertised_window() {
    // 8 flows, 1 Gbps / 100 ms bottleneck, 1 Gbps / 1 ms access links: the round trip is at
    // least 2 x 102 ms, so a 64 KiB window carries at most 65,536 x 8 / 0.204 bit/s a flow.
    let args = [
        "bench",
        "--flows",
        "8",
        "--rate",
        "1Gbps",
        "--delay",
        "100ms",
        "--queue",
        "5000",
        "--duration",
        "10s",
        "--runs",
        "1",
        "--json",
    ];
    let j = json_of(&[&args[..], &["--rwnd", "64KiB"]].concat());
    let p = json_of(&args);
    assert_eq!(j["rwnd"].as_str(), Some("65536B"));
    assert!(p["rwnd"].is_null());
    let bound = 8.0 * 65_536.0 * 8.0 / 0.204;
    let goodput = j["total_goodput_bps"].as_f64().unwrap_or(0.0);
    // Slow start to the window takes the first few round trips of the 10 s.
    assert!(
        goodput <= bound && goodput >= 0.85 * bound,
        "goodput {goodput} against the window's bound {bound}"
    );
    assert_eq!(j["bottleneck_drops"].as_u64(), Some(0));
    // Unbounded, the same flows overflow the 5000-packet queue.
    assert!(p["bottleneck_drops"].as_u64().unwrap_or(0) > 0, "{p}");
    // Every packet that reached the bottleneck was sent or is still queued: none dropped.
    let arrivals = j["bottleneck_arrivals"].as_u64().unwrap_or(0);
    let sent = j["bottleneck_packets"].as_f64().unwrap_or(0.0) as u64;
    assert!(
        arrivals >= sent && arrivals - sent <= 5000,
        "{arrivals} {sent}"
    );
}

#[test]
fn bench_refuses_a_window_that_is_not_a_size() {
    for (w, says) in [
        ("0B", "--rwnd must be at least 1 byte"),
        ("64Kb", "`Kb` is bits"),
        ("lots", "--rwnd"),
    ] {
        let out = common::concord(&["bench", "--rwnd", w]);
        assert_eq!(out.status.code(), Some(2), "--rwnd {w}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "--rwnd {w}: {err}");
    }
}

#[test]
fn help_explains_the_commands() {
    let out = common::concord(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for word in ["run", "bench", "scenario", "Examples"] {
        assert!(text.contains(word), "--help lacks {word}: {text}");
    }
}
