//! Simulated and real time as integer nanoseconds.
//!
//! Every algorithm in concord takes `now` as an argument; nothing here reads a clock. An
//! [`Instant`] is nanoseconds since an arbitrary origin (the start of a simulation, or the
//! moment a real-socket runtime started); a [`Duration`] is a non-negative span in nanoseconds.
//! Arithmetic saturates instead of wrapping or panicking.

use std::fmt;
use std::ops::{Add, AddAssign, Div, Mul, Sub, SubAssign};

/// Nanoseconds per second.
pub const NANOS_PER_SEC: u64 = 1_000_000_000;

/// A point in time, in nanoseconds since the origin of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

/// A non-negative span of time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(u64);

impl Instant {
    /// The origin of the run.
    pub const ZERO: Instant = Instant(0);
    /// The far future: a timer set here never fires.
    pub const MAX: Instant = Instant(u64::MAX);

    /// An instant `nanos` nanoseconds after the origin.
    pub const fn from_nanos(nanos: u64) -> Self {
        Instant(nanos)
    }
    /// An instant `micros` microseconds after the origin.
    pub const fn from_micros(micros: u64) -> Self {
        Instant(micros.saturating_mul(1_000))
    }
    /// An instant `millis` milliseconds after the origin.
    pub const fn from_millis(millis: u64) -> Self {
        Instant(millis.saturating_mul(1_000_000))
    }
    /// An instant `secs` seconds after the origin.
    pub const fn from_secs(secs: u64) -> Self {
        Instant(secs.saturating_mul(NANOS_PER_SEC))
    }
    /// An instant `secs` (fractional) seconds after the origin; negative or NaN give the origin.
    pub fn from_secs_f64(secs: f64) -> Self {
        Instant(Duration::from_secs_f64(secs).0)
    }
    /// Nanoseconds since the origin.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds since the origin, as a float (for reports and rate equations, never for ordering).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub const fn saturating_since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
    /// The span from `earlier` to `self`, or `None` if `earlier` is later.
    pub const fn checked_since(self, earlier: Instant) -> Option<Duration> {
        match self.0.checked_sub(earlier.0) {
            Some(d) => Some(Duration(d)),
            None => None,
        }
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);
    /// The longest representable span.
    pub const MAX: Duration = Duration(u64::MAX);

    /// A span of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: u64) -> Self {
        Duration(nanos)
    }
    /// A span of `micros` microseconds.
    pub const fn from_micros(micros: u64) -> Self {
        Duration(micros.saturating_mul(1_000))
    }
    /// A span of `millis` milliseconds.
    pub const fn from_millis(millis: u64) -> Self {
        Duration(millis.saturating_mul(1_000_000))
    }
    /// A span of `secs` seconds.
    pub const fn from_secs(secs: u64) -> Self {
        Duration(secs.saturating_mul(NANOS_PER_SEC))
    }
    /// A span of `secs` (fractional) seconds, rounded to the nearest nanosecond; negative or NaN
    /// give zero, values beyond the range give [`Duration::MAX`].
    pub fn from_secs_f64(secs: f64) -> Self {
        if secs.is_nan() || secs <= 0.0 {
            return Duration::ZERO;
        }
        let nanos = (secs * NANOS_PER_SEC as f64).round();
        if nanos >= u64::MAX as f64 {
            Duration::MAX
        } else {
            Duration(nanos as u64)
        }
    }
    /// The span in nanoseconds.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// The span in whole microseconds (truncated).
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    /// The span in whole milliseconds (truncated).
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    /// The span in seconds, as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// True for the zero span.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
    /// `self - rhs`, zero if `rhs` is longer.
    pub const fn saturating_sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
    /// `self * k` for a float factor (for EWMA gains and backoff), saturating; negative gives zero.
    pub fn mul_f64(self, k: f64) -> Duration {
        Duration::from_secs_f64(self.as_secs_f64() * k)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}
impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        Instant(self.0.saturating_sub(rhs.0))
    }
}
impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an earlier `self` gives zero.
    fn sub(self, rhs: Instant) -> Duration {
        self.saturating_since(rhs)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}
impl Sub for Duration {
    type Output = Duration;
    /// Saturating: a longer `rhs` gives zero.
    fn sub(self, rhs: Duration) -> Duration {
        self.saturating_sub(rhs)
    }
}
impl SubAssign for Duration {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}
impl Mul<u64> for Duration {
    type Output = Duration;
    fn mul(self, rhs: u64) -> Duration {
        Duration(self.0.saturating_mul(rhs))
    }
}
impl Div<u64> for Duration {
    type Output = Duration;
    /// Division by zero gives [`Duration::MAX`] rather than a panic.
    fn div(self, rhs: u64) -> Duration {
        match self.0.checked_div(rhs) {
            Some(d) => Duration(d),
            None => Duration::MAX,
        }
    }
}

impl fmt::Display for Duration {
    /// Human units: `250ms`, `1.5s`, `12.345us`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if n >= NANOS_PER_SEC {
            write!(f, "{}s", trim(n as f64 / 1e9))
        } else if n >= 1_000_000 {
            write!(f, "{}ms", trim(n as f64 / 1e6))
        } else if n >= 1_000 {
            write!(f, "{}us", trim(n as f64 / 1e3))
        } else {
            write!(f, "{n}ns")
        }
    }
}
impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Formats a float with at most six decimals and no trailing zeros.
pub(crate) fn trim(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_panicking() {
        assert_eq!(
            Instant::from_millis(5) - Instant::from_millis(7),
            Duration::ZERO
        );
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(Duration::from_secs(1) / 0, Duration::MAX);
        assert_eq!(Duration::MAX * 2, Duration::MAX);
    }

    #[test]
    fn float_conversion_rounds_to_the_nanosecond() {
        assert_eq!(
            Duration::from_secs_f64(0.0125),
            Duration::from_micros(12_500)
        );
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(
            Duration::from_millis(200).mul_f64(1.5),
            Duration::from_millis(300)
        );
    }

    #[test]
    fn display_uses_the_largest_whole_unit() {
        assert_eq!(Duration::from_millis(250).to_string(), "250ms");
        assert_eq!(Duration::from_millis(1500).to_string(), "1.5s");
        assert_eq!(Duration::from_nanos(12_345).to_string(), "12.345us");
        assert_eq!(Duration::from_nanos(7).to_string(), "7ns");
    }
}
