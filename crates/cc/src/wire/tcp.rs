//! TCP header (RFC 9293). PLACEHOLDER: codec to be written.

/// TCP control bits, including ECE and CWR (RFC 3168 section 6.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    /// No more data from sender.
    pub const FIN: TcpFlags = TcpFlags(0x01);
    /// Synchronise sequence numbers.
    pub const SYN: TcpFlags = TcpFlags(0x02);
    /// Reset the connection.
    pub const RST: TcpFlags = TcpFlags(0x04);
    /// Push function.
    pub const PSH: TcpFlags = TcpFlags(0x08);
    /// Acknowledgment field significant.
    pub const ACK: TcpFlags = TcpFlags(0x10);
    /// Urgent pointer significant.
    pub const URG: TcpFlags = TcpFlags(0x20);
    /// ECN-Echo.
    pub const ECE: TcpFlags = TcpFlags(0x40);
    /// Congestion Window Reduced.
    pub const CWR: TcpFlags = TcpFlags(0x80);

    /// True if every bit of `other` is set.
    pub fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

/// A TCP header without options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Sequence number (low 32 bits of the byte offset).
    pub seq: u32,
    /// Acknowledgment number.
    pub ack: u32,
    /// Control bits.
    pub flags: TcpFlags,
    /// Receive window, in bytes (unscaled).
    pub window: u16,
    /// The timestamps option (RFC 7323): (TSval, TSecr). When present the header carries
    /// NOP, NOP, TS (12 bytes of options), so header and option take the 32 bytes that make a
    /// 1448-byte MSS fill a 1500-byte packet.
    pub timestamps: Option<(u32, u32)>,
}
