//! One direction of a link: an output queue with its discipline, a serialiser at the link rate,
//! a propagation delay and an optional random loss on the wire.
//!
//! The bottleneck (rate + byte-limited queue) is kept apart from the wire (delay + loss), as in
//! smoltcp's test simulator: a packet is admitted or dropped by the queue, waits, is serialised,
//! and then may be lost on the wire before it arrives.

use crate::packet::{NodeId, Packet};
use crate::queue_disc::QueueDisc;
use crate::scenario::{ChannelSpec, LossFilter};
use concord_cc::aqm::{QueueLen, Verdict};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
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
    /// Link-layer framing bytes added to every packet's size for its transmission time.
    pub framing: u32,
    /// Propagation delay.
    pub delay: Duration,
    disc: QueueDisc,
    /// Packets the discipline dropped other than a refused arrival (at dequeue, or pushed out
    /// to make room), until the simulator takes them.
    dropped: Vec<Packet>,
    in_service: Option<Packet>,
    loss: f64,
    loss_filter: LossFilter,
    rng: Rng,
    last_change: Instant,
    /// Counters.
    pub stats: ChannelStats,
    /// Control packets (GCCP messages) waiting; served before the data queue, outside the
    /// discipline and the queue's length.
    control: VecDeque<Packet>,
    /// Control packets sent.
    pub control_sent: u64,
}

impl Channel {
    /// A channel from its specification; `rng` drives the discipline's draws and the wire loss.
    pub fn new(name: String, from: NodeId, to: NodeId, spec: &ChannelSpec, rng: Rng) -> Channel {
        Channel {
            name,
            from,
            to,
            rate: spec.rate,
            framing: spec.framing_bytes,
            delay: spec.delay,
            disc: QueueDisc::new(spec),
            dropped: Vec::new(),
            in_service: None,
            loss: spec.loss,
            loss_filter: spec.loss_applies_to,
            rng,
            last_change: Instant::ZERO,
            stats: ChannelStats::default(),
            control: VecDeque::new(),
            control_sent: 0,
        }
    }

    /// Packets waiting (not counting the one being transmitted).
    #[inline]
    pub fn queue_len(&self) -> QueueLen {
        self.disc.len()
    }

    /// The discipline's average queue, if it keeps one (RED's avg).
    pub fn aqm_average(&self) -> Option<f64> {
        self.disc.average()
    }

    /// The queue discipline.
    pub fn disc(&self) -> &QueueDisc {
        &self.disc
    }

    /// The queue discipline, to deliver messages addressed to it (GCCP to a GCCA port).
    pub fn disc_mut(&mut self) -> &mut QueueDisc {
        &mut self.disc
    }

    /// Takes the packets the discipline dropped since the last call, other than refused
    /// arrivals (which [`offer_from`](Self::offer_from) reports).
    pub fn take_dropped(&mut self) -> Vec<Packet> {
        std::mem::take(&mut self.dropped)
    }

    /// True if the discipline dropped packets the simulator has not taken yet.
    #[inline]
    pub fn has_dropped(&self) -> bool {
        !self.dropped.is_empty()
    }

    #[inline]
    fn account_queue(&mut self, now: Instant) {
        let dt = now.saturating_since(self.last_change).as_nanos() as f64;
        self.stats.queue_area += dt * self.disc.len().packets as f64;
        self.last_change = now;
    }

    /// Brings the queue-length integral up to `now` (before reading the statistics).
    pub fn settle(&mut self, now: Instant) {
        self.account_queue(now);
    }

    /// Offers a packet that came from neighbour `upstream` (the node itself for its own
    /// packets) to the channel's discipline, and starts transmitting if the link is idle.
    pub fn offer_from(&mut self, now: Instant, pkt: Packet, upstream: NodeId) -> Offer {
        self.stats.arrivals += 1;
        // The queue-length integral up to the arrival. Exact even when the length does not
        // change: the terms are whole packet-nanoseconds, below 2^53.
        self.account_queue(now);
        let before = self.dropped.len();
        let idle = self.in_service.is_none() && self.control.is_empty();
        let (verdict, bypass) =
            self.disc
                .enqueue(now, pkt, upstream, idle, &mut self.rng, &mut self.dropped);
        // Packets pushed out to make room are overflow drops.
        self.stats.drops_full += (self.dropped.len() - before) as u64;
        match verdict {
            Verdict::DropFull => {
                self.stats.drops_full += 1;
                return Offer::Dropped;
            }
            Verdict::DropEarly => {
                self.stats.drops_early += 1;
                return Offer::Dropped;
            }
            Verdict::Mark => self.stats.marks += 1,
            Verdict::Enqueue => {}
        }
        if let Some(p) = bypass {
            self.in_service = Some(p);
            return Offer::Transmitting(self.transmit_time(&p));
        }
        let started = self.start_next(now);
        self.stats.max_queue_packets = self.stats.max_queue_packets.max(self.disc.len().packets);
        match started {
            Some(d) => Offer::Transmitting(d),
            None => Offer::Queued,
        }
    }

    /// Offers a control packet (a GCCP message): it goes ahead of the data queue, past the
    /// discipline and any leaky bucket.
    pub fn offer_control(&mut self, now: Instant, pkt: Packet) -> Offer {
        self.control.push_back(pkt);
        match self.start_next(now) {
            Some(d) => Offer::Transmitting(d),
            None => Offer::Queued,
        }
    }

    /// Starts the next transmission if the channel is idle: a control packet first, then what
    /// the discipline releases. Returns its transmission time.
    pub fn start_next(&mut self, now: Instant) -> Option<Duration> {
        if self.in_service.is_some() {
            return None;
        }
        if let Some(p) = self.control.pop_front() {
            self.control_sent += 1;
            self.in_service = Some(p);
            return Some(self.transmit_time(&p));
        }
        // The queue-length integral up to now, at the length the queue had since its last
        // change: before the dequeue (and any drop at dequeue) shortens it.
        self.account_queue(now);
        let before = self.dropped.len();
        let p = self
            .disc
            .dequeue(now, &mut self.dropped, &mut self.stats.marks);
        // Drops at dequeue are the discipline's congestion signal (CoDel's control law).
        self.stats.drops_early += (self.dropped.len() - before) as u64;
        let p = p?;
        self.in_service = Some(p);
        Some(self.transmit_time(&p))
    }

    /// The time to send `p` at the link rate: its bytes plus the link's framing bytes.
    #[inline]
    fn transmit_time(&self, p: &Packet) -> Duration {
        self.rate
            .transmit_time(u64::from(p.size) + u64::from(self.framing))
    }

    /// The packet in service finished transmission. Returns it unless the wire lost it, and the
    /// transmission time of the next packet if one starts.
    pub fn complete(&mut self, now: Instant) -> (Option<Packet>, Option<Duration>) {
        let done = self.in_service.take();
        let next = self.start_next(now);
        // RED's idle period starts when the link goes idle (ns-2's REDQueue::deque), not when
        // the last waiting packet enters service one transmission earlier.
        if self.in_service.is_none() {
            self.disc.on_link_idle(now);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Transport;
    use concord_cc::aqm::{AqmConfig, QueueLimit};

    fn channel(framing_bytes: u32) -> Channel {
        let spec = ChannelSpec {
            rate: Rate::from_mbps(10),
            delay: Duration::from_millis(1),
            queue: AqmConfig::DropTail {
                limit: QueueLimit::Packets(10),
            },
            loss: 0.0,
            loss_applies_to: LossFilter::All,
            gcca: None,
            eca: None,
            framing_bytes,
        };
        Channel::new("a->b".into(), 0, 1, &spec, Rng::new(1))
    }

    fn packet() -> Packet {
        Packet::new(
            0,
            1,
            0,
            1000,
            Instant::ZERO,
            Transport::Udp { seq: 0, len: 972 },
        )
    }

    #[test]
    fn the_queue_integral_counts_a_waiting_packet_until_its_dequeue() {
        // Three 1000-byte packets at t = 0 on 10 Mbit/s: one transmits (800 us), two wait.
        // When the first completes at 800 us, two packets have waited 800 us each:
        // 2 x 800,000 ns = 1,600,000 packet-ns, counted before the dequeue shortens the queue.
        let mut c = channel(0);
        for _ in 0..3 {
            c.offer_from(Instant::ZERO, packet(), 0);
        }
        assert_eq!(c.stats.queue_area, 0.0);
        let (done, next) = c.complete(Instant::ZERO + Duration::from_micros(800));
        assert!(done.is_some());
        assert_eq!(next, Some(Duration::from_micros(800)));
        assert_eq!(c.stats.queue_area, 1_600_000.0);
    }

    #[test]
    fn framing_bytes_lengthen_every_transmission_on_the_link() {
        // 1000 bytes at 10 Mbit/s: 800 us; with PPP's 2 bytes, 1002 x 8 / 10^7 s = 801.6 us.
        let mut plain = channel(0);
        let mut ppp = channel(2);
        assert_eq!(
            plain.offer_from(Instant::ZERO, packet(), 0),
            Offer::Transmitting(Duration::from_micros(800))
        );
        assert_eq!(
            ppp.offer_from(Instant::ZERO, packet(), 0),
            Offer::Transmitting(Duration::from_nanos(801_600))
        );
        // The next packet, queued behind, is timed the same way when it starts; the counters
        // keep IP bytes.
        assert_eq!(ppp.offer_from(Instant::ZERO, packet(), 0), Offer::Queued);
        let (_, next) = ppp.complete(Instant::from_nanos(801_600));
        assert_eq!(next, Some(Duration::from_nanos(801_600)));
        assert_eq!(ppp.stats.tx_bytes, 1000);
    }
}
