//! CP (Ott, Sparks, Mayer-Patel, INFOCOM 2004) in the simulator: aggregation points on routers,
//! C-UDP endpoints on hosts, and the CP headers packets carry.
//!
//! The model:
//!
//! - A `[[cp]]` section makes an application: its `local` router is the aggregation point (AP)
//!   of the sending cluster, its `remote` router that of the receiving cluster (slides,
//!   Fig. 2). Every router named by some application runs one
//!   [`AggregationPoint`](concord_cc::cp::AggregationPoint) for all of them.
//! - A `cudp` flow is a C-UDP endpoint: each datagram carries a CP header with the
//!   application and flow ids, and is sent at the flow's equal share of the bandwidth the
//!   local AP makes available to the application ([`concord_cc::cp::split_equally`]).
//! - A packet with a CP header passing its application's local AP is stamped
//!   (`on_outbound`); passing the remote AP it is read and rewritten for the endpoint
//!   (`on_inbound`). The remote AP's reports go back to the local AP in control messages
//!   ([`crate::packet::Transport::CpControl`]) addressed to that router. The header's encoded
//!   length is part of the packet's size, and changes with it at each AP.
//! - The local AP tells its cluster's endpoints each change of the estimate at once: the
//!   cluster's LAN is not modelled (the slides' endpoints read it from the AP through the
//!   C-UDP socket API).
//!
//! CP headers are not `Copy`, packets are: a packet holds a handle into [`CpState::headers`],
//! freed when the packet is delivered, consumed or dropped by a queue. A packet lost on a
//! wire (`loss`) leaves its header in the table until the end of the run.

use concord_cc::cp::{AggregationPoint, CUdpSocket, CpHeader};
use concord_cc::time::Instant;
use concord_cc::units::Rate;
use std::collections::BTreeMap;

/// The CP headers of packets in flight, by handle.
pub type CpHeaders = crate::handles::Handles<CpHeader>;

/// One application at run time.
#[derive(Debug, Clone)]
pub struct CpApp {
    /// The local AP's node.
    pub local: u32,
    /// The remote AP's node.
    pub remote: u32,
    /// Its C-UDP flows, in scenario order (flow id i within the application is `flows[i]`).
    pub flows: Vec<u32>,
}

/// A C-UDP endpoint pair at run time: the sending socket and the sink.
#[derive(Debug)]
pub struct CUdpFlow {
    /// The sending socket (application and flow ids, the latest estimate).
    pub socket: CUdpSocket,
    /// Datagram size on the wire before the CP header.
    pub packet_size: u32,
    /// The rate this flow sends at: its share of the application's available bandwidth.
    pub rate: Rate,
    /// When the previous datagram left.
    pub last_send: Option<Instant>,
    /// The instant of the pending send event, if one is scheduled.
    pub send_timer: Option<Instant>,
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received by the sink.
    pub received: u64,
}

/// Every CP part of a run.
#[derive(Debug, Default)]
pub struct CpState {
    /// The headers of packets in flight.
    pub headers: CpHeaders,
    /// The aggregation point of each node that is one.
    pub aps: BTreeMap<u32, AggregationPoint>,
    /// The pending timer of each AP.
    pub ap_timers: BTreeMap<u32, Instant>,
    /// Applications by id.
    pub apps: BTreeMap<u32, CpApp>,
}
