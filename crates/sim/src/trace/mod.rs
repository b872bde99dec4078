//! Traces of a run, written as it goes: packet captures for Wireshark.

pub mod capture;
pub mod cp_shim;
pub mod eca_option;
pub mod macroflow;
pub mod pcap;
pub mod pcapng;

/// The file format of packet traces (`[record] pcap_format`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TraceFormat {
    /// Classic libpcap with nanosecond timestamps (`.pcap`), read by every tool.
    #[default]
    Pcap,
    /// pcapng (`.pcapng`): the same frames, with the channel as the interface's name, its
    /// nodes and addresses as the interface's description, and a section comment naming the
    /// scenario and its seed.
    Pcapng,
}
