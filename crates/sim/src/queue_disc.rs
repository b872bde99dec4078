//! The queue-discipline contract of a channel: one enum ([`Discipline`]), one arm per
//! discipline, behind [`QueueDisc`], which puts ECA's load estimator in front when the channel
//! runs ECA.
//!
//! A discipline owns the packets waiting at a channel's output (possibly in several internal
//! queues) and gives two verdicts: at enqueue (forward, mark, drop the arrival) and at dequeue
//! (the packet to transmit, possibly marked, after any packets it dropped at the head). The
//! channel keeps the serialiser, the wire and the counters; the simulator sees only
//! [`QueueDisc`]. A new discipline is one file (its algorithm in `concord_cc::aqm`) and one arm
//! of [`Discipline`].

use crate::eca::QueueEca;
use crate::gcca::GccaPort;
use crate::packet::{NodeId, Packet};
use crate::scenario::ChannelSpec;
use crate::wire::{Slot, WireSlots};
use concord_cc::aqm::codel::Dequeued;
use concord_cc::aqm::{Aqm, AqmConfig, CodelQueue, FqCodel, QueueLen, QueueLimit, Verdict};
use concord_cc::rng::Rng;
use concord_cc::time::Instant;
use std::collections::VecDeque;

/// A FIFO of packets with its byte count.
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    /// Appends `p`.
    #[inline]
    pub fn push(&mut self, p: Packet) {
        self.bytes += u64::from(p.size);
        self.packets.push_back(p);
    }

    /// Removes the head.
    #[inline]
    pub fn pop(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= u64::from(p.size);
        Some(p)
    }

    /// True if nothing is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }

    /// The head, left in place.
    #[inline]
    pub fn front(&self) -> Option<&Packet> {
        self.packets.front()
    }

    /// Packets and bytes queued.
    #[inline]
    pub fn len(&self) -> QueueLen {
        QueueLen {
            packets: self.packets.len() as u32,
            bytes: self.bytes,
        }
    }
}

/// A FIFO of packets that wait in their slots of the wire, with their byte count: a packet is
/// not copied to wait.
#[derive(Clone, Debug, Default)]
pub struct SlotFifo {
    slots: VecDeque<Slot>,
    bytes: u64,
}

impl SlotFifo {
    /// Appends the packet in slot `s`, of `size` bytes.
    #[inline]
    fn push(&mut self, s: Slot, size: u32) {
        self.bytes += u64::from(size);
        self.slots.push_back(s);
    }

    /// Removes the head, whose packet is in `wire`.
    #[inline]
    fn pop(&mut self, wire: &WireSlots) -> Option<Slot> {
        let s = self.slots.pop_front()?;
        self.bytes -= u64::from(wire.packet(s).size);
        // The next head leaves when this packet's transmission completes.
        if let Some(&next) = self.slots.front() {
            wire.prefetch(next);
        }
        Some(s)
    }

    /// True if nothing is queued.
    #[inline]
    fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Packets and bytes queued.
    #[inline]
    fn len(&self) -> QueueLen {
        QueueLen {
            packets: self.slots.len() as u32,
            bytes: self.bytes,
        }
    }
}

/// An admission discipline (DropTail, RED, RED/ECN) in front of a FIFO whose packets wait in
/// their slots of the wire.
#[derive(Clone, Debug)]
pub struct Admission {
    aqm: Aqm,
    fifo: SlotFifo,
}

/// A packet offered to a discipline (see [`Discipline::enqueue`]).
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    /// Its slot in the wire.
    pub slot: Slot,
    /// The neighbour it came from (the node itself for its own packets).
    pub upstream: NodeId,
    /// The link is idle: an admitted packet may bypass an empty queue.
    pub bypass: bool,
}

/// Where an arriving packet went (see [`Discipline::enqueue`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placed {
    /// Refused (the verdict says why): it is still in its slot.
    Refused,
    /// Admitted and to be transmitted from its slot at once: the link is idle and the
    /// discipline's queue empty.
    Bypass,
    /// Queued in its slot, which stays taken until the packet is dequeued.
    InSlot,
    /// Copied into the discipline's own queue: its slot is free to reuse.
    Copied,
}

/// A channel's queue discipline, with ECA's load estimator in front of it if the channel runs
/// ECA (Barham, section IV.A.3: it counts every offered packet and stamps LOAD into it).
#[derive(Clone, Debug)]
pub struct QueueDisc {
    estimator: Option<Box<QueueEca>>,
    discipline: Discipline,
    /// See [`QueueDisc::is_plain_drop_tail`].
    plain_drop_tail: bool,
}

/// The disciplines.
#[derive(Clone, Debug)]
pub enum Discipline {
    /// DropTail, RED and RED/ECN: decide at arrival, serve first in first out.
    Admission(Admission),
    /// GCCA's router port (GCCA sections 3.2, 3.3): its detector decides at arrival, its
    /// leaky bucket gates departures.
    Gcca(Box<GccaPort>),
    /// CoDel (RFC 8289): drops or marks at dequeue.
    CoDel(CodelQueue<Packet>),
    /// FQ-CoDel (RFC 8290): per-flow queues, each with CoDel, served by deficit round robin.
    FqCodel(Box<FqCodel<Packet>>),
}

impl QueueDisc {
    /// The discipline of a channel of `spec`.
    pub fn new(spec: &ChannelSpec) -> QueueDisc {
        let estimator = spec
            .eca
            .as_ref()
            .and_then(|e| QueueEca::new(e, spec.rate, Instant::ZERO))
            .map(Box::new);
        let discipline = Discipline::new(spec);
        let plain_drop_tail = estimator.is_none()
            && matches!(
                spec.queue,
                AqmConfig::DropTail {
                    limit: QueueLimit::Packets(n)
                } if n >= 1
            )
            && matches!(
                &discipline,
                Discipline::Admission(Admission {
                    aqm: Aqm::DropTail(_),
                    ..
                })
            );
        QueueDisc {
            estimator,
            discipline,
            plain_drop_tail,
        }
    }

    /// True if the discipline is DropTail with a limit of at least one packet and no
    /// estimator in front: an empty queue admits every arrival unchanged (a packet limit
    /// ignores the size), it drops nothing but refused arrivals, draws nothing at random,
    /// and the link going idle changes nothing. A channel answers such a queue, while empty,
    /// without reading it.
    pub fn is_plain_drop_tail(&self) -> bool {
        self.plain_drop_tail
    }

    /// Offers `pkt` (see [`Discipline::enqueue`]); ECA's estimator, if any, counts it and
    /// stamps LOAD first.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Instant,
        wire: &mut WireSlots,
        arrival: Arrival,
        rng: &mut Rng,
        dropped: &mut Vec<Packet>,
    ) -> (Verdict, Placed) {
        if let Some(e) = self.estimator.as_deref_mut() {
            e.stamp(now, wire.packet_mut(arrival.slot));
        }
        self.discipline.enqueue(now, wire, arrival, rng, dropped)
    }

    /// See [`Discipline::dequeue`].
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Instant,
        wire: &mut WireSlots,
        dropped: &mut Vec<Packet>,
        marks: &mut u64,
    ) -> Option<Slot> {
        self.discipline.dequeue(now, wire, dropped, marks)
    }

    /// See [`Discipline::on_link_idle`].
    #[inline]
    pub fn on_link_idle(&mut self, now: Instant) {
        self.discipline.on_link_idle(now);
    }

    /// Packets and bytes waiting.
    #[inline]
    pub fn len(&self) -> QueueLen {
        self.discipline.len()
    }

    /// The discipline's average queue estimate (RED's avg), if it keeps one.
    pub fn average(&self) -> Option<f64> {
        self.discipline.average()
    }

    /// The discipline.
    pub fn discipline(&self) -> &Discipline {
        &self.discipline
    }

    /// The GCCA port, if the discipline is one.
    pub fn gcca(&self) -> Option<&GccaPort> {
        self.discipline.gcca()
    }

    /// True if the discipline is a port that may raise signals for its neighbours or hold its
    /// head for a wake-up (a GCCA port): the simulator then looks at it after each change.
    #[inline]
    pub fn is_port(&self) -> bool {
        matches!(self.discipline, Discipline::Gcca(_))
    }

    /// The GCCA port, if the discipline is one.
    pub fn gcca_mut(&mut self) -> Option<&mut GccaPort> {
        self.discipline.gcca_mut()
    }

    /// ECA's load estimator in front of the discipline, if any.
    pub fn eca(&self) -> Option<&QueueEca> {
        self.estimator.as_deref()
    }
}

/// Where a packet a discipline with queues of its own judged went: copied unless refused.
fn copied_unless_dropped(verdict: Verdict) -> Placed {
    if verdict.is_drop() {
        Placed::Refused
    } else {
        Placed::Copied
    }
}

impl Discipline {
    /// The discipline of `spec`'s queue.
    fn new(spec: &ChannelSpec) -> Discipline {
        if let Some(port) = spec
            .gcca
            .as_ref()
            .and_then(|g| GccaPort::new(g, &spec.queue, spec.rate))
        {
            return Discipline::Gcca(Box::new(port));
        }
        match &spec.queue {
            AqmConfig::CoDel(c) => Discipline::CoDel(CodelQueue::new(*c)),
            AqmConfig::FqCodel(c) => Discipline::FqCodel(Box::new(FqCodel::new(*c))),
            other => {
                let aqm = Aqm::new(other, spec.rate.bps())
                    .unwrap_or(Aqm::DropTail(concord_cc::aqm::DropTail::new(other.limit())));
                Discipline::Admission(Admission {
                    aqm,
                    fifo: SlotFifo::default(),
                })
            }
        }
    }

    /// Offers the packet of `arrival` (in its slot of `wire`) at `now`.
    /// The verdict is for the arrival: `Enqueue` or `Mark` (it is admitted, marked CE for
    /// `Mark`), `DropFull` or `DropEarly` (it is not, and stays in its slot). Other packets the
    /// discipline pushes out to make room go on `dropped`. The discipline reads the packet
    /// where it lies and marks it there; DropTail and RED queue it in its slot, the others copy
    /// it into queues of their own ([`Placed`] says which).
    ///
    /// `arrival.bypass`: the link is idle, so an admitted packet may go straight to transmission if the
    /// discipline has nothing else to send and nothing to learn from the dequeue (Linux's
    /// `TCQ_F_CAN_BYPASS`). Such a packet is not queued ([`Placed::Bypass`]): the caller
    /// transmits it from its slot; otherwise it is queued and the caller dequeues.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Instant,
        wire: &mut WireSlots,
        arrival: Arrival,
        rng: &mut Rng,
        dropped: &mut Vec<Packet>,
    ) -> (Verdict, Placed) {
        let Arrival {
            slot: s,
            upstream,
            bypass,
        } = arrival;
        match self {
            Discipline::Admission(q) => {
                let pkt = wire.packet_mut(s);
                let verdict = q.aqm.on_arrival(
                    now,
                    q.fifo.len(),
                    u64::from(pkt.size),
                    pkt.ecn.is_capable(),
                    rng,
                );
                if verdict.is_drop() {
                    return (verdict, Placed::Refused);
                }
                if verdict == Verdict::Mark {
                    pkt.ecn = concord_cc::wire::Ecn::Ce;
                }
                if bypass && q.fifo.is_empty() {
                    return (verdict, Placed::Bypass);
                }
                q.fifo.push(s, pkt.size);
                (verdict, Placed::InSlot)
            }
            Discipline::Gcca(port) => {
                let verdict = port.enqueue(now, *wire.packet(s), upstream, rng);
                (verdict, copied_unless_dropped(verdict))
            }
            Discipline::CoDel(q) => match q.enqueue(now, *wire.packet(s)) {
                Ok(()) => (Verdict::Enqueue, Placed::Copied),
                Err(_) => (Verdict::DropFull, Placed::Refused),
            },
            Discipline::FqCodel(q) => {
                q.enqueue(now, *wire.packet(s), dropped);
                (Verdict::Enqueue, Placed::Copied)
            }
        }
    }

    /// The slot of the packet to transmit at `now`, if the discipline releases one (a packet
    /// from a queue of the discipline's own is put in a slot of `wire`); packets it drops on
    /// the way go on `dropped`, and a packet it marks CE adds one to `marks`. A GCCA port whose
    /// bucket holds the head releases nothing and sets its wake-up.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Instant,
        wire: &mut WireSlots,
        dropped: &mut Vec<Packet>,
        marks: &mut u64,
    ) -> Option<Slot> {
        let d: Dequeued<Packet> = match self {
            Discipline::Admission(q) => return q.fifo.pop(wire),
            Discipline::Gcca(port) => return port.dequeue(now).map(|p| wire.put(p)),
            Discipline::CoDel(q) => q.dequeue(now, dropped),
            Discipline::FqCodel(q) => q.dequeue(now, dropped),
        };
        *marks += u64::from(d.marked);
        d.packet.map(|p| wire.put(p))
    }

    /// The link went idle at `now` (RED starts its idle clock, ns-2's `REDQueue::deque`).
    #[inline]
    pub fn on_link_idle(&mut self, now: Instant) {
        if let Discipline::Admission(q) = self {
            q.aqm.on_departure(now, q.fifo.len());
        }
    }

    /// Packets and bytes waiting.
    #[inline]
    pub fn len(&self) -> QueueLen {
        match self {
            Discipline::Admission(q) => q.fifo.len(),
            Discipline::Gcca(port) => port.queue_len(),
            Discipline::CoDel(q) => q.len(),
            Discipline::FqCodel(q) => q.len(),
        }
    }

    /// The discipline's average queue estimate (RED's avg), if it keeps one.
    pub fn average(&self) -> Option<f64> {
        match self {
            Discipline::Admission(q) => q.aqm.average(),
            Discipline::Gcca(port) => Some(port.detector.avg()),
            Discipline::CoDel(_) | Discipline::FqCodel(_) => None,
        }
    }

    /// The GCCA port, if this is one (or one behind an ECA estimator).
    pub fn gcca(&self) -> Option<&GccaPort> {
        match self {
            Discipline::Gcca(port) => Some(port),
            _ => None,
        }
    }

    /// The GCCA port, if this is one (or one behind an ECA estimator).
    pub fn gcca_mut(&mut self) -> Option<&mut GccaPort> {
        match self {
            Discipline::Gcca(port) => Some(port),
            _ => None,
        }
    }
}
