//! FQ-CoDel, the Flow Queue CoDel packet scheduler and AQM (RFC 8290).
//!
//! Arrivals are classified into one of `flows` queues (section 4.1.1), each managed by its own
//! CoDel instance ([`CodelVars`], RFC 8289). A deficit round robin serves the queues, with
//! queues that just became active ("new" queues) served before the rest ("old" queues), which
//! gives sparse flows priority (section 4.2); `quantum` bytes of credit are added per round.
//! When the packets queued in all reach the limit, the head of the queue holding the most bytes
//! is dropped (section 4.1).
//!
//! The classifier: the simulator's flow number stands in for the hash of the 5-tuple, reduced
//! modulo `flows`. With fewer flows than queues no two flows share a queue, the case the RFC's
//! perturbed hash aims for.

use super::codel::DEFAULT_TARGET;
use super::codel::{CodelParams, CodelSource, CodelVars, Dequeued, TimedFifo, DEFAULT_INTERVAL};
use super::{QueueLen, QueueLimit, QueuedPacket};
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::VecDeque;

/// Linux `sch_fq_codel`'s default limit, in packets (RFC 8290 section 5.2.1).
pub const DEFAULT_LIMIT_PACKETS: u32 = 10_240;
/// RFC 8290 section 5.2.2: 1024 flow queues.
pub const DEFAULT_FLOWS: u32 = 1024;
/// RFC 8290 section 5.2.3: a quantum of one MTU plus the link-layer header (1514 bytes).
pub const DEFAULT_QUANTUM: Bytes = 1514;

/// FQ-CoDel's parameters (names from RFC 8290 section 5.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FqCodelConfig {
    /// Hard capacity, over all queues.
    pub limit: QueueLimit,
    /// CoDel's TARGET, per queue.
    pub target: Duration,
    /// CoDel's INTERVAL, per queue.
    pub interval: Duration,
    /// Mark ECN-capable packets CE instead of dropping them (on by default in Linux).
    pub ecn: bool,
    /// Number of flow queues.
    pub flows: u32,
    /// Bytes of credit a queue receives per round.
    pub quantum: Bytes,
}

impl Default for FqCodelConfig {
    /// RFC 8290 section 5.2's defaults, with ECN as Linux enables it.
    fn default() -> FqCodelConfig {
        FqCodelConfig {
            limit: QueueLimit::Packets(DEFAULT_LIMIT_PACKETS),
            target: DEFAULT_TARGET,
            interval: DEFAULT_INTERVAL,
            ecn: true,
            flows: DEFAULT_FLOWS,
            quantum: DEFAULT_QUANTUM,
        }
    }
}

/// Which list of active queues a queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    New,
    Old,
}

/// One flow queue: its packets, its DRR credit and its CoDel state.
#[derive(Clone, Debug)]
struct FlowQueue<P> {
    fifo: TimedFifo<P>,
    /// DRR credit, in bytes; may go negative (RFC 8290 section 4.2).
    deficit: i64,
    vars: CodelVars,
    /// The list it is on, if active.
    list: Option<List>,
}

/// A flow queue's FIFO that keeps the discipline's totals as CoDel pops from it.
struct Counted<'a, P> {
    fifo: &'a mut TimedFifo<P>,
    packets: &'a mut u32,
    bytes: &'a mut Bytes,
}

impl<P: QueuedPacket> CodelSource<P> for Counted<'_, P> {
    fn pop(&mut self) -> Option<(Instant, P)> {
        let (t, p) = self.fifo.pop()?;
        *self.packets -= 1;
        *self.bytes -= p.size();
        Some((t, p))
    }

    fn backlog(&self) -> Bytes {
        self.fifo.backlog()
    }
}

/// An FQ-CoDel scheduler.
#[derive(Clone, Debug)]
pub struct FqCodel<P> {
    config: FqCodelConfig,
    queues: Vec<FlowQueue<P>>,
    new_flows: VecDeque<usize>,
    old_flows: VecDeque<usize>,
    packets: u32,
    bytes: Bytes,
    maxpacket: Bytes,
}

impl<P: QueuedPacket> FqCodel<P> {
    /// An empty scheduler (at least one queue).
    pub fn new(config: FqCodelConfig) -> FqCodel<P> {
        let n = config.flows.max(1) as usize;
        FqCodel {
            config,
            queues: (0..n)
                .map(|_| FlowQueue {
                    fifo: TimedFifo::default(),
                    deficit: 0,
                    vars: CodelVars::default(),
                    list: None,
                })
                .collect(),
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            packets: 0,
            bytes: 0,
            maxpacket: 0,
        }
    }

    /// The queue a packet of `flow` goes to (section 4.1.1).
    pub fn classify(&self, flow: u32) -> usize {
        flow as usize % self.queues.len()
    }

    /// Enqueues `p` at `now` (section 4.1): a queue that was inactive joins the new list with a
    /// quantum of credit. If the total then exceeds the limit, heads of the fattest queue are
    /// dropped (pushed on `dropped`) until it fits; the arrival itself may be among them.
    pub fn enqueue(&mut self, now: Instant, p: P, dropped: &mut Vec<P>) {
        let i = self.classify(p.flow());
        self.maxpacket = self.maxpacket.max(p.size());
        self.packets += 1;
        self.bytes += p.size();
        let q = &mut self.queues[i];
        q.fifo.push(now, p);
        if q.list.is_none() {
            q.list = Some(List::New);
            q.deficit = self.config.quantum as i64;
            self.new_flows.push_back(i);
        }
        while self.over_limit() {
            let Some(fat) = self.fattest() else { break };
            let q = &mut self.queues[fat];
            let Some((_, head)) = q.fifo.pop() else { break };
            self.packets -= 1;
            self.bytes -= head.size();
            dropped.push(head);
        }
    }

    /// The packet to transmit at `now` (section 4.2): the DRR scheduler picks a queue, whose
    /// CoDel instance may drop packets first (pushed on `dropped`).
    pub fn dequeue(&mut self, now: Instant, dropped: &mut Vec<P>) -> Dequeued<P> {
        let params = CodelParams {
            target: self.config.target,
            interval: self.config.interval,
            maxpacket: self.maxpacket,
            ecn: self.config.ecn,
        };
        loop {
            let (from_new, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i),
                (None, Some(&i)) => (false, i),
                (None, None) => {
                    return Dequeued {
                        packet: None,
                        marked: false,
                    }
                }
            };
            if self.queues[i].deficit <= 0 {
                // Out of credit: a quantum more, to the back of the old list.
                self.queues[i].deficit += self.config.quantum as i64;
                self.queues[i].list = Some(List::Old);
                self.pop_list(from_new);
                self.old_flows.push_back(i);
                continue;
            }
            let q = &mut self.queues[i];
            let mut src = Counted {
                fifo: &mut q.fifo,
                packets: &mut self.packets,
                bytes: &mut self.bytes,
            };
            let d = q.vars.dequeue(now, &mut src, &params, dropped);
            let Some(p) = d.packet.as_ref() else {
                // Empty: a new queue moves to the old list if that is not empty (so that it
                // cannot starve old queues by going empty and new again); otherwise it leaves.
                self.pop_list(from_new);
                if from_new && !self.old_flows.is_empty() {
                    self.queues[i].list = Some(List::Old);
                    self.old_flows.push_back(i);
                } else {
                    self.queues[i].list = None;
                }
                continue;
            };
            q.deficit -= p.size() as i64;
            return d;
        }
    }

    /// Packets and bytes queued, over all queues.
    pub fn len(&self) -> QueueLen {
        QueueLen {
            packets: self.packets,
            bytes: self.bytes,
        }
    }

    /// Packets and bytes in the queue of `flow`.
    pub fn flow_len(&self, flow: u32) -> QueueLen {
        let q = &self.queues[self.classify(flow)];
        QueueLen {
            packets: q.fifo.len() as u32,
            bytes: q.fifo.bytes(),
        }
    }

    fn over_limit(&self) -> bool {
        match self.config.limit {
            QueueLimit::Packets(n) => self.packets > n,
            QueueLimit::Bytes(b) => self.bytes > b,
        }
    }

    /// The queue holding the most bytes (the lowest index on a tie).
    fn fattest(&self) -> Option<usize> {
        let mut best: Option<(usize, Bytes)> = None;
        for (i, q) in self.queues.iter().enumerate() {
            let b = q.fifo.bytes();
            if b > 0 && best.is_none_or(|(_, most)| b > most) {
                best = Some((i, b));
            }
        }
        best.map(|(i, _)| i)
    }

    fn pop_list(&mut self, from_new: bool) {
        if from_new {
            self.new_flows.pop_front();
        } else {
            self.old_flows.pop_front();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::codel::tests::{pkt, Pkt};
    use super::*;

    fn of(flow: u32, id: u32, size: Bytes) -> Pkt {
        Pkt {
            flow,
            size,
            ..pkt(id)
        }
    }

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    fn fq(config: FqCodelConfig) -> FqCodel<Pkt> {
        FqCodel::new(config)
    }

    fn next(q: &mut FqCodel<Pkt>, now: Instant) -> Option<u32> {
        let mut dropped = Vec::new();
        let d = q.dequeue(now, &mut dropped);
        assert!(dropped.is_empty(), "no CoDel drops expected here");
        d.packet.map(|p| p.id)
    }

    #[test]
    fn a_new_flow_is_served_before_an_old_backlogged_one() {
        let mut q = fq(FqCodelConfig::default());
        let mut dropped = Vec::new();
        for id in 0..4 {
            q.enqueue(ms(0), of(1, id, 1500), &mut dropped);
        }
        // Flow 1 sends one packet (credit 1514 - 1500 = 14 left), then its second: credit -1486.
        assert_eq!(next(&mut q, ms(0)), Some(0));
        assert_eq!(next(&mut q, ms(0)), Some(1));
        // Out of credit: it moves to the old list. A sparse flow arrives and goes first.
        q.enqueue(ms(0), of(2, 100, 100), &mut dropped);
        assert_eq!(next(&mut q, ms(0)), Some(100));
        assert_eq!(next(&mut q, ms(0)), Some(2));
        assert!(dropped.is_empty());
    }

    #[test]
    fn deficit_round_robin_gives_two_backlogged_flows_a_quantum_each_per_round() {
        let mut q = fq(FqCodelConfig {
            quantum: 3000,
            ..FqCodelConfig::default()
        });
        let mut dropped = Vec::new();
        for id in 0..6 {
            q.enqueue(ms(0), of(1, id, 1000), &mut dropped);
            q.enqueue(ms(0), of(2, 10 + id, 1000), &mut dropped);
        }
        let order: Vec<u32> = (0..12).filter_map(|_| next(&mut q, ms(0))).collect();
        // Each queue sends three 1000-byte packets per 3000-byte quantum.
        assert_eq!(order, vec![0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15]);
    }

    #[test]
    fn a_new_queue_that_empties_moves_to_the_old_list_when_old_queues_wait() {
        let mut q = fq(FqCodelConfig::default());
        let mut dropped = Vec::new();
        for id in 0..3 {
            q.enqueue(ms(0), of(1, id, 1500), &mut dropped);
        }
        next(&mut q, ms(0));
        next(&mut q, ms(0)); // flow 1 now negative credit
        q.enqueue(ms(0), of(2, 100, 100), &mut dropped);
        assert_eq!(next(&mut q, ms(0)), Some(100));
        // Flow 2 is empty and old queues wait: it goes to the old list, not away.
        assert_eq!(next(&mut q, ms(0)), Some(2));
        assert_eq!(q.queues[2].list, Some(List::Old));
        // Now both are empty: the next dequeue removes them and returns nothing.
        assert_eq!(next(&mut q, ms(0)), None);
        assert_eq!(q.queues[1].list, None);
        assert_eq!(q.queues[2].list, None);
        assert!(q.new_flows.is_empty() && q.old_flows.is_empty());
    }

    #[test]
    fn over_the_limit_the_head_of_the_fattest_queue_is_dropped() {
        let mut q = fq(FqCodelConfig {
            limit: QueueLimit::Packets(4),
            ..FqCodelConfig::default()
        });
        let mut dropped = Vec::new();
        for id in 0..3 {
            q.enqueue(ms(0), of(1, id, 1500), &mut dropped);
        }
        q.enqueue(ms(0), of(2, 10, 100), &mut dropped);
        assert!(dropped.is_empty());
        q.enqueue(ms(0), of(2, 11, 100), &mut dropped);
        assert_eq!(dropped.iter().map(|p| p.id).collect::<Vec<_>>(), vec![0]);
        assert_eq!(
            q.len(),
            QueueLen {
                packets: 4,
                bytes: 3200
            }
        );
        assert_eq!(q.flow_len(1).packets, 2);
    }

    #[test]
    fn each_queue_runs_its_own_codel_instance() {
        let mut q = fq(FqCodelConfig {
            ecn: false,
            ..FqCodelConfig::default()
        });
        let mut dropped = Vec::new();
        for id in 0..20 {
            q.enqueue(ms(0), of(1, id, 1500), &mut dropped);
        }
        // Flow 1's head waited 6 ms: its CoDel starts the interval clock. Two packets use up
        // its credit.
        q.dequeue(ms(6), &mut dropped);
        q.dequeue(ms(6), &mut dropped);
        assert_eq!(q.queues[1].vars.first_above_time, Some(ms(106)));
        // A fresh packet of flow 2 sees no delay: its instance is untouched.
        q.enqueue(ms(50), of(2, 100, 1500), &mut dropped);
        assert_eq!(
            q.dequeue(ms(50), &mut dropped).packet.map(|p| p.id),
            Some(100)
        );
        assert_eq!(q.queues[2].vars.first_above_time, None);
        assert!(dropped.is_empty());
    }
}
