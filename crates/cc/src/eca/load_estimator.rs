//! The router's path load estimate L (section III.A.2 and IV.A.2).
//!
//! Section III.A.2 proposes "a software virtual queue with service rate equal to the target
//! utilization (e.g. 90% of the real line rate)" and adjusting L up or down "based on whether
//! this queue is full or empty". The algorithm the paper then implements and measures, in ns-2
//! (section IV.A.2) and in the prototype's kernel driver "in exactly the same manner"
//! (section V.A.1), uses the *arrivals* into that queue: every 100 ms it compares the bytes
//! that arrived with what the target utilisation of the link serves in 100 ms, and multiplies
//! L by 1.05 if they exceed it, by 0.99 otherwise. Arrivals above the virtual service rate are
//! exactly what makes the virtual queue grow, so the two readings agree on the direction of a
//! sustained imbalance; they differ in memory (the arrival rule forgets the backlog at each
//! interval boundary). [`LoadRule::ArrivalRate`] is the implemented rule and the default.
//! The virtual queue's backlog is kept as well (the prototype driver tracks it), readable with
//! [`LoadEstimator::virtual_backlog`], and [`LoadRule::VirtualQueue`] decides on it instead.
//!
//! The response is asymmetric by design: ln 2 / ln 1.05 ~ 14.2 intervals (~1.4 s) to follow a
//! doubling of the load, ln 2 / -ln 0.99 ~ 69 intervals (~6.9 s) to follow a halving.
//!
//! L is dimensionless: with every flow shaped to r_i = w_i / L and w_i in bit/s per unit load
//! (see [`super::wtp`]), a link carrying the flows settles where sum(w_i) / L equals the target
//! rate.

use super::error::{in_range, positive, ConfigError};
use super::load_codec::{tos_max_load, tos_min_load};
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::{Bytes, Rate};

/// How a router combines the LOAD a packet already carries with its own L (section III.A.2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LoadCombine {
    /// max(LOAD, L): the bottleneck's load; bandwidth is shared proportionally among flows of a
    /// common bottleneck and flows crossing several loaded hops are not penalised. All of the
    /// paper's experiments use it (section IV.A.1).
    #[default]
    Max,
    /// LOAD + L: the sum of the prices of every resource used, as congestion pricing requires
    /// (footnote 3); flows crossing more loaded hops get less.
    Sum,
}

/// What the estimator compares with the target at the end of each interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LoadRule {
    /// The bytes that arrived in the interval against target * link rate * interval: the rule
    /// of the paper's simulation and prototype (sections IV.A.2, V.A.1).
    #[default]
    ArrivalRate,
    /// The virtual queue's backlog at the end of the interval against `threshold` bytes: the
    /// "full or empty" reading of section III.A.2. Above the threshold L goes up.
    VirtualQueue {
        /// The backlog, in bytes, above which the queue counts as full.
        threshold: Bytes,
    },
}

/// The parameters of a [`LoadEstimator`].
#[derive(Clone, Debug, PartialEq)]
pub struct LoadEstimatorConfig {
    /// The line rate of the output link, in bit/s.
    pub link_rate: Rate,
    /// The target utilisation: the virtual queue's service rate as a fraction of `link_rate`,
    /// in (0, 1]. Section IV.A.2 uses 0.9; the text on figure 5c names an 80 % target.
    pub target_utilisation: f64,
    /// The measurement interval (section IV.A.2: 100 ms).
    pub interval: Duration,
    /// The factor applied to L after an interval above the target (section IV.A.2: 1.05);
    /// at least 1.
    pub increase: f64,
    /// The factor applied to L after an interval at or below the target (section IV.A.2:
    /// 0.99); in (0, 1].
    pub decrease: f64,
    /// L when the router starts (dimensionless; default 1).
    pub initial_load: f64,
    /// The lower bound on L. The multiplicative rule needs L > 0 to ever grow again; the
    /// default is the smallest load the 8-bit TOS code carries (~0.00408) so that both
    /// encodings see the same range.
    pub min_load: f64,
    /// The upper bound on L (default: the largest TOS code's load, ~245.1). It caps how long
    /// L takes to come back down after a long overload.
    pub max_load: f64,
    /// How [`LoadEstimator::stamp`] combines a packet's LOAD with L.
    pub combine: LoadCombine,
    /// The decision rule.
    pub rule: LoadRule,
    /// The virtual queue's capacity in bytes: arrivals beyond it are virtual drops and do not
    /// add to the backlog (they still count as arrivals).
    pub virtual_buffer: Bytes,
}

impl LoadEstimatorConfig {
    /// The paper's parameters for a link of `link_rate`: 90 % target, 100 ms, x1.05 / x0.99,
    /// L starting at 1, combining by max, deciding on the arrival rate, a 64 kB virtual buffer.
    pub fn new(link_rate: Rate) -> Self {
        LoadEstimatorConfig {
            link_rate,
            target_utilisation: 0.9,
            interval: Duration::from_millis(100),
            increase: 1.05,
            decrease: 0.99,
            initial_load: 1.0,
            min_load: tos_min_load(),
            max_load: tos_max_load(),
            combine: LoadCombine::Max,
            rule: LoadRule::ArrivalRate,
            virtual_buffer: 64_000,
        }
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.link_rate == Rate::ZERO {
            return Err(ConfigError::Zero { name: "link_rate" });
        }
        in_range(
            "target_utilisation",
            self.target_utilisation,
            f64::MIN_POSITIVE,
            1.0,
        )?;
        if self.link_rate.mul_f64(self.target_utilisation) == Rate::ZERO {
            return Err(ConfigError::Zero {
                name: "target_utilisation * link_rate",
            });
        }
        if self.interval.is_zero() {
            return Err(ConfigError::Zero { name: "interval" });
        }
        positive("increase", self.increase)?;
        in_range("increase", self.increase, 1.0, f64::MAX)?;
        in_range("decrease", self.decrease, f64::MIN_POSITIVE, 1.0)?;
        positive("min_load", self.min_load)?;
        positive("max_load", self.max_load)?;
        if self.min_load > self.max_load {
            return Err(ConfigError::Inverted {
                low: "min_load",
                low_value: self.min_load,
                high: "max_load",
                high_value: self.max_load,
            });
        }
        in_range(
            "initial_load",
            self.initial_load,
            self.min_load,
            self.max_load,
        )?;
        Ok(())
    }
}

/// One router output's load estimator: feed it every packet that arrives at the output queue
/// ([`on_arrival`](Self::on_arrival)) and call [`on_tick`](Self::on_tick) at
/// [`poll_timeout`](Self::poll_timeout) so that L moves on idle links too (arrivals also roll
/// the intervals over lazily). Stamp forwarded packets with [`stamp`](Self::stamp).
#[derive(Clone, Debug)]
pub struct LoadEstimator {
    /// The parameters.
    config: LoadEstimatorConfig,
    /// The virtual queue's service rate, target * link rate, in bit/s.
    service: Rate,
    /// L, the current load estimate (dimensionless).
    load: f64,
    /// The start of the current interval.
    interval_start: Instant,
    /// Bytes that arrived in the current interval.
    arrived: Bytes,
    /// The virtual queue's backlog in bytes at `backlog_at`.
    backlog: f64,
    /// When `backlog` was last brought up to date.
    backlog_at: Instant,
    /// Bytes that found the virtual buffer full.
    virtual_drops: Bytes,
}

impl LoadEstimator {
    /// An estimator whose first interval starts at `now`. The configuration is checked first.
    pub fn new(config: LoadEstimatorConfig, now: Instant) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(LoadEstimator {
            service: config.link_rate.mul_f64(config.target_utilisation),
            load: config.initial_load,
            interval_start: now,
            arrived: 0,
            backlog: 0.0,
            backlog_at: now,
            virtual_drops: 0,
            config,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &LoadEstimatorConfig {
        &self.config
    }

    /// L, the current load estimate.
    pub fn load(&self) -> f64 {
        self.load
    }

    /// Sets L (clamped to the bounds; NaN is ignored). A LAN host that follows a monitor uses
    /// it to stay in step (see [`super::lan`]).
    pub fn set_load(&mut self, load: f64) {
        if !load.is_nan() {
            self.load = load.clamp(self.config.min_load, self.config.max_load);
        }
    }

    /// The virtual queue's service rate, target * link rate.
    pub fn service_rate(&self) -> Rate {
        self.service
    }

    /// The bytes a full interval at the target rate carries, target * rate * interval.
    pub fn target_bytes_per_interval(&self) -> f64 {
        self.service.bps_f64() * self.config.interval.as_nanos() as f64
            / (8.0 * NANOS_PER_SEC as f64)
    }

    /// Bytes that arrived so far in the current interval.
    pub fn arrivals_in_interval(&self) -> Bytes {
        self.arrived
    }

    /// The virtual queue's backlog at `now`, in bytes (drained at the service rate since the
    /// last arrival).
    pub fn virtual_backlog(&self, now: Instant) -> f64 {
        (self.backlog - self.drained(now.saturating_since(self.backlog_at))).max(0.0)
    }

    /// Bytes that arrived while the virtual buffer was full.
    pub fn virtual_drops(&self) -> Bytes {
        self.virtual_drops
    }

    /// A packet of `bytes` arrived at the output queue at `now`. Intervals that ended at or
    /// before `now` are closed first, so an arrival exactly on a boundary counts toward the
    /// interval it opens.
    pub fn on_arrival(&mut self, now: Instant, bytes: Bytes) {
        self.roll(now);
        self.drain_to(now);
        let room = (self.config.virtual_buffer as f64 - self.backlog).max(0.0);
        let taken = (bytes as f64).min(room);
        self.backlog += taken;
        self.virtual_drops = self
            .virtual_drops
            .saturating_add((bytes as f64 - taken) as Bytes);
        self.arrived = self.arrived.saturating_add(bytes);
    }

    /// Closes every interval that ended at or before `now`.
    pub fn on_tick(&mut self, now: Instant) {
        self.roll(now);
    }

    /// When the current interval ends: call [`on_tick`](Self::on_tick) then. Always `Some`.
    pub fn poll_timeout(&self) -> Option<Instant> {
        Some(self.interval_end())
    }

    /// The LOAD a forwarded packet leaves with, given the LOAD it arrived with: max or sum with
    /// L (section III.A.2, [`LoadCombine`]). NaN or negative packet loads count as 0. The
    /// caller writes the result through its [`super::LoadEncoding`].
    pub fn stamp(&self, packet_load: f64) -> f64 {
        let carried = if packet_load.is_nan() || packet_load < 0.0 {
            0.0
        } else {
            packet_load
        };
        match self.config.combine {
            LoadCombine::Max => carried.max(self.load),
            LoadCombine::Sum => carried + self.load,
        }
    }

    /// The end of the current interval.
    fn interval_end(&self) -> Instant {
        self.interval_start + self.config.interval
    }

    /// Bytes the virtual queue serves in `span`.
    fn drained(&self, span: Duration) -> f64 {
        self.service.bps_f64() * span.as_nanos() as f64 / (8.0 * NANOS_PER_SEC as f64)
    }

    /// Brings the virtual queue's backlog up to `t`.
    fn drain_to(&mut self, t: Instant) {
        if t > self.backlog_at {
            self.backlog = self.virtual_backlog(t);
            self.backlog_at = t;
        }
    }

    /// Whether the interval just ended was above the target.
    fn above_target(&self) -> bool {
        match self.config.rule {
            LoadRule::ArrivalRate => {
                // arrived * 8 bit > service bit/s * interval, in bit-nanoseconds: exact.
                let offered = u128::from(self.arrived) * 8 * u128::from(NANOS_PER_SEC);
                let served =
                    u128::from(self.service.bps()) * u128::from(self.config.interval.as_nanos());
                offered > served
            }
            LoadRule::VirtualQueue { threshold } => self.backlog > threshold as f64,
        }
    }

    /// Multiplies L by `factor` `times` times, within the bounds.
    fn apply(&mut self, factor: f64, times: u64) {
        let scaled = match times {
            0 => return,
            1 => self.load * factor,
            n => self.load * factor.powi(i32::try_from(n).unwrap_or(i32::MAX)),
        };
        self.load = scaled.clamp(self.config.min_load, self.config.max_load);
    }

    /// Closes every interval that ended at or before `now` (section IV.A.2's rule, once per
    /// interval).
    fn roll(&mut self, now: Instant) {
        let end = self.interval_end();
        if now < end {
            return;
        }
        // The interval ending at `end` holds every arrival counted so far.
        self.drain_to(end);
        let factor = if self.above_target() {
            self.config.increase
        } else {
            self.config.decrease
        };
        self.apply(factor, 1);
        self.arrived = 0;
        self.interval_start = end;
        // Any further complete intervals before `now` had no arrivals: closed form.
        let interval = self.config.interval.as_nanos();
        let empty = now.saturating_since(end).as_nanos() / interval;
        if empty == 0 {
            return;
        }
        let up = match self.config.rule {
            LoadRule::ArrivalRate => 0,
            LoadRule::VirtualQueue { threshold } => {
                // The backlog after j more intervals is b - j*s; it is above the threshold
                // for j < (b - threshold) / s.
                let excess = self.backlog - threshold as f64;
                if excess > 0.0 {
                    let s = self.drained(self.config.interval);
                    let j = (excess / s).ceil() - 1.0;
                    (j.max(0.0) as u64).min(empty)
                } else {
                    0
                }
            }
        };
        self.apply(self.config.increase, up);
        self.apply(self.config.decrease, empty - up);
        self.interval_start = end + self.config.interval * empty;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 Mbit/s at 90 %: 9 Mbit/s, 112 500 bytes per 100 ms interval.
    fn estimator() -> LoadEstimator {
        LoadEstimator::new(LoadEstimatorConfig::new(Rate::from_mbps(10)), Instant::ZERO)
            .expect("valid")
    }

    #[test]
    fn one_interval_above_target_multiplies_the_load_by_exactly_1_05() {
        let mut e = estimator();
        assert_eq!(e.target_bytes_per_interval(), 112_500.0);
        e.on_arrival(Instant::from_millis(10), 112_501);
        assert_eq!(e.load(), 1.0);
        e.on_tick(Instant::from_millis(100));
        assert_eq!(e.load(), 1.05);
        assert_eq!(e.poll_timeout(), Some(Instant::from_millis(200)));
    }

    #[test]
    fn one_interval_at_or_below_target_multiplies_the_load_by_exactly_0_99() {
        let mut e = estimator();
        e.on_arrival(Instant::from_millis(10), 112_500);
        e.on_tick(Instant::from_millis(100));
        assert_eq!(e.load(), 0.99);
    }

    #[test]
    fn an_arrival_on_a_boundary_closes_the_interval_and_counts_toward_the_next() {
        let mut e = estimator();
        e.on_arrival(Instant::from_millis(99), 112_501);
        e.on_arrival(Instant::from_millis(100), 200_000);
        assert_eq!(e.load(), 1.05);
        assert_eq!(e.arrivals_in_interval(), 200_000);
        e.on_tick(Instant::from_millis(200));
        assert_eq!(e.load(), 1.05 * 1.05);
    }

    #[test]
    fn idle_intervals_each_multiply_the_load_by_0_99() {
        let mut e = estimator();
        e.on_arrival(Instant::from_millis(50), 112_501);
        e.on_tick(Instant::from_millis(350));
        let expected = 1.05 * 0.99f64.powi(2);
        assert!((e.load() - expected).abs() < 1e-15, "{}", e.load());
        assert_eq!(e.poll_timeout(), Some(Instant::from_millis(400)));
    }

    #[test]
    fn the_load_stays_within_its_bounds() {
        let mut config = LoadEstimatorConfig::new(Rate::from_mbps(10));
        config.min_load = 0.5;
        config.max_load = 2.0;
        let mut e = LoadEstimator::new(config, Instant::ZERO).expect("valid");
        e.on_tick(Instant::from_secs(3600));
        assert_eq!(e.load(), 0.5);
        for i in 0..100 {
            e.on_arrival(
                Instant::from_secs(3600) + Duration::from_millis(100 * i),
                1_000_000,
            );
        }
        assert_eq!(e.load(), 2.0);
    }

    #[test]
    fn a_sustained_overload_doubles_the_load_in_15_intervals() {
        // The paper's "about 1.4 s" is ln 2 / ln 1.05 = 14.2 intervals.
        let mut e = estimator();
        let mut intervals = 0;
        while e.load() < 2.0 {
            e.on_arrival(Instant::from_millis(100 * intervals + 1), 150_000);
            intervals += 1;
            e.on_tick(Instant::from_millis(100 * intervals));
        }
        assert_eq!(intervals, 15);
    }

    #[test]
    fn stamping_by_max_keeps_the_larger_load_and_by_sum_adds_them() {
        let mut e = estimator();
        e.set_load(1.5);
        assert_eq!(e.stamp(0.0), 1.5);
        assert_eq!(e.stamp(1.0), 1.5);
        assert_eq!(e.stamp(2.5), 2.5);
        assert_eq!(e.stamp(f64::NAN), 1.5);
        let mut config = LoadEstimatorConfig::new(Rate::from_mbps(10));
        config.combine = LoadCombine::Sum;
        let mut s = LoadEstimator::new(config, Instant::ZERO).expect("valid");
        s.set_load(1.5);
        assert_eq!(s.stamp(0.0), 1.5);
        assert_eq!(s.stamp(2.5), 4.0);
        assert_eq!(s.stamp(-1.0), 1.5);
    }

    #[test]
    fn the_virtual_queue_drains_at_the_target_rate() {
        let mut e = estimator();
        e.on_arrival(Instant::ZERO, 60_000);
        // 9 Mbit/s serves 56 250 bytes in 50 ms.
        assert_eq!(e.virtual_backlog(Instant::from_millis(50)), 3_750.0);
        assert_eq!(e.virtual_backlog(Instant::from_millis(90)), 0.0);
        e.on_arrival(Instant::from_millis(60), 70_000);
        assert_eq!(e.virtual_drops(), 6_000);
        assert_eq!(e.virtual_backlog(Instant::from_millis(60)), 64_000.0);
    }

    #[test]
    fn the_virtual_queue_rule_raises_the_load_while_the_backlog_stays_above_the_threshold() {
        let mut config = LoadEstimatorConfig::new(Rate::from_mbps(10));
        config.rule = LoadRule::VirtualQueue { threshold: 1_000 };
        config.virtual_buffer = 1_000_000;
        let mut e = LoadEstimator::new(config, Instant::ZERO).expect("valid");
        // 300 000 bytes at t = 0; 112 500 served per interval: 187 500 left at 100 ms,
        // 75 000 at 200 ms, 0 at 300 ms.
        e.on_arrival(Instant::ZERO, 300_000);
        e.on_tick(Instant::from_millis(400));
        let expected = 1.05 * 1.05 * 0.99 * 0.99;
        assert!((e.load() - expected).abs() < 1e-15, "{}", e.load());
    }

    #[test]
    fn impossible_configurations_are_refused() {
        let good = LoadEstimatorConfig::new(Rate::from_mbps(10));
        let mut c = good.clone();
        c.link_rate = Rate::ZERO;
        assert!(LoadEstimator::new(c, Instant::ZERO).is_err());
        let mut c = good.clone();
        c.target_utilisation = 1.5;
        assert!(LoadEstimator::new(c, Instant::ZERO).is_err());
        let mut c = good.clone();
        c.decrease = 1.2;
        assert!(LoadEstimator::new(c, Instant::ZERO).is_err());
        let mut c = good.clone();
        c.min_load = 3.0;
        c.max_load = 2.0;
        assert!(matches!(
            LoadEstimator::new(c, Instant::ZERO),
            Err(ConfigError::Inverted { .. })
        ));
        let mut c = good;
        c.interval = Duration::ZERO;
        assert!(LoadEstimator::new(c, Instant::ZERO).is_err());
    }
}
