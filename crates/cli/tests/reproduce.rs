//! `concord reproduce` and `concord report` as a user meets them: a run killed half-way leaves
//! the previous report whole, and the README's Results section is written from a report.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

mod common;

/// A fresh scratch directory for this suite.
fn temp(name: &str) -> PathBuf {
    common::temp("cli-repro", name)
}

/// Every file under `dir` with its bytes, sorted by path.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).expect("list").flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn reproduce_baseline(out: &Path) -> Output {
    let out = out.display().to_string();
    common::concord(&["reproduce", "--quick", "--paper", "baseline", "--out", &out])
}

#[test]
fn a_run_killed_half_way_leaves_the_previous_report_whole_and_a_rerun_completes_it() {
    let base = temp("kill");
    let dir = base.join("report");
    let first = reproduce_baseline(&dir);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let before = snapshot(&dir);
    assert!(before.iter().any(|(p, _)| p.ends_with("index.html")));

    // Kill runs at several points of their progress; the report is never torn.
    for delay_ms in [50u64, 300, 800] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
            .args(["reproduce", "--quick", "--paper", "baseline", "--out"])
            .arg(&dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("concord starts");
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(
            snapshot(&dir),
            before,
            "the report changed after a kill at {delay_ms} ms"
        );
    }

    // A run killed while it was writing leaves its temporary directory (and, between the two
    // renames, the report set aside); the next run clears both and writes the report whole.
    let torn = base.join(".report.tmp-4294967294");
    std::fs::create_dir_all(torn.join("figures")).expect("torn dir");
    std::fs::write(torn.join("results.json"), "{\"claims\": [").expect("torn file");
    std::fs::rename(&dir, base.join(".report.old-4294967294")).expect("set aside");
    let again = reproduce_baseline(&dir);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert_eq!(
        snapshot(&dir),
        before,
        "the rerun differs from the first run"
    );
    let left: Vec<String> = std::fs::read_dir(&base)
        .expect("list")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n != "report")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn report_readme_writes_the_results_section_and_its_figures() {
    let base = temp("readme");
    let dir = base.join("report");
    let run = reproduce_baseline(&dir);
    assert_eq!(run.status.code(), Some(0), "{run:?}");
    let readme = base.join("README.md");
    std::fs::write(
        &readme,
        "# x\n\n## Results\n\n<!-- results:begin -->\nstale\n<!-- results:end -->\n\n## After\n",
    )
    .expect("readme");
    let args = |extra: &[&str]| {
        let mut a = vec![
            "report".to_string(),
            dir.display().to_string(),
            "--readme".into(),
            readme.display().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let a = args(&["--figure", "baseline-padhye"]);
    let out = common::concord(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = std::fs::read_to_string(&readme).expect("readme");
    assert!(text.starts_with("# x\n\n## Results\n\n<!-- results:begin -->\n\n"));
    assert!(text.ends_with("<!-- results:end -->\n\n## After\n"));
    assert!(!text.contains("stale"));
    assert!(text.contains("| baseline |"), "{text}");
    assert!(
        text.contains("(docs/figures/baseline-padhye.svg)"),
        "{text}"
    );
    let svg = std::fs::read_to_string(base.join("docs/figures/baseline-padhye.svg")).expect("svg");
    assert!(svg.starts_with("<svg"));

    // A figure the report does not have, or a README without markers, is refused and the
    // README is left as it was.
    let a = args(&["--figure", "no-such-figure"]);
    let out = common::concord(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("baseline-padhye"));
    assert_eq!(
        std::fs::read_to_string(&readme).ok().as_deref(),
        Some(text.as_str())
    );
    std::fs::write(&readme, "# no markers\n").expect("readme");
    let out = common::concord(&args(&[]).iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("results:begin"));
    assert_eq!(
        std::fs::read_to_string(&readme).ok().as_deref(),
        Some("# no markers\n")
    );
}

#[test]
fn verdicts_are_compared_with_an_expectations_file_and_any_change_exits_1() {
    let base = temp("check");
    let dir = base.join("report");
    let expected = base.join("expected.json");
    let run = |extra: &[&str]| {
        let mut a = vec![
            "reproduce".to_string(),
            "--quick".into(),
            "--paper".into(),
            "baseline".into(),
            "--out".into(),
            dir.display().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        common::concord(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let written = run(&["--write-expected", &expected.display().to_string()]);
    assert_eq!(written.status.code(), Some(0), "{written:?}");
    let stdout = String::from_utf8_lossy(&written.stdout);
    assert!(
        stdout.starts_with("Paper results: "),
        "the verdict counts come first: {stdout}"
    );
    let text = std::fs::read_to_string(&expected).expect("expectations written");
    let mut e: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(e["quick"], true);
    let ids: Vec<String> = e["verdicts"]
        .as_object()
        .expect("verdicts")
        .keys()
        .cloned()
        .collect();
    assert!(ids.len() >= 7, "{ids:?}");

    // The same verdicts: exit 0.
    let same = run(&["--check", &expected.display().to_string()]);
    assert_eq!(same.status.code(), Some(0), "{same:?}");

    // A verdict that differs, either way, and a claim the file does not know: exit 1, each
    // named on stderr.
    e["verdicts"][&ids[0]] = "not_reproduced".into();
    e["verdicts"]["baseline/bdp/no-such-claim"] = "reproduced".into();
    std::fs::write(&expected, e.to_string()).expect("write");
    let changed = run(&["--check", &expected.display().to_string()]);
    assert_eq!(changed.status.code(), Some(1), "{changed:?}");
    let stderr = String::from_utf8_lossy(&changed.stderr);
    assert!(
        stderr.contains(&format!("verdict changed: {}", ids[0])),
        "{stderr}"
    );
    assert!(stderr.contains("baseline/bdp/no-such-claim"), "{stderr}");
    assert!(
        dir.join("results.json").exists(),
        "the report is still written"
    );

    // --check-reproduced only minds claims the file marks reproduced.
    let only = run(&["--check-reproduced", &expected.display().to_string()]);
    assert_eq!(only.status.code(), Some(1), "{only:?}");
    assert!(String::from_utf8_lossy(&only.stderr).contains("no-such-claim"));

    // A file that is not an expectations file, or one of the other setting: exit 2, nothing run.
    std::fs::write(&expected, "{\"quick\": true}").expect("write");
    let bad = run(&["--check", &expected.display().to_string()]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--write-expected"));
    std::fs::write(
        &expected,
        "{\"quick\": false, \"seed_base\": 0, \"verdicts\": {}}",
    )
    .expect("write");
    let other = run(&["--check", &expected.display().to_string()]);
    assert_eq!(other.status.code(), Some(2), "{other:?}");
    assert!(String::from_utf8_lossy(&other.stderr).contains("full setting"));
}

#[test]
fn seed_base_shifts_every_seed_and_is_recorded() {
    let base = temp("seed-base");
    let dir = base.join("report");
    let out = common::concord(&[
        "reproduce",
        "--quick",
        "--paper",
        "baseline",
        "--seed-base",
        "1000",
        "--out",
        &dir.display().to_string(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("json");
    assert_eq!(r["seed_base"], 1000);
    for c in r["claims"].as_array().expect("claims") {
        for s in c["seeds"].as_array().expect("seeds") {
            assert!(s.as_u64().is_some_and(|s| s > 1000), "{}: {s}", c["id"]);
        }
    }
    let bad = common::concord(&["reproduce", "--quick", "--seed-base", "minus-one"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
}

#[test]
fn a_run_of_some_papers_never_replaces_a_report_of_others() {
    let base = temp("narrow");
    let dir = base.join("report");
    let first = reproduce_baseline(&dir);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let before = snapshot(&dir);
    // Into the baseline's report, a GCCA-only run is refused before it runs, and the report
    // stays byte for byte.
    let narrow = common::concord(&[
        "reproduce",
        "--quick",
        "--paper",
        "gcca",
        "--out",
        &dir.display().to_string(),
    ]);
    assert_eq!(narrow.status.code(), Some(2), "{narrow:?}");
    let stderr = String::from_utf8_lossy(&narrow.stderr);
    assert!(
        stderr.contains("leaves out (baseline/") && stderr.contains("give another --out"),
        "{stderr}"
    );
    assert_eq!(snapshot(&dir), before);
    // Without --out, a run of some papers writes to a directory named after them.
    let own = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(["reproduce", "--quick", "--paper", "baseline", "--jobs", "1"])
        .current_dir(&base)
        .output()
        .expect("concord runs");
    assert_eq!(own.status.code(), Some(0), "{own:?}");
    assert!(base.join("report-baseline").join("index.html").is_file());
    assert_eq!(snapshot(&dir), before);
    let _ = std::fs::remove_dir_all(&base);
}
