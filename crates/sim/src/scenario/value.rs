//! One value of a scenario file, with its key and position, and the readers that turn it into a
//! string, a number or a quantity in its unit type, or into an error pointing at it.

use super::error::{ErrorKind, ScenarioError};
use super::source::{Source, Span};
use super::suggest;
use concord_cc::time::Duration;
use concord_cc::units::{
    parse_bytes, parse_duration, parse_fraction, Bytes, ParseQuantityError, Rate,
};
use toml::de::DeValue;
use toml::Spanned;

/// A TOML value with its byte span.
pub(crate) type Value<'a> = Spanned<DeValue<'a>>;

/// A value found under a key (or at a position of an array).
#[derive(Clone)]
pub(crate) struct Field<'a> {
    /// The text it was read from.
    pub(crate) src: &'a Source<'a>,
    /// The key it is stored under.
    pub(crate) key: String,
    /// For an array entry, its 1-based position.
    pub(crate) entry: Option<usize>,
    /// The value.
    pub(crate) value: &'a Value<'a>,
}

/// The kinds of written quantity, for error messages.
#[derive(Clone, Copy)]
enum Quantity {
    Rate,
    Duration,
    Size,
    Fraction,
}

impl Quantity {
    fn noun(self) -> &'static str {
        match self {
            Quantity::Rate => "rate",
            Quantity::Duration => "duration",
            Quantity::Size => "size",
            Quantity::Fraction => "fraction",
        }
    }
    fn example(self) -> &'static str {
        match self {
            Quantity::Rate => "10Mbps",
            Quantity::Duration => "25ms",
            Quantity::Size => "64KB",
            Quantity::Fraction => "1%",
        }
    }
    /// The unit added to a bare number in a suggestion.
    fn usual_unit(self) -> &'static str {
        match self {
            Quantity::Rate => "Mbps",
            Quantity::Duration => "ms",
            Quantity::Size => "B",
            Quantity::Fraction => "%",
        }
    }
}

/// `a string`, `an integer`, ...: how a TOML value's type reads in a sentence.
pub(crate) fn type_name(v: &DeValue<'_>) -> &'static str {
    match v {
        DeValue::String(_) => "a string",
        DeValue::Integer(_) => "an integer",
        DeValue::Float(_) => "a float",
        DeValue::Boolean(_) => "a boolean",
        DeValue::Datetime(_) => "a date-time",
        DeValue::Array(_) => "an array",
        DeValue::Table(_) => "a table",
    }
}

impl<'a> Field<'a> {
    /// The value stored under `key`.
    pub(crate) fn new(src: &'a Source<'a>, key: &str, value: &'a Value<'a>) -> Field<'a> {
        Field {
            src,
            key: key.to_string(),
            entry: None,
            value,
        }
    }

    /// Where the value is.
    pub(crate) fn span(&self) -> Span {
        self.value.span()
    }

    /// The 1-based line of the value.
    pub(crate) fn line(&self) -> usize {
        self.src.line(&self.span())
    }

    /// How the value is named in messages: `` `rate` `` or `` `access_delays` entry 2 ``.
    pub(crate) fn label(&self) -> String {
        match self.entry {
            None => format!("`{}`", self.key),
            Some(i) => format!("`{}` entry {i}", self.key),
        }
    }

    /// How to write `value` in its place: `rate = "10Mbps"`, or `"10Mbps"` for an array entry.
    pub(crate) fn example(&self, value: &str) -> String {
        match self.entry {
            None => format!("`{} = {value}`", self.key),
            Some(_) => format!("`{value}`"),
        }
    }

    /// An error pointing at the value.
    pub(crate) fn error(
        &self,
        kind: ErrorKind,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ScenarioError {
        self.src.error(&self.span(), kind, message, fix)
    }

    /// The error for a value of the wrong TOML type; `expected` is e.g. `a string`, `example` a
    /// correct value as written in TOML.
    pub(crate) fn wrong_type(&self, expected: &str, example: &str) -> ScenarioError {
        self.error(
            ErrorKind::WrongType,
            format!(
                "{} must be {expected}, not {}",
                self.label(),
                type_name(self.value.get_ref())
            ),
            format!("write it like {}", self.example(example)),
        )
    }

    /// The value as a string.
    pub(crate) fn str(&self) -> Result<&'a str, ScenarioError> {
        match self.value.get_ref() {
            DeValue::String(s) => Ok(s.as_ref()),
            _ => Err(self.wrong_type("a string", "\"...\"")),
        }
    }

    /// The value as a non-empty name.
    pub(crate) fn name(&self) -> Result<&'a str, ScenarioError> {
        let s = self.str()?;
        if s.trim().is_empty() {
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} is empty", self.label()),
                format!("give a name, e.g. {}", self.example("\"r1\"")),
            ));
        }
        Ok(s)
    }

    /// The value as a boolean.
    pub(crate) fn boolean(&self) -> Result<bool, ScenarioError> {
        match self.value.get_ref() {
            DeValue::Boolean(b) => Ok(*b),
            DeValue::String(s) if s == "true" || s == "false" => Err(self.error(
                ErrorKind::WrongType,
                format!("{} must be a boolean, not the string \"{s}\"", self.label()),
                format!("drop the quotes: {}", self.example(s)),
            )),
            _ => Err(self.wrong_type("a boolean", "true")),
        }
    }

    /// The value as an integer in `min..=max`.
    pub(crate) fn integer(&self, min: i64, max: i64) -> Result<i64, ScenarioError> {
        let range = if max == i64::MAX {
            format!("at least {min}")
        } else {
            format!("from {min} to {max}")
        };
        let n = match self.value.get_ref() {
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => n,
                Err(_) => {
                    return Err(self.error(
                        ErrorKind::BadValue,
                        format!("{} = {} is too large", self.label(), i.as_str()),
                        format!("give an integer {range}"),
                    ))
                }
            },
            DeValue::String(s) if s.trim().parse::<i64>().is_ok() => {
                return Err(self.error(
                    ErrorKind::WrongType,
                    format!(
                        "{} must be an integer, not the string \"{s}\"",
                        self.label()
                    ),
                    format!("drop the quotes: {}", self.example(s.trim())),
                ))
            }
            _ => return Err(self.wrong_type("an integer", &min.max(1).to_string())),
        };
        if n < min || n > max {
            let what = if n < 0 {
                "negative"
            } else if n < min {
                "too small"
            } else {
                "too large"
            };
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} = {n} is {what}", self.label()),
                format!("give an integer {range}"),
            ));
        }
        Ok(n)
    }

    /// The value as a finite number (an integer or a float).
    pub(crate) fn number(&self) -> Result<f64, ScenarioError> {
        let n = match self.value.get_ref() {
            DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
                .ok()
                .map(|n| n as f64),
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            _ => return Err(self.wrong_type("a number", "0.1")),
        };
        match n {
            Some(n) if n.is_finite() => Ok(n),
            _ => Err(self.error(
                ErrorKind::BadValue,
                format!("{} is not a finite number", self.label()),
                format!("give an ordinary number, e.g. {}", self.example("0.1")),
            )),
        }
    }

    /// The value as a rate above zero, written like `"10Mbps"`.
    pub(crate) fn rate(&self) -> Result<Rate, ScenarioError> {
        let text = self.quantity_text(Quantity::Rate)?;
        let rate: Rate = text
            .parse()
            .map_err(|e| self.quantity_error(e, Quantity::Rate))?;
        if rate == Rate::ZERO {
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} = \"{text}\" is zero", self.label()),
                format!(
                    "a rate must be above zero, e.g. {}",
                    self.example("\"10Mbps\"")
                ),
            ));
        }
        Ok(rate)
    }

    /// The value as a duration (zero allowed), written like `"25ms"`.
    pub(crate) fn duration(&self) -> Result<Duration, ScenarioError> {
        let text = self.quantity_text(Quantity::Duration)?;
        parse_duration(text).map_err(|e| self.quantity_error(e, Quantity::Duration))
    }

    /// The value as a duration above zero.
    pub(crate) fn positive_duration(&self) -> Result<Duration, ScenarioError> {
        let d = self.duration()?;
        if d.is_zero() {
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} is zero", self.label()),
                format!(
                    "give a duration above zero, e.g. {}",
                    self.example("\"25ms\"")
                ),
            ));
        }
        Ok(d)
    }

    /// The value as a size in bytes: an integer count of bytes, or a string like `"64KB"`.
    pub(crate) fn size(&self) -> Result<Bytes, ScenarioError> {
        if let DeValue::Integer(i) = self.value.get_ref() {
            if i.as_str().starts_with('-') {
                return Err(self.error(
                    ErrorKind::BadValue,
                    format!("{} = {} is negative", self.label(), i.as_str()),
                    format!(
                        "a size cannot be negative; write e.g. {}",
                        self.example("\"1500B\"")
                    ),
                ));
            }
            let n = self.integer(0, i64::MAX)?;
            return Ok(u64::try_from(n).unwrap_or(0));
        }
        let text = match self.value.get_ref() {
            DeValue::String(s) => s.as_ref(),
            _ => return Err(self.wrong_type("a size", "\"1500B\"")),
        };
        parse_bytes(text).map_err(|e| self.quantity_error(e, Quantity::Size))
    }

    /// The value as a size in `min..=max` bytes.
    pub(crate) fn size_in(&self, min: Bytes, max: Bytes) -> Result<Bytes, ScenarioError> {
        let b = self.size()?;
        if b < min || b > max {
            let range = if max == u64::MAX {
                format!("at least {min} bytes")
            } else {
                format!("{min} to {max} bytes")
            };
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} is {b} bytes; it must be {range}", self.label()),
                format!("give a size of {range}"),
            ));
        }
        Ok(b)
    }

    /// The value as a fraction in [0, 1]: a number, or a string like `"1%"` or `"0.01"`.
    pub(crate) fn fraction(&self) -> Result<f64, ScenarioError> {
        let (f, shown) = match self.value.get_ref() {
            DeValue::String(s) => {
                let f =
                    parse_fraction(s).map_err(|e| self.quantity_error(e, Quantity::Fraction))?;
                (f, format!("\"{s}\""))
            }
            DeValue::Integer(_) | DeValue::Float(_) => {
                let f = self.number()?;
                (f, f.to_string())
            }
            _ => return Err(self.wrong_type("a fraction", "\"1%\"")),
        };
        if f < 0.0 {
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} = {shown} is negative", self.label()),
                format!(
                    "a probability lies in [0, 1], e.g. {} or 0.01",
                    self.example("\"1%\"")
                ),
            ));
        }
        if f > 1.0 {
            return Err(self.error(
                ErrorKind::BadValue,
                format!("{} = {shown} is above 1 (100%)", self.label()),
                format!(
                    "a probability lies in [0, 1], e.g. {} or 0.01",
                    self.example("\"1%\"")
                ),
            ));
        }
        Ok(f)
    }

    /// The entries of an array value.
    pub(crate) fn entries(&self) -> Result<Vec<Field<'a>>, ScenarioError> {
        match self.value.get_ref() {
            DeValue::Array(items) => Ok(items
                .iter()
                .enumerate()
                .map(|(i, value)| Field {
                    src: self.src,
                    key: self.key.clone(),
                    entry: Some(i + 1),
                    value,
                })
                .collect()),
            _ => Err(self.wrong_type("an array", "[\"...\"]")),
        }
    }

    /// The text of a quantity, or the error for a value that is not a string.
    fn quantity_text(&self, q: Quantity) -> Result<&'a str, ScenarioError> {
        match self.value.get_ref() {
            DeValue::String(s) => Ok(s.as_ref()),
            DeValue::Integer(i) => {
                let n = i.as_str();
                Err(self.error(
                    ErrorKind::WrongType,
                    format!("{} = {n} has no unit", self.label()),
                    format!(
                        "write the {} as a string with a unit, e.g. {}",
                        q.noun(),
                        self.example(&format!("\"{n}{}\"", q.usual_unit()))
                    ),
                ))
            }
            DeValue::Float(f) => {
                let n = f.as_str();
                Err(self.error(
                    ErrorKind::WrongType,
                    format!("{} = {n} has no unit", self.label()),
                    format!(
                        "write the {} as a string with a unit, e.g. {}",
                        q.noun(),
                        self.example(&format!("\"{n}{}\"", q.usual_unit()))
                    ),
                ))
            }
            _ => Err(self.wrong_type(&format!("a {}", q.noun()), &format!("\"{}\"", q.example()))),
        }
    }

    /// A quantity parser's complaint as an error at this value.
    fn quantity_error(&self, e: ParseQuantityError, q: Quantity) -> ScenarioError {
        let label = self.label();
        let example = self.example(&format!("\"{}\"", q.example()));
        match e {
            ParseQuantityError::NoNumber { text, .. } => self.error(
                ErrorKind::BadValue,
                format!("{label} = \"{text}\" does not start with a number"),
                format!("write a number and a unit, e.g. {example}"),
            ),
            ParseQuantityError::Negative { text, .. } => self.error(
                ErrorKind::BadValue,
                format!("{label} = \"{text}\" is negative"),
                format!("a {} cannot be negative; write e.g. {example}", q.noun()),
            ),
            ParseQuantityError::BadUnit { text, unit, known } if unit.is_empty() => self.error(
                ErrorKind::BadValue,
                format!("{label} = \"{text}\" has no unit"),
                format!(
                    "add one of {known}, e.g. {}",
                    self.example(&format!("\"{}{}\"", text.trim(), q.usual_unit()))
                ),
            ),
            ParseQuantityError::BadUnit { text, unit, known } => self.error(
                ErrorKind::BadValue,
                format!("{label} = \"{text}\" has unknown unit `{unit}`"),
                suggest::did_you_mean(
                    &unit,
                    known.split(", "),
                    &format!("a {} takes one of {known}", q.noun()),
                ),
            ),
            ParseQuantityError::Misleading { text, problem, fix } => self.error(
                ErrorKind::BadValue,
                format!("{label} = \"{text}\": {problem}"),
                fix,
            ),
            ParseQuantityError::NotWhole { text, unit, fix } => self.error(
                ErrorKind::BadValue,
                format!("{label} = \"{text}\" is not a whole number of {unit}"),
                fix,
            ),
            ParseQuantityError::TooLarge { text } => match q {
                Quantity::Fraction => self.error(
                    ErrorKind::BadValue,
                    format!("{label} = \"{text}\" is above 1 (100%)"),
                    format!("a probability lies in [0, 1], e.g. {example} or 0.01"),
                ),
                _ => self.error(
                    ErrorKind::BadValue,
                    format!("{label} = \"{text}\" is too large"),
                    format!("give a smaller {}, e.g. {example}", q.noun()),
                ),
            },
        }
    }
}
