//! One direction of a link: an output queue with its discipline, a serialiser at the link rate,
//! a propagation delay and an optional random loss on the wire.
//!
//! The bottleneck (rate + byte-limited queue) is kept apart from the wire (delay + loss), as in
//! smoltcp's test simulator: a packet is admitted or dropped by the queue, waits, is serialised,
//! and then may be lost on the wire before it arrives.

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

    /// The packet in service finished transmission. Returns it unless the wire lost it, and the
    /// transmission time of the next packet if one starts.
    pub fn complete(&mut self, now: Instant) -> (Option<Packet>, Option<Duration>) {
        let done = self.in_service.take();
        let mut next = None;
        if let Some(p) = self.queue.pop_front() {
            self.account_queue(now);
            self.queued_bytes -= p.size as u64;
            next = Some(self.rate.transmit_time(p.size as u64));
            self.in_service = Some(p);
        }
        self.aqm.on_departure(now, self.queue_len());
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
