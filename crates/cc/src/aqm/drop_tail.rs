//! DropTail: a FIFO that drops arrivals that do not fit.

use super::{QueueLen, QueueLimit, Verdict};
use crate::units::Bytes;

/// A FIFO with a packet or byte limit.
#[derive(Clone, Debug)]
pub struct DropTail {
    limit: QueueLimit,
}

impl DropTail {
    /// A DropTail queue of the given capacity.
    pub fn new(limit: QueueLimit) -> DropTail {
        DropTail { limit }
    }

    /// Enqueue if the packet fits, else drop it.
    pub fn on_arrival(&mut self, len: QueueLen, size: Bytes) -> Verdict {
        if self.limit.is_full(len, size) {
            Verdict::DropFull
        } else {
            Verdict::Enqueue
        }
    }
}
