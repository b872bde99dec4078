//! `concord-router bed up FILE` and `bed down`: a scenarios/testbed topology brought up for
//! interactive use and taken down again. Needs root (it fails, not skips, without it), as
//! crates/router/tests/wire.rs does.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const EXE: &str = env!("CARGO_BIN_EXE_concord-router");

#[test]
fn bed_up_builds_every_node_and_bed_down_removes_them_all() {
    // `CONCORD_ROUTER_PREFIX` names the namespaces (default "crt").
    let prefix = concord_router::bed::test_prefix("CONCORD_ROUTER_PREFIX", "crt", "c");
    let file =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/testbed/eca-123-eca.toml");
    let mut up = Command::new(EXE)
        .args(["bed", "up"])
        .arg(&file)
        .args(["--prefix", &prefix, "--net", "96"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bed up");
    // Its description ends with the line saying it is up.
    let mut lines = Vec::new();
    let stdout = up.stdout.take().expect("stdout");
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read");
        let done = line.contains("is up");
        lines.push(line);
        if done {
            break;
        }
    }
    let nodes = ["s1", "s2", "s3", "r1", "r2", "d"];
    for n in nodes {
        let ns = format!("/run/netns/{prefix}-{n}");
        assert!(
            Path::new(&ns).exists(),
            "{ns} after bed up (run as root); it said: {lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains(&format!("{prefix}-{n}"))),
            "{n} is described"
        );
    }
    assert!(Path::new(&format!("/tmp/{prefix}-bed/r2.status")).exists());
    let down = Command::new(EXE)
        .args(["bed", "down", "--prefix", &prefix])
        .output()
        .expect("bed down");
    assert!(down.status.success(), "{down:?}");
    let status = up.wait().expect("bed up ends");
    assert!(
        status.success(),
        "bed up exits cleanly on SIGTERM: {status:?}"
    );
    for n in nodes {
        assert!(!Path::new(&format!("/run/netns/{prefix}-{n}")).exists());
    }
    // Nothing is left to take down, and saying so is an error that names the records.
    std::thread::sleep(Duration::from_millis(100));
    let again = Command::new(EXE)
        .args(["bed", "down", "--prefix", &prefix])
        .output()
        .expect("bed down");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("no test bed is recorded"));
}

#[test]
fn bed_up_refuses_a_bad_prefix_and_a_missing_file_with_the_fix() {
    let out = Command::new(EXE)
        .args(["bed", "up", "no-such.toml", "--prefix", "a-b"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 to 8 letters or digits"));
    let out = Command::new(EXE)
        .args(["bed", "up", "/nonexistent/x.toml", "--prefix", "cr3x"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.toml"));
}
