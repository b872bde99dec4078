//! GCCA (Liu, Cheung & Baras, "Generic Congestion Control Through Network Coordination"): the
//! Fig. 4 test bed (Tables 1 and 2, Fig. 5), unresponsive traffic beside TCP, and push-back over
//! several hops.
//!
//! The paper's three parameter groups are not published; concord's are in the scenario files
//! `scenarios/gcca/testbed-{1,2,3}-{e2e,gcca}.toml` and listed in `gcca-testbed-groups.csv`.
//! In each group E2E and GCCA use the same RED parameters on both routers; GCCA adds its bucket
//! and message settings. The bottleneck's RED keeps a short queue (`min_th` 1, `max_th` 3
//! packets of 8 KB), and the groups differ in `max_p` and `w_q`. Under E2E every early drop
//! then comes with a window of a few segments, too small at times for three duplicate ACKs, so
//! some drops wait for the retransmission timer while the bottleneck idles: E2E delivers 2.08
//! to 2.33 Mbit/s of the 2.5 (the paper: 1.94 to 2.21), where GCCA, which drops nothing and
//! keeps the backlog in Router 1, delivers 2.43 to 2.48 (the paper: 2.32 to 2.37).
//!
//! Router 1's bucket has a floor of 80% of the bottleneck's rate. The paper gives no floor;
//! with one of 5% or 10% of Router 1's 10 Mbit/s, Router 2 runs dry before its average falls to
//! `min_th` and its NORMAL restores the bucket, and GCCA's transfer takes as long as E2E's or
//! longer (59.6 s against 57.7 s in group 1 with 5%).
//!
//! **What "end-to-end delay" is.** The paper's Table 1 ("Comparison of the End-to-End Delay",
//! 54-66 s) can only be the time the whole transfer took, and its one statement about delay
//! ("Table 1 shows the end-to-end delays in the experiments. The GCCA produces shorter delay
//! than E2E") is about that table. concord checks it as such (the Table 1 claim). The jitter of
//! Fig. 5 is measured as the paper's tool, DBS, measures at the application: each segment's
//! delay runs from its first transmission to its in-order delivery to the receiving application
//! ([`concord_sim::flow::Flow::application`]), so a retransmission and the wait of the segments
//! behind it show up, as E2E's "unpredictable jitters from time to time" do in Fig. 5.
//!
//! **The mean per-packet delay**, claimed against the conclusion's "better performance ... in
//! terms of network delay" (the paper gives no per-packet figure). concord's is higher under GCCA: about 1.3 times E2E's at the application and 1.8 times
//! across the network (summed over the groups; `gcca-testbed.csv`, figure
//! `gcca-testbed-delay`). With one window-limited TCP flow, Little's law ties the mean delay to
//! the mean window, and GCCA cuts the window later than E2E: Router 2 holds its queue while it
//! pushes back, Router 1 holds what its throttled bucket cannot send, and the host's window is
//! halved only once Router 1's own average passes its `min_th`, where E2E halves it at each
//! early drop. Section 2 says as much: "Upstream nodes buffer more packets when they slow down
//! their sending rates"; only "lasting congestion may be referred back to the host as a last
//! resort". With the earlier groups, whose bottleneck queues were longer (`min_th` 4 to 8),
//! the same held at 1.4 to 1.5 times, and faster push-back did not change it: a bucket step of
//! 50%, or 100% with Router 1 signalling the host on every packet above `min_th`, brought
//! GCCA's delay to E2E's at best, and only by making its transfers slower than E2E's.

use crate::claim::{fmt_num, Check, Claim, Paper};
use crate::plot::{Bars, Plot, Style};
use crate::runner::{
    scenario_from, scenario_with, simulate, Ctx, Experiment, Figure, Outcome, ReproError,
};
use concord_cc::time::Duration;
use concord_sim::flow::Flow;
use concord_sim::gcca::NodeGcca;
use concord_sim::results::RunResults;
use concord_sim::scenario::NodeKind;
use concord_sim::Simulator;

/// The test bed's scenarios: (group, E2E file and text, GCCA file and text).
const TESTBED: [(u32, &str, &str, &str, &str); 3] = [
    (
        1,
        "scenarios/gcca/testbed-1-e2e.toml",
        include_str!("../../../scenarios/gcca/testbed-1-e2e.toml"),
        "scenarios/gcca/testbed-1-gcca.toml",
        include_str!("../../../scenarios/gcca/testbed-1-gcca.toml"),
    ),
    (
        2,
        "scenarios/gcca/testbed-2-e2e.toml",
        include_str!("../../../scenarios/gcca/testbed-2-e2e.toml"),
        "scenarios/gcca/testbed-2-gcca.toml",
        include_str!("../../../scenarios/gcca/testbed-2-gcca.toml"),
    ),
    (
        3,
        "scenarios/gcca/testbed-3-e2e.toml",
        include_str!("../../../scenarios/gcca/testbed-3-e2e.toml"),
        "scenarios/gcca/testbed-3-gcca.toml",
        include_str!("../../../scenarios/gcca/testbed-3-gcca.toml"),
    ),
];
const UNRESPONSIVE_RED: &str = include_str!("../../../scenarios/gcca/unresponsive-red.toml");
const UNRESPONSIVE_GCCA: &str = include_str!("../../../scenarios/gcca/unresponsive-gcca.toml");
const MULTIHOP: &str = include_str!("../../../scenarios/gcca/multihop.toml");

/// The test bed's settings that are concord's: the paper publishes none of its parameter groups.
const GROUPS: &str = "parameter groups concord chose (the paper publishes none): bottleneck RED min_th 1 / max_th 3 packets, Router 1's bucket floored at 80% of the bottleneck";
/// Router 1's bucket floor in the test-bed files, the queue of their second link (r1 -> r2;
/// 20% of its 10 Mbit/s: 80% of the bottleneck), and the earlier 5% (0.5 Mbit/s: 20% of the
/// bottleneck) the claims audit reran.
const FLOOR_KEY: &str = "link[1].queue.min_rate";
const LOW_FLOOR: &str = "5%";
/// The test bed's settings with Router 1's bucket at the 5% floor.
const GROUPS_LOW_FLOOR: &str = "parameter groups concord chose (the paper publishes none): bottleneck RED min_th 1 / max_th 3 packets, Router 1's bucket floored at 5% of its 10 Mbit/s (20% of the bottleneck) instead of concord's 80% of the bottleneck";

/// One row of the paper's Tables 1 and 2: (group, GCCA s, E2E s, GCCA Mbit/s, E2E Mbit/s).
type PaperRow = (u32, f64, f64, f64, f64);

/// The paper's Tables 1 and 2 per experiment.
const PAPER_TABLES: [PaperRow; 3] = [
    (1, 54.0, 58.0, 2.37, 2.21),
    (2, 54.0, 66.0, 2.37, 1.94),
    (3, 55.0, 64.0, 2.32, 2.00),
];

/// The RED settings of each router queue of a test-bed scenario, in file order (Router 1's
/// queue toward Router 2, then Router 2's toward Host B), as `limit=30pkt min_th=1 ...`.
fn red_settings(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("queue = {") && l.contains("kind = \"red\""))
        .map(|l| {
            ["limit", "min_th", "max_th", "w_q", "max_p"]
                .iter()
                .filter_map(|k| {
                    let from = l.find(&format!(" {k} = "))? + k.len() + 4;
                    let v = l[from..].split([',', ' ']).next()?.trim_matches('"');
                    Some(format!("{k}={v}"))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The unresponsive and multi-hop scenarios' bottleneck, in bit/s.
const BOTTLENECK_BPS: f64 = 10e6;

/// The GCCA experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "gcca/testbed",
            paper: Paper::Gcca,
            title: "Fig. 4 test bed, three parameter groups: E2E (TCP over RED) vs GCCA",
            run: testbed,
        },
        Experiment {
            id: "gcca/unresponsive",
            paper: Paper::Gcca,
            title: "A UDP flow at 150% of the bottleneck beside TCP: RED vs GCCA",
            run: unresponsive,
        },
        Experiment {
            id: "gcca/multihop",
            paper: Paper::Gcca,
            title: "Push-back over four GCCA routers to the source hosts",
            run: multihop,
        },
    ]
}

/// Packets dropped in routers' queues (full or early) and on links leaving routers.
fn router_drops(sim: &Simulator) -> u64 {
    sim.channels()
        .iter()
        .filter(|c| sim.nodes()[c.from as usize].kind == NodeKind::Router)
        .map(|c| c.stats().queue_drops() + c.stats().wire_losses)
        .sum()
}

/// One group's result at one seed: (group, E2E, GCCA).
type Row = (u32, Transfer, Transfer);

/// What the test bed measures of one run.
#[derive(Clone, Copy, Debug, Default)]
struct Transfer {
    /// Time until the last byte was acknowledged, in s (the paper's Table 1).
    time_s: f64,
    /// Bytes over that time, in bit/s (Table 2).
    throughput_bps: f64,
    /// Mean one-way delay of data packets from first transmission to in-order delivery to the
    /// application, in ms.
    delay_ms: f64,
    /// Mean one-way delay of data packets across the network (transmission to arrival), in ms.
    network_delay_ms: f64,
    /// 99th percentile of the application-level jitter, in ms (Fig. 5).
    jitter_p99_ms: f64,
    /// 99th percentile of the network jitter, in ms.
    network_jitter_p99_ms: f64,
    /// Packets dropped in the routers.
    drops: u64,
}

fn transfer(r: &RunResults, sim: &Simulator) -> Transfer {
    let f = &r.flows[0];
    let flow: &Flow = &sim.flows()[0];
    let time_s = f.completion_s.unwrap_or(sim.end().as_secs_f64());
    Transfer {
        time_s,
        throughput_bps: f.delivered_bytes_total as f64 * 8.0 / time_s.max(1e-9),
        delay_ms: flow.application.delay.mean().as_secs_f64() * 1e3,
        network_delay_ms: flow.network.delay.mean().as_secs_f64() * 1e3,
        jitter_p99_ms: flow.application.jitter.quantile(0.99).as_secs_f64() * 1e3,
        network_jitter_p99_ms: flow.network.jitter.quantile(0.99).as_secs_f64() * 1e3,
        drops: router_drops(sim),
    }
}

/// The cumulative distribution of a flow's jitter, in ms.
fn jitter_cdf(flow: &Flow) -> Vec<(f64, f64)> {
    let total = flow.application.jitter.count().max(1) as f64;
    let mut seen = 0u64;
    flow.application
        .jitter
        .buckets()
        .map(|(lo, width, n)| {
            seen += n;
            ((lo + width).as_secs_f64() * 1e3, seen as f64 / total)
        })
        .collect()
}

/// Queue occupancy samples of channel `name`, as (s, packets).
fn queue_series(sim: &Simulator, name: &str) -> Vec<(f64, f64)> {
    let Some(c) = sim.channels().iter().position(|c| c.name == name) else {
        return Vec::new();
    };
    sim.queue_samples()
        .iter()
        .filter(|s| s.channel as usize == c)
        .map(|s| (s.at.as_secs_f64(), s.packets as f64))
        .collect()
}

fn testbed(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let mut out = Outcome::default();
    let mut csv = String::from(
        "seed,group,scheme,transfer_time_s,throughput_mbps,app_delay_mean_ms,app_jitter_p99_ms,\
         network_delay_mean_ms,network_jitter_p99_ms,router_drops\n",
    );
    let mut fig5 = Plot::new(
        "Fig. 5 analogue: jitter (|delay difference of successive packets|), group 1",
        "jitter (ms)",
        "fraction of packets",
    );
    let mut queues = Plot::new("Test bed queues, group 1", "time (s)", "queue (packets)");
    let seeds = ctx.seeds();
    let mut per_seed: Vec<Vec<Row>> = Vec::new();
    // (seed, group, E2E, GCCA at the 5% floor).
    let mut low_floor: Vec<(u64, u32, Transfer, Transfer)> = Vec::new();
    for &seed in &seeds {
        let first = seed == seeds[0];
        let mut rows = Vec::new();
        for (group, e2e_file, e2e_text, gcca_file, gcca_text) in TESTBED {
            let mut pair = [Transfer::default(); 2];
            for (k, (file, text, scheme)) in
                [(e2e_file, e2e_text, "E2E"), (gcca_file, gcca_text, "GCCA")]
                    .into_iter()
                    .enumerate()
            {
                let mut sc = scenario_from(file, text, Some(seed))?;
                if ctx.quick {
                    // The 16 MiB transfer ends by about 55 s under GCCA and 65 s under E2E; the
                    // quick run stops well after both.
                    sc.duration = sc.duration.min(Duration::from_secs(90));
                }
                let (r, sim) = simulate(&sc)?;
                let t = transfer(&r, &sim);
                pair[k] = t;
                csv.push_str(&format!(
                    "{seed},{group},{scheme},{:.3},{:.4},{:.1},{:.1},{:.1},{:.1},{}\n",
                    t.time_s,
                    t.throughput_bps / 1e6,
                    t.delay_ms,
                    t.jitter_p99_ms,
                    t.network_delay_ms,
                    t.network_jitter_p99_ms,
                    t.drops
                ));
                if group == 1 && first {
                    fig5 = fig5.series(scheme, Style::Line, jitter_cdf(&sim.flows()[0]));
                    for ch in ["r1->r2", "r2->b"] {
                        queues = queues.series(
                            &format!("{scheme} {ch}"),
                            Style::Line,
                            queue_series(&sim, ch),
                        );
                    }
                }
            }
            // GCCA again with Router 1's bucket at the 5% floor, beside the same E2E run.
            let mut sc = scenario_with(
                gcca_file,
                gcca_text,
                &[(FLOOR_KEY, LOW_FLOOR.into())],
                Some(seed),
            )?;
            if ctx.quick {
                sc.duration = sc.duration.min(Duration::from_secs(90));
            }
            let (r, sim) = simulate(&sc)?;
            low_floor.push((seed, group, pair[0], transfer(&r, &sim)));
            rows.push((group, pair[0], pair[1]));
        }
        per_seed.push(rows);
    }
    let rows = per_seed[0].clone();
    // Every figure below is measured seed by seed; a claim's value is its mean over the seeds
    // with a 95% interval.
    let over =
        |f: &dyn Fn(&[Row]) -> f64| -> Vec<f64> { per_seed.iter().map(|rows| f(rows)).collect() };
    let ratio_of = |rows: &[Row], f: &dyn Fn(&Transfer) -> f64| {
        let g: f64 = rows.iter().map(|(_, _, g)| f(g)).sum();
        let e: f64 = rows.iter().map(|(_, e, _)| f(e)).sum();
        g / e.max(1e-12)
    };
    let files = "scenarios/gcca/testbed-{1,2,3}-{e2e,gcca}.toml";
    let claim = |figure: &str, metric: &str, paper: &str, check: Check, values: Vec<f64>| {
        Claim::mean_over_seeds(
            Paper::Gcca,
            figure,
            metric,
            paper,
            check,
            &seeds,
            &values,
            files,
            ctx.quick,
        )
        .deviation(GROUPS)
    };
    out.claims.push(
        claim(
            "Fig. 4 test bed, GCCA, groups 1-3",
            "packets dropped in Router 1 and Router 2, all groups",
            "0",
            Check::AtMost { max: 0.0 },
            over(&|rows| rows.iter().map(|(_, _, g)| g.drops as f64).sum()),
        )
        .paper(
            "4. Implementation and Experiments",
            "In addition, no packet loss is observed for GCCA in the experiments.",
        )
        .target(0.0),
    );
    const T1: &str = "Table 1 shows the end-to-end delays in the experiments. The GCCA produces shorter delay than E2E even in such a small setting.";
    const T2: &str =
        "We can see that the GCCA increases the throughput by as many as 15% on average.";
    const SECTION: &str = "4. Implementation and Experiments";
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (Table 2)",
            "throughput GCCA / E2E (16 MiB over the transfer time), summed over groups",
            "2.35 / 2.05 = 1.15 (+15% on average)",
            Check::Relative {
                target: 1.15,
                rel: 0.1,
            },
            over(&|rows| ratio_of(rows, &|t| t.throughput_bps)),
        )
        .paper(SECTION, T2)
        .target(1.15),
    );
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (Table 1)",
            "end-to-end delay of the transfer (time to deliver 16 MiB) GCCA / E2E, summed over groups",
            "54.3 / 62.7 = 0.87",
            Check::AtMost { max: 1.0 },
            over(&|rows| ratio_of(rows, &|t| t.time_s)),
        )
        .paper(SECTION, T1),
    );
    // Tables 1 and 2 summed again with Router 1's bucket at the 5% floor: the same targets
    // and tolerances as the rows above, a second deviation.
    let low_ratio = |f: &dyn Fn(&Transfer) -> f64| -> Vec<f64> {
        seeds
            .iter()
            .map(|s| {
                let of_seed = low_floor.iter().filter(|r| r.0 == *s);
                let g: f64 = of_seed.clone().map(|r| f(&r.3)).sum();
                let e: f64 = of_seed.map(|r| f(&r.2)).sum();
                g / e.max(1e-12)
            })
            .collect()
    };
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (Table 2), bucket floor 5%",
            "throughput GCCA / E2E (16 MiB over the transfer time), summed over groups",
            "2.35 / 2.05 = 1.15 (+15% on average)",
            Check::Relative {
                target: 1.15,
                rel: 0.1,
            },
            low_ratio(&|t| t.throughput_bps),
        )
        .paper(SECTION, T2)
        .deviation(GROUPS_LOW_FLOOR)
        .target(1.15),
    );
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (Table 1), bucket floor 5%",
            "end-to-end delay of the transfer (time to deliver 16 MiB) GCCA / E2E, summed over groups",
            "54.3 / 62.7 = 0.87",
            Check::AtMost { max: 1.0 },
            low_ratio(&|t| t.time_s),
        )
        .paper(SECTION, T1)
        .deviation(GROUPS_LOW_FLOOR),
    );
    for (i, &(group, p_gs, p_es, p_gm, p_em)) in PAPER_TABLES.iter().enumerate() {
        let at = |f: &dyn Fn(&Row) -> f64| -> Vec<f64> {
            per_seed
                .iter()
                .map(|rows| rows.get(i).filter(|r| r.0 == group).map_or(f64::NAN, f))
                .collect()
        };
        let row = |table: &str| format!("Fig. 4 test bed, group {group} ({table}, row {group})");
        for (table, what, paper_v, unit, f, quote) in [
            (
                "Table 1",
                "GCCA transfer time",
                p_gs,
                "s",
                &(|r: &Row| r.2.time_s) as &dyn Fn(&Row) -> f64,
                T1,
            ),
            (
                "Table 1",
                "E2E transfer time",
                p_es,
                "s",
                &|r| r.1.time_s,
                T1,
            ),
            (
                "Table 2",
                "GCCA throughput",
                p_gm,
                "Mbit/s",
                &|r| r.2.throughput_bps / 1e6,
                T2,
            ),
            (
                "Table 2",
                "E2E throughput",
                p_em,
                "Mbit/s",
                &|r| r.1.throughput_bps / 1e6,
                T2,
            ),
        ] {
            out.claims.push(
                claim(
                    &row(table),
                    &format!("{what} ({unit})"),
                    &fmt_num(paper_v),
                    Check::Relative {
                        target: paper_v,
                        rel: 0.1,
                    },
                    at(f),
                )
                .paper(SECTION, quote)
                .target(paper_v),
            );
        }
        out.claims.push(
            claim(
                &row("Table 1"),
                "transfer time GCCA / E2E",
                &format!("{p_gs} / {p_es} = {}", fmt_num(p_gs / p_es)),
                Check::AtMost { max: 1.0 },
                at(&|r| r.2.time_s / r.1.time_s),
            )
            .paper(SECTION, T1),
        );
        out.claims.push(
            claim(
                &row("Table 2"),
                "throughput GCCA / E2E",
                &format!("{p_gm} / {p_em} = {}", fmt_num(p_gm / p_em)),
                Check::AtLeast { min: 1.0 },
                at(&|r| r.2.throughput_bps / r.1.throughput_bps),
            )
            .paper(SECTION, T2),
        );
    }
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (Fig. 5)",
            "99th percentile of the jitter (DBS-style: first transmission to delivery to the \
             application) GCCA / E2E, summed over groups",
            "< 1 (Fig. 5: GCCA's jitter stays within a small bound)",
            Check::AtMost { max: 1.0 },
            over(&|rows| ratio_of(rows, &|t| t.jitter_p99_ms)),
        )
        .paper(
            SECTION,
            "We can see that jitters from GCCA, i.e., variances of packet delay, are always within a small bound. By contrast, E2E produces unpredictable jitters from time to time.",
        ),
    );
    // The conclusion's "network delay": the mean per-packet delay, at the application and
    // across the network.
    const CONCLUSION: &str = "the architecture can produce better performance than the widely used end-to-end control scheme in terms of network delay, network throughput, and the jitter";
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (conclusion: network delay)",
            "mean per-packet delay to the application GCCA / E2E, summed over groups",
            "< 1 (better network delay)",
            Check::AtMost { max: 1.0 },
            over(&|rows| ratio_of(rows, &|t| t.delay_ms)),
        )
        .paper("5. Conclusions", CONCLUSION),
    );
    out.claims.push(
        claim(
            "Fig. 4 test bed, groups 1-3 (conclusion: network delay)",
            "mean per-packet delay across the network GCCA / E2E, summed over groups",
            "< 1 (better network delay)",
            Check::AtMost { max: 1.0 },
            over(&|rows| ratio_of(rows, &|t| t.network_delay_ms)),
        )
        .paper("5. Conclusions", CONCLUSION),
    );
    let cats: Vec<String> = rows.iter().map(|(g, _, _)| format!("group {g}")).collect();
    let bars = |title: &str, y: &str, f: &dyn Fn(&Transfer) -> f64| Bars {
        title: title.into(),
        y_label: y.into(),
        categories: cats.clone(),
        series: vec![
            ("E2E".into(), rows.iter().map(|(_, e, _)| f(e)).collect()),
            ("GCCA".into(), rows.iter().map(|(_, _, g)| f(g)).collect()),
        ],
        references: Vec::new(),
    };
    // The paper's rows beside concord's, group by group.
    let paper = |f: &dyn Fn(&PaperRow) -> f64| -> Vec<f64> {
        rows.iter()
            .map(|(g, _, _)| PAPER_TABLES.iter().find(|t| t.0 == *g).map_or(f64::NAN, f))
            .collect()
    };
    let mut t2 = bars(
        "Table 2 analogue: throughput",
        "throughput (Mbit/s)",
        &|t| t.throughput_bps / 1e6,
    );
    t2.series.push(("paper E2E".into(), paper(&|t| t.4)));
    t2.series.push(("paper GCCA".into(), paper(&|t| t.3)));
    let mut t1 = bars(
        "Table 1 analogue: end-to-end delay of the 16 MiB transfer",
        "transfer time (s)",
        &|t| t.time_s,
    );
    t1.series.push(("paper E2E".into(), paper(&|t| t.2)));
    t1.series.push(("paper GCCA".into(), paper(&|t| t.1)));
    // The conclusion's "network delay", per packet (claimed above).
    let mut d = bars("Mean one-way delay per packet", "delay (ms)", &|t| {
        t.delay_ms
    });
    d.series[0].0 = "E2E, application".into();
    d.series[1].0 = "GCCA, application".into();
    d.series.push((
        "E2E, network".into(),
        rows.iter().map(|(_, e, _)| e.network_delay_ms).collect(),
    ));
    d.series.push((
        "GCCA, network".into(),
        rows.iter().map(|(_, _, g)| g.network_delay_ms).collect(),
    ));
    let j = bars(
        "99th percentile of the jitter (to the application)",
        "jitter (ms)",
        &|t| t.jitter_p99_ms,
    );
    out.figures.push(Figure::new(
        "gcca-table2-throughput",
        &t2.title,
        t2.to_svg(),
    ));
    out.figures.push(Figure::new(
        "gcca-table1-transfer-time",
        &t1.title,
        t1.to_svg(),
    ));
    out.figures
        .push(Figure::new("gcca-testbed-delay", &d.title, d.to_svg()));
    out.figures
        .push(Figure::new("gcca-testbed-jitter-p99", &j.title, j.to_svg()));
    out.figures
        .push(Figure::new("gcca-fig5-jitter", &fig5.title, fig5.to_svg()));
    out.figures.push(Figure::new(
        "gcca-testbed-queues",
        &queues.title,
        queues.to_svg(),
    ));
    out.raw.push(("gcca-testbed.csv".into(), csv));
    // The parameter groups (the paper does not publish its own) beside the paper's Tables 1
    // and 2 and concord's figures for the same group.
    let mut groups = String::from(
        "group,router1_red,router2_red,paper_gcca_s,paper_e2e_s,ours_gcca_s,ours_e2e_s,\
         paper_gcca_mbps,paper_e2e_mbps,ours_gcca_mbps,ours_e2e_mbps\n",
    );
    for ((group, _, e2e_text, _, _), (_, e, g)) in TESTBED.iter().zip(&rows) {
        let red = red_settings(e2e_text);
        let (_, p_gs, p_es, p_gm, p_em) = PAPER_TABLES
            .iter()
            .copied()
            .find(|t| t.0 == *group)
            .unwrap_or((*group, f64::NAN, f64::NAN, f64::NAN, f64::NAN));
        groups.push_str(&format!(
            "{group},{},{},{p_gs},{p_es},{:.1},{:.1},{p_gm},{p_em},{:.3},{:.3}\n",
            red.first().map_or("", String::as_str),
            red.get(1).map_or("", String::as_str),
            g.time_s,
            e.time_s,
            g.throughput_bps / 1e6,
            e.throughput_bps / 1e6,
        ));
    }
    out.raw.push(("gcca-testbed-groups.csv".into(), groups));
    Ok(out)
}

/// TCP beside an unresponsive UDP flow, under plain RED and under GCCA. RED's random drops and
/// GCCA's RED detector draw from the seed: every claim runs over the seeds, one value per seed;
/// the figure and the flows' table are the first seed's.
fn unresponsive(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let mut out = Outcome::default();
    let mut goodput = Plot::new(
        "TCP beside a UDP flow at 150% of the bottleneck",
        "time (s)",
        "goodput (Mbit/s)",
    );
    let seeds = ctx.seeds();
    // Per scheme (RED, GCCA), per seed: TCP share of the bottleneck, UDP delivered / offered,
    // packets dropped in the routers.
    let mut tcp_share = [Vec::new(), Vec::new()];
    let mut udp_delivered = [Vec::new(), Vec::new()];
    let mut drops = [Vec::new(), Vec::new()];
    for (k, (file, text, scheme)) in [
        (
            "scenarios/gcca/unresponsive-red.toml",
            UNRESPONSIVE_RED,
            "RED",
        ),
        (
            "scenarios/gcca/unresponsive-gcca.toml",
            UNRESPONSIVE_GCCA,
            "GCCA",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        for &seed in &seeds {
            let mut sc = scenario_from(file, text, Some(seed))?;
            if ctx.quick {
                sc.duration = sc.duration.min(Duration::from_secs(15));
            }
            let (r, sim) = simulate(&sc)?;
            let udp_rate = 15e6 / BOTTLENECK_BPS;
            tcp_share[k].push(r.flows[0].goodput_bps / BOTTLENECK_BPS);
            udp_delivered[k].push(r.flows[1].goodput_bps / BOTTLENECK_BPS / udp_rate);
            drops[k].push(router_drops(&sim) as f64);
            if seed != seeds[0] {
                continue;
            }
            for (i, name) in [(0usize, "TCP"), (1, "UDP")] {
                let bin = sim.flows()[i].goodput.bin().as_secs_f64();
                let pts = sim.flows()[i]
                    .goodput
                    .rates_bps(sim.end())
                    .iter()
                    .enumerate()
                    .map(|(j, b)| (j as f64 * bin, b / 1e6))
                    .collect();
                goodput = goodput.series(&format!("{scheme} {name}"), Style::Line, pts);
            }
            out.raw.push((
                format!("gcca-unresponsive-{}-flows.json", scheme.to_lowercase()),
                serde_json::to_string_pretty(&r.flows).unwrap_or_default(),
            ));
        }
    }
    let quick = ctx.quick;
    let red_file = "scenarios/gcca/unresponsive-red.toml";
    let gcca_file = "scenarios/gcca/unresponsive-gcca.toml";
    let claim = |figure: &str, metric: &str, paper: &str, check: Check, file: &str, v: &[f64]| {
        Claim::mean_over_seeds(
            Paper::Gcca,
            figure,
            metric,
            paper,
            check,
            &seeds,
            v,
            file,
            quick,
        )
    };
    out.claims.push(claim(
        "TCP + UDP at 15 Mbit/s, 10 Mbit/s bottleneck, plain RED",
        "TCP goodput / bottleneck, after the 5 s warm-up",
        "<= 0.1 (the TCP flow starves; section 1)",
        Check::AtMost { max: 0.1 },
        red_file,
        &tcp_share[0],
    ));
    out.claims.push(claim(
        "TCP + UDP at 15 Mbit/s, 10 Mbit/s bottleneck, GCCA",
        "TCP goodput / bottleneck, after the 5 s warm-up",
        ">= 0.4 (unresponsive traffic is throttled at its host; section 3.3)",
        Check::AtLeast { min: 0.4 },
        gcca_file,
        &tcp_share[1],
    ));
    out.claims.push(claim(
        "TCP + UDP at 15 Mbit/s, 10 Mbit/s bottleneck, GCCA",
        "UDP delivered / UDP offered, after the warm-up",
        "<= 0.6 (its host's leaky bucket holds it back)",
        Check::AtMost { max: 0.6 },
        gcca_file,
        &udp_delivered[1],
    ));
    out.claims.push(claim(
        "TCP + UDP at 15 Mbit/s, 10 Mbit/s bottleneck, GCCA",
        "packets dropped in the routers",
        "0 (no loss in the network)",
        Check::AtMost { max: 0.0 },
        gcca_file,
        &drops[1],
    ));
    out.figures.push(Figure::new(
        "gcca-unresponsive-goodput",
        &goodput.title,
        goodput.to_svg(),
    ));
    Ok(out)
}

/// Push-back over four GCCA routers in a line. The routers' RED detectors draw from the seed:
/// every claim runs over the seeds, one value per seed; the figures and the flows' table are
/// the first seed's.
fn multihop(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let file = "scenarios/gcca/multihop.toml";
    const HOPS: [&str; 4] = ["r1->r2", "r2->r3", "r3->r4", "r4->b"];
    let seeds = ctx.seeds();
    let mut at_hosts = Vec::new();
    let mut drops = Vec::new();
    // Per hop: its queue limit (packets) and its largest queue at each seed.
    let mut largest: Vec<(&str, f64, Vec<f64>)> = Vec::new();
    let mut first = None;
    for &seed in &seeds {
        let mut sc = scenario_from(file, MULTIHOP, Some(seed))?;
        if ctx.quick {
            sc.duration = sc.duration.min(Duration::from_secs(15));
        }
        let (r, sim) = simulate(&sc)?;
        at_hosts.push(
            sim.nodes()
                .iter()
                .enumerate()
                .filter(|(i, _)| matches!(sim.gcca().nodes.get(*i), Some(NodeGcca::Host(_))))
                .map(|(i, _)| sim.gcca().stats[i].congestion_received)
                .sum::<u64>() as f64,
        );
        drops.push(router_drops(&sim) as f64);
        for hop in HOPS {
            let Some(ch) = sim.channels().iter().find(|c| c.name == hop) else {
                continue;
            };
            let limit = ch
                .disc()
                .gcca()
                .map(|p| p.detector.red().config().limit.value())
                .unwrap_or(f64::INFINITY);
            let max = ch.stats().max_queue_packets as f64;
            match largest.iter_mut().find(|(h, _, _)| *h == hop) {
                Some((_, _, v)) => v.push(max),
                None => largest.push((hop, limit, vec![max])),
            }
        }
        if first.is_none() {
            first = Some((r, sim));
        }
    }
    let Some((r, sim)) = first else {
        return Err(ReproError::Simulation {
            name: file.into(),
            message: "no seeds to run; QUICK_SEEDS and FULL_SEEDS are at least 1".into(),
        });
    };
    let mut out = Outcome::default();
    let claim = |metric: &str, paper: &str, check: Check, v: &[f64]| {
        Claim::mean_over_seeds(
            Paper::Gcca,
            "4 GCCA routers in a line, bottleneck at the last hop, TCP + UDP at 120%",
            metric,
            paper,
            check,
            &seeds,
            v,
            file,
            ctx.quick,
        )
    };
    out.claims.push(claim(
        "CONGESTION messages received by the source hosts",
        "> 0 (lasting congestion is referred back to the host; section 2)",
        Check::AtLeast { min: 1.0 },
        &at_hosts,
    ));
    let mut queues = Plot::new(
        "Push-back over four GCCA routers: queue at each hop",
        "time (s)",
        "queue (packets)",
    );
    for (hop, limit, v) in &largest {
        out.claims.push(claim(
            &format!("largest queue at {hop} (packets; limit {limit})"),
            "below the limit (push-back bounds every queue)",
            Check::AtMost { max: limit - 1.0 },
            v,
        ));
        queues = queues.series(hop, Style::Line, queue_series(&sim, hop));
    }
    out.claims.push(claim(
        "packets dropped in the routers",
        "0",
        Check::AtMost { max: 0.0 },
        &drops,
    ));
    let mut rates = Plot::new(
        "Push-back: leaky bucket rate of each hop after each GCCP message",
        "time (s)",
        "rate (Mbit/s)",
    );
    for hop in ["r1->r2", "r2->r3", "r3->r4"] {
        if let Some(p) = sim
            .channels()
            .iter()
            .find(|c| c.name == hop)
            .and_then(|c| c.disc().gcca())
        {
            let pts = p
                .rates
                .iter()
                .map(|c| (c.at.as_secs_f64(), c.rate.bps_f64() / 1e6))
                .collect();
            rates = rates.series(hop, Style::Line, pts);
        }
    }
    out.figures.push(Figure::new(
        "gcca-multihop-queues",
        &queues.title,
        queues.to_svg(),
    ));
    out.figures.push(Figure::new(
        "gcca-multihop-rates",
        &rates.title,
        rates.to_svg(),
    ));
    out.raw.push((
        "gcca-multihop-flows.json".into(),
        serde_json::to_string_pretty(&r.flows).unwrap_or_default(),
    ));
    Ok(out)
}
