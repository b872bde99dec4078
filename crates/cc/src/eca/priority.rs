//! Unmanaged high-priority flows and their admission by peak rate (section III.B.1).
//!
//! "Any unmanaged traffic flow will push all other traffic out of the way": a flow sent without
//! a WTP shaper still counts in every router's arrivals, so L rises and the shaped flows make
//! room for it. That is a high-priority class, "provided that their total peak rate is lower
//! than the capacity of the network. If necessary, this can be arranged by the use of
//! admission control." [`PriorityAdmission`] is that admission control: it accepts a new
//! high-priority flow only while the admitted peak rates plus the new one stay within a
//! configured fraction of the capacity. A host sends an admitted flow unshaped; a refused one
//! can fall back to a managed flow ([`FlowClass::Managed`]) with a WTP shaper.
//!
//! The LAN experiments of section V.D use it for a 50 % CBR flow and a DVD-quality stream.

use super::error::{in_range, ConfigError};
use crate::units::Rate;
use std::collections::BTreeMap;

/// How a host treats a flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FlowClass {
    /// Shaped by WTP at w / L (section III.A.3).
    Managed {
        /// w_i, in bit/s per unit load.
        weight: f64,
    },
    /// Unshaped, admitted by peak rate (section III.B.1).
    HighPriority {
        /// The flow's peak rate.
        peak: Rate,
    },
}

/// Why a high-priority flow was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AdmissionError {
    /// The admitted peaks plus this one would exceed the limit.
    #[error("peak {requested} on top of {admitted} admitted exceeds the limit {limit}")]
    OverLimit {
        /// The peak rate asked for.
        requested: Rate,
        /// The sum of the peaks already admitted (without this flow's earlier peak).
        admitted: Rate,
        /// fraction * capacity.
        limit: Rate,
    },
    /// A peak rate of zero describes no flow.
    #[error("a peak rate of 0 bit/s describes no flow")]
    ZeroPeak,
}

/// Admission control for unmanaged high-priority flows keyed by `K`: the sum of admitted peak
/// rates stays at or below `fraction * capacity`.
#[derive(Clone, Debug)]
pub struct PriorityAdmission<K> {
    /// The capacity shared (the bottleneck or the LAN segment).
    capacity: Rate,
    /// The share of the capacity high-priority flows may take, in (0, 1].
    fraction: f64,
    /// fraction * capacity, rounded to the bit/s.
    limit: Rate,
    /// The admitted flows and their peaks.
    admitted: BTreeMap<K, Rate>,
    /// The sum of the admitted peaks, in bit/s.
    total: u128,
}

impl<K: Ord> PriorityAdmission<K> {
    /// Admission for `capacity`, of which high-priority peaks may take `fraction` (in (0, 1]).
    pub fn new(capacity: Rate, fraction: f64) -> Result<Self, ConfigError> {
        if capacity == Rate::ZERO {
            return Err(ConfigError::Zero { name: "capacity" });
        }
        in_range("fraction", fraction, f64::MIN_POSITIVE, 1.0)?;
        Ok(PriorityAdmission {
            capacity,
            fraction,
            limit: capacity.mul_f64(fraction),
            admitted: BTreeMap::new(),
            total: 0,
        })
    }

    /// The capacity.
    pub fn capacity(&self) -> Rate {
        self.capacity
    }

    /// The admitted share of the capacity.
    pub fn fraction(&self) -> f64 {
        self.fraction
    }

    /// fraction * capacity: the most the admitted peaks may add up to.
    pub fn limit(&self) -> Rate {
        self.limit
    }

    /// The sum of the admitted peak rates.
    pub fn admitted_total(&self) -> Rate {
        Rate::from_bps(u64::try_from(self.total).unwrap_or(u64::MAX))
    }

    /// The largest peak a new flow could be admitted with now.
    pub fn headroom(&self) -> Rate {
        let free = u128::from(self.limit.bps()).saturating_sub(self.total);
        Rate::from_bps(u64::try_from(free).unwrap_or(u64::MAX))
    }

    /// Admits `flow` with peak rate `peak` if the admitted peaks plus `peak` stay within the
    /// limit. A flow already admitted is re-admitted with its new peak (its old peak does not
    /// count against it); refused, it keeps its old admission.
    pub fn admit(&mut self, flow: K, peak: Rate) -> Result<(), AdmissionError> {
        if peak == Rate::ZERO {
            return Err(AdmissionError::ZeroPeak);
        }
        let old = self.admitted.get(&flow).map_or(0, |r| u128::from(r.bps()));
        let others = self.total - old;
        if others + u128::from(peak.bps()) > u128::from(self.limit.bps()) {
            return Err(AdmissionError::OverLimit {
                requested: peak,
                admitted: Rate::from_bps(u64::try_from(others).unwrap_or(u64::MAX)),
                limit: self.limit,
            });
        }
        self.admitted.insert(flow, peak);
        self.total = others + u128::from(peak.bps());
        Ok(())
    }

    /// `flow` ended: its peak no longer counts. Returns it, if it was admitted.
    pub fn release(&mut self, flow: &K) -> Option<Rate> {
        let peak = self.admitted.remove(flow)?;
        self.total = self.total.saturating_sub(u128::from(peak.bps()));
        Some(peak)
    }

    /// True if `flow` is admitted (and so bypasses WTP).
    pub fn is_admitted(&self, flow: &K) -> bool {
        self.admitted.contains_key(flow)
    }

    /// The admitted flows.
    pub fn len(&self) -> usize {
        self.admitted.len()
    }

    /// True when no flow is admitted.
    pub fn is_empty(&self) -> bool {
        self.admitted.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_are_admitted_while_their_peaks_fit_the_configured_share() {
        // 10 Mbit/s, 80 % for high priority: 8 Mbit/s of peaks.
        let mut a = PriorityAdmission::new(Rate::from_mbps(10), 0.8).expect("valid");
        assert_eq!(a.limit(), Rate::from_mbps(8));
        assert_eq!(a.admit(1, Rate::from_mbps(5)), Ok(()));
        assert_eq!(a.headroom(), Rate::from_mbps(3));
        assert_eq!(
            a.admit(2, Rate::from_bps(3_000_001)),
            Err(AdmissionError::OverLimit {
                requested: Rate::from_bps(3_000_001),
                admitted: Rate::from_mbps(5),
                limit: Rate::from_mbps(8),
            })
        );
        assert!(!a.is_admitted(&2));
        // Exactly at the limit is allowed.
        assert_eq!(a.admit(2, Rate::from_mbps(3)), Ok(()));
        assert_eq!(a.admitted_total(), Rate::from_mbps(8));
        assert_eq!(a.headroom(), Rate::ZERO);
        assert_eq!(a.release(&1), Some(Rate::from_mbps(5)));
        assert_eq!(a.admitted_total(), Rate::from_mbps(3));
        assert_eq!(a.release(&1), None);
        assert_eq!(a.admit(3, Rate::from_mbps(5)), Ok(()));
        assert_eq!(a.len(), 2);
    }

    #[test]
    fn a_readmitted_flow_is_judged_without_its_old_peak() {
        let mut a = PriorityAdmission::new(Rate::from_mbps(10), 0.5).expect("valid");
        a.admit("cbr", Rate::from_mbps(4)).expect("fits");
        assert_eq!(a.admit("cbr", Rate::from_mbps(5)), Ok(()));
        assert_eq!(a.admitted_total(), Rate::from_mbps(5));
        assert!(a.admit("cbr", Rate::from_mbps(6)).is_err());
        assert_eq!(a.admitted_total(), Rate::from_mbps(5));
        assert_eq!(a.admit("dvd", Rate::ZERO), Err(AdmissionError::ZeroPeak));
    }

    #[test]
    fn impossible_configurations_are_refused() {
        assert!(PriorityAdmission::<u8>::new(Rate::ZERO, 0.5).is_err());
        assert!(PriorityAdmission::<u8>::new(Rate::from_mbps(1), 0.0).is_err());
        assert!(PriorityAdmission::<u8>::new(Rate::from_mbps(1), 1.5).is_err());
        assert!(PriorityAdmission::<u8>::new(Rate::from_mbps(1), f64::NAN).is_err());
    }
}
