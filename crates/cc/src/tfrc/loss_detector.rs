//! The receiver's loss detector: turns arriving sequence numbers into a stream of packet events
//! (RFC 5348 section 5.1, with the loss time interpolation of section 5.2).
//!
//! A missing packet is declared lost once NDUPACK (3) packets with higher sequence numbers have
//! arrived (section 5.1); a packet that arrives before that is merely reordered. The detector
//! releases one [`PacketEvent`] per sequence number, in sequence order: an arrival as soon as
//! every lower sequence number is settled, a loss as soon as it is declared. Arrivals above a
//! gap therefore wait (at most NDUPACK - 1 of them) until the gap is settled. The events carry
//! times, not positions, so that a sampling layer can pass any subset of them on to the
//! interval arithmetic of [`LossHistory`](super::LossHistory).
//!
//! ECN: a packet that arrives marked CE is a congestion indication on arrival, at its arrival
//! time, without waiting for later packets (RFC 5348 sections 5.1 and 5.2, on marked packets).
//! Here it is an [`PacketEvent::Arrival`] with `ce` set; [`PacketEvent::is_congestion`] treats
//! it like a loss.

use crate::time::Instant;
use std::collections::VecDeque;

/// One data packet's fate, as the loss history sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketEvent {
    /// Sequence number `seq` arrived at `at`; `ce` if its ECN field was CE.
    Arrival {
        /// The packet's sequence number.
        seq: u64,
        /// Its arrival time.
        at: Instant,
        /// It arrived marked Congestion Experienced (RFC 3168).
        ce: bool,
    },
    /// Sequence number `seq` was declared lost; `at` is its interpolated nominal arrival time
    /// (RFC 5348 section 5.2).
    Loss {
        /// The lost packet's sequence number.
        seq: u64,
        /// Its nominal arrival time.
        at: Instant,
    },
}

impl PacketEvent {
    /// The packet's sequence number.
    pub fn seq(&self) -> u64 {
        match *self {
            PacketEvent::Arrival { seq, .. } | PacketEvent::Loss { seq, .. } => seq,
        }
    }
    /// The arrival time, or the interpolated nominal arrival time of a loss.
    pub fn time(&self) -> Instant {
        match *self {
            PacketEvent::Arrival { at, .. } | PacketEvent::Loss { at, .. } => at,
        }
    }
    /// True for a loss or a CE-marked arrival: the events that may start a loss event.
    pub fn is_congestion(&self) -> bool {
        matches!(
            self,
            PacketEvent::Loss { .. } | PacketEvent::Arrival { ce: true, .. }
        )
    }
}

/// What the detector made of one arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// A sequence number not seen before; its events are (or will be) released.
    New,
    /// A sequence number already settled: a duplicate, or a packet that arrived after it had
    /// been declared lost. The loss is not undone (RFC 5348 section 5.1 does not ask for it).
    Stale,
    /// A sequence number already waiting above a gap.
    Duplicate,
    /// A sequence number more than `max_seq_jump` above the highest seen: rejected as malformed,
    /// nothing changed.
    Rejected,
}

/// Detects losses from sequence numbers (RFC 5348 section 5.1).
#[derive(Clone, Debug)]
pub struct LossDetector {
    /// NDUPACK: later arrivals that declare a missing packet lost.
    ndupack: usize,
    /// The largest forward jump accepted.
    max_seq_jump: u64,
    /// The lowest sequence number not yet settled; `None` before the first arrival.
    next: Option<u64>,
    /// Arrivals above `next` waiting for a gap to settle, ascending by sequence number; fewer
    /// than `ndupack` between calls.
    waiting: Vec<(u64, Instant, bool)>,
    /// The highest sequence number released as an arrival, with its arrival time: S_before and
    /// T_before of the interpolation (section 5.2).
    last_arrival: Option<(u64, Instant)>,
    /// Released events not yet polled.
    ready: VecDeque<PacketEvent>,
}

impl LossDetector {
    /// A detector declaring a loss after `ndupack` later arrivals (a 0 is taken as 1) and
    /// rejecting jumps beyond `max_seq_jump` sequence numbers (a 0 is taken as 1).
    pub fn new(ndupack: u32, max_seq_jump: u64) -> LossDetector {
        LossDetector {
            ndupack: usize::try_from(ndupack.max(1)).unwrap_or(usize::MAX),
            max_seq_jump: max_seq_jump.max(1),
            next: None,
            waiting: Vec::new(),
            last_arrival: None,
            ready: VecDeque::new(),
        }
    }

    /// A data packet with sequence number `seq` arrived at `now`, marked CE if `ce`. The first
    /// arrival sets the start of the sequence space: nothing below it is ever declared lost.
    pub fn on_arrival(&mut self, now: Instant, seq: u64, ce: bool) -> Arrival {
        let next = match self.next {
            None => {
                self.next = Some(seq);
                seq
            }
            Some(next) => next,
        };
        if seq < next {
            return Arrival::Stale;
        }
        let highest = self.waiting.last().map_or(next.saturating_sub(1), |w| w.0);
        if seq > highest.saturating_add(self.max_seq_jump) {
            return Arrival::Rejected;
        }
        match self.waiting.binary_search_by_key(&seq, |w| w.0) {
            Ok(_) => return Arrival::Duplicate,
            Err(i) => self.waiting.insert(i, (seq, now, ce)),
        }
        self.settle();
        Arrival::New
    }

    /// The next released event, in sequence order.
    pub fn poll_event(&mut self) -> Option<PacketEvent> {
        self.ready.pop_front()
    }

    /// The lowest sequence number not yet settled (`None` before the first arrival).
    pub fn next_unsettled(&self) -> Option<u64> {
        self.next
    }

    /// Releases every sequence number that can be settled, lowest first.
    fn settle(&mut self) {
        let Some(mut next) = self.next else { return };
        // Each turn settles one sequence number; a gap is at most max_seq_jump long.
        while let Some(&(seq, at, ce)) = self.waiting.first() {
            if seq == next {
                self.waiting.remove(0);
                self.ready.push_back(PacketEvent::Arrival { seq, at, ce });
                self.last_arrival = Some((seq, at));
            } else if self.waiting.len() >= self.ndupack {
                // `next` is missing and NDUPACK packets above it have arrived (section 5.1).
                let at = self.interpolate(next, (seq, at));
                self.ready.push_back(PacketEvent::Loss { seq: next, at });
            } else {
                break;
            }
            next = next.saturating_add(1);
        }
        self.next = Some(next);
    }

    /// The nominal arrival time of lost packet `lost` (RFC 5348 section 5.2):
    /// T_loss = T_before + (T_after - T_before) * (S_loss - S_before) / (S_after - S_before),
    /// with S_before the last packet received below it and S_after the first received above.
    fn interpolate(&self, lost: u64, (s_after, t_after): (u64, Instant)) -> Instant {
        let Some((s_before, t_before)) = self.last_arrival else {
            return t_after;
        };
        let span = i128::from(s_after) - i128::from(s_before);
        if span <= 0 {
            return t_after;
        }
        let offset = i128::from(lost) - i128::from(s_before);
        let dt = i128::from(t_after.as_nanos()) - i128::from(t_before.as_nanos());
        let shift = dt * offset / span;
        let nanos = i128::from(t_before.as_nanos()) + shift;
        Instant::from_nanos(u64::try_from(nanos.max(0)).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    fn drain(d: &mut LossDetector) -> Vec<PacketEvent> {
        std::iter::from_fn(|| d.poll_event()).collect()
    }

    fn arrival(seq: u64, at: u64) -> PacketEvent {
        PacketEvent::Arrival {
            seq,
            at: ms(at),
            ce: false,
        }
    }

    #[test]
    fn in_order_arrivals_are_released_at_once() {
        let mut d = LossDetector::new(3, 1000);
        for seq in 10..13 {
            assert_eq!(d.on_arrival(ms(seq), seq, false), Arrival::New);
            assert_eq!(drain(&mut d), vec![arrival(seq, seq)]);
        }
    }

    #[test]
    fn a_loss_is_detected_only_after_three_later_arrivals() {
        let mut d = LossDetector::new(3, 1000);
        d.on_arrival(ms(0), 0, false);
        assert_eq!(drain(&mut d), vec![arrival(0, 0)]);
        // Packet 1 is lost; 2 and 3 arrive: not yet a loss, and they wait behind the gap.
        d.on_arrival(ms(20), 2, false);
        d.on_arrival(ms(30), 3, false);
        assert_eq!(drain(&mut d), vec![]);
        // The third later arrival declares it lost, interpolated between 0 (0 ms) and 2 (20 ms).
        d.on_arrival(ms(40), 4, false);
        assert_eq!(
            drain(&mut d),
            vec![
                PacketEvent::Loss { seq: 1, at: ms(10) },
                arrival(2, 20),
                arrival(3, 30),
                arrival(4, 40)
            ]
        );
    }

    #[test]
    fn reordering_within_three_packets_is_not_a_loss() {
        let mut d = LossDetector::new(3, 1000);
        d.on_arrival(ms(0), 0, false);
        d.on_arrival(ms(1), 2, false);
        d.on_arrival(ms(2), 3, false);
        d.on_arrival(ms(3), 1, false);
        let events = drain(&mut d);
        assert_eq!(
            events,
            vec![arrival(0, 0), arrival(1, 3), arrival(2, 1), arrival(3, 2)]
        );
        assert!(events.iter().all(|e| !e.is_congestion()));
    }

    #[test]
    fn a_burst_of_losses_is_interpolated_across_the_gap() {
        let mut d = LossDetector::new(3, 1000);
        d.on_arrival(ms(100), 0, false);
        for (seq, at) in [(4, 140), (5, 150), (6, 160)] {
            d.on_arrival(ms(at), seq, false);
        }
        let losses: Vec<_> = drain(&mut d)
            .into_iter()
            .filter(PacketEvent::is_congestion)
            .collect();
        assert_eq!(
            losses,
            vec![
                PacketEvent::Loss {
                    seq: 1,
                    at: ms(110)
                },
                PacketEvent::Loss {
                    seq: 2,
                    at: ms(120)
                },
                PacketEvent::Loss {
                    seq: 3,
                    at: ms(130)
                },
            ]
        );
    }

    #[test]
    fn late_duplicate_and_far_future_packets_change_nothing() {
        let mut d = LossDetector::new(3, 100);
        d.on_arrival(ms(0), 0, false);
        for seq in 2..5 {
            d.on_arrival(ms(seq), seq, false);
        }
        drain(&mut d);
        // 1 was declared lost; arriving now it is stale.
        assert_eq!(d.on_arrival(ms(9), 1, false), Arrival::Stale);
        assert_eq!(d.on_arrival(ms(9), 4, false), Arrival::Stale);
        d.on_arrival(ms(10), 6, false);
        assert_eq!(d.on_arrival(ms(11), 6, false), Arrival::Duplicate);
        assert_eq!(d.on_arrival(ms(12), 6 + 101, false), Arrival::Rejected);
        assert_eq!(drain(&mut d), vec![]);
        assert_eq!(d.next_unsettled(), Some(5));
    }

    #[test]
    fn a_ce_marked_arrival_is_a_congestion_event_at_its_arrival_time() {
        let mut d = LossDetector::new(3, 1000);
        d.on_arrival(ms(0), 0, false);
        d.on_arrival(ms(7), 1, true);
        let events = drain(&mut d);
        assert_eq!(
            events[1],
            PacketEvent::Arrival {
                seq: 1,
                at: ms(7),
                ce: true
            }
        );
        assert!(events[1].is_congestion());
        assert_eq!(events[1].time(), ms(7));
    }
}
