//! Every command writes into a pipe whose reader has gone (`concord ... | head -1`) without a
//! panic: it stops quietly and exits 0. And the claims table fits `COLUMNS`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

/// An empty directory `concord-pipes-<pid>-<name>` in the system's temporary directory.
fn temp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("concord-pipes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn scenario(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
        .display()
        .to_string()
}

/// Runs concord with `args`, reads at most one line of its standard output, closes the pipe,
/// and returns its exit code and standard error.
fn into_head_1(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("concord starts");
    let stdout = child.stdout.take().expect("stdout piped");
    let mut first = String::new();
    let _ = BufReader::new(stdout).read_line(&mut first);
    // The reader is dropped here, as `head -1` exits after its line.
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr piped")
        .read_to_string(&mut stderr)
        .expect("stderr readable");
    let status = child.wait().expect("concord exits");
    (status.code(), stderr)
}

/// Like [`into_head_1`], but the pipe is closed as soon as concord starts, before it writes.
fn into_closed_pipe(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("concord starts");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr piped")
        .read_to_string(&mut stderr)
        .expect("stderr readable");
    let status = child.wait().expect("concord exits");
    (status.code(), stderr)
}

fn assert_quiet(what: &str, (code, stderr): (Option<i32>, String)) {
    assert!(
        !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
        "{what}: {stderr}"
    );
    assert_eq!(code, Some(0), "{what} exits 0: {stderr}");
}

#[test]
fn every_command_piped_into_head_exits_0_without_a_panic() {
    let dir = temp("report");
    let out = dir.display().to_string();
    let reproduce = ["reproduce", "--quick", "--paper", "baseline", "--out", &out];
    // The report is written whole before the table goes to the closed pipe.
    assert_quiet("reproduce", into_closed_pipe(&reproduce));
    assert!(dir.join("results.json").is_file());
    let results = dir.join("run").display().to_string();
    let dumbbell = scenario("scenarios/basic/dumbbell-4-droptail.toml");
    let commands: Vec<Vec<&str>> = vec![
        vec!["--help"],
        vec!["report", &out],
        vec!["report", &out, "--markdown"],
        vec!["run", &dumbbell, "--out", &results],
        vec!["run", &dumbbell, "--out", &results, "--json"],
        vec!["bench", "--flows", "2", "--duration", "1s"],
        vec!["completions", "bash"],
        vec!["man"],
    ];
    for args in &commands {
        assert_quiet(&args.join(" "), into_head_1(args));
        assert_quiet(&args.join(" "), into_closed_pipe(args));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_claims_table_fits_columns() {
    let dir = temp("columns");
    let out = dir.display().to_string();
    let run = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(["reproduce", "--quick", "--paper", "baseline", "--out", &out])
        .env("COLUMNS", "100")
        .output()
        .expect("concord runs");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8(run.stdout).expect("UTF-8");
    let widest = stdout.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "a line of {widest} characters:\n{stdout}");
    let claims = stdout.lines().filter(|l| l.starts_with("baseline")).count();
    assert!(claims > 0, "one line per claim:\n{stdout}");
    let _ = std::fs::remove_dir_all(&dir);
}
