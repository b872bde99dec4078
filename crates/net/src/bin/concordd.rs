//! `concordd`: the Congestion Manager daemon. One manager per host, shared by every local
//! client over a Unix socket (docs/cm-protocol.md).
//!
//! Logs go to standard error, filtered by `RUST_LOG` (default `info`).

use clap::Parser;
use concord_cc::cm::{CmConfig, ProbeKey};
use concord_cc::Duration;
use concord_net::daemon::{bind_socket, default_socket_path, serve_with, Limits};
use concord_net::hub::{Hub, HubConfig};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tracing_subscriber::EnvFilter;

/// The Congestion Manager daemon.
#[derive(Debug, Parser)]
#[command(name = "concordd", version, about)]
struct Args {
    /// The socket to listen on [default: $CONCORD_CM_SOCKET, else
    /// $XDG_RUNTIME_DIR/concord/cm.sock, else /run/user/UID/concord/cm.sock, else for root
    /// /run/concord/cm.sock, else /tmp/concord-UID/cm.sock]. Its directory is created with mode
    /// 0700 if missing and must be private to this user.
    #[arg(long)]
    socket: Option<PathBuf>,
    /// The most flows one client may hold open.
    #[arg(long, default_value_t = 4096)]
    max_flows_per_client: usize,
    /// The most connections open at once (also kept below the open-files limit).
    #[arg(long, default_value_t = 4096)]
    max_connections: usize,
    /// The most connections open at once per user.
    #[arg(long, default_value_t = 4096)]
    max_connections_per_user: usize,
    /// Seconds after which a connection that holds no flow and sends nothing is closed.
    #[arg(long, default_value_t = 60)]
    idle_timeout_s: u64,
    /// The RTT assumed before a flow's first sample, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    initial_rtt_ms: u64,
    /// The initial window, in bytes.
    #[arg(long, default_value_t = 3000)]
    initial_cwnd: u64,
    /// The UDP port of the probe protocol between daemons; none if not given.
    #[arg(long)]
    probe_port: Option<u16>,
    /// The address the probe socket binds to.
    #[arg(long, default_value = "127.0.0.1")]
    probe_bind: std::net::Ipv4Addr,
    /// The UDP port of the receiving hosts' daemons [default: --probe-port].
    #[arg(long)]
    peer_probe_port: Option<u16>,
    /// Count arrivals to this port (UDP or TCP, to --probe-bind) by observing the interfaces
    /// (an AF_PACKET socket with a filter; needs CAP_NET_RAW), for the probe responses, besides
    /// the applications' own reports. Repeat for several ports.
    #[arg(long)]
    count_port: Vec<u16>,
    /// The seed of the manager's seeded generator. Probe nonces do not use it: they come from
    /// the operating system's CSPRNG.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A file holding the key shared with the peer daemons (64 hexadecimal digits, 32 bytes):
    /// every probe and response is then authenticated with HMAC-SHA-256, and messages without
    /// the right tag are refused. The file must not be readable by group or others.
    #[arg(long)]
    probe_key_file: Option<PathBuf>,
    /// Drive kernel TCP too (root; built with the `tcp` feature): register concord's eBPF
    /// congestion-control algorithms for as long as the daemon runs, and make every kernel TCP
    /// socket that uses `concord_cm` a flow of this daemon's manager, in its destination's
    /// macroflow beside the clients' flows (docs/ebpf.md).
    #[arg(long)]
    tcp: bool,
    /// With `--tcp`: kernel sockets to destination port PORT weigh WEIGHT in their macroflow's
    /// scheduler (`PORT=WEIGHT`, e.g. `5201=2`; other sockets weigh 1). Repeat for several
    /// ports.
    #[arg(long, value_name = "PORT=WEIGHT")]
    tcp_weight: Vec<String>,
}

/// Reads the probe key: 64 hexadecimal digits (whitespace around them ignored) in a file that
/// only its owner may read.
fn read_probe_key(path: &std::path::Path) -> Result<ProbeKey, String> {
    use std::os::unix::fs::PermissionsExt;
    let meta =
        std::fs::metadata(path).map_err(|e| format!("--probe-key-file {}: {e}", path.display()))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(format!(
            "--probe-key-file {}: readable by group or others; chmod 600 it",
            path.display()
        ));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("--probe-key-file {}: {e}", path.display()))?;
    let hex = text.trim();
    let bad = || {
        format!(
            "--probe-key-file {}: expected 64 hexadecimal digits (32 bytes), e.g. from `openssl rand -hex 32`",
            path.display()
        )
    };
    if hex.len() != 64 || !hex.is_ascii() {
        return Err(bad());
    }
    let mut key = [0u8; 32];
    for (i, b) in key.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
    }
    Ok(ProbeKey(key))
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none(),
        )
        .init();
    let args = Args::parse();
    // Returns only if the daemon was not started again.
    if let Err(e) = concord_net::thread_caches::bound_thread_caches() {
        tracing::warn!(
            error = %e,
            "cannot restart with glibc's malloc tuned: memory freed after a burst of \
             connections may not all be handed back"
        );
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "cannot start the runtime");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let probe_key = match &args.probe_key_file {
        Some(p) => Some(read_probe_key(p)?),
        None => None,
    };
    let config = HubConfig {
        probe_key,
        cm: CmConfig {
            initial_rtt: Duration::from_millis(args.initial_rtt_ms),
            initial_cwnd: args.initial_cwnd,
            ..CmConfig::default()
        },
        seed: args.seed,
        max_flows_per_client: args.max_flows_per_client,
        ..HubConfig::default()
    };
    let hub = Hub::new(config)?;
    if !args.tcp_weight.is_empty() && !args.tcp {
        return Err("--tcp-weight weighs kernel TCP sockets: it needs --tcp".into());
    }
    let tcp = if args.tcp {
        Some(start_tcp(Arc::clone(&hub), &args.tcp_weight).await?)
    } else {
        None
    };
    let open_files = match concord_net::sys::raise_open_files_limit() {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "cannot raise the open-files limit");
            1024
        }
    };
    // Descriptors beyond the connections: the listener, the probe and packet sockets, logs.
    let fit = usize::try_from(open_files.saturating_sub(64)).unwrap_or(usize::MAX);
    let limits = Limits {
        max_connections: args.max_connections.min(fit).max(1),
        max_per_uid: args.max_connections_per_user.max(1),
        idle_timeout: std::time::Duration::from_secs(args.idle_timeout_s.max(1)),
        ..Limits::default()
    };
    tracing::info!(
        open_files,
        max_connections = limits.max_connections,
        "limits"
    );
    let path = args.socket.unwrap_or_else(default_socket_path);
    let listener = bind_socket(&path)?;
    tracing::info!(socket = %path.display(), "concordd listening");
    tokio::spawn(Arc::clone(&hub).run_timer());
    if let Some(port) = args.probe_port {
        let udp = tokio::net::UdpSocket::bind((args.probe_bind, port)).await?;
        let peer = args.peer_probe_port.unwrap_or(port);
        if peer == 0 {
            return Err("--probe-port 0 picks a free port: give --peer-probe-port too".into());
        }
        tracing::info!(local = %udp.local_addr()?, peer_port = peer, "probe protocol on");
        let capture = if args.count_port.is_empty() {
            None
        } else {
            let c = concord_net::capture::Capture::open(args.probe_bind, &args.count_port)?;
            tracing::info!(ports = ?args.count_port, "counting arrivals on the interfaces");
            Some(c)
        };
        tokio::spawn(Arc::clone(&hub).run_probes_counting(udp, peer, capture));
    }
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    tokio::select! {
        () = serve_with(hub, listener, limits) => {}
        r = tokio::signal::ctrl_c() => r?,
        _ = term.recv() => {}
    }
    if let Err(e) = std::fs::remove_file(&path) {
        tracing::warn!(error = %e, "removing the socket");
    }
    if let Some(tcp) = tcp {
        tcp.stop();
    }
    tracing::info!("concordd stopped");
    Ok(())
}

/// The kernel TCP side's thread.
#[cfg(feature = "tcp")]
struct TcpSide {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<()>,
}

#[cfg(feature = "tcp")]
impl TcpSide {
    /// Stops the side and waits for it: the algorithms are unregistered when it returns.
    fn stop(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = self.thread.join();
    }
}

/// Loads the datapath on a thread of its own and waits until its algorithms are registered.
#[cfg(feature = "tcp")]
async fn start_tcp(
    hub: Arc<Hub>,
    weight_args: &[String],
) -> Result<TcpSide, Box<dyn std::error::Error>> {
    use concord_net::kernel_tcp::TcpWeights;
    use std::sync::atomic::AtomicBool;
    let mut weights = TcpWeights::new();
    for arg in weight_args {
        let (port, weight) =
            TcpWeights::parse_entry(arg).map_err(|e| format!("--tcp-weight {e}"))?;
        weights.set(port, weight)?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = tokio::sync::oneshot::channel::<Result<String, String>>();
    let thread = {
        let stop = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("concordd-tcp".into())
            .spawn(move || {
                let tx = std::sync::Mutex::new(Some(tx));
                let send = |r| {
                    if let Some(tx) = tx.lock().ok().and_then(|mut t| t.take()) {
                        let _ = tx.send(r);
                    }
                };
                let config = concord_bpf::agent::AgentConfig::default();
                match concord_net::kernel_tcp::run(hub, config, weights, &stop, |names| {
                    send(Ok(names.join(" ")));
                }) {
                    Ok(s) => tracing::info!(
                        records = s.agent.records,
                        sockets = s.agent.sockets_opened,
                        dropped = s.dropped,
                        fallback_acks = s.fallback_acks,
                        "kernel TCP side stopped"
                    ),
                    Err(e) => {
                        tracing::error!("kernel TCP side: {e}");
                        send(Err(e.to_string()));
                    }
                }
            })?
    };
    match rx.await {
        Ok(Ok(names)) => {
            tracing::info!(algorithms = %names, "kernel TCP: registered");
            Ok(TcpSide { stop, thread })
        }
        Ok(Err(e)) => Err(format!("--tcp: {e}").into()),
        Err(_) => Err("--tcp: the kernel TCP side ended before it registered".into()),
    }
}

/// Built without the `tcp` feature: `--tcp` is refused with the way to get it.
#[cfg(not(feature = "tcp"))]
struct TcpSide;

#[cfg(not(feature = "tcp"))]
impl TcpSide {
    fn stop(self) {}
}

#[cfg(not(feature = "tcp"))]
async fn start_tcp(
    _hub: Arc<Hub>,
    _weight_args: &[String],
) -> Result<TcpSide, Box<dyn std::error::Error>> {
    Err("--tcp: this concordd was built without kernel TCP; build it with `cargo build --release -p concord-net --features tcp` (needs clang, llvm, libelf-dev, zlib1g-dev, pkg-config and bpftool; docs/ebpf.md)".into())
}
