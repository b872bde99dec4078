//! What a retransmission timeout fired on: the connection's state when the timer expired
//! (RFC 6298 section 5.4), so that timeouts on lost data and timeouts on nothing lost can be
//! counted apart.
//!
//! The classes are those `bench/ns3/validate.cc` counts in ns-3, in the same order of
//! precedence, so that the two simulators' timeouts can be tabled side by side:
//!
//! 1. the receiver already holds the segment at snd.una (its RCV.NXT is past it): nothing was
//!    lost, the ACK is held by the receiver's delayed-ACK timer (RFC 5681 section 4.2) or is
//!    still on its way; only a driver that sees both ends can tell;
//! 2. the sender is in fast recovery (RFC 6582, RFC 6675): a retransmission, or a later hole,
//!    was lost;
//! 3. the sender is still recovering from an earlier timeout (the data outstanding then is not
//!    all acknowledged): the retransmission after that timeout was lost again;
//! 4. one or two duplicate ACKs arrived, too few for fast retransmit (RFC 5681 section 3.2): a
//!    loss near the tail of the window;
//! 5. no duplicate ACK: the whole tail of the window, or every ACK for it, was lost.

/// Why the retransmission timer expired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutCause {
    /// The receiver already held the segment at snd.una: a spurious timeout.
    ReceiverHeld,
    /// The sender was in fast recovery.
    InRecovery,
    /// The sender was recovering from an earlier timeout.
    Repeat,
    /// One or two duplicate ACKs had arrived (fewer than the fast-retransmit threshold).
    Disorder,
    /// No duplicate ACK had arrived.
    Open,
}

/// Retransmission timeouts counted by [`TimeoutCause`]; the five counts add up to the
/// timeouts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimeoutCauses {
    /// Timeouts whose segment the receiver already held.
    pub receiver_held: u64,
    /// Timeouts in fast recovery.
    pub in_recovery: u64,
    /// Timeouts while recovering from an earlier timeout.
    pub repeat: u64,
    /// Timeouts after one or two duplicate ACKs.
    pub disorder: u64,
    /// Timeouts after no duplicate ACK.
    pub open: u64,
}

impl TimeoutCauses {
    /// Counts one timeout of cause `cause`.
    pub fn count(&mut self, cause: TimeoutCause) {
        let n = match cause {
            TimeoutCause::ReceiverHeld => &mut self.receiver_held,
            TimeoutCause::InRecovery => &mut self.in_recovery,
            TimeoutCause::Repeat => &mut self.repeat,
            TimeoutCause::Disorder => &mut self.disorder,
            TimeoutCause::Open => &mut self.open,
        };
        *n += 1;
    }

    /// The timeouts counted since `earlier` (an earlier reading of the same counters).
    pub fn since(&self, earlier: &TimeoutCauses) -> TimeoutCauses {
        TimeoutCauses {
            receiver_held: self.receiver_held.saturating_sub(earlier.receiver_held),
            in_recovery: self.in_recovery.saturating_sub(earlier.in_recovery),
            repeat: self.repeat.saturating_sub(earlier.repeat),
            disorder: self.disorder.saturating_sub(earlier.disorder),
            open: self.open.saturating_sub(earlier.open),
        }
    }

    /// All the timeouts counted.
    pub fn total(&self) -> u64 {
        self.receiver_held + self.in_recovery + self.repeat + self.disorder + self.open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cause_is_counted_in_its_own_field_and_the_total() {
        let mut c = TimeoutCauses::default();
        c.count(TimeoutCause::ReceiverHeld);
        c.count(TimeoutCause::ReceiverHeld);
        c.count(TimeoutCause::InRecovery);
        c.count(TimeoutCause::Repeat);
        c.count(TimeoutCause::Disorder);
        c.count(TimeoutCause::Open);
        c.count(TimeoutCause::Open);
        c.count(TimeoutCause::Open);
        assert_eq!(
            c,
            TimeoutCauses {
                receiver_held: 2,
                in_recovery: 1,
                repeat: 1,
                disorder: 1,
                open: 3,
            }
        );
        assert_eq!(c.total(), 8);
    }

    #[test]
    fn since_subtracts_an_earlier_reading_field_by_field() {
        let later = TimeoutCauses {
            receiver_held: 5,
            in_recovery: 4,
            repeat: 3,
            disorder: 2,
            open: 1,
        };
        let earlier = TimeoutCauses {
            receiver_held: 1,
            in_recovery: 4,
            repeat: 0,
            disorder: 1,
            open: 0,
        };
        assert_eq!(
            later.since(&earlier),
            TimeoutCauses {
                receiver_held: 4,
                in_recovery: 0,
                repeat: 3,
                disorder: 1,
                open: 1,
            }
        );
    }
}
