//! A scenario after loading and validation: every name resolved to an index, every quantity in
//! its unit type. The simulator is built from this, never from raw TOML.

use concord_cc::aqm::AqmConfig;
use concord_cc::tcp::TcpConfig;
use concord_cc::time::Duration;
use concord_cc::units::{Bytes, Rate};
use std::path::PathBuf;

/// Index of a node in [`Scenario::nodes`].
pub type NodeIdx = usize;
/// Index of a link in [`Scenario::links`].
pub type LinkIdx = usize;
/// Index of a flow in [`Scenario::flows`].
pub type FlowIdx = usize;

/// A validated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The scenario's name (from the file, or the file stem).
    pub name: String,
    /// The file it came from, if any.
    pub source: Option<PathBuf>,
    /// Simulated time to run.
    pub duration: Duration,
    /// The seed every random stream derives from.
    pub seed: u64,
    /// Hosts and routers.
    pub nodes: Vec<NodeSpec>,
    /// Bidirectional point-to-point links.
    pub links: Vec<LinkSpec>,
    /// Traffic.
    pub flows: Vec<FlowSpec>,
    /// What to measure and write.
    pub record: RecordSpec,
}

/// What a node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host: runs transports and applications, does not forward.
    Host,
    /// A router: forwards, runs no applications.
    Router,
}

/// A node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeSpec {
    /// Unique name.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
}

/// One direction of a link.
#[derive(Clone, Debug, PartialEq)]
pub struct ChannelSpec {
    /// Serialisation rate.
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    /// The output queue in front of the channel.
    pub queue: AqmConfig,
    /// Probability that a packet is lost on the wire (after the queue), in [0, 1].
    pub loss: f64,
    /// Which packets the loss applies to.
    pub loss_applies_to: LossFilter,
}

/// Which packets a channel's random loss may hit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossFilter {
    /// Every packet.
    #[default]
    All,
    /// Only packets that carry payload (not pure ACKs or control messages).
    Data,
}

/// A bidirectional link between nodes `a` and `b`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkSpec {
    /// `a` end.
    pub a: NodeIdx,
    /// `b` end.
    pub b: NodeIdx,
    /// The direction a -> b.
    pub forward: ChannelSpec,
    /// The direction b -> a.
    pub reverse: ChannelSpec,
}

/// A flow: a transport connection or datagram stream from one host to another.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Unique name (`f1`, or the name given).
    pub name: String,
    /// Sending host.
    pub from: NodeIdx,
    /// Receiving host.
    pub to: NodeIdx,
    /// When the application starts.
    pub start: Duration,
    /// When the application stops sending (`None`: at the end of the run).
    pub stop: Option<Duration>,
    /// What it is.
    pub kind: FlowKind,
    /// A one-shot loss injected into a TCP flow's data (`None`: no injection).
    pub drop_when: Option<DropWhen>,
}

/// When a TCP flow's one injected loss happens: the first data segment the sender transmits
/// once the condition holds is lost in the network (it never reaches the first channel), as the
/// random loss in slow start of the MCCP paper's Fig. 3. It fires once per run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DropWhen {
    /// Once cwnd / RTT_min reaches this rate (cwnd in bytes, RTT_min the smallest RTT sample so
    /// far; never before the first RTT sample).
    Rate(Rate),
    /// The `n`-th new data segment (1-based; retransmissions are not counted).
    Segment(u64),
    /// The first data segment sent at or after this time since the start of the run.
    At(Duration),
}

/// The kinds of flow.
#[derive(Clone, Debug, PartialEq)]
pub enum FlowKind {
    /// A TCP bulk transfer.
    Tcp {
        /// Connection settings, the window controller among them.
        tcp: TcpConfig,
        /// Bytes to transfer; `None`: an infinite source.
        bytes: Option<Bytes>,
    },
    /// A constant-bit-rate UDP stream.
    Cbr {
        /// Sending rate (of whole packets, headers included).
        rate: Rate,
        /// Packet size on the wire, in bytes (IP header included).
        packet_size: Bytes,
    },
    /// An on/off UDP source: CBR at `rate` during on periods, silent during off periods.
    OnOff {
        /// Rate while on.
        rate: Rate,
        /// Packet size on the wire, in bytes.
        packet_size: Bytes,
        /// Mean on period.
        on: Duration,
        /// Mean off period.
        off: Duration,
        /// Draw period lengths from exponential distributions (else fixed).
        exponential: bool,
    },
}

/// One direction of a link, as named in `record` (`"r1->r2"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChannelRef {
    /// The link.
    pub link: LinkIdx,
    /// True for b -> a.
    pub reverse: bool,
}

/// What to measure and write.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordSpec {
    /// Width of the goodput time-series bins (default 100 ms).
    pub bin: Duration,
    /// Start of the measurement window for summary figures (goodput, Jain, utilisation).
    pub warmup: Duration,
    /// Queues whose occupancy is sampled over time; empty: every router output queue.
    pub queues: Vec<ChannelRef>,
    /// Sampling period of queue occupancy (default: `bin`).
    pub queue_interval: Duration,
    /// Flows whose cwnd/ssthresh are traced per change.
    pub cwnd: Vec<FlowIdx>,
    /// Flows whose window and bandwidth estimator (MCCP's ABE and NCD, Westwood+'s BWE) are
    /// traced on every ACK.
    pub estimator: Vec<FlowIdx>,
    /// Channels to write a pcap trace of (packets as they enter the channel).
    pub pcap: Vec<ChannelRef>,
    /// Bytes of each packet kept in a pcap trace (headers only by default: 128).
    pub pcap_snaplen: u32,
    /// The channel whose utilisation the summary reports (default: the busiest by rate order,
    /// i.e. the slowest router-to-router channel).
    pub bottleneck: Option<ChannelRef>,
}

impl Default for RecordSpec {
    fn default() -> Self {
        RecordSpec {
            bin: Duration::from_millis(100),
            warmup: Duration::ZERO,
            queues: Vec::new(),
            queue_interval: Duration::from_millis(100),
            cwnd: Vec::new(),
            estimator: Vec::new(),
            pcap: Vec::new(),
            pcap_snaplen: 128,
            bottleneck: None,
        }
    }
}
