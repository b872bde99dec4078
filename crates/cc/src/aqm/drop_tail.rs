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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_limited_queue_drops_the_arrival_once_it_holds_the_limit() {
        let mut q = DropTail::new(QueueLimit::Packets(3));
        let len = |packets| QueueLen {
            packets,
            bytes: u64::from(packets) * 1500,
        };
        assert_eq!(q.on_arrival(len(2), 1500), Verdict::Enqueue);
        assert_eq!(q.on_arrival(len(3), 1500), Verdict::DropFull);
    }

    #[test]
    fn a_byte_limited_queue_admits_a_packet_that_exactly_fills_it() {
        let mut q = DropTail::new(QueueLimit::Bytes(4000));
        let len = QueueLen {
            packets: 2,
            bytes: 3000,
        };
        assert_eq!(q.on_arrival(len, 1000), Verdict::Enqueue);
        assert_eq!(q.on_arrival(len, 1001), Verdict::DropFull);
    }
}
