//! MCCP's adaptive available-bandwidth estimator (ABE): a time-varying-coefficient EWMA of
//! rate samples taken from the ACK stream, with an adaptive sampling interval and a filter
//! time constant that follows the network's instability (MCCP paper, eqs. (1)-(6)).
//!
//! Units: rates in bytes per second (`f64`), windows in bytes, times in [`Duration`].
//!
//! Per ACK k arriving at `t_k`, `dt_k = t_k - t_{k-1}`:
//! 1. the sampling interval `T_k` (eqs. (2)-(3)), between the ACK inter-arrival time and the RTT;
//! 2. once at least `T_k` has passed since the arrival that closed the last sample, the sample
//!    `s_k` = bytes reported delivered by the ACKs since then, over the time since then
//!    (eq. (4)); until then the ACK only adds its bytes;
//! 3. the instability `U_k = beta U_{k-1} + (1 - beta) |s_k - s_{k-1}|` (eq. (5));
//! 4. the time constant `tau_k = RTT + N RTT U_k / U_max` (eq. (6));
//! 5. `alpha_k = (2 tau_k - Dt_k) / (2 tau_k + Dt_k)`, with `Dt_k` the time the sample covers
//!    (`dt_k` when every ACK closes a sample), and the estimate
//!    `S^_k = alpha_k S^_{k-1} + (1 - alpha_k) s_k` (eq. (1)).
//!
//! "RTT" is the smoothed RTT ("obtained from the smoothed RTT estimated in TCP"), RTT_min the
//! smallest RTT seen.
//!
//! Eq. (4) sums the bytes of the ACKs "with t_j > t_k - T_k": a sample over the last T_k. Taken
//! at every ACK, such windows overlap, and eq. (1) must then not weight each of them by the
//! inter-arrival time before it: an ACK's bytes were delivered over the gap before it, not over
//! T_k, and when the window arrives in one burst per RTT the long gap before a burst would carry
//! the sample of the burst's first ACK alone. The estimator therefore takes the sum of eq. (4)
//! over consecutive, non-overlapping intervals of at least T_k, each ending at an ACK, and
//! advances eq. (1) by the length of each (see [`Abe`]). With T_k = T_min this is exactly the
//! per-ACK sample `d_k / dt_k` with `alpha_k` from `dt_k`.

use super::westwood::rate_over;
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::Bytes;

/// The largest instability window [`AbeConfig::instability_window`] accepts.
pub const MAX_INSTABILITY_WINDOW: usize = 32;

/// The estimator's parameters, with the paper's values as defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbeConfig {
    /// beta of eq. (5), the gain of the instability filter, in [0, 1). Paper: 0.6.
    pub instability_gain: f64,
    /// N of eq. (6): tau_k ranges from RTT to (1 + N) RTT. Paper: 10.
    pub tau_factor: f64,
    /// How many recent instability values U_max is the largest of (eq. (6)), 1 to
    /// [`MAX_INSTABILITY_WINDOW`]. Paper: "the ten most recent observations".
    pub instability_window: usize,
    /// Choose T_k by eqs. (2)-(3). `false` (the default) fixes T_k to the ACK inter-arrival
    /// time T_min, as the paper ran its experiments: "The sampling time interval T_1 is fixed to
    /// the interval of the last 2 ACKs in this set of experiments" (end of the section on
    /// eqs. (5)-(6), just before the evaluation of Fig. 2). Like beta = 0.6 and N = 10, which
    /// the paper also gives as "set ... in our experiments", the experiments' setting is the
    /// default.
    ///
    /// What the choice changes: with T_k = T_min every ACK is a sample `d_k / dt_k`, so ACKs
    /// that come back-to-back from the bottleneck read the rate the path allows, the gap before
    /// a burst is one outlying sample that eq. (5) sees as instability (tau_k = (1 + N) RTT,
    /// little weight), and ABE * RTT_min can exceed cwnd on an idle path: fast probing then
    /// raises ssthresh above cwnd and grows exponentially (the paper's Figs. 3b and 4b). With
    /// eqs. (2)-(3) a window growing faster than the estimate (all of slow start, where the
    /// estimate trails cwnd / RTT_min by at least the factor the window grew in one RTT) counts
    /// as congestion, T_k stays near one RTT, each sample is the average rate of the last
    /// round trip and ABE * RTT_min never exceeds cwnd: fast probing and NCD restarts then
    /// only ever grow cwnd linearly.
    pub adaptive_sampling: bool,
}

impl Default for AbeConfig {
    fn default() -> Self {
        AbeConfig {
            instability_gain: 0.6,
            tau_factor: 10.0,
            instability_window: 10,
            adaptive_sampling: false,
        }
    }
}

/// The EWMA coefficient of eq. (1): `alpha_k = (2 tau_k - dt_k) / (2 tau_k + dt_k)`.
///
/// This is the bilinear (Tustin) discretisation of a first-order low-pass filter with time
/// constant `tau_k`. Two cases the paper does not cover: `dt_k = 0` gives 1 (no time passed, the
/// estimate stays); `dt_k > 2 tau_k` would make alpha negative and the estimate overshoot the
/// sample, so alpha is clamped at 0 (after a gap that long the old estimate carries no weight).
pub fn alpha(tau: Duration, dt: Duration) -> f64 {
    let two_tau = 2.0 * tau.as_nanos() as f64;
    let dt = dt.as_nanos() as f64;
    let den = two_tau + dt;
    if den <= 0.0 {
        return 1.0;
    }
    ((two_tau - dt) / den).max(0.0)
}

/// The sampling interval T_k of eqs. (2)-(3), from the ACK inter-arrival time `dt`
/// (T_min), the smoothed `rtt` (T_max), the smallest RTT, the congestion window in bytes and
/// the previous estimate `S^_{k-1}` in bytes per second.
///
/// "When S^_{k-1} * RTT_min >= cwin, indicating a path without congestion, T_k is set to
/// T_min. Otherwise, T_k = RTT * (cwin - S^_{k-1} * RTT_min) / cwin" (eq. (2)). Eq. (2) never
/// exceeds RTT; the result is raised to at least `dt`, since "the sampling interval ranges
/// between T_min and T_max" and a shorter window would divide the bytes of the ACK at `t_k`
/// by less than the time over which they arrived. Without a previous estimate (the first
/// sample) T_k is T_min.
pub fn sampling_interval(
    dt: Duration,
    rtt: Duration,
    rtt_min: Duration,
    cwnd: Bytes,
    previous: Option<f64>,
) -> Duration {
    let Some(previous) = previous else {
        return dt;
    };
    let cwnd = cwnd as f64;
    // S^_{k-1} * RTT_min, in bytes: what the network allowed over one minimum RTT.
    let allowed = previous * rtt_min.as_nanos() as f64 / NANOS_PER_SEC as f64;
    if cwnd <= 0.0 || allowed >= cwnd {
        return dt;
    }
    let fraction = (cwnd - allowed) / cwnd;
    // The cast saturates; `fraction` is in (0, 1].
    let t = Duration::from_nanos((rtt.as_nanos() as f64 * fraction).round() as u64);
    t.max(dt)
}

/// The filter time constant of eq. (6): `tau_k = RTT + N * RTT * U_k / U_max`, with `rtt` the
/// smoothed RTT; `U_max = 0` (no instability seen) gives `tau_k = RTT`.
pub fn tau(rtt: Duration, u: f64, u_max: f64, n: f64) -> Duration {
    let ratio = if u_max > 0.0 {
        (u / u_max).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let nanos = rtt.as_nanos() as f64 * (1.0 + n.max(0.0) * ratio);
    // The cast saturates.
    Duration::from_nanos(nanos.round() as u64)
}

/// The instability filter of eq. (5), `U_k = beta U_{k-1} + (1 - beta) |s_k - s_{k-1}|`, and
/// the largest of its recent values (U_max of eq. (6)). Values in bytes per second.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InstabilityFilter {
    /// beta of eq. (5).
    gain: f64,
    /// U_k.
    u: f64,
    /// The most recent U values, a ring of `window` slots.
    recent: [f64; MAX_INSTABILITY_WINDOW],
    /// How many U values U_max spans.
    window: usize,
    /// How many slots of `recent` hold values.
    len: usize,
    /// The slot the next U value goes to.
    next: usize,
}

impl InstabilityFilter {
    /// A filter with gain `gain` (beta) whose U_max spans the last `window` values (clamped
    /// to 1..=[`MAX_INSTABILITY_WINDOW`]). U starts at zero.
    pub fn new(gain: f64, window: usize) -> InstabilityFilter {
        InstabilityFilter {
            gain,
            u: 0.0,
            recent: [0.0; MAX_INSTABILITY_WINDOW],
            window: window.clamp(1, MAX_INSTABILITY_WINDOW),
            len: 0,
            next: 0,
        }
    }

    /// Folds in the rate sample `sample` given the one before it (`None` for the first sample,
    /// which shows no change yet) and returns U_k.
    pub fn update(&mut self, sample: f64, previous: Option<f64>) -> f64 {
        let change = previous.map_or(0.0, |p| (sample - p).abs());
        self.u = self.gain * self.u + (1.0 - self.gain) * change;
        if !self.u.is_normal() {
            // On a steady stream U decays geometrically into subnormal numbers and sticks at
            // the smallest one (0.6 * 5e-324 rounds back to 5e-324); ten equal values would
            // then give U_k / U_max = 1 and tau_k = (1 + N) RTT for a perfectly stable path.
            self.u = 0.0;
        }
        self.recent[self.next] = self.u;
        self.next = (self.next + 1) % self.window;
        self.len = (self.len + 1).min(self.window);
        self.u
    }

    /// U_k, in bytes per second.
    pub fn u(&self) -> f64 {
        self.u
    }

    /// The largest U of the last `window` values (zero before any).
    pub fn u_max(&self) -> f64 {
        self.recent[..self.len].iter().copied().fold(0.0, f64::max)
    }
}

/// The estimator's variables after an ACK, for traces and plots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbeTrace {
    /// The ACK arrival time t_k of the last update.
    pub at: Instant,
    /// The ABE sample s_k of eq. (4), in bytes per second (0 before the first sample).
    pub sample: f64,
    /// The filtered estimate S^_k of eq. (1), in bytes per second (0 before the first sample).
    pub estimate: f64,
    /// The ACK inter-arrival time dt_k.
    pub dt_k: Duration,
    /// The sampling interval T_k of eqs. (2)-(4).
    pub t_k: Duration,
    /// The time the sample covers (T_k rounded up to an ACK arrival), by which eq. (1)
    /// advanced the filter.
    pub span_k: Duration,
    /// The filter time constant tau_k of eq. (6).
    pub tau_k: Duration,
    /// The coefficient alpha_k of eq. (1).
    pub alpha_k: f64,
    /// The instability U_k of eq. (5), in bytes per second.
    pub u_k: f64,
    /// The largest instability of the recent window, U_max of eq. (6), in bytes per second.
    pub u_max: f64,
}

impl Default for AbeTrace {
    fn default() -> Self {
        AbeTrace {
            at: Instant::ZERO,
            sample: 0.0,
            estimate: 0.0,
            dt_k: Duration::ZERO,
            t_k: Duration::ZERO,
            span_k: Duration::ZERO,
            tau_k: Duration::ZERO,
            alpha_k: 1.0,
            u_k: 0.0,
            u_max: 0.0,
        }
    }
}

/// What the estimator carries from one ACK arrival to the next; copied so that the processing
/// of an arrival can be redone when another ACK joins it.
#[derive(Clone, Copy, Debug)]
struct FilterState {
    /// S^_{k}, bytes per second; `None` before the first sample.
    estimate: Option<f64>,
    /// s_k, bytes per second; `None` before the first sample.
    sample: Option<f64>,
    /// U of eq. (5) and its recent values.
    instability: InstabilityFilter,
    /// The variables of the last update.
    trace: AbeTrace,
    /// Where the next sample's interval begins: the arrival that closed the last sample (or the
    /// first arrival). `None` before any ACK.
    since: Option<Instant>,
    /// Bytes reported by the arrivals after `since`, not yet in a sample.
    pending: Bytes,
}

/// What the sender knows when an ACK arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbeInput {
    /// Bytes this ACK reports delivered (see `westwood::DeliveredBytes`).
    pub delivered: Bytes,
    /// The congestion window before this ACK's growth, in bytes ("cwin").
    pub cwnd: Bytes,
    /// The smoothed RTT ("RTT" of eqs. (2) and (6)).
    pub srtt: Duration,
    /// The smallest RTT seen ("RTT_min"); `None` before the first RTT sample.
    pub rtt_min: Option<Duration>,
}

/// The adaptive available-bandwidth estimator.
///
/// Samples tile the time axis. The sample of eq. (4) is closed at the first ACK arrival at
/// least T_k after the arrival that closed the one before; it is the bytes reported by the
/// arrivals in between (the one that closes it included) over the time it spans, and eq. (1)
/// advances the filter by that same span. So every delivered byte is counted in exactly one
/// sample and every instant is weighted once:
///
/// - with T_k = T_min (the ACK inter-arrival time) every ACK closes a sample, `d_k / dt_k`,
///   and the filter advances by `dt_k`: the paper's per-ACK estimator unchanged;
/// - with a longer T_k (eqs. (2)-(3)) a sample spans T_k rounded up to the next arrival, and
///   the filter advances once by that span. Counting the bytes of the ACKs inside a window
///   that slides with every arrival instead, and advancing by `dt_k` at each, has two biases:
///   the window counts the closing ACK's bytes, which were delivered over the gap before it,
///   as if delivered within T_k (high by one ACK over T_k on a full link), and when the window
///   comes in one burst per RTT the idle gap before the burst is weighted by the sample of the
///   burst's first ACK alone (low, by a factor of several, in slow start).
///
/// ACKs that arrive at the same instant (a burst handed over at once) form one arrival: the
/// second and later ones add their bytes to it and its processing is redone, so that `dt_k` is
/// never zero and no delivered byte is left out.
#[derive(Clone, Debug)]
pub struct Abe {
    /// Parameters.
    config: AbeConfig,
    /// t_{k-1}: the arrival before the newest.
    previous_arrival: Option<Instant>,
    /// t_k: the newest arrival.
    last_arrival: Option<Instant>,
    /// Bytes reported by the ACKs of the newest arrival.
    last_bytes: Bytes,
    /// The estimator now.
    state: FilterState,
    /// The estimator before the newest arrival was processed.
    before_last: FilterState,
}

impl Abe {
    /// An estimator with no samples.
    pub fn new(config: AbeConfig) -> Abe {
        let state = FilterState {
            estimate: None,
            sample: None,
            instability: InstabilityFilter::new(config.instability_gain, config.instability_window),
            trace: AbeTrace::default(),
            since: None,
            pending: 0,
        };
        Abe {
            config,
            previous_arrival: None,
            last_arrival: None,
            last_bytes: 0,
            state,
            before_last: state,
        }
    }

    /// The filtered estimate S^_k, in bytes per second; `None` before the first sample.
    pub fn estimate(&self) -> Option<f64> {
        self.state.estimate
    }

    /// The last sample s_k, in bytes per second; `None` before the first sample.
    pub fn sample(&self) -> Option<f64> {
        self.state.sample
    }

    /// The variables of the last update.
    pub fn trace(&self) -> AbeTrace {
        self.state.trace
    }

    /// An ACK arrived at `now`. The first ACK only marks a time (what it reports was delivered
    /// over an unknown time); samples need the RTT (eqs. (2) and (6)), so until it is known the
    /// bytes wait for the first sample. Returns the estimate after it.
    pub fn on_ack(&mut self, now: Instant, input: &AbeInput) -> Option<f64> {
        match self.last_arrival {
            Some(last) if now <= last => {
                // Same instant (or a clock that went back): one arrival with the bytes of both.
                self.last_bytes = self.last_bytes.saturating_add(input.delivered);
                self.state = self.before_last;
                self.arrive(last, input);
            }
            _ => {
                self.previous_arrival = self.last_arrival;
                self.last_arrival = Some(now);
                self.last_bytes = input.delivered;
                self.before_last = self.state;
                self.arrive(now, input);
            }
        }
        self.state.estimate
    }

    /// Processes the newest arrival, at `now` with `last_bytes`, from the state before it.
    fn arrive(&mut self, now: Instant, input: &AbeInput) {
        let Some(since) = self.state.since else {
            // The first arrival opens the first interval.
            self.state.since = Some(now);
            return;
        };
        self.state.pending = self.state.pending.saturating_add(self.last_bytes);
        let (Some(previous), Some(rtt_min)) = (self.previous_arrival, input.rtt_min) else {
            return;
        };
        let dt = now.saturating_since(previous);
        // Eqs. (2)-(3).
        let t_k = if self.config.adaptive_sampling {
            sampling_interval(dt, input.srtt, rtt_min, input.cwnd, self.state.estimate)
        } else {
            dt
        };
        let span = now.saturating_since(since);
        if span < t_k {
            // The sample's interval is not over yet.
            return;
        }
        self.update(now, dt, t_k, span, input.srtt);
    }

    /// Steps 2-5 of the module documentation: closes the sample spanning `span` up to `now`
    /// (T_k = `t_k`, `dt` since the previous arrival) and folds it into the estimate.
    fn update(
        &mut self,
        now: Instant,
        dt: Duration,
        t_k: Duration,
        span: Duration,
        srtt: Duration,
    ) {
        // Eq. (4): the bytes of the arrivals in the span, over the span. A zero span (the
        // first sample of a zero srtt after same-instant arrivals) keeps the old state.
        let Some(sample) = rate_over(self.state.pending, span) else {
            return;
        };
        // Eq. (5).
        let u_k = self.state.instability.update(sample, self.state.sample);
        let u_max = self.state.instability.u_max();
        // Eq. (6).
        let tau_k = tau(srtt, u_k, u_max, self.config.tau_factor);
        // Eq. (1), written S^_k = s_k + alpha_k (S^_{k-1} - s_k): the same value, and exact
        // when the sample equals the estimate. alpha_k advances the filter by the time the
        // sample covers (dt_k when every ACK closes a sample). The first sample initialises it.
        let alpha_k = alpha(tau_k, span);
        let estimate = match self.state.estimate {
            None => sample,
            Some(previous) => sample + alpha_k * (previous - sample),
        };
        self.state.estimate = Some(estimate);
        self.state.sample = Some(sample);
        self.state.since = Some(now);
        self.state.pending = 0;
        self.state.trace = AbeTrace {
            at: now,
            sample,
            estimate,
            dt_k: dt,
            t_k,
            span_k: span,
            tau_k,
            alpha_k,
            u_k,
            u_max,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1000;

    /// An ACK with srtt = RTT_min = 100 ms.
    fn input(delivered: Bytes, cwnd: Bytes) -> AbeInput {
        AbeInput {
            delivered,
            cwnd,
            srtt: Duration::from_millis(100),
            rtt_min: Some(Duration::from_millis(100)),
        }
    }

    /// Feeds `n` ACKs of `bytes` every `spacing` from `start`; returns the time of the last.
    fn stream(
        abe: &mut Abe,
        start: Instant,
        n: u64,
        spacing: Duration,
        bytes: Bytes,
        cwnd: Bytes,
    ) -> Instant {
        let mut t = start;
        for i in 0..n {
            t = start + spacing * i;
            abe.on_ack(t, &input(bytes, cwnd));
        }
        t
    }

    /// The estimator with T_k chosen by eqs. (2)-(3).
    fn adaptive() -> AbeConfig {
        AbeConfig {
            adaptive_sampling: true,
            ..AbeConfig::default()
        }
    }

    fn close(a: f64, b: f64, tolerance: f64) -> bool {
        (a - b).abs() <= tolerance * b.abs().max(1.0)
    }

    /// Feeds ACKs of MSS bytes for `length`, spaced `mean * (1 - jitter)` and
    /// `mean * (1 + jitter)` alternately (mean rate MSS / mean).
    fn alternating(abe: &mut Abe, start: Instant, length: Duration, mean: Duration, jitter: f64) {
        let short = Duration::from_nanos((mean.as_nanos() as f64 * (1.0 - jitter)).round() as u64);
        let long = mean * 2 - short;
        let mut t = start;
        let mut i = 0u64;
        while t < start + length {
            t += if i.is_multiple_of(2) { short } else { long };
            abe.on_ack(t, &input(MSS, 10 * MSS));
            i += 1;
        }
    }

    #[test]
    fn any_steady_ack_jitter_holds_tau_k_at_its_largest_value() {
        // Eq. (6) divides U_k by U_max, the largest of the last ten: the ratio does not depend
        // on how large the instability is against the rate. ACKs of 1000 B alternately 5%
        // early and late (190 us, 210 us: samples 5 263 157.9 and 4 761 904.8 B/s) change by
        // the same amount every time; U_k = c (1 - 0.6^k) rises towards it, so U_k is the
        // largest of the ten and tau_k = (1 + N) RTT = 1.1 s at every ACK. An alternation of
        // 0.5% gives the same tau_k; a jitter-free stream gives U_k = 0 and tau_k = RTT.
        let rtt = Duration::from_millis(100);
        for jitter in [0.05, 0.005] {
            let mut abe = Abe::new(AbeConfig::default());
            alternating(
                &mut abe,
                Instant::ZERO,
                Duration::from_millis(100),
                Duration::from_micros(200),
                jitter,
            );
            let t = abe.trace();
            assert_eq!(t.u_k, t.u_max, "jitter {jitter}");
            assert_eq!(t.tau_k, rtt * 11, "jitter {jitter}");
        }
        let mut abe = Abe::new(AbeConfig::default());
        alternating(
            &mut abe,
            Instant::ZERO,
            Duration::from_millis(100),
            Duration::from_micros(200),
            0.0,
        );
        assert_eq!((abe.trace().u_k, abe.trace().tau_k), (0.0, rtt));
    }

    #[test]
    fn with_ack_jitter_the_estimate_follows_a_step_eleven_times_slower() {
        // The delivery rate steps from 2.5e6 to 5e6 B/s (ACKs of 1000 B every 400 us, then
        // every 200 us). Eq. (1) with a constant tau is a first-order low-pass filter: after
        // the step, S^(t) = 5e6 - 2.5e6 exp(-t / tau). Jitter-free, tau_k = RTT = 100 ms
        // (after the few ACKs at the step itself) and 500 ms later the estimate is within
        // 1% of the new rate; with the ACKs alternately 5% early and late it is
        // 5e6 - 2.5e6 exp(-0.5 / 1.1) = 3.41e6 B/s, a third of the way.
        for (jitter, tau_s) in [(0.0, 0.1), (0.05, 1.1)] {
            let mut abe = Abe::new(AbeConfig::default());
            let before = Duration::from_secs(6);
            alternating(
                &mut abe,
                Instant::ZERO,
                before,
                Duration::from_micros(400),
                jitter,
            );
            let settled = abe.estimate().expect("samples");
            assert!(close(settled, 2.5e6, 0.01), "{settled} before the step");
            let start = abe.trace().at;
            alternating(
                &mut abe,
                start,
                Duration::from_millis(500),
                Duration::from_micros(200),
                jitter,
            );
            let expected = 5e6 - 2.5e6 * (-0.5f64 / tau_s).exp();
            let got = abe.estimate().expect("samples");
            assert!(
                close(got, expected, 0.02),
                "jitter {jitter}: {got}, expected {expected}"
            );
        }
    }

    #[test]
    fn alpha_k_is_two_tau_minus_dt_over_two_tau_plus_dt() {
        // (200 - 20) / (200 + 20) = 9/11.
        let a = alpha(Duration::from_millis(100), Duration::from_millis(20));
        assert!(close(a, 9.0 / 11.0, 1e-15), "{a}");
        // (2 * 229.6 - 1.2) / (2 * 229.6 + 1.2) = 458 / 460.4.
        let a = alpha(Duration::from_micros(229_600), Duration::from_micros(1_200));
        assert!(close(a, 458.0 / 460.4, 1e-15), "{a}");
    }

    #[test]
    fn alpha_k_is_one_without_elapsed_time_and_zero_after_a_gap_longer_than_two_tau() {
        assert_eq!(alpha(Duration::from_millis(100), Duration::ZERO), 1.0);
        assert_eq!(alpha(Duration::ZERO, Duration::ZERO), 1.0);
        assert_eq!(
            alpha(Duration::from_millis(100), Duration::from_millis(200)),
            0.0
        );
        assert_eq!(
            alpha(Duration::from_millis(100), Duration::from_millis(500)),
            0.0
        );
    }

    #[test]
    fn t_k_is_the_ack_inter_arrival_time_on_a_path_without_congestion() {
        let dt = Duration::from_micros(1_200);
        let rtt = Duration::from_millis(120);
        let rtt_min = Duration::from_millis(100);
        // S^ * RTT_min = 300 000 B/s * 0.1 s = 30 000 B >= cwin = 20 000 B.
        assert_eq!(
            sampling_interval(dt, rtt, rtt_min, 20_000, Some(300_000.0)),
            dt
        );
        // Equality counts as no congestion too.
        assert_eq!(
            sampling_interval(dt, rtt, rtt_min, 20_000, Some(200_000.0)),
            dt
        );
        // No estimate yet: the first sample is taken over the last ACK interval.
        assert_eq!(sampling_interval(dt, rtt, rtt_min, 20_000, None), dt);
    }

    #[test]
    fn t_k_follows_eq_2_when_cwnd_exceeds_abe_times_rtt_min() {
        let dt = Duration::from_micros(1_200);
        let rtt = Duration::from_millis(120);
        let rtt_min = Duration::from_millis(100);
        // 120 ms * (20 000 - 100 000 * 0.1) / 20 000 = 60 ms.
        let t = sampling_interval(dt, rtt, rtt_min, 20_000, Some(100_000.0));
        assert_eq!(t, Duration::from_millis(60));
        // 120 ms * (20 000 - 150 000 * 0.1) / 20 000 = 30 ms.
        let t = sampling_interval(dt, rtt, rtt_min, 20_000, Some(150_000.0));
        assert_eq!(t, Duration::from_millis(30));
        // No bandwidth at all: T_max = RTT.
        assert_eq!(sampling_interval(dt, rtt, rtt_min, 20_000, Some(0.0)), rtt);
    }

    #[test]
    fn t_k_is_never_shorter_than_the_ack_inter_arrival_time() {
        // Eq. (2) gives 120 ms * 1000 / 20 000 = 6 ms, below the 10 ms since the last ACK.
        let dt = Duration::from_millis(10);
        let t = sampling_interval(
            dt,
            Duration::from_millis(120),
            Duration::from_millis(100),
            20_000,
            Some(190_000.0),
        );
        assert_eq!(t, dt);
    }

    /// Samples 1, 2, 2, 1, 1, 3, 3, ... MB/s with beta = 0.6, by hand:
    /// U = 0, 0.4, 0.24, 0.544, 0.3264, 0.99584, 0.597504, 0.3585024, 0.21510144, 0.129060864
    /// (MB/s); U_max over these ten is U_6 = 995 840 B/s.
    #[test]
    fn u_k_and_tau_k_follow_eqs_5_and_6_over_ten_samples() {
        let samples = [1.0, 2.0, 2.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0].map(|m| m * 1e6);
        let expected_u = [
            0.0,
            400_000.0,
            240_000.0,
            544_000.0,
            326_400.0,
            995_840.0,
            597_504.0,
            358_502.4,
            215_101.44,
            129_060.864,
        ];
        let mut f = InstabilityFilter::new(0.6, 10);
        let mut previous = None;
        for (s, u) in samples.iter().zip(expected_u) {
            let got = f.update(*s, previous);
            assert!(close(got, u, 1e-12), "U = {got}, by hand {u}");
            previous = Some(*s);
        }
        assert!(close(f.u_max(), 995_840.0, 1e-12));
        // tau_10 = 100 ms * (1 + 10 * 129 060.864 / 995 840) = 100 ms * 2.296 = 229.6 ms.
        let rtt = Duration::from_millis(100);
        assert_eq!(
            tau(rtt, f.u(), f.u_max(), 10.0),
            Duration::from_micros(229_600)
        );
        // At the peak, tau = (1 + N) RTT; with no instability, tau = RTT.
        assert_eq!(
            tau(rtt, 995_840.0, 995_840.0, 10.0),
            Duration::from_millis(1_100)
        );
        assert_eq!(tau(rtt, 0.0, 0.0, 10.0), rtt);
    }

    #[test]
    fn u_max_forgets_values_older_than_ten_samples() {
        let samples = [1.0, 2.0, 2.0, 1.0, 1.0, 3.0, 3.0, 3.0, 3.0, 3.0].map(|m| m * 1e6);
        let mut f = InstabilityFilter::new(0.6, 10);
        let mut previous = None;
        for s in samples {
            f.update(s, previous);
            previous = Some(s);
        }
        // Samples 11 to 15 keep U_6 inside the window of ten.
        for _ in 11..=15 {
            f.update(3e6, previous);
            assert!(close(f.u_max(), 995_840.0, 1e-12));
        }
        // Sample 16 pushes U_6 out: U_max is U_7 = 597 504 B/s.
        f.update(3e6, previous);
        assert!(close(f.u_max(), 597_504.0, 1e-12));
        // U_16 = 0.6^10 * 995 840: tau = RTT * (1 + 10 * 0.6^9).
        assert_eq!(
            tau(Duration::from_millis(100), f.u(), f.u_max(), 10.0),
            Duration::from_nanos(110_077_696)
        );
    }

    #[test]
    fn the_ack_stream_drives_u_k_tau_k_and_the_estimate_as_computed_by_hand() {
        // One ACK every 1 ms; cwin = 10 000 B stays below S^ * RTT_min, so T_k = dt_k = 1 ms
        // and s_k = d_k / 1 ms: the sample sequence of the test above.
        let mut abe = Abe::new(adaptive());
        abe.on_ack(Instant::ZERO, &input(MSS, 10 * MSS));
        assert_eq!(abe.estimate(), None, "one ACK gives no sample");
        let bytes = [1000, 2000, 2000, 1000, 1000, 3000, 3000, 3000, 3000, 3000];
        for (i, d) in bytes.iter().enumerate() {
            abe.on_ack(Instant::from_millis(i as u64 + 1), &input(*d, 10 * MSS));
        }
        let t = abe.trace();
        assert_eq!(
            (t.dt_k, t.t_k),
            (Duration::from_millis(1), Duration::from_millis(1))
        );
        assert_eq!(t.sample, 3e6);
        assert!(close(t.u_k, 129_060.864, 1e-12));
        assert!(close(t.u_max, 995_840.0, 1e-12));
        assert_eq!(t.tau_k, Duration::from_micros(229_600));
        assert!(close(t.alpha_k, 458.2 / 460.2, 1e-15));
        // Eq. (1) applied by hand to the ten samples with these tau_k (1.0e6 initialises it).
        assert!(
            close(t.estimate, 1_026_220.529_435_874, 1e-12),
            "{}",
            t.estimate
        );
    }

    #[test]
    fn the_estimate_converges_within_one_percent_of_a_constant_10_mbps_ack_stream() {
        // 5 Mbit/s (1500 B every 2.4 ms) for 3 s, then 10 Mbit/s (every 1.2 ms). cwin of 50
        // segments is below the 10 Mbit/s pipe (125 000 B = 83 segments of 1500 B) once the
        // estimate has risen: T_k = dt_k.
        let rate = 1_250_000.0;
        let mut abe = Abe::new(adaptive());
        let cwnd = 50 * 1500;
        let t = stream(
            &mut abe,
            Instant::ZERO,
            1250,
            Duration::from_micros(2_400),
            1500,
            cwnd,
        );
        let t = stream(
            &mut abe,
            t + Duration::from_micros(1_200),
            1667,
            Duration::from_micros(1_200),
            1500,
            cwnd,
        );
        for i in 1..=1667 {
            let e = abe.on_ack(t + Duration::from_micros(1_200) * i, &input(1500, cwnd));
            assert!(e.is_some_and(|e| close(e, rate, 0.01)), "{e:?} after 2 s");
        }
    }

    #[test]
    fn on_a_congested_path_the_estimate_converges_within_one_percent_too() {
        // cwin of 150 segments, twice the pipe: T_k follows eq. (2), about 44 ms (37 ACKs).
        // Eq. (4) over a window that is not a whole number of ACK spacings overestimates by
        // at most one ACK's bytes over T_k; here that stays within 1 %.
        let rate = 1_250_000.0;
        let mut abe = Abe::new(adaptive());
        let cwnd = 150 * 1500;
        let t = stream(
            &mut abe,
            Instant::ZERO,
            1250,
            Duration::from_micros(2_400),
            1500,
            cwnd,
        );
        let t = stream(
            &mut abe,
            t + Duration::from_micros(1_200),
            4000,
            Duration::from_micros(1_200),
            1500,
            cwnd,
        );
        for i in 1..=4000 {
            let e = abe.on_ack(t + Duration::from_micros(1_200) * i, &input(1500, cwnd));
            assert!(e.is_some_and(|e| close(e, rate, 0.01)), "{e:?} after 4.8 s");
        }
        let t_k = abe.trace().t_k;
        assert!(
            t_k > Duration::from_millis(40) && t_k < Duration::from_millis(50),
            "{t_k}"
        );
    }

    #[test]
    fn a_sample_spans_t_k_up_to_the_next_arrival_and_sums_the_bytes_since_the_last_one() {
        // 1000 B every 1 ms, cwin = 200 000 B. The ACK at 1 ms gives the first sample over
        // dt_k (1e6 B/s); from then on S^ * RTT_min = 100 000 B < cwin, so T_k = 100 ms *
        // (200 000 - 100 000) / 200 000 = 50 ms (eq. (2)) and a sample closes every 50 ms.
        let mut abe = Abe::new(adaptive());
        let cwnd = 200 * MSS;
        stream(
            &mut abe,
            Instant::ZERO,
            51,
            Duration::from_millis(1),
            MSS,
            cwnd,
        );
        let t = abe.trace();
        assert_eq!(
            (t.at, t.t_k, t.span_k, t.sample, t.estimate),
            (
                Instant::from_millis(1),
                Duration::from_millis(1),
                Duration::from_millis(1),
                1e6,
                1e6
            )
        );
        abe.on_ack(Instant::from_millis(51), &input(MSS, cwnd));
        let t = abe.trace();
        assert_eq!(
            (t.at, t.t_k, t.span_k, t.sample, t.estimate),
            (
                Instant::from_millis(51),
                Duration::from_millis(50),
                Duration::from_millis(50),
                1e6,
                1e6
            )
        );
        // A 3000-byte ACK at 81 ms: the next sample, (51 ms, 101 ms], holds 49 ACKs of 1000 B
        // and it; nothing closes before 101 ms.
        stream(
            &mut abe,
            Instant::from_millis(52),
            29,
            Duration::from_millis(1),
            MSS,
            cwnd,
        );
        abe.on_ack(Instant::from_millis(81), &input(3 * MSS, cwnd));
        stream(
            &mut abe,
            Instant::from_millis(82),
            19,
            Duration::from_millis(1),
            MSS,
            cwnd,
        );
        assert_eq!(abe.trace().at, Instant::from_millis(51));
        abe.on_ack(Instant::from_millis(101), &input(MSS, cwnd));
        let t = abe.trace();
        assert_eq!(
            (t.at, t.span_k),
            (Instant::from_millis(101), Duration::from_millis(50))
        );
        assert_eq!(t.sample, 52_000.0 / 0.05);
        // Eq. (1) over the 50 ms the sample covers; one change from a steady stream gives
        // U_k = U_max, so tau_k = 11 * 100 ms: alpha = (2200 - 50) / (2200 + 50).
        assert_eq!(t.tau_k, Duration::from_millis(1_100));
        let alpha = 2150.0 / 2250.0;
        assert!(close(
            t.estimate,
            alpha * 1e6 + (1.0 - alpha) * 1.04e6,
            1e-12
        ));
    }

    #[test]
    fn acks_in_one_burst_per_rtt_give_the_true_rate_within_one_percent() {
        // A window of 60 000 B delivered once per 100 ms RTT: 30 ACKs of 2000 B, 0.4 ms apart
        // (a 40 Mbit/s bottleneck), then idle until the next RTT. True rate: 600 000 B/s.
        // cwin = 600 000 B is far above what the path delivers (a congested path): T_k follows
        // eq. (2), up to 90 ms, and each sample spans one RTT. Weighting every ACK's sample by
        // the gap before it read about a sixth of the rate here.
        let mut abe = Abe::new(adaptive());
        let cwnd = 600 * MSS;
        let burst = |abe: &mut Abe, rtt: u64| {
            let start = Instant::from_millis(100 * rtt);
            let mut e = None;
            for i in 0..30 {
                e = abe.on_ack(
                    start + Duration::from_micros(400) * i,
                    &input(2 * MSS, cwnd),
                );
            }
            e
        };
        for rtt in 0..40 {
            burst(&mut abe, rtt);
        }
        for rtt in 40..45 {
            let e = burst(&mut abe, rtt);
            assert!(e.is_some_and(|e| close(e, 600_000.0, 0.01)), "{e:?}");
            assert_eq!(abe.trace().sample, 600_000.0);
        }
    }

    #[test]
    fn a_full_link_gives_the_link_rate_within_three_percent() {
        // 100 Mbit/s: 1500 B every 120 us, with cwin 1 % above the pipe (12.5e6 B/s * 100 ms):
        // T_k is about 1 ms, 8.3 ACK spacings. Counting the ACKs inside a window of T_k read
        // 9 ACKs over 8.3 spacings, 9 % high; a sample closing at an arrival counts whole
        // spacings and reads the link rate.
        let rate = 12_500_000.0;
        let cwnd = 1_262_500;
        let mut abe = Abe::new(adaptive());
        let spacing = Duration::from_micros(120);
        let t = stream(&mut abe, Instant::ZERO, 20_000, spacing, 1500, cwnd);
        for i in 1..=2_000 {
            let e = abe.on_ack(t + spacing * i, &input(1500, cwnd));
            assert!(e.is_some_and(|e| close(e, rate, 0.03)), "{e:?}");
        }
        let tr = abe.trace();
        assert!(
            tr.t_k > spacing * 2 && tr.t_k < Duration::from_millis(3),
            "{}",
            tr.t_k
        );
        assert!(close(tr.sample, rate, 1e-9) && close(tr.estimate, rate, 1e-6));
    }

    #[test]
    fn acks_at_the_same_instant_form_one_arrival() {
        let mut abe = Abe::new(adaptive());
        abe.on_ack(Instant::ZERO, &input(MSS, 10 * MSS));
        abe.on_ack(Instant::from_millis(1), &input(MSS, 10 * MSS));
        assert_eq!(abe.estimate(), Some(1e6));
        // Two ACKs at 2 ms: the update at 2 ms is redone with both, 2000 B over 1 ms.
        abe.on_ack(Instant::from_millis(2), &input(MSS, 10 * MSS));
        abe.on_ack(Instant::from_millis(2), &input(MSS, 10 * MSS));
        let t = abe.trace();
        assert_eq!((t.dt_k, t.sample), (Duration::from_millis(1), 2e6));
        // The same as one ACK of 2000 B at 2 ms.
        let mut one = Abe::new(adaptive());
        one.on_ack(Instant::ZERO, &input(MSS, 10 * MSS));
        one.on_ack(Instant::from_millis(1), &input(MSS, 10 * MSS));
        one.on_ack(Instant::from_millis(2), &input(2 * MSS, 10 * MSS));
        assert_eq!(one.trace(), t);
        // A time earlier than the last arrival joins it rather than panicking.
        abe.on_ack(Instant::from_millis(1), &input(MSS, 10 * MSS));
        assert_eq!(abe.trace().sample, 3e6);
    }

    #[test]
    fn there_is_no_sample_before_the_rtt_is_known() {
        let mut abe = Abe::new(adaptive());
        let unknown = AbeInput {
            rtt_min: None,
            ..input(MSS, 10 * MSS)
        };
        abe.on_ack(Instant::ZERO, &unknown);
        abe.on_ack(Instant::from_millis(1), &unknown);
        abe.on_ack(Instant::from_millis(2), &unknown);
        assert_eq!(abe.estimate(), None);
        // Once it is, the next ACK samples over its inter-arrival time.
        abe.on_ack(Instant::from_millis(3), &input(MSS, 10 * MSS));
        assert_eq!(abe.estimate(), Some(1e6));
        // A zero srtt (tau_k = 0, alpha_k = 0) takes the sample as the estimate.
        let zero = AbeInput {
            srtt: Duration::ZERO,
            ..input(2 * MSS, 10 * MSS)
        };
        abe.on_ack(Instant::from_millis(4), &zero);
        assert_eq!(abe.estimate(), Some(2e6));
    }

    #[test]
    fn fixed_sampling_takes_every_sample_over_the_ack_inter_arrival_time() {
        let config = AbeConfig::default();
        assert!(!config.adaptive_sampling, "the paper's experiments fix T_k");
        let mut abe = Abe::new(config);
        stream(
            &mut abe,
            Instant::ZERO,
            60,
            Duration::from_millis(1),
            MSS,
            200 * MSS,
        );
        assert_eq!(abe.trace().t_k, Duration::from_millis(1));
    }

    #[test]
    fn by_default_an_ack_after_a_gap_is_one_sample_over_the_gap_even_when_cwnd_exceeds_the_estimate(
    ) {
        // The paper's experiments: T_k = dt_k. A 100-ACK burst of 1000 B every 1 ms gives
        // S^ = 1e6 B/s (every sample equal: U = 0, tau = RTT). cwin = 200 000 B is twice
        // S^ * RTT_min = 100 000 B, where eqs. (2)-(3) would take T_k = 50 ms.
        let mut abe = Abe::new(AbeConfig::default());
        let cwnd = 200 * MSS;
        stream(
            &mut abe,
            Instant::ZERO,
            100,
            Duration::from_millis(1),
            MSS,
            cwnd,
        );
        assert_eq!(abe.estimate(), Some(1e6));
        // One ACK of 1000 B after an idle 49 ms: s_k = 1000 B / 0.05 s = 20 000 B/s over
        // dt_k = 50 ms. Eq. (5): U_k = 0.4 * 980 000 = 392 000 B/s, the largest of the last
        // ten, so tau_k = 11 * 100 ms (eq. (6)) and alpha_k = (2200 - 50) / (2200 + 50).
        abe.on_ack(Instant::from_millis(149), &input(MSS, cwnd));
        let t = abe.trace();
        assert_eq!(
            (t.dt_k, t.t_k, t.span_k),
            (
                Duration::from_millis(50),
                Duration::from_millis(50),
                Duration::from_millis(50)
            )
        );
        assert_eq!(t.sample, 20_000.0);
        assert!(close(t.u_k, 392_000.0, 1e-12), "{}", t.u_k);
        assert_eq!(t.tau_k, Duration::from_millis(1_100));
        let alpha = 2150.0 / 2250.0;
        assert!(close(t.alpha_k, alpha, 1e-15));
        assert!(close(
            t.estimate,
            20_000.0 + alpha * (1e6 - 20_000.0),
            1e-12
        ));
    }
}
