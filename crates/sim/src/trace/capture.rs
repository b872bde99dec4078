//! Writes a pcap file per recorded channel: every packet as it starts transmission, with real
//! Ethernet, IPv4 and TCP/UDP headers built from the packet's header structs.
//!
//! Addresses are derived from node indices (node n is 10.(n / 65536).(n / 256 % 256).(n % 256)
//! with 10.0.0.0/8 kept private, MAC 02:00:00:nn:nn:nn, locally administered); each flow's ports
//! lie in the dynamic range 49152-65535 (RFC 6335 section 6), where no dissector claims them
//! ([`flow_ports`]). Payloads are zero bytes, cut to the snap length, with checksums valid for
//! the full (zero) payload, except the messages concord defines, whose bytes are written by
//! their codecs: GCCP frames, CM probes and responses (with their per-flow counts, read from
//! the simulator's table of responses), the CP header between IPv4 and UDP
//! ([`super::cp_shim`], read from the table of CP headers; a CP control message is the IPv4
//! header and the CP header alone), and ECA's LOAD and RLOAD as an IPv4 option
//! ([`super::eca_option`]).
//!
//! Traces are classic pcap by default; `[record] pcap_format = "pcapng"` writes pcapng instead
//! ([`super::pcapng`]), whose interface is named after the channel (`r1->r2`), described by its
//! nodes, addresses, rate and delay, and whose section comment names the scenario and its seed.
//!
//! Beside the traces, `addresses.csv` names who is who: every node's interfaces (one per
//! channel leaving it), IPv4 address and MAC, and every traced flow's 5-tuple.

use crate::channel::Channel;
use crate::cp::CpHeaders;
use crate::handles::Handles;
use crate::packet::{NodeId, Packet, Transport};
use crate::scenario::Scenario;
use crate::trace::cp_shim;
use crate::trace::eca_option::{EcaOption, PADDED_LEN};
use crate::trace::pcap::PcapWriter;
use crate::trace::pcapng::{Description, PcapngWriter};
use crate::trace::TraceFormat;
use concord_cc::cm::{ProbeMessage, Response};
use concord_cc::gcca::message::encode_frame;
use concord_cc::time::Instant;
use concord_cc::wire::checksum::Payload;
use concord_cc::wire::frame::{encode_ipv4_frame, Transport as WireTransport};
use concord_cc::wire::{
    udp, EthernetHeader, Ipv4Header, SackOption, TcpFlags, TcpHeader, UdpHeader,
};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

/// Why a trace could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    /// The file could not be created or written.
    #[error(
        "cannot write pcap trace {path}: {source}; check that the output directory is writable"
    )]
    Io {
        /// The trace file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// One open trace.
#[derive(Debug)]
struct Trace {
    path: PathBuf,
    writer: Writer,
}

/// The writer of a trace, in its file format.
#[derive(Debug)]
enum Writer {
    Pcap(PcapWriter<BufWriter<File>>),
    Pcapng(PcapngWriter<BufWriter<File>>),
}

impl Writer {
    fn write_frame(&mut self, at: Instant, frame: &[u8], orig_len: u32) -> std::io::Result<()> {
        match self {
            Writer::Pcap(w) => w.write_frame(at, frame, orig_len),
            Writer::Pcapng(w) => w.write_frame(at, frame, orig_len),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Writer::Pcap(w) => w.flush(),
            Writer::Pcapng(w) => w.flush(),
        }
    }
}

/// What a pcapng trace of channel `ch` of scenario `sc` says about itself.
fn describe(sc: &Scenario, ch: &Channel) -> Description {
    let version = env!("CARGO_PKG_VERSION");
    let (from, to) = ch.name.split_once("->").unwrap_or(("?", "?"));
    let mac = |n: NodeId| {
        node_mac(n)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    };
    Description {
        comment: format!(
            "concord {version}: scenario {}, seed {}, channel {}",
            sc.name, sc.seed, ch.name
        ),
        application: format!("concord {version}"),
        interface: ch.name.clone(),
        interface_description: format!(
            "{from} ({}, {}) to {to} ({}, {}), {}, delay {}",
            node_address(ch.from),
            mac(ch.from),
            node_address(ch.to),
            mac(ch.to),
            ch.rate,
            ch.delay
        ),
    }
}

/// The open traces of a run.
#[derive(Debug, Default)]
pub struct Capture {
    /// Per channel index: the trace writing it, if any.
    by_channel: Vec<Option<usize>>,
    traces: Vec<Trace>,
    frame: Vec<u8>,
    snaplen: u32,
    /// Who is who in the traces, written to `addresses.csv` beside them.
    addresses: Option<Addresses>,
}

/// The IPv4 address concord gives node `n`.
pub fn node_address(n: NodeId) -> Ipv4Addr {
    Ipv4Addr::new(10, (n >> 16) as u8, (n >> 8) as u8, n as u8)
}

/// The node whose address is `a` (the inverse of [`node_address`]), if it is one.
pub fn address_node(a: Ipv4Addr) -> Option<NodeId> {
    let [net, hi, mid, lo] = a.octets();
    (net == 10).then(|| u32::from(hi) << 16 | u32::from(mid) << 8 | u32::from(lo))
}

/// The UDP port of the Congestion Manager's probes and responses in traces, at both ends.
pub const CM_PROBE_PORT: u16 = 4245;

/// The flow index the simulator gives CM probes and responses.
const CM_PROBE_FLOW: u32 = crate::cm::CM_CONTROL_FLOW;

/// The file beside the traces that maps nodes and flows to addresses and ports.
pub const ADDRESSES_FILE: &str = "addresses.csv";

/// The first port of the dynamic range (RFC 6335 section 6), which no protocol registers.
pub const DYNAMIC_PORTS_START: u16 = 49_152;
/// How many ports the dynamic range holds (49152-65535).
const DYNAMIC_PORTS: u32 = 16_384;

/// The (source, destination) ports concord gives flow `flow`'s data packets, both in the
/// dynamic range: the destination port is 49152 + flow (modulo 16384), the source port counts
/// down from 65535 by flow / 16384. No two flows below 2^28 share a pair.
pub fn flow_ports(flow: u32) -> (u16, u16) {
    let low = (flow % DYNAMIC_PORTS) as u16;
    let high = ((flow / DYNAMIC_PORTS) % DYNAMIC_PORTS) as u16;
    (u16::MAX - high, DYNAMIC_PORTS_START + low)
}

fn node_mac(n: NodeId) -> [u8; 6] {
    [0x02, 0, 0, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// True if a TCP segment whose IP and TCP headers take `header_bytes` in the simulation is
/// traced with the timestamps option: 52 bytes (20 IP + 20 TCP + 12 option) and more carry it,
/// fewer do not (40 bytes, no options). Header bytes beyond 52 are not represented in the trace.
fn with_timestamps(header_bytes: u32) -> bool {
    header_bytes >= 52
}

/// A file name for a channel's trace: `r1->r2` becomes `r1-r2.pcap`.
pub fn trace_file_name(channel: &str) -> String {
    let safe: String = channel
        .replace("->", "-")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{safe}.pcap")
}

impl Capture {
    /// Opens one trace per channel in `channels_to_trace`, in `dir`, in the format, with the
    /// snap length, that `sc` records; nothing without a directory.
    pub fn open(
        dir: Option<&Path>,
        channels_to_trace: &[u32],
        channels: &[Channel],
        sc: &Scenario,
    ) -> Result<Capture, CaptureError> {
        let mut cap = Capture {
            by_channel: vec![None; channels.len()],
            traces: Vec::new(),
            frame: Vec::with_capacity(256),
            snaplen: sc.record.pcap_snaplen.max(64),
            addresses: None,
        };
        let Some(dir) = dir else { return Ok(cap) };
        for &c in channels_to_trace {
            let Some(ch) = channels.get(c as usize) else {
                continue;
            };
            let format = sc.record.pcap_format;
            let mut path = dir.join(trace_file_name(&ch.name));
            if format == TraceFormat::Pcapng {
                path.set_extension("pcapng");
            }
            let io = |source| CaptureError::Io {
                path: path.clone(),
                source,
            };
            let out = BufWriter::new(File::create(&path).map_err(io)?);
            let writer = match format {
                TraceFormat::Pcap => Writer::Pcap(PcapWriter::new(out, cap.snaplen).map_err(io)?),
                TraceFormat::Pcapng => Writer::Pcapng(
                    PcapngWriter::new(out, cap.snaplen, &describe(sc, ch)).map_err(io)?,
                ),
            };
            cap.by_channel[c as usize] = Some(cap.traces.len());
            cap.traces.push(Trace { path, writer });
        }
        if !cap.traces.is_empty() {
            cap.addresses = Some(Addresses::new(dir, channels));
        }
        Ok(cap)
    }

    /// True if a trace records channel `c`. A run without traces answers without reading the
    /// per-channel table (16 bytes a channel, cold among thousands of channels).
    #[inline]
    pub fn records(&self, c: u32) -> bool {
        !self.traces.is_empty() && matches!(self.by_channel.get(c as usize), Some(Some(_)))
    }

    /// Records `pkt` starting transmission on channel `c` at `at`. The CP header and the CM
    /// probe response a packet refers to by handle are read from `cp_headers` and
    /// `cm_responses`; a packet whose handle finds nothing is left out of the trace.
    pub fn packet(
        &mut self,
        c: u32,
        at: Instant,
        pkt: &Packet,
        cp_headers: &CpHeaders,
        cm_responses: &Handles<Response>,
    ) -> Result<(), CaptureError> {
        let Some(Some(t)) = self.by_channel.get(c as usize).copied() else {
            return Ok(());
        };
        if let Transport::Gccp(msg) = pkt.transport {
            // A GCCP message is a link-layer frame of its own EtherType (GCCA section 3.1).
            self.frame.clear();
            encode_frame(node_mac(pkt.src), node_mac(pkt.dst), &msg, &mut self.frame);
            let trace = &mut self.traces[t];
            let full = self.frame.len() as u32;
            return trace
                .writer
                .write_frame(at, &self.frame, full)
                .map_err(|source| CaptureError::Io {
                    path: trace.path.clone(),
                    source,
                });
        }
        if let Some(a) = &mut self.addresses {
            a.saw(pkt);
        }
        let (sport, dport) = flow_ports(pkt.flow);
        // The message bytes that replace the zero payload, if concord defines them.
        let mut message = Vec::new();
        let cp = match pkt.cp.get() {
            Some(h) => match cp_headers.get(h) {
                Some(header) => Some(header),
                None => return Ok(()),
            },
            None => None,
        };
        let (transport, payload, protocol) = match pkt.transport {
            Transport::TcpData {
                seq,
                len,
                cwr,
                ts_val,
            } => {
                let flags = if cwr {
                    TcpFlags::ACK | TcpFlags::CWR
                } else {
                    TcpFlags::ACK
                };
                let h = TcpHeader {
                    src_port: sport,
                    dst_port: dport,
                    seq: seq as u32,
                    ack: 0,
                    flags,
                    window: 65_535,
                    timestamps: with_timestamps(pkt.size.saturating_sub(len))
                        .then_some((ts_val, 0)),
                    sack: SackOption::default(),
                };
                (WireTransport::Tcp(h), len as usize, 6)
            }
            Transport::TcpAck {
                ack,
                ece,
                ts_ecr,
                sack,
            } => {
                let flags = if ece {
                    TcpFlags::ACK | TcpFlags::ECE
                } else {
                    TcpFlags::ACK
                };
                let h = TcpHeader {
                    src_port: dport,
                    dst_port: sport,
                    seq: 0,
                    ack: ack as u32,
                    flags,
                    window: 65_535,
                    timestamps: with_timestamps(pkt.size.saturating_sub(sack.wire_bytes()))
                        .then_some((0, ts_ecr)),
                    // Edges as wire sequence numbers: the low 32 bits of the byte offsets.
                    sack: SackOption::new(sack.ranges(ack).map(|(l, r)| (l as u32, r as u32))),
                };
                (WireTransport::Tcp(h), 0, 6)
            }
            Transport::TcpHandshake { segment, ts } => {
                use concord_cc::tcp::HandshakeSegment;
                // The SYN's MSS, SACK-permitted and window-scale options are not written: the
                // header carries the timestamps option alone.
                let (flags, from_sender) = match segment {
                    HandshakeSegment::Syn => (TcpFlags::SYN, true),
                    HandshakeSegment::SynAck => (TcpFlags::SYN | TcpFlags::ACK, false),
                    HandshakeSegment::Ack => (TcpFlags::ACK, true),
                };
                let (src_port, dst_port) = if from_sender {
                    (sport, dport)
                } else {
                    (dport, sport)
                };
                let h = TcpHeader {
                    src_port,
                    dst_port,
                    seq: 0,
                    ack: 0,
                    flags,
                    window: 65_535,
                    timestamps: Some(if from_sender { (ts, 0) } else { (0, ts) }),
                    sack: SackOption::default(),
                };
                (WireTransport::Tcp(h), 0, 6)
            }
            Transport::Udp { len, .. } => (
                WireTransport::Udp(UdpHeader {
                    src_port: sport,
                    dst_port: dport,
                    len: 0,
                }),
                len as usize,
                17,
            ),
            Transport::TfrcData { len, .. } => (
                WireTransport::Udp(UdpHeader {
                    src_port: sport,
                    dst_port: dport,
                    len: 0,
                }),
                len as usize,
                17,
            ),
            Transport::TfrcFeedback { .. } | Transport::CmAck { .. } => (
                WireTransport::Udp(UdpHeader {
                    src_port: dport,
                    dst_port: sport,
                    len: 0,
                }),
                (pkt.size as usize).saturating_sub(28),
                17,
            ),
            Transport::CmProbe(_) | Transport::CmResponse(_) => {
                match pkt.transport {
                    Transport::CmProbe(probe) => ProbeMessage::Probe(probe).encode(&mut message),
                    Transport::CmResponse(h) => match cm_responses.get(h) {
                        Some(r) => ProbeMessage::Response(r.clone()).encode(&mut message),
                        None => return Ok(()),
                    },
                    _ => {}
                }
                (
                    WireTransport::Udp(UdpHeader {
                        src_port: CM_PROBE_PORT,
                        dst_port: CM_PROBE_PORT,
                        len: 0,
                    }),
                    (pkt.size as usize).saturating_sub(28),
                    17,
                )
            }
            // A CP control message is the IPv4 header and the CP header alone; the CP header's
            // bytes go in below.
            Transport::CpControl if cp.is_some() => (WireTransport::Other, 0, cp_shim::PROTOCOL_CP),
            Transport::CpControl => return Ok(()),
            Transport::Gccp(_) => return Ok(()),
        };
        let ip = Ipv4Header {
            src: node_address(pkt.src),
            dst: node_address(pkt.dst),
            dscp: 0,
            ecn: pkt.ecn,
            id: 0,
            ttl: 64,
            protocol,
            total_len: 0,
        };
        let eth = EthernetHeader {
            dst: node_mac(pkt.dst),
            src: node_mac(pkt.src),
            ethertype: 0x0800,
        };
        self.frame.clear();
        let trace = &mut self.traces[t];
        // A packet whose header structs cannot be encoded is left out of the trace, not fatal.
        // The frame is built whole when a message's bytes go in, then cut by the writer.
        let snap = if message.is_empty() {
            self.snaplen as usize
        } else {
            usize::MAX
        };
        let Ok(mut full) = encode_ipv4_frame(&mut self.frame, &eth, &ip, transport, payload, snap)
        else {
            return Ok(());
        };
        if !message.is_empty() && !put_message(&mut self.frame, &ip, &message) {
            return Ok(());
        }
        let (load, rload) = (pkt.eca.load(), pkt.eca.rload());
        if load != 0.0 || rload != 0.0 {
            let option = EcaOption {
                load: load as f32,
                rload: rload as f32,
            };
            if option.insert(&mut self.frame) {
                full += PADDED_LEN;
            }
        }
        if let Some(header) = cp {
            // After the IPv4 options: the CP header is the first thing of the IP payload.
            match cp_shim::insert(&mut self.frame, header) {
                Some(n) => full += n,
                None => return Ok(()),
            }
        }
        trace
            .writer
            .write_frame(at, &self.frame, full as u32)
            .map_err(|source| CaptureError::Io {
                path: trace.path.clone(),
                source,
            })
    }

    /// Flushes every trace and writes `addresses.csv` beside them.
    pub fn flush(&mut self) -> Result<(), CaptureError> {
        for t in &mut self.traces {
            t.writer.flush().map_err(|source| CaptureError::Io {
                path: t.path.clone(),
                source,
            })?;
        }
        if let Some(a) = &self.addresses {
            a.write().map_err(|source| CaptureError::Io {
                path: a.path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}

/// Writes `message` as the UDP payload of `frame` (an Ethernet + IPv4 + UDP frame built whole
/// with a zero payload of the message's length) and fills in the UDP checksum again. False,
/// with `frame` unchanged, if the payload is not the message's length.
fn put_message(frame: &mut [u8], ip: &Ipv4Header, message: &[u8]) -> bool {
    let udp_at = EthernetHeader::LEN + Ipv4Header::LEN;
    let payload_at = udp_at + 8;
    if frame.len() != payload_at + message.len() {
        return false;
    }
    frame[payload_at..].copy_from_slice(message);
    let (header, payload) = frame[udp_at..].split_at_mut(8);
    let ip = Ipv4Header {
        protocol: Ipv4Header::PROTOCOL_UDP,
        total_len: (Ipv4Header::LEN + 8 + message.len()) as u16,
        ..*ip
    };
    udp::fill_checksum(&ip, header, Payload::Bytes(payload)).is_ok()
}

/// The nodes, interfaces and flows of the traces, for `addresses.csv`.
#[derive(Debug)]
struct Addresses {
    path: PathBuf,
    /// Per node index: its name and the channels leaving it (its interfaces).
    nodes: BTreeMap<NodeId, (String, Vec<String>)>,
    /// Per flow seen in a trace: protocol, source node, destination node (data direction).
    flows: BTreeMap<u32, (&'static str, NodeId, NodeId)>,
}

impl Addresses {
    /// The file in `dir`; node names are read from the channel names (`<from>-><to>`).
    fn new(dir: &Path, channels: &[Channel]) -> Addresses {
        let mut nodes: BTreeMap<NodeId, (String, Vec<String>)> = BTreeMap::new();
        for ch in channels {
            let (from, to) = ch
                .name
                .split_once("->")
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .unwrap_or_else(|| (format!("node{}", ch.from), format!("node{}", ch.to)));
            nodes
                .entry(ch.from)
                .or_insert_with(|| (from, Vec::new()))
                .1
                .push(ch.name.clone());
            nodes.entry(ch.to).or_insert_with(|| (to, Vec::new()));
        }
        Addresses {
            path: dir.join(ADDRESSES_FILE),
            nodes,
            flows: BTreeMap::new(),
        }
    }

    /// Notes the flow of `pkt`, in its data direction.
    fn saw(&mut self, pkt: &Packet) {
        if matches!(pkt.transport, Transport::Gccp(_) | Transport::CpControl) {
            return;
        }
        let tcp = matches!(
            pkt.transport,
            Transport::TcpData { .. } | Transport::TcpAck { .. } | Transport::TcpHandshake { .. }
        );
        let protocol = if tcp { "tcp" } else { "udp" };
        let reverse = matches!(
            pkt.transport,
            Transport::TcpAck { .. }
                | Transport::TcpHandshake {
                    segment: concord_cc::tcp::HandshakeSegment::SynAck,
                    ..
                }
                | Transport::TfrcFeedback { .. }
                | Transport::CmAck { .. }
        );
        let (src, dst) = if reverse {
            (pkt.dst, pkt.src)
        } else {
            (pkt.src, pkt.dst)
        };
        let entry = self.flows.entry(pkt.flow).or_insert((protocol, src, dst));
        // A data packet names the data direction, even if an ACK was seen first.
        if !reverse {
            *entry = (protocol, src, dst);
        }
    }

    /// Writes the file: one row per interface of each node, then one per flow.
    fn write(&self) -> std::io::Result<()> {
        let mut out = String::from(
            "kind,name,interface,ipv4,mac,protocol,src_ipv4,src_port,dst_ipv4,dst_port\n",
        );
        for (&n, (name, interfaces)) in &self.nodes {
            let mac = node_mac(n)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(":");
            let addr = node_address(n);
            if interfaces.is_empty() {
                out.push_str(&format!("node,{name},,{addr},{mac},,,,,\n"));
            }
            for i in interfaces {
                out.push_str(&format!("node,{name},{i},{addr},{mac},,,,,\n"));
            }
        }
        for (&f, &(protocol, src, dst)) in &self.flows {
            let (name, sport, dport) = if f == CM_PROBE_FLOW {
                ("cm-probe".to_string(), CM_PROBE_PORT, CM_PROBE_PORT)
            } else {
                let (s, d) = flow_ports(f);
                (f.to_string(), s, d)
            };
            out.push_str(&format!(
                "flow,{name},,,,{protocol},{},{sport},{},{dport}\n",
                node_address(src),
                node_address(dst)
            ));
        }
        std::fs::write(&self.path, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn flow_ports_lie_in_the_dynamic_range_and_name_the_flow() {
        assert_eq!(flow_ports(0), (65_535, 49_152));
        assert_eq!(flow_ports(7), (65_535, 49_159));
        assert_eq!(flow_ports(16_383), (65_535, 65_535));
        assert_eq!(flow_ports(16_384), (65_534, 49_152));
        assert_eq!(flow_ports(u32::MAX).1, 65_535);
        for f in [0, 1, 4_999, 5_000, 16_384, 1 << 27, u32::MAX] {
            let (s, d) = flow_ports(f);
            assert!(
                s >= DYNAMIC_PORTS_START && d >= DYNAMIC_PORTS_START,
                "flow {f}"
            );
        }
    }

    #[test]
    fn no_two_flows_share_a_port_pair() {
        // Flows 0 and 5000 shared 5000 as destination port before; a sample across 2^28 flows,
        // dense at the start and strided beyond, has as many pairs as flows.
        let flows: Vec<u32> = (0..70_000).chain((0..4_096).map(|k| k * 65_537)).collect();
        let pairs: HashSet<(u16, u16)> = flows.iter().map(|&f| flow_ports(f)).collect();
        let distinct: HashSet<u32> = flows.iter().copied().collect();
        assert_eq!(pairs.len(), distinct.len());
        assert_ne!(flow_ports(0), flow_ports(5_000));
    }
}
