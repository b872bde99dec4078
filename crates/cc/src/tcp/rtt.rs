//! The retransmission timer's RTT estimator (RFC 6298).

use crate::time::Duration;

/// The estimator's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RttConfig {
    /// RTO before the first sample (RFC 6298 2.1: 1 s).
    pub initial_rto: Duration,
    /// Lower bound of the RTO (RFC 6298 2.4: 1 s; stacks use 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the RTO (RFC 6298 2.5).
    pub max_rto: Duration,
    /// Clock granularity G (RFC 6298 2.2 and 2.3).
    pub granularity: Duration,
}

impl Default for RttConfig {
    fn default() -> Self {
        RttConfig {
            initial_rto: Duration::from_secs(1),
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(60),
            granularity: Duration::from_millis(1),
        }
    }
}

/// SRTT, RTTVAR and the RTO with exponential backoff (RFC 6298 sections 2 and 5).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    config: RttConfig,
    /// Smoothed RTT; `None` before the first sample.
    srtt: Option<Duration>,
    /// RTT variation.
    rttvar: Duration,
    /// Smallest sample seen.
    min_rtt: Duration,
    /// Latest sample.
    latest: Duration,
    /// The RTO before backoff, already clamped to [min_rto, max_rto].
    base_rto: Duration,
    /// Number of consecutive backoffs (RFC 6298 5.5).
    backoffs: u32,
}

/// `(w * a + b) / d` in nanoseconds, computed in 128 bits so that no sample, however large,
/// overflows (RFC 6298 2.3's `7/8 SRTT + 1/8 R'` with w = 7, d = 8); the result is at most
/// the larger of `a` and `b` when `w + 1 = d`, and saturates otherwise.
fn blend(a: Duration, w: u64, b: Duration, d: u64) -> Duration {
    let sum = u128::from(a.as_nanos()) * u128::from(w) + u128::from(b.as_nanos());
    let v = sum.checked_div(u128::from(d)).unwrap_or(sum);
    Duration::from_nanos(u64::try_from(v).unwrap_or(u64::MAX))
}

impl RttEstimator {
    /// An estimator with no samples: RTO = initial_rto.
    pub fn new(config: RttConfig) -> RttEstimator {
        RttEstimator {
            config,
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: Duration::MAX,
            latest: Duration::ZERO,
            base_rto: config.initial_rto.min(config.max_rto),
            backoffs: 0,
        }
    }

    /// Takes an RTT measurement R (RFC 6298 2.2 and 2.3) and clears the backoff (a valid sample
    /// arrives only for data not retransmitted, Karn's rule, so backing off ends here).
    pub fn on_sample(&mut self, r: Duration) {
        self.latest = r;
        self.min_rtt = self.min_rtt.min(r);
        match self.srtt {
            None => {
                // 2.2: SRTT <- R, RTTVAR <- R/2.
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // 2.3: RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|; SRTT <- 7/8 SRTT + 1/8 R'.
                let diff = if srtt > r { srtt - r } else { r - srtt };
                self.rttvar = blend(self.rttvar, 3, diff, 4);
                self.srtt = Some(blend(srtt, 7, r, 8));
            }
        }
        self.on_srtt_changed();
    }

    /// The two measurements of one ACK that newly acknowledges several segments: `seq_rtt`,
    /// from the oldest of them, enters SRTT and RTTVAR (and so the RTO); `ca_rtt`, from the
    /// newest, is the latest sample and the candidate for the minimum. The oldest segment's
    /// time includes what the receiver's delayed ACK held it for, and the timer must cover
    /// that: "the data-sender TCP must measure the effective RTT, including the additional
    /// time due to delayed ACKs, or else it will retransmit unnecessarily" (RFC 7323 section
    /// 4.3, case 1, which therefore echoes the earliest unacknowledged segment's timestamp).
    /// Linux's `tcp_clean_rtx_queue` takes `seq_rtt_us` from the first acknowledged segment
    /// for the RTO and `ca_rtt_us` from the last for the minimum RTT and congestion control;
    /// ns-3's `TcpSocketBase::EstimateRtt` measures from the earliest transmitted segment.
    /// `seq_rtt` is never below `ca_rtt` (the older segment left first).
    pub fn on_ack_samples(&mut self, seq_rtt: Duration, ca_rtt: Duration) {
        self.on_sample(seq_rtt);
        self.latest = ca_rtt;
        self.min_rtt = self.min_rtt.min(ca_rtt);
    }

    /// RTO <- SRTT + max(G, K * RTTVAR), K = 4, then clamped (2.4, 2.5); a sample ends the
    /// backoff, as [`RttEstimator::on_sample`] says.
    fn on_srtt_changed(&mut self) {
        let srtt = self.srtt.unwrap_or(self.latest);
        let rto = srtt + self.config.granularity.max(self.rttvar * 4);
        self.base_rto = rto.max(self.config.min_rto).min(self.config.max_rto);
        self.backoffs = 0;
    }

    /// One measurement `r` that stands for `n` samples, as when one report covers what `n`
    /// ACKs would have. SRTT moves as if `r` had been sampled `n` times (at most 64; 7/8 to
    /// the 64th is 2e-4), so its time constant in round trips does not depend on how often
    /// the measurements come, in the spirit of RFC 7323 appendix G, which scales both gains
    /// down for more samples per RTT (here the gain is 1 - (7/8)^n). RTTVAR departs from that
    /// rule on purpose and takes the measurement once: it sizes the timer against the spread
    /// of the measurements that actually arrive, and `n` equal samples would shrink it toward
    /// zero. `n` of 0 counts as 1.
    pub fn on_samples(&mut self, r: Duration, n: u64) {
        let before = self.srtt;
        self.on_sample(r);
        if let Some(mut srtt) = before.and(self.srtt) {
            for _ in 1..n.clamp(1, 64) {
                // 2.3's SRTT step again, RTTVAR left as the first step set it.
                srtt = blend(srtt, 7, r, 8);
            }
            self.srtt = Some(srtt);
            self.on_srtt_changed();
        }
    }

    /// Sets the RTO to `rto` (clamped to [min_rto, max_rto]) with no sample and no backoff, as
    /// RFC 6298 section 5.7 asks when data starts after the SYN's timer expired (3 s).
    pub fn reinitialize(&mut self, rto: Duration) {
        self.base_rto = rto.max(self.config.min_rto).min(self.config.max_rto);
        self.backoffs = 0;
    }

    /// The timer expired: double the RTO (RFC 6298 5.5), up to max_rto.
    pub fn back_off(&mut self) {
        self.backoffs = self.backoffs.saturating_add(1);
    }

    /// Ends the backoff without a sample: the RTO is SRTT + max(G, 4 RTTVAR) again, as ns-3
    /// 3.44's `TcpSocketBase::NewAck` recomputes it on every new ACK (a departure from RFC
    /// 6298 section 5's note after 5.7, which keeps the backed-off RTO until a new RTT
    /// measurement; [`super::ns3_departures`]).
    pub fn drop_backoff(&mut self) {
        self.backoffs = 0;
    }

    /// The current RTO, backoff included.
    pub fn rto(&self) -> Duration {
        let mut rto = self.base_rto;
        for _ in 0..self.backoffs.min(64) {
            rto = rto * 2;
            if rto >= self.config.max_rto {
                return self.config.max_rto;
            }
        }
        rto
    }

    /// Consecutive backoffs since the last valid sample.
    pub fn backoffs(&self) -> u32 {
        self.backoffs
    }

    /// The smoothed RTT, or `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The smoothed RTT, or the initial RTO before the first sample.
    pub fn srtt_or_initial(&self) -> Duration {
        self.srtt.unwrap_or(self.config.initial_rto)
    }

    /// The RTT variation.
    pub fn rttvar(&self) -> Duration {
        self.rttvar
    }

    /// The smallest sample seen (`Duration::MAX` before any).
    pub fn min_rtt(&self) -> Duration {
        self.min_rtt
    }

    /// The latest sample.
    pub fn latest(&self) -> Duration {
        self.latest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est() -> RttEstimator {
        RttEstimator::new(RttConfig::default())
    }

    #[test]
    fn the_rto_is_one_second_before_any_sample() {
        assert_eq!(est().rto(), Duration::from_secs(1));
    }

    #[test]
    fn the_first_sample_sets_srtt_and_half_of_it_as_rttvar() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Duration::from_millis(50));
        // 100 + 4 * 50 = 300 ms.
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn later_samples_follow_the_rfc_6298_gains() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        e.on_sample(Duration::from_millis(200));
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5 ms; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5 ms.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_micros(112_500)));
        assert_eq!(e.rto(), Duration::from_micros(362_500));
    }

    #[test]
    fn one_measurement_standing_for_n_samples_moves_as_n_samples_would() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        e.on_samples(Duration::from_millis(200), 2);
        // SRTT twice: 7/8 * 100 + 1/8 * 200 = 112.5 ms, then 7/8 * 112.5 + 1/8 * 200 =
        // 123.4375 ms. RTTVAR once, against the SRTT before: 3/4 * 50 + 1/4 * 100 = 62.5 ms.
        assert_eq!(e.rttvar(), Duration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(Duration::from_nanos(123_437_500)));
        // RTO = 123.4375 + 4 * 62.5 ms.
        assert_eq!(e.rto(), Duration::from_nanos(373_437_500));
        assert_eq!(e.latest(), Duration::from_millis(200));
        // None counts as one; more than 64 count as 64.
        let (mut zero, mut one) = (est(), est());
        zero.on_samples(Duration::from_millis(80), 0);
        one.on_sample(Duration::from_millis(80));
        assert_eq!((zero.srtt(), zero.rttvar()), (one.srtt(), one.rttvar()));
        let (mut many, mut capped) = (est(), est());
        many.on_sample(Duration::from_millis(100));
        capped.on_sample(Duration::from_millis(100));
        many.on_samples(Duration::from_millis(300), 1_000_000);
        capped.on_samples(Duration::from_millis(300), 64);
        assert_eq!(
            (many.srtt(), many.rttvar()),
            (capped.srtt(), capped.rttvar())
        );
        // 64 steps of 7/8 leave 2e-4 of the 200 ms gap; RTTVAR moved once: 3/4 * 50 + 1/4 *
        // 200 = 87.5 ms.
        let srtt = many.srtt().unwrap_or_default().as_nanos();
        assert!((299_950_000..300_000_000).contains(&srtt), "{srtt}");
        assert_eq!(many.rttvar(), Duration::from_micros(87_500));
        // The first measurement sets SRTT and RTTVAR as one sample does, however many it covers.
        let mut first = est();
        first.on_samples(Duration::from_millis(80), 5);
        assert_eq!(first.srtt(), Some(Duration::from_millis(80)));
        assert_eq!(first.rttvar(), Duration::from_millis(40));
    }

    #[test]
    fn an_acks_two_samples_feed_the_rto_from_the_older_and_the_minimum_from_the_newer() {
        let mut e = est();
        e.on_ack_samples(Duration::from_millis(300), Duration::from_millis(100));
        // 2.2 with R = 300 ms: SRTT 300 ms, RTTVAR 150 ms, RTO 300 + 4 * 150 = 900 ms.
        assert_eq!(e.srtt(), Some(Duration::from_millis(300)));
        assert_eq!(e.rttvar(), Duration::from_millis(150));
        assert_eq!(e.rto(), Duration::from_millis(900));
        assert_eq!(e.min_rtt(), Duration::from_millis(100));
        assert_eq!(e.latest(), Duration::from_millis(100));
        e.back_off();
        e.on_ack_samples(Duration::from_millis(220), Duration::from_millis(200));
        // 2.3 with R' = 220 ms: RTTVAR 3/4 * 150 + 1/4 * 80 = 132.5 ms, SRTT 7/8 * 300 + 1/8 *
        // 220 = 290 ms; the backoff ends; the minimum stays 100 ms.
        assert_eq!(e.rttvar(), Duration::from_micros(132_500));
        assert_eq!(e.srtt(), Some(Duration::from_millis(290)));
        assert_eq!(e.backoffs(), 0);
        assert_eq!(e.min_rtt(), Duration::from_millis(100));
        assert_eq!(e.latest(), Duration::from_millis(200));
    }

    #[test]
    fn the_rto_never_falls_below_its_minimum() {
        let mut e = est();
        for _ in 0..50 {
            e.on_sample(Duration::from_millis(10));
        }
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum_and_a_sample_clears_it() {
        let mut e = est();
        e.on_sample(Duration::from_millis(100));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(600));
        e.back_off();
        assert_eq!(e.rto(), Duration::from_millis(1200));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.backoffs(), 0);
    }

    #[test]
    fn a_sample_of_2_pow_64_minus_1_ns_neither_overflows_nor_wraps() {
        let mut e = RttEstimator::new(RttConfig::default());
        e.on_sample(Duration::from_millis(10));
        let huge = Duration::from_nanos(u64::MAX);
        e.on_sample(huge);
        // 2.3 exactly: (7 * 10 ms + (2^64 - 1)) / 8, and RTTVAR (3 * 5 ms + |10 ms - R|) / 4.
        let srtt = (7 * 10_000_000u128 + u128::from(u64::MAX)) / 8;
        assert_eq!(e.srtt(), Some(Duration::from_nanos(srtt as u64)));
        let var = (3 * 5_000_000u128 + u128::from(u64::MAX) - 10_000_000) / 4;
        assert_eq!(e.rttvar(), Duration::from_nanos(var as u64));
        e.on_samples(huge, 64);
        assert!(e.srtt().is_some_and(|s| s > Duration::from_secs(1)));
        assert_eq!(e.rto(), RttConfig::default().max_rto);
    }
}
