//! The queue-discipline contract of a channel: one enum, one arm per discipline.
//!
//! A discipline owns the packets waiting at a channel's output (possibly in several internal
//! queues) and gives two verdicts: at enqueue (forward, mark, drop the arrival) and at dequeue
//! (the packet to transmit, possibly marked, after any packets it dropped at the head). The
//! channel keeps the serialiser, the wire and the counters; the simulator sees only
//! [`QueueDisc`]. A new discipline is one file (its algorithm in `concord_cc::aqm`) and one arm
//! here.

use crate::eca::{EcaQueue, QueueEca};
use crate::gcca::GccaPort;
use crate::packet::{NodeId, Packet};
use crate::scenario::ChannelSpec;
use concord_cc::aqm::codel::Dequeued;
use concord_cc::aqm::{Aqm, AqmConfig, CodelQueue, FqCodel, QueueLen, Verdict};
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

/// An admission discipline (DropTail, RED, RED/ECN) in front of a FIFO.
#[derive(Clone, Debug)]
pub struct Admission {
    aqm: Aqm,
    fifo: Fifo,
}

/// A channel's queue discipline.
#[derive(Clone, Debug)]
pub enum QueueDisc {
    /// DropTail, RED and RED/ECN: decide at arrival, serve first in first out.
    Admission(Admission),
    /// GCCA's router port (GCCA sections 3.2, 3.3): its detector decides at arrival, its
    /// leaky bucket gates departures.
    Gcca(Box<GccaPort>),
    /// CoDel (RFC 8289): drops or marks at dequeue.
    CoDel(CodelQueue<Packet>),
    /// FQ-CoDel (RFC 8290): per-flow queues, each with CoDel, served by deficit round robin.
    FqCodel(Box<FqCodel<Packet>>),
    /// ECA's load estimator (Barham, section IV.A.3) in front of another discipline: it counts
    /// every offered packet and stamps LOAD into it.
    Eca(Box<EcaQueue>),
}

impl QueueDisc {
    /// The discipline of a channel of `spec`.
    pub fn new(spec: &ChannelSpec) -> QueueDisc {
        let inner = QueueDisc::without_eca(spec);
        match spec
            .eca
            .as_ref()
            .and_then(|e| QueueEca::new(e, spec.rate, Instant::ZERO))
        {
            Some(eca) => QueueDisc::Eca(Box::new(EcaQueue { eca, inner })),
            None => inner,
        }
    }

    /// The discipline of `spec`'s queue alone.
    fn without_eca(spec: &ChannelSpec) -> QueueDisc {
        if let Some(port) = spec
            .gcca
            .as_ref()
            .and_then(|g| GccaPort::new(g, &spec.queue, spec.rate))
        {
            return QueueDisc::Gcca(Box::new(port));
        }
        match &spec.queue {
            AqmConfig::CoDel(c) => QueueDisc::CoDel(CodelQueue::new(*c)),
            AqmConfig::FqCodel(c) => QueueDisc::FqCodel(Box::new(FqCodel::new(*c))),
            other => {
                let aqm = Aqm::new(other, spec.rate.bps())
                    .unwrap_or(Aqm::DropTail(concord_cc::aqm::DropTail::new(other.limit())));
                QueueDisc::Admission(Admission {
                    aqm,
                    fifo: Fifo::default(),
                })
            }
        }
    }

    /// Offers `pkt`, which came from neighbour `upstream`, at `now`. The verdict is for the
    /// arrival: `Enqueue` or `Mark` (it is admitted, marked CE for `Mark`), `DropFull` or
    /// `DropEarly` (it is not). Other packets the discipline pushes out to make room go on
    /// `dropped`.
    ///
    /// `bypass`: the link is idle, so an admitted packet may go straight to transmission if the
    /// discipline has nothing else to send and nothing to learn from the dequeue (Linux's
    /// `TCQ_F_CAN_BYPASS`). Such a packet comes back as `Some`; otherwise it is queued and
    /// the caller dequeues.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: Instant,
        mut pkt: Packet,
        upstream: NodeId,
        bypass: bool,
        rng: &mut Rng,
        dropped: &mut Vec<Packet>,
    ) -> (Verdict, Option<Packet>) {
        match self {
            QueueDisc::Admission(q) => {
                let verdict = q.aqm.on_arrival(
                    now,
                    q.fifo.len(),
                    u64::from(pkt.size),
                    pkt.ecn.is_capable(),
                    rng,
                );
                if verdict.is_drop() {
                    return (verdict, None);
                }
                if verdict == Verdict::Mark {
                    pkt.ecn = concord_cc::wire::Ecn::Ce;
                }
                if bypass && q.fifo.is_empty() {
                    return (verdict, Some(pkt));
                }
                q.fifo.push(pkt);
                (verdict, None)
            }
            QueueDisc::Gcca(port) => (port.enqueue(now, pkt, upstream, rng), None),
            QueueDisc::CoDel(q) => match q.enqueue(now, pkt) {
                Ok(()) => (Verdict::Enqueue, None),
                Err(_) => (Verdict::DropFull, None),
            },
            QueueDisc::FqCodel(q) => {
                q.enqueue(now, pkt, dropped);
                (Verdict::Enqueue, None)
            }
            QueueDisc::Eca(q) => {
                q.eca.stamp(now, &mut pkt);
                q.inner.enqueue(now, pkt, upstream, bypass, rng, dropped)
            }
        }
    }

    /// The packet to transmit at `now`, if the discipline releases one; packets it drops on
    /// the way go on `dropped`, and a packet it marks CE adds one to `marks`. A GCCA port whose
    /// bucket holds the head releases nothing and sets its wake-up.
    #[inline]
    pub fn dequeue(
        &mut self,
        now: Instant,
        dropped: &mut Vec<Packet>,
        marks: &mut u64,
    ) -> Option<Packet> {
        let d: Dequeued<Packet> = match self {
            QueueDisc::Admission(q) => return q.fifo.pop(),
            QueueDisc::Gcca(port) => return port.dequeue(now),
            QueueDisc::CoDel(q) => q.dequeue(now, dropped),
            QueueDisc::FqCodel(q) => q.dequeue(now, dropped),
            QueueDisc::Eca(q) => return q.inner.dequeue(now, dropped, marks),
        };
        *marks += u64::from(d.marked);
        d.packet
    }

    /// The link went idle at `now` (RED starts its idle clock, ns-2's `REDQueue::deque`).
    #[inline]
    pub fn on_link_idle(&mut self, now: Instant) {
        match self {
            QueueDisc::Admission(q) => q.aqm.on_departure(now, q.fifo.len()),
            QueueDisc::Eca(q) => q.inner.on_link_idle(now),
            _ => {}
        }
    }

    /// Packets and bytes waiting.
    #[inline]
    pub fn len(&self) -> QueueLen {
        match self {
            QueueDisc::Admission(q) => q.fifo.len(),
            QueueDisc::Gcca(port) => port.queue_len(),
            QueueDisc::CoDel(q) => q.len(),
            QueueDisc::FqCodel(q) => q.len(),
            QueueDisc::Eca(q) => q.inner.len(),
        }
    }

    /// The discipline's average queue estimate (RED's avg), if it keeps one.
    pub fn average(&self) -> Option<f64> {
        match self {
            QueueDisc::Admission(q) => q.aqm.average(),
            QueueDisc::Gcca(port) => Some(port.detector.avg()),
            QueueDisc::CoDel(_) | QueueDisc::FqCodel(_) => None,
            QueueDisc::Eca(q) => q.inner.average(),
        }
    }

    /// The GCCA port, if this is one (or one behind an ECA estimator).
    pub fn gcca(&self) -> Option<&GccaPort> {
        match self {
            QueueDisc::Gcca(port) => Some(port),
            QueueDisc::Eca(q) => q.inner.gcca(),
            _ => None,
        }
    }

    /// The GCCA port, if this is one (or one behind an ECA estimator).
    pub fn gcca_mut(&mut self) -> Option<&mut GccaPort> {
        match self {
            QueueDisc::Gcca(port) => Some(port),
            QueueDisc::Eca(q) => q.inner.gcca_mut(),
            _ => None,
        }
    }

    /// The ECA estimator in front of the discipline, if any.
    pub fn eca(&self) -> Option<&QueueEca> {
        match self {
            QueueDisc::Eca(q) => Some(&q.eca),
            _ => None,
        }
    }
}
