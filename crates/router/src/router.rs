//! The router's packet processing, sans-IO: frames in with the port they arrived on and the
//! time, frames out with the port they leave by. No socket, no clock: the driver
//! ([`crate::run`]) reads both and calls [`Router::on_frame`], [`Router::poll_transmit`] and
//! [`Router::poll_timeout`].
//!
//! An IPv4 frame addressed to the arrival port's MAC is checked (RFC 1812 section 5.2.2), its
//! TTL lowered, routed by longest prefix to a neighbour, re-addressed to that neighbour's MAC
//! and offered to the output port's queue. A GCCP frame (EtherType 0x88B5, Liu, Cheung & Baras
//! section 3.1) from a GCCP neighbour on the port it arrived on is applied to that port's leaky
//! bucket (section 3.3). Anything else is counted under the reason it was not forwarded and
//! left alone; ARP and the rest go to the namespace's kernel, which sees every frame too.
//!
//! GCCA signals a port's detector raises become GCCP frames to the upstream neighbour that sent
//! the packet (section 3.2), addressed by [`NeighbourTable`] (padding for hosts), and go out at
//! once ahead of any queue: they are control traffic of a few bytes.

use crate::config::UdpProxy;
use crate::config::{NeighbourConfig, Role, Route, RouterConfig};
use crate::eca_edge::{Admit, FlowKey, ReflectEdge, WtpEdge};
use crate::ipv4;
use crate::port::{OutputPort, Packet, PortCounters, PortError};
use concord_cc::aqm::QueuedPacket;
use concord_cc::eca::load_codec::{decode_tos, encode_tos};
use concord_cc::gcca::message::{decode_frame, encode_frame};
use concord_cc::gcca::{
    ConnId, GccpCapability, GccpHost, LeakyBucket, Neighbour, NeighbourTable, NodeRole, Outgoing,
    Padding, Signal, TcpConnections, TcpWindow, GCCP_ETHERTYPE,
};
use concord_cc::rng::Rng;
use concord_cc::time::{Duration, Instant};
use std::collections::BTreeMap;
use std::collections::VecDeque;

/// The upstream number of a frame from a MAC address no neighbour has.
pub const UNKNOWN_UPSTREAM: u32 = u32::MAX;

const ETHERTYPE_IPV4: u16 = 0x0800;
const ETH_LEN: usize = 14;

/// Why frames were not forwarded, and what the router did; one counter per reason.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    /// Frames received.
    pub received: u64,
    /// IPv4 packets forwarded to a queue (admitted or not).
    pub forwarded: u64,
    /// Frames shorter than an Ethernet header.
    pub runt: u64,
    /// Frames neither IPv4 nor GCCP (ARP, IPv6: the kernel's business).
    pub other_ethertype: u64,
    /// IPv4 frames addressed to another MAC than the port's.
    pub not_for_us: u64,
    /// IPv4 packets with a malformed header.
    pub ipv4_malformed: u64,
    /// IPv4 packets with a wrong header checksum.
    pub ipv4_bad_checksum: u64,
    /// IPv4 packets whose TTL ran out (dropped; no ICMP is sent).
    pub ttl_expired: u64,
    /// IPv4 packets no route covers.
    pub no_route: u64,
    /// Frames the driver refused before processing (bad virtio-net header, GSO).
    pub offload_refused: u64,
    /// GCCP messages applied to a leaky bucket.
    pub gccp_applied: u64,
    /// GCCP frames that do not decode (bad version, code, options, length).
    pub gccp_malformed: u64,
    /// GCCP frames from a MAC that is no GCCP neighbour of the port they arrived on.
    pub gccp_spoofed: u64,
    /// GCCP messages for a port without a leaky bucket.
    pub gccp_no_bucket: u64,
    /// GCCP messages sent upstream.
    pub gccp_sent: u64,
    /// CONGESTION messages for a `ce_proxy` host also delivered as a CE mark.
    pub ce_proxy_marks: u64,
    /// UDP packets of a `udp_proxy` host dropped because its port's bucket held `udp_queue`.
    pub edge_drops: u64,
    /// Packets from a host (or an unknown MAC) into an ECA port whose TOS byte, the LOAD field,
    /// was not 0: the value was ignored.
    pub eca_host_load_ignored: u64,
    /// RLOADs taken from packets to a `wtp` host and applied to its flow's shaper.
    pub eca_rload_applied: u64,
    /// RLOADs for a `wtp` host's flow that has no shaper (ignored).
    pub eca_rload_unknown_flow: u64,
    /// LOADs recorded from packets delivered to an `eca_reflect` host.
    pub eca_load_recorded: u64,
    /// Packets from an `eca_reflect` host that left carrying an RLOAD.
    pub eca_rload_stamped: u64,
    /// Packets from an `eca_reflect` host that could not carry their RLOAD because they leave
    /// by an ECA port (whose LOAD would overwrite it).
    pub eca_rload_blocked: u64,
    /// Packets of a `wtp` host refused by their flow's full shaper queue (host-side drops).
    pub wtp_drops: u64,
    /// Packets of a `wtp` host sent on unshaped (more flows than shapers are kept for).
    pub wtp_unshaped: u64,
}

/// The router.
#[derive(Debug)]
pub struct Router {
    ports: Vec<OutputPort>,
    neighbours: Vec<NeighbourConfig>,
    routes: Vec<Route>,
    table: NeighbourTable,
    rng: Rng,
    counters: Counters,
    /// GCCP frames waiting to go out, with their port.
    control: VecDeque<(usize, Vec<u8>)>,
    signals: Vec<Signal>,
    /// The UDP leaky buckets run here for host neighbours (`udp_proxy`), by neighbour.
    edges: BTreeMap<u32, EdgeHost>,
    /// ECA's WTP shapers run here for host neighbours (`wtp`), by neighbour.
    wtp: BTreeMap<u32, WtpEdge<Held>>,
    /// ECA's load reflectors run here for host neighbours (`eca_reflect`), by neighbour.
    reflect: BTreeMap<u32, ReflectEdge>,
    /// Per port, its ingress propagation delay and the frames that arrived on it and are
    /// still held for it, with the time each is taken, in order.
    ingress: Vec<(Duration, HeldFrames)>,
}

/// Frames held by a port's ingress propagation delay: each with the time it is taken, in order.
type HeldFrames = VecDeque<(Instant, Vec<u8>)>;

/// A packet held by a host's UDP leaky bucket at its edge router.
#[derive(Debug)]
struct Held {
    out: usize,
    packet: Packet,
    upstream: u32,
    flow: Padding,
}

/// The edge router's stand-in for one host's UDP leaky buckets (section 3.3): the same
/// [`GccpHost`] dispatch a host runs, fed with the messages the router sends that host.
#[derive(Debug)]
struct EdgeHost {
    host: GccpHost,
    proxy: UdpProxy,
    held: BTreeMap<u16, VecDeque<Held>>,
}

/// A host's TCP connections, which the edge stand-in never holds.
struct NoTcp;

impl TcpConnections for NoTcp {
    fn window(&mut self, _conn: ConnId) -> Option<TcpWindow<'_>> {
        None
    }
}

impl Router {
    /// A router as configured; every port must have its MAC address.
    pub fn new(config: &RouterConfig) -> Result<Router, PortError> {
        let ports = config
            .ports
            .iter()
            .map(OutputPort::new)
            .collect::<Result<Vec<_>, _>>()?;
        let mut table = NeighbourTable::new();
        for (i, n) in config.neighbours.iter().enumerate() {
            table.insert(
                i as u32,
                Neighbour {
                    role: match n.role {
                        Role::Host => NodeRole::Host,
                        Role::Router => NodeRole::Router,
                    },
                    capability: if n.gccp {
                        GccpCapability::Capable
                    } else {
                        GccpCapability::Incapable
                    },
                },
            );
        }
        Ok(Router {
            ingress: config
                .ports
                .iter()
                .map(|p| (p.ingress_delay, VecDeque::new()))
                .collect(),
            ports,
            neighbours: config.neighbours.clone(),
            routes: config.routes.clone(),
            table,
            rng: Rng::new(config.seed),
            counters: Counters::default(),
            control: VecDeque::new(),
            signals: Vec::new(),
            edges: config
                .neighbours
                .iter()
                .enumerate()
                .filter_map(|(i, n)| {
                    n.udp_proxy.map(|proxy| {
                        (
                            i as u32,
                            EdgeHost {
                                host: GccpHost::new(),
                                proxy,
                                held: BTreeMap::new(),
                            },
                        )
                    })
                })
                .collect(),
            wtp: config
                .neighbours
                .iter()
                .enumerate()
                .filter_map(|(i, n)| n.wtp.map(|w| (i as u32, WtpEdge::new(w))))
                .collect(),
            reflect: config
                .neighbours
                .iter()
                .enumerate()
                .filter(|(_, n)| n.eca_reflect)
                .map(|(i, _)| (i as u32, ReflectEdge::new(Instant::ZERO)))
                .collect(),
        })
    }

    /// The router's counters.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// The ports.
    pub fn ports(&self) -> &[OutputPort] {
        &self.ports
    }

    /// Counts a frame the driver refused before processing.
    pub fn on_refused(&mut self) {
        self.counters.received += 1;
        self.counters.offload_refused += 1;
    }

    /// The neighbour on `port` with MAC `mac`, if any.
    fn neighbour_by_mac(&self, port: usize, mac: &[u8]) -> Option<usize> {
        self.neighbours
            .iter()
            .position(|n| n.port == port && n.mac[..] == *mac)
    }

    /// Processes a frame that arrived on port `port` at `now`, or, on a port with an ingress
    /// propagation delay, holds it until that delay is over (a later
    /// [`poll_transmit`](Self::poll_transmit) takes it). Never panics, whatever the bytes.
    pub fn on_frame(&mut self, now: Instant, port: usize, frame: &[u8]) {
        if let Some((delay, held)) = self.ingress.get_mut(port) {
            if *delay > Duration::ZERO {
                held.push_back((now + *delay, frame.to_vec()));
                return;
            }
        }
        self.take_frame(now, port, frame);
    }

    /// Takes in the frames whose ingress delay is over by `now`, each at the time it was due.
    fn take_held_frames(&mut self, now: Instant) {
        for port in 0..self.ingress.len() {
            while self.ingress[port].1.front().is_some_and(|&(t, _)| t <= now) {
                if let Some((t, frame)) = self.ingress[port].1.pop_front() {
                    self.take_frame(t, port, &frame);
                }
            }
        }
    }

    /// Frames held by ingress propagation delays.
    pub fn held_by_ingress_delay(&self) -> usize {
        self.ingress.iter().map(|(_, q)| q.len()).sum()
    }

    /// Processes a frame that arrived on port `port` at `now`.
    fn take_frame(&mut self, now: Instant, port: usize, frame: &[u8]) {
        self.counters.received += 1;
        if frame.len() < ETH_LEN || port >= self.ports.len() {
            self.counters.runt += 1;
            return;
        }
        let ethertype = u16::from_be_bytes([frame[12], frame[13]]);
        match ethertype {
            GCCP_ETHERTYPE => self.on_gccp(now, port, frame),
            ETHERTYPE_IPV4 => self.on_ipv4(now, port, frame),
            _ => self.counters.other_ethertype += 1,
        }
    }

    fn on_gccp(&mut self, now: Instant, port: usize, frame: &[u8]) {
        let Some(from) = self.neighbour_by_mac(port, &frame[6..12]) else {
            self.counters.gccp_spoofed += 1;
            return;
        };
        if !self.neighbours[from].gccp {
            self.counters.gccp_spoofed += 1;
            return;
        }
        let msg = match decode_frame(frame) {
            Ok((_, msg)) => msg,
            Err(_) => {
                self.counters.gccp_malformed += 1;
                return;
            }
        };
        // The message concerns the queue towards its sender: the port it arrived on.
        if self.ports[port].on_gccp(now, msg.code) {
            self.counters.gccp_applied += 1;
        } else {
            self.counters.gccp_no_bucket += 1;
        }
    }

    fn on_ipv4(&mut self, now: Instant, in_port: usize, frame: &[u8]) {
        if frame[0..6] != self.ports[in_port].mac {
            self.counters.not_for_us += 1;
            return;
        }
        let view = match ipv4::check(&frame[ETH_LEN..]) {
            Ok(v) => v,
            Err(ipv4::Ipv4Problem::Malformed) => {
                self.counters.ipv4_malformed += 1;
                return;
            }
            Err(ipv4::Ipv4Problem::BadChecksum) => {
                self.counters.ipv4_bad_checksum += 1;
                return;
            }
        };
        if view.ttl <= 1 {
            self.counters.ttl_expired += 1;
            return;
        }
        let Some(route) = self.routes.iter().find(|r| r.contains(view.dst)) else {
            self.counters.no_route += 1;
            return;
        };
        let next = &self.neighbours[route.via];
        let out = next.port;
        let upstream = self
            .neighbour_by_mac(in_port, &frame[6..12])
            .map_or(UNKNOWN_UPSTREAM, |i| i as u32);
        let flow = ipv4::flow(&frame[ETH_LEN..], &view);
        // The frame as it leaves: new addresses, the packet without link-layer padding.
        let mut out_frame = Vec::with_capacity(ETH_LEN + view.total_len);
        out_frame.extend_from_slice(&next.mac);
        out_frame.extend_from_slice(&self.ports[out].mac);
        out_frame.extend_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
        out_frame.extend_from_slice(&frame[ETH_LEN..ETH_LEN + view.total_len]);
        ipv4::decrement_ttl(&mut out_frame, ETH_LEN);
        // ECA (Barham, section V.A.1): the whole TOS byte is the LOAD field, and a host sends 0;
        // a host's non-zero LOAD is garbage or a spoof, ignored before the port stamps its L.
        let from_host = self
            .neighbours
            .get(upstream as usize)
            .is_none_or(|n| n.role == Role::Host);
        if self.ports[out].runs_eca() && from_host && out_frame[ETH_LEN + 1] != 0 {
            out_frame[ETH_LEN + 1] = 0;
            ipv4::fill_header_checksum(&mut out_frame, ETH_LEN);
            self.counters.eca_host_load_ignored += 1;
        }
        let key = FlowKey {
            src: flow.src_addr,
            src_port: flow.src_port,
            dst: flow.dst_addr,
            dst_port: flow.dst_port,
            protocol: view.protocol,
        };
        // ECA's end systems, stood in for at the edge: RLOAD for a WTP host's flow, RLOAD
        // reflected by a receiving host's packets.
        if let Some(w) = self.wtp.get_mut(&(route.via as u32)) {
            let code = out_frame[ETH_LEN + 1];
            if code != 0 {
                if w.on_rload(now, &key.reverse(), decode_tos(code)) {
                    self.counters.eca_rload_applied += 1;
                } else {
                    self.counters.eca_rload_unknown_flow += 1;
                }
                out_frame[ETH_LEN + 1] = 0;
                ipv4::fill_header_checksum(&mut out_frame, ETH_LEN);
            }
        }
        if let Some(r) = self.reflect.get(&upstream) {
            if let Some(rload) = r.rload(now, &key) {
                if self.ports[out].runs_eca() {
                    self.counters.eca_rload_blocked += 1;
                } else {
                    out_frame[ETH_LEN + 1] = encode_tos(rload);
                    ipv4::fill_header_checksum(&mut out_frame, ETH_LEN);
                    self.counters.eca_rload_stamped += 1;
                }
            }
        }
        let packet = Packet {
            frame: out_frame,
            ip_offset: ETH_LEN,
            flow: u32::from(flow.src_port) ^ u32::from(view.src).rotate_left(16),
            arrived: now,
        };
        self.counters.forwarded += 1;
        if let Some(w) = self.wtp.get_mut(&upstream) {
            let size = packet.size();
            let held = Held {
                out,
                packet,
                upstream,
                flow,
            };
            match w.admit(now, key, size, held) {
                Admit::Held => self.wtp_release(now),
                Admit::Full(_) => self.counters.wtp_drops += 1,
                Admit::Unshaped(h) => {
                    self.counters.wtp_unshaped += 1;
                    self.enqueue(now, h.out, h.packet, h.upstream, h.flow);
                }
            }
            return;
        }
        if view.protocol == 17 && self.edges.contains_key(&upstream) {
            self.edge_admit(now, out, packet, upstream, flow);
            return;
        }
        self.enqueue(now, out, packet, upstream, flow);
    }

    /// Offers the packets the WTP shapers let go at `now` to their output ports.
    fn wtp_release(&mut self, now: Instant) {
        let mut ready = Vec::new();
        for w in self.wtp.values_mut() {
            while let Some(h) = w.poll_transmit(now) {
                ready.push(h);
            }
        }
        for h in ready {
            self.enqueue(now, h.out, h.packet, h.upstream, h.flow);
        }
    }

    /// A packet leaves port `port` at `now`: if it goes to an `eca_reflect` host, its LOAD is
    /// recorded for the flow and its TOS byte cleared (the host's kernel has no use for it).
    fn reflect_on_delivery(&mut self, now: Instant, port: usize, frame: &mut [u8]) {
        if self.reflect.is_empty() || frame.len() < ETH_LEN + 20 {
            return;
        }
        let Some(to) = self
            .neighbours
            .iter()
            .position(|n| n.port == port && n.eca_reflect && n.mac[..] == frame[0..6])
        else {
            return;
        };
        let Ok(view) = ipv4::check(&frame[ETH_LEN..]) else {
            return;
        };
        let code = frame[ETH_LEN + 1];
        if code == 0 {
            return;
        }
        let flow = ipv4::flow(&frame[ETH_LEN..], &view);
        let key = FlowKey {
            src: flow.src_addr,
            src_port: flow.src_port,
            dst: flow.dst_addr,
            dst_port: flow.dst_port,
            protocol: view.protocol,
        };
        if let Some(r) = self.reflect.get_mut(&(to as u32)) {
            if r.on_load(now, key, decode_tos(code)) {
                self.counters.eca_load_recorded += 1;
            }
        }
        frame[ETH_LEN + 1] = 0;
        ipv4::fill_header_checksum(frame, ETH_LEN);
    }

    /// A UDP packet from a host whose leaky buckets run here: through its port's bucket, or
    /// held behind it.
    fn edge_admit(
        &mut self,
        now: Instant,
        out: usize,
        packet: Packet,
        upstream: u32,
        flow: Padding,
    ) {
        let Some(edge) = self.edges.get_mut(&upstream) else {
            return;
        };
        let port = flow.src_port;
        if edge.host.udp_bucket(port).is_none() {
            if let Ok(b) = LeakyBucket::new(edge.proxy.bucket) {
                edge.host.attach_udp(port, b);
            }
        }
        let held = edge.held.entry(port).or_default();
        let size = packet.size();
        let free = held.is_empty()
            && edge
                .host
                .udp_bucket(port)
                .is_none_or(|b| b.can_send(now, size));
        if free {
            if let Some(b) = edge.host.udp_bucket_mut(port) {
                b.on_send(now, size);
            }
            self.enqueue(now, out, packet, upstream, flow);
        } else if held.len() < edge.proxy.queue {
            held.push_back(Held {
                out,
                packet,
                upstream,
                flow,
            });
        } else {
            self.counters.edge_drops += 1;
        }
    }

    /// Releases the held packets whose buckets allow them at `now`.
    fn edge_release(&mut self, now: Instant) {
        let mut ready = Vec::new();
        for edge in self.edges.values_mut() {
            for (port, held) in edge.held.iter_mut() {
                while let Some(h) = held.front() {
                    let size = h.packet.size();
                    let Some(b) = edge.host.udp_bucket_mut(*port) else {
                        break;
                    };
                    if !b.can_send(now, size) {
                        break;
                    }
                    b.on_send(now, size);
                    if let Some(h) = held.pop_front() {
                        ready.push(h);
                    }
                }
            }
        }
        for h in ready {
            self.enqueue(now, h.out, h.packet, h.upstream, h.flow);
        }
    }

    /// Offers a packet to output port `out` and sends the signals its discipline raises.
    fn enqueue(&mut self, now: Instant, out: usize, packet: Packet, upstream: u32, flow: Padding) {
        let admission = self.ports[out].enqueue(now, packet, upstream, &mut self.rng);
        for s in admission.signals {
            let proxy = self
                .neighbours
                .get(s.upstream as usize)
                .is_some_and(|n| n.ce_proxy);
            if proxy && s.code == concord_cc::gcca::Code::Congestion && self.ports[out].mark_last()
            {
                self.counters.ce_proxy_marks += 1;
            }
            self.signal(now, s, Some(flow));
        }
    }

    /// Turns a detector's signal into GCCP frames on the port of the neighbour it goes to.
    fn signal(&mut self, now: Instant, signal: Signal, flow: Option<Padding>) {
        let mut out: Vec<Outgoing> = Vec::new();
        self.table.address(signal, flow, &mut out);
        for o in out {
            if let Some(edge) = self.edges.get_mut(&o.to) {
                edge.host.on_message(now, &o.message, &mut NoTcp);
            }
            let Some(n) = self.neighbours.get(o.to as usize) else {
                continue;
            };
            let mut frame = Vec::with_capacity(ETH_LEN + 16);
            encode_frame(self.ports[n.port].mac, n.mac, &o.message, &mut frame);
            // Ethernet's minimum frame: 60 bytes before the FCS.
            frame.resize(frame.len().max(60), 0);
            self.control.push_back((n.port, frame));
            self.counters.gccp_sent += 1;
        }
    }

    /// The next frame to send at `now` and its port: GCCP messages first, then any port whose
    /// token clock and leaky bucket allow a packet.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<(usize, Vec<u8>)> {
        self.take_held_frames(now);
        if let Some(c) = self.control.pop_front() {
            return Some(c);
        }
        self.edge_release(now);
        self.wtp_release(now);
        if let Some(c) = self.control.pop_front() {
            return Some(c);
        }
        for i in 0..self.ports.len() {
            let mut signals = std::mem::take(&mut self.signals);
            let packet = self.ports[i].poll_transmit(now, &mut signals);
            for s in signals.drain(..) {
                self.signal(now, s, None);
            }
            self.signals = signals;
            if let Some(mut p) = packet {
                self.reflect_on_delivery(now, i, &mut p.frame);
                return Some((i, p.frame));
            }
            if let Some(c) = self.control.pop_front() {
                return Some(c);
            }
        }
        None
    }

    /// When [`poll_transmit`](Self::poll_transmit) next has something, if anything is queued.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        if !self.control.is_empty() {
            return Some(now);
        }
        let ports = self.ports.iter().filter_map(|p| p.poll_timeout(now));
        let held = self.edges.values().flat_map(|e| {
            e.held.iter().filter_map(move |(port, q)| {
                let size = q.front()?.packet.size();
                let b = e.host.udp_bucket(*port)?;
                let at = b.next_departure(now, size);
                // While the rate ramps, an earlier departure may open up at the next step.
                Some(b.next_rate_change(now).map_or(at, |c| c.min(at)))
            })
        });
        let shaped = self.wtp.values().filter_map(WtpEdge::poll_timeout);
        let arriving = self
            .ingress
            .iter()
            .filter_map(|(_, q)| q.front().map(|&(t, _)| t));
        ports.chain(held).chain(shaped).chain(arriving).min()
    }

    /// The status as text: one `key value` line per counter, then one block per port.
    pub fn status(&self, now: Instant) -> String {
        let c = self.counters;
        let mut s = String::new();
        let fields: [(&str, u64); 25] = [
            ("received", c.received),
            ("forwarded", c.forwarded),
            ("runt", c.runt),
            ("other_ethertype", c.other_ethertype),
            ("not_for_us", c.not_for_us),
            ("ipv4_malformed", c.ipv4_malformed),
            ("ipv4_bad_checksum", c.ipv4_bad_checksum),
            ("ttl_expired", c.ttl_expired),
            ("no_route", c.no_route),
            ("offload_refused", c.offload_refused),
            ("gccp_applied", c.gccp_applied),
            ("gccp_malformed", c.gccp_malformed),
            ("gccp_spoofed", c.gccp_spoofed),
            ("gccp_no_bucket", c.gccp_no_bucket),
            ("gccp_sent", c.gccp_sent),
            ("ce_proxy_marks", c.ce_proxy_marks),
            ("edge_drops", c.edge_drops),
            ("eca_host_load_ignored", c.eca_host_load_ignored),
            ("eca_rload_applied", c.eca_rload_applied),
            ("eca_rload_unknown_flow", c.eca_rload_unknown_flow),
            ("eca_load_recorded", c.eca_load_recorded),
            ("eca_rload_stamped", c.eca_rload_stamped),
            ("eca_rload_blocked", c.eca_rload_blocked),
            ("wtp_drops", c.wtp_drops),
            ("wtp_unshaped", c.wtp_unshaped),
        ];
        for (k, v) in fields {
            s += &format!("{k} {v}\n");
        }
        for p in &self.ports {
            let pc: PortCounters = p.counters();
            s += &format!(
                "port {} rate_bps {} queue_packets {} enqueued {} sent {} sent_bytes {} drops_full {} drops_early {} marks {} max_queue {} gccp_congestion {} gccp_normal {} clock_lost_us {}",
                p.name,
                p.rate(now).bps(),
                p.len().packets,
                pc.enqueued,
                pc.sent,
                pc.sent_bytes,
                pc.drops_full,
                pc.drops_early,
                pc.marks,
                pc.max_queue,
                pc.gccp_congestion,
                pc.gccp_normal,
                pc.clock_lost_us
            );
            if let Some(l) = p.eca_load() {
                // L in thousandths, so that the status stays integer.
                s += &format!(" eca_load_milli {}", (l * 1000.0).round() as u64);
            }
            for (a, (early, full)) in p.drops_by_source() {
                let src = format!("src_{}_{}_{}_{}", a[0], a[1], a[2], a[3]);
                s += &format!(" {src}_drops_early {early} {src}_drops_full {full}");
            }
            let delay = p.delay();
            s += &format!(" delay_samples {}", delay.total());
            if let Some(q) = crate::delay::quantile_us(&delay.bins(), 0.9) {
                s += &format!(" delay_p90_us {q}");
            }
            for (edge, count) in delay.bins() {
                if edge == u64::MAX {
                    s += &format!(" delay_bin_inf {count}");
                } else {
                    s += &format!(" delay_bin_{edge} {count}");
                }
            }
            if let Some(d) = p.detector_stats() {
                s += &format!(
                    " detector_selected {} congestion_sent {} congestion_suppressed {} normal_sent {}",
                    d.selected, d.congestion_sent, d.congestion_suppressed, d.normal_sent
                );
            }
            s += "\n";
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::gcca::{Code, GccpMessage};

    const A_MAC: [u8; 6] = [2, 0, 0, 0, 1, 0xfe];
    const B_MAC: [u8; 6] = [2, 0, 0, 0, 2, 0xfe];
    const HOST_A: [u8; 6] = [2, 0, 0, 0, 1, 1];
    const ROUTER_B: [u8; 6] = [2, 0, 0, 0, 2, 2];

    fn config(queue_b: &str) -> RouterConfig {
        let text = format!(
            r#"
            [[port]]
            name = "a"
            rate = "10Mbps"
            mac = "02:00:00:00:01:fe"
            [[port]]
            name = "b"
            rate = "1Mbps"
            queue = "{queue_b}"
            limit = "20pkt"
            min_th = 2
            max_th = 6
            w_q = 1.0
            throttle = true
            mac = "02:00:00:00:02:fe"
            [[neighbour]]
            port = "a"
            ip = "10.9.1.1"
            mac = "02:00:00:00:01:01"
            gccp = true
            [[neighbour]]
            port = "b"
            ip = "10.9.2.2"
            mac = "02:00:00:00:02:02"
            role = "router"
            gccp = true
            [[route]]
            dst = "10.9.3.0/24"
            via = "10.9.2.2"
            [[route]]
            dst = "10.9.1.0/24"
            via = "10.9.1.1"
            "#
        );
        RouterConfig::parse(&text).expect("valid")
    }

    /// A UDP frame from host A to 10.9.3.1, addressed to port a.
    fn from_a(payload: usize) -> Vec<u8> {
        let mut f = ipv4::tests::udp_frame(payload);
        f[0..6].copy_from_slice(&A_MAC);
        f[6..12].copy_from_slice(&HOST_A);
        f
    }

    fn gccp(src: [u8; 6], code: Code) -> Vec<u8> {
        let mut f = Vec::new();
        encode_frame(
            src,
            B_MAC,
            &GccpMessage {
                code,
                padding: None,
            },
            &mut f,
        );
        f
    }

    #[test]
    fn a_packet_is_routed_readdressed_and_its_ttl_lowered() {
        let mut r = Router::new(&config("droptail")).expect("valid");
        r.on_frame(Instant::ZERO, 0, &from_a(100));
        let (port, frame) = r.poll_transmit(Instant::ZERO).expect("sent");
        assert_eq!(port, 1);
        assert_eq!(frame[0..6], ROUTER_B);
        assert_eq!(frame[6..12], B_MAC);
        assert_eq!(frame[14 + 8], 63);
        assert!(ipv4::header_checksum_ok(&frame, 14));
        assert_eq!(frame.len(), 14 + 20 + 8 + 100);
        assert_eq!(r.counters().forwarded, 1);
        assert_eq!(r.poll_transmit(Instant::ZERO), None);
    }

    #[test]
    fn a_port_with_an_ingress_delay_takes_its_frames_that_much_later_in_order() {
        let mut c = config("droptail");
        c.ports[0].ingress_delay = Duration::from_millis(50);
        let mut r = Router::new(&c).expect("valid");
        let ms = Instant::from_millis;
        r.on_frame(ms(0), 0, &from_a(100));
        r.on_frame(ms(2), 0, &from_a(200));
        // Held: not yet received, nothing to send, the router wakes at 50 ms.
        assert_eq!(r.counters().received, 0);
        assert_eq!(r.held_by_ingress_delay(), 2);
        assert_eq!(r.poll_transmit(ms(49)), None);
        assert_eq!(r.poll_timeout(ms(49)), Some(ms(50)));
        // At 50 ms the first is taken and forwarded; the second waits for 52 ms.
        let (port, frame) = r.poll_transmit(ms(50)).expect("forwarded");
        assert_eq!((port, frame.len()), (1, 14 + 20 + 8 + 100));
        assert_eq!(r.counters().received, 1);
        assert_eq!(r.poll_timeout(ms(50)), Some(ms(52)));
        // The second is taken at 52 ms; port b (1 Mbit/s) finished the first 142-byte frame
        // at 51.136 ms, so it goes at once.
        assert_eq!(r.poll_transmit(Instant::from_micros(51_999)), None);
        let (_, frame) = r.poll_transmit(ms(52)).expect("forwarded");
        assert_eq!(frame.len(), 14 + 20 + 8 + 200);
        assert_eq!((r.counters().received, r.held_by_ingress_delay()), (2, 0));
    }

    #[test]
    fn malformed_frames_are_counted_by_reason_and_never_forwarded() {
        let mut r = Router::new(&config("red")).expect("valid");
        let good = from_a(20);
        let mut bad_sum = good.clone();
        bad_sum[14 + 8] = 9;
        let mut ttl1 = good.clone();
        ttl1[14 + 8] = 1;
        ipv4::fill_header_checksum(&mut ttl1, 14);
        let mut no_route = good.clone();
        no_route[14 + 16..14 + 20].copy_from_slice(&[192, 168, 0, 1]);
        ipv4::fill_header_checksum(&mut no_route, 14);
        let mut other_mac = good.clone();
        other_mac[0] = 0xff;
        let mut arp = good.clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        let mut truncated_ip = good.clone();
        truncated_ip.truncate(14 + 10);
        for f in [
            &bad_sum[..],
            &ttl1,
            &no_route,
            &other_mac,
            &arp,
            &truncated_ip,
            &good[..5],
            &[],
        ] {
            r.on_frame(Instant::ZERO, 0, f);
        }
        r.on_frame(Instant::ZERO, 7, &good);
        let c = r.counters();
        assert_eq!(c.ipv4_bad_checksum, 1);
        assert_eq!(c.ttl_expired, 1);
        assert_eq!(c.no_route, 1);
        assert_eq!(c.not_for_us, 1);
        assert_eq!(c.other_ethertype, 1);
        assert_eq!(c.ipv4_malformed, 1);
        assert_eq!(c.runt, 3);
        assert_eq!(c.forwarded, 0);
        assert_eq!(r.poll_transmit(Instant::ZERO), None);
    }

    #[test]
    fn random_bytes_never_panic_and_are_all_counted() {
        let mut r = Router::new(&config("gcca")).expect("valid");
        let mut rng = Rng::new(42);
        let n = 20_000;
        for i in 0..n {
            let len = rng.below(120) as usize;
            let mut f: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
            // Half of them look like IPv4 or GCCP to us, to reach the deeper checks.
            if len >= 14 && i % 2 == 0 {
                f[0..6].copy_from_slice(&B_MAC);
                f[6..12].copy_from_slice(&ROUTER_B);
                let et = if i % 4 == 0 {
                    0x0800u16
                } else {
                    GCCP_ETHERTYPE
                };
                f[12..14].copy_from_slice(&et.to_be_bytes());
            }
            r.on_frame(Instant::from_micros(i), 1, &f);
            while r.poll_transmit(Instant::from_micros(i)).is_some() {}
        }
        let c = r.counters();
        assert_eq!(c.received, n);
        let accounted = c.forwarded
            + c.runt
            + c.other_ethertype
            + c.not_for_us
            + c.ipv4_malformed
            + c.ipv4_bad_checksum
            + c.ttl_expired
            + c.no_route
            + c.gccp_applied
            + c.gccp_malformed
            + c.gccp_spoofed
            + c.gccp_no_bucket;
        assert_eq!(accounted, n);
        assert!(c.gccp_malformed > 1000, "{c:?}");
    }

    #[test]
    fn congestion_from_the_downstream_router_throttles_its_port_and_normal_restores_it() {
        let mut r = Router::new(&config("droptail")).expect("valid");
        r.on_frame(Instant::ZERO, 1, &gccp(ROUTER_B, Code::Congestion));
        assert_eq!(r.ports()[1].rate(Instant::ZERO).bps(), 900_000);
        r.on_frame(Instant::ZERO, 1, &gccp(ROUTER_B, Code::Normal));
        assert_eq!(r.ports()[1].rate(Instant::ZERO).bps(), 1_000_000);
        assert_eq!(r.counters().gccp_applied, 2);
    }

    #[test]
    fn spoofed_and_garbled_gccp_frames_are_counted_and_change_nothing() {
        let mut r = Router::new(&config("droptail")).expect("valid");
        // From a MAC that is no neighbour.
        r.on_frame(
            Instant::ZERO,
            1,
            &gccp([2, 9, 9, 9, 9, 9], Code::Congestion),
        );
        // From a real neighbour, but on another port than its own.
        r.on_frame(Instant::ZERO, 0, &gccp(ROUTER_B, Code::Congestion));
        // From the right neighbour, with version 2, then CODE 7, then cut short.
        let mut v2 = gccp(ROUTER_B, Code::Congestion);
        v2[14] = 2;
        let mut code7 = gccp(ROUTER_B, Code::Congestion);
        code7[17] = 7;
        let short = gccp(ROUTER_B, Code::Congestion)[..16].to_vec();
        for f in [&v2, &code7, &short] {
            r.on_frame(Instant::ZERO, 1, f);
        }
        let c = r.counters();
        assert_eq!(c.gccp_spoofed, 2);
        assert_eq!(c.gccp_malformed, 3);
        assert_eq!(c.gccp_applied, 0);
        assert_eq!(r.ports()[1].rate(Instant::ZERO).bps(), 1_000_000);
    }

    #[test]
    fn a_gcca_port_tells_the_upstream_host_congestion_with_the_flow_and_then_normal() {
        let mut r = Router::new(&config("gcca")).expect("valid");
        // w_q = 1: avg is the queue; min_th 2, max_th 6. Fill past max_th without sending.
        let mut sent = Vec::new();
        for _ in 0..8 {
            r.on_frame(Instant::ZERO, 0, &from_a(1000));
        }
        while let Some((port, f)) = r.poll_transmit(Instant::ZERO) {
            sent.push((port, f));
        }
        let gccp_frames: Vec<_> = sent
            .iter()
            .filter(|(_, f)| f[12..14] == GCCP_ETHERTYPE.to_be_bytes())
            .collect();
        assert_eq!(
            gccp_frames.len(),
            1,
            "one CONGESTION, the rest rate-limited"
        );
        let (port, f) = gccp_frames[0];
        assert_eq!(*port, 0);
        assert_eq!(f[0..6], HOST_A);
        assert_eq!(f[6..12], A_MAC);
        let (_, msg) = decode_frame(f).expect("decodes");
        assert_eq!(msg.code, Code::Congestion);
        let p = msg.padding.expect("padding for a host");
        assert_eq!((p.src_port, p.dst_port), (5004, 6000));
        assert_eq!(r.counters().gccp_sent, 1);
        // No packet was lost: GCCA queues what RED would have dropped.
        assert_eq!(r.ports()[1].counters().drops_early, 0);
        assert_eq!(r.ports()[1].len().packets, 7);
        // Drain: once avg falls to min_th, NORMAL goes to the host.
        let mut t = Instant::ZERO;
        let mut normal = None;
        for _ in 0..100 {
            t += concord_cc::time::Duration::from_millis(9);
            while let Some((port, f)) = r.poll_transmit(t) {
                if f[12..14] == GCCP_ETHERTYPE.to_be_bytes() {
                    normal = Some((port, decode_frame(&f).expect("decodes").1));
                }
            }
        }
        let (port, msg) = normal.expect("NORMAL sent");
        assert_eq!(port, 0);
        assert_eq!(msg.code, Code::Normal);
        assert_eq!(r.counters().gccp_sent, 2);
    }

    fn proxied(extra: &str) -> RouterConfig {
        let text = format!(
            r#"
            [[port]]
            name = "a"
            rate = "100Mbps"
            mac = "02:00:00:00:01:fe"
            [[port]]
            name = "b"
            rate = "1Mbps"
            queue = "gcca"
            limit = "50pkt"
            min_th = 2
            max_th = 6
            w_q = 1.0
            mac = "02:00:00:00:02:fe"
            [[neighbour]]
            port = "a"
            ip = "10.9.1.1"
            mac = "02:00:00:00:01:01"
            gccp = true
            {extra}
            [[neighbour]]
            port = "b"
            ip = "10.9.2.2"
            mac = "02:00:00:00:02:02"
            role = "router"
            gccp = true
            [[route]]
            dst = "10.9.3.0/24"
            via = "10.9.2.2"
            "#
        );
        RouterConfig::parse(&text).expect("valid")
    }

    #[test]
    fn a_ce_proxy_host_gets_its_congestion_as_a_ce_mark_on_the_packet_that_raised_it() {
        let mut r = Router::new(&proxied("ce_proxy = true")).expect("valid");
        let mut ect = from_a(1000);
        ect[15] = 0x02;
        ipv4::fill_header_checksum(&mut ect, 14);
        for _ in 0..8 {
            r.on_frame(Instant::ZERO, 0, &ect);
        }
        assert_eq!(r.counters().gccp_sent, 1);
        assert_eq!(r.counters().ce_proxy_marks, 1);
        let mut ce = 0;
        let mut t = Instant::ZERO;
        for _ in 0..200 {
            t += concord_cc::time::Duration::from_millis(9);
            while let Some((_, f)) = r.poll_transmit(t) {
                if f[12..14] == ETHERTYPE_IPV4.to_be_bytes() && f[15] & 3 == 3 {
                    ce += 1;
                }
            }
        }
        assert_eq!(ce, 1, "exactly the packet that raised CONGESTION is marked");
    }

    #[test]
    fn a_udp_proxy_host_is_held_to_its_bucket_after_congestion() {
        let mut r = Router::new(&proxied("udp_rate = \"8Mbps\"\nudp_queue = 4")).expect("valid");
        // 1042-byte frames at 8 Mbit/s: the bucket passes about one per 1.04 ms. Until the
        // detector speaks, a burst within the burst allowance goes through; then CONGESTION
        // lowers the host's bucket by 10% and later packets wait behind it.
        for _ in 0..8 {
            r.on_frame(Instant::ZERO, 0, &from_a(1000));
        }
        let c = r.counters();
        assert_eq!(c.forwarded, 8);
        // One passed (the burst), four are held, three found the hold full.
        assert_eq!(r.ports()[1].counters().enqueued, 1);
        assert_eq!(c.edge_drops, 3);
        // The bucket releases the held ones at its rate, none at once.
        while r.poll_transmit(Instant::ZERO).is_some() {}
        assert_eq!(r.ports()[1].counters().enqueued, 1);
        for ms in 1..=10 {
            while r.poll_transmit(Instant::from_millis(ms)).is_some() {}
        }
        assert_eq!(r.ports()[1].counters().enqueued, 5);
    }

    fn eca_config() -> RouterConfig {
        let text = r#"
            [[port]]
            name = "a"
            rate = "10Mbps"
            mac = "02:00:00:00:01:fe"
            [[port]]
            name = "b"
            rate = "1Mbps"
            eca = true
            limit = "1000pkt"
            mac = "02:00:00:00:02:fe"
            [[neighbour]]
            port = "a"
            ip = "10.9.1.1"
            mac = "02:00:00:00:01:01"
            [[neighbour]]
            port = "a"
            ip = "10.9.1.2"
            mac = "02:00:00:00:01:02"
            role = "router"
            [[neighbour]]
            port = "b"
            ip = "10.9.2.2"
            mac = "02:00:00:00:02:02"
            role = "router"
            [[route]]
            dst = "10.9.3.0/24"
            via = "10.9.2.2"
        "#;
        RouterConfig::parse(text).expect("valid")
    }

    /// A frame from the neighbour with MAC `src`, carrying `tos`.
    fn with_tos(src: [u8; 6], tos: u8) -> Vec<u8> {
        let mut f = from_a(1000);
        f[6..12].copy_from_slice(&src);
        f[15] = tos;
        ipv4::fill_header_checksum(&mut f, 14);
        f
    }

    /// The TOS bytes of everything sent from `from` over the next second, in order.
    fn sent_tos(r: &mut Router, from: Instant) -> Vec<u8> {
        let mut v = Vec::new();
        for ms in 0..1000 {
            let now = from + concord_cc::time::Duration::from_millis(ms);
            while let Some((_, f)) = r.poll_transmit(now) {
                assert!(ipv4::header_checksum_ok(&f, 14));
                v.push(f[15]);
            }
        }
        v
    }

    #[test]
    fn an_eca_port_stamps_its_load_and_raises_it_after_an_overloaded_interval() {
        use concord_cc::eca::load_codec::encode_tos;
        let mut r = Router::new(&eca_config()).expect("valid");
        // L starts at 1: code 128.
        r.on_frame(Instant::ZERO, 0, &with_tos(HOST_A, 0));
        let (_, first) = r.poll_transmit(Instant::ZERO).expect("sent at once");
        assert_eq!(first[15], 128);
        // 1 Mbit/s at 90% serves 11,250 bytes per 100 ms; 20 frames of 1042 bytes exceed it,
        // so the next interval starts with L = 1.05 (section IV.A.2).
        for _ in 0..20 {
            r.on_frame(Instant::from_millis(50), 0, &with_tos(HOST_A, 0));
        }
        r.on_frame(Instant::from_millis(120), 0, &with_tos(HOST_A, 0));
        let tos = sent_tos(&mut r, Instant::from_secs(10));
        assert_eq!(tos.last().copied(), Some(encode_tos(1.05)));
        assert_eq!(r.ports()[1].eca_load(), Some(1.05));
    }

    #[test]
    fn a_hosts_load_is_garbage_and_ignored_a_routers_is_kept_by_max() {
        let mut r = Router::new(&eca_config()).expect("valid");
        r.on_frame(Instant::ZERO, 0, &with_tos(HOST_A, 200));
        r.on_frame(Instant::ZERO, 0, &with_tos([2, 0, 0, 0, 1, 2], 200));
        r.on_frame(Instant::ZERO, 0, &with_tos([2, 0, 0, 0, 1, 2], 7));
        assert_eq!(sent_tos(&mut r, Instant::from_secs(1)), [128, 200, 128]);
        assert_eq!(r.counters().eca_host_load_ignored, 1);
    }

    /// Host A (port a, 10 Mbit/s) and router B (port b, 100 Mbit/s, no ECA), host A with the
    /// neighbour keys `host_keys`.
    fn edge_config(host_keys: &str) -> RouterConfig {
        let text = format!(
            r#"
            [[port]]
            name = "a"
            rate = "10Mbps"
            mac = "02:00:00:00:01:fe"
            [[port]]
            name = "b"
            rate = "100Mbps"
            limit = "1000pkt"
            mac = "02:00:00:00:02:fe"
            [[neighbour]]
            port = "a"
            ip = "10.9.1.1"
            mac = "02:00:00:00:01:01"
            {host_keys}
            [[neighbour]]
            port = "b"
            ip = "10.9.2.2"
            mac = "02:00:00:00:02:02"
            role = "router"
            [[route]]
            dst = "10.9.3.0/24"
            via = "10.9.2.2"
            [[route]]
            dst = "10.9.1.1/32"
            via = "10.9.1.1"
        "#
        );
        RouterConfig::parse(&text).expect("valid")
    }

    /// The reverse of `from_a(1000)`'s flow (10.9.3.1:6000 -> 10.9.1.1:5004) from router B,
    /// carrying `tos`.
    fn to_a(tos: u8) -> Vec<u8> {
        let mut f = from_a(1000);
        f[0..6].copy_from_slice(&B_MAC);
        f[6..12].copy_from_slice(&ROUTER_B);
        let (src, dst) = (f[26..30].to_vec(), f[30..34].to_vec());
        f[26..30].copy_from_slice(&dst);
        f[30..34].copy_from_slice(&src);
        let (sp, dp) = (f[34..36].to_vec(), f[36..38].to_vec());
        f[34..36].copy_from_slice(&dp);
        f[36..38].copy_from_slice(&sp);
        f[15] = tos;
        ipv4::fill_header_checksum(&mut f, 14);
        f
    }

    #[test]
    fn a_wtp_hosts_flow_takes_its_rload_off_the_reply_and_is_paced_at_weight_over_load() {
        use concord_cc::eca::load_codec::encode_tos;
        use concord_cc::time::Duration;
        let mut r = Router::new(&edge_config(
            "wtp_weight = \"400kbps\"\n            wtp_queue = 300",
        ))
        .expect("valid");
        // Before any RLOAD the flow is unshaped.
        r.on_frame(Instant::ZERO, 0, &from_a(1000));
        assert_eq!(r.poll_transmit(Instant::ZERO).map(|(p, _)| p), Some(1));
        // The reply carries RLOAD 0.5 in its TOS byte: applied, and cleared before host A.
        r.on_frame(Instant::ZERO, 1, &to_a(encode_tos(0.5)));
        let (port, reply) = r.poll_transmit(Instant::ZERO).expect("the reply goes on");
        assert_eq!(port, 0);
        assert_eq!(reply[15], 0);
        assert!(ipv4::header_checksum_ok(&reply, 14));
        assert_eq!(r.counters().eca_rload_applied, 1);
        // A reply of a flow without a shaper is counted and its TOS cleared all the same.
        let mut other = to_a(encode_tos(0.5));
        other[37] ^= 1;
        ipv4::fill_header_checksum(&mut other, 14);
        r.on_frame(Instant::ZERO, 1, &other);
        // (Port a is busy with the first reply for 0.83 ms.)
        let t = Instant::from_millis(1);
        assert_eq!(r.poll_transmit(t).map(|(_, f)| f[15]), Some(0));
        assert_eq!(r.counters().eca_rload_unknown_flow, 1);
        // r = 400 kbit/s / 0.5 = 800 kbit/s. At 1 s the 16 KiB bucket is full again: 15 frames
        // of 1042 bytes go at once, and (754 + 100,000) bytes of tokens over the next second
        // let 96 more go by 2 s.
        let t1 = Instant::from_secs(1);
        for _ in 0..200 {
            r.on_frame(t1, 0, &from_a(1000));
        }
        let mut sent = 0;
        for us in (0..=1_000_000).step_by(100) {
            while r.poll_transmit(t1 + Duration::from_micros(us)).is_some() {
                sent += 1;
            }
        }
        assert_eq!(sent, 15 + 96);
        assert_eq!(r.counters().wtp_drops, 0);
        assert_eq!(r.ports()[1].counters().drops_full, 0);
    }

    #[test]
    fn a_receiving_hosts_load_is_recorded_at_delivery_and_reflected_on_its_replies() {
        use concord_cc::eca::load_codec::encode_tos;
        let mut r = Router::new(&edge_config("eca_reflect = true")).expect("valid");
        let code = encode_tos(0.7);
        r.on_frame(Instant::ZERO, 1, &to_a(code));
        let (port, delivered) = r.poll_transmit(Instant::ZERO).expect("delivered");
        assert_eq!(port, 0);
        assert_eq!(delivered[15], 0, "host A's kernel gets a clean TOS byte");
        assert!(ipv4::header_checksum_ok(&delivered, 14));
        assert_eq!(r.counters().eca_load_recorded, 1);
        // Host A's reply on the same flow carries the LOAD back as RLOAD; another flow's not.
        r.on_frame(Instant::ZERO, 0, &from_a(1000));
        let mut other = from_a(1000);
        other[35] ^= 1;
        ipv4::fill_header_checksum(&mut other, 14);
        r.on_frame(Instant::ZERO, 0, &other);
        let tos = sent_tos(&mut r, Instant::ZERO);
        assert_eq!(tos, [code, 0]);
        assert_eq!(r.counters().eca_rload_stamped, 1);
        // A second later the record is stale (1 s) and nothing is reflected.
        r.on_frame(Instant::from_millis(1_001), 0, &from_a(1000));
        assert_eq!(sent_tos(&mut r, Instant::from_millis(1_001)), [0]);
    }

    #[test]
    fn wtp_and_reflection_are_for_host_neighbours_only() {
        let bad = r#"
            [[port]]
            name = "b"
            rate = "100Mbps"
            mac = "02:00:00:00:02:fe"
            [[neighbour]]
            port = "b"
            ip = "10.9.2.2"
            mac = "02:00:00:00:02:02"
            role = "router"
            wtp_weight = "1Mbps"
        "#;
        let e = RouterConfig::parse(bad).expect_err("a router has no WTP shaper here");
        assert!(e.to_string().contains("only a host neighbour"), "{e}");
        let zero = bad
            .replace("role = \"router\"", "")
            .replace("1Mbps", "0bps");
        let e = RouterConfig::parse(&zero).expect_err("a weight of zero");
        assert!(e.to_string().contains("positive weight"), "{e}");
    }
}
