//! A packet on a propagation lane, and what it will do at the far end, found when it leaves.
//!
//! Routes are static and a packet's destination does not change on the wire, so when the far
//! end of a hop will send a packet straight on (no stage there, not its destination, not a
//! hop-by-hop control message), the channel it leaves by is known when it leaves this hop: it
//! is looked up then, while the packet is in cache, and the lane holds that channel in place of
//! the one crossed. An arrival then prefetches what the lane's next arrival reads (its packet
//! and the channel it leaves by), so that it finds them in cache: in a large network these are
//! cold lines among thousands.
//!
//! A packet whose far end is its destination (no stage there, not a control message) has its
//! flow's entry fetched when it leaves. With [`AGENTS_READ_AHEAD_FLOWS`] flows or more it also
//! crosses with its flow in place of the channel, so that when it heads the lane the flow's
//! transport state, behind a pointer in that entry, is fetched too. With
//! [`PIPELINED_READ_AHEAD_FLOWS`] flows or more the read-ahead is a pipeline of two stages: the
//! packet two places behind the lane's head has its flow's transport state and the channel its
//! host answers by fetched, and the next delivery what it writes.
//!
//! A packet sent on this way is offered without its upstream neighbour, which only a GCCA
//! router port reads: in a network with such a port every arrival takes the full path.

use super::Simulator;
use crate::flow::Agent;
use crate::packet::{FlowId, NodeId};
use crate::routing::NO_ROUTE;
use crate::wire::Slot;
use concord_cc::time::Instant;

/// Flows from which an arrival prefetches the transport state of the next packet its lane
/// delivers. A TCP flow's state takes about 1.4 KB (its entry and the state behind its
/// pointer); below a thousand flows it stays within the 1 MiB second-level cache of a current
/// core, and the hint is only work (read ahead always: 0.4% more instructions on the 64-flow
/// and the 8-flow benchmarks).
pub(super) const AGENTS_READ_AHEAD_FLOWS: usize = 1_000;

/// Flows from which the read-ahead reaches a stage further: the TCP timers due next
/// (`timers_ahead.rs`), the transport state of the packet after the next on a lane and the
/// channel its host answers by, and what a delivery writes besides the transport state (the
/// delay counts, the goodput bin, the oldest segment in flight). With the state of 1,000 flows
/// (about 18 MB with their hosts and channels) in a 32 MB last-level cache the extra hints are
/// only work (1.4% more CPU at 1,000 flows, 2.9% less at 2,000, 6.8% less at 3,000).
pub(super) const PIPELINED_READ_AHEAD_FLOWS: usize = 2_000;

/// The bit of [`Crossing::hop`] that marks the channel the far end sends the packet on by.
const ONWARD: u32 = 1 << 31;
/// The bit of [`Crossing::hop`] that marks the flow of a packet delivered at the far end.
const DELIVER: u32 = 1 << 30;
/// With [`DELIVER`], the bit that marks the packet as its flow's feedback (an ACK).
const FEEDBACK: u32 = 1 << 29;
/// Channel and flow indices a crossing holds are below this (a channel takes 512 bytes and a
/// TCP flow about 1.4 KB: 2^29 of either would be hundreds of GB, far beyond what the memory
/// estimate lets a scenario load).
const INDEX_LIMIT: u32 = FEEDBACK;

/// The upstream neighbour given for a packet sent on by its onward channel: none is kept, as
/// no discipline of the network reads it (no GCCA port).
pub(super) const UPSTREAM_UNREAD: NodeId = NodeId::MAX;

/// A packet on a propagation lane, in 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Crossing {
    slot: Slot,
    /// The channel crossed; with [`ONWARD`] set the channel the far end sends it on by; with
    /// [`DELIVER`] set the flow the far end delivers it to.
    hop: u32,
}

/// Where a crossing packet goes at the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hop {
    /// The full path: it crossed this channel.
    Crossed(u32),
    /// Straight on by this channel.
    Onward(u32),
    /// Delivered at the far end, its destination, to this flow's agent; true for feedback
    /// (an ACK), false for data.
    Deliver(FlowId, bool),
}

impl Crossing {
    /// The packet in slot `slot` crossing a channel, doing `hop` at the far end. Indices are
    /// below [`INDEX_LIMIT`].
    #[inline]
    pub(super) fn new(slot: Slot, hop: Hop) -> Crossing {
        let hop = match hop {
            Hop::Crossed(c) => {
                debug_assert!(c < INDEX_LIMIT);
                c
            }
            Hop::Onward(o) => {
                debug_assert!(o < INDEX_LIMIT);
                o | ONWARD
            }
            Hop::Deliver(f, feedback) => {
                debug_assert!(f < INDEX_LIMIT);
                f | DELIVER | if feedback { FEEDBACK } else { 0 }
            }
        };
        Crossing { slot, hop }
    }

    /// The packet's slot of the wire.
    #[inline]
    pub(super) fn slot(self) -> Slot {
        self.slot
    }

    /// Where it goes at the far end.
    #[inline]
    pub(super) fn hop(self) -> Hop {
        if self.hop & ONWARD != 0 {
            Hop::Onward(self.hop & !ONWARD)
        } else if self.hop & DELIVER != 0 {
            Hop::Deliver(self.hop & !(DELIVER | FEEDBACK), self.hop & FEEDBACK != 0)
        } else {
            Hop::Crossed(self.hop)
        }
    }
}

impl Simulator {
    /// What the far end of channel `c` will do with the packet in slot `s`: send it straight
    /// on by a channel, if no discipline reads the upstream neighbour; deliver it to its flow,
    /// if it is its destination; else take the full path at the arrival.
    #[inline]
    pub(super) fn onward(&self, c: u32, s: Slot) -> Hop {
        if self.ports_read_upstream {
            return Hop::Crossed(c);
        }
        let node = self.channels[c as usize].far_end();
        let pkt = self.wire.packet(s);
        if pkt.is_link_control() || self.has_stages(node) {
            Hop::Crossed(c)
        } else if node == pkt.dst {
            // Delivered at the far end, a propagation delay from now: its flow's lines are
            // fetched while it crosses.
            match self.flows.get(pkt.flow as usize) {
                Some(f) => {
                    f.prefetch();
                    if self.agents_read_ahead {
                        Hop::Deliver(pkt.flow, !pkt.is_data())
                    } else {
                        Hop::Crossed(c)
                    }
                }
                None => Hop::Crossed(c),
            }
        } else {
            match self.routes.next_hop(node, pkt.dst) {
                NO_ROUTE => Hop::Crossed(c),
                o => Hop::Onward(o),
            }
        }
    }

    /// Prefetches what the next arrival on `lane` reads: its packet, the channel it leaves by
    /// if it goes straight on, its flow's transport state if it is delivered. With the read-ahead
    /// pipelined ([`PIPELINED_READ_AHEAD_FLOWS`]) the transport state is fetched a stage
    /// earlier, with the packet after it: its slot and, if it is delivered, its flow's
    /// transport state and the channel its host answers by (the ACK a data packet calls for,
    /// the data an ACK lets go); the next delivery then fetches what it writes
    /// ([`read_delivery_ahead`](Self::read_delivery_ahead)). Hints: nothing changes.
    #[inline]
    pub(super) fn read_ahead(&self, lane: u32) {
        let Some((at, &next)) = self.events.lane_ahead(lane, 0) else {
            return;
        };
        self.wire.prefetch(next.slot());
        match next.hop() {
            Hop::Onward(o) => {
                if let Some(ch) = self.channels.get(o as usize) {
                    ch.prefetch();
                }
            }
            Hop::Deliver(f, feedback) if self.pipelined_read_ahead => {
                self.read_delivery_ahead(at, next.slot(), f, feedback)
            }
            Hop::Deliver(f, feedback) => {
                if let Some(fl) = self.flows.get(f as usize) {
                    fl.prefetch_agent(feedback);
                }
            }
            Hop::Crossed(_) => {}
        }
        if !self.pipelined_read_ahead {
            return;
        }
        if let Some((_, &after)) = self.events.lane_ahead(lane, 1) {
            self.wire.prefetch(after.slot());
            if let Hop::Deliver(g, feedback) = after.hop() {
                if let Some(fl) = self.flows.get(g as usize) {
                    fl.prefetch_agent(feedback);
                    // Both hosts are in the flow's first line, which the line above read.
                    let (host, peer) = if feedback {
                        (fl.src, fl.dst)
                    } else {
                        (fl.dst, fl.src)
                    };
                    let up = self.routes.next_hop(host, peer);
                    if let Some(ch) = self.channels.get(up as usize) {
                        ch.prefetch_offer();
                    }
                }
            }
        }
    }

    /// Prefetches what the delivery at `at` of the packet in slot `s` to flow `f` reads
    /// besides the transport state and its host's channel (fetched an arrival ago, with the
    /// packet): for an ACK to a TCP sender, the oldest segment in flight; for data, the counts
    /// its one-way delay and jitter go to and the goodput bin. Hints: nothing changes.
    #[inline]
    fn read_delivery_ahead(&self, at: Instant, s: Slot, f: FlowId, feedback: bool) {
        let Some(fl) = self.flows.get(f as usize) else {
            return;
        };
        if feedback {
            if let Agent::Tcp(t) = &fl.agent {
                t.sender.prefetch_acked();
            }
        } else {
            let created = self.wire.packet(s).created;
            fl.network.prefetch(at.saturating_since(created));
            fl.goodput.prefetch(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossing_keeps_its_slot_and_says_its_hop() {
        let s = Slot::at(7);
        for hop in [
            Hop::Crossed(3),
            Hop::Onward(12),
            Hop::Deliver(5, false),
            Hop::Deliver(5, true),
        ] {
            let x = Crossing::new(s, hop);
            assert_eq!((x.slot(), x.hop()), (s, hop));
        }
        // The largest index each way.
        let top = INDEX_LIMIT - 1;
        for hop in [
            Hop::Crossed(top),
            Hop::Onward(top),
            Hop::Deliver(top, false),
            Hop::Deliver(top, true),
        ] {
            assert_eq!(Crossing::new(s, hop).hop(), hop);
        }
        assert_eq!(std::mem::size_of::<Crossing>(), 8);
    }

    /// A dumbbell of `pairs` TCP flows, one per pair, 1 s.
    fn dumbbell(pairs: usize) -> crate::scenario::Scenario {
        let text = format!(
            r#"
name = "read-ahead"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = {pairs}
bottleneck = {{ rate = "100Mbps", delay = "10ms", queue = "500pkt" }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flow]]
kind = "tcp"
count = {pairs}
name = "t{{i}}"
from = "s{{i}}"
to = "d{{i}}"
start_jitter = "100ms"
"#
        );
        crate::scenario::parse_str(&text, None).expect("valid")
    }

    #[test]
    fn agents_are_read_ahead_from_a_thousand_flows_and_pipelined_from_two_thousand() {
        let below = Simulator::new(&dumbbell(AGENTS_READ_AHEAD_FLOWS - 1)).expect("builds");
        assert!(!below.agents_read_ahead && !below.pipelined_read_ahead);
        let at = Simulator::new(&dumbbell(AGENTS_READ_AHEAD_FLOWS)).expect("builds");
        assert!(at.agents_read_ahead && !at.pipelined_read_ahead);
        let before = Simulator::new(&dumbbell(PIPELINED_READ_AHEAD_FLOWS - 1)).expect("builds");
        assert!(before.agents_read_ahead && !before.pipelined_read_ahead);
        let deep = Simulator::new(&dumbbell(PIPELINED_READ_AHEAD_FLOWS)).expect("builds");
        assert!(deep.agents_read_ahead && deep.pipelined_read_ahead);
    }

    #[test]
    fn reading_agents_ahead_changes_no_result() {
        // The same 1,000 flows with deliveries crossing as such (their agents read ahead, with
        // and without the pipeline and the timers read ahead) and as plain crossings: the same
        // results, and packets were delivered.
        let sc = dumbbell(AGENTS_READ_AHEAD_FLOWS);
        let run = |ahead: bool, pipelined: bool| {
            let mut sim = Simulator::new(&sc).expect("builds");
            sim.agents_read_ahead = ahead;
            sim.pipelined_read_ahead = pipelined;
            sim.run().expect("runs");
            crate::results::RunResults::from_simulator(&sim)
        };
        let plain = run(false, false);
        assert!(plain.flows.iter().map(|f| f.delivered_bytes).sum::<u64>() > 0);
        assert_eq!(run(true, false), plain);
        assert_eq!(run(true, true), plain);
    }
}
