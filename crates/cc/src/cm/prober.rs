//! The sender CM of the probe protocol (paper section 2.2.2, Fig. 5, "Sending a probe" and
//! "Sender action on receiving a response"), one prober per receiving host.
//!
//! The prober counts, per flow, the packets and bytes sent since the last probe; a probe
//! records them with its sequence number, its send time and its nonce. The receiver's counts are
//! cumulative (see [`super::probe`]), so an accepted response to `thisprobe` covers every probe
//! after the last accepted response, `latest + 1 ..= thisprobe`, whatever its `lastprobe`: the
//! sender sums what it sent in those intervals and sets it against the difference between the
//! response's counts and those of the last accepted response. That is exact as long as data and
//! probes travel the same path in order (a packet sent before probe i arrives before it). A lost
//! probe merges its interval into the next one, as in Fig. 5; a lost response merges its
//! intervals into the next accepted one, sent and received alike, where Fig. 5's per-interval
//! `nrecd` would lose its arrivals and so could count the packets sent in it as lost. Entries up
//! to `thisprobe` are then deleted, as in Fig. 5. A response older than the last accepted one is
//! refused ([`ResponseError::Stale`]). A flow's counts lower than the last accepted ones (the
//! receiver forgot the flow and began again; 2^64 packets or bytes never wrap in practice) count
//! from zero; so do the counts of a flow the last accepted response did not list.
//!
//! The two sides may put a packet on different sides of a probe boundary: a host counts a
//! packet as sent when the application's `notify` arrives, after the packet has left, so a
//! packet sent just before probe i and notified just after it is received before probe i and
//! sent after it. Response i then shows more received than sent and the next accepted response
//! a loss. The prober carries such a surplus, per flow, into the next accepted response, so that
//! the packet counts once, as delivered. The carry is bounded twice: when it is made, by the
//! packets the flow sent after the answered probe (not yet accounted), and when it is used, by
//! the packets the flow sent in the intervals it is credited to. A receiver that overstates can
//! thus hide at most a loss it could hide anyway by claiming what was sent, and never reports a
//! delivery beyond the packets sent.
//!
//! The paper's Fig. 5 divides received packets by sent bytes, and calls that ratio the loss
//! probability; concord counts both packets and bytes on both sides and reports loss as lost
//! packets over sent packets.

use super::probe::{FlowCount, FlowTag, NonceSource, Probe, Response, MAX_FLOWS};
use crate::tcp::rtt::{RttConfig, RttEstimator};
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// The prober's parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProberConfig {
    /// Probes per smoothed RTT, above zero (0.5: one probe every two RTTs): the paper's
    /// section 2.2.1 finds that feedback "should be obtained at least twice every round-trip
    /// period".
    pub probes_per_rtt: f64,
    /// Probes remembered while awaiting a response; older ones are forgotten (a response to
    /// one is refused) and what was sent in their intervals is credited to the next accepted
    /// response.
    pub max_history: usize,
}

impl ProberConfig {
    /// True if `probes_per_rtt` can space probes: finite and above zero.
    pub fn rate_is_valid(&self) -> bool {
        self.probes_per_rtt > 0.0 && self.probes_per_rtt.is_finite()
    }
}

impl Default for ProberConfig {
    fn default() -> Self {
        ProberConfig {
            probes_per_rtt: 2.0,
            max_history: 64,
        }
    }
}

/// Packets and bytes sent for one flow in one probe interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentCount {
    /// Packets sent.
    pub packets: u64,
    /// Bytes sent.
    pub bytes: Bytes,
}

/// One probe sent: `probe(seq) = {seq, now, nsent}` of Fig. 5, per flow.
#[derive(Clone, Debug)]
struct ProbeRecord {
    /// The sequence number.
    seq: u32,
    /// When it was sent.
    sent_at: Instant,
    /// The nonce the response must echo.
    nonce: u64,
    /// What each flow sent since the previous probe.
    sent: BTreeMap<FlowTag, SentCount>,
}

/// What one response tells about one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowMeasurement {
    /// The flow.
    pub tag: FlowTag,
    /// Packets sent in the covered intervals.
    pub sent_packets: u64,
    /// Bytes sent in the covered intervals.
    pub sent_bytes: Bytes,
    /// Packets the receiver counted in the covered intervals: its cumulative count less that of
    /// the last accepted response.
    pub recd_packets: u64,
    /// Bytes the receiver counted in the covered intervals.
    pub recd_bytes: Bytes,
    /// Packets the receiver saw marked Congestion Experienced in the covered intervals.
    pub ce_packets: u64,
    /// Packets the receiver counted by the last accepted response beyond what was sent by then
    /// (sent before that probe, counted as sent after it), credited here; at most
    /// `sent_packets`.
    pub carried_packets: u64,
    /// Bytes of the carried packets; at most `sent_bytes`.
    pub carried_bytes: Bytes,
}

impl FlowMeasurement {
    /// Packets received here, the carried ones included.
    fn received_packets(&self) -> u64 {
        self.recd_packets.saturating_add(self.carried_packets)
    }

    /// Bytes received here, the carried ones included.
    fn received_bytes(&self) -> Bytes {
        self.recd_bytes.saturating_add(self.carried_bytes)
    }

    /// Packets lost: sent minus received (carried packets included), zero if the receiver
    /// counted more (a packet counted before a probe and sent after it, or a receiver that
    /// overstates, neither of which may count as delivery beyond what was sent).
    pub fn lost_packets(&self) -> u64 {
        self.sent_packets.saturating_sub(self.received_packets())
    }

    /// Packets delivered, at most those sent.
    pub fn delivered_packets(&self) -> u64 {
        self.received_packets().min(self.sent_packets)
    }

    /// Bytes delivered, at most those sent.
    pub fn delivered_bytes(&self) -> Bytes {
        self.received_bytes().min(self.sent_bytes)
    }

    /// Packets and bytes received beyond those sent: the surplus to carry.
    fn surplus(&self) -> SentCount {
        SentCount {
            packets: self.received_packets().saturating_sub(self.sent_packets),
            bytes: self.received_bytes().saturating_sub(self.sent_bytes),
        }
    }
}

/// What a valid response measured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Measurement {
    /// The RTT sample: from sending `thisprobe` to receiving its response.
    pub rtt: Duration,
    /// The probe intervals covered: from the one after the last accepted response to
    /// `thisprobe`.
    pub probes: (u32, u32),
    /// Per flow, in tag order: every flow that sent in the covered intervals or that the
    /// receiver reported.
    pub flows: Vec<FlowMeasurement>,
}

impl Measurement {
    /// Packets sent and packets lost over all flows.
    pub fn totals(&self) -> (u64, u64) {
        self.flows.iter().fold((0, 0), |(s, l), f| {
            (s + f.sent_packets, l + f.lost_packets())
        })
    }
}

/// Why a response was ignored; an ignored response changes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// The probe answered was never sent (0, or beyond the last sequence number).
    #[error("response to probe {thisprobe}, which was never sent")]
    NeverSent {
        /// The probe answered.
        thisprobe: u32,
    },
    /// The probe answered was answered already: a duplicate response.
    #[error("duplicate response to probe {thisprobe}")]
    Duplicate {
        /// The probe answered.
        thisprobe: u32,
    },
    /// The probe answered is older than one already answered: a stale, reordered response.
    #[error("stale response to probe {thisprobe}; probe {latest} was answered already")]
    Stale {
        /// The probe answered.
        thisprobe: u32,
        /// The newest probe answered so far.
        latest: u32,
    },
    /// `lastprobe` is not older than `thisprobe`.
    #[error("response covers no interval: lastprobe {lastprobe} >= thisprobe {thisprobe}")]
    BadInterval {
        /// The probe answered.
        thisprobe: u32,
        /// The probe answered before, as claimed.
        lastprobe: u32,
    },
    /// The nonce is not the one probe `thisprobe` carried: the receiver never saw it.
    #[error("wrong nonce for probe {thisprobe}")]
    NonceMismatch {
        /// The probe answered.
        thisprobe: u32,
    },
    /// The probe answered is no longer remembered.
    #[error("probe {seq} is no longer remembered")]
    Forgotten {
        /// The probe answered.
        seq: u32,
    },
}

/// The sender's probe state for one receiving host.
#[derive(Clone, Debug)]
pub struct Prober {
    /// Parameters.
    config: ProberConfig,
    /// The RTT the probe interval is computed with before the first sample.
    initial_rtt: Duration,
    /// `probeseqnum`: the sequence number of the next probe (Fig. 5), from 1.
    next_seq: u32,
    /// Probes sent and not yet covered by a response, oldest first, consecutive.
    history: VecDeque<ProbeRecord>,
    /// `nsent` per flow since the last probe.
    unprobed: BTreeMap<FlowTag, SentCount>,
    /// The first transmission since the last probe.
    first_unprobed: Option<Instant>,
    /// When the last probe was sent.
    last_probe_at: Option<Instant>,
    /// The newest probe answered; 0 before the first response.
    latest_answered: u32,
    /// Per flow, what was sent in the intervals of probes forgotten unanswered (dropped from
    /// `history`), for the next accepted response.
    forgotten: BTreeMap<FlowTag, SentCount>,
    /// Per flow, the receiver's cumulative counts in the last accepted response.
    recd_base: BTreeMap<FlowTag, FlowCount>,
    /// Per flow, the surplus of the last accepted response, for the next one; never more than
    /// the flow sent after that probe.
    carry: BTreeMap<FlowTag, SentCount>,
    /// RTT samples from responses, for the probe interval.
    rtt: RttEstimator,
}

impl Prober {
    /// A prober that has sent nothing; until the first response, the probe interval is
    /// computed with `initial_rtt`.
    pub fn new(config: ProberConfig, initial_rtt: Duration) -> Prober {
        Prober {
            config: ProberConfig {
                probes_per_rtt: if config.rate_is_valid() {
                    config.probes_per_rtt
                } else {
                    ProberConfig::default().probes_per_rtt
                },
                max_history: config.max_history.max(1),
            },
            initial_rtt,
            next_seq: 1,
            history: VecDeque::new(),
            unprobed: BTreeMap::new(),
            first_unprobed: None,
            last_probe_at: None,
            latest_answered: 0,
            forgotten: BTreeMap::new(),
            recd_base: BTreeMap::new(),
            carry: BTreeMap::new(),
            rtt: RttEstimator::new(RttConfig::default()),
        }
    }

    /// A packet of `bytes` bytes of flow `tag` was sent at `now`.
    pub fn on_sent(&mut self, now: Instant, tag: FlowTag, bytes: Bytes) {
        let c = self.unprobed.entry(tag).or_default();
        c.packets = c.packets.saturating_add(1);
        c.bytes = c.bytes.saturating_add(bytes);
        self.first_unprobed.get_or_insert(now);
    }

    /// The time between probes: srtt / probes_per_rtt (the initial RTT before any sample).
    pub fn interval(&self) -> Duration {
        let rtt = self.rtt.srtt().unwrap_or(self.initial_rtt).as_nanos() as f64;
        Duration::from_nanos(((rtt / self.config.probes_per_rtt).round() as u64).max(1))
    }

    /// True while a probe that asked about data has had no response: one in the history with
    /// packets counted in its interval.
    fn awaits_answer(&self) -> bool {
        self.history.iter().any(|p| !p.sent.is_empty())
    }

    /// When the next probe is due: one interval after the last probe, and not before there is
    /// something to ask about: data sent since the last probe, or data that an earlier probe
    /// asked about and no response has covered yet.
    ///
    /// The second case is what makes the protocol robust to lost probes and responses (paper
    /// section 2.2.2: "the sender maintains information about all probes since the last one
    /// for which a response was received"; the sender CM "periodically sends probes"): a
    /// macroflow that aging has slowed to a packet per second still gets a probe every
    /// interval, so a lost probe or response costs one interval, not the time to the next
    /// packet. The response to such a probe covers the lost probe's interval (its `lastprobe`
    /// is older), or, if a response was lost, only the empty interval, which still tells the
    /// manager the path answers. A receiver that never answers gets probes until the history
    /// ([`ProberConfig::max_history`] probes) no longer holds one that asked about data.
    /// `None` while there is nothing to ask about.
    pub fn next_probe_time(&self) -> Option<Instant> {
        if self.next_seq == u32::MAX {
            // The sequence space is spent; a prober lives far shorter than 2^32 probes.
            return None;
        }
        match (self.first_unprobed, self.last_probe_at) {
            (Some(first), Some(t)) => Some(first.max(t + self.interval())),
            (Some(first), None) => Some(first),
            (None, Some(t)) if self.awaits_answer() => Some(t + self.interval()),
            (None, _) => None,
        }
    }

    /// The flows the prober knows to this receiver: those the last accepted response listed,
    /// and those that sent since; at least 1, at most [`MAX_FLOWS`]. A probe makes room for
    /// this many entries in its response.
    fn room(&self) -> u16 {
        let mut known: BTreeSet<FlowTag> = self.recd_base.keys().copied().collect();
        known.extend(self.unprobed.keys());
        known.extend(self.forgotten.keys());
        known.extend(self.carry.keys());
        for record in &self.history {
            known.extend(record.sent.keys());
        }
        u16::try_from(known.len().clamp(1, MAX_FLOWS)).unwrap_or(1)
    }

    /// The probe to send at `now`, if one is due; its nonce is drawn from `nonces`.
    pub fn poll_probe(&mut self, now: Instant, nonces: &mut NonceSource) -> Option<Probe> {
        if now < self.next_probe_time()? {
            return None;
        }
        let room = self.room();
        let probe = Probe {
            seq: self.next_seq,
            nonce: nonces.next_nonce(),
            room,
        };
        self.history.push_back(ProbeRecord {
            seq: probe.seq,
            sent_at: now,
            nonce: probe.nonce,
            sent: std::mem::take(&mut self.unprobed),
        });
        while self.history.len() > self.config.max_history {
            if let Some(old) = self.history.pop_front() {
                add_sent(&mut self.forgotten, &old.sent);
            }
        }
        self.next_seq += 1;
        self.last_probe_at = Some(now);
        self.first_unprobed = None;
        Some(probe)
    }

    /// The newest probe answered; 0 before the first response.
    pub fn latest_answered(&self) -> u32 {
        self.latest_answered
    }

    /// The surplus carried for `tag` into the next measured interval.
    pub fn carried(&self, tag: FlowTag) -> SentCount {
        self.carry.get(&tag).copied().unwrap_or_default()
    }

    /// The smoothed RTT of the probe responses, or `None` before the first.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }

    /// A response arrived at `now` ("Sender action on receiving a response", Fig. 5): what it
    /// measured, or why it was ignored.
    pub fn on_response(
        &mut self,
        now: Instant,
        r: &Response,
    ) -> Result<Measurement, ResponseError> {
        let (this, last) = (r.thisprobe, r.lastprobe);
        if this == 0 || this >= self.next_seq {
            return Err(ResponseError::NeverSent { thisprobe: this });
        }
        if this == self.latest_answered {
            return Err(ResponseError::Duplicate { thisprobe: this });
        }
        if this < self.latest_answered {
            return Err(ResponseError::Stale {
                thisprobe: this,
                latest: self.latest_answered,
            });
        }
        if last >= this {
            return Err(ResponseError::BadInterval {
                thisprobe: this,
                lastprobe: last,
            });
        }
        // The history holds consecutive sequence numbers after `latest_answered`; find
        // `thisprobe` in it.
        let oldest = self.history.front().map_or(self.next_seq, |p| p.seq);
        if this < oldest {
            return Err(ResponseError::Forgotten { seq: this });
        }
        let end = (this - oldest) as usize;
        let Some(answered) = self.history.get(end) else {
            return Err(ResponseError::Forgotten { seq: this });
        };
        if answered.nonce != r.nonce {
            return Err(ResponseError::NonceMismatch { thisprobe: this });
        }
        let rtt = now.saturating_since(answered.sent_at);

        // Sent: every interval after the last accepted response up to `thisprobe`, the
        // forgotten probes' included.
        let mut sent = std::mem::take(&mut self.forgotten);
        for record in self.history.range(..=end) {
            add_sent(&mut sent, &record.sent);
        }
        let mut flows: BTreeMap<FlowTag, FlowMeasurement> = sent
            .into_iter()
            .map(|(tag, s)| {
                let m = FlowMeasurement {
                    tag,
                    sent_packets: s.packets,
                    sent_bytes: s.bytes,
                    ..FlowMeasurement::default()
                };
                (tag, m)
            })
            .collect();
        // Received: the response's cumulative counts less the last accepted ones.
        let mut base = BTreeMap::new();
        for c in &r.flows {
            let d = counted_since(self.recd_base.get(&c.tag), c);
            let m = flows.entry(c.tag).or_insert(FlowMeasurement {
                tag: c.tag,
                ..FlowMeasurement::default()
            });
            m.recd_packets = m.recd_packets.saturating_add(d.packets);
            m.recd_bytes = m.recd_bytes.saturating_add(d.bytes);
            m.ce_packets = m.ce_packets.saturating_add(d.ce_packets);
            base.insert(c.tag, *c);
        }

        // The carry belongs to the interval right after the last accepted response, which
        // this response covers.
        for (tag, c) in std::mem::take(&mut self.carry) {
            if let Some(m) = flows.get_mut(&tag) {
                m.carried_packets = c.packets.min(m.sent_packets);
                m.carried_bytes = c.bytes.min(m.sent_bytes);
            }
        }
        // What each flow sent after `thisprobe`, not accounted yet: the new carry's bound.
        let mut unaccounted: BTreeMap<FlowTag, SentCount> = self.unprobed.clone();
        for record in self.history.range(end + 1..) {
            add_sent(&mut unaccounted, &record.sent);
        }
        for m in flows.values() {
            let (surplus, bound) = (m.surplus(), unaccounted.get(&m.tag).copied());
            let c = SentCount {
                packets: surplus.packets.min(bound.map_or(0, |b| b.packets)),
                bytes: surplus.bytes.min(bound.map_or(0, |b| b.bytes)),
            };
            if c.packets > 0 {
                self.carry.insert(m.tag, c);
            }
        }

        // "Delete all entries in probe less than thisprobe"; thisprobe itself is covered too.
        self.history.drain(..=end);
        let first = self.latest_answered + 1;
        self.latest_answered = this;
        self.recd_base = base;
        self.rtt.on_sample(rtt);
        Ok(Measurement {
            rtt,
            probes: (first, this),
            flows: flows.into_values().collect(),
        })
    }
}

/// Adds each flow's counts in `more` to `into`.
fn add_sent(into: &mut BTreeMap<FlowTag, SentCount>, more: &BTreeMap<FlowTag, SentCount>) {
    for (tag, s) in more {
        let c = into.entry(*tag).or_default();
        c.packets = c.packets.saturating_add(s.packets);
        c.bytes = c.bytes.saturating_add(s.bytes);
    }
}

/// What the receiver counted for a flow since `base`, its counts in the last accepted response:
/// the difference, or all of `now` if there is no base or a count went down (the receiver
/// forgot the flow and counts from zero again; a 64-bit count does not wrap in practice).
fn counted_since(base: Option<&FlowCount>, now: &FlowCount) -> FlowCount {
    match base {
        Some(b)
            if now.packets >= b.packets
                && now.ce_packets >= b.ce_packets
                && now.bytes >= b.bytes =>
        {
            FlowCount {
                tag: now.tag,
                packets: now.packets - b.packets,
                ce_packets: now.ce_packets - b.ce_packets,
                bytes: now.bytes - b.bytes,
            }
        }
        _ => *now,
    }
}

#[cfg(test)]
mod tests {
    use super::super::probe::FlowCount;
    use super::super::responder::ProbeResponder;
    use super::*;
    use crate::rng::Rng;
    use std::net::Ipv4Addr;

    /// Tests fail on the first error with `?`.
    type TestResult = Result<(), Box<dyn std::error::Error>>;

    const HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 9);
    const A: FlowTag = FlowTag {
        src_port: 5000,
        dst_port: 80,
        flow_id: 0,
    };
    const B: FlowTag = FlowTag {
        src_port: 5001,
        dst_port: 80,
        flow_id: 0,
    };

    fn t(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    /// Sends `n` packets of `tag` at `now`, of which the first `lost` never arrive.
    fn send(s: &mut Prober, r: &mut ProbeResponder, now: Instant, tag: FlowTag, n: u64, lost: u64) {
        for i in 0..n {
            s.on_sent(now, tag, 1000);
            if i >= lost {
                r.on_data(now, HOST, tag, 1000, false);
            }
        }
    }

    fn flow(m: &Measurement, tag: FlowTag) -> (u64, u64) {
        m.flows
            .iter()
            .find(|f| f.tag == tag)
            .map_or((0, 0), |f| (f.sent_packets, f.recd_packets))
    }

    #[test]
    fn loss_is_measured_exactly_from_a_crafted_sequence_with_lost_probes_and_responses(
    ) -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(1));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        let mut r = ProbeResponder::default();

        // Interval 1: A sends 10 and loses 3, B sends 2 and loses none.
        send(&mut s, &mut r, t(0), A, 10, 3);
        send(&mut s, &mut r, t(0), B, 2, 0);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        let resp = r.on_probe(t(50), HOST, &p1).ok_or("probe not answered")?;
        let m = s.on_response(t(100), &resp)?;
        assert_eq!((flow(&m, A), flow(&m, B)), ((10, 7), (2, 2)));
        assert_eq!(m.rtt, Duration::from_millis(100));
        assert_eq!(m.probes, (1, 1));

        // Interval 2 ends with a lost probe; interval 3's response reports on both.
        send(&mut s, &mut r, t(500), A, 5, 1);
        assert!(s.poll_probe(t(1000), &mut rng).is_some()); // probe 2, lost
        send(&mut s, &mut r, t(1100), A, 5, 0);
        let p3 = s.poll_probe(t(1500), &mut rng).ok_or("no probe due")?;
        let resp = r.on_probe(t(1550), HOST, &p3).ok_or("probe not answered")?;
        assert_eq!((resp.thisprobe, resp.lastprobe), (3, 1));
        let m = s.on_response(t(1600), &resp)?;
        assert_eq!(flow(&m, A), (10, 9));
        assert_eq!(flow(&m, B), (0, 0));
        assert_eq!(m.probes, (2, 3));

        // Interval 4's response is lost: the response to probe 5 covers intervals 4 and 5.
        send(&mut s, &mut r, t(2000), A, 4, 4);
        let p4 = s.poll_probe(t(2000), &mut rng).ok_or("no probe due")?;
        let _lost = r.on_probe(t(2050), HOST, &p4).ok_or("probe not answered")?;
        send(&mut s, &mut r, t(2100), A, 8, 2);
        let p5 = s.poll_probe(t(2500), &mut rng).ok_or("no probe due")?;
        let resp5 = r.on_probe(t(2550), HOST, &p5).ok_or("probe not answered")?;
        assert_eq!((resp5.thisprobe, resp5.lastprobe), (5, 4));
        let m = s.on_response(t(2600), &resp5)?;
        assert_eq!(m.probes, (4, 5));
        assert_eq!(flow(&m, A), (12, 6));
        assert_eq!(m.totals(), (12, 6));

        // Replays are refused and change nothing.
        assert_eq!(
            s.on_response(t(2700), &resp5),
            Err(ResponseError::Duplicate { thisprobe: 5 })
        );
        assert_eq!(
            s.on_response(t(2700), &resp),
            Err(ResponseError::Stale {
                thisprobe: 3,
                latest: 5
            })
        );
        assert_eq!(s.latest_answered(), 5);
        Ok(())
    }

    #[test]
    fn responses_that_do_not_fit_the_probes_sent_are_refused() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(2));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        s.on_sent(t(0), A, 1000);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        s.on_sent(t(1), A, 1000);
        let p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        let resp = |this: u32, last: u32, nonce: u64| Response {
            thisprobe: this,
            lastprobe: last,
            nonce,
            flows: vec![],
        };
        assert_eq!(
            s.on_response(t(700), &resp(3, 0, 0)),
            Err(ResponseError::NeverSent { thisprobe: 3 })
        );
        assert_eq!(
            s.on_response(t(700), &resp(0, 0, 0)),
            Err(ResponseError::NeverSent { thisprobe: 0 })
        );
        assert_eq!(
            s.on_response(t(700), &resp(2, 2, p2.nonce)),
            Err(ResponseError::BadInterval {
                thisprobe: 2,
                lastprobe: 2
            })
        );
        assert_eq!(
            s.on_response(t(700), &resp(2, 0, p2.nonce ^ 1)),
            Err(ResponseError::NonceMismatch { thisprobe: 2 })
        );
        assert!(s.on_response(t(700), &resp(1, 0, p1.nonce)).is_ok());
        assert_eq!(
            s.on_response(t(700), &resp(1, 0, p1.nonce)),
            Err(ResponseError::Duplicate { thisprobe: 1 })
        );
        // A `lastprobe` older than the last accepted response (the receiver lost its state)
        // is no overlap with cumulative counts: the response covers probe 2 only.
        let m = s.on_response(t(700), &resp(2, 0, p2.nonce))?;
        assert_eq!(m.probes, (2, 2));
        Ok(())
    }

    #[test]
    fn a_response_to_a_forgotten_probe_is_refused_and_its_sends_go_to_the_next_response(
    ) -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(3));
        let config = ProberConfig {
            max_history: 2,
            ..ProberConfig::default()
        };
        let mut s = Prober::new(config, Duration::from_secs(1));
        let mut nonces = vec![];
        for i in 0..3 {
            s.on_sent(t(i * 1000), A, 1000);
            nonces.push(
                s.poll_probe(t(i * 1000), &mut rng)
                    .ok_or("no probe due")?
                    .nonce,
            );
        }
        let r = Response {
            thisprobe: 1,
            lastprobe: 0,
            nonce: nonces[0],
            flows: vec![],
        };
        assert_eq!(
            s.on_response(t(3000), &r),
            Err(ResponseError::Forgotten { seq: 1 })
        );
        // Probe 1 is forgotten, the packet of its interval is not: probe 3's response covers
        // all three.
        let r = Response {
            thisprobe: 3,
            nonce: nonces[2],
            ..r
        };
        let m = s.on_response(t(3000), &r)?;
        assert_eq!((m.probes, m.totals()), ((1, 3), (3, 3)));
        Ok(())
    }

    #[test]
    fn a_receiver_that_claims_more_than_was_sent_gains_nothing() -> TestResult {
        let m = FlowMeasurement {
            tag: A,
            sent_packets: 5,
            sent_bytes: 5000,
            recd_packets: 9,
            recd_bytes: 9000,
            ce_packets: 0,
            carried_packets: 0,
            carried_bytes: 0,
        };
        assert_eq!(
            (m.lost_packets(), m.delivered_packets(), m.delivered_bytes()),
            (0, 5, 5000)
        );
        let mut rng = NonceSource::Seeded(Rng::new(4));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        s.on_sent(t(0), A, 1000);
        let p = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        let bogus = FlowCount {
            tag: B,
            packets: 100,
            ce_packets: 0,
            bytes: 100_000,
        };
        let r = Response {
            thisprobe: p.seq,
            lastprobe: 0,
            nonce: p.nonce,
            flows: vec![bogus],
        };
        let m = s.on_response(t(100), &r)?;
        assert_eq!(m.totals(), (1, 1), "B sent nothing and delivered nothing");
        Ok(())
    }

    /// A response to `p` with `lastprobe`, with `flows` as (tag, cumulative packets) of 1000
    /// bytes each.
    fn answer(p: &Probe, lastprobe: u32, flows: &[(FlowTag, u64)]) -> Response {
        Response {
            thisprobe: p.seq,
            lastprobe,
            nonce: p.nonce,
            flows: flows
                .iter()
                .map(|&(tag, packets)| FlowCount {
                    tag,
                    packets,
                    ce_packets: 0,
                    bytes: packets * 1000,
                })
                .collect(),
        }
    }

    /// The flow's (sent, received, carried, lost) packets in a measurement.
    fn counts(m: &Measurement, tag: FlowTag) -> (u64, u64, u64, u64) {
        m.flows
            .iter()
            .find(|f| f.tag == tag)
            .map_or((0, 0, 0, 0), |f| {
                (
                    f.sent_packets,
                    f.recd_packets,
                    f.carried_packets,
                    f.lost_packets(),
                )
            })
    }

    /// Sends `n` packets of 1000 bytes of `tag` at `now`.
    fn sent(s: &mut Prober, now: Instant, tag: FlowTag, n: u64) {
        for _ in 0..n {
            s.on_sent(now, tag, 1000);
        }
    }

    #[test]
    fn a_packet_received_before_a_probe_and_notified_after_it_is_not_a_loss() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(6));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        // Interval 1: A sends 10, and an 11th packet leaves before probe 1 but is notified
        // after it; the receiver counts 11 in interval 1.
        sent(&mut s, t(0), A, 10);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(1), A, 1); // the late notify
        sent(&mut s, t(2), A, 4);
        let m = s.on_response(t(100), &answer(&p1, 0, &[(A, 11)]))?;
        assert_eq!(counts(&m, A), (10, 11, 0, 0));
        assert_eq!(m.flows[0].delivered_packets(), 10);
        assert_eq!(
            s.carried(A),
            SentCount {
                packets: 1,
                bytes: 1000
            }
        );
        // Interval 2: the sender counts 5, the receiver the 4 sent after the probe.
        let p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(700), &answer(&p2, 1, &[(A, 15)]))?;
        assert_eq!(counts(&m, A), (5, 4, 1, 0));
        assert_eq!(
            (m.flows[0].delivered_packets(), m.flows[0].delivered_bytes()),
            (5, 5000)
        );
        assert_eq!(m.totals(), (5, 0));
        assert_eq!(s.carried(A), SentCount::default());
        Ok(())
    }

    #[test]
    fn a_carried_surplus_does_not_hide_a_real_loss_beyond_it() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(7));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        sent(&mut s, t(0), A, 3);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(1), A, 6);
        s.on_response(t(100), &answer(&p1, 0, &[(A, 4)]))?;
        // Interval 2: 6 sent, 1 of them counted in interval 1, 2 lost, 3 received.
        let p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(700), &answer(&p2, 1, &[(A, 7)]))?;
        assert_eq!(counts(&m, A), (6, 3, 1, 2));
        assert_eq!(m.totals(), (6, 2));
        Ok(())
    }

    #[test]
    fn a_lost_response_keeps_the_carry_for_the_next_response_which_covers_its_intervals(
    ) -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(8));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        sent(&mut s, t(0), A, 3);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(1), A, 3);
        s.on_response(t(100), &answer(&p1, 0, &[(A, 4)]))?;
        assert_eq!(s.carried(A).packets, 1);
        // Probe 2's response (A at 6: the 2 others sent after probe 1) is lost; after probe 2,
        // A sends 5 and 1 of them is lost.
        let _p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(601), A, 5);
        let p3 = s.poll_probe(t(1200), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(1300), &answer(&p3, 2, &[(A, 10)]))?;
        assert_eq!(m.probes, (2, 3));
        // Sent 3 + 5, counted 10 - 4 = 6, carried 1: the one loss.
        assert_eq!(counts(&m, A), (8, 6, 1, 1));
        assert_eq!(s.carried(A), SentCount::default());
        Ok(())
    }

    #[test]
    fn a_packet_notified_after_a_probe_whose_response_is_lost_is_not_a_loss() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(12));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        // 10 packets, probe 1, then the 11th packet's late notify and 4 more: the receiver
        // counted 11 by probe 1 and 15 by probe 2.
        sent(&mut s, t(0), A, 10);
        let _p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(1), A, 5);
        let p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        // Probe 1's response is lost; probe 2's covers both intervals: nothing lost.
        let m = s.on_response(t(700), &answer(&p2, 1, &[(A, 15)]))?;
        assert_eq!(m.probes, (1, 2));
        assert_eq!(counts(&m, A), (15, 15, 0, 0));
        assert_eq!(m.flows[0].delivered_bytes(), 15_000);
        Ok(())
    }

    #[test]
    fn counts_below_the_last_accepted_ones_count_from_zero() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(13));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        sent(&mut s, t(0), A, 8);
        sent(&mut s, t(0), B, 2);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        s.on_response(t(100), &answer(&p1, 0, &[(A, 8), (B, 2)]))?;
        // The receiver lost its state (A restarts at 3 of the 4 sent) and B is no longer
        // listed; B comes back at 2 of 2: both count from zero.
        sent(&mut s, t(200), A, 4);
        let p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(700), &answer(&p2, 0, &[(A, 3)]))?;
        assert_eq!(counts(&m, A), (4, 3, 0, 1));
        sent(&mut s, t(800), B, 2);
        let p3 = s.poll_probe(t(1200), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(1300), &answer(&p3, 2, &[(A, 3), (B, 2)]))?;
        assert_eq!((counts(&m, A), counts(&m, B)), ((0, 0, 0, 0), (2, 2, 0, 0)));
        Ok(())
    }

    #[test]
    fn a_lost_probe_merges_the_carry_into_the_merged_intervals() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(9));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        sent(&mut s, t(0), A, 3);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(1), A, 2);
        s.on_response(t(100), &answer(&p1, 0, &[(A, 4)]))?;
        // Probe 2 is lost: the response to probe 3 covers intervals 2 and 3.
        let _p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(601), A, 2);
        let p3 = s.poll_probe(t(1200), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(1300), &answer(&p3, 1, &[(A, 7)]))?;
        assert_eq!(counts(&m, A), (4, 3, 1, 0));
        Ok(())
    }

    #[test]
    fn a_surplus_carries_no_more_than_the_flow_sent_after_the_probe() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(10));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        sent(&mut s, t(0), A, 2);
        sent(&mut s, t(0), B, 2);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        // After the probe A sends 3 and B nothing; the receiver claims 100 of each.
        sent(&mut s, t(1), A, 3);
        let m = s.on_response(t(100), &answer(&p1, 0, &[(A, 100), (B, 100)]))?;
        assert_eq!(m.totals(), (4, 0));
        assert_eq!(
            (
                s.carried(A).packets,
                s.carried(A).bytes,
                s.carried(B).packets
            ),
            (3, 3000, 0)
        );
        // The next interval: A's 3 packets all lost, the receiver counts nothing. The carry
        // covers them (a receiver that overstates could claim them anyway), and nothing beyond.
        let p2 = s.poll_probe(t(600), &mut rng).ok_or("no probe due")?;
        let m = s.on_response(t(700), &answer(&p2, 1, &[(A, 100), (B, 100)]))?;
        assert_eq!(counts(&m, A), (3, 0, 3, 0));
        assert_eq!(m.flows[0].delivered_bytes(), 3000);
        assert_eq!(m.totals(), (3, 0));
        // Over both intervals the flow delivered at most what it sent: 2 + 3 packets.
        assert_eq!(s.carried(A), SentCount::default());
        Ok(())
    }

    #[test]
    fn a_forged_response_changes_no_carry() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(11));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        sent(&mut s, t(0), A, 2);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        sent(&mut s, t(1), A, 5);
        let forged = Response {
            nonce: p1.nonce ^ 1,
            ..answer(&p1, 0, &[(A, 100)])
        };
        assert_eq!(
            s.on_response(t(100), &forged),
            Err(ResponseError::NonceMismatch { thisprobe: 1 })
        );
        assert_eq!(s.carried(A), SentCount::default());
        let m = s.on_response(t(100), &answer(&p1, 0, &[(A, 2)]))?;
        assert_eq!(counts(&m, A), (2, 2, 0, 0));
        assert_eq!(s.carried(A), SentCount::default());
        Ok(())
    }

    #[test]
    fn a_fractional_rate_spaces_probes_by_srtt_over_it() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(5));
        for (per_rtt, interval) in [(0.5, 400_000_000), (0.25, 800_000_000), (3.0, 66_666_667)] {
            let config = ProberConfig {
                probes_per_rtt: per_rtt,
                ..ProberConfig::default()
            };
            let mut s = Prober::new(config, Duration::from_secs(1));
            // Before any response: the initial RTT over the rate.
            let before = (1e9 / per_rtt).round() as u64;
            assert_eq!(s.interval(), Duration::from_nanos(before), "{per_rtt}");
            s.on_sent(t(0), A, 1000);
            let p = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
            s.on_response(t(200), &answer(&p, 0, &[]))?;
            assert_eq!(s.interval(), Duration::from_nanos(interval), "{per_rtt}");
        }
        Ok(())
    }

    #[test]
    fn probes_go_out_twice_per_rtt_while_data_flows_and_stop_when_it_stops() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(5));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        assert_eq!(s.next_probe_time(), None);
        s.on_sent(t(0), A, 1000);
        let p = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        let r = Response {
            thisprobe: p.seq,
            lastprobe: 0,
            nonce: p.nonce,
            flows: vec![],
        };
        s.on_response(t(200), &r)?;
        assert_eq!(s.interval(), Duration::from_millis(100));
        s.on_sent(t(210), A, 1000);
        assert_eq!(
            s.next_probe_time(),
            Some(t(210)),
            "the last probe was long ago"
        );
        let p2 = s.poll_probe(t(210), &mut rng).ok_or("no probe due")?;
        s.on_sent(t(220), A, 1000);
        assert_eq!(s.next_probe_time(), Some(t(310)));
        assert!(s.poll_probe(t(309), &mut rng).is_none());
        let p3 = s.poll_probe(t(310), &mut rng).ok_or("no probe due")?;
        // Probes 2 and 3 are answered: nothing sent since, nothing awaits an answer.
        s.on_response(t(410), &answer(&p2, 1, &[]))?;
        s.on_response(t(510), &answer(&p3, 2, &[]))?;
        assert_eq!(s.next_probe_time(), None, "nothing to ask about");
        Ok(())
    }

    #[test]
    fn a_probe_without_an_answer_is_followed_by_another_one_interval_later_without_new_data(
    ) -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(5));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_millis(100));
        // One packet at 0 ms, probe 1 at once; the interval is 100 ms / 2 = 50 ms.
        s.on_sent(t(0), A, 1000);
        s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        // Nothing more is sent; probe 1 has no answer by 50 ms: probe 2 asks again.
        assert_eq!(s.next_probe_time(), Some(t(50)));
        assert!(s.poll_probe(t(49), &mut rng).is_none());
        let p2 = s.poll_probe(t(50), &mut rng).ok_or("no probe due")?;
        assert_eq!(p2.seq, 2);
        assert_eq!(s.next_probe_time(), Some(t(100)), "probe 1 still awaits");
        // Probe 1 was lost: the response to probe 2 covers both intervals, 1 sent, 1 received.
        let m = s.on_response(t(150), &answer(&p2, 0, &[(A, 1)]))?;
        assert_eq!(m.probes, (1, 2));
        assert_eq!(flow(&m, A), (1, 1));
        assert_eq!(
            s.next_probe_time(),
            None,
            "everything asked about is answered"
        );
        Ok(())
    }

    #[test]
    fn probes_that_asked_about_nothing_are_not_repeated() -> TestResult {
        let mut rng = NonceSource::Seeded(Rng::new(5));
        let mut s = Prober::new(ProberConfig::default(), Duration::from_millis(100));
        s.on_sent(t(0), A, 1000);
        let p1 = s.poll_probe(t(0), &mut rng).ok_or("no probe due")?;
        s.poll_probe(t(50), &mut rng).ok_or("no probe due")?;
        // The response to probe 1 arrives; probe 2 covered an empty interval: no more probes.
        s.on_response(t(100), &answer(&p1, 0, &[(A, 1)]))?;
        assert_eq!(s.next_probe_time(), None);
        Ok(())
    }

    /// A sender emitting one packet per millisecond over a path with 50 ms of one-way delay and
    /// Bernoulli loss, probing twice per RTT, with probes and responses lost at random.
    fn run_lossy_path(
        seed: u64,
        p_data: f64,
        p_probe: f64,
        p_response: f64,
        secs: u64,
    ) -> (f64, f64) {
        let mut rng = NonceSource::Seeded(Rng::new(seed));
        let mut net = Rng::stream(seed, 1);
        let mut s = Prober::new(ProberConfig::default(), Duration::from_secs(1));
        let mut r = ProbeResponder::default();
        let owd = 50;
        // In flight, in sending order: (arrival ms, Some(probe) or None for a data packet).
        let mut forward: VecDeque<(u64, Option<Probe>)> = VecDeque::new();
        let mut backward: VecDeque<(u64, Response)> = VecDeque::new();
        let (mut sent, mut dropped) = (0u64, 0u64);
        let (mut est_sent, mut est_lost) = (0u64, 0u64);
        for ms in 0..secs * 1000 {
            let now = t(ms);
            while forward.front().is_some_and(|(at, _)| *at <= ms) {
                if let Some((_, item)) = forward.pop_front() {
                    match item {
                        None => r.on_data(now, HOST, A, 1000, false),
                        Some(p) => {
                            if let Some(resp) = r.on_probe(now, HOST, &p) {
                                if !net.bernoulli(p_response) {
                                    backward.push_back((ms + owd, resp));
                                }
                            }
                        }
                    }
                }
            }
            while backward.front().is_some_and(|(at, _)| *at <= ms) {
                if let Some((_, resp)) = backward.pop_front() {
                    if let Ok(m) = s.on_response(now, &resp) {
                        let (a, b) = m.totals();
                        est_sent += a;
                        est_lost += b;
                    }
                }
            }
            s.on_sent(now, A, 1000);
            sent += 1;
            if net.bernoulli(p_data) {
                dropped += 1;
            } else {
                forward.push_back((ms + owd, None));
            }
            if let Some(p) = s.poll_probe(now, &mut rng) {
                if !net.bernoulli(p_probe) {
                    forward.push_back((ms + owd, Some(p)));
                }
            }
        }
        assert!(
            est_sent > sent / 5,
            "enough intervals measured: {est_sent} of {sent}"
        );
        (
            dropped as f64 / sent as f64,
            est_lost as f64 / est_sent as f64,
        )
    }

    #[test]
    fn with_30_percent_of_probes_and_responses_lost_the_loss_estimate_stays_within_10_percent(
    ) -> TestResult {
        for (seed, p) in [(11, 0.01), (12, 0.05), (13, 0.2)] {
            let (truth, estimate) = run_lossy_path(seed, p, 0.3, 0.3, 200);
            let err = (estimate - truth).abs() / truth;
            assert!(
                err < 0.10,
                "p {p}: true loss {truth:.5}, estimate {estimate:.5}, error {err:.3}"
            );
        }
        Ok(())
    }

    #[test]
    fn without_probe_loss_the_estimate_is_the_true_loss_exactly() -> TestResult {
        let (truth, estimate) = run_lossy_path(21, 0.05, 0.0, 0.0, 20);
        // Only the last packets after the last probe are left unmeasured.
        assert!((estimate - truth).abs() < 0.002, "{truth} vs {estimate}");
        Ok(())
    }
}
