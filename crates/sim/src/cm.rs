//! The Congestion Manager (Balakrishnan, Rahul and Seshan) in the simulator: one
//! [`CongestionManager`] per sending host, shared by all its CM flows, and one
//! [`ProbeResponder`] per host that receives CM flows with probe feedback.
//!
//! The model:
//!
//! - A TCP flow with a `cm` table is TCP/CM (paper section 3.2.1): its sender's congestion
//!   window is out of play (the credit-only send gate); it asks its host's CM for a grant
//!   (`request`) whenever it has a segment to send, sends one segment per grant
//!   (`app_notify`), reports it (`notify`), and passes each ACK on as implicit feedback
//!   (`update`): bytes acknowledged and the RTT sample, a transient loss on fast retransmit, an
//!   ECN echo, persistent congestion on a timeout. Loss recovery and flow control stay TCP's.
//! - An `audio` flow is the layered audio server of section 3.2.2: it sends packets of its
//!   `packet_size` (the paper's 1 KB) at the highest encoding not above its share of the
//!   macroflow's rate, changes encoding on
//!   `change_rate`, reports each packet with `notify`, and has no feedback of its own: the CM
//!   probes its receiver.
//! - A `cmudp` flow sends one packet per grant and keeps up to eight packets requested while
//!   it has data: a bulk source scheduled entirely by the CM, with probe feedback, or with
//!   `feedback = "ack"` an ACK per packet that the sender passes to the CM as `update`
//!   ([`AckFeedback`]; the per-ACK feedback of paper section 2.2.1).
//! - A CM flow closes (`cm_close`) when it is done: a TCP/CM transfer once acknowledged, a
//!   `cmudp` sender after its last byte, an application at its stop time.
//! - Probes and responses are UDP packets between the hosts' CMs (the byte layout of
//!   [`concord_cc::cm::probe`]); a response holds per-flow counts, so a packet carries a handle
//!   into [`CmState::responses`]. `[cm] probe_loss` drops that fraction of probes and responses
//!   as they are sent.
//!
//! A flow's CM key is its destination's address with the ports the pcap traces give it
//! ([`crate::trace::capture::flow_ports`]) and its index as flow id.

use crate::handles::Handles;
use crate::packet::FlowId;
use concord_cc::cm::{CongestionManager, FlowId as CmFlowId, ProbeResponder, Response};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
use std::collections::BTreeMap;

/// The `flow` field of probe and response packets, which belong to no flow.
pub const CM_CONTROL_FLOW: FlowId = FlowId::MAX;

/// A CM timer in the simulator's event queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmTimer {
    /// A host's CM has a grant, an aging step or a probe due.
    Host(u32),
    /// An audio flow's next packet is due.
    Audio(FlowId),
    /// A Web object picks its representation.
    Pick(FlowId),
}

/// A sending host's Congestion Manager.
#[derive(Debug)]
pub struct HostCm {
    /// The manager.
    pub cm: CongestionManager,
    /// The instant of its pending timer event, if one is scheduled.
    pub armed: Option<Instant>,
    /// The simulator flow behind each CM flow handle.
    pub flows: BTreeMap<CmFlowId, FlowId>,
}

/// One rate report to an audio flow (`change_rate`) and the encoding it chose on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EncodingChange {
    /// When.
    pub at: Instant,
    /// The encoding chosen.
    pub rate: Rate,
    /// The share of the macroflow's rate the choice was made from.
    pub share: Rate,
}

/// The layered audio server's state (paper section 3.2.2).
#[derive(Debug)]
pub struct AudioState {
    /// The encodings, ascending.
    pub encodings: Vec<Rate>,
    /// The index of the encoding in use.
    pub current: usize,
    /// When it came into use.
    pub since: Instant,
    /// Time spent on each encoding before `since`.
    pub time_on: Vec<Duration>,
    /// Every rate report (`change_rate`) and the encoding chosen on it, the first included.
    pub changes: Vec<EncodingChange>,
    /// The instant of the pending send event, if one is scheduled.
    pub armed: Option<Instant>,
}

impl AudioState {
    /// A server that starts on the lowest encoding: before the CM has an estimate, `cm_query`
    /// gives no rate to choose by.
    pub fn new(encodings: Vec<Rate>) -> AudioState {
        let n = encodings.len();
        AudioState {
            encodings,
            current: 0,
            since: Instant::ZERO,
            time_on: vec![Duration::ZERO; n],
            changes: Vec::new(),
            armed: None,
        }
    }

    /// The highest encoding not above `share`, or the lowest if every one is above it.
    pub fn choose(&self, share: Rate) -> usize {
        self.encodings
            .iter()
            .rposition(|e| *e <= share)
            .unwrap_or(0)
    }

    /// Switches to the encoding for `share` at `now`, recording the change.
    pub fn adapt(&mut self, now: Instant, share: Rate) {
        let next = self.choose(share);
        if next != self.current || self.changes.is_empty() {
            self.settle(now);
            self.current = next;
        }
        self.changes.push(EncodingChange {
            at: now,
            rate: self.rate(),
            share,
        });
    }

    /// Adds the time on the current encoding up to `now` to its account.
    pub fn settle(&mut self, now: Instant) {
        if let Some(t) = self.time_on.get_mut(self.current) {
            *t += now.saturating_since(self.since);
        }
        self.since = self.since.max(now);
    }

    /// The encoding in use.
    pub fn rate(&self) -> Rate {
        self.encodings
            .get(self.current)
            .copied()
            .unwrap_or(Rate::ZERO)
    }
}

/// What a CM application flow does with its grants and rate changes.
#[derive(Debug)]
pub enum CmApp {
    /// The layered audio server.
    Audio(AudioState),
    /// A bulk sender, one packet per grant; `remaining` bytes left (`None`: infinite).
    Bulk {
        /// Bytes still to send.
        remaining: Option<u64>,
    },
}

/// A UDP flow of a CM application (`audio` or `cmudp`).
#[derive(Debug)]
pub struct CmAppFlow {
    /// The application.
    pub app: CmApp,
    /// Packet size on the wire, in bytes.
    pub packet_size: u32,
    /// Datagrams sent.
    pub sent: u64,
    /// `sent` at the end of the warm-up.
    pub sent_at_warmup: u64,
    /// Datagrams received by the sink.
    pub received: u64,
    /// The sender's account of the receiver's ACKs (`None`: feedback from probes).
    pub acks: Option<AckFeedback>,
}

/// A `cmudp` sender with per-packet ACKs (`feedback = "ack"`): what its ACKs have told it so
/// far. The receiver acknowledges every packet with the packet's sequence number and the
/// number of the flow's packets it has received in all; with data and ACKs each in order (one
/// FIFO path each way), every packet below the one acknowledged that the count leaves out is
/// lost, and a lost ACK loses nothing, as the next one carries the count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckFeedback {
    /// Packets whose fate is known: one above the highest sequence number acknowledged.
    pub through: u64,
    /// Packets the receiver had received, as of the newest ACK.
    pub received: u64,
    /// Packets known lost: `through - received` as of the newest ACK.
    pub lost: u64,
    /// ACKs taken.
    pub acks: u64,
}

/// What one ACK adds to the sender's account: packets newly received and newly lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckNews {
    /// Packets the receiver got since the previous ACK taken.
    pub received: u64,
    /// Packets found lost since the previous ACK taken.
    pub lost: u64,
}

impl AckFeedback {
    /// Takes an ACK of packet `seq` that says `received` packets have arrived in all. An ACK
    /// older than one already taken (`seq` below `through`) tells nothing new: `None`.
    pub fn on_ack(&mut self, seq: u64, received: u64) -> Option<AckNews> {
        let through = seq.checked_add(1)?;
        if through <= self.through {
            return None;
        }
        // The receiver cannot have more packets than were sent up to the one it acknowledges;
        // a count beyond that is capped, so that it reports no delivery that did not happen.
        let received = received.clamp(self.received, through);
        let lost = through - received;
        let news = AckNews {
            received: received - self.received,
            lost: lost.saturating_sub(self.lost),
        };
        self.through = through;
        self.received = received;
        self.lost = self.lost.max(lost);
        self.acks += 1;
        Some(news)
    }
}

/// Every CM part of a run.
#[derive(Debug, Default)]
pub struct CmState {
    /// Each node's sending CM (`None`: it sends no CM flow).
    pub hosts: Vec<Option<HostCm>>,
    /// Each node's probe responder (`None`: it receives no CM flow with probe feedback).
    pub responders: Vec<Option<ProbeResponder>>,
    /// Each flow's handle in its source's CM, once open (`None`: not a CM flow, or not started).
    pub handles: Vec<Option<CmFlowId>>,
    /// Each flow's weight and receiver hint (`None`: not a CM flow).
    pub weights: Vec<Option<(f64, f64)>>,
    /// Each Web object's representations and latency (`None`: not a choice).
    pub objects: Vec<Option<(Vec<u64>, Duration)>>,
    /// The representation each Web object picked at its start, in bytes.
    pub chosen: Vec<Option<u64>>,
    /// Each flow's bytes requested from its CM and not yet granted.
    pub requested: Vec<u64>,
    /// The responses of packets in flight.
    pub responses: Handles<Response>,
    /// The fraction of probes and responses lost at random (`[cm] probe_loss`).
    pub probe_loss: f64,
    /// Draws the probe losses.
    pub rng: Option<Rng>,
    /// Probes lost at random.
    pub probes_lost: u64,
    /// Responses lost at random.
    pub responses_lost: u64,
    /// Probes a full or early-dropping queue dropped.
    pub probes_dropped: u64,
    /// Responses a full or early-dropping queue dropped.
    pub responses_dropped: u64,
    /// Responses the receiving CM took.
    pub responses_delivered: u64,
    /// A host's CM events are being handled: hooks called meanwhile leave them to that loop.
    pub draining: bool,
}

/// The largest of `representations` (ascending, in bytes) that `share` delivers within
/// `latency`, or the smallest if none does or there is no estimate (paper section 3.2.1: the
/// server picks the representation that maximises quality without incurring high latency).
pub fn pick_representation(
    representations: &[u64],
    share: Option<Rate>,
    latency: Duration,
) -> Option<u64> {
    let smallest = representations.first().copied();
    let Some(share) = share else {
        return smallest;
    };
    representations
        .iter()
        .rev()
        .find(|b| share.transmit_time(**b) <= latency)
        .copied()
        .or(smallest)
}

impl CmState {
    /// True if the run has any CM flow.
    pub fn active(&self) -> bool {
        self.hosts.iter().any(Option::is_some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audio() -> AudioState {
        AudioState::new([10, 20, 40, 80, 160, 320].map(Rate::from_kbps).to_vec())
    }

    #[test]
    fn the_audio_server_takes_the_highest_encoding_not_above_its_share() {
        let a = audio();
        assert_eq!(a.choose(Rate::from_kbps(5)), 0);
        assert_eq!(a.choose(Rate::from_kbps(80)), 3);
        assert_eq!(a.choose(Rate::from_kbps(159)), 3);
        assert_eq!(a.choose(Rate::from_kbps(1000)), 5);
    }

    #[test]
    fn a_web_object_takes_the_largest_representation_its_share_delivers_in_time() {
        let reps = [16_000, 64_000, 256_000];
        let second = Duration::from_secs(1);
        // 512 kbit/s delivers 64 KB in exactly one second, 256 KB in four.
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_kbps(512)), second),
            Some(64_000)
        );
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_kbps(511)), second),
            Some(16_000)
        );
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_kbps(10)), second),
            Some(16_000)
        );
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_mbps(3)), second),
            Some(256_000)
        );
        assert_eq!(pick_representation(&reps, None, second), Some(16_000));
        assert_eq!(pick_representation(&[], None, second), None);
    }

    #[test]
    fn an_ack_reports_the_packets_received_and_lost_since_the_one_before() {
        let mut k = AckFeedback::default();
        // Packets 0..=3 all arrived.
        assert_eq!(
            k.on_ack(3, 4),
            Some(AckNews {
                received: 4,
                lost: 0
            })
        );
        // Packets 4 and 5 lost, 6 arrived: the ACK of 6 counts 5 received of 7 sent.
        assert_eq!(
            k.on_ack(6, 5),
            Some(AckNews {
                received: 1,
                lost: 2
            })
        );
        // The ACKs of 7 and 8 lost, the one of 9 arrives: 3 more received, nothing lost.
        assert_eq!(
            k.on_ack(9, 8),
            Some(AckNews {
                received: 3,
                lost: 0
            })
        );
        assert_eq!(
            k,
            AckFeedback {
                through: 10,
                received: 8,
                lost: 2,
                acks: 3
            }
        );
        // An ACK older than the newest taken changes nothing.
        assert_eq!(k.on_ack(8, 7), None);
        assert_eq!(k.on_ack(9, 8), None);
        assert_eq!(k.acks, 3);
    }

    #[test]
    fn an_ack_that_claims_more_than_was_sent_reports_no_more_than_was_sent() {
        let mut k = AckFeedback::default();
        assert_eq!(
            k.on_ack(1, 50),
            Some(AckNews {
                received: 2,
                lost: 0
            })
        );
        // A count below one already taken neither takes deliveries back nor invents losses
        // beyond the packets the ACK covers.
        assert_eq!(
            k.on_ack(2, 1),
            Some(AckNews {
                received: 0,
                lost: 1
            })
        );
        assert_eq!(k.on_ack(u64::MAX, 0), None);
    }

    #[test]
    fn time_on_each_encoding_adds_up_between_changes() {
        let mut a = audio();
        a.adapt(Instant::from_millis(100), Rate::from_kbps(100)); // 80 kbit/s from 0.1 s
        a.adapt(Instant::from_millis(600), Rate::from_kbps(90)); // still 80 kbit/s
        a.adapt(Instant::from_millis(1100), Rate::from_kbps(45)); // 40 kbit/s
        a.settle(Instant::from_millis(2100));
        assert_eq!(a.time_on[0], Duration::from_millis(100));
        assert_eq!(a.time_on[3], Duration::from_millis(1000));
        assert_eq!(a.time_on[2], Duration::from_millis(1000));
        assert_eq!(a.changes.len(), 3);
        assert_eq!(a.rate(), Rate::from_kbps(40));
    }
}
