//! When a flow hears about a rate change: the thresholds of `cm_thresh` (RFC 3124 section 4.3).
//!
//! The CM tells an application of a change in its flow's rate or round-trip time with the
//! `change_rate()` callback of the paper (section 3.1, principle 3), `cmapp_update()` in
//! RFC 3124. So that small changes do not wake the application, it may set thresholds, as
//! factors of the values last reported: a new report is due when the rate falls below
//! `rate_downthresh` times the last reported rate or rises above `rate_upthresh` times it, and
//! likewise for the smoothed RTT.

use crate::time::Duration;
use crate::units::Rate;

/// The factors of `cm_thresh` (RFC 3124 section 4.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ThreshHint {
    /// Report when the rate falls below this factor of the last report, in [0, 1]; 0: never.
    pub rate_downthresh: f64,
    /// Report when the rate rises above this factor of the last report, at least 1;
    /// infinity: never.
    pub rate_upthresh: f64,
    /// Report when srtt falls below this factor of the last report, in [0, 1].
    pub rtt_downthresh: f64,
    /// Report when srtt rises above this factor of the last report, at least 1.
    pub rtt_upthresh: f64,
}

impl Default for ThreshHint {
    /// concord's default: changes of the rate by more than 10 % and of srtt by more than a
    /// factor of two. With factors of 1 every change is reported.
    fn default() -> Self {
        ThreshHint {
            rate_downthresh: 0.9,
            rate_upthresh: 1.1,
            rtt_downthresh: 0.5,
            rtt_upthresh: 2.0,
        }
    }
}

/// A threshold outside its range.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("{name} = {value} is out of range: down factors lie in [0, 1], up factors are at least 1")]
pub struct InvalidThresh {
    /// The field.
    pub name: &'static str,
    /// Its value.
    pub value: f64,
}

/// What a `change_rate` report tells the application (RFC 3124 `cmapp_update(newrate, newrtt,
/// newrttdev)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateReport {
    /// The flow's share of its macroflow's rate.
    pub rate: Rate,
    /// The macroflow's smoothed RTT.
    pub srtt: Duration,
    /// The macroflow's RTT variation.
    pub rttdev: Duration,
}

impl ThreshHint {
    /// Checks every factor's range.
    pub fn validate(&self) -> Result<(), InvalidThresh> {
        let down = |name, value: f64| {
            if (0.0..=1.0).contains(&value) {
                Ok(())
            } else {
                Err(InvalidThresh { name, value })
            }
        };
        let up = |name, value: f64| {
            if value >= 1.0 {
                Ok(())
            } else {
                Err(InvalidThresh { name, value })
            }
        };
        down("rate_downthresh", self.rate_downthresh)?;
        up("rate_upthresh", self.rate_upthresh)?;
        down("rtt_downthresh", self.rtt_downthresh)?;
        up("rtt_upthresh", self.rtt_upthresh)
    }

    /// True if `now` differs from `last` beyond the thresholds.
    pub fn exceeded(&self, last: &RateReport, now: &RateReport) -> bool {
        let beyond = |old: f64, new: f64, down: f64, up: f64| new < old * down || new > old * up;
        beyond(
            last.rate.bps_f64(),
            now.rate.bps_f64(),
            self.rate_downthresh,
            self.rate_upthresh,
        ) || beyond(
            last.srtt.as_secs_f64(),
            now.srtt.as_secs_f64(),
            self.rtt_downthresh,
            self.rtt_upthresh,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(kbps: u64, srtt_ms: u64) -> RateReport {
        RateReport {
            rate: Rate::from_kbps(kbps),
            srtt: Duration::from_millis(srtt_ms),
            rttdev: Duration::ZERO,
        }
    }

    #[test]
    fn only_changes_beyond_the_factors_are_reported() {
        let t = ThreshHint {
            rate_downthresh: 0.8,
            rate_upthresh: 1.5,
            rtt_downthresh: 0.5,
            rtt_upthresh: 2.0,
        };
        let last = report(1000, 100);
        assert!(!t.exceeded(&last, &report(800, 100)));
        assert!(t.exceeded(&last, &report(799, 100)));
        assert!(!t.exceeded(&last, &report(1500, 100)));
        assert!(t.exceeded(&last, &report(1501, 100)));
        assert!(!t.exceeded(&last, &report(1000, 200)));
        assert!(t.exceeded(&last, &report(1000, 201)));
        assert!(t.exceeded(&last, &report(1000, 49)));
    }

    #[test]
    fn factors_of_one_report_every_change_and_out_of_range_factors_are_refused() {
        let every = ThreshHint {
            rate_downthresh: 1.0,
            rate_upthresh: 1.0,
            rtt_downthresh: 1.0,
            rtt_upthresh: 1.0,
        };
        assert!(every.validate().is_ok());
        assert!(every.exceeded(&report(1000, 100), &report(1001, 100)));
        assert!(!every.exceeded(&report(1000, 100), &report(1000, 100)));
        let bad = ThreshHint {
            rate_upthresh: 0.5,
            ..ThreshHint::default()
        };
        assert_eq!(
            bad.validate(),
            Err(InvalidThresh {
                name: "rate_upthresh",
                value: 0.5
            })
        );
        let nan = ThreshHint {
            rtt_downthresh: f64::NAN,
            ..ThreshHint::default()
        };
        assert!(nan.validate().is_err());
    }
}
