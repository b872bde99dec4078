//! The daemon at scale: opens many flows to one destination over the Unix socket while a second
//! client asks for grants on another destination, and prints the time the opens took, the CPU
//! time they cost and the second client's grant latency.
//!
//! ```text
//! cargo run --release -p concord-net --example daemon_bench            # 4,096 flows
//! cargo run --release -p concord-net --example daemon_bench -- 10000   # 10,000 flows
//! cargo run --release -p concord-net --example daemon_bench -- rtt      # round trips
//! ```
//!
//! `rtt` counts request-to-grant round trips per second of one flow, one at a time (request,
//! wait for the grant, notify), over the Unix socket and with an embedded manager.
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

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let flows = match std::env::args().nth(1) {
        Some(a) if a == "rtt" => return round_trip_rates().await,
        None => PER_CONNECTION,
        Some(a) => a
            .parse()
            .map_err(|e| format!("flows: {a:?} is not a count ({e}); give e.g. 4096"))?,
    };
    run(flows, false).await?;
    run(flows, true).await?;
    Ok(())
}
