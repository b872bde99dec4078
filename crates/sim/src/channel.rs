//! One direction of a link: an output queue with its discipline, a serialiser at the link rate,
//! a propagation delay and an optional random loss on the wire.
//!
//! The bottleneck (rate + byte-limited queue) is kept apart from the wire (delay + loss), as in
//! smoltcp's test simulator: a packet is admitted or dropped by the queue, waits, is serialised,
//! and then may be lost on the wire before it arrives.

use crate::packet::{NodeId, Packet};
use crate::queue_disc::{Arrival, Placed, QueueDisc};
use crate::scenario::{ChannelSpec, LossFilter};
use crate::wire::{Slot, WireSlots};
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

/// `Hot::serving` when nothing is being transmitted.
const IDLE: u32 = u32::MAX;

/// `Hot::flags`: the discipline is DropTail limited in packets, with no estimator in front
/// ([`QueueDisc::is_plain_drop_tail`]): an empty queue admits every arrival, nothing is dropped
/// other than a refused arrival, and the link going idle changes nothing.
const PLAIN_DROP_TAIL: u32 = 1;
/// `Hot::flags`, with [`PLAIN_DROP_TAIL`] only: the discipline holds no packet and no control
/// packet waits. Cleared whenever that may have changed, set again after the next check.
const EMPTY: u32 = 2;
/// `Hot::flags`: the wire loss is 0, so [`Rng::bernoulli`] answers `false` without a draw.
const LOSSLESS: u32 = 4;

/// What a packet crossing an idle channel with an empty DropTail queue reads and writes, in one
/// 64-byte line (the first of the [`Channel`]): its counters, its timing and where the packet
/// in service is. `from`, `to`, `rate`, `framing` and `delay` are copies of the channel's
/// public fields, fixed at construction.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Hot {
    /// [`ChannelStats::arrivals`].
    arrivals: u64,
    /// [`ChannelStats::tx_packets`].
    tx_packets: u64,
    /// [`ChannelStats::tx_bytes`].
    tx_bytes: u64,
    rate: Rate,
    delay: Duration,
    from: NodeId,
    to: NodeId,
    /// Framing bytes.
    framing: u32,
    /// The packet in service's slot in [`WireSlots`], or [`IDLE`].
    serving: u32,
    /// [`PLAIN_DROP_TAIL`], [`EMPTY`], [`LOSSLESS`].
    flags: u32,
    /// The simulator's propagation lane for this channel's delay (see [`crate::event`]).
    lane: u32,
}

/// One direction of a link.
///
/// The first 64-byte line ([`Hot`]) is all a packet reads and writes when the channel is idle
/// and its DropTail queue empty; the configuration, the discipline and the rest of the counters
/// follow.
#[derive(Debug)]
#[repr(C, align(64))]
pub struct Channel {
    hot: Hot,
    // `from`, `to`, `rate`, `framing` and `delay` are fixed at construction: the packet path
    // reads the copies in `hot`, so a change to one of these fields would not reach it.
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
    loss: f64,
    loss_filter: LossFilter,
    rng: Rng,
    /// The last change of the queue's length. While the queue is empty its integral gains
    /// nothing, so this need only be brought up to date before the length changes.
    last_change: Instant,
    /// The counters other than those in [`Hot`] (whose fields here stay 0).
    cold_stats: ChannelStats,
    /// Control packets (GCCP messages) waiting; served before the data queue, outside the
    /// discipline and the queue's length.
    control: VecDeque<Packet>,
    /// Control packets sent.
    pub control_sent: u64,
}

impl Channel {
    /// A channel from its specification; `rng` drives the discipline's draws and the wire loss.
    pub fn new(name: String, from: NodeId, to: NodeId, spec: &ChannelSpec, rng: Rng) -> Channel {
        let disc = QueueDisc::new(spec);
        let mut flags = 0;
        if disc.is_plain_drop_tail() {
            flags |= PLAIN_DROP_TAIL | EMPTY;
        }
        // Exactly the test by which `Rng::bernoulli` returns before drawing: `p > 0.0` is
        // false (NaN included).
        if spec.loss.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
            flags |= LOSSLESS;
        }
        Channel {
            hot: Hot {
                arrivals: 0,
                tx_packets: 0,
                tx_bytes: 0,
                rate: spec.rate,
                delay: spec.delay,
                from,
                to,
                framing: spec.framing_bytes,
                serving: IDLE,
                flags,
                lane: 0,
            },
            name,
            from,
            to,
            rate: spec.rate,
            framing: spec.framing_bytes,
            delay: spec.delay,
            disc,
            dropped: Vec::new(),
            loss: spec.loss,
            loss_filter: spec.loss_applies_to,
            rng,
            last_change: Instant::ZERO,
            cold_stats: ChannelStats::default(),
            control: VecDeque::new(),
            control_sent: 0,
        }
    }

    /// The counters.
    pub fn stats(&self) -> ChannelStats {
        ChannelStats {
            arrivals: self.hot.arrivals,
            tx_packets: self.hot.tx_packets,
            tx_bytes: self.hot.tx_bytes,
            ..self.cold_stats
        }
    }

    /// Asks the processor to fetch the channel's first line (all a packet reads of an idle
    /// channel with an empty queue) into cache. A hint: it cannot fault and changes nothing.
    #[inline]
    pub fn prefetch(&self) {
        mem_prefetch::prefetch_read_data::<_, 3>(&self.hot);
    }

    /// Asks the processor to fetch what an offer to a busy channel reads besides the first
    /// line: the discipline, the drop list, the time of the queue's last change, the
    /// statistics and the control queue (a burst's second packet finds the link busy). A hint.
    #[inline]
    pub fn prefetch_offer(&self) {
        self.prefetch();
        mem_prefetch::prefetch_read_data::<_, 3>(&self.disc);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.dropped);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.last_change);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.cold_stats);
        mem_prefetch::prefetch_read_data::<_, 3>(&self.control);
    }

    /// The sending node (read from the channel's first line).
    #[inline]
    pub fn near_end(&self) -> NodeId {
        self.hot.from
    }

    /// The receiving node (read from the channel's first line).
    #[inline]
    pub fn far_end(&self) -> NodeId {
        self.hot.to
    }

    /// The event queue's propagation lane the simulator gave this channel (read from the
    /// channel's first line).
    #[inline]
    pub fn arrival_lane(&self) -> u32 {
        self.hot.lane
    }

    /// Gives the channel its propagation lane.
    pub fn set_arrival_lane(&mut self, lane: u32) {
        self.hot.lane = lane;
    }

    /// The propagation delay (read from the channel's first line).
    #[inline]
    pub fn propagation(&self) -> Duration {
        self.hot.delay
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
        // What the caller does to it is not known: the next packet takes the full path.
        self.hot.flags &= !EMPTY;
        &mut self.disc
    }

    /// True if the discipline is a port that may raise signals or hold its head (GCCA); see
    /// [`QueueDisc::is_port`].
    #[inline]
    pub fn is_port(&self) -> bool {
        self.hot.flags & PLAIN_DROP_TAIL == 0 && self.disc.is_port()
    }

    /// Takes the packets the discipline dropped since the last call, other than refused
    /// arrivals (which [`offer_from`](Self::offer_from) reports).
    pub fn take_dropped(&mut self) -> Vec<Packet> {
        std::mem::take(&mut self.dropped)
    }

    /// True if the discipline dropped packets the simulator has not taken yet (never for a
    /// plain DropTail queue, which only refuses arrivals).
    #[inline]
    pub fn has_dropped(&self) -> bool {
        self.hot.flags & PLAIN_DROP_TAIL == 0 && !self.dropped.is_empty()
    }

    /// True if a packet needs nothing but the first line: a plain DropTail queue, empty, with
    /// no control packet waiting.
    #[inline]
    fn empty_plain(&self) -> bool {
        self.hot.flags & (PLAIN_DROP_TAIL | EMPTY) == PLAIN_DROP_TAIL | EMPTY
    }

    /// Sets [`EMPTY`] from the discipline and the control queue, for a plain DropTail queue.
    #[inline]
    fn note_emptiness(&mut self) {
        if self.hot.flags & PLAIN_DROP_TAIL == 0 {
            return;
        }
        if self.disc.len().packets == 0 && self.control.is_empty() {
            self.hot.flags |= EMPTY;
        } else {
            self.hot.flags &= !EMPTY;
        }
    }

    #[inline]
    fn account_queue(&mut self, now: Instant) {
        let dt = now.saturating_since(self.last_change).as_nanos() as f64;
        self.cold_stats.queue_area += dt * self.disc.len().packets as f64;
        self.last_change = now;
    }

    /// Brings the queue-length integral up to `now` (before reading the statistics).
    pub fn settle(&mut self, now: Instant) {
        self.account_queue(now);
    }

    /// Offers `pkt`, which came from neighbour `upstream` (the node itself for its own
    /// packets), as [`offer_slot`](Self::offer_slot) does once it is in a slot of `slots`; a
    /// refused packet leaves no slot taken.
    pub fn offer_from(
        &mut self,
        now: Instant,
        pkt: Packet,
        upstream: NodeId,
        slots: &mut WireSlots,
    ) -> Offer {
        let s = slots.put(pkt);
        let offer = self.offer_slot(now, s, upstream, slots);
        if offer == Offer::Dropped {
            slots.free(s);
        }
        offer
    }

    /// Offers the packet in slot `s`, which came from neighbour `upstream` (the node itself for
    /// its own packets), to the channel's discipline, and starts transmitting if the link is
    /// idle; a packet that starts stays in `slots` until [`complete`](Self::complete). An
    /// idle link takes the packet in its slot, uncopied, when the discipline lets it bypass an
    /// empty queue; DropTail and RED queue it in its slot, other disciplines copy it into their
    /// own queues and free the slot; a refused one ([`Offer::Dropped`]) stays in `s` for the
    /// caller to take.
    pub fn offer_slot(
        &mut self,
        now: Instant,
        s: Slot,
        upstream: NodeId,
        slots: &mut WireSlots,
    ) -> Offer {
        self.hot.arrivals += 1;
        if self.hot.serving == IDLE && self.empty_plain() {
            // What the full path below does here: the queue-length integral gains 0 x dt,
            // DropTail admits the arrival to its empty queue (a packet limit of at least 1),
            // and the idle link takes it at once (the bypass), nothing dropped or marked.
            self.hot.serving = s.index();
            return Offer::Transmitting(self.transmit_time(slots.packet(s)));
        }
        // The queue-length integral up to the arrival. Exact even when the length does not
        // change: the terms are whole packet-nanoseconds, below 2^53.
        self.account_queue(now);
        let before = self.dropped.len();
        let idle = self.hot.serving == IDLE && self.control.is_empty();
        let arrival = Arrival {
            slot: s,
            upstream,
            bypass: idle,
        };
        let (verdict, placed) =
            self.disc
                .enqueue(now, slots, arrival, &mut self.rng, &mut self.dropped);
        // Packets pushed out to make room are overflow drops.
        self.cold_stats.drops_full += (self.dropped.len() - before) as u64;
        match verdict {
            Verdict::DropFull => {
                self.cold_stats.drops_full += 1;
                return Offer::Dropped;
            }
            Verdict::DropEarly => {
                self.cold_stats.drops_early += 1;
                return Offer::Dropped;
            }
            Verdict::Mark => self.cold_stats.marks += 1,
            Verdict::Enqueue => {}
        }
        // Admitted (perhaps stamped or marked in its slot): straight to the idle link from
        // its slot, queued in it, or copied into a queue of the discipline's own.
        match placed {
            Placed::Bypass => {
                self.hot.serving = s.index();
                return Offer::Transmitting(self.transmit_time(slots.packet(s)));
            }
            Placed::Copied => slots.free(s),
            Placed::InSlot | Placed::Refused => {}
        }
        let started = self.start_next(now, slots);
        self.cold_stats.max_queue_packets = self
            .cold_stats
            .max_queue_packets
            .max(self.disc.len().packets);
        self.note_emptiness();
        match started {
            Some(d) => Offer::Transmitting(d),
            None => Offer::Queued,
        }
    }

    /// Offers a control packet (a GCCP message): it goes ahead of the data queue, past the
    /// discipline and any leaky bucket.
    pub fn offer_control(&mut self, now: Instant, pkt: Packet, slots: &mut WireSlots) -> Offer {
        self.control.push_back(pkt);
        let started = self.start_next(now, slots);
        self.note_emptiness();
        match started {
            Some(d) => Offer::Transmitting(d),
            None => Offer::Queued,
        }
    }

    /// Starts the next transmission if the channel is idle: a control packet first, then what
    /// the discipline releases. Returns its transmission time.
    pub fn start_next(&mut self, now: Instant, slots: &mut WireSlots) -> Option<Duration> {
        let started = self.start_next_packet(now, slots);
        self.note_emptiness();
        started
    }

    fn start_next_packet(&mut self, now: Instant, slots: &mut WireSlots) -> Option<Duration> {
        if self.hot.serving != IDLE {
            return None;
        }
        if let Some(p) = self.control.pop_front() {
            self.control_sent += 1;
            self.hot.serving = slots.put(p).index();
            return Some(self.transmit_time(&p));
        }
        // The queue-length integral up to now, at the length the queue had since its last
        // change: before the dequeue (and any drop at dequeue) shortens it.
        self.account_queue(now);
        let before = self.dropped.len();
        let s = self
            .disc
            .dequeue(now, slots, &mut self.dropped, &mut self.cold_stats.marks);
        // Drops at dequeue are the discipline's congestion signal (CoDel's control law).
        self.cold_stats.drops_early += (self.dropped.len() - before) as u64;
        let s = s?;
        self.hot.serving = s.index();
        Some(self.transmit_time(slots.packet(s)))
    }

    /// The time to send `p` at the link rate: its bytes plus the link's framing bytes.
    #[inline]
    fn transmit_time(&self, p: &Packet) -> Duration {
        self.hot
            .rate
            .transmit_time(u64::from(p.size) + u64::from(self.hot.framing))
    }

    /// The packet in service finished transmission. Returns its slot in `slots`, where it
    /// stays as it crosses the wire, unless the wire lost it (its slot is then freed), and the
    /// transmission time of the next packet if one starts.
    pub fn complete(
        &mut self,
        now: Instant,
        slots: &mut WireSlots,
    ) -> (Option<Slot>, Option<Duration>) {
        // The slot stays taken across the wire: the next packet takes another.
        let done = self.hot.serving;
        self.hot.serving = IDLE;
        // An empty plain DropTail queue has nothing to start, and DropTail ignores the link
        // going idle: what `start_next` and `on_link_idle` would find.
        let next = if self.empty_plain() {
            None
        } else {
            let next = self.start_next(now, slots);
            // RED's idle period starts when the link goes idle (ns-2's REDQueue::deque), not
            // when the last waiting packet enters service one transmission earlier.
            if self.hot.serving == IDLE {
                self.disc.on_link_idle(now);
            }
            next
        };
        let Some(pkt) = slots.get(done) else {
            return (None, next);
        };
        self.hot.tx_packets += 1;
        self.hot.tx_bytes += pkt.size as u64;
        if self.hot.flags & LOSSLESS != 0 {
            return (Some(Slot::at(done)), next);
        }
        let exposed = match self.loss_filter {
            LossFilter::All => true,
            LossFilter::Data => pkt.is_data(),
        };
        if exposed && self.rng.bernoulli(self.loss) {
            self.cold_stats.wire_losses += 1;
            slots.free(Slot::at(done));
            return (None, next);
        }
        (Some(Slot::at(done)), next)
    }

    /// The packet now being transmitted, kept in `slots`.
    pub fn in_service<'a>(&self, slots: &'a WireSlots) -> Option<&'a Packet> {
        match self.hot.serving {
            IDLE => None,
            slot => slots.get(slot),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Transport;
    use concord_cc::aqm::{AqmConfig, QueueLimit};

    fn channel(framing_bytes: u32) -> Channel {
        channel_with(
            AqmConfig::DropTail {
                limit: QueueLimit::Packets(10),
            },
            framing_bytes,
        )
    }

    fn channel_with(queue: AqmConfig, framing_bytes: u32) -> Channel {
        let spec = ChannelSpec {
            rate: Rate::from_mbps(10),
            delay: Duration::from_millis(1),
            queue,
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
        let mut slots = WireSlots::new();
        for _ in 0..3 {
            c.offer_from(Instant::ZERO, packet(), 0, &mut slots);
        }
        assert_eq!(c.stats().queue_area, 0.0);
        let (done, next) = c.complete(Instant::ZERO + Duration::from_micros(800), &mut slots);
        assert!(done.is_some());
        assert_eq!(next, Some(Duration::from_micros(800)));
        assert_eq!(c.stats().queue_area, 1_600_000.0);
    }

    #[test]
    fn framing_bytes_lengthen_every_transmission_on_the_link() {
        // 1000 bytes at 10 Mbit/s: 800 us; with PPP's 2 bytes, 1002 x 8 / 10^7 s = 801.6 us.
        let mut plain = channel(0);
        let mut ppp = channel(2);
        let mut slots = WireSlots::new();
        assert_eq!(
            plain.offer_from(Instant::ZERO, packet(), 0, &mut slots),
            Offer::Transmitting(Duration::from_micros(800))
        );
        assert_eq!(
            ppp.offer_from(Instant::ZERO, packet(), 0, &mut slots),
            Offer::Transmitting(Duration::from_nanos(801_600))
        );
        // The next packet, queued behind, is timed the same way when it starts; the counters
        // keep IP bytes.
        assert_eq!(
            ppp.offer_from(Instant::ZERO, packet(), 0, &mut slots),
            Offer::Queued
        );
        let (_, next) = ppp.complete(Instant::from_nanos(801_600), &mut slots);
        assert_eq!(next, Some(Duration::from_nanos(801_600)));
        assert_eq!(ppp.stats().tx_bytes, 1000);
    }

    #[test]
    fn a_packet_on_an_idle_channel_needs_one_64_byte_line() {
        assert_eq!(std::mem::size_of::<Hot>(), 64);
        assert_eq!(std::mem::offset_of!(Channel, hot), 0);
        assert_eq!(std::mem::align_of::<Channel>(), 64);
    }

    #[test]
    fn only_an_estimator_free_drop_tail_limited_in_packets_is_plain() {
        let plain = |queue| channel_with(queue, 0).disc().is_plain_drop_tail();
        assert!(plain(AqmConfig::DropTail {
            limit: QueueLimit::Packets(1)
        }));
        // A byte limit refuses a packet larger than itself even when empty.
        assert!(!plain(AqmConfig::DropTail {
            limit: QueueLimit::Bytes(1500)
        }));
        assert!(!plain(AqmConfig::Red(
            concord_cc::aqm::RedConfig::for_limit(QueueLimit::Packets(10))
        )));
    }

    /// One step of a channel's life: an offer at `t` microseconds, or a completion.
    #[derive(Clone, Copy)]
    enum Step {
        Offer(u64),
        Complete(u64),
    }

    /// Runs `steps` on a fresh DropTail channel of `limit` packets; `full_path` forces every
    /// operation through the discipline (as a channel did before the first line answered an
    /// empty queue). Returns every answer and the counters after settling at 10 ms.
    fn run(steps: &[Step], limit: u32, full_path: bool) -> (Vec<String>, ChannelStats) {
        let mut c = channel_with(
            AqmConfig::DropTail {
                limit: QueueLimit::Packets(limit),
            },
            0,
        );
        let mut slots = WireSlots::new();
        let mut answers = Vec::new();
        for &step in steps {
            if full_path {
                c.disc_mut();
            }
            match step {
                Step::Offer(t) => {
                    let o = c.offer_from(Instant::from_micros(t), packet(), 0, &mut slots);
                    answers.push(format!("{o:?}"));
                }
                Step::Complete(t) => {
                    let (done, next) = c.complete(Instant::from_micros(t), &mut slots);
                    let size = done.map(|d| slots.take(d).size);
                    answers.push(format!("{size:?} {next:?}"));
                }
            }
        }
        c.settle(Instant::from_millis(10));
        (answers, c.stats())
    }

    #[test]
    fn an_empty_drop_tail_answered_from_the_first_line_gives_what_the_discipline_gives() {
        // 800 us a packet. Idle periods (short path) between a busy spell with two waiting
        // (1,000 to 3,400 us) and a refused arrival (limit 2, at 1,300 us).
        use Step::{Complete as C, Offer as O};
        let steps = [
            O(0),
            C(800),
            O(1_000),
            O(1_100),
            O(1_200),
            O(1_300),
            C(1_800),
            C(2_600),
            C(3_400),
            O(5_000),
            C(5_800),
        ];
        let short = run(&steps, 2, false);
        let full = run(&steps, 2, true);
        assert_eq!(short, full);
        // Two packets waited from 1,100 and 1,200 us: the first until 1,800, the second until
        // 2,600 us: 700,000 + 1,400,000 packet-ns. One refused, five sent.
        assert_eq!(short.1.queue_area, 2_100_000.0);
        assert_eq!(short.1.drops_full, 1);
        assert_eq!((short.1.arrivals, short.1.tx_packets), (6, 5));
        assert_eq!(short.1.tx_bytes, 5_000);
    }

    #[test]
    fn a_departed_packet_keeps_its_slot_until_taken_and_a_lost_one_frees_it() {
        let mut slots = WireSlots::new();
        let mut c = channel(0);
        c.offer_from(Instant::ZERO, packet(), 0, &mut slots);
        c.offer_from(Instant::ZERO, packet(), 0, &mut slots);
        // The second packet starts in another slot while the first waits to be taken.
        let (done, next) = c.complete(Instant::from_micros(800), &mut slots);
        assert_eq!(done, Some(Slot::at(0)));
        assert_eq!(next, Some(Duration::from_micros(800)));
        assert_eq!(c.hot.serving, 1);
        assert_eq!(slots.take(Slot::at(0)).size, 1000);
        assert_eq!(slots.put(packet()), Slot::at(0));

        let mut lossy = channel_with(
            AqmConfig::DropTail {
                limit: QueueLimit::Packets(10),
            },
            0,
        );
        lossy.loss = 1.0;
        lossy.hot.flags &= !LOSSLESS;
        let mut slots = WireSlots::new();
        lossy.offer_from(Instant::ZERO, packet(), 0, &mut slots);
        assert_eq!(
            lossy.complete(Instant::from_micros(800), &mut slots),
            (None, None)
        );
        assert_eq!(lossy.stats().wire_losses, 1);
        assert_eq!(slots.put(packet()), Slot::at(0));
    }

    #[test]
    fn an_offered_slot_is_served_in_place_queued_in_place_or_left_when_refused() {
        let mut slots = WireSlots::new();
        let mut c = channel_with(
            AqmConfig::DropTail {
                limit: QueueLimit::Packets(1),
            },
            0,
        );
        // Idle link, empty queue: the packet is served in the slot it came in.
        let a = slots.put(packet());
        assert_eq!(
            c.offer_slot(Instant::ZERO, a, 0, &mut slots),
            Offer::Transmitting(Duration::from_micros(800))
        );
        assert_eq!(c.hot.serving, a.index());
        // Busy link: DropTail queues the second packet in its slot, which stays taken.
        let mut second = packet();
        second.flow = 5;
        let b = slots.put(second);
        assert_eq!(c.offer_slot(Instant::ZERO, b, 0, &mut slots), Offer::Queued);
        assert_eq!(
            c.queue_len(),
            QueueLen {
                packets: 1,
                bytes: 1000
            }
        );
        // Full queue: the third is refused and stays in its slot for the caller to take.
        let mut third = packet();
        third.flow = 7;
        let d = slots.put(third);
        assert_ne!(d, b);
        assert_eq!(
            c.offer_slot(Instant::ZERO, d, 0, &mut slots),
            Offer::Dropped
        );
        assert_eq!(slots.take(d).flow, 7);
        assert_eq!(c.stats().drops_full, 1);
        assert_eq!(c.stats().arrivals, 3);
        // The first leaves; the second starts from the slot it waited in.
        let (done, next) = c.complete(Instant::from_micros(800), &mut slots);
        assert_eq!(done, Some(a));
        assert_eq!(next, Some(Duration::from_micros(800)));
        assert_eq!(c.hot.serving, b.index());
        assert_eq!(c.in_service(&slots).map(|p| p.flow), Some(5));
        assert_eq!(c.queue_len(), QueueLen::default());

        // A queue limited in bytes is not plain: the discipline admits the packet, lets it
        // bypass its empty queue, and the idle link serves it from its slot.
        let mut bytes = channel_with(
            AqmConfig::DropTail {
                limit: QueueLimit::Bytes(3_000),
            },
            0,
        );
        let e = slots.put(packet());
        assert_eq!(
            bytes.offer_slot(Instant::ZERO, e, 0, &mut slots),
            Offer::Transmitting(Duration::from_micros(800))
        );
        assert_eq!(bytes.hot.serving, e.index());
        assert_eq!(bytes.queue_len().packets, 0);
    }

    #[test]
    fn a_freed_wire_slot_is_the_next_one_taken() {
        let mut slots = WireSlots::new();
        let a = slots.put(packet());
        let b = slots.put(packet());
        assert_eq!((a, b), (Slot::at(0), Slot::at(1)));
        slots.take(a);
        assert_eq!(slots.put(packet()), a);
    }
}
