//! One direction of a link: an output queue with its discipline, a serialiser at the link rate,
//! a propagation delay and an optional random loss on the wire.
//!
//! The bottleneck (rate + byte-limited queue) is kept apart from the wire (delay + loss), as in
//! smoltcp's test simulator: a packet is admitted or dropped by the queue, waits, is serialised,
//! and then may be lost on the wire before it arrives.

use crate::gcca::GccaPort;
use crate::packet::{NodeId, Packet};
use crate::scenario::{ChannelSpec, LossFilter};
use concord_cc::aqm::{Aqm, QueueLen, Verdict};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
use concord_cc::wire::Ecn;
use std::collections::VecDeque;

/// Counters of a channel; `Copy` so that a snapshot at the end of the warm-up can be subtracted.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChannelStats {
    /// Packets offered to the queue.
    pub arrivals: u64,
    /// Packets dropped because the queue was full.
    pub drops_full: u64,
    /// Packets dropped early by the discipline (RED).
    pub drops_early: u64,
    /// Packets marked CE.
    pub marks: u64,
    /// Packets lost on the wire after transmission.
    pub wire_losses: u64,
    /// Packets whose transmission completed.
    pub tx_packets: u64,
    /// Bytes whose transmission completed.
    pub tx_bytes: u64,
    /// Integral of the queue length in packets over time, in packet-nanoseconds.
    pub queue_area: f64,
    /// Largest queue seen, in packets.
    pub max_queue_packets: u32,
}

impl ChannelStats {
    /// The counters accumulated since `earlier`.
    pub fn since(&self, earlier: &ChannelStats) -> ChannelStats {
        ChannelStats {
            arrivals: self.arrivals - earlier.arrivals,
            drops_full: self.drops_full - earlier.drops_full,
            drops_early: self.drops_early - earlier.drops_early,
            marks: self.marks - earlier.marks,
            wire_losses: self.wire_losses - earlier.wire_losses,
            tx_packets: self.tx_packets - earlier.tx_packets,
            tx_bytes: self.tx_bytes - earlier.tx_bytes,
            queue_area: self.queue_area - earlier.queue_area,
            max_queue_packets: self.max_queue_packets,
        }
    }

    /// All drops in the queue (full and early).
    pub fn queue_drops(&self) -> u64 {
        self.drops_full + self.drops_early
    }
}

/// What happened to a packet offered to a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Dropped by the queue.
    Dropped,
    /// Waiting behind others.
    Queued,
    /// The channel was idle: transmission starts now and ends after this long.
    Transmitting(Duration),
}

/// One direction of a link.
#[derive(Debug)]
pub struct Channel {
    /// `from->to`, by node names.
    pub name: String,
    /// Sending node.
    pub from: NodeId,
    /// Receiving node.
    pub to: NodeId,
    /// Serialisation rate.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    aqm: Aqm,
    queue: VecDeque<Packet>,
    queued_bytes: u64,
    in_service: Option<Packet>,
    loss: f64,
    loss_filter: LossFilter,
    rng: Rng,
    last_change: Instant,
    /// Counters.
    pub stats: ChannelStats,
    /// Control packets (GCCP messages) waiting; served before the data queue, outside the AQM
    /// and the queue's length.
    control: VecDeque<Packet>,
    /// Control packets sent.
    pub control_sent: u64,
    /// GCCA's router part, if the queue is a GCCA queue (`kind = "gcca"`).
    pub gcca: Option<Box<GccaPort>>,
}

impl Channel {
    /// A channel from its specification; `rng` drives RED and the wire loss.
    pub fn new(name: String, from: NodeId, to: NodeId, spec: &ChannelSpec, rng: Rng) -> Channel {
        Channel {
            name,
            from,
            to,
            rate: spec.rate,
            delay: spec.delay,
            aqm: Aqm::new(&spec.queue, spec.rate.bps()),
            queue: VecDeque::new(),
            queued_bytes: 0,
            in_service: None,
            loss: spec.loss,
            loss_filter: spec.loss_applies_to,
            rng,
            last_change: Instant::ZERO,
            stats: ChannelStats::default(),
            control: VecDeque::new(),
            control_sent: 0,
            gcca: spec
                .gcca
                .as_ref()
                .and_then(|g| GccaPort::new(g, &spec.queue, spec.rate))
                .map(Box::new),
        }
    }

    /// Packets waiting (not counting the one being transmitted).
    pub fn queue_len(&self) -> QueueLen {
        QueueLen {
            packets: self.queue.len() as u32,
            bytes: self.queued_bytes,
        }
    }

    /// The discipline's average queue, if it keeps one (RED's avg).
    pub fn aqm_average(&self) -> Option<f64> {
        self.aqm.average()
    }

    fn account_queue(&mut self, now: Instant) {
        let dt = now.saturating_since(self.last_change).as_nanos() as f64;
        self.stats.queue_area += dt * self.queue.len() as f64;
        self.last_change = now;
    }

    /// Brings the queue-length integral up to `now` (before reading the statistics).
    pub fn settle(&mut self, now: Instant) {
        self.account_queue(now);
    }

    /// Offers a packet to the channel's queue.
    pub fn offer(&mut self, now: Instant, mut pkt: Packet) -> Offer {
        self.stats.arrivals += 1;
        let len = self.queue_len();
        let verdict = self.aqm.on_arrival(
            now,
            len,
            pkt.size as u64,
            pkt.ecn.is_capable(),
            &mut self.rng,
        );
        match verdict {
            Verdict::DropFull => {
                self.stats.drops_full += 1;
                return Offer::Dropped;
            }
            Verdict::DropEarly => {
                self.stats.drops_early += 1;
                return Offer::Dropped;
            }
            Verdict::Mark => {
                self.stats.marks += 1;
                pkt.ecn = Ecn::Ce;
            }
            Verdict::Enqueue => {}
        }
        if self.in_service.is_none() {
            self.in_service = Some(pkt);
            return Offer::Transmitting(self.rate.transmit_time(pkt.size as u64));
        }
        self.account_queue(now);
        self.queued_bytes += pkt.size as u64;
        self.queue.push_back(pkt);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queue.len() as u32);
        Offer::Queued
    }

    /// Offers a packet that came from neighbour `upstream` (the node itself for its own
    /// packets). A GCCA queue's detector decides in place of the AQM (GCCA Fig. 3): the packet
    /// is queued unless the queue is full, the signals wait in the port's outbox, and the leaky
    /// bucket decides when it leaves. Other queues behave as [`offer`](Self::offer).
    pub fn offer_from(&mut self, now: Instant, pkt: Packet, upstream: NodeId) -> Offer {
        if self.gcca.is_none() {
            return self.offer(now, pkt);
        }
        self.stats.arrivals += 1;
        let len = self.queue_len();
        let Some(port) = self.gcca.as_deref_mut() else {
            return Offer::Dropped;
        };
        let verdict = port
            .detector
            .on_arrival(now, len, pkt.size as u64, upstream, &mut self.rng);
        port.note(&verdict, &pkt);
        if verdict.verdict == Verdict::DropFull {
            self.stats.drops_full += 1;
            return Offer::Dropped;
        }
        self.account_queue(now);
        self.queued_bytes += pkt.size as u64;
        self.queue.push_back(pkt);
        let started = self.start_next(now);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.queue.len() as u32);
        match started {
            Some(d) => Offer::Transmitting(d),
            None => Offer::Queued,
        }
    }

    /// Offers a control packet (a GCCP message): it goes ahead of the data queue, past the AQM
    /// and any leaky bucket.
    pub fn offer_control(&mut self, now: Instant, pkt: Packet) -> Offer {
        self.control.push_back(pkt);
        match self.start_next(now) {
            Some(d) => Offer::Transmitting(d),
            None => Offer::Queued,
        }
    }

    /// Starts the next transmission if the channel is idle: a control packet first, then the
    /// head of the data queue if the GCCA leaky bucket (if any) lets it go now. Returns its
    /// transmission time.
    pub fn start_next(&mut self, now: Instant) -> Option<Duration> {
        if self.in_service.is_some() {
            return None;
        }
        if let Some(p) = self.control.pop_front() {
            self.control_sent += 1;
            self.in_service = Some(p);
            return Some(self.rate.transmit_time(p.size as u64));
        }
        let size = self.queue.front()?.size as u64;
        if let Some(port) = self.gcca.as_deref_mut() {
            if !port.bucket.can_send(now, size) {
                port.hold(now, size);
                return None;
            }
            port.bucket.on_send(now, size);
            port.wake = None;
        }
        let p = self.queue.pop_front()?;
        self.account_queue(now);
        self.queued_bytes -= p.size as u64;
        self.in_service = Some(p);
        let len = self.queue_len();
        if let Some(port) = self.gcca.as_deref_mut() {
            let normal = port.detector.on_departure(now, len);
            port.outbox.extend(normal.into_iter().map(|s| (s, None)));
        }
        Some(self.rate.transmit_time(p.size as u64))
    }

    /// The packet in service finished transmission. Returns it unless the wire lost it, and the
    /// transmission time of the next packet if one starts.
    pub fn complete(&mut self, now: Instant) -> (Option<Packet>, Option<Duration>) {
        let done = self.in_service.take();
        let mut next = None;
        if self.gcca.is_some() || !self.control.is_empty() {
            next = self.start_next(now);
        } else if let Some(p) = self.queue.pop_front() {
            self.account_queue(now);
            self.queued_bytes -= p.size as u64;
            next = Some(self.rate.transmit_time(p.size as u64));
            self.in_service = Some(p);
        }
        // RED's idle period starts when the link goes idle (ns-2's REDQueue::deque), not when
        // the last waiting packet enters service one transmission earlier.
        if self.in_service.is_none() {
            self.aqm.on_departure(now, self.queue_len());
        }
        let Some(pkt) = done else { return (None, next) };
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += pkt.size as u64;
        let exposed = match self.loss_filter {
            LossFilter::All => true,
            LossFilter::Data => pkt.is_data(),
        };
        if exposed && self.rng.bernoulli(self.loss) {
            self.stats.wire_losses += 1;
            return (None, next);
        }
        (Some(pkt), next)
    }

    /// The packet now being transmitted.
    pub fn in_service(&self) -> Option<&Packet> {
        self.in_service.as_ref()
    }
}
