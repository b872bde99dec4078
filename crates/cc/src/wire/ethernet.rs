//! Ethernet II framing, used as the pcap link type so that concord's own frames (such as GCCP
//! messages with their own EtherType) can share a trace with IPv4.
//!
//! Layout (IEEE 802.3 clause 3.2, Ethernet II variant): destination MAC (6 bytes), source MAC
//! (6 bytes), EtherType (2 bytes, big-endian). The preamble and the frame check sequence are not
//! part of what this codec reads or writes, as in a capture. VLAN tags are not parsed.

use super::WireError;

/// An Ethernet II header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetHeader {
    /// Destination MAC address.
    pub dst: [u8; 6],
    /// Source MAC address.
    pub src: [u8; 6],
    /// EtherType (0x0800 IPv4).
    pub ethertype: u16,
}

impl EthernetHeader {
    /// Length of the header, in bytes.
    pub const LEN: usize = 14;
    /// The EtherType of IPv4.
    pub const ETHERTYPE_IPV4: u16 = 0x0800;

    /// Appends the header's 14 bytes to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.dst);
        out.extend_from_slice(&self.src);
        out.extend_from_slice(&self.ethertype.to_be_bytes());
    }

    /// Reads a header from the start of `bytes`; returns it and the bytes consumed (always 14).
    /// Anything after the header is left to the caller.
    pub fn decode(bytes: &[u8]) -> Result<(EthernetHeader, usize), WireError> {
        let Some(h) = bytes.get(..Self::LEN) else {
            return Err(WireError::Truncated {
                what: "ethernet",
                need: Self::LEN,
                got: bytes.len(),
            });
        };
        let mut dst = [0; 6];
        let mut src = [0; 6];
        dst.copy_from_slice(&h[0..6]);
        src.copy_from_slice(&h[6..12]);
        let ethertype = u16::from_be_bytes([h[12], h[13]]);
        Ok((
            EthernetHeader {
                dst,
                src,
                ethertype,
            },
            Self::LEN,
        ))
    }

    /// Length of the encoded header, in bytes (always 14).
    #[expect(clippy::len_without_is_empty, reason = "a header is never empty")]
    pub fn len(&self) -> usize {
        Self::LEN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> EthernetHeader {
        EthernetHeader {
            dst: [0x02, 0x00, 0x00, 0x00, 0x00, 0x02],
            src: [0x02, 0x00, 0x00, 0x00, 0x00, 0x01],
            ethertype: EthernetHeader::ETHERTYPE_IPV4,
        }
    }

    #[test]
    fn encodes_destination_source_and_ethertype() {
        let mut out = vec![0xee];
        sample().encode(&mut out);
        assert_eq!(out, [0xee, 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        assert_eq!(sample().len(), 14);
    }

    #[test]
    fn decodes_what_it_encodes_and_leaves_the_rest() {
        let mut out = Vec::new();
        sample().encode(&mut out);
        out.extend_from_slice(&[0x45, 0x00]);
        assert_eq!(EthernetHeader::decode(&out), Ok((sample(), 14)));
    }

    #[test]
    fn thirteen_bytes_are_truncated() {
        assert_eq!(
            EthernetHeader::decode(&[0; 13]),
            Err(WireError::Truncated {
                what: "ethernet",
                need: 14,
                got: 13
            })
        );
    }
}
