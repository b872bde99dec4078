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
    /// The extra arguments it was started with.
    pub extra: Vec<String>,
    /// The environment variables it was started with.
    pub env: Vec<(String, String)>,
}

impl Daemon {
    pub fn start(extra: &[&str]) -> Daemon {
        Self::start_with_env(extra, &[])
    }

    /// [`Daemon::start`] with these environment variables set (others are inherited).
    pub fn start_with_env(extra: &[&str], env: &[(&str, &str)]) -> Daemon {
        let dir = TempDir::new("bin");
        let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let child = Self::spawn(&dir.socket(), &extra, &env);
        Daemon {
            child,
            dir,
            extra,
            env,
        }
    }

    /// `concordd` on `socket`, once it listens.
    #[allow(clippy::zombie_processes)] // the caller holds the child in a `Daemon`
    fn spawn(socket: &Path, extra: &[String], env: &[(String, String)]) -> Child {
        let child = Command::new(env!("CARGO_BIN_EXE_concordd"))
            .arg("--socket")
            .arg(socket)
            .args(extra)
            .env("RUST_LOG", "warn")
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn concordd");
        for _ in 0..500 {
            if std::os::unix::net::UnixStream::connect(socket).is_ok() {
                return child;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("concordd did not listen within 5 s");
    }

    /// Kills the daemon (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same socket with the same arguments (the stale socket file is
    /// replaced), once it listens.
    pub fn restart(&mut self) {
        self.child = Self::spawn(&self.dir.socket(), &self.extra, &self.env);
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

/// Runs `f` on a new thread that has entered the network namespace bound at `ns`; sockets it
/// opens live there.
pub fn in_netns<T: Send + 'static>(
    ns: PathBuf,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    std::thread::spawn(move || {
        concord_net::sys::enter_netns(&ns).expect("enter the namespace");
        f()
    })
}

/// A test bed made for this process: removed on drop, and by the next test bed's `up` if this
/// process dies first.
pub struct Bed(pub concord_net::testbed::Testbed);

impl Bed {
    /// Builds `bed` for this process. Fails the test if it cannot be built: the test bed tests
    /// run as root in CI and are not skipped.
    pub fn up(mut bed: concord_net::testbed::Testbed) -> Bed {
        bed.owner = Some(std::process::id());
        bed.delay_line_exe = PathBuf::from(env!("CARGO_BIN_EXE_concord-testbed"));
        if let Err(e) = bed.up() {
            panic!(
                "the test bed {} cannot be built ({e}); these tests need root, ip and tc",
                bed.prefix
            );
        }
        Bed(bed)
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        if let Err(e) = self.0.down() {
            eprintln!("removing the test bed {}: {e}", self.0.prefix);
        }
    }
}

/// Child processes killed and reaped on drop, even if the test fails.
pub struct Killed(pub Vec<Child>);

impl Drop for Killed {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `concordd` in namespace `ns`, on socket `sock`, with the probe protocol bound to `bind`
/// port `probe_port`; `ip netns exec` executes the daemon itself, so killing the child kills
/// it. Waits until it listens.
#[allow(clippy::zombie_processes)] // the caller holds the child in a `Killed`
pub fn daemon_in(
    ns: &str,
    sock: &Path,
    bind: std::net::Ipv4Addr,
    probe_port: u16,
    extra: &[&str],
) -> Child {
    let _ = std::fs::remove_file(sock);
    let child = Command::new("ip")
        .args(["netns", "exec", ns, env!("CARGO_BIN_EXE_concordd")])
        .arg("--socket")
        .arg(sock)
        .args(["--probe-port", &probe_port.to_string()])
        .args(["--probe-bind", &bind.to_string()])
        .args(extra)
        .env(
            "RUST_LOG",
            std::env::var("CONCORD_TEST_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn concordd");
    for _ in 0..500 {
        if std::os::unix::net::UnixStream::connect(sock).is_ok() {
            return child;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("concordd in {ns} did not listen within 5 s");
}
