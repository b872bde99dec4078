//! GCCA's router part on one output queue (Liu, Cheung & Baras, sections 3.2 and 3.3): the
//! GCCP-capable RED detector deciding admissions in place of the queue's AQM, and the adjustable
//! leaky bucket gating the queue's departures.
//!
//! The detector sees every data packet with the neighbour it came from; the signals it raises
//! wait in [`GccaPort::outbox`] until the simulator addresses and sends them (it owns the
//! neighbour table and the reverse channels). The bucket's configured rate is the link rate, so
//! an unthrottled port sends back to back as a plain queue does; GCCP messages from the
//! downstream neighbour lower it linearly and NORMAL restores it.

use crate::packet::{NodeId, Packet, Transport};
use crate::queue_disc::Fifo;
use crate::scenario::GccaQueueSpec;
use crate::trace::capture::{flow_ports, node_address};
use concord_cc::aqm::{AqmConfig, QueueLen, Verdict};
use concord_cc::gcca::{
    Code, DetectorConfig, DetectorVerdict, GccpDetector, LeakyBucket, Padding, Signal,
};
use concord_cc::rng::Rng;
use concord_cc::time::Instant;
use concord_cc::units::{Bytes, Rate};

/// Counters of one GCCA port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStats {
    /// CONGESTION messages this port's bucket received from downstream.
    pub congestion_in: u64,
    /// NORMAL messages this port's bucket received from downstream.
    pub normal_in: u64,
    /// Times the bucket held the head of the queue back.
    pub holds: u64,
}

/// One rate change of a port's bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateChange {
    /// When.
    pub at: Instant,
    /// The bucket's rate after the message, in bit/s.
    pub rate: Rate,
}

/// The GCCA state of a router's output queue.
#[derive(Clone, Debug)]
pub struct GccaPort {
    /// The GCCP-capable RED (Fig. 3).
    pub detector: GccpDetector,
    /// The adjustable leaky bucket (section 3.3).
    pub bucket: LeakyBucket,
    /// Signals raised and not yet sent, with the padding of the packet that raised them.
    pub(crate) outbox: Vec<(Signal, Option<Padding>)>,
    /// When the held head of the queue may leave, if it is held.
    pub(crate) wake: Option<Instant>,
    /// The instant of the pending wake-up event, if one is scheduled.
    pub(crate) armed: Option<Instant>,
    /// Counters.
    pub stats: PortStats,
    /// The bucket's rate after each message it received.
    pub rates: Vec<RateChange>,
    /// The packets waiting.
    fifo: Fifo,
}

impl GccaPort {
    /// The port of a channel of `rate` whose queue is `queue` (RED parameters of the detector);
    /// `None` if `queue` is not RED (the loader never produces that).
    pub fn new(spec: &GccaQueueSpec, queue: &AqmConfig, rate: Rate) -> Option<GccaPort> {
        let AqmConfig::Red(red) = queue else {
            return None;
        };
        let detector = GccpDetector::new(
            DetectorConfig {
                red: red.clone(),
                congestion_interval: spec.congestion_interval,
            },
            rate.bps(),
        );
        let mut config = spec.bucket.config(rate);
        config.min_rate = config.min_rate.min(rate);
        let bucket = LeakyBucket::new(config).ok()?;
        Some(GccaPort {
            detector,
            bucket,
            outbox: Vec::new(),
            wake: None,
            armed: None,
            stats: PortStats::default(),
            rates: Vec::new(),
            fifo: Fifo::default(),
        })
    }

    /// A packet from neighbour `upstream` arrives at `now` (GCCA Fig. 3): the detector decides
    /// in place of an AQM; the packet is queued unless the queue is full, and the signals wait
    /// in the outbox.
    pub(crate) fn enqueue(
        &mut self,
        now: Instant,
        pkt: Packet,
        upstream: NodeId,
        rng: &mut Rng,
    ) -> Verdict {
        let verdict =
            self.detector
                .on_arrival(now, self.fifo.len(), u64::from(pkt.size), upstream, rng);
        self.note(&verdict, &pkt);
        if verdict.verdict == Verdict::DropFull {
            return Verdict::DropFull;
        }
        self.fifo.push(pkt);
        Verdict::Enqueue
    }

    /// The head of the queue, if the leaky bucket lets it leave at `now`; otherwise the port
    /// holds it and sets its wake-up. The detector sees the departure.
    pub(crate) fn dequeue(&mut self, now: Instant) -> Option<Packet> {
        let size = u64::from(self.fifo.front()?.size);
        if !self.bucket.can_send(now, size) {
            self.hold(now, size);
            return None;
        }
        self.bucket.on_send(now, size);
        self.wake = None;
        let p = self.fifo.pop()?;
        let normal = self.detector.on_departure(now, self.fifo.len());
        self.outbox.extend(normal.into_iter().map(|s| (s, None)));
        Some(p)
    }

    /// Packets and bytes waiting.
    pub fn queue_len(&self) -> QueueLen {
        self.fifo.len()
    }

    /// Keeps the signals of an arrival's verdict for sending.
    pub(crate) fn note(&mut self, verdict: &DetectorVerdict, pkt: &Packet) {
        if let Some(s) = verdict.signal {
            self.outbox.push((s, Some(padding_of(pkt))));
        }
        self.outbox
            .extend(verdict.normal.iter().map(|&s| (s, None)));
    }

    /// The bucket held back a head packet of `size` bytes at `now`: wake when it may leave, or
    /// when a restore ramp raises the rate, whichever is first.
    pub(crate) fn hold(&mut self, now: Instant, size: Bytes) {
        self.stats.holds += 1;
        let at = self.bucket.next_departure(now, size);
        let at = match self.bucket.next_rate_change(now) {
            Some(r) => at.min(r),
            None => at,
        };
        self.wake = Some(at.max(now));
    }

    /// A GCCP message from the downstream neighbour at `now`.
    pub(crate) fn on_message(&mut self, now: Instant, code: Code) {
        match code {
            Code::Congestion => self.stats.congestion_in += 1,
            Code::Normal => self.stats.normal_in += 1,
        }
        self.bucket.on_message(now, code);
        self.rates.push(RateChange {
            at: now,
            rate: self.bucket.rate(now),
        });
    }
}

/// The four-tuple of a packet's flow as the packet carries it (section 3.1's PADDING): node
/// addresses and the flow's ports as the pcap traces give them.
pub fn padding_of(pkt: &Packet) -> Padding {
    let (sport, dport) = flow_ports(pkt.flow);
    let (src_port, dst_port) = match pkt.transport {
        Transport::TcpAck { .. }
        | Transport::TcpHandshake {
            segment: concord_cc::tcp::HandshakeSegment::SynAck,
            ..
        } => (dport, sport),
        _ => (sport, dport),
    };
    Padding {
        src_addr: node_address(pkt.src),
        dst_addr: node_address(pkt.dst),
        src_port,
        dst_port,
    }
}
