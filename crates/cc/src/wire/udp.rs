//! UDP header (RFC 768). PLACEHOLDER: codec to be written.

/// A UDP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpHeader {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
    /// Length of header and payload, in bytes.
    pub len: u16,
}
