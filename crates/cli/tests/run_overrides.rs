//! `concord run --set KEY=VALUE`, and the output directory that says how it was made.

use std::path::Path;

mod common;

const DUMBBELL: &str = r#"duration = "3s"
seed = 2

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }

[[flow]]
name = "f{i}"
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2
"#;

fn run(args: &[&str]) -> (Option<i32>, String) {
    let out = common::concord(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn a_set_override_equals_editing_the_file_and_the_output_describes_the_run() {
    let dir = common::temp("overrides", "equal");
    let base = dir.join("base.toml");
    let edited = dir.join("edited.toml");
    std::fs::write(&base, DUMBBELL).expect("write");
    std::fs::write(
        &edited,
        DUMBBELL
            .replace("\"10Mbps\"", "\"20Mbps\"")
            .replace("count = 2", "count = 1"),
    )
    .expect("write");
    let (a, b) = (dir.join("a"), dir.join("b"));
    let (code, err) = run(&[
        "run",
        &base.display().to_string(),
        "--set",
        "topology.bottleneck.rate=20Mbps",
        "--set",
        "flow[0].count=1",
        "--seed",
        "5",
        "--out",
        &a.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err) = run(&[
        "run",
        &edited.display().to_string(),
        "--seed",
        "5",
        "--out",
        &b.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    for table in ["flows.csv", "channels.csv", "goodput.csv", "queues.csv"] {
        assert_eq!(read(&a.join(table)), read(&b.join(table)), "{table}");
    }

    let meta: serde_json::Value = serde_json::from_str(&read(&a.join("meta.json"))).expect("json");
    assert_eq!(meta["seed"], 5);
    assert_eq!(meta["concord_version"], env!("CARGO_PKG_VERSION"));
    assert!(meta["git_revision"].as_str().is_some_and(|r| !r.is_empty()));
    assert_eq!(
        meta["overrides"],
        serde_json::json!([
            "topology.bottleneck.rate = \"20Mbps\"",
            "flow[0].count = 1",
            "seed = 5"
        ])
    );
    assert_eq!(meta["command_line"][1], "run");
    assert_eq!(meta["command_line"][3], "--set");

    // The scenario as run, run again, gives the same tables.
    let c = dir.join("c");
    let (code, err) = run(&[
        "run",
        &a.join("scenario.toml").display().to_string(),
        "--out",
        &c.display().to_string(),
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(read(&a.join("flows.csv")), read(&c.join("flows.csv")));
    let flows = read(&a.join("flows.csv"));
    assert!(
        flows.starts_with("flow,kind,cc,ecn,cm,cm_weight,from,to,"),
        "{flows}"
    );
    assert!(flows.contains("\nf1,tcp,newreno,0,0,,s1,d1,"), "{flows}");
}

#[test]
fn a_bad_set_names_the_override_and_the_fix_and_exits_2() {
    let dir = common::temp("overrides", "bad");
    let base = dir.join("base.toml");
    std::fs::write(&base, DUMBBELL).expect("write");
    let out = dir.join("out");
    for (set, expected) in [
        (
            "topology.bottleneck.rate=20Mbs",
            "override `topology.bottleneck.rate = \"20Mbs\"`: ",
        ),
        (
            "flow[4].count=1",
            "`flow` has 1 entry, so there is no index 4",
        ),
        ("topology.bottleneck.rat=1Mbps", "did you mean `rate`?"),
        ("seed", "has no `=`"),
    ] {
        let (code, err) = run(&[
            "run",
            &base.display().to_string(),
            "--set",
            set,
            "--out",
            &out.display().to_string(),
        ]);
        assert_eq!(code, Some(2), "{set}: {err}");
        assert_eq!(err.lines().count(), 1, "{set}: {err}");
        assert!(err.contains(expected), "{set}: {err}");
        assert!(err.contains("fix: "), "{set}: {err}");
        assert!(!out.exists(), "{set}: nothing written");
    }
}
