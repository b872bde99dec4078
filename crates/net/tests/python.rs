//! Runs the Python client's tests (python/tests) against the `concordd` cargo built, so that
//! `cargo test --workspace` covers them. Skipped with a message when python3 or pytest is
//! missing, unless CONCORD_REQUIRE_PYTHON is set, which makes a missing interpreter a failure.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// The longest the Python tests may run, in seconds.
const LIMIT_SECS: u64 = 180;

fn python_with_pytest() -> Result<(), String> {
    let out = Command::new("python3")
        .args(["-c", "import pytest"])
        .output()
        .map_err(|e| format!("python3 cannot run: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "pytest is not importable: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[test]
fn the_python_client_tests_pass_against_concordd() {
    if let Err(why) = python_with_pytest() {
        assert!(
            std::env::var_os("CONCORD_REQUIRE_PYTHON").is_none(),
            "CONCORD_REQUIRE_PYTHON is set but {why}"
        );
        eprintln!("SKIPPED the Python client tests: {why} (pip install pytest to run them)");
        return;
    }
    let python_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python");
    let mut child = Command::new("python3")
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"])
        .current_dir(&python_dir)
        .env("CONCORDD", env!("CARGO_BIN_EXE_concordd"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn pytest");
    let step = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait for pytest") {
            break s;
        }
        if waited >= Duration::from_secs(LIMIT_SECS) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the Python tests ran longer than {LIMIT_SECS} s");
        }
        std::thread::sleep(step);
        waited += step;
    };
    assert!(status.success(), "the Python client tests failed: {status}");
}
