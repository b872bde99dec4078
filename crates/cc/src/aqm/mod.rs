//! Active queue management: the disciplines of a router's output queue.
//!
//! Two shapes. An admission discipline ([`Aqm`]: [`DropTail`](drop_tail::DropTail) and
//! [`Red`](red::Red), Floyd & Jacobson 1993 with RFC 3168 ECN marking as an option) decides,
//! for each arriving packet, whether it is enqueued, enqueued with its ECN field set to CE, or
//! dropped, from the queue's length before admission; the caller owns the packets. A dequeue
//! discipline owns its packets, generic over [`QueuedPacket`], and may drop or mark when a
//! packet leaves: [`CodelQueue`](codel::CodelQueue) (RFC 8289) and
//! [`FqCodel`](fq_codel::FqCodel) (RFC 8290, one CoDel per flow queue).

pub mod codel;
pub mod drop_tail;
pub mod fq_codel;
pub mod red;

use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::Bytes;

pub use codel::{CodelConfig, CodelQueue};
pub use drop_tail::DropTail;
pub use fq_codel::{FqCodel, FqCodelConfig};
pub use red::{Red, RedConfig};

/// What a dequeue discipline needs to know of a packet it holds.
pub trait QueuedPacket {
    /// Bytes on the wire.
    fn size(&self) -> Bytes;
    /// True if the packet is ECN-capable (ECT(0) or ECT(1)).
    fn is_ect(&self) -> bool;
    /// Sets the ECN field to CE (RFC 3168 section 5).
    fn mark_ce(&mut self);
    /// The flow it belongs to, for a flow classifier (RFC 8290 section 4.1.1).
    fn flow(&self) -> u32;
}

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
    /// CoDel (RFC 8289).
    CoDel(CodelConfig),
    /// FQ-CoDel (RFC 8290).
    FqCodel(FqCodelConfig),
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
    /// CoDel's target or interval is zero.
    #[error("CoDel's {0} is zero; RFC 8289 suggests target = \"5ms\" and interval = \"100ms\"")]
    ZeroCodelTime(&'static str),
    /// FQ-CoDel's flows or quantum is zero.
    #[error("FQ-CoDel's {0} is zero; RFC 8290 suggests flows = 1024 and quantum = \"1514B\"")]
    ZeroFqSetting(&'static str),
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
            AqmConfig::CoDel(c) => c.limit,
            AqmConfig::FqCodel(c) => c.limit,
        }
    }

    /// Checks that the configuration can run.
    pub fn validate(&self) -> Result<(), AqmConfigError> {
        let limit = self.limit();
        if limit.value() <= 0.0 {
            return Err(AqmConfigError::ZeroLimit);
        }
        let (target, interval) = match self {
            AqmConfig::CoDel(c) => (c.target, c.interval),
            AqmConfig::FqCodel(c) => {
                if c.flows == 0 {
                    return Err(AqmConfigError::ZeroFqSetting("flows"));
                }
                if c.quantum == 0 {
                    return Err(AqmConfigError::ZeroFqSetting("quantum"));
                }
                (c.target, c.interval)
            }
            AqmConfig::DropTail { .. } => return Ok(()),
            AqmConfig::Red(_) => (Duration::ZERO, Duration::ZERO),
        };
        let AqmConfig::Red(c) = self else {
            if target.is_zero() {
                return Err(AqmConfigError::ZeroCodelTime("target"));
            }
            if interval.is_zero() {
                return Err(AqmConfigError::ZeroCodelTime("interval"));
            }
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
    /// The admission discipline of `config`, or `None` if the configuration names a dequeue
    /// discipline (CoDel, FQ-CoDel), which owns its packets; `link_rate_bps` lets RED age its
    /// average over idle periods (the "m" of Floyd & Jacobson section 11).
    pub fn new(config: &AqmConfig, link_rate_bps: u64) -> Option<Aqm> {
        match config {
            AqmConfig::DropTail { limit } => Some(Aqm::DropTail(DropTail::new(*limit))),
            AqmConfig::Red(c) => Some(Aqm::Red(Red::new(c.clone(), link_rate_bps))),
            AqmConfig::CoDel(_) | AqmConfig::FqCodel(_) => None,
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
