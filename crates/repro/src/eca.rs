//! ECA (Barham, "Explicit Congestion Avoidance", MSR-TR-2001-100): the simulation results of
//! section IV.B on the parking lot of Figs. 3 and 4.
//!
//! - Fig. 5 (steady-state fairness and utilisation): 7 bandwidths x 7 end-to-end delays, 100 s
//!   each, for TCP over drop-tail, TCP with ECN over RED, and ECA with flow weights 1..5.
//! - Fig. 6 (coefficient of variation of 100 ms flow rates) at {1, 10, 100} Mbit/s x
//!   {1, 10, 100} ms, from the same runs.
//! - Fig. 7 (per-packet delay distributions) at 10 Mbit/s, 10 ms, 500-packet queues.
//! - Fig. 8 (HTTP response times): the 10 Mbit/s, 10 ms parking lot with a web workload at 30%
//!   of capacity (`concord_cc::eca::WebGenerator`, Mah/WebTraf-like) on the horizontal path
//!   beside the long-lived flows, each object a finite TCP transfer (under ECA a managed flow of
//!   weight 1). These rows run without the SYN exchange (as they always have), so a response
//!   time runs from the request to the last byte's ACK, without the SYN losses of section IV.B.4.
//! - Fig. 9 (HTTP response times, ECT on SYNs): Fig. 8's TCP and ECN/RED runs again with a SYN
//!   exchange before each request's data (`handshake` with ns-2's 6 s SYN timer, the paper's
//!   "initial value of 6 seconds"), over ECN/RED with SYNs ECT(0) or not (RFC 3168 section
//!   6.1.1; the paper's modified ns-2 sets it), and over TCP/drop-tail. The measure is the mean
//!   response time of the completed 1-20-segment requests per seed, as a ratio; "about a 30%
//!   improvement" is a ratio of 0.7, judged within 0.55-0.85. The paper-setting row compares
//!   ECT on SYNs with SYNs not ECT (what the modification changed); a second row, labelled as a
//!   reading, compares it with TCP, which the paper's sentence also names.
//!
//! The scenarios are `scenarios/eca/parking-lot-{tcp,ecn,eca}.toml` (the 10 Mbit/s, 10 ms
//! point); each grid point rewrites the rate, the link delays (1/9 horizontal, 4/9 vertical),
//! the buffer (20 packets per Mbit/s), RED's thresholds (25% / 75%), TCP's receive window and
//! the WTP host queue. Shares are of the traffic measured at each router hop: the horizontal
//! flows, and per weight the mean of the seven vertical flows of that weight, each hop carrying
//! one of them.
//!
//! Quick mode runs the nine corner points {1, 10, 100} Mbit/s x {1, 10, 100} ms for 40 s with
//! a 15 s warm-up, except the 1 Mbit/s points, which run the full 100 s with a 20 s warm-up:
//! there a flow delivers under one packet per 100 ms bin and 25 s of bins do not settle Fig. 6's
//! order of TCP and ECN/RED (their CoVs differ by about 7% at 1 Mbit/s, 1 ms). Quick mode
//! checks the same claims with the same tolerances as the full run.
//!
//! Fig. 5c's utilisation: the paper gives the target twice, as the estimator's 90% (section
//! IV.A.2) and, describing the figure, as "close to the target 80% point" (section IV.B.1).
//! The estimator (arrivals per 100 ms against the target, x1.05 / x0.99, nothing carried over)
//! settles where about 17% of the intervals are above the target (0.17 ln 1.05 = 0.83 ln(1 /
//! 0.99)), so the mean arrival rate sits below the target by as much as the per-interval count
//! varies, which is how a 90% target shows as about 80% in a figure: concord's hops run at
//! 85-89% from 2 Mbit/s up and at 76-77% at 1 Mbit/s, where an interval holds 7.5 packets at the
//! target (the paper's prototype results at 1 Mbit/s "suffer, to some extent, from the fact that
//! the MTU is relatively large compared with the link capacity", section V.C). The paper-setting
//! row judges each point against the configured 90% target, 5 points either side; the 80%
//! reading of the figure's text is a second row, labelled as a deviation. Section
//! III.A.2's alternative, L up or down on whether a virtual queue served at the target is "full
//! or empty" (`LoadRule::VirtualQueue`), carries the backlog over, but the paper gives no
//! threshold and the result hangs on it (at 1 Mbit/s 54% with a one-packet threshold, 80-84%
//! with four packets, which also pulls 10 Mbit/s, 100 ms down to 84%); a longer interval at
//! 1 Mbit/s (200 ms) gives 84-86%; the default stays the rule the paper's simulation and
//! prototype used.
//!
//! What "flow rate" means for Fig. 6: the goodput each receiver saw in each 100 ms bin of the
//! measurement window; flows that delivered nothing in the window (TCP's starved horizontal
//! flows) have no defined variation and are left out of the mean. Queueing delay for Fig. 7: a packet's one-way delay minus the smallest
//! one-way delay of its set (propagation plus store-and-forward), the network part only (under
//! ECA a packet's clock starts when it leaves the host's shaper).

use crate::claim::{fmt_num, Check, Claim, Paper};
use crate::plot::{Plot, Style};
use crate::runner::ReproError;
use crate::runner::{scenario_with, simulate, Ctx, Experiment, Figure, Outcome, Override};
use concord_cc::eca::{WebConfig, WebGenerator};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
use concord_sim::flow::Agent;
use concord_sim::metrics::series::coefficient_of_variation;
use concord_sim::metrics::Histogram;
use concord_sim::scenario::{FlowKind, NodeKind};
use concord_sim::Simulator;

const TCP: (&str, &str) = (
    "scenarios/eca/parking-lot-tcp.toml",
    include_str!("../../../scenarios/eca/parking-lot-tcp.toml"),
);
const ECN: (&str, &str) = (
    "scenarios/eca/parking-lot-ecn.toml",
    include_str!("../../../scenarios/eca/parking-lot-ecn.toml"),
);
const ECA: (&str, &str) = (
    "scenarios/eca/parking-lot-eca.toml",
    include_str!("../../../scenarios/eca/parking-lot-eca.toml"),
);

/// The bandwidths of Fig. 5, in Mbit/s.
const BANDWIDTHS: [u64; 7] = [1, 2, 5, 10, 20, 50, 100];
/// The end-to-end delays of Fig. 5, in ms.
const DELAYS: [u64; 7] = [1, 2, 5, 10, 20, 50, 100];
/// The subset of Figs. 6 and of quick mode.
const CORNERS: [u64; 3] = [1, 10, 100];
/// Flow weights 1..5 in each set.
const WEIGHTS: [f64; 5] = [1.0, 2.0, 3.0, 4.0, 5.0];
/// Router hops carrying cross traffic (8 routers).
const HOPS: usize = 7;
/// Quick mode runs the points at or below this rate (Mbit/s) for the full run's length.
const QUICK_FULL_LENGTH_MBPS: u64 = 1;
/// The estimator's target utilisation in the ECA scenario (section IV.A.2).
const TARGET: f64 = 0.9;
/// The utilisation section IV.B.1 reads off Fig. 5c: "the link utilization should also be
/// close to the target 80% point". See the module comment for why a 90% target shows as 80%.
const FIGURE_UTILISATION: f64 = 0.8;
/// How far (absolute) a point's utilisation may lie from its target.
const UTILISATION_SLACK: f64 = 0.05;
/// Section IV.B.1 (Fig. 5): the words the Fig. 5 claims quote.
const FIG5_SECTION: &str = "IV.B.1 Steady-state fairness and utilisation (Fig. 5)";
/// Section IV.B.2 (Fig. 6).
const FIG6_SECTION: &str = "IV.B.2 Variance in flow rates (Fig. 6)";
const FIG6_QUOTE: &str = "In all three cases, the variation in bandwidth is most pronounced for low capacity, high latency topologies. As expected, there is a marked improvement in smoothness of flows from the TCP case to ECN/RED ... Use of ECA results in much smoother traffic than even the ECN case";

/// The ECA experiments.
pub fn experiments() -> Vec<Experiment> {
    vec![
        Experiment {
            id: "eca/parking-lot",
            paper: Paper::Eca,
            title: "Figs. 5 and 6: shares, utilisation and rate variation on the parking lot, TCP vs ECN/RED vs ECA",
            run: parking_lot,
        },
        Experiment {
            id: "eca/web",
            paper: Paper::Eca,
            title: "Fig. 8: response times of web requests at 30% of capacity beside the long-lived flows",
            run: web,
        },
        Experiment {
            id: "eca/web-syn",
            paper: Paper::Eca,
            title: "Fig. 9: response times of web requests over ECN/RED with the SYN exchange, ECT on SYNs or not",
            run: web_syn,
        },
        Experiment {
            id: "eca/estimator",
            paper: Paper::Eca,
            title: "Section IV.A.2: the load estimator's response to a doubling and a halving of the load",
            run: estimator,
        },
        Experiment {
            id: "eca/delay",
            paper: Paper::Eca,
            title: "Fig. 7: per-packet delay distributions at 10 Mbit/s, 10 ms, 500-packet queues",
            run: delay,
        },
    ]
}

/// The three schemes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scheme {
    Tcp,
    Ecn,
    Eca,
}

impl Scheme {
    const ALL: [Scheme; 3] = [Scheme::Tcp, Scheme::Ecn, Scheme::Eca];

    fn name(self) -> &'static str {
        match self {
            Scheme::Tcp => "TCP",
            Scheme::Ecn => "ECN/RED",
            Scheme::Eca => "ECA",
        }
    }

    fn scenario(self) -> (&'static str, &'static str) {
        match self {
            Scheme::Tcp => TCP,
            Scheme::Ecn => ECN,
            Scheme::Eca => ECA,
        }
    }
}

/// One point of a sweep.
#[derive(Clone, Copy, Debug)]
struct Point {
    scheme: Scheme,
    mbps: u64,
    delay_ms: u64,
    /// Buffer per router output, in packets.
    buffer: u64,
    /// RED's thresholds, in packets.
    thresholds: (u64, u64),
    duration_s: u64,
    warmup_s: u64,
}

/// What one run measured.
#[derive(Clone, Debug)]
struct Measured {
    point: Point,
    /// Goodput of h1..h5, in bit/s.
    horizontal: [f64; 5],
    /// Mean goodput of the vertical flows of weight 1..5, in bit/s.
    vertical: [f64; 5],
    /// Mean utilisation of the router-to-router hops (0..1).
    utilisation: f64,
    /// Mean coefficient of variation of the flows' 100 ms rates.
    cov: f64,
    /// One-way delays of the horizontal and the vertical flows.
    delays: (Histogram, Histogram),
}

impl Measured {
    /// Every flow's share of its hop's measured traffic: horizontal then vertical.
    fn shares(&self) -> Vec<f64> {
        let total: f64 = self.horizontal.iter().chain(&self.vertical).sum();
        self.horizontal
            .iter()
            .chain(&self.vertical)
            .map(|x| if total > 0.0 { x / total } else { 0.0 })
            .collect()
    }

    /// The horizontal set's total over the vertical set's.
    fn h_over_v(&self) -> f64 {
        let v: f64 = self.vertical.iter().sum();
        let h: f64 = self.horizontal.iter().sum();
        if v > 0.0 {
            h / v
        } else {
            f64::NAN
        }
    }

    /// The largest relative deviation of a flow's share from w_i / sum(w).
    fn worst_share_error(&self) -> f64 {
        let sum: f64 = 2.0 * WEIGHTS.iter().sum::<f64>();
        self.shares()
            .iter()
            .zip(WEIGHTS.iter().chain(&WEIGHTS))
            .map(|(s, w)| (s - w / sum).abs() / (w / sum))
            .fold(0.0, f64::max)
    }
}

/// The flows of every parking-lot file: five horizontal and five vertical.
const FLOWS: usize = 10;

/// The overrides that turn the parking-lot file of `p`'s scheme (the 10 Mbit/s, 10 ms point)
/// into `p`.
fn point_overrides(p: &Point) -> Vec<Override> {
    let horizontal_us = p.delay_ms * 1000 / 9;
    let vertical_us = p.delay_ms * 4000 / 9;
    // A window that fills a link and its buffer: rate x (2 x delay + the buffer's drain time).
    let drain_s = p.buffer as f64 * 1500.0 * 8.0 / (p.mbps as f64 * 1e6);
    let rwnd = (p.mbps as f64 * 1e6 * (2.0 * p.delay_ms as f64 / 1e3 + drain_s) / 8.0).ceil();
    let host_queue = (2.0 * rwnd / 1500.0).ceil() as i64 + 10;
    let rate = format!("{}Mbps", p.mbps);
    let horizontal = format!("{horizontal_us}us");
    let mut set: Vec<Override> = vec![
        ("topology.link.rate", rate.clone().into()),
        ("topology.access.rate", rate.into()),
        // Every horizontal hop: the routers' links and the reference hosts' two.
        ("topology.link.delay", horizontal.clone().into()),
        ("link[0].delay", horizontal.clone().into()),
        ("link[1].delay", horizontal.into()),
        ("topology.access.delay", format!("{vertical_us}us").into()),
        ("duration", format!("{}s", p.duration_s).into()),
        ("record.warmup", format!("{}s", p.warmup_s).into()),
    ];
    let buffer = format!("{}pkt", p.buffer);
    match p.scheme {
        Scheme::Ecn => {
            // RED's queue on every link: its limit and thresholds, in packets.
            let (min_th, max_th) = (p.thresholds.0 as i64, p.thresholds.1 as i64);
            set.extend([
                ("topology.link.queue.limit", buffer.clone().into()),
                ("topology.link.queue.min_th", min_th.into()),
                ("topology.link.queue.max_th", max_th.into()),
                ("topology.access.queue.limit", buffer.into()),
                ("topology.access.queue.min_th", min_th.into()),
                ("topology.access.queue.max_th", max_th.into()),
            ]);
        }
        Scheme::Tcp | Scheme::Eca => {
            set.push(("topology.link.queue", buffer.clone().into()));
            set.push(("topology.access.queue", buffer.into()));
        }
    }
    for i in 0..FLOWS {
        set.push((RWND_KEYS[i], format!("{rwnd}B").into()));
        if p.scheme == Scheme::Eca {
            set.push((HOST_QUEUE_KEYS[i], host_queue.into()));
        }
    }
    set
}

/// Each flow's receive window and (ECA) host queue, in the files' flow order.
const RWND_KEYS: [&str; FLOWS] = [
    "flow[0].tcp.rwnd",
    "flow[1].tcp.rwnd",
    "flow[2].tcp.rwnd",
    "flow[3].tcp.rwnd",
    "flow[4].tcp.rwnd",
    "flow[5].tcp.rwnd",
    "flow[6].tcp.rwnd",
    "flow[7].tcp.rwnd",
    "flow[8].tcp.rwnd",
    "flow[9].tcp.rwnd",
];
const HOST_QUEUE_KEYS: [&str; FLOWS] = [
    "flow[0].eca.queue",
    "flow[1].eca.queue",
    "flow[2].eca.queue",
    "flow[3].eca.queue",
    "flow[4].eca.queue",
    "flow[5].eca.queue",
    "flow[6].eca.queue",
    "flow[7].eca.queue",
    "flow[8].eca.queue",
    "flow[9].eca.queue",
];

/// Runs `p` and measures it.
fn measure(p: Point, seed: Option<u64>) -> Result<Measured, ReproError> {
    let (name, text) = p.scheme.scenario();
    let sc = scenario_with(name, text, &point_overrides(&p), seed)?;
    let (_, sim) = simulate(&sc)?;
    Ok(measured(p, &sim))
}

fn measured(point: Point, sim: &Simulator) -> Measured {
    let window = (sim.end() - sim.warmup()).as_secs_f64().max(1e-9);
    let goodput =
        |f: &concord_sim::flow::Flow| (f.delivered - f.delivered_at_warmup) as f64 * 8.0 / window;
    let mut horizontal = [0.0; 5];
    let mut vertical = [0.0; 5];
    let mut h_delay = Histogram::new();
    let mut v_delay = Histogram::new();
    let mut covs = Vec::new();
    let first_bin = (sim.warmup().as_nanos() / 100_000_000) as usize;
    for f in sim.flows() {
        let weight = f
            .name
            .rsplit('w')
            .next()
            .and_then(|w| w.parse::<usize>().ok());
        if let Some(n) = f
            .name
            .strip_prefix('h')
            .and_then(|n| n.parse::<usize>().ok())
        {
            if let Some(slot) = horizontal.get_mut(n.wrapping_sub(1)) {
                *slot = goodput(f);
            }
            h_delay.merge(&f.network.delay);
        } else if let Some(n) = weight {
            if let Some(slot) = vertical.get_mut(n.wrapping_sub(1)) {
                *slot += goodput(f) / HOPS as f64;
            }
            v_delay.merge(&f.network.delay);
        }
        // A flow that delivered nothing in the window has no rate to vary: it is left out
        // rather than counted as perfectly smooth.
        let rates = f.goodput.rates_bps(sim.end());
        let window_rates = rates.get(first_bin..).unwrap_or(&[]);
        if window_rates.iter().any(|&r| r > 0.0) {
            covs.push(coefficient_of_variation(window_rates));
        }
    }
    let hops: Vec<f64> = sim
        .channels()
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            sim.nodes()[c.from as usize].kind == NodeKind::Router
                && sim.nodes()[c.to as usize].kind == NodeKind::Router
                && c.to > c.from
        })
        .map(|(i, c)| {
            let tx = c.stats().since(&sim.channel_stats_at_warmup(i)).tx_bytes;
            tx as f64 * 8.0 / (c.rate.bps_f64() * window)
        })
        .collect();
    Measured {
        point,
        horizontal,
        vertical,
        utilisation: hops.iter().sum::<f64>() / hops.len().max(1) as f64,
        cov: covs.iter().sum::<f64>() / covs.len().max(1) as f64,
        delays: (h_delay, v_delay),
    }
}

/// Runs every point at `seed` on this thread and the run's spare ones (`--jobs`); results in
/// the order of `points`.
fn run_all(points: &[Point], seed: u64) -> Result<Vec<Measured>, ReproError> {
    let helpers = crate::runner::helper_threads(points.len().saturating_sub(1));
    let jobs = 1 + helpers.count;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots: Vec<std::sync::Mutex<Option<Result<Measured, ReproError>>>> =
        points.iter().map(|_| std::sync::Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, points.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(p) = points.get(i) else { break };
                let r = measure(*p, Some(seed));
                if let Ok(mut slot) = slots[i].lock() {
                    *slot = Some(r);
                }
            });
        }
    });
    slots
        .into_iter()
        .map(|m| {
            m.into_inner().ok().flatten().unwrap_or_else(|| {
                Err(ReproError::Simulation {
                    name: "eca/parking-lot".into(),
                    message: "a run's thread panicked".into(),
                })
            })
        })
        .collect()
}

fn grid(ctx: &Ctx) -> Vec<Point> {
    let (bws, delays, duration_s, warmup_s): (&[u64], &[u64], u64, u64) = if ctx.quick {
        (&CORNERS, &CORNERS, 40, 15)
    } else {
        (&BANDWIDTHS, &DELAYS, 100, 20)
    };
    let mut points = Vec::new();
    for scheme in Scheme::ALL {
        for &mbps in bws {
            for &delay_ms in delays {
                let buffer = 20 * mbps;
                // At 1 Mbit/s ten flows share the link and a flow delivers under one packet
                // per 100 ms bin, so Fig. 6's CoV mostly counts packets and 25 s of bins do not
                // settle the order of TCP and ECN/RED. These runs are cheap: quick mode gives
                // them the full run's 100 s with a 20 s warm-up.
                let (duration_s, warmup_s) = if ctx.quick && mbps <= QUICK_FULL_LENGTH_MBPS {
                    (100, 20)
                } else {
                    (duration_s, warmup_s)
                };
                points.push(Point {
                    scheme,
                    mbps,
                    delay_ms,
                    buffer,
                    thresholds: (buffer / 4, buffer * 3 / 4),
                    duration_s,
                    warmup_s,
                });
            }
        }
    }
    points
}

/// The number of `xs` for which `ok` holds.
fn count(xs: &[&Measured], ok: impl Fn(&Measured) -> bool) -> f64 {
    xs.iter().filter(|m| ok(m)).count() as f64
}

fn parking_lot(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let points: Vec<Point> = grid(ctx);
    let all = run_all(&points, ctx.seed(1))?;
    let of = |s: Scheme| -> Vec<&Measured> { all.iter().filter(|m| m.point.scheme == s).collect() };
    let (tcp, ecn, eca) = (of(Scheme::Tcp), of(Scheme::Ecn), of(Scheme::Eca));
    let n = eca.len() as f64;
    // The paper's 45-of-49 reading of "each flow does indeed obtain a share proportional to its
    // weight" (Fig. 5c), scaled to the points run.
    let need = (n * 45.0 / 49.0).floor();
    let quick = ctx.quick;
    let files = "scenarios/eca/parking-lot-{tcp,ecn,eca}.toml";
    let grid_name = if quick {
        "{1,10,100} Mbit/s x {1,10,100} ms, 40 s (1 Mbit/s: 100 s)"
    } else {
        "7 x 7 grid, 100 s"
    };
    let mut out = Outcome::default();
    let seed = ctx.seed(1);
    // TCP over drop-tail and ECA draw nothing from the seed (checked in the tests); ECN/RED
    // does, and the claims on it run over the seeds.
    let claim = |figure: &str, metric: &str, paper: &str, ours: f64, check: Check| {
        Claim::new(
            Paper::Eca,
            figure,
            metric,
            paper,
            ours,
            check,
            seed,
            files,
            quick,
        )
    };
    const SHARES: &str = "The chart clearly shows that the each flow does indeed obtain a shares of the available bandwidth proportional to its flow weight parameter";
    const SIMILAR: &str = "The expected result is that the horizontal and vertical flow sets obtain similar total proportions of the available link capacity, since the feedback signal received by the WTP shaper module is independent of the RTT.";
    const UTILISATION: &str = "Due to the load estimation algorithm used in routers, the link utilization should also be close to the target 80% point. This appears to be the case across a wide range of network dimensions.";
    out.claims.push(
        claim(
            &format!("Fig. 5c ({grid_name})"),
            "points where every flow's share is within 20% (relative) of w_i / sum(w)",
            "shares proportional to the weights across the grid",
            count(&eca, |m| m.worst_share_error() <= 0.2),
            Check::AtLeast { min: need },
        )
        .paper(FIG5_SECTION, SHARES)
        .deterministic(),
    );
    out.claims.push(
        claim(
            &format!("Fig. 5c ({grid_name})"),
            "points where horizontal / vertical set total is within 20% of 1",
            "the two sets obtain similar totals (feedback independent of RTT)",
            count(&eca, |m| (m.h_over_v() - 1.0).abs() <= 0.2),
            Check::AtLeast { min: need },
        )
        .paper(FIG5_SECTION, SIMILAR)
        .deterministic(),
    );
    // The estimator's target is 90% (section IV.A.2, the simulation's setting); the text on
    // Fig. 5c names 80%. The 90% row is the paper's setting; the 80% reading is a second row.
    for (target, setting) in [
        (TARGET, None),
        (
            FIGURE_UTILISATION,
            Some("judged against Fig. 5c's text's 80% instead of the estimator's configured 90% target"),
        ),
    ] {
        let c = claim(
            &format!("Fig. 5c ({grid_name})"),
            &format!(
                "points where hop utilisation is within {} points of {}%",
                UTILISATION_SLACK * 100.0,
                target * 100.0
            ),
            "utilisation close to the target across a wide range of dimensions",
            count(&eca, |m| (m.utilisation - target).abs() <= UTILISATION_SLACK),
            Check::AtLeast { min: need },
        )
        .paper(FIG5_SECTION, UTILISATION)
        .target(target)
        .deterministic();
        out.claims.push(match setting {
            Some(d) => c.deviation(d),
            None => c,
        });
    }
    out.claims.push(
        claim(
            &format!("Fig. 5a ({grid_name})"),
            "points where the horizontal set gets under half of the vertical set's total",
            "horizontal flows obtain a much reduced share (8 routers against 1)",
            count(&tcp, |m| m.h_over_v() < 0.5),
            Check::AtLeast { min: need },
        )
        .paper(
            FIG5_SECTION,
            "the horizontal flows pass through 8 routers as opposed to 1, and therefore obtain a much reduced share of the bandwidth",
        )
        .deterministic(),
    );
    // ECN/RED draws from the seed: its grid runs at every seed (the first seed's runs are
    // those above), for Fig. 5b's fit and Fig. 6's corners.
    let seeds = ctx.seeds();
    let ecn_points: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| p.scheme == Scheme::Ecn)
        .collect();
    let mut ecn_grid_by_seed: Vec<Vec<Measured>> = vec![ecn.iter().copied().cloned().collect()];
    for &s in seeds.iter().skip(1) {
        ecn_grid_by_seed.push(run_all(&ecn_points, s)?);
    }
    // Fig. 5b: ECN/RED's utilisation against log10 of the bandwidth-delay product, the slope of
    // the least-squares line (negative: it falls off), one fit per seed.
    let slopes: Vec<f64> = ecn_grid_by_seed
        .iter()
        .map(|grid| {
            let bdp_points: Vec<(f64, f64)> = grid
                .iter()
                .map(|m| {
                    (
                        ((m.point.mbps * m.point.delay_ms) as f64).log10(),
                        m.utilisation,
                    )
                })
                .collect();
            crate::cm::linear_fit(&bdp_points).0
        })
        .collect();
    out.claims.push(
        Claim::mean_over_seeds(
            Paper::Eca,
            &format!("Fig. 5b ({grid_name})"),
            "slope of ECN/RED's utilisation against log10(bandwidth x delay), per decade",
            "the utilization falls off as the bandwidth*delay product increases",
            Check::AtMost { max: 0.0 },
            &seeds,
            &slopes,
            files,
            quick,
        )
        .paper(
            "IV.B.1 (Fig. 5b)",
            "In the figure, the shares obtained by each flow within a set show less random variation, but the utilization falls off as the bandwidth*delay product increases.",
        ),
    );
    // Fig. 6 at the nine corner points: TCP and ECA from the same runs (seed-independent), ECN
    // at every seed.
    let corner =
        |m: &&Measured| CORNERS.contains(&m.point.mbps) && CORNERS.contains(&m.point.delay_ms);
    let (tcp9, eca9): (Vec<&Measured>, Vec<&Measured>) = (
        tcp.iter().copied().filter(corner).collect(),
        eca.iter().copied().filter(corner).collect(),
    );
    let ecn_by_seed: Vec<Vec<Measured>> = ecn_grid_by_seed
        .iter()
        .map(|grid| grid.iter().filter(corner).cloned().collect())
        .collect();
    let (mut ordered, mut eca_below_ecn, mut ecn_below_tcp) = (Vec::new(), Vec::new(), Vec::new());
    for ecn9 in &ecn_by_seed {
        let (mut o, mut a_e, mut e_t) = (0.0, 0.0, 0.0);
        for ((t, e), a) in tcp9.iter().zip(ecn9).zip(&eca9) {
            a_e += f64::from(u8::from(a.cov < e.cov));
            e_t += f64::from(u8::from(e.cov < t.cov));
            o += f64::from(u8::from(a.cov < e.cov && e.cov < t.cov));
        }
        ordered.push(o);
        eca_below_ecn.push(a_e);
        ecn_below_tcp.push(e_t);
    }
    let nine = eca9.len() as f64;
    let fig6 = |metric: &str, paper: &str, values: &[f64]| {
        Claim::mean_over_seeds(
            Paper::Eca,
            "Fig. 6 ({1,10,100} Mbit/s x {1,10,100} ms)",
            metric,
            paper,
            Check::AtLeast { min: nine },
            &seeds,
            values,
            files,
            quick,
        )
        .paper(FIG6_SECTION, FIG6_QUOTE)
    };
    out.claims.push(fig6(
        "points where CoV of 100 ms rates is ECA < ECN/RED < TCP",
        "ECA much smoother than ECN, ECN smoother than TCP",
        &ordered,
    ));
    out.claims.push(fig6(
        "points where CoV of 100 ms rates is ECA < ECN/RED",
        "ECA results in much smoother traffic than even the ECN case",
        &eca_below_ecn,
    ));
    out.claims.push(fig6(
        "points where CoV of 100 ms rates is ECN/RED < TCP",
        "a marked improvement in smoothness from TCP to ECN/RED",
        &ecn_below_tcp,
    ));
    // "Most pronounced for low capacity, high latency": per scheme, is the largest CoV of the
    // nine corners the one at 1 Mbit/s, 100 ms? (ECN at each seed.)
    let worst_at_low_high = |set: &[&Measured]| -> f64 {
        let top = set.iter().max_by(|a, b| a.cov.total_cmp(&b.cov));
        f64::from(u8::from(top.is_some_and(|m| {
            m.point.mbps == CORNERS[0] && m.point.delay_ms == CORNERS[2]
        })))
    };
    let fixed = worst_at_low_high(&tcp9) + worst_at_low_high(&eca9);
    let low_high: Vec<f64> = ecn_by_seed
        .iter()
        .map(|e| fixed + worst_at_low_high(&e.iter().collect::<Vec<_>>()))
        .collect();
    out.claims.push(
        Claim::mean_over_seeds(
            Paper::Eca,
            "Fig. 6 ({1,10,100} Mbit/s x {1,10,100} ms)",
            "schemes (of 3) whose largest CoV of the nine points is at 1 Mbit/s, 100 ms",
            "variation most pronounced for low capacity, high latency, in all three cases",
            Check::AtLeast { min: 3.0 },
            &seeds,
            &low_high,
            files,
            quick,
        )
        .paper(FIG6_SECTION, FIG6_QUOTE),
    );
    // Raw table and figures.
    let mut csv = String::from(
        "scheme,mbps,delay_ms,utilisation,h_over_v,worst_share_error,cov,h1,h2,h3,h4,h5,v1,v2,v3,v4,v5\n",
    );
    for m in &all {
        let shares: Vec<String> = m.shares().iter().map(|s| format!("{s:.4}")).collect();
        csv.push_str(&format!(
            "{},{},{},{:.4},{:.4},{:.4},{:.4},{}\n",
            m.point.scheme.name(),
            m.point.mbps,
            m.point.delay_ms,
            m.utilisation,
            m.h_over_v(),
            m.worst_share_error(),
            m.cov,
            shares.join(",")
        ));
    }
    out.raw.push(("eca-parking-lot.csv".into(), csv));
    let mut util = Plot::new(
        "Fig. 5: hop utilisation at the 10 ms points",
        "bandwidth (Mbit/s, log10)",
        "utilisation",
    );
    let mut cov = Plot::new(
        "Fig. 6: CoV of 100 ms flow rates at 10 ms",
        "bandwidth (Mbit/s, log10)",
        "coefficient of variation",
    );
    for (s, set) in [
        (Scheme::Tcp, &tcp),
        (Scheme::Ecn, &ecn),
        (Scheme::Eca, &eca),
    ] {
        let at10: Vec<&&Measured> = set.iter().filter(|m| m.point.delay_ms == 10).collect();
        util = util.series(
            s.name(),
            Style::LinePoints,
            at10.iter()
                .map(|m| ((m.point.mbps as f64).log10(), m.utilisation))
                .collect(),
        );
        cov = cov.series(
            s.name(),
            Style::LinePoints,
            at10.iter()
                .map(|m| ((m.point.mbps as f64).log10(), m.cov))
                .collect(),
        );
    }
    util = util
        .reference("ECA estimator target", TARGET)
        .reference("Fig. 5c's text", FIGURE_UTILISATION);
    out.figures.push(Figure {
        id: "eca-fig5-utilisation".into(),
        title: "Fig. 5: hop utilisation".into(),
        svg: util.to_svg(),
    });
    out.figures.push(Figure {
        id: "eca-fig6-cov".into(),
        title: "Fig. 6: coefficient of variation of 100 ms rates".into(),
        svg: cov.to_svg(),
    });
    Ok(out)
}

/// The q-quantile of queueing delay in `h`: the one-way delay's quantile minus its smallest
/// bucket (propagation and store-and-forward), in ms.
fn queueing_ms(h: &Histogram, q: f64) -> f64 {
    (h.quantile(q).as_secs_f64() - h.quantile(0.0).as_secs_f64()).max(0.0) * 1e3
}

fn delay(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let (duration_s, warmup_s) = if ctx.quick { (40, 15) } else { (100, 20) };
    let points: Vec<Point> = Scheme::ALL
        .iter()
        .map(|&scheme| Point {
            scheme,
            mbps: 10,
            delay_ms: 10,
            buffer: 500,
            // Section IV.B.3: "the minimum threshold (50 packets in this case) ... the max
            // threshold (150 in this case)".
            thresholds: (50, 150),
            duration_s,
            warmup_s,
        })
        .collect();
    let all = run_all(&points, ctx.seed(1))?;
    let mut out = Outcome::default();
    let files = "scenarios/eca/parking-lot-{tcp,ecn,eca}.toml";
    let mut fig = Plot::new(
        "Fig. 7: one-way delay distributions, 10 Mbit/s, 10 ms, 500-packet queues",
        "one-way delay (ms)",
        "cumulative fraction",
    )
    .log_x();
    let mut csv = String::from("scheme,set,p50_ms,p90_ms,p99_ms,queueing_p90_ms\n");
    for m in &all {
        for (set, h) in [("horizontal", &m.delays.0), ("vertical", &m.delays.1)] {
            let q = |x: f64| h.quantile(x).as_secs_f64() * 1e3;
            csv.push_str(&format!(
                "{},{set},{:.3},{:.3},{:.3},{:.3}\n",
                m.point.scheme.name(),
                q(0.5),
                q(0.9),
                q(0.99),
                queueing_ms(h, 0.9)
            ));
            fig = fig.series(
                &format!("{} {set}", m.point.scheme.name()),
                Style::Line,
                (0..=100)
                    .map(|i| (q(f64::from(i) / 100.0), f64::from(i) / 100.0))
                    .collect(),
            );
        }
    }
    out.raw.push(("eca-delay.csv".into(), csv));
    out.figures.push(Figure {
        id: "eca-fig7-delay".into(),
        title: "Fig. 7: end-to-end delay distributions".into(),
        svg: fig.to_svg(),
    });
    let by = |s: Scheme| all.iter().find(|m| m.point.scheme == s);
    if let (Some(tcp), Some(eca)) = (by(Scheme::Tcp), by(Scheme::Eca)) {
        for (set, t, e) in [
            ("horizontal", &tcp.delays.0, &eca.delays.0),
            ("vertical", &tcp.delays.1, &eca.delays.1),
        ] {
            let ratio = queueing_ms(e, 0.9) / queueing_ms(t, 0.9).max(1e-9);
            out.claims.push(Claim::new(
                Paper::Eca,
                "Fig. 7 (10 Mbit/s, 10 ms, 500-packet queues)",
                &format!("90th percentile queueing delay ECA / TCP, {set} flows"),
                "ECA's distributions much shorter: feedback before any queueing",
                ratio,
                Check::AtMost { max: 0.1 },
                ctx.seed(1),
                files,
                ctx.quick,
            )
            .paper(
                "IV.B.3 Packet delay (Fig. 7)",
                "The queue length distributions are much shorter with ECA since feedback starts to happen before any queuing occurs.",
            )
            .deterministic());
        }
        // Fig. 7b: ECN/RED's distribution "has a peak around the minth threshold" (50
        // packets); read on the vertical flows, which cross one router queue. ECN/RED draws
        // from the seed, so the peak is measured at every seed.
        if let Some(ecn) = by(Scheme::Ecn) {
            let seeds = ctx.seeds();
            let mut peaks = vec![peak_queue_packets(&ecn.delays.1, ecn.point.mbps)];
            for &s in seeds.iter().skip(1) {
                let m = measure(ecn.point, Some(s))?;
                peaks.push(peak_queue_packets(&m.delays.1, m.point.mbps));
            }
            out.claims.push(
                Claim::mean_over_seeds(
                    Paper::Eca,
                    "Fig. 7b (10 Mbit/s, 10 ms, 500-packet queues, min_th 50, max_th 150)",
                    "queue at the peak of ECN/RED's vertical queueing-delay distribution, 5 ms bins (packets)",
                    "a peak around the min_th threshold (50 packets)",
                    Check::Relative {
                        target: 50.0,
                        rel: 0.5,
                    },
                    &seeds,
                    &peaks,
                    files,
                    ctx.quick,
                )
                .paper(
                    "IV.B.3 Packet delay (Fig. 7)",
                    "The ECN parameters cause packets to start getting marked when the queue length reaches the minimum threshold (50 packets in this case), and to be marked with increasing probability until the max threshold is reached (150 in this case). The resulting distribution has a peak around the minth threshold.",
                )
                .target(50.0),
            );
        }
        let median_ms = eca.delays.1.quantile(0.5).as_secs_f64() * 1e3;
        out.claims.push(
            Claim::new(
                Paper::Eca,
                "Fig. 7c (10 Mbit/s, 10 ms, 500-packet queues)",
                "median one-way delay of ECA's vertical flows (ms)",
                "close to the expected 10 ms plus 3 packetization delays of ~1 ms (13)",
                median_ms,
                Check::Relative {
                    target: 13.0,
                    rel: 0.2,
                },
                ctx.seed(1),
                files,
                ctx.quick,
            )
            .paper(
                "IV.B.3 Packet delay (Fig. 7)",
                "In the 'vertical' case, the majority of observations are towards the lower end of the distribution which is close to the expected 10ms. The small offset is due to the fact that the routers do not perform 'cut-through' and thus 3 'packetization' delays of ~1ms are experienced.",
            )
            .target(13.0)
            .deterministic(),
        );
    }
    Ok(out)
}

/// The queue, in packets of 1500 B at `mbps`, at the peak of `h`'s queueing delay (the
/// one-way delay less its smallest value) when the delays are counted in 5 ms bins, as a
/// distribution over a linear delay axis shows its peak.
fn peak_queue_packets(h: &Histogram, mbps: u64) -> f64 {
    const BIN_MS: f64 = 5.0;
    let floor_ms = h.quantile(0.0).as_secs_f64() * 1e3;
    let mut bins: Vec<u64> = Vec::new();
    for (lo, hi, count) in h.buckets() {
        let mid_ms = (lo.as_secs_f64() + hi.as_secs_f64()) / 2.0 * 1e3;
        let k = ((mid_ms - floor_ms).max(0.0) / BIN_MS) as usize;
        if k >= bins.len() {
            bins.resize(k + 1, 0);
        }
        bins[k] += count;
    }
    let Some((k, _)) = bins
        .iter()
        .enumerate()
        .max_by(|(i, a), (j, b)| a.cmp(b).then(j.cmp(i)))
    else {
        return f64::NAN;
    };
    let peak_ms = (k as f64 + 0.5) * BIN_MS;
    // ms x Mbit/s / (1500 B x 8 bit) = packets.
    peak_ms * mbps as f64 / (1500.0 * 8.0 / 1e3)
}

/// Section IV.A.2's estimator on its own (`concord_cc::eca::load_estimator`, the paper's
/// parameters at 10 Mbit/s): arrivals at twice the target from L = 1 until L has doubled,
/// then none until it has halved. The paper computes "about 1.4s" and "6.8s".
fn estimator(ctx: &Ctx) -> Result<Outcome, ReproError> {
    use concord_cc::eca::load_estimator::{LoadEstimator, LoadEstimatorConfig};
    let err = |m: String| ReproError::Simulation {
        name: "eca/estimator".into(),
        message: m,
    };
    let config = LoadEstimatorConfig::new(Rate::from_mbps(10));
    let interval = config.interval;
    let mut est = LoadEstimator::new(config, Instant::ZERO).map_err(|e| err(e.to_string()))?;
    // Arrivals at twice the target, one interval's worth per interval, in 1500-byte packets.
    let per_interval = (2.0 * est.target_bytes_per_interval() / 1500.0).ceil() as u64;
    let mut now = Instant::ZERO;
    let mut series = vec![(0.0, est.load())];
    let respond = |est: &mut LoadEstimator,
                   now: &mut Instant,
                   series: &mut Vec<(f64, f64)>,
                   packets: u64,
                   until: &dyn Fn(f64) -> bool|
     -> f64 {
        let start = *now;
        for _ in 0..100_000 {
            let step = interval / (packets + 1);
            for k in 1..=packets {
                est.on_arrival(*now + step * k, 1500);
            }
            *now += interval;
            est.on_tick(*now);
            series.push((now.as_secs_f64(), est.load()));
            if until(est.load()) {
                return (*now - start).as_secs_f64();
            }
        }
        f64::NAN
    };
    let up = respond(&mut est, &mut now, &mut series, per_interval, &|l| l >= 2.0);
    let top = est.load();
    let down = respond(&mut est, &mut now, &mut series, 0, &|l| l <= top / 2.0);
    let mut out = Outcome::default();
    let file = "crates/cc/src/eca/load_estimator.rs (no scenario: the estimator alone)";
    const QUOTE: &str = "A simple calculation of the exponential decay time shows that the time to respond to a doubling of the load is about 1.4s, and 6.8s for the load suddenly halving.";
    for (what, value, target) in [
        (
            "time for L to double under twice the target load (s)",
            up,
            1.4,
        ),
        ("time for L to halve with no load (s)", down, 6.8),
    ] {
        out.claims.push(
            Claim::new(
                Paper::Eca,
                "Section IV.A.2: the load estimator (100 ms, x1.05 / x0.99)",
                what,
                &fmt_num(target),
                value,
                Check::Relative { target, rel: 0.1 },
                ctx.seed(1),
                file,
                ctx.quick,
            )
            .paper("IV.A.2 The load estimator", QUOTE)
            .target(target)
            .deterministic(),
        );
    }
    let plot = Plot::new(
        "Section IV.A.2: L after a doubling, then a halving, of the load",
        "time (s)",
        "L",
    )
    .series("L", Style::Line, series.clone());
    out.figures.push(Figure {
        id: "eca-estimator-response".into(),
        title: plot.title.clone(),
        svg: plot.to_svg(),
    });
    let mut csv = String::from("t_s,load\n");
    for (t, l) in &series {
        csv.push_str(&format!("{t:.1},{l:.5}\n"));
    }
    out.raw.push(("eca-estimator.csv".into(), csv));
    Ok(out)
}

/// The web workload's random stream (derived from the scenario seed).
const WEB_STREAM: u64 = 0xEC4_0008;
/// TCP's segment payload in the scenarios, in bytes.
const MSS: u64 = 1460;

/// `[[flow]]` sections for the requests of a web workload at 30% of `mbps` (section IV.B.4),
/// each a finite TCP transfer src -> dst made at its request time, made in [0, stop).
fn web_flows(scheme: Scheme, mbps: u64, seed: u64, stop_s: u64) -> String {
    let tcp = match scheme {
        Scheme::Ecn => "{ cc = \"newreno\", ecn = true }",
        _ => "{ cc = \"newreno\" }",
    };
    let eca = if scheme == Scheme::Eca {
        "\neca = { weight = 1 }"
    } else {
        ""
    };
    web_flows_with(tcp, eca, mbps, seed, stop_s)
}

/// [`web_flows`] with each request's TCP settings `tcp` (a TOML inline table) and `eca` (a
/// line after them, or nothing).
fn web_flows_with(tcp: &str, eca: &str, mbps: u64, seed: u64, stop_s: u64) -> String {
    let mut config = WebConfig::new(Rate::from_mbps(mbps), 0.3);
    config.warm_start = true;
    config.stop = Some(Instant::ZERO + Duration::from_secs(stop_s));
    let Ok(mut generator) = WebGenerator::new(config, Rng::stream(seed, WEB_STREAM), Instant::ZERO)
    else {
        return String::new();
    };
    let mut text = String::new();
    while let Some((at, r)) = generator.next_request(Instant::MAX) {
        text.push_str(&format!(
            "\n[[flow]]\nname = \"web{}\"\nkind = \"tcp\"\nfrom = \"src\"\nto = \"dst\"\nstart = \"{}ns\"\nbytes = {}\ntcp = {tcp}{eca}\n",
            r.id,
            at.as_nanos(),
            r.size_bytes.max(1)
        ));
    }
    text
}

fn web(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let (duration_s, warmup_s) = if ctx.quick { (40, 15) } else { (100, 20) };
    let seeds = ctx.seeds();
    let (mut median_ratio, mut outlier_ratio) = (Vec::new(), Vec::new());
    let mut out = Outcome::default();
    let mut csv = String::from("seed,scheme,size_bytes,start_s,response_s\n");
    let mut fig = Plot::new(
        "Fig. 8: web response times, 10 Mbit/s, 10 ms",
        "request size (segments)",
        "response time (s)",
    );
    for &seed in &seeds {
        let first = seed == seeds[0];
        let mut medians = Vec::new();
        let mut outliers = Vec::new();
        for scheme in Scheme::ALL {
            let p = Point {
                scheme,
                mbps: 10,
                delay_ms: 10,
                buffer: 200,
                thresholds: (50, 150),
                duration_s,
                warmup_s,
            };
            // The web flows come after the file's ten, which the point's overrides index.
            let (name, text) = scheme.scenario();
            let text = text.to_string() + &web_flows(scheme, 10, seed, duration_s - 5);
            let sc = scenario_with(name, &text, &point_overrides(&p), Some(seed))?;
            let (_, sim) = simulate(&sc)?;
            let mut small = Vec::new();
            let mut points = Vec::new();
            // Completed requests, and those a retransmission timeout delayed (Fig. 8's outliers).
            let (mut requests, mut timed_out) = (0u64, 0u64);
            for (f, spec) in sim.flows().iter().zip(&sc.flows) {
                let (
                    Agent::Tcp(t),
                    FlowKind::Tcp {
                        bytes: Some(size), ..
                    },
                ) = (&f.agent, &spec.kind)
                else {
                    continue;
                };
                if !f.name.starts_with("web") {
                    continue;
                }
                if f.start < sim.warmup() {
                    continue;
                }
                // Requests still open at the end have no response time; they are counted apart.
                let Some(done) = t.completed else { continue };
                let secs = (done - f.start).as_secs_f64();
                let size = *size;
                let segments = size.div_ceil(MSS);
                requests += 1;
                if t.sender.stats().timeouts > 0 {
                    timed_out += 1;
                }
                csv.push_str(&format!(
                    "{seed},{},{size},{:.4},{secs:.4}\n",
                    scheme.name(),
                    f.start.as_secs_f64()
                ));
                if (1..=20).contains(&segments) {
                    small.push(secs);
                }
                if segments <= 200 {
                    points.push((segments as f64, secs));
                }
            }
            small.sort_by(f64::total_cmp);
            let median = small.get(small.len() / 2).copied().unwrap_or(f64::NAN);
            medians.push((scheme, median, small.len()));
            outliers.push((scheme, timed_out as f64 / requests.max(1) as f64));
            if first {
                fig = fig.series(scheme.name(), Style::Points, points);
            }
        }
        let median = |s: Scheme| medians.iter().find(|m| m.0 == s).map_or(f64::NAN, |m| m.1);
        median_ratio.push(median(Scheme::Tcp) / median(Scheme::Eca));
        let outlier = |s: Scheme| outliers.iter().find(|m| m.0 == s).map_or(f64::NAN, |m| m.1);
        outlier_ratio.push(outlier(Scheme::Eca) / outlier(Scheme::Tcp));
    }
    out.raw.push(("eca-web.csv".into(), csv));
    out.figures.push(Figure {
        id: "eca-fig8-web".into(),
        title: "Fig. 8: HTTP response times".into(),
        svg: fig.to_svg(),
    });
    const NO_SYN: &str =
        "no SYN exchange in the simulator (the paper's timeout outliers come from lost SYNs)";
    out.claims.push(
        Claim::mean_over_seeds(
            Paper::Eca,
            "Fig. 8 (10 Mbit/s, 10 ms, web at 30% beside the long-lived flows)",
            "median response time of 1-20-segment requests, TCP / ECA",
            "5 (abstract: improved by a factor of 5)",
            Check::Relative {
                target: 5.0,
                rel: 0.5,
            },
            &seeds,
            &median_ratio,
            "scenarios/eca/parking-lot-{tcp,ecn,eca}.toml + web requests",
            ctx.quick,
        )
        .paper(
            "Abstract; IV.B.4 HTTP response times (Fig. 8)",
            "Experiments show that ... response times for short HTTP requests can be improved by a factor of 5.",
        )
        .target(5.0)
        .deviation(NO_SYN),
    );
    out.claims.push(
        Claim::mean_over_seeds(
            Paper::Eca,
            "Fig. 8 (10 Mbit/s, 10 ms, web at 30% beside the long-lived flows)",
            "share of completed requests delayed by a retransmission timeout, ECA / TCP",
            "many fewer outliers due to retransmit timeouts under ECA (fewer: at most 1)",
            Check::AtMost { max: 1.0 },
            &seeds,
            &outlier_ratio,
            "scenarios/eca/parking-lot-{tcp,ecn,eca}.toml + web requests",
            ctx.quick,
        )
        .paper(
            "IV.B.4 HTTP response times (Fig. 8)",
            "The first observation is that there are many fewer outliers due to retransmit timeouts.",
        )
        .deviation(NO_SYN),
    );
    Ok(out)
}

/// The SYN's initial retransmission timeout of the paper's ns-2, in seconds: "the TCP
/// retransmit timer is still at its initial value of 6 seconds" (section IV.B.4 a).
const NS2_SYN_RTO_S: u64 = 6;

/// The three runs of Fig. 9 per seed, all with the SYN exchange and ns-2's 6 s SYN timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SynRun {
    /// TCP over drop-tail (Fig. 8a's setting).
    Tcp,
    /// ECN over RED, SYNs not ECT (RFC 3168 section 6.1.1, ns-2's stock TCP: Fig. 8b).
    EcnPlainSyn,
    /// ECN over RED, SYNs ECT(0) (the paper's modified ns-2: Fig. 9).
    EcnEctSyn,
}

impl SynRun {
    const ALL: [SynRun; 3] = [SynRun::Tcp, SynRun::EcnPlainSyn, SynRun::EcnEctSyn];

    fn name(self) -> &'static str {
        match self {
            SynRun::Tcp => "TCP",
            SynRun::EcnPlainSyn => "ECN/RED (SYN not ECT)",
            SynRun::EcnEctSyn => "ECN/RED (ECT on SYNs)",
        }
    }

    fn scheme(self) -> Scheme {
        match self {
            SynRun::Tcp => Scheme::Tcp,
            SynRun::EcnPlainSyn | SynRun::EcnEctSyn => Scheme::Ecn,
        }
    }

    /// Each web request's TCP settings.
    fn tcp(self) -> String {
        let (ecn, ect) = match self {
            SynRun::Tcp => ("", false),
            SynRun::EcnPlainSyn => (", ecn = true", false),
            SynRun::EcnEctSyn => (", ecn = true", true),
        };
        format!(
            "{{ cc = \"newreno\"{ecn}, handshake = {{ syn_rto = \"{NS2_SYN_RTO_S}s\", ect_syn = {ect} }} }}"
        )
    }
}

/// Section IV.B.4, Fig. 9: the words its claims quote.
const FIG9_SECTION: &str = "IV.B.4 HTTP Response Times, b) ECN/RED (Figs. 8b and 9)";
const FIG9_QUOTE: &str = "a modification was made to the ns2 implementation and the ECN experiments were repeated, this time with the ECT bit set on SYN packets. The results obtained are shown in Figure 9. When flows are not held up by the 'admission control' effect, the results are very similar to those obtained from TCP. There is a marginal reduction in queue length which seems to make about a 30% improvement in response times.";
/// The setting every Fig. 9 row runs at.
const FIG9_FIGURE: &str = "Fig. 9 (Fig. 8's setting: 10 Mbit/s, 10 ms, web at 30%; SYN exchange with ns-2's 6 s SYN timer)";

/// Fig. 9: the web workload of Fig. 8 over ECN/RED with a SYN exchange before each request's
/// data, SYNs ECT or not, and over TCP/drop-tail with the same exchange. Per seed, the mean
/// response time of the completed 1-20-segment requests made after the warm-up (Fig. 8's
/// requests and window); requests still open at the end have no response time and are left
/// out, as in Fig. 8.
fn web_syn(ctx: &Ctx) -> Result<Outcome, ReproError> {
    let (duration_s, warmup_s) = if ctx.quick { (40, 15) } else { (100, 20) };
    let seeds = ctx.seeds();
    let (mut over_plain, mut over_tcp) = (Vec::new(), Vec::new());
    let mut out = Outcome::default();
    let mut csv = String::from("seed,run,size_bytes,start_s,response_s,syns_sent\n");
    let mut fig = Plot::new(
        "Fig. 9: web response times with the SYN exchange, 10 Mbit/s, 10 ms",
        "request size (segments)",
        "response time (s)",
    );
    for &seed in &seeds {
        let first = seed == seeds[0];
        let mut means = Vec::new();
        for run in SynRun::ALL {
            let scheme = run.scheme();
            let p = Point {
                scheme,
                mbps: 10,
                delay_ms: 10,
                buffer: 200,
                thresholds: (50, 150),
                duration_s,
                warmup_s,
            };
            let (name, text) = scheme.scenario();
            let text = text.to_string() + &web_flows_with(&run.tcp(), "", 10, seed, duration_s - 5);
            let sc = scenario_with(name, &text, &point_overrides(&p), Some(seed))?;
            let (_, sim) = simulate(&sc)?;
            let mut small = Vec::new();
            let mut points = Vec::new();
            for (f, spec) in sim.flows().iter().zip(&sc.flows) {
                let (
                    Agent::Tcp(t),
                    FlowKind::Tcp {
                        bytes: Some(size), ..
                    },
                ) = (&f.agent, &spec.kind)
                else {
                    continue;
                };
                if !f.name.starts_with("web") || f.start < sim.warmup() {
                    continue;
                }
                let Some(done) = t.completed else { continue };
                let secs = (done - f.start).as_secs_f64();
                let segments = size.div_ceil(MSS);
                let syns = t.handshake.as_ref().map_or(0, |h| h.active.syns_sent());
                csv.push_str(&format!(
                    "{seed},{},{size},{:.4},{secs:.4},{syns}\n",
                    run.name(),
                    f.start.as_secs_f64()
                ));
                if (1..=20).contains(&segments) {
                    small.push(secs);
                }
                if segments <= 200 {
                    points.push((segments as f64, secs));
                }
            }
            let mean = if small.is_empty() {
                f64::NAN
            } else {
                small.iter().sum::<f64>() / small.len() as f64
            };
            means.push((run, mean));
            if first {
                fig = fig.series(run.name(), Style::Points, points);
            }
        }
        let mean = |r: SynRun| means.iter().find(|m| m.0 == r).map_or(f64::NAN, |m| m.1);
        over_plain.push(mean(SynRun::EcnEctSyn) / mean(SynRun::EcnPlainSyn));
        over_tcp.push(mean(SynRun::EcnEctSyn) / mean(SynRun::Tcp));
    }
    out.raw.push(("eca-web-syn.csv".into(), csv));
    out.figures.push(Figure {
        id: "eca-fig9-web-syn".into(),
        title: "Fig. 9: HTTP response times with the SYN exchange".into(),
        svg: fig.to_svg(),
    });
    // "About a 30% improvement": a ratio of 0.7; the tolerance takes the improvement's one
    // significant figure as Fig. 8's "factor of 5" does, half of it either side: 15% to 45%
    // shorter, a ratio of 0.55 to 0.85.
    let check = Check::Between { lo: 0.55, hi: 0.85 };
    let scenario = "scenarios/eca/parking-lot-{tcp,ecn}.toml + web requests with handshake";
    out.claims.push(
        Claim::mean_over_seeds(
            Paper::Eca,
            FIG9_FIGURE,
            "mean response time of 1-20-segment requests, ECN/RED with ECT on SYNs / ECN/RED with SYNs not ECT",
            "about 30% shorter (ratio about 0.7)",
            check,
            &seeds,
            &over_plain,
            scenario,
            ctx.quick,
        )
        .paper(FIG9_SECTION, FIG9_QUOTE)
        .target(0.7),
    );
    out.claims.push(
        Claim::mean_over_seeds(
            Paper::Eca,
            FIG9_FIGURE,
            "mean response time of 1-20-segment requests, ECN/RED with ECT on SYNs / TCP over drop-tail",
            "about 30% shorter (ratio about 0.7)",
            check,
            &seeds,
            &over_tcp,
            scenario,
            ctx.quick,
        )
        .paper(FIG9_SECTION, FIG9_QUOTE)
        .target(0.7)
        .deviation("reading: the 30% taken against TCP over drop-tail (Fig. 8a), which the sentence names, rather than against ECN/RED with SYNs not ECT (Fig. 8b)"),
    );
    Ok(out)
}
