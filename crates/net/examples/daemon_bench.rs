//! The daemon at scale: opens many flows to one destination over the Unix socket while a second
//! client asks for grants on another destination, and prints the time the opens took, the CPU
//! time they cost and the second client's grant latency.
//!
//! ```text
//! cargo run --release -p concord-net --example daemon_bench            # 4,096 flows
//! cargo run --release -p concord-net --example daemon_bench -- 10000   # 10,000 flows
//! cargo run --release -p concord-net --example daemon_bench -- rtt      # round trips
//! cargo run --release -p concord-net --example daemon_bench -- pipelined # grants/s
//! cargo run --release -p concord-net --example daemon_bench -- embedded  # its embedded half
//! ```
//!
//! `rtt` counts request-to-grant round trips per second of one flow, one at a time (request,
//! wait for the grant, notify), over the Unix socket and with an embedded manager.
//!
//! `pipelined` counts grants per second when requests are pipelined: [`PIPE_FLOWS`] flows, each
//! with [`PIPE_DEPTH`] requests outstanding; every grant is answered at once by its notify and a
//! new request. Over the Unix socket a client thread writes the frames of every grant a read
//! brought in one write (several requests per write, several replies and grants per read on
//! the daemon's side too); embedded, the same loop calls the hub in-process.
//!
//! It runs twice: once with the destination's macroflow still without an RTT estimate (no
//! `ChangeRate` reports), once with one (every open changes every flow's share, and the flows
//! whose thresholds are crossed hear of it). The daemon, both clients and the timer run in this
//! one process (a runtime of two worker threads), so the CPU time is theirs together. The second
//! client acknowledges each grant at once with a 100 us RTT sample, so its grants are not held
//! back by pacing: their latency is the time the daemon takes to answer.

use concord_cc::cm::{CmUpdate, FlowKey};
use concord_net::client::{CmClient, EmbeddedCm};
use concord_net::daemon::{bind_socket, serve_with, Limits};
use concord_net::hub::{Hub, HubConfig};
use concord_net::protocol::Event;
use std::net::Ipv4Addr;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The destination the flows are opened to.
const DST: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 1);
/// The second client's destination.
const OTHER: Ipv4Addr = Ipv4Addr::new(192, 0, 2, 2);
/// Flows per connection (the daemon's default limit).
const PER_CONNECTION: usize = 4096;

/// User plus system CPU time of this process so far, all threads, from `/proc/self/stat`
/// (fields 14 and 15, in clock ticks of 1/100 s: Linux's USER_HZ); zero if unreadable.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let ticks: u64 = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    Duration::from_millis(ticks * 10)
}

/// The p-th percentile of `v` (sorted in place), p in [0, 1].
fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v.get(i).copied().unwrap_or_default()
}

/// A private directory for the socket, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> std::io::Result<TempDir> {
        let p = std::env::temp_dir().join(format!("concord-bench-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p)?;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o700))?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One run: `flows` opens to [`DST`]; `with_estimate`: the destination has an RTT sample first.
async fn run(flows: usize, with_estimate: bool) -> Result<(), Box<dyn std::error::Error>> {
    let dir = TempDir::new(if with_estimate { "est" } else { "noest" })?;
    let socket = dir.0.join("cm.sock");
    let hub = Hub::new(HubConfig::default())?;
    let listener = bind_socket(&socket)?;
    tokio::spawn(Arc::clone(&hub).run_timer());
    tokio::spawn(serve_with(Arc::clone(&hub), listener, Limits::default()));

    let other = CmClient::connect(&socket).await?;
    let mut events = other.events().ok_or("no event stream")?;
    let lone = other.open(FlowKey::new(OTHER, 9, 9)).await?;
    let rtt = Some(concord_cc::Duration::from_micros(100));
    lone.update(CmUpdate {
        rtt,
        ..CmUpdate::default()
    })
    .await?;
    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::clone(&stop);
    let prober = tokio::spawn(async move {
        let mut lat = Vec::new();
        while !stop2.load(Ordering::Relaxed) {
            let t = Instant::now();
            lone.request(100).await.map_err(|e| e.to_string())?;
            loop {
                match tokio::time::timeout(Duration::from_secs(5), events.next()).await {
                    Ok(Some(Event::Grant { .. })) => break,
                    Ok(Some(_)) => {}
                    other => return Err(format!("no grant: {other:?}")),
                }
            }
            lat.push(t.elapsed());
            lone.notify(100).await.map_err(|e| e.to_string())?;
            // Acknowledged at once: feedback keeps aging from slowing the flow to its floor
            // (1,500 B/s, which alone would space 100-byte grants 67 ms apart), so the latency
            // is the daemon's, not the pacing's.
            lone.update(CmUpdate {
                nrecd: 100,
                rtt,
                ..CmUpdate::default()
            })
            .await
            .map_err(|e| e.to_string())?;
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok::<_, String>(lat)
    });

    let connections = flows.div_ceil(PER_CONNECTION);
    let mut openers = Vec::new();
    for _ in 0..connections {
        openers.push(CmClient::connect(&socket).await?);
    }
    let mut drains: Vec<_> = openers.iter().filter_map(CmClient::events).collect();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (wall, cpu) = (Instant::now(), cpu_time());
    let mut opened = Vec::with_capacity(flows);
    for i in 0..flows {
        let port = u32::try_from(i)?;
        let key = FlowKey {
            dst: DST,
            dst_port: 80,
            src_port: 10_000,
            flow_id: port,
        };
        let flow = openers[i / PER_CONNECTION].open(key).await?;
        if i == 0 && with_estimate {
            flow.update(CmUpdate {
                rtt,
                ..CmUpdate::default()
            })
            .await?;
        }
        opened.push(flow);
        for d in &mut drains {
            while d.try_next().is_some() {}
        }
    }
    let (open_wall, open_cpu) = (wall.elapsed(), cpu_time() - cpu);
    stop.store(true, Ordering::Relaxed);
    let mut lat = prober.await??;
    let status = hub.status();
    println!(
        "{flows} flows to one destination ({}): opened in {:.3} s wall ({:.0}/s), {:.3} s CPU; \
         the other client's grant latency p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms over {} \
         grants; {} events dropped",
        if with_estimate {
            "with an RTT estimate"
        } else {
            "no RTT estimate"
        },
        open_wall.as_secs_f64(),
        flows as f64 / open_wall.as_secs_f64(),
        open_cpu.as_secs_f64(),
        percentile(&mut lat, 0.5).as_secs_f64() * 1e3,
        percentile(&mut lat, 0.99).as_secs_f64() * 1e3,
        lat.iter().max().copied().unwrap_or_default().as_secs_f64() * 1e3,
        lat.len(),
        status.events_dropped,
    );
    Ok(())
}

/// Request-to-grant round trips of one flow of `client` for `run`: the count and the CPU time.
async fn round_trips(
    client: &CmClient,
    run: Duration,
) -> Result<(u64, Duration), Box<dyn std::error::Error>> {
    let mut events = client.events().ok_or("no event stream")?;
    let flow = client.open(FlowKey::new(OTHER, 7, 7)).await?;
    // A 1 us RTT: two MTUs per microsecond, a rate at which pacing holds nothing back (aging is
    // off in this configuration, so the rate stays without acknowledgments).
    let ack = CmUpdate {
        rtt: Some(concord_cc::Duration::from_micros(1)),
        ..CmUpdate::default()
    };
    flow.update(ack).await?;
    let (start, cpu) = (Instant::now(), cpu_time());
    let mut n = 0u64;
    while start.elapsed() < run {
        flow.request(100).await?;
        loop {
            match events.next().await {
                Some(Event::Grant { .. }) => break,
                Some(_) => {}
                None => return Err("the event stream ended".into()),
            }
        }
        flow.notify(100).await?;
        n += 1;
    }
    Ok((n, cpu_time() - cpu))
}

/// Round trips over the Unix socket and embedded, two seconds each, exponential aging off.
async fn round_trip_rates() -> Result<(), Box<dyn std::error::Error>> {
    let run = Duration::from_secs(2);
    let mut config = HubConfig::default();
    config.cm.aging = concord_cc::cm::AgingPolicy::Disabled;
    let dir = TempDir::new("rtt")?;
    let socket = dir.0.join("cm.sock");
    let hub = Hub::new(config.clone())?;
    let listener = bind_socket(&socket)?;
    tokio::spawn(Arc::clone(&hub).run_timer());
    tokio::spawn(serve_with(Arc::clone(&hub), listener, Limits::default()));
    let client = CmClient::connect(&socket).await?;
    let (n, cpu) = round_trips(&client, run).await?;
    println!(
        "Unix socket: {n} request-to-grant round trips in {:.1} s: {:.0}/s, {:.2} us CPU each",
        run.as_secs_f64(),
        n as f64 / run.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / n.max(1) as f64
    );
    let embedded = EmbeddedCm::new(config)?;
    let (n, cpu) = round_trips(&embedded.client(), run).await?;
    println!(
        "embedded: {n} request-to-grant round trips in {:.1} s: {:.0}/s, {:.2} us CPU each",
        run.as_secs_f64(),
        n as f64 / run.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / n.max(1) as f64
    );
    Ok(())
}

/// Flows of the pipelined runs.
const PIPE_FLOWS: u32 = 16;
/// Requests each flow keeps outstanding in the pipelined runs.
const PIPE_DEPTH: u32 = 16;
/// Bytes per request (and per grant) in the pipelined runs.
const PIPE_BYTES: u64 = 100;

/// The hub configuration of the round-trip runs: exponential aging off, so that pacing holds
/// nothing back once a flow has a 1 us RTT sample.
fn no_aging() -> HubConfig {
    let mut config = HubConfig::default();
    config.cm.aging = concord_cc::cm::AgingPolicy::Disabled;
    config
}

/// The 1 us RTT sample of the round-trip runs.
fn fast_ack() -> CmUpdate {
    CmUpdate {
        rtt: Some(concord_cc::Duration::from_micros(1)),
        ..CmUpdate::default()
    }
}

/// Pipelined grants over the Unix socket, from a blocking client thread: the grant count and
/// the process's CPU time over `run`.
fn pipelined_socket(
    socket: &std::path::Path,
    run: Duration,
) -> Result<(u64, Duration), Box<dyn std::error::Error + Send + Sync>> {
    use concord_net::protocol::{ClientMessage, FrameBuffer, Request, ServerMessage};
    use std::io::{Read, Write};
    let mut s = std::os::unix::net::UnixStream::connect(socket)?;
    let mut id = 0u32;
    let mut frame = |request: Request, out: &mut Vec<u8>| {
        id = id.wrapping_add(1);
        out.extend_from_slice(&ClientMessage { id, request }.encode());
    };
    let mut out = Vec::new();
    for i in 0..PIPE_FLOWS {
        frame(
            Request::Open(FlowKey::new(OTHER, 7, 7 + i as u16)),
            &mut out,
        );
    }
    s.write_all(&out)?;
    let mut frames = FrameBuffer::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut flows = Vec::new();
    while flows.len() < PIPE_FLOWS as usize {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err("the daemon closed the connection".into());
        }
        frames.extend(&chunk[..n]);
        while let Some(body) = frames.next_body()? {
            if let ServerMessage::Reply {
                reply: concord_net::protocol::Reply::Opened(f),
                ..
            } = ServerMessage::decode(body)?
            {
                flows.push(f);
            }
        }
    }
    out.clear();
    for &flow in &flows {
        frame(
            Request::Update {
                flow,
                update: fast_ack(),
            },
            &mut out,
        );
        for _ in 0..PIPE_DEPTH {
            let nbytes = PIPE_BYTES;
            frame(Request::Request { flow, nbytes }, &mut out);
        }
    }
    s.write_all(&out)?;
    let (start, cpu) = (Instant::now(), cpu_time());
    let mut grants = 0u64;
    while start.elapsed() < run {
        let n = s.read(&mut chunk)?;
        if n == 0 {
            return Err("the daemon closed the connection".into());
        }
        frames.extend(&chunk[..n]);
        out.clear();
        while let Some(body) = frames.next_body()? {
            match ServerMessage::decode(body)? {
                ServerMessage::Event(Event::Grant { flow, bytes }) => {
                    grants += 1;
                    frame(Request::Notify { flow, nsent: bytes }, &mut out);
                    let nbytes = PIPE_BYTES;
                    frame(Request::Request { flow, nbytes }, &mut out);
                }
                ServerMessage::Fatal { code, message } => {
                    return Err(format!("closed: {code:?} {message}").into())
                }
                _ => {}
            }
        }
        s.write_all(&out)?;
    }
    Ok((grants, cpu_time() - cpu))
}

/// Pipelined grants with `hub` in-process (no socket; its timer task sends what pacing holds
/// back), from a blocking thread: the grant count and the process's CPU time over `run`.
fn pipelined_embedded(
    hub: &Hub,
    run: Duration,
) -> Result<(u64, Duration), Box<dyn std::error::Error + Send + Sync>> {
    use concord_net::protocol::{Reply, Request};
    let (client, mut events) = hub.attach();
    let mut flows = Vec::new();
    for i in 0..PIPE_FLOWS {
        match hub.handle(client, Request::Open(FlowKey::new(OTHER, 7, 7 + i as u16))) {
            Reply::Opened(f) => flows.push(f),
            other => return Err(format!("open answered {other:?}").into()),
        }
    }
    for &flow in &flows {
        let update = fast_ack();
        hub.handle(client, Request::Update { flow, update });
        for _ in 0..PIPE_DEPTH {
            let nbytes = PIPE_BYTES;
            hub.handle(client, Request::Request { flow, nbytes });
        }
    }
    let (start, cpu) = (Instant::now(), cpu_time());
    let mut grants = 0u64;
    while start.elapsed() < run {
        // The clock is read once per 1,024 events.
        for _ in 0..1024 {
            match events.blocking_recv() {
                Some(Event::Grant { flow, bytes }) => {
                    grants += 1;
                    hub.handle(client, Request::Notify { flow, nsent: bytes });
                    let nbytes = PIPE_BYTES;
                    hub.handle(client, Request::Request { flow, nbytes });
                }
                Some(_) => {}
                None => return Err("the event stream ended".into()),
            }
        }
    }
    let took = cpu_time() - cpu;
    hub.detach(client);
    Ok((grants, took))
}

/// Pipelined grants per second over the Unix socket and embedded, two seconds each.
async fn pipelined_rates() -> Result<(), Box<dyn std::error::Error>> {
    let run = Duration::from_secs(2);
    pipelined_socket_rate(run).await?;
    pipelined_embedded_rate(run).await
}

/// Pipelined grants per second over the Unix socket for `run`.
async fn pipelined_socket_rate(run: Duration) -> Result<(), Box<dyn std::error::Error>> {
    let dir = TempDir::new("pipe")?;
    let socket = dir.0.join("cm.sock");
    let hub = Hub::new(no_aging())?;
    let listener = bind_socket(&socket)?;
    tokio::spawn(Arc::clone(&hub).run_timer());
    tokio::spawn(serve_with(Arc::clone(&hub), listener, Limits::default()));
    let path = socket.clone();
    let (n, cpu) = tokio::task::spawn_blocking(move || {
        pipelined_socket(&path, run).map_err(|e| e.to_string())
    })
    .await??;
    println!(
        "Unix socket, pipelined ({PIPE_FLOWS} flows x {PIPE_DEPTH} requests outstanding): {n} \
         grants in {:.1} s: {:.0}/s, {:.2} us CPU each (daemon and client together)",
        run.as_secs_f64(),
        n as f64 / run.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / n.max(1) as f64
    );
    Ok(())
}

/// Pipelined grants per second with the hub in-process for `run`.
async fn pipelined_embedded_rate(run: Duration) -> Result<(), Box<dyn std::error::Error>> {
    let hub = Hub::new(no_aging())?;
    tokio::spawn(Arc::clone(&hub).run_timer());
    let (n, cpu) = tokio::task::spawn_blocking(move || {
        pipelined_embedded(&hub, run).map_err(|e| e.to_string())
    })
    .await??;
    println!(
        "embedded, pipelined (the hub called in-process): {n} grants in {:.1} s: \
         {:.0}/s, {:.3} us CPU each",
        run.as_secs_f64(),
        n as f64 / run.as_secs_f64(),
        cpu.as_secs_f64() * 1e6 / n.max(1) as f64
    );
    Ok(())
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flows = match std::env::args().nth(1) {
        Some(a) if a == "rtt" => return round_trip_rates().await,
        Some(a) if a == "pipelined" => return pipelined_rates().await,
        Some(a) if a == "embedded" => return pipelined_embedded_rate(Duration::from_secs(2)).await,
        None => PER_CONNECTION,
        Some(a) => a
            .parse()
            .map_err(|e| format!("flows: {a:?} is not a count ({e}); give e.g. 4096"))?,
    };
    run(flows, false).await?;
    run(flows, true).await?;
    Ok(())
}
