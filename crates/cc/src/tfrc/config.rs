//! A TFRC connection's parameters, with the defaults of RFC 5348.

use crate::time::Duration;
use crate::units::Bytes;

/// The parameters of a TFRC sender and receiver (RFC 5348). [`Default`] gives the RFC's values.
#[derive(Clone, Debug, PartialEq)]
pub struct TfrcConfig {
    /// The segment size s, in bytes (RFC 5348 section 3.1). The RFC leaves it to the
    /// application; 1000 bytes is the packet size of the CP experiments.
    pub segment_size: Bytes,
    /// b, packets acknowledged by one TCP ACK, in the equation (RFC 5348 section 3.1: 1).
    pub b: f64,
    /// t_RTO as a multiple of R in the equation (RFC 5348 section 3.1: t_RTO = 4R).
    pub t_rto_factor: f64,
    /// q, the filter constant of the sender's RTT estimate R = q*R + (1-q)*R_sample
    /// (RFC 5348 section 4.3: 0.9).
    pub q: f64,
    /// q2, the filter constant of R_sqmean in oscillation reduction (RFC 5348 section 4.5: 0.9).
    pub q2: f64,
    /// t_mbi, the maximum back-off interval: the rate never falls below s/t_mbi
    /// (RFC 5348 section 4.3: 64 s).
    pub t_mbi: Duration,
    /// The nofeedback timer before any feedback (RFC 5348 section 4.2: 2 s).
    pub initial_nofeedback: Duration,
    /// An RTT known before the first feedback (from connection set-up, RFC 5348 section 4.2):
    /// with it the sender starts at the initial rate W_init/R instead of one packet per second.
    pub initial_rtt: Option<Duration>,
    /// Oscillation reduction: pace at X_inst = X * R_sqmean / sqrt(R_sample)
    /// (RFC 5348 section 4.5, optional; off by default).
    pub oscillation_reduction: bool,
    /// NDUPACK, the later arrivals that declare a missing packet lost (RFC 5348 section 5.1: 3).
    pub ndupack: u32,
    /// n, the number of loss intervals averaged (RFC 5348 section 5.4: 8); even, at least 2.
    pub loss_intervals: usize,
    /// History discounting of old loss intervals (RFC 5348 section 5.5, optional; off by default).
    pub history_discounting: bool,
    /// The largest forward jump of sequence numbers the receiver accepts in one packet; a packet
    /// further ahead is rejected as malformed (this bounds the losses one arrival can declare).
    pub max_seq_jump: u64,
}

impl Default for TfrcConfig {
    fn default() -> Self {
        TfrcConfig {
            segment_size: 1000,
            b: 1.0,
            t_rto_factor: 4.0,
            q: 0.9,
            q2: 0.9,
            t_mbi: Duration::from_secs(64),
            initial_nofeedback: Duration::from_secs(2),
            initial_rtt: None,
            oscillation_reduction: false,
            ndupack: 3,
            loss_intervals: 8,
            history_discounting: false,
            max_seq_jump: 1 << 20,
        }
    }
}

/// Why a TFRC configuration is impossible.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TfrcConfigError {
    /// The segment size is zero.
    #[error("segment_size is 0; TFRC needs a packet size of at least one byte")]
    ZeroSegmentSize,
    /// An equation parameter is not a positive finite number.
    #[error("{name} is {value}; it must be a finite number above 0")]
    NotPositive {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A filter constant lies outside [0, 1).
    #[error("{name} is {value}; a filter constant must lie in [0, 1)")]
    FilterConstant {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A duration that must be positive is zero.
    #[error("{name} is 0; it must be longer than that")]
    ZeroDuration {
        /// The parameter's name.
        name: &'static str,
    },
    /// NDUPACK is zero.
    #[error(
        "ndupack is 0; at least one later arrival must declare a packet lost (RFC 5348 uses 3)"
    )]
    ZeroNdupack,
    /// The number of loss intervals is odd, below 2 or above 64.
    #[error("loss_intervals is {0}; it must be even and between 2 and 64 (RFC 5348 uses 8)")]
    LossIntervals(usize),
    /// The largest sequence jump is zero.
    #[error("max_seq_jump is 0; the receiver must accept at least the next sequence number")]
    ZeroSeqJump,
}

impl TfrcConfig {
    /// Checks every parameter; `Ok` means the sender and receiver can be built from it.
    pub fn validate(&self) -> Result<(), TfrcConfigError> {
        if self.segment_size == 0 {
            return Err(TfrcConfigError::ZeroSegmentSize);
        }
        for (name, value) in [("b", self.b), ("t_rto_factor", self.t_rto_factor)] {
            if !(value.is_finite() && value > 0.0) {
                return Err(TfrcConfigError::NotPositive { name, value });
            }
        }
        for (name, value) in [("q", self.q), ("q2", self.q2)] {
            if !(0.0..1.0).contains(&value) {
                return Err(TfrcConfigError::FilterConstant { name, value });
            }
        }
        for (name, value) in [
            ("t_mbi", self.t_mbi),
            ("initial_nofeedback", self.initial_nofeedback),
        ] {
            if value.is_zero() {
                return Err(TfrcConfigError::ZeroDuration { name });
            }
        }
        if self.initial_rtt.is_some_and(Duration::is_zero) {
            return Err(TfrcConfigError::ZeroDuration {
                name: "initial_rtt",
            });
        }
        if self.ndupack == 0 {
            return Err(TfrcConfigError::ZeroNdupack);
        }
        validate_loss_intervals(self.loss_intervals)?;
        if self.max_seq_jump == 0 {
            return Err(TfrcConfigError::ZeroSeqJump);
        }
        Ok(())
    }
}

/// Checks n, the number of loss intervals averaged (RFC 5348 section 5.4).
pub(crate) fn validate_loss_intervals(n: usize) -> Result<(), TfrcConfigError> {
    if !(2..=64).contains(&n) || n % 2 == 1 {
        return Err(TfrcConfigError::LossIntervals(n));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_the_rfc_values_and_valid() {
        let c = TfrcConfig::default();
        assert_eq!(c.validate(), Ok(()));
        assert_eq!(
            (c.b, c.t_rto_factor, c.q, c.ndupack, c.loss_intervals),
            (1.0, 4.0, 0.9, 3, 8)
        );
        assert_eq!(c.t_mbi, Duration::from_secs(64));
    }

    #[test]
    fn impossible_parameters_are_named_in_the_error() {
        let bad = |f: fn(&mut TfrcConfig)| {
            let mut c = TfrcConfig::default();
            f(&mut c);
            c.validate()
        };
        assert_eq!(
            bad(|c| c.segment_size = 0),
            Err(TfrcConfigError::ZeroSegmentSize)
        );
        assert_eq!(
            bad(|c| c.b = 0.0),
            Err(TfrcConfigError::NotPositive {
                name: "b",
                value: 0.0
            })
        );
        assert!(matches!(
            bad(|c| c.q = 1.0),
            Err(TfrcConfigError::FilterConstant { name: "q", .. })
        ));
        assert!(matches!(
            bad(|c| c.q2 = f64::NAN),
            Err(TfrcConfigError::FilterConstant { name: "q2", .. })
        ));
        assert_eq!(
            bad(|c| c.initial_rtt = Some(Duration::ZERO)),
            Err(TfrcConfigError::ZeroDuration {
                name: "initial_rtt"
            })
        );
        assert_eq!(
            bad(|c| c.loss_intervals = 7),
            Err(TfrcConfigError::LossIntervals(7))
        );
        assert_eq!(bad(|c| c.ndupack = 0), Err(TfrcConfigError::ZeroNdupack));
    }
}
