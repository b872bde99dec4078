//! What a router does to an IPv4 header in place (RFC 791, RFC 1812 section 5.2): check it,
//! lower the TTL, set CE (RFC 3168 section 5), recompute the header checksum; and read the
//! four-tuple GCCA's padding names. Every function checks bounds and never panics.

use concord_cc::gcca::Padding;
use concord_cc::wire::checksum::checksum;
use std::net::Ipv4Addr;

/// Why bytes are not an IPv4 packet a router may forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ipv4Problem {
    /// Shorter than a header, version not 4, IHL below 5 or beyond the bytes, or a total length
    /// outside the frame.
    Malformed,
    /// The header checksum is wrong (RFC 1812 section 5.2.2).
    BadChecksum,
}

/// A checked IPv4 header's fields the router uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4View {
    /// Header length, bytes.
    pub header_len: usize,
    /// Total length (header and payload), bytes.
    pub total_len: usize,
    /// Time to live.
    pub ttl: u8,
    /// Protocol number.
    pub protocol: u8,
    /// Source.
    pub src: Ipv4Addr,
    /// Destination.
    pub dst: Ipv4Addr,
}

/// Checks the IPv4 packet at `bytes` (which may carry link-layer padding after it).
pub fn check(bytes: &[u8]) -> Result<Ipv4View, Ipv4Problem> {
    let first = *bytes.first().ok_or(Ipv4Problem::Malformed)?;
    let header_len = usize::from(first & 0x0f) * 4;
    if first >> 4 != 4 || header_len < 20 || bytes.len() < header_len {
        return Err(Ipv4Problem::Malformed);
    }
    let total_len = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
    if total_len < header_len || total_len > bytes.len() {
        return Err(Ipv4Problem::Malformed);
    }
    if checksum(&bytes[..header_len]) != 0 {
        return Err(Ipv4Problem::BadChecksum);
    }
    Ok(Ipv4View {
        header_len,
        total_len,
        ttl: bytes[8],
        protocol: bytes[9],
        src: Ipv4Addr::new(bytes[12], bytes[13], bytes[14], bytes[15]),
        dst: Ipv4Addr::new(bytes[16], bytes[17], bytes[18], bytes[19]),
    })
}

/// Recomputes the header checksum of the IPv4 header at `frame[ip..]`; does nothing if the
/// header does not fit.
pub fn fill_header_checksum(frame: &mut [u8], ip: usize) {
    let Some(&first) = frame.get(ip) else {
        return;
    };
    let hl = usize::from(first & 0x0f) * 4;
    let Some(header) = frame.get_mut(ip..ip + hl) else {
        return;
    };
    if hl < 20 {
        return;
    }
    header[10] = 0;
    header[11] = 0;
    let sum = checksum(header);
    header[10..12].copy_from_slice(&sum.to_be_bytes());
}

/// True if the header at `frame[ip..]` has a correct checksum.
pub fn header_checksum_ok(frame: &[u8], ip: usize) -> bool {
    frame.get(ip..).is_some_and(|b| check(b).is_ok())
}

/// Lowers the TTL of the header at `frame[ip..]` by one and fixes the checksum.
pub fn decrement_ttl(frame: &mut [u8], ip: usize) {
    if let Some(ttl) = frame.get_mut(ip + 8) {
        *ttl = ttl.saturating_sub(1);
        fill_header_checksum(frame, ip);
    }
}

/// Sets the ECN field of the header at `frame[ip..]` to CE (11) and fixes the checksum.
pub fn set_ecn_ce(frame: &mut [u8], ip: usize) {
    if let Some(tos) = frame.get_mut(ip + 1) {
        *tos |= 0x03;
        fill_header_checksum(frame, ip);
    }
}

/// The four-tuple of a TCP or UDP packet (first fragment only), as GCCA's padding carries it;
/// ports are zero for other protocols and later fragments.
pub fn flow(ip: &[u8], view: &Ipv4View) -> Padding {
    let frag_offset = ip
        .get(6..8)
        .map_or(0, |b| u16::from_be_bytes([b[0], b[1]]) & 0x1fff);
    let ports = if frag_offset == 0 && matches!(view.protocol, 6 | 17) {
        ip.get(view.header_len..view.header_len + 4).map(|p| {
            (
                u16::from_be_bytes([p[0], p[1]]),
                u16::from_be_bytes([p[2], p[3]]),
            )
        })
    } else {
        None
    };
    let (src_port, dst_port) = ports.unwrap_or((0, 0));
    Padding {
        src_addr: view.src,
        dst_addr: view.dst,
        src_port,
        dst_port,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An Ethernet frame carrying a UDP datagram with `payload` bytes, checksums filled.
    pub(crate) fn udp_frame(payload: usize) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8 + payload];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        let ip = &mut f[14..];
        ip[0] = 0x45;
        let total = (20 + 8 + payload) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&[10, 9, 1, 1]);
        ip[16..20].copy_from_slice(&[10, 9, 3, 1]);
        ip[20..22].copy_from_slice(&5004u16.to_be_bytes());
        ip[22..24].copy_from_slice(&6000u16.to_be_bytes());
        ip[24..26].copy_from_slice(&((8 + payload) as u16).to_be_bytes());
        fill_header_checksum(&mut f, 14);
        f
    }

    #[test]
    fn a_good_header_checks_and_its_flow_is_read() {
        let f = udp_frame(10);
        let v = check(&f[14..]).expect("valid");
        assert_eq!(v.ttl, 64);
        assert_eq!(v.total_len, 38);
        let p = flow(&f[14..], &v);
        assert_eq!((p.src_port, p.dst_port), (5004, 6000));
        assert_eq!(p.dst_addr, Ipv4Addr::new(10, 9, 3, 1));
    }

    #[test]
    fn bad_headers_are_named_not_panicked_on() {
        let f = udp_frame(10);
        let ip = &f[14..];
        assert_eq!(check(&[]), Err(Ipv4Problem::Malformed));
        assert_eq!(check(&ip[..19]), Err(Ipv4Problem::Malformed));
        let mut v6 = ip.to_vec();
        v6[0] = 0x65;
        assert_eq!(check(&v6), Err(Ipv4Problem::Malformed));
        let mut short_ihl = ip.to_vec();
        short_ihl[0] = 0x44;
        assert_eq!(check(&short_ihl), Err(Ipv4Problem::Malformed));
        let mut long = ip.to_vec();
        long[2..4].copy_from_slice(&1000u16.to_be_bytes());
        assert_eq!(check(&long), Err(Ipv4Problem::Malformed));
        let mut bad = ip.to_vec();
        bad[8] = 63;
        assert_eq!(check(&bad), Err(Ipv4Problem::BadChecksum));
    }

    #[test]
    fn ttl_and_ce_changes_keep_the_checksum_right() {
        let mut f = udp_frame(0);
        decrement_ttl(&mut f, 14);
        assert_eq!(f[14 + 8], 63);
        assert!(header_checksum_ok(&f, 14));
        set_ecn_ce(&mut f, 14);
        assert_eq!(f[15] & 3, 3);
        assert!(header_checksum_ok(&f, 14));
        // Out of bounds: nothing happens.
        decrement_ttl(&mut f, 1000);
        set_ecn_ce(&mut f, 1000);
    }
}
