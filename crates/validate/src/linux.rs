//! The Linux side: a case on the namespace test bed of `concord-net` (veth links, an htb + bfifo
//! bottleneck, the user-space delay line), with kernel TCP (reno or cubic) bulk flows, measured
//! like the simulators' runs. Root only; runs in real time.
//!
//! The test bed hosts dumbbells of up to 8 flows on a DropTail (bfifo) bottleneck without random
//! loss; the RTT is twice the delay line's hold. Kernel TCP runs with its own defaults (SACK,
//! timestamps, PRR, RACK-TLP, IW 10, delayed ACKs, min RTO 200 ms), only the congestion control
//! is chosen per socket. The window is not sampled (its statistics are reported as zero).

use crate::grid::{Case, Queue, Topology};
use crate::measurement::Measurement;
use concord_net::testbed::Testbed;
use socket2::{Domain, Protocol, Socket, Type};
use std::io::{Read, Write};
use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::time::Duration;

/// Bytes a full-sized packet occupies in the bfifo: 1500 at IP + 14 of Ethernet header.
const FRAME_BYTES: u64 = 1514;
/// The receiver's port.
const PORT: u16 = 5301;

/// Why a case cannot run on the test bed, or `None` if it can.
pub fn unhostable(case: &Case) -> Option<&'static str> {
    if case.topology != Topology::Dumbbell {
        return Some("the test bed is a dumbbell");
    }
    if case.flows > 8 {
        return Some("the test bed has at most 8 senders");
    }
    if case.queue != Queue::DropTail {
        return Some("no RED qdisc on this kernel");
    }
    if case.loss > 0.0 {
        return Some("the delay line has no random loss for TCP");
    }
    if case.rate.bps() > 20_000_000 {
        return Some(
            "the user-space delay line is not trusted above 20 Mbit/s on a shared machine",
        );
    }
    None
}

/// How to reach the test bed.
#[derive(Clone, Debug)]
pub struct Bed {
    /// The `concord-testbed` program (its `delay-line` subcommand).
    pub delay_line_exe: PathBuf,
    /// Namespace prefix (`cval`).
    pub prefix: String,
    /// The second byte of the test bed's addresses.
    pub net: u8,
}

/// A TcpExt counter of the calling thread's network namespace (`/proc/thread-self/net/netstat`).
fn tcp_ext(name: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/net/netstat").unwrap_or_default();
    let mut lines = text.lines();
    while let (Some(h), Some(v)) = (lines.next(), lines.next()) {
        if !h.starts_with("TcpExt:") {
            continue;
        }
        let names = h.split_whitespace().skip(1);
        let values = v.split_whitespace().skip(1);
        for (n, x) in names.zip(values) {
            if n == name {
                return x.parse().unwrap_or(0);
            }
        }
    }
    0
}

/// `(sent bytes, dropped packets)` of the root qdisc on the router's interface to the receiver,
/// from `tc -s qdisc show`.
fn qdisc_counters(bed: &Testbed) -> Result<(u64, u64), String> {
    let cmd: Vec<String> = ["tc", "-s", "qdisc", "show", "dev", "rcv"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let out = bed.exec("rt", &cmd).map_err(|e| e.to_string())?;
    parse_tc_root(&String::from_utf8_lossy(&out.stdout))
        .ok_or_else(|| "cannot read the bottleneck's counters from tc -s qdisc".to_string())
}

/// The root (`htb 1:`) qdisc's "Sent N bytes M pkt (dropped D, ..." and the bfifo's drops: the
/// sent bytes of the root, the drops of every qdisc on the device summed.
pub fn parse_tc_root(text: &str) -> Option<(u64, u64)> {
    let mut sent = None;
    let mut dropped = 0;
    let mut root = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("qdisc ") {
            root = t.contains(" root ");
        } else if let Some(rest) = t.strip_prefix("Sent ") {
            let mut w = rest.split_whitespace();
            let bytes: u64 = w.next()?.parse().ok()?;
            let d = rest
                .split("dropped ")
                .nth(1)?
                .split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u64>()
                .ok()?;
            dropped += d;
            if root {
                sent = Some(bytes);
            }
        }
    }
    Some((sent?, dropped))
}

/// Runs `case` on the test bed with kernel `cc` (`reno` or `cubic`) for the case's duration.
#[allow(clippy::disallowed_methods)] // a real-time run: the wall clock is the clock here
pub fn run(case: &Case, cc: &str, bed: &Bed) -> Result<Measurement, String> {
    if let Some(why) = unhostable(case) {
        return Err(format!(
            "case {} cannot run on the test bed: {why}",
            case.id
        ));
    }
    let flows = case.flows as u8;
    let t = Testbed {
        prefix: bed.prefix.clone(),
        senders: flows,
        rate_bps: case.rate.bps(),
        queue_bytes: u64::from(case.limit_packets) * FRAME_BYTES,
        delay: Duration::from_nanos(case.rtt.as_nanos() / 2),
        net: bed.net,
        probe_loss: None,
        seed: 1,
        delay_line_exe: bed.delay_line_exe.clone(),
        owner: Some(std::process::id()),
    };
    t.up()
        .map_err(|e| format!("test bed {}: {e} (needs root, ip, tc)", t.prefix))?;
    let result = measure(case, cc, &t, flows);
    let down = t
        .down()
        .map_err(|e| format!("removing test bed {}: {e}", t.prefix));
    let m = result?;
    down?;
    Ok(m)
}

#[allow(clippy::disallowed_methods)] // a real-time run
fn measure(case: &Case, cc: &str, t: &Testbed, flows: u8) -> Result<Measurement, String> {
    let duration = Duration::from_nanos(case.duration.as_nanos());
    let path = |role: &str| t.netns_path(role).map_err(|e| e.to_string());
    let rcv_ns = path("rcv")?;
    let rcv_addr = t.receiver();
    // The receiver accepts every flow and counts each one's bytes until the end.
    let listener = std::thread::spawn(move || -> Result<std::net::TcpListener, String> {
        concord_net::sys::enter_netns(&rcv_ns).map_err(|e| format!("enter rcv: {e}"))?;
        std::net::TcpListener::bind((rcv_addr, PORT)).map_err(|e| format!("bind: {e}"))
    })
    .join()
    .map_err(|_| "receiver thread panicked".to_string())??;
    let (sent0, dropped0) = qdisc_counters(t)?;
    let start = std::time::Instant::now();
    let end = start + duration;
    let acceptor = std::thread::spawn(move || {
        let mut readers = Vec::new();
        for _ in 0..flows {
            let Ok((mut c, from)) = listener.accept() else {
                break;
            };
            readers.push(std::thread::spawn(move || {
                let _ = c.set_read_timeout(Some(Duration::from_millis(100)));
                let mut buf = vec![0u8; 64 * 1024];
                let mut got = 0u64;
                while std::time::Instant::now() < end {
                    match c.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => got += n as u64,
                        Err(_) => {}
                    }
                }
                (from, got)
            }));
        }
        readers
            .into_iter()
            .filter_map(|r| r.join().ok())
            .collect::<Vec<_>>()
    });
    let mut senders = Vec::new();
    for i in 1..=flows {
        let ns = path(&format!("s{i}"))?;
        let cc = cc.to_string();
        // Starts spread over the first 100 ms, as in the simulators.
        let offset = Duration::from_millis(u64::from(i - 1) * 100 / u64::from(flows));
        senders.push(std::thread::spawn(move || -> Result<(u64, u64), String> {
            concord_net::sys::enter_netns(&ns).map_err(|e| format!("enter sender: {e}"))?;
            let (to0, rec0) = (
                tcp_ext("TCPTimeouts"),
                tcp_ext("TCPSackRecovery") + tcp_ext("TCPRenoRecovery"),
            );
            std::thread::sleep(offset);
            let s = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP))
                .map_err(|e| format!("socket: {e}"))?;
            s.set_tcp_congestion(cc.as_bytes())
                .map_err(|e| format!("TCP_CONGESTION {cc}: {e}"))?;
            s.connect(&SocketAddrV4::new(rcv_addr, PORT).into())
                .map_err(|e| format!("connect: {e}"))?;
            let mut s: std::net::TcpStream = s.into();
            let _ = s.set_write_timeout(Some(Duration::from_millis(100)));
            let buf = vec![0u8; 64 * 1024];
            while std::time::Instant::now() < end {
                let _ = s.write(&buf);
            }
            let _ = s.shutdown(std::net::Shutdown::Both);
            Ok((
                tcp_ext("TCPTimeouts").saturating_sub(to0),
                (tcp_ext("TCPSackRecovery") + tcp_ext("TCPRenoRecovery")).saturating_sub(rec0),
            ))
        }));
    }
    let mut timeouts = 0;
    let mut recoveries = 0;
    for s in senders {
        let (a, b) = s
            .join()
            .map_err(|_| "sender thread panicked".to_string())??;
        timeouts += a;
        recoveries += b;
    }
    let (sent1, dropped1) = qdisc_counters(t)?;
    let got = acceptor
        .join()
        .map_err(|_| "receiver thread panicked".to_string())?;
    let secs = duration.as_secs_f64();
    // Flow i is the one from sender i's address.
    let goodput_bps = (1..=flows)
        .map(|i| {
            got.iter()
                .filter(|(from, _)| from.ip() == std::net::IpAddr::V4(t.sender(i)))
                .map(|(_, b)| *b as f64 * 8.0 / secs)
                .sum()
        })
        .collect();
    Ok(Measurement {
        source: format!("linux {cc}"),
        seed: 1,
        goodput_bps,
        utilisation: (sent1.saturating_sub(sent0)) as f64 * 8.0 / (case.rate.bps_f64() * secs),
        drops: dropped1.saturating_sub(dropped0),
        marks: 0,
        wire_losses: 0,
        timeouts,
        fast_retransmits: recoveries,
        spurious_fast_retransmits: None,
        cwnd_mean: 0.0,
        cwnd_cv: 0.0,
        cwnd_max: 0.0,
        windows: Default::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TC: &str =
        "qdisc htb 1: root refcnt 2 r2q 10 default 0x10 direct_packets_stat 0 direct_qlen 1000
 Sent 37501234 bytes 24812 pkt (dropped 0, overlimits 4321 requeues 0)
 backlog 0b 0p requeues 0
qdisc bfifo 10: parent 1:10 limit 151400b
 Sent 37501234 bytes 24812 pkt (dropped 57, overlimits 0 requeues 0)
 backlog 0b 0p requeues 0
";

    #[test]
    fn the_root_qdisc_gives_the_bytes_sent_and_every_qdisc_its_drops() {
        assert_eq!(parse_tc_root(TC), Some((37_501_234, 57)));
        assert_eq!(parse_tc_root("nothing"), None);
    }

    #[test]
    fn only_small_droptail_dumbbells_without_loss_are_hosted() {
        let cases = crate::grid::parse(crate::grid::DEFAULT_GRID, "grid.toml").expect("grid");
        let hosted: Vec<&str> = cases
            .iter()
            .filter(|c| unhostable(c).is_none())
            .map(|c| c.id.as_str())
            .collect();
        assert!(
            hosted.contains(&"dumbbell-4f-10Mbps-50ms-droptail"),
            "{hosted:?}"
        );
        assert!(!hosted.iter().any(|id| id.contains("red")
            || id.contains("loss")
            || id.contains("parking")
            || id.contains("64f")));
    }
}
