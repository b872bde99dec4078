//! Random Early Detection (Floyd & Jacobson 1993), with ECN marking (RFC 3168).
//! PLACEHOLDER: to be written.

use super::{QueueLen, QueueLimit, Verdict};
use crate::rng::Rng;
use crate::time::Instant;
use crate::units::Bytes;

/// RED's parameters (names from Floyd & Jacobson 1993).
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard capacity of the queue.
    pub limit: QueueLimit,
    /// Lower threshold of the average queue, in the limit's unit (packets or bytes).
    pub min_th: f64,
    /// Upper threshold of the average queue, in the limit's unit.
    pub max_th: f64,
    /// The average's weight w_q.
    pub w_q: f64,
    /// Drop (mark) probability at max_th.
    pub max_p: f64,
    /// Gentle mode: the probability rises from max_p to 1 between max_th and 2 * max_th.
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them early (RFC 3168).
    pub ecn: bool,
    /// Typical packet size for the idle-time aging of avg, in bytes.
    pub mean_pktsize: Bytes,
}

impl RedConfig {
    /// RED with thresholds at 25% and 75% of the capacity, w_q = 0.002, max_p = 0.1, gentle,
    /// no ECN, 1500-byte mean packets.
    pub fn for_limit(limit: QueueLimit) -> RedConfig {
        RedConfig {
            limit,
            min_th: limit.value() * 0.25,
            max_th: limit.value() * 0.75,
            w_q: 0.002,
            max_p: 0.1,
            gentle: true,
            ecn: false,
            mean_pktsize: 1500,
        }
    }
}

/// A RED queue's state.
#[derive(Clone, Debug)]
pub struct Red {
    config: RedConfig,
    avg: f64,
}

impl Red {
    /// A RED queue.
    pub fn new(config: RedConfig, _link_rate_bps: u64) -> Red {
        Red { config, avg: 0.0 }
    }
    /// Admission decision.
    pub fn on_arrival(
        &mut self,
        _now: Instant,
        len: QueueLen,
        size: Bytes,
        _ect: bool,
        _rng: &mut Rng,
    ) -> Verdict {
        if self.config.limit.is_full(len, size) {
            Verdict::DropFull
        } else {
            Verdict::Enqueue
        }
    }
    /// Departure notification.
    pub fn on_departure(&mut self, _now: Instant, _len: QueueLen) {}
    /// The average queue.
    pub fn avg(&self) -> f64 {
        self.avg
    }
}
