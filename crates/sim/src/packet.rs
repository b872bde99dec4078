//! Packets as the simulator moves them: header structs, not bytes.

use concord_cc::gcca::GccpMessage;
use concord_cc::tfrc::DataHeader;
use concord_cc::time::{Duration, Instant};
use concord_cc::units::Rate;
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
        /// SACK blocks (RFC 2018), none unless the connection uses SACK.
        sack: concord_cc::tcp::sack::SackBlocks,
    },
    /// A segment of the TCP three-way handshake (SYN, SYN-ACK or its ACK), for a connection
    /// that opens with one; no payload.
    TcpHandshake {
        /// Which segment.
        segment: concord_cc::tcp::HandshakeSegment,
        /// The sender's timestamp value (TSval, ms), or the echoed one (TSecr) on a SYN-ACK.
        ts: u32,
    },
    /// A UDP datagram.
    Udp {
        /// The source's datagram counter, for loss accounting at the sink.
        seq: u64,
        /// Payload bytes.
        len: u32,
    },
    /// A TFRC data packet over UDP (RFC 5348 section 3.2.1).
    TfrcData {
        /// Sequence number, timestamp and the sender's RTT estimate.
        header: DataHeader,
        /// Payload bytes.
        len: u32,
    },
    /// A TFRC feedback packet over UDP (RFC 5348 section 3.2.2), receiver to sender.
    TfrcFeedback {
        /// The echoed timestamp of the last data packet received.
        t_recvdata: Instant,
        /// Time from that packet's receipt to this report.
        t_delay: Duration,
        /// The receive rate since the previous report.
        x_recv: Rate,
        /// The loss event rate p, as the bits of an `f64` (so the packet stays `Eq`).
        p_bits: u64,
    },
    /// A CP control message between aggregation points: the CP header alone (flag C), no
    /// transport payload (slides, Fig. 3).
    CpControl,
    /// A CM probe from a sending host's Congestion Manager to the receiver's (CM paper
    /// section 2.2.2, Fig. 5), over UDP.
    CmProbe(concord_cc::cm::Probe),
    /// A CM probe response, receiver to sender: a handle into the simulator's table of
    /// responses (a response carries per-flow counts and is not `Copy`).
    CmResponse(u32),
    /// The ACK of a CM bulk sender's packet (a `cmudp` flow with `feedback = "ack"`),
    /// receiver to sender, over UDP.
    CmAck {
        /// The sequence number of the packet acknowledged.
        seq: u64,
        /// The flow's packets the receiver has received in all, this one included.
        received: u64,
        /// When the packet acknowledged was sent (echoed for the RTT sample).
        echo: Instant,
    },
    /// A GCCP message from a router to its upstream neighbour (GCCA section 3.1); control
    /// traffic carried straight in a link-layer frame, not in IP.
    Gccp(GccpMessage),
}

/// The handle of a packet's CP header in the simulator's table, if it carries one: a `u32` with
/// `u32::MAX` for none rather than an `Option<u32>`, which takes 8 bytes and put its tag in the
/// packet's first bytes. The packet is 96 bytes rather than 104 (it is moved several times a
/// hop), and `Option<Packet>` keeps its tag in the ECN field instead of splitting every copy of
/// a packet out of an `Option` at a 4-byte offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpHandle(u32);

impl CpHandle {
    /// No CP header.
    pub const NONE: CpHandle = CpHandle(u32::MAX);

    /// The header at `handle` in the table (whose handles are below `u32::MAX`: the table would
    /// need 4 G headers at once to reach it).
    pub fn some(handle: u32) -> CpHandle {
        debug_assert!(handle != u32::MAX, "CP header handle out of range");
        CpHandle(handle)
    }

    /// The handle, if the packet carries a CP header.
    #[inline]
    pub fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
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
    /// The CP header between IP and the transport, if the packet carries one: a handle into
    /// the simulator's table of CP headers (which are not `Copy`); its encoded length is part
    /// of `size`.
    pub cp: CpHandle,
    /// ECA's LOAD and RLOAD fields (0: none).
    pub eca: crate::eca::LoadFields,
}

impl Packet {
    /// A packet of `size` bytes on the wire from `src` to `dst` in `flow`, created at
    /// `created`, not ECN-capable, with no CP header and no ECA fields.
    pub fn new(
        src: NodeId,
        dst: NodeId,
        flow: FlowId,
        size: u32,
        created: Instant,
        transport: Transport,
    ) -> Packet {
        Packet {
            src,
            dst,
            flow,
            size,
            ecn: Ecn::NotEct,
            created,
            transport,
            cp: CpHandle::NONE,
            eca: crate::eca::LoadFields::default(),
        }
    }

    /// True if the packet carries payload (TCP data or UDP), not a pure ACK or a control
    /// message.
    pub fn is_data(&self) -> bool {
        !matches!(
            self.transport,
            Transport::TcpAck { .. }
                | Transport::TcpHandshake { .. }
                | Transport::TfrcFeedback { .. }
                | Transport::CpControl
                | Transport::CmProbe(_)
                | Transport::CmResponse(_)
                | Transport::CmAck { .. }
                | Transport::Gccp(_)
        )
    }

    /// True if the packet is a hop-by-hop control message (GCCP): it is for the node at the
    /// far end of the channel it crossed, whatever its destination.
    pub fn is_link_control(&self) -> bool {
        matches!(self.transport, Transport::Gccp(_))
    }
}

impl concord_cc::aqm::QueuedPacket for Packet {
    fn size(&self) -> u64 {
        u64::from(self.size)
    }

    fn is_ect(&self) -> bool {
        self.ecn.is_capable()
    }

    fn mark_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }

    fn flow(&self) -> u32 {
        self.flow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cp_handle_reads_back_and_none_is_none() {
        assert_eq!(CpHandle::NONE.get(), None);
        assert_eq!(CpHandle::some(0).get(), Some(0));
        assert_eq!(CpHandle::some(u32::MAX - 1).get(), Some(u32::MAX - 1));
        let p = Packet::new(0, 1, 2, 40, Instant::ZERO, Transport::CpControl);
        assert_eq!(p.cp.get(), None);
    }

    #[test]
    fn a_packet_is_96_bytes() {
        // Moved several times a hop: a field that grows it should be a deliberate choice.
        assert_eq!(std::mem::size_of::<Packet>(), 96);
        assert_eq!(std::mem::size_of::<Option<Packet>>(), 96);
    }
}
