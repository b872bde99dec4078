//! The packets on the wire: each in a slot from the moment it is offered to a channel (or
//! starts its transmission) until it reaches the far end's agent or a queue that keeps its own
//! copy. Channels, their queues and the propagation lanes move a packet by its [`Slot`].

use crate::packet::Packet;

/// The packets on the wire: one slot per packet being transmitted or propagating. A packet
/// takes a slot when it starts its transmission (or, sent by a node, when it is offered) and
/// keeps it across the wire to the far end, where the simulator routes it by its [`Slot`] and
/// offers the slot to the next channel: a packet crossing an idle channel with an empty queue
/// is never copied, and a propagation lane holds 4-byte slots instead of packets. A freed slot
/// is the next one taken, so the slots in use stay few and in cache while the channels
/// themselves (thousands of them at large scale) are each touched once per packet.
#[derive(Clone, Debug, Default)]
pub struct WireSlots {
    packets: Vec<Packet>,
    free: Vec<u32>,
}

impl WireSlots {
    /// No slots yet.
    pub fn new() -> WireSlots {
        WireSlots::default()
    }

    /// Stores `p`, returning its slot.
    #[inline]
    pub fn put(&mut self, p: Packet) -> Slot {
        if let Some(i) = self.free.pop() {
            self.packets[i as usize] = p;
            return Slot(i);
        }
        self.packets.push(p);
        Slot((self.packets.len() - 1) as u32)
    }

    /// Takes the packet out of slot `s`, which becomes free.
    #[inline]
    pub fn take(&mut self, s: Slot) -> Packet {
        self.free.push(s.0);
        self.packets[s.0 as usize]
    }

    /// The packet in slot `s`, left in place.
    #[inline]
    pub fn packet(&self, s: Slot) -> &Packet {
        &self.packets[s.0 as usize]
    }

    /// The packet in slot `s`, to change in place.
    #[inline]
    pub(crate) fn packet_mut(&mut self, s: Slot) -> &mut Packet {
        &mut self.packets[s.0 as usize]
    }

    /// Frees slot `s` without reading it (its packet was copied where it goes next).
    #[inline]
    pub(crate) fn free(&mut self, s: Slot) {
        self.free.push(s.0);
    }

    /// The packet in slot `i`, if `i` is a slot's index.
    #[inline]
    pub(crate) fn get(&self, i: u32) -> Option<&Packet> {
        self.packets.get(i as usize)
    }
}

/// A packet's slot in the [`WireSlots`]: it stays taken until [`WireSlots::take`] moves the
/// packet out or a queue that keeps packets of its own copies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(u32);

impl Slot {
    /// The slot's index (below `u32::MAX`, which a channel keeps for "idle").
    #[inline]
    pub(crate) fn index(self) -> u32 {
        self.0
    }

    /// The slot of index `i`.
    #[inline]
    pub(crate) fn at(i: u32) -> Slot {
        Slot(i)
    }
}
