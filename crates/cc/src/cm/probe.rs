//! The probe and response messages of CM's explicit feedback protocol (paper section 2.2.2,
//! Fig. 5), and their byte layout.
//!
//! The sender CM sends a probe with an incrementing sequence number about twice per RTT; the
//! receiver CM answers with the probe it answers (`thisprobe`), the probe it answered before
//! (`lastprobe`) and, for each flow, what arrived. concord adds a nonce: every probe carries a
//! random 64-bit value the response must echo, so that a receiver cannot report on a probe it
//! never saw.
//!
//! Where Fig. 5's `nrecd` counts what arrived between `lastprobe` and `thisprobe`, concord's
//! counts are cumulative (version 2): what arrived for the flow since the receiver first saw it.
//! The sender sets a response against the last one it accepted, so a response covers
//! everything since then, the intervals of lost responses included; with per-interval counts a
//! lost response took its arrivals with it while the packets sent in it could still be counted
//! in a neighbouring interval (see [`super::prober`]).
//!
//! # Byte layout
//!
//! All fields big-endian. Every message starts with a 4-byte header:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 1 | version | [`VERSION`] (2) |
//! | 1 | 1 | type | 1 probe, 2 response |
//! | 2 | 2 | length | the whole message in bytes, header included |
//!
//! A probe (type 1) is [`PROBE_LEN`] = 16 bytes:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 4 | 4 | seq | probe sequence number, from 1 |
//! | 8 | 8 | nonce | random, echoed by the response |
//!
//! A response (type 2) is [`RESPONSE_FIXED_LEN`] = 24 bytes plus [`FLOW_ENTRY_LEN`] = 32 per
//! flow, at most [`MAX_FLOWS`] flows:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 4 | 4 | thisprobe | the sequence number of the probe answered |
//! | 8 | 4 | lastprobe | the probe answered before it; 0 if none |
//! | 12 | 8 | nonce | thisprobe's nonce |
//! | 20 | 4 | nflows | the number of flow entries |
//! | 24 | 32 x nflows | entries | one per flow, below |
//!
//! A flow entry counts what arrived for the flow before thisprobe since the receiver began to
//! track it; the receiver lists every flow it tracks, and stops tracking a flow (its next entry,
//! if any, counts from zero) after a long idle time:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 2 | src_port | the sender's port |
//! | 2 | 2 | dst_port | the receiver's port |
//! | 4 | 4 | flow_id | the flow identifier of [`super::FlowKey`] (0 if unused) |
//! | 8 | 8 | packets | packets received |
//! | 16 | 8 | ce_packets | of these, packets marked Congestion Experienced |
//! | 24 | 8 | bytes | bytes received |
//!
//! A decoder refuses, with a [`ProbeError`]: fewer bytes than the header or the fixed part
//! needs, another version, another type, a length field that disagrees with the type and the
//! flow count, fewer bytes than the length field, and bytes after the message.

use std::fmt;

/// The protocol version this codec speaks.
pub const VERSION: u8 = 2;
/// The type byte of a probe.
pub const TYPE_PROBE: u8 = 1;
/// The type byte of a response.
pub const TYPE_RESPONSE: u8 = 2;
/// The header every message starts with, in bytes.
pub const HEADER_LEN: usize = 4;
/// A probe's length, in bytes.
pub const PROBE_LEN: usize = 16;
/// A response's length without flow entries, in bytes.
pub const RESPONSE_FIXED_LEN: usize = 24;
/// One flow entry of a response, in bytes.
pub const FLOW_ENTRY_LEN: usize = 32;
/// The most flow entries a response can carry: its length must fit the 16-bit length field.
pub const MAX_FLOWS: usize = (u16::MAX as usize - RESPONSE_FIXED_LEN) / FLOW_ENTRY_LEN;

/// A flow as both ends can name it: the sender's and the receiver's port and the flow
/// identifier, the part of [`super::FlowKey`] a receiver sees (the destination address is the
/// receiver itself).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowTag {
    /// The sender's port.
    pub src_port: u16,
    /// The receiver's port.
    pub dst_port: u16,
    /// The flow identifier (0 if the flows are told apart by ports alone).
    pub flow_id: u32,
}

impl fmt::Display for FlowTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}->{}#{}", self.src_port, self.dst_port, self.flow_id)
    }
}

/// A probe: "send me what arrived since the probe you last answered" (paper Fig. 5).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Probe {
    /// The probe's sequence number, one more for each probe to the same receiver, from 1.
    pub seq: u32,
    /// A random value the response must echo.
    pub nonce: u64,
}

/// What arrived for one flow since the receiver began to track it: cumulative counts, each
/// wrapping at 2^64.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FlowCount {
    /// The flow.
    pub tag: FlowTag,
    /// Packets received.
    pub packets: u64,
    /// Of these, packets marked Congestion Experienced (RFC 3168).
    pub ce_packets: u64,
    /// Bytes received.
    pub bytes: u64,
}

/// A response: `<response, thisprobe, lastprobe, nrecd>` of paper Fig. 5, with the nonce.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Response {
    /// The sequence number of the probe answered.
    pub thisprobe: u32,
    /// The sequence number of the probe answered before; 0 if none.
    pub lastprobe: u32,
    /// The nonce of `thisprobe`, echoed.
    pub nonce: u64,
    /// Per flow, the cumulative arrivals before `thisprobe`; every flow the receiver tracks.
    /// [`ProbeMessage::encode`] writes at most [`MAX_FLOWS`] entries.
    pub flows: Vec<FlowCount>,
}

/// A message of the probe protocol.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum ProbeMessage {
    /// Sender to receiver.
    Probe(Probe),
    /// Receiver to sender.
    Response(Response),
}

impl From<Probe> for ProbeMessage {
    fn from(p: Probe) -> Self {
        ProbeMessage::Probe(p)
    }
}

impl From<Response> for ProbeMessage {
    fn from(r: Response) -> Self {
        ProbeMessage::Response(r)
    }
}

/// Why bytes are not a probe-protocol message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// Fewer bytes than the header, the fixed part or the length field needs.
    #[error("truncated: need {need} bytes, got {got}")]
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// A version this codec does not speak.
    #[error("unsupported version {0}")]
    BadVersion(u8),
    /// A type byte that is neither probe nor response.
    #[error("unknown message type {0}")]
    BadType(u8),
    /// The length field disagrees with the type and the flow count.
    #[error("length field {field} does not match the {expected} bytes the message needs")]
    LengthMismatch {
        /// The length field.
        field: usize,
        /// The length the type and flow count give.
        expected: usize,
    },
    /// Bytes after the end of the message.
    #[error("{0} bytes after the end of the message")]
    TrailingBytes(usize),
}

impl ProbeMessage {
    /// The encoded length, in bytes.
    pub fn encoded_len(&self) -> usize {
        match self {
            ProbeMessage::Probe(_) => PROBE_LEN,
            ProbeMessage::Response(r) => {
                RESPONSE_FIXED_LEN + FLOW_ENTRY_LEN * r.flows.len().min(MAX_FLOWS)
            }
        }
    }

    /// Appends the message's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let len = self.encoded_len();
        out.reserve(len);
        let ty = match self {
            ProbeMessage::Probe(_) => TYPE_PROBE,
            ProbeMessage::Response(_) => TYPE_RESPONSE,
        };
        out.push(VERSION);
        out.push(ty);
        // encoded_len() is at most 24 + 32 * MAX_FLOWS <= u16::MAX.
        out.extend_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_be_bytes());
        match self {
            ProbeMessage::Probe(p) => {
                out.extend_from_slice(&p.seq.to_be_bytes());
                out.extend_from_slice(&p.nonce.to_be_bytes());
            }
            ProbeMessage::Response(r) => {
                let n = r.flows.len().min(MAX_FLOWS);
                out.extend_from_slice(&r.thisprobe.to_be_bytes());
                out.extend_from_slice(&r.lastprobe.to_be_bytes());
                out.extend_from_slice(&r.nonce.to_be_bytes());
                out.extend_from_slice(&u32::try_from(n).unwrap_or(0).to_be_bytes());
                for c in &r.flows[..n] {
                    out.extend_from_slice(&c.tag.src_port.to_be_bytes());
                    out.extend_from_slice(&c.tag.dst_port.to_be_bytes());
                    out.extend_from_slice(&c.tag.flow_id.to_be_bytes());
                    out.extend_from_slice(&c.packets.to_be_bytes());
                    out.extend_from_slice(&c.ce_packets.to_be_bytes());
                    out.extend_from_slice(&c.bytes.to_be_bytes());
                }
            }
        }
    }

    /// Reads one message that fills `bytes` exactly.
    pub fn decode(bytes: &[u8]) -> Result<ProbeMessage, ProbeError> {
        let got = bytes.len();
        let mut r = Reader { bytes, pos: 0 };
        let header = r.take::<HEADER_LEN>()?;
        let [version, ty, l0, l1] = header;
        if version != VERSION {
            return Err(ProbeError::BadVersion(version));
        }
        let field = usize::from(u16::from_be_bytes([l0, l1]));
        let fixed = match ty {
            TYPE_PROBE => PROBE_LEN,
            TYPE_RESPONSE => RESPONSE_FIXED_LEN,
            other => return Err(ProbeError::BadType(other)),
        };
        if got < fixed {
            return Err(ProbeError::Truncated { need: fixed, got });
        }
        let msg = if ty == TYPE_PROBE {
            check_length(field, PROBE_LEN, got)?;
            ProbeMessage::Probe(Probe {
                seq: u32::from_be_bytes(r.take()?),
                nonce: u64::from_be_bytes(r.take()?),
            })
        } else {
            let thisprobe = u32::from_be_bytes(r.take()?);
            let lastprobe = u32::from_be_bytes(r.take()?);
            let nonce = u64::from_be_bytes(r.take()?);
            let nflows = u64::from(u32::from_be_bytes(r.take()?));
            // Computed in u64 so that a huge flow count cannot overflow; anything beyond the
            // 16-bit length field is a mismatch.
            let expected = RESPONSE_FIXED_LEN as u64 + FLOW_ENTRY_LEN as u64 * nflows;
            let expected = usize::try_from(expected).unwrap_or(usize::MAX);
            check_length(field, expected, got)?;
            let n = (expected - RESPONSE_FIXED_LEN) / FLOW_ENTRY_LEN;
            let mut flows = Vec::with_capacity(n);
            for _ in 0..n {
                flows.push(FlowCount {
                    tag: FlowTag {
                        src_port: u16::from_be_bytes(r.take()?),
                        dst_port: u16::from_be_bytes(r.take()?),
                        flow_id: u32::from_be_bytes(r.take()?),
                    },
                    packets: u64::from_be_bytes(r.take()?),
                    ce_packets: u64::from_be_bytes(r.take()?),
                    bytes: u64::from_be_bytes(r.take()?),
                });
            }
            ProbeMessage::Response(Response {
                thisprobe,
                lastprobe,
                nonce,
                flows,
            })
        };
        Ok(msg)
    }
}

/// Checks the length field against the length the message needs, then the bytes present.
fn check_length(field: usize, expected: usize, got: usize) -> Result<(), ProbeError> {
    if field != expected {
        return Err(ProbeError::LengthMismatch { field, expected });
    }
    if got < expected {
        return Err(ProbeError::Truncated {
            need: expected,
            got,
        });
    }
    if got > expected {
        return Err(ProbeError::TrailingBytes(got - expected));
    }
    Ok(())
}

/// A cursor over the input that never reads past its end.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    /// The next `N` bytes, or [`ProbeError::Truncated`].
    fn take<const N: usize>(&mut self) -> Result<[u8; N], ProbeError> {
        let end = self.pos.saturating_add(N);
        let slice = self.bytes.get(self.pos..end).ok_or(ProbeError::Truncated {
            need: end,
            got: self.bytes.len(),
        })?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        self.pos = end;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn enc(m: &ProbeMessage) -> Vec<u8> {
        let mut v = Vec::new();
        m.encode(&mut v);
        v
    }

    fn sample_response() -> Response {
        Response {
            thisprobe: 7,
            lastprobe: 5,
            nonce: 0x0102_0304_0506_0708,
            flows: vec![FlowCount {
                tag: FlowTag {
                    src_port: 0x1234,
                    dst_port: 80,
                    flow_id: 9,
                },
                packets: (1 << 32) + 100,
                ce_packets: 2,
                bytes: 150_000,
            }],
        }
    }

    #[test]
    fn a_probe_encodes_to_its_documented_16_bytes() {
        let p = ProbeMessage::Probe(Probe {
            seq: 0x0102_0304,
            nonce: 0x1122_3344_5566_7788,
        });
        assert_eq!(
            enc(&p),
            [
                2, 1, 0, 16, // version, type, length
                1, 2, 3, 4, // seq
                0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, // nonce
            ]
        );
    }

    #[test]
    fn a_response_encodes_to_its_documented_bytes() {
        let bytes = enc(&sample_response().into());
        let expected: Vec<u8> = [
            &[2u8, 2, 0, 56][..],            // version, type, length 24 + 32
            &[0, 0, 0, 7],                   // thisprobe
            &[0, 0, 0, 5],                   // lastprobe
            &[1, 2, 3, 4, 5, 6, 7, 8],       // nonce
            &[0, 0, 0, 1],                   // nflows
            &[0x12, 0x34, 0, 80],            // src_port, dst_port
            &[0, 0, 0, 9],                   // flow_id
            &[0, 0, 0, 1, 0, 0, 0, 100],     // packets = 2^32 + 100
            &[0, 0, 0, 0, 0, 0, 0, 2],       // ce_packets
            &[0, 0, 0, 0, 0, 2, 0x49, 0xf0], // bytes = 150 000
        ]
        .concat();
        assert_eq!(bytes, expected);
        assert_eq!(
            ProbeMessage::decode(&bytes),
            Ok(ProbeMessage::Response(sample_response()))
        );
    }

    #[test]
    fn malformed_messages_give_typed_errors() {
        let good = enc(&sample_response().into());
        assert_eq!(
            ProbeMessage::decode(&good[..3]),
            Err(ProbeError::Truncated { need: 4, got: 3 })
        );
        let mut v = good.clone();
        v[0] = 1;
        assert_eq!(ProbeMessage::decode(&v), Err(ProbeError::BadVersion(1)));
        let mut v = good.clone();
        v[1] = 3;
        assert_eq!(ProbeMessage::decode(&v), Err(ProbeError::BadType(3)));
        assert_eq!(
            ProbeMessage::decode(&good[..20]),
            Err(ProbeError::Truncated { need: 24, got: 20 })
        );
        assert_eq!(
            ProbeMessage::decode(&good[..40]),
            Err(ProbeError::Truncated { need: 56, got: 40 })
        );
        let mut v = good.clone();
        v[3] = 88;
        assert_eq!(
            ProbeMessage::decode(&v),
            Err(ProbeError::LengthMismatch {
                field: 88,
                expected: 56
            })
        );
        let mut v = good.clone();
        v[23] = 200; // 200 flows claimed in 56 bytes
        assert_eq!(
            ProbeMessage::decode(&v),
            Err(ProbeError::LengthMismatch {
                field: 56,
                expected: 24 + 32 * 200
            })
        );
        let mut v = good;
        v.push(0);
        assert_eq!(ProbeMessage::decode(&v), Err(ProbeError::TrailingBytes(1)));
        assert_eq!(
            ProbeMessage::decode(&[2, 1, 0, 17, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(ProbeError::LengthMismatch {
                field: 17,
                expected: 16
            })
        );
    }

    #[test]
    fn a_huge_flow_count_is_a_length_mismatch_not_an_allocation() {
        let mut v = enc(&sample_response().into());
        v[20..24].copy_from_slice(&u32::MAX.to_be_bytes());
        assert!(matches!(
            ProbeMessage::decode(&v),
            Err(ProbeError::LengthMismatch { field: 56, .. })
        ));
    }

    fn random_message(rng: &mut Rng) -> ProbeMessage {
        if rng.bernoulli(0.3) {
            return ProbeMessage::Probe(Probe {
                seq: rng.next_u64() as u32,
                nonce: rng.next_u64(),
            });
        }
        let n = rng.below(6) as usize;
        ProbeMessage::Response(Response {
            thisprobe: rng.next_u64() as u32,
            lastprobe: rng.next_u64() as u32,
            nonce: rng.next_u64(),
            flows: (0..n)
                .map(|_| FlowCount {
                    tag: FlowTag {
                        src_port: rng.next_u64() as u16,
                        dst_port: rng.next_u64() as u16,
                        flow_id: rng.next_u64() as u32,
                    },
                    packets: rng.next_u64(),
                    ce_packets: rng.next_u64(),
                    bytes: rng.next_u64(),
                })
                .collect(),
        })
    }

    #[test]
    fn decoding_100k_random_byte_strings_never_panics() {
        let mut rng = Rng::new(0xC0C0);
        let mut decoded = 0;
        for i in 0..100_000 {
            let mut bytes: Vec<u8> = if i % 2 == 0 {
                // Pure noise of any length up to 100 bytes.
                let len = rng.below(101) as usize;
                (0..len).map(|_| rng.next_u64() as u8).collect()
            } else {
                // A valid message with a few bytes changed, cut or extended: reaches the deep
                // paths that noise rarely does.
                let mut v = enc(&random_message(&mut rng));
                for _ in 0..rng.below(3) {
                    let at = rng.below(v.len() as u64) as usize;
                    v[at] = rng.next_u64() as u8;
                }
                match rng.below(3) {
                    0 => v.truncate(rng.below(v.len() as u64 + 1) as usize),
                    1 => v.push(rng.next_u64() as u8),
                    _ => {}
                }
                v
            };
            if rng.bernoulli(0.1) {
                bytes.truncate(4);
            }
            if ProbeMessage::decode(&bytes).is_ok() {
                decoded += 1;
            }
        }
        assert!(decoded > 0, "some mutated messages stay valid");
    }

    #[test]
    fn decode_inverts_encode_for_random_valid_messages() {
        let mut rng = Rng::new(0xBEEF);
        for _ in 0..20_000 {
            let m = random_message(&mut rng);
            let bytes = enc(&m);
            assert_eq!(bytes.len(), m.encoded_len());
            assert_eq!(ProbeMessage::decode(&bytes), Ok(m));
        }
    }
}
