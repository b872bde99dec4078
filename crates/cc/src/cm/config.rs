//! The Congestion Manager's parameters, each with its default and its source.

use super::aging::AgingPolicy;
use super::aimd::AimdConfig;
use super::api::FeedbackMode;
use super::prober::ProberConfig;
use super::segregation::SegregationConfig;
use super::thresh::{InvalidThresh, ThreshHint};
use crate::time::Duration;
use crate::units::{Bytes, Rate};

/// Every parameter of a [`super::CongestionManager`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CmConfig {
    /// The largest grant and the AIMD's increase unit, in bytes (RFC 3124 `cm_mtu`).
    pub mtu: Bytes,
    /// A new macroflow's window, in bytes, at least one MTU (RFC 5681 section 3.1, IW).
    pub initial_cwnd: Bytes,
    /// A new macroflow's slow-start threshold, in bytes.
    pub initial_ssthresh: Bytes,
    /// The RTT assumed before the first sample: it sets the first rate (initial_cwnd per
    /// initial_rtt) and the first probe interval (RFC 6298 section 2.1 guesses one second).
    pub initial_rtt: Duration,
    /// The half-life of exponential aging (paper section 2.2.3).
    pub aging: AgingPolicy,
    /// The floor of the aged rate: aging slows a silent macroflow down to this, never below
    /// (paper section 2.2.3: "continue transmitting data without stalls, albeit at lower
    /// rates").
    pub min_rate: Rate,
    /// How long a grant stays usable without a `notify` (RFC 3124 grant expiry).
    pub grant_lifetime: Duration,
    /// The `cm_thresh` factors a new flow starts with (RFC 3124 section 4.3).
    pub thresh: ThreshHint,
    /// Where a new flow's feedback comes from: the application's `update` calls or the probe
    /// protocol (paper section 2.2.2).
    pub feedback: FeedbackMode,
    /// The probe protocol's parameters.
    pub prober: ProberConfig,
    /// Flow segregation's parameters (paper section 2.3).
    pub segregation: SegregationConfig,
    /// How long an empty macroflow keeps its congestion state for the next flow to the same
    /// destination, so that consecutive short flows learn from each other (paper section 1,
    /// shared state learning).
    pub macroflow_linger: Duration,
}

impl Default for CmConfig {
    fn default() -> Self {
        CmConfig {
            mtu: 1500,
            initial_cwnd: 2 * 1500,
            initial_ssthresh: Bytes::MAX,
            initial_rtt: Duration::from_secs(1),
            aging: AgingPolicy::MinRtt,
            min_rate: Rate::from_bps(8 * 1500),
            grant_lifetime: Duration::from_millis(100),
            thresh: ThreshHint::default(),
            feedback: FeedbackMode::Implicit,
            prober: ProberConfig::default(),
            segregation: SegregationConfig::default(),
            macroflow_linger: Duration::from_secs(10),
        }
    }
}

/// A parameter out of its range.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum CmConfigError {
    /// The MTU is zero.
    #[error("mtu must be at least 1 byte")]
    ZeroMtu,
    /// The initial RTT is zero.
    #[error("initial_rtt must be longer than zero")]
    ZeroInitialRtt,
    /// The grant lifetime is zero.
    #[error("grant_lifetime must be longer than zero")]
    ZeroGrantLifetime,
    /// No usable probe rate: zero, negative, infinite or not a number.
    #[error("probes_per_rtt must be a finite number above zero")]
    BadProbesPerRtt,
    /// The probe history holds no probe.
    #[error("max_history must be at least 1 probe")]
    ZeroProbeHistory,
    /// A `cm_thresh` factor is out of range.
    #[error("thresh: {0}")]
    Thresh(#[from] InvalidThresh),
    /// The segregation factor is not above 1.
    #[error("segregation factor {0} must be greater than 1")]
    SegregationFactor(f64),
    /// The segregation z threshold is not positive.
    #[error("segregation z {0} must be greater than 0")]
    SegregationZ(f64),
}

impl CmConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), CmConfigError> {
        if self.mtu == 0 {
            return Err(CmConfigError::ZeroMtu);
        }
        if self.initial_rtt.is_zero() {
            return Err(CmConfigError::ZeroInitialRtt);
        }
        if self.grant_lifetime.is_zero() {
            return Err(CmConfigError::ZeroGrantLifetime);
        }
        if !self.prober.rate_is_valid() {
            return Err(CmConfigError::BadProbesPerRtt);
        }
        if self.prober.max_history == 0 {
            return Err(CmConfigError::ZeroProbeHistory);
        }
        self.thresh.validate()?;
        let s = &self.segregation;
        if s.factor.is_nan() || s.factor <= 1.0 {
            return Err(CmConfigError::SegregationFactor(s.factor));
        }
        if s.z.is_nan() || s.z <= 0.0 {
            return Err(CmConfigError::SegregationZ(s.z));
        }
        Ok(())
    }

    /// The AIMD parameters these give.
    pub fn aimd(&self) -> AimdConfig {
        AimdConfig {
            mtu: self.mtu,
            initial_cwnd: self.initial_cwnd.max(self.mtu),
            initial_ssthresh: self.initial_ssthresh,
            initial_rtt: self.initial_rtt,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_valid_and_bad_values_are_named() {
        assert_eq!(CmConfig::default().validate(), Ok(()));
        let bad = CmConfig {
            mtu: 0,
            ..CmConfig::default()
        };
        assert_eq!(bad.validate(), Err(CmConfigError::ZeroMtu));
        let mut bad = CmConfig::default();
        bad.segregation.factor = 1.0;
        assert_eq!(bad.validate(), Err(CmConfigError::SegregationFactor(1.0)));
        let mut bad = CmConfig::default();
        bad.thresh.rate_downthresh = 2.0;
        assert!(matches!(bad.validate(), Err(CmConfigError::Thresh(_))));
        for p in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let mut bad = CmConfig::default();
            bad.prober.probes_per_rtt = p;
            assert_eq!(bad.validate(), Err(CmConfigError::BadProbesPerRtt), "{p}");
        }
        let mut half = CmConfig::default();
        half.prober.probes_per_rtt = 0.5;
        assert_eq!(half.validate(), Ok(()));
    }
}
