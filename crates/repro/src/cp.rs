//! CP, the Coordination Protocol (Ott, Sparks, Mayer-Patel, INFOCOM 2004; slides only), in the
//! Table I setting: 1 KB packets, 40-byte ACKs, a 15 Mb/s bottleneck with 50 ms delay and a RED
//! queue of 300 packets, 180 s.
//!
//! The first experiment checks the TFRC that CP's aggregation points run (RFC 5348) as a flow
//! of its own: alone it fills the bottleneck; against NewReno it takes a comparable long-run
//! share with a smoother rate, the property the C.O.V. figures of the slides (Fig. 13, 15, 17,
//! 20) compare.

use crate::claim::{Check, Claim, Paper};
use crate::plot::{Plot, Style};
use crate::runner::{scenario_from, simulate, Ctx, Experiment, Figure, Outcome, ReproError};
use concord_sim::metrics::coefficient_of_variation;
use concord_sim::Simulator;

const ALONE: &str = include_str!("../../../scenarios/cp/tfrc-alone.toml");
const VS_NEWRENO: &str = include_str!("../../../scenarios/cp/tfrc-newreno.toml");

/// The Table I bottleneck, in bit/s.
const BOTTLENECK_BPS: f64 = 15e6;

/// The CP experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![Experiment {
        id: "cp/tfrc-alone",
        paper: Paper::Cp,
        title: "TFRC alone and against NewReno (Table I setting)",
        run: tfrc_alone,
    }]
}

/// The per-bin goodput of flow `f` (bit/s) over the measurement window (from the warm-up on).
fn window_rates(sim: &Simulator, f: usize) -> Vec<f64> {
    let Some(flow) = sim.flows.get(f) else {
        return Vec::new();
    };
    let bin = flow.goodput.bin().as_secs_f64();
    let from = sim.warmup().as_secs_f64();
    flow.goodput
        .rates_bps(sim.end())
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as f64 * bin >= from - 1e-9)
        .map(|(_, r)| r)
        .collect()
}

/// The mean of `x` (0 when empty).
fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        x.iter().sum::<f64>() / x.len() as f64
    }
}

/// Goodput over time of every flow of `sim`, in Mbit/s, for a line plot.
fn goodput_plot(title: &str, sim: &Simulator) -> Plot {
    let mut plot = Plot::new(title, "time (s)", "goodput (Mbit/s)");
    for f in &sim.flows {
        let bin = f.goodput.bin().as_secs_f64();
        let points = f
            .goodput
            .rates_bps(sim.end())
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64 * bin, r / 1e6))
            .collect();
        plot = plot.series(&f.name, Style::Line, points);
    }
    plot.reference("bottleneck 15 Mbit/s", BOTTLENECK_BPS / 1e6)
}

/// One TFRC flow alone, then one TFRC flow against one NewReno flow, over seeds 1..3 (quick:
/// 1..2; the runs are 180 s either way, because TFRC needs about 90 s to climb to its share).
fn tfrc_alone(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let seeds: Vec<u64> = if ctx.quick { vec![1, 2] } else { vec![1, 2, 3] };
    let seed_text = format!("{}..{}", seeds[0], seeds[seeds.len() - 1]);
    let mut out = Outcome::default();

    let mut fill = f64::INFINITY;
    let (mut ratio_lo, mut ratio_hi, mut cov_worst) = (f64::INFINITY, 0.0f64, 0.0f64);
    let mut csv = String::from("seed,scenario,flow,goodput_bps,cov_1s\n");
    for &seed in &seeds {
        let sc = scenario_from("scenarios/cp/tfrc-alone.toml", ALONE, Some(seed))?;
        let (_, sim) = simulate(&sc)?;
        let rates = window_rates(&sim, 0);
        fill = fill.min(mean(&rates) / BOTTLENECK_BPS);
        csv.push_str(&format!(
            "{seed},tfrc-alone,tfrc,{},{}\n",
            mean(&rates),
            coefficient_of_variation(&rates)
        ));
        if seed == seeds[0] {
            let p = goodput_plot("One TFRC flow alone, 15 Mbit/s RED (seed 1)", &sim);
            out.figures.push(Figure {
                id: "cp-tfrc-alone".into(),
                title: p.title.clone(),
                svg: p.to_svg(),
            });
        }

        let sc = scenario_from("scenarios/cp/tfrc-newreno.toml", VS_NEWRENO, Some(seed))?;
        let (_, sim) = simulate(&sc)?;
        let (tfrc, tcp) = (window_rates(&sim, 0), window_rates(&sim, 1));
        let ratio = mean(&tfrc) / mean(&tcp).max(1.0);
        ratio_lo = ratio_lo.min(ratio);
        ratio_hi = ratio_hi.max(ratio);
        let (cov_tfrc, cov_tcp) = (
            coefficient_of_variation(&tfrc),
            coefficient_of_variation(&tcp),
        );
        cov_worst = cov_worst.max(cov_tfrc / cov_tcp.max(1e-9));
        for (name, r, c) in [("tfrc", &tfrc, cov_tfrc), ("newreno", &tcp, cov_tcp)] {
            csv.push_str(&format!("{seed},tfrc-newreno,{name},{},{c}\n", mean(r)));
        }
        if seed == seeds[0] {
            let p = goodput_plot("TFRC against NewReno, 15 Mbit/s RED (seed 1)", &sim);
            out.figures.push(Figure {
                id: "cp-tfrc-newreno".into(),
                title: p.title.clone(),
                svg: p.to_svg(),
            });
        }
    }
    out.raw.push(("cp-tfrc-alone.csv".into(), csv));
    out.claims.push(Claim::new(
        Paper::Cp,
        "TFRC alone (Table I setting)",
        &format!("goodput / bottleneck, 90-180 s, min over seeds {seed_text}"),
        "fills most of the bottleneck (payload is 96% of each packet)",
        fill,
        Check::AtLeast { min: 0.85 },
        seeds[0],
        "scenarios/cp/tfrc-alone.toml",
        ctx.quick,
    ));
    for (which, value) in [("lowest", ratio_lo), ("highest", ratio_hi)] {
        out.claims.push(Claim::new(
            Paper::Cp,
            "TFRC alone: TFRC vs NewReno (Table I setting)",
            &format!("TFRC / NewReno goodput, 90-180 s, {which} over seeds {seed_text}"),
            "TCP-friendly: within a factor 1.5 either way",
            value,
            Check::Between {
                lo: 1.0 / 1.5,
                hi: 1.5,
            },
            seeds[0],
            "scenarios/cp/tfrc-newreno.toml",
            ctx.quick,
        ));
    }
    out.claims.push(Claim::new(
        Paper::Cp,
        "TFRC alone: TFRC vs NewReno (Table I setting)",
        &format!("C.O.V. of 1 s goodput, TFRC / NewReno, 90-180 s, highest over seeds {seed_text}"),
        "TFRC smoother than TCP (< 1)",
        cov_worst,
        Check::AtMost { max: 1.0 },
        seeds[0],
        "scenarios/cp/tfrc-newreno.toml",
        ctx.quick,
    ));
    Ok(out)
}
