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
use crate::packet::{FlowId, NodeId};
use concord_cc::cm::{CongestionManager, FlowId as CmFlowId, ProbeResponder, Response};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use std::collections::BTreeMap;

pub use concord_cc::cm::app::{
    pick_representation, AckFeedback, AckNews, AudioState, EncodingChange,
};

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

/// Every CM part of a run.
#[derive(Debug, Default)]
pub struct CmState {
    /// Each node's sending CM (`None`: it sends no CM flow). Boxed: one pointer per node that
    /// sends none, where the CM inline took 520 bytes of every node.
    pub hosts: Vec<Option<Box<HostCm>>>,
    /// The nodes whose entry in `hosts` is `Some`, ascending: a sample of the macroflows
    /// visits these, not every node.
    pub senders: Vec<NodeId>,
    /// Each node's probe responder (`None`: it receives no CM flow with probe feedback); boxed
    /// as `hosts` is.
    pub responders: Vec<Option<Box<ProbeResponder>>>,
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

impl CmState {
    /// True if the run has any CM flow.
    pub fn active(&self) -> bool {
        self.hosts.iter().any(Option::is_some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    /// Bytes of one element of `v`.
    fn element_bytes<T>(_: &[T]) -> usize {
        size_of::<T>()
    }

    #[test]
    fn a_node_without_a_cm_or_a_responder_costs_a_pointer_each() {
        let state = CmState {
            hosts: vec![None, None],
            responders: vec![None, None],
            ..CmState::default()
        };
        assert_eq!(element_bytes(&state.hosts), size_of::<usize>());
        assert_eq!(element_bytes(&state.responders), size_of::<usize>());
        assert!(!state.active());
    }
}
