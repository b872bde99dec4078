//! Which flows of a macroflow may be due a `ChangeRate` report, without a pass over every flow.
//!
//! A flow's report is due when its rate or the macroflow's srtt has moved beyond its
//! `cm_thresh` factors of the values last reported (RFC 3124 section 4.3; [`ThreshHint`]). A
//! flow's rate is its effective weight `w` times the macroflow's rate per unit of weight
//! `u = rate / total weight` (paper section 2.4), so each threshold is a value of `u` (or of
//! the srtt) at which the flow next fires: the rate falls below `last_rate * down` when `u`
//! falls below `last_rate * down / w`, and rises above `last_rate * up` when `u` rises above
//! `last_rate * up / w`. The index keeps each flow under those four keys, in ordered sets, so a
//! change visits only the flows whose keys `u` or the srtt has crossed.
//!
//! The rate keys are widened by a margin (2 bit/s and a relative 1e-9) that covers the
//! rounding of the rate to whole bit/s and the floating-point difference between `rate * (w /
//! total)` and `(rate / total) * w`: the index may name a flow that is not due, never miss one
//! that is. The manager checks each candidate with [`ThreshHint::exceeded`], so the reports are
//! exactly those of a pass over every flow, in the same (flow handle) order.

use super::macroflow::FlowId;
use super::thresh::{RateReport, ThreshHint};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;

/// Relative widening of the rate keys, far above the few ulps of floating-point difference.
const RELATIVE_MARGIN: f64 = 1e-9;
/// Absolute widening of the rate keys, in bit/s: the rate is rounded to whole bit/s.
const ABSOLUTE_MARGIN_BPS: f64 = 2.0;

/// An `f64` ordered by [`f64::total_cmp`] (the keys are never NaN: factors are validated).
#[derive(Clone, Copy, Debug)]
struct Key(f64);

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The four keys of one reported flow.
#[derive(Clone, Copy, Debug)]
struct FlowKeys {
    /// Due (perhaps) when the rate per unit weight, in bit/s, falls below this.
    rate_down: Key,
    /// Due (perhaps) when the rate per unit weight, in bit/s, rises above this.
    rate_up: Key,
    /// Due when the srtt, in seconds, falls below this.
    rtt_down: Key,
    /// Due when the srtt, in seconds, rises above this.
    rtt_up: Key,
}

impl FlowKeys {
    /// The keys of a flow of effective weight `weight` last told `last`, with factors `t`.
    fn new(last: &RateReport, t: &ThreshHint, weight: f64) -> FlowKeys {
        let rate = last.rate.bps_f64();
        let srtt = last.srtt.as_secs_f64();
        let down = (rate * t.rate_downthresh + ABSOLUTE_MARGIN_BPS) / weight;
        let up = (rate * t.rate_upthresh - ABSOLUTE_MARGIN_BPS) / weight;
        FlowKeys {
            rate_down: Key(down * (1.0 + RELATIVE_MARGIN)),
            rate_up: Key(up * (1.0 - RELATIVE_MARGIN)),
            rtt_down: Key(srtt * t.rtt_downthresh),
            rtt_up: Key(srtt * t.rtt_upthresh),
        }
    }
}

/// The flows of one macroflow ordered by where their `ChangeRate` thresholds fire.
#[derive(Clone, Debug, Default)]
pub struct ThreshIndex {
    /// Flows never reported: due as soon as the macroflow has an estimate.
    unreported: BTreeSet<FlowId>,
    /// Each reported flow's keys.
    keys: BTreeMap<FlowId, FlowKeys>,
    /// Reported flows by their falling-rate key.
    rate_down: BTreeSet<(Key, FlowId)>,
    /// Reported flows by their rising-rate key.
    rate_up: BTreeSet<(Key, FlowId)>,
    /// Reported flows by their falling-srtt key.
    rtt_down: BTreeSet<(Key, FlowId)>,
    /// Reported flows by their rising-srtt key.
    rtt_up: BTreeSet<(Key, FlowId)>,
}

impl ThreshIndex {
    /// An empty index.
    pub fn new() -> ThreshIndex {
        ThreshIndex::default()
    }

    /// Files `flow` (replacing any earlier entry): last told `reported` (`None`: never), with
    /// factors `thresh` and effective weight `weight`.
    pub fn insert(
        &mut self,
        flow: FlowId,
        reported: Option<&RateReport>,
        thresh: &ThreshHint,
        weight: f64,
    ) {
        self.remove(flow);
        let Some(last) = reported else {
            self.unreported.insert(flow);
            return;
        };
        let k = FlowKeys::new(last, thresh, weight);
        self.rate_down.insert((k.rate_down, flow));
        self.rate_up.insert((k.rate_up, flow));
        self.rtt_down.insert((k.rtt_down, flow));
        self.rtt_up.insert((k.rtt_up, flow));
        self.keys.insert(flow, k);
    }

    /// Forgets `flow`.
    pub fn remove(&mut self, flow: FlowId) {
        self.unreported.remove(&flow);
        if let Some(k) = self.keys.remove(&flow) {
            self.rate_down.remove(&(k.rate_down, flow));
            self.rate_up.remove(&(k.rate_up, flow));
            self.rtt_down.remove(&(k.rtt_down, flow));
            self.rtt_up.remove(&(k.rtt_up, flow));
        }
    }

    /// The number of flows filed.
    pub fn len(&self) -> usize {
        self.unreported.len() + self.keys.len()
    }

    /// True if no flow is filed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if no flow can be due at `per_weight_bps` and `srtt_secs`: none unreported, and
    /// each set's extreme key on the side that fires not crossed (the sets of
    /// [`ThreshIndex::candidates`] are then all empty).
    fn none_crossed(&self, per_weight_bps: f64, srtt_secs: f64) -> bool {
        let (u, r) = (Key(per_weight_bps), Key(srtt_secs));
        self.unreported.is_empty()
            && self.rate_down.last().is_none_or(|(k, _)| *k <= u)
            && self.rate_up.first().is_none_or(|(k, _)| *k >= u)
            && self.rtt_down.last().is_none_or(|(k, _)| *k <= r)
            && self.rtt_up.first().is_none_or(|(k, _)| *k >= r)
    }

    /// The flows that may be due when the rate per unit weight is `per_weight_bps` (bit/s) and
    /// the srtt `srtt_secs` (seconds), in handle order, each once. Every flow whose report is
    /// due is among them.
    pub fn candidates(&self, per_weight_bps: f64, srtt_secs: f64) -> Vec<FlowId> {
        if self.none_crossed(per_weight_bps, srtt_secs) {
            // The common case of a request or a grant: no key crossed, no walk, no allocation.
            return Vec::new();
        }
        let above = |set: &BTreeSet<(Key, FlowId)>, x: f64| {
            set.range((
                Bound::Excluded((Key(x), FlowId(u32::MAX))),
                Bound::Unbounded,
            ))
            .map(|(_, f)| *f)
            .collect::<Vec<_>>()
        };
        let below = |set: &BTreeSet<(Key, FlowId)>, x: f64| {
            set.range(..(Key(x), FlowId(0)))
                .map(|(_, f)| *f)
                .collect::<Vec<_>>()
        };
        let mut out: Vec<FlowId> = self.unreported.iter().copied().collect();
        out.extend(above(&self.rate_down, per_weight_bps));
        out.extend(below(&self.rate_up, per_weight_bps));
        out.extend(above(&self.rtt_down, srtt_secs));
        out.extend(below(&self.rtt_up, srtt_secs));
        out.sort_unstable();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;
    use crate::units::Rate;

    fn report(kbps: u64, srtt_ms: u64) -> RateReport {
        RateReport {
            rate: Rate::from_kbps(kbps),
            srtt: Duration::from_millis(srtt_ms),
            rttdev: Duration::ZERO,
        }
    }

    #[test]
    fn unreported_flows_are_always_candidates() {
        let mut ix = ThreshIndex::new();
        ix.insert(FlowId(3), None, &ThreshHint::default(), 1.0);
        assert_eq!(ix.candidates(1e6, 0.1), vec![FlowId(3)]);
        assert_eq!(ix.len(), 1);
    }

    #[test]
    fn a_flow_is_a_candidate_only_beyond_its_factors() {
        // Weight 2, told 1000 kbit/s: 500 kbit/s per unit weight; factors 0.9 and 1.1.
        let mut ix = ThreshIndex::new();
        ix.insert(
            FlowId(1),
            Some(&report(1000, 100)),
            &ThreshHint::default(),
            2.0,
        );
        assert!(ix.candidates(500e3, 0.1).is_empty());
        assert!(ix.candidates(451e3, 0.1).is_empty());
        assert_eq!(ix.candidates(449e3, 0.1), vec![FlowId(1)]);
        assert!(ix.candidates(549e3, 0.1).is_empty());
        assert_eq!(ix.candidates(551e3, 0.1), vec![FlowId(1)]);
        // srtt factors 0.5 and 2.
        assert!(ix.candidates(500e3, 0.2).is_empty());
        assert_eq!(ix.candidates(500e3, 0.201), vec![FlowId(1)]);
        assert_eq!(ix.candidates(500e3, 0.049), vec![FlowId(1)]);
        ix.remove(FlowId(1));
        assert!(ix.candidates(1.0, 10.0).is_empty());
        assert!(ix.is_empty());
    }
}
