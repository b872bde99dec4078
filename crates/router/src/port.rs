//! One output port: a queue under a concord-cc discipline, drained at the port's rate by the
//! router's own token clock, and GCCA's leaky bucket when the downstream neighbour throttles it.
//!
//! # The token clock
//!
//! A packet of `s` bytes (its Ethernet frame without the FCS, as Linux's htb counts `skb->len`)
//! occupies the port for `s * 8 / rate` seconds; the next may start when that time is over.
//! The router's thread wakes late by tens of microseconds under load, so the clock may run up
//! to [`CLOCK_DEPTH`] behind `now`: packets that were due while the thread slept go back to back
//! until the clock catches up, and the long-run rate stays the configured one. That is a token
//! bucket at the rate with a depth of 1 ms (1250 bytes at 10 Mbit/s).
//!
//! # Propagation delay
//!
//! A port with a `delay` holds each frame on its "wire" for that long after its transmission
//! starts, as ns-2's link delay holds it after the link sends it: the queue drains at the rate
//! while up to rate * delay of frames are in flight behind it. The frame leaves at the start of
//! its transmission plus the delay (with no delay, at the start, as before): the token clock
//! spaces the frames; the veth carries each at once.
//!
//! The clock is the router's, not an htb below it, because the queue the discipline sees must be
//! the queue that builds: with htb under a user-space FIFO, packets would leave the router's
//! queue at once and wait in htb's, where RED and the GCCP detector cannot see them.

use crate::config::{Discipline, PortConfig};
use crate::delay::DelayHistogram;
use concord_cc::aqm::{Aqm, CodelQueue, DropTail, QueueLen, QueuedPacket, Verdict};
use concord_cc::eca::load_codec::{decode_tos, encode_tos};
use concord_cc::eca::load_estimator::LoadEstimator;
use concord_cc::gcca::{GccpDetector, LeakyBucket, Signal};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::{Bytes, Rate};
use std::collections::{BTreeMap, VecDeque};

/// How far the token clock may lag `now`: 1 ms.
pub const CLOCK_DEPTH: Duration = Duration::from_millis(1);

/// A frame waiting in a queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Packet {
    /// The Ethernet frame as it will be sent.
    pub frame: Vec<u8>,
    /// Offset of the IPv4 header in `frame`.
    pub ip_offset: usize,
    /// A flow key, for CoDel's interface.
    pub flow: u32,
    /// When the port admitted it (set by [`OutputPort::enqueue`]), for its queueing delay.
    pub arrived: Instant,
}

impl Packet {
    fn ecn(&self) -> u8 {
        self.frame
            .get(self.ip_offset + 1)
            .map_or(0, |tos| tos & 0x03)
    }
}

impl QueuedPacket for Packet {
    fn size(&self) -> Bytes {
        self.frame.len() as Bytes
    }

    fn is_ect(&self) -> bool {
        matches!(self.ecn(), 1 | 2)
    }

    fn mark_ce(&mut self) {
        crate::ipv4::set_ecn_ce(&mut self.frame, self.ip_offset);
    }

    fn flow(&self) -> u32 {
        self.flow
    }
}

/// What a port has done, for the status.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortCounters {
    /// Packets admitted to the queue.
    pub enqueued: u64,
    /// Packets sent.
    pub sent: u64,
    /// Bytes sent.
    pub sent_bytes: u64,
    /// Packets dropped because the queue was full.
    pub drops_full: u64,
    /// Packets dropped early by RED or by CoDel's control law.
    pub drops_early: u64,
    /// Packets marked CE.
    pub marks: u64,
    /// The most packets the queue has held.
    pub max_queue: u32,
    /// GCCP CONGESTION messages applied to this port's leaky bucket.
    pub gccp_congestion: u64,
    /// GCCP NORMAL messages applied to this port's leaky bucket.
    pub gccp_normal: u64,
    /// Link time lost, us: how long packets waited, beyond [`CLOCK_DEPTH`], while the port
    /// was free and no leaky bucket held them, because the router's thread was away. The
    /// token clock cannot make that time up, so the link carries less than its rate.
    pub clock_lost_us: u64,
}

#[derive(Debug)]
enum Queue {
    /// DropTail or RED: an admission discipline in front of a FIFO.
    Admission {
        aqm: Aqm,
        fifo: VecDeque<Packet>,
        bytes: Bytes,
    },
    /// GCCA's detector in front of a FIFO.
    Gcca {
        detector: GccpDetector,
        fifo: VecDeque<Packet>,
        bytes: Bytes,
    },
    /// CoDel, which owns its packets.
    CoDel(CodelQueue<Packet>),
}

/// The outcome of offering a packet to a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The discipline's verdict.
    pub verdict: Verdict,
    /// GCCP messages the detector asks for (CONGESTION to the packet's upstream, NORMAL to all
    /// congested upstreams).
    pub signals: Vec<Signal>,
}

/// An output port.
#[derive(Debug)]
pub struct OutputPort {
    /// The interface name.
    pub name: String,
    /// The port's MAC address: the source of what it sends.
    pub mac: [u8; 6],
    rate: Rate,
    queue: Queue,
    bucket: Option<LeakyBucket>,
    /// When the port is free to start the next packet (the token clock).
    free_at: Instant,
    counters: PortCounters,
    eca: Option<LoadEstimator>,
    delay: DelayHistogram,
    /// The propagation delay out of the port.
    propagation: Duration,
    /// Frames in flight on the wire, with the time each leaves, in order.
    wire: VecDeque<(Instant, Packet)>,
    /// Drops by the packet's IPv4 source address: (early, full).
    drops_by_source: BTreeMap<[u8; 4], (u64, u64)>,
}

/// Why a port cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The leaky bucket's configuration is impossible.
    #[error("port {0}: {1}")]
    Bucket(String, concord_cc::gcca::LeakyBucketConfigError),
    /// The interface's MAC address is unknown.
    #[error("port {0}: no MAC address; give `mac` or run the router where the interface exists")]
    NoMac(String),
    /// ECA's load estimator's configuration is impossible.
    #[error("port {0}: {1}")]
    Eca(String, concord_cc::eca::ConfigError),
    /// CoDel has no head packet to meter, so it cannot sit behind a leaky bucket.
    #[error("port {0}: a CoDel queue cannot be throttled; set throttle = false or use gcca/red")]
    CodelThrottle(String),
}

impl OutputPort {
    /// A port as configured, idle at time zero.
    pub fn new(config: &PortConfig) -> Result<OutputPort, PortError> {
        let mac = config
            .mac
            .ok_or_else(|| PortError::NoMac(config.name.clone()))?;
        let rate = config.rate.bps();
        let queue = match &config.discipline {
            Discipline::DropTail(limit) => Queue::Admission {
                aqm: Aqm::DropTail(DropTail::new(*limit)),
                fifo: VecDeque::new(),
                bytes: 0,
            },
            Discipline::Red(c) => Queue::Admission {
                aqm: Aqm::Red(concord_cc::aqm::Red::new(c.clone(), rate)),
                fifo: VecDeque::new(),
                bytes: 0,
            },
            Discipline::Gcca(c) => Queue::Gcca {
                detector: GccpDetector::new(c.clone(), rate),
                fifo: VecDeque::new(),
                bytes: 0,
            },
            Discipline::CoDel(c) => {
                if config.bucket.is_some() {
                    return Err(PortError::CodelThrottle(config.name.clone()));
                }
                Queue::CoDel(CodelQueue::new(*c))
            }
        };
        let bucket = config
            .bucket
            .map(LeakyBucket::new)
            .transpose()
            .map_err(|e| PortError::Bucket(config.name.clone(), e))?;
        Ok(OutputPort {
            name: config.name.clone(),
            mac,
            rate: config.rate,
            queue,
            bucket,
            free_at: Instant::ZERO,
            counters: PortCounters::default(),
            delay: DelayHistogram::default(),
            propagation: config.delay,
            wire: VecDeque::new(),
            drops_by_source: BTreeMap::new(),
            eca: config
                .eca
                .clone()
                .map(|c| LoadEstimator::new(c, Instant::ZERO))
                .transpose()
                .map_err(|e| PortError::Eca(config.name.clone(), e))?,
        })
    }

    /// The queue's length now.
    pub fn len(&self) -> QueueLen {
        match &self.queue {
            Queue::Admission { fifo, bytes, .. } | Queue::Gcca { fifo, bytes, .. } => QueueLen {
                packets: fifo.len() as u32,
                bytes: *bytes,
            },
            Queue::CoDel(q) => q.len(),
        }
    }

    /// True if nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len().packets == 0
    }

    /// The counters.
    pub fn counters(&self) -> PortCounters {
        self.counters
    }

    /// The rate the port sends at, at `now`: the link's, or the leaky bucket's if lower.
    pub fn rate(&self, now: Instant) -> Rate {
        match &self.bucket {
            Some(b) => Rate::from_bps(b.rate(now).bps().min(self.rate.bps())),
            None => self.rate,
        }
    }

    /// RED's or the detector's average queue, if the discipline keeps one.
    pub fn average(&self) -> Option<f64> {
        match &self.queue {
            Queue::Admission { aqm, .. } => aqm.average(),
            Queue::Gcca { detector, .. } => Some(detector.avg()),
            Queue::CoDel(_) => None,
        }
    }

    /// Offers `packet`, sent by upstream neighbour `upstream`, to the queue at `now`.
    pub fn enqueue(
        &mut self,
        now: Instant,
        mut packet: Packet,
        upstream: u32,
        rng: &mut Rng,
    ) -> Admission {
        if let Some(e) = &mut self.eca {
            // Section IV.A.2: every arrival counts toward the interval; the packet leaves with
            // max(LOAD, L) in the prototype's 8-bit TOS code (section V.A.1).
            e.on_arrival(now, packet.size());
            if let Some(&tos) = packet.frame.get(packet.ip_offset + 1) {
                let stamped = encode_tos(e.stamp(decode_tos(tos)));
                if stamped != tos {
                    packet.frame[packet.ip_offset + 1] = stamped;
                    crate::ipv4::fill_header_checksum(&mut packet.frame, packet.ip_offset);
                }
            }
        }
        packet.arrived = now;
        let len = self.len();
        let size = packet.size();
        let source = packet
            .frame
            .get(packet.ip_offset + 12..packet.ip_offset + 16)
            .and_then(|b| <[u8; 4]>::try_from(b).ok());
        let mut signals = Vec::new();
        let verdict = match &mut self.queue {
            Queue::Admission { aqm, fifo, bytes } => {
                let v = aqm.on_arrival(now, len, size, packet.is_ect(), rng);
                if v == Verdict::Mark {
                    packet.mark_ce();
                }
                if !v.is_drop() {
                    *bytes += size;
                    fifo.push_back(packet);
                }
                v
            }
            Queue::Gcca {
                detector,
                fifo,
                bytes,
            } => {
                let d = detector.on_arrival(now, len, size, upstream, rng);
                signals.extend(d.signal);
                signals.extend(d.normal);
                if !d.verdict.is_drop() {
                    *bytes += size;
                    fifo.push_back(packet);
                }
                d.verdict
            }
            Queue::CoDel(q) => match q.enqueue(now, packet) {
                Ok(()) => Verdict::Enqueue,
                Err(_) => Verdict::DropFull,
            },
        };
        match verdict {
            Verdict::Enqueue => self.counters.enqueued += 1,
            Verdict::Mark => {
                self.counters.enqueued += 1;
                self.counters.marks += 1;
            }
            Verdict::DropFull => self.counters.drops_full += 1,
            Verdict::DropEarly => self.counters.drops_early += 1,
        }
        if let (true, Some(src)) = (verdict.is_drop(), source) {
            let d = self.drops_by_source.entry(src).or_default();
            if verdict == Verdict::DropFull {
                d.1 += 1;
            } else {
                d.0 += 1;
            }
        }
        self.counters.max_queue = self.counters.max_queue.max(self.len().packets);
        Admission { verdict, signals }
    }

    /// When [`poll_transmit`](Self::poll_transmit) next has a frame: the next packet's start
    /// (with no propagation delay), or the earlier of that start and the time the wire's
    /// first frame leaves.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let wire = self.wire.front().map(|&(t, _)| t);
        [self.start_timeout(now), wire].into_iter().flatten().min()
    }

    /// Drops by IPv4 source address: (early, full), in address order.
    pub fn drops_by_source(&self) -> impl Iterator<Item = ([u8; 4], (u64, u64))> + '_ {
        self.drops_by_source.iter().map(|(a, d)| (*a, *d))
    }

    /// Frames on the wire: started, not yet out of the propagation delay.
    pub fn in_flight(&self) -> usize {
        self.wire.len()
    }

    /// The earliest time the next packet may start, if one is queued: the token clock and the
    /// leaky bucket both allow it.
    fn start_timeout(&self, now: Instant) -> Option<Instant> {
        let head = match &self.queue {
            Queue::Admission { fifo, .. } | Queue::Gcca { fifo, .. } => fifo.front()?.size(),
            Queue::CoDel(q) => {
                if q.len().packets == 0 {
                    return None;
                }
                0
            }
        };
        let clock = self.free_at.saturating_since(now);
        let mut at = now + clock;
        if let Some(b) = &self.bucket {
            at = at.max(b.next_departure(now, head));
        }
        Some(at)
    }

    /// The next frame to hand to the interface at `now`: with no propagation delay, the next
    /// packet if the port may start one; with one, the wire's first frame once its delay is
    /// over, after starting every packet the port may start by `now`. NORMAL signals the
    /// detector gives as the queue drains are appended to `signals`.
    pub fn poll_transmit(&mut self, now: Instant, signals: &mut Vec<Signal>) -> Option<Packet> {
        if self.propagation == Duration::ZERO {
            return self.start(now, signals).map(|(_, p)| p);
        }
        while let Some((start, p)) = self.start(now, signals) {
            self.wire.push_back((start + self.propagation, p));
        }
        if self.wire.front().is_some_and(|&(t, _)| t <= now) {
            return self.wire.pop_front().map(|(_, p)| p);
        }
        None
    }

    /// Starts the next packet at `now` if the port may; returns it with its start time.
    fn start(&mut self, now: Instant, signals: &mut Vec<Signal>) -> Option<(Instant, Packet)> {
        let due = self.start_timeout(now)?;
        if due > now {
            return None;
        }
        let packet = match &mut self.queue {
            Queue::Admission { aqm, fifo, bytes } => {
                let p = fifo.pop_front()?;
                *bytes -= p.size();
                aqm.on_departure(
                    now,
                    QueueLen {
                        packets: fifo.len() as u32,
                        bytes: *bytes,
                    },
                );
                p
            }
            Queue::Gcca {
                detector,
                fifo,
                bytes,
            } => {
                let p = fifo.pop_front()?;
                *bytes -= p.size();
                signals.extend(detector.on_departure(
                    now,
                    QueueLen {
                        packets: fifo.len() as u32,
                        bytes: *bytes,
                    },
                ));
                p
            }
            Queue::CoDel(q) => {
                let mut dropped = Vec::new();
                let d = q.dequeue(now, &mut dropped);
                self.counters.drops_early += dropped.len() as u64;
                if d.marked {
                    self.counters.marks += 1;
                }
                d.packet?
            }
        };
        let size = packet.size();
        self.delay.record(now.saturating_since(packet.arrived));
        if self.bucket.is_none() {
            // The packet could have started at the later of its arrival and the port's
            // freeing; what the clock cannot catch up is lost.
            let ready = self.free_at.max(packet.arrived) + CLOCK_DEPTH;
            self.counters.clock_lost_us += now.saturating_since(ready).as_micros();
        }
        if let Some(b) = &mut self.bucket {
            b.on_send(now, size);
        }
        // The token clock: start at the later of when the port frees and CLOCK_DEPTH ago.
        let start = self.free_at.max(Instant::from_nanos(
            now.as_nanos().saturating_sub(CLOCK_DEPTH.as_nanos()),
        ));
        self.free_at = start + self.rate.transmit_time(size);
        self.counters.sent += 1;
        self.counters.sent_bytes += size;
        Some((start, packet))
    }

    /// Marks CE on the packet that arrived last, if it is still queued and ECN-capable; true if
    /// it marked.
    pub fn mark_last(&mut self) -> bool {
        let last = match &mut self.queue {
            Queue::Admission { fifo, .. } | Queue::Gcca { fifo, .. } => fifo.back_mut(),
            Queue::CoDel(_) => None,
        };
        match last {
            Some(p) if p.is_ect() => {
                p.mark_ce();
                self.counters.marks += 1;
                true
            }
            _ => false,
        }
    }

    /// A GCCP message from the downstream neighbour of this port (section 3.3); false if the
    /// port has no leaky bucket.
    pub fn on_gccp(&mut self, now: Instant, code: concord_cc::gcca::Code) -> bool {
        let Some(b) = &mut self.bucket else {
            return false;
        };
        b.on_message(now, code);
        match code {
            concord_cc::gcca::Code::Congestion => self.counters.gccp_congestion += 1,
            concord_cc::gcca::Code::Normal => self.counters.gccp_normal += 1,
        }
        true
    }

    /// The queueing delays of the packets sent so far.
    pub fn delay(&self) -> &DelayHistogram {
        &self.delay
    }

    /// True if the port runs ECA's load estimator.
    pub fn runs_eca(&self) -> bool {
        self.eca.is_some()
    }

    /// ECA's load estimate L as of the last arrival, if the port runs the estimator.
    pub fn eca_load(&self) -> Option<f64> {
        self.eca.as_ref().map(LoadEstimator::load)
    }

    /// The detector's counters, if the port runs GCCA's detector.
    pub fn detector_stats(&self) -> Option<concord_cc::gcca::detector::DetectorStats> {
        match &self.queue {
            Queue::Gcca { detector, .. } => Some(detector.stats()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Discipline;
    use concord_cc::aqm::QueueLimit;

    fn port(discipline: Discipline, rate: Rate) -> OutputPort {
        OutputPort::new(&PortConfig {
            name: "p".into(),
            mac: Some([2, 0, 0, 0, 0, 1]),
            rate,
            discipline,
            bucket: None,
            eca: None,
            delay: Duration::ZERO,
            ingress_delay: Duration::ZERO,
        })
        .expect("valid")
    }

    fn packet(len: usize) -> Packet {
        let mut frame = vec![0u8; len];
        frame[14] = 0x45;
        Packet {
            frame,
            ip_offset: 14,
            flow: 0,
            arrived: Instant::ZERO,
        }
    }

    #[test]
    fn the_token_clock_spaces_packets_by_their_transmission_time() {
        // 1250 bytes at 10 Mbit/s: 1 ms each. After an idle spell the clock holds 1 ms of
        // credit (CLOCK_DEPTH): two packets go at once, then one per millisecond.
        let mut p = port(
            Discipline::DropTail(QueueLimit::Packets(10)),
            Rate::from_mbps(10),
        );
        let mut rng = Rng::new(1);
        let mut sig = Vec::new();
        for _ in 0..4 {
            p.enqueue(Instant::ZERO, packet(1250), 0, &mut rng);
        }
        let t0 = Instant::from_millis(5);
        assert!(p.poll_transmit(t0, &mut sig).is_some());
        assert!(p.poll_transmit(t0, &mut sig).is_some());
        assert_eq!(p.poll_timeout(t0), Some(Instant::from_millis(6)));
        assert!(p
            .poll_transmit(Instant::from_micros(5_999), &mut sig)
            .is_none());
        assert!(p.poll_transmit(Instant::from_millis(6), &mut sig).is_some());
        assert_eq!(
            p.poll_timeout(Instant::from_millis(6)),
            Some(Instant::from_millis(7))
        );
        assert_eq!(p.counters().sent_bytes, 3750);
    }

    #[test]
    fn a_late_thread_catches_up_at_most_one_millisecond() {
        let mut p = port(
            Discipline::DropTail(QueueLimit::Packets(10)),
            Rate::from_mbps(10),
        );
        let mut rng = Rng::new(1);
        let mut sig = Vec::new();
        for _ in 0..5 {
            p.enqueue(Instant::ZERO, packet(1250), 0, &mut rng);
        }
        assert!(p.poll_transmit(Instant::ZERO, &mut sig).is_some());
        // Woken 3 ms late: the clock starts 1 ms back, so two packets go now, not four.
        let late = Instant::from_millis(4);
        let mut n = 0;
        while p.poll_transmit(late, &mut sig).is_some() {
            n += 1;
        }
        assert_eq!(n, 2);
        // The port was free from 1 ms, so the second packet lost 4 - 1 - 1 = 2 ms of the link;
        // the third started on time.
        assert_eq!(p.counters().clock_lost_us, 2000);
    }

    #[test]
    fn droptail_drops_at_the_limit_and_counts_it() {
        let mut p = port(
            Discipline::DropTail(QueueLimit::Packets(2)),
            Rate::from_mbps(10),
        );
        let mut rng = Rng::new(1);
        let v: Vec<Verdict> = (0..3)
            .map(|_| p.enqueue(Instant::ZERO, packet(100), 0, &mut rng).verdict)
            .collect();
        assert_eq!(v, [Verdict::Enqueue, Verdict::Enqueue, Verdict::DropFull]);
        assert_eq!(p.counters().drops_full, 1);
        assert_eq!(p.counters().max_queue, 2);
    }

    #[test]
    fn red_ecn_marks_an_ect_packet_and_fixes_the_ip_checksum() {
        let red = concord_cc::aqm::RedConfig {
            w_q: 1.0,
            min_th: 0.0,
            max_th: 1.000_001,
            max_p: 1.0,
            ecn: true,
            gentle: false,
            spare_short_queue: false,
            ..concord_cc::aqm::RedConfig::for_limit(QueueLimit::Packets(10))
        };
        let mut p = port(Discipline::Red(red), Rate::from_mbps(10));
        let mut rng = Rng::new(1);
        let mut ect = crate::ipv4::tests::udp_frame(64);
        ect[15] = 0x02; // ECT(0)
        crate::ipv4::fill_header_checksum(&mut ect, 14);
        let pk = Packet {
            frame: ect,
            ip_offset: 14,
            flow: 0,
            arrived: Instant::ZERO,
        };
        p.enqueue(Instant::ZERO, pk.clone(), 0, &mut rng);
        let v = p.enqueue(Instant::ZERO, pk.clone(), 0, &mut rng);
        assert_eq!(v.verdict, Verdict::Mark);
        let mut sig = Vec::new();
        p.poll_transmit(Instant::ZERO, &mut sig);
        let marked = p
            .poll_transmit(Instant::from_secs(1), &mut sig)
            .expect("second packet");
        assert_eq!(marked.frame[15] & 3, 3);
        assert!(crate::ipv4::header_checksum_ok(&marked.frame, 14));
    }

    #[test]
    fn a_throttled_port_sends_at_the_buckets_lower_rate() {
        let mut p = OutputPort::new(&PortConfig {
            name: "p".into(),
            mac: Some([2, 0, 0, 0, 0, 1]),
            rate: Rate::from_mbps(10),
            discipline: Discipline::DropTail(QueueLimit::Packets(10)),
            bucket: Some(concord_cc::gcca::LeakyBucketConfig::for_rate(
                Rate::from_mbps(10),
            )),
            eca: None,
            delay: Duration::ZERO,
            ingress_delay: Duration::ZERO,
        })
        .expect("valid");
        assert!(p.on_gccp(Instant::ZERO, concord_cc::gcca::Code::Congestion));
        assert_eq!(p.rate(Instant::ZERO), Rate::from_mbps(9));
        assert_eq!(p.counters().gccp_congestion, 1);
        assert!(p.on_gccp(Instant::ZERO, concord_cc::gcca::Code::Normal));
        assert_eq!(p.rate(Instant::ZERO), Rate::from_mbps(10));
    }

    #[test]
    fn the_queueing_delay_runs_from_enqueue_to_the_start_of_transmission() {
        let mut p = port(
            Discipline::DropTail(QueueLimit::Packets(10)),
            Rate::from_mbps(10),
        );
        let mut rng = Rng::new(1);
        let mut sig = Vec::new();
        p.enqueue(Instant::from_millis(1), packet(1250), 0, &mut rng);
        p.enqueue(Instant::from_millis(1), packet(1250), 0, &mut rng);
        // The first waits 4 ms for a late thread; the second goes 1 ms after it (1250 bytes at
        // 10 Mbit/s), after 5 ms in the queue.
        assert!(p.poll_transmit(Instant::from_millis(5), &mut sig).is_some());
        assert!(p.poll_transmit(Instant::from_millis(6), &mut sig).is_some());
        assert_eq!(p.delay().bins(), vec![(4_000, 1), (5_000, 1)]);
    }

    #[test]
    fn a_delayed_port_sends_each_frame_its_delay_after_its_start_in_order() {
        let mut p = OutputPort::new(&PortConfig {
            name: "p".into(),
            mac: Some([2, 0, 0, 0, 0, 1]),
            rate: Rate::from_mbps(10),
            discipline: Discipline::DropTail(QueueLimit::Packets(10)),
            bucket: None,
            eca: None,
            delay: Duration::from_millis(50),
            ingress_delay: Duration::ZERO,
        })
        .expect("valid");
        let mut rng = Rng::new(1);
        let mut sig = Vec::new();
        let ms = Instant::from_millis;
        p.enqueue(ms(0), packet(1250), 0, &mut rng);
        p.enqueue(ms(0), packet(1250), 0, &mut rng);
        // Both start by 1 ms (1250 bytes at 10 Mbit/s take 1 ms) and go on the wire: none
        // leaves before 50 ms, and the queue is empty while they are in flight.
        assert_eq!(p.poll_transmit(ms(0), &mut sig), None);
        assert_eq!(p.poll_transmit(ms(1), &mut sig), None);
        assert_eq!((p.in_flight(), p.len().packets), (2, 0));
        assert_eq!(p.poll_timeout(ms(1)), Some(ms(50)));
        assert_eq!(
            p.poll_transmit(Instant::from_micros(49_999), &mut sig),
            None
        );
        assert!(p.poll_transmit(ms(50), &mut sig).is_some());
        assert_eq!(p.poll_transmit(ms(50), &mut sig), None);
        assert_eq!(p.poll_timeout(ms(50)), Some(ms(51)));
        assert!(p.poll_transmit(ms(51), &mut sig).is_some());
        assert_eq!((p.in_flight(), p.poll_timeout(ms(51))), (0, None));
        // The queueing delay is the queue's alone: 0 and 1 ms.
        assert_eq!(p.delay().bins(), vec![(100, 1), (1_000, 1)]);
        assert_eq!(p.counters().sent, 2);
    }

    #[test]
    fn drops_are_counted_by_the_packets_source_address() {
        let mut p = port(
            Discipline::DropTail(QueueLimit::Packets(1)),
            Rate::from_mbps(10),
        );
        let mut rng = Rng::new(1);
        let from = |a: u8| {
            let mut q = packet(100);
            q.frame[14 + 12..14 + 16].copy_from_slice(&[10, 0, 0, a]);
            q
        };
        p.enqueue(Instant::ZERO, from(1), 0, &mut rng);
        p.enqueue(Instant::ZERO, from(2), 0, &mut rng);
        p.enqueue(Instant::ZERO, from(2), 0, &mut rng);
        p.enqueue(Instant::ZERO, from(1), 0, &mut rng);
        let d: Vec<_> = p.drops_by_source().collect();
        assert_eq!(d, [([10, 0, 0, 1], (0, 1)), ([10, 0, 0, 2], (0, 2))]);
        assert_eq!(p.counters().drops_full, 3);
    }
}
