//! MCCP (Arumugam, Jebarajan, Wise): a TCP sender that sets ssthresh and cwnd from an
//! adaptive available-bandwidth estimate (ABE, see [`super::abe`]) after a loss, probes quickly
//! with *fast probing*, and restarts fast probing in congestion avoidance when *non-congestion
//! detection* (NCD) sees persistent spare bandwidth.
//!
//! Units: windows in bytes, rates in bytes per second (`f64`). The paper counts windows in
//! segments; where it does ("cwnd - 1.5", "no_congestion_counter > cwnd"), segments are turned
//! into bytes with the MSS.
//!
//! Phases. The connection starts in fast probing, and a timeout restarts it ("when a
//! connection initially begins or restarts after a coarse timeout, MCCP adaptively and
//! repeatedly resets ssthresh"). In fast probing every new ACK first raises ssthresh to
//! ABE * RTT_min when that is higher, then grows cwnd as NewReno does: one segment per ACK below
//! ssthresh, one segment per window above it (the paper's pseudocode, "increase cwnd by 1" and
//! "by 1/cwnd"). Duplicate ACKs (a congestion signal) end fast probing: "if (DUPACKS are
//! received) switch to congestion avoidance phase". In congestion avoidance growth is NewReno's
//! with ssthresh left alone, and NCD watches for spare bandwidth.
//!
//! Growth is NewReno's arithmetic: the controller holds a [`NewReno`] and delegates to it.

use super::abe::{Abe, AbeConfig, AbeInput, AbeTrace, MAX_INSTABILITY_WINDOW};
use super::controller::{AckInfo, CongestionKind, WindowController};
use super::new_reno::NewReno;
use super::westwood::{known_min_rtt, reduce_to_estimate, window_from_rate, DeliveredBytes};
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::Bytes;

/// MCCP's parameters, with the paper's values as defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MccpConfig {
    /// The bandwidth estimator's parameters (eqs. (1)-(6)).
    pub abe: AbeConfig,
    /// beta of the congestion boundary, `beta * expected + (1 - beta) * initial expected`,
    /// in (0, 1). The paper gives "0 < beta < 1" and "we can make this algorithm more
    /// conservative by setting beta > 0.5" but no value for NCD; the only value it gives for a
    /// beta is 0.6 (eq. (5)), which is also on the conservative side, so the default is 0.6.
    pub ncd_beta: f64,
    /// How many segments the expected rate is taken back: "(cwnd - 1.5) / RTT_min", because
    /// "ABE is the achieved rate corresponding to the expected rate 1.5 times RTT earlier".
    /// Paper: 1.5.
    pub expected_rate_lag: f64,
    /// NCD ignores the first this many RTTs of each congestion-avoidance phase ("in congestion
    /// avoidance except for the initial 2 RTT"). Paper: 2.
    pub ncd_skip_rtts: u32,
    /// Run non-congestion detection. `false` is the paper's "TCP (without NCD)" of Figs. 3a
    /// and 4a: the same sender (ABE, the loss reaction, fast probing at start-up and after a
    /// timeout) whose congestion avoidance never restarts fast probing. Default: `true`.
    pub ncd: bool,
}

impl Default for MccpConfig {
    fn default() -> Self {
        MccpConfig {
            abe: AbeConfig::default(),
            ncd_beta: 0.6,
            expected_rate_lag: 1.5,
            ncd_skip_rtts: 2,
            ncd: true,
        }
    }
}

/// Why an [`MccpConfig`] was rejected.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum MccpConfigError {
    /// beta of eq. (5) out of range.
    #[error("abe.instability_gain (beta of eq. 5) is {0}; use a value from 0 up to but not including 1 (paper: 0.6)")]
    InstabilityGain(f64),
    /// N of eq. (6) negative or not finite.
    #[error("abe.tau_factor (N of eq. 6) is {0}; use a finite value of 0 or more (paper: 10)")]
    TauFactor(f64),
    /// The U_max window empty or too long.
    #[error("abe.instability_window is {0}; use 1 to {max} (paper: 10)", max = MAX_INSTABILITY_WINDOW)]
    InstabilityWindow(usize),
    /// The congestion boundary's beta out of range.
    #[error("ncd_beta is {0}; use a value strictly between 0 and 1 (default 0.6)")]
    NcdBeta(f64),
    /// The expected-rate lag negative or not finite.
    #[error("expected_rate_lag is {0} segments; use a finite value of 0 or more (paper: 1.5)")]
    ExpectedRateLag(f64),
}

impl MccpConfig {
    /// Checks every parameter's range.
    pub fn validate(&self) -> Result<(), MccpConfigError> {
        let abe = &self.abe;
        if !(0.0..1.0).contains(&abe.instability_gain) {
            return Err(MccpConfigError::InstabilityGain(abe.instability_gain));
        }
        if !(abe.tau_factor.is_finite() && abe.tau_factor >= 0.0) {
            return Err(MccpConfigError::TauFactor(abe.tau_factor));
        }
        if !(1..=MAX_INSTABILITY_WINDOW).contains(&abe.instability_window) {
            return Err(MccpConfigError::InstabilityWindow(abe.instability_window));
        }
        if !(self.ncd_beta > 0.0 && self.ncd_beta < 1.0) {
            return Err(MccpConfigError::NcdBeta(self.ncd_beta));
        }
        if !(self.expected_rate_lag.is_finite() && self.expected_rate_lag >= 0.0) {
            return Err(MccpConfigError::ExpectedRateLag(self.expected_rate_lag));
        }
        Ok(())
    }
}

/// What NCD looks at on a new ACK.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NcdInput {
    /// The sender is in congestion avoidance: not fast probing, not in recovery, and
    /// cwnd >= ssthresh.
    pub in_congestion_avoidance: bool,
    /// The filtered ABE, in bytes per second.
    pub abe: Option<f64>,
    /// The congestion window, in bytes.
    pub cwnd: Bytes,
    /// The slow-start threshold, in bytes (the window congestion avoidance started from).
    pub ssthresh: Bytes,
    /// Sender maximum segment size, in bytes.
    pub mss: Bytes,
    /// The smoothed RTT (the length of "the initial 2 RTT").
    pub srtt: Duration,
    /// The smallest RTT seen.
    pub rtt_min: Option<Duration>,
}

/// Non-congestion detection: counts ACKs on which ABE exceeds the congestion boundary and
/// asks for fast probing once the count exceeds the window in segments.
///
/// The paper's pseudocode came out with its braces misplaced: read literally, the counter
/// would be zeroed whenever ABE is below the boundary and the count is at most cwnd, against its
/// own text ("increases by one every time ABE is above the congestion boundary and decreases
/// by one if ABE is below"). The reading implemented is the one the text describes:
///
/// ```text
/// if in congestion avoidance, past its first 2 RTTs:
///     if ABE > boundary: counter += 1
///     else if counter > 0: counter -= 1
///     if counter > cwnd (segments): restart fast probing
/// else: counter = 0
/// ```
///
/// The count is per new ACK outside recovery (duplicate ACKs neither add nor take away), and
/// the restart test runs on every counted ACK, not only when the counter falls. "Initial
/// expected rate (ssthresh/RTT_min)" uses the current ssthresh: congestion avoidance leaves it
/// where the phase began.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NonCongestionDetector {
    /// beta of the congestion boundary.
    beta: f64,
    /// Segments the expected rate lags ("cwnd - 1.5").
    lag: f64,
    /// RTTs ignored at the start of congestion avoidance.
    skip_rtts: u32,
    /// no_congestion_counter, in ACKs.
    counter: u64,
    /// When the current congestion-avoidance phase began.
    ca_since: Option<Instant>,
    /// The last congestion boundary computed, in bytes per second.
    boundary: Option<f64>,
}

impl NonCongestionDetector {
    /// A detector with the boundary's `beta`, the expected rate lagging `lag` segments, and
    /// the first `skip_rtts` RTTs of congestion avoidance ignored.
    pub fn new(beta: f64, lag: f64, skip_rtts: u32) -> NonCongestionDetector {
        NonCongestionDetector {
            beta,
            lag,
            skip_rtts,
            counter: 0,
            ca_since: None,
            boundary: None,
        }
    }

    /// no_congestion_counter.
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// The congestion boundary of the last counted ACK, in bytes per second.
    pub fn last_boundary(&self) -> Option<f64> {
        self.boundary
    }

    /// Forgets the phase: the counter and the start of congestion avoidance.
    pub fn reset(&mut self) {
        self.counter = 0;
        self.ca_since = None;
    }

    /// The congestion boundary `beta * expected + (1 - beta) * initial expected`, in bytes per
    /// second, with the expected rate `(cwnd - lag * MSS) / RTT_min` (zero if cwnd is smaller)
    /// and the initial expected rate `ssthresh / RTT_min`; `None` for a zero RTT_min.
    pub fn congestion_boundary(
        &self,
        cwnd: Bytes,
        ssthresh: Bytes,
        mss: Bytes,
        rtt_min: Duration,
    ) -> Option<f64> {
        if rtt_min.is_zero() {
            return None;
        }
        let per_rtt_min = |bytes: f64| bytes * NANOS_PER_SEC as f64 / rtt_min.as_nanos() as f64;
        let expected = per_rtt_min((cwnd as f64 - self.lag * mss as f64).max(0.0));
        let initial = per_rtt_min(ssthresh as f64);
        Some(self.beta * expected + (1.0 - self.beta) * initial)
    }

    /// A new ACK outside recovery arrived at `now`; true when fast probing should restart
    /// (the detector then starts over).
    pub fn on_ack(&mut self, now: Instant, input: &NcdInput) -> bool {
        if !input.in_congestion_avoidance {
            self.reset();
            return false;
        }
        let since = *self.ca_since.get_or_insert(now);
        if now.saturating_since(since) < input.srtt * u64::from(self.skip_rtts) {
            return false;
        }
        let (Some(abe), Some(rtt_min)) = (input.abe, input.rtt_min) else {
            return false;
        };
        let Some(boundary) =
            self.congestion_boundary(input.cwnd, input.ssthresh, input.mss, rtt_min)
        else {
            return false;
        };
        self.boundary = Some(boundary);
        if abe > boundary {
            self.counter = self.counter.saturating_add(1);
        } else {
            self.counter = self.counter.saturating_sub(1);
        }
        // "no_congestion_counter > cwnd", cwnd in segments: counter > cwnd / MSS.
        if self.counter.saturating_mul(input.mss.max(1)) > input.cwnd {
            self.reset();
            return true;
        }
        false
    }
}

/// MCCP's variables after an event, for traces and plots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MccpTrace {
    /// The congestion window, in bytes.
    pub cwnd: Bytes,
    /// The slow-start threshold, in bytes.
    pub ssthresh: Bytes,
    /// The ABE sample s_k of eq. (4), in bytes per second (0 before the first sample).
    pub abe_sample: f64,
    /// The filtered ABE S^_k of eq. (1), in bytes per second (0 before the first sample).
    pub abe_filtered: f64,
    /// The ACK inter-arrival time dt_k of the last ABE update.
    pub dt_k: Duration,
    /// The sampling interval T_k of eqs. (2)-(4).
    pub t_k: Duration,
    /// The filter time constant tau_k of eq. (6).
    pub tau_k: Duration,
    /// The filter coefficient alpha_k of eq. (1).
    pub alpha_k: f64,
    /// The instability U_k of eq. (5), in bytes per second.
    pub u_k: f64,
    /// U_max of eq. (6), in bytes per second.
    pub u_max: f64,
    /// The last NCD congestion boundary, in bytes per second (0 before the first).
    pub congestion_boundary: f64,
    /// NCD's no_congestion_counter, in ACKs.
    pub no_congestion_counter: u64,
    /// The sender is in fast probing.
    pub fast_probing: bool,
}

/// The MCCP window controller.
#[derive(Clone, Debug)]
pub struct Mccp {
    /// cwnd, ssthresh and their growth.
    reno: NewReno,
    /// Parameters.
    config: MccpConfig,
    /// Per-ACK delivered bytes for the estimator, duplicate ACKs as one segment.
    delivered: DeliveredBytes,
    /// The available-bandwidth estimator.
    abe: Abe,
    /// Non-congestion detection.
    ncd: NonCongestionDetector,
    /// In fast probing (else congestion avoidance).
    fast_probing: bool,
    /// The smallest RTT seen.
    rtt_min: Option<Duration>,
}

impl Mccp {
    /// An MCCP controller with `initial_cwnd` bytes of window and the given ssthresh, for
    /// segments of `mss` bytes; it starts in fast probing. Fast probing only ever raises
    /// ssthresh, so with an unbounded initial ssthresh the start is plain slow start up to the
    /// first loss.
    pub fn new(
        mss: Bytes,
        initial_cwnd: Bytes,
        initial_ssthresh: Bytes,
        config: MccpConfig,
    ) -> Result<Mccp, MccpConfigError> {
        config.validate()?;
        let reno = NewReno::new(mss, initial_cwnd, initial_ssthresh);
        Ok(Mccp {
            delivered: DeliveredBytes::new(reno.mss()),
            reno,
            config,
            abe: Abe::new(config.abe),
            ncd: NonCongestionDetector::new(
                config.ncd_beta,
                config.expected_rate_lag,
                config.ncd_skip_rtts,
            ),
            fast_probing: true,
            rtt_min: None,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &MccpConfig {
        &self.config
    }

    /// The sender maximum segment size, in bytes.
    pub fn mss(&self) -> Bytes {
        self.reno.mss()
    }

    /// The estimator.
    pub fn abe(&self) -> &Abe {
        &self.abe
    }

    /// True in fast probing, false in congestion avoidance.
    pub fn fast_probing(&self) -> bool {
        self.fast_probing
    }

    /// NCD's no_congestion_counter.
    pub fn no_congestion_counter(&self) -> u64 {
        self.ncd.counter()
    }

    /// ABE * RTT_min in whole segments, at least two, in bytes; `None` while the estimate or
    /// RTT_min is unknown.
    pub fn ssthresh_from_abe(&self) -> Option<Bytes> {
        Some(window_from_rate(
            self.abe.estimate()?,
            self.rtt_min?,
            self.mss(),
        ))
    }

    /// The variables after the last event.
    pub fn trace(&self) -> MccpTrace {
        let a: AbeTrace = self.abe.trace();
        MccpTrace {
            cwnd: self.reno.cwnd(),
            ssthresh: self.reno.ssthresh(),
            abe_sample: a.sample,
            abe_filtered: a.estimate,
            dt_k: a.dt_k,
            t_k: a.t_k,
            tau_k: a.tau_k,
            alpha_k: a.alpha_k,
            u_k: a.u_k,
            u_max: a.u_max,
            congestion_boundary: self.ncd.last_boundary().unwrap_or(0.0),
            no_congestion_counter: self.ncd.counter(),
            fast_probing: self.fast_probing,
        }
    }
}

impl WindowController for Mccp {
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
        // Every ACK, duplicates and recovery ACKs too, is an arrival for ABE; cwin is the
        // window before this ACK's growth.
        let delivered = self.delivered.on_ack(ack.bytes_acked);
        self.abe.on_ack(
            now,
            &AbeInput {
                delivered,
                cwnd: self.reno.cwnd(),
                srtt: ack.srtt,
                rtt_min: self.rtt_min,
            },
        );
        if ack.bytes_acked == 0 || ack.in_recovery {
            return;
        }
        if self.fast_probing {
            // Fast probing: "if (ssthresh < (ABE * RTTmin)) ssthresh = (ABE * RTTmin)".
            if let Some(target) = self.ssthresh_from_abe() {
                if self.reno.ssthresh() < target {
                    self.reno.set_ssthresh(target);
                }
            }
        }
        // Exponential below ssthresh, linear above: NewReno's slow start and congestion
        // avoidance.
        self.reno.on_ack(now, ack);
        if !self.fast_probing && self.config.ncd {
            let input = NcdInput {
                in_congestion_avoidance: self.reno.cwnd() >= self.reno.ssthresh(),
                abe: self.abe.estimate(),
                cwnd: self.reno.cwnd(),
                ssthresh: self.reno.ssthresh(),
                mss: self.mss(),
                srtt: ack.srtt,
                rtt_min: self.rtt_min,
            };
            if self.ncd.on_ack(now, &input) {
                self.fast_probing = true;
            }
        }
    }

    fn on_congestion(&mut self, now: Instant, kind: CongestionKind, bytes_in_flight: Bytes) {
        self.ncd.reset();
        // A timeout restarts fast probing; every other signal ends it ("if (DUPACKS are
        // received) switch to congestion avoidance phase"). ECN and outside requests are
        // treated as duplicate ACKs, as Westwood+ treats them.
        self.fast_probing = kind == CongestionKind::Timeout;
        // "After a packet loss indication ... the sender uses the estimated available
        // bandwidth to properly set the congestion window and the slow-start threshold":
        // ssthresh = ABE * RTT_min and cwnd = ssthresh ("MCCP ABE reduces its cwin and
        // ssthresh according to the available bandwidth estimate"), Westwood+'s reaction. The
        // paper gives no window for a timeout beyond "restarts after a coarse timeout" into
        // fast probing; Westwood's convention: one segment.
        let ssthresh = self.ssthresh_from_abe();
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

    fn mccp(cwnd: Bytes, ssthresh: Bytes) -> Mccp {
        Mccp::new(MSS, cwnd, ssthresh, MccpConfig::default()).expect("the defaults are valid")
    }

    /// An ACK with srtt = RTT_min = 40 ms.
    fn ack(bytes: Bytes, in_recovery: bool) -> AckInfo {
        AckInfo {
            bytes_acked: bytes,
            rtt: None,
            srtt: Duration::from_millis(40),
            min_rtt: Duration::from_millis(40),
            bytes_in_flight: 0,
            in_recovery,
            ece: false,
        }
    }

    /// Recovery ACKs of 1000 B every 1 ms, 0 to 20 ms: no growth, and ABE = 1e6 B/s exactly
    /// (cwin <= 1e6 B/s * 40 ms, so T_k = dt_k and every sample is 1000 B / 1 ms).
    fn set_abe_to_one_megabyte_per_second(m: &mut Mccp) -> Instant {
        for i in 0..=20 {
            m.on_ack(Instant::from_millis(i), &ack(MSS, true));
        }
        assert_eq!(m.abe().estimate(), Some(1e6));
        Instant::from_millis(20)
    }

    #[test]
    fn the_defaults_are_the_papers_and_bad_values_are_rejected() {
        let c = MccpConfig::default();
        assert_eq!(c.abe.instability_gain, 0.6);
        assert_eq!(c.abe.tau_factor, 10.0);
        assert_eq!(c.abe.instability_window, 10);
        assert_eq!((c.expected_rate_lag, c.ncd_skip_rtts), (1.5, 2));
        assert!(c.ncd);
        assert!(
            !c.abe.adaptive_sampling,
            "T_k = T_min, as in the paper's experiments"
        );
        assert_eq!(c.validate(), Ok(()));
        let bad = |f: fn(&mut MccpConfig)| {
            let mut c = MccpConfig::default();
            f(&mut c);
            Mccp::new(MSS, MSS, MSS, c).err()
        };
        assert!(matches!(
            bad(|c| c.abe.instability_gain = f64::NAN),
            Some(MccpConfigError::InstabilityGain(_))
        ));
        assert_eq!(
            bad(|c| c.abe.instability_gain = 1.0),
            Some(MccpConfigError::InstabilityGain(1.0))
        );
        assert_eq!(
            bad(|c| c.abe.tau_factor = -1.0),
            Some(MccpConfigError::TauFactor(-1.0))
        );
        assert_eq!(
            bad(|c| c.abe.instability_window = 0),
            Some(MccpConfigError::InstabilityWindow(0))
        );
        assert_eq!(
            bad(|c| c.ncd_beta = 1.0),
            Some(MccpConfigError::NcdBeta(1.0))
        );
        assert_eq!(
            bad(|c| c.expected_rate_lag = f64::INFINITY),
            Some(MccpConfigError::ExpectedRateLag(f64::INFINITY))
        );
    }

    #[test]
    fn three_duplicate_acks_set_ssthresh_to_abe_times_rtt_min_and_cwnd_to_ssthresh() {
        let mut m = mccp(10 * MSS, u64::MAX);
        let now = set_abe_to_one_megabyte_per_second(&mut m);
        m.set_cwnd(60 * MSS);
        m.on_congestion(now, CongestionKind::DupAcks, 60 * MSS);
        // 1e6 B/s * 40 ms = 40 000 B = 40 segments.
        assert_eq!((m.ssthresh(), m.cwnd()), (40 * MSS, 40 * MSS));
        assert!(
            !m.fast_probing(),
            "duplicate ACKs switch to congestion avoidance"
        );
    }

    #[test]
    fn a_timeout_sets_ssthresh_from_abe_cwnd_to_one_segment_and_restarts_fast_probing() {
        let mut m = mccp(10 * MSS, u64::MAX);
        let now = set_abe_to_one_megabyte_per_second(&mut m);
        m.on_congestion(now, CongestionKind::DupAcks, 10 * MSS);
        assert!(!m.fast_probing());
        m.set_cwnd(60 * MSS);
        m.on_congestion(now, CongestionKind::Timeout, 60 * MSS);
        assert_eq!((m.ssthresh(), m.cwnd()), (40 * MSS, MSS));
        assert!(m.fast_probing());
    }

    #[test]
    fn a_reduction_never_raises_cwnd() {
        let mut m = mccp(10 * MSS, u64::MAX);
        let now = set_abe_to_one_megabyte_per_second(&mut m);
        m.on_congestion(now, CongestionKind::Ecn, 10 * MSS);
        assert_eq!((m.ssthresh(), m.cwnd()), (40 * MSS, 10 * MSS));
    }

    #[test]
    fn without_an_estimate_the_reduction_falls_back_to_new_reno_halving() {
        let mut m = mccp(20 * MSS, u64::MAX);
        m.on_congestion(Instant::ZERO, CongestionKind::DupAcks, 20 * MSS);
        assert_eq!((m.ssthresh(), m.cwnd()), (10 * MSS, 10 * MSS));
    }

    #[test]
    fn fast_probing_raises_ssthresh_when_abe_times_rtt_min_exceeds_it() {
        let mut m = mccp(10 * MSS, 20 * MSS);
        assert!(m.fast_probing(), "a connection starts in fast probing");
        // The first ACK gives no sample: slow start alone.
        m.on_ack(Instant::ZERO, &ack(MSS, false));
        assert_eq!((m.ssthresh(), m.cwnd()), (20 * MSS, 11 * MSS));
        // The second: ABE = 1000 B / 1 ms, ABE * RTT_min = 40 segments > 20.
        m.on_ack(Instant::from_millis(1), &ack(MSS, false));
        assert_eq!((m.ssthresh(), m.cwnd()), (40 * MSS, 12 * MSS));
    }

    #[test]
    fn fast_probing_never_lowers_ssthresh() {
        let mut m = mccp(10 * MSS, 60 * MSS);
        m.on_ack(Instant::ZERO, &ack(MSS, false));
        m.on_ack(Instant::from_millis(1), &ack(MSS, false));
        assert_eq!(m.ssthresh(), 60 * MSS);
    }

    #[test]
    fn congestion_avoidance_leaves_ssthresh_alone_where_fast_probing_raises_it() {
        let mut m = mccp(10 * MSS, u64::MAX);
        let now = set_abe_to_one_megabyte_per_second(&mut m);
        m.on_congestion(now, CongestionKind::DupAcks, 60 * MSS);
        // ABE rises towards 2e6 B/s: ABE * RTT_min passes 40 segments.
        let mut t = now;
        for _ in 0..20 {
            t += Duration::from_millis(1);
            m.on_ack(t, &ack(2 * MSS, false));
        }
        assert!(m.ssthresh_from_abe() > Some(40 * MSS));
        assert_eq!(m.ssthresh(), 40 * MSS);
        m.on_congestion(t, CongestionKind::Timeout, 10 * MSS);
        let raised = m.ssthresh();
        t += Duration::from_millis(1);
        m.on_ack(t, &ack(2 * MSS, false));
        assert!(m.ssthresh() > raised, "{} after {}", m.ssthresh(), raised);
        assert_eq!(Some(m.ssthresh()), m.ssthresh_from_abe());
    }

    /// cwnd = 10 segments, ssthresh = 8, RTT_min = 100 ms: expected rate (10 000 - 1500) /
    /// 0.1 s = 85 000 B/s, initial expected rate 80 000 B/s, boundary 0.6 * 85 000 + 0.4 *
    /// 80 000 = 83 000 B/s.
    fn ncd_input(abe: f64) -> NcdInput {
        NcdInput {
            in_congestion_avoidance: true,
            abe: Some(abe),
            cwnd: 10 * MSS,
            ssthresh: 8 * MSS,
            mss: MSS,
            srtt: Duration::from_millis(100),
            rtt_min: Some(Duration::from_millis(100)),
        }
    }

    #[test]
    fn the_congestion_boundary_mixes_the_expected_and_the_initial_expected_rate() {
        let ncd = NonCongestionDetector::new(0.6, 1.5, 2);
        let b = ncd.congestion_boundary(10 * MSS, 8 * MSS, MSS, Duration::from_millis(100));
        assert!(b.is_some_and(|b| (b - 83_000.0).abs() < 1e-9), "{b:?}");
        assert_eq!(ncd.congestion_boundary(MSS, MSS, MSS, Duration::ZERO), None);
    }

    #[test]
    fn the_no_congestion_counter_follows_abe_around_the_boundary_and_restarts_fast_probing() {
        let mut ncd = NonCongestionDetector::new(0.6, 1.5, 2);
        let mut t = Instant::ZERO;
        let mut step = |ncd: &mut NonCongestionDetector, abe: f64| {
            let restart = ncd.on_ack(t, &ncd_input(abe));
            t += Duration::from_millis(10);
            (restart, ncd.counter())
        };
        // The first 2 RTTs (200 ms) of congestion avoidance do not count.
        for _ in 0..20 {
            assert_eq!(step(&mut ncd, 90_000.0), (false, 0));
        }
        // Above the boundary: +1; below: -1; never below zero.
        let sequence = [
            (90_000.0, 1),
            (90_000.0, 2),
            (70_000.0, 1),
            (84_000.0, 2),
            (80_000.0, 1),
            (80_000.0, 0),
            (80_000.0, 0),
        ];
        for (abe, counter) in sequence {
            assert_eq!(step(&mut ncd, abe), (false, counter), "ABE {abe}");
        }
        // Ten ACKs above reach cwnd (10 segments) without passing it; the eleventh passes it.
        for counter in 1..=10 {
            assert_eq!(step(&mut ncd, 90_000.0), (false, counter));
        }
        assert_eq!(step(&mut ncd, 90_000.0), (true, 0));
    }

    #[test]
    fn leaving_congestion_avoidance_clears_the_counter_and_the_skip_starts_again() {
        let mut ncd = NonCongestionDetector::new(0.6, 1.5, 2);
        ncd.on_ack(Instant::ZERO, &ncd_input(90_000.0));
        ncd.on_ack(Instant::from_millis(200), &ncd_input(90_000.0));
        ncd.on_ack(Instant::from_millis(210), &ncd_input(90_000.0));
        assert_eq!(ncd.counter(), 2);
        let outside = NcdInput {
            in_congestion_avoidance: false,
            ..ncd_input(90_000.0)
        };
        ncd.on_ack(Instant::from_millis(220), &outside);
        assert_eq!(ncd.counter(), 0);
        // Back in congestion avoidance at 230 ms: nothing counts before 430 ms.
        ncd.on_ack(Instant::from_millis(230), &ncd_input(90_000.0));
        ncd.on_ack(Instant::from_millis(429), &ncd_input(90_000.0));
        assert_eq!(ncd.counter(), 0);
        ncd.on_ack(Instant::from_millis(430), &ncd_input(90_000.0));
        assert_eq!(ncd.counter(), 1);
    }

    #[test]
    fn persistent_spare_bandwidth_in_congestion_avoidance_restarts_fast_probing() {
        let mut m = mccp(10 * MSS, u64::MAX);
        let mut t = set_abe_to_one_megabyte_per_second(&mut m);
        m.set_cwnd(60 * MSS);
        m.on_congestion(t, CongestionKind::DupAcks, 60 * MSS);
        assert_eq!((m.ssthresh(), m.cwnd()), (40 * MSS, 40 * MSS));
        // The path now delivers 2000 B per ms, about twice what the window expects: ABE stays
        // above the boundary, so after the first 2 RTTs (80 ms) every ACK adds one.
        let ca_start = t + Duration::from_millis(1);
        let mut previous = m.trace();
        loop {
            t += Duration::from_millis(1);
            m.on_ack(t, &ack(2 * MSS, false));
            let now = m.trace();
            if now.fast_probing {
                // Restarted on the ACK that took the counter past cwnd in segments.
                assert!((previous.no_congestion_counter + 1) * MSS > now.cwnd);
                assert_eq!(now.no_congestion_counter, 0);
                break;
            }
            let elapsed = t.saturating_since(ca_start);
            let counted = if elapsed < Duration::from_millis(80) {
                0
            } else {
                previous.no_congestion_counter + 1
            };
            assert_eq!(now.no_congestion_counter, counted, "at {elapsed}");
            assert!(now.congestion_boundary < now.abe_filtered || counted == 0);
            assert_eq!(now.ssthresh, 40 * MSS);
            previous = now;
        }
        // Fast probing raises ssthresh on the next ACK.
        t += Duration::from_millis(1);
        m.on_ack(t, &ack(2 * MSS, false));
        assert!(m.ssthresh() > 40 * MSS);
        assert_eq!(Some(m.ssthresh()), m.ssthresh_from_abe());
    }

    #[test]
    fn without_ncd_congestion_avoidance_never_counts_nor_restarts_fast_probing() {
        let config = MccpConfig {
            ncd: false,
            ..MccpConfig::default()
        };
        let mut m = Mccp::new(MSS, 10 * MSS, u64::MAX, config).expect("valid");
        let mut t = set_abe_to_one_megabyte_per_second(&mut m);
        m.set_cwnd(60 * MSS);
        m.on_congestion(t, CongestionKind::DupAcks, 60 * MSS);
        assert_eq!((m.ssthresh(), m.cwnd()), (40 * MSS, 40 * MSS));
        // The ACK stream that restarts fast probing with NCD (the test above) within 200 ms:
        // 2000 B per ms for 1 s. Growth stays NewReno's congestion avoidance, 2000 B per ACK
        // of 40 000 B of window: +1000 B per 20 ACKs (a little less as cwnd grows).
        for _ in 0..1000 {
            t += Duration::from_millis(1);
            m.on_ack(t, &ack(2 * MSS, false));
            let tr = m.trace();
            assert!(!tr.fast_probing);
            assert_eq!((tr.no_congestion_counter, tr.congestion_boundary), (0, 0.0));
            assert_eq!(tr.ssthresh, 40 * MSS);
        }
        assert!(m.cwnd() > 40 * MSS && m.cwnd() < 100 * MSS, "{}", m.cwnd());
        // A timeout still restarts fast probing, which raises ssthresh to ABE * RTT_min.
        m.on_congestion(t, CongestionKind::Timeout, 10 * MSS);
        assert!(m.fast_probing());
        t += Duration::from_millis(1);
        m.on_ack(t, &ack(2 * MSS, false));
        assert_eq!(Some(m.ssthresh()), m.ssthresh_from_abe());
        assert!(m.ssthresh() > 40 * MSS);
    }

    #[test]
    fn the_trace_shows_every_estimator_variable_after_each_ack() {
        let mut m = mccp(10 * MSS, u64::MAX);
        let before = m.trace();
        assert_eq!((before.abe_filtered, before.fast_probing), (0.0, true));
        set_abe_to_one_megabyte_per_second(&mut m);
        let t = m.trace();
        let a = m.abe().trace();
        assert_eq!((t.cwnd, t.ssthresh), (10 * MSS, u64::MAX));
        assert_eq!((t.abe_sample, t.abe_filtered), (1e6, 1e6));
        assert_eq!(
            (t.dt_k, t.t_k),
            (Duration::from_millis(1), Duration::from_millis(1))
        );
        // A steady stream: no instability, tau_k = RTT.
        assert_eq!(
            (t.u_k, t.u_max, t.tau_k),
            (0.0, 0.0, Duration::from_millis(40))
        );
        assert_eq!(t.alpha_k, a.alpha_k);
        assert_eq!(t.no_congestion_counter, 0);
    }

    #[test]
    fn odd_input_does_not_panic() {
        let mut m = mccp(0, 0);
        let unknown = AckInfo {
            srtt: Duration::ZERO,
            min_rtt: Duration::MAX,
            ..ack(MSS, false)
        };
        for _ in 0..3 {
            m.on_ack(Instant::ZERO, &unknown);
        }
        m.on_ack(Instant::ZERO, &ack(0, false));
        m.on_ack(
            Instant::from_millis(1),
            &AckInfo {
                srtt: Duration::ZERO,
                ..ack(u64::MAX, false)
            },
        );
        m.on_ack(
            Instant::ZERO,
            &AckInfo {
                min_rtt: Duration::ZERO,
                ..ack(MSS, false)
            },
        );
        m.on_congestion(Instant::ZERO, CongestionKind::Timeout, 0);
        m.on_ack(Instant::MAX, &ack(MSS, false));
        m.on_congestion(Instant::MAX, CongestionKind::DupAcks, u64::MAX);
        assert!(m.cwnd() >= MSS && m.ssthresh() >= 2 * MSS);
    }

    /// One RTT of `window` one-segment ACKs at 100 ms RTT: spaced `spacing` apart from `start`,
    /// the rest of the RTT a gap. Returns the start of the next RTT.
    fn one_rtt_of_acks(m: &mut Mccp, start: Instant, window: u64, spacing: Duration) -> Instant {
        let rtt = Duration::from_millis(100);
        let info = AckInfo {
            bytes_acked: MSS,
            rtt: Some(rtt),
            srtt: rtt,
            min_rtt: rtt,
            bytes_in_flight: window * MSS,
            in_recovery: false,
            ece: false,
        };
        for i in 0..window {
            m.on_ack(start + spacing * i, &info);
        }
        start + rtt
    }

    #[test]
    fn fast_probing_leads_cwnd_only_when_the_acks_come_at_a_bottleneck_rate_above_the_sending_rate()
    {
        // Congestion avoidance at 20 segments (1000 B) of window, 100 ms RTT: the sending rate
        // is 200 kB/s. A sender that paces at that rate gets its ACKs 5 ms apart (Linux paces
        // at 120% of cwnd / srtt in congestion avoidance); one that sends the window as a burst
        // gets them one bottleneck time apart, 0.25 ms at 4 MB/s (the paper's ns-2 sender, the
        // simulator's). Fast probing raises ssthresh to ABE * RTT_min.
        let (mut paced, mut burst) = (mccp(20 * MSS, 20 * MSS), mccp(20 * MSS, 20 * MSS));
        let (mut t_paced, mut t_burst) = (Instant::ZERO, Instant::ZERO);
        for _ in 0..10 {
            let w = paced.cwnd() / MSS;
            t_paced = one_rtt_of_acks(&mut paced, t_paced, w, Duration::from_millis(100) / w);
            let w = burst.cwnd() / MSS;
            t_burst = one_rtt_of_acks(&mut burst, t_burst, w, Duration::from_micros(250));
        }
        // Paced: every sample is the sending rate of its round trip, cwnd / RTT, so ABE is at
        // most the current one and ABE * RTT_min at most the window: ssthresh follows cwnd and
        // never leads it.
        let abe = paced.abe().estimate().expect("samples");
        let sending_rate = paced.cwnd() as f64 / 0.1;
        assert!(
            abe <= sending_rate && abe > 0.8 * sending_rate,
            "paced ABE {abe} B/s against a sending rate of {sending_rate} B/s"
        );
        assert!(paced.ssthresh() <= paced.cwnd(), "{:?}", paced.trace());
        // Bursts: the samples inside a burst read 4 MB/s, so ssthresh jumps to the
        // bottleneck's 400 segments (4 MB/s * 100 ms) and slow start resumes towards it, as the
        // simulator's MCCP does on the start-up path; paced, the window grew by one segment per
        // round trip.
        assert!(
            burst.ssthresh() >= 360 * MSS && burst.cwnd() > 10 * paced.cwnd(),
            "burst: ssthresh {} and cwnd {} B, paced cwnd {} B: {:?}",
            burst.ssthresh(),
            burst.cwnd(),
            paced.cwnd(),
            burst.trace()
        );
        // About one segment per round trip: 20 to 29-30 segments in ten (each round trip acks
        // the whole number of segments of the window it began with).
        assert!(
            (29 * MSS..=30 * MSS).contains(&paced.cwnd()),
            "{}",
            paced.cwnd()
        );
    }
}
