//! What the `concord` command's integration tests share: running the binary, and a fresh
//! scratch directory.

use std::path::PathBuf;
use std::process::{Command, Output};

/// Runs the `concord` binary with `args` and collects its output.
pub fn concord(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(args)
        .output()
        .expect("concord runs")
}

/// An empty directory `concord-<suite>-<pid>-<name>` in the system's temporary directory.
pub fn temp(suite: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("concord-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}
