//! The GCCP-capable RED: GCCA's early congestion detector on a router's output queue (Liu,
//! Cheung & Baras, section 3.2 and Fig. 3).
//!
//! RED (Floyd & Jacobson 1993, [`Red`]) keeps the average queue `avg` and decides, with its
//! thresholds and probabilities, which arrivals it would select for an early drop or an ECN mark.
//! The GCCP-capable RED keeps all of that and changes only the consequence: "when a packet is to
//! be dropped or marked in RED, we emit a GCCP CONGESTION message instead. The packet is then
//! queued as normal." The message goes to the upstream node that sent the selected packet
//! (section 2: the routers notify "the immediately upstream nodes that contribute to the
//! congestion"), so a node's share of the CONGESTION messages follows its share of the traffic,
//! as RED's drops do. Only the queue's hard limit still drops ([`Verdict::DropFull`]).
//!
//! Fig. 3 keeps one status for the queue; concord keeps it per upstream neighbour, the set of
//! neighbours that were told CONGESTION and not yet NORMAL. When `avg <= min_th`, each of them
//! is sent NORMAL once. No per-flow state is kept (section 2).
//!
//! Two additions the paper leaves open, both documented where they act:
//! - **Rate limit.** In RED's forced region every arrival is selected; CONGESTION to the same
//!   upstream is sent at most once per [`DetectorConfig::congestion_interval`] (default
//!   [`DEFAULT_CONGESTION_INTERVAL`], 10 ms), because every message lowers that upstream's rate
//!   by one linear step (section 3.3) and a burst of them would empty its rate in microseconds.
//!   The limit applies while the upstream is congested; after a NORMAL the next CONGESTION goes
//!   out at once.
//! - **NORMAL at departures.** Fig. 3 checks `avg` at arrivals only, so a queue that drains while
//!   its upstreams are throttled would wait for the next arrival. [`GccpDetector::on_departure`]
//!   also checks the average RED would compute for an arrival at that moment (a read-only
//!   projection; RED's own state is untouched).

use super::message::Code;
use crate::aqm::{QueueLen, Red, RedConfig, Verdict};
use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::BTreeMap;

/// The default minimum spacing of CONGESTION messages to one upstream neighbour: 10 ms.
pub const DEFAULT_CONGESTION_INTERVAL: Duration = Duration::from_millis(10);

/// The detector's parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct DetectorConfig {
    /// RED's parameters: thresholds, weight, max_p, gentle mode, hard limit. Its `ecn` flag is
    /// irrelevant: selected packets are never marked, their upstream is told instead.
    pub red: RedConfig,
    /// The minimum time between two CONGESTION messages to the same upstream while it stays
    /// congested; zero disables the limit.
    pub congestion_interval: Duration,
}

impl DetectorConfig {
    /// RED with the given parameters and the default CONGESTION spacing (10 ms).
    pub fn new(red: RedConfig) -> DetectorConfig {
        DetectorConfig {
            red,
            congestion_interval: DEFAULT_CONGESTION_INTERVAL,
        }
    }
}

/// A GCCP message the router should send to one upstream neighbour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal {
    /// The upstream neighbour, in the caller's numbering.
    pub upstream: u32,
    /// CONGESTION or NORMAL.
    pub code: Code,
}

/// The decision for one arriving packet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DetectorVerdict {
    /// What happens to the packet: [`Verdict::Enqueue`], or [`Verdict::DropFull`] when the
    /// queue's hard limit is reached. Never an early drop or a mark.
    pub verdict: Verdict,
    /// CONGESTION to the upstream that sent this packet, if RED selected it and the rate limit
    /// allows a message.
    pub signal: Option<Signal>,
    /// NORMAL to every upstream told CONGESTION since its last NORMAL, when this arrival
    /// brought `avg` to `min_th` or below (Fig. 3, last branch). Usually empty.
    pub normal: Vec<Signal>,
}

/// What the detector has done, for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DetectorStats {
    /// Arrivals RED selected (would have dropped early or marked); all were enqueued.
    pub selected: u64,
    /// CONGESTION messages sent.
    pub congestion_sent: u64,
    /// CONGESTION messages withheld by the rate limit.
    pub congestion_suppressed: u64,
    /// NORMAL messages sent.
    pub normal_sent: u64,
    /// Arrivals dropped at the hard limit.
    pub drops_full: u64,
}

/// A GCCP-capable RED queue's admission and signalling state.
#[derive(Clone, Debug)]
pub struct GccpDetector {
    red: Red,
    congestion_interval: Duration,
    /// Upstreams told CONGESTION and not yet NORMAL, with when each was last told CONGESTION.
    /// Ordered, so that NORMAL messages go out in a reproducible order.
    congested: BTreeMap<u32, Instant>,
    stats: DetectorStats,
}

impl GccpDetector {
    /// A detector in front of a link of `link_rate_bps` bits/s (RED ages `avg` over idle periods
    /// at this rate); it starts with an empty queue and no upstream congested.
    pub fn new(config: DetectorConfig, link_rate_bps: u64) -> GccpDetector {
        GccpDetector {
            red: Red::new(config.red, link_rate_bps),
            congestion_interval: config.congestion_interval,
            congested: BTreeMap::new(),
            stats: DetectorStats::default(),
        }
    }

    /// Decides the fate of a packet of `size` bytes that `upstream` sent, arriving at `now` at a
    /// queue of length `len` (before admission). Draws from `rng` exactly as RED does.
    pub fn on_arrival(
        &mut self,
        now: Instant,
        len: QueueLen,
        size: Bytes,
        upstream: u32,
        rng: &mut Rng,
    ) -> DetectorVerdict {
        // ECT is passed as false: RED then reports every selection as an early drop.
        match self
            .red
            .on_arrival_keeping_selected(now, len, size, false, rng)
        {
            Verdict::DropFull => {
                self.stats.drops_full += 1;
                DetectorVerdict {
                    verdict: Verdict::DropFull,
                    signal: None,
                    normal: Vec::new(),
                }
            }
            Verdict::DropEarly | Verdict::Mark => {
                // Fig. 3: "send a GCCP CONGESTION message, set status as CONGESTION"; the
                // packet is queued as normal (section 3.2).
                self.stats.selected += 1;
                DetectorVerdict {
                    verdict: Verdict::Enqueue,
                    signal: self.congestion(now, upstream),
                    normal: Vec::new(),
                }
            }
            Verdict::Enqueue => {
                let normal = if self.red.avg() <= self.red.config().min_th {
                    self.release_all()
                } else {
                    Vec::new()
                };
                DetectorVerdict {
                    verdict: Verdict::Enqueue,
                    signal: None,
                    normal,
                }
            }
        }
    }

    /// Tells the detector that a packet left at `now` and the queue now has length `len`.
    /// Returns NORMAL for every congested upstream if the average RED would compute for an
    /// arrival now is at or below `min_th`; otherwise nothing.
    pub fn on_departure(&mut self, now: Instant, len: QueueLen) -> Vec<Signal> {
        self.red.on_departure(now, len);
        if self.congested.is_empty() {
            return Vec::new();
        }
        if self.projected_avg(now, len) <= self.red.config().min_th {
            self.release_all()
        } else {
            Vec::new()
        }
    }

    /// The average RED would compute for an arrival at `now` at a queue of length `len`, in the
    /// queue's unit (packets or bytes). RED's state is not changed.
    pub fn projected_avg(&self, now: Instant, len: QueueLen) -> f64 {
        let mut probe = self.red.clone();
        // A throw-away generator: the probe's decision is discarded, only its avg is read.
        probe.on_arrival(now, len, 0, false, &mut Rng::new(0));
        probe.avg()
    }

    /// RED's average queue length as of the last arrival, in the queue's unit.
    pub fn avg(&self) -> f64 {
        self.red.avg()
    }

    /// The RED queue inside.
    pub fn red(&self) -> &Red {
        &self.red
    }

    /// True if `upstream` was told CONGESTION and not yet NORMAL.
    pub fn is_congested(&self, upstream: u32) -> bool {
        self.congested.contains_key(&upstream)
    }

    /// The upstreams told CONGESTION and not yet NORMAL, in increasing order.
    pub fn congested_upstreams(&self) -> impl Iterator<Item = u32> + '_ {
        self.congested.keys().copied()
    }

    /// Counters of what the detector did.
    pub fn stats(&self) -> DetectorStats {
        self.stats
    }

    /// RED selected a packet from `upstream`: CONGESTION to it unless it was told less than
    /// `congestion_interval` ago and is still congested.
    fn congestion(&mut self, now: Instant, upstream: u32) -> Option<Signal> {
        if let Some(&last) = self.congested.get(&upstream) {
            if now.saturating_since(last) < self.congestion_interval {
                self.stats.congestion_suppressed += 1;
                return None;
            }
        }
        self.congested.insert(upstream, now);
        self.stats.congestion_sent += 1;
        Some(Signal {
            upstream,
            code: Code::Congestion,
        })
    }

    /// NORMAL to every congested upstream; none of them is congested afterwards.
    fn release_all(&mut self) -> Vec<Signal> {
        let normal: Vec<Signal> = std::mem::take(&mut self.congested)
            .into_keys()
            .map(|upstream| Signal {
                upstream,
                code: Code::Normal,
            })
            .collect();
        self.stats.normal_sent += normal.len() as u64;
        normal
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aqm::QueueLimit;

    /// min_th 20, max_th 40 packets, no gentle mode, and w_q = 1 so that `avg` is the queue
    /// length seen by the last arrival.
    fn red_config() -> RedConfig {
        RedConfig {
            limit: QueueLimit::Packets(100),
            min_th: 20.0,
            max_th: 40.0,
            w_q: 1.0,
            max_p: 0.1,
            gentle: false,
            ecn: false,
            mean_pktsize: 1000,
            wait: false,
            spare_short_queue: false,
        }
    }

    /// A detector whose queue has seen one arrival at time zero, so that it is no longer idle
    /// and the next arrival's `avg` is the queue length it sees.
    fn detector(interval: Duration) -> GccpDetector {
        let mut d = GccpDetector::new(
            DetectorConfig {
                red: red_config(),
                congestion_interval: interval,
            },
            10_000_000,
        );
        d.on_arrival(Instant::ZERO, packets(0), 1000, u32::MAX, &mut Rng::new(0));
        d
    }

    fn packets(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: u64::from(n) * 1000,
        }
    }

    fn ms(t: u64) -> Instant {
        Instant::from_millis(t)
    }

    fn congestion(upstream: u32) -> Option<Signal> {
        Some(Signal {
            upstream,
            code: Code::Congestion,
        })
    }

    fn normal(upstreams: &[u32]) -> Vec<Signal> {
        upstreams
            .iter()
            .map(|&upstream| Signal {
                upstream,
                code: Code::Normal,
            })
            .collect()
    }

    #[test]
    fn below_min_th_every_packet_is_enqueued_and_no_message_is_sent() {
        let mut d = detector(Duration::ZERO);
        let mut rng = Rng::new(1);
        for i in 0..1000 {
            let v = d.on_arrival(ms(i), packets(19), 1000, 3, &mut rng);
            assert_eq!(v.verdict, Verdict::Enqueue);
            assert_eq!(v.signal, None);
            assert!(v.normal.is_empty());
        }
        assert_eq!(d.stats(), DetectorStats::default());
    }

    #[test]
    fn where_red_would_drop_early_the_packet_is_enqueued_and_its_upstream_is_told_congestion() {
        let mut d = detector(Duration::ZERO);
        let mut red = d.red().clone();
        let mut rng = Rng::new(42);
        let mut shadow = rng.clone();
        let mut told = 0;
        for i in 0..2000u64 {
            let upstream = (i % 3) as u32;
            let v = d.on_arrival(ms(i), packets(30), 1000, upstream, &mut rng);
            let red_verdict = red.on_arrival(ms(i), packets(30), 1000, false, &mut shadow);
            assert_eq!(v.verdict, Verdict::Enqueue, "packet {i} is never dropped");
            if red_verdict == Verdict::DropEarly {
                assert_eq!(v.signal, congestion(upstream), "packet {i}");
                told += 1;
            } else {
                assert_eq!(v.signal, None, "packet {i}");
            }
            assert!(v.normal.is_empty());
        }
        assert!(told > 50, "RED selected only {told} packets");
        assert_eq!(d.stats().selected, told);
        assert_eq!(d.stats().congestion_sent, told);
    }

    #[test]
    fn above_max_th_every_arrival_is_enqueued_and_tells_its_upstream() {
        let mut d = detector(Duration::ZERO);
        let mut rng = Rng::new(1);
        for i in 0..100 {
            let v = d.on_arrival(ms(i), packets(45), 1000, 9, &mut rng);
            assert_eq!(v.verdict, Verdict::Enqueue);
            assert_eq!(v.signal, congestion(9));
        }
    }

    #[test]
    fn the_hard_limit_still_drops_and_sends_nothing() {
        let mut d = detector(Duration::ZERO);
        let mut rng = Rng::new(1);
        let v = d.on_arrival(ms(1), packets(100), 1000, 4, &mut rng);
        assert_eq!(v.verdict, Verdict::DropFull);
        assert_eq!(v.signal, None);
        assert!(v.normal.is_empty());
        assert_eq!(d.stats().drops_full, 1);
        assert!(!d.is_congested(4));
    }

    #[test]
    fn normal_goes_once_to_exactly_the_upstreams_told_congestion_when_avg_falls_to_min_th() {
        let mut d = detector(Duration::ZERO);
        let mut rng = Rng::new(1);
        assert_eq!(
            d.on_arrival(ms(1), packets(45), 1000, 2, &mut rng).signal,
            congestion(2)
        );
        assert_eq!(
            d.on_arrival(ms(2), packets(45), 1000, 1, &mut rng).signal,
            congestion(1)
        );
        // Upstream 5 only ever sends while the queue is short.
        let v = d.on_arrival(ms(3), packets(25), 1000, 5, &mut rng);
        assert!(v.normal.is_empty(), "avg 25 is above min_th");
        assert_eq!(d.congested_upstreams().collect::<Vec<_>>(), [1, 2]);

        let v = d.on_arrival(ms(4), packets(20), 1000, 5, &mut rng);
        assert_eq!(v.verdict, Verdict::Enqueue);
        assert_eq!(v.signal, None);
        assert_eq!(v.normal, normal(&[1, 2]), "avg = min_th, in upstream order");

        let v = d.on_arrival(ms(5), packets(3), 1000, 5, &mut rng);
        assert!(v.normal.is_empty(), "NORMAL is sent once");
        assert_eq!(d.stats().normal_sent, 2);
    }

    #[test]
    fn a_departure_that_brings_the_average_to_min_th_sends_normal() {
        let mut d = detector(Duration::ZERO);
        let mut rng = Rng::new(1);
        d.on_arrival(ms(1), packets(50), 1000, 7, &mut rng);
        assert!(d.on_departure(ms(2), packets(30)).is_empty());
        assert!(d.is_congested(7));
        assert_eq!(d.on_departure(ms(3), packets(18)), normal(&[7]));
        assert!(!d.is_congested(7));
        assert!(d.on_departure(ms(4), packets(17)).is_empty());
        assert_eq!(d.avg(), 50.0, "the projection leaves RED's avg alone");
    }

    #[test]
    fn repeated_congestion_to_one_upstream_is_sent_at_most_once_per_interval() {
        let mut d = detector(Duration::from_millis(10));
        let mut rng = Rng::new(1);
        let mut sent_at = Vec::new();
        for i in 0..35 {
            let v = d.on_arrival(ms(i), packets(45), 1000, 1, &mut rng);
            assert_eq!(v.verdict, Verdict::Enqueue);
            if v.signal.is_some() {
                sent_at.push(i);
            }
            // Another upstream has its own limit.
            if i == 3 {
                let v = d.on_arrival(ms(i), packets(45), 1000, 2, &mut rng);
                assert_eq!(v.signal, congestion(2));
            }
        }
        assert_eq!(sent_at, [0, 10, 20, 30]);
        assert_eq!(d.stats().congestion_sent, 5);
        assert_eq!(d.stats().congestion_suppressed, 31);
    }

    #[test]
    fn after_normal_the_next_congestion_is_not_held_back_by_the_rate_limit() {
        let mut d = detector(Duration::from_millis(10));
        let mut rng = Rng::new(1);
        assert_eq!(
            d.on_arrival(ms(0), packets(45), 1000, 1, &mut rng).signal,
            congestion(1)
        );
        assert_eq!(
            d.on_arrival(ms(1), packets(5), 1000, 1, &mut rng).normal,
            normal(&[1])
        );
        assert_eq!(
            d.on_arrival(ms(2), packets(45), 1000, 1, &mut rng).signal,
            congestion(1)
        );
    }
}
