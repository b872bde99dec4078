//! The simulator's GCCA hooks (Liu, Cheung & Baras, sections 3.1 to 3.3): setting up the nodes,
//! sending the signals a GCCA port raised, applying a message where it arrives, and waking the
//! GCCA leaky buckets. The host bucket stage is `stages/host_bucket.rs`; the state lives in
//! [`crate::gcca`]; see its docs for the model.

use super::stages::StageTimer;
use super::{Event, Simulator};
use crate::channel::Offer;
use crate::flow::{Agent, Flow};
use crate::gcca::{padding_of, GccaTimer, HostShaper, NodeGcca, NodeGccaStats};
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::routing::NO_ROUTE;
use crate::scenario::{FlowKind, NodeKind, Scenario};
use crate::trace::capture::CaptureError;
use concord_cc::gcca::message::{HEADER_LEN, PADDING_LEN};
use concord_cc::gcca::{
    Code, ConnId, Delivery, GccpCapability, GccpHost, GccpMessage, LeakyBucket, Neighbour,
    NeighbourTable, NodeRole, Outgoing, TcpConnections, TcpWindow, WindowAdjuster,
};
use concord_cc::time::Instant;

/// The flow id GCCP packets carry: they belong to no flow.
const NO_FLOW: FlowId = FlowId::MAX;

/// Bytes a GCCP frame occupies on the wire beyond its message: Ethernet header and FCS. The
/// frame is padded to Ethernet's 64-byte minimum.
const FRAME_OVERHEAD: u32 = 18;

/// The simulator's TCP flows as GCCA's host dispatcher sees them: connection `c` is flow `c`.
struct Connections<'a>(&'a mut [Flow]);

impl TcpConnections for Connections<'_> {
    fn window(&mut self, conn: ConnId) -> Option<TcpWindow<'_>> {
        let flow = self.0.get_mut(usize::try_from(conn).ok()?)?;
        let Agent::Tcp(t) = &mut flow.agent else {
            return None;
        };
        let srtt = t.sender.rtt().srtt_or_initial();
        let bytes_in_flight = t.sender.bytes_in_flight();
        Some(TcpWindow {
            controller: t.sender.controller_mut(),
            srtt,
            bytes_in_flight,
        })
    }
}

impl Simulator {
    /// Builds each node's GCCA part from the scenario: neighbour tables for GCCA routers, a
    /// dispatcher with a bucket per UDP flow and an adjuster per TCP flow for GCCA hosts.
    pub(super) fn setup_gcca(&mut self, sc: &Scenario) {
        let n = sc.nodes.len();
        let mut nodes = Vec::with_capacity(n);
        for (i, spec) in sc.nodes.iter().enumerate() {
            let state = match (spec.kind, spec.gcca) {
                (_, None) => NodeGcca::Plain,
                (NodeKind::Router, Some(_)) => {
                    let mut table = NeighbourTable::new();
                    for ch in self.channels.iter().filter(|c| c.from as usize == i) {
                        let other = ch.to as usize;
                        let Some(o) = sc.nodes.get(other) else {
                            continue;
                        };
                        table.insert(
                            ch.to,
                            Neighbour {
                                role: match o.kind {
                                    NodeKind::Host => NodeRole::Host,
                                    NodeKind::Router => NodeRole::Router,
                                },
                                capability: if o.gcca.is_some() {
                                    GccpCapability::Capable
                                } else {
                                    GccpCapability::Incapable
                                },
                            },
                        );
                    }
                    NodeGcca::Router(table)
                }
                (NodeKind::Host, Some(_)) => NodeGcca::Host(GccpHost::new()),
            };
            nodes.push(state);
        }
        let mut shapers = Vec::with_capacity(sc.flows.len());
        for (f, spec) in sc.flows.iter().enumerate() {
            let mut shaper = None;
            let host_spec = sc.nodes.get(spec.from).and_then(|n| n.gcca);
            if let (Some(NodeGcca::Host(host)), Some(hs)) = (nodes.get_mut(spec.from), host_spec) {
                let flow = self.flows.get(f);
                let padding = flow.map(|fl| {
                    padding_of(&Packet::new(
                        fl.src,
                        fl.dst,
                        f as FlowId,
                        0,
                        Instant::ZERO,
                        Transport::Udp { seq: 0, len: 0 },
                    ))
                });
                match (&spec.kind, padding) {
                    (FlowKind::Tcp { .. }, Some(p)) => {
                        host.attach_tcp(f as ConnId, p, WindowAdjuster::new());
                    }
                    (FlowKind::Cbr { rate, .. } | FlowKind::OnOff { rate, .. }, Some(p)) => {
                        let mut config = hs.udp_bucket.config(*rate);
                        config.min_rate = config.min_rate.min(*rate);
                        if let Ok(bucket) = LeakyBucket::new(config) {
                            host.attach_udp(p.src_port, bucket);
                            shaper = Some(HostShaper::new(p.src_port, hs.udp_queue));
                        }
                    }
                    _ => {}
                }
            }
            shapers.push(shaper);
        }
        self.gcca.nodes = nodes;
        self.gcca.stats = vec![NodeGccaStats::default(); n];
        self.gcca.shapers = shapers;
    }

    /// After channel `c` admitted, started or finished a packet: sends the signals its GCCA port
    /// raised and schedules its bucket's wake-up if the head of its queue is held.
    pub(super) fn after_gcca_port(&mut self, c: u32) -> Result<(), CaptureError> {
        let Some(ch) = self.channels.get_mut(c as usize) else {
            return Ok(());
        };
        let node = ch.from;
        let Some(port) = ch.disc_mut().gcca_mut() else {
            return Ok(());
        };
        let mut wake = None;
        if let Some(at) = port.wake {
            if port.armed != Some(at) {
                port.armed = Some(at);
                wake = Some(at);
            }
        }
        let signals = std::mem::take(&mut port.outbox);
        if let Some(at) = wake {
            self.events
                .push(at, Event::Stage(StageTimer::Gcca(GccaTimer::Port(c))));
        }
        if signals.is_empty() {
            return Ok(());
        }
        let mut out: Vec<Outgoing> = Vec::new();
        if let Some(NodeGcca::Router(table)) = self.gcca.nodes.get_mut(node as usize) {
            for (signal, padding) in signals {
                table.address(signal, padding, &mut out);
            }
        }
        for o in out {
            self.send_gccp(node, o.to, o.message)?;
        }
        Ok(())
    }

    /// Sends a GCCP message from `node` to its neighbour `to` on the control lane of the
    /// channel between them.
    fn send_gccp(&mut self, node: NodeId, to: u32, msg: GccpMessage) -> Result<(), CaptureError> {
        let c = self.routes.next_hop(node, to);
        if c == NO_ROUTE {
            self.unroutable += 1;
            return Ok(());
        }
        if let Some(s) = self.gcca.stats.get_mut(node as usize) {
            match msg.code {
                Code::Congestion => s.congestion_sent += 1,
                Code::Normal => s.normal_sent += 1,
            }
        }
        let len = HEADER_LEN
            + if msg.padding.is_some() {
                PADDING_LEN
            } else {
                0
            };
        let now = self.now;
        let pkt = Packet::new(
            node,
            to,
            NO_FLOW,
            (len as u32 + FRAME_OVERHEAD).max(64),
            now,
            Transport::Gccp(msg),
        );
        if let Offer::Transmitting(d) =
            self.channels[c as usize].offer_control(now, pkt, &mut self.wire)
        {
            self.events.push(now + d, Event::TxDone(c));
            self.capture
                .packet(c, now, &pkt, &self.cp.headers, &self.cm.responses)?;
        }
        Ok(())
    }

    /// A GCCP message arrived over channel `c`: a GCCA router applies it to the bucket of its
    /// queue toward the sender; a GCCA host hands it to its dispatcher (section 3.3).
    pub(super) fn on_gccp(&mut self, c: u32, msg: GccpMessage) -> Result<(), CaptureError> {
        let now = self.now;
        let (node, from) = {
            let ch = &self.channels[c as usize];
            (ch.to as usize, ch.from)
        };
        if let Some(s) = self.gcca.stats.get_mut(node) {
            match msg.code {
                Code::Congestion => s.congestion_received += 1,
                Code::Normal => s.normal_received += 1,
            }
        }
        let mut applied = false;
        match self.gcca.nodes.get_mut(node) {
            Some(NodeGcca::Router(_)) => {
                let out = self.routes.next_hop(node as u32, from);
                if let Some(port) = self
                    .channels
                    .get_mut(out as usize)
                    .and_then(|ch| ch.disc_mut().gcca_mut())
                {
                    port.on_message(now, msg.code);
                    // A new rate changes when the held head may leave.
                    port.wake = None;
                    port.armed = None;
                    applied = true;
                    self.kick_port(out)?;
                }
            }
            Some(NodeGcca::Host(host)) => {
                let delivery = host.on_message(now, &msg, &mut Connections(&mut self.flows));
                match delivery {
                    Delivery::Tcp { conn, reduced } => {
                        applied = true;
                        if reduced {
                            if let Some(s) = self.gcca.stats.get_mut(node) {
                                s.tcp_reductions += 1;
                            }
                            // Traces the halved window; sends nothing new.
                            self.pump_sender(conn as usize)?;
                        }
                    }
                    Delivery::Udp { port } => {
                        applied = true;
                        let f = self
                            .gcca
                            .shapers
                            .iter()
                            .position(|s| s.as_ref().is_some_and(|s| s.port == port));
                        if let Some(f) = f {
                            if let Some(s) = self.gcca.shapers[f].as_mut() {
                                s.wake = None;
                                s.armed = None;
                            }
                            self.release_datagrams(f)?;
                        }
                    }
                    Delivery::NoPadding | Delivery::UnknownFlow => {}
                }
            }
            _ => {}
        }
        if !applied {
            if let Some(s) = self.gcca.stats.get_mut(node) {
                s.unapplied += 1;
            }
        }
        Ok(())
    }

    /// Delivers `msg` now as if it had just arrived over channel `channel` (from the channel's
    /// sending node to its receiving node): for tests and for replaying recorded messages.
    pub fn inject_gccp(&mut self, channel: u32, msg: GccpMessage) -> Result<(), CaptureError> {
        if (channel as usize) >= self.channels.len() {
            return Ok(());
        }
        self.on_gccp(channel, msg)
    }

    /// Starts channel `c`'s next transmission if it is idle and its bucket allows.
    fn kick_port(&mut self, c: u32) -> Result<(), CaptureError> {
        let now = self.now;
        if let Some(d) = self.channels[c as usize].start_next(now, &mut self.wire) {
            self.events.push(now + d, Event::TxDone(c));
            if let Some(p) = self.channels[c as usize].in_service(&self.wire).copied() {
                self.capture
                    .packet(c, now, &p, &self.cp.headers, &self.cm.responses)?;
            }
        }
        self.after_gcca_port(c)
    }

    /// A GCCA bucket's wake-up.
    pub(super) fn on_gcca_timer(&mut self, t: GccaTimer) -> Result<(), CaptureError> {
        let now = self.now;
        match t {
            GccaTimer::Port(c) => {
                let Some(port) = self
                    .channels
                    .get_mut(c as usize)
                    .and_then(|ch| ch.disc_mut().gcca_mut())
                else {
                    return Ok(());
                };
                if port.armed != Some(now) {
                    return Ok(()); // superseded
                }
                port.armed = None;
                port.wake = None;
                self.kick_port(c)
            }
            GccaTimer::Host(f) => {
                let Some(s) = self
                    .gcca
                    .shapers
                    .get_mut(f as usize)
                    .and_then(|s| s.as_mut())
                else {
                    return Ok(());
                };
                if s.armed != Some(now) {
                    return Ok(());
                }
                s.armed = None;
                s.wake = None;
                self.release_datagrams(f as usize)
            }
        }
    }
}
