//! `concord bench`: the simulator's speed on the standard dumbbell, beside the figures an ns-3
//! user compares (goodput, Jain's index, drops, utilisation).

use crate::clock::{peak_rss_bytes, Stopwatch};
use crate::Failure;
use concord_sim::results::RunResults;
use concord_sim::scenario;
use concord_sim::Simulator;
use serde_json::json;

/// The benchmark's parameters.
#[derive(clap::Args, Debug, Clone)]
pub struct BenchArgs {
    /// Number of sender/receiver pairs (one bulk NewReno flow each).
    #[arg(long, default_value_t = 64)]
    pub flows: u32,
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
"#,
        flows = a.flows,
        duration = a.duration,
        seed = a.seed,
        rate = a.rate,
        delay = a.delay,
        queue = a.queue
    )
}

/// `concord bench`.
pub fn bench(a: &BenchArgs) -> Result<(), Failure> {
    if a.flows == 0 || a.runs == 0 {
        return Err(Failure::input("--flows and --runs must be at least 1"));
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
    let checked = BenchArgs {
        rate: rate.to_string(),
        delay: delay.to_string(),
        duration: duration.to_string(),
        ..a.clone()
    };
    let text = scenario_text(&checked);
    let sc = scenario::parse_str(&text, None).map_err(|e| Failure::input(e.to_string()))?;
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..a.runs {
        let watch = Stopwatch::start();
        let mut sim = Simulator::new(&sc).map_err(|e| Failure::runtime(e.to_string()))?;
        sim.run().map_err(|e| Failure::runtime(e.to_string()))?;
        walls.push(watch.secs());
        last = Some(sim);
    }
    let Some(sim) = last else {
        return Err(Failure::runtime("no run completed"));
    };
    walls.sort_by(f64::total_cmp);
    let wall = walls[walls.len() / 2];
    let r = RunResults::from_simulator(&sim);
    let events = sim.events_processed() as f64;
    let bottleneck_packets = r
        .channels
        .iter()
        .find(|c| c.name == r.bottleneck)
        .map(|c| c.tx_packets)
        .unwrap_or(0) as f64;
    let peak = peak_rss_bytes().map(|b| b as f64 / 1e6);
    let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps).collect();
    let min = goodputs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = goodputs.iter().copied().fold(0.0, f64::max);
    if a.json {
        let v = json!({
            "scenario": r.scenario,
            "flows": a.flows,
            "runs": a.runs,
            "wall_seconds_median": wall,
            "wall_seconds_all": walls,
            "events": sim.events_processed(),
            "events_per_second": events / wall,
            "bottleneck_packets": bottleneck_packets,
            "bottleneck_packets_per_wall_second": bottleneck_packets / wall,
            "simulated_seconds_per_wall_second": r.duration_s / wall,
            "peak_rss_mb": peak,
            "total_goodput_bps": r.total_goodput_bps,
            "goodput_per_flow_bps": goodputs,
            "jain_index": r.jain_index,
            "bottleneck_drops": r.bottleneck_drops,
            "bottleneck_utilisation": r.bottleneck_utilisation,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&v).map_err(|e| Failure::runtime(e.to_string()))?
        );
        return Ok(());
    }
    println!("concord bench: {} NewReno flows, {} / {} bottleneck, {}-packet DropTail, {} simulated, seed {}", a.flows, a.rate, a.delay, a.queue, a.duration, a.seed);
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
