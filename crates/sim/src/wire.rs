//! The packets on the wire: each in a slot from the moment a TCP agent builds it, or it is
//! offered to a channel, or it starts its transmission, until it reaches its destination's agent
//! or a queue that keeps packets of its own. Channels, DropTail's and RED's queues and the
//! propagation lanes move a packet by its [`Slot`].

use crate::packet::Packet;

/// The packets on the wire: one slot per packet being transmitted, propagating or waiting in a
/// DropTail or RED queue. A packet keeps its slot across each hop to the far end, where the
/// simulator routes it by its [`Slot`] and offers the slot to the next channel: a packet
/// crossing an idle channel with an empty queue is never copied, and a propagation lane or a
/// FIFO holds 4-byte slots instead of packets. A freed slot is the next one taken, so the slots
/// in use stay as few as the packets in flight.
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

    /// Asks the processor to fetch slot `s`'s packet (both of its 64-byte lines) into cache, so
    /// that the read of the packet a little later (when it reaches the head of its queue or the
    /// far end of its lane) finds it there. A hint: it cannot fault and changes nothing.
    #[inline]
    pub fn prefetch(&self, s: Slot) {
        if let Some(p) = self.packets.get(s.0 as usize) {
            mem_prefetch::prefetch_read_data::<_, 3>(p);
            mem_prefetch::prefetch_read_data::<_, 3>(&p.size);
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Transport;
    use concord_cc::time::Instant;

    fn packet(seq: u64) -> Packet {
        Packet::new(
            0,
            1,
            0,
            1000,
            Instant::ZERO,
            Transport::Udp { seq, len: 972 },
        )
    }

    #[test]
    fn prefetching_a_slot_taken_free_or_never_taken_changes_nothing() {
        let mut w = WireSlots::new();
        let a = w.put(packet(1));
        let b = w.put(packet(2));
        w.take(b);
        for s in [a, b, Slot::at(7)] {
            w.prefetch(s);
        }
        assert_eq!(w.packet(a), &packet(1));
        // The freed slot is still the next one taken, and the slots in use are as before.
        assert_eq!(w.put(packet(3)), b);
        assert_eq!(w.get(7), None);
        assert_eq!(w.packets.len(), 2);
    }
}
