//! The simulator's Congestion Manager hooks: opening CM flows when they start, TCP/CM's
//! requests, grants and implicit feedback, the audio server and the bulk CM sender, and the
//! probe protocol between hosts. The state and the model are in [`crate::cm`].

use super::agents::AgentTimer;
use super::stages::StageTimer;
use super::{Event, Simulator, UDP_IP_HEADER};
use crate::cm::{
    pick_representation, AckFeedback, CmApp, CmAppFlow, CmState, CmTimer, HostCm, CM_CONTROL_FLOW,
};
use crate::flow::Agent;
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::scenario::Scenario;
use crate::trace::capture::{address_node, flow_ports, node_address, CaptureError};
use concord_cc::cm::tcp_adapter;
use concord_cc::cm::{
    CmConfig, CmEvent, CmUpdate, CongestionManager, FeedbackMode, FlowKey, FlowTag, LossMode,
    ProbeMessage, ProbeResponder, ResponderConfig,
};
use concord_cc::rng::Rng;
use concord_cc::tcp::sender::{AckOutcome, SendGate};
use concord_cc::time::Instant;
use concord_cc::wire::Ecn;

/// The random stream of the injected probe losses.
const PROBE_LOSS_STREAM: u64 = 0xC3_0000;
/// The random stream of host `n`'s probe nonces.
const NONCE_STREAM: u64 = 0xC4_0000;
/// Packets a CM flow keeps requested from its CM while it has data.
const BULK_BACKLOG: u32 = 8;
/// The payload of a `cmudp` ACK, in bytes: the packet's sequence number (8), the count of
/// packets received (8) and the echoed send time (4, as TCP's TSecr).
const CM_ACK_PAYLOAD: u32 = 20;

/// The agent of an `audio` or `cmudp` flow: its application and packet size, and for a
/// `cmudp` flow with `feedback = "ack"` (`acks`) the account of its receiver's ACKs.
pub(super) fn cm_app_agent(app: CmApp, packet_size: u64, acks: bool) -> Agent {
    Agent::CmApp(Box::new(CmAppFlow {
        app,
        // The loader keeps packet sizes within an IP packet.
        packet_size: u32::try_from(packet_size).unwrap_or(u32::MAX),
        sent: 0,
        sent_at_warmup: 0,
        received: 0,
        acks: acks.then(AckFeedback::default),
    }))
}

/// True if `agent` is a CM application flow whose feedback comes from the probe protocol (an
/// `audio` flow, a `cmudp` flow without per-packet ACKs).
fn probe_fed(agent: &Agent) -> bool {
    matches!(agent, Agent::CmApp(a) if a.acks.is_none())
}

impl Simulator {
    /// Builds a CM on every host that sends a CM flow and a responder on every host that
    /// receives one with probe feedback; TCP/CM senders hand their window to the CM.
    pub(super) fn setup_cm(&mut self, sc: &Scenario) {
        let n = self.nodes.len();
        let mut state = CmState {
            hosts: (0..n).map(|_| None).collect(),
            responders: (0..n).map(|_| None).collect(),
            handles: vec![None; self.flows.len()],
            weights: sc
                .flows
                .iter()
                .map(|s| s.cm.as_ref().map(|c| (c.weight, c.hint)))
                .collect(),
            requested: vec![0; self.flows.len()],
            objects: sc
                .flows
                .iter()
                .map(|s| {
                    s.cm.as_ref()
                        .filter(|c| !c.representations.is_empty())
                        .map(|c| (c.representations.clone(), c.latency))
                })
                .collect(),
            chosen: vec![None; self.flows.len()],
            probe_loss: sc.cm.probe_loss,
            ..CmState::default()
        };
        let mut config = CmConfig {
            aging: sc.cm.aging,
            ..CmConfig::default()
        };
        config.prober.probes_per_rtt = sc.cm.probes_per_rtt;
        config.segregation.enabled = sc.cm.segregation;
        for (f, spec) in sc.flows.iter().enumerate() {
            if spec.cm.is_none() {
                continue;
            }
            let src = spec.from;
            if state.hosts[src].is_none() {
                let mut c = config;
                // The CM's grants are whole packets of this host's first CM flow.
                c.mtu = match &self.flows[f].agent {
                    Agent::Tcp(t) => u64::from(t.header_bytes) + t.sender.config().mss,
                    Agent::CmApp(a) => u64::from(a.packet_size),
                    _ => continue,
                };
                c.initial_cwnd = 2 * c.mtu;
                // Aging's floor: one packet per second.
                c.min_rate = concord_cc::units::Rate::from_bps(8 * c.mtu);
                let rng = Rng::stream(self.seed, NONCE_STREAM + src as u64);
                // The loader checked every value the configuration takes from the scenario.
                state.hosts[src] = CongestionManager::new(c, rng).ok().map(|cm| {
                    Box::new(HostCm {
                        cm,
                        armed: None,
                        flows: Default::default(),
                    })
                });
            }
            match &mut self.flows[f].agent {
                Agent::Tcp(t) => {
                    t.sender.set_gate(SendGate::CreditOnly);
                    if spec
                        .cm
                        .as_ref()
                        .is_some_and(|c| !c.representations.is_empty())
                    {
                        // Nothing to send until the object picks its representation.
                        t.sender.set_app_limit(0);
                    }
                }
                Agent::CmApp(a) if a.acks.is_none() => {
                    let dst = spec.to;
                    if state.responders[dst].is_none() {
                        state.responders[dst] =
                            Some(Box::new(ProbeResponder::new(ResponderConfig::default())));
                    }
                }
                _ => {}
            }
        }
        state.senders = (0..n as NodeId)
            .filter(|&h| state.hosts[h as usize].is_some())
            .collect();
        if state.active() {
            state.rng = Some(Rng::stream(self.seed, PROBE_LOSS_STREAM));
        }
        self.cm = state;
    }

    /// Host `node`'s sending CM, if it has one.
    fn host_cm(&mut self, node: NodeId) -> Option<&mut HostCm> {
        self.cm.hosts.get_mut(node as usize)?.as_deref_mut()
    }

    /// The flow's CM handle and its source host, if it is an open CM flow.
    fn cm_handle(&self, f: FlowId) -> Option<(NodeId, concord_cc::cm::FlowId)> {
        let h = (*self.cm.handles.get(f as usize)?)?;
        Some((self.flows.get(f as usize)?.src, h))
    }

    /// Opens flow `f` in its source's CM at `now`.
    pub(super) fn cm_open(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(flow) = self.flows.get(f as usize) else {
            return Ok(());
        };
        let (src, dst) = (flow.src, flow.dst);
        let Some((weight, hint)) = self.cm.weights.get(f as usize).copied().flatten() else {
            return Ok(());
        };
        let explicit = probe_fed(&flow.agent);
        let Some(Some(host)) = self.cm.hosts.get_mut(src as usize) else {
            return Ok(());
        };
        let (src_port, dst_port) = flow_ports(f);
        let key = FlowKey {
            dst: node_address(dst),
            dst_port,
            src_port,
            flow_id: f,
        };
        let Ok(id) = host.cm.open(now, key) else {
            return Ok(());
        };
        // Weights and hints were range-checked by the loader.
        let _ = host.cm.set_weight(now, id, weight);
        let _ = host.cm.receiver_hint(now, id, hint);
        if explicit {
            let _ = host.cm.set_feedback(id, FeedbackMode::Explicit);
        }
        host.flows.insert(id, f);
        if let Some(slot) = self.cm.handles.get_mut(f as usize) {
            *slot = Some(id);
        }
        if self.cm.objects.get(f as usize).is_some_and(Option::is_some) {
            // A Web object picks its representation once every object requested with it is
            // open, so that its share counts their hints: after the other starts of this
            // instant, which are queued already.
            self.events.push(now, Event::Agent(AgentTimer::Pick(f)));
        }
        if let Some(Agent::CmApp(app)) = self.flows.get_mut(f as usize).map(|fl| &mut fl.agent) {
            if let CmApp::Audio(a) = &mut app.app {
                a.since = now;
                self.events.push(now, Event::Agent(AgentTimer::Audio(f)));
                a.armed = Some(now);
            }
        }
        self.cm_want(f);
        self.cm_drain(src)
    }

    /// Keeps requests outstanding for flow `f` while it has packets to send: TCP/CM while the
    /// receiver's window allows a segment (paper section 3.2.1), a `cmudp` sender while data
    /// remains. Each keeps up to [`BULK_BACKLOG`] packets requested (no more than it has left
    /// to send), so that the scheduler sees it backlogged and serves it in proportion to its
    /// weight and hint (a flow whose requests are all granted leaves the round robin until it
    /// asks again). A grant TCP/CM cannot use is reported unused.
    fn cm_want(&mut self, f: FlowId) {
        let now = self.now;
        let Some((src, id)) = self.cm_handle(f) else {
            return;
        };
        let Some(&outstanding) = self.cm.requested.get(f as usize) else {
            return;
        };
        let Some(flow) = self.flows.get(f as usize) else {
            return;
        };
        // Packets wanted, and the size of each.
        let (target, size) = match &flow.agent {
            Agent::Tcp(t) => {
                let mss = t.sender.config().mss;
                // Credit below one segment (a short last segment's grant) cannot send a
                // full-sized retransmission: ask again.
                let wants = t.sender.wants_to_send() && t.sender.credit() < mss;
                let unsent = t.sender.app_limit().saturating_sub(t.sender.snd_nxt());
                let segments = unsent
                    .div_ceil(mss.max(1))
                    .clamp(1, u64::from(BULK_BACKLOG));
                (
                    if wants { segments as u32 } else { 0 },
                    t.header_bytes + mss as u32,
                )
            }
            Agent::CmApp(a) => match a.app {
                CmApp::Bulk { remaining } if now < flow.stop => {
                    let size = a.packet_size.max(1);
                    let left = remaining.map_or(u64::MAX, |r| r.div_ceil(u64::from(size)));
                    (left.min(u64::from(BULK_BACKLOG)) as u32, size)
                }
                _ => (0, 0),
            },
            _ => (0, 0),
        };
        // In bytes: the CM grants at most its MTU at a time, whatever the flow's packet size.
        let target = u64::from(target) * u64::from(size);
        if target <= outstanding {
            return;
        }
        if let Some(host) = self.host_cm(src) {
            if host.cm.request(now, id, target - outstanding).is_ok() {
                self.cm.requested[f as usize] = target;
            }
        }
    }

    /// Handles every event host `node`'s CM has for it, then re-arms its timer. Hooks that
    /// run meanwhile (a grant makes TCP/CM send) leave their CM's new events to this loop.
    pub(super) fn cm_drain(&mut self, node: NodeId) -> Result<(), CaptureError> {
        if self.cm.draining {
            return Ok(());
        }
        self.cm.draining = true;
        let result = self.cm_drain_events(node);
        self.cm.draining = false;
        self.cm_arm(node);
        result
    }

    fn cm_drain_events(&mut self, node: NodeId) -> Result<(), CaptureError> {
        let now = self.now;
        loop {
            let Some(Some(host)) = self.cm.hosts.get_mut(node as usize) else {
                return Ok(());
            };
            let Some(event) = host.cm.poll_event() else {
                return Ok(());
            };
            match event {
                CmEvent::AppNotify { flow, grant } => {
                    let Some(&f) = host.flows.get(&flow) else {
                        continue;
                    };
                    // The flow sends one packet per grant (a grant is at most one MTU).
                    if let Some(r) = self.cm.requested.get_mut(f as usize) {
                        *r = r.saturating_sub(grant);
                    }
                    self.cm_grant(f)?;
                }
                CmEvent::ChangeRate { flow, rate, .. } => {
                    let Some(&f) = host.flows.get(&flow) else {
                        continue;
                    };
                    if let Some(Agent::CmApp(a)) =
                        self.flows.get_mut(f as usize).map(|fl| &mut fl.agent)
                    {
                        if let CmApp::Audio(audio) = &mut a.app {
                            audio.adapt(now, rate);
                        }
                    }
                }
                CmEvent::SendProbe { dst, probe } => {
                    let Some(to) = address_node(dst) else {
                        continue;
                    };
                    let mut bytes = Vec::new();
                    ProbeMessage::Probe(probe).encode(&mut bytes);
                    let pkt = Packet::new(
                        node,
                        to,
                        CM_CONTROL_FLOW,
                        bytes.len() as u32 + UDP_IP_HEADER,
                        now,
                        Transport::CmProbe(probe),
                    );
                    if self.cm_probe_lost() {
                        self.cm.probes_lost += 1;
                    } else {
                        self.forward(node, pkt)?;
                    }
                }
                CmEvent::GrantExpired { .. } | CmEvent::Segregated { .. } => {}
            }
        }
    }

    /// True if the injected probe loss takes the next probe or response.
    fn cm_probe_lost(&mut self) -> bool {
        let p = self.cm.probe_loss;
        p > 0.0 && self.cm.rng.as_mut().is_some_and(|r| r.bernoulli(p))
    }

    /// Schedules host `node`'s CM timer at its next deadline if that is earlier than the one
    /// armed.
    fn cm_arm(&mut self, node: NodeId) {
        let Some(Some(host)) = self.cm.hosts.get_mut(node as usize) else {
            return;
        };
        if let Some(at) = host.cm.poll_timeout() {
            // A deadline already past is due now.
            let at = at.max(self.now);
            if at < self.end && crate::timer::arm_earlier(&mut host.armed, at) {
                self.events.push(at, Event::Stage(StageTimer::Cm(node)));
            }
        }
    }

    /// A grant for flow `f`: TCP/CM sends one segment, `cmudp` one packet; each reports what
    /// it sent with `notify` (0 if it could not use the grant) and asks again if it has more.
    fn cm_grant(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(flow) = self.flows.get_mut(f as usize) else {
            return Ok(());
        };
        let (src, dst, stop) = (flow.src, flow.dst, flow.stop);
        match &mut flow.agent {
            Agent::Tcp(t) => {
                // A grant the sender cannot use (the receiver's window closed, the transfer
                // ended meanwhile) is reported unused and not kept as credit.
                if !t.sender.wants_to_send() {
                    self.cm_notify(f, 0);
                    return Ok(());
                }
                let mss = t.sender.config().mss;
                t.sender.grant(mss);
                let before = t.sender.stats().segments_sent;
                // pump_sender sends the segment and notifies the CM of it.
                self.pump_sender(f as usize)?;
                let sent = match self.flows.get(f as usize).map(|fl| &fl.agent) {
                    Some(Agent::Tcp(t)) => t.sender.stats().segments_sent > before,
                    _ => true,
                };
                if !sent {
                    self.cm_notify(f, 0);
                }
            }
            Agent::CmApp(a) => {
                let CmApp::Bulk { remaining } = &mut a.app else {
                    return Ok(());
                };
                let size = a.packet_size;
                if remaining.is_some_and(|r| r == 0) || now >= stop {
                    self.cm_notify(f, 0);
                    return Ok(());
                }
                if let Some(r) = remaining {
                    *r = r.saturating_sub(u64::from(size));
                }
                let done = remaining.is_some_and(|r| r == 0);
                // The host's stages report the packet to its CM (`notify`) on its way out.
                let pkt = self.cm_app_packet(f, src, dst, size);
                self.send(src, pkt)?;
                if done {
                    // The last byte left: the flow closes (`cm_close`).
                    return self.cm_finished(f);
                }
            }
            _ => return Ok(()),
        }
        self.cm_want(f);
        Ok(())
    }

    /// A UDP packet of CM application flow `f`, counted as sent.
    fn cm_app_packet(&mut self, f: FlowId, src: NodeId, dst: NodeId, size: u32) -> Packet {
        let seq = match self.flows.get_mut(f as usize).map(|fl| &mut fl.agent) {
            Some(Agent::CmApp(a)) => {
                a.sent += 1;
                a.sent - 1
            }
            _ => 0,
        };
        Packet::new(
            src,
            dst,
            f,
            size,
            self.now,
            Transport::Udp {
                seq,
                len: size.saturating_sub(UDP_IP_HEADER),
            },
        )
    }

    /// `cm_notify(nsent)` for flow `f`.
    pub(super) fn cm_notify(&mut self, f: FlowId, nsent: u64) {
        let now = self.now;
        let Some((src, id)) = self.cm_handle(f) else {
            return;
        };
        if let Some(host) = self.host_cm(src) {
            let _ = host.cm.notify(now, id, nsent);
        }
    }

    /// TCP hook after a segment of flow `f` of `wire` bytes left: a TCP/CM flow reports it.
    pub(super) fn cm_sent(&mut self, f: FlowId, wire: u32) {
        if self.cm_handle(f).is_some() {
            self.cm_notify(f, u64::from(wire));
        }
    }

    /// TCP hook after the sender of flow `f` had its turn (an ACK, a timer, a grant): a TCP/CM
    /// flow asks for its next grant if it has a segment to send, and its host's CM events are
    /// handled.
    pub(super) fn cm_after_pump(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let Some((src, _)) = self.cm_handle(f) else {
            return Ok(());
        };
        self.cm_want(f);
        self.cm_drain(src)
    }

    /// TCP hook on an ACK for flow `f`: a TCP/CM flow passes it to its CM as `cm_update`
    /// (paper section 3.2.1; the mapping is [`tcp_adapter::update_for_ack`]).
    pub(super) fn cm_on_ack(&mut self, f: FlowId, out: &AckOutcome) {
        let now = self.now;
        let Some((src, id)) = self.cm_handle(f) else {
            return;
        };
        let Some(Agent::Tcp(t)) = self.flows.get(f as usize).map(|fl| &fl.agent) else {
            return;
        };
        let Some(update) = tcp_adapter::update_for_ack(out, t.sender.config().mss, t.header_bytes)
        else {
            return;
        };
        if let Some(host) = self.host_cm(src) {
            let _ = host.cm.update(now, id, &update);
        }
    }

    /// TCP hook on a retransmission timeout of flow `f`: persistent congestion for its CM
    /// (RFC 3124 CM_NO_FEEDBACK), which restarts the macroflow in slow start.
    pub(super) fn cm_on_timeout(&mut self, f: FlowId) {
        let now = self.now;
        let Some((src, id)) = self.cm_handle(f) else {
            return;
        };
        let update = tcp_adapter::update_for_timeout();
        if let Some(host) = self.host_cm(src) {
            let _ = host.cm.update(now, id, &update);
        }
    }

    /// A CM timer fired.
    pub(super) fn on_cm_timer(&mut self, t: CmTimer) -> Result<(), CaptureError> {
        let now = self.now;
        match t {
            CmTimer::Host(node) => {
                let Some(Some(host)) = self.cm.hosts.get_mut(node as usize) else {
                    return Ok(());
                };
                if host.armed != Some(now) {
                    return Ok(()); // superseded by an earlier deadline
                }
                host.armed = None;
                host.cm.on_timeout(now);
                self.cm_drain(node)
            }
            CmTimer::Audio(f) => self.on_audio_tick(f),
            CmTimer::Pick(f) => self.cm_pick(f),
        }
    }

    /// A Web object picks the representation its `cm_query` share delivers within its latency
    /// (paper section 3.2.1) and starts sending it.
    fn cm_pick(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let Some((src, id)) = self.cm_handle(f) else {
            return Ok(());
        };
        let share = self
            .cm
            .hosts
            .get(src as usize)
            .and_then(Option::as_ref)
            .and_then(|h| h.cm.query(id).ok())
            .and_then(|q| q.rate);
        let Some((reps, latency)) = self.cm.objects.get(f as usize).and_then(Option::as_ref) else {
            return Ok(());
        };
        let chosen = pick_representation(reps, share, *latency);
        if let Some(slot) = self.cm.chosen.get_mut(f as usize) {
            *slot = chosen;
        }
        if let (Some(bytes), Some(Agent::Tcp(t))) = (
            chosen,
            self.flows.get_mut(f as usize).map(|fl| &mut fl.agent),
        ) {
            t.sender.set_app_limit(bytes);
            t.finite = true;
        }
        self.pump_sender(f as usize)
    }

    /// Hook when flow `f` is done (a finite transfer acknowledged or sent, or its stop time): a
    /// CM flow closes (`cm_close`), and its share goes to the other flows of its macroflow.
    pub(super) fn cm_finished(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Some((src, id)) = self.cm_handle(f) else {
            return Ok(());
        };
        if let Some(host) = self.host_cm(src) {
            let _ = host.cm.close(now, id);
            host.flows.remove(&id);
        }
        if let Some(slot) = self.cm.handles.get_mut(f as usize) {
            *slot = None;
        }
        // The other flows' new shares and grants.
        self.cm_drain(src)
    }

    /// The audio server's next packet: sent at the current encoding, reported with `notify`.
    fn on_audio_tick(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(flow) = self.flows.get_mut(f as usize) else {
            return Ok(());
        };
        let (src, dst, stop) = (flow.src, flow.dst, flow.stop);
        let Agent::CmApp(a) = &mut flow.agent else {
            return Ok(());
        };
        let size = a.packet_size;
        let CmApp::Audio(audio) = &mut a.app else {
            return Ok(());
        };
        if audio.armed != Some(now) {
            return Ok(());
        }
        audio.armed = None;
        if now >= stop {
            audio.settle(now);
            return self.cm_finished(f);
        }
        let gap = audio.rate().transmit_time(u64::from(size));
        let next = now + gap;
        if next < self.end {
            audio.armed = Some(next);
            self.events.push(next, Event::Agent(AgentTimer::Audio(f)));
        }
        // The host's stages report the packet to its CM (`notify`) on its way out.
        let pkt = self.cm_app_packet(f, src, dst, size);
        self.send(src, pkt)?;
        self.cm_drain(src)
    }

    /// Delivery hook at a host: a probe is answered by the host's responder, a response is
    /// taken by its CM, the ACK of a `cmudp` packet by its sender (which tells its CM), and a
    /// data packet of a CM flow with probe feedback is counted by the receiving host's
    /// responder. Returns true if the packet was a probe, a response or an ACK.
    pub(super) fn cm_deliver(&mut self, pkt: &Packet) -> Result<bool, CaptureError> {
        let now = self.now;
        match pkt.transport {
            Transport::CmProbe(probe) => {
                let from = node_address(pkt.src);
                let response = self
                    .cm
                    .responders
                    .get_mut(pkt.dst as usize)
                    .and_then(Option::as_mut)
                    .and_then(|r| r.on_probe(now, from, &probe));
                let Some(response) = response else {
                    return Ok(true);
                };
                let size = ProbeMessage::Response(response.clone()).encoded_len() as u32;
                if self.cm_probe_lost() {
                    self.cm.responses_lost += 1;
                    return Ok(true);
                }
                let handle = self.cm.responses.insert(response);
                let reply = Packet::new(
                    pkt.dst,
                    pkt.src,
                    CM_CONTROL_FLOW,
                    size + UDP_IP_HEADER,
                    now,
                    Transport::CmResponse(handle),
                );
                self.forward(pkt.dst, reply)?;
                Ok(true)
            }
            Transport::CmResponse(handle) => {
                let Some(response) = self.cm.responses.remove(handle) else {
                    return Ok(true);
                };
                let from = node_address(pkt.src);
                if let Some(host) = self.host_cm(pkt.dst) {
                    // A refused response is counted in the CM's stats and changes nothing.
                    if host.cm.on_response(now, from, &response).is_ok() {
                        self.cm.responses_delivered += 1;
                    }
                }
                self.cm_drain(pkt.dst)?;
                Ok(true)
            }
            Transport::CmAck {
                seq,
                received,
                echo,
            } => {
                self.cm_on_udp_ack(pkt.flow, seq, received, echo);
                if let Some((src, _)) = self.cm_handle(pkt.flow) {
                    self.cm_drain(src)?;
                }
                Ok(true)
            }
            Transport::Udp { .. } => {
                let explicit = self
                    .flows
                    .get(pkt.flow as usize)
                    .is_some_and(|fl| probe_fed(&fl.agent));
                if explicit {
                    let (src_port, dst_port) = flow_ports(pkt.flow);
                    let tag = FlowTag {
                        src_port,
                        dst_port,
                        flow_id: pkt.flow,
                    };
                    if let Some(Some(r)) = self.cm.responders.get_mut(pkt.dst as usize) {
                        r.on_data(
                            now,
                            node_address(pkt.src),
                            tag,
                            u64::from(pkt.size),
                            pkt.ecn == Ecn::Ce,
                        );
                    }
                }
                Ok(false)
            }
            _ => Ok(false),
        }
    }

    /// Receiver hook after packet `seq` of CM application flow `f` arrived, the flow's
    /// `received`-th: a `cmudp` flow with per-packet ACKs acknowledges it at once, echoing the
    /// time `sent` it was sent (CM paper section 2.2.1: feedback on every packet).
    pub(super) fn cm_ack_packet(
        &mut self,
        f: FlowId,
        seq: u64,
        received: u64,
        sent: Instant,
    ) -> Result<(), CaptureError> {
        let Some(flow) = self.flows.get(f as usize) else {
            return Ok(());
        };
        if !matches!(&flow.agent, Agent::CmApp(a) if a.acks.is_some()) {
            return Ok(());
        }
        let (src, dst) = (flow.src, flow.dst);
        let ack = Packet::new(
            dst,
            src,
            f,
            UDP_IP_HEADER + CM_ACK_PAYLOAD,
            self.now,
            Transport::CmAck {
                seq,
                received,
                echo: sent,
            },
        );
        self.forward(dst, ack)
    }

    /// Sender hook on the ACK of packet `seq` of `cmudp` flow `f`, which says `received` of
    /// its packets have arrived and echoes the packet's send time `echo`: the flow passes it to
    /// its CM as `cm_update` (RFC 3124 section 4.2), in bytes on the wire: `nrecd` the packets
    /// newly received, `nlost` the packets newly found lost, a transient loss if any were (the
    /// CM halves at most once per RTT), and the RTT sample `now - echo`. An ACK older than one
    /// taken already is ignored; the ACKs that arrive after the flow closed are counted only.
    fn cm_on_udp_ack(&mut self, f: FlowId, seq: u64, received: u64, echo: Instant) {
        let now = self.now;
        let Some(Agent::CmApp(a)) = self.flows.get_mut(f as usize).map(|fl| &mut fl.agent) else {
            return;
        };
        let size = u64::from(a.packet_size);
        let Some(news) = a.acks.as_mut().and_then(|k| k.on_ack(seq, received)) else {
            return;
        };
        // The account is kept to the end; a flow closed already has no CM to tell.
        let Some((src, id)) = self.cm_handle(f) else {
            return;
        };
        let update = CmUpdate {
            nrecd: news.received.saturating_mul(size),
            nlost: news.lost.saturating_mul(size),
            loss_mode: if news.lost > 0 {
                LossMode::Transient
            } else {
                LossMode::NoCongestion
            },
            rtt: Some(now.saturating_since(echo)),
        };
        if let Some(host) = self.host_cm(src) {
            let _ = host.cm.update(now, id, &update);
        }
    }

    /// Queue-drop hook: a dropped response frees its slot.
    pub(super) fn cm_dropped(&mut self, pkt: &Packet) {
        match pkt.transport {
            Transport::CmProbe(_) => self.cm.probes_dropped += 1,
            Transport::CmResponse(handle) => {
                self.cm.responses.remove(handle);
                self.cm.responses_dropped += 1;
            }
            _ => {}
        }
    }
}
