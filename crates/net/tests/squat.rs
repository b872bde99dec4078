//! A socket squatted by another user: with no `XDG_RUNTIME_DIR`, user V's clients look for the
//! daemon at `/tmp/concord-V/cm.sock`. User S creates that directory first and listens there
//! with a fake daemon that answers anything. Both clients, run as V, must refuse to connect,
//! with an error that says why, and send nothing.
//!
//! Needs root (to create the two users and run as them); elsewhere it says so and passes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A user created for the test, deleted when dropped.
struct TestUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl TestUser {
    fn create(name: &str) -> Option<TestUser> {
        let _ = Command::new("userdel").arg(name).output();
        let ok = Command::new("useradd")
            .args(["-M", "-N", "-s", "/usr/sbin/nologin", name])
            .status()
            .ok()?
            .success();
        if !ok {
            return None;
        }
        let id = |flag: &str| -> Option<u32> {
            let out = Command::new("id").args([flag, name]).output().ok()?;
            String::from_utf8_lossy(&out.stdout).trim().parse().ok()
        };
        Some(TestUser {
            name: name.to_string(),
            uid: id("-u")?,
            gid: id("-g")?,
        })
    }

    /// `setpriv` arguments that run a command as this user.
    fn as_user(&self) -> Vec<String> {
        vec![
            format!("--reuid={}", self.uid),
            format!("--regid={}", self.gid),
            "--clear-groups".into(),
        ]
    }
}

impl Drop for TestUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

/// The fake daemon: binds `path` (world-connectable) and answers every connection with a
/// status reply claiming 666 clients.
const FAKE_DAEMON: &str = r#"
import os, socket, struct, sys
path = sys.argv[1]
os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
os.chmod(os.path.dirname(path), 0o755)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o777)
s.listen(8)
print("ready", flush=True)
body = struct.pack(">BBIIIQQQQ", 1, 0x85, 1, 666, 0, 0, 0, 0, 0)
while True:
    c, _ = s.accept()
    try:
        c.sendall(struct.pack(">I", len(body)) + body)
    except OSError:
        pass
    c.close()
"#;

/// A system Python the test users can run (a per-user install under /root is not).
const PYTHON: &str = "/usr/bin/python3";

/// The fake daemon's process and directory, removed when dropped (also on a failed assert).
struct Squat {
    child: Child,
    dir: PathBuf,
}

impl Drop for Squat {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
}

fn python_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python")
}

#[test]
fn a_socket_squatted_by_another_user_is_refused_by_both_clients() {
    if !is_root() || !Path::new(PYTHON).exists() {
        eprintln!("skipped: needs root (to create the test users) and {PYTHON}");
        return;
    }
    let pid = std::process::id();
    let (Some(squatter), Some(victim)) = (
        TestUser::create(&format!("ctrusrs{pid}")),
        TestUser::create(&format!("ctrusrv{pid}")),
    ) else {
        panic!("useradd failed");
    };
    let dir = PathBuf::from(format!("/tmp/concord-{}", victim.uid));
    let _ = std::fs::remove_dir_all(&dir);
    let socket = dir.join("cm.sock");
    let child: Child = Command::new("setpriv")
        .args(squatter.as_user())
        .args([PYTHON, "-c", FAKE_DAEMON])
        .arg(&socket)
        .stdout(Stdio::null())
        .spawn()
        .expect("start the fake daemon");
    let squat = Squat {
        child,
        dir: dir.clone(),
    };
    // Up to 10 s, in 20 ms steps.
    for step in 0.. {
        if socket.exists() {
            break;
        }
        assert!(step < 500, "fake daemon not up");
        std::thread::sleep(Duration::from_millis(20));
    }
    let run_as_victim = |program: &str, args: &[&str]| {
        Command::new("setpriv")
            .args(victim.as_user())
            .arg("env")
            .args(["-u", "XDG_RUNTIME_DIR", "-u", "CONCORD_CM_SOCKET"])
            .arg(program)
            .args(args)
            .output()
            .expect("run as the victim")
    };
    let rust = run_as_victim(env!("CARGO_BIN_EXE_concord-cm"), &["status"]);
    let py_code = format!(
        "import sys; sys.path.insert(0, {:?})\n\
         from concord.cm import Client\n\
         print(Client().status())",
        python_dir().display().to_string()
    );
    let python = run_as_victim(PYTHON, &["-c", &py_code]);
    drop(squat);

    let rust_err = String::from_utf8_lossy(&rust.stderr);
    let rust_out = String::from_utf8_lossy(&rust.stdout);
    println!("Rust client: {rust_err}");
    assert!(!rust.status.success(), "Rust client accepted: {rust_out}");
    assert!(!rust_out.contains("666"), "{rust_out}");
    assert!(
        rust_err.contains("refusing to connect") && rust_err.contains(&squatter.uid.to_string()),
        "{rust_err}"
    );
    let py_err = String::from_utf8_lossy(&python.stderr);
    let py_out = String::from_utf8_lossy(&python.stdout);
    println!("Python client: {}", py_err.lines().last().unwrap_or(""));
    assert!(!python.status.success(), "Python client accepted: {py_out}");
    assert!(!py_out.contains("666"), "{py_out}");
    assert!(
        py_err.contains("UntrustedSocket") && py_err.contains("refusing to connect"),
        "{py_err}"
    );
}
