//! IPv4 header (RFC 791) with the ECN field (RFC 3168). PLACEHOLDER: codec to be written.

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
}

/// An IPv4 header without options.
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
