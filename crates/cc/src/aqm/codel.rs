//! CoDel, Controlled Delay (RFC 8289): a queue that drops (or marks) at dequeue when the
//! packets' sojourn time has stayed above `target` for at least `interval`.
//!
//! The control law follows the pseudocode of RFC 8289 section 5 line by line
//! ([`CodelVars::dequeue`] is its `dequeue`, [`CodelVars::dodequeue`] its `dodequeue`,
//! [`control_law`] its `control_law`). ECN follows Linux's `codel_impl.h`: where the pseudocode
//! drops, an ECN-enabled queue marks an ECN-capable packet CE and forwards it instead (RFC 8289
//! section 5.4 leaves marking to the implementation).
//!
//! [`CodelQueue`] is the single-queue discipline: a FIFO with a hard limit at enqueue and the
//! control law at dequeue. FQ-CoDel ([`super::fq_codel`]) reuses [`CodelVars`] per flow queue.

use super::{QueueLen, QueueLimit, QueuedPacket};
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::VecDeque;

/// RFC 8289 section 4.4: a 5 ms target suits Internet paths.
pub const DEFAULT_TARGET: Duration = Duration::from_millis(5);
/// RFC 8289 section 4.3: a 100 ms interval, a typical worst-case RTT.
pub const DEFAULT_INTERVAL: Duration = Duration::from_millis(100);
/// Linux `sch_codel`'s default limit, in packets.
pub const DEFAULT_LIMIT_PACKETS: u32 = 1000;

/// CoDel's parameters (names from RFC 8289).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelConfig {
    /// Hard capacity: arrivals beyond it are dropped at enqueue (a forced drop).
    pub limit: QueueLimit,
    /// TARGET: the acceptable standing sojourn time.
    pub target: Duration,
    /// INTERVAL: how long the sojourn time must stay above `target` before a drop, and the
    /// base of the control law's drop spacing.
    pub interval: Duration,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
}

impl Default for CodelConfig {
    /// RFC 8289's target and interval, Linux's 1000-packet limit, no ECN (Linux's default).
    fn default() -> CodelConfig {
        CodelConfig {
            limit: QueueLimit::Packets(DEFAULT_LIMIT_PACKETS),
            target: DEFAULT_TARGET,
            interval: DEFAULT_INTERVAL,
            ecn: false,
        }
    }
}

/// RFC 8289 section 5.5, `control_law`: the next drop time `t + interval / sqrt(count)`, in
/// whole nanoseconds (rounded down).
pub fn control_law(t: Instant, interval: Duration, count: u32) -> Instant {
    let spacing = interval.as_nanos() as f64 / f64::from(count.max(1)).sqrt();
    t + Duration::from_nanos(spacing as u64)
}

/// The queue the control law dequeues from: the single FIFO of [`CodelQueue`], or one flow
/// queue of FQ-CoDel.
pub trait CodelSource<P> {
    /// Removes the head packet and returns it with its enqueue time (RFC 8289's `tstamp`).
    fn pop(&mut self) -> Option<(Instant, P)>;
    /// Bytes still queued (RFC 8289's `bytes()`), after the last pop.
    fn backlog(&self) -> Bytes;
}

/// What one dequeue produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dequeued<P> {
    /// The packet to transmit, if any remains.
    pub packet: Option<P>,
    /// True if `packet` was marked CE by this dequeue.
    pub marked: bool,
}

/// The control state of one CoDel queue: RFC 8289 section 5's member variables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CodelVars {
    /// `first_above_time_`: when the sojourn time, above target since then, may first allow a
    /// drop; `None` while it is below (the pseudocode's 0).
    pub first_above_time: Option<Instant>,
    /// `drop_next_`: the time of the next drop while dropping.
    pub drop_next: Instant,
    /// `count_`: drops since entering the dropping state.
    pub count: u32,
    /// `lastcount_`: `count` when the dropping state was last entered.
    pub lastcount: u32,
    /// `dropping_`: in the dropping state.
    pub dropping: bool,
}

/// The settings the control law reads on every dequeue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodelParams {
    /// TARGET.
    pub target: Duration,
    /// INTERVAL.
    pub interval: Duration,
    /// `maxpacket_`: the largest packet seen, in bytes; a backlog of at most this much never
    /// counts as above target (RFC 8289 section 5.3).
    pub maxpacket: Bytes,
    /// Mark instead of drop.
    pub ecn: bool,
}

impl CodelVars {
    /// RFC 8289 `dodequeue`: pops the head and says whether the sojourn time has been above
    /// target for at least an interval (`ok_to_drop`).
    pub fn dodequeue<P, S: CodelSource<P>>(
        &mut self,
        now: Instant,
        src: &mut S,
        params: &CodelParams,
    ) -> (Option<P>, bool) {
        let Some((tstamp, p)) = src.pop() else {
            // The queue is empty: it cannot be above target.
            self.first_above_time = None;
            return (None, false);
        };
        let sojourn_time = now.saturating_since(tstamp);
        let mut ok_to_drop = false;
        if sojourn_time < params.target || src.backlog() <= params.maxpacket {
            // Went below: stay below for at least an interval.
            self.first_above_time = None;
        } else {
            match self.first_above_time {
                // Just went above: if still above an interval from now, dropping is ok.
                None => self.first_above_time = Some(now + params.interval),
                Some(t) if now >= t => ok_to_drop = true,
                Some(_) => {}
            }
        }
        (Some(p), ok_to_drop)
    }

    /// RFC 8289 `dequeue`: the packet to transmit at `now`, after the drops the control law
    /// asks for (pushed on `dropped`, oldest first).
    pub fn dequeue<P: QueuedPacket, S: CodelSource<P>>(
        &mut self,
        now: Instant,
        src: &mut S,
        params: &CodelParams,
        dropped: &mut Vec<P>,
    ) -> Dequeued<P> {
        let (mut p, ok_to_drop) = self.dodequeue(now, src, params);
        let Some(mut head) = p.take() else {
            // An empty queue ends the dropping state.
            self.dropping = false;
            return Dequeued {
                packet: None,
                marked: false,
            };
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop(s); a large backlog may need several now.
            while self.dropping && now >= self.drop_next {
                self.count = self.count.saturating_add(1);
                if params.ecn && head.is_ect() {
                    head.mark_ce();
                    self.drop_next = control_law(self.drop_next, params.interval, self.count);
                    return Dequeued {
                        packet: Some(head),
                        marked: true,
                    };
                }
                dropped.push(head);
                let (next, ok) = self.dodequeue(now, src, params);
                match next {
                    Some(n) if ok => {
                        head = n;
                        self.drop_next = control_law(self.drop_next, params.interval, self.count);
                    }
                    Some(n) => {
                        head = n;
                        self.dropping = false;
                    }
                    None => {
                        self.dropping = false;
                        return Dequeued {
                            packet: None,
                            marked: false,
                        };
                    }
                }
            }
            Dequeued {
                packet: Some(head),
                marked: false,
            }
        } else if ok_to_drop {
            let mut marked = false;
            let packet = if params.ecn && head.is_ect() {
                head.mark_ce();
                marked = true;
                Some(head)
            } else {
                dropped.push(head);
                self.dodequeue(now, src, params).0
            };
            self.dropping = true;
            // If the queue went above target soon after it last went below, resume at the
            // drop rate that controlled it then (the Linux variant, RFC 8289 section 5.6).
            let delta = self.count.saturating_sub(self.lastcount);
            self.count = 1;
            if delta > 1 && now.saturating_since(self.drop_next) < params.interval * 16 {
                self.count = delta;
            }
            self.drop_next = control_law(now, params.interval, self.count);
            self.lastcount = self.count;
            Dequeued { packet, marked }
        } else {
            Dequeued {
                packet: Some(head),
                marked: false,
            }
        }
    }
}

/// A FIFO of timestamped packets with its byte count.
#[derive(Clone, Debug)]
pub struct TimedFifo<P> {
    packets: VecDeque<(Instant, P)>,
    bytes: Bytes,
}

impl<P> Default for TimedFifo<P> {
    fn default() -> Self {
        TimedFifo {
            packets: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<P: QueuedPacket> TimedFifo<P> {
    /// Appends `p`, stamped `now`.
    pub fn push(&mut self, now: Instant, p: P) {
        self.bytes += p.size();
        self.packets.push_back((now, p));
    }

    /// Packets queued.
    pub fn len(&self) -> usize {
        self.packets.len()
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// Bytes queued.
    pub fn bytes(&self) -> Bytes {
        self.bytes
    }
}

impl<P: QueuedPacket> CodelSource<P> for TimedFifo<P> {
    fn pop(&mut self) -> Option<(Instant, P)> {
        let (t, p) = self.packets.pop_front()?;
        self.bytes -= p.size();
        Some((t, p))
    }

    fn backlog(&self) -> Bytes {
        self.bytes
    }
}

/// A CoDel queue: one FIFO, a hard limit at enqueue, the control law at dequeue.
#[derive(Clone, Debug)]
pub struct CodelQueue<P> {
    config: CodelConfig,
    fifo: TimedFifo<P>,
    vars: CodelVars,
    maxpacket: Bytes,
}

impl<P: QueuedPacket> CodelQueue<P> {
    /// An empty CoDel queue.
    pub fn new(config: CodelConfig) -> CodelQueue<P> {
        CodelQueue {
            config,
            fifo: TimedFifo::default(),
            vars: CodelVars::default(),
            maxpacket: 0,
        }
    }

    /// Enqueues `p` at `now`, or gives it back if the queue is full (RFC 8289 section 5.4's
    /// `enqueue`).
    pub fn enqueue(&mut self, now: Instant, p: P) -> Result<(), P> {
        if self.config.limit.is_full(self.len(), p.size()) {
            return Err(p);
        }
        self.maxpacket = self.maxpacket.max(p.size());
        self.fifo.push(now, p);
        Ok(())
    }

    /// The packet to transmit at `now`; packets the control law drops go on `dropped`.
    pub fn dequeue(&mut self, now: Instant, dropped: &mut Vec<P>) -> Dequeued<P> {
        let params = self.params();
        self.vars.dequeue(now, &mut self.fifo, &params, dropped)
    }

    /// The queue's length.
    pub fn len(&self) -> QueueLen {
        QueueLen {
            packets: self.fifo.len() as u32,
            bytes: self.fifo.bytes(),
        }
    }

    /// The control state.
    pub fn vars(&self) -> &CodelVars {
        &self.vars
    }

    fn params(&self) -> CodelParams {
        CodelParams {
            target: self.config.target,
            interval: self.config.interval,
            maxpacket: self.maxpacket,
            ecn: self.config.ecn,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A test packet: an id, a size, ECN capability and the CE mark, and a flow.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(crate) struct Pkt {
        pub id: u32,
        pub size: Bytes,
        pub ect: bool,
        pub ce: bool,
        pub flow: u32,
    }

    impl QueuedPacket for Pkt {
        fn size(&self) -> Bytes {
            self.size
        }
        fn is_ect(&self) -> bool {
            self.ect
        }
        fn mark_ce(&mut self) {
            self.ce = true;
        }
        fn flow(&self) -> u32 {
            self.flow
        }
    }

    pub(crate) fn pkt(id: u32) -> Pkt {
        Pkt {
            id,
            size: 1500,
            ect: false,
            ce: false,
            flow: 0,
        }
    }

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    /// A queue holding `n` packets enqueued at time zero.
    fn loaded(n: u32, ecn: bool) -> CodelQueue<Pkt> {
        let mut q = CodelQueue::new(CodelConfig {
            ecn,
            ..CodelConfig::default()
        });
        for id in 0..n {
            let mut p = pkt(id);
            p.ect = ecn;
            q.enqueue(Instant::ZERO, p)
                .unwrap_or_else(|_| panic!("room"));
        }
        q
    }

    fn ids(v: &[Pkt]) -> Vec<u32> {
        v.iter().map(|p| p.id).collect()
    }

    #[test]
    fn the_control_law_spaces_drops_by_interval_over_the_square_root_of_count() {
        let i = DEFAULT_INTERVAL;
        assert_eq!(control_law(ms(0), i, 1), ms(100));
        assert_eq!(control_law(ms(0), i, 4), ms(50));
        assert_eq!(control_law(ms(10), i, 100), ms(20));
        // 100 ms / sqrt(2) = 70_710_678.1 ns, rounded down.
        assert_eq!(control_law(ms(0), i, 2), Instant::from_nanos(70_710_678));
    }

    #[test]
    fn a_sojourn_above_target_starts_the_interval_clock_and_drops_nothing_yet() {
        let mut q = loaded(10, false);
        let mut dropped = Vec::new();
        let d = q.dequeue(ms(6), &mut dropped);
        assert_eq!(d.packet.map(|p| p.id), Some(0));
        assert!(dropped.is_empty());
        assert_eq!(q.vars().first_above_time, Some(ms(106)));
        assert!(!q.vars().dropping);
    }

    #[test]
    fn a_sojourn_below_target_clears_the_interval_clock() {
        let mut q = CodelQueue::new(CodelConfig::default());
        for id in 0..3 {
            q.enqueue(ms(100), pkt(id))
                .unwrap_or_else(|_| panic!("room"));
        }
        q.vars.first_above_time = Some(ms(150));
        let mut dropped = Vec::new();
        // A 4 ms sojourn.
        q.dequeue(ms(104), &mut dropped);
        assert_eq!(q.vars().first_above_time, None);
        assert!(dropped.is_empty());
    }

    #[test]
    fn a_backlog_of_one_maxpacket_or_less_never_counts_as_above_target() {
        let mut q = loaded(2, false);
        let mut dropped = Vec::new();
        // After popping packet 0, 1500 bytes remain: at most maxpacket.
        q.dequeue(ms(50), &mut dropped);
        assert_eq!(q.vars().first_above_time, None);
    }

    #[test]
    fn after_an_interval_above_target_the_head_is_dropped_and_dropping_starts_with_count_one() {
        let mut q = loaded(20, false);
        let mut dropped = Vec::new();
        q.dequeue(ms(6), &mut dropped); // first_above_time = 106 ms
        let d = q.dequeue(ms(106), &mut dropped);
        assert_eq!(ids(&dropped), vec![1]);
        assert_eq!(d.packet.map(|p| p.id), Some(2));
        let v = q.vars();
        assert!(v.dropping);
        assert_eq!(v.count, 1);
        assert_eq!(v.lastcount, 1);
        assert_eq!(v.drop_next, ms(206));
    }

    #[test]
    fn while_dropping_the_next_drop_comes_at_drop_next_and_count_rises() {
        let mut q = loaded(40, false);
        let mut dropped = Vec::new();
        q.dequeue(ms(6), &mut dropped);
        q.dequeue(ms(106), &mut dropped); // drops 1, forwards 2, drop_next 206 ms
        let d = q.dequeue(ms(150), &mut dropped); // before drop_next: forward
        assert_eq!(d.packet.map(|p| p.id), Some(3));
        assert_eq!(ids(&dropped), vec![1]);
        let d = q.dequeue(ms(206), &mut dropped);
        assert_eq!(ids(&dropped), vec![1, 4]);
        assert_eq!(d.packet.map(|p| p.id), Some(5));
        assert_eq!(q.vars().count, 2);
        // 206 ms + 100 ms / sqrt(2).
        assert_eq!(
            q.vars().drop_next,
            ms(206) + Duration::from_nanos(70_710_678)
        );
    }

    #[test]
    fn a_large_overdue_backlog_drops_several_packets_in_one_dequeue() {
        let mut q = loaded(40, false);
        let mut dropped = Vec::new();
        q.dequeue(ms(6), &mut dropped);
        q.dequeue(ms(106), &mut dropped); // count 1, drop_next 206
                                          // At 400 ms: drop (count 2, next 206+70.71=276.7), drop (count 3, next +57.74=334.4),
                                          // drop (count 4, next +50 = 384.4), drop (count 5, next +44.72=429.2 > 400): stop.
        let d = q.dequeue(ms(400), &mut dropped);
        assert_eq!(ids(&dropped), vec![1, 3, 4, 5, 6]);
        assert_eq!(d.packet.map(|p| p.id), Some(7));
        assert_eq!(q.vars().count, 5);
        let expected = [2u32, 3, 4, 5]
            .iter()
            .fold(ms(206), |t, &c| control_law(t, DEFAULT_INTERVAL, c));
        assert_eq!(q.vars().drop_next, expected);
    }

    #[test]
    fn a_sojourn_below_target_while_dropping_leaves_the_dropping_state() {
        let mut q = loaded(20, false);
        let mut dropped = Vec::new();
        q.dequeue(ms(6), &mut dropped);
        q.dequeue(ms(106), &mut dropped);
        // Drain to one packet left, then a fresh arrival.
        let mut fresh = CodelQueue::new(CodelConfig::default());
        fresh.vars = *q.vars();
        fresh.maxpacket = 1500;
        for id in 0..3 {
            fresh
                .enqueue(ms(300), pkt(id))
                .unwrap_or_else(|_| panic!("room"));
        }
        let d = fresh.dequeue(ms(302), &mut dropped);
        assert_eq!(d.packet.map(|p| p.id), Some(0));
        assert!(!fresh.vars().dropping);
    }

    #[test]
    fn re_entering_soon_after_leaving_resumes_at_the_previous_drop_rate() {
        let mut q: CodelQueue<Pkt> = CodelQueue::new(CodelConfig::default());
        q.vars = CodelVars {
            first_above_time: Some(ms(1000)),
            drop_next: ms(990),
            count: 9,
            lastcount: 2,
            dropping: false,
        };
        for id in 0..5 {
            q.enqueue(ms(900), pkt(id))
                .unwrap_or_else(|_| panic!("room"));
        }
        let mut dropped = Vec::new();
        let d = q.dequeue(ms(1000), &mut dropped);
        assert_eq!(ids(&dropped), vec![0]);
        assert_eq!(d.packet.map(|p| p.id), Some(1));
        // delta = 9 - 2 = 7 > 1 and now - drop_next = 10 ms < 16 intervals: count = 7.
        assert_eq!(q.vars().count, 7);
        assert_eq!(q.vars().lastcount, 7);
        assert_eq!(
            q.vars().drop_next,
            control_law(ms(1000), DEFAULT_INTERVAL, 7)
        );
    }

    #[test]
    fn re_entering_long_after_leaving_restarts_at_count_one() {
        let mut q: CodelQueue<Pkt> = CodelQueue::new(CodelConfig::default());
        q.vars = CodelVars {
            first_above_time: Some(ms(5000)),
            drop_next: ms(1000),
            count: 9,
            lastcount: 2,
            dropping: false,
        };
        for id in 0..5 {
            q.enqueue(ms(4900), pkt(id))
                .unwrap_or_else(|_| panic!("room"));
        }
        let mut dropped = Vec::new();
        q.dequeue(ms(5000), &mut dropped);
        // now - drop_next = 4 s >= 16 intervals = 1.6 s.
        assert_eq!(q.vars().count, 1);
        assert_eq!(q.vars().drop_next, ms(5100));
    }

    #[test]
    fn with_ecn_an_ect_packet_is_marked_and_forwarded_where_it_would_be_dropped() {
        let mut q = loaded(20, true);
        let mut dropped = Vec::new();
        q.dequeue(ms(6), &mut dropped);
        let d = q.dequeue(ms(106), &mut dropped);
        assert!(dropped.is_empty());
        assert!(d.marked);
        let p = d.packet.unwrap_or_else(|| panic!("a packet"));
        assert_eq!((p.id, p.ce), (1, true));
        assert!(q.vars().dropping);
        assert_eq!(q.vars().drop_next, ms(206));
        // The next mark at drop_next, with count 2.
        q.dequeue(ms(150), &mut dropped);
        let d = q.dequeue(ms(206), &mut dropped);
        assert!(d.marked);
        assert_eq!(q.vars().count, 2);
        assert_eq!(
            q.vars().drop_next,
            ms(206) + Duration::from_nanos(70_710_678)
        );
    }

    #[test]
    fn an_empty_queue_ends_the_dropping_state() {
        let mut q = loaded(20, false);
        let mut dropped = Vec::new();
        q.dequeue(ms(6), &mut dropped);
        q.dequeue(ms(106), &mut dropped);
        while q.len().packets > 0 {
            q.dequeue(ms(107), &mut dropped);
        }
        let d = q.dequeue(ms(108), &mut dropped);
        assert_eq!(d.packet, None);
        assert!(!q.vars().dropping);
        assert_eq!(q.vars().first_above_time, None);
    }

    #[test]
    fn a_full_queue_refuses_the_arrival() {
        let mut q: CodelQueue<Pkt> = CodelQueue::new(CodelConfig {
            limit: QueueLimit::Packets(2),
            ..CodelConfig::default()
        });
        assert!(q.enqueue(ms(0), pkt(0)).is_ok());
        assert!(q.enqueue(ms(0), pkt(1)).is_ok());
        assert_eq!(q.enqueue(ms(0), pkt(2)).map_err(|p| p.id), Err(2));
        assert_eq!(q.len().packets, 2);
        assert_eq!(q.len().bytes, 3000);
    }
}
