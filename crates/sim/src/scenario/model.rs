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
    /// CP applications, one per `[[cp]]` section.
    pub cp: Vec<CpSpec>,
    /// The Congestion Manager of every host that runs CM flows (`[cm]`).
    pub cm: CmSpec,
}

/// The `[cm]` section: the settings of the Congestion Manager on every host that sends CM
/// flows, and of the probe responder on every host that receives them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CmSpec {
    /// The half-life of exponential aging (CM paper section 2.2.3).
    pub aging: concord_cc::cm::AgingPolicy,
    /// Probes per smoothed RTT for flows with probe feedback (paper section 2.2.1).
    pub probes_per_rtt: f64,
    /// The fraction of probes and of responses the network loses, drawn at random from the
    /// scenario seed on top of any queue or wire loss (to test the probe protocol's
    /// robustness, paper section 2.2.2).
    pub probe_loss: f64,
    /// Split a macroflow whose flows see different loss rates or throughputs (paper section
    /// 2.3).
    pub segregation: bool,
}

impl Default for CmSpec {
    fn default() -> Self {
        CmSpec {
            aging: concord_cc::cm::AgingPolicy::MinRtt,
            probes_per_rtt: 2.0,
            probe_loss: 0.0,
            segregation: false,
        }
    }
}

/// How a flow takes part in its source host's Congestion Manager: its scheduler weight and the
/// receiver's hint (CM paper sections 2.4 and 3.2.1), and for a Web server's object over
/// TCP/CM the representations to choose from.
#[derive(Clone, Debug, PartialEq)]
pub struct CmFlowSpec {
    /// The configured weight, dimensionless (default 1).
    pub weight: f64,
    /// The receiver's hint, a factor on the weight (default 1).
    pub hint: f64,
    /// The sizes of an object's representations, ascending (empty: not a choice). At its
    /// start the flow sends the largest one its `cm_query` share delivers within `latency`,
    /// the smallest if none does or the CM has no estimate yet (paper section 3.2.1).
    pub representations: Vec<Bytes>,
    /// The delivery time a representation must fit in.
    pub latency: Duration,
}

impl Default for CmFlowSpec {
    fn default() -> Self {
        CmFlowSpec {
            weight: 1.0,
            hint: 1.0,
            representations: Vec::new(),
            latency: Duration::from_secs(1),
        }
    }
}

/// A C-to-C application of CP: the aggregation points of its two clusters and how they
/// control its aggregate. Its flows are the `cudp` flows with its `app` id.
#[derive(Clone, Debug, PartialEq)]
pub struct CpSpec {
    /// The application id.
    pub app: u32,
    /// The aggregation point of the sending cluster (the local AP, which runs the control).
    pub local: NodeIdx,
    /// The aggregation point of the receiving cluster (the remote AP, which reports).
    pub remote: NodeIdx,
    /// TFRC or RAP on the aggregate.
    pub control: concord_cc::cp::AggregateControl,
    /// Single, naive or BFLD flowshares; m = 0 means one per flow of the application.
    pub flowshares: concord_cc::cp::Flowshares,
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
    /// Its GCCA part, if it runs GCCA (`None`: a plain node, sent no GCCP messages).
    pub gcca: Option<GccaNodeSpec>,
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
    /// GCCA's router part on this output queue (`queue = { kind = "gcca", ... }`); `queue` then
    /// holds the RED parameters of its detector.
    pub gcca: Option<GccaQueueSpec>,
    /// ECA's load estimator on this output queue (`eca = { ... }`), if any.
    pub eca: Option<EcaQueueSpec>,
    /// Link-layer framing bytes added to every packet's size for its transmission time on
    /// this channel (ns-3's point-to-point links add PPP's 2); 0: none.
    pub framing_bytes: u32,
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
    /// The flow's part in ECA (`eca = { ... }`); `None`: not managed.
    pub eca: Option<EcaFlowSpec>,
    /// The flow's part in its host's Congestion Manager (`cm = { ... }`): a TCP flow with it is
    /// TCP/CM; `audio` and `cmudp` flows always have it. `None`: not a CM flow.
    pub cm: Option<CmFlowSpec>,
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
    /// A C-UDP endpoint of a CP application: UDP datagrams with a CP header, sent at the
    /// flow's equal share of the bandwidth its aggregation point makes available.
    CUdp {
        /// The application (a `[[cp]]` section's `app`).
        app: u32,
        /// Datagram size on the wire before the CP header, in bytes (IP and UDP included).
        packet_size: Bytes,
    },
    /// A TFRC (RFC 5348) bulk source over UDP: data paced at the sender's rate X, feedback from
    /// the receiver once per RTT.
    Tfrc {
        /// Data packet size on the wire, in bytes (IP, UDP and TFRC headers included); TFRC's
        /// segment size s.
        packet_size: Bytes,
    },
    /// The CM paper's layered audio server (section 3.2.2): UDP packets at the highest
    /// encoding that does not exceed its `cm_query` rate, switched on `change_rate`, feedback
    /// from the CM's probes only.
    Audio {
        /// The encodings' rates, ascending (default 10, 20, 40, 80, 160, 320 kbit/s).
        encodings: Vec<Rate>,
        /// Packet size on the wire, in bytes (the paper's 1 KB).
        packet_size: Bytes,
    },
    /// A bulk UDP sender scheduled by the CM (request, `app_notify`, notify): one packet per
    /// grant, feedback from the CM's probes or from an ACK per packet.
    CmUdp {
        /// Packet size on the wire, in bytes.
        packet_size: Bytes,
        /// Bytes to send; `None`: an infinite source.
        bytes: Option<Bytes>,
        /// Where the sender's CM gets its feedback from.
        feedback: CmUdpFeedback,
    },
}

/// The feedback of a `cmudp` flow (CM paper section 2.2: explicit feedback from the probe
/// protocol, or implicit feedback from the application's own acknowledgments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CmUdpFeedback {
    /// The CM probes the receiving host, `[cm] probes_per_rtt` times per RTT (section 2.2.2).
    #[default]
    Probes,
    /// The receiver acknowledges every packet and the sender passes each ACK to its CM as
    /// `cm_update` (section 2.2.1's per-ACK feedback; RFC 3124 section 4.2).
    Ack,
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
    /// TCP flows whose per-segment delay to the receiving application (first transmission to
    /// in-order delivery) is measured beside the network delay.
    pub application_delay: Vec<FlowIdx>,
    /// Channels to write a pcap trace of (packets as they enter the channel).
    pub pcap: Vec<ChannelRef>,
    /// Bytes of each packet kept in a pcap trace (headers only by default: 128).
    pub pcap_snaplen: u32,
    /// The traces' file format (default: classic pcap).
    pub pcap_format: crate::trace::TraceFormat,
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
            application_delay: Vec::new(),
            pcap: Vec::new(),
            pcap_snaplen: 128,
            pcap_format: crate::trace::TraceFormat::Pcap,
            bottleneck: None,
        }
    }
}

/// A rate given outright or as a share of a reference rate (the link's rate for a router queue,
/// the flow's rate for a host's UDP bucket).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RateShare {
    /// This many bits/s.
    Absolute(Rate),
    /// This share of the reference rate, in (0, 1].
    Share(f64),
}

impl RateShare {
    /// The rate, given the reference rate; at least 1 bit/s.
    pub fn of(self, reference: Rate) -> Rate {
        match self {
            RateShare::Absolute(r) => r,
            RateShare::Share(s) => Rate::from_bps(((reference.bps() as f64 * s) as u64).max(1)),
        }
    }
}

/// How a leaky bucket's rate comes back after NORMAL (GCCA section 3.3 leaves it open).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RestoreSpec {
    /// At once.
    Immediate,
    /// Up by `step` every `interval`.
    Ramp {
        /// The increase per interval.
        step: RateShare,
        /// The time between increases.
        interval: Duration,
    },
}

/// The settings of a GCCA leaky bucket, relative to the rate it starts at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BucketSpec {
    /// The linear decrease per CONGESTION (default 10% of the configured rate).
    pub decrease_step: RateShare,
    /// The floor (default 1% of the configured rate).
    pub min_rate: RateShare,
    /// How NORMAL restores the rate (default at once).
    pub restore: RestoreSpec,
    /// The bucket's depth, in bytes (default one 1500-byte packet).
    pub burst: Bytes,
}

impl Default for BucketSpec {
    fn default() -> Self {
        BucketSpec {
            decrease_step: RateShare::Share(0.1),
            min_rate: RateShare::Share(0.01),
            restore: RestoreSpec::Immediate,
            burst: 1500,
        }
    }
}

impl BucketSpec {
    /// The cc-level configuration for a bucket whose configured rate is `max_rate`.
    pub fn config(&self, max_rate: Rate) -> concord_cc::gcca::LeakyBucketConfig {
        concord_cc::gcca::LeakyBucketConfig {
            max_rate,
            min_rate: self.min_rate.of(max_rate),
            decrease_step: self.decrease_step.of(max_rate),
            restore: match self.restore {
                RestoreSpec::Immediate => concord_cc::gcca::Restore::Immediate,
                RestoreSpec::Ramp { step, interval } => concord_cc::gcca::Restore::Ramp {
                    step: step.of(max_rate),
                    interval,
                },
            },
            burst: self.burst,
        }
    }
}

/// GCCA's router part on one output queue: the GCCP-capable RED detector (its RED parameters
/// are the channel's `queue`) and the leaky bucket pacing the queue's departures at up to the
/// link rate (GCCA sections 3.2 and 3.3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccaQueueSpec {
    /// Minimum spacing of CONGESTION messages to one upstream neighbour (default 10 ms).
    pub congestion_interval: Duration,
    /// The leaky bucket.
    pub bucket: BucketSpec,
}

impl Default for GccaQueueSpec {
    fn default() -> Self {
        GccaQueueSpec {
            congestion_interval: concord_cc::gcca::detector::DEFAULT_CONGESTION_INTERVAL,
            bucket: BucketSpec::default(),
        }
    }
}

/// A node's GCCA part (GCCA section 3, Fig. 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GccaNodeSpec {
    /// For a host: the leaky bucket of each of its UDP flows (configured rate: the flow's rate).
    /// Its TCP flows get a window adjuster. Unused for a router.
    pub udp_bucket: BucketSpec,
    /// For a host: how many datagrams a UDP flow's bucket holds back before the host drops
    /// them (default 64).
    pub udp_queue: u32,
}

impl Default for GccaNodeSpec {
    /// The default bucket and a 64-datagram host queue.
    fn default() -> Self {
        GccaNodeSpec {
            udp_bucket: BucketSpec::default(),
            udp_queue: 64,
        }
    }
}

/// ECA's router part on one output queue (Barham, section IV.A.2): the load estimator run on
/// the arrivals into the queue, stamping LOAD into every packet it forwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcaQueueSpec {
    /// The target utilisation, in (0, 1] (section IV.A.2: 0.9).
    pub target: f64,
    /// The measurement interval (section IV.A.2: 100 ms).
    pub interval: Duration,
    /// L's factor after an interval above the target (1.05).
    pub up: f64,
    /// L's factor after an interval at or below the target (0.99).
    pub down: f64,
    /// How the stamp combines a packet's LOAD with L (section III.A.2; default max).
    pub combine: concord_cc::eca::LoadCombine,
    /// How LOAD is carried (section IV.A.1: a float; section V.A.1: the 8-bit TOS code).
    pub encoding: concord_cc::eca::LoadEncoding,
}

impl Default for EcaQueueSpec {
    /// The paper's estimator: 90 %, 100 ms, x1.05 / x0.99, max, float.
    fn default() -> Self {
        EcaQueueSpec {
            target: 0.9,
            interval: Duration::from_millis(100),
            up: 1.05,
            down: 0.99,
            combine: concord_cc::eca::LoadCombine::Max,
            encoding: concord_cc::eca::LoadEncoding::Float,
        }
    }
}

/// How a flow takes part in ECA at its source host (Barham, sections III.A.3 and III.B.1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EcaFlowSpec {
    /// Shaped by a WTP token bucket at rate `weight * unit / RLOAD`, its packets waiting in the
    /// host.
    Managed {
        /// w_i, dimensionless.
        weight: f64,
        /// The rate a weight of 1 gets at a load of 1 (default 1 Mbit/s).
        unit: Rate,
        /// The token bucket depth (section III.B.2: 16 KB).
        bucket: Bytes,
        /// Packets the host queue holds before it drops.
        queue: u32,
    },
    /// Unmanaged high priority: bypasses WTP, admitted by its peak rate against a share of the
    /// host's link (section III.B.1).
    Priority {
        /// The declared peak rate.
        peak: Rate,
    },
}
