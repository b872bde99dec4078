//! The real `concordd` under idle load: 20,000 Unix-socket connections that stay idle (with no
//! flow, or with one flow each) do not stop a new client from opening a flow and getting a grant
//! within [`SERVED_WITHIN`], and once they close the daemon's resident size (`VmRSS` of
//! `/proc/PID/status`) comes back within 20% of what it was before the load.
//!
//! ```text
//! cargo test --release -p concord-net --test idle_load -- --ignored --nocapture --test-threads 1
//! ```
//!
//! Ignored by default: it holds 20,000 descriptors in two helper processes (this test binary
//! run again as [`holder`], 10,000 each, so that no process needs an open-files limit above
//! 20,000) and takes about half a minute; CI does not run it.

mod common;

use common::Daemon;
use concord_cc::cm::{FlowId, FlowKey};
use concord_net::protocol::{ClientMessage, ErrorCode, Event, Reply, Request, ServerMessage};
use std::io::{Read, Write};
use std::net::Ipv4Addr;
use std::os::unix::net::UnixStream;
use std::time::Duration;
use tokio::time::Instant;

/// Idle connections held open at once.
const IDLE: usize = 20_000;
/// A new client must have its grant this soon after it starts connecting.
const SERVED_WITHIN: Duration = Duration::from_secs(1);
/// The resident size after the load may exceed the size before it by at most this fraction.
const RSS_TOLERANCE: f64 = 0.20;

/// The daemon's resident set size in kB (`VmRSS` of `/proc/PID/status`).
fn vm_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// The daemon's mappings that hold the most resident memory, largest first: (`Rss` in kB, the
/// mapping's line of `/proc/PID/smaps`). glibc's thread arenas are the anonymous read-write
/// mappings of up to 64 MiB (`HEAP_MAX_SIZE`), its main arena is `[heap]`.
fn largest_resident(pid: u32, n: usize) -> Vec<(u64, String)> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut regions: Vec<(u64, String)> = Vec::new();
    let mut header = String::new();
    for line in smaps.lines() {
        if let Some(rss) = line.strip_prefix("Rss:") {
            let kb = rss
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0);
            regions.push((kb, header.clone()));
        } else if line.split(' ').next().is_some_and(|f| f.contains('-')) {
            header = line.split_whitespace().collect::<Vec<_>>().join(" ");
        }
    }
    regions.sort_by_key(|r| std::cmp::Reverse(r.0));
    regions.truncate(n);
    regions
}

/// Reads one frame from a blocking stream.
fn read_frame(s: &mut UnixStream) -> std::io::Result<ServerMessage> {
    let mut prefix = [0u8; 4];
    s.read_exact(&mut prefix)?;
    let mut body = vec![0u8; u32::from_be_bytes(prefix) as usize];
    s.read_exact(&mut body)?;
    ServerMessage::decode(&body)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
}

/// The `open` frame of flow `i` (to one of 64 destinations).
fn open_frame(i: usize) -> Vec<u8> {
    let n = u32::try_from(i).expect("fits");
    ClientMessage {
        id: n,
        request: Request::Open(FlowKey {
            dst: Ipv4Addr::new(198, 18, 0, (n % 64) as u8 + 1),
            dst_port: 443,
            src_port: 20_000,
            flow_id: n,
        }),
    }
    .encode()
}

/// A new client: connects, opens a flow, asks for 100 bytes and waits for the grant. The time
/// all that took.
fn new_client_served(socket: &std::path::Path) -> Result<Duration, String> {
    let start = Instant::now();
    let mut s = UnixStream::connect(socket).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .map_err(|e| e.to_string())?;
    s.write_all(&open_frame(1_000_000))
        .map_err(|e| format!("open: {e}"))?;
    let flow: FlowId = match read_frame(&mut s).map_err(|e| format!("open reply: {e}"))? {
        ServerMessage::Reply {
            reply: Reply::Opened(f),
            ..
        } => f,
        other => return Err(format!("open answered {other:?}")),
    };
    let request = ClientMessage {
        id: 1,
        request: Request::Request { flow, nbytes: 100 },
    };
    s.write_all(&request.encode())
        .map_err(|e| format!("request: {e}"))?;
    loop {
        match read_frame(&mut s).map_err(|e| format!("waiting for the grant: {e}"))? {
            ServerMessage::Event(Event::Grant { .. }) => return Ok(start.elapsed()),
            ServerMessage::Fatal { code, message } => {
                return Err(format!("closed: {code:?} {message}"))
            }
            _ => {}
        }
    }
}

/// Asks the daemon how many clients it holds, over a connection of its own.
fn clients(socket: &std::path::Path) -> Option<u32> {
    let mut s = UnixStream::connect(socket).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    let status = ClientMessage {
        id: 7,
        request: Request::Status,
    };
    s.write_all(&status.encode()).ok()?;
    match read_frame(&mut s).ok()? {
        ServerMessage::Reply {
            reply: Reply::Status(st),
            ..
        } => Some(st.clients),
        _ => None,
    }
}

/// What one load did.
#[derive(Debug)]
struct Figures {
    rss_start_kb: u64,
    rss_peak_kb: u64,
    rss_after_kb: u64,
    /// The largest resident mappings after the load.
    regions_after: Vec<(u64, String)>,
    served_in: Duration,
    opened: usize,
    refused: usize,
    load_took: Duration,
}

/// Connections per helper process.
const PER_HOLDER: usize = 10_000;
/// The environment variable that turns [`holder`] on: `SOCKET,FIRST,COUNT,FLOWS`.
const HOLDER_ENV: &str = "CONCORD_IDLE_HOLDER";

/// One helper process holding `count` connections, flows `first..first + count` if
/// `with_flows`; returns once it has them all (and the answers to their opens), with how many
/// flows opened and how many connections were refused. It exits when its standard input closes.
fn spawn_holder(
    socket: &std::path::Path,
    first: usize,
    count: usize,
    with_flows: bool,
) -> (std::process::Child, usize, usize) {
    use std::io::BufRead;
    let exe = std::env::current_exe().expect("this test binary");
    let mut child = std::process::Command::new(exe)
        .args([
            "--ignored",
            "--exact",
            "holder",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(
            HOLDER_ENV,
            format!(
                "{},{first},{count},{}",
                socket.display(),
                u8::from(with_flows)
            ),
        )
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn a holder");
    let out = child.stdout.take().expect("stdout");
    let mut lines = std::io::BufReader::new(out).lines();
    for line in lines.by_ref() {
        let line = line.expect("holder output");
        // libtest may have begun the line ("test holder ... ").
        if let Some((_, rest)) = line.split_once("HELD ") {
            let mut it = rest.split(' ').map(|x| x.parse::<usize>().expect("count"));
            let (opened, refused) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
            // The rest of its output (libtest's summary) is read and dropped.
            std::thread::spawn(move || lines.for_each(drop));
            return (child, opened, refused);
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("a holder ended before holding its connections");
}

/// Helper mode: with [`HOLDER_ENV`] set, holds its connections idle until standard input
/// closes; without it, does nothing.
#[test]
#[ignore = "a helper of the idle-load tests"]
fn holder() {
    let Ok(spec) = std::env::var(HOLDER_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split(',').collect();
    let socket = std::path::PathBuf::from(parts[0]);
    let first: usize = parts[1].parse().expect("first");
    let count: usize = parts[2].parse().expect("count");
    let with_flows = parts[3] == "1";
    concord_net::sys::raise_open_files_limit_to(count as u64 + 256).expect("open-files limit");
    let mut conns = Vec::with_capacity(count);
    for i in first..first + count {
        let mut s = UnixStream::connect(&socket).expect("connect");
        if with_flows {
            // A connection refused at the cap may be closed before the open is written
            // (EPIPE); its fatal frame is still there to read below.
            let _ = s.write_all(&open_frame(i));
        }
        conns.push(s);
    }
    let (mut opened, mut refused) = (0, 0);
    if with_flows {
        for s in &mut conns {
            s.set_read_timeout(Some(Duration::from_secs(20)))
                .expect("timeout");
            match read_frame(s) {
                Ok(ServerMessage::Reply {
                    reply: Reply::Opened(_),
                    ..
                }) => opened += 1,
                Ok(ServerMessage::Fatal {
                    code: ErrorCode::Unavailable,
                    ..
                }) => refused += 1,
                other => panic!("open answered {other:?}"),
            }
        }
    }
    println!("HELD {opened} {refused}");
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    drop(conns);
}

/// Starts a daemon with its default limits, holds [`IDLE`] idle connections (each with one flow
/// opened first if `with_flows`), serves a new client, closes them all and measures.
fn idle_load(with_flows: bool) -> Figures {
    let daemon = Daemon::start(&[]);
    let pid = daemon.child.id();
    let socket = daemon.socket();
    // The daemon's first trim tick and its start-up allocations are over.
    std::thread::sleep(Duration::from_millis(2500));
    let rss_start_kb = vm_rss_kb(pid);

    let load = Instant::now();
    let (mut opened, mut refused) = (0, 0);
    let mut holders = Vec::new();
    let mut rss_peak_kb = rss_start_kb;
    for h in 0..IDLE / PER_HOLDER {
        let (child, o, r) = spawn_holder(&socket, h * PER_HOLDER, PER_HOLDER, with_flows);
        holders.push(common::Killed(vec![child]));
        opened += o;
        refused += r;
        rss_peak_kb = rss_peak_kb.max(vm_rss_kb(pid));
    }
    let load_took = load.elapsed();
    // The idle connections have been silent long enough to make room for a new one even when
    // all hold flows.
    std::thread::sleep(Duration::from_secs(6));
    let served_in = new_client_served(&socket).unwrap_or_else(|e| {
        panic!("a new client was not served under {IDLE} idle connections: {e}")
    });
    rss_peak_kb = rss_peak_kb.max(vm_rss_kb(pid));

    for mut h in holders {
        for c in &mut h.0 {
            drop(c.stdin.take());
            let _ = c.wait();
        }
    }
    // Every connection's task ends and the next trim tick (every 2 s) hands memory back.
    let gone = Instant::now();
    while clients(&socket).is_none_or(|c| c > 1) && gone.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(4500));
    let rss_after_kb = vm_rss_kb(pid);
    let regions_after = largest_resident(pid, 4);
    drop(daemon);
    Figures {
        rss_start_kb,
        rss_peak_kb,
        rss_after_kb,
        regions_after,
        served_in,
        opened,
        refused,
        load_took,
    }
}

/// Checks both bars and prints the figures.
fn check(what: &str, f: &Figures) {
    println!(
        "{IDLE} idle connections {what}: held in {:.2} s ({} opened a flow, {} refused); a new \
         client got its grant in {:.2} ms; daemon VmRSS start {} kB, peak {} kB, after {} kB \
         ({:+.1}%)",
        f.load_took.as_secs_f64(),
        f.opened,
        f.refused,
        f.served_in.as_secs_f64() * 1e3,
        f.rss_start_kb,
        f.rss_peak_kb,
        f.rss_after_kb,
        (f.rss_after_kb as f64 / f.rss_start_kb as f64 - 1.0) * 100.0
    );
    for (kb, region) in &f.regions_after {
        println!("  resident after: {kb:>6} kB  {region}");
    }
    assert!(f.served_in <= SERVED_WITHIN, "{f:?}");
    assert!(
        f.rss_after_kb as f64 <= f.rss_start_kb as f64 * (1.0 + RSS_TOLERANCE),
        "resident size not handed back: {f:?}"
    );
}

#[test]
#[ignore = "holds 40,000 descriptors; run as root: cargo test -p concord-net --test idle_load -- --ignored"]
fn twenty_thousand_idle_connections_without_flows() {
    let f = idle_load(false);
    check("without flows", &f);
}

#[test]
#[ignore = "holds 40,000 descriptors; run as root: cargo test -p concord-net --test idle_load -- --ignored"]
fn twenty_thousand_idle_connections_with_a_flow_each() {
    let f = idle_load(true);
    check("with a flow each", &f);
    assert_eq!(f.opened + f.refused, IDLE);
}
