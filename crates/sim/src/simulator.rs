//! The simulator: a loop over `(time, sequence)`-ordered events that moves packets through
//! channels and hands them to the flows' transport agents.

use crate::channel::{Channel, ChannelStats, Offer};
use crate::eca::EcaState;
use crate::event::EventQueue;
use crate::flow::{Agent, Flow, TcpFlow, UdpFlow};
use crate::gcca::GccaState;
use crate::metrics::Series;
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::routing::{Routes, NO_ROUTE};
use crate::scenario::DropWhen;
use crate::scenario::{FlowKind, NodeKind, Scenario};
use crate::trace::capture::{Capture, CaptureError};
use crate::wire::{Slot, WireSlots};
use concord_cc::rng::Rng;
use concord_cc::tcp::sender::Segment;
use concord_cc::tcp::{
    ActiveOpen, PassiveOpen, TcpReceiver, TcpSender, WindowController, WindowCtl,
};
use concord_cc::time::{Duration, Instant};
use concord_cc::wire::Ecn;

/// Stream ids of the random streams derived from the scenario seed.
mod streams {
    /// Channel `c` uses stream `CHANNEL + c`.
    pub const CHANNEL: u64 = 0x1000_0000;
    /// Flow `f` uses stream `FLOW + f`.
    pub const FLOW: u64 = 0x2000_0000;
}

/// Size of a UDP + IP header, in bytes.
const UDP_IP_HEADER: u32 = 28;

/// Why a simulator could not be built from a scenario.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A trace file could not be opened.
    #[error(transparent)]
    Capture(#[from] CaptureError),
    /// A TCP flow's settings cannot run.
    #[error("flow `{flow}`: {source}")]
    Tcp {
        /// The flow.
        flow: String,
        /// What is wrong.
        source: concord_cc::tcp::TcpConfigError,
    },
    /// A TFRC flow's settings cannot run.
    #[error("flow `{flow}`: {source}")]
    Tfrc {
        /// The flow.
        flow: String,
        /// What is wrong.
        source: concord_cc::tfrc::TfrcConfigError,
    },
}

/// What happens next.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// Channel finished serialising its packet in service.
    TxDone(u32),
    /// The packet at the head of a propagation lane (one per propagation delay, see
    /// [`crate::event`]) reaches the far end of its channel.
    Arrive(u32),
    /// A flow's application starts.
    FlowStart(FlowId),
    /// A flow's application stops offering data.
    FlowStop(FlowId),
    /// A flow's agent has a timer due.
    Agent(agents::AgentTimer),
    /// A host stage or a port has a timer due.
    Stage(stages::StageTimer),
    /// Sample the recorded queues.
    Sample,
    /// The warm-up ends: snapshot counters.
    Warmup,
}

/// A node at run time.
#[derive(Debug)]
pub struct Node {
    /// Name from the scenario.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
}

/// One sample of a queue's occupancy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QueueSample {
    /// When.
    pub at: Instant,
    /// Which channel.
    pub channel: u32,
    /// Packets waiting.
    pub packets: u32,
    /// Bytes waiting.
    pub bytes: u64,
    /// The discipline's average (RED avg), if it keeps one.
    pub average: Option<f64>,
}

/// One change of a traced flow's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CwndSample {
    /// When.
    pub at: Instant,
    /// Which flow.
    pub flow: FlowId,
    /// Congestion window, in bytes.
    pub cwnd: u64,
    /// Slow-start threshold, in bytes (`u64::MAX`: unbounded).
    pub ssthresh: u64,
}

/// A traced flow's window and bandwidth estimator after one ACK. For MCCP every field is
/// filled (the ABE of eqs. (1)-(6) and NCD of the MCCP paper); for Westwood+ `abe_sample` is the
/// last once-per-RTT bandwidth sample and `abe_filtered` the filtered BWE, the rest zero; for
/// NewReno only the window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EstimatorSample {
    /// When the ACK arrived.
    pub at: Instant,
    /// Which flow.
    pub flow: FlowId,
    /// Congestion window after the ACK, in bytes.
    pub cwnd: u64,
    /// Slow-start threshold after the ACK, in bytes (`u64::MAX`: unbounded).
    pub ssthresh: u64,
    /// The latest bandwidth sample (MCCP: s_k of eq. (4)), in bytes per second.
    pub abe_sample: f64,
    /// The filtered estimate (MCCP: the ABE of eq. (1)), in bytes per second.
    pub abe_filtered: f64,
    /// MCCP: the sampling interval T_k of eqs. (2)-(3).
    pub t_k: Duration,
    /// MCCP: the filter time constant tau_k of eq. (6).
    pub tau_k: Duration,
    /// MCCP: the instability U_k of eq. (5), in bytes per second.
    pub u_k: f64,
    /// MCCP: NCD's no_congestion_counter.
    pub counter: u64,
    /// MCCP: in fast probing.
    pub fast_probing: bool,
}

/// The simulator.
#[derive(Debug)]
pub struct Simulator {
    now: Instant,
    end: Instant,
    warmup: Instant,
    seed: u64,
    name: String,
    /// Events, with one lane per propagation delay for the packets propagating on the
    /// channels of that delay, each with its slot in `wire` and its hop.
    events: EventQueue<Event, Crossing>,
    /// Nodes.
    nodes: Vec<Node>,
    /// Each node's outgoing channel toward each destination.
    routes: Routes,
    /// Channels (two per link: forward then reverse).
    channels: Vec<Channel>,
    /// The packets the channels are transmitting or propagating, each in its slot.
    wire: WireSlots,
    /// Flows.
    flows: Vec<Flow>,
    channel_at_warmup: Vec<ChannelStats>,
    sampled: Vec<u32>,
    sample_interval: Duration,
    /// Queue occupancy samples.
    queue_samples: Vec<QueueSample>,
    /// cwnd/ssthresh changes of traced flows.
    cwnd_samples: Vec<CwndSample>,
    /// Per-ACK estimator state of the flows in `record.estimator`.
    estimator_samples: Vec<EstimatorSample>,
    /// Packets that found no route (scenario loading prevents it for flows' own packets).
    unroutable: u64,
    bottleneck: u32,
    capture: Capture,
    /// Reused buffer for the wire slots of the segments one ACK releases.
    scratch: Vec<Slot>,
    /// GCCA's nodes, host queues and counters (see [`crate::gcca`]).
    gcca: GccaState,
    /// CP's aggregation points, applications and headers (see [`crate::cp`]).
    cp: crate::cp::CpState,
    /// ECA's estimators, reflector, shapers and counters (see [`crate::eca`]).
    eca: EcaState,
    /// The hosts' Congestion Managers and probe responders (see [`crate::cm`]).
    cm: crate::cm::CmState,
    /// The CM macroflows at every queue sample (`macroflows.csv`).
    macroflows: crate::trace::macroflow::MacroflowTrace,
    /// Each node's chain of stages, from the application side to the wire.
    chains: chains::Chains,
    /// A channel's discipline reads a packet's upstream neighbour (a GCCA router port): every
    /// arrival takes the full path (see `crossing.rs`).
    ports_read_upstream: bool,
    /// The flows' state outgrows the caches: an arrival prefetches the transport state of
    /// the next packet its lane delivers (see `crossing.rs`).
    agents_read_ahead: bool,
    /// The flows' state outgrows the last-level cache too: the read-ahead reaches a stage
    /// further (the timers due next, the lane's packet after the next, what a delivery
    /// writes; see `crossing.rs` and `timers_ahead.rs`).
    pipelined_read_ahead: bool,
}

impl Simulator {
    /// Builds the simulator for a validated scenario.
    pub fn new(sc: &Scenario) -> Result<Simulator, SetupError> {
        Simulator::with_capture_dir(sc, None)
    }

    /// Builds the simulator, writing pcap traces (if the scenario asks for them) into `dir`.
    pub fn with_capture_dir(
        sc: &Scenario,
        dir: Option<&std::path::Path>,
    ) -> Result<Simulator, SetupError> {
        let seed = sc.seed;
        let mut channels = Vec::with_capacity(sc.links.len() * 2);
        for link in &sc.links {
            for (from, to, spec) in [
                (link.a, link.b, &link.forward),
                (link.b, link.a, &link.reverse),
            ] {
                let idx = channels.len() as u64;
                let name = format!("{}->{}", sc.nodes[from].name, sc.nodes[to].name);
                channels.push(Channel::new(
                    name,
                    from as NodeId,
                    to as NodeId,
                    spec,
                    Rng::stream(seed, streams::CHANNEL + idx),
                ));
            }
        }
        let ends: Vec<(u32, u32)> = channels.iter().map(|c| (c.from, c.to)).collect();
        let forwards: Vec<bool> = sc
            .nodes
            .iter()
            .map(|n| n.kind == NodeKind::Router)
            .collect();
        let routes = Routes::new(sc.nodes.len(), &ends, &forwards);
        let nodes = sc
            .nodes
            .iter()
            .map(|n| Node {
                name: n.name.clone(),
                kind: n.kind,
            })
            .collect();

        let end = Instant::ZERO + sc.duration;
        let bin = sc.record.bin;
        let mut flows = Vec::with_capacity(sc.flows.len());
        let mut shared_config = crate::flow::SharedTcpConfig::default();
        for (i, f) in sc.flows.iter().enumerate() {
            let agent = match &f.kind {
                FlowKind::Tcp { tcp, bytes } => {
                    let config = shared_config.share(tcp);
                    let mut sender =
                        TcpSender::with_shared_config(config).map_err(|e| SetupError::Tcp {
                            flow: f.name.clone(),
                            source: e,
                        })?;
                    if let Some(b) = bytes {
                        sender.set_app_limit(*b);
                    }
                    Agent::Tcp(Box::new(TcpFlow {
                        sender,
                        receiver: TcpReceiver::new(tcp),
                        sender_timer: None,
                        receiver_timer: None,
                        header_bytes: tcp.header_bytes as u32,
                        ts_recent: 0,
                        finite: bytes.is_some(),
                        completed: None,
                        stats_at_warmup: Default::default(),
                        rtt_sum: 0.0,
                        rtt_count: 0,
                        rto_sum: 0.0,
                        traced: (0, 0),
                        drop_when: f.drop_when,
                        new_segments: 0,
                        injected_losses: 0,
                        injected_at: None,
                        first_sent: Default::default(),
                        first_sent_through: 0,
                        handshake: tcp.handshake.map(|h| {
                            Box::new(crate::flow::TcpOpen {
                                active: ActiveOpen::new(h, tcp.max_rto),
                                passive: PassiveOpen::new(h, tcp.max_rto),
                            })
                        }),
                    }))
                }
                FlowKind::Cbr { rate, packet_size } => Agent::Udp(Box::new(UdpFlow {
                    rate: *rate,
                    packet_size: *packet_size as u32,
                    on_off: None,
                    on: true,
                    phase_end: Instant::MAX,
                    next_seq: 0,
                    rng: Rng::stream(seed, streams::FLOW + i as u64),
                    received: 0,
                })),
                FlowKind::OnOff {
                    rate,
                    packet_size,
                    on,
                    off,
                    exponential,
                } => Agent::Udp(Box::new(UdpFlow {
                    rate: *rate,
                    packet_size: *packet_size as u32,
                    on_off: Some((*on, *off, *exponential)),
                    on: false,
                    phase_end: Instant::ZERO,
                    next_seq: 0,
                    rng: Rng::stream(seed, streams::FLOW + i as u64),
                    received: 0,
                })),
                FlowKind::CUdp { app, packet_size } => cp::cudp_agent(sc, i, *app, *packet_size),
                FlowKind::Tfrc { packet_size } => {
                    tfrc::tfrc_agent(&f.name, *packet_size, Instant::ZERO + f.start)?
                }
                FlowKind::Audio {
                    encodings,
                    packet_size,
                } => cm::cm_app_agent(
                    crate::cm::CmApp::Audio(crate::cm::AudioState::new(encodings.clone())),
                    *packet_size,
                    false,
                ),
                FlowKind::CmUdp {
                    packet_size,
                    bytes,
                    feedback,
                } => cm::cm_app_agent(
                    crate::cm::CmApp::Bulk { remaining: *bytes },
                    *packet_size,
                    *feedback == crate::scenario::CmUdpFeedback::Ack,
                ),
            };
            flows.push(Flow {
                name: f.name.clone(),
                src: f.from as NodeId,
                dst: f.to as NodeId,
                start: Instant::ZERO + f.start,
                stop: f.stop.map(|s| Instant::ZERO + s).unwrap_or(Instant::MAX),
                agent,
                goodput: Series::new(bin),
                delivered: 0,
                delivered_at_warmup: 0,
                network: Default::default(),
                application: Default::default(),
                record_application: sc.record.application_delay.contains(&i),
                trace_cwnd: sc.record.cwnd.contains(&i),
                trace_estimator: sc.record.estimator.contains(&i),
                queue_drops: 0,
                queue_drops_at_warmup: 0,
            });
        }

        let chan_idx =
            |r: &crate::scenario::ChannelRef| (2 * r.link + usize::from(r.reverse)) as u32;
        let sampled: Vec<u32> = if sc.record.queues.is_empty() {
            (0..channels.len() as u32)
                .filter(|&c| forwards[channels[c as usize].from as usize])
                .collect()
        } else {
            sc.record.queues.iter().map(chan_idx).collect()
        };
        let bottleneck = match &sc.record.bottleneck {
            Some(r) => chan_idx(r),
            None => default_bottleneck(&channels, &forwards),
        };
        let pcap: Vec<u32> = sc.record.pcap.iter().map(chan_idx).collect();
        let capture = Capture::open(dir, &pcap, &channels, sc)?;

        let lanes = propagation_lanes(&mut channels);
        let ports_read_upstream = channels.iter().any(Channel::is_port);
        let agents_read_ahead = flows.len() >= crossing::AGENTS_READ_AHEAD_FLOWS;
        let pipelined_read_ahead = flows.len() >= crossing::PIPELINED_READ_AHEAD_FLOWS;
        let mut sim = Simulator {
            now: Instant::ZERO,
            end,
            warmup: Instant::ZERO + sc.record.warmup,
            seed,
            name: sc.name.clone(),
            events: EventQueue::with_lanes(lanes),
            nodes,
            routes,
            channel_at_warmup: vec![ChannelStats::default(); channels.len()],
            channels,
            wire: WireSlots::new(),
            flows,
            sampled,
            sample_interval: sc.record.queue_interval.max(Duration::from_nanos(1)),
            queue_samples: Vec::new(),
            cwnd_samples: Vec::new(),
            estimator_samples: Vec::new(),
            unroutable: 0,
            bottleneck,
            capture,
            scratch: Vec::new(),
            gcca: GccaState::default(),
            cp: Default::default(),
            eca: EcaState::default(),
            cm: Default::default(),
            macroflows: Default::default(),
            chains: Default::default(),
            ports_read_upstream,
            agents_read_ahead,
            pipelined_read_ahead,
        };
        sim.setup_gcca(sc);
        sim.setup_cp(sc);
        sim.setup_eca(sc);
        sim.setup_cm(sc);
        sim.chains = stages::compose(&sim);
        for i in 0..sim.flows.len() {
            let (start, stop) = (sim.flows[i].start, sim.flows[i].stop);
            sim.events.push(start, Event::FlowStart(i as FlowId));
            if stop < end {
                sim.events.push(stop, Event::FlowStop(i as FlowId));
            }
        }
        if !sim.sampled.is_empty() {
            sim.events.push(Instant::ZERO, Event::Sample);
        }
        sim.events.push(sim.warmup, Event::Warmup);
        Ok(sim)
    }

    /// The current simulated time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// When the run ends.
    pub fn end(&self) -> Instant {
        self.end
    }

    /// When the measurement window starts.
    pub fn warmup(&self) -> Instant {
        self.warmup
    }

    /// The nodes.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The channels (two per link: forward then reverse).
    pub fn channels(&self) -> &[Channel] {
        &self.channels
    }

    /// The flows, with their agents and counters.
    pub fn flows(&self) -> &[Flow] {
        &self.flows
    }

    /// Queue occupancy samples.
    pub fn queue_samples(&self) -> &[QueueSample] {
        &self.queue_samples
    }

    /// cwnd/ssthresh changes of traced flows.
    pub fn cwnd_samples(&self) -> &[CwndSample] {
        &self.cwnd_samples
    }

    /// Per-ACK estimator state of the flows in `record.estimator`.
    pub fn estimator_samples(&self) -> &[EstimatorSample] {
        &self.estimator_samples
    }

    /// Packets that found no route.
    pub fn unroutable(&self) -> u64 {
        self.unroutable
    }

    /// GCCA's nodes, host queues and counters.
    pub fn gcca(&self) -> &GccaState {
        &self.gcca
    }

    /// CP's aggregation points, applications and headers.
    pub fn cp(&self) -> &crate::cp::CpState {
        &self.cp
    }

    /// ECA's estimators, reflector, shapers and counters.
    pub fn eca(&self) -> &EcaState {
        &self.eca
    }

    /// The hosts' Congestion Managers and probe responders.
    pub fn cm(&self) -> &crate::cm::CmState {
        &self.cm
    }

    /// The CM macroflows at every queue sample (`macroflows.csv`).
    pub fn macroflows(&self) -> &crate::trace::macroflow::MacroflowTrace {
        &self.macroflows
    }

    /// Settles flow `f`'s audio server's time on its encodings at the end of the run (nothing
    /// for another flow).
    pub fn settle_audio(&mut self, f: usize) {
        let end = self.end;
        if let Some(Agent::CmApp(app)) = self.flows.get_mut(f).map(|fl| &mut fl.agent) {
            if let crate::cm::CmApp::Audio(s) = &mut app.app {
                s.settle(end);
            }
        }
    }

    /// The seed of the run.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The scenario's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// The channel whose utilisation the summary reports.
    pub fn bottleneck(&self) -> u32 {
        self.bottleneck
    }

    /// Channel counters at the end of the warm-up.
    pub fn channel_stats_at_warmup(&self, c: usize) -> ChannelStats {
        self.channel_at_warmup[c]
    }

    /// Runs to the end of the scenario.
    pub fn run(&mut self) -> Result<(), CaptureError> {
        self.run_until(self.end)?;
        self.finish()
    }

    /// Processes every event up to and including `until` (capped at the end of the run).
    pub fn run_until(&mut self, until: Instant) -> Result<(), CaptureError> {
        let until = until.min(self.end);
        while let Some((now, event)) = self.events.pop_until(until) {
            self.now = now;
            self.dispatch(event)?;
        }
        self.now = self.now.max(until);
        Ok(())
    }

    /// Settles time integrals and flushes traces at the end of the run.
    pub fn finish(&mut self) -> Result<(), CaptureError> {
        let end = self.end;
        for c in &mut self.channels {
            c.settle(end);
        }
        self.capture.flush()
    }

    /// Handles one event. Inline in its one caller, the event loop.
    #[inline(always)]
    fn dispatch(&mut self, event: Event) -> Result<(), CaptureError> {
        match event {
            Event::TxDone(c) => self.on_tx_done(c)?,
            Event::Arrive(lane) => {
                let Some(crossing) = self.events.pop_lane(lane, Event::Arrive(lane)) else {
                    return Ok(());
                };
                self.read_ahead(lane);
                let s = crossing.slot();
                match crossing.hop() {
                    // Looked up when it left (see `crossing.rs`).
                    Hop::Onward(o) => return self.route_by(s, UPSTREAM_UNREAD, o),
                    Hop::Deliver(..) => {}
                    Hop::Crossed(c) => {
                        let node = self.channels[c as usize].far_end();
                        let pkt = self.wire.packet(s);
                        if pkt.is_link_control() {
                            let pkt = self.wire.take(s);
                            return self.on_link_control(c, pkt);
                        } else if node != pkt.dst {
                            let upstream = self.channels[c as usize].near_end();
                            return self.forward_slot(node, s, upstream);
                        }
                    }
                }
                // At its destination: one call site, so that the delivery stays inline.
                let pkt = self.wire.take(s);
                self.deliver(pkt)?;
            }
            Event::FlowStart(f) => self.on_flow_start(f)?,
            Event::FlowStop(f) => self.agent_stop(f)?,
            Event::Agent(t) => self.on_agent_timer(t)?,
            Event::Stage(t) => self.on_stage_timer(t)?,
            Event::Sample => self.on_sample(),
            Event::Warmup => self.on_warmup(),
        }
        Ok(())
    }

    fn on_tx_done(&mut self, c: u32) -> Result<(), CaptureError> {
        let now = self.now;
        let ch = &mut self.channels[c as usize];
        let (done, next) = ch.complete(now, &mut self.wire);
        let delay = ch.propagation();
        let lane = ch.arrival_lane();
        if let Some(d) = next {
            self.events.push(now + d, Event::TxDone(c));
            self.trace_in_service(c)?;
        }
        if let Some(s) = done {
            // The packet crosses the wire in its slot. A channel's delay is fixed and
            // departures are handled in time order, so the arrivals of every channel of that
            // delay are too: the lane accepts every one.
            let crossing = Crossing::new(s, self.onward(c, s));
            let queued = self
                .events
                .push_lane(lane, now + delay, crossing, Event::Arrive(lane));
            debug_assert!(queued, "channel {c}: arrival out of order");
        }
        self.on_queue_drops(c);
        self.after_port(c)
    }

    /// An agent at `node` sends `pkt`: it walks `node`'s chain of stages from the application
    /// side to the wire, then leaves toward its destination.
    fn send(&mut self, node: NodeId, pkt: Packet) -> Result<(), CaptureError> {
        self.send_from(node, 0, pkt)
    }

    /// An agent at `node` sends the packet it built in slot `s` of the wire: as
    /// [`send`](Self::send) does, straight from its slot if `node` runs no stage.
    fn send_slot(&mut self, node: NodeId, s: Slot) -> Result<(), CaptureError> {
        if self.has_stages(node) {
            let pkt = self.wire.take(s);
            return self.send(node, pkt);
        }
        self.route(node, s, node)
    }

    /// A stage of `node` that held `pkt` lets it go: it walks the stages after `stage`, then
    /// leaves toward its destination.
    fn send_after(
        &mut self,
        node: NodeId,
        stage: stages::Stage,
        pkt: Packet,
    ) -> Result<(), CaptureError> {
        let next = self.after_stage(node, stage);
        self.send_from(node, next, pkt)
    }

    /// `pkt` walks `node`'s chain from stage `first` on; a stage may hold or drop it.
    fn send_from(&mut self, node: NodeId, first: usize, pkt: Packet) -> Result<(), CaptureError> {
        let mut pkt = pkt;
        let mut i = first;
        while let Some(stage) = self.stage_at(node, i) {
            match self.stage_send(stage, node, pkt)? {
                Some(p) => pkt = p,
                None => return Ok(()),
            }
            i += 1;
        }
        self.forward(node, pkt)
    }

    /// Sends a packet from `node` toward its destination.
    fn forward(&mut self, node: NodeId, pkt: Packet) -> Result<(), CaptureError> {
        self.forward_from(node, pkt, node)
    }

    /// Sends a packet that `node` received from neighbour `upstream` toward its destination.
    fn forward_from(
        &mut self,
        node: NodeId,
        pkt: Packet,
        upstream: NodeId,
    ) -> Result<(), CaptureError> {
        let Some(pkt) = self.stages_through(node, pkt) else {
            return Ok(());
        };
        let s = self.wire.put(pkt);
        self.route(node, s, upstream)
    }

    /// Sends the packet in slot `s`, which `node` received from neighbour `upstream`, toward
    /// its destination: through `node`'s stages if it runs any (out of its slot), else on in
    /// its slot.
    fn forward_slot(
        &mut self,
        node: NodeId,
        s: Slot,
        upstream: NodeId,
    ) -> Result<(), CaptureError> {
        if self.has_stages(node) {
            let pkt = self.wire.take(s);
            return self.forward_from(node, pkt, upstream);
        }
        self.route(node, s, upstream)
    }

    /// Offers the packet in slot `s` at `node` (past its stages) to the channel toward its
    /// destination.
    fn route(&mut self, node: NodeId, s: Slot, upstream: NodeId) -> Result<(), CaptureError> {
        let c = self.routes.next_hop(node, self.wire.packet(s).dst);
        self.route_by(s, upstream, c)
    }

    /// Offers the packet in slot `s` to channel `c`, its node's next hop toward its
    /// destination ([`NO_ROUTE`]: none).
    fn route_by(&mut self, s: Slot, upstream: NodeId, c: u32) -> Result<(), CaptureError> {
        if c == NO_ROUTE {
            self.wire.take(s);
            self.unroutable += 1;
            return Ok(());
        }
        let now = self.now;
        let offer = self.channels[c as usize].offer_slot(now, s, upstream, &mut self.wire);
        if let Offer::Transmitting(d) = offer {
            self.events.push(now + d, Event::TxDone(c));
            self.trace_in_service(c)?;
        } else if matches!(offer, Offer::Dropped) {
            let pkt = self.wire.take(s);
            self.on_queue_drop(&pkt);
        }
        self.on_queue_drops(c);
        self.after_port(c)
    }

    /// A queue dropped `pkt`: the flow counts it, and the stages that track packets in
    /// flight forget it.
    fn on_queue_drop(&mut self, pkt: &Packet) {
        self.stages_dropped(pkt);
        if pkt.is_data() {
            if let Some(fl) = self.flows.get_mut(pkt.flow as usize) {
                fl.queue_drops += 1;
            }
        }
    }

    /// The packets channel `c`'s discipline dropped besides a refused arrival (at dequeue,
    /// or pushed out to make room) count as the refused arrivals do.
    #[inline]
    pub(crate) fn on_queue_drops(&mut self, c: u32) {
        if self.channels[c as usize].has_dropped() {
            self.take_queue_drops(c);
        }
    }

    #[cold]
    fn take_queue_drops(&mut self, c: u32) {
        for pkt in self.channels[c as usize].take_dropped() {
            self.on_queue_drop(&pkt);
        }
    }

    /// A packet reached its destination host: the host's stages, then its flow's agent.
    fn deliver(&mut self, pkt: Packet) -> Result<(), CaptureError> {
        match self.stages_receive(pkt)? {
            Some(pkt) => self.agent_on_packet(pkt),
            None => Ok(()),
        }
    }

    /// A packet of a TCP, UDP or CM application flow reached its agent.
    fn deliver_tcp_udp(&mut self, pkt: Packet) -> Result<(), CaptureError> {
        let now = self.now;
        let after_warmup = now >= self.warmup;
        let f = pkt.flow as usize;
        if let Transport::TcpHandshake { segment, .. } = pkt.transport {
            return self.deliver_handshake(f, segment);
        }
        let Some(flow) = self.flows.get_mut(f) else {
            return Ok(());
        };
        match (pkt.transport, &mut flow.agent) {
            (
                Transport::TcpData {
                    seq,
                    len,
                    cwr,
                    ts_val,
                },
                Agent::Tcp(t),
            ) => {
                if let Some(h) = t.handshake.as_deref_mut() {
                    // A data segment carries the ACK of the SYN-ACK.
                    h.passive.on_ack();
                }
                let newly = t
                    .receiver
                    .on_segment(now, seq, len, pkt.ecn == Ecn::Ce, cwr);
                if newly > 0 {
                    t.ts_recent = ts_val;
                    flow.delivered += newly;
                    flow.goodput.add(now, newly);
                    let delivered = t.receiver.delivered();
                    while let Some(&(end, sent)) = t.first_sent.front() {
                        if end > delivered {
                            break;
                        }
                        t.first_sent.pop_front();
                        if after_warmup {
                            flow.application.record(now.saturating_since(sent));
                        }
                    }
                }
                if after_warmup {
                    flow.network.record(now.saturating_since(pkt.created));
                }
                self.pump_receiver(f)?;
            }
            (Transport::TcpAck { ack, ece, sack, .. }, Agent::Tcp(t)) => {
                let out = t.sender.on_ack_sack(now, ack, ece, &sack);
                if let (Some(_), true) = (out.rtt, after_warmup) {
                    t.rtt_sum += t.sender.rtt().latest().as_secs_f64();
                    t.rtt_count += 1;
                    t.rto_sum += t.sender.rtt().rto().as_secs_f64();
                }
                let finished = t.finite && t.completed.is_none() && t.sender.is_finished();
                if finished {
                    t.completed = Some(now);
                }
                if flow.trace_estimator {
                    self.estimator_samples.push(estimator_sample(
                        now,
                        f as FlowId,
                        t.sender.controller(),
                    ));
                }
                self.cm_on_ack(f as FlowId, &out);
                if finished {
                    self.cm_finished(f as FlowId)?;
                }
                self.pump_sender(f)?;
            }
            (Transport::Udp { seq, len }, agent @ (Agent::Udp(_) | Agent::CmApp(_))) => {
                let received = match agent {
                    Agent::Udp(u) => {
                        u.received += 1;
                        None
                    }
                    Agent::CmApp(a) => {
                        a.received += 1;
                        Some(a.received)
                    }
                    _ => None,
                };
                flow.delivered += len as u64;
                flow.goodput.add(now, len as u64);
                if after_warmup {
                    flow.network.record(now.saturating_since(pkt.created));
                }
                if let Some(received) = received {
                    self.cm_ack_packet(f as FlowId, seq, received, pkt.created)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Flow `f` starts: its host's stages open it (a managed flow then asks for its first
    /// grant), then its agent starts.
    fn on_flow_start(&mut self, f: FlowId) -> Result<(), CaptureError> {
        self.stages_open(f)?;
        self.agent_start(f)
    }

    /// Sends what the TCP sender of flow `f` may send, traces its window and re-arms its timer.
    fn pump_sender(&mut self, f: usize) -> Result<(), CaptureError> {
        if !self.pump_active_open(f)? {
            return Ok(());
        }
        let now = self.now;
        let mut batch = std::mem::take(&mut self.scratch);
        let flow = &mut self.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Tcp(t) = &mut flow.agent else {
            self.scratch = batch;
            return Ok(());
        };
        while let Some(seg) = t.sender.poll_transmit(now) {
            if !seg.retransmission {
                t.new_segments += 1;
            }
            // Any segment that reaches beyond what was sent before carries new bytes.
            let end = seg.seq + seg.len as u64;
            if flow.record_application && end > t.first_sent_through {
                t.first_sent.push_back((end, now));
                t.first_sent_through = end;
            }
            if let Some(when) = t.drop_when {
                if injection_fires(when, now, t, &seg) {
                    // Lost in the network: it never reaches the first channel.
                    t.drop_when = None;
                    t.injected_losses += 1;
                    t.injected_at = Some(now);
                    continue;
                }
            }
            // Built in the wire slot it leaves in: no copy between the sender and the wire.
            batch.push(self.wire.put(Packet {
                ecn: if seg.ect { Ecn::Ect0 } else { Ecn::NotEct },
                ..Packet::new(
                    src,
                    dst,
                    f as FlowId,
                    seg.len + t.header_bytes,
                    now,
                    Transport::TcpData {
                        seq: seg.seq,
                        len: seg.len,
                        cwr: seg.cwr,
                        ts_val: (now.as_nanos() / 1_000_000) as u32,
                    },
                )
            }));
        }
        if flow.trace_cwnd {
            let w = (
                t.sender.controller().cwnd(),
                t.sender.controller().ssthresh(),
            );
            if w != t.traced {
                t.traced = w;
                self.cwnd_samples.push(CwndSample {
                    at: now,
                    flow: f as FlowId,
                    cwnd: w.0,
                    ssthresh: w.1,
                });
            }
        }
        let want = t.sender.poll_timeout();
        if let Some(at) = want {
            if crate::timer::arm_earlier(&mut t.sender_timer, at) {
                self.events
                    .push_far(at, Event::Agent(AgentTimer::TcpSender(f as FlowId)));
            }
        }
        let mut result = Ok(());
        for s in batch.drain(..) {
            if result.is_ok() {
                result = self.send_slot(src, s);
            } else {
                self.wire.take(s);
            }
        }
        self.scratch = batch;
        result?;
        self.stages_after_turn(src, f as FlowId)
    }

    /// Sends the ACK the receiver of flow `f` wants sent and re-arms its timer.
    fn pump_receiver(&mut self, f: usize) -> Result<(), CaptureError> {
        self.pump_passive_open(f)?;
        let now = self.now;
        let flow = &mut self.flows[f];
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Tcp(t) = &mut flow.agent else {
            return Ok(());
        };
        // Built in the wire slot it leaves in.
        let ack = t.receiver.poll_ack().map(|a| {
            self.wire.put(Packet::new(
                dst,
                src,
                f as FlowId,
                // The SACK option's bytes (RFC 2018 section 3) ride on the header's.
                t.header_bytes + a.sack.wire_bytes(),
                now,
                Transport::TcpAck {
                    ack: a.ack,
                    ece: a.ece,
                    ts_ecr: t.ts_recent,
                    sack: a.sack,
                },
            ))
        });
        if let Some(at) = t.receiver.poll_timeout() {
            if crate::timer::arm_earlier(&mut t.receiver_timer, at) {
                self.events
                    .push_far(at, Event::Agent(AgentTimer::TcpReceiver(f as FlowId)));
            }
        }
        if let Some(s) = ack {
            self.send_slot(dst, s)?;
        }
        Ok(())
    }

    fn on_sender_timer(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Agent::Tcp(t) = &mut self.flows[f as usize].agent else {
            return Ok(());
        };
        if t.sender_timer != Some(now) {
            return Ok(()); // superseded by an earlier deadline
        }
        t.sender_timer = None;
        if let Some(h) = t
            .handshake
            .as_deref_mut()
            .filter(|h| !h.active.is_established())
        {
            h.active.on_timeout(now);
        } else if t
            .sender
            .on_timeout_seen_by_receiver(now, Some(t.receiver.delivered()))
        {
            self.cm_on_timeout(f);
        }
        self.pump_sender(f as usize)
    }

    fn on_receiver_timer(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Agent::Tcp(t) = &mut self.flows[f as usize].agent else {
            return Ok(());
        };
        if t.receiver_timer != Some(now) {
            return Ok(());
        }
        t.receiver_timer = None;
        if let Some(h) = t.handshake.as_deref_mut() {
            h.passive.on_timeout(now);
        }
        t.receiver.on_timeout(now);
        self.pump_receiver(f as usize)
    }

    fn on_source_tick(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let flow = &mut self.flows[f as usize];
        if now >= flow.stop {
            return Ok(());
        }
        let (src, dst) = (flow.src, flow.dst);
        let Agent::Udp(u) = &mut flow.agent else {
            return Ok(());
        };
        if let Some((on, off, exponential)) = u.on_off {
            if now >= u.phase_end {
                // Phase change: draw the next period (exponential with the given mean, or fixed).
                u.on = !u.on;
                let mean = if u.on { on } else { off };
                let len = if exponential {
                    Duration::from_secs_f64(u.rng.exponential(mean.as_secs_f64()))
                } else {
                    mean
                };
                u.phase_end = now + len.max(Duration::from_nanos(1));
            }
        }
        let next = if u.on {
            let seq = u.next_seq;
            u.next_seq += 1;
            let size = u.packet_size.max(UDP_IP_HEADER);
            let pkt = Packet::new(
                src,
                dst,
                f,
                size,
                now,
                Transport::Udp {
                    seq,
                    len: size - UDP_IP_HEADER,
                },
            );
            let gap = u.rate.transmit_time(size as u64);
            let next = (now + gap).min(u.phase_end);
            self.send(src, pkt)?;
            next
        } else {
            u.phase_end
        };
        if next < self.end && next < Instant::MAX {
            self.events.push(next, Event::Agent(AgentTimer::Source(f)));
        }
        Ok(())
    }

    fn on_sample(&mut self) {
        let now = self.now;
        for &c in &self.sampled {
            let ch = &self.channels[c as usize];
            let len = ch.queue_len();
            self.queue_samples.push(QueueSample {
                at: now,
                channel: c,
                packets: len.packets,
                bytes: len.bytes,
                average: ch.aqm_average(),
            });
        }
        self.macroflows.sample(now, &self.cm);
        let next = now + self.sample_interval;
        if next <= self.end {
            self.events.push(next, Event::Sample);
        }
    }

    fn on_warmup(&mut self) {
        let now = self.now;
        for (c, ch) in self.channels.iter_mut().enumerate() {
            ch.settle(now);
            self.channel_at_warmup[c] = ch.stats();
        }
        for f in &mut self.flows {
            f.delivered_at_warmup = f.delivered;
            f.queue_drops_at_warmup = f.queue_drops;
            match &mut f.agent {
                Agent::Tcp(t) => t.stats_at_warmup = t.sender.stats(),
                Agent::CmApp(a) => a.sent_at_warmup = a.sent,
                _ => {}
            }
        }
    }
}

/// True if the one-shot loss `when` takes segment `seg`, sent at `now` by flow `t`.
fn injection_fires(when: DropWhen, now: Instant, t: &TcpFlow, seg: &Segment) -> bool {
    match when {
        DropWhen::Rate(rate) => {
            let rtt_min = t.sender.rtt().min_rtt();
            if rtt_min == Duration::MAX || rtt_min.is_zero() {
                return false;
            }
            // cwnd / RTT_min in bit/s, against the rate.
            let cwnd_bits = t.sender.controller().cwnd() as f64 * 8.0;
            cwnd_bits / rtt_min.as_secs_f64() >= rate.bps_f64()
        }
        DropWhen::Segment(n) => !seg.retransmission && t.new_segments == n,
        DropWhen::At(at) => now >= Instant::ZERO + at,
    }
}

/// The estimator state of `ctl` after an ACK at `now`.
fn estimator_sample(now: Instant, flow: FlowId, ctl: &WindowCtl) -> EstimatorSample {
    let mut s = EstimatorSample {
        at: now,
        flow,
        cwnd: ctl.cwnd(),
        ssthresh: ctl.ssthresh(),
        abe_sample: 0.0,
        abe_filtered: 0.0,
        t_k: Duration::ZERO,
        tau_k: Duration::ZERO,
        u_k: 0.0,
        counter: 0,
        fast_probing: false,
    };
    match ctl {
        WindowCtl::NewReno(_) | WindowCtl::Cubic(_) => {}
        WindowCtl::WestwoodPlus(w) => {
            s.abe_sample = w.last_sample().unwrap_or(0.0);
            s.abe_filtered = w.bwe().unwrap_or(0.0);
        }
        WindowCtl::Mccp(m) => {
            let tr = m.trace();
            s.abe_sample = tr.abe_sample;
            s.abe_filtered = tr.abe_filtered;
            s.t_k = tr.t_k;
            s.tau_k = tr.tau_k;
            s.u_k = tr.u_k;
            s.counter = tr.no_congestion_counter;
            s.fast_probing = tr.fast_probing;
        }
    }
    s
}

mod agents;
mod chains;
mod cm;
mod cp;
mod crossing;
mod eca;
mod gcca;
mod handshake;
mod lanes;
mod stages;
mod tfrc;
mod timers_ahead;

use agents::AgentTimer;
use crossing::{Crossing, Hop, UPSTREAM_UNREAD};
use lanes::propagation_lanes;

/// The slowest channel between two routers (lowest index on ties), else the slowest channel.
fn default_bottleneck(channels: &[Channel], forwards: &[bool]) -> u32 {
    let between_routers = |c: &Channel| forwards[c.from as usize] && forwards[c.to as usize];
    let pick = |only_routers: bool| {
        channels
            .iter()
            .enumerate()
            .filter(|(_, c)| !only_routers || between_routers(c))
            .min_by_key(|(i, c)| (c.rate, *i))
            .map(|(i, _)| i as u32)
    };
    pick(true).or_else(|| pick(false)).unwrap_or(0)
}
