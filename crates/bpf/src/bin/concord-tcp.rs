//! `concord-tcp`: the agent that runs concord's controllers on kernel TCP sockets. It registers
//! `concord_newreno`, `concord_mccp`, `concord_cm`, `concord_westw` and `concord_cubic` as TCP
//! congestion-control algorithms for as long as it runs; select one per socket
//! (`setsockopt(TCP_CONGESTION)`, `iperf3 -C concord_mccp`), per route
//! (`ip route ... congctl concord_cm`) or per namespace (`net.ipv4.tcp_congestion_control`).

use clap::Parser;
use concord_bpf::agent::AgentConfig;
use concord_bpf::datapath;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Runs concord's controllers on kernel TCP through eBPF (root).
#[derive(Parser, Debug)]
#[command(name = "concord-tcp", version)]
struct Args {
    /// The MSS, in bytes, the Congestion Manager counts concord_cm windows in.
    #[arg(long, default_value_t = 1448)]
    cm_mss: u64,
    /// Turn off MCCP's non-congestion detection (the paper's "TCP without NCD").
    #[arg(long)]
    mccp_no_ncd: bool,
    /// Choose ABE's sampling interval T_k by the MCCP paper's eqs. (2)-(3) instead of fixing it
    /// to the ACK inter-arrival time as the paper's experiments did (a deviation).
    #[arg(long)]
    mccp_adaptive_sampling: bool,
    /// Start every new concord_newreno, concord_mccp, concord_westw and concord_cubic socket
    /// with this slow-start threshold, in bytes, instead of the kernel's unbounded one (the
    /// MCCP paper's ns-2 senders: 65536).
    #[arg(long, value_name = "BYTES")]
    initial_ssthresh: Option<u64>,
    /// Write every ACK record and every decision to this file as CSV lines
    /// (ack,time_ns,sock_id,bytes_acked,rtt_us,in_flight,ca_state and
    /// decision,time_ns,sock_id,cwnd,ssthresh,loss_ssthresh,loss_events).
    #[arg(long)]
    trace: Option<std::path::PathBuf>,
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM stop the agent cleanly (SIGKILL cannot be caught; the kernel then
/// unregisters the algorithms when it closes the links).
fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        #[allow(unsafe_code)]
        unsafe {
            libc::signal(sig, on_signal as *const () as libc::sighandler_t);
        }
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut config = AgentConfig {
        cm_mss: args.cm_mss,
        initial_ssthresh: args.initial_ssthresh,
        ..AgentConfig::default()
    };
    config.mccp.ncd = !args.mccp_no_ncd;
    config.mccp.abe.adaptive_sampling = args.mccp_adaptive_sampling;
    let mut trace = match args.trace.as_ref().map(std::fs::File::create).transpose() {
        Ok(t) => t.map(std::io::BufWriter::new),
        Err(e) => {
            eprintln!("concord-tcp: cannot write the trace: {e}");
            return ExitCode::from(2);
        }
    };
    catch_signals();
    let trace_out = trace.as_mut().map(|t| t as &mut dyn std::io::Write);
    let result = datapath::run(config, trace_out, &STOP, |names| {
        println!("concord-tcp: registered {}", names.join(" "));
    });
    match result {
        Ok(s) => {
            println!(
                "concord-tcp: stopped; {} records ({} ACKs), {} sockets opened, {} closed, {} decisions; datapath: {} records dropped, {} ACKs on its own Reno",
                s.agent.records, s.agent.acks, s.agent.sockets_opened, s.agent.sockets_closed,
                s.agent.decisions, s.dropped, s.fallback_acks
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("concord-tcp: {e}");
            ExitCode::FAILURE
        }
    }
}
