//! The TFRC data sender (RFC 5348 section 4): the allowed sending rate X, the RTT estimate R,
//! the nofeedback timer, and pacing at one packet per t_ipi = s/X.
//!
//! Rates are kept in bytes/second as `f64`, the unit of the equation; [`TfrcSender::rate`]
//! returns a [`Rate`] (bits/second). The caller drives it: [`TfrcSender::on_feedback`] for each
//! report, [`TfrcSender::handle_timeout`] when [`TfrcSender::poll_timeout`] passes, and
//! [`TfrcSender::poll_send`] at [`TfrcSender::next_send_time`] for each packet it may send.

use super::config::{TfrcConfig, TfrcConfigError};
use super::equation;
use super::packet::{DataHeader, Feedback};
use crate::time::{Duration, Instant};
use crate::units::Rate;

/// The smallest RTT sample the sender takes, in seconds (1 us): it keeps W_init/R and the
/// equation finite when a sample comes out as zero.
pub const MIN_RTT_SAMPLE: f64 = 1e-6;

/// Why a feedback report was refused; a refused report changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum FeedbackError {
    /// The loss event rate is not a number in [0, 1].
    #[error("loss event rate {0} is not in [0, 1]")]
    LossEventRate(f64),
    /// The echoed timestamp lies after the time the report arrived.
    #[error("t_recvdata {t_recvdata} is after the report's arrival at {now}")]
    FromTheFuture {
        /// The echoed timestamp.
        t_recvdata: Instant,
        /// The arrival time of the report.
        now: Instant,
    },
    /// t_delay is longer than the time since the echoed packet was sent: a negative RTT.
    #[error("t_delay {t_delay} exceeds the {elapsed} since the echoed packet was sent")]
    NegativeRtt {
        /// The reported t_delay.
        t_delay: Duration,
        /// now - t_recvdata.
        elapsed: Duration,
    },
    /// The report echoes an older packet than a report already taken (reordered feedback).
    #[error("the report echoes t_recvdata {t_recvdata}, older than {latest} already taken")]
    Stale {
        /// The echoed timestamp.
        t_recvdata: Instant,
        /// The newest echoed timestamp already taken.
        latest: Instant,
    },
}

/// A TFRC sender.
#[derive(Clone, Debug)]
pub struct TfrcSender {
    /// The parameters.
    config: TfrcConfig,
    /// s, the segment size, in bytes.
    s: f64,
    /// X, the allowed sending rate, in bytes/s.
    x: f64,
    /// R, the RTT estimate, in seconds; `None` before the first RTT is known.
    r: Option<f64>,
    /// p, the loss event rate from the latest report.
    p: f64,
    /// tld, the time X was last doubled in slow start (`None`: -1 of section 4.2).
    tld: Option<Instant>,
    /// X_recv_set: (time received, X_recv in bytes/s) (section 4.3).
    x_recv_set: Vec<(Instant, f64)>,
    /// R_sqmean, the filtered square root of the RTT samples, in sqrt(seconds) (section 4.5).
    r_sqmean: Option<f64>,
    /// R_sqmean / sqrt(R_sample): X_inst / X with oscillation reduction, else 1.
    inst_factor: f64,
    /// A report has been taken.
    has_feedback: bool,
    /// When the nofeedback timer expires.
    nofeedback_deadline: Instant,
    /// The nominal send time of the last packet; `None` before the first.
    last_nominal: Option<Instant>,
    /// When the sender was created: the earliest send time of the first packet.
    created: Instant,
    /// The sequence number of the next data packet.
    next_seq: u64,
    /// The newest t_recvdata taken.
    latest_t_recvdata: Option<Instant>,
}

impl TfrcSender {
    /// A sender starting at `now` (section 4.2): X is one packet per second and the nofeedback
    /// timer runs for 2 s; with [`TfrcConfig::initial_rtt`] R is known and X is the initial rate
    /// W_init/R at once. The configuration is checked first.
    pub fn new(config: TfrcConfig, now: Instant) -> Result<TfrcSender, TfrcConfigError> {
        config.validate()?;
        let s = config.segment_size as f64;
        let r = config
            .initial_rtt
            .map(|d| d.as_secs_f64().max(MIN_RTT_SAMPLE));
        let mut sender = TfrcSender {
            s,
            x: s,
            r,
            p: 0.0,
            tld: None,
            x_recv_set: Vec::new(),
            r_sqmean: None,
            inst_factor: 1.0,
            has_feedback: false,
            nofeedback_deadline: now + config.initial_nofeedback,
            last_nominal: None,
            created: now,
            next_seq: 0,
            latest_t_recvdata: None,
            config,
        };
        if let Some(r) = r {
            sender.x = sender.initial_rate(r);
        }
        Ok(sender)
    }

    /// X, the allowed sending rate (section 4.3).
    pub fn rate(&self) -> Rate {
        Rate::from_bps_f64(self.x * 8.0)
    }

    /// X in bytes/second, unrounded.
    pub fn rate_bytes_per_sec(&self) -> f64 {
        self.x
    }

    /// The pacing rate: X_inst = X * R_sqmean / sqrt(R_sample), at least s/t_mbi, with
    /// oscillation reduction (section 4.5); X without.
    pub fn sending_rate(&self) -> Rate {
        Rate::from_bps_f64(self.send_rate() * 8.0)
    }

    /// R, the RTT estimate; `None` before it is known.
    pub fn rtt(&self) -> Option<Duration> {
        self.r.map(Duration::from_secs_f64)
    }

    /// p from the latest report.
    pub fn loss_event_rate(&self) -> f64 {
        self.p
    }

    /// t_ipi = s / X_inst, the interval between packets (section 4.6).
    pub fn t_ipi(&self) -> Duration {
        Duration::from_secs_f64(self.s / self.send_rate())
    }

    /// The earliest time the next packet may be sent: one t_ipi, at the current rate, after
    /// the nominal send time of the last one (section 4.6), so that a change of X takes effect
    /// for the packet already waiting.
    pub fn next_send_time(&self) -> Instant {
        self.last_nominal.map_or(self.created, |t| t + self.t_ipi())
    }

    /// Asks to send one packet at `now`. If pacing allows (now >= [`next_send_time`]), the
    /// packet is counted, its nominal send time is recorded, and the header to put on the
    /// packet is returned. The nominal time is the scheduled one, or `now - t_ipi` for a caller
    /// late by more than one t_ipi: one packet of credit, no more, so at most two packets leave
    /// back to back.
    ///
    /// [`next_send_time`]: Self::next_send_time
    pub fn poll_send(&mut self, now: Instant) -> Option<DataHeader> {
        let scheduled = self.next_send_time();
        if now < scheduled {
            return None;
        }
        self.last_nominal = Some(scheduled.max(now - self.t_ipi()));
        Some(self.stamp(now))
    }

    /// The header for a data packet sent at `now`, outside the pacing (for a caller, such as a
    /// CP aggregation point, that forwards packets it does not schedule): the next sequence
    /// number, `now` as timestamp, and R.
    pub fn stamp(&mut self, now: Instant) -> DataHeader {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.saturating_add(1);
        DataHeader {
            seq,
            timestamp: now,
            rtt: self.rtt(),
        }
    }

    /// When the nofeedback timer expires (section 4.4).
    pub fn poll_timeout(&self) -> Option<Instant> {
        Some(self.nofeedback_deadline)
    }

    /// A feedback report arrived at `now` (section 4.3). A report that fails the checks of
    /// [`FeedbackError`] is refused and changes nothing.
    pub fn on_feedback(&mut self, now: Instant, feedback: &Feedback) -> Result<(), FeedbackError> {
        let p = feedback.p;
        if !(0.0..=1.0).contains(&p) {
            return Err(FeedbackError::LossEventRate(p));
        }
        let Some(elapsed) = now.checked_since(feedback.t_recvdata) else {
            return Err(FeedbackError::FromTheFuture {
                t_recvdata: feedback.t_recvdata,
                now,
            });
        };
        if feedback.t_delay > elapsed {
            return Err(FeedbackError::NegativeRtt {
                t_delay: feedback.t_delay,
                elapsed,
            });
        }
        if let Some(latest) = self.latest_t_recvdata.filter(|&l| feedback.t_recvdata < l) {
            return Err(FeedbackError::Stale {
                t_recvdata: feedback.t_recvdata,
                latest,
            });
        }
        self.latest_t_recvdata = Some(feedback.t_recvdata);

        // Step 1: R_sample = (t_now - t_recvdata) - t_delay, in seconds.
        let r_sample = (elapsed - feedback.t_delay)
            .as_secs_f64()
            .max(MIN_RTT_SAMPLE);
        // Step 2: R = R_sample for the first report, then R = q*R + (1-q)*R_sample.
        let q = self.config.q;
        let r = match self.r {
            Some(r) if self.has_feedback => q * r + (1.0 - q) * r_sample,
            _ => r_sample,
        };
        self.r = Some(r);
        self.has_feedback = true;
        self.p = p;

        // Step 4: X_recv_set keeps the reports of the last two RTTs; recv_limit is twice its
        // largest (the sender is taken as never data-limited).
        let x_recv = feedback.x_recv.bytes_per_sec();
        let horizon = Duration::from_secs_f64(2.0 * r);
        self.x_recv_set
            .retain(|&(t, _)| now.saturating_since(t) <= horizon);
        self.x_recv_set.push((now, x_recv));
        let recv_limit = 2.0 * self.x_recv_max();
        if p > 0.0 {
            // X = max(min(X_Bps, recv_limit), s/t_mbi).
            self.x = self.x_calc(r).min(recv_limit).max(self.min_rate());
        } else if self
            .tld
            .is_none_or(|tld| now.saturating_since(tld) >= Duration::from_secs_f64(r))
        {
            // Slow start: X = max(min(2X, recv_limit), initial_rate), at most once per RTT.
            self.x = (2.0 * self.x).min(recv_limit).max(self.initial_rate(r));
            self.tld = Some(now);
        }

        // Step 5: oscillation reduction (section 4.5), in sqrt(seconds).
        let sqrt_sample = r_sample.sqrt();
        let q2 = self.config.q2;
        let r_sqmean = match self.r_sqmean {
            Some(m) => q2 * m + (1.0 - q2) * sqrt_sample,
            None => sqrt_sample,
        };
        self.r_sqmean = Some(r_sqmean);
        if self.config.oscillation_reduction {
            self.inst_factor = r_sqmean / sqrt_sample;
        }

        // Steps 3 and 6: the nofeedback timer runs for t_RTO = max(4R, 2s/X).
        self.nofeedback_deadline = now + self.nofeedback_interval();
        Ok(())
    }

    /// Expires the nofeedback timer if `now` has reached it (section 4.4): the rate is halved
    /// and the timer restarts for max(4R, 2s/X).
    ///
    /// Before any report X = max(X/2, s/t_mbi). After one, the receive limit is cut: to X_recv
    /// when X_calc > 2 * X_recv, else to X_calc/2 (never below s/t_mbi); X_recv_set becomes that
    /// limit's half and X is recomputed against it (X_calc = infinity while p = 0, and then X
    /// does not grow: the slow-start doubling is not applied on a timer).
    pub fn handle_timeout(&mut self, now: Instant) {
        if now < self.nofeedback_deadline {
            return;
        }
        match self.r {
            Some(r) if self.has_feedback => {
                let x_calc = self.x_calc(r);
                let x_recv = self.x_recv_max();
                let timer_limit = if x_calc > 2.0 * x_recv {
                    x_recv
                } else {
                    x_calc / 2.0
                };
                let timer_limit = timer_limit.max(self.min_rate());
                self.x_recv_set.clear();
                self.x_recv_set.push((now, timer_limit / 2.0));
                let x = if self.p > 0.0 { x_calc } else { self.x };
                self.x = x.min(timer_limit).max(self.min_rate());
            }
            _ => self.x = (self.x / 2.0).max(self.min_rate()),
        }
        self.nofeedback_deadline = now + self.nofeedback_interval();
    }

    /// t_RTO of the nofeedback timer: max(4R, 2s/X) (section 4.3 step 3), 2s/X without R.
    pub fn nofeedback_interval(&self) -> Duration {
        let by_rate = 2.0 * self.s / self.x;
        let secs = match self.r {
            Some(r) => (4.0 * r).max(by_rate),
            None => by_rate,
        };
        Duration::from_secs_f64(secs)
    }

    /// The largest rate in X_recv_set, in bytes/s (0 when empty).
    fn x_recv_max(&self) -> f64 {
        self.x_recv_set.iter().fold(0.0, |m, &(_, x)| m.max(x))
    }

    /// X_calc, the equation's rate for p and R, in bytes/s (infinite for p = 0).
    fn x_calc(&self, r: f64) -> f64 {
        equation::throughput(
            self.s,
            r,
            self.p,
            self.config.b,
            self.config.t_rto_factor * r,
        )
    }

    /// The initial rate W_init/R with W_init = min(4s, max(2s, 4380)) bytes (section 4.2).
    fn initial_rate(&self, r: f64) -> f64 {
        let w_init = (4.0 * self.s).min((2.0 * self.s).max(4380.0));
        w_init / r
    }

    /// s/t_mbi, the floor of X, in bytes/s (section 4.3).
    fn min_rate(&self) -> f64 {
        self.s / self.config.t_mbi.as_secs_f64()
    }

    /// The pacing rate X_inst (or X), in bytes/s.
    fn send_rate(&self) -> f64 {
        (self.x * self.inst_factor).max(self.min_rate())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: f64 = 1000.0;

    fn sender(config: TfrcConfig) -> TfrcSender {
        TfrcSender::new(config, Instant::ZERO).unwrap_or_else(|e| panic!("{e}"))
    }

    fn with_rtt() -> TfrcSender {
        sender(TfrcConfig {
            initial_rtt: Some(Duration::from_millis(100)),
            ..TfrcConfig::default()
        })
    }

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    /// A report arriving at `at` ms for a packet sent 100 ms earlier.
    fn report(x_recv_bytes_per_sec: f64, p: f64, at: u64) -> (Instant, Feedback) {
        let fb = Feedback {
            t_recvdata: ms(at - 100),
            t_delay: Duration::ZERO,
            x_recv: Rate::from_bps_f64(x_recv_bytes_per_sec * 8.0),
            p,
        };
        (ms(at), fb)
    }

    fn feed(s: &mut TfrcSender, x_recv: f64, p: f64, at: u64) {
        let (now, fb) = report(x_recv, p, at);
        assert_eq!(s.on_feedback(now, &fb), Ok(()));
    }

    fn close(a: f64, b: f64) -> bool {
        ((a - b) / b).abs() < 1e-9
    }

    #[test]
    fn the_sender_starts_at_one_packet_per_second_or_at_w_init_over_r() {
        let s = sender(TfrcConfig::default());
        assert_eq!(s.rate_bytes_per_sec(), S);
        assert_eq!(s.poll_timeout(), Some(Instant::from_secs(2)));
        // W_init = min(4 * 1000, max(2 * 1000, 4380)) = 4000 bytes over 0.1 s.
        assert!(close(with_rtt().rate_bytes_per_sec(), 40_000.0));
    }

    #[test]
    fn the_first_report_sets_r_and_the_initial_rate() {
        let mut s = sender(TfrcConfig::default());
        feed(&mut s, 0.0, 0.0, 300);
        assert_eq!(s.rtt(), Some(Duration::from_millis(100)));
        assert!(close(s.rate_bytes_per_sec(), 40_000.0));
    }

    #[test]
    fn slow_start_doubles_per_report_up_to_twice_the_receive_rate() {
        let mut s = with_rtt();
        let mut rates = Vec::new();
        for k in 1..=5 {
            feed(&mut s, 100_000.0, 0.0, 100 * k);
            rates.push(s.rate_bytes_per_sec());
        }
        for (got, want) in rates
            .iter()
            .zip([80_000.0, 160_000.0, 200_000.0, 200_000.0, 200_000.0])
        {
            assert!(close(*got, want), "{rates:?}");
        }
    }

    #[test]
    fn slow_start_doubles_at_most_once_per_rtt() {
        let mut s = with_rtt();
        feed(&mut s, 1e6, 0.0, 100);
        feed(&mut s, 1e6, 0.0, 150);
        assert!(close(s.rate_bytes_per_sec(), 80_000.0));
    }

    #[test]
    fn after_a_loss_the_rate_is_the_equations() {
        let mut s = with_rtt();
        feed(&mut s, 1e6, 0.0, 100);
        feed(&mut s, 1e6, 0.01, 200);
        // s = 1000, R = 0.1 s, p = 0.01, t_RTO = 0.4 s: 112332.2343629930 bytes/s.
        assert!(
            close(s.rate_bytes_per_sec(), 112_332.234_362_993),
            "{}",
            s.rate_bytes_per_sec()
        );
        assert_eq!(s.rate(), Rate::from_bps_f64(s.rate_bytes_per_sec() * 8.0));
    }

    #[test]
    fn the_rate_is_limited_by_twice_the_receive_rate() {
        let mut s = with_rtt();
        // p = 0.0001 alone would allow about 1.2 MB/s.
        feed(&mut s, 50_000.0, 0.0001, 100);
        assert!(close(s.rate_bytes_per_sec(), 100_000.0));
    }

    #[test]
    fn the_nofeedback_timer_halves_the_rate() {
        let mut s = with_rtt();
        feed(&mut s, 1e6, 0.01, 100);
        let x = s.rate_bytes_per_sec();
        // t_RTO = max(4R, 2s/X) = max(0.4 s, 17.8 ms).
        assert_eq!(s.poll_timeout(), Some(ms(500)));
        s.handle_timeout(ms(499));
        assert!(close(s.rate_bytes_per_sec(), x));
        s.handle_timeout(ms(500));
        assert!(close(s.rate_bytes_per_sec(), x / 2.0));
        assert_eq!(s.poll_timeout(), Some(ms(900)));
        s.handle_timeout(ms(900));
        assert!(close(s.rate_bytes_per_sec(), x / 4.0));
    }

    #[test]
    fn the_nofeedback_timer_halves_in_slow_start_too() {
        let mut s = with_rtt();
        // In slow start X is twice the receive rate.
        feed(&mut s, 40_000.0, 0.0, 100);
        feed(&mut s, 80_000.0, 0.0, 200);
        assert!(close(s.rate_bytes_per_sec(), 160_000.0));
        s.handle_timeout(ms(600));
        // X_calc is infinite, so the limit is X_recv = 80_000.
        assert!(close(s.rate_bytes_per_sec(), 80_000.0));
    }

    #[test]
    fn the_rate_never_falls_below_one_packet_per_t_mbi() {
        let mut s = sender(TfrcConfig::default());
        for _ in 0..30 {
            s.handle_timeout(s.poll_timeout().unwrap_or(Instant::MAX));
        }
        assert!(close(s.rate_bytes_per_sec(), S / 64.0));
        let mut s = with_rtt();
        feed(&mut s, 1e6, 1.0, 100);
        for _ in 0..30 {
            s.handle_timeout(s.poll_timeout().unwrap_or(Instant::MAX));
        }
        assert!(close(s.rate_bytes_per_sec(), S / 64.0));
    }

    #[test]
    fn the_rtt_estimate_is_filtered_with_q_of_0_9() {
        let mut s = with_rtt();
        feed(&mut s, 1e6, 0.0, 100);
        let fb = Feedback {
            t_recvdata: ms(100),
            t_delay: Duration::from_millis(100),
            x_recv: Rate::ZERO,
            p: 0.0,
        };
        // R_sample = (500 - 100) - 100 = 300 ms; R = 0.9 * 0.1 + 0.1 * 0.3 = 0.12 s.
        assert_eq!(s.on_feedback(ms(500), &fb), Ok(()));
        assert_eq!(s.rtt(), Some(Duration::from_millis(120)));
    }

    #[test]
    fn oscillation_reduction_scales_the_pacing_rate_by_the_root_of_the_rtt_ratio() {
        let config = TfrcConfig {
            initial_rtt: Some(Duration::from_millis(100)),
            oscillation_reduction: true,
            ..TfrcConfig::default()
        };
        let mut s = sender(config);
        feed(&mut s, 1e6, 0.01, 100);
        assert_eq!(s.sending_rate(), s.rate());
        // R_sample = 0.4 s: R_sqmean = 0.9 sqrt(0.1) + 0.1 sqrt(0.4); X_inst = X R_sqmean / sqrt(0.4).
        let fb = Feedback {
            t_recvdata: ms(200),
            t_delay: Duration::ZERO,
            x_recv: Rate::from_mbps(8),
            p: 0.01,
        };
        assert_eq!(s.on_feedback(ms(600), &fb), Ok(()));
        let r_sqmean = 0.9 * 0.1_f64.sqrt() + 0.1 * 0.4_f64.sqrt();
        let x_inst = s.rate_bytes_per_sec() * r_sqmean / 0.4_f64.sqrt();
        assert!(
            s.sending_rate()
                .bps()
                .abs_diff(Rate::from_bps_f64(x_inst * 8.0).bps())
                <= 1
        );
        assert!(s.sending_rate() < s.rate());
    }

    #[test]
    fn packets_are_paced_at_s_over_x() {
        let mut s = with_rtt();
        // X = 40_000 bytes/s: t_ipi = 25 ms.
        assert_eq!(s.t_ipi(), Duration::from_millis(25));
        let h = s.poll_send(ms(0));
        assert_eq!(
            h,
            Some(DataHeader {
                seq: 0,
                timestamp: ms(0),
                rtt: Some(Duration::from_millis(100))
            })
        );
        assert_eq!(s.poll_send(ms(24)), None);
        assert_eq!(s.next_send_time(), ms(25));
        assert_eq!(s.poll_send(ms(25)).map(|h| h.seq), Some(1));
        // Late by far more than t_ipi: one packet of credit, then pacing again.
        assert!(s.poll_send(ms(200)).is_some());
        assert!(s.poll_send(ms(200)).is_some());
        assert!(s.poll_send(ms(200)).is_none());
        assert_eq!(s.next_send_time(), ms(225));
    }

    #[test]
    fn an_impossible_report_is_refused_and_changes_nothing() {
        let mut s = with_rtt();
        feed(&mut s, 1e6, 0.0, 200);
        let before = (s.rate(), s.rtt(), s.poll_timeout());
        let good = Feedback {
            t_recvdata: ms(150),
            t_delay: Duration::ZERO,
            x_recv: Rate::ZERO,
            p: 0.0,
        };
        let bad = [
            (ms(300), Feedback { p: 1.5, ..good }),
            (
                ms(300),
                Feedback {
                    p: f64::NAN,
                    ..good
                },
            ),
            (ms(100), good),
            (
                ms(300),
                Feedback {
                    t_delay: Duration::from_millis(151),
                    ..good
                },
            ),
            (
                ms(300),
                Feedback {
                    t_recvdata: ms(50),
                    ..good
                },
            ),
        ];
        for (now, fb) in bad {
            assert!(s.on_feedback(now, &fb).is_err(), "{fb:?}");
        }
        assert_eq!((s.rate(), s.rtt(), s.poll_timeout()), before);
    }
}
