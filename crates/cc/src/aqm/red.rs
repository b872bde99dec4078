//! Random Early Detection (Floyd & Jacobson 1993, "Random Early Detection Gateways for
//! Congestion Avoidance"), with ECN marking (RFC 3168).
//!
//! A RED queue keeps an exponentially weighted moving average `avg` of its length and decides
//! each arrival from it (F&J section 4, figure 2):
//!
//! - `avg < min_th`: enqueue;
//! - `min_th <= avg < max_th`: select the packet with probability `p_a`, which grows with the
//!   number of packets since the last selection so that selections are spread out (section 7);
//! - with gentle mode, `max_th <= avg < 2 * max_th`: the same, with a probability that rises from
//!   `max_p` to 1 (Floyd, "Recommendation on using the gentle_ variant of RED", 2000);
//! - above that: drop every arrival.
//!
//! A selected packet is dropped, or, if the queue uses ECN and the packet is ECN-capable, marked
//! CE (RFC 3168 section 5). The queue's hard limit is enforced before any of this.
//!
//! Units: with a [`QueueLimit::Packets`] limit the queue length, `avg`, `min_th` and `max_th`
//! count packets; with [`QueueLimit::Bytes`] they count bytes ("byte mode", F&J section 4), and
//! the probability is scaled by the packet's size.

use super::{QueueLen, QueueLimit, Verdict};
use crate::rng::Rng;
use crate::time::{Instant, NANOS_PER_SEC};
use crate::units::Bytes;

/// RED's parameters (names from Floyd & Jacobson 1993).
#[derive(Clone, Debug, PartialEq)]
pub struct RedConfig {
    /// Hard capacity of the queue.
    pub limit: QueueLimit,
    /// Lower threshold of the average queue, in the limit's unit (packets or bytes).
    pub min_th: f64,
    /// Upper threshold of the average queue, in the limit's unit.
    pub max_th: f64,
    /// The average's weight w_q.
    pub w_q: f64,
    /// Drop (mark) probability at max_th.
    pub max_p: f64,
    /// Gentle mode: the probability rises from max_p to 1 between max_th and 2 * max_th.
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them early (RFC 3168).
    pub ecn: bool,
    /// Typical packet size, in bytes: sets the idle-time aging of avg and, in byte mode, the
    /// size at which a packet gets the unscaled probability.
    pub mean_pktsize: Bytes,
    /// Wait between selections (ns-2 `wait_`, ns-3 `Wait`): `p_a` is 0 while
    /// `count * p_b < 1`, `p_b / (2 - count * p_b)` while it is below 2, then 1, so the gap
    /// between selections is uniform on `[1/p_b, 2/p_b]` instead of `[1, 1/p_b]`.
    pub wait: bool,
    /// No early drop or mark, and no drop on avg above the last threshold, while the queue holds
    /// at most one packet (ns-2 `REDQueue::enque` and ns-3 `RedQueueDisc::DoEnqueue` test
    /// `qlen > 1` before anything but the hard limit): an arrival at a nearly empty queue is
    /// always admitted.
    pub spare_short_queue: bool,
}

impl RedConfig {
    /// RED with thresholds at 25% and 75% of the capacity, w_q = 0.002, max_p = 0.1, gentle,
    /// no ECN, 1500-byte mean packets.
    pub fn for_limit(limit: QueueLimit) -> RedConfig {
        RedConfig {
            limit,
            min_th: limit.value() * 0.25,
            max_th: limit.value() * 0.75,
            w_q: 0.002,
            max_p: 0.1,
            gentle: true,
            ecn: false,
            mean_pktsize: 1500,
            wait: false,
            spare_short_queue: false,
        }
    }

    /// `mean_pktsize` as a divisor: at least one byte.
    fn mean_pktsize_f64(&self) -> f64 {
        self.mean_pktsize.max(1) as f64
    }
}

/// Where `avg` lies relative to the thresholds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    /// `avg < min_th` (or `avg` is not a number): no early drops.
    Below,
    /// `min_th <= avg < max_th`: probability rising linearly from 0 to `max_p`.
    Linear,
    /// Gentle mode, `max_th <= avg < 2 * max_th`: probability rising from `max_p` to 1.
    Gentle,
    /// Above the last threshold: every arrival is dropped.
    Forced,
}

/// A RED queue's state.
#[derive(Clone, Debug)]
pub struct Red {
    config: RedConfig,
    /// The link's rate in bits/s, for the idle-time aging of `avg`.
    link_rate_bps: u64,
    /// Average queue length, in the limit's unit (F&J `avg`).
    avg: f64,
    /// Packets since the last selection; -1 while `avg` is below `min_th` (F&J figure 2).
    count: i64,
    /// True while the link is idle: the queue emptied and no arrival has been admitted since
    /// (a dropped arrival leaves the link idle).
    idle: bool,
    /// When the queue last became empty (F&J `q_time`).
    idle_since: Instant,
}

impl Red {
    /// A RED queue in front of a link of `link_rate_bps` bits/s; it starts empty and idle since
    /// time zero, with `avg` = 0 and `count` = -1.
    pub fn new(config: RedConfig, link_rate_bps: u64) -> Red {
        Red {
            config,
            link_rate_bps,
            avg: 0.0,
            count: -1,
            idle: true,
            idle_since: Instant::ZERO,
        }
    }

    /// Decides the fate of a packet of `size` bytes arriving at `now` at a queue of length `len`
    /// (before admission); `ect` says the packet is ECN-capable. Draws one uniform number from
    /// `rng` if, and only if, `avg` lies in a probabilistic region and the queue is not full.
    pub fn on_arrival(
        &mut self,
        now: Instant,
        len: QueueLen,
        size: Bytes,
        ect: bool,
        rng: &mut Rng,
    ) -> Verdict {
        self.arrive(now, len, size, ect, rng, Verdict::is_drop)
    }

    /// As [`Red::on_arrival`], for a queue that keeps the packets RED selects and discards only
    /// those that do not fit (GCCA's detector signals upstream instead of dropping): only a
    /// [`Verdict::DropFull`] leaves the link idle.
    pub fn on_arrival_keeping_selected(
        &mut self,
        now: Instant,
        len: QueueLen,
        size: Bytes,
        ect: bool,
        rng: &mut Rng,
    ) -> Verdict {
        self.arrive(now, len, size, ect, rng, |v| v == Verdict::DropFull)
    }

    /// Ages or updates `avg`, decides, and keeps the link idle if the arrival was discarded
    /// (`discarded` says which verdicts discard it).
    fn arrive(
        &mut self,
        now: Instant,
        len: QueueLen,
        size: Bytes,
        ect: bool,
        rng: &mut Rng,
        discarded: fn(Verdict) -> bool,
    ) -> Verdict {
        let was_idle = self.idle;
        self.update_avg(now, len);
        let verdict = self.decide(len, size, ect, rng);
        if was_idle && discarded(verdict) {
            // The dropped arrival leaves the link idle: avg has been aged up to `now`, and the
            // idle period goes on from here (F&J section 4; ns-2's `REDQueue::deque` and ns-3's
            // `RedQueueDisc::DoDequeue` find the queue empty again and restart `idletime_`).
            self.idle = true;
            self.idle_since = now;
        }
        verdict
    }

    /// The verdict for an arrival once `avg` is up to date.
    fn decide(&mut self, len: QueueLen, size: Bytes, ect: bool, rng: &mut Rng) -> Verdict {
        // The hard limit comes first; ns-2 restarts the spacing after any drop.
        if self.config.limit.is_full(len, size) {
            self.count = 0;
            return Verdict::DropFull;
        }

        if self.config.spare_short_queue && len.packets <= 1 {
            // ns-2/ns-3: outside `qavg >= th_min && qlen > 1` nothing is dropped and the
            // spacing restarts (`old_ = 0`, the count of figure 2 back to -1).
            self.count = -1;
            return Verdict::Enqueue;
        }

        match self.region(self.avg) {
            Region::Below => {
                self.count = -1;
                Verdict::Enqueue
            }
            Region::Forced => {
                // RFC 3168 section 7: above the upper threshold a router drops, even ECT packets.
                self.count = 0;
                Verdict::DropEarly
            }
            Region::Linear | Region::Gentle => {
                self.count = self.count.saturating_add(1);
                let p_b = self.p_b(self.avg, size);
                let p_a = if self.config.wait {
                    Red::p_a_wait(p_b, self.count)
                } else {
                    Red::p_a(p_b, self.count)
                };
                if rng.uniform() < p_a {
                    self.count = 0;
                    if self.config.ecn && ect {
                        Verdict::Mark
                    } else {
                        Verdict::DropEarly
                    }
                } else {
                    Verdict::Enqueue
                }
            }
        }
    }

    /// Tells the queue that a packet left at `now` and its length is now `len`; an empty queue
    /// starts the idle period that ages `avg` (F&J section 4, `q_time`).
    pub fn on_departure(&mut self, now: Instant, len: QueueLen) {
        if self.length(len) == 0.0 && !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }

    /// The average queue length, in the limit's unit (packets or bytes).
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Packets since the last selected (dropped or marked) packet; -1 while `avg` is below
    /// `min_th`, 0 right after a selection or a drop (F&J figure 2).
    pub fn count(&self) -> i64 {
        self.count
    }

    /// The configuration.
    pub fn config(&self) -> &RedConfig {
        &self.config
    }

    /// The initial probability `p_b` of selecting a packet of `size` bytes at average queue
    /// `avg` (F&J section 7): 0 below `min_th`, `max_p * (avg - min_th) / (max_th - min_th)`
    /// between the thresholds, `max_p + (1 - max_p) * (avg - max_th) / max_th` in the gentle
    /// region, 1 above. In byte mode the probabilistic regions scale it by
    /// `size / mean_pktsize` (F&J section 4); the result may then exceed 1.
    pub fn p_b(&self, avg: f64, size: Bytes) -> f64 {
        let c = &self.config;
        let p_b = match self.region(avg) {
            Region::Below => return 0.0,
            Region::Forced => return 1.0,
            // The region guarantees max_th > min_th here: no division by zero.
            Region::Linear => c.max_p * (avg - c.min_th) / (c.max_th - c.min_th),
            // The region guarantees max_th > 0 here.
            Region::Gentle => c.max_p + (1.0 - c.max_p) * (avg - c.max_th) / c.max_th,
        };
        match c.limit {
            QueueLimit::Packets(_) => p_b,
            QueueLimit::Bytes(_) => p_b * size as f64 / c.mean_pktsize_f64(),
        }
    }

    /// The actual probability `p_a = p_b / (1 - count * p_b)` of selecting the `count`-th
    /// packet since the last selection (F&J section 7); 1 once `count * p_b >= 1`, and never
    /// above 1. Spreading selections this way makes the gap between them roughly uniform
    /// instead of geometric. A `p_b` that is not positive (or NaN) gives 0.
    pub fn p_a(p_b: f64, count: i64) -> f64 {
        // A malformed probability never selects.
        if p_b.is_nan() || p_b <= 0.0 {
            return 0.0;
        }
        let spent = count as f64 * p_b;
        if spent >= 1.0 {
            return 1.0;
        }
        (p_b / (1.0 - spent)).min(1.0)
    }

    /// The probability of selecting the `count`-th packet since the last selection when RED
    /// waits between selections (ns-2 `REDQueue::modify_p` with `wait_`, ns-3
    /// `RedQueueDisc::ModifyP` with `Wait`): 0 while `count * p_b < 1`,
    /// `p_b / (2 - count * p_b)` while `count * p_b < 2`, then 1. A `p_b` that is not positive
    /// (or NaN) gives 0.
    pub fn p_a_wait(p_b: f64, count: i64) -> f64 {
        if p_b.is_nan() || p_b <= 0.0 {
            return 0.0;
        }
        let spent = count as f64 * p_b;
        if spent < 1.0 {
            0.0
        } else if spent < 2.0 {
            (p_b / (2.0 - spent)).min(1.0)
        } else {
            1.0
        }
    }

    /// The queue length in the limit's unit.
    fn length(&self, len: QueueLen) -> f64 {
        match self.config.limit {
            QueueLimit::Packets(_) => len.packets as f64,
            QueueLimit::Bytes(_) => len.bytes as f64,
        }
    }

    /// Updates `avg` for an arrival at `now` to a queue of length `len` (F&J figure 2).
    fn update_avg(&mut self, now: Instant, len: QueueLen) {
        let w_q = self.config.w_q;
        if self.idle {
            // F&J section 4: after an idle period, age avg as if m packets had arrived to an
            // empty queue, m being the idle time over a typical packet's transmission time
            // s = mean_pktsize * 8 / link_rate (seconds). Computed in nanoseconds and bits so that
            // whole multiples of s give a whole m.
            let idle_ns = now.saturating_since(self.idle_since).as_nanos() as f64;
            let s_bit_ns = self.config.mean_pktsize_f64() * 8.0 * NANOS_PER_SEC as f64;
            let m = idle_ns * self.link_rate_bps as f64 / s_bit_ns;
            // The clamp keeps an out-of-range w_q from turning avg into NaN.
            self.avg *= (1.0 - w_q).clamp(0.0, 1.0).powf(m);
            self.idle = false;
        } else {
            // F&J section 6: avg <- (1 - w_q) * avg + w_q * q.
            self.avg = (1.0 - w_q) * self.avg + w_q * self.length(len);
        }
    }

    /// Classifies `avg`; a `NaN` average counts as below `min_th`, so it never drops.
    fn region(&self, avg: f64) -> Region {
        let c = &self.config;
        if c.gentle {
            if avg >= 2.0 * c.max_th {
                return Region::Forced;
            }
            if avg >= c.max_th {
                return Region::Gentle;
            }
        } else if avg >= c.max_th {
            return Region::Forced;
        }
        if avg >= c.min_th {
            Region::Linear
        } else {
            Region::Below
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Duration;

    const EPS: f64 = 1e-12;

    /// Packet mode: limit 100 packets, min_th 20, max_th 40, w_q 0.002, max_p 0.1, no gentle,
    /// no ECN, 1000-byte mean packets.
    fn packet_config() -> RedConfig {
        RedConfig {
            limit: QueueLimit::Packets(100),
            min_th: 20.0,
            max_th: 40.0,
            w_q: 0.002,
            max_p: 0.1,
            gentle: false,
            ecn: false,
            mean_pktsize: 1000,
            wait: false,
            spare_short_queue: false,
        }
    }

    /// Byte mode with the same shape as `packet_config`, in units of 1000 bytes.
    fn byte_config() -> RedConfig {
        RedConfig {
            limit: QueueLimit::Bytes(100_000),
            min_th: 20_000.0,
            max_th: 40_000.0,
            ..packet_config()
        }
    }

    /// A queue that has been busy (not idle) with the given average and count.
    fn busy(config: RedConfig, avg: f64, count: i64) -> Red {
        let mut red = Red::new(config, 10_000_000);
        red.idle = false;
        red.avg = avg;
        red.count = count;
        red
    }

    /// A queue of `n` packets of 1000 bytes.
    fn packets(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: u64::from(n) * 1000,
        }
    }

    fn at_ms(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn one_arrival_at_ten_packets_moves_avg_from_zero_to_w_q_times_ten() {
        let mut red = busy(packet_config(), 0.0, -1);
        let mut rng = Rng::new(1);
        red.on_arrival(at_ms(1), packets(10), 1000, false, &mut rng);
        assert!((red.avg() - 0.02).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn in_byte_mode_avg_follows_the_queued_bytes() {
        let mut red = busy(byte_config(), 0.0, -1);
        let mut rng = Rng::new(1);
        red.on_arrival(at_ms(1), packets(10), 1000, false, &mut rng);
        // 0.002 * 10_000 bytes.
        assert!((red.avg() - 20.0).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn an_arrival_ten_transmission_times_after_the_queue_empties_ages_avg_by_ten_steps() {
        // 1000-byte packets on 10 Mb/s: s = 0.8 ms.
        let s = Duration::from_micros(800);
        let mut red = busy(packet_config(), 12.5, 3);
        let mut rng = Rng::new(1);
        let emptied = at_ms(100);
        red.on_departure(emptied, packets(0));
        red.on_arrival(emptied + s.mul_f64(10.0), packets(0), 1000, false, &mut rng);
        let expected = 12.5 * 0.998f64.powi(10);
        assert!(
            (red.avg() - expected).abs() < EPS,
            "avg {} expected {expected}",
            red.avg()
        );
    }

    #[test]
    fn a_queue_that_never_held_a_packet_ages_avg_from_time_zero() {
        let mut red = Red::new(packet_config(), 10_000_000);
        red.avg = 4.0;
        let mut rng = Rng::new(1);
        // 4 ms is five transmission times of 0.8 ms.
        red.on_arrival(at_ms(4), packets(0), 1000, false, &mut rng);
        let expected = 4.0 * 0.998f64.powi(5);
        assert!((red.avg() - expected).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn the_arrival_that_ends_an_idle_period_adds_nothing_for_the_queue_and_the_next_one_does() {
        let mut red = busy(packet_config(), 1.0, -1);
        let mut rng = Rng::new(1);
        red.on_departure(at_ms(10), packets(0));
        red.on_arrival(at_ms(10), packets(0), 1000, false, &mut rng);
        assert!((red.avg() - 1.0).abs() < EPS, "idle arrival with m = 0");
        red.on_arrival(at_ms(10), packets(1), 1000, false, &mut rng);
        assert!(
            (red.avg() - (0.998 + 0.002)).abs() < EPS,
            "avg {}",
            red.avg()
        );
    }

    #[test]
    fn a_departure_that_leaves_packets_behind_does_not_start_an_idle_period() {
        let mut red = busy(packet_config(), 10.0, -1);
        let mut rng = Rng::new(1);
        red.on_departure(at_ms(10), packets(3));
        red.on_arrival(at_ms(500), packets(3), 1000, false, &mut rng);
        let expected = 0.998 * 10.0 + 0.002 * 3.0;
        assert!((red.avg() - expected).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn a_second_departure_from_an_empty_queue_keeps_the_first_idle_start() {
        let mut red = busy(packet_config(), 8.0, -1);
        let mut rng = Rng::new(1);
        red.on_departure(at_ms(0), packets(0));
        red.on_departure(at_ms(4), packets(0));
        // 8 ms since the queue emptied: ten transmission times.
        red.on_arrival(at_ms(8), packets(0), 1000, false, &mut rng);
        let expected = 8.0 * 0.998f64.powi(10);
        assert!((red.avg() - expected).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn an_arrival_dropped_at_an_idle_queue_leaves_it_idle_so_avg_keeps_decaying() {
        // avg 50 is above max_th 40 (no gentle): every arrival is dropped. The queue emptied at
        // 100 ms; drops at 108 ms and 116 ms (ten transmission times of 0.8 ms apart each)
        // must age avg by ten steps each, not one EWMA step.
        let s = Duration::from_micros(800);
        let mut red = busy(packet_config(), 50.0, -1);
        let mut rng = Rng::new(1);
        let emptied = at_ms(100);
        red.on_departure(emptied, packets(0));
        let first = emptied + s.mul_f64(10.0);
        let v = red.on_arrival(first, packets(0), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropEarly);
        let after_first = 50.0 * 0.998f64.powi(10);
        assert!((red.avg() - after_first).abs() < EPS, "avg {}", red.avg());
        let v = red.on_arrival(first + s.mul_f64(10.0), packets(0), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropEarly);
        let after_second = 50.0 * 0.998f64.powi(20);
        assert!(
            (red.avg() - after_second).abs() < EPS,
            "avg {} expected {after_second}",
            red.avg()
        );
    }

    #[test]
    fn an_arrival_admitted_at_an_idle_queue_ends_the_idle_period() {
        let mut red = busy(packet_config(), 10.0, -1);
        let mut rng = Rng::new(1);
        red.on_departure(at_ms(0), packets(0));
        // 8 ms idle: ten steps of aging, then the packet is admitted (avg < min_th).
        let v = red.on_arrival(at_ms(8), packets(0), 1000, false, &mut rng);
        assert_eq!(v, Verdict::Enqueue);
        let aged = 10.0 * 0.998f64.powi(10);
        assert!((red.avg() - aged).abs() < EPS);
        // The next arrival, 100 ms later with one packet queued, is one EWMA step.
        red.on_arrival(at_ms(108), packets(1), 1000, false, &mut rng);
        let expected = 0.998 * aged + 0.002;
        assert!((red.avg() - expected).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn a_queue_keeping_selected_packets_ends_the_idle_period_on_a_selection() {
        // GCCA's detector queues what RED selects: only a full queue leaves the link idle.
        let mut red = busy(packet_config(), 50.0, -1);
        let mut rng = Rng::new(1);
        red.on_departure(at_ms(0), packets(0));
        let v = red.on_arrival_keeping_selected(at_ms(8), packets(0), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropEarly);
        let aged = 50.0 * 0.998f64.powi(10);
        red.on_arrival_keeping_selected(at_ms(500), packets(1), 1000, false, &mut rng);
        let expected = 0.998 * aged + 0.002;
        assert!((red.avg() - expected).abs() < EPS, "avg {}", red.avg());
    }

    #[test]
    fn waiting_red_never_selects_before_count_times_p_b_reaches_one() {
        // p_b = 0.05: p_a is 0 up to count 19, p_b / (2 - count p_b) from 20 to 39, then 1.
        assert_eq!(Red::p_a_wait(0.05, 0), 0.0);
        assert_eq!(Red::p_a_wait(0.05, 19), 0.0);
        assert!((Red::p_a_wait(0.05, 20) - 0.05).abs() < EPS);
        assert!((Red::p_a_wait(0.05, 30) - 0.05 / 0.5).abs() < EPS);
        assert_eq!(Red::p_a_wait(0.05, 40), 1.0);
        assert_eq!(Red::p_a_wait(0.0, 100), 0.0);
        assert_eq!(Red::p_a_wait(f64::NAN, 100), 0.0);
    }

    #[test]
    fn waiting_red_admits_the_arrival_that_brings_count_to_nineteen() {
        let mut config = packet_config();
        config.wait = true;
        // p_b = 0.05 at avg 30; count 18 -> 19 gives count * p_b = 0.95 < 1: p_a = 0.
        let mut red = busy(config.clone(), 30.0, 18);
        let mut rng = Rng::new(3);
        let v = red.on_arrival(at_ms(1), packets(30), 1000, false, &mut rng);
        assert_eq!(v, Verdict::Enqueue);
        assert_eq!(red.count(), 19);
        // Without waiting, count 19 -> 20 is a certain selection; with it, p_a = 0.05.
        let mut red = busy(config, 30.0, 39);
        let v = red.on_arrival(at_ms(1), packets(30), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropEarly, "count 40: count * p_b = 2, p_a = 1");
        assert_eq!(red.count(), 0);
    }

    #[test]
    fn sparing_short_queues_admits_an_arrival_to_a_queue_of_one_packet_whatever_avg() {
        let mut config = packet_config();
        config.spare_short_queue = true;
        let mut red = busy(config.clone(), 50.0, 4);
        let mut rng = Rng::new(2);
        let mut untouched = rng.clone();
        let v = red.on_arrival(at_ms(1), packets(1), 1000, false, &mut rng);
        assert_eq!(v, Verdict::Enqueue);
        assert_eq!(red.count(), -1, "the spacing restarts");
        assert_eq!(rng.next_u64(), untouched.next_u64(), "no draw");
        // Two packets queued: avg 50 is above max_th, a forced drop.
        let mut red = busy(config, 50.0, 4);
        let v = red.on_arrival(at_ms(1), packets(2), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropEarly);
        assert_eq!(red.count(), 0);
    }

    #[test]
    fn sparing_short_queues_still_enforces_the_hard_limit() {
        let mut config = packet_config();
        config.spare_short_queue = true;
        config.limit = QueueLimit::Packets(1);
        let mut red = busy(config, 0.0, -1);
        let mut rng = Rng::new(2);
        let v = red.on_arrival(at_ms(1), packets(1), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropFull);
    }

    #[test]
    fn with_an_unknown_link_rate_an_idle_period_leaves_avg_unchanged() {
        let mut red = Red::new(packet_config(), 0);
        red.avg = 7.0;
        let mut rng = Rng::new(1);
        red.on_arrival(at_ms(10_000), packets(0), 1000, false, &mut rng);
        assert_eq!(red.avg(), 7.0);
    }

    #[test]
    fn below_min_th_every_packet_is_enqueued_with_count_minus_one_and_no_draw() {
        let mut red = busy(packet_config(), 0.0, 7);
        let mut rng = Rng::new(5);
        let mut untouched = rng.clone();
        for i in 0..1000 {
            let v = red.on_arrival(at_ms(i), packets(19), 1000, true, &mut rng);
            assert_eq!(v, Verdict::Enqueue);
            assert_eq!(red.count(), -1);
        }
        assert!(red.avg() < 20.0);
        assert_eq!(
            rng.next_u64(),
            untouched.next_u64(),
            "no random draw below min_th"
        );
    }

    #[test]
    fn p_b_rises_linearly_from_zero_at_min_th_to_max_p_at_max_th() {
        let red = Red::new(packet_config(), 0);
        assert_eq!(red.p_b(19.9, 1000), 0.0);
        assert!(red.p_b(20.0, 1000).abs() < EPS);
        assert!((red.p_b(30.0, 1000) - 0.05).abs() < EPS);
        assert!((red.p_b(39.0, 1000) - 0.1 * 19.0 / 20.0).abs() < EPS);
        assert_eq!(red.p_b(40.0, 1000), 1.0, "forced at max_th without gentle");
    }

    #[test]
    fn p_a_spreads_selections_as_p_b_over_one_minus_count_times_p_b() {
        assert!((Red::p_a(0.05, 0) - 0.05).abs() < EPS);
        assert!((Red::p_a(0.05, 1) - 0.05 / 0.95).abs() < EPS);
        assert!((Red::p_a(0.05, 10) - 0.1).abs() < EPS);
        assert!((Red::p_a(0.05, 19) - 1.0).abs() < 1e-9);
        assert_eq!(Red::p_a(0.05, 20), 1.0);
        assert_eq!(Red::p_a(0.05, 1_000), 1.0);
        assert_eq!(
            Red::p_a(0.3, 3),
            1.0,
            "count * p_b = 0.9 gives 0.3 / 0.1 = 3, capped"
        );
        assert_eq!(Red::p_a(0.0, 1_000_000), 0.0);
        assert_eq!(Red::p_a(f64::NAN, 3), 0.0);
        assert_eq!(Red::p_a(-0.5, 3), 0.0);
    }

    #[test]
    fn between_the_thresholds_a_packet_is_selected_exactly_when_its_draw_is_below_p_a() {
        let mut red = busy(packet_config(), 30.0, -1);
        let mut rng = Rng::new(11);
        let (mut selected, mut kept) = (0, 0);
        for i in 0..2000 {
            let count_before = red.count();
            let mut predict = rng.clone();
            let u = predict.uniform();
            let v = red.on_arrival(at_ms(i), packets(30), 1000, false, &mut rng);
            let p_a = Red::p_a(red.p_b(red.avg(), 1000), count_before + 1);
            if u < p_a {
                assert_eq!(v, Verdict::DropEarly, "packet {i}: u {u} p_a {p_a}");
                assert_eq!(red.count(), 0);
                selected += 1;
            } else {
                assert_eq!(v, Verdict::Enqueue, "packet {i}: u {u} p_a {p_a}");
                assert_eq!(red.count(), count_before + 1);
                kept += 1;
            }
            assert_eq!(
                rng.next_u64(),
                predict.next_u64(),
                "exactly one draw per packet"
            );
        }
        assert!(selected > 0 && kept > 0, "selected {selected} kept {kept}");
    }

    #[test]
    fn the_first_packet_above_min_th_has_count_zero_and_probability_p_b() {
        let mut red = busy(packet_config(), 30.0, -1);
        let mut rng = Rng::new(3);
        let u = rng.clone().uniform();
        let v = red.on_arrival(at_ms(1), packets(30), 1000, false, &mut rng);
        let p_b = red.p_b(red.avg(), 1000);
        assert_eq!(Red::p_a(p_b, 0), p_b);
        let expected = if u < p_b {
            Verdict::DropEarly
        } else {
            Verdict::Enqueue
        };
        assert_eq!(v, expected);
        assert_eq!(red.count(), 0, "-1 + 1, or reset by a selection");
    }

    #[test]
    fn once_count_times_p_b_reaches_one_the_packet_is_selected_and_count_restarts_at_zero() {
        // p_b = 0.05; the arrival raises count from 19 to 20.
        let mut red = busy(packet_config(), 30.0, 19);
        let mut rng = Rng::new(3);
        let v = red.on_arrival(at_ms(1), packets(30), 1000, false, &mut rng);
        assert_eq!(v, Verdict::DropEarly);
        assert_eq!(red.count(), 0);
        let v = red.on_arrival(at_ms(2), packets(30), 1000, false, &mut rng);
        assert!(
            v == Verdict::Enqueue && red.count() == 1
                || v == Verdict::DropEarly && red.count() == 0
        );
    }

    #[test]
    fn at_exactly_min_th_p_b_is_zero_and_nothing_is_selected() {
        let mut config = packet_config();
        config.w_q = 1.0;
        let mut red = busy(config, 20.0, -1);
        let mut rng = Rng::new(9);
        for i in 0..500 {
            let v = red.on_arrival(at_ms(i), packets(20), 1000, false, &mut rng);
            assert_eq!(v, Verdict::Enqueue);
        }
        assert_eq!(red.count(), 499);
    }

    #[test]
    fn without_gentle_mode_every_packet_at_or_above_max_th_is_dropped_without_a_draw() {
        let mut config = packet_config();
        config.ecn = true;
        let mut red = busy(config, 45.0, 5);
        let mut rng = Rng::new(2);
        let mut untouched = rng.clone();
        let v = red.on_arrival(at_ms(1), packets(45), 1000, true, &mut rng);
        assert_eq!(
            v,
            Verdict::DropEarly,
            "forced drops are never marks (RFC 3168 section 7)"
        );
        assert_eq!(red.count(), 0);
        assert_eq!(rng.next_u64(), untouched.next_u64());
    }

    #[test]
    fn in_gentle_mode_p_b_rises_from_max_p_at_max_th_to_one_at_twice_max_th() {
        let mut config = packet_config();
        config.gentle = true;
        let red = Red::new(config, 0);
        assert!(
            (red.p_b(30.0, 1000) - 0.05).abs() < EPS,
            "linear region unchanged"
        );
        assert!((red.p_b(40.0, 1000) - 0.1).abs() < EPS);
        assert!((red.p_b(60.0, 1000) - (0.1 + 0.9 * 0.5)).abs() < EPS);
        assert!((red.p_b(79.0, 1000) - (0.1 + 0.9 * 39.0 / 40.0)).abs() < EPS);
        assert_eq!(red.p_b(80.0, 1000), 1.0);
    }

    #[test]
    fn in_gentle_mode_ect_packets_are_marked_between_max_th_and_twice_max_th() {
        let mut config = packet_config();
        config.gentle = true;
        config.ecn = true;
        config.limit = QueueLimit::Packets(200);
        // p_b = 0.55; count 1 -> 2 gives count * p_b >= 1, a certain selection.
        let mut red = busy(config, 60.0, 1);
        let mut rng = Rng::new(4);
        let v = red.on_arrival(at_ms(1), packets(60), 1000, true, &mut rng);
        assert_eq!(v, Verdict::Mark);
        assert_eq!(red.count(), 0);
    }

    #[test]
    fn in_gentle_mode_every_packet_at_or_above_twice_max_th_is_dropped_even_if_ect() {
        let mut config = packet_config();
        config.gentle = true;
        config.ecn = true;
        config.limit = QueueLimit::Packets(200);
        let mut red = busy(config, 85.0, 3);
        let mut rng = Rng::new(4);
        let mut untouched = rng.clone();
        let v = red.on_arrival(at_ms(1), packets(85), 1000, true, &mut rng);
        assert_eq!(v, Verdict::DropEarly);
        assert_eq!(red.count(), 0);
        assert_eq!(rng.next_u64(), untouched.next_u64());
    }

    #[test]
    fn a_selected_packet_is_marked_only_if_the_queue_uses_ecn_and_the_packet_is_ect() {
        for (ecn, ect, expected) in [
            (true, true, Verdict::Mark),
            (true, false, Verdict::DropEarly),
            (false, true, Verdict::DropEarly),
            (false, false, Verdict::DropEarly),
        ] {
            let mut config = packet_config();
            config.ecn = ecn;
            // p_b = 0.05 and count 19 -> 20: a certain selection.
            let mut red = busy(config, 30.0, 19);
            let mut rng = Rng::new(8);
            let v = red.on_arrival(at_ms(1), packets(30), 1000, ect, &mut rng);
            assert_eq!(v, expected, "ecn {ecn} ect {ect}");
        }
    }

    #[test]
    fn a_full_queue_drops_the_arrival_even_when_avg_is_small() {
        let mut red = busy(packet_config(), 0.0, -1);
        let mut rng = Rng::new(1);
        let mut untouched = rng.clone();
        let v = red.on_arrival(at_ms(1), packets(100), 1000, true, &mut rng);
        assert_eq!(v, Verdict::DropFull);
        assert_eq!(red.count(), 0);
        assert!(
            (red.avg() - 0.2).abs() < EPS,
            "avg is updated before the limit check"
        );
        assert_eq!(rng.next_u64(), untouched.next_u64());

        let mut red = busy(byte_config(), 0.0, -1);
        let len = QueueLen {
            packets: 95,
            bytes: 99_500,
        };
        assert_eq!(
            red.on_arrival(at_ms(1), len, 1000, false, &mut rng),
            Verdict::DropFull
        );
        assert_eq!(
            red.on_arrival(at_ms(2), len, 500, false, &mut rng),
            Verdict::Enqueue
        );
    }

    #[test]
    fn in_byte_mode_p_b_scales_with_the_packet_size_over_mean_pktsize() {
        let red = Red::new(byte_config(), 0);
        assert!((red.p_b(30_000.0, 1000) - 0.05).abs() < EPS);
        assert!((red.p_b(30_000.0, 500) - 0.025).abs() < EPS);
        assert!((red.p_b(30_000.0, 1500) - 0.075).abs() < EPS);
        assert!((red.p_b(30_000.0, 40) - 0.002).abs() < EPS);
        let red = Red::new(packet_config(), 0);
        assert!(
            (red.p_b(30.0, 40) - 0.05).abs() < EPS,
            "packet mode ignores the size"
        );
    }

    #[test]
    fn at_a_steady_average_the_selection_rate_matches_uniform_spacing() {
        // min_th 20, max_th 40, max_p 0.1 and avg held at 30 give p_b = 0.05. With
        // p_a = p_b / (1 - count * p_b) and count = 1 for the first packet after a selection,
        // P(gap > k) = prod_{i=1..k} (1 - (i+1) p_b) / (1 - i p_b) = (1 - (k+1) p_b) / (1 - p_b),
        // so the gap is uniform on {1, .., 1/p_b - 1}: mean 1 / (2 p_b), rate 2 p_b = 0.1. (The
        // text of F&J section 7 leaves the current packet out of `count`, which gives
        // {1, .., 1/p_b} and a rate of 2 p_b / (1 + p_b) = 0.095; figure 2, followed here and by
        // ns-2, counts it.)
        let mut red = busy(packet_config(), 30.0, -1);
        let mut rng = Rng::new(20_260_101);
        let n = 200_000;
        let (mut selected, mut gap, mut longest_gap) = (0u32, 0u32, 0u32);
        for i in 0..n {
            gap += 1;
            let v = red.on_arrival(at_ms(i), packets(30), 1000, false, &mut rng);
            if v == Verdict::DropEarly {
                if selected > 0 {
                    longest_gap = longest_gap.max(gap);
                }
                selected += 1;
                gap = 0;
            }
        }
        assert!(
            (red.avg() - 30.0).abs() < 1e-9,
            "avg drifted to {}",
            red.avg()
        );
        let p_b = red.p_b(red.avg(), 1000);
        let expected = 2.0 * p_b;
        let rate = f64::from(selected) / n as f64;
        assert!(
            ((rate - expected) / expected).abs() < 0.03,
            "rate {rate} expected {expected}"
        );
        assert!(longest_gap <= 20, "longest gap {longest_gap} exceeds 1/p_b");
    }

    #[test]
    fn nonsensical_configurations_never_panic() {
        let base = packet_config();
        let configs = [
            RedConfig {
                min_th: f64::NAN,
                ..base.clone()
            },
            RedConfig {
                max_th: f64::NAN,
                ..base.clone()
            },
            RedConfig {
                min_th: 30.0,
                max_th: 30.0,
                ..base.clone()
            },
            RedConfig {
                min_th: 0.0,
                max_th: 0.0,
                gentle: true,
                ..base.clone()
            },
            RedConfig {
                min_th: 50.0,
                max_th: 10.0,
                ..base.clone()
            },
            RedConfig {
                w_q: 0.0,
                ..base.clone()
            },
            RedConfig {
                w_q: 2.0,
                ..base.clone()
            },
            RedConfig {
                w_q: f64::NAN,
                ..base.clone()
            },
            RedConfig {
                max_p: f64::NAN,
                ..base.clone()
            },
            RedConfig {
                max_p: -1.0,
                gentle: true,
                ..base.clone()
            },
            RedConfig {
                mean_pktsize: 0,
                ..byte_config()
            },
            RedConfig {
                limit: QueueLimit::Packets(0),
                ..base.clone()
            },
            RedConfig {
                limit: QueueLimit::Bytes(0),
                ..byte_config()
            },
        ];
        let mut rng = Rng::new(6);
        for config in configs {
            for rate in [0, 1, u64::MAX] {
                let mut red = Red::new(config.clone(), rate);
                for i in 0..200u32 {
                    let len = packets(i % 60);
                    red.on_arrival(
                        Instant::from_nanos(u64::from(i) * 7),
                        len,
                        1500,
                        true,
                        &mut rng,
                    );
                    red.on_departure(Instant::from_nanos(u64::from(i) * 7 + 3), packets(0));
                    red.on_arrival(Instant::MAX, len, u64::MAX, true, &mut rng);
                }
                let _ = red.p_b(f64::INFINITY, u64::MAX);
                let _ = red.p_b(f64::NAN, 0);
            }
        }
    }
}
