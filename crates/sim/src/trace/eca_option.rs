//! ECA's LOAD and RLOAD as a trace shows them: an IPv4 option.
//!
//! The paper's ns-2 simulation carries LOAD and RLOAD as two 32-bit IEEE floats (Barham,
//! MSR-TR-2001-100, section IV.A.1) without saying where in the header; a trace needs bytes, so
//! concord writes them as an IPv4 option (RFC 791 section 3.1) of the experimental option number
//! 30 (RFC 4727 section 2.5) with the copied flag set, since every hop's router reads it:
//!
//! ```text
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//! |  0x9E  |   10   |      LOAD (binary32, big-endian)  |  RLOAD ...
//! +--------+--------+--------+--------+--------+--------+--------+--------+
//!   ... RLOAD (binary32)     |  EOL   |  EOL   |
//! +--------+--------+--------+--------+--------+
//! ```
//!
//! The two End-of-Option-List bytes pad the options to a whole word: the header grows from 20
//! to 32 bytes (IHL 8). A field of 0 means "no load stamped". The 12 bytes are trace-only: the
//! simulated packet's size does not count them, as the ns-2 header fields did not.
//! `wireshark/concord.lua` decodes the option (display filter `eca`).

use concord_cc::wire::checksum::checksum;
use concord_cc::wire::EthernetHeader;

/// The option type: copied flag 1, class 0, number 30 (RFC 4727's experiment number).
pub const OPTION_TYPE: u8 = 0x9E;
/// The option's length byte: type, length and two binary32 fields.
pub const OPTION_LEN: u8 = 10;
/// The bytes the option adds to an IPv4 header, padding to a word included.
pub const PADDED_LEN: usize = 12;
/// End of Option List (RFC 791).
const EOL: u8 = 0;
/// No Operation (RFC 791).
const NOP: u8 = 1;
/// A header without options, in bytes.
const IPV4_LEN: usize = 20;

/// LOAD and RLOAD as the option carries them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EcaOption {
    /// The largest load a router on the path stamped (0: none).
    pub load: f32,
    /// The LOAD the receiver reflects to the sender (0: none).
    pub rload: f32,
}

/// Why IPv4 options do not hold a well-formed ECA option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EcaOptionError {
    /// An option's length byte runs past the options or is below 2 (RFC 791).
    #[error("IPv4 option at byte {at} has length {len}, which does not fit the options")]
    BadOptionLength {
        /// Offset of the option within the options, in bytes.
        at: usize,
        /// Its length byte.
        len: u8,
    },
    /// The ECA option's length byte is not [`OPTION_LEN`].
    #[error("ECA option length {0}, expected {OPTION_LEN}")]
    BadEcaLength(u8),
}

impl EcaOption {
    /// Appends the option and its padding ([`PADDED_LEN`] bytes) to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(OPTION_TYPE);
        out.push(OPTION_LEN);
        out.extend_from_slice(&self.load.to_be_bytes());
        out.extend_from_slice(&self.rload.to_be_bytes());
        out.extend_from_slice(&[EOL, EOL]);
    }

    /// Finds the ECA option among `options` (the bytes of an IPv4 header after its first 20):
    /// `Ok(None)` if there is none.
    pub fn find(options: &[u8]) -> Result<Option<EcaOption>, EcaOptionError> {
        let mut at = 0;
        while at < options.len() {
            match options[at] {
                EOL => break,
                NOP => at += 1,
                ty => {
                    let len = options.get(at + 1).copied().unwrap_or(0);
                    if len < 2 || at + usize::from(len) > options.len() {
                        return Err(EcaOptionError::BadOptionLength { at, len });
                    }
                    if ty == OPTION_TYPE {
                        if len != OPTION_LEN {
                            return Err(EcaOptionError::BadEcaLength(len));
                        }
                        let f = |i: usize| {
                            f32::from_be_bytes([
                                options[i],
                                options[i + 1],
                                options[i + 2],
                                options[i + 3],
                            ])
                        };
                        return Ok(Some(EcaOption {
                            load: f(at + 2),
                            rload: f(at + 6),
                        }));
                    }
                    at += usize::from(len);
                }
            }
        }
        Ok(None)
    }

    /// Inserts the option into the IPv4 header of `frame`, an Ethernet II frame whose IPv4
    /// header has no options and is whole: the IHL becomes 8, the total length grows by
    /// [`PADDED_LEN`] and the header checksum is recomputed. The TCP and UDP checksums stay
    /// valid (their pseudo-header does not cover options). Returns false, leaving `frame`
    /// unchanged, if the frame is not such a frame.
    pub fn insert(&self, frame: &mut Vec<u8>) -> bool {
        let ip = EthernetHeader::LEN;
        if frame.len() < ip + IPV4_LEN
            || frame[ip - 2..ip] != EthernetHeader::ETHERTYPE_IPV4.to_be_bytes()
            || frame[ip] != 0x45
        {
            return false;
        }
        let total = u16::from_be_bytes([frame[ip + 2], frame[ip + 3]]);
        let Some(total) = total.checked_add(PADDED_LEN as u16) else {
            return false;
        };
        let mut option = Vec::with_capacity(PADDED_LEN);
        self.encode(&mut option);
        frame.splice(ip + IPV4_LEN..ip + IPV4_LEN, option);
        let header_len = IPV4_LEN + PADDED_LEN;
        frame[ip] = 0x40 | (header_len / 4) as u8;
        frame[ip + 2..ip + 4].copy_from_slice(&total.to_be_bytes());
        frame[ip + 10..ip + 12].copy_from_slice(&[0, 0]);
        let sum = checksum(&frame[ip..ip + header_len]);
        frame[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::wire::{decode_ipv4_frame, encode_ipv4_frame, Ecn, Ipv4Header, UdpHeader};
    use std::net::Ipv4Addr;

    fn udp_frame() -> Vec<u8> {
        let eth = EthernetHeader {
            dst: [2, 0, 0, 0, 0, 2],
            src: [2, 0, 0, 0, 0, 1],
            ethertype: 0,
        };
        let ip = Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::NotEct,
            id: 0,
            ttl: 64,
            protocol: 0,
            total_len: 0,
        };
        let udp = concord_cc::wire::Transport::Udp(UdpHeader {
            src_port: 65_535,
            dst_port: 49_152,
            len: 0,
        });
        let mut frame = Vec::new();
        encode_ipv4_frame(&mut frame, &eth, &ip, udp, 100, 1_000).expect("frame encodes");
        frame
    }

    #[test]
    fn the_option_is_type_0x9e_length_10_then_two_big_endian_floats_and_two_eol() {
        let mut out = Vec::new();
        EcaOption {
            load: 1.0,
            rload: 0.5,
        }
        .encode(&mut out);
        assert_eq!(
            out,
            [0x9E, 10, 0x3f, 0x80, 0, 0, 0x3f, 0, 0, 0, 0, 0],
            "1.0 is 0x3f800000 and 0.5 is 0x3f000000 in binary32"
        );
    }

    #[test]
    fn an_inserted_option_leaves_a_frame_the_wire_decoder_accepts_and_is_found_again() {
        let mut frame = udp_frame();
        let before = frame.len();
        let opt = EcaOption {
            load: 1.25,
            rload: 0.75,
        };
        assert!(opt.insert(&mut frame));
        assert_eq!(frame.len(), before + PADDED_LEN);
        // The header checksum, the total length and the UDP checksum all still verify.
        let (_, ip, _, payload_at) = decode_ipv4_frame(&frame).expect("frame still decodes");
        assert_eq!(usize::from(ip.total_len), 20 + PADDED_LEN + 8 + 100);
        assert_eq!(payload_at, 14 + 32 + 8);
        assert_eq!(frame[14], 0x48, "IHL 8");
        assert_eq!(EcaOption::find(&frame[34..46]), Ok(Some(opt)));
    }

    #[test]
    fn a_frame_that_already_has_options_or_is_not_ipv4_is_left_alone() {
        let mut frame = udp_frame();
        let opt = EcaOption {
            load: 1.0,
            rload: 0.0,
        };
        assert!(opt.insert(&mut frame));
        let once = frame.clone();
        assert!(!opt.insert(&mut frame), "IHL is no longer 5");
        assert_eq!(frame, once);
        let mut short = vec![0u8; 20];
        assert!(!opt.insert(&mut short));
        assert_eq!(short, vec![0u8; 20]);
    }

    #[test]
    fn find_skips_nop_and_other_options_and_stops_at_eol() {
        // NOP, a 4-byte unknown option, then the ECA option.
        let mut opts = vec![NOP, 0x44, 4, 0, 0];
        EcaOption {
            load: 2.0,
            rload: 0.0,
        }
        .encode(&mut opts);
        assert_eq!(
            EcaOption::find(&opts),
            Ok(Some(EcaOption {
                load: 2.0,
                rload: 0.0
            }))
        );
        assert_eq!(EcaOption::find(&[EOL, OPTION_TYPE, 10]), Ok(None));
        assert_eq!(EcaOption::find(&[]), Ok(None));
    }

    #[test]
    fn find_refuses_lengths_that_do_not_fit() {
        assert_eq!(
            EcaOption::find(&[0x44, 1, 0, 0]),
            Err(EcaOptionError::BadOptionLength { at: 0, len: 1 })
        );
        assert_eq!(
            EcaOption::find(&[0x44, 9, 0, 0]),
            Err(EcaOptionError::BadOptionLength { at: 0, len: 9 })
        );
        assert_eq!(
            EcaOption::find(&[OPTION_TYPE, 6, 0, 0, 0, 0, 0, 0]),
            Err(EcaOptionError::BadEcaLength(6))
        );
    }
}
