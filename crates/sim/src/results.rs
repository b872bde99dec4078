//! A run's results: the summary figures (per-flow goodput, Jain's index, utilisation, drops,
//! delays) and the tables written as CSV files plus `summary.json`.
//!
//! Everything here is a function of the simulation alone (no wall-clock time), so the same
//! scenario and seed give byte-identical files.

use crate::flow::Agent;
use crate::metrics::jain_index;
use crate::simulator::Simulator;
use concord_cc::tcp::TimeoutCauses;
use serde::Serialize;
use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// One flow's figures over the measurement window (warm-up to end).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSummary {
    /// Name.
    pub name: String,
    /// `tcp`, `cbr` or `onoff`.
    pub kind: String,
    /// TCP: the window controller (`newreno`, `westwood+`, `mccp`); TFRC: `tfrc`; else empty.
    pub cc: String,
    /// TCP: whether the flow negotiates ECN.
    pub ecn: bool,
    /// Whether the flow is scheduled by its host's Congestion Manager (TCP/CM, audio, cmudp).
    pub cm: bool,
    /// CM flows: the configured weight, dimensionless (`None`: not a CM flow).
    pub cm_weight: Option<f64>,
    /// Source host.
    pub from: String,
    /// Destination host.
    pub to: String,
    /// Application bytes delivered in order in the window, in bit/s over the window.
    pub goodput_bps: f64,
    /// Application bytes delivered in order in the window.
    pub delivered_bytes: u64,
    /// Application bytes delivered over the whole run.
    pub delivered_bytes_total: u64,
    /// Data packets of the flow that queues dropped in the window (wire losses not counted).
    pub queue_drops: u64,
    /// TCP: segments sent in the window.
    pub segments_sent: u64,
    /// TCP: retransmitted segments in the window.
    pub retransmissions: u64,
    /// TCP: fast retransmits in the window.
    pub fast_retransmits: u64,
    /// TCP: retransmission timeouts in the window.
    pub timeouts: u64,
    /// TCP: the timeouts in the window by what they fired on (they add up to `timeouts`).
    pub timeout_causes: TimeoutCausesSummary,
    /// TCP: ECN window reductions in the window.
    pub ecn_reductions: u64,
    /// TCP: data segments lost to the flow's `drop_when` injection (whole run: 0 or 1).
    pub injected_losses: u64,
    /// TCP: when the injected loss happened, in seconds.
    pub injected_at_s: Option<f64>,
    /// TCP: mean RTT sample in the window, in seconds.
    pub mean_rtt_s: f64,
    /// TCP: mean RTO at the samples in the window, in seconds.
    pub mean_rto_s: f64,
    /// TCP with a finite transfer: when the last byte was acknowledged, in seconds.
    pub completion_s: Option<f64>,
    /// UDP: datagrams sent (whole run).
    pub datagrams_sent: u64,
    /// UDP: datagrams received (whole run).
    pub datagrams_received: u64,
    /// Mean one-way delay of data packets in the window, in milliseconds.
    pub delay_mean_ms: f64,
    /// Median one-way delay, in milliseconds (1.6% resolution).
    pub delay_p50_ms: f64,
    /// 90th percentile one-way delay, in milliseconds.
    pub delay_p90_ms: f64,
    /// 99th percentile one-way delay, in milliseconds.
    pub delay_p99_ms: f64,
}

/// A TCP flow's retransmission timeouts by what the timer fired on, classed as
/// `bench/ns3/validate.cc` classes ns-3's (concord_cc::tcp::TimeoutCause).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimeoutCausesSummary {
    /// The receiver already held the segment at snd.una (its ACK delayed or on its way).
    pub receiver_held: u64,
    /// The segment was missing and the sender was in fast recovery.
    pub in_recovery: u64,
    /// The segment was missing and the sender was recovering from an earlier timeout.
    pub repeat: u64,
    /// The segment was missing after one or two duplicate ACKs.
    pub disorder: u64,
    /// The segment was missing and no duplicate ACK had arrived.
    pub open: u64,
}

impl From<TimeoutCauses> for TimeoutCausesSummary {
    fn from(c: TimeoutCauses) -> Self {
        TimeoutCausesSummary {
            receiver_held: c.receiver_held,
            in_recovery: c.in_recovery,
            repeat: c.repeat,
            disorder: c.disorder,
            open: c.open,
        }
    }
}

/// One channel's figures over the measurement window.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ChannelSummary {
    /// `from->to`.
    pub name: String,
    /// Rate, in bit/s.
    pub rate_bps: u64,
    /// Propagation delay, in seconds.
    pub delay_s: f64,
    /// Packets offered.
    pub arrivals: u64,
    /// Drops because the queue was full.
    pub drops_full: u64,
    /// Early drops (RED).
    pub drops_early: u64,
    /// CE marks.
    pub marks: u64,
    /// Losses on the wire.
    pub wire_losses: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted (IP total lengths).
    pub tx_bytes: u64,
    /// Transmitted bits over rate times the window.
    pub utilisation: f64,
    /// Time-average queue length, in packets.
    pub mean_queue_packets: f64,
    /// Largest queue length over the whole run, in packets.
    pub max_queue_packets: u32,
}

/// The figures of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunResults {
    /// Scenario name.
    pub scenario: String,
    /// The seed.
    pub seed: u64,
    /// Simulated duration, in seconds.
    pub duration_s: f64,
    /// Start of the measurement window, in seconds.
    pub warmup_s: f64,
    /// Events processed.
    pub events: u64,
    /// Sum of the flows' goodput, in bit/s.
    pub total_goodput_bps: f64,
    /// Jain's index over the flows' goodput.
    pub jain_index: f64,
    /// The channel whose utilisation is reported.
    pub bottleneck: String,
    /// Its utilisation in the window.
    pub bottleneck_utilisation: f64,
    /// Its queue drops in the window (full and early).
    pub bottleneck_drops: u64,
    /// Its CE marks in the window.
    pub bottleneck_marks: u64,
    /// Per flow.
    pub flows: Vec<FlowSummary>,
    /// Per channel.
    pub channels: Vec<ChannelSummary>,
}

fn ms(d: concord_cc::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

impl RunResults {
    /// Computes the figures of a finished run.
    pub fn from_simulator(sim: &Simulator) -> RunResults {
        let window = sim
            .end()
            .saturating_since(sim.warmup())
            .as_secs_f64()
            .max(1e-12);
        let node = |n: u32| {
            sim.nodes()
                .get(n as usize)
                .map(|x| x.name.clone())
                .unwrap_or_default()
        };
        let flows: Vec<FlowSummary> = sim
            .flows()
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let delivered = f.delivered - f.delivered_at_warmup;
                let mut s = FlowSummary {
                    name: f.name.clone(),
                    kind: f.kind().to_string(),
                    cc: String::new(),
                    ecn: false,
                    cm: false,
                    cm_weight: None,
                    from: node(f.src),
                    to: node(f.dst),
                    goodput_bps: delivered as f64 * 8.0 / window,
                    delivered_bytes: delivered,
                    delivered_bytes_total: f.delivered,
                    queue_drops: f.queue_drops - f.queue_drops_at_warmup,
                    segments_sent: 0,
                    retransmissions: 0,
                    fast_retransmits: 0,
                    timeouts: 0,
                    timeout_causes: TimeoutCausesSummary::default(),
                    ecn_reductions: 0,
                    injected_losses: 0,
                    injected_at_s: None,
                    mean_rtt_s: 0.0,
                    mean_rto_s: 0.0,
                    completion_s: None,
                    datagrams_sent: 0,
                    datagrams_received: 0,
                    delay_mean_ms: ms(f.network.delay.mean()),
                    delay_p50_ms: ms(f.network.delay.quantile(0.5)),
                    delay_p90_ms: ms(f.network.delay.quantile(0.9)),
                    delay_p99_ms: ms(f.network.delay.quantile(0.99)),
                };
                if let Some(Some((weight, _hint))) = sim.cm().weights.get(i) {
                    s.cm = true;
                    s.cm_weight = Some(*weight);
                }
                match &f.agent {
                    Agent::Tcp(t) => {
                        let config = t.sender.config();
                        s.cc = config.cc.name().to_string();
                        s.ecn = config.ecn;
                        // Counted over the measurement window, like the goodput beside them.
                        let (st, w) = (t.sender.stats(), t.stats_at_warmup);
                        s.segments_sent = st.segments_sent - w.segments_sent;
                        s.retransmissions = st.retransmissions - w.retransmissions;
                        s.fast_retransmits = st.fast_retransmits - w.fast_retransmits;
                        s.timeouts = st.timeouts - w.timeouts;
                        s.timeout_causes = st.timeout_causes.since(&w.timeout_causes).into();
                        s.ecn_reductions = st.ecn_reductions - w.ecn_reductions;
                        s.injected_losses = t.injected_losses;
                        s.injected_at_s = t.injected_at.map(|a| a.as_secs_f64());
                        if t.rtt_count > 0 {
                            s.mean_rtt_s = t.rtt_sum / t.rtt_count as f64;
                            s.mean_rto_s = t.rto_sum / t.rtt_count as f64;
                        }
                        s.completion_s = t.completed.map(|c| c.as_secs_f64());
                    }
                    Agent::Udp(u) => {
                        s.datagrams_sent = u.next_seq;
                        s.datagrams_received = u.received;
                    }
                    Agent::Tfrc(t) => {
                        s.cc = "tfrc".to_string();
                        s.datagrams_sent = t.sent;
                        s.datagrams_received = t.received;
                    }
                    Agent::CUdp(c) => {
                        s.datagrams_sent = c.sent;
                        s.datagrams_received = c.received;
                    }
                    Agent::CmApp(c) => {
                        s.datagrams_sent = c.sent;
                        s.datagrams_received = c.received;
                    }
                }
                s
            })
            .collect();
        let channels: Vec<ChannelSummary> = sim
            .channels()
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let st = c.stats().since(&sim.channel_stats_at_warmup(i));
                let capacity = c.rate.bps_f64() * window;
                ChannelSummary {
                    name: c.name.clone(),
                    rate_bps: c.rate.bps(),
                    delay_s: c.delay.as_secs_f64(),
                    arrivals: st.arrivals,
                    drops_full: st.drops_full,
                    drops_early: st.drops_early,
                    marks: st.marks,
                    wire_losses: st.wire_losses,
                    tx_packets: st.tx_packets,
                    tx_bytes: st.tx_bytes,
                    utilisation: if capacity > 0.0 {
                        st.tx_bytes as f64 * 8.0 / capacity
                    } else {
                        0.0
                    },
                    mean_queue_packets: st.queue_area / (window * 1e9),
                    max_queue_packets: st.max_queue_packets,
                }
            })
            .collect();
        let goodputs: Vec<f64> = flows.iter().map(|f| f.goodput_bps).collect();
        let b = sim.bottleneck() as usize;
        let (bname, butil, bdrops, bmarks) = channels
            .get(b)
            .map(|c| {
                (
                    c.name.clone(),
                    c.utilisation,
                    c.drops_full + c.drops_early,
                    c.marks,
                )
            })
            .unwrap_or_default();
        RunResults {
            scenario: sim.name().to_string(),
            seed: sim.seed(),
            duration_s: sim.end().as_secs_f64(),
            warmup_s: sim.warmup().as_secs_f64(),
            events: sim.events_processed(),
            total_goodput_bps: goodputs.iter().sum(),
            jain_index: jain_index(&goodputs),
            bottleneck: bname,
            bottleneck_utilisation: butil,
            bottleneck_drops: bdrops,
            bottleneck_marks: bmarks,
            flows,
            channels,
        }
    }

    /// Writes `summary.json`, `flows.csv`, `channels.csv`, `goodput.csv`, `queues.csv`,
    /// `delay.csv` and (when traced) `cwnd.csv` and `estimator.csv` into `dir`, creating it if
    /// needed.
    pub fn write_dir(&self, sim: &Simulator, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        std::fs::write(dir.join("summary.json"), json + "\n")?;
        for (stem, csv) in self.tables(sim) {
            std::fs::write(dir.join(format!("{stem}.csv")), csv)?;
        }
        Ok(())
    }

    /// The run's tables as CSV text, by file stem, as [`RunResults::write_dir`] writes them:
    /// `flows`, `channels`, `goodput`, `queues`, `delay`, and `cwnd` and `estimator` when traced.
    pub fn tables(&self, sim: &Simulator) -> Vec<(&'static str, String)> {
        let mut tables = vec![
            ("flows", self.flows_csv()),
            ("channels", self.channels_csv()),
            ("goodput", goodput_csv(sim)),
            ("queues", queues_csv(sim)),
            ("delay", delay_csv(sim)),
        ];
        if !sim.cwnd_samples().is_empty() {
            tables.push(("cwnd", cwnd_csv(sim)));
        }
        if !sim.estimator_samples().is_empty() {
            tables.push(("estimator", estimator_csv(sim)));
        }
        if !sim.macroflows().is_empty() {
            let name = |n: u32| {
                sim.nodes()
                    .get(n as usize)
                    .map_or_else(String::new, |node| field(&node.name))
            };
            tables.push(("macroflows", sim.macroflows().csv(name)));
        }
        tables
    }

    /// `flows.csv`'s text, the first of [`RunResults::tables`]: made from these figures alone,
    /// without the simulator.
    pub fn flows_csv(&self) -> String {
        let mut s = String::from("flow,kind,cc,ecn,cm,cm_weight,from,to,goodput_bps,delivered_bytes,retransmissions,timeouts,ecn_reductions,mean_rtt_s,mean_rto_s,delay_mean_ms,delay_p50_ms,delay_p90_ms,delay_p99_ms,completion_s,injected_losses,queue_drops\n");
        for f in &self.flows {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{:.3},{},{},{},{},{:.6},{:.6},{:.4},{:.4},{:.4},{:.4},{},{},{}",
                field(&f.name),
                f.kind,
                field(&f.cc),
                u8::from(f.ecn),
                u8::from(f.cm),
                f.cm_weight.map(|w| w.to_string()).unwrap_or_default(),
                field(&f.from),
                field(&f.to),
                f.goodput_bps,
                f.delivered_bytes,
                f.retransmissions,
                f.timeouts,
                f.ecn_reductions,
                f.mean_rtt_s,
                f.mean_rto_s,
                f.delay_mean_ms,
                f.delay_p50_ms,
                f.delay_p90_ms,
                f.delay_p99_ms,
                f.completion_s
                    .map(|c| format!("{c:.6}"))
                    .unwrap_or_default(),
                f.injected_losses,
                f.queue_drops
            );
        }
        s
    }

    fn channels_csv(&self) -> String {
        let mut s = String::from("channel,rate_bps,delay_s,arrivals,drops_full,drops_early,marks,wire_losses,tx_packets,tx_bytes,utilisation,mean_queue_packets,max_queue_packets\n");
        for c in &self.channels {
            let _ = writeln!(
                s,
                "{},{},{:.6},{},{},{},{},{},{},{},{:.6},{:.4},{}",
                field(&c.name),
                c.rate_bps,
                c.delay_s,
                c.arrivals,
                c.drops_full,
                c.drops_early,
                c.marks,
                c.wire_losses,
                c.tx_packets,
                c.tx_bytes,
                c.utilisation,
                c.mean_queue_packets,
                c.max_queue_packets
            );
        }
        s
    }
}

/// What a run's output directory says about how it was made (`meta.json`), beside the scenario
/// as run (`scenario.toml`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunMeta {
    /// concord's version.
    pub concord_version: String,
    /// The git revision concord was built from (`unknown` outside a git checkout).
    pub git_revision: String,
    /// The scenario's name.
    pub scenario: String,
    /// The scenario file, if it came from one.
    pub scenario_file: Option<String>,
    /// The overrides applied to the file, `key = value` (values as TOML), in order.
    pub overrides: Vec<String>,
    /// The seed the run used.
    pub seed: u64,
    /// The command line (or the call) that made the run.
    pub command_line: Vec<String>,
}

impl RunMeta {
    /// Writes `meta.json` and `scenario.toml` (the scenario as run) into `dir`.
    pub fn write_dir(&self, scenario_toml: &str, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        let json = serde_json::to_string_pretty(self).map_err(io::Error::other)?;
        std::fs::write(dir.join("meta.json"), json + "\n")?;
        std::fs::write(dir.join("scenario.toml"), scenario_toml)
    }
}

/// Quotes a CSV field if it needs it (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn goodput_csv(sim: &Simulator) -> String {
    let mut s = String::from("time_s,flow,goodput_bps\n");
    for f in sim.flows() {
        let bin = f.goodput.bin().as_secs_f64();
        for (i, bps) in f.goodput.rates_bps(sim.end()).iter().enumerate() {
            let _ = writeln!(s, "{:.6},{},{:.1}", i as f64 * bin, field(&f.name), bps);
        }
    }
    s
}

fn queues_csv(sim: &Simulator) -> String {
    let mut s = String::from("time_s,channel,packets,bytes,average\n");
    for q in sim.queue_samples() {
        let name = sim
            .channels()
            .get(q.channel as usize)
            .map(|c| c.name.as_str())
            .unwrap_or("");
        let avg = q.average.map(|a| format!("{a:.4}")).unwrap_or_default();
        let _ = writeln!(
            s,
            "{:.6},{},{},{},{}",
            q.at.as_secs_f64(),
            field(name),
            q.packets,
            q.bytes,
            avg
        );
    }
    s
}

fn delay_csv(sim: &Simulator) -> String {
    let mut s = String::from("flow,lower_us,upper_us,count\n");
    for f in sim.flows() {
        for (lo, hi, n) in f.network.delay.buckets() {
            let _ = writeln!(
                s,
                "{},{:.3},{:.3},{}",
                field(&f.name),
                lo.as_secs_f64() * 1e6,
                hi.as_secs_f64() * 1e6,
                n
            );
        }
    }
    s
}

fn cwnd_csv(sim: &Simulator) -> String {
    let mut s = String::from("time_s,flow,cwnd_bytes,ssthresh_bytes\n");
    for c in sim.cwnd_samples() {
        let name = sim
            .flows()
            .get(c.flow as usize)
            .map(|f| f.name.as_str())
            .unwrap_or("");
        let ss = if c.ssthresh == u64::MAX {
            String::new()
        } else {
            c.ssthresh.to_string()
        };
        let _ = writeln!(
            s,
            "{:.9},{},{},{}",
            c.at.as_secs_f64(),
            field(name),
            c.cwnd,
            ss
        );
    }
    s
}

/// `estimator.csv`: one row per ACK of each flow in `record.estimator`. Rates in bytes per
/// second, windows in bytes (ssthresh empty while unbounded), times in seconds.
fn estimator_csv(sim: &Simulator) -> String {
    let mut s = String::from(
        "time_s,flow,cwnd_bytes,ssthresh_bytes,abe_sample_Bps,abe_filtered_Bps,t_k_s,tau_k_s,u_k_Bps,counter,fast_probing\n",
    );
    for e in sim.estimator_samples() {
        let name = sim
            .flows()
            .get(e.flow as usize)
            .map(|f| f.name.as_str())
            .unwrap_or("");
        let ss = if e.ssthresh == u64::MAX {
            String::new()
        } else {
            e.ssthresh.to_string()
        };
        let _ = writeln!(
            s,
            "{:.9},{},{},{},{:.1},{:.1},{:.6},{:.6},{:.1},{},{}",
            e.at.as_secs_f64(),
            field(name),
            e.cwnd,
            ss,
            e.abe_sample,
            e.abe_filtered,
            e.t_k.as_secs_f64(),
            e.tau_k.as_secs_f64(),
            e.u_k,
            e.counter,
            u8::from(e.fast_probing)
        );
    }
    s
}
