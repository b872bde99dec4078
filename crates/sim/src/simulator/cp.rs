//! The simulator's CP hooks (see [`crate::cp`] for the model): building the aggregation points
//! and C-UDP endpoints, stamping and rewriting CP headers where packets pass an AP, control
//! messages between APs, the APs' timers, and pacing the endpoints at their share.

use super::agents::AgentTimer;
use super::stages::StageTimer;
use super::{Event, Simulator};
use crate::cp::{CUdpFlow, CpApp};
use crate::flow::Agent;
use crate::packet::{CpHandle, FlowId, NodeId, Packet, Transport};
use crate::scenario::{FlowKind, Scenario};
use crate::trace::capture::CaptureError;
use concord_cc::cp::{
    split_equally, AggregationPoint, ApConfig, ApEvent, AppConfig, CUdpSocket, Flowshares, Inbound,
    Outbound,
};
use concord_cc::rng::Rng;
use concord_cc::tfrc::TfrcConfig;
use concord_cc::time::{Duration, Instant};

/// Random stream of the AP at node `n`: `AP_STREAM + n` (BFLD's draws).
const AP_STREAM: u64 = 0x3000_0000;
/// IP header bytes of a control message (the CP header follows IP directly).
const IP_HEADER: u32 = 20;
/// IP and UDP header bytes.
const UDP_IP: u32 = 28;

/// Which CP timer an event is for.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CpTimer {
    /// A C-UDP endpoint's next datagram.
    Send(FlowId),
    /// An aggregation point's feedback or nofeedback timer.
    Ap(NodeId),
}

/// The agent of flow `f` of `sc`, a C-UDP flow of application `app`.
pub(super) fn cudp_agent(sc: &Scenario, f: usize, app: u32, packet_size: u64) -> Agent {
    // Its flow id within the application: how many of the application's flows come before it.
    let id = sc.flows[..f]
        .iter()
        .filter(|s| matches!(s.kind, FlowKind::CUdp { app: a, .. } if a == app))
        .count();
    Agent::CUdp(Box::new(CUdpFlow {
        socket: CUdpSocket::new(app, u32::try_from(id).unwrap_or(u32::MAX)),
        packet_size: u32::try_from(packet_size).unwrap_or(u32::MAX),
        rate: concord_cc::units::Rate::ZERO,
        last_send: None,
        send_timer: None,
        sent: 0,
        received: 0,
    }))
}

impl Simulator {
    /// Builds the aggregation points and registers each application at its local AP.
    pub(super) fn setup_cp(&mut self, sc: &Scenario) {
        for spec in &sc.cp {
            let flows: Vec<u32> = sc
                .flows
                .iter()
                .enumerate()
                .filter(|(_, f)| matches!(f.kind, FlowKind::CUdp { app, .. } if app == spec.app))
                .map(|(i, _)| i as u32)
                .collect();
            let packet_size = flows
                .first()
                .and_then(|&f| match sc.flows.get(f as usize).map(|s| &s.kind) {
                    Some(FlowKind::CUdp { packet_size, .. }) => Some(*packet_size),
                    _ => None,
                })
                .unwrap_or(1000);
            let n = u32::try_from(flows.len().max(1)).unwrap_or(u32::MAX);
            let flowshares = match spec.flowshares {
                Flowshares::Naive { m: 0 } => Flowshares::Naive { m: n },
                Flowshares::Bfld { m: 0 } => Flowshares::Bfld { m: n },
                other => other,
            };
            let (local, remote) = (spec.local as u32, spec.remote as u32);
            for node in [local, remote] {
                if !self.cp.aps.contains_key(&node) {
                    let rng = Rng::stream(self.seed, AP_STREAM + u64::from(node));
                    if let Ok(ap) = AggregationPoint::new(ApConfig::default(), rng) {
                        self.cp.aps.insert(node, ap);
                    }
                }
            }
            let config = AppConfig {
                control: spec.control,
                flowshares,
                tfrc: TfrcConfig {
                    segment_size: packet_size,
                    ..TfrcConfig::default()
                },
                ..AppConfig::default()
            };
            if let Some(ap) = self.cp.aps.get_mut(&local) {
                // The scenario loader checked the application ids and the configuration.
                let _ = ap.add_application(Instant::ZERO, spec.app, config);
            }
            self.cp.apps.insert(
                spec.app,
                CpApp {
                    local,
                    remote,
                    flows,
                },
            );
        }
        let nodes: Vec<u32> = self.cp.aps.keys().copied().collect();
        for n in nodes {
            self.arm_ap(n);
        }
    }

    /// A C-UDP flow starts: it takes its share of the estimate and sends its first datagram.
    pub(super) fn start_cudp(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let app = match self.flows.get(f as usize).map(|fl| &fl.agent) {
            Some(Agent::CUdp(c)) => c.socket.app(),
            _ => return Ok(()),
        };
        let local = self.cp.apps.get(&app).map(|a| a.local);
        if let Some(est) = local.and_then(|n| self.cp.aps.get(&n)?.estimate(app)) {
            self.share_estimate(app, est);
        }
        self.send_cudp(f)
    }

    /// Sets the rate of every flow of `app` to its equal share of `estimate` and re-arms their
    /// sends.
    fn share_estimate(&mut self, app: u32, estimate: concord_cc::cp::EndpointFeedback) {
        let now = self.now;
        let Some(flows) = self.cp.apps.get(&app).map(|a| a.flows.clone()) else {
            return;
        };
        let shares = split_equally(estimate.available_bandwidth, flows.len());
        for (&f, rate) in flows.iter().zip(shares) {
            let (stop, started) = match self.flows.get(f as usize) {
                Some(fl) => (fl.stop, now >= fl.start),
                None => continue,
            };
            let end = self.end;
            let Some(Agent::CUdp(c)) = self.flows.get_mut(f as usize).map(|fl| &mut fl.agent)
            else {
                continue;
            };
            c.socket.on_estimate(now, estimate);
            c.rate = rate;
            let Some(last) = c.last_send else {
                continue;
            };
            if !started {
                continue;
            }
            let next = (last + rate.transmit_time(u64::from(c.packet_size))).max(now);
            if next < end && next < stop && crate::timer::arm_earlier(&mut c.send_timer, next) {
                self.events.push(next, Event::Agent(AgentTimer::CUdp(f)));
            }
        }
    }

    /// A CP timer fired.
    pub(super) fn on_cp_timer(&mut self, timer: CpTimer) -> Result<(), CaptureError> {
        let now = self.now;
        match timer {
            CpTimer::Send(f) => {
                let Some(Agent::CUdp(c)) = self.flows.get_mut(f as usize).map(|fl| &mut fl.agent)
                else {
                    return Ok(());
                };
                if c.send_timer != Some(now) {
                    return Ok(());
                }
                c.send_timer = None;
                self.send_cudp(f)
            }
            CpTimer::Ap(n) => {
                if self.cp.ap_timers.get(&n) != Some(&now) {
                    return Ok(());
                }
                self.cp.ap_timers.remove(&n);
                let mut out = Vec::new();
                if let Some(ap) = self.cp.aps.get_mut(&n) {
                    ap.handle_timeout(now);
                    while let Some(h) = ap.poll_feedback(now) {
                        out.push(h);
                    }
                }
                self.after_ap(n);
                for h in out {
                    let Some(dst) = self.cp.apps.get(&h.app).map(|a| a.local) else {
                        continue;
                    };
                    let size = IP_HEADER + h.encoded_len() as u32;
                    let handle = self.cp.headers.insert(h);
                    let pkt = Packet {
                        cp: CpHandle::some(handle),
                        ..Packet::new(n, dst, FlowId::MAX, size, now, Transport::CpControl)
                    };
                    self.forward(n, pkt)?;
                }
                Ok(())
            }
        }
    }

    /// Sends flow `f`'s next datagram and schedules the one after at its rate.
    fn send_cudp(&mut self, f: FlowId) -> Result<(), CaptureError> {
        let now = self.now;
        let end = self.end;
        let Some(flow) = self.flows.get_mut(f as usize) else {
            return Ok(());
        };
        if now >= flow.stop {
            return Ok(());
        }
        let (src, dst, stop) = (flow.src, flow.dst, flow.stop);
        let Agent::CUdp(c) = &mut flow.agent else {
            return Ok(());
        };
        let header = c.socket.header();
        let size = c.packet_size + header.encoded_len() as u32;
        let seq = c.sent;
        c.sent += 1;
        c.last_send = Some(now);
        let len = c.packet_size.saturating_sub(UDP_IP);
        let gap = c.rate.transmit_time(u64::from(c.packet_size));
        let next = now + gap; // saturating
        let mut arm = None;
        if next < end && next < stop && crate::timer::arm_earlier(&mut c.send_timer, next) {
            arm = Some(next);
        }
        if let Some(at) = arm {
            self.events.push(at, Event::Agent(AgentTimer::CUdp(f)));
        }
        let handle = self.cp.headers.insert(header);
        let pkt = Packet {
            cp: CpHandle::some(handle),
            ..Packet::new(src, dst, f, size, now, Transport::Udp { seq, len })
        };
        self.forward(src, pkt)
    }

    /// A packet at `node` on its way to be forwarded: if `node` is an aggregation point of the
    /// packet's application, the AP stamps it (local AP) or reads and rewrites it (remote AP),
    /// and the packet's size follows its header's. `None`: the AP took the packet.
    pub(super) fn cp_through(&mut self, node: NodeId, mut pkt: Packet) -> Option<Packet> {
        let Some(handle) = pkt.cp.get() else {
            return Some(pkt);
        };
        if node == pkt.src {
            return Some(pkt);
        }
        let now = self.now;
        let (Some(h), Some(ap)) = (self.cp.headers.get_mut(handle), self.cp.aps.get_mut(&node))
        else {
            return Some(pkt);
        };
        let Some(app) = self.cp.apps.get(&h.app) else {
            return Some(pkt);
        };
        let (local, remote) = (app.local, app.remote);
        let before = h.encoded_len() as u32;
        let keep = if node == local {
            let payload = u64::from(pkt.size.saturating_sub(before));
            !matches!(ap.on_outbound(now, h, payload), Outbound::Rejected)
        } else if node == remote {
            !matches!(ap.on_inbound(now, h), Inbound::Consumed)
        } else {
            true
        };
        let after = h.encoded_len() as u32;
        pkt.size = pkt.size.saturating_sub(before).saturating_add(after);
        self.after_ap(node);
        if keep {
            Some(pkt)
        } else {
            self.cp.headers.remove(handle);
            None
        }
    }

    /// A packet with a CP header reached its destination: a control message for the AP there,
    /// or a C-UDP datagram for its sink.
    pub(super) fn deliver_cp(&mut self, pkt: Packet) {
        let now = self.now;
        let Some(mut h) = pkt.cp.get().and_then(|i| self.cp.headers.remove(i)) else {
            return;
        };
        if let Transport::CpControl = pkt.transport {
            if let Some(ap) = self.cp.aps.get_mut(&pkt.dst) {
                ap.on_inbound(now, &mut h);
                self.after_ap(pkt.dst);
            }
            return;
        }
        let after_warmup = now >= self.warmup;
        let Some(flow) = self.flows.get_mut(pkt.flow as usize) else {
            return;
        };
        if let (Transport::Udp { len, .. }, Agent::CUdp(c)) = (pkt.transport, &mut flow.agent) {
            c.received += 1;
            flow.delivered += u64::from(len);
            flow.goodput.add(now, u64::from(len));
            if after_warmup {
                flow.network.record(now.saturating_since(pkt.created));
            }
        }
    }

    /// Frees the CP header of a packet a queue dropped.
    pub(super) fn cp_dropped(&mut self, handle: Option<u32>) {
        if let Some(i) = handle {
            self.cp.headers.remove(i);
        }
    }

    /// After AP `n` did something: passes its estimate changes to the endpoints of the
    /// applications it is local for, and re-arms its timer.
    fn after_ap(&mut self, n: NodeId) {
        let mut news = Vec::new();
        if let Some(ap) = self.cp.aps.get_mut(&n) {
            while let Some(ApEvent::Estimate { app, estimate }) = ap.poll_event() {
                news.push((app, estimate));
            }
        }
        for (app, estimate) in news {
            if self.cp.apps.get(&app).is_some_and(|a| a.local == n) {
                self.share_estimate(app, estimate);
            }
        }
        self.arm_ap(n);
    }

    /// Schedules AP `n`'s next timer unless one at or before it is pending.
    fn arm_ap(&mut self, n: NodeId) {
        let now = self.now;
        let Some(at) = self.cp.aps.get(&n).and_then(AggregationPoint::poll_timeout) else {
            return;
        };
        // A deadline already passed is served at the next microsecond (never in a loop at now).
        let at = if at <= now {
            now + Duration::from_micros(1)
        } else {
            at
        };
        if at >= self.end {
            return;
        }
        if self.cp.ap_timers.get(&n).is_none_or(|&armed| at < armed) {
            self.cp.ap_timers.insert(n, at);
            self.events.push(at, Event::Stage(StageTimer::Ap(n)));
        }
    }
}
