//! Flow segregation (paper section 2.3): flows of one macroflow that the network treats
//! differently are split into separate macroflows.
//!
//! The paper proposes to "classify flows into aggregates based on loss rates and perceived
//! receiver throughputs", obtained per flow from the probing protocol, and to segregate flows
//! "if their properties are very different", but leaves the test open. concord's test, on the
//! per-flow counts that probe responses bring:
//!
//! - each of the two flows has at least `min_packets` packets measured (sent in intervals a
//!   response covered), so that both loss estimates rest on enough samples;
//! - the higher loss rate is at least `factor` times the lower one;
//! - the two-proportion z statistic, `z = |p1 - p2| / sqrt(p (1 - p) (1/n1 + 1/n2))` with
//!   `p` the pooled loss rate, is at least `z`: with the default of 4 the chance that two flows
//!   with the same loss rate pass is about 6e-5 per comparison.
//!
//! When the flows with the lowest and the highest loss rate differ by this test, every measured
//! flow closer in loss rate to the highest goes to a new macroflow; the rest, and flows not yet
//! measured enough, stay. Throughput, in bytes received per second, is measured alongside and
//! reported, but not tested: the CM sets each flow's sending rate itself, so a difference in
//! received throughput that is not a difference in loss comes from the weights or from the
//! application, not from the network.

use super::macroflow::FlowId;
use super::prober::FlowMeasurement;
use crate::time::Instant;
use crate::units::{Bytes, Rate};
use std::collections::BTreeMap;

/// The segregation test's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SegregationConfig {
    /// Run the test after each probe response.
    pub enabled: bool,
    /// Packets a flow must have had measured before its loss rate counts.
    pub min_packets: u64,
    /// The factor by which the higher loss rate must exceed the lower (greater than 1).
    pub factor: f64,
    /// The z statistic the difference must reach.
    pub z: f64,
}

impl Default for SegregationConfig {
    fn default() -> Self {
        SegregationConfig {
            enabled: true,
            min_packets: 1000,
            factor: 2.0,
            z: 4.0,
        }
    }
}

/// What the probe responses measured for one flow since it joined its macroflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowSample {
    /// Packets sent in measured intervals.
    pub sent_packets: u64,
    /// Of these, packets lost.
    pub lost_packets: u64,
    /// Bytes received in measurements after the first.
    pub recd_bytes: Bytes,
    /// When the first measurement arrived.
    pub first: Option<Instant>,
    /// When the latest measurement arrived.
    pub last: Option<Instant>,
}

impl FlowSample {
    /// Adds a measurement that arrived at `now`.
    pub fn record(&mut self, now: Instant, m: &FlowMeasurement) {
        self.sent_packets = self.sent_packets.saturating_add(m.sent_packets);
        self.lost_packets = self.lost_packets.saturating_add(m.lost_packets());
        if self.first.is_some() {
            self.recd_bytes = self.recd_bytes.saturating_add(m.delivered_bytes());
        } else {
            self.first = Some(now);
        }
        self.last = Some(now);
    }

    /// Lost over sent packets; `None` before any packet was measured.
    pub fn loss_rate(&self) -> Option<f64> {
        (self.sent_packets > 0).then(|| self.lost_packets as f64 / self.sent_packets as f64)
    }

    /// Bytes received per second between the first and the latest measurement; `None` until
    /// two measurements at different times.
    pub fn throughput(&self) -> Option<Rate> {
        let span = self.last?.checked_since(self.first?)?;
        (!span.is_zero()).then(|| Rate::from_bytes_over(self.recd_bytes, span))
    }
}

/// True if the two flows' loss rates differ by the test of this module.
pub fn differ(a: &FlowSample, b: &FlowSample, config: &SegregationConfig) -> bool {
    let (n1, n2) = (a.sent_packets, b.sent_packets);
    if n1 < config.min_packets.max(1) || n2 < config.min_packets.max(1) {
        return false;
    }
    let (p1, p2) = (
        a.lost_packets as f64 / n1 as f64,
        b.lost_packets as f64 / n2 as f64,
    );
    let (lo, hi) = if p1 <= p2 { (p1, p2) } else { (p2, p1) };
    if hi < lo * config.factor {
        return false;
    }
    let pooled = (a.lost_packets + b.lost_packets) as f64 / (n1 + n2) as f64;
    let var = pooled * (1.0 - pooled) * (1.0 / n1 as f64 + 1.0 / n2 as f64);
    if var <= 0.0 {
        return false;
    }
    (hi - lo) / var.sqrt() >= config.z
}

/// Per-flow samples and the split decision.
#[derive(Clone, Debug)]
pub struct Segregator {
    /// The test's parameters.
    config: SegregationConfig,
    /// Per flow, since it joined its macroflow.
    samples: BTreeMap<FlowId, FlowSample>,
}

impl Segregator {
    /// No samples yet.
    pub fn new(config: SegregationConfig) -> Segregator {
        Segregator {
            config,
            samples: BTreeMap::new(),
        }
    }

    /// The test's parameters.
    pub fn config(&self) -> &SegregationConfig {
        &self.config
    }

    /// Adds a measurement of `flow` that arrived at `now`.
    pub fn record(&mut self, flow: FlowId, now: Instant, m: &FlowMeasurement) {
        self.samples.entry(flow).or_default().record(now, m);
    }

    /// The flow's sample, if it has one.
    pub fn sample(&self, flow: FlowId) -> Option<&FlowSample> {
        self.samples.get(&flow)
    }

    /// Drops the flow's sample (it closed, or moved to another macroflow).
    pub fn forget(&mut self, flow: FlowId) {
        self.samples.remove(&flow);
    }

    /// Among the flows of one macroflow, the ones to split off into a new macroflow, in flow
    /// order; `None` if the macroflow stays whole.
    pub fn decide(&self, flows: impl IntoIterator<Item = FlowId>) -> Option<Vec<FlowId>> {
        let measured: Vec<(FlowId, &FlowSample, f64)> = flows
            .into_iter()
            .filter_map(|f| {
                let s = self.samples.get(&f)?;
                let p = s.loss_rate()?;
                (s.sent_packets >= self.config.min_packets).then_some((f, s, p))
            })
            .collect();
        let by_loss =
            |x: &&(FlowId, &FlowSample, f64), y: &&(FlowId, &FlowSample, f64)| x.2.total_cmp(&y.2);
        let lo = measured.iter().min_by(by_loss)?;
        let hi = measured.iter().max_by(by_loss)?;
        if !differ(lo.1, hi.1, &self.config) {
            return None;
        }
        let mut split: Vec<FlowId> = measured
            .iter()
            .filter(|(_, _, p)| hi.2 - p < p - lo.2)
            .map(|(f, _, _)| *f)
            .collect();
        split.sort();
        Some(split)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn m(sent: u64, lost: u64) -> FlowMeasurement {
        FlowMeasurement {
            sent_packets: sent,
            sent_bytes: sent * 1000,
            recd_packets: sent - lost,
            recd_bytes: (sent - lost) * 1000,
            ..FlowMeasurement::default()
        }
    }

    /// Feeds `rounds` responses of 100 packets per flow, each lost with the flow's probability.
    fn feed(s: &mut Segregator, rng: &mut Rng, losses: &[f64], rounds: u64) -> Option<Vec<FlowId>> {
        let mut first = None;
        for round in 0..rounds {
            for (i, p) in losses.iter().enumerate() {
                let lost = (0..100).filter(|_| rng.bernoulli(*p)).count() as u64;
                s.record(
                    FlowId(i as u32),
                    Instant::from_millis(50 * round),
                    &m(100, lost),
                );
            }
            let d = s.decide((0..losses.len() as u32).map(FlowId));
            if first.is_none() {
                first = d;
            }
        }
        first
    }

    #[test]
    fn two_flow_classes_with_loss_1_and_10_percent_are_split() {
        let mut s = Segregator::new(SegregationConfig::default());
        let mut rng = Rng::new(77);
        let split = feed(&mut s, &mut rng, &[0.01, 0.10, 0.01, 0.10], 50);
        assert_eq!(split, Some(vec![FlowId(1), FlowId(3)]));
    }

    #[test]
    fn flows_with_equal_loss_rates_are_not_split() {
        let mut rng = Rng::new(78);
        for p in [0.01, 0.05, 0.10] {
            let mut s = Segregator::new(SegregationConfig::default());
            assert_eq!(feed(&mut s, &mut rng, &[p; 4], 300), None, "loss {p}");
        }
    }

    #[test]
    fn no_split_before_both_flows_have_enough_samples() {
        let mut s = Segregator::new(SegregationConfig::default());
        s.record(FlowId(0), Instant::ZERO, &m(999, 0));
        s.record(FlowId(1), Instant::ZERO, &m(5000, 2500));
        assert_eq!(s.decide([FlowId(0), FlowId(1)]), None);
        s.record(FlowId(0), Instant::ZERO, &m(1, 0));
        assert_eq!(s.decide([FlowId(0), FlowId(1)]), Some(vec![FlowId(1)]));
    }

    #[test]
    fn the_test_needs_both_the_factor_and_the_z_statistic() {
        let c = SegregationConfig::default();
        let sample = |sent, lost| FlowSample {
            sent_packets: sent,
            lost_packets: lost,
            ..FlowSample::default()
        };
        // 5 % against 9 %: z = 0.04 / sqrt(0.07 * 0.93 * 2e-4) = 11.1, factor 1.8 < 2.
        assert!(!differ(&sample(10_000, 500), &sample(10_000, 900), &c));
        // 5 % against 10 %: factor 2 and z = 13.4.
        assert!(differ(&sample(10_000, 500), &sample(10_000, 1000), &c));
        // 1 % against 3 % on 1000 packets each: factor 3, z = 3.2 < 4.
        assert!(!differ(&sample(1000, 10), &sample(1000, 30), &c));
        // No loss anywhere: nothing to tell apart.
        assert!(!differ(&sample(5000, 0), &sample(5000, 0), &c));
    }

    #[test]
    fn throughput_is_bytes_received_after_the_first_measurement_over_the_time_since() {
        let mut s = FlowSample::default();
        s.record(Instant::from_millis(100), &m(10, 0));
        assert_eq!(s.throughput(), None);
        s.record(Instant::from_millis(600), &m(50, 0));
        // 50 000 bytes in 500 ms: 800 kbit/s.
        assert_eq!(s.throughput(), Some(Rate::from_kbps(800)));
        assert_eq!(s.loss_rate(), Some(0.0));
    }
}
