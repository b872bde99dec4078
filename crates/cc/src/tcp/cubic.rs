//! CUBIC (RFC 9438): the window grows as a cubic function of the time since the last
//! reduction, centred on the window where the loss happened, with a Reno-friendly floor.
//!
//! Windows are kept in bytes and converted to segments (of SMSS bytes) for the RFC's equations,
//! which are written in segments and seconds. Slow start below ssthresh is RFC 5681's; the
//! sender runs loss recovery around this controller as it does for NewReno.

use super::controller::{AckInfo, CongestionKind, WindowController};
use crate::time::Instant;
use crate::units::Bytes;

/// C of RFC 9438 section 4.2: 0.4 segments per second cubed.
pub const C: f64 = 0.4;
/// beta_cubic of RFC 9438 section 4.6: the window after a reduction is 0.7 of the window before.
pub const BETA: f64 = 0.7;

/// CUBIC's state (names from RFC 9438 section 4.1).
#[derive(Clone, Debug)]
pub struct Cubic {
    /// SMSS, in bytes.
    mss: Bytes,
    /// Congestion window, in bytes.
    cwnd: Bytes,
    /// Slow-start threshold, in bytes.
    ssthresh: Bytes,
    /// W_max: the window just before the last reduction, in segments (0 before any).
    w_max: f64,
    /// K of eq. 2, in seconds.
    k: f64,
    /// t_epoch: when the current congestion-avoidance stage began.
    epoch: Option<Instant>,
    /// cwnd_epoch: the window at the start of the stage, in segments.
    cwnd_epoch: f64,
    /// W_est of eq. 4, in segments.
    w_est: f64,
    /// Growth not yet applied, in bytes times segments (the fraction of a byte per ACK).
    pending: f64,
}

impl Cubic {
    /// A CUBIC controller with `initial_cwnd` bytes of window and the given ssthresh.
    pub fn new(mss: Bytes, initial_cwnd: Bytes, initial_ssthresh: Bytes) -> Cubic {
        let mss = mss.max(1);
        Cubic {
            mss,
            cwnd: initial_cwnd.max(mss),
            ssthresh: initial_ssthresh,
            w_max: 0.0,
            k: 0.0,
            epoch: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            pending: 0.0,
        }
    }

    /// W_cubic(t) = C (t - K)^3 + W_max (RFC 9438 eq. 1), in segments, for `t` seconds.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// K = cbrt((W_max - cwnd_epoch) / C) (RFC 9438 eq. 2), in seconds; 0 when the stage
    /// starts at or above W_max.
    pub fn k_for(w_max: f64, cwnd_epoch: f64) -> f64 {
        if cwnd_epoch >= w_max {
            0.0
        } else {
            ((w_max - cwnd_epoch) / C).cbrt()
        }
    }

    /// alpha_cubic of RFC 9438 section 4.3: 3 (1 - beta) / (1 + beta) while W_est < W_max,
    /// then 1 (Reno's slope).
    pub fn alpha(&self) -> f64 {
        if self.w_est >= self.w_max {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        }
    }

    /// W_max, in segments.
    pub fn w_max(&self) -> f64 {
        self.w_max
    }

    /// K, in seconds.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// W_est, in segments.
    pub fn w_est(&self) -> f64 {
        self.w_est
    }

    fn segments(&self, bytes: Bytes) -> f64 {
        bytes as f64 / self.mss as f64
    }

    /// Congestion avoidance on an ACK of `acked` bytes at `now` (RFC 9438 sections 4.2-4.4).
    fn avoid(&mut self, now: Instant, acked: Bytes, rtt_s: f64) {
        let cwnd = self.segments(self.cwnd);
        let epoch = match self.epoch {
            Some(e) => e,
            None => {
                // Section 4.2: a new stage; K from eq. 2, W_est starts at cwnd.
                self.epoch = Some(now);
                self.cwnd_epoch = cwnd;
                if self.w_max < cwnd {
                    self.w_max = cwnd;
                }
                self.k = Cubic::k_for(self.w_max, self.cwnd_epoch);
                self.w_est = cwnd;
                now
            }
        };
        let t = now.saturating_since(epoch).as_secs_f64();
        let segments_acked = acked as f64 / self.mss as f64;
        // Eq. 4: W_est grows by alpha_cubic per window of ACKs.
        self.w_est += self.alpha() * segments_acked / cwnd;
        let target_segments = if self.w_cubic(t) < self.w_est {
            // Reno-friendly region (section 4.3): cwnd = W_est.
            self.w_est
        } else {
            // Concave or convex region (sections 4.4, 4.5): approach W_cubic(t + RTT), the
            // target clamped to [cwnd, 1.5 cwnd], by (target - cwnd) / cwnd per segment acked.
            let target = self.w_cubic(t + rtt_s).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segments_acked
        };
        let grow = (target_segments - cwnd).max(0.0) * self.mss as f64 + self.pending;
        let whole = grow.floor();
        self.pending = grow - whole;
        self.cwnd = self.cwnd.saturating_add(whole as Bytes);
    }
}

impl WindowController for Cubic {
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

    fn on_ack(&mut self, now: Instant, ack: &AckInfo) {
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        if self.cwnd < self.ssthresh {
            // Slow start (RFC 9438 section 4.10 keeps RFC 5681's).
            self.cwnd = self.cwnd.saturating_add(ack.bytes_acked.min(self.mss));
            return;
        }
        self.avoid(now, ack.bytes_acked, ack.srtt.as_secs_f64());
    }

    fn on_congestion(&mut self, _now: Instant, kind: CongestionKind, _bytes_in_flight: Bytes) {
        let cwnd = self.segments(self.cwnd);
        // Section 4.7, fast convergence: a loss below the last W_max releases bandwidth.
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        // Section 4.6: ssthresh = cwnd * beta_cubic, at least 2 segments.
        let ssthresh = ((self.cwnd as f64 * BETA) as Bytes).max(2 * self.mss);
        self.ssthresh = ssthresh;
        self.epoch = None;
        self.pending = 0.0;
        self.cwnd = match kind {
            // Section 4.8: after a timeout, the loss window of RFC 5681.
            CongestionKind::Timeout => self.mss,
            CongestionKind::DupAcks | CongestionKind::Ecn | CongestionKind::External => ssthresh,
        };
    }

    fn on_repeated_timeout(&mut self, _now: Instant, _bytes_in_flight: Bytes) {
        self.epoch = None;
        self.pending = 0.0;
        self.cwnd = self.mss;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const MSS: Bytes = 1000;

    fn ack(bytes: Bytes, srtt_ms: u64) -> AckInfo {
        AckInfo {
            bytes_acked: bytes,
            rtt: None,
            srtt: Duration::from_millis(srtt_ms),
            min_rtt: Duration::from_millis(srtt_ms),
            bytes_in_flight: 0,
            in_recovery: false,
            ece: false,
        }
    }

    /// A controller that lost at 100 segments: W_max 100, cwnd = ssthresh = 70 segments.
    fn after_loss_at_100() -> Cubic {
        let mut c = Cubic::new(MSS, 100 * MSS, u64::MAX);
        c.on_congestion(Instant::ZERO, CongestionKind::DupAcks, 100 * MSS);
        c
    }

    #[test]
    fn a_loss_sets_ssthresh_and_cwnd_to_beta_times_cwnd_and_w_max_to_cwnd() {
        let c = after_loss_at_100();
        assert_eq!((c.ssthresh(), c.cwnd()), (70 * MSS, 70 * MSS));
        assert_eq!(c.w_max(), 100.0);
    }

    #[test]
    fn the_first_ack_of_a_stage_sets_k_from_eq_2() {
        let mut c = after_loss_at_100();
        c.on_ack(Instant::from_secs(1), &ack(MSS, 100));
        // K = cbrt((100 - 70) / 0.4) = cbrt(75).
        assert!((c.k() - 75f64.cbrt()).abs() < 1e-12, "K {}", c.k());
        assert!(
            (c.w_cubic(c.k()) - 100.0).abs() < 1e-9,
            "W_cubic(K) = W_max"
        );
        assert!(
            (c.w_cubic(0.0) - 70.0).abs() < 1e-9,
            "W_cubic(0) = cwnd_epoch"
        );
    }

    #[test]
    fn in_the_concave_region_cwnd_moves_toward_w_cubic_one_rtt_ahead() {
        let mut c = after_loss_at_100();
        let start = Instant::from_secs(1);
        c.on_ack(start, &ack(MSS, 100));
        let cwnd = c.cwnd() as f64 / MSS as f64;
        // Two seconds into the stage, one segment acked: eq. 1 at t + RTT = 2.1 s.
        let t = 2.0;
        let target = (C * (t + 0.1 - 75f64.cbrt()).powi(3) + 100.0).clamp(cwnd, 1.5 * cwnd);
        let expected = cwnd + (target - cwnd) / cwnd;
        c.on_ack(start + Duration::from_secs(2), &ack(MSS, 100));
        let got = c.cwnd() as f64 / MSS as f64;
        assert!(
            (got - expected).abs() < 1.0 / MSS as f64 + 1e-9,
            "cwnd {got} expected {expected}"
        );
        assert!(got > cwnd);
    }

    #[test]
    fn the_reno_friendly_estimate_grows_by_alpha_per_window_of_acks() {
        // alpha_cubic = 3 (1 - 0.7) / (1 + 0.7) = 0.9 / 1.7 below W_max (eq. 4).
        let mut c = after_loss_at_100();
        assert!((c.alpha() - 0.9 / 1.7).abs() < 1e-12);
        let start = Instant::from_secs(1);
        c.on_ack(start, &ack(MSS, 100));
        let w_est = c.w_est();
        c.on_ack(start, &ack(MSS, 100));
        let cwnd = 70.0;
        assert!(
            (c.w_est() - (w_est + 0.9 / 1.7 / cwnd)).abs() < 1e-3,
            "W_est {} from {w_est}",
            c.w_est()
        );
    }

    #[test]
    fn when_w_cubic_is_below_w_est_cwnd_follows_w_est() {
        // A small W_max with a long gap since the loss is not the case here: at the start of a
        // stage with W_max far above, W_cubic(0) = cwnd_epoch and W_est = cwnd_epoch + alpha /
        // cwnd after one ACK, so the Reno-friendly region applies and cwnd = W_est.
        let mut c = after_loss_at_100();
        let start = Instant::from_secs(1);
        c.on_ack(start, &ack(MSS, 100));
        let expected = c.w_est();
        assert!(c.w_cubic(0.0) < expected);
        let got = c.cwnd() as f64 / MSS as f64;
        assert!(
            (got - expected).abs() < 1.0 / MSS as f64 + 1e-9,
            "cwnd {got} W_est {expected}"
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max_after_a_loss_below_the_last_one() {
        let mut c = after_loss_at_100();
        // A second loss at 80 segments, below W_max 100: W_max = 80 (1 + 0.7) / 2 = 68.
        c.set_cwnd(80 * MSS);
        c.on_congestion(Instant::from_secs(5), CongestionKind::DupAcks, 80 * MSS);
        assert!((c.w_max() - 68.0).abs() < 1e-9, "W_max {}", c.w_max());
        assert_eq!(c.ssthresh(), 56 * MSS);
    }

    #[test]
    fn a_timeout_sets_the_loss_window_and_ssthresh_to_beta_times_cwnd() {
        let mut c = Cubic::new(MSS, 40 * MSS, u64::MAX);
        c.on_congestion(Instant::ZERO, CongestionKind::Timeout, 40 * MSS);
        assert_eq!((c.ssthresh(), c.cwnd()), (28 * MSS, MSS));
    }

    #[test]
    fn slow_start_below_ssthresh_adds_one_segment_per_ack() {
        let mut c = Cubic::new(MSS, 10 * MSS, u64::MAX);
        c.on_ack(Instant::ZERO, &ack(2 * MSS, 100));
        assert_eq!(c.cwnd(), 11 * MSS);
    }
}
