//! Amounts of data and data rates, and the parsing of their written forms.
//!
//! Data is counted in bytes ([`Bytes`]), rates in bits per second ([`Rate`]). Written forms are
//! what scenario files and command lines use: `"10Mbps"`, `"1.5Gbps"`, `"64KB"`, `"25ms"`.
//! Prefixes are decimal (`k`, `M`, `G`: 10^3, 10^6, 10^9) or binary (`Ki`, `Mi`, `Gi`: 2^10,
//! 2^20, 2^30), as in ns-3 and tc. The case of the `b` says bits or bytes, as in ns-3's
//! `DataRate`: `Mbps`, `Mb/s`, `Mbit/s` are megabits per second; `MBps`, `MB/s` are megabytes
//! per second (8x more). A form that could be misread (`MBPS`, a size where a rate is asked,
//! bits where a size is asked) is refused with the spelling that fixes it, and a rate that is
//! not a whole number of bits per second (`"0.5bps"`) is refused rather than rounded.

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
        // bytes * 8 * 10^9 fits in 64 bits below about 2.3 GB: one 64-bit division, the same
        // quotient as the 128-bit one (which a packet never needs and costs a library call).
        if let Some(bits) = bytes.checked_mul(8 * NANOS_PER_SEC) {
            return Duration::from_nanos(bits.div_ceil(self.0));
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
    /// The unit could be misread (bits for bytes, a size for a rate); `fix` says what to write.
    #[error("`{text}`: {problem}; {fix}")]
    Misleading {
        /// The text as given.
        text: String,
        /// What is wrong with the unit.
        problem: String,
        /// The spelling that says what was meant.
        fix: String,
    },
    /// The value is not a whole number of the quantity's smallest unit (bits/s, bytes).
    #[error("`{text}` is not a whole number of {unit}; {fix}")]
    NotWhole {
        /// The text as given.
        text: String,
        /// The smallest unit (`bit/s`, `bytes`).
        unit: &'static str,
        /// The nearest value that can be written.
        fix: String,
    },
}

/// A non-negative decimal number read exactly: `mantissa / 10^scale`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Decimal {
    mantissa: u128,
    scale: u32,
}

impl Decimal {
    /// `Ok(self * factor)` if that is a whole number, else `Err` with it rounded to the nearest
    /// whole number (half up); `None` on overflow.
    fn times_exact(self, factor: u128) -> Option<Result<u128, u128>> {
        let num = self.mantissa.checked_mul(factor)?;
        let den = 10u128.checked_pow(self.scale)?;
        if num % den == 0 {
            Some(Ok(num / den))
        } else {
            Some(Err((num + den / 2) / den))
        }
    }
}

/// Splits `"10.5Mbps"` into the exact decimal 10.5 and `"Mbps"`.
fn split_decimal(
    text: &str,
    example: &'static str,
    what: &'static str,
) -> Result<(Decimal, String), ParseQuantityError> {
    // Checks the number (present, finite, not negative) and finds the unit.
    let (_, unit) = split_number(text, example, what)?;
    let t = text.trim();
    let digits: String = t
        .chars()
        .take_while(|&c| c.is_ascii_digit() || c == '.' || c == '_' || c == '+')
        .filter(|&c| c.is_ascii_digit() || c == '.')
        .collect();
    let (int, frac) = digits.split_once('.').unwrap_or((&digits, ""));
    let too_large = || ParseQuantityError::TooLarge {
        text: text.to_string(),
    };
    // Trailing zeros of the fraction carry no value; dropping them keeps 10^scale small.
    let frac = frac.trim_end_matches('0');
    let scale = u32::try_from(frac.len()).map_err(|_| too_large())?;
    let joined = format!("{int}{frac}");
    let mantissa = if joined.is_empty() {
        0
    } else {
        joined.parse::<u128>().map_err(|_| too_large())?
    };
    Ok((Decimal { mantissa, scale }, unit))
}

/// The multiplier of a decimal or binary prefix (`""`, `k`/`K`, `M`, `G`, `Ki`, `Mi`, `Gi`);
/// `m` and `g` are read as mega and giga, the only sensible meanings in a rate.
fn prefix_factor(prefix: &str) -> Option<u128> {
    Some(match prefix {
        "" => 1,
        "k" | "K" => 1_000,
        "M" | "m" => 1_000_000,
        "G" | "g" => 1_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        _ => return None,
    })
}

/// The units a rate accepts, for error messages.
const RATE_UNITS: &str = "bps, kbps, Mbps, Gbps, bit/s, kbit/s, Mbit/s, Gbit/s, Bps, kBps, MBps, GBps, B/s, kB/s, MB/s, GB/s, Kibps, Mibps, Gibps, KiB/s, MiB/s, GiB/s";

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

/// Bits or bytes per second, from the unit's tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RateBase {
    Bits,
    Bytes,
}

/// Splits a rate unit into its prefix and base: `"Mbps"` -> `("M", Bits)`, `"MB/s"` ->
/// `("M", Bytes)`. `None` if no per-second tail is recognised.
fn split_rate_unit(unit: &str) -> Option<(&str, RateBase)> {
    const TAILS: [(&str, RateBase); 9] = [
        ("bits/s", RateBase::Bits),
        ("bit/s", RateBase::Bits),
        ("bps", RateBase::Bits),
        ("b/s", RateBase::Bits),
        ("bytes/s", RateBase::Bytes),
        ("byte/s", RateBase::Bytes),
        ("Byte/s", RateBase::Bytes),
        ("Bps", RateBase::Bytes),
        ("B/s", RateBase::Bytes),
    ];
    TAILS
        .iter()
        .find_map(|&(tail, base)| unit.strip_suffix(tail).map(|p| (p.trim(), base)))
}

impl FromStr for Rate {
    type Err = ParseQuantityError;
    /// Reads `"10Mbps"`, `"1.5Gbps"`, `"64kbps"`, `"800bps"` (also `Mbit/s`, `Mb/s`), and bytes
    /// per second `"10MB/s"`, `"1.25MBps"` (x 8), with binary prefixes `"1MiB/s"`, `"8Mibps"`.
    /// The value must come to a whole number of bits per second.
    fn from_str(text: &str) -> Result<Rate, ParseQuantityError> {
        let (v, unit) = split_decimal(text, "10Mbps", "rate")?;
        let misleading = |problem: String, fix: String| ParseQuantityError::Misleading {
            text: text.to_string(),
            problem,
            fix,
        };
        let number = text.trim().strip_suffix(unit.as_str()).unwrap_or("").trim();
        let Some((prefix, base)) = split_rate_unit(&unit) else {
            let lower = unit.to_ascii_lowercase();
            if let Some(p) = lower.strip_suffix("bps").map(|p| &unit[..p.len()]) {
                return Err(misleading(
                    format!("`{unit}` does not say bits or bytes"),
                    format!(
                        "write `{number}{p}bps` for bits per second or `{number}{p}Bps` for bytes"
                    ),
                ));
            }
            if parse_size_unit(&unit).is_some() || unit.ends_with('b') {
                return Err(misleading(
                    format!("`{unit}` is an amount of data, not a rate"),
                    format!(
                        "add a time: `{number}{unit}/s`, or write bits per second like `{number}Mbps`"
                    ),
                ));
            }
            return Err(ParseQuantityError::BadUnit {
                text: text.to_string(),
                unit,
                known: RATE_UNITS,
            });
        };
        let Some(factor) = prefix_factor(prefix) else {
            return Err(ParseQuantityError::BadUnit {
                text: text.to_string(),
                unit,
                known: RATE_UNITS,
            });
        };
        let factor = match base {
            RateBase::Bits => factor,
            RateBase::Bytes => factor * 8,
        };
        let too_large = || ParseQuantityError::TooLarge {
            text: text.to_string(),
        };
        match v.times_exact(factor).ok_or_else(too_large)? {
            Ok(bps) => u64::try_from(bps).map(Rate).map_err(|_| too_large()),
            Err(nearest) => Err(ParseQuantityError::NotWhole {
                text: text.to_string(),
                unit: "bit/s",
                fix: format!(
                    "rates are whole bits per second; write `{}bps`",
                    nearest.max(1)
                ),
            }),
        }
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

/// The multiplier of a size unit (`B`, `bytes`, `KB`/`kB`, `MB`, `GB`, `KiB`, `MiB`, `GiB`).
fn parse_size_unit(unit: &str) -> Option<u128> {
    let prefix = unit
        .strip_suffix("bytes")
        .or_else(|| unit.strip_suffix("byte"))
        .or_else(|| unit.strip_suffix('B'))?;
    match prefix {
        // `m` would be milli: only `M` is mega in a size.
        "m" | "g" => None,
        p => prefix_factor(p),
    }
}

/// Reads a byte size written `"64KB"`, `"1500B"`, `"1MiB"`, `"2MB"`. A lower-case `b` means
/// bits and is refused with the byte spelling; a size must come to a whole number of bytes.
pub fn parse_bytes(text: &str) -> Result<Bytes, ParseQuantityError> {
    let (v, unit) = split_decimal(text, "64KB", "size")?;
    let number = text.trim().strip_suffix(unit.as_str()).unwrap_or("").trim();
    let Some(factor) = parse_size_unit(&unit) else {
        let bits_prefix = unit
            .strip_suffix("bits")
            .or_else(|| unit.strip_suffix("bit"))
            .or_else(|| unit.strip_suffix('b'));
        if let Some(prefix) = bits_prefix.filter(|p| prefix_factor(p).is_some()) {
            return Err(ParseQuantityError::Misleading {
                text: text.to_string(),
                problem: format!("`{unit}` is bits, and sizes are counted in bytes"),
                fix: format!("write `{number}{prefix}B` for bytes"),
            });
        }
        if split_rate_unit(&unit).is_some() {
            return Err(ParseQuantityError::Misleading {
                text: text.to_string(),
                problem: format!("`{unit}` is a rate, not an amount of data"),
                fix: "write a size like `64KB`".to_string(),
            });
        }
        return Err(ParseQuantityError::BadUnit {
            text: text.to_string(),
            unit,
            known: "B, KB, MB, GB, KiB, MiB, GiB",
        });
    };
    let too_large = || ParseQuantityError::TooLarge {
        text: text.to_string(),
    };
    match v.times_exact(factor).ok_or_else(too_large)? {
        Ok(b) => u64::try_from(b).map_err(|_| too_large()),
        Err(nearest) => Err(ParseQuantityError::NotWhole {
            text: text.to_string(),
            unit: "bytes",
            fix: format!("write `{nearest}B`"),
        }),
    }
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
    fn transmit_time_by_64_bits_equals_the_128_bit_quotient() {
        // Rates and sizes on both sides of the 64-bit limit of bytes * 8 * 10^9.
        let limit = u64::MAX / (8 * 1_000_000_000);
        let rates = [
            1,
            3,
            7,
            999,
            64_000,
            10_000_000,
            999_999_937,
            1_000_000_000,
            u64::MAX,
        ];
        let sizes = [
            0,
            1,
            40,
            1500,
            65_535,
            limit - 1,
            limit,
            limit + 1,
            u64::MAX,
        ];
        for bps in rates {
            for bytes in sizes {
                let wide = (u128::from(bytes) * 8_000_000_000).div_ceil(u128::from(bps));
                let want = Duration::from_nanos(u64::try_from(wide).unwrap_or(u64::MAX));
                assert_eq!(
                    Rate(bps).transmit_time(bytes),
                    want,
                    "{bytes} B at {bps} bit/s"
                );
            }
        }
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
    fn the_case_of_b_says_bits_or_bytes_in_a_rate() {
        assert_eq!("10Mbps".parse::<Rate>(), Ok(Rate::from_mbps(10)));
        assert_eq!("10Mb/s".parse::<Rate>(), Ok(Rate::from_mbps(10)));
        assert_eq!("10Mbit/s".parse::<Rate>(), Ok(Rate::from_mbps(10)));
        assert_eq!("10MB/s".parse::<Rate>(), Ok(Rate::from_mbps(80)));
        assert_eq!("10MBps".parse::<Rate>(), Ok(Rate::from_mbps(80)));
        assert_eq!("1.25MBps".parse::<Rate>(), Ok(Rate::from_mbps(10)));
        assert_eq!("1kB/s".parse::<Rate>(), Ok(Rate::from_kbps(8)));
        assert_eq!("100Bps".parse::<Rate>(), Ok(Rate::from_bps(800)));
        assert_eq!("10mbps".parse::<Rate>(), Ok(Rate::from_mbps(10)));
        assert_eq!("10 Mbps".parse::<Rate>(), Ok(Rate::from_mbps(10)));
    }

    #[test]
    fn binary_prefixes_in_a_rate_are_powers_of_two() {
        assert_eq!("1MiB/s".parse::<Rate>(), Ok(Rate::from_bps(8 * 1_048_576)));
        assert_eq!("2Mibps".parse::<Rate>(), Ok(Rate::from_bps(2 * 1_048_576)));
        assert_eq!("1KiBps".parse::<Rate>(), Ok(Rate::from_bps(8192)));
    }

    #[test]
    fn a_rate_unit_that_could_be_misread_is_refused_with_the_fix() {
        for (text, fix) in [
            (
                "10MBPS",
                "write `10Mbps` for bits per second or `10MBps` for bytes",
            ),
            ("10MB", "add a time: `10MB/s`"),
            ("10MiB", "add a time: `10MiB/s`"),
            ("10Mb", "add a time: `10Mb/s`"),
        ] {
            let e = text.parse::<Rate>().expect_err(text);
            assert!(
                matches!(e, ParseQuantityError::Misleading { .. }),
                "{text}: {e:?}"
            );
            assert!(e.to_string().contains(fix), "{text}: {e}");
        }
    }

    #[test]
    fn fractional_rates_are_kept_exactly_or_refused() {
        assert_eq!("0.5kbps".parse::<Rate>(), Ok(Rate::from_bps(500)));
        assert_eq!("10.5Mbps".parse::<Rate>(), Ok(Rate::from_bps(10_500_000)));
        assert_eq!(
            "1.000001Mbps".parse::<Rate>(),
            Ok(Rate::from_bps(1_000_001))
        );
        assert_eq!("0.1Mbps".parse::<Rate>(), Ok(Rate::from_kbps(100)));
        let e = "0.5bps".parse::<Rate>().expect_err("half a bit");
        assert_eq!(
            e,
            ParseQuantityError::NotWhole {
                text: "0.5bps".into(),
                unit: "bit/s",
                fix: "rates are whole bits per second; write `1bps`".into(),
            }
        );
        let e = "1.0000001Mbps".parse::<Rate>().expect_err("0.1 bit/s");
        assert!(e.to_string().contains("write `1000000bps`"), "{e}");
        assert!(matches!(
            "99999999999999999999Gbps".parse::<Rate>(),
            Err(ParseQuantityError::TooLarge { .. })
        ));
    }

    #[test]
    fn a_size_in_bits_is_refused_with_the_byte_spelling() {
        for (text, fix) in [
            ("1500b", "write `1500B`"),
            ("150Kb", "write `150KB`"),
            ("2Mb", "write `2MB`"),
        ] {
            let e = parse_bytes(text).expect_err(text);
            assert!(
                matches!(e, ParseQuantityError::Misleading { .. }),
                "{text}: {e:?}"
            );
            assert!(e.to_string().contains(fix), "{text}: {e}");
        }
        assert!(matches!(
            parse_bytes("10MB/s"),
            Err(ParseQuantityError::Misleading { .. })
        ));
        assert_eq!(parse_bytes("1.5KiB"), Ok(1536));
        assert_eq!(parse_bytes("2MiB"), Ok(2 * 1_048_576));
        assert_eq!(parse_bytes("1500bytes"), Ok(1500));
        assert_eq!(parse_bytes("0.5KB"), Ok(500));
        assert!(matches!(
            parse_bytes("0.5B"),
            Err(ParseQuantityError::NotWhole { .. })
        ));
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
