//! The receiver CM of the probe protocol (paper section 2.2.2, Fig. 5, "Responding to probe
//! number thisprobe").
//!
//! The receiver counts, per sending host and per flow, the packets, the CE-marked packets and the
//! bytes that arrive; a probe is answered with `<response, thisprobe, lastprobe, nrecd>`, after
//! which `lastprobe = thisprobe`. Unlike Fig. 5, the counts do not restart at a probe: `nrecd`
//! is, per flow, everything counted since the responder began to track the flow (wrapping at
//! 2^64), and every tracked flow is listed, so that the sender can diff any response against the
//! last one it accepted whatever was lost in between (see [`super::prober`]). A flow with no
//! arrival for [`ResponderConfig::flow_idle`] is forgotten when the next probe is answered, so
//! that responses stay bounded; if it comes back its counts start from zero. A probe not newer
//! than the last one answered (a duplicate, a reordered or a replayed probe) is ignored and
//! counted, and so is a probe more than [`MAX_SEQ_JUMP`] ahead of it: a probe from a spoofed
//! source cannot move the sequence number far ahead (to 0xFFFFFFFF, after which every genuine
//! probe would look stale). A sender whose probes have all been refused for
//! [`ResponderConfig::flow_idle`] (a sender that restarted its sequence) is taken afresh.
//! A response carries at most the probe's `room` flow entries (the most recently active flows
//! when there are more), so it is never more than twice the size of the probe.

use super::probe::{
    FlowCount, FlowTag, Probe, ProbeError, ProbeKey, ProbeMessage, Response, MAX_FLOWS,
};
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// How far ahead of the last probe answered a probe's sequence number may be. Probes are sent
/// about twice per RTT and a sender keeps at most 64 unanswered ones ([`super::ProberConfig`]),
/// so a genuine probe is rarely more than a few ahead; 1,024 leaves room for long outages.
pub const MAX_SEQ_JUMP: u32 = 1024;

/// Bounds on the responder's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponderConfig {
    /// Sending hosts tracked at once; a new one beyond this evicts the least recently active.
    pub max_peers: usize,
    /// Flows tracked per sending host; arrivals of further flows are counted as untracked.
    /// At most [`MAX_FLOWS`], what one response can carry.
    pub max_flows_per_peer: usize,
    /// A flow with no arrival for this long is forgotten. Far longer than any run of lost
    /// probes or responses the sender rides out, so that the sender's last accepted response
    /// still holds the flow's counts when it is forgotten.
    pub flow_idle: Duration,
}

impl Default for ResponderConfig {
    fn default() -> Self {
        ResponderConfig {
            max_peers: 1024,
            max_flows_per_peer: 1024,
            flow_idle: Duration::from_secs(30),
        }
    }
}

/// What the responder has seen that it did not use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResponderStats {
    /// Probes answered.
    pub probes_answered: u64,
    /// Probes not newer than the last one answered, ignored.
    pub probes_stale: u64,
    /// Probes more than [`MAX_SEQ_JUMP`] ahead of the last one answered, ignored.
    pub probes_too_far: u64,
    /// Datagrams that did not decode, or were responses.
    pub malformed: u64,
    /// Packets of flows beyond [`ResponderConfig::max_flows_per_peer`], not counted.
    pub untracked_packets: u64,
    /// Sending hosts whose state was dropped to make room for a new one.
    pub peers_evicted: u64,
    /// Flows forgotten after [`ResponderConfig::flow_idle`] without an arrival.
    pub flows_forgotten: u64,
}

/// One tracked flow: its cumulative counts and its last arrival.
#[derive(Clone, Copy, Debug)]
struct Tracked {
    /// Arrivals since the flow was first seen, wrapping at 2^64.
    count: FlowCount,
    /// The last arrival.
    last_arrival: Instant,
}

/// The receiver's state for one sending host.
#[derive(Clone, Debug, Default)]
struct Peer {
    /// The last probe answered; 0 before the first.
    lastprobe: u32,
    /// When the last probe was answered.
    last_answered: Option<Instant>,
    /// Cumulative arrivals per tracked flow.
    counts: BTreeMap<FlowTag, Tracked>,
    /// The last time a packet or probe arrived from this host.
    last_active: Instant,
}

/// The receiver CM: counts arrivals and answers probes.
#[derive(Clone, Debug, Default)]
pub struct ProbeResponder {
    /// Memory bounds.
    config: ResponderConfig,
    /// Per sending host, in address order.
    peers: BTreeMap<Ipv4Addr, Peer>,
    /// Counters.
    stats: ResponderStats,
}

impl ProbeResponder {
    /// A responder that has seen nothing.
    pub fn new(config: ResponderConfig) -> ProbeResponder {
        ProbeResponder {
            config: ResponderConfig {
                max_peers: config.max_peers.max(1),
                max_flows_per_peer: config.max_flows_per_peer.clamp(1, MAX_FLOWS),
                flow_idle: config.flow_idle,
            },
            peers: BTreeMap::new(),
            stats: ResponderStats::default(),
        }
    }

    /// The counters.
    pub fn stats(&self) -> ResponderStats {
        self.stats
    }

    /// The state for `from`, created (evicting the least recently active host if full).
    fn peer(&mut self, now: Instant, from: Ipv4Addr) -> &mut Peer {
        if !self.peers.contains_key(&from) && self.peers.len() >= self.config.max_peers {
            let oldest = self
                .peers
                .iter()
                .min_by_key(|(_, p)| p.last_active)
                .map(|(a, _)| *a);
            if let Some(a) = oldest {
                self.peers.remove(&a);
                self.stats.peers_evicted += 1;
            }
        }
        let peer = self.peers.entry(from).or_default();
        peer.last_active = now;
        peer
    }

    /// A data packet of `bytes` bytes of flow `tag` arrived from `from` at `now`; `ce` if it
    /// was marked Congestion Experienced.
    pub fn on_data(&mut self, now: Instant, from: Ipv4Addr, tag: FlowTag, bytes: Bytes, ce: bool) {
        let max_flows = self.config.max_flows_per_peer;
        let peer = self.peer(now, from);
        if !peer.counts.contains_key(&tag) && peer.counts.len() >= max_flows {
            self.stats.untracked_packets += 1;
            return;
        }
        let t = peer.counts.entry(tag).or_insert(Tracked {
            count: FlowCount {
                tag,
                ..FlowCount::default()
            },
            last_arrival: now,
        });
        t.last_arrival = now;
        let c = &mut t.count;
        c.packets = c.packets.wrapping_add(1);
        c.ce_packets = c.ce_packets.wrapping_add(u64::from(ce));
        c.bytes = c.bytes.wrapping_add(bytes);
    }

    /// A probe from `from` arrived at `now`: the response to send back, or `None` for a probe
    /// not newer than the last one answered (counted in [`ResponderStats::probes_stale`]) or
    /// more than [`MAX_SEQ_JUMP`] ahead of it ([`ResponderStats::probes_too_far`]). A sender
    /// with no probe answered for [`ResponderConfig::flow_idle`] starts afresh: any sequence
    /// number is taken, and the response's `lastprobe` is 0. The response lists at most
    /// `probe.room` tracked flows with their cumulative counts, the most recently active ones
    /// if there are more, after forgetting the flows idle for [`ResponderConfig::flow_idle`].
    pub fn on_probe(&mut self, now: Instant, from: Ipv4Addr, probe: &Probe) -> Option<Response> {
        let idle = self.config.flow_idle;
        let peer = self.peer(now, from);
        let fresh = peer
            .last_answered
            .is_none_or(|t| now.saturating_since(t) >= idle);
        if fresh {
            peer.lastprobe = 0;
        }
        if probe.seq == 0 || (!fresh && probe.seq <= peer.lastprobe) {
            self.stats.probes_stale += 1;
            return None;
        }
        if !fresh && probe.seq - peer.lastprobe > MAX_SEQ_JUMP {
            self.stats.probes_too_far += 1;
            return None;
        }
        let before = peer.counts.len();
        peer.counts
            .retain(|_, t| now.saturating_since(t.last_arrival) < idle);
        let forgotten = (before - peer.counts.len()) as u64;
        let room = usize::from(probe.room).min(MAX_FLOWS);
        let flows = if peer.counts.len() <= room {
            peer.counts.values().map(|t| t.count).collect()
        } else {
            // The most recently active flows, then in tag order.
            let mut recent: Vec<&Tracked> = peer.counts.values().collect();
            recent.sort_by_key(|t| std::cmp::Reverse(t.last_arrival));
            let mut chosen: Vec<FlowCount> = recent[..room].iter().map(|t| t.count).collect();
            chosen.sort_by_key(|c| c.tag);
            chosen
        };
        let response = Response {
            thisprobe: probe.seq,
            lastprobe: peer.lastprobe,
            nonce: probe.nonce,
            flows,
        };
        peer.lastprobe = probe.seq;
        peer.last_answered = Some(now);
        self.stats.flows_forgotten += forgotten;
        self.stats.probes_answered += 1;
        Some(response)
    }

    /// A probe-protocol datagram from `from` arrived at `now`: decodes it and, for a probe that
    /// is answered, appends the encoded response to `out` and returns true. A datagram that does
    /// not decode, or a response (which a receiver never expects), is counted in
    /// [`ResponderStats::malformed`]; the decoding error is returned.
    pub fn on_datagram(
        &mut self,
        now: Instant,
        from: Ipv4Addr,
        datagram: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<bool, ProbeError> {
        self.on_datagram_with(now, from, datagram, None, out)
    }

    /// As [`ProbeResponder::on_datagram`], for hosts that share `key`: the probe must carry
    /// its tag, and the response is authenticated with it.
    pub fn on_datagram_with(
        &mut self,
        now: Instant,
        from: Ipv4Addr,
        datagram: &[u8],
        key: Option<&ProbeKey>,
        out: &mut Vec<u8>,
    ) -> Result<bool, ProbeError> {
        match ProbeMessage::decode_with(datagram, key) {
            Ok(ProbeMessage::Probe(p)) => match self.on_probe(now, from, &p) {
                Some(r) => {
                    ProbeMessage::Response(r).encode_with(key, out);
                    Ok(true)
                }
                None => Ok(false),
            },
            Ok(ProbeMessage::Response(_)) => {
                self.stats.malformed += 1;
                Ok(false)
            }
            Err(e) => {
                self.stats.malformed += 1;
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOST: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const A: FlowTag = FlowTag {
        src_port: 1000,
        dst_port: 80,
        flow_id: 0,
    };
    const B: FlowTag = FlowTag {
        src_port: 1001,
        dst_port: 80,
        flow_id: 0,
    };

    fn t(ms: u64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn a_probe_is_answered_with_every_tracked_flows_cumulative_counts() {
        let mut r = ProbeResponder::default();
        for _ in 0..3 {
            r.on_data(t(0), HOST, A, 1000, false);
        }
        r.on_data(t(1), HOST, B, 500, true);
        let resp = r.on_probe(
            t(2),
            HOST,
            &Probe {
                seq: 1,
                nonce: 42,
                room: 8,
            },
        );
        assert_eq!(
            resp,
            Some(Response {
                thisprobe: 1,
                lastprobe: 0,
                nonce: 42,
                flows: vec![
                    FlowCount {
                        tag: A,
                        packets: 3,
                        ce_packets: 0,
                        bytes: 3000
                    },
                    FlowCount {
                        tag: B,
                        packets: 1,
                        ce_packets: 1,
                        bytes: 500
                    },
                ],
            })
        );
        r.on_data(t(3), HOST, A, 1000, false);
        // Probe 2 was lost: probe 3 is answered with lastprobe 1, the counts since the start,
        // B's included although nothing of it arrived since.
        let resp = r.on_probe(
            t(4),
            HOST,
            &Probe {
                seq: 3,
                nonce: 7,
                room: 8,
            },
        );
        assert_eq!(
            resp.map(|x| (x.thisprobe, x.lastprobe, x.flows)),
            Some((
                3,
                1,
                vec![
                    FlowCount {
                        tag: A,
                        packets: 4,
                        ce_packets: 0,
                        bytes: 4000
                    },
                    FlowCount {
                        tag: B,
                        packets: 1,
                        ce_packets: 1,
                        bytes: 500
                    },
                ]
            ))
        );
    }

    #[test]
    fn a_stale_or_duplicate_probe_is_ignored_and_counted() {
        let mut r = ProbeResponder::default();
        r.on_data(t(0), HOST, A, 1000, false);
        assert!(r
            .on_probe(
                t(1),
                HOST,
                &Probe {
                    seq: 5,
                    nonce: 1,
                    room: 8
                }
            )
            .is_some());
        r.on_data(t(2), HOST, A, 1000, false);
        assert!(r
            .on_probe(
                t(3),
                HOST,
                &Probe {
                    seq: 5,
                    nonce: 1,
                    room: 8
                }
            )
            .is_none());
        assert!(r
            .on_probe(
                t(3),
                HOST,
                &Probe {
                    seq: 4,
                    nonce: 1,
                    room: 8
                }
            )
            .is_none());
        assert_eq!(r.stats().probes_stale, 2);
        let resp = r.on_probe(
            t(4),
            HOST,
            &Probe {
                seq: 6,
                nonce: 1,
                room: 8,
            },
        );
        assert_eq!(resp.map(|x| x.flows[0].packets), Some(2), "counts kept");
    }

    #[test]
    fn senders_are_counted_apart() {
        let mut r = ProbeResponder::default();
        let other = Ipv4Addr::new(10, 0, 0, 2);
        r.on_data(t(0), HOST, A, 1000, false);
        r.on_data(t(0), other, A, 1000, false);
        r.on_data(t(0), other, A, 1000, false);
        let resp = r.on_probe(
            t(1),
            other,
            &Probe {
                seq: 1,
                nonce: 0,
                room: 8,
            },
        );
        assert_eq!(resp.map(|x| x.flows[0].packets), Some(2));
    }

    #[test]
    fn memory_stays_bounded() {
        let mut r = ProbeResponder::new(ResponderConfig {
            max_peers: 2,
            max_flows_per_peer: 1,
            ..ResponderConfig::default()
        });
        r.on_data(t(0), HOST, A, 1, false);
        r.on_data(t(1), HOST, B, 1, false);
        assert_eq!(r.stats().untracked_packets, 1);
        r.on_data(t(2), Ipv4Addr::new(10, 0, 0, 2), A, 1, false);
        r.on_data(t(3), Ipv4Addr::new(10, 0, 0, 3), A, 1, false);
        assert_eq!(r.stats().peers_evicted, 1);
        // HOST was the least recently active and is gone: its next probe reports nothing.
        let resp = r.on_probe(
            t(4),
            HOST,
            &Probe {
                seq: 1,
                nonce: 0,
                room: 8,
            },
        );
        assert_eq!(resp.map(|x| x.flows.len()), Some(0));
    }

    #[test]
    fn a_flow_idle_for_flow_idle_is_forgotten_and_counts_from_zero_when_it_returns() {
        let mut r = ProbeResponder::default();
        r.on_data(t(0), HOST, A, 1000, false);
        r.on_data(t(10_000), HOST, B, 1000, false);
        // At 30 s, A has been idle for 30 s (flow_idle), B for 20 s.
        let resp = r.on_probe(
            t(30_000),
            HOST,
            &Probe {
                seq: 1,
                nonce: 0,
                room: 8,
            },
        );
        let tags = resp.map(|x| x.flows.iter().map(|c| c.tag).collect::<Vec<_>>());
        assert_eq!(tags, Some(vec![B]));
        assert_eq!(r.stats().flows_forgotten, 1);
        r.on_data(t(30_001), HOST, A, 700, false);
        let resp = r.on_probe(
            t(30_002),
            HOST,
            &Probe {
                seq: 2,
                nonce: 0,
                room: 8,
            },
        );
        assert_eq!(
            resp.map(|x| x.flows[0]),
            Some(FlowCount {
                tag: A,
                packets: 1,
                ce_packets: 0,
                bytes: 700
            })
        );
    }

    #[test]
    fn datagrams_are_decoded_answered_and_malformed_ones_counted() {
        let mut r = ProbeResponder::default();
        r.on_data(t(0), HOST, A, 1000, false);
        let mut probe = Vec::new();
        ProbeMessage::Probe(Probe {
            seq: 1,
            nonce: 9,
            room: 8,
        })
        .encode(&mut probe);
        let mut out = Vec::new();
        assert_eq!(r.on_datagram(t(1), HOST, &probe, &mut out), Ok(true));
        match ProbeMessage::decode(&out) {
            Ok(ProbeMessage::Response(resp)) => assert_eq!(resp.nonce, 9),
            other => panic!("not a response: {other:?}"),
        }
        assert!(r.on_datagram(t(2), HOST, &[1, 2], &mut out).is_err());
        let mut resp = Vec::new();
        ProbeMessage::Response(Response::default()).encode(&mut resp);
        assert_eq!(r.on_datagram(t(2), HOST, &resp, &mut out), Ok(false));
        assert_eq!(r.stats().malformed, 2);
    }
}
