//! The agent on the kernel: loads the BPF datapath, registers its algorithms with
//! `.struct_ops.link` (they stay registered exactly as long as this process holds the links:
//! a crash or SIGKILL unregisters them), and runs the [`Agent`] on the ring buffer's records,
//! writing its decisions into the per-socket map.

use crate::agent::{Agent, AgentConfig, AgentStats};
use crate::protocol::{Algorithm, Record, RecordKind};
use crate::skel::ConcordTcpSkelBuilder;
use crate::tcp_cm::CmHost;
use concord_cc::Instant;
use libbpf_rs::skel::{OpenSkel, SkelBuilder};
use libbpf_rs::{MapCore, MapFlags, RingBufferBuilder};
use std::cell::RefCell;
use std::io::Write;
use std::mem::MaybeUninit;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long one wait for records lasts; the datapath wakes the agent early when a batch is full
/// or something other than an ACK happens, and the agent takes what waits after each wait.
const POLL: Duration = Duration::from_millis(1);
/// Every socket's decision is written again this often, so that an idle socket's entry stays
/// fresh (nanoseconds).
const REFRESH_NS: u64 = 50_000_000;

/// Why the datapath could not run.
#[derive(Debug, thiserror::Error)]
pub enum DatapathError {
    /// Opening or loading the BPF object failed.
    #[error("loading the BPF datapath: {0}; the kernel needs BTF and BPF struct_ops for tcp_congestion_ops (Linux 5.13 or later), and the agent must run as root (CAP_BPF and CAP_NET_ADMIN)")]
    Load(libbpf_rs::Error),
    /// Registering an algorithm failed.
    #[error("registering {name}: {source}; if it is registered already, another concord-tcp runs (stop it first)")]
    Register {
        /// The algorithm's name.
        name: &'static str,
        /// The error.
        source: libbpf_rs::Error,
    },
    /// Setting up or reading the ring buffer failed.
    #[error("the ring buffer of measurements: {0}")]
    RingBuffer(libbpf_rs::Error),
    /// The agent's configuration is out of range.
    #[error("{0}")]
    Config(String),
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// The agent's counters.
    pub agent: AgentStats,
    /// Records the datapath dropped because the ring buffer was full.
    pub dropped: u64,
    /// ACKs on which the datapath ran Reno itself (no fresh decision).
    pub fallback_acks: u64,
    /// Records that could not be read.
    pub bad_records: u64,
}

/// CLOCK_MONOTONIC in nanoseconds: the clock of `bpf_ktime_get_ns`, which the datapath
/// compares decision stamps with.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid, exclusively borrowed `ts`.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

fn counter(map: &dyn MapCore, index: u32) -> u64 {
    match map.lookup(&index.to_le_bytes(), MapFlags::ANY) {
        Ok(Some(v)) if v.len() == 8 => {
            let mut w = [0u8; 8];
            w.copy_from_slice(&v);
            u64::from_le_bytes(w)
        }
        _ => 0,
    }
}

/// Loads the datapath, registers the algorithms, calls `ready` with their names, and runs the
/// agent until `stop` is set. With `trace`, every ACK record and every decision is written to
/// it as a CSV line: `ack,time_ns,sock_id,bytes_acked,rtt_us,in_flight,ca_state` and
/// `decision,time_ns,sock_id,cwnd,ssthresh,loss_ssthresh,loss_events` (windows in segments). Returns what it did; the algorithms are unregistered when it
/// returns.
pub fn run(
    config: AgentConfig,
    trace: Option<&mut dyn std::io::Write>,
    stop: &AtomicBool,
    ready: impl FnOnce(&[&'static str]),
) -> Result<RunStats, DatapathError> {
    crate::agent::validate(&config).map_err(DatapathError::Config)?;
    let agent = Agent::new(config).map_err(|e| DatapathError::Config(e.to_string()))?;
    run_agent(agent, trace, stop, ready)
}

/// [`run`] with an agent made by the caller: the CM daemon's, whose `concord_cm` sockets are
/// flows of the daemon's CM (`concordd --tcp`). Its configuration must have passed
/// [`crate::agent::validate`].
pub fn run_agent<H: CmHost>(
    mut agent: Agent<H>,
    mut trace: Option<&mut dyn std::io::Write>,
    stop: &AtomicBool,
    ready: impl FnOnce(&[&'static str]),
) -> Result<RunStats, DatapathError> {
    let mut object = MaybeUninit::uninit();
    let open = ConcordTcpSkelBuilder::default()
        .open(&mut object)
        .map_err(DatapathError::Load)?;
    let mut skel = open.load().map_err(DatapathError::Load)?;

    let mut links = Vec::new();
    for algo in Algorithm::ALL {
        let map = match algo {
            Algorithm::NewReno => &mut skel.maps.newreno,
            Algorithm::Mccp => &mut skel.maps.mccp,
            Algorithm::Cm => &mut skel.maps.cm,
            Algorithm::WestwoodPlus => &mut skel.maps.westw,
            Algorithm::Cubic => &mut skel.maps.cubic,
        };
        let link = map
            .attach_struct_ops()
            .map_err(|source| DatapathError::Register {
                name: algo.kernel_name(),
                source,
            })?;
        links.push(link);
    }
    let names: Vec<&'static str> = Algorithm::ALL.iter().map(|a| a.kernel_name()).collect();

    let batch: Rc<RefCell<Vec<Record>>> = Rc::new(RefCell::new(Vec::with_capacity(4096)));
    let bad = Rc::new(RefCell::new(0u64));
    let mut builder = RingBufferBuilder::new();
    {
        let (batch, bad) = (Rc::clone(&batch), Rc::clone(&bad));
        builder
            .add(&skel.maps.records, move |data: &[u8]| {
                match Record::parse(data) {
                    Ok(r) => batch.borrow_mut().push(r),
                    Err(_) => *bad.borrow_mut() += 1,
                }
                0
            })
            .map_err(DatapathError::RingBuffer)?;
    }
    let ring = builder.build().map_err(DatapathError::RingBuffer)?;
    ready(&names);

    let mut decisions = Vec::new();
    let mut records = Vec::with_capacity(4096);
    let mut last_refresh = monotonic_ns();
    while !stop.load(Ordering::Relaxed) {
        match ring.poll(POLL) {
            Ok(()) => {}
            // A signal interrupted the wait: look at `stop` again.
            Err(e) if e.kind() == libbpf_rs::ErrorKind::Interrupted => continue,
            Err(e) => return Err(DatapathError::RingBuffer(e)),
        }
        // Records submitted without a wakeup (the datapath batches ACKs) raise no epoll event:
        // take whatever waits, every poll interval.
        ring.consume().map_err(DatapathError::RingBuffer)?;
        std::mem::swap(&mut records, &mut *batch.borrow_mut());
        for r in records.drain(..) {
            if let (Some(t), RecordKind::Ack) = (trace.as_mut(), r.kind) {
                // Tracing is a debugging aid: a full disk does not stop the agent.
                let _ = writeln!(
                    t,
                    "ack,{},{},{},{},{},{}",
                    r.time_ns, r.sock_id, r.bytes_acked, r.rtt_us, r.in_flight, r.ca_state
                );
            }
            agent.on_record(&r);
        }
        let now = monotonic_ns();
        agent.on_tick(Instant::from_nanos(now));
        if now.saturating_sub(last_refresh) >= REFRESH_NS {
            agent.all_decisions(now, &mut decisions);
            last_refresh = now;
        } else {
            agent.decisions(now, &mut decisions);
        }
        if let Some(t) = trace.as_mut() {
            for (id, d) in &decisions {
                let _ = writeln!(
                    t,
                    "decision,{},{id},{},{},{},{}",
                    d.stamp_ns, d.cwnd, d.ssthresh, d.loss_ssthresh, d.loss_events
                );
            }
        }
        for (id, d) in &decisions {
            // A failed write leaves the socket on the datapath's own Reno until the next one.
            let _ = skel
                .maps
                .decisions
                .update(&id.to_le_bytes(), &d.to_bytes(), MapFlags::ANY);
        }
        for id in agent.take_released() {
            // The datapath deleted the entry on release; a decision written since, before the
            // release record arrived, would otherwise stay. Missing entries are fine.
            let _ = skel.maps.decisions.delete(&id.to_le_bytes());
        }
    }
    let stats = RunStats {
        agent: agent.stats(),
        dropped: counter(&skel.maps.counters, 0),
        fallback_acks: counter(&skel.maps.counters, 1),
        bad_records: *bad.borrow(),
    };
    drop(ring);
    drop(links);
    Ok(stats)
}
