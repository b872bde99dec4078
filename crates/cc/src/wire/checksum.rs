//! The Internet checksum (RFC 1071) and the IPv4 pseudo-header of TCP and UDP.
//!
//! The checksum is the one's complement of the one's-complement sum of the data taken as
//! big-endian 16-bit words, an odd trailing byte padded on the right with a zero byte
//! (RFC 1071 section 1). [`Checksum`] accumulates that sum over any number of pieces, so a
//! header, a pseudo-header and a payload can be fed one after the other.
//!
//! Zero bytes add nothing to a one's-complement sum; they only move later bytes between the high
//! and low halves of a word when their count is odd. [`Checksum::add_zeros`] uses this to sum a
//! payload of zeros without materialising it, and [`Payload::Zeros`] lets the TCP and UDP
//! checksum functions do the same: concord's pcap traces carry zero-filled, truncated payloads
//! with checksums that are correct for the full zero-filled datagram.

use super::{Ipv4Header, WireError};
use std::net::Ipv4Addr;

/// A running Internet checksum (RFC 1071).
///
/// Bytes are summed in the order they are added, as if concatenated; pieces may have odd
/// lengths. [`Checksum::finish`] gives the value to store in a checksum field; a buffer that
/// already holds a correct checksum sums to [`Checksum::finish`] == 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Checksum {
    /// The running sum of 16-bit words, carries not yet folded. A u64 cannot overflow before
    /// 2^48 words (512 TiB) have been added.
    sum: u64,
    /// The last byte of an odd-length piece, waiting for the low half of its word.
    pending: Option<u8>,
}

impl Checksum {
    /// An empty sum.
    pub const fn new() -> Checksum {
        Checksum {
            sum: 0,
            pending: None,
        }
    }

    /// Adds `bytes`, as if appended to everything added so far.
    pub fn add_bytes(&mut self, bytes: &[u8]) -> &mut Checksum {
        let mut rest = bytes;
        if let Some(high) = self.pending.take() {
            match rest.split_first() {
                Some((&low, tail)) => {
                    self.sum += u64::from(u16::from_be_bytes([high, low]));
                    rest = tail;
                }
                None => {
                    self.pending = Some(high);
                    return self;
                }
            }
        }
        let mut words = rest.chunks_exact(2);
        for word in &mut words {
            self.sum += u64::from(u16::from_be_bytes([word[0], word[1]]));
        }
        if let [last] = words.remainder() {
            self.pending = Some(*last);
        }
        self
    }

    /// Adds `value` as two bytes in network (big-endian) order.
    pub fn add_u16(&mut self, value: u16) -> &mut Checksum {
        self.add_bytes(&value.to_be_bytes())
    }

    /// Adds `value` as four bytes in network (big-endian) order.
    pub fn add_u32(&mut self, value: u32) -> &mut Checksum {
        self.add_bytes(&value.to_be_bytes())
    }

    /// Adds `count` zero bytes without touching memory: they leave the sum unchanged and only
    /// shift the byte position by `count`.
    pub fn add_zeros(&mut self, count: usize) -> &mut Checksum {
        let mut count = count;
        if count == 0 {
            return self;
        }
        if let Some(high) = self.pending.take() {
            // The first zero completes the pending word as its low byte.
            self.sum += u64::from(high) << 8;
            count -= 1;
        }
        if count % 2 == 1 {
            // The last zero is the high byte of a word still to be completed.
            self.pending = Some(0);
        }
        self
    }

    /// Adds `payload`, either its bytes or a run of zeros.
    pub fn add_payload(&mut self, payload: Payload<'_>) -> &mut Checksum {
        match payload {
            Payload::Bytes(bytes) => self.add_bytes(bytes),
            Payload::Zeros(count) => self.add_zeros(count),
        }
    }

    /// Adds the IPv4 pseudo-header of TCP (RFC 9293 section 3.1) and UDP (RFC 768): source
    /// address, destination address, a zero byte, the protocol number and the transport length
    /// (header plus data, in bytes).
    pub fn add_pseudo_header(
        &mut self,
        src: Ipv4Addr,
        dst: Ipv4Addr,
        protocol: u8,
        transport_len: u16,
    ) -> &mut Checksum {
        self.add_bytes(&src.octets())
            .add_bytes(&dst.octets())
            .add_bytes(&[0, protocol])
            .add_u16(transport_len)
    }

    /// The one's-complement sum so far, folded to 16 bits (end-around carry, RFC 1071 section
    /// 4.1); an odd trailing byte counts as the high byte of a word padded with zero.
    pub fn fold(&self) -> u16 {
        let mut sum = self.sum + self.pending.map_or(0, |high| u64::from(high) << 8);
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        // The loop leaves at most 16 bits.
        sum as u16
    }

    /// The checksum: the one's complement of [`Checksum::fold`]. Stored in a zeroed checksum
    /// field, it makes the whole covered data sum to 0xffff; summed over data that already
    /// holds a correct checksum, it is 0.
    pub fn finish(&self) -> u16 {
        !self.fold()
    }
}

/// The Internet checksum of `bytes` alone.
pub fn checksum(bytes: &[u8]) -> u16 {
    Checksum::new().add_bytes(bytes).finish()
}

/// A sum seeded with the IPv4 pseudo-header of a transport segment of `transport_len` bytes
/// (header plus payload) carried in `ip`, for protocol `protocol` (RFC 9293 section 3.1,
/// RFC 768). The length must fit the pseudo-header's 16 bits, or the error names `what`.
pub(crate) fn pseudo_header_sum(
    what: &'static str,
    ip: &Ipv4Header,
    protocol: u8,
    transport_len: usize,
) -> Result<Checksum, WireError> {
    let len = u16::try_from(transport_len).map_err(|_| WireError::BadLength {
        what,
        value: transport_len,
    })?;
    let mut sum = Checksum::new();
    sum.add_pseudo_header(ip.src, ip.dst, protocol, len);
    Ok(sum)
}

/// The data that follows a transport header, as far as a checksum is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload<'a> {
    /// These bytes.
    Bytes(&'a [u8]),
    /// This many zero bytes, not materialised.
    Zeros(usize),
}

impl Payload<'_> {
    /// The payload's length, in bytes.
    pub fn len(&self) -> usize {
        match self {
            Payload::Bytes(bytes) => bytes.len(),
            Payload::Zeros(count) => *count,
        }
    }

    /// True if the payload has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_1071_example_sums_to_ddf2() {
        // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to 2ddf0, folded ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let mut c = Checksum::new();
        c.add_bytes(&data);
        assert_eq!(c.fold(), 0xddf2);
        assert_eq!(c.finish(), 0x220d);
    }

    #[test]
    fn an_odd_trailing_byte_is_padded_on_the_right() {
        // 0x1234 + 0x5600 = 0x6834.
        assert_eq!(
            Checksum::new().add_bytes(&[0x12, 0x34, 0x56]).fold(),
            0x6834
        );
    }

    #[test]
    fn pieces_of_odd_length_sum_as_if_concatenated() {
        let data: Vec<u8> = (0u8..=200).map(|b| b.wrapping_mul(37)).collect();
        let whole = checksum(&data);
        for split in 0..data.len() {
            let (a, b) = data.split_at(split);
            assert_eq!(
                Checksum::new().add_bytes(a).add_bytes(b).finish(),
                whole,
                "split {split}"
            );
        }
        let mut three = Checksum::new();
        three
            .add_bytes(&data[..3])
            .add_bytes(&[])
            .add_bytes(&data[3..4])
            .add_bytes(&data[4..]);
        assert_eq!(three.finish(), whole);
    }

    #[test]
    fn u16_and_u32_add_their_big_endian_bytes() {
        let mut a = Checksum::new();
        a.add_bytes(&[0x7f]).add_u16(0xabcd).add_u32(0x0102_0304);
        let b = Checksum::new()
            .add_bytes(&[0x7f, 0xab, 0xcd, 1, 2, 3, 4])
            .finish();
        assert_eq!(a.finish(), b);
    }

    #[test]
    fn zeros_sum_as_if_present_at_any_parity() {
        for lead in 0..4usize {
            for zeros in 0..6usize {
                let head: Vec<u8> = (0..lead).map(|i| 0xa0 + i as u8).collect();
                let tail = [0x5a, 0xc3, 0x11];
                let mut full = head.clone();
                full.extend(std::iter::repeat_n(0, zeros));
                full.extend_from_slice(&tail);
                let mut c = Checksum::new();
                c.add_bytes(&head).add_zeros(zeros).add_bytes(&tail);
                assert_eq!(c.finish(), checksum(&full), "lead {lead} zeros {zeros}");
                let mut p = Checksum::new();
                p.add_bytes(&head)
                    .add_payload(Payload::Zeros(zeros))
                    .add_payload(Payload::Bytes(&tail));
                assert_eq!(p.finish(), checksum(&full));
            }
        }
    }

    #[test]
    fn a_buffer_holding_its_checksum_verifies_to_zero() {
        let mut data = vec![0x45, 0x00, 0x12, 0x34, 0x00, 0x00, 0xfe, 0xdc];
        let c = checksum(&data);
        data[4..6].copy_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&data), 0);
    }

    #[test]
    fn the_pseudo_header_is_its_twelve_bytes() {
        let src = Ipv4Addr::new(10, 0, 0, 1);
        let dst = Ipv4Addr::new(192, 168, 1, 200);
        let mut c = Checksum::new();
        c.add_pseudo_header(src, dst, 6, 0x0514);
        let bytes = [10, 0, 0, 1, 192, 168, 1, 200, 0, 6, 0x05, 0x14];
        assert_eq!(c.finish(), checksum(&bytes));
    }

    #[test]
    fn payload_reports_its_length() {
        assert_eq!(Payload::Bytes(&[1, 2, 3]).len(), 3);
        assert_eq!(Payload::Zeros(1448).len(), 1448);
        assert!(Payload::Zeros(0).is_empty());
    }
}
