//! Lazy timers: at most one pending event per timer.
//!
//! An agent's deadline moves often (a TCP sender's retransmission timer on every ACK). Rather
//! than cancel and re-insert an event each time, the simulator keeps the instant of the one
//! pending event in an `Option<Instant>` slot, pushes a new event only when the deadline moves
//! earlier, and when an event fires checks the agent's current deadline (re-arming if it moved
//! later).

use concord_cc::time::Instant;

/// Arms the timer in `slot` for `at` if no event is pending or the pending one is later; returns
/// true if it did, and the caller then pushes an event at `at`.
#[inline]
pub fn arm_earlier(slot: &mut Option<Instant>, at: Instant) -> bool {
    if slot.is_none_or(|armed| at < armed) {
        *slot = Some(at);
        true
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_timer_arms_at_the_deadline() {
        let mut slot = None;
        assert!(arm_earlier(&mut slot, Instant::from_millis(5)));
        assert_eq!(slot, Some(Instant::from_millis(5)));
    }

    #[test]
    fn a_later_or_equal_deadline_reuses_the_pending_event() {
        let mut slot = Some(Instant::from_millis(5));
        assert!(!arm_earlier(&mut slot, Instant::from_millis(5)));
        assert!(!arm_earlier(&mut slot, Instant::from_millis(9)));
        assert_eq!(slot, Some(Instant::from_millis(5)));
    }

    #[test]
    fn an_earlier_deadline_arms_a_new_event() {
        let mut slot = Some(Instant::from_millis(5));
        assert!(arm_earlier(&mut slot, Instant::from_millis(2)));
        assert_eq!(slot, Some(Instant::from_millis(2)));
    }
}
