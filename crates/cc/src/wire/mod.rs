//! Wire formats: header structs and their byte encodings.
//!
//! The simulator moves header structs, not bytes; these codecs turn them into real bytes for
//! pcap traces and for the real-socket runtime, and back. Every decoder returns a typed
//! [`WireError`] on malformed input and never panics.

pub mod checksum;
pub mod ethernet;
pub mod frame;
pub mod ipv4;
pub mod tcp;
pub mod udp;

pub use ethernet::EthernetHeader;
pub use frame::{decode_ipv4_frame, encode_ipv4_frame, Transport};
pub use ipv4::{Ecn, Ipv4Header};
pub use tcp::{SackOption, TcpFlags, TcpHeader};
pub use udp::UdpHeader;

/// Why bytes could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than the header needs.
    #[error("truncated: {what} needs {need} bytes, got {got}")]
    Truncated {
        /// The header being read.
        what: &'static str,
        /// Bytes needed.
        need: usize,
        /// Bytes present.
        got: usize,
    },
    /// A version field holds a value this codec does not speak.
    #[error("{what}: unsupported version {version}")]
    BadVersion {
        /// The header being read.
        what: &'static str,
        /// The version found.
        version: u8,
    },
    /// A length field disagrees with the bytes present or with the header's own rules.
    #[error("{what}: bad length {value}")]
    BadLength {
        /// The header being read.
        what: &'static str,
        /// The offending length value.
        value: usize,
    },
    /// A checksum does not verify.
    #[error("{what}: checksum mismatch")]
    BadChecksum {
        /// The header being read.
        what: &'static str,
    },
    /// A field holds a value the format forbids.
    #[error("{what}: bad field {field} = {value}")]
    BadField {
        /// The header being read.
        what: &'static str,
        /// The field's name.
        field: &'static str,
        /// The value found.
        value: u64,
    },
}
