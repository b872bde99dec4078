//! TCP Westwood+ (Mascolo et al.): NewReno's growth, with ssthresh and cwnd set after a
//! congestion signal from an end-to-end bandwidth estimate (BWE) instead of halving.
//!
//! The estimate is taken once per round trip: the bytes the ACK stream reported delivered during
//! the last RTT, divided by that interval, then low-pass filtered with
//! `BWE <- 7/8 BWE + 1/8 sample` (the Westwood+ filter; the first sample initialises BWE).
//! A duplicate ACK counts as one segment delivered, as ns-2's Westwood+ counts it
//! ([`DeliveredBytes`]).

use super::controller::{AckInfo, CongestionKind, WindowController};
use super::new_reno::NewReno;
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::Bytes;

/// The weight of a new sample in the Westwood+ filter: `BWE <- (1 - g) BWE + g sample`, g = 1/8.
pub const WESTWOOD_FILTER_GAIN: f64 = 0.125;

/// The bytes each ACK reports delivered to the receiver, for bandwidth estimators.
///
/// A new ACK reports its cumulative advance; a duplicate ACK (zero advance) reports one segment,
/// which left the network even though it arrived out of order. The cumulative ACK that later
/// covers such segments gives back what the duplicates already counted, so over a connection
/// the total equals the bytes acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveredBytes {
    /// Sender maximum segment size, in bytes.
    mss: Bytes,
    /// Bytes counted for duplicate ACKs and not yet covered by a cumulative advance.
    dup_credit: Bytes,
}

impl DeliveredBytes {
    /// A counter for segments of `mss` bytes.
    pub fn new(mss: Bytes) -> DeliveredBytes {
        DeliveredBytes {
            mss: mss.max(1),
            dup_credit: 0,
        }
    }

    /// The bytes an ACK that advanced the cumulative ACK point by `bytes_acked` reports
    /// delivered (zero advance: a duplicate ACK, one segment).
    pub fn on_ack(&mut self, bytes_acked: Bytes) -> Bytes {
        if bytes_acked == 0 {
            self.dup_credit = self.dup_credit.saturating_add(self.mss);
            return self.mss;
        }
        let already = self.dup_credit.min(bytes_acked);
        self.dup_credit -= already;
        bytes_acked - already
    }

    /// Bytes counted for duplicate ACKs that no cumulative ACK has covered yet.
    pub fn dup_credit(&self) -> Bytes {
        self.dup_credit
    }
}

/// ssthresh from a bandwidth estimate: `rate * rtt_min` in whole segments, at least two, in
/// bytes. `rate` is in bytes per second.
pub(crate) fn window_from_rate(rate: f64, rtt_min: Duration, mss: Bytes) -> Bytes {
    let mss = mss.max(1);
    // bytes = rate [B/s] * rtt_min [ns] / 1e9, computed in that order so that round numbers
    // stay exact in binary floating point.
    let bytes = rate * rtt_min.as_nanos() as f64 / NANOS_PER_SEC as f64;
    // The float-to-integer cast saturates (NaN gives 0), so this cannot panic.
    let segments = (bytes / mss as f64).floor() as u64;
    segments.max(2).saturating_mul(mss)
}

/// The loss reaction Westwood+ and MCCP share: NewReno's own first (it clears its growth
/// remainder, and its halved window stays when there is no estimate yet), then, given
/// `ssthresh` from a bandwidth estimate ([`window_from_rate`]): ssthresh = that value; after a
/// timeout cwnd = one segment; after three duplicate ACKs, ECN or an outside request cwnd =
/// ssthresh if cwnd was larger ("if cwnd > ssthresh then cwnd = ssthresh": a reduction never
/// raises the window).
pub(crate) fn reduce_to_estimate(
    reno: &mut NewReno,
    now: Instant,
    kind: CongestionKind,
    bytes_in_flight: Bytes,
    ssthresh: Option<Bytes>,
) {
    let cwnd_before = reno.cwnd();
    reno.on_congestion(now, kind, bytes_in_flight);
    let Some(ssthresh) = ssthresh else {
        return;
    };
    reno.set_ssthresh(ssthresh);
    let cwnd = match kind {
        CongestionKind::Timeout => reno.mss(),
        CongestionKind::DupAcks | CongestionKind::Ecn | CongestionKind::External => {
            cwnd_before.min(ssthresh)
        }
    };
    reno.set_cwnd(cwnd);
}

/// The rate, in bytes per second, that moves `bytes` in `span`; `None` for an empty span.
pub(crate) fn rate_over(bytes: Bytes, span: Duration) -> Option<f64> {
    if span.is_zero() {
        return None;
    }
    Some(bytes as f64 * NANOS_PER_SEC as f64 / span.as_nanos() as f64)
}

/// The smallest RTT seen, if the sender has seen one (`AckInfo::min_rtt` is `Duration::MAX`
/// before the first sample).
pub(crate) fn known_min_rtt(ack: &AckInfo) -> Option<Duration> {
    (ack.min_rtt != Duration::MAX).then_some(ack.min_rtt)
}

/// TCP Westwood+: NewReno growth, bandwidth-estimate-driven reduction.
#[derive(Clone, Debug)]
pub struct Westwood {
    /// Slow start and congestion avoidance are NewReno's; this holds cwnd and ssthresh.
    reno: NewReno,
    /// Per-ACK delivered bytes, duplicate ACKs as one segment.
    delivered: DeliveredBytes,
    /// Start of the current measurement interval (the arrival of the ACK that closed the last
    /// one); `None` before the first ACK.
    interval_start: Option<Instant>,
    /// Bytes reported delivered since `interval_start`.
    interval_bytes: Bytes,
    /// The last raw sample, in bytes per second.
    sample: Option<f64>,
    /// The filtered bandwidth estimate BWE, in bytes per second.
    bwe: Option<f64>,
    /// The smallest RTT seen.
    rtt_min: Option<Duration>,
}

impl Westwood {
    /// A Westwood+ controller with `initial_cwnd` bytes of window and the given ssthresh, for
    /// segments of `mss` bytes.
    pub fn new(mss: Bytes, initial_cwnd: Bytes, initial_ssthresh: Bytes) -> Westwood {
        let reno = NewReno::new(mss, initial_cwnd, initial_ssthresh);
        Westwood {
            delivered: DeliveredBytes::new(reno.mss()),
            reno,
            interval_start: None,
            interval_bytes: 0,
            sample: None,
            bwe: None,
            rtt_min: None,
        }
    }

    /// The filtered bandwidth estimate BWE, in bytes per second; `None` before the first RTT
    /// interval closed.
    pub fn bwe(&self) -> Option<f64> {
        self.bwe
    }

    /// The last once-per-RTT sample, in bytes per second.
    pub fn last_sample(&self) -> Option<f64> {
        self.sample
    }

    /// The sender maximum segment size, in bytes.
    pub fn mss(&self) -> Bytes {
        self.reno.mss()
    }

    /// ssthresh after a congestion signal: `max(2 * MSS, BWE * RTT_min)` rounded down to whole
    /// segments; `None` while BWE or RTT_min is unknown.
    pub fn ssthresh_from_bwe(&self) -> Option<Bytes> {
        Some(window_from_rate(self.bwe?, self.rtt_min?, self.mss()))
    }

    /// Adds an ACK's delivered bytes to the interval and closes the interval once it spans at
    /// least one smoothed RTT.
    fn sample_bandwidth(&mut self, now: Instant, ack: &AckInfo) {
        let bytes = self.delivered.on_ack(ack.bytes_acked);
        let Some(start) = self.interval_start else {
            // The first ACK opens the first interval; what it reports arrived before it.
            self.interval_start = Some(now);
            return;
        };
        self.interval_bytes = self.interval_bytes.saturating_add(bytes);
        let elapsed = now.saturating_since(start);
        if elapsed < ack.srtt {
            return;
        }
        let Some(sample) = rate_over(self.interval_bytes, elapsed) else {
            // A zero span (srtt of zero and a same-instant ACK): keep accumulating.
            return;
        };
        self.sample = Some(sample);
        self.bwe = Some(match self.bwe {
            None => sample,
            Some(bwe) => (1.0 - WESTWOOD_FILTER_GAIN) * bwe + WESTWOOD_FILTER_GAIN * sample,
        });
        self.interval_start = Some(now);
        self.interval_bytes = 0;
    }
}

impl WindowController for Westwood {
    fn cwnd(&self) -> Bytes {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> Bytes {
        self.reno.ssthresh()
    }
    fn set_cwnd(&mut self, cwnd: Bytes) {
        self.reno.set_cwnd(cwnd);
    }
    fn set_ssthresh(&mut self, ssthresh: Bytes) {
        self.reno.set_ssthresh(ssthresh);
    }

    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        if let Some(rtt_min) = known_min_rtt(ack) {
            self.rtt_min = Some(rtt_min);
        }
        // Every ACK, duplicate or in recovery, feeds the estimate; NewReno grows only on new
        // ACKs outside recovery.
        self.sample_bandwidth(now, ack);
        self.reno.on_ack(now, ack);
    }

    fn on_congestion(&mut self, now: Instant, kind: CongestionKind, bytes_in_flight: Bytes) {
        let ssthresh = self.ssthresh_from_bwe();
        reduce_to_estimate(&mut self.reno, now, kind, bytes_in_flight, ssthresh);
    }

    fn on_recovery_end(&mut self, now: Instant) {
        self.reno.on_recovery_end(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1000;

    fn ack(bytes: Bytes, min_rtt_ms: u64) -> AckInfo {
        AckInfo {
            bytes_acked: bytes,
            rtt: None,
            srtt: Duration::from_millis(100),
            min_rtt: Duration::from_millis(min_rtt_ms),
            bytes_in_flight: 0,
            in_recovery: true,
            ece: false,
        }
    }

    /// One interval of 10 new ACKs of 1000 bytes every 10 ms from t = 0 (the opening ACK) to
    /// 100 ms: BWE = 10 000 B / 0.1 s = 100 000 B/s.
    fn westwood_with_bwe_100k(min_rtt_ms: u64) -> Westwood {
        let mut w = Westwood::new(MSS, 10 * MSS, u64::MAX);
        for i in 0..=10 {
            w.on_ack(Instant::from_millis(10 * i), &ack(MSS, min_rtt_ms));
        }
        assert_eq!(w.bwe(), Some(100_000.0));
        w
    }

    #[test]
    fn a_duplicate_ack_counts_one_segment_and_the_covering_ack_gives_it_back() {
        let mut d = DeliveredBytes::new(MSS);
        assert_eq!(d.on_ack(0), MSS);
        assert_eq!(d.on_ack(0), MSS);
        assert_eq!(d.dup_credit(), 2 * MSS);
        // The retransmission fills the hole: 3 segments acknowledged, 2 already counted.
        assert_eq!(d.on_ack(3 * MSS), MSS);
        assert_eq!(d.dup_credit(), 0);
        assert_eq!(d.on_ack(500), 500);
    }

    #[test]
    fn bandwidth_is_estimated_once_per_rtt_and_filtered_with_gain_one_eighth() {
        let mut w = Westwood::new(MSS, 10 * MSS, u64::MAX);
        w.on_ack(Instant::ZERO, &ack(MSS, 50));
        for i in 1..10 {
            w.on_ack(Instant::from_millis(10 * i), &ack(MSS, 50));
            assert_eq!(w.bwe(), None, "no estimate before one RTT has passed");
        }
        w.on_ack(Instant::from_millis(100), &ack(MSS, 50));
        // First interval: 10 ACKs of 1000 B over 100 ms.
        assert_eq!(w.last_sample(), Some(100_000.0));
        assert_eq!(w.bwe(), Some(100_000.0));
        // Second interval, 110..=200 ms: five ACKs of 2000 B, then five duplicates counting
        // 1000 B each: 15 000 B over 100 ms.
        for i in 1..=5 {
            w.on_ack(Instant::from_millis(100 + 10 * i), &ack(2 * MSS, 50));
            assert_eq!(w.bwe(), Some(100_000.0), "unchanged within the RTT");
        }
        for i in 6..=10 {
            w.on_ack(Instant::from_millis(100 + 10 * i), &ack(0, 50));
        }
        assert_eq!(w.last_sample(), Some(150_000.0));
        // 7/8 * 100 000 + 1/8 * 150 000.
        assert_eq!(w.bwe(), Some(106_250.0));
    }

    #[test]
    fn three_duplicate_acks_set_ssthresh_to_bwe_times_rtt_min_and_cwnd_down_to_it() {
        let mut w = westwood_with_bwe_100k(50);
        w.set_cwnd(10 * MSS);
        w.on_congestion(Instant::from_millis(101), CongestionKind::DupAcks, 10 * MSS);
        // 100 000 B/s * 50 ms = 5000 B.
        assert_eq!((w.ssthresh(), w.cwnd()), (5 * MSS, 5 * MSS));
    }

    #[test]
    fn a_reduction_never_raises_cwnd_above_its_value_before() {
        let mut w = westwood_with_bwe_100k(50);
        w.set_cwnd(3 * MSS);
        w.on_congestion(Instant::from_millis(101), CongestionKind::Ecn, 3 * MSS);
        assert_eq!((w.ssthresh(), w.cwnd()), (5 * MSS, 3 * MSS));
    }

    #[test]
    fn a_timeout_sets_ssthresh_from_the_estimate_and_cwnd_to_one_segment() {
        let mut w = westwood_with_bwe_100k(50);
        w.on_congestion(Instant::from_millis(101), CongestionKind::Timeout, 10 * MSS);
        assert_eq!((w.ssthresh(), w.cwnd()), (5 * MSS, MSS));
    }

    #[test]
    fn ssthresh_is_rounded_down_to_whole_segments_with_a_floor_of_two() {
        // 100 000 B/s * 55 ms = 5500 B -> 5 segments.
        let mut w = westwood_with_bwe_100k(55);
        w.on_congestion(Instant::from_millis(101), CongestionKind::DupAcks, 10 * MSS);
        assert_eq!(w.ssthresh(), 5 * MSS);
        // 100 000 B/s * 10 ms = 1000 B -> the floor of 2 segments.
        let mut w = westwood_with_bwe_100k(10);
        w.on_congestion(Instant::from_millis(101), CongestionKind::DupAcks, 10 * MSS);
        assert_eq!(w.ssthresh(), 2 * MSS);
    }

    #[test]
    fn without_an_estimate_the_reduction_falls_back_to_new_reno_halving() {
        let mut w = Westwood::new(MSS, 20 * MSS, u64::MAX);
        w.on_congestion(Instant::ZERO, CongestionKind::DupAcks, 20 * MSS);
        assert_eq!((w.ssthresh(), w.cwnd()), (10 * MSS, 10 * MSS));
    }

    #[test]
    fn growth_is_new_reno_growth_on_new_acks_outside_recovery() {
        let mut w = Westwood::new(MSS, 10 * MSS, u64::MAX);
        let new_ack = AckInfo {
            in_recovery: false,
            ..ack(MSS, 50)
        };
        w.on_ack(Instant::ZERO, &new_ack);
        w.on_ack(
            Instant::from_millis(1),
            &AckInfo {
                bytes_acked: 0,
                ..new_ack
            },
        );
        w.on_ack(Instant::from_millis(2), &ack(MSS, 50));
        assert_eq!(w.cwnd(), 11 * MSS);
    }
}
