//! GCCP messages: the Generic Congestion Control Protocol's only packet (Liu, Cheung & Baras,
//! section 3.1 and Fig. 2).
//!
//! A GCCP message travels directly in a link-layer frame of its own, identified by the frame's
//! type field ([`GCCP_ETHERTYPE`]); it never goes further than the neighbouring node. The
//! figure that fixes the field widths did not survive in our copy of the paper, so concord
//! chooses them: one 32-bit word of four one-byte fields, followed, when OPTIONS is 1, by the
//! three-word PADDING block. All multi-byte fields are big-endian (network order).
//!
//! ```text
//! (a) the overall format                   LEN = 1 (4 bytes) without padding,
//!                                          LEN = 4 (16 bytes) with it
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +---------------+---------------+---------------+---------------+
//! |  VERS (= 1)   | LEN (32-bit   |   OPTIONS     |     CODE      |
//! |               |    words)     | 0: no padding | 0: NORMAL     |
//! |               |               | 1: padding    | 1: CONGESTION |
//! +---------------+---------------+---------------+---------------+
//! |          PADDING (3 words, present if and only if OPTIONS = 1)  |
//! +- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -+
//!
//! (b) the PADDING block: the flow the message concerns
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +---------------------------------------------------------------+
//! |                       SOURCE IP ADDRESS                       |
//! +---------------------------------------------------------------+
//! |                    DESTINATION IP ADDRESS                     |
//! +-------------------------------+-------------------------------+
//! |          SOURCE PORT          |       DESTINATION PORT        |
//! +-------------------------------+-------------------------------+
//! ```
//!
//! LEN counts every word of the message, its own included. OPTIONS = 1 says the sender is an
//! edge router talking to a host, which needs the padding to find the flow (section 3.1).
//!
//! [`GccpMessage::decode`] is strict: it accepts exactly the bytes [`GccpMessage::encode`]
//! produces, so `encode(decode(b)) == b` for every `b` that decodes. A frame's payload may carry
//! link-layer padding after the message; [`GccpMessage::decode_prefix`] and [`decode_frame`]
//! use LEN to cut the message out and leave the rest.

use crate::wire::EthernetHeader;
use std::net::Ipv4Addr;

/// The EtherType that marks a frame carrying a GCCP message: IEEE 802 "local experimental
/// EtherType 1" (0x88B5), reserved for private protocols and never assigned to a product.
pub const GCCP_ETHERTYPE: u16 = 0x88B5;

/// The GCCP version concord speaks (section 3.1: "it contains 1 for current GCCP").
pub const GCCP_VERSION: u8 = 1;

/// Length of the fixed part (VERS, LEN, OPTIONS, CODE), in bytes.
pub const HEADER_LEN: usize = 4;

/// Length of the PADDING block, in bytes.
pub const PADDING_LEN: usize = 12;

/// Length of an Ethernet II header, in bytes (two MAC addresses and the EtherType).
const ETHERNET_LEN: usize = EthernetHeader::LEN;

/// The congestion information a message carries (field CODE).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Code {
    /// 0: the congestion has disappeared.
    Normal,
    /// 1: incipient congestion was detected.
    Congestion,
}

impl Code {
    /// The value of the CODE field.
    pub const fn to_wire(self) -> u8 {
        match self {
            Code::Normal => 0,
            Code::Congestion => 1,
        }
    }

    /// The code a CODE field holds, if it is one GCCP defines.
    pub const fn from_wire(value: u8) -> Option<Code> {
        match value {
            0 => Some(Code::Normal),
            1 => Some(Code::Congestion),
            _ => None,
        }
    }
}

/// The PADDING block (Fig. 2(b)): the flow a message concerns, as the data packet that
/// triggered it carried it, so the source is the host receiving the message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Padding {
    /// SOURCE IP ADDRESS of the flow.
    pub src_addr: Ipv4Addr,
    /// DESTINATION IP ADDRESS of the flow.
    pub dst_addr: Ipv4Addr,
    /// SOURCE PORT of the flow.
    pub src_port: u16,
    /// DESTINATION PORT of the flow.
    pub dst_port: u16,
}

/// One GCCP message. The version and LEN are implied: VERS is always [`GCCP_VERSION`], LEN
/// and OPTIONS follow from whether `padding` is present.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GccpMessage {
    /// CONGESTION or NORMAL.
    pub code: Code,
    /// The flow concerned; present only in messages from an edge router to a host
    /// (OPTIONS = 1).
    pub padding: Option<Padding>,
}

/// Why bytes are not a GCCP message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GccpError {
    /// Fewer bytes than a frame or the fixed part of a message needs.
    #[error("truncated: need {need} bytes, got {got}")]
    Truncated {
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// VERS is not [`GCCP_VERSION`].
    #[error("GCCP version {0} is not supported (expected {GCCP_VERSION})")]
    WrongVersion(u8),
    /// OPTIONS is neither 0 nor 1.
    #[error("OPTIONS = {0} is not defined (0: no padding, 1: padding)")]
    UnknownOptions(u8),
    /// CODE is neither 0 (NORMAL) nor 1 (CONGESTION).
    #[error("CODE = {0} is not defined (0: NORMAL, 1: CONGESTION)")]
    UnknownCode(u8),
    /// LEN disagrees with the bytes present: it announces more than there are, or zero words
    /// (less than the word that holds LEN itself).
    #[error("LEN = {len_words} words but {present} bytes are present")]
    LengthMismatch {
        /// The LEN field, in 32-bit words.
        len_words: u8,
        /// Bytes present.
        present: usize,
    },
    /// OPTIONS and LEN disagree on whether the padding block is there (OPTIONS = 1 needs
    /// LEN = 4, OPTIONS = 0 needs LEN = 1).
    #[error("OPTIONS = {options} does not fit LEN = {len_words} words")]
    OptionsPaddingMismatch {
        /// The OPTIONS field.
        options: u8,
        /// The LEN field, in 32-bit words.
        len_words: u8,
    },
    /// Bytes follow the LEN words of the message.
    #[error("{extra} bytes follow the message")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
    /// A frame's EtherType is not [`GCCP_ETHERTYPE`].
    #[error("EtherType {0:#06x} is not GCCP ({GCCP_ETHERTYPE:#06x})")]
    NotGccp(u16),
}

impl GccpMessage {
    /// A CONGESTION message, without padding (router to router).
    pub const fn congestion() -> GccpMessage {
        GccpMessage {
            code: Code::Congestion,
            padding: None,
        }
    }

    /// A NORMAL message, without padding (router to router).
    pub const fn normal() -> GccpMessage {
        GccpMessage {
            code: Code::Normal,
            padding: None,
        }
    }

    /// The OPTIONS field: 1 if the padding is present, else 0.
    pub const fn options(&self) -> u8 {
        if self.padding.is_some() {
            1
        } else {
            0
        }
    }

    /// The LEN field: the message's length in 32-bit words (1 or 4).
    pub const fn len_words(&self) -> u8 {
        if self.padding.is_some() {
            4
        } else {
            1
        }
    }

    /// The encoded length, in bytes (4 or 16).
    pub const fn encoded_len(&self) -> usize {
        self.len_words() as usize * 4
    }

    /// Appends the message's bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[
            GCCP_VERSION,
            self.len_words(),
            self.options(),
            self.code.to_wire(),
        ]);
        if let Some(p) = &self.padding {
            out.extend_from_slice(&p.src_addr.octets());
            out.extend_from_slice(&p.dst_addr.octets());
            out.extend_from_slice(&p.src_port.to_be_bytes());
            out.extend_from_slice(&p.dst_port.to_be_bytes());
        }
    }

    /// Reads a message that fills `bytes` exactly; bytes after its LEN words are an error.
    pub fn decode(bytes: &[u8]) -> Result<GccpMessage, GccpError> {
        let (msg, used) = GccpMessage::decode_prefix(bytes)?;
        match bytes.len().saturating_sub(used) {
            0 => Ok(msg),
            extra => Err(GccpError::TrailingBytes { extra }),
        }
    }

    /// Reads a message from the start of `bytes` and returns it with the bytes it used
    /// (LEN * 4); anything after, such as the link layer's padding, is left to the caller.
    ///
    /// Checks, in this order: the fixed part is present, VERS, OPTIONS, CODE, LEN against the
    /// bytes present, LEN against OPTIONS.
    pub fn decode_prefix(bytes: &[u8]) -> Result<(GccpMessage, usize), GccpError> {
        let Some(&[vers, len_words, options, code]) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(GccpError::Truncated {
                need: HEADER_LEN,
                got: bytes.len(),
            });
        };
        if vers != GCCP_VERSION {
            return Err(GccpError::WrongVersion(vers));
        }
        let has_padding = match options {
            0 => false,
            1 => true,
            other => return Err(GccpError::UnknownOptions(other)),
        };
        let code = Code::from_wire(code).ok_or(GccpError::UnknownCode(code))?;
        let len_bytes = usize::from(len_words) * 4;
        if len_words == 0 || len_bytes > bytes.len() {
            return Err(GccpError::LengthMismatch {
                len_words,
                present: bytes.len(),
            });
        }
        let expected = if has_padding {
            HEADER_LEN + PADDING_LEN
        } else {
            HEADER_LEN
        };
        if len_bytes != expected {
            return Err(GccpError::OptionsPaddingMismatch { options, len_words });
        }
        let padding = if has_padding {
            // LEN = 4 and LEN * 4 <= bytes.len() were checked: the 12 bytes are there.
            let Some(p) = bytes
                .get(HEADER_LEN..HEADER_LEN + PADDING_LEN)
                .and_then(|s| s.first_chunk::<PADDING_LEN>())
            else {
                return Err(GccpError::Truncated {
                    need: HEADER_LEN + PADDING_LEN,
                    got: bytes.len(),
                });
            };
            Some(Padding {
                src_addr: Ipv4Addr::new(p[0], p[1], p[2], p[3]),
                dst_addr: Ipv4Addr::new(p[4], p[5], p[6], p[7]),
                src_port: u16::from_be_bytes([p[8], p[9]]),
                dst_port: u16::from_be_bytes([p[10], p[11]]),
            })
        } else {
            None
        };
        Ok((GccpMessage { code, padding }, len_bytes))
    }
}

/// Appends an Ethernet II frame carrying `msg` to `out`: destination MAC, source MAC,
/// [`GCCP_ETHERTYPE`], then the message (section 3.1: "a GCCP message is immediately carried in
/// a physical frame"). The frame is not padded to Ethernet's 60-byte minimum, as in a capture
/// taken at the sender; [`decode_frame`] accepts both.
pub fn encode_frame(src_mac: [u8; 6], dst_mac: [u8; 6], msg: &GccpMessage, out: &mut Vec<u8>) {
    let header = EthernetHeader {
        dst: dst_mac,
        src: src_mac,
        ethertype: GCCP_ETHERTYPE,
    };
    header.encode(out);
    msg.encode(out);
}

/// Reads an Ethernet II frame carrying a GCCP message; bytes after the message's LEN words
/// (the link layer's minimum-size padding) are ignored.
pub fn decode_frame(frame: &[u8]) -> Result<(EthernetHeader, GccpMessage), GccpError> {
    let (header, _) = EthernetHeader::decode(frame).map_err(|_| GccpError::Truncated {
        need: ETHERNET_LEN,
        got: frame.len(),
    })?;
    if header.ethertype != GCCP_ETHERTYPE {
        return Err(GccpError::NotGccp(header.ethertype));
    }
    let payload = frame.get(ETHERNET_LEN..).unwrap_or_default();
    let (msg, _) = GccpMessage::decode_prefix(payload)?;
    Ok((header, msg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    fn flow() -> Padding {
        Padding {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(192, 168, 1, 20),
            src_port: 5004,
            dst_port: 0x1F90,
        }
    }

    fn bytes(msg: &GccpMessage) -> Vec<u8> {
        let mut out = Vec::new();
        msg.encode(&mut out);
        out
    }

    #[test]
    fn a_router_to_router_congestion_message_is_one_word() {
        assert_eq!(bytes(&GccpMessage::congestion()), [1, 1, 0, 1]);
        assert_eq!(bytes(&GccpMessage::normal()), [1, 1, 0, 0]);
        assert_eq!(
            GccpMessage::decode(&[1, 1, 0, 1]),
            Ok(GccpMessage::congestion())
        );
        assert_eq!(
            GccpMessage::decode(&[1, 1, 0, 0]),
            Ok(GccpMessage::normal())
        );
    }

    #[test]
    fn an_edge_to_host_message_carries_the_flow_in_four_words() {
        let msg = GccpMessage {
            code: Code::Congestion,
            padding: Some(flow()),
        };
        let expected = [
            1, 4, 1, 1, // VERS, LEN, OPTIONS, CODE
            10, 0, 0, 1, // source address
            192, 168, 1, 20, // destination address
            0x13, 0x8C, 0x1F, 0x90, // source port 5004, destination port 8080
        ];
        assert_eq!(bytes(&msg), expected);
        assert_eq!(msg.encoded_len(), 16);
        assert_eq!(GccpMessage::decode(&expected), Ok(msg));
        let normal = GccpMessage {
            code: Code::Normal,
            ..msg
        };
        assert_eq!(bytes(&normal)[..4], [1, 4, 1, 0]);
    }

    #[test]
    fn malformed_messages_get_the_error_that_names_the_fault() {
        use GccpError::*;
        let cases: &[(&[u8], GccpError)] = &[
            (&[], Truncated { need: 4, got: 0 }),
            (&[1, 1, 0], Truncated { need: 4, got: 3 }),
            (&[2, 1, 0, 1], WrongVersion(2)),
            (&[1, 1, 7, 1], UnknownOptions(7)),
            (&[1, 1, 0, 2], UnknownCode(2)),
            (
                &[1, 0, 0, 1],
                LengthMismatch {
                    len_words: 0,
                    present: 4,
                },
            ),
            (
                &[1, 4, 1, 1, 10, 0, 0, 1],
                LengthMismatch {
                    len_words: 4,
                    present: 8,
                },
            ),
            (
                &[1, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                OptionsPaddingMismatch {
                    options: 0,
                    len_words: 4,
                },
            ),
            (
                &[1, 1, 1, 1],
                OptionsPaddingMismatch {
                    options: 1,
                    len_words: 1,
                },
            ),
            (&[1, 1, 0, 1, 0], TrailingBytes { extra: 1 }),
        ];
        for (input, error) in cases {
            assert_eq!(GccpMessage::decode(input).as_ref(), Err(error), "{input:?}");
        }
    }

    #[test]
    fn decode_prefix_leaves_the_bytes_after_the_message() {
        assert_eq!(
            GccpMessage::decode_prefix(&[1, 1, 0, 0, 0xAA, 0xBB]),
            Ok((GccpMessage::normal(), 4))
        );
    }

    #[test]
    fn a_frame_is_an_ethernet_header_with_the_local_experimental_ethertype() {
        let src = [0x02, 0, 0, 0, 0, 0x01];
        let dst = [0x02, 0, 0, 0, 0, 0x02];
        let mut out = Vec::new();
        encode_frame(src, dst, &GccpMessage::congestion(), &mut out);
        assert_eq!(
            out,
            [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xB5, 1, 1, 0, 1]
        );
        // The link layer pads short frames to 60 bytes; the padding is ignored.
        out.resize(60, 0);
        let (header, msg) = decode_frame(&out).expect("a valid frame");
        assert_eq!((header.src, header.dst), (src, dst));
        assert_eq!(header.ethertype, GCCP_ETHERTYPE);
        assert_eq!(msg, GccpMessage::congestion());
        out[12] = 0x08;
        out[13] = 0x00;
        assert_eq!(decode_frame(&out), Err(GccpError::NotGccp(0x0800)));
        assert_eq!(
            decode_frame(&out[..10]),
            Err(GccpError::Truncated { need: 14, got: 10 })
        );
    }

    fn random_message(rng: &mut Rng) -> GccpMessage {
        let code = if rng.bernoulli(0.5) {
            Code::Congestion
        } else {
            Code::Normal
        };
        let padding = rng.bernoulli(0.5).then(|| {
            let a = rng.next_u64();
            let b = rng.next_u64();
            Padding {
                src_addr: Ipv4Addr::from((a >> 32) as u32),
                dst_addr: Ipv4Addr::from(a as u32),
                src_port: (b >> 16) as u16,
                dst_port: b as u16,
            }
        });
        GccpMessage { code, padding }
    }

    #[test]
    fn random_bytes_never_panic_and_whatever_decodes_re_encodes_to_the_same_bytes() {
        let mut rng = Rng::new(0x6CCA);
        let mut decoded = 0u32;
        let mut errors = std::collections::HashSet::new();
        for _ in 0..200_000 {
            // Half the inputs have one of the two valid lengths, and three in four a plausible
            // fixed part, so that every check is reached.
            let len = if rng.bernoulli(0.5) {
                [4, 16][rng.below(2) as usize]
            } else {
                rng.below(24) as usize
            };
            let mut b: Vec<u8> = (0..len).map(|_| rng.next_u64() as u8).collect();
            if rng.bernoulli(0.75) {
                let len_words = [0, 1, 4, 5][rng.below(4) as usize];
                let plausible = [1, len_words, rng.below(3) as u8, rng.below(3) as u8];
                for (dst, src) in b.iter_mut().zip(plausible) {
                    *dst = src;
                }
            }
            let _ = GccpMessage::decode_prefix(&b);
            let _ = decode_frame(&b);
            match GccpMessage::decode(&b) {
                Ok(msg) => {
                    assert_eq!(bytes(&msg), b);
                    decoded += 1;
                }
                Err(e) => {
                    errors.insert(std::mem::discriminant(&e));
                }
            }
        }
        assert!(decoded > 2_000, "only {decoded} random inputs decoded");
        assert_eq!(errors.len(), 7, "every error but NotGccp occurs");
    }

    #[test]
    fn random_valid_messages_survive_encode_then_decode() {
        let mut rng = Rng::new(77);
        for _ in 0..10_000 {
            let msg = random_message(&mut rng);
            let b = bytes(&msg);
            assert_eq!(b.len(), msg.encoded_len());
            assert_eq!(GccpMessage::decode(&b), Ok(msg));
        }
    }
}
