//! How a LOAD or RLOAD value survives the packet header that carries it.
//!
//! The ns-2 implementation of the paper (section IV.A.1) carries LOAD and RLOAD as two 32-bit
//! IEEE floats, "so that the results show the behaviour of ECA with a perfect encoding";
//! [`LoadEncoding::Float`] reproduces that and is the default. The Windows 2000 prototype
//! (section V.A.1) writes "an 8-bit fixed-point representation of the load estimate" into the
//! IP Type-of-Service byte; [`LoadEncoding::Tos8`] is that, and the prototype's coarser flow
//! rates (section V.C) come partly from it.
//!
//! The paper does not give the 8-bit format. A linear fixed-point byte cannot cover the range a
//! load estimate moves through (the estimator multiplies it by 1.05 or 0.99 every 100 ms, so it
//! lives on a logarithmic scale), so the byte here is the fixed-point base-2 logarithm of the
//! load, with 4 fraction bits and an offset of 128:
//!
//! - code 0 means "no load": no ECA router has stamped the packet (the TOS byte hosts send);
//! - code c in 1..=255 means L = 2^((c - 128) / 16): code 128 is L = 1, code 1 is
//!   2^(-127/16) ~ 0.00408, code 255 is 2^(127/16) ~ 245.1;
//! - neighbouring codes differ by a factor 2^(1/16) ~ 1.044, about one 1.05 step of the
//!   estimator, and rounding to the nearest code errs by at most 2^(1/32) ~ 2.2 %.
//!
//! Encoding rounds in the logarithm and saturates at the ends, so it is monotonic and
//! `encode_tos(decode_tos(c)) == c` for every code (tested exhaustively).

use crate::wire::ipv4::{Ecn, Ipv4Header};

/// The TOS code for "no load stamped": what a packet carries before any ECA router.
pub const TOS_NO_LOAD: u8 = 0;
/// The TOS code of a load of exactly 1.
pub const TOS_UNITY: u8 = 128;
/// TOS codes per doubling of the load (the 4 fraction bits of the logarithm).
pub const TOS_STEPS_PER_OCTAVE: f64 = 16.0;

/// How LOAD and RLOAD are carried in a packet header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LoadEncoding {
    /// A 32-bit IEEE float per field, as in the paper's ns-2 simulation (section IV.A.1).
    #[default]
    Float,
    /// The 8-bit logarithmic code in the IP TOS byte, as in the paper's prototype
    /// (section V.A.1); see the module documentation for the format.
    Tos8,
}

impl LoadEncoding {
    /// The load a receiver reads after `load` went through this encoding. NaN, zero and
    /// negative values are not loads: both encodings give 0 ("no load") for them.
    pub fn quantise(self, load: f64) -> f64 {
        match self {
            LoadEncoding::Float => {
                if load.is_nan() || load <= 0.0 {
                    0.0
                } else {
                    // Saturate instead of overflowing to infinity.
                    f64::from(load.min(f64::from(f32::MAX)) as f32)
                }
            }
            LoadEncoding::Tos8 => decode_tos(encode_tos(load)),
        }
    }
}

/// The TOS code for `load`: 0 for NaN, zero and negative loads, otherwise the nearest code on
/// the logarithmic scale, saturating at 1 and 255 (so a positive load never reads back as 0).
pub fn encode_tos(load: f64) -> u8 {
    if load.is_nan() || load <= 0.0 {
        return TOS_NO_LOAD;
    }
    if load == f64::INFINITY {
        return u8::MAX;
    }
    let code = (load.log2() * TOS_STEPS_PER_OCTAVE).round() + f64::from(TOS_UNITY);
    // In range after the clamp, so the conversion is exact.
    code.clamp(1.0, 255.0) as u8
}

/// The load a TOS code stands for: 0 for code 0, else 2^((code - 128) / 16).
pub fn decode_tos(code: u8) -> f64 {
    if code == TOS_NO_LOAD {
        return 0.0;
    }
    ((f64::from(code) - f64::from(TOS_UNITY)) / TOS_STEPS_PER_OCTAVE).exp2()
}

/// The smallest positive load the TOS code represents (code 1, ~0.00408).
pub fn tos_min_load() -> f64 {
    decode_tos(1)
}

/// The largest load the TOS code represents (code 255, ~245.1).
pub fn tos_max_load() -> f64 {
    decode_tos(u8::MAX)
}

/// The whole TOS byte of `header`: DSCP in the upper six bits, ECN in the lower two. The
/// prototype (section V.A.1) uses the whole byte for the load code.
pub fn read_tos(header: &Ipv4Header) -> u8 {
    ((header.dscp & 0x3f) << 2) | header.ecn as u8
}

/// Writes `code` into the whole TOS byte of `header` (DSCP and ECN together).
pub fn write_tos(header: &mut Ipv4Header, code: u8) {
    header.dscp = code >> 2;
    header.ecn = match code & 0b11 {
        0b00 => Ecn::NotEct,
        0b01 => Ecn::Ect1,
        0b10 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    #[test]
    fn every_code_decodes_to_a_strictly_larger_load_than_the_code_below() {
        for c in 1..=255u8 {
            assert!(decode_tos(c) > decode_tos(c - 1), "code {c}");
        }
        assert_eq!(decode_tos(0), 0.0);
        assert_eq!(decode_tos(128), 1.0);
        assert_eq!(decode_tos(144), 2.0);
        assert_eq!(decode_tos(112), 0.5);
    }

    #[test]
    fn every_code_survives_a_round_trip() {
        for c in 0..=255u8 {
            let load = decode_tos(c);
            assert_eq!(encode_tos(load), c, "code {c}");
            assert_eq!(decode_tos(encode_tos(decode_tos(c))), load, "code {c}");
            assert_eq!(LoadEncoding::Tos8.quantise(load), load, "code {c}");
        }
    }

    #[test]
    fn encoding_is_monotonic_and_rounds_to_the_nearest_code_in_the_logarithm() {
        let mut previous = 0u8;
        let mut load = 1e-4;
        while load < 1e4 {
            let c = encode_tos(load);
            assert!(c >= previous, "load {load}");
            if (2..=254).contains(&c) {
                let q = decode_tos(c);
                // Within half a step (a factor 2^(1/32)) of the true load.
                assert!((q / load).log2().abs() <= 1.0 / 32.0 + 1e-12, "load {load}");
            }
            previous = c;
            load *= 1.01;
        }
    }

    #[test]
    fn out_of_range_loads_saturate_and_non_loads_encode_as_no_load() {
        assert_eq!(encode_tos(1e-9), 1);
        assert_eq!(encode_tos(1e9), 255);
        assert_eq!(encode_tos(f64::INFINITY), 255);
        assert_eq!(encode_tos(0.0), TOS_NO_LOAD);
        assert_eq!(encode_tos(-3.0), TOS_NO_LOAD);
        assert_eq!(encode_tos(f64::NAN), TOS_NO_LOAD);
        assert_eq!(tos_min_load(), (-127.0f64 / 16.0).exp2());
        assert_eq!(tos_max_load(), (127.0f64 / 16.0).exp2());
    }

    #[test]
    fn the_float_encoding_keeps_what_an_f32_keeps() {
        assert_eq!(LoadEncoding::Float.quantise(1.5), 1.5);
        assert_eq!(LoadEncoding::Float.quantise(0.1), f64::from(0.1f32));
        assert_eq!(LoadEncoding::Float.quantise(1e300), f64::from(f32::MAX));
        assert_eq!(LoadEncoding::Float.quantise(-1.0), 0.0);
        assert_eq!(LoadEncoding::Float.quantise(f64::NAN), 0.0);
        assert_eq!(LoadEncoding::default(), LoadEncoding::Float);
    }

    #[test]
    fn every_code_survives_the_tos_byte_of_an_ip_header() {
        let mut h = Ipv4Header {
            src: Ipv4Addr::new(10, 0, 0, 1),
            dst: Ipv4Addr::new(10, 0, 0, 2),
            dscp: 0,
            ecn: Ecn::NotEct,
            id: 0,
            ttl: 64,
            protocol: 6,
            total_len: 40,
        };
        for c in 0..=255u8 {
            write_tos(&mut h, c);
            assert!(h.dscp < 64);
            assert_eq!(read_tos(&h), c);
        }
    }
}
