//! Shared pieces of the daemon tests: private temporary directories, an in-process daemon and
//! the real `concordd` binary as a child process.

#![allow(dead_code)]

use concord_net::daemon::{bind_socket, serve};
use concord_net::hub::{Hub, HubConfig};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A directory with mode 0700, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("concord-net-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create the test directory");
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))
            .expect("restrict the test directory");
        TempDir(p)
    }

    pub fn socket(&self) -> PathBuf {
        self.0.join("cm.sock")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A daemon served by tasks of the current runtime on `path`; the hub is returned for
/// inspection.
pub fn spawn_daemon(path: &Path, config: HubConfig) -> Arc<Hub> {
    let hub = Hub::new(config).expect("valid config");
    let listener = bind_socket(path).expect("bind the socket");
    tokio::spawn(Arc::clone(&hub).run_timer());
    tokio::spawn(serve(Arc::clone(&hub), listener));
    hub
}

/// A hub configuration whose first rate is high, so that grants are not held back by pacing:
/// 1.5 MB per 1 ms, 12 Gbit/s.
pub fn fast_config() -> HubConfig {
    HubConfig {
        cm: concord_cc::cm::CmConfig {
            initial_rtt: concord_cc::Duration::from_millis(1),
            initial_cwnd: 1_500_000,
            ..concord_cc::cm::CmConfig::default()
        },
        ..HubConfig::default()
    }
}

/// The built `concordd` as a child process; killed on drop.
pub struct Daemon {
    pub child: Child,
    pub dir: TempDir,
}

impl Daemon {
    pub fn start(extra: &[&str]) -> Daemon {
        let dir = TempDir::new("bin");
        let child = Command::new(env!("CARGO_BIN_EXE_concordd"))
            .arg("--socket")
            .arg(dir.socket())
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn concordd");
        let d = Daemon { child, dir };
        for _ in 0..500 {
            if std::os::unix::net::UnixStream::connect(d.dir.socket()).is_ok() {
                return d;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("concordd did not listen within 5 s");
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.socket()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
