//! Active queue management: the admission decision of a router's output queue.
//!
//! The simulator (and the user-space router) own the packets; an [`Aqm`] only decides, for each
//! arriving packet, whether it is enqueued, enqueued with its ECN field set to CE, or dropped,
//! from the queue's length before admission. Disciplines: [`DropTail`](drop_tail::DropTail)
//! and [`Red`](red::Red) (Floyd & Jacobson 1993, with RFC 3168 ECN marking as an option).

pub mod drop_tail;
pub mod red;

use crate::rng::Rng;
use crate::time::Instant;
use crate::units::Bytes;

pub use drop_tail::DropTail;
pub use red::{Red, RedConfig};

/// A queue's length, as seen by an admission decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueLen {
    /// Packets in the queue (not counting one being transmitted).
    pub packets: u32,
    /// Bytes in the queue (not counting one being transmitted).
    pub bytes: Bytes,
}

/// A queue's capacity, in packets or in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(u32),
    /// At most this many bytes.
    Bytes(Bytes),
}

impl QueueLimit {
    /// True if a packet of `size` bytes does not fit in a queue of length `len`.
    pub fn is_full(self, len: QueueLen, size: Bytes) -> bool {
        match self {
            QueueLimit::Packets(n) => len.packets >= n,
            QueueLimit::Bytes(b) => len.bytes.saturating_add(size) > b,
        }
    }
}

/// What happens to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Enqueue it unchanged.
    Enqueue,
    /// Enqueue it with the ECN field set to CE (RFC 3168 section 5).
    Mark,
    /// Drop it because the queue is full (a forced drop).
    DropFull,
    /// Drop it early, as congestion notification (RED's probabilistic or forced drop on avg).
    DropEarly,
}

impl Verdict {
    /// True if the packet is discarded.
    pub fn is_drop(self) -> bool {
        matches!(self, Verdict::DropFull | Verdict::DropEarly)
    }
}

/// How a queue is configured; the value a scenario file produces.
#[derive(Clone, Debug, PartialEq)]
pub enum AqmConfig {
    /// A FIFO that drops arrivals when full.
    DropTail {
        /// The capacity.
        limit: QueueLimit,
    },
    /// Random Early Detection, optionally marking ECN-capable packets instead of dropping.
    Red(RedConfig),
}

/// Why a queue configuration is impossible.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AqmConfigError {
    /// The capacity is zero.
    #[error("the queue limit is zero; give at least one packet (e.g. `limit = \"100pkt\"`)")]
    ZeroLimit,
    /// RED's thresholds are out of order.
    #[error("min_th ({min_th}) must be below max_th ({max_th})")]
    ThresholdOrder {
        /// The lower threshold.
        min_th: f64,
        /// The upper threshold.
        max_th: f64,
    },
    /// A RED threshold is negative or above the capacity.
    #[error("{name} = {value} lies outside the queue (0..={limit})")]
    ThresholdRange {
        /// Which threshold.
        name: &'static str,
        /// Its value.
        value: f64,
        /// The capacity in the same unit.
        limit: f64,
    },
    /// RED's weight is not in (0, 1].
    #[error("w_q = {0} must lie in (0, 1]; Floyd & Jacobson suggest 0.002")]
    Weight(f64),
    /// RED's max_p is not in (0, 1].
    #[error("max_p = {0} must lie in (0, 1]; 0.1 is usual")]
    MaxP(f64),
}

impl QueueLimit {
    /// The capacity as a number in its own unit (packets or bytes).
    pub fn value(self) -> f64 {
        match self {
            QueueLimit::Packets(n) => n as f64,
            QueueLimit::Bytes(b) => b as f64,
        }
    }
}

impl AqmConfig {
    /// The hard capacity.
    pub fn limit(&self) -> QueueLimit {
        match self {
            AqmConfig::DropTail { limit } => *limit,
            AqmConfig::Red(c) => c.limit,
        }
    }

    /// Checks that the configuration can run.
    pub fn validate(&self) -> Result<(), AqmConfigError> {
        let limit = self.limit();
        if limit.value() <= 0.0 {
            return Err(AqmConfigError::ZeroLimit);
        }
        let AqmConfig::Red(c) = self else {
            return Ok(());
        };
        for (name, value) in [("min_th", c.min_th), ("max_th", c.max_th)] {
            if !(0.0..=limit.value()).contains(&value) {
                return Err(AqmConfigError::ThresholdRange {
                    name,
                    value,
                    limit: limit.value(),
                });
            }
        }
        if c.min_th >= c.max_th {
            return Err(AqmConfigError::ThresholdOrder {
                min_th: c.min_th,
                max_th: c.max_th,
            });
        }
        if !(c.w_q > 0.0 && c.w_q <= 1.0) {
            return Err(AqmConfigError::Weight(c.w_q));
        }
        if !(c.max_p > 0.0 && c.max_p <= 1.0) {
            return Err(AqmConfigError::MaxP(c.max_p));
        }
        Ok(())
    }
}

/// A queue discipline; an enum so that per-packet dispatch is a match, not a virtual call.
#[derive(Clone, Debug)]
pub enum Aqm {
    /// See [`DropTail`].
    DropTail(DropTail),
    /// See [`Red`].
    Red(Red),
}

impl Aqm {
    /// A discipline from its configuration; `link_rate_bps` lets RED age its average over idle
    /// periods (the "m" of Floyd & Jacobson section 11).
    pub fn new(config: &AqmConfig, link_rate_bps: u64) -> Aqm {
        match config {
            AqmConfig::DropTail { limit } => Aqm::DropTail(DropTail::new(*limit)),
            AqmConfig::Red(c) => Aqm::Red(Red::new(c.clone(), link_rate_bps)),
        }
    }

    /// Decides the fate of a packet of `size` bytes arriving at a queue of length `len`;
    /// `ect` says the packet is ECN-capable (ECT(0) or ECT(1)).
    pub fn on_arrival(
        &mut self,
        now: Instant,
        len: QueueLen,
        size: Bytes,
        ect: bool,
        rng: &mut Rng,
    ) -> Verdict {
        match self {
            Aqm::DropTail(q) => q.on_arrival(len, size),
            Aqm::Red(q) => q.on_arrival(now, len, size, ect, rng),
        }
    }

    /// Tells the discipline that a packet left and the queue now has length `len`
    /// (RED starts its idle clock when the queue empties).
    pub fn on_departure(&mut self, now: Instant, len: QueueLen) {
        if let Aqm::Red(q) = self {
            q.on_departure(now, len);
        }
    }

    /// The discipline's average queue estimate in its own unit (packets or bytes), if it keeps one.
    pub fn average(&self) -> Option<f64> {
        match self {
            Aqm::DropTail(_) => None,
            Aqm::Red(q) => Some(q.avg()),
        }
    }
}
