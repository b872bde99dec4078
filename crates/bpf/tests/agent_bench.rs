//! How many measurements per second the agent's core sustains: synthetic ACK records of 64
//! NewReno sockets and 4 TCP/CM sockets, read from their bytes as the ring buffer hands them
//! over, handled, and turned into decisions every 64 records (the datapath's wakeup batch).
//! CPU time of this thread, so that the figure does not depend on what else the machine runs.
//!
//! `cargo test --release -p concord-bpf --test agent_bench -- --ignored --nocapture`

use concord_bpf::agent::{Agent, AgentConfig};
use concord_bpf::protocol::{ca_state, Algorithm, Record, RecordKind, INFINITE_SSTHRESH};
use std::net::Ipv4Addr;

/// CPU time of the calling thread, in seconds.
fn thread_cpu_secs() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`.
    #[allow(unsafe_code)]
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn record(sock_id: u64, algo: Algorithm, time_ns: u64) -> Record {
    Record {
        sock_id,
        time_ns,
        kind: RecordKind::Ack,
        algo,
        ca_state: ca_state::OPEN,
        ece: false,
        cwnd_limited: true,
        same_event: false,
        event: 0,
        bytes_acked: 2896,
        pkts_acked: 2,
        rtt_us: 40_000,
        srtt_us: 40_000,
        delivered: 0,
        lost: 0,
        in_flight: 100,
        mss: 1448,
        cwnd: 100,
        ssthresh: INFINITE_SSTHRESH,
        loss_events: 0,
        daddr: Ipv4Addr::new(10, 0, 0, 2),
        dport: 5201,
        sport: 40_000 + sock_id as u16,
        saddr: Ipv4Addr::new(10, 0, 0, 1),
    }
}

#[test]
#[ignore = "a benchmark: run with --ignored --nocapture"]
fn agent_measurements_per_second() {
    let mut agent = Agent::new(AgentConfig::default()).expect("valid");
    let sockets: Vec<(u64, Algorithm)> = (1..=64)
        .map(|i| (i, Algorithm::NewReno))
        .chain((65..=68).map(|i| (i, Algorithm::Cm)))
        .collect();
    let n: u64 = 2_000_000;
    let bytes: Vec<[u8; 80]> = (0..n)
        .map(|i| {
            let (id, algo) = sockets[(i % sockets.len() as u64) as usize];
            record(id, algo, 1_000_000_000 + i * 1_000).to_bytes()
        })
        .collect();
    let mut out = Vec::new();
    let start = thread_cpu_secs();
    for (i, b) in bytes.iter().enumerate() {
        let r = Record::parse(b).expect("valid record");
        agent.on_record(&r);
        if i % 64 == 63 {
            agent.decisions(r.time_ns, &mut out);
        }
    }
    let secs = thread_cpu_secs() - start;
    let rate = n as f64 / secs;
    eprintln!(
        "agent core: {n} records in {secs:.3} s of CPU: {:.2} million measurements per second ({} decisions)",
        rate / 1e6,
        agent.stats().decisions
    );
    assert_eq!(agent.stats().acks, n);
    assert!(rate > 0.0);
}
