//! Packets as the simulator moves them: header structs, not bytes.

use concord_cc::gcca::GccpMessage;
use concord_cc::time::Instant;
use concord_cc::wire::Ecn;

/// Index of a node.
pub type NodeId = u32;
/// Index of a flow.
pub type FlowId = u32;

/// The transport part of a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A TCP data segment (sender to receiver).
    TcpData {
        /// 64-bit sequence number of the first payload byte.
        seq: u64,
        /// Payload bytes.
        len: u32,
        /// The CWR flag.
        cwr: bool,
        /// The sender's timestamp value (TSval, ms).
        ts_val: u32,
    },
    /// A pure TCP ACK (receiver to sender).
    TcpAck {
        /// Cumulative acknowledgment.
        ack: u64,
        /// The ECN-Echo flag.
        ece: bool,
        /// The echoed timestamp (TSecr, ms).
        ts_ecr: u32,
    },
    /// A UDP datagram.
    Udp {
        /// The source's datagram counter, for loss accounting at the sink.
        seq: u64,
        /// Payload bytes.
        len: u32,
    },
    /// A GCCP message from a router to its upstream neighbour (GCCA section 3.1); control
    /// traffic carried straight in a link-layer frame, not in IP.
    Gccp(GccpMessage),
}

/// A packet in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Originating node.
    pub src: NodeId,
    /// Destination node.
    pub dst: NodeId,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Bytes on the wire (IP total length).
    pub size: u32,
    /// The IP ECN field.
    pub ecn: Ecn,
    /// When the source created it (for one-way delay).
    pub created: Instant,
    /// Transport header.
    pub transport: Transport,
    /// ECA's LOAD and RLOAD fields (0: none).
    pub eca: crate::eca::LoadFields,
}

impl Packet {
    /// True if the packet carries payload (TCP data or UDP), not a pure ACK or a control
    /// message.
    pub fn is_data(&self) -> bool {
        !matches!(
            self.transport,
            Transport::TcpAck { .. } | Transport::Gccp(_)
        )
    }
}
