//! Linux's TCP pacing: the sender spaces its segments at a rate set from cwnd and srtt on every
//! ACK, so that they leave at a little more than the rate the window allows instead of in
//! bursts. Off by default (the papers' ns-2 senders do not pace); `TcpConfig::pacing` turns it
//! on.
//!
//! The rate is `tcp_update_pacing_rate` (net/ipv4/tcp_input.c), run after every ACK and when
//! the connection is established:
//!
//! ```text
//! rate = ratio / 100 * max(cwnd, packets_out) * mss / srtt        (bytes per second)
//! ratio = tcp_pacing_ss_ratio (200) if cwnd < ssthresh / 2, else tcp_pacing_ca_ratio (120)
//! ```
//!
//! with no rate (no pacing) before the first RTT sample. The departure times are the kernel's
//! "earliest departure time" model (`tcp_update_skb_after_send` in net/ipv4/tcp_output.c):
//! after a segment of `len` payload bytes leaves, the next may leave `len / rate` later, less
//! up to half of that gap when the sender was late (the time between the departure it was due
//! and the one it took: the kernel's allowance for OS jitter); the first ten data segments of
//! the connection add no gap (`data_segs_out >= 10`, as sch_fq does not pace them). A segment
//! waits until its departure time (`tcp_pacing_check`).
//!
//! Linux paces the GSO packets it builds, not segments: `tcp_write_xmit` puts what the window
//! allows at that moment into one packet of up to `tcp_tso_autosize` segments (`sk_pacing_rate
//! >> sk_pacing_shift`, about 1 ms of the rate, capped at 64 KiB, at least `tcp_min_tso_segs`
//! = 2), the packet's segments leave back to back, and the packet as a whole takes `len / rate`
//! (net/ipv4/tcp_output.c: `tcp_tso_autosize`, `tcp_tso_segs`, `tcp_update_skb_after_send` with
//! `skb->len` the packet's). With `gso` off (the default) segments are paced one by one at the
//! same rate; with it on, the segments a sender releases at the same instant form a packet of at
//! most that many segments. What Linux adds around it is not modelled: TSO deferral
//! (`tcp_tso_should_defer`) and separate packets for retransmissions and new data.

use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::Bytes;

/// Linux's default `net.ipv4.tcp_pacing_ss_ratio`, percent.
pub const LINUX_SS_RATIO: u32 = 200;
/// Linux's default `net.ipv4.tcp_pacing_ca_ratio`, percent.
pub const LINUX_CA_RATIO: u32 = 120;
/// Data segments that leave before any gap is added (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;
/// Linux's default `net.ipv4.tcp_min_tso_segs`: the fewest segments of a GSO packet.
pub const LINUX_MIN_TSO_SEGS: u64 = 2;
/// Linux's default `sk_pacing_shift`: a GSO packet holds about 2^-10 s (1 ms) of the rate.
const PACING_SHIFT: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE`: the largest GSO packet, bytes.
const GSO_MAX_SIZE: u64 = 65_536;

/// The pacing ratios, the two sysctls of the same names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacingConfig {
    /// Rate in slow start (cwnd below half of ssthresh), percent of cwnd / srtt (Linux: 200).
    pub ss_ratio: u32,
    /// Rate otherwise, percent of cwnd / srtt (Linux: 120).
    pub ca_ratio: u32,
    /// Pace GSO packets of `tcp_tso_autosize` segments as Linux does, instead of single
    /// segments (false: segment by segment).
    pub gso: bool,
}

impl Default for PacingConfig {
    fn default() -> Self {
        PacingConfig {
            ss_ratio: LINUX_SS_RATIO,
            ca_ratio: LINUX_CA_RATIO,
            gso: false,
        }
    }
}

/// `tcp_tso_autosize`: the segments of one GSO packet at `rate` bytes per second for segments
/// of `mss` bytes, `rate >> sk_pacing_shift` bytes (at most 64 KiB), at least
/// `tcp_min_tso_segs`. (Linux adds `gso_max_size >> (min_rtt_us >> tcp_tso_rtt_log)`, which is
/// nothing for a minimum RTT of 16.4 ms or more at `tcp_tso_rtt_log` = 9.)
pub fn tso_autosize(rate: u64, mss: Bytes) -> u64 {
    let bytes = (rate >> PACING_SHIFT).min(GSO_MAX_SIZE);
    (bytes / mss.max(1)).max(LINUX_MIN_TSO_SEGS)
}

/// The GSO packet being built (`gso`): segments released at `at` join it up to `limit`.
#[derive(Clone, Copy, Debug)]
struct GsoPacket {
    /// When its first segment left.
    at: Instant,
    /// Segments in it so far, and the most it may hold (`tcp_tso_autosize`).
    segments: u64,
    limit: u64,
    /// Payload bytes in it so far.
    bytes: Bytes,
    /// The departure time its first segment had (`tcp_wstamp_ns` before it).
    prior: Instant,
}

/// One connection's pacing state.
#[derive(Clone, Debug)]
pub struct Pacer {
    config: PacingConfig,
    /// `sk_pacing_rate`, bytes per second; `None` before the first RTT sample.
    rate: Option<u64>,
    /// `tcp_wstamp_ns`: the earliest time the next segment may leave.
    next_departure: Instant,
    /// `data_segs_out`: segments sent, retransmissions included.
    segments_out: u64,
    /// A segment is ready and waits for `next_departure` (the kernel's pacing timer runs).
    waiting: bool,
    /// With `gso`, the packet the last segment went into.
    packet: Option<GsoPacket>,
}

impl Pacer {
    /// A pacer with no rate yet.
    pub fn new(config: PacingConfig) -> Pacer {
        Pacer {
            config,
            rate: None,
            next_departure: Instant::ZERO,
            segments_out: 0,
            waiting: false,
            packet: None,
        }
    }

    /// `tcp_update_pacing_rate`: the rate from the window `cwnd`, the threshold `ssthresh`,
    /// the bytes sent and not yet cumulatively acknowledged `outstanding` (`packets_out`) and
    /// the smoothed RTT. Windows are in bytes (the kernel's packets times mss).
    pub fn update_rate(
        &mut self,
        cwnd: Bytes,
        ssthresh: Bytes,
        outstanding: Bytes,
        srtt: Option<Duration>,
    ) {
        let Some(srtt) = srtt.filter(|s| !s.is_zero()) else {
            self.rate = None;
            return;
        };
        let ratio = if cwnd < ssthresh / 2 {
            self.config.ss_ratio
        } else {
            self.config.ca_ratio
        };
        let bytes = u128::from(cwnd.max(outstanding));
        let rate = bytes * u128::from(ratio) * u128::from(NANOS_PER_SEC)
            / (100 * u128::from(srtt.as_nanos()));
        self.rate = Some(u64::try_from(rate).unwrap_or(u64::MAX));
    }

    /// The pacing rate, bytes per second (`None`: not pacing yet).
    pub fn rate(&self) -> Option<u64> {
        self.rate
    }

    /// The earliest time the next segment may leave.
    pub fn next_departure(&self) -> Instant {
        self.next_departure
    }

    /// True if a segment may leave at `now` (`tcp_pacing_check` finds nothing to wait for).
    /// With `gso`, a segment released at the instant a packet left joins it while it has room.
    pub fn may_send(&self, now: Instant) -> bool {
        self.next_departure <= now || self.open_packet(now).is_some()
    }

    /// The packet that a segment sent at `now` joins (`gso`), if one has room.
    fn open_packet(&self, now: Instant) -> Option<GsoPacket> {
        self.packet
            .filter(|p| self.config.gso && p.at == now && p.segments < p.limit)
    }

    /// Whether a segment waits for the departure time (the sender's last poll found one that
    /// `may_send` held back).
    pub fn set_waiting(&mut self, waiting: bool) {
        self.waiting = waiting;
    }

    /// When the segment that waits may leave (`tcp_pace_kick`'s timer), if one waits.
    pub fn waiting(&self) -> Option<Instant> {
        self.waiting.then_some(self.next_departure)
    }

    /// A segment of `len` payload bytes left at `now`: the next departure time moves on by
    /// its gap at the rate (`tcp_update_skb_after_send`). With `gso`, by the gap of the whole
    /// packet it went into.
    pub fn on_send(&mut self, now: Instant, len: Bytes) {
        self.waiting = false;
        self.segments_out += 1;
        let packet = match self.open_packet(now) {
            Some(p) => GsoPacket {
                segments: p.segments + 1,
                bytes: p.bytes + len,
                ..p
            },
            None => GsoPacket {
                at: now,
                segments: 1,
                limit: self
                    .rate
                    .map_or(LINUX_MIN_TSO_SEGS, |r| tso_autosize(r, len)),
                bytes: len,
                prior: self.next_departure,
            },
        };
        self.packet = Some(packet);
        let prior = packet.prior;
        let start = prior.max(packet.at);
        self.next_departure = start;
        let Some(rate) = self.rate.filter(|&r| r > 0) else {
            return;
        };
        if self.segments_out < UNPACED_SEGMENTS {
            return;
        }
        let gap = u128::from(packet.bytes) * u128::from(NANOS_PER_SEC) / u128::from(rate);
        let gap = u64::try_from(gap).unwrap_or(u64::MAX);
        // Late by `credit`: up to half the gap is taken off (OS jitter).
        let credit = start.saturating_since(prior).as_nanos();
        let gap = gap - (gap / 2).min(credit);
        self.next_departure = start + Duration::from_nanos(gap);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Instant {
        Instant::from_micros(us)
    }

    #[test]
    fn slow_start_rate_is_the_ss_ratio_of_cwnd_over_srtt() {
        let mut p = Pacer::new(PacingConfig::default());
        // cwnd 20 segments of 1448 B, ssthresh unbounded, srtt 40 ms:
        // 2.00 * 28_960 B / 0.040 s = 1_448_000 B/s.
        p.update_rate(
            20 * 1448,
            u64::MAX,
            10 * 1448,
            Some(Duration::from_millis(40)),
        );
        assert_eq!(p.rate(), Some(1_448_000));
    }

    #[test]
    fn from_half_of_ssthresh_on_the_rate_is_the_ca_ratio() {
        let mut p = Pacer::new(PacingConfig::default());
        // cwnd 20 segments = ssthresh / 2 (40 segments): Linux's test is cwnd < ssthresh / 2.
        p.update_rate(20 * 1448, 40 * 1448, 0, Some(Duration::from_millis(40)));
        assert_eq!(p.rate(), Some(868_800)); // 1.20 * 28_960 / 0.040
        p.update_rate(20 * 1448 - 1, 40 * 1448, 0, Some(Duration::from_millis(40)));
        assert_eq!(p.rate(), Some(1_447_950)); // 2.00 * 28_959 / 0.040
    }

    #[test]
    fn outstanding_above_cwnd_sets_the_rate() {
        let mut p = Pacer::new(PacingConfig {
            ss_ratio: 300,
            ca_ratio: 100,
            gso: false,
        });
        // max(cwnd, packets_out): 30 segments out after a reduction to 10.
        p.update_rate(
            10 * 1448,
            10 * 1448,
            30 * 1448,
            Some(Duration::from_millis(100)),
        );
        assert_eq!(p.rate(), Some(434_400)); // 1.00 * 43_440 / 0.100
    }

    #[test]
    fn no_rtt_sample_no_pacing() {
        let mut p = Pacer::new(PacingConfig::default());
        p.update_rate(10 * 1448, u64::MAX, 0, None);
        assert_eq!(p.rate(), None);
        for i in 0..20 {
            p.on_send(at(i), 1448);
        }
        assert_eq!(p.next_departure(), at(19));
        assert!(p.may_send(at(19)));
    }

    #[test]
    fn the_first_ten_segments_leave_without_a_gap_the_tenth_adds_one() {
        let mut p = Pacer::new(PacingConfig::default());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        // 2.00 * 14_480 / 0.040 = 724_000 B/s: 1448 B take 2 ms.
        assert_eq!(p.rate(), Some(724_000));
        for _ in 0..9 {
            p.on_send(at(1_000), 1448);
            assert_eq!(p.next_departure(), at(1_000));
        }
        p.on_send(at(1_000), 1448);
        assert_eq!(p.next_departure(), at(3_000));
        assert!(!p.may_send(at(2_999)));
        assert!(p.may_send(at(3_000)));
    }

    #[test]
    fn a_segment_sent_on_time_adds_its_whole_gap() {
        let mut p = Pacer::new(PacingConfig::default());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        for _ in 0..10 {
            p.on_send(at(0), 1448);
        }
        assert_eq!(p.next_departure(), at(2_000));
        p.on_send(at(2_000), 1000); // 1000 / 724_000 s = 1_381_215 ns
        assert_eq!(
            p.next_departure(),
            Instant::from_nanos(2_000_000 + 1_381_215)
        );
    }

    #[test]
    fn a_late_segment_has_up_to_half_its_gap_taken_off() {
        let mut p = Pacer::new(PacingConfig::default());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        for _ in 0..10 {
            p.on_send(at(0), 1448);
        }
        // Due at 2 ms, sent at 2.3 ms: 0.3 ms of credit off the 2 ms gap.
        p.on_send(at(2_300), 1448);
        assert_eq!(p.next_departure(), at(4_000));
        // Due at 4 ms, sent at 9 ms: the credit is capped at half the gap.
        p.on_send(at(9_000), 1448);
        assert_eq!(p.next_departure(), at(10_000));
    }

    #[test]
    fn one_ack_moves_the_next_departure_by_the_new_rate() {
        let mut p = Pacer::new(PacingConfig::default());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        for _ in 0..10 {
            p.on_send(at(0), 1448);
        }
        // An ACK grows cwnd to 12 segments, srtt to 48 ms: 2.00 * 17_376 / 0.048 = 724_000.
        p.update_rate(
            12 * 1448,
            u64::MAX,
            9 * 1448,
            Some(Duration::from_millis(48)),
        );
        p.on_send(at(2_000), 1448);
        assert_eq!(p.next_departure(), at(4_000));
        // Congestion avoidance at 1.20 * 17_376 / 0.048 = 434_400 B/s: 1448 B take 3.333 ms.
        p.update_rate(
            12 * 1448,
            12 * 1448,
            12 * 1448,
            Some(Duration::from_millis(48)),
        );
        p.on_send(at(4_000), 1448);
        assert_eq!(
            p.next_departure(),
            Instant::from_nanos(4_000_000 + 3_333_333)
        );
    }

    fn gso() -> PacingConfig {
        PacingConfig {
            gso: true,
            ..PacingConfig::default()
        }
    }

    #[test]
    fn tso_autosize_is_a_millisecond_of_the_rate_and_at_least_two_segments() {
        // 1_500_000 B/s >> 10 = 1464 B: one segment of 1448, raised to tcp_min_tso_segs.
        assert_eq!(tso_autosize(1_500_000, 1448), 2);
        // 5_000_000 >> 10 = 4882 B: three segments.
        assert_eq!(tso_autosize(5_000_000, 1448), 3);
        // 1e9 >> 10 = 976_562 B, capped at 65_536 B: 45 segments.
        assert_eq!(tso_autosize(1_000_000_000, 1448), 45);
    }

    #[test]
    fn with_gso_the_segments_of_one_instant_leave_as_one_packet_and_take_its_gap() {
        let mut p = Pacer::new(gso());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        // 724_000 B/s: 1448 B take 2 ms; tcp_tso_autosize: 724_000 >> 10 = 707 B -> 2 segments.
        // The initial window goes as five packets of two; the fifth brings data_segs_out to
        // ten, so its whole 2896 B take their gap: 4 ms.
        for _ in 0..10 {
            p.on_send(at(0), 1448);
        }
        assert_eq!(p.next_departure(), at(4_000));
        p.on_send(at(4_000), 1448);
        assert_eq!(p.next_departure(), at(6_000));
        // The second segment released at 4 ms joins the packet: both leave now, the packet of
        // 2896 B takes 4 ms.
        assert!(p.may_send(at(4_000)));
        p.on_send(at(4_000), 1448);
        assert_eq!(p.next_departure(), at(8_000));
        // The packet is full: a third segment waits for 8 ms.
        assert!(!p.may_send(at(4_000)));
        assert!(!p.may_send(at(7_999)));
        assert!(p.may_send(at(8_000)));
        // A segment released later starts a packet of its own.
        p.on_send(at(8_000), 1448);
        assert_eq!(p.next_departure(), at(10_000));
        assert!(p.may_send(at(8_000)));
        assert!(!p.may_send(at(8_001)));
    }

    #[test]
    fn with_gso_a_late_packet_has_up_to_half_of_its_whole_gap_taken_off() {
        let mut p = Pacer::new(gso());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        for _ in 0..10 {
            p.on_send(at(0), 1448);
        }
        // Due at 4 ms, sent at 5.5 ms: 1.5 ms of credit. Alone, the segment's 2 ms gap loses
        // half (1 ms); with a second segment the packet's 4 ms gap loses all 1.5 ms.
        p.on_send(at(5_500), 1448);
        assert_eq!(p.next_departure(), at(6_500));
        p.on_send(at(5_500), 1448);
        assert_eq!(p.next_departure(), at(8_000));
    }

    #[test]
    fn without_gso_the_second_segment_of_an_instant_waits_its_gap() {
        let mut p = Pacer::new(PacingConfig::default());
        p.update_rate(10 * 1448, u64::MAX, 0, Some(Duration::from_millis(40)));
        for _ in 0..10 {
            p.on_send(at(0), 1448);
        }
        p.on_send(at(2_000), 1448);
        assert!(!p.may_send(at(2_000)));
        assert_eq!(p.next_departure(), at(4_000));
    }
}
