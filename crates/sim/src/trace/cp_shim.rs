//! The CP header in a trace: a shim between the IPv4 header and UDP, announced by IPv4
//! protocol 253 (RFC 3692, for experimentation), as `wireshark/concord.lua` reads it.
//!
//! The simulator moves a [`CpHeader`] struct beside the packet (the packet's size counts its
//! encoded length); a trace writes the codec's bytes ([`CpHeader::encode`]) right after the
//! IPv4 header and its options. The UDP header and checksum that follow are those of the
//! datagram without the shim (what the endpoint's UDP computed; the pseudo-header names
//! protocol 17).

use concord_cc::cp::CpHeader;
use concord_cc::wire::checksum::checksum;
use concord_cc::wire::EthernetHeader;

/// The IPv4 protocol number of a datagram whose payload starts with a CP header.
pub const PROTOCOL_CP: u8 = 253;

/// Inserts `header`'s bytes after the IPv4 header of `frame` (an Ethernet II frame carrying
/// IPv4, possibly cut after its IPv4 header), sets the protocol to [`PROTOCOL_CP`], adds the
/// header's length to the total length and fills in the IPv4 checksum again. Returns the bytes
/// inserted; `None`, with `frame` unchanged, if the frame is not Ethernet + IPv4, the header
/// does not encode, or the total length would pass 65535.
pub fn insert(frame: &mut Vec<u8>, header: &CpHeader) -> Option<usize> {
    let ip = EthernetHeader::LEN;
    if frame.len() < ip + 20
        || frame[ip - 2..ip] != EthernetHeader::ETHERTYPE_IPV4.to_be_bytes()
        || frame[ip] >> 4 != 4
    {
        return None;
    }
    let ihl = usize::from(frame[ip] & 0x0f) * 4;
    if ihl < 20 || frame.len() < ip + ihl {
        return None;
    }
    let mut bytes = Vec::with_capacity(header.encoded_len());
    let n = header.encode(&mut bytes).ok()?;
    let total = u16::from_be_bytes([frame[ip + 2], frame[ip + 3]]);
    let total = total.checked_add(u16::try_from(n).ok()?)?;
    frame.splice(ip + ihl..ip + ihl, bytes);
    frame[ip + 9] = PROTOCOL_CP;
    frame[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
    frame[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
    let sum = checksum(&frame[ip..ip + ihl]);
    frame[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::cp::header::Probe;
    use concord_cc::wire::frame::Transport;
    use concord_cc::wire::{encode_ipv4_frame, Ecn, Ipv4Header, UdpHeader};
    use std::net::Ipv4Addr;

    fn udp_frame(payload: usize) -> Vec<u8> {
        let eth = EthernetHeader {
            dst: [2, 0, 0, 0, 0, 2],
            src: [2, 0, 0, 0, 0, 1],
            ethertype: 0,
        };
        let ip = Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::NotEct,
            id: 0,
            ttl: 64,
            protocol: 17,
            total_len: 0,
        };
        let udp = Transport::Udp(UdpHeader {
            src_port: 65_535,
            dst_port: 49_152,
            len: 0,
        });
        let mut out = Vec::new();
        encode_ipv4_frame(&mut out, &eth, &ip, udp, payload, usize::MAX).expect("encodes");
        out
    }

    #[test]
    fn the_header_sits_between_ipv4_and_udp_under_protocol_253() {
        let mut frame = udp_frame(100);
        let udp = frame[34..42].to_vec();
        let mut h = CpHeader::new(7, 3);
        h.probe = Some(Probe {
            seq: 9,
            timestamp: 1_000,
        });
        assert_eq!(insert(&mut frame, &h), Some(20));
        // 20 IPv4 + 20 CP + 8 UDP + 100 payload.
        assert_eq!(frame.len(), 14 + 148);
        let (ip, ip_len) = Ipv4Header::decode(&frame[14..]).expect("a valid IPv4 header");
        assert_eq!((ip.protocol, ip.total_len, ip_len), (253, 148, 20));
        let (back, used) = CpHeader::decode(&frame[34..]).expect("the codec reads it");
        assert_eq!((back, used), (h, 20));
        assert_eq!(frame[54..62], udp[..]);
    }

    #[test]
    fn a_frame_that_is_not_ipv4_is_left_alone() {
        let mut frame = udp_frame(0);
        frame[12] = 0x88;
        let before = frame.clone();
        assert_eq!(insert(&mut frame, &CpHeader::new(1, 1)), None);
        assert_eq!(frame, before);
        let mut short = vec![0u8; 20];
        assert_eq!(insert(&mut short, &CpHeader::new(1, 1)), None);
        assert_eq!(short.len(), 20);
    }
}
