//! TCP NewReno's window arithmetic (RFC 5681 section 3.1; RFC 6582 for the recovery the sender
//! runs around it).

use super::controller::{AckInfo, CongestionKind, WindowController};
use crate::time::Instant;
use crate::units::Bytes;

/// NewReno: slow start and congestion avoidance on ACKs, halve on a congestion signal.
#[derive(Clone, Debug)]
pub struct NewReno {
    /// Sender maximum segment size (SMSS), in bytes.
    mss: Bytes,
    /// Congestion window, in bytes.
    cwnd: Bytes,
    /// Slow-start threshold, in bytes.
    ssthresh: Bytes,
    /// Bytes acknowledged in congestion avoidance not yet turned into growth (the fractional
    /// part of RFC 5681 eq. 3, kept exactly instead of rounding per ACK).
    ca_acked: Bytes,
}

impl NewReno {
    /// A NewReno controller with `initial_cwnd` bytes of window and the given ssthresh.
    pub fn new(mss: Bytes, initial_cwnd: Bytes, initial_ssthresh: Bytes) -> NewReno {
        NewReno {
            mss: mss.max(1),
            cwnd: initial_cwnd.max(mss),
            ssthresh: initial_ssthresh,
            ca_acked: 0,
        }
    }

    /// The sender maximum segment size, in bytes.
    pub fn mss(&self) -> Bytes {
        self.mss
    }

    /// ssthresh after a loss: max(FlightSize / 2, 2 * SMSS) (RFC 5681 eq. 4).
    pub fn halved(mss: Bytes, bytes_in_flight: Bytes) -> Bytes {
        (bytes_in_flight / 2).max(2 * mss)
    }
}

impl WindowController for NewReno {
    fn cwnd(&self) -> Bytes {
        self.cwnd
    }
    fn ssthresh(&self) -> Bytes {
        self.ssthresh
    }
    fn set_cwnd(&mut self, cwnd: Bytes) {
        self.cwnd = cwnd.max(self.mss);
    }
    fn set_ssthresh(&mut self, ssthresh: Bytes) {
        self.ssthresh = ssthresh.max(2 * self.mss);
    }

    fn on_ack(&mut self, _now: Instant, ack: &AckInfo) {
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        if self.cwnd < self.ssthresh {
            // Slow start: cwnd += min(N, SMSS) per ACK (RFC 5681 eq. 2).
            self.cwnd = self.cwnd.saturating_add(ack.bytes_acked.min(self.mss));
        } else {
            // Congestion avoidance: cwnd += SMSS * SMSS / cwnd per ACK (RFC 5681 eq. 3), with
            // the remainder carried so that growth is exactly one SMSS per cwnd of ACKs' worth.
            self.ca_acked += self.mss * self.mss;
            let grow = self.ca_acked / self.cwnd;
            if grow > 0 {
                self.ca_acked -= grow * self.cwnd;
                self.cwnd = self.cwnd.saturating_add(grow);
            }
        }
    }

    fn on_congestion(&mut self, _now: Instant, kind: CongestionKind, bytes_in_flight: Bytes) {
        self.ssthresh = NewReno::halved(self.mss, bytes_in_flight);
        self.ca_acked = 0;
        self.cwnd = match kind {
            // The loss window after a timeout is one segment (RFC 5681 eq. 4 and section 3.1).
            CongestionKind::Timeout => self.mss,
            // Fast retransmit: the sender inflates on top of this (RFC 6582 section 3.2 step 2).
            // ECN and outside requests: cwnd = ssthresh, no retransmission (RFC 3168 6.1.2).
            CongestionKind::DupAcks | CongestionKind::Ecn | CongestionKind::External => {
                self.ssthresh
            }
        };
    }

    fn on_repeated_timeout(&mut self, _now: Instant, _bytes_in_flight: Bytes) {
        // The loss window again; ssthresh was set by the episode's first timeout.
        self.ca_acked = 0;
        self.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const MSS: Bytes = 1000;

    fn ack(bytes: Bytes) -> AckInfo {
        AckInfo {
            bytes_acked: bytes,
            rtt: None,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(100),
            bytes_in_flight: 0,
            in_recovery: false,
            ece: false,
        }
    }

    #[test]
    fn slow_start_adds_at_most_one_mss_per_ack() {
        let mut c = NewReno::new(MSS, 10 * MSS, u64::MAX);
        c.on_ack(Instant::ZERO, &ack(2 * MSS));
        assert_eq!(c.cwnd(), 11 * MSS);
        c.on_ack(Instant::ZERO, &ack(500));
        assert_eq!(c.cwnd(), 11 * MSS + 500);
    }

    #[test]
    fn congestion_avoidance_adds_smss_squared_over_cwnd_per_ack() {
        let mut c = NewReno::new(MSS, 10 * MSS, 10 * MSS);
        c.on_ack(Instant::ZERO, &ack(MSS));
        // 1000 * 1000 / 10000 = 100 bytes.
        assert_eq!(c.cwnd(), 10_100);
        c.on_ack(Instant::ZERO, &ack(MSS));
        // 10^6 / 10100 = 99, remainder 100 carried.
        assert_eq!(c.cwnd(), 10_199);
    }

    #[test]
    fn congestion_avoidance_carries_the_fraction_a_large_window_would_round_away() {
        let big = 3_000 * MSS;
        let mut c = NewReno::new(MSS, big, big);
        c.on_ack(Instant::ZERO, &ack(MSS));
        c.on_ack(Instant::ZERO, &ack(MSS));
        assert_eq!(c.cwnd(), big, "a third of a byte per ACK so far");
        c.on_ack(Instant::ZERO, &ack(MSS));
        assert_eq!(c.cwnd(), big + 1);
    }

    #[test]
    fn duplicate_acks_and_recovery_acks_do_not_grow_the_window() {
        let mut c = NewReno::new(MSS, 10 * MSS, u64::MAX);
        c.on_ack(Instant::ZERO, &ack(0));
        c.on_ack(
            Instant::ZERO,
            &AckInfo {
                in_recovery: true,
                ..ack(MSS)
            },
        );
        assert_eq!(c.cwnd(), 10 * MSS);
    }

    #[test]
    fn loss_halves_flight_size_with_a_floor_of_two_segments() {
        let mut c = NewReno::new(MSS, 20 * MSS, u64::MAX);
        c.on_congestion(Instant::ZERO, CongestionKind::DupAcks, 20 * MSS);
        assert_eq!((c.ssthresh(), c.cwnd()), (10 * MSS, 10 * MSS));
        c.on_congestion(Instant::ZERO, CongestionKind::Ecn, 3 * MSS);
        assert_eq!((c.ssthresh(), c.cwnd()), (2 * MSS, 2 * MSS));
    }

    #[test]
    fn a_repeated_timeout_keeps_ssthresh_and_returns_to_the_loss_window() {
        let mut c = NewReno::new(MSS, 20 * MSS, u64::MAX);
        c.on_congestion(Instant::ZERO, CongestionKind::Timeout, 16 * MSS);
        c.set_cwnd(5 * MSS);
        c.on_repeated_timeout(Instant::ZERO, 2 * MSS);
        assert_eq!((c.ssthresh(), c.cwnd()), (8 * MSS, MSS));
    }

    #[test]
    fn timeout_sets_the_loss_window_of_one_segment() {
        let mut c = NewReno::new(MSS, 20 * MSS, u64::MAX);
        c.on_congestion(Instant::ZERO, CongestionKind::Timeout, 16 * MSS);
        assert_eq!((c.ssthresh(), c.cwnd()), (8 * MSS, MSS));
    }
}
