//! Pacing credit: a token bucket that fills at the rate CP suggests, so that an endpoint sends
//! at that rate whatever its transport (slides, "TCP (C-TCP) ... relies on the underlying CP
//! protocol to ... suggest an appropriate sending rate").
//!
//! Credit is kept in exact integer units (bit/s times nanoseconds; one byte is 8 * 10^9 of
//! them), so no rounding accumulates however often it is refilled. It is capped at a burst
//! size; it starts empty.

use crate::time::{Instant, NANOS_PER_SEC};
use crate::units::{Bytes, Rate};

/// Credit units per byte: 8 bits * 10^9 ns/s.
const UNITS_PER_BYTE: u128 = 8 * NANOS_PER_SEC as u128;

/// A pacing credit at a suggested rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacingCredit {
    /// The rate credit accrues at.
    rate: Rate,
    /// The most credit kept, in bytes.
    burst: Bytes,
    /// Credit, in bit/s * ns.
    credit: u128,
    /// When credit was last brought up to date.
    last: Instant,
}

impl PacingCredit {
    /// Empty credit at `now`, filling at `rate` up to `burst` bytes.
    pub fn new(rate: Rate, burst: Bytes, now: Instant) -> PacingCredit {
        PacingCredit {
            rate,
            burst,
            credit: 0,
            last: now,
        }
    }

    /// Brings the credit up to `now` (a `now` before the last update changes nothing).
    fn refill(&mut self, now: Instant) {
        if now <= self.last {
            return;
        }
        let elapsed = u128::from((now - self.last).as_nanos());
        let cap = u128::from(self.burst).saturating_mul(UNITS_PER_BYTE);
        let gained = u128::from(self.rate.bps()).saturating_mul(elapsed);
        self.credit = self.credit.saturating_add(gained).min(cap);
        self.last = now;
    }

    /// Changes the rate at `now`: credit accrued until `now` at the old rate is kept.
    pub fn set_rate(&mut self, now: Instant, rate: Rate) {
        self.refill(now);
        self.rate = rate;
    }

    /// The rate credit accrues at.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The most credit kept, in bytes.
    pub fn burst(&self) -> Bytes {
        self.burst
    }

    /// Whole bytes of credit at `now`.
    pub fn available(&mut self, now: Instant) -> Bytes {
        self.refill(now);
        u64::try_from(self.credit / UNITS_PER_BYTE).unwrap_or(u64::MAX)
    }

    /// Spends `len` bytes of credit at `now` if there are that many; returns whether it did.
    pub fn consume(&mut self, now: Instant, len: Bytes) -> bool {
        self.refill(now);
        let need = u128::from(len).saturating_mul(UNITS_PER_BYTE);
        if self.credit >= need {
            self.credit -= need;
            true
        } else {
            false
        }
    }

    /// Spends and returns up to `max` whole bytes of credit at `now`.
    pub fn take(&mut self, now: Instant, max: Bytes) -> Bytes {
        let n = self.available(now).min(max);
        self.credit -= u128::from(n) * UNITS_PER_BYTE;
        n
    }

    /// The earliest time `len` bytes of credit are there, at the current rate: the last update
    /// time if they already are; [`Instant::MAX`] if they never will be (rate zero, or `len`
    /// above the burst size).
    pub fn next_time(&self, len: Bytes) -> Instant {
        let need = u128::from(len).saturating_mul(UNITS_PER_BYTE);
        if self.credit >= need {
            return self.last;
        }
        if len > self.burst || self.rate == Rate::ZERO {
            return Instant::MAX;
        }
        let wait = (need - self.credit).div_ceil(u128::from(self.rate.bps()));
        match u64::try_from(wait) {
            Ok(ns) => self.last + crate::time::Duration::from_nanos(ns),
            Err(_) => Instant::MAX,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    #[test]
    fn credit_accrues_exactly_at_the_rate_up_to_the_burst() {
        // 800 kbit/s = 100 bytes per ms.
        let mut p = PacingCredit::new(Rate::from_kbps(800), 1500, ms(0));
        assert_eq!(p.next_time(1000), ms(10));
        assert!(!p.consume(ms(9), 1000));
        assert_eq!(p.available(ms(9)), 900);
        assert!(p.consume(ms(10), 1000));
        assert_eq!(p.available(ms(10)), 0);
        // Idle for a second: capped at the burst.
        assert_eq!(p.available(ms(1010)), 1500);
        assert_eq!(p.take(ms(1010), 1000), 1000);
        assert_eq!(p.next_time(1000), ms(1015));
        assert_eq!(p.next_time(2000), Instant::MAX);
    }

    #[test]
    fn fractions_of_a_byte_are_not_lost_between_refills() {
        // 1 bit/s refilled every 100 ms: after 8 s exactly one byte.
        let mut p = PacingCredit::new(Rate::from_bps(1), 10, ms(0));
        for k in 1..80 {
            assert_eq!(p.available(ms(100 * k)), 0);
        }
        assert_eq!(p.available(ms(8000)), 1);
    }

    #[test]
    fn a_rate_change_keeps_the_credit_accrued_at_the_old_rate() {
        let mut p = PacingCredit::new(Rate::from_kbps(800), 10_000, ms(0));
        p.set_rate(ms(5), Rate::from_kbps(1600));
        // 500 bytes by 5 ms, then 200 bytes per ms.
        assert_eq!(
            p.next_time(1000),
            ms(5) + crate::time::Duration::from_micros(2500)
        );
        p.set_rate(ms(6), Rate::ZERO);
        assert_eq!(p.available(ms(100)), 700);
        assert_eq!(p.next_time(1000), Instant::MAX);
    }
}
