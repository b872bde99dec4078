//! Writes a pcap file per recorded channel: every packet as it starts transmission, with real
//! Ethernet, IPv4 and TCP/UDP headers built from the packet's header structs.
//!
//! Addresses are derived from node indices (node n is 10.(n / 65536).(n / 256 % 256).(n % 256)
//! with 10.0.0.0/8 kept private, MAC 02:00:00:nn:nn:nn, locally administered); each flow gets
//! source port 10000 + flow and destination port 5000 + flow modulo the port space. Payloads are
//! zero bytes, cut to the snap length, with checksums valid for the full (zero) payload.

use crate::channel::Channel;
use crate::packet::{NodeId, Packet, Transport};
use crate::trace::pcap::PcapWriter;
use concord_cc::gcca::message::encode_frame;
use concord_cc::time::Instant;
use concord_cc::wire::frame::{encode_ipv4_frame, Transport as WireTransport};
use concord_cc::wire::{EthernetHeader, Ipv4Header, TcpFlags, TcpHeader, UdpHeader};
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
    writer: PcapWriter<BufWriter<File>>,
}

/// The open traces of a run.
#[derive(Debug, Default)]
pub struct Capture {
    /// Per channel index: the trace writing it, if any.
    by_channel: Vec<Option<usize>>,
    traces: Vec<Trace>,
    frame: Vec<u8>,
    snaplen: u32,
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

/// The (source, destination) ports concord gives flow `flow`'s data packets.
pub fn flow_ports(flow: u32) -> (u16, u16) {
    (
        10_000 + (flow % 50_000) as u16,
        5_000 + (flow % 5_000) as u16,
    )
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
    /// Opens one trace per channel in `channels_to_trace`, in `dir`; nothing without a directory.
    pub fn open(
        dir: Option<&Path>,
        channels_to_trace: &[u32],
        channels: &[Channel],
        snaplen: u32,
    ) -> Result<Capture, CaptureError> {
        let mut cap = Capture {
            by_channel: vec![None; channels.len()],
            traces: Vec::new(),
            frame: Vec::with_capacity(256),
            snaplen: snaplen.max(64),
        };
        let Some(dir) = dir else { return Ok(cap) };
        for &c in channels_to_trace {
            let Some(ch) = channels.get(c as usize) else {
                continue;
            };
            let path = dir.join(trace_file_name(&ch.name));
            let io = |source| CaptureError::Io {
                path: path.clone(),
                source,
            };
            let file = File::create(&path).map_err(io)?;
            let writer = PcapWriter::new(BufWriter::new(file), cap.snaplen).map_err(io)?;
            cap.by_channel[c as usize] = Some(cap.traces.len());
            cap.traces.push(Trace { path, writer });
        }
        Ok(cap)
    }

    /// Records `pkt` starting transmission on channel `c` at `at`.
    pub fn packet(&mut self, c: u32, at: Instant, pkt: &Packet) -> Result<(), CaptureError> {
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
        let (sport, dport) = flow_ports(pkt.flow);
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
                };
                (WireTransport::Tcp(h), len as usize, 6)
            }
            Transport::TcpAck { ack, ece, ts_ecr } => {
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
                    timestamps: with_timestamps(pkt.size).then_some((0, ts_ecr)),
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
            Transport::CmProbe(_) | Transport::CmResponse(_) => (
                WireTransport::Udp(UdpHeader {
                    src_port: CM_PROBE_PORT,
                    dst_port: CM_PROBE_PORT,
                    len: 0,
                }),
                (pkt.size as usize).saturating_sub(28),
                17,
            ),
            // CP control messages are not written (no IP protocol number of their own).
            Transport::CpControl | Transport::Gccp(_) => return Ok(()),
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
        let Ok(full) = encode_ipv4_frame(
            &mut self.frame,
            &eth,
            &ip,
            transport,
            payload,
            self.snaplen as usize,
        ) else {
            return Ok(());
        };
        trace
            .writer
            .write_frame(at, &self.frame, full as u32)
            .map_err(|source| CaptureError::Io {
                path: trace.path.clone(),
                source,
            })
    }

    /// Flushes every trace.
    pub fn flush(&mut self) -> Result<(), CaptureError> {
        for t in &mut self.traces {
            t.writer.flush().map_err(|source| CaptureError::Io {
                path: t.path.clone(),
                source,
            })?;
        }
        Ok(())
    }
}
