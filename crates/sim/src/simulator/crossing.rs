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
//! A packet sent on this way is offered without its upstream neighbour, which only a GCCA
//! router port reads: in a network with such a port every arrival takes the full path.

use super::Simulator;
use crate::packet::NodeId;
use crate::routing::NO_ROUTE;
use crate::wire::Slot;

/// The bit of [`Crossing::hop`] that marks the channel the far end sends the packet on by.
const ONWARD: u32 = 1 << 31;

/// The upstream neighbour given for a packet sent on by its onward channel: none is kept, as
/// no discipline of the network reads it (no GCCA port).
pub(super) const UPSTREAM_UNREAD: NodeId = NodeId::MAX;

/// A packet on a propagation lane, in 8 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Crossing {
    slot: Slot,
    /// The channel crossed, or with [`ONWARD`] set the channel the far end sends it on by.
    hop: u32,
}

/// Where a crossing packet goes at the far end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Hop {
    /// The full path: it crossed this channel.
    Crossed(u32),
    /// Straight on by this channel.
    Onward(u32),
}

impl Crossing {
    /// The packet in slot `slot` crossing channel `crossed`, sent on by `onward` at the far end
    /// ([`NO_ROUTE`]: not known, the full path). Channel indices are below 2^31 (a channel
    /// takes 512 bytes; 2^31 of them would be 1 TB).
    #[inline]
    pub(super) fn new(slot: Slot, crossed: u32, onward: u32) -> Crossing {
        debug_assert!(crossed < ONWARD);
        let hop = if onward < ONWARD {
            onward | ONWARD
        } else {
            crossed
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
        } else {
            Hop::Crossed(self.hop)
        }
    }
}

impl Simulator {
    /// The channel by which the far end of channel `c` will send on the packet in slot `s`, if
    /// it sends it straight on and no discipline reads the upstream neighbour; [`NO_ROUTE`]
    /// otherwise (the full path at the arrival).
    #[inline]
    pub(super) fn onward(&self, c: u32, s: Slot) -> u32 {
        if self.ports_read_upstream {
            return NO_ROUTE;
        }
        let node = self.channels[c as usize].far_end();
        let pkt = self.wire.packet(s);
        if pkt.is_link_control() || self.has_stages(node) {
            NO_ROUTE
        } else if node == pkt.dst {
            // Delivered at the far end, a propagation delay from now: its flow's lines are
            // fetched while it crosses.
            if let Some(f) = self.flows.get(pkt.flow as usize) {
                f.prefetch();
            }
            NO_ROUTE
        } else {
            self.routes.next_hop(node, pkt.dst)
        }
    }

    /// Prefetches what the next arrival on `lane` reads: its packet, and the channel it leaves
    /// by if it goes straight on. Hints: nothing changes.
    #[inline]
    pub(super) fn read_ahead(&self, lane: u32) {
        let Some(next) = self.events.lane_head(lane) else {
            return;
        };
        self.wire.prefetch(next.slot());
        if let Hop::Onward(o) = next.hop() {
            if let Some(ch) = self.channels.get(o as usize) {
                ch.prefetch();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crossing_keeps_its_slot_and_says_its_hop() {
        let s = Slot::at(7);
        let full = Crossing::new(s, 3, NO_ROUTE);
        assert_eq!((full.slot(), full.hop()), (s, Hop::Crossed(3)));
        let on = Crossing::new(s, 3, 12);
        assert_eq!((on.slot(), on.hop()), (s, Hop::Onward(12)));
        // The largest channel index either way.
        let top = ONWARD - 1;
        assert_eq!(Crossing::new(s, top, NO_ROUTE).hop(), Hop::Crossed(top));
        assert_eq!(Crossing::new(s, 0, top).hop(), Hop::Onward(top));
        assert_eq!(std::mem::size_of::<Crossing>(), 8);
    }
}
