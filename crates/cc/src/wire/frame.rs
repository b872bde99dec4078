//! Whole Ethernet + IPv4 + TCP/UDP frames, as written to pcap traces.
//!
//! The simulator knows a packet's headers and its payload length, never its payload bytes.
//! [`encode_ipv4_frame`] writes the headers with checksums that are correct for a payload of
//! that many zero bytes (see [`super::checksum`]) and then only as many zero bytes as a capture
//! of `snap` bytes would keep. [`decode_ipv4_frame`] reads such a frame back, and any real one.

use super::checksum::Payload;
use super::{tcp, udp, EthernetHeader, Ipv4Header, TcpHeader, UdpHeader, WireError};

/// The transport header that follows the IPv4 header of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A TCP segment (protocol 6).
    Tcp(TcpHeader),
    /// A UDP datagram (protocol 17).
    Udp(UdpHeader),
    /// Any other protocol, named by the IPv4 header's `protocol`; everything after the IPv4
    /// header is payload.
    Other,
}

impl Transport {
    /// Length of the transport header, in bytes (0 for [`Transport::Other`]).
    pub fn header_len(&self) -> usize {
        match self {
            Transport::Tcp(h) => h.len(),
            Transport::Udp(h) => h.len(),
            Transport::Other => 0,
        }
    }
}

/// Appends to `out` an Ethernet II frame carrying an IPv4 datagram with `transport`'s header and
/// `payload_len` bytes of payload taken to be zeros, cut to at most `snap` bytes (the whole frame
/// when `snap` is larger). Returns the length the whole frame has, in bytes, as a capture's
/// original length.
///
/// The frame's own lengths and numbers are derived, not copied: the EtherType is 0x0800, the
/// IPv4 total length is 20 + transport header + `payload_len`, the protocol is 6 or 17 for TCP
/// or UDP (as given in `ip` for [`Transport::Other`]) and the UDP length is 8 + `payload_len`.
/// The IPv4, TCP and UDP checksums are those of the whole zero-filled datagram (RFC 791, RFC
/// 9293 section 3.1, RFC 768). No Ethernet padding is added to short frames.
///
/// Errors, with `out` left unchanged: a datagram longer than 65535 bytes is `BadLength`;
/// [`Transport::Other`] with protocol 6 or 17 in `ip` is `BadField`.
pub fn encode_ipv4_frame(
    out: &mut Vec<u8>,
    eth: &EthernetHeader,
    ip: &Ipv4Header,
    transport: Transport,
    payload_len: usize,
    snap: usize,
) -> Result<usize, WireError> {
    let transport_len = transport.header_len().saturating_add(payload_len);
    let datagram_len = Ipv4Header::LEN.saturating_add(transport_len);
    let total_len = u16::try_from(datagram_len).map_err(|_| WireError::BadLength {
        what: "ipv4",
        value: datagram_len,
    })?;
    let protocol = match transport {
        Transport::Tcp(_) => Ipv4Header::PROTOCOL_TCP,
        Transport::Udp(_) => Ipv4Header::PROTOCOL_UDP,
        Transport::Other
            if matches!(
                ip.protocol,
                Ipv4Header::PROTOCOL_TCP | Ipv4Header::PROTOCOL_UDP
            ) =>
        {
            // Zeros where a TCP or UDP header belongs would make a malformed frame.
            return Err(WireError::BadField {
                what: "ipv4",
                field: "protocol",
                value: u64::from(ip.protocol),
            });
        }
        Transport::Other => ip.protocol,
    };
    let ip = Ipv4Header {
        total_len,
        protocol,
        ..*ip
    };
    let eth = EthernetHeader {
        ethertype: EthernetHeader::ETHERTYPE_IPV4,
        ..*eth
    };

    let start = out.len();
    eth.encode(out);
    ip.encode(out);
    let transport_start = out.len();
    let payload = Payload::Zeros(payload_len);
    let filled = match transport {
        Transport::Tcp(h) => {
            h.encode(out);
            tcp::fill_checksum(&ip, &mut out[transport_start..], payload)
        }
        Transport::Udp(h) => {
            // total_len fits 16 bits, so the shorter UDP length does too.
            let len = total_len - Ipv4Header::LEN as u16;
            UdpHeader { len, ..h }.encode(out);
            udp::fill_checksum(&ip, &mut out[transport_start..], payload)
        }
        Transport::Other => Ok(()),
    };
    if let Err(e) = filled {
        // Unreachable with the length checked above; leave `out` as it was all the same.
        out.truncate(start);
        return Err(e);
    }
    let frame_len = EthernetHeader::LEN + datagram_len;
    out.resize(start + frame_len.min(snap), 0);
    Ok(frame_len)
}

/// Reads an Ethernet II frame carrying IPv4; returns the headers and the offset of the payload
/// in `bytes` (just after the transport header).
///
/// The payload may be cut short, as in a capture with a small snap length, and bytes past the
/// IPv4 datagram (Ethernet padding) are ignored; the headers must be whole. When the whole
/// datagram is present the TCP or UDP checksum is verified; a cut payload cannot be.
///
/// Errors: those of each header's decoder; an EtherType other than 0x0800 is `BadField`; an
/// IPv4 total length too short for the transport header is `BadLength` (of ipv4); a UDP length
/// that differs from the IPv4 payload length is `BadLength` (of udp); a wrong TCP or UDP
/// checksum is `BadChecksum`.
pub fn decode_ipv4_frame(
    bytes: &[u8],
) -> Result<(EthernetHeader, Ipv4Header, Transport, usize), WireError> {
    let (eth, eth_len) = EthernetHeader::decode(bytes)?;
    if eth.ethertype != EthernetHeader::ETHERTYPE_IPV4 {
        return Err(WireError::BadField {
            what: "ethernet",
            field: "ethertype",
            value: u64::from(eth.ethertype),
        });
    }
    let rest = &bytes[eth_len..];
    let (ip, ip_len) = Ipv4Header::decode(rest)?;
    let rest = &rest[ip_len..];
    // Bytes of the datagram after the IPv4 header, whether captured or not.
    let transport_len = usize::from(ip.total_len).saturating_sub(ip_len);
    let (transport, header_len) = match ip.protocol {
        Ipv4Header::PROTOCOL_TCP => {
            let (h, len) = TcpHeader::decode(rest)?;
            (Transport::Tcp(h), len)
        }
        Ipv4Header::PROTOCOL_UDP => {
            let (h, len) = UdpHeader::decode(rest)?;
            if usize::from(h.len) != transport_len {
                return Err(WireError::BadLength {
                    what: "udp",
                    value: usize::from(h.len),
                });
            }
            (Transport::Udp(h), len)
        }
        _ => (Transport::Other, 0),
    };
    if header_len > transport_len {
        return Err(WireError::BadLength {
            what: "ipv4",
            value: usize::from(ip.total_len),
        });
    }
    if let Some(segment) = rest.get(..transport_len) {
        let (header, payload) = segment.split_at(header_len);
        match transport {
            Transport::Tcp(_) => tcp::verify_checksum(&ip, header, Payload::Bytes(payload))?,
            Transport::Udp(_) => udp::verify_checksum(&ip, header, Payload::Bytes(payload))?,
            Transport::Other => {}
        }
    }
    Ok((eth, ip, transport, eth_len + ip_len + header_len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::checksum::checksum;
    use crate::wire::{Ecn, TcpFlags};
    use std::net::Ipv4Addr;

    fn eth() -> EthernetHeader {
        EthernetHeader {
            dst: [2, 0, 0, 0, 0, 2],
            src: [2, 0, 0, 0, 0, 1],
            ethertype: 0,
        }
    }

    fn ip() -> Ipv4Header {
        Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::Ce,
            id: 42,
            ttl: 63,
            protocol: 0,
            total_len: 0,
        }
    }

    fn tcp() -> TcpHeader {
        TcpHeader {
            src_port: 40000,
            dst_port: 5001,
            seq: 1_000_000,
            ack: 77,
            flags: TcpFlags::ACK | TcpFlags::ECE,
            window: 1024,
            timestamps: Some((123, 456)),
            sack: Default::default(),
        }
    }

    fn udp() -> UdpHeader {
        UdpHeader {
            src_port: 9,
            dst_port: 10,
            len: 0,
        }
    }

    fn encode(transport: Transport, payload_len: usize, snap: usize) -> (Vec<u8>, usize) {
        let mut out = Vec::new();
        let len =
            encode_ipv4_frame(&mut out, &eth(), &ip(), transport, payload_len, snap).expect("fits");
        (out, len)
    }

    #[test]
    fn a_whole_tcp_frame_decodes_to_its_headers_with_derived_lengths() {
        let (bytes, len) = encode(Transport::Tcp(tcp()), 1448, usize::MAX);
        assert_eq!(
            (len, bytes.len()),
            (14 + 20 + 32 + 1448, 14 + 20 + 32 + 1448)
        );
        assert!(bytes[66..].iter().all(|&b| b == 0));
        let (e, i, t, offset) = decode_ipv4_frame(&bytes).expect("valid frame");
        assert_eq!(
            e,
            EthernetHeader {
                ethertype: 0x0800,
                ..eth()
            }
        );
        assert_eq!(
            i,
            Ipv4Header {
                protocol: 6,
                total_len: 1500,
                ..ip()
            }
        );
        assert_eq!(t, Transport::Tcp(tcp()));
        assert_eq!(offset, 66);
        // The IPv4 header checksum holds too.
        assert_eq!(checksum(&bytes[14..34]), 0);
    }

    #[test]
    fn a_whole_udp_frame_gets_its_length_and_checksum() {
        let (bytes, len) = encode(Transport::Udp(udp()), 5, 1000);
        assert_eq!((len, bytes.len()), (47, 47));
        let (_, i, t, offset) = decode_ipv4_frame(&bytes).expect("valid frame");
        assert_eq!(i.protocol, 17);
        assert_eq!(t, Transport::Udp(UdpHeader { len: 13, ..udp() }));
        assert_eq!(offset, 42);
        assert_ne!(&bytes[40..42], &[0, 0]);
    }

    #[test]
    fn snap_cuts_the_payload_but_not_the_checksums() {
        let (whole, _) = encode(Transport::Tcp(tcp()), 1448, usize::MAX);
        let (cut, len) = encode(Transport::Tcp(tcp()), 1448, 96);
        assert_eq!((len, cut.len()), (1514, 96));
        assert_eq!(cut, whole[..96]);
        let (_, _, t, offset) = decode_ipv4_frame(&cut).expect("a cut payload is tolerated");
        assert_eq!((t, offset), (Transport::Tcp(tcp()), 66));
    }

    #[test]
    fn snap_may_cut_into_the_headers() {
        let (cut, len) = encode(Transport::Udp(udp()), 100, 20);
        assert_eq!((len, cut.len()), (142, 20));
        assert_eq!(
            decode_ipv4_frame(&cut),
            Err(WireError::Truncated {
                what: "ipv4",
                need: 20,
                got: 6
            })
        );
    }

    #[test]
    fn other_protocols_keep_their_number_and_carry_only_payload() {
        let other = Ipv4Header {
            protocol: 253,
            ..ip()
        };
        let mut bytes = Vec::new();
        let len = encode_ipv4_frame(&mut bytes, &eth(), &other, Transport::Other, 10, usize::MAX)
            .expect("fits");
        assert_eq!((len, bytes.len()), (44, 44));
        let (_, i, t, offset) = decode_ipv4_frame(&bytes).expect("valid frame");
        assert_eq!(
            (i.protocol, i.total_len, t, offset),
            (253, 30, Transport::Other, 34)
        );
    }

    #[test]
    fn other_cannot_claim_to_be_tcp_or_udp() {
        for protocol in [6, 17] {
            let mut out = Vec::new();
            let claimed = Ipv4Header { protocol, ..ip() };
            assert_eq!(
                encode_ipv4_frame(&mut out, &eth(), &claimed, Transport::Other, 10, 100),
                Err(WireError::BadField {
                    what: "ipv4",
                    field: "protocol",
                    value: u64::from(protocol)
                })
            );
            assert!(out.is_empty());
        }
    }

    #[test]
    fn frames_are_appended_after_what_is_there() {
        let mut out = vec![0xaa, 0xbb];
        let len =
            encode_ipv4_frame(&mut out, &eth(), &ip(), Transport::Udp(udp()), 0, 64).expect("fits");
        assert_eq!((len, out.len()), (42, 44));
        assert_eq!(&out[..2], &[0xaa, 0xbb]);
        assert!(decode_ipv4_frame(&out[2..]).is_ok());
    }

    #[test]
    fn a_datagram_over_65535_bytes_is_refused_and_writes_nothing() {
        let mut out = vec![1];
        assert_eq!(
            encode_ipv4_frame(&mut out, &eth(), &ip(), Transport::Udp(udp()), 65_508, 100),
            Err(WireError::BadLength {
                what: "ipv4",
                value: 65_536
            })
        );
        assert_eq!(out, [1]);
        assert!(
            encode_ipv4_frame(&mut out, &eth(), &ip(), Transport::Udp(udp()), 65_507, 100).is_ok()
        );
    }

    #[test]
    fn ethernet_padding_after_the_datagram_is_ignored() {
        let (mut bytes, _) = encode(Transport::Udp(udp()), 0, usize::MAX);
        bytes.resize(60, 0);
        let (_, _, t, offset) = decode_ipv4_frame(&bytes).expect("padding is fine");
        assert_eq!(
            (t, offset),
            (Transport::Udp(UdpHeader { len: 8, ..udp() }), 42)
        );
    }

    #[test]
    fn a_non_ipv4_ethertype_is_a_bad_field() {
        let (mut bytes, _) = encode(Transport::Other, 0, usize::MAX);
        bytes[12..14].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(
            decode_ipv4_frame(&bytes),
            Err(WireError::BadField {
                what: "ethernet",
                field: "ethertype",
                value: 0x86dd
            })
        );
    }

    /// Rewrites the IPv4 total length of a frame and fixes the header checksum.
    fn set_total_len(bytes: &mut [u8], total_len: u16) {
        bytes[16..18].copy_from_slice(&total_len.to_be_bytes());
        bytes[24..26].copy_from_slice(&[0, 0]);
        let sum = checksum(&bytes[14..34]);
        bytes[24..26].copy_from_slice(&sum.to_be_bytes());
    }

    #[test]
    fn a_total_length_too_short_for_the_transport_header_is_a_bad_length() {
        let (mut bytes, _) = encode(Transport::Tcp(tcp()), 0, usize::MAX);
        set_total_len(&mut bytes, 40);
        assert_eq!(
            decode_ipv4_frame(&bytes),
            Err(WireError::BadLength {
                what: "ipv4",
                value: 40
            })
        );
    }

    #[test]
    fn a_udp_length_that_disagrees_with_ipv4_is_a_bad_length() {
        let (mut bytes, _) = encode(Transport::Udp(udp()), 4, usize::MAX);
        set_total_len(&mut bytes, 31);
        assert_eq!(
            decode_ipv4_frame(&bytes),
            Err(WireError::BadLength {
                what: "udp",
                value: 12
            })
        );
    }

    #[test]
    fn a_changed_payload_byte_fails_the_transport_checksum() {
        let (mut bytes, _) = encode(Transport::Tcp(tcp()), 8, usize::MAX);
        bytes[70] = 1;
        assert_eq!(
            decode_ipv4_frame(&bytes),
            Err(WireError::BadChecksum { what: "tcp" })
        );
        let (mut bytes, _) = encode(Transport::Udp(udp()), 8, usize::MAX);
        bytes[45] = 1;
        assert_eq!(
            decode_ipv4_frame(&bytes),
            Err(WireError::BadChecksum { what: "udp" })
        );
        // Cut before the changed byte, the payload cannot be checked and is accepted.
        assert!(decode_ipv4_frame(&bytes[..44]).is_ok());
    }

    #[test]
    fn transport_header_lengths() {
        assert_eq!(Transport::Tcp(tcp()).header_len(), 32);
        assert_eq!(Transport::Udp(udp()).header_len(), 8);
        assert_eq!(Transport::Other.header_len(), 0);
    }
}
