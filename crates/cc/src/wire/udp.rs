//! UDP header (RFC 768) and the UDP checksum over the IPv4 pseudo-header.

use super::checksum::{pseudo_header_sum, Payload};
use super::{Ipv4Header, WireError};

/// A UDP header.
///
/// The checksum field is written as zero by [`UdpHeader::encode`]; see [`checksum`] to fill it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Length of header and payload, in bytes.
    pub len: u16,
}

/// Byte offset of the checksum field in the UDP header.
pub const CHECKSUM_OFFSET: usize = 6;

impl UdpHeader {
    /// Length of the header, in bytes.
    pub const LEN: usize = 8;

    /// Appends the 8-byte header to `out`, checksum field zero.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.src_port.to_be_bytes());
        out.extend_from_slice(&self.dst_port.to_be_bytes());
        out.extend_from_slice(&self.len.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
    }

    /// Reads a header from the start of `bytes`; returns it and the bytes consumed (always 8).
    ///
    /// Fewer than 8 bytes is `Truncated`; a length field below 8 (it counts the header) is
    /// `BadLength`. The payload may be missing or followed by more bytes: whether the length
    /// agrees with the IP datagram is for the caller, who knows it. The checksum is not checked
    /// here (see [`verify_checksum`]).
    pub fn decode(bytes: &[u8]) -> Result<(UdpHeader, usize), WireError> {
        let Some(h) = bytes.get(..Self::LEN) else {
            return Err(WireError::Truncated {
                what: "udp",
                need: Self::LEN,
                got: bytes.len(),
            });
        };
        let len = u16::from_be_bytes([h[4], h[5]]);
        if usize::from(len) < Self::LEN {
            return Err(WireError::BadLength {
                what: "udp",
                value: usize::from(len),
            });
        }
        let header = UdpHeader {
            src_port: u16::from_be_bytes([h[0], h[1]]),
            dst_port: u16::from_be_bytes([h[2], h[3]]),
            len,
        };
        Ok((header, Self::LEN))
    }

    /// Length of the encoded header, in bytes (always 8).
    #[expect(clippy::len_without_is_empty, reason = "a header is never empty")]
    pub fn len(&self) -> usize {
        Self::LEN
    }
}

/// The value of the UDP checksum field (RFC 768) for the datagram made of `header` (8 bytes;
/// whatever its checksum field holds is taken as zero) and `payload`, carried from `ip.src` to
/// `ip.dst`. The pseudo-header's protocol is 17 and its length `header.len() + payload.len()`;
/// `ip.protocol` and the header's length field are not read. A computed zero is returned as
/// 0xffff, since a zero field means "no checksum" (RFC 768).
///
/// Errors: a header shorter than 8 bytes is `Truncated`; a datagram longer than 65535 bytes is
/// `BadLength`.
pub fn checksum(ip: &Ipv4Header, header: &[u8], payload: Payload<'_>) -> Result<u16, WireError> {
    let (before, after) = split_at_checksum(header)?;
    let mut sum = pseudo_header_sum(
        "udp",
        ip,
        Ipv4Header::PROTOCOL_UDP,
        header.len() + payload.len(),
    )?;
    sum.add_bytes(before)
        .add_zeros(2)
        .add_bytes(after)
        .add_payload(payload);
    Ok(match sum.finish() {
        0 => 0xffff,
        value => value,
    })
}

/// Writes the UDP checksum of `header` and `payload` (see [`checksum`]) into `header`'s checksum
/// field.
pub fn fill_checksum(
    ip: &Ipv4Header,
    header: &mut [u8],
    payload: Payload<'_>,
) -> Result<(), WireError> {
    let sum = checksum(ip, header, payload)?;
    if let Some(field) = header.get_mut(CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2) {
        field.copy_from_slice(&sum.to_be_bytes());
    }
    Ok(())
}

/// Checks the checksum field of `header` against the datagram made of `header` and `payload`,
/// carried from `ip.src` to `ip.dst`: `Ok` if the field is zero (the sender computed none,
/// RFC 768) or the datagram with its pseudo-header sums to 0xffff, `BadChecksum` if not, and the
/// errors of [`checksum`].
pub fn verify_checksum(
    ip: &Ipv4Header,
    header: &[u8],
    payload: Payload<'_>,
) -> Result<(), WireError> {
    split_at_checksum(header)?;
    let mut sum = pseudo_header_sum(
        "udp",
        ip,
        Ipv4Header::PROTOCOL_UDP,
        header.len() + payload.len(),
    )?;
    if header[CHECKSUM_OFFSET..CHECKSUM_OFFSET + 2] == [0, 0] {
        return Ok(());
    }
    sum.add_bytes(header).add_payload(payload);
    if sum.finish() == 0 {
        Ok(())
    } else {
        Err(WireError::BadChecksum { what: "udp" })
    }
}

/// The header bytes before and after the checksum field, or `Truncated` if there are fewer than
/// 8 bytes.
fn split_at_checksum(header: &[u8]) -> Result<(&[u8], &[u8]), WireError> {
    if header.len() < UdpHeader::LEN {
        return Err(WireError::Truncated {
            what: "udp",
            need: UdpHeader::LEN,
            got: header.len(),
        });
    }
    Ok((&header[..CHECKSUM_OFFSET], &header[CHECKSUM_OFFSET + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Ecn;
    use std::net::Ipv4Addr;

    /// 5004 -> 5005 with 4 bytes of payload.
    fn sample() -> UdpHeader {
        UdpHeader {
            src_port: 5004,
            dst_port: 5005,
            len: 12,
        }
    }

    fn ip() -> Ipv4Header {
        Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::NotEct,
            id: 7,
            ttl: 64,
            protocol: Ipv4Header::PROTOCOL_UDP,
            total_len: 32,
        }
    }

    fn encoded(h: &UdpHeader) -> Vec<u8> {
        let mut out = Vec::new();
        h.encode(&mut out);
        out
    }

    #[test]
    fn encodes_ports_length_and_a_zero_checksum() {
        assert_eq!(
            encoded(&sample()),
            [0x13, 0x8c, 0x13, 0x8d, 0x00, 0x0c, 0x00, 0x00]
        );
        assert_eq!(sample().len(), 8);
    }

    #[test]
    fn decodes_what_it_encodes_whatever_follows() {
        let mut bytes = encoded(&sample());
        assert_eq!(UdpHeader::decode(&bytes), Ok((sample(), 8)));
        bytes.extend_from_slice(&[1; 40]);
        assert_eq!(UdpHeader::decode(&bytes), Ok((sample(), 8)));
    }

    #[test]
    fn seven_bytes_are_truncated() {
        assert_eq!(
            UdpHeader::decode(&[0; 7]),
            Err(WireError::Truncated {
                what: "udp",
                need: 8,
                got: 7
            })
        );
    }

    #[test]
    fn a_length_field_below_eight_is_a_bad_length() {
        let bytes = [0x13, 0x8c, 0x13, 0x8d, 0x00, 0x07, 0x00, 0x00];
        assert_eq!(
            UdpHeader::decode(&bytes),
            Err(WireError::BadLength {
                what: "udp",
                value: 7
            })
        );
    }

    #[test]
    fn the_checksum_matches_a_hand_computed_datagram() {
        // Pseudo-header 0a00 0001 0a00 0002 0011 000c sums to 1420; header 138c 138d 000c 0000
        // brings it to 3b45; payload 0102 0304 to 3f4b; complement c0b4.
        let payload = [1, 2, 3, 4];
        let mut bytes = encoded(&sample());
        assert_eq!(
            checksum(&ip(), &bytes, Payload::Bytes(&payload)),
            Ok(0xc0b4)
        );
        fill_checksum(&ip(), &mut bytes, Payload::Bytes(&payload)).expect("fits");
        assert_eq!(&bytes[6..8], &[0xc0, 0xb4]);
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&payload)),
            Ok(())
        );
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&[1, 2, 3, 5])),
            Err(WireError::BadChecksum { what: "udp" })
        );
    }

    #[test]
    fn a_computed_zero_is_sent_as_all_ones() {
        // A payload word equal to the checksum of the same datagram with a zero word makes the
        // sum 0xffff, so the computed checksum is 0.
        let h = UdpHeader {
            len: 10,
            ..sample()
        };
        let mut bytes = encoded(&h);
        let word = checksum(&ip(), &bytes, Payload::Zeros(2)).expect("fits");
        let payload = word.to_be_bytes();
        assert_eq!(
            checksum(&ip(), &bytes, Payload::Bytes(&payload)),
            Ok(0xffff)
        );
        fill_checksum(&ip(), &mut bytes, Payload::Bytes(&payload)).expect("fits");
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&payload)),
            Ok(())
        );
    }

    #[test]
    fn a_zero_checksum_field_means_none_and_verifies() {
        let bytes = encoded(&sample());
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Bytes(&[9, 9, 9, 9])),
            Ok(())
        );
    }

    #[test]
    fn checksum_needs_a_whole_header_and_a_datagram_that_fits_ipv4() {
        let bytes = encoded(&sample());
        assert_eq!(
            checksum(&ip(), &bytes[..7], Payload::Zeros(0)),
            Err(WireError::Truncated {
                what: "udp",
                need: 8,
                got: 7
            })
        );
        assert_eq!(
            verify_checksum(&ip(), &bytes, Payload::Zeros(65_528)),
            Err(WireError::BadLength {
                what: "udp",
                value: 65_536
            })
        );
    }
}
