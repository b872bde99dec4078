//! `concord run` refuses, before running, a scenario whose memory estimate is over
//! `--max-memory` (8 GiB by default), in one line with exit code 2.

mod common;

const SMALL: &str = r#"duration = "1s"
[topology]
kind = "dumbbell"
pairs = PAIRS
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#;

const LINE: &str = r#"duration = "1s"
[topology]
kind = "line"
routers = 100000
link = { rate = "10Mbps", delay = "1ms" }
access = { rate = "1Gbps", delay = "1ms" }
[[flow]]
kind = "tcp"
from = "src"
to = "dst"
"#;

#[test]
fn over_the_memory_limit_exits_2_with_one_line_before_running() {
    let dir = common::temp("limits", "run");
    let file = dir.join("s.toml");
    let run = |pairs: &str, extra: &[&str]| {
        std::fs::write(&file, SMALL.replace("PAIRS", pairs)).expect("write");
        let mut args = vec![
            "run".to_string(),
            file.display().to_string(),
            "--out".into(),
            dir.join("out").display().to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        common::concord(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };
    // 100,000 pairs fit since routing keeps tables for routers only; 100,000 routers in a line
    // do not (a table of 100,002 entries per router).
    let line = dir.join("line.toml");
    std::fs::write(&line, LINE).expect("write");
    let big = common::concord(&[
        "run",
        &line.display().to_string(),
        "--out",
        &dir.join("out").display().to_string(),
    ]);
    assert_eq!(big.status.code(), Some(2), "{big:?}");
    let stderr = String::from_utf8_lossy(&big.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("pairs/routers") && stderr.contains("8.0 GiB"),
        "{stderr}"
    );
    assert!(!dir.join("out").exists(), "nothing written");
    let capped = run("2", &["--max-memory", "1MiB"]);
    assert_eq!(capped.status.code(), Some(2), "{capped:?}");
    assert!(String::from_utf8_lossy(&capped.stderr).contains("1.0 MiB"));
    let bad = run("2", &["--max-memory", "lots"]);
    assert_eq!(bad.status.code(), Some(2), "{bad:?}");
    let fine = run("2", &["--max-memory", "1GiB"]);
    assert_eq!(fine.status.code(), Some(0), "{fine:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
