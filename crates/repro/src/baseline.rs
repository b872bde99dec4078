//! The baselines checked against textbook results: NewReno keeps a BDP buffer busy, shares a
//! dumbbell fairly (more fairly under RED), and follows the Padhye et al. model under random
//! loss. The other papers' claims compare their systems with these baselines, so they are
//! verified first.

use crate::claim::{Check, Claim, Paper};
use crate::plot::{Bars, Plot, Reference, Style};
use crate::runner::{
    scenario_from, scenario_with, simulate, Ctx, Experiment, Figure, Outcome, ReproError,
};
use concord_cc::tfrc::equation;

const BDP: &str = include_str!("../../../scenarios/basic/single-flow-bdp.toml");
const DROPTAIL: &str = include_str!("../../../scenarios/basic/dumbbell-4-droptail.toml");
const RED: &str = include_str!("../../../scenarios/basic/dumbbell-4-red.toml");
const RANDOM_LOSS: &str = include_str!("../../../scenarios/basic/random-loss.toml");

/// The bottleneck rate of the basic scenarios, in bit/s.
const BOTTLENECK_BPS: f64 = 10e6;

/// The baseline experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "baseline/bdp",
            paper: Paper::Baseline,
            title: "One NewReno flow keeps a BDP buffer busy",
            run: bdp,
        },
        Experiment {
            id: "baseline/dumbbell",
            paper: Paper::Baseline,
            title: "Four NewReno flows on a dumbbell: DropTail vs RED",
            run: dumbbell,
        },
        Experiment {
            id: "baseline/padhye",
            paper: Paper::Baseline,
            title: "NewReno under random loss vs the Padhye model",
            run: padhye,
        },
    ]
}

fn bdp(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let sc = scenario_from(
        "scenarios/basic/single-flow-bdp.toml",
        BDP,
        Some(ctx.seed(1)),
    )?;
    let (r, sim) = simulate(&sc)?;
    let f = &r.flows[0];
    let claim = Claim::new(
        Paper::Baseline,
        "NewReno, 10 Mbps, 100 ms RTT, buffer = BDP",
        "goodput / bottleneck rate, 60-300 s",
        ">= 0.95 (a BDP buffer absorbs the halving)",
        f.goodput_bps / BOTTLENECK_BPS,
        Check::AtLeast { min: 0.95 },
        sc.seed,
        "scenarios/basic/single-flow-bdp.toml",
        ctx.quick,
    )
    // One TCP flow over DropTail queues, no random loss and no start jitter: nothing in the
    // scenario draws from the seed.
    .deterministic();
    let rates = sim.flows()[0].goodput.rates_bps(sim.end());
    let bin = sim.flows()[0].goodput.bin().as_secs_f64();
    let goodput: Vec<(f64, f64)> = rates
        .iter()
        .enumerate()
        .map(|(i, b)| (i as f64 * bin, b / 1e6))
        .collect();
    let cwnd: Vec<(f64, f64)> = sim
        .cwnd_samples()
        .iter()
        .map(|c| (c.at.as_secs_f64(), c.cwnd as f64 / 1448.0))
        .collect();
    let fig1 = Plot::new(
        "One NewReno flow, buffer = BDP: goodput",
        "time (s)",
        "goodput (Mbit/s)",
    )
    .series("goodput (100 ms bins)", Style::Line, goodput)
    .reference("bottleneck 10 Mbit/s", 10.0);
    let fig2 = Plot::new(
        "One NewReno flow, buffer = BDP: congestion window",
        "time (s)",
        "cwnd (segments)",
    )
    .series("cwnd", Style::Line, cwnd);
    Ok(Outcome {
        claims: vec![claim],
        figures: vec![
            Figure {
                id: "baseline-bdp-goodput".into(),
                title: fig1.title.clone(),
                svg: fig1.to_svg(),
            },
            Figure {
                id: "baseline-bdp-cwnd".into(),
                title: fig2.title.clone(),
                svg: fig2.to_svg(),
            },
        ],
        raw: vec![(
            "baseline-bdp-flows.json".into(),
            serde_json::to_string_pretty(&r.flows).unwrap_or_default(),
        )],
    })
}

fn dumbbell(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let seeds = ctx.seeds();
    let mut out = Outcome::default();
    let mut per_flow = Vec::new();
    let mut queue_series = Vec::new();
    let (mut dt_goodput, mut dt_jain, mut red_jain) = (Vec::new(), Vec::new(), Vec::new());
    for (name, text, file) in [
        (
            "DropTail",
            DROPTAIL,
            "scenarios/basic/dumbbell-4-droptail.toml",
        ),
        ("RED", RED, "scenarios/basic/dumbbell-4-red.toml"),
    ] {
        for &seed in &seeds {
            let sc = scenario_from(file, text, Some(seed))?;
            let (r, sim) = simulate(&sc)?;
            if name == "DropTail" {
                dt_goodput.push(r.total_goodput_bps / BOTTLENECK_BPS);
                dt_jain.push(r.jain_index);
            } else {
                red_jain.push(r.jain_index);
            }
            if seed == seeds[0] {
                per_flow.push((
                    name.to_string(),
                    r.flows
                        .iter()
                        .map(|f| f.goodput_bps / 1e6)
                        .collect::<Vec<_>>(),
                ));
                let b = sim.bottleneck();
                let q: Vec<(f64, f64)> = sim
                    .queue_samples()
                    .iter()
                    .filter(|s| s.channel == b)
                    .map(|s| (s.at.as_secs_f64(), s.packets as f64))
                    .collect();
                queue_series.push((name, q));
                out.raw.push((
                    format!("baseline-dumbbell-{}-flows.json", name.to_lowercase()),
                    serde_json::to_string_pretty(&r.flows).unwrap_or_default(),
                ));
            }
        }
    }
    let droptail = "4 NewReno, 10 Mbps / 50 ms, 100-packet DropTail";
    let droptail_file = "scenarios/basic/dumbbell-4-droptail.toml";
    for (figure, metric, paper_value, min, values, file) in [
        (
            droptail,
            "total goodput / bottleneck",
            ">= 0.95",
            0.95,
            &dt_goodput,
            droptail_file,
        ),
        (
            droptail,
            "Jain's index",
            ">= 0.9",
            0.9,
            &dt_jain,
            droptail_file,
        ),
        (
            "4 NewReno, 10 Mbps / 50 ms, 100-packet RED",
            "Jain's index",
            ">= 0.95 (RED spreads the drops)",
            0.95,
            &red_jain,
            "scenarios/basic/dumbbell-4-red.toml",
        ),
    ] {
        out.claims.push(Claim::mean_over_seeds(
            Paper::Baseline,
            figure,
            metric,
            paper_value,
            Check::AtLeast { min },
            &seeds,
            values,
            file,
            ctx.quick,
        ));
    }
    let bars = Bars {
        title: "Per-flow goodput, 4 NewReno flows (seed 1)".into(),
        y_label: "goodput (Mbit/s)".into(),
        categories: (1..=4).map(|i| format!("f{i}")).collect(),
        series: per_flow,
        references: vec![Reference {
            label: "fair share 2.5".into(),
            y: 2.5,
        }],
    };
    out.figures.push(Figure {
        id: "baseline-dumbbell-goodput".into(),
        title: bars.title.clone(),
        svg: bars.to_svg(),
    });
    let mut q = Plot::new(
        "Bottleneck queue, DropTail vs RED (seed 1)",
        "time (s)",
        "queue (packets)",
    );
    for (name, s) in queue_series {
        q = q.series(name, Style::Line, s);
    }
    out.figures.push(Figure {
        id: "baseline-dumbbell-queue".into(),
        title: q.title.clone(),
        svg: q.to_svg(),
    });
    Ok(out)
}

fn padhye(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let mut out = Outcome::default();
    let checked = [(0.005, 0.25), (0.01, 0.25), (0.02, 0.50)];
    let extra: &[f64] = if ctx.quick { &[] } else { &[0.002, 0.03, 0.05] };
    let mut measured = Vec::new();
    let mut model = Vec::new();
    let file = "scenarios/basic/random-loss.toml";
    let seeds = ctx.seeds();
    // The random loss draws from the seed: each checked loss rate runs at every seed, one
    // ratio per seed; the plot's extra loss rates run at the first seed only.
    let points: Vec<(f64, Option<f64>)> = checked
        .iter()
        .map(|&(p, t)| (p, Some(t)))
        .chain(extra.iter().map(|&p| (p, None)))
        .collect();
    for (p, tolerance) in points {
        let loss = ("topology.bottleneck.loss", format!("{}%", p * 100.0).into());
        let run_seeds = if tolerance.is_some() {
            &seeds[..]
        } else {
            &seeds[..1]
        };
        let (mut ratios, mut predictions) = (Vec::new(), Vec::new());
        for &seed in run_seeds {
            let sc = scenario_with(file, RANDOM_LOSS, std::slice::from_ref(&loss), Some(seed))?;
            let (r, _) = simulate(&sc)?;
            let f = &r.flows[0];
            // b = 2: delayed ACKs acknowledge every second segment.
            let predicted = equation::throughput(1448.0, f.mean_rtt_s, p, 2.0, f.mean_rto_s) * 8.0;
            measured.push((p * 100.0, f.goodput_bps / 1e6));
            predictions.push(predicted / 1e6);
            ratios.push(f.goodput_bps / predicted);
        }
        // The model's line: its prediction averaged over the seeds' measured RTT and RTO.
        model.push((
            p * 100.0,
            predictions.iter().sum::<f64>() / predictions.len() as f64,
        ));
        if let Some(t) = tolerance {
            out.claims.push(Claim::mean_over_seeds(
                Paper::Baseline,
                &format!(
                    "NewReno, 10 Mbps, 100 ms RTT, random loss p = {}%",
                    p * 100.0
                ),
                "goodput / Padhye model (b = 2, measured RTT and RTO)",
                &format!("1 ± {t}"),
                Check::Between {
                    lo: 1.0 - t,
                    hi: 1.0 + t,
                },
                &seeds,
                &ratios,
                file,
                ctx.quick,
            ));
        }
    }
    measured.sort_by(|a, b| a.0.total_cmp(&b.0));
    model.sort_by(|a, b| a.0.total_cmp(&b.0));
    let plot = Plot::new(
        "NewReno under random loss vs the Padhye model",
        "loss rate p (%)",
        "goodput (Mbit/s)",
    )
    .series("concord NewReno", Style::Points, measured)
    .series("Padhye model", Style::LinePoints, model);
    out.figures.push(Figure {
        id: "baseline-padhye".into(),
        title: plot.title.clone(),
        svg: plot.to_svg(),
    });
    Ok(out)
}
