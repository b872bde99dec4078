//! GCCA in the simulator (Liu, Cheung & Baras, "Generic Congestion Control Through Network
//! Coordination"): the run-time state that [`concord_cc::gcca`] asks a simulator to provide.
//!
//! - A router's output channel with `queue = { kind = "gcca", ... }` carries a
//!   [`router::GccaPort`]: the GCCP-capable RED admits every packet the queue has room for and
//!   raises CONGESTION/NORMAL for the neighbour the packet came from; the leaky bucket gates the
//!   channel's departures.
//! - GCCP messages are packets of their own kind ([`crate::packet::Transport::Gccp`]) sent on
//!   the channel toward the upstream neighbour. They are control traffic: they wait in the
//!   channel's control lane, which is served before the data queue, bypasses the AQM, the
//!   detector and the leaky bucket, and is not counted in the queue's length (the paper's
//!   messages are link-layer frames, section 3.1). Wire loss applies to them only with
//!   `loss_applies_to = "all"`.
//! - A GCCA router addresses its messages through its [`NeighbourTable`]: bare to routers, with
//!   the flow's PADDING to hosts, nothing to nodes without GCCA (counted).
//! - A GCCA host dispatches messages through its [`GccpHost`]: a leaky bucket per UDP flow
//!   (datagrams wait in a [`host::HostShaper`]) and a window adjuster per TCP flow.

pub mod host;
pub mod router;

use concord_cc::gcca::{GccpHost, NeighbourTable};

pub use host::HostShaper;
pub use router::{padding_of, GccaPort, PortStats, RateChange};

/// A GCCA timer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GccaTimer {
    /// Channel `c`'s leaky bucket may release its head packet.
    Port(u32),
    /// Flow `f`'s host bucket may release its head datagram.
    Host(u32),
}

/// What a node runs.
#[derive(Debug)]
pub enum NodeGcca {
    /// A plain node: it neither sends nor acts on GCCP messages.
    Plain,
    /// A GCCA router and what it knows of its neighbours.
    Router(NeighbourTable),
    /// A GCCA host.
    Host(GccpHost),
}

/// Message counters of one node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeGccaStats {
    /// CONGESTION messages it sent.
    pub congestion_sent: u64,
    /// NORMAL messages it sent.
    pub normal_sent: u64,
    /// CONGESTION messages it received.
    pub congestion_received: u64,
    /// NORMAL messages it received.
    pub normal_received: u64,
    /// Messages it received but could not apply (no GCCA queue toward the sender, no matching
    /// flow, or the node runs no GCCA).
    pub unapplied: u64,
    /// Messages it received that reduced a TCP window.
    pub tcp_reductions: u64,
}

/// GCCA's run-time state in a simulator.
#[derive(Debug, Default)]
pub struct GccaState {
    /// Per node.
    pub nodes: Vec<NodeGcca>,
    /// Per node.
    pub stats: Vec<NodeGccaStats>,
    /// Per flow: the host send queue of a UDP flow from a GCCA host.
    pub shapers: Vec<Option<HostShaper>>,
}

impl GccaState {
    /// True if any node runs GCCA.
    pub fn active(&self) -> bool {
        self.nodes.iter().any(|n| !matches!(n, NodeGcca::Plain))
    }

    /// Signals a router did not send because the neighbour runs no GCCA or is unknown.
    pub fn not_sent(&self, node: usize) -> u64 {
        match self.nodes.get(node) {
            Some(NodeGcca::Router(t)) => t.stats().not_capable + t.stats().unknown_neighbour,
            _ => 0,
        }
    }
}
