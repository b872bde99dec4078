//! Why an ECA component refused a configuration or an input value.
//!
//! A refused configuration builds nothing; a refused input changes nothing (DESIGN.md, rule 6).

/// Why the configuration of an ECA component is impossible.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A parameter that must be a finite number above zero is not.
    #[error("{name} is {value}; it must be a finite number above 0")]
    NotPositive {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// A parameter lies outside its allowed closed range.
    #[error("{name} is {value}; it must lie in [{min}, {max}]")]
    OutOfRange {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
        /// The smallest allowed value.
        min: f64,
        /// The largest allowed value.
        max: f64,
    },
    /// A count, size, rate or span that must be above zero is zero.
    #[error("{name} is 0; it must be above 0")]
    Zero {
        /// The parameter's name.
        name: &'static str,
    },
    /// A lower bound lies above its upper bound.
    #[error("{low} ({low_value}) is above {high} ({high_value}); swap them")]
    Inverted {
        /// The lower bound's name.
        low: &'static str,
        /// The lower bound's value.
        low_value: f64,
        /// The upper bound's name.
        high: &'static str,
        /// The upper bound's value.
        high_value: f64,
    },
}

/// A load or price that cannot be used: NaN, infinite, zero or negative. A zero LOAD field means
/// that no ECA router stamped the packet, so it carries no information either.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error("load {0} is not a finite number above 0")]
pub struct InvalidLoad(pub f64);

/// Checks that `value` is finite and above zero.
pub(crate) fn positive(name: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() && value > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::NotPositive { name, value })
    }
}

/// Checks that `value` lies in `[min, max]` (NaN never does).
pub(crate) fn in_range(
    name: &'static str,
    value: f64,
    min: f64,
    max: f64,
) -> Result<(), ConfigError> {
    if value >= min && value <= max {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            name,
            value,
            min,
            max,
        })
    }
}

/// A load usable as a price: finite and above zero.
pub(crate) fn valid_load(load: f64) -> Result<f64, InvalidLoad> {
    if load.is_finite() && load > 0.0 {
        Ok(load)
    } else {
        Err(InvalidLoad(load))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_refuse_nan_zero_and_negative_values() {
        assert!(positive("x", 1.0).is_ok());
        assert!(positive("x", 0.0).is_err());
        assert!(positive("x", f64::NAN).is_err());
        assert!(positive("x", f64::INFINITY).is_err());
        assert!(in_range("x", 0.5, 0.0, 1.0).is_ok());
        assert!(in_range("x", f64::NAN, 0.0, 1.0).is_err());
        assert_eq!(valid_load(-1.0), Err(InvalidLoad(-1.0)));
        assert_eq!(valid_load(2.0), Ok(2.0));
    }
}
