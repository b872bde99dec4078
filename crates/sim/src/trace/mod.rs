//! Traces: pcap files of what crosses chosen channels.

pub mod capture;
pub mod pcap;
