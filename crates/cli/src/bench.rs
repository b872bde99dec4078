//! `concord bench`: the simulator's speed on the standard dumbbell, beside the figures an ns-3
//! user compares (goodput, Jain's index, drops, utilisation).

use crate::clock::{cpu_seconds, peak_rss_bytes, reset_peak_rss, rss_bytes, Stopwatch};
use crate::Failure;
use concord_sim::results::RunResults;
use concord_sim::scenario;
use concord_sim::Simulator;
use serde_json::json;

/// The benchmark's parameters.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Number of sender/receiver pairs (one bulk NewReno flow each), 1 to 100,000 (peak
    /// memory about 1.2 GB at 100,000 on a 1 Gbps / 25 ms bottleneck, 10 s simulated).
    #[arg(long, default_value_t = 64)]
    pub flows: u32,
    /// Measure each of these numbers of flows in turn (one run each, smallest first) and
    /// print the scaling table: flows, packets and events per wall and per CPU second, bytes
    /// per flow, peak memory. Example: `--scaling 100,1000,10000,100000`.
    #[arg(long, value_delimiter = ',', conflicts_with = "flows")]
    pub scaling: Vec<u32>,
    /// Bottleneck rate.
    #[arg(long, default_value = "10Mbps")]
    pub rate: String,
    /// Bottleneck one-way delay.
    #[arg(long, default_value = "25ms")]
    pub delay: String,
    /// Bottleneck DropTail queue, in packets.
    #[arg(long, default_value_t = 100)]
    pub queue: u32,
    /// Simulated time.
    #[arg(long, default_value = "60s")]
    pub duration: String,
    /// Repetitions; the median wall time is reported.
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Every flow uses SACK (RFC 2018) with RFC 6675 loss recovery (`sack = true`).
    #[arg(long)]
    pub sack: bool,
    /// Every receiver advertises this window (`rwnd`, e.g. `1MiB`), so that a sender holds at
    /// most that much data in flight; by default the window is unbounded. `bench/ns3/`'s
    /// program gives its sockets 1 MiB send and receive buffers (`SndBufSize`, `RcvBufSize`):
    /// `--rwnd 1MiB` runs the same limit.
    #[arg(long)]
    pub rwnd: Option<String>,
}

/// The benchmark scenario as a scenario file, so that it is loaded, validated and documented
/// like any other.
pub fn scenario_text(a: &BenchArgs) -> String {
    format!(
        r#"# concord bench: {flows} NewReno flows on a dumbbell.
name = "bench-dumbbell-{flows}"
duration = "{duration}"
seed = {seed}

[topology]
kind = "dumbbell"
pairs = {flows}
bottleneck = {{ rate = "{rate}", delay = "{delay}", queue = "{queue}pkt" }}
access = {{ rate = "1Gbps", delay = "1ms", queue = "1000pkt" }}

[[flow]]
kind = "tcp"
count = {flows}
name = "f{{i}}"
from = "s{{i}}"
to = "d{{i}}"
start = "0s"
start_jitter = "100ms"

[record]
bottleneck = "r1->r2"
queues = ["r1->r2"]
{defaults}"#,
        flows = a.flows,
        duration = a.duration,
        seed = a.seed,
        rate = a.rate,
        delay = a.delay,
        queue = a.queue,
        defaults = tcp_defaults(a),
    )
}

/// The `[defaults.tcp]` section of the options given (`--sack`, `--rwnd`), or nothing.
fn tcp_defaults(a: &BenchArgs) -> String {
    let mut keys = String::new();
    if a.sack {
        keys.push_str("sack = true\n");
    }
    if let Some(w) = &a.rwnd {
        keys.push_str(&format!("rwnd = \"{w}\"\n"));
    }
    if keys.is_empty() {
        keys
    } else {
        format!("\n[defaults.tcp]\n{keys}")
    }
}

/// "NewReno" or "NewReno + SACK", with the advertised window if one is set, for the headings.
fn sender_name(a: &BenchArgs) -> String {
    let sender = if a.sack { "NewReno + SACK" } else { "NewReno" };
    match &a.rwnd {
        Some(w) => format!("{sender} (rwnd {w})"),
        None => sender.to_string(),
    }
}

/// `count` per second of `seconds`, or none when the time is unknown or too short for the
/// clock's 10 ms ticks (0).
fn per_second(seconds: Option<f64>, count: f64) -> Option<f64> {
    seconds.filter(|&s| s > 0.0).map(|s| count / s)
}

/// The most flows `--flows` and `--scaling` accept.
pub const MAX_FLOWS: u32 = 100_000;

/// `concord bench`.
pub fn bench(a: &BenchArgs) -> Result<(), Failure> {
    if a.flows == 0 || a.runs == 0 || a.scaling.contains(&0) {
        return Err(Failure::input(
            "--flows, --scaling and --runs must be at least 1",
        ));
    }
    if a.flows > MAX_FLOWS || a.scaling.iter().any(|&n| n > MAX_FLOWS) {
        return Err(Failure::input(format!(
            "--flows and --scaling go up to {MAX_FLOWS}: give fewer flows"
        )));
    }
    // Read the quantities here, so that a bad one is reported as the argument it is, not as an
    // error in a generated file.
    let bad = |what: &str, e: String| Failure::input(format!("--{what}: {e}"));
    let rate: concord_cc::units::Rate = a
        .rate
        .parse()
        .map_err(|e: concord_cc::units::ParseQuantityError| bad("rate", e.to_string()))?;
    let delay =
        concord_cc::units::parse_duration(&a.delay).map_err(|e| bad("delay", e.to_string()))?;
    let duration = concord_cc::units::parse_duration(&a.duration)
        .map_err(|e| bad("duration", e.to_string()))?;
    if rate.bps() == 0 || duration.is_zero() || a.queue == 0 {
        return Err(Failure::input(
            "--rate, --duration and --queue must be above zero",
        ));
    }
    let rwnd = match &a.rwnd {
        Some(w) => {
            let b = concord_cc::units::parse_bytes(w).map_err(|e| bad("rwnd", e.to_string()))?;
            if b == 0 {
                return Err(Failure::input(
                    "--rwnd must be at least 1 byte (leave it out for an unbounded window)",
                ));
            }
            Some(format!("{b}B"))
        }
        None => None,
    };
    let checked = BenchArgs {
        rate: rate.to_string(),
        delay: delay.to_string(),
        duration: duration.to_string(),
        rwnd,
        ..a.clone()
    };
    if !a.scaling.is_empty() {
        return scaling(&checked);
    }
    let Measured {
        sim,
        walls,
        wall,
        cpu,
        resident_growth: _,
        window,
        setup_cpu,
    } = measure(&checked)?;
    let r = RunResults::from_simulator(&sim);
    let events = sim.events_processed() as f64;
    let bottleneck = r.channels.iter().find(|c| c.name == r.bottleneck);
    let bottleneck_packets = bottleneck.map_or(0, |c| c.tx_packets) as f64;
    // Every packet that reached the bottleneck's queue, sent or dropped: with many flows the
    // senders' and access links' work per transmitted packet includes the dropped ones.
    let arrivals = bottleneck.map_or(0, |c| c.arrivals);
    let bottleneck_arrivals = arrivals as f64;
    let peak = peak_rss_bytes().map(|b| b as f64 / 1e6);
    let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let min = goodputs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = goodputs.iter().copied().fold(0.0, f64::max);
    if a.json {
        let v = json!({
            "scenario": r.scenario,
            "flows": a.flows,
            "sack": a.sack,
            "rwnd": checked.rwnd,
            "runs": a.runs,
            "wall_seconds_median": wall,
            "wall_seconds_all": walls,
            "events": sim.events_processed(),
            "events_per_second": events / wall,
            "cpu_seconds_median": cpu,
            "setup_cpu_seconds_median": setup_cpu,
            "events_per_cpu_second": per_second(cpu, events),
            "bottleneck_packets_per_cpu_second": per_second(cpu, bottleneck_packets),
            "bottleneck_packets": bottleneck_packets,
            "bottleneck_packets_per_wall_second": bottleneck_packets / wall,
            "bottleneck_arrivals": arrivals,
            "bottleneck_arrivals_per_cpu_second": per_second(cpu, bottleneck_arrivals),
            "window_bottleneck_packets": window.packets,
            "window_cpu_seconds_median": window.cpu,
            "window_bottleneck_packets_per_cpu_second": per_second(window.cpu, window.packets as f64),
            "simulated_seconds_per_wall_second": r.duration_s / wall,
            "peak_rss_mb": peak,
            "total_goodput_bps": r.total_goodput_bps,
            "goodput_per_flow_bps": goodputs,
            "jain_index": r.jain_index,
            "bottleneck_drops": r.bottleneck_drops,
            "bottleneck_utilisation": r.bottleneck_utilisation,
            "build": crate::build_info::json(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| Failure::runtime(e.to_string()))?
        );
        return Ok(());
    }
    println!(
        "concord bench: {} {} flows, {} / {} bottleneck, {}-packet DropTail, {} simulated, seed {}",
        a.flows,
        sender_name(a),
        a.rate,
        a.delay,
        a.queue,
        a.duration,
        a.seed
    );
    println!("build: {}", crate::build_info::describe());
    println!();
    println!("speed (median of {} runs)", a.runs);
    println!("  wall time                       {wall:.3} s");
    println!("  events per second               {:.0}", events / wall);
    println!(
        "  bottleneck packets per wall s   {:.0}  ({} packets)",
        bottleneck_packets / wall,
        bottleneck_packets
    );
    println!(
        "  simulated s per wall s          {:.1}",
        r.duration_s / wall
    );
    if let Some(c) = cpu {
        println!("  CPU time                        {c:.2} s  (/proc, 10 ms ticks)");
        if let Some(s) = setup_cpu {
            println!("  of which set-up                 {s:.2} s");
        }
        if c > 0.0 {
            println!("  events per CPU second           {:.0}", events / c);
            println!(
                "  bottleneck packets per CPU s    {:.0}",
                bottleneck_packets / c
            );
            println!(
                "  offered packets per CPU s       {:.0}  ({} sent or dropped at the bottleneck)",
                bottleneck_arrivals / c,
                arrivals
            );
        } else {
            println!("  per CPU second                  too short to measure in 10 ms ticks: simulate longer");
        }
    }
    if let Some(c) = window.cpu.filter(|&c| c > 0.0) {
        println!(
            "  last half: packets per CPU s    {:.0}  ({} packets, {c:.2} CPU s)",
            window.packets as f64 / c,
            window.packets
        );
    }
    match peak {
        Some(mb) => println!("  peak memory                     {mb:.1} MB"),
        None => println!("  peak memory                     unknown (no /proc)"),
    }
    println!();
    println!("results (compare with ns-3 on the same scenario: bench/ns3/)");
    println!(
        "  total goodput                   {:.3} Mbps",
        r.total_goodput_bps / 1e6
    );
    println!(
        "  per-flow goodput                min {:.3}  mean {:.3}  max {:.3} Mbps",
        min / 1e6,
        r.total_goodput_bps / goodputs.len().max(1) as f64 / 1e6,
        max / 1e6
    );
    println!("  Jain's index                    {:.4}", r.jain_index);
    println!("  bottleneck drops                {}", r.bottleneck_drops);
    println!(
        "  bottleneck utilisation          {:.2}%",
        r.bottleneck_utilisation * 100.0
    );
    Ok(())
}

/// One benchmark configuration's measurement.
struct Measured {
    /// The last run's simulator, after the run.
    sim: Simulator,
    /// Every run's wall time, sorted, in seconds.
    walls: Vec<f64>,
    /// The median wall time, in seconds.
    wall: f64,
    /// The median CPU time of a run (setting up and running the simulator), in seconds.
    cpu: Option<f64>,
    /// Resident memory the last simulator added (after its run, against before it was
    /// built), in bytes.
    resident_growth: Option<u64>,
    /// The steady-state window: the last half of the simulated time, where the flows' start-up
    /// (slow start, the first losses, histograms and series growing) is over, so that runs with
    /// different numbers of flows are compared over like work.
    window: Window,
    /// The median CPU time of building the simulator (`Simulator::new`: channels, routes,
    /// flows), part of `cpu`, in seconds.
    setup_cpu: Option<f64>,
}

/// The last half of a run: bottleneck packets sent in it and the CPU time it took.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    /// Bottleneck packets sent in the window (the last run's).
    packets: u64,
    /// The median CPU time of the window over the runs, in seconds.
    cpu: Option<f64>,
}

/// Runs `sim` from the start of the window to `end`: a function of its own, so that a profiler
/// can collect over the window alone (`valgrind --tool=callgrind
/// --toggle-collect='*bench*run_window*'`).
#[inline(never)]
fn run_window(
    sim: &mut Simulator,
    end: concord_cc::time::Instant,
) -> Result<(), concord_sim::trace::capture::CaptureError> {
    sim.run_until(end)
}

/// Runs the scenario of `a` `a.runs` times.
fn measure(a: &BenchArgs) -> Result<Measured, Failure> {
    let text = scenario_text(a);
    let sc = scenario::parse_str(&text, None).map_err(|e| Failure::input(e.to_string()))?;
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut window_cpus = Vec::new();
    let mut setup_cpus = Vec::new();
    let mut window_packets = 0;
    let mut last = None;
    let mut resident_growth = None;
    for _ in 0..a.runs {
        // The previous run's simulator goes first, so that it neither counts nor weighs.
        drop(last.take());
        let before = rss_bytes();
        let cpu0 = cpu_seconds();
        let watch = Stopwatch::start();
        let mut sim = Simulator::new(&sc).map_err(|e| Failure::runtime(e.to_string()))?;
        if let (Some(c0), Some(c1)) = (cpu0, cpu_seconds()) {
            setup_cpus.push(c1 - c0);
        }
        // The same events as one `run`: up to the window's start, then the window, then the
        // settling of the integrals.
        let end = sim.end();
        let window_start = end - (end - concord_cc::time::Instant::ZERO) / 2;
        sim.run_until(window_start)
            .map_err(|e| Failure::runtime(e.to_string()))?;
        let bottleneck = sim.bottleneck() as usize;
        let sent_before = sim.channels()[bottleneck].stats().tx_packets;
        let window_cpu0 = cpu_seconds();
        run_window(&mut sim, end).map_err(|e| Failure::runtime(e.to_string()))?;
        if let (Some(c0), Some(c1)) = (window_cpu0, cpu_seconds()) {
            window_cpus.push(c1 - c0);
        }
        window_packets = sim.channels()[bottleneck].stats().tx_packets - sent_before;
        sim.finish().map_err(|e| Failure::runtime(e.to_string()))?;
        walls.push(watch.secs());
        if let (Some(c0), Some(c1)) = (cpu0, cpu_seconds()) {
            cpus.push(c1 - c0);
        }
        resident_growth = match (before, rss_bytes()) {
            (Some(b), Some(n)) => Some(n.saturating_sub(b)),
            _ => None,
        };
        last = Some(sim);
    }
    let Some(sim) = last else {
        return Err(Failure::runtime("no run completed"));
    };
    walls.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let wall = walls[walls.len() / 2];
    let cpu = (cpus.len() == walls.len()).then(|| cpus[cpus.len() / 2]);
    window_cpus.sort_by(f64::total_cmp);
    let window = Window {
        packets: window_packets,
        cpu: (window_cpus.len() == walls.len()).then(|| window_cpus[window_cpus.len() / 2]),
    };
    setup_cpus.sort_by(f64::total_cmp);
    let setup_cpu = (setup_cpus.len() == walls.len()).then(|| setup_cpus[setup_cpus.len() / 2]);
    Ok(Measured {
        sim,
        walls,
        wall,
        cpu,
        resident_growth,
        window,
        setup_cpu,
    })
}

/// `concord bench --scaling N1,N2,...`: one row per number of flows.
fn scaling(a: &BenchArgs) -> Result<(), Failure> {
    let mut counts = a.scaling.clone();
    counts.sort_unstable();
    counts.dedup();
    let mut rows = Vec::new();
    if !a.json {
        println!(
            "concord bench --scaling: {} flows, {} / {} bottleneck, {}-packet DropTail, {} simulated, seed {}, median of {} runs",
            sender_name(a),
            a.rate, a.delay, a.queue, a.duration, a.seed, a.runs
        );
        println!("build: {}", crate::build_info::describe());
        println!();
        println!(
            "{:>7} {:>10} {:>13} {:>13} {:>13} {:>13} {:>10} {:>10} {:>13} {:>10} {:>10} {:>9}",
            "flows",
            "bn packets",
            "packets/wall",
            "packets/CPU",
            "offered/CPU",
            "events/CPU",
            "CPU s",
            "set-up s",
            "half: pkt/CPU",
            "half: CPU s",
            "B/flow",
            "peak MB"
        );
    }
    for n in counts {
        let args = BenchArgs {
            flows: n,
            scaling: Vec::new(),
            ..a.clone()
        };
        let peak_reset = reset_peak_rss();
        let m = measure(&args)?;
        let r = RunResults::from_simulator(&m.sim);
        let bottleneck = r.channels.iter().find(|c| c.name == r.bottleneck);
        let packets = bottleneck.map_or(0, |c| c.tx_packets) as f64;
        let arrivals = bottleneck.map_or(0, |c| c.arrivals);
        let events = m.sim.events_processed() as f64;
        let peak_mb = peak_rss_bytes()
            .filter(|_| peak_reset)
            .map(|b| b as f64 / 1e6);
        let per_flow = m.resident_growth.map(|b| b as f64 / f64::from(n));
        let row = json!({
            "flows": n,
            "bottleneck_packets": packets,
            "wall_seconds_median": m.wall,
            "wall_seconds_all": m.walls,
            "cpu_seconds_median": m.cpu,
            "setup_cpu_seconds_median": m.setup_cpu,
            "bottleneck_packets_per_wall_second": packets / m.wall,
            "bottleneck_packets_per_cpu_second": per_second(m.cpu, packets),
            "bottleneck_arrivals": arrivals,
            "bottleneck_arrivals_per_cpu_second": per_second(m.cpu, arrivals as f64),
            "events": m.sim.events_processed(),
            "events_per_wall_second": events / m.wall,
            "events_per_cpu_second": per_second(m.cpu, events),
            "window_bottleneck_packets": m.window.packets,
            "window_cpu_seconds_median": m.window.cpu,
            "window_bottleneck_packets_per_cpu_second": per_second(m.window.cpu, m.window.packets as f64),
            "resident_bytes_per_flow": per_flow,
            "peak_rss_mb": peak_mb,
            "build": crate::build_info::json(),
        });
        if !a.json {
            let opt =
                |v: Option<f64>, prec: usize| v.map_or("?".to_string(), |x| format!("{x:.prec$}"));
            println!(
                "{:>7} {:>10} {:>13.0} {:>13} {:>13} {:>13} {:>10} {:>10} {:>13} {:>10} {:>10} {:>9}",
                n,
                packets,
                packets / m.wall,
                opt(per_second(m.cpu, packets), 0),
                opt(per_second(m.cpu, arrivals as f64), 0),
                opt(per_second(m.cpu, events), 0),
                opt(m.cpu, 2),
                opt(m.setup_cpu, 2),
                opt(per_second(m.window.cpu, m.window.packets as f64), 0),
                opt(m.window.cpu, 2),
                opt(per_flow, 0),
                opt(peak_mb, 1)
            );
        }
        rows.push(row);
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&rows).map_err(|e| Failure::runtime(e.to_string()))?
        );
    } else {
        println!();
        println!("bn packets: packets sent on the bottleneck; CPU s: the process's user + system time of a run (10 ms ticks);");
        println!("offered/CPU: packets that reached the bottleneck's queue, sent or dropped, per CPU second (with many flows, many are dropped);");
        println!("set-up s: the part of CPU s that built the simulator (channels, routes, flows); packets/wall and packets/CPU divide by the whole run, set-up included;");
        println!("half: the last half of the simulated time alone (the flows' start-up over): bottleneck packets per CPU second, CPU s;");
        println!("B/flow: resident memory the simulator added, per flow; peak MB: the process's peak resident memory during that row.");
    }
    Ok(())
}
