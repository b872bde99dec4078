//! GCCA's rate controller: an adjustable leaky bucket (Liu, Cheung & Baras, section 3.3, after
//! Turner 1986), on a router's output queue or on a host's UDP port.
//!
//! "Upon receiving a GCCP CONGESTION message, we adjust the leaky bucket and decrease the rate
//! linearly. When receiving a GCCP NORMAL message, the output rate is restored." Each
//! CONGESTION lowers the rate by [`LeakyBucketConfig::decrease_step`], never below
//! [`LeakyBucketConfig::min_rate`]; NORMAL restores [`LeakyBucketConfig::max_rate`], the
//! configured rate, either at once or in linear steps ([`Restore`]), which the paper leaves open.
//!
//! # Pacing
//!
//! The bucket is a token bucket kept in exact integers. Tokens are counted in nanobits
//! (10^-9 bit), so that a rate of `r` bit/s adds exactly `r` nanobits per nanosecond and a packet
//! of `s` bytes costs `s * 8 * 10^9` nanobits: no rounding ever accumulates. The bucket starts
//! with [`LeakyBucketConfig::burst`] bytes' worth and holds at most that (plus under one
//! nanosecond's worth of the rate, the remainder of rounding a departure up). A packet of `s` bytes may
//! leave once the bucket holds `min(s, burst)` bytes' worth; it then takes `s` bytes' worth,
//! and the level may go negative (a packet larger than the burst borrows from the future). So
//! packets leave back to back up to the burst and are spaced `s * 8 / r` seconds apart after
//! it; a departure time is rounded up to the nanosecond and the fraction is kept for the next.
//!
//! While the rate ramps up after NORMAL the rate is a step function of time, evaluated lazily
//! from the ramp's start; no timer is needed. [`LeakyBucket::next_departure`] assumes the rate
//! stays as it is at `now`; during a ramp the rate only rises, so the answer is never too early,
//! and [`LeakyBucket::next_rate_change`] tells a driver when asking again could give an earlier
//! one.

use super::message::Code;
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::{Bytes, Rate};

/// Nanobits (10^-9 bit) per byte.
const NANOBITS_PER_BYTE: i128 = 8 * NANOS_PER_SEC as i128;

/// How the rate comes back after NORMAL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restore {
    /// Straight back to the configured rate.
    Immediate,
    /// Up by `step` every `interval`, starting one interval after the NORMAL, until the
    /// configured rate is reached; a CONGESTION stops the ramp.
    Ramp {
        /// The increase per interval, in bit/s.
        step: Rate,
        /// The time between increases.
        interval: Duration,
    },
}

/// A leaky bucket's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeakyBucketConfig {
    /// The configured rate, in bit/s: the rate at the start, the ceiling, and what NORMAL
    /// restores.
    pub max_rate: Rate,
    /// The floor CONGESTION never goes below, in bit/s; must be positive so that a throttled
    /// sender keeps sending and the downstream detector keeps seeing its average.
    pub min_rate: Rate,
    /// The linear decrease per CONGESTION message, in bit/s.
    pub decrease_step: Rate,
    /// How NORMAL restores the rate.
    pub restore: Restore,
    /// The burst allowance: the bucket's depth, in bytes.
    pub burst: Bytes,
}

impl LeakyBucketConfig {
    /// concord's defaults for a configured rate (the paper gives no numbers): floor at 1% of
    /// it, decrease by 10% of it per CONGESTION, immediate restore, a burst of one 1500-byte
    /// packet.
    pub fn for_rate(max_rate: Rate) -> LeakyBucketConfig {
        LeakyBucketConfig {
            max_rate,
            min_rate: Rate::from_bps((max_rate.bps() / 100).max(1)),
            decrease_step: Rate::from_bps((max_rate.bps() / 10).max(1)),
            restore: Restore::Immediate,
            burst: 1500,
        }
    }

    /// Checks that the bucket can run.
    pub fn validate(&self) -> Result<(), LeakyBucketConfigError> {
        if self.min_rate == Rate::ZERO {
            return Err(LeakyBucketConfigError::ZeroMinRate);
        }
        if self.min_rate > self.max_rate {
            return Err(LeakyBucketConfigError::MinAboveMax {
                min_rate: self.min_rate,
                max_rate: self.max_rate,
            });
        }
        if self.decrease_step == Rate::ZERO {
            return Err(LeakyBucketConfigError::ZeroDecreaseStep);
        }
        if let Restore::Ramp { step, interval } = self.restore {
            if step == Rate::ZERO || interval.is_zero() {
                return Err(LeakyBucketConfigError::EmptyRamp);
            }
        }
        if self.burst == 0 {
            return Err(LeakyBucketConfigError::ZeroBurst);
        }
        Ok(())
    }
}

/// Why a leaky bucket's parameters are impossible.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LeakyBucketConfigError {
    /// The floor is zero: a throttled sender would stop for good.
    #[error("min_rate is zero; give a positive floor such as 1% of the rate")]
    ZeroMinRate,
    /// The floor is above the configured rate.
    #[error("min_rate ({min_rate}) is above the configured rate ({max_rate})")]
    MinAboveMax {
        /// The floor.
        min_rate: Rate,
        /// The configured rate.
        max_rate: Rate,
    },
    /// CONGESTION would not change the rate.
    #[error("decrease_step is zero; CONGESTION would have no effect")]
    ZeroDecreaseStep,
    /// A ramp with a zero step or a zero interval.
    #[error("the restore ramp needs a positive step and a positive interval")]
    EmptyRamp,
    /// The bucket holds nothing.
    #[error("burst is zero; allow at least one packet (e.g. 1500 bytes)")]
    ZeroBurst,
}

/// An adjustable leaky bucket: the current rate, its ramp, and the token level.
#[derive(Clone, Debug)]
pub struct LeakyBucket {
    config: LeakyBucketConfig,
    /// The rate in force, in bit/s; while ramping, the rate at the ramp's start.
    rate: Rate,
    /// When the current ramp started, if the rate is ramping up.
    ramp_start: Option<Instant>,
    /// The token level at `updated`, in nanobits; at most the burst, possibly negative.
    tokens: i128,
    /// When `tokens` was last brought up to date.
    updated: Instant,
}

impl LeakyBucket {
    /// A full bucket at the configured rate, as of time zero.
    pub fn new(config: LeakyBucketConfig) -> Result<LeakyBucket, LeakyBucketConfigError> {
        config.validate()?;
        Ok(LeakyBucket {
            rate: config.max_rate,
            ramp_start: None,
            tokens: nanobits(config.burst),
            updated: Instant::ZERO,
            config,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &LeakyBucketConfig {
        &self.config
    }

    /// The rate in force at `now`, in bit/s.
    pub fn rate(&self, now: Instant) -> Rate {
        match (self.ramp_start, self.config.restore) {
            (Some(start), Restore::Ramp { step, interval }) => {
                let n = now.saturating_since(start).as_nanos() / interval.as_nanos().max(1);
                let r = self.rate.bps().saturating_add(step.bps().saturating_mul(n));
                Rate::from_bps(r.min(self.config.max_rate.bps()))
            }
            _ => self.rate,
        }
    }

    /// True while the rate is ramping back up after NORMAL.
    pub fn is_ramping(&self, now: Instant) -> bool {
        self.ramp_start.is_some() && self.rate(now) < self.config.max_rate
    }

    /// CONGESTION: the rate drops by one step, not below the floor, and any ramp stops.
    pub fn on_congestion(&mut self, now: Instant) {
        self.update(now);
        let current = self.rate(now);
        let lowered = current
            .bps()
            .saturating_sub(self.config.decrease_step.bps());
        self.rate = Rate::from_bps(lowered.max(self.config.min_rate.bps()));
        self.ramp_start = None;
    }

    /// NORMAL: restore the configured rate at once, or start ramping towards it. A NORMAL
    /// during a ramp leaves the ramp as it is.
    pub fn on_normal(&mut self, now: Instant) {
        self.update(now);
        match self.config.restore {
            Restore::Immediate => {
                self.rate = self.config.max_rate;
                self.ramp_start = None;
            }
            Restore::Ramp { .. } => {
                if self.ramp_start.is_none() && self.rate < self.config.max_rate {
                    self.ramp_start = Some(now);
                }
            }
        }
    }

    /// A GCCP message for this bucket.
    pub fn on_message(&mut self, now: Instant, code: Code) {
        match code {
            Code::Congestion => self.on_congestion(now),
            Code::Normal => self.on_normal(now),
        }
    }

    /// True if a packet of `size` bytes may leave at `now`.
    pub fn can_send(&self, now: Instant, size: Bytes) -> bool {
        self.tokens_at(now) >= self.threshold(size)
    }

    /// The earliest time at or after `now` a packet of `size` bytes may leave, if the rate stays
    /// what it is at `now` (rounded up to the nanosecond).
    pub fn next_departure(&self, now: Instant, size: Bytes) -> Instant {
        let deficit = self.threshold(size).saturating_sub(self.tokens_at(now));
        if deficit <= 0 {
            return now;
        }
        let rate = i128::from(self.rate(now).bps());
        if rate == 0 {
            return Instant::MAX;
        }
        // Positive deficit and rate: ceil(deficit / rate) nanoseconds, written so that it
        // cannot overflow.
        let wait = (deficit - 1) / rate + 1;
        now + Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
    }

    /// A packet of `size` bytes left at `now`: it takes its tokens. Call it only when
    /// [`can_send`](Self::can_send) allows; otherwise the level goes further negative and the
    /// following packets wait longer.
    pub fn on_send(&mut self, now: Instant, size: Bytes) {
        self.update(now);
        self.tokens = self.tokens.saturating_sub(nanobits(size));
    }

    /// When the ramp next raises the rate, if the rate is ramping at `now`.
    pub fn next_rate_change(&self, now: Instant) -> Option<Instant> {
        let (Some(start), Restore::Ramp { interval, .. }) = (self.ramp_start, self.config.restore)
        else {
            return None;
        };
        if self.rate(now) >= self.config.max_rate {
            return None;
        }
        let n = now.saturating_since(start).as_nanos() / interval.as_nanos().max(1);
        Some(start + interval * n.saturating_add(1))
    }

    /// The bucket's level at `now`, in bytes (rounded towards zero); negative after a packet
    /// larger than the burst.
    pub fn level(&self, now: Instant) -> i64 {
        let bytes = self.tokens_at(now) / NANOBITS_PER_BYTE;
        i64::try_from(bytes).unwrap_or(if bytes < 0 { i64::MIN } else { i64::MAX })
    }

    /// The tokens a packet of `size` bytes needs before it may leave, in nanobits.
    fn threshold(&self, size: Bytes) -> i128 {
        nanobits(size.min(self.config.burst))
    }

    /// The bucket's depth at `now`, in nanobits: the burst plus just under one nanosecond's
    /// worth of the rate. A departure time is rounded up to the nanosecond, which can leave
    /// up to `rate - 1` nanobits beyond a full burst; keeping them keeps the long-run rate
    /// exact, and they never make a departure more than a nanosecond early.
    fn capacity(&self, now: Instant) -> i128 {
        let slack = i128::from(self.rate(now).bps().saturating_sub(1));
        nanobits(self.config.burst).saturating_add(slack)
    }

    /// The token level at `now`, in nanobits: the level at the last update plus what the rate
    /// added since, capped at the depth. Earlier times give the last level.
    fn tokens_at(&self, now: Instant) -> i128 {
        if now <= self.updated {
            return self.tokens;
        }
        let added = i128::try_from(self.refill(self.updated, now)).unwrap_or(i128::MAX);
        self.tokens.saturating_add(added).min(self.capacity(now))
    }

    /// Brings the level and the ramp up to `now`; time never runs backwards here.
    fn update(&mut self, now: Instant) {
        if now <= self.updated {
            return;
        }
        self.tokens = self.tokens_at(now);
        if self.ramp_start.is_some() && self.rate(now) >= self.config.max_rate {
            self.rate = self.config.max_rate;
            self.ramp_start = None;
        }
        self.updated = now;
    }

    /// Nanobits the rate adds between `from` and `to` (`from <= to`), following the ramp.
    fn refill(&self, from: Instant, to: Instant) -> u128 {
        match (self.ramp_start, self.config.restore) {
            (Some(start), Restore::Ramp { step, interval }) => {
                let ramp = RampIntegral {
                    base: self.rate.bps(),
                    step: step.bps(),
                    max: self.config.max_rate.bps(),
                    interval: interval.as_nanos(),
                };
                let a = ramp.since_start(from.saturating_since(start).as_nanos());
                let b = ramp.since_start(to.saturating_since(start).as_nanos());
                b.saturating_sub(a)
            }
            _ => u128::from(self.rate.bps()) * u128::from(to.saturating_since(from).as_nanos()),
        }
    }
}

/// `size` bytes in nanobits.
fn nanobits(size: Bytes) -> i128 {
    i128::from(size).saturating_mul(NANOBITS_PER_BYTE)
}

/// The integral of a ramping rate: `base` bit/s during the first `interval` ns, `base + step`
/// during the second, and so on, capped at `max`.
#[derive(Clone, Copy, Debug)]
struct RampIntegral {
    base: u64,
    step: u64,
    max: u64,
    interval: u64,
}

impl RampIntegral {
    /// Nanobits added from the ramp's start to `d` ns after it, in closed form: with
    /// `n = d / interval` whole intervals and `K` the intervals before the cap is reached,
    /// `interval * (n * base + step * n * (n - 1) / 2) + rem * (base + n * step)` for `n < K`,
    /// and the integral up to `K` intervals plus `max` per nanosecond after that.
    fn since_start(&self, d: u64) -> u128 {
        let interval = u128::from(self.interval.max(1));
        let base = u128::from(self.base);
        let step = u128::from(self.step.max(1));
        let max = u128::from(self.max.max(self.base));
        let d = u128::from(d);
        // Intervals until the rate reaches max: ceil((max - base) / step).
        let k = (max - base).div_ceil(step);
        let full = |n: u128| -> u128 {
            // Sum over the first n intervals of (base + i * step) * interval.
            let ramp_sum = step.saturating_mul(n.saturating_mul(n.saturating_sub(1)) / 2);
            interval.saturating_mul(n.saturating_mul(base).saturating_add(ramp_sum))
        };
        let n = d / interval;
        if n < k {
            let rem = d - n * interval;
            full(n).saturating_add(rem.saturating_mul(base + n * step))
        } else {
            let ramp_end = k.saturating_mul(interval);
            full(k).saturating_add((d - ramp_end).saturating_mul(max))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    fn config() -> LeakyBucketConfig {
        LeakyBucketConfig {
            max_rate: Rate::from_mbps(10),
            min_rate: Rate::from_kbps(2_500),
            decrease_step: Rate::from_mbps(1),
            restore: Restore::Immediate,
            burst: 1000,
        }
    }

    fn bucket(config: LeakyBucketConfig) -> LeakyBucket {
        LeakyBucket::new(config).expect("a valid configuration")
    }

    #[test]
    fn each_congestion_lowers_the_rate_by_one_step_down_to_the_floor() {
        let mut b = bucket(config());
        let mut seen = Vec::new();
        for i in 0..10 {
            b.on_congestion(ms(i));
            seen.push(b.rate(ms(i)).bps() / 1000);
        }
        assert_eq!(
            seen,
            [9000, 8000, 7000, 6000, 5000, 4000, 3000, 2500, 2500, 2500]
        );
    }

    #[test]
    fn normal_restores_the_configured_rate_at_once_when_so_configured() {
        let mut b = bucket(config());
        for i in 0..4 {
            b.on_congestion(ms(i));
        }
        assert_eq!(b.rate(ms(5)), Rate::from_mbps(6));
        b.on_normal(ms(5));
        assert_eq!(b.rate(ms(5)), Rate::from_mbps(10));
        assert!(!b.is_ramping(ms(5)));
        b.on_message(ms(6), Code::Congestion);
        assert_eq!(b.rate(ms(6)), Rate::from_mbps(9));
    }

    #[test]
    fn a_ramped_restore_adds_one_step_per_interval_up_to_the_configured_rate() {
        let mut b = bucket(LeakyBucketConfig {
            restore: Restore::Ramp {
                step: Rate::from_mbps(1),
                interval: Duration::from_millis(100),
            },
            ..config()
        });
        for _ in 0..3 {
            b.on_congestion(ms(0));
        }
        b.on_normal(ms(1_000));
        let at = |t| b.rate(ms(t)).bps() / 1_000_000;
        assert_eq!(
            [
                at(1_000),
                at(1_099),
                at(1_100),
                at(1_250),
                at(1_300),
                at(5_000)
            ],
            [7, 7, 8, 9, 10, 10]
        );
        assert_eq!(b.next_rate_change(ms(1_150)), Some(ms(1_200)));
        assert_eq!(b.next_rate_change(ms(1_300)), None);

        // A CONGESTION during the ramp lowers the rate reached so far and stops the ramp.
        b.on_congestion(ms(1_150));
        assert_eq!(b.rate(ms(1_150)), Rate::from_mbps(7));
        assert_eq!(b.rate(ms(9_000)), Rate::from_mbps(7));
        assert!(!b.is_ramping(ms(9_000)));
    }

    #[test]
    fn at_one_mbps_1000_byte_packets_leave_exactly_8_ms_apart() {
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::from_mbps(1),
            min_rate: Rate::from_kbps(100),
            ..config()
        });
        let mut t = Instant::ZERO;
        let mut departures = Vec::new();
        for _ in 0..5 {
            t = b.next_departure(t, 1000);
            assert!(b.can_send(t, 1000));
            assert!(!b.can_send(t - Duration::from_nanos(1), 1000) || t == Instant::ZERO);
            b.on_send(t, 1000);
            departures.push(t.as_nanos());
        }
        assert_eq!(
            departures,
            [0, 8_000_000, 16_000_000, 24_000_000, 32_000_000]
        );
    }

    #[test]
    fn a_spacing_that_is_not_a_whole_nanosecond_is_rounded_up_and_the_fraction_carried() {
        // 8000 bits at 3 Mbit/s: 2_666_666.67 ns.
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::from_mbps(3),
            ..config()
        });
        let mut t = Instant::ZERO;
        let mut departures = Vec::new();
        for _ in 0..7 {
            t = b.next_departure(t, 1000);
            b.on_send(t, 1000);
            departures.push(t.as_nanos());
        }
        assert_eq!(
            departures,
            [0, 2_666_667, 5_333_334, 8_000_000, 10_666_667, 13_333_334, 16_000_000]
        );
    }

    #[test]
    fn the_burst_allowance_lets_that_many_bytes_leave_back_to_back() {
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::from_mbps(1),
            min_rate: Rate::from_kbps(100),
            burst: 3000,
            ..config()
        });
        for _ in 0..3 {
            assert_eq!(b.next_departure(ms(0), 1000), ms(0));
            b.on_send(ms(0), 1000);
        }
        assert!(!b.can_send(ms(0), 1000));
        assert_eq!(b.next_departure(ms(0), 1000), ms(8));
        // An idle bucket fills up to the burst, no further.
        assert_eq!(b.level(ms(1_000)), 3000);
    }

    #[test]
    fn a_packet_larger_than_the_burst_leaves_from_a_full_bucket_and_the_next_one_waits_for_it() {
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::from_mbps(1),
            min_rate: Rate::from_kbps(100),
            burst: 1500,
            ..config()
        });
        assert!(b.can_send(ms(0), 3000));
        b.on_send(ms(0), 3000);
        assert_eq!(b.level(ms(0)), -1500);
        // 1500 bytes of debt and 1500 bytes of threshold: 3000 bytes at 1 Mbit/s.
        assert_eq!(b.next_departure(ms(0), 3000), ms(24));
    }

    #[test]
    fn a_rate_change_while_waiting_applies_from_that_moment() {
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::from_mbps(1),
            min_rate: Rate::from_kbps(100),
            decrease_step: Rate::from_kbps(500),
            ..config()
        });
        b.on_send(ms(0), 1000);
        assert_eq!(b.next_departure(ms(0), 1000), ms(8));
        // Half the bytes accrued by 4 ms; the other 500 bytes take 8 ms at 0.5 Mbit/s.
        b.on_congestion(ms(4));
        assert_eq!(b.next_departure(ms(4), 1000), ms(12));
    }

    #[test]
    fn tokens_accrue_at_the_ramping_rate() {
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::from_mbps(2),
            min_rate: Rate::from_mbps(1),
            decrease_step: Rate::from_mbps(1),
            restore: Restore::Ramp {
                step: Rate::from_kbps(500),
                interval: Duration::from_millis(4),
            },
            burst: 100_000,
        });
        b.on_congestion(ms(0));
        b.on_send(ms(0), 100_000);
        b.on_normal(ms(0));
        // 4 ms at 1 Mbit/s, 4 ms at 1.5, then 2 Mbit/s: 500 + 750 + 1000 bytes by 12 ms.
        assert_eq!(b.level(ms(12)), 2250);
        assert_eq!(b.level(ms(6)), 500 + 375);
    }

    #[test]
    fn the_closed_form_ramp_integral_matches_a_nanosecond_by_interval_sum() {
        let mut rng = Rng::new(5);
        for _ in 0..2000 {
            let ramp = RampIntegral {
                base: 1 + rng.below(5_000),
                step: 1 + rng.below(700),
                max: 5_000 + rng.below(5_000),
                interval: 1 + rng.below(50),
            };
            let d = rng.below(3_000);
            let mut expected: u128 = 0;
            let mut rate = ramp.base;
            for t in 0..d {
                if t > 0 && t % ramp.interval == 0 {
                    rate = (rate + ramp.step).min(ramp.max);
                }
                expected += u128::from(rate);
            }
            assert_eq!(ramp.since_start(d), expected, "{ramp:?} d {d}");
        }
    }

    #[test]
    fn impossible_configurations_are_rejected_with_the_reason() {
        use LeakyBucketConfigError::*;
        let c = config();
        for (bad, error) in [
            (
                LeakyBucketConfig {
                    min_rate: Rate::ZERO,
                    ..c
                },
                ZeroMinRate,
            ),
            (
                LeakyBucketConfig {
                    min_rate: Rate::from_mbps(20),
                    ..c
                },
                MinAboveMax {
                    min_rate: Rate::from_mbps(20),
                    max_rate: Rate::from_mbps(10),
                },
            ),
            (
                LeakyBucketConfig {
                    decrease_step: Rate::ZERO,
                    ..c
                },
                ZeroDecreaseStep,
            ),
            (
                LeakyBucketConfig {
                    restore: Restore::Ramp {
                        step: Rate::from_mbps(1),
                        interval: Duration::ZERO,
                    },
                    ..c
                },
                EmptyRamp,
            ),
            (LeakyBucketConfig { burst: 0, ..c }, ZeroBurst),
        ] {
            assert_eq!(LeakyBucket::new(bad).err(), Some(error));
        }
        assert!(LeakyBucketConfig::for_rate(Rate::from_mbps(10))
            .validate()
            .is_ok());
    }

    #[test]
    fn extreme_rates_sizes_and_times_never_panic() {
        let mut b = bucket(LeakyBucketConfig {
            max_rate: Rate::MAX,
            min_rate: Rate::from_bps(1),
            decrease_step: Rate::from_bps(u64::MAX / 3),
            restore: Restore::Ramp {
                step: Rate::from_bps(1),
                interval: Duration::from_nanos(1),
            },
            burst: u64::MAX,
        });
        for t in [0, u64::MAX / 2, 5, u64::MAX] {
            let now = Instant::from_nanos(t);
            b.on_send(now, u64::MAX);
            b.on_congestion(now);
            b.on_normal(now);
            let _ = b.next_departure(now, u64::MAX);
            let _ = b.level(now);
            let _ = b.next_rate_change(now);
        }
        b.tokens = i128::MIN;
        assert!(b.next_departure(ms(1), 1) > ms(1));
        assert_eq!(b.level(ms(1)), i64::MIN);
    }
}
