//! IPv4 header (RFC 791 section 3.1) with the DSCP (RFC 2474) and ECN (RFC 3168) fields.

use super::checksum::checksum;
use super::WireError;
use std::net::Ipv4Addr;

/// The two-bit ECN field of the IP header (RFC 3168 section 5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (00).
    #[default]
    NotEct = 0b00,
    /// ECN-capable transport, ECT(1) (01).
    Ect1 = 0b01,
    /// ECN-capable transport, ECT(0) (10).
    Ect0 = 0b10,
    /// Congestion experienced (11).
    Ce = 0b11,
}

impl Ecn {
    /// True for ECT(0), ECT(1) and CE: the transport understands ECN.
    pub fn is_capable(self) -> bool {
        self != Ecn::NotEct
    }

    /// The codepoint in the two low bits of `bits` (the TOS byte or the field alone).
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }
}

/// An IPv4 header without options.
///
/// Encoded as 20 bytes; options found on decode are skipped. Flags are DF on encode, and
/// fragments are not represented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Header {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// The upper six bits of the TOS byte (DSCP); ECA's 8-bit load codec may use the whole byte
    /// with `ecn` left NotEct.
    pub dscp: u8,
    /// The lower two bits of the TOS byte.
    pub ecn: Ecn,
    /// Identification field.
    pub id: u16,
    /// Time to live.
    pub ttl: u8,
    /// Transport protocol number (6 TCP, 17 UDP).
    pub protocol: u8,
    /// Total length of the datagram in bytes, header included.
    pub total_len: u16,
}

impl Ipv4Header {
    /// Length of a header without options, in bytes (IHL 5).
    pub const LEN: usize = 20;
    /// The IP version this codec speaks.
    pub const VERSION: u8 = 4;
    /// Protocol number of TCP.
    pub const PROTOCOL_TCP: u8 = 6;
    /// Protocol number of UDP.
    pub const PROTOCOL_UDP: u8 = 17;
    /// Don't Fragment, in the flags-and-fragment-offset word (RFC 791 section 3.1).
    const FLAG_DF: u16 = 0x4000;
    /// More Fragments, in the flags-and-fragment-offset word.
    const FLAG_MF: u16 = 0x2000;
    /// The 13-bit fragment offset, in units of 8 bytes.
    const FRAGMENT_OFFSET: u16 = 0x1fff;

    /// The TOS byte (RFC 2474 section 3, RFC 3168 section 5): DSCP in the upper six bits, ECN
    /// in the lower two. Bits of `dscp` above the sixth do not fit and are dropped.
    pub fn tos(&self) -> u8 {
        ((self.dscp & 0x3f) << 2) | self.ecn as u8
    }

    /// Appends the 20-byte header to `out`: version 4, IHL 5, no options, DF set, fragment
    /// offset 0, and the header checksum computed over the header (RFC 791 section 3.1).
    /// `total_len` is written as it stands.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut h = [0u8; Self::LEN];
        h[0] = (Self::VERSION << 4) | (Self::LEN / 4) as u8;
        h[1] = self.tos();
        h[2..4].copy_from_slice(&self.total_len.to_be_bytes());
        h[4..6].copy_from_slice(&self.id.to_be_bytes());
        h[6..8].copy_from_slice(&Self::FLAG_DF.to_be_bytes());
        h[8] = self.ttl;
        h[9] = self.protocol;
        // Bytes 10..12, the checksum, are zero while it is computed.
        h[12..16].copy_from_slice(&self.src.octets());
        h[16..20].copy_from_slice(&self.dst.octets());
        let sum = checksum(&h);
        h[10..12].copy_from_slice(&sum.to_be_bytes());
        out.extend_from_slice(&h);
    }

    /// Reads a header from the start of `bytes`; returns it and the header length consumed
    /// (IHL x 4 bytes, options included and skipped).
    ///
    /// Checks the version (4), IHL >= 5, that the header's bytes are present, the header
    /// checksum, and total length >= header length. The datagram's payload may be missing
    /// (a truncated capture) and bytes may follow it (link padding): neither is checked here.
    /// Fragments (MF set or a nonzero offset) are rejected, as this header cannot describe
    /// them; DF and the reserved flag are ignored.
    pub fn decode(bytes: &[u8]) -> Result<(Ipv4Header, usize), WireError> {
        const WHAT: &str = "ipv4";
        let Some(fixed) = bytes.get(..Self::LEN) else {
            return Err(WireError::Truncated {
                what: WHAT,
                need: Self::LEN,
                got: bytes.len(),
            });
        };
        let version = fixed[0] >> 4;
        if version != Self::VERSION {
            return Err(WireError::BadVersion {
                what: WHAT,
                version,
            });
        }
        // IHL counts 32-bit words.
        let header_len = usize::from(fixed[0] & 0x0f) * 4;
        if header_len < Self::LEN {
            return Err(WireError::BadLength {
                what: WHAT,
                value: header_len,
            });
        }
        let Some(header) = bytes.get(..header_len) else {
            return Err(WireError::Truncated {
                what: WHAT,
                need: header_len,
                got: bytes.len(),
            });
        };
        if checksum(header) != 0 {
            return Err(WireError::BadChecksum { what: WHAT });
        }
        let total_len = u16::from_be_bytes([fixed[2], fixed[3]]);
        if usize::from(total_len) < header_len {
            return Err(WireError::BadLength {
                what: WHAT,
                value: usize::from(total_len),
            });
        }
        let fragment = u16::from_be_bytes([fixed[6], fixed[7]]);
        if fragment & (Self::FLAG_MF | Self::FRAGMENT_OFFSET) != 0 {
            return Err(WireError::BadField {
                what: WHAT,
                field: "fragment",
                value: u64::from(fragment),
            });
        }
        let tos = fixed[1];
        let header = Ipv4Header {
            src: Ipv4Addr::new(fixed[12], fixed[13], fixed[14], fixed[15]),
            dst: Ipv4Addr::new(fixed[16], fixed[17], fixed[18], fixed[19]),
            dscp: tos >> 2,
            ecn: Ecn::from_bits(tos),
            id: u16::from_be_bytes([fixed[4], fixed[5]]),
            ttl: fixed[8],
            protocol: fixed[9],
            total_len,
        };
        Ok((header, header_len))
    }

    /// Length of the encoded header, in bytes (always 20: options are never written).
    #[expect(clippy::len_without_is_empty, reason = "a header is never empty")]
    pub fn len(&self) -> usize {
        Self::LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 192.168.1.10 -> 203.0.113.7, DSCP 46 (EF) with ECT(1), 1500 bytes, id 0xbeef, TTL 255, UDP.
    fn sample() -> Ipv4Header {
        Ipv4Header {
            src: Ipv4Addr::new(192, 168, 1, 10),
            dst: Ipv4Addr::new(203, 0, 113, 7),
            dscp: 46,
            ecn: Ecn::Ect1,
            id: 0xbeef,
            ttl: 255,
            protocol: Ipv4Header::PROTOCOL_UDP,
            total_len: 1500,
        }
    }

    /// The header checksum of `sample()`, worked by hand (RFC 1071), 16-bit words in hex:
    ///
    /// ```text
    ///   45b9 + 05dc = 04b95      version/IHL/TOS + total length 1500
    ///        + beef = 10a84      id
    ///        + 4000 = 14a84      DF
    ///        + ff11 = 24995      TTL 255, protocol 17 (checksum word 0000 skipped)
    ///        + c0a8 = 30a3d      192.168
    ///        + 010a = 30b47      1.10
    ///        + cb00 = 3d647      203.0
    ///        + 7107 = 4474e      113.7
    ///   fold: 474e + 4 = 4752;   complement: ffff - 4752 = b8ad
    /// ```
    #[rustfmt::skip]
    const SAMPLE_BYTES: [u8; 20] = [
        0x45, 0xb9, 0x05, 0xdc, // version 4, IHL 5, TOS (46 << 2) | 0b01, total length 1500
        0xbe, 0xef, 0x40, 0x00, // id, DF, fragment offset 0
        0xff, 0x11, 0xb8, 0xad, // TTL 255, protocol 17, header checksum
        192, 168, 1, 10, // source
        203, 0, 113, 7, // destination
    ];

    #[test]
    fn encodes_the_hand_computed_bytes() {
        let mut out = Vec::new();
        sample().encode(&mut out);
        assert_eq!(out, SAMPLE_BYTES);
        assert_eq!(sample().len(), 20);
    }

    #[test]
    fn a_second_hand_computed_checksum_without_carries() {
        // 10.0.0.1 -> 10.0.0.2, ECT(0), 52 bytes, id 1, TTL 64, TCP. Words:
        // 4502 + 0034 + 0001 + 4000 + 4006 + 0a00 + 0001 + 0a00 + 0002 = d940, no carry;
        // checksum ffff - d940 = 26bf.
        let h = Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::Ect0,
            id: 1,
            ttl: 64,
            protocol: Ipv4Header::PROTOCOL_TCP,
            total_len: 52,
        };
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(&out[10..12], &[0x26, 0xbf]);
        assert_eq!(Ipv4Header::decode(&out), Ok((h, 20)));
    }

    #[test]
    fn decodes_the_hand_computed_bytes_with_any_trailing_data() {
        assert_eq!(Ipv4Header::decode(&SAMPLE_BYTES), Ok((sample(), 20)));
        let mut longer = SAMPLE_BYTES.to_vec();
        longer.extend_from_slice(&[0xaa; 7]);
        assert_eq!(Ipv4Header::decode(&longer), Ok((sample(), 20)));
    }

    #[test]
    fn the_tos_byte_holds_dscp_and_ecn() {
        for ecn in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            let h = Ipv4Header {
                dscp: 0x2a,
                ecn,
                ..sample()
            };
            assert_eq!(h.tos(), 0xa8 | ecn as u8);
            assert_eq!(Ecn::from_bits(h.tos()), ecn);
        }
    }

    #[test]
    fn options_are_skipped_and_counted_as_consumed() {
        // IHL 6: one word of options (NOP, NOP, NOP, EOL), checksum recomputed over 24 bytes.
        let mut bytes = SAMPLE_BYTES.to_vec();
        bytes[0] = 0x46;
        bytes.extend_from_slice(&[1, 1, 1, 0]);
        bytes[10..12].copy_from_slice(&[0, 0]);
        let sum = checksum(&bytes);
        bytes[10..12].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(Ipv4Header::decode(&bytes), Ok((sample(), 24)));
    }

    #[test]
    fn nineteen_bytes_are_truncated() {
        assert_eq!(
            Ipv4Header::decode(&SAMPLE_BYTES[..19]),
            Err(WireError::Truncated {
                what: "ipv4",
                need: 20,
                got: 19
            })
        );
    }

    #[test]
    fn options_beyond_the_buffer_are_truncated() {
        let mut bytes = SAMPLE_BYTES;
        bytes[0] = 0x47;
        assert_eq!(
            Ipv4Header::decode(&bytes),
            Err(WireError::Truncated {
                what: "ipv4",
                need: 28,
                got: 20
            })
        );
    }

    #[test]
    fn version_6_is_rejected() {
        let mut bytes = SAMPLE_BYTES;
        bytes[0] = 0x65;
        assert_eq!(
            Ipv4Header::decode(&bytes),
            Err(WireError::BadVersion {
                what: "ipv4",
                version: 6
            })
        );
    }

    #[test]
    fn an_ihl_below_five_is_a_bad_length() {
        let mut bytes = SAMPLE_BYTES;
        bytes[0] = 0x44;
        assert_eq!(
            Ipv4Header::decode(&bytes),
            Err(WireError::BadLength {
                what: "ipv4",
                value: 16
            })
        );
    }

    #[test]
    fn a_flipped_bit_fails_the_checksum() {
        let mut bytes = SAMPLE_BYTES;
        bytes[15] ^= 0x01;
        assert_eq!(
            Ipv4Header::decode(&bytes),
            Err(WireError::BadChecksum { what: "ipv4" })
        );
    }

    fn with_checksum(mut bytes: [u8; 20]) -> [u8; 20] {
        bytes[10..12].copy_from_slice(&[0, 0]);
        let sum = checksum(&bytes);
        bytes[10..12].copy_from_slice(&sum.to_be_bytes());
        bytes
    }

    #[test]
    fn a_total_length_below_the_header_is_a_bad_length() {
        let mut bytes = SAMPLE_BYTES;
        bytes[2..4].copy_from_slice(&19u16.to_be_bytes());
        assert_eq!(
            Ipv4Header::decode(&with_checksum(bytes)),
            Err(WireError::BadLength {
                what: "ipv4",
                value: 19
            })
        );
    }

    #[test]
    fn fragments_are_rejected() {
        for word in [0x2000u16, 0x0001, 0x60b9] {
            let mut bytes = SAMPLE_BYTES;
            bytes[6..8].copy_from_slice(&word.to_be_bytes());
            assert_eq!(
                Ipv4Header::decode(&with_checksum(bytes)),
                Err(WireError::BadField {
                    what: "ipv4",
                    field: "fragment",
                    value: u64::from(word)
                })
            );
        }
        // DF alone, or no flags at all, is a whole datagram.
        let mut bytes = SAMPLE_BYTES;
        bytes[6..8].copy_from_slice(&[0, 0]);
        assert_eq!(
            Ipv4Header::decode(&with_checksum(bytes)),
            Ok((sample(), 20))
        );
    }
}
