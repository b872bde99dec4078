//! Amounts of data and data rates, and the parsing of their written forms.
//!
//! Data is counted in bytes ([`Bytes`]), rates in bits per second ([`Rate`]). Written forms are
//! what scenario files and command lines use: `"10Mbps"`, `"1.5Gbps"`, `"64KB"`, `"25ms"`.
//! Prefixes are decimal for rates (1 Mbps = 10^6 bit/s) and binary for sizes written `KiB`/`MiB`,
//! decimal for `KB`/`MB`, as in ns-3 and tc.

use crate::time::{trim, Duration, NANOS_PER_SEC};
use std::fmt;
use std::str::FromStr;

/// An amount of data, in bytes.
pub type Bytes = u64;

/// A data rate, in bits per second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u64);

impl Rate {
    /// No rate: nothing may be sent.
    pub const ZERO: Rate = Rate(0);
    /// An unlimited rate.
    pub const MAX: Rate = Rate(u64::MAX);

    /// A rate of `bps` bits per second.
    pub const fn from_bps(bps: u64) -> Rate {
        Rate(bps)
    }
    /// A rate of `kbps` kilobits (10^3) per second.
    pub const fn from_kbps(kbps: u64) -> Rate {
        Rate(kbps.saturating_mul(1_000))
    }
    /// A rate of `mbps` megabits (10^6) per second.
    pub const fn from_mbps(mbps: u64) -> Rate {
        Rate(mbps.saturating_mul(1_000_000))
    }
    /// A rate of `gbps` gigabits (10^9) per second.
    pub const fn from_gbps(gbps: u64) -> Rate {
        Rate(gbps.saturating_mul(1_000_000_000))
    }
    /// A rate from a float in bits per second; negative or NaN give zero.
    pub fn from_bps_f64(bps: f64) -> Rate {
        if bps.is_nan() || bps <= 0.0 {
            Rate::ZERO
        } else if bps >= u64::MAX as f64 {
            Rate::MAX
        } else {
            Rate(bps.round() as u64)
        }
    }
    /// The rate that moves `bytes` in `over`; zero span gives [`Rate::MAX`].
    pub fn from_bytes_over(bytes: Bytes, over: Duration) -> Rate {
        if over.is_zero() {
            return Rate::MAX;
        }
        Rate::from_bps_f64(bytes as f64 * 8.0 / over.as_secs_f64())
    }
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }
    /// Bits per second as a float.
    pub fn bps_f64(self) -> f64 {
        self.0 as f64
    }
    /// Bytes per second as a float.
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }
    /// The time to serialise `bytes` at this rate, rounded up to the nanosecond;
    /// [`Duration::MAX`] at rate zero.
    pub fn transmit_time(self, bytes: Bytes) -> Duration {
        if self.0 == 0 {
            return Duration::MAX;
        }
        let bits = bytes as u128 * 8 * NANOS_PER_SEC as u128;
        let nanos = bits.div_ceil(self.0 as u128);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }
    /// The bytes this rate moves in `span` (truncated).
    pub fn bytes_in(self, span: Duration) -> Bytes {
        let b = self.0 as u128 * span.as_nanos() as u128 / (8 * NANOS_PER_SEC as u128);
        u64::try_from(b).unwrap_or(u64::MAX)
    }
    /// `self * k`, saturating; negative gives zero.
    pub fn mul_f64(self, k: f64) -> Rate {
        Rate::from_bps_f64(self.0 as f64 * k)
    }
}

impl fmt::Display for Rate {
    /// Human units: `10Mbps`, `1.5Gbps`, `64kbps`, `300bps`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0 as f64;
        if b >= 1e9 {
            write!(f, "{}Gbps", trim(b / 1e9))
        } else if b >= 1e6 {
            write!(f, "{}Mbps", trim(b / 1e6))
        } else if b >= 1e3 {
            write!(f, "{}kbps", trim(b / 1e3))
        } else {
            write!(f, "{}bps", self.0)
        }
    }
}

/// Why a written quantity could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseQuantityError {
    /// The text has no number in front.
    #[error("`{text}` has no number; write it like `{example}`")]
    NoNumber {
        /// The text as given.
        text: String,
        /// A correct example of the expected kind.
        example: &'static str,
    },
    /// The number is negative.
    #[error("`{text}` is negative; a {what} must be zero or more")]
    Negative {
        /// The text as given.
        text: String,
        /// What kind of quantity was expected.
        what: &'static str,
    },
    /// The unit is missing or not one of the known ones.
    #[error("`{text}` has unit `{unit}`; use one of {known}")]
    BadUnit {
        /// The text as given.
        text: String,
        /// The unit as given (may be empty).
        unit: String,
        /// The accepted units.
        known: &'static str,
    },
    /// The value does not fit the representation.
    #[error("`{text}` is too large")]
    TooLarge {
        /// The text as given.
        text: String,
    },
}

/// Splits `"10.5Mbps"` into `(10.5, "Mbps")`.
fn split_number(
    text: &str,
    example: &'static str,
    what: &'static str,
) -> Result<(f64, String), ParseQuantityError> {
    let t = text.trim();
    // The number is the longest prefix of digits, '.', '_' and a leading sign; no exponent form.
    let end = t
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit() || c == '.' || c == '_' || (i == 0 && (c == '-' || c == '+')))
        })
        .map(|(i, _)| i)
        .unwrap_or(t.len());
    let num: String = t[..end].chars().filter(|&c| c != '_').collect();
    let value: f64 = num.parse().map_err(|_| ParseQuantityError::NoNumber {
        text: text.to_string(),
        example,
    })?;
    if !value.is_finite() {
        return Err(ParseQuantityError::TooLarge {
            text: text.to_string(),
        });
    }
    if value < 0.0 {
        return Err(ParseQuantityError::Negative {
            text: text.to_string(),
            what,
        });
    }
    Ok((value, t[end..].trim().to_string()))
}

impl FromStr for Rate {
    type Err = ParseQuantityError;
    /// Reads `"10Mbps"`, `"1.5Gbps"`, `"64kbps"`, `"800bps"` (also `Mbit/s`, `Mb/s`).
    fn from_str(text: &str) -> Result<Rate, ParseQuantityError> {
        let (v, unit) = split_number(text, "10Mbps", "rate")?;
        let scale = match unit.to_ascii_lowercase().as_str() {
            "bps" | "bit/s" | "b/s" => 1.0,
            "kbps" | "kbit/s" | "kb/s" => 1e3,
            "mbps" | "mbit/s" | "mb/s" => 1e6,
            "gbps" | "gbit/s" | "gb/s" => 1e9,
            _ => {
                return Err(ParseQuantityError::BadUnit {
                    text: text.to_string(),
                    unit,
                    known: "bps, kbps, Mbps, Gbps",
                })
            }
        };
        let bps = v * scale;
        if bps >= u64::MAX as f64 {
            return Err(ParseQuantityError::TooLarge {
                text: text.to_string(),
            });
        }
        Ok(Rate::from_bps_f64(bps))
    }
}

/// Reads a duration written `"25ms"`, `"1.5s"`, `"200us"`, `"10ns"`, `"2min"`.
pub fn parse_duration(text: &str) -> Result<Duration, ParseQuantityError> {
    let (v, unit) = split_number(text, "25ms", "duration")?;
    let scale = match unit.as_str() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "min" => 60.0,
        _ => {
            return Err(ParseQuantityError::BadUnit {
                text: text.to_string(),
                unit,
                known: "ns, us, ms, s, min",
            })
        }
    };
    let secs = v * scale;
    if secs * NANOS_PER_SEC as f64 >= u64::MAX as f64 {
        return Err(ParseQuantityError::TooLarge {
            text: text.to_string(),
        });
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Reads a byte size written `"64KB"`, `"1500B"`, `"1MiB"`, `"2MB"`.
pub fn parse_bytes(text: &str) -> Result<Bytes, ParseQuantityError> {
    let (v, unit) = split_number(text, "64KB", "size")?;
    let scale = match unit.as_str() {
        "B" | "b" | "bytes" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(ParseQuantityError::BadUnit {
                text: text.to_string(),
                unit,
                known: "B, KB, MB, GB, KiB, MiB, GiB",
            })
        }
    };
    let b = (v * scale).round();
    if b >= u64::MAX as f64 {
        return Err(ParseQuantityError::TooLarge {
            text: text.to_string(),
        });
    }
    Ok(b as u64)
}

/// Reads a fraction written `"1%"`, `"0.5%"` or `"0.01"`; must lie in [0, 1].
pub fn parse_fraction(text: &str) -> Result<f64, ParseQuantityError> {
    let (v, unit) = split_number(text, "1%", "fraction")?;
    let f = match unit.as_str() {
        "" => v,
        "%" => v / 100.0,
        _ => {
            return Err(ParseQuantityError::BadUnit {
                text: text.to_string(),
                unit,
                known: "% or none",
            });
        }
    };
    if f > 1.0 {
        return Err(ParseQuantityError::TooLarge {
            text: text.to_string(),
        });
    }
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transmit_time_of_a_1500_byte_packet_at_10mbps_is_1_2ms() {
        assert_eq!(
            Rate::from_mbps(10).transmit_time(1500),
            Duration::from_micros(1200)
        );
        assert_eq!(
            Rate::from_gbps(1).transmit_time(1500),
            Duration::from_nanos(12_000)
        );
        assert_eq!(Rate::ZERO.transmit_time(1), Duration::MAX);
    }

    #[test]
    fn bytes_in_inverts_transmit_time() {
        let r = Rate::from_mbps(10);
        assert_eq!(r.bytes_in(Duration::from_secs(1)), 1_250_000);
        assert_eq!(Rate::from_bytes_over(1_250_000, Duration::from_secs(1)), r);
    }

    #[test]
    fn written_rates_parse_with_decimal_prefixes() {
        assert_eq!("10Mbps".parse::<Rate>(), Ok(Rate::from_mbps(10)));
        assert_eq!("1.5Gbps".parse::<Rate>(), Ok(Rate::from_bps(1_500_000_000)));
        assert_eq!("64 kbps".parse::<Rate>(), Ok(Rate::from_kbps(64)));
        assert!(matches!(
            "-5Mbps".parse::<Rate>(),
            Err(ParseQuantityError::Negative { .. })
        ));
        assert!(matches!(
            "5furlongs".parse::<Rate>(),
            Err(ParseQuantityError::BadUnit { .. })
        ));
        assert!(matches!(
            "fast".parse::<Rate>(),
            Err(ParseQuantityError::NoNumber { .. })
        ));
    }

    #[test]
    fn written_durations_sizes_and_fractions_parse() {
        assert_eq!(parse_duration("25ms"), Ok(Duration::from_millis(25)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("200us"), Ok(Duration::from_micros(200)));
        assert!(parse_duration("25").is_err());
        assert_eq!(parse_bytes("64KB"), Ok(64_000));
        assert_eq!(parse_bytes("64KiB"), Ok(65_536));
        assert_eq!(parse_bytes("1500B"), Ok(1500));
        assert_eq!(parse_fraction("1%"), Ok(0.01));
        assert_eq!(parse_fraction("0.25"), Ok(0.25));
        assert!(parse_fraction("150%").is_err());
    }

    #[test]
    fn display_round_trips_through_parse() {
        for r in [
            Rate::from_mbps(10),
            Rate::from_kbps(64),
            Rate::from_bps(1_500_000_000),
        ] {
            assert_eq!(r.to_string().parse::<Rate>(), Ok(r));
        }
    }
}
