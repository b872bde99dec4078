//! The macroflow's rate-based AIMD (paper section 2.1).
//!
//! The paper asks for a rate-based scheme whose additive increase is "no more aggressive than a
//! comparable TCP flow, in that both the number of bytes successfully transferred and the
//! round-trip time estimate are taken into account", that halves the rate upon a loss and drops
//! it "to a small value forcing slow start" on persistent congestion. concord keeps a
//! window-equivalent `cwnd` in bytes, grows it exactly as TCP with byte counting does
//! (RFC 5681 section 3.1 with RFC 3465 appropriate byte counting), and turns it into a rate with
//! `rate = cwnd / srtt`. Sending is paced by the scheduler at that rate, so the window is never
//! sent as a burst (paper section 2.1, second paragraph).

use super::aging::RttSummary;
use crate::rate::{CongestionSignal, RateController};
use crate::tcp::rtt::{RttConfig, RttEstimator};
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::{Bytes, Rate};

/// The smallest RTT the rate is computed with (1 us): keeps `cwnd / srtt` finite when a sample
/// comes out as zero.
pub const MIN_RATE_RTT: Duration = Duration::from_micros(1);

/// The most MTUs one report can add in congestion avoidance: one per window delivered, and no
/// honest report covers more windows than this.
pub const MAX_CA_STEPS: u32 = 64;

/// The AIMD's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AimdConfig {
    /// The largest grant and the unit of increase, in bytes: TCP's SMSS.
    pub mtu: Bytes,
    /// The window before any feedback, in bytes (RFC 5681 section 3.1 calls it IW).
    pub initial_cwnd: Bytes,
    /// The slow-start threshold before the first congestion signal, in bytes.
    pub initial_ssthresh: Bytes,
    /// The RTT the rate is computed with before the first sample; RFC 6298 section 2.1 uses one
    /// second as the first guess.
    pub initial_rtt: Duration,
}

impl Default for AimdConfig {
    fn default() -> Self {
        AimdConfig {
            mtu: 1500,
            initial_cwnd: 2 * 1500,
            initial_ssthresh: Bytes::MAX,
            initial_rtt: Duration::from_secs(1),
        }
    }
}

/// Rate-based AIMD with a window-equivalent `cwnd` (paper section 2.1).
#[derive(Clone, Debug)]
pub struct Aimd {
    /// The increase unit, in bytes.
    mtu: Bytes,
    /// The window-equivalent, in bytes: the macroflow may send `cwnd` bytes per `srtt`.
    cwnd: Bytes,
    /// The slow-start threshold, in bytes.
    ssthresh: Bytes,
    /// Bytes delivered in congestion avoidance not yet turned into growth (RFC 3465 section 2.1:
    /// `bytes_acked`).
    ca_acked: Bytes,
    /// srtt, rttvar and the minimum RTT (RFC 6298 section 2; the paper's section 2.2.3 asks
    /// for the minimum).
    rtt: RttEstimator,
    /// The RTT used before the first sample.
    initial_rtt: Duration,
    /// The time of the last reduction for loss or ECN, for the once-per-RTT rule.
    last_decrease: Option<Instant>,
    /// The RTT in force at the last reduction: a further loss or ECN signal within it belongs to
    /// the same congestion event.
    decrease_window: Duration,
    /// No growth before this time: one RTT after a reduction for loss or ECN.
    frozen_until: Option<Instant>,
}

impl Aimd {
    /// An AIMD in slow start with `config.initial_cwnd` bytes of window and no RTT sample.
    pub fn new(config: AimdConfig) -> Aimd {
        let mtu = config.mtu.max(1);
        Aimd {
            mtu,
            cwnd: config.initial_cwnd.max(mtu),
            ssthresh: config.initial_ssthresh.max(2 * mtu),
            ca_acked: 0,
            rtt: RttEstimator::new(RttConfig::default()),
            initial_rtt: config.initial_rtt,
            last_decrease: None,
            decrease_window: Duration::ZERO,
            frozen_until: None,
        }
    }

    /// The window-equivalent, in bytes.
    pub fn cwnd(&self) -> Bytes {
        self.cwnd
    }

    /// The slow-start threshold, in bytes.
    pub fn ssthresh(&self) -> Bytes {
        self.ssthresh
    }

    /// The increase unit, in bytes.
    pub fn mtu(&self) -> Bytes {
        self.mtu
    }

    /// An RTT sample from a report that covers `packets` delivered packets (a probe response):
    /// srtt moves as if each packet had been acknowledged with that sample, as per-ACK
    /// feedback would have moved it, and rttvar moves once ([`RttEstimator::on_samples`]).
    /// With one sample per response, srtt at 2 probes per RTT would follow a queue that fills
    /// within a round trip over about 4 round trips, and `cwnd / srtt` would stay too high
    /// meanwhile (Fig. 4).
    pub fn on_rtt_sample_covering(&mut self, rtt: Duration, packets: u64) {
        self.rtt.on_samples(rtt, packets);
    }

    /// The smoothed RTT (RFC 6298), or `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    /// The RTT variation (RFC 6298 RTTVAR), or `None` before the first sample.
    pub fn rttvar(&self) -> Option<Duration> {
        self.rtt.srtt().map(|_| self.rtt.rttvar())
    }

    /// The smallest RTT sample seen, or `None` before the first.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.rtt.srtt().map(|_| self.rtt.min_rtt())
    }

    /// The RTT the rate is computed with: srtt, or the initial RTT before any sample.
    pub fn rate_rtt(&self) -> Duration {
        self.rtt
            .srtt()
            .unwrap_or(self.initial_rtt)
            .max(MIN_RATE_RTT)
    }

    /// srtt, rttvar and the minimum RTT for exponential aging; before any sample, the initial
    /// RTT for srtt and the minimum, and no variation (RFC 6298 section 2.1: the first RTO is the
    /// initial guess itself).
    pub fn rtt_summary(&self) -> RttSummary {
        RttSummary {
            srtt: self.rate_rtt(),
            rttvar: self.rttvar().unwrap_or(Duration::ZERO),
            min_rtt: self.min_rtt().unwrap_or(self.initial_rtt).max(MIN_RATE_RTT),
        }
    }

    /// True once an RTT sample has arrived: until then the rate is a guess and cm_query reports
    /// none (RFC 3124 section 4.4).
    pub fn has_estimate(&self) -> bool {
        self.rtt.srtt().is_some()
    }

    /// Folds `halvings` of exponential aging into the window when feedback returns (paper
    /// section 2.2.3): the open-loop rate the macroflow aged down to becomes its closed-loop
    /// starting point, `cwnd / 2^halvings`, at least one MTU. As TCP does for a window it could
    /// not validate (RFC 2861), ssthresh keeps three quarters of the old window so that slow
    /// start climbs back quickly if the feedback shows no congestion.
    pub fn on_aged(&mut self, halvings: u32) {
        if halvings == 0 {
            return;
        }
        let old = self.cwnd;
        self.ssthresh = self.ssthresh.max(old / 4 * 3).max(2 * self.mtu);
        self.cwnd = old.checked_shr(halvings).unwrap_or(0).max(self.mtu);
        self.ca_acked = 0;
    }

    /// Splits off `fraction` of the window for a new macroflow (segregation, paper section 2.3):
    /// returns a copy with `cwnd * fraction` and keeps `cwnd * (1 - fraction)`, each at least
    /// one MTU, so that the two macroflows together send no faster than the one did.
    pub fn split_off(&mut self, fraction: f64) -> Aimd {
        let fraction = if fraction.is_finite() {
            fraction.clamp(0.0, 1.0)
        } else {
            0.5
        };
        let mut other = self.clone();
        let part = |b: Bytes, f: f64| ((b as f64 * f).round() as Bytes).max(self.mtu);
        other.cwnd = part(self.cwnd, fraction);
        self.cwnd = part(self.cwnd, 1.0 - fraction);
        if self.ssthresh != Bytes::MAX {
            other.ssthresh = part(self.ssthresh, fraction).max(2 * self.mtu);
            self.ssthresh = part(self.ssthresh, 1.0 - fraction).max(2 * self.mtu);
        }
        other.ca_acked = 0;
        self.ca_acked = 0;
        other
    }

    /// True while `now` is within one RTT of the last reduction.
    fn in_decrease_window(&self, now: Instant) -> bool {
        match self.last_decrease {
            Some(t) => now < t + self.decrease_window,
            None => false,
        }
    }
}

impl RateController for Aimd {
    /// `cwnd / srtt` in bits per second, truncated (the initial RTT before the first sample).
    fn rate(&self) -> Rate {
        let bits = self.cwnd as u128 * 8 * NANOS_PER_SEC as u128;
        let bps = bits / self.rate_rtt().as_nanos() as u128;
        Rate::from_bps(u64::try_from(bps).unwrap_or(u64::MAX))
    }

    /// Updates srtt, rttvar (RFC 6298 section 2) and the minimum RTT (paper section 2.2.3).
    fn on_rtt_sample(&mut self, _now: Instant, rtt: Duration) {
        self.rtt.on_sample(rtt);
    }

    /// Growth from bytes delivered, as TCP with byte counting (paper section 2.1: "both the
    /// number of bytes successfully transferred and the round-trip time estimate are taken into
    /// account").
    ///
    /// - Below ssthresh, slow start: `cwnd += bytes` (RFC 3465 section 2.2 without the per-ACK
    ///   limit L, since one CM report covers what many ACKs would), up to ssthresh; bytes beyond
    ///   it count toward congestion avoidance.
    /// - At or above ssthresh, congestion avoidance: bytes accumulate, and each time a full
    ///   `cwnd` of them has been delivered, `cwnd += MTU` (RFC 3465 section 2.1; RFC 5681 eq. 3):
    ///   one MTU per RTT of deliveries (at most [`MAX_CA_STEPS`] per report).
    /// - No growth within one RTT of a reduction for loss or ECN, as TCP does not grow in fast
    ///   recovery (RFC 6582); after persistent congestion slow start begins at once.
    fn on_delivered(&mut self, now: Instant, bytes: Bytes) {
        if bytes == 0 || self.frozen_until.is_some_and(|t| now < t) {
            return;
        }
        let mut left = bytes;
        if self.cwnd < self.ssthresh {
            let room = self.ssthresh - self.cwnd;
            let grow = left.min(room);
            self.cwnd = self.cwnd.saturating_add(grow);
            left -= grow;
        }
        if left > 0 && self.cwnd >= self.ssthresh {
            self.ca_acked = self.ca_acked.saturating_add(left);
            let mut steps = 0;
            while self.ca_acked >= self.cwnd {
                if steps == MAX_CA_STEPS {
                    // A report of more windows than that is not credible; the rest is dropped.
                    self.ca_acked = 0;
                    break;
                }
                self.ca_acked -= self.cwnd;
                self.cwnd = self.cwnd.saturating_add(self.mtu);
                steps += 1;
            }
        }
    }

    /// Multiplicative decrease (paper section 2.1; RFC 3124 section 4.2 loss modes).
    ///
    /// - Loss, ECN or an outside request (RFC 3124 CM_LOSS_FEEDBACK, CM_EXPLICIT_CONGESTION):
    ///   `ssthresh = max(cwnd / 2, 2 MTU)`, `cwnd = ssthresh` (RFC 5681 eq. 4 with the window in
    ///   place of FlightSize; RFC 3168 section 6.1.2 for ECN), at most once per RTT: a signal
    ///   within one srtt of the last reduction belongs to the same congestion event.
    /// - Persistent congestion (RFC 3124 CM_NO_FEEDBACK, a TCP timeout): `ssthresh` as above and
    ///   `cwnd = MTU`, so slow start follows (RFC 5681 section 3.1, the loss window). Always
    ///   applied.
    fn on_congestion(&mut self, now: Instant, signal: CongestionSignal) {
        match signal {
            CongestionSignal::Loss | CongestionSignal::Ecn | CongestionSignal::External => {
                if self.in_decrease_window(now) {
                    return;
                }
                self.ssthresh = (self.cwnd / 2).max(2 * self.mtu);
                self.cwnd = self.ssthresh;
                self.frozen_until = Some(now + self.rate_rtt());
            }
            CongestionSignal::Persistent => {
                self.ssthresh = (self.cwnd / 2).max(2 * self.mtu);
                self.cwnd = self.mtu;
                self.frozen_until = None;
            }
        }
        self.ca_acked = 0;
        self.last_decrease = Some(now);
        self.decrease_window = self.rate_rtt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: Bytes = 1000;

    fn aimd(cwnd: Bytes, ssthresh: Bytes) -> Aimd {
        Aimd::new(AimdConfig {
            mtu: MTU,
            initial_cwnd: cwnd,
            initial_ssthresh: ssthresh,
            initial_rtt: Duration::from_secs(1),
        })
    }

    fn ms(n: u64) -> Instant {
        Instant::from_millis(n)
    }

    #[test]
    fn one_acked_mtu_in_slow_start_grows_cwnd_by_one_mtu() {
        let mut a = aimd(2 * MTU, Bytes::MAX);
        a.on_delivered(ms(0), MTU);
        assert_eq!(a.cwnd(), 3 * MTU);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_the_rest_counts_toward_congestion_avoidance() {
        let mut a = aimd(2 * MTU, 4 * MTU);
        a.on_delivered(ms(0), 3 * MTU);
        // 2 MTU of slow start reach ssthresh; the third MTU waits for a full window (4 MTU).
        assert_eq!(a.cwnd(), 4 * MTU);
        a.on_delivered(ms(0), 3 * MTU);
        assert_eq!(a.cwnd(), 5 * MTU);
    }

    #[test]
    fn above_ssthresh_cwnd_grows_one_mtu_per_rtt_of_acks() {
        let mut a = aimd(10 * MTU, 10 * MTU);
        for _ in 0..9 {
            a.on_delivered(ms(0), MTU);
        }
        assert_eq!(a.cwnd(), 10 * MTU, "nine tenths of a window: no growth yet");
        a.on_delivered(ms(0), MTU);
        assert_eq!(a.cwnd(), 11 * MTU, "a full window of acks: one MTU");
        for _ in 0..11 {
            a.on_delivered(ms(0), MTU);
        }
        assert_eq!(a.cwnd(), 12 * MTU, "the next RTT's 11 MTU: one more");
    }

    #[test]
    fn an_absurd_report_grows_the_window_a_bounded_amount_at_once() {
        let mut a = aimd(10 * MTU, 10 * MTU);
        a.on_delivered(ms(0), Bytes::MAX);
        assert_eq!(a.cwnd(), (10 + u64::from(MAX_CA_STEPS)) * MTU);
        a.on_delivered(ms(0), 1);
        assert_eq!(
            a.cwnd(),
            (10 + u64::from(MAX_CA_STEPS)) * MTU,
            "nothing carried over"
        );
    }

    #[test]
    fn the_rate_is_cwnd_over_srtt_exactly() {
        let mut a = aimd(10_000, Bytes::MAX);
        // Before any sample the initial RTT of 1 s: 10 000 bytes/s = 80 kbit/s.
        assert_eq!(a.rate(), Rate::from_bps(80_000));
        a.on_rtt_sample(ms(0), Duration::from_millis(100));
        // 10 000 bytes per 100 ms = 800 kbit/s.
        assert_eq!(a.rate(), Rate::from_bps(800_000));
        a.on_delivered(ms(0), 2_500);
        // 12 500 bytes per 100 ms = 1 Mbit/s.
        assert_eq!(a.rate(), Rate::from_mbps(1));
    }

    #[test]
    fn a_transient_loss_halves_once_per_rtt() {
        let mut a = aimd(40 * MTU, Bytes::MAX);
        a.on_rtt_sample(ms(0), Duration::from_millis(100));
        a.on_congestion(ms(1000), CongestionSignal::Loss);
        assert_eq!((a.cwnd(), a.ssthresh()), (20 * MTU, 20 * MTU));
        a.on_congestion(ms(1050), CongestionSignal::Loss);
        assert_eq!(
            a.cwnd(),
            20 * MTU,
            "a second loss within the RTT does not halve again"
        );
        a.on_congestion(ms(1099), CongestionSignal::Ecn);
        assert_eq!(a.cwnd(), 20 * MTU, "nor does an ECN mark in the same RTT");
        a.on_congestion(ms(1100), CongestionSignal::Loss);
        assert_eq!(a.cwnd(), 10 * MTU, "a loss one RTT later halves again");
    }

    #[test]
    fn ecn_halves_like_a_loss() {
        let mut a = aimd(16 * MTU, Bytes::MAX);
        a.on_congestion(ms(0), CongestionSignal::Ecn);
        assert_eq!((a.cwnd(), a.ssthresh()), (8 * MTU, 8 * MTU));
    }

    #[test]
    fn halving_never_goes_below_two_mtu() {
        let mut a = aimd(3 * MTU, Bytes::MAX);
        a.on_congestion(ms(0), CongestionSignal::Loss);
        assert_eq!(a.cwnd(), 2 * MTU);
    }

    #[test]
    fn persistent_congestion_restarts_from_one_mtu_in_slow_start() {
        let mut a = aimd(40 * MTU, Bytes::MAX);
        a.on_rtt_sample(ms(0), Duration::from_millis(100));
        a.on_congestion(ms(1000), CongestionSignal::Loss);
        a.on_congestion(ms(1010), CongestionSignal::Persistent);
        assert_eq!((a.cwnd(), a.ssthresh()), (MTU, 10 * MTU));
        a.on_delivered(ms(1020), MTU);
        assert_eq!(a.cwnd(), 2 * MTU, "slow start at once");
    }

    #[test]
    fn no_growth_within_one_rtt_of_a_reduction() {
        let mut a = aimd(20 * MTU, Bytes::MAX);
        a.on_rtt_sample(ms(0), Duration::from_millis(100));
        a.on_congestion(ms(1000), CongestionSignal::Loss);
        a.on_delivered(ms(1050), 10 * MTU);
        assert_eq!(a.cwnd(), 10 * MTU);
        a.on_delivered(ms(1100), 10 * MTU);
        assert_eq!(a.cwnd(), 11 * MTU);
    }

    #[test]
    fn a_report_covering_packets_moves_srtt_as_that_many_acks_would() {
        let mut a = aimd(10 * MTU, Bytes::MAX);
        a.on_rtt_sample(ms(0), Duration::from_millis(100));
        // Three packets covered at 200 ms: srtt 112.5, then 123.4375, then 7/8 of that + 25 ms
        // = 133.0078125 ms; the rate follows srtt at once.
        a.on_rtt_sample_covering(Duration::from_millis(200), 3);
        assert_eq!(a.srtt(), Some(Duration::from_nanos(133_007_812)));
        let bps = (10 * MTU) as u128 * 8 * 1_000_000_000 / 133_007_812;
        assert_eq!(a.rate(), Rate::from_bps(bps as u64));
    }

    #[test]
    fn the_minimum_rtt_is_tracked_beside_srtt_and_rttvar() {
        let mut a = aimd(10 * MTU, Bytes::MAX);
        assert_eq!((a.srtt(), a.rttvar(), a.min_rtt()), (None, None, None));
        a.on_rtt_sample(ms(0), Duration::from_millis(100));
        a.on_rtt_sample(ms(0), Duration::from_millis(300));
        assert_eq!(a.min_rtt(), Some(Duration::from_millis(100)));
        assert_eq!(a.srtt(), Some(Duration::from_millis(125)));
        assert_eq!(a.rttvar(), Some(Duration::from_micros(87_500)));
    }

    #[test]
    fn aging_folds_into_the_window_with_a_floor_of_one_mtu() {
        let mut a = aimd(16 * MTU, 8 * MTU);
        a.on_aged(2);
        assert_eq!((a.cwnd(), a.ssthresh()), (4 * MTU, 12 * MTU));
        a.on_aged(40);
        assert_eq!(a.cwnd(), MTU);
    }

    #[test]
    fn splitting_divides_the_window_between_the_two_parts() {
        let mut a = aimd(30 * MTU, 20 * MTU);
        let b = a.split_off(1.0 / 3.0);
        assert_eq!((a.cwnd(), b.cwnd()), (20 * MTU, 10 * MTU));
        assert_eq!((a.ssthresh(), b.ssthresh()), (13_333, 6_667));
    }
}
