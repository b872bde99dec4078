//! Ethernet II framing, used as the pcap link type so that concord's own frames (such as GCCP
//! messages with their own EtherType) can share a trace with IPv4. PLACEHOLDER: codec to be written.

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
