//! The probe and response messages of CM's explicit feedback protocol (paper section 2.2.2,
//! Fig. 5), and their byte layout.
//!
//! The sender CM sends a probe with an incrementing sequence number about twice per RTT; the
//! receiver CM answers with the probe it answers (`thisprobe`), the probe it answered before
//! (`lastprobe`) and, for each flow, what arrived. concord adds a nonce: every probe carries a
//! 64-bit value the response must echo, so that a receiver cannot report on a probe it never
//! saw. On a network the nonce comes from the operating system's CSPRNG ([`NonceSource::Os`]);
//! an off-path host cannot guess it, so it cannot forge a response.
//!
//! Where Fig. 5's `nrecd` counts what arrived between `lastprobe` and `thisprobe`, concord's
//! counts are cumulative (since version 2): what arrived for the flow since the receiver first
//! saw it. The sender sets a response against the last one it accepted, so a response covers
//! everything since then, the intervals of lost responses included; with per-interval counts a
//! lost response took its arrivals with it while the packets sent in it could still be counted
//! in a neighbouring interval (see [`super::prober`]).
//!
//! Version 3 bounds what a probe can draw: a probe says how many flow entries the response may
//! carry (`room`) and is padded to half the bytes those entries take, so that a response is
//! never more than twice the size of the probe it answers, whoever sent the probe (a spoofed
//! probe cannot turn the receiver into an amplifier). Hosts that share a key may authenticate
//! every message with HMAC-SHA-256 (RFC 2104).
//!
//! # Byte layout
//!
//! All fields big-endian. Every message starts with a 4-byte header:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 0 | 1 | version | [`VERSION`] (3) |
//! | 1 | 1 | type | 1 probe, 2 response; plus [`TYPE_AUTHENTICATED`] (0x80) if a tag follows |
//! | 2 | 2 | length | the whole message in bytes, header and tag included |
//!
//! A probe (type 1) is [`PROBE_FIXED_LEN`] = 20 bytes plus [`ROOM_ENTRY_LEN`] = 16 bytes of
//! padding per flow entry it makes room for, at most [`MAX_FLOWS`]:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 4 | 4 | seq | probe sequence number, from 1 |
//! | 8 | 8 | nonce | unpredictable, echoed by the response |
//! | 16 | 2 | room | the most flow entries the response may carry |
//! | 18 | 2 | reserved | 0 |
//! | 20 | 16 x room | padding | zero bytes |
//!
//! A response (type 2) is [`RESPONSE_FIXED_LEN`] = 24 bytes plus [`FLOW_ENTRY_LEN`] = 32 per
//! flow, at most the probe's `room`:
//!
//! | offset | size | field | meaning |
//! |---|---|---|---|
//! | 4 | 4 | thisprobe | the sequence number of the probe answered |
//! | 8 | 4 | lastprobe | the probe answered before it; 0 if none |
//! | 12 | 8 | nonce | thisprobe's nonce |
//! | 20 | 4 | nflows | the number of flow entries |
//! | 24 | 32 x nflows | entries | one per flow, below |
//!
//! A response to a probe with room r is at most 24 + 32 r bytes, the probe 20 + 16 r: the
//! response is never more than twice the probe (and with tags, 40 + 32 r against 36 + 16 r).
//!
//! A flow entry counts what arrived for the flow before thisprobe since the receiver began to
//! track it; the receiver lists the flows it tracks (the most recently active ones if they are
//! more than the room), and stops tracking a flow (its next entry, if any, counts from zero)
//! after a long idle time:
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
//! An authenticated message (type | 0x80) ends with a [`TAG_LEN`] = 16-byte tag: HMAC-SHA-256
//! (RFC 2104, FIPS 180-4) keyed with the hosts' shared [`ProbeKey`] over every byte before the
//! tag, truncated to its leftmost 128 bits (as RFC 4868 section 2.6 does for IPsec).
//!
//! A decoder refuses, with a [`ProbeError`]: fewer bytes than the header or the fixed part
//! needs, another version, another type, a length field that disagrees with the type and the
//! flow count or room, fewer bytes than the length field, bytes after the message, non-zero
//! reserved or padding bytes, and, with a key, a message without a tag or with a wrong one;
//! without a key, a message with a tag.

use crate::rng::Rng;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fmt;

/// The protocol version this codec speaks.
pub const VERSION: u8 = 3;
/// The type byte of a probe.
pub const TYPE_PROBE: u8 = 1;
/// The type byte of a response.
pub const TYPE_RESPONSE: u8 = 2;
/// The bit of the type byte that says an authentication tag ends the message.
pub const TYPE_AUTHENTICATED: u8 = 0x80;
/// The header every message starts with, in bytes.
pub const HEADER_LEN: usize = 4;
/// A probe's length without padding, in bytes.
pub const PROBE_FIXED_LEN: usize = 20;
/// The padding a probe carries per flow entry it makes room for, in bytes: half an entry.
pub const ROOM_ENTRY_LEN: usize = 16;
/// A response's length without flow entries, in bytes.
pub const RESPONSE_FIXED_LEN: usize = 24;
/// One flow entry of a response, in bytes.
pub const FLOW_ENTRY_LEN: usize = 32;
/// The authentication tag of an authenticated message, in bytes (HMAC-SHA-256-128).
pub const TAG_LEN: usize = 16;
/// The largest UDP payload over IPv4, in bytes: 65,535 less the IPv4 and UDP headers.
pub const MAX_DATAGRAM: usize = 65_507;
/// The most flow entries a response can carry (and a probe make room for): an authenticated
/// response must fit one UDP datagram.
pub const MAX_FLOWS: usize = (MAX_DATAGRAM - RESPONSE_FIXED_LEN - TAG_LEN) / FLOW_ENTRY_LEN;
/// A probe's length with room for one flow, in bytes (the smallest probe a prober with flows
/// sends).
pub const PROBE_LEN: usize = PROBE_FIXED_LEN + ROOM_ENTRY_LEN;

/// A key two hosts share to authenticate their probe messages: 32 bytes, the output length of
/// SHA-256 (RFC 2104 section 3: keys shorter than that weaken the MAC). Its `Debug` form does
/// not show it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ProbeKey(pub [u8; 32]);

impl fmt::Debug for ProbeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProbeKey(..)")
    }
}

impl ProbeKey {
    /// The HMAC-SHA-256 of `bytes` under the key, truncated to [`TAG_LEN`] bytes.
    pub fn tag(&self, bytes: &[u8]) -> [u8; TAG_LEN] {
        let mut out = [0u8; TAG_LEN];
        if let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&self.0) {
            mac.update(bytes);
            out.copy_from_slice(&mac.finalize().into_bytes()[..TAG_LEN]);
        }
        out
    }

    /// True if `tag` is the truncated HMAC of `bytes`, compared in constant time.
    pub fn verify(&self, bytes: &[u8], tag: &[u8]) -> bool {
        match Hmac::<Sha256>::new_from_slice(&self.0) {
            Ok(mut mac) => {
                mac.update(bytes);
                mac.verify_truncated_left(tag).is_ok()
            }
            Err(_) => false,
        }
    }
}

/// Where probe nonces come from.
#[derive(Clone, Debug)]
pub enum NonceSource {
    /// A seeded generator: repeatable, for the simulator and tests. Anyone who knows the seed
    /// predicts every nonce, so it must never face a network.
    Seeded(Rng),
    /// A function that draws 64 bits from the operating system's CSPRNG (`getrandom(2)`),
    /// passed in by the runtime, which does the I/O.
    Os(fn() -> u64),
}

impl NonceSource {
    /// The next nonce.
    pub fn next_nonce(&mut self) -> u64 {
        match self {
            NonceSource::Seeded(rng) => rng.next_u64(),
            NonceSource::Os(draw) => draw(),
        }
    }
}

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
    /// An unpredictable value the response must echo.
    pub nonce: u64,
    /// The most flow entries the response may carry; the probe is padded to
    /// [`ROOM_ENTRY_LEN`] bytes per entry. At most [`MAX_FLOWS`].
    pub room: u16,
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
    /// Per flow, the cumulative arrivals before `thisprobe`, at most the probe's room.
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
    /// A reserved or padding byte that is not zero.
    #[error("non-zero reserved or padding byte at offset {0}")]
    NonZeroPadding(usize),
    /// This host has a key and the message has no tag, or a tag the key does not give.
    #[error("authentication failed: missing or wrong tag")]
    Unauthenticated,
    /// The message has a tag and this host has no key to check it with.
    #[error("authenticated message, and no key is configured")]
    NoKey,
}

impl ProbeMessage {
    /// The encoded length without a tag, in bytes.
    pub fn encoded_len(&self) -> usize {
        match self {
            ProbeMessage::Probe(p) => {
                PROBE_FIXED_LEN + ROOM_ENTRY_LEN * usize::from(p.room).min(MAX_FLOWS)
            }
            ProbeMessage::Response(r) => {
                RESPONSE_FIXED_LEN + FLOW_ENTRY_LEN * r.flows.len().min(MAX_FLOWS)
            }
        }
    }

    /// Appends the message's bytes, without a tag, to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_with(None, out);
    }

    /// Appends the message's bytes to `out`, authenticated with `key` if there is one.
    pub fn encode_with(&self, key: Option<&ProbeKey>, out: &mut Vec<u8>) {
        let start = out.len();
        let len = self.encoded_len() + key.map_or(0, |_| TAG_LEN);
        out.reserve(len);
        let ty = match self {
            ProbeMessage::Probe(_) => TYPE_PROBE,
            ProbeMessage::Response(_) => TYPE_RESPONSE,
        } | key.map_or(0, |_| TYPE_AUTHENTICATED);
        out.push(VERSION);
        out.push(ty);
        // encoded_len() is at most 24 + 32 * MAX_FLOWS + TAG_LEN <= MAX_DATAGRAM.
        out.extend_from_slice(&u16::try_from(len).unwrap_or(u16::MAX).to_be_bytes());
        match self {
            ProbeMessage::Probe(p) => {
                let room = usize::from(p.room).min(MAX_FLOWS);
                out.extend_from_slice(&p.seq.to_be_bytes());
                out.extend_from_slice(&p.nonce.to_be_bytes());
                out.extend_from_slice(&u16::try_from(room).unwrap_or(0).to_be_bytes());
                out.extend_from_slice(&[0, 0]);
                out.resize(out.len() + ROOM_ENTRY_LEN * room, 0);
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
        if let Some(key) = key {
            let tag = key.tag(&out[start..]);
            out.extend_from_slice(&tag);
        }
    }

    /// Reads one unauthenticated message that fills `bytes` exactly.
    pub fn decode(bytes: &[u8]) -> Result<ProbeMessage, ProbeError> {
        Self::decode_with(bytes, None)
    }

    /// Reads one message that fills `bytes` exactly. With a `key`, the message must carry a
    /// tag the key gives; without one, it must carry none.
    pub fn decode_with(bytes: &[u8], key: Option<&ProbeKey>) -> Result<ProbeMessage, ProbeError> {
        let got = bytes.len();
        let mut r = Reader { bytes, pos: 0 };
        let header = r.take::<HEADER_LEN>()?;
        let [version, ty, l0, l1] = header;
        if version != VERSION {
            return Err(ProbeError::BadVersion(version));
        }
        let field = usize::from(u16::from_be_bytes([l0, l1]));
        let tagged = ty & TYPE_AUTHENTICATED != 0;
        let tag_len = if tagged { TAG_LEN } else { 0 };
        let fixed = match ty & !TYPE_AUTHENTICATED {
            TYPE_PROBE => PROBE_FIXED_LEN,
            TYPE_RESPONSE => RESPONSE_FIXED_LEN,
            _ => return Err(ProbeError::BadType(ty)),
        } + tag_len;
        if got < fixed {
            return Err(ProbeError::Truncated { need: fixed, got });
        }
        // The length check comes first so that the tag is taken from where the sender put it.
        let (count, entry) = if ty & !TYPE_AUTHENTICATED == TYPE_PROBE {
            let room = u16::from_be_bytes([bytes[16], bytes[17]]);
            (u64::from(room), ROOM_ENTRY_LEN as u64)
        } else {
            let n = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
            (u64::from(n), FLOW_ENTRY_LEN as u64)
        };
        // Computed in u64 so that a huge count cannot overflow; anything beyond the 16-bit
        // length field is a mismatch.
        let expected = (fixed as u64).saturating_add(entry.saturating_mul(count));
        let expected = usize::try_from(expected).unwrap_or(usize::MAX);
        check_length(field, expected, got)?;
        let body = expected - tag_len;
        match (tagged, key) {
            (true, Some(k)) if k.verify(&bytes[..body], &bytes[body..expected]) => {}
            (true, Some(_)) | (false, Some(_)) => return Err(ProbeError::Unauthenticated),
            (true, None) => return Err(ProbeError::NoKey),
            (false, None) => {}
        }
        let n = usize::try_from(count).unwrap_or(0);
        let msg = if ty & !TYPE_AUTHENTICATED == TYPE_PROBE {
            let seq = u32::from_be_bytes(r.take()?);
            let nonce = u64::from_be_bytes(r.take()?);
            let room = u16::from_be_bytes(r.take()?);
            if let Some(at) = bytes[18..body].iter().position(|b| *b != 0) {
                return Err(ProbeError::NonZeroPadding(18 + at));
            }
            ProbeMessage::Probe(Probe { seq, nonce, room })
        } else {
            let thisprobe = u32::from_be_bytes(r.take()?);
            let lastprobe = u32::from_be_bytes(r.take()?);
            let nonce = u64::from_be_bytes(r.take()?);
            let _nflows = r.take::<4>()?;
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

    const KEY: ProbeKey = ProbeKey([0x0b; 32]);

    #[test]
    fn a_probe_with_room_for_one_flow_encodes_to_its_documented_36_bytes() {
        let p = ProbeMessage::Probe(Probe {
            seq: 0x0102_0304,
            nonce: 0x1122_3344_5566_7788,
            room: 1,
        });
        let expected: Vec<u8> = [
            &[3u8, 1, 0, 36][..],                              // version, type, length
            &[1, 2, 3, 4],                                     // seq
            &[0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88], // nonce
            &[0, 1, 0, 0],                                     // room 1, reserved
            &[0; 16],                                          // padding for one entry
        ]
        .concat();
        assert_eq!(enc(&p), expected);
        assert_eq!(enc(&p).len(), PROBE_LEN);
        assert_eq!(ProbeMessage::decode(&expected), Ok(p));
    }

    #[test]
    fn a_response_encodes_to_its_documented_bytes() {
        let bytes = enc(&sample_response().into());
        let expected: Vec<u8> = [
            &[3u8, 2, 0, 56][..],            // version, type, length 24 + 32
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
    fn the_tag_is_hmac_sha256_truncated_to_16_bytes_rfc_4231_case_2() {
        // RFC 4231 section 4.3, test case 2: key "Jefe", data "what do ya want for nothing?",
        // HMAC-SHA-256 = 5bdcc146bf60754e6a042426089575c7 5a003f089d2739839dec58b964ec3843.
        let mut key = [0u8; 32];
        key[..4].copy_from_slice(b"Jefe");
        // A key shorter than the block is zero-padded (RFC 2104 section 2), so "Jefe" and
        // "Jefe" followed by 28 zero bytes are the same key.
        let tag = ProbeKey(key).tag(b"what do ya want for nothing?");
        assert_eq!(
            tag,
            [
                0x5b, 0xdc, 0xc1, 0x46, 0xbf, 0x60, 0x75, 0x4e, 0x6a, 0x04, 0x24, 0x26, 0x08, 0x95,
                0x75, 0xc7
            ]
        );
    }

    #[test]
    fn an_authenticated_probe_is_the_plain_one_with_the_type_bit_the_length_and_a_tag() {
        let p = ProbeMessage::Probe(Probe {
            seq: 1,
            nonce: 2,
            room: 0,
        });
        let mut v = Vec::new();
        p.encode_with(Some(&KEY), &mut v);
        assert_eq!(&v[..4], &[3, 0x81, 0, 36]);
        assert_eq!(v.len(), 20 + TAG_LEN);
        assert_eq!(&v[20..], &KEY.tag(&v[..20]));
        assert_eq!(ProbeMessage::decode_with(&v, Some(&KEY)), Ok(p.clone()));
        // Without the key, or with another, or with a bit flipped, it is refused.
        assert_eq!(ProbeMessage::decode(&v), Err(ProbeError::NoKey));
        let other = ProbeKey([0x0c; 32]);
        assert_eq!(
            ProbeMessage::decode_with(&v, Some(&other)),
            Err(ProbeError::Unauthenticated)
        );
        for at in 4..v.len() {
            let mut w = v.clone();
            w[at] ^= 1;
            assert!(ProbeMessage::decode_with(&w, Some(&KEY)).is_err(), "{at}");
        }
        // A host with a key refuses an unauthenticated message.
        assert_eq!(
            ProbeMessage::decode_with(&enc(&p), Some(&KEY)),
            Err(ProbeError::Unauthenticated)
        );
    }

    #[test]
    fn a_response_is_at_most_twice_the_probe_that_makes_room_for_it() {
        for room in [0usize, 1, 2, 10, 1000, MAX_FLOWS] {
            let probe = ProbeMessage::Probe(Probe {
                seq: 1,
                nonce: 0,
                room: room as u16,
            });
            let response = ProbeMessage::Response(Response {
                flows: vec![FlowCount::default(); room],
                ..Response::default()
            });
            for key in [None, Some(&KEY)] {
                let (mut p, mut r) = (Vec::new(), Vec::new());
                probe.encode_with(key, &mut p);
                response.encode_with(key, &mut r);
                assert!(
                    r.len() <= 2 * p.len(),
                    "room {room}: {} > 2 x {}",
                    r.len(),
                    p.len()
                );
                assert!(p.len() <= MAX_DATAGRAM && r.len() <= MAX_DATAGRAM);
            }
        }
    }

    #[test]
    fn malformed_messages_give_typed_errors() {
        let good = enc(&sample_response().into());
        assert_eq!(
            ProbeMessage::decode(&good[..3]),
            Err(ProbeError::Truncated { need: 4, got: 3 })
        );
        let mut v = good.clone();
        v[0] = 2;
        assert_eq!(ProbeMessage::decode(&v), Err(ProbeError::BadVersion(2)));
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
            ProbeMessage::decode(&[3, 1, 0, 21, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(ProbeError::LengthMismatch {
                field: 21,
                expected: 20
            })
        );
        let mut probe = enc(&Probe {
            seq: 1,
            nonce: 0,
            room: 1,
        }
        .into());
        probe[30] = 7;
        assert_eq!(
            ProbeMessage::decode(&probe),
            Err(ProbeError::NonZeroPadding(30))
        );
        probe[30] = 0;
        probe[19] = 1;
        assert_eq!(
            ProbeMessage::decode(&probe),
            Err(ProbeError::NonZeroPadding(19))
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

    #[test]
    fn os_nonces_come_from_the_function_passed_in() {
        fn fixed() -> u64 {
            42
        }
        let mut s = NonceSource::Os(fixed);
        assert_eq!(s.next_nonce(), 42);
        let mut seeded = NonceSource::Seeded(Rng::new(1));
        assert_eq!(seeded.next_nonce(), Rng::new(1).next_u64());
    }

    fn random_message(rng: &mut Rng) -> ProbeMessage {
        if rng.bernoulli(0.3) {
            return ProbeMessage::Probe(Probe {
                seq: rng.next_u64() as u32,
                nonce: rng.next_u64(),
                room: rng.below(4) as u16,
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
            let key = if i % 3 == 0 { Some(&KEY) } else { None };
            let mut bytes: Vec<u8> = if i % 2 == 0 {
                // Pure noise of any length up to 100 bytes.
                let len = rng.below(101) as usize;
                (0..len).map(|_| rng.next_u64() as u8).collect()
            } else {
                // A valid message with a few bytes changed, cut or extended: reaches the deep
                // paths that noise rarely does.
                let mut v = Vec::new();
                random_message(&mut rng).encode_with(key, &mut v);
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
            if ProbeMessage::decode_with(&bytes, key).is_ok() {
                decoded += 1;
            }
        }
        assert!(decoded > 0, "some mutated messages stay valid");
    }

    #[test]
    fn decode_inverts_encode_for_random_valid_messages() {
        let mut rng = Rng::new(0xBEEF);
        for i in 0..20_000 {
            let key = if i % 2 == 0 { Some(&KEY) } else { None };
            let m = random_message(&mut rng);
            let mut bytes = Vec::new();
            m.encode_with(key, &mut bytes);
            assert_eq!(bytes.len(), m.encoded_len() + key.map_or(0, |_| TAG_LEN));
            assert_eq!(ProbeMessage::decode_with(&bytes, key), Ok(m));
        }
    }
}
