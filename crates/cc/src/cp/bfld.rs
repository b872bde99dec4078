//! Bandwidth filtered loss detection (BFLD, slides Fig. 9): the virtual packet event stream
//! through which an aggregate sending m flowshares sees the loss event rate of one.
//!
//! A single-flow algorithm computes its rate from the loss event rate of the packets it sends
//! (RFC 5348 section 5). An aggregate that sends m times that rate packs m times more packets
//! into each RTT; losses within one RTT merge into one loss event (RFC 5348 section 5.2), so
//! the aggregate's loss event rate per packet is lower than one flow's and the equation gives
//! too much (slides, "MULTIPLE FLOWSHARES": single-flow algorithms break when the sender does
//! not limit itself to the rate they compute). BFLD thins the aggregate's packet events to the
//! rate of one flowshare before they reach the loss history:
//!
//! ```text
//! F = B_avail / B_arriv,  F = 1 when B_avail > B_arriv      (slides, "MULTIPLE FLOWSHARES")
//! each packet event (arrival or detected loss) enters the virtual stream when r <= F,
//! r uniform in [0, 1]                                       (slides, Fig. 9)
//! ```
//!
//! - **B_avail** is the rate the congestion control algorithm at the aggregation point computes
//!   for one flowshare (TFRC's X, or RAP's rate), from the loss event rate of the virtual
//!   stream. The application is told m * B_avail; when it sends that, F = 1/m and the virtual
//!   stream carries one flowshare's worth of packets.
//! - **B_arriv** is the rate at which the application's packets arrive at the aggregation point
//!   from its endpoints ([`ArrivalRate`]).

use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};

/// The gain of the EWMA over per-interval arrival rates in [`ArrivalRate`].
pub const ARRIVAL_RATE_GAIN: f64 = 0.25;

/// The measurement interval of [`ArrivalRate`] before an RTT is known.
pub const DEFAULT_ARRIVAL_INTERVAL: Duration = Duration::from_millis(100);

/// The shortest measurement interval of [`ArrivalRate`], whatever the RTT.
pub const MIN_ARRIVAL_INTERVAL: Duration = Duration::from_millis(1);

/// F = B_avail / B_arriv, in (0, 1]: 1 when B_avail >= B_arriv, when B_arriv is not known yet
/// or is zero, or when either rate is not a positive number.
pub fn sampling_fraction(b_avail: Rate, b_arriv: Option<Rate>) -> f64 {
    match b_arriv {
        Some(arriv) if arriv > b_avail && b_avail > Rate::ZERO => {
            b_avail.bps_f64() / arriv.bps_f64()
        }
        _ => 1.0,
    }
}

/// Draws the virtual packet event stream: keeps each event when a uniform r in [0, 1] is at
/// most F (slides, Fig. 9), and counts what it offered and kept.
#[derive(Clone, Debug, Default)]
pub struct BfldSampler {
    /// Events offered.
    offered: u64,
    /// Events kept.
    kept: u64,
}

impl BfldSampler {
    /// A sampler that has seen no event.
    pub fn new() -> BfldSampler {
        BfldSampler::default()
    }

    /// Decides whether one packet event enters the virtual stream, for sampling fraction `f`.
    /// With `f >= 1` the event is kept without drawing from `rng`; otherwise one uniform number
    /// is drawn. An `f` that is NaN or not above 0 keeps nothing.
    pub fn keep(&mut self, f: f64, rng: &mut Rng) -> bool {
        self.offered = self.offered.saturating_add(1);
        let keep = if f >= 1.0 {
            true
        } else if f > 0.0 {
            rng.uniform() <= f
        } else {
            false
        };
        if keep {
            self.kept = self.kept.saturating_add(1);
        }
        keep
    }

    /// Packet events offered so far.
    pub fn offered(&self) -> u64 {
        self.offered
    }

    /// Packet events kept in the virtual stream so far.
    pub fn kept(&self) -> u64 {
        self.kept
    }
}

/// B_arriv: the rate at which an application's packets arrive at its local aggregation point.
///
/// Bytes are counted over consecutive measurement intervals of one RTT (the caller passes the
/// current RTT estimate; [`DEFAULT_ARRIVAL_INTERVAL`] before there is one; never shorter than
/// [`MIN_ARRIVAL_INTERVAL`]). An interval closes at the first packet at least one interval after
/// it opened: its sample is the bytes of the packets before that one over the time between the
/// two, and that packet opens the next interval. The estimate is an EWMA of the samples with
/// gain [`ARRIVAL_RATE_GAIN`] (the first sample is taken as it is); `None` until an interval
/// has closed.
#[derive(Clone, Debug, Default)]
pub struct ArrivalRate {
    /// When the open interval started; `None` before the first packet.
    start: Option<Instant>,
    /// Bytes counted in the open interval.
    bytes: Bytes,
    /// The estimate, in bytes/s.
    estimate: Option<f64>,
}

impl ArrivalRate {
    /// An estimator that has seen no packet.
    pub fn new() -> ArrivalRate {
        ArrivalRate::default()
    }

    /// A packet of `size` bytes arrived at `now`; `rtt` is the current RTT estimate.
    pub fn on_packet(&mut self, now: Instant, size: Bytes, rtt: Option<Duration>) {
        let interval = rtt
            .unwrap_or(DEFAULT_ARRIVAL_INTERVAL)
            .max(MIN_ARRIVAL_INTERVAL);
        match self.start {
            Some(start) if now >= start + interval => {
                let sample = self.bytes as f64 / (now - start).as_secs_f64();
                self.estimate = Some(match self.estimate {
                    Some(e) => e + ARRIVAL_RATE_GAIN * (sample - e),
                    None => sample,
                });
                self.start = Some(now);
                self.bytes = size;
            }
            Some(_) => self.bytes = self.bytes.saturating_add(size),
            None => {
                self.start = Some(now);
                self.bytes = size;
            }
        }
    }

    /// The estimate B_arriv; `None` until one interval has closed.
    pub fn rate(&self) -> Option<Rate> {
        self.estimate.map(|e| Rate::from_bps_f64(e * 8.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_f_of_a_quarter_about_a_quarter_of_400k_events_are_kept() {
        let mut rng = Rng::new(2004);
        let mut s = BfldSampler::new();
        let n = 400_000;
        let kept = (0..n).filter(|_| s.keep(0.25, &mut rng)).count();
        let fraction = kept as f64 / n as f64;
        assert!(
            (fraction - 0.25).abs() < 0.01 * 0.25,
            "kept {kept} of {n}: {fraction}"
        );
        assert_eq!((s.offered(), s.kept()), (n, kept as u64));
    }

    #[test]
    fn the_sampling_fraction_is_the_rate_ratio_capped_at_one() {
        let avail = Rate::from_mbps(2);
        assert_eq!(sampling_fraction(avail, Some(Rate::from_mbps(8))), 0.25);
        assert_eq!(sampling_fraction(avail, Some(Rate::from_mbps(1))), 1.0);
        assert_eq!(sampling_fraction(avail, None), 1.0);
        assert_eq!(sampling_fraction(avail, Some(Rate::ZERO)), 1.0);
        assert_eq!(sampling_fraction(Rate::ZERO, Some(avail)), 1.0);
    }

    #[test]
    fn a_fraction_of_one_keeps_everything_without_drawing() {
        let mut rng = Rng::new(1);
        let mut copy = rng.clone();
        let mut s = BfldSampler::new();
        assert!((0..100).all(|_| s.keep(1.0, &mut rng)));
        assert_eq!(rng.next_u64(), copy.next_u64());
        assert!(!s.keep(0.0, &mut rng));
        assert!(!s.keep(f64::NAN, &mut rng));
    }

    #[test]
    fn the_arrival_rate_is_measured_over_rtt_intervals() {
        let mut a = ArrivalRate::new();
        let rtt = Some(Duration::from_millis(100));
        // 1000 bytes every 10 ms: 100_000 bytes/s.
        for k in 0..10 {
            a.on_packet(Instant::from_millis(10 * k), 1000, rtt);
        }
        assert_eq!(a.rate(), None);
        a.on_packet(Instant::from_millis(100), 1000, rtt);
        assert_eq!(a.rate(), Some(Rate::from_bps(800_000)));
        // Twice as fast for one interval: the EWMA moves a quarter of the way.
        for k in 1..=20 {
            a.on_packet(Instant::from_millis(100 + 5 * k), 1000, rtt);
        }
        assert_eq!(a.rate(), Some(Rate::from_bps(1_000_000)));
    }
}
