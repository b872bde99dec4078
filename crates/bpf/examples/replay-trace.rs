//! Replays the ACK records of a `concord-tcp --trace` file into a fresh controller, to see
//! what it would decide on them, with the ACKs as they arrived or re-timed evenly:
//! `replay-trace TRACE.csv ALGO [SPREAD_MS]` (ALGO newreno, mccp, westw or cubic). With SPREAD_MS,
//! the ACKs of each SPREAD_MS-long window are spread evenly over it (bytes unchanged): the same
//! delivery, without bursts. Prints the socket's decision (cwnd, and the ssthresh it would take
//! at a loss, in segments) when the kernel first left the Open state, or at the end.
//! `--abe MS` (last) also prints, every MS milliseconds of the trace, MCCP's ABE: the sample,
//! the estimate, the time constant tau_k of eq. (6) and U_k / U_max.

use concord_bpf::protocol::{ca_state, Algorithm, Record, RecordKind, INFINITE_SSTHRESH};
use concord_bpf::window_socket::WindowSocket;
use concord_cc::tcp::CcAlgorithm;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::process::ExitCode;

/// One ACK of the trace: time (ns), bytes acknowledged, RTT sample (us), packets in flight,
/// congestion state.
type Ack = (u64, u32, i32, u32, u8);

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut abe_every_ns: Option<u64> = None;
    if let Some(i) = args.iter().position(|a| a == "--abe") {
        match args.get(i + 1).map(|s| s.parse::<u64>()) {
            Some(Ok(ms)) if ms > 0 => abe_every_ns = Some(ms * 1_000_000),
            _ => {
                eprintln!("replay-trace: --abe takes a whole number of milliseconds above 0");
                return ExitCode::from(2);
            }
        }
        args.truncate(i);
    }
    if args.len() < 2 {
        eprintln!("usage: replay-trace TRACE.csv newreno|mccp|westw|cubic [SPREAD_MS] [--abe MS]");
        return ExitCode::from(2);
    }
    let (algo, cc) = match args[1].as_str() {
        "newreno" => (Algorithm::NewReno, CcAlgorithm::NewReno),
        "mccp" => (Algorithm::Mccp, CcAlgorithm::Mccp(Default::default())),
        "westw" => (Algorithm::WestwoodPlus, CcAlgorithm::WestwoodPlus),
        "cubic" => (Algorithm::Cubic, CcAlgorithm::Cubic),
        other => {
            eprintln!(
                "replay-trace: unknown algorithm {other:?}: give newreno, mccp, westw or cubic"
            );
            return ExitCode::from(2);
        }
    };
    let spread_ns: Option<u64> = match args.get(2).map(|s| s.parse::<u64>()) {
        None => None,
        Some(Ok(ms)) if ms > 0 => Some(ms * 1_000_000),
        Some(_) => {
            eprintln!("replay-trace: SPREAD_MS must be a whole number of milliseconds above 0");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read_to_string(&args[0]) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("replay-trace: cannot read {}: {e}", args[0]);
            return ExitCode::FAILURE;
        }
    };
    // ack,time_ns,sock_id,bytes_acked,rtt_us,in_flight,ca_state
    let mut by_sock: BTreeMap<u64, Vec<Ack>> = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("ack,")) {
        let f: Vec<&str> = line.split(',').collect();
        if f.len() != 7 {
            continue;
        }
        let p = |i: usize| f[i].parse::<i64>().unwrap_or(0);
        by_sock.entry(p(2) as u64).or_default().push((
            p(1) as u64,
            p(3) as u32,
            p(4) as i32,
            p(5) as u32,
            p(6) as u8,
        ));
    }
    let Some((sock, mut acks)) = by_sock.into_iter().max_by_key(|(_, v)| v.len()) else {
        eprintln!("replay-trace: no ACK records in {}", args[0]);
        return ExitCode::FAILURE;
    };
    if let Some(w) = spread_ns {
        let start = acks[0].0;
        let mut i = 0;
        while i < acks.len() {
            let window = (acks[i].0 - start) / w;
            let j = (i..acks.len())
                .find(|&k| (acks[k].0 - start) / w != window)
                .unwrap_or(acks.len());
            let n = (j - i) as u64;
            for (k, a) in acks[i..j].iter_mut().enumerate() {
                a.0 = start + window * w + (k as u64 + 1) * w / (n + 1);
            }
            i = j;
        }
    }
    let first_t = acks[0].0;
    let mut srtt_us: Option<f64> = None;
    let mut socket: Option<WindowSocket> = None;
    let mut last = None;
    let mut next_print = 0;
    for (t, bytes, rtt, in_flight, state) in acks {
        if rtt > 0 {
            // RFC 6298 section 2.3: srtt = 7/8 srtt + 1/8 R.
            srtt_us = Some(srtt_us.map_or(rtt as f64, |s| 0.875 * s + 0.125 * rtt as f64));
        }
        let r = Record {
            sock_id: sock,
            time_ns: t,
            kind: RecordKind::Ack,
            algo,
            ca_state: state,
            ece: false,
            cwnd_limited: true,
            same_event: false,
            event: 0,
            bytes_acked: bytes,
            pkts_acked: bytes.div_ceil(1448),
            rtt_us: rtt,
            srtt_us: srtt_us.unwrap_or(0.0) as u32,
            delivered: 0,
            lost: 0,
            in_flight,
            mss: 1448,
            cwnd: 10,
            ssthresh: INFINITE_SSTHRESH,
            loss_events: 0,
            daddr: Ipv4Addr::UNSPECIFIED,
            dport: 0,
            sport: 0,
            saddr: Ipv4Addr::UNSPECIFIED,
        };
        if state != ca_state::OPEN {
            break;
        }
        let s = match socket.as_mut() {
            Some(s) => s,
            None => match WindowSocket::new(cc, &r) {
                Ok(s) => socket.insert(s),
                Err(e) => {
                    eprintln!("replay-trace: {e}");
                    return ExitCode::FAILURE;
                }
            },
        };
        s.on_record(&r);
        last = Some(s.decision(t));
        if let (Some(every), concord_cc::tcp::WindowCtl::Mccp(m)) = (abe_every_ns, s.controller()) {
            if t >= next_print {
                next_print = t + every;
                let a = m.abe().trace();
                println!(
                    "t {:8.1} ms  cwnd {:5} segs  sample {:7.1} Mbit/s  ABE {:5.1} Mbit/s  tau {:6.1} ms  U/Umax {:.2}",
                    (t - first_t) as f64 / 1e6,
                    m.trace().cwnd / 1448,
                    a.sample * 8.0 / 1e6,
                    a.estimate * 8.0 / 1e6,
                    a.tau_k.as_nanos() as f64 / 1e6,
                    if a.u_max > 0.0 { a.u_k / a.u_max } else { 0.0 },
                );
            }
        }
    }
    match last {
        Some(d) => {
            println!(
                "socket {sock}: cwnd {} segments, ssthresh at a loss {} segments ({:.1} Mbit/s over 100 ms)",
                d.cwnd,
                d.loss_ssthresh,
                f64::from(d.loss_ssthresh) * 1448.0 * 8.0 / 0.1 / 1e6
            );
            ExitCode::SUCCESS
        }
        None => {
            eprintln!("replay-trace: no ACK in the Open state");
            ExitCode::FAILURE
        }
    }
}
