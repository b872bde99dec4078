//! The virtio-net header an `AF_PACKET` socket with `PACKET_VNET_HDR` puts before each frame
//! (`linux/virtio_net.h`), and the one job the router needs it for: completing a checksum the
//! sending host left to "hardware".
//!
//! A veth device offers checksum offload, so kernel TCP on a host hands its segments over with
//! the TCP checksum only seeded with the pseudo-header (`CHECKSUM_PARTIAL`). A kernel router
//! forwards them as they are and the receiving veth trusts them; a user-space router that sends
//! the bytes on must finish the sum itself, or the receiver drops every segment. The header says
//! where: the sum runs from `csum_start` to the end and goes at `csum_start + csum_offset`
//! (Linux `skb_checksum_help`). Segmentation offload (GSO) is not handled: the test bed sets
//! `gso_max_segs 1` on the hosts, and a GSO frame is counted and dropped.

use crate::sys::VNET_HDR_LEN;
use concord_cc::wire::checksum::checksum;

/// `VIRTIO_NET_HDR_F_NEEDS_CSUM`.
const F_NEEDS_CSUM: u8 = 1;

/// What the header asks of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VnetProblem {
    /// Fewer bytes than the header.
    Truncated,
    /// A segmentation-offload frame (gso_type not NONE).
    Gso,
    /// The checksum position lies outside the frame.
    BadChecksumPosition,
}

/// Strips the header from `buf` and completes the frame's checksum if the header asks;
/// returns the frame's range in `buf`.
pub fn complete(buf: &mut [u8]) -> Result<std::ops::Range<usize>, VnetProblem> {
    if buf.len() < VNET_HDR_LEN {
        return Err(VnetProblem::Truncated);
    }
    let flags = buf[0];
    let gso_type = buf[1];
    let csum_start = usize::from(u16::from_le_bytes([buf[6], buf[7]]));
    let csum_offset = usize::from(u16::from_le_bytes([buf[8], buf[9]]));
    if gso_type != 0 {
        return Err(VnetProblem::Gso);
    }
    let frame = &mut buf[VNET_HDR_LEN..];
    if flags & F_NEEDS_CSUM != 0 {
        let at = csum_start + csum_offset;
        if csum_start >= frame.len() || at + 2 > frame.len() {
            return Err(VnetProblem::BadChecksumPosition);
        }
        // The field holds the folded pseudo-header sum; summing over it completes the sum.
        let sum = checksum(&frame[csum_start..]);
        frame[at..at + 2].copy_from_slice(&sum.to_be_bytes());
    }
    Ok(VNET_HDR_LEN..buf.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::wire::checksum::Checksum;

    #[test]
    fn a_partial_udp_checksum_is_completed_to_the_full_one() {
        let mut frame = crate::ipv4::tests::udp_frame(5);
        let n = frame.len();
        frame[n - 5..].copy_from_slice(b"hello");
        // The full checksum over pseudo-header and datagram, as the receiver verifies it.
        let mut full = Checksum::new();
        full.add_pseudo_header(
            std::net::Ipv4Addr::new(10, 9, 1, 1),
            std::net::Ipv4Addr::new(10, 9, 3, 1),
            17,
            13,
        );
        full.add_bytes(&frame[34..]);
        let want = full.finish();
        // What the sending kernel leaves: the folded pseudo-header sum, not inverted.
        let mut seed = Checksum::new();
        seed.add_pseudo_header(
            std::net::Ipv4Addr::new(10, 9, 1, 1),
            std::net::Ipv4Addr::new(10, 9, 3, 1),
            17,
            13,
        );
        frame[40..42].copy_from_slice(&seed.fold().to_be_bytes());
        let mut buf = vec![F_NEEDS_CSUM, 0, 0, 0, 0, 0];
        buf.extend_from_slice(&34u16.to_le_bytes());
        buf.extend_from_slice(&6u16.to_le_bytes());
        buf.extend_from_slice(&frame);
        let r = complete(&mut buf).expect("valid");
        assert_eq!(r, 10..buf.len());
        assert_eq!(u16::from_be_bytes([buf[50], buf[51]]), want);
    }

    #[test]
    fn gso_short_and_misplaced_headers_are_refused() {
        assert_eq!(complete(&mut [0u8; 4]), Err(VnetProblem::Truncated));
        let mut gso = vec![0u8; 60];
        gso[1] = 1;
        assert_eq!(complete(&mut gso), Err(VnetProblem::Gso));
        let mut bad = vec![0u8; 60];
        bad[0] = F_NEEDS_CSUM;
        bad[6..8].copy_from_slice(&49u16.to_le_bytes());
        bad[8..10].copy_from_slice(&6u16.to_le_bytes());
        assert_eq!(complete(&mut bad), Err(VnetProblem::BadChecksumPosition));
        let mut plain = vec![0u8; 60];
        assert_eq!(complete(&mut plain), Ok(10..60));
    }
}
