//! The real runtime's clock: a monotonic clock mapped to [`concord_cc::Instant`], integer
//! nanoseconds since the clock was made.

use concord_cc::Instant;

/// Maps the host's monotonic clock to the algorithms' [`Instant`]: nanoseconds since
/// [`Clock::new`].
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    /// The monotonic reading that is [`Instant::ZERO`].
    origin: std::time::Instant,
}

/// Reads the host's monotonic clock. The only place in concord that does: the algorithms take
/// time as an argument, and the runtime reads it here.
#[allow(clippy::disallowed_methods)] // the real runtime's one clock read (DESIGN.md rule 1)
fn monotonic() -> std::time::Instant {
    std::time::Instant::now()
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock whose zero is now.
    pub fn new() -> Clock {
        Clock {
            origin: monotonic(),
        }
    }

    /// Now, in nanoseconds since the clock's zero (saturating after 584 years).
    pub fn now(&self) -> Instant {
        let elapsed = monotonic().saturating_duration_since(self.origin);
        Instant::from_nanos(u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX))
    }

    /// The tokio timer instant of `at`, or `None` if it lies beyond what the timer can hold.
    pub fn deadline(&self, at: Instant) -> Option<tokio::time::Instant> {
        tokio::time::Instant::from_std(self.origin)
            .checked_add(std::time::Duration::from_nanos(at.as_nanos()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_moves_forward_and_maps_back_to_the_timer() {
        let c = Clock::new();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        let d = c
            .deadline(Instant::from_millis(5))
            .expect("a near deadline fits");
        let base = c.deadline(Instant::ZERO).expect("the origin fits");
        assert_eq!(d - base, std::time::Duration::from_millis(5));
        // The far future may or may not fit the timer; it must not panic.
        let _ = c.deadline(Instant::MAX);
    }
}
