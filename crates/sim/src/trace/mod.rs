//! Traces of a run, written as it goes: packet captures for Wireshark.

pub mod capture;
pub mod cp_shim;
pub mod eca_option;
pub mod pcap;
