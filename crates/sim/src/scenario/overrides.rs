//! Scenario overrides: a scenario file loaded once and varied key by key.
//!
//! A [`ScenarioSource`] holds a scenario's text and a list of overrides, each a dotted key path
//! (`topology.bottleneck.rate`, `flow[0].count`, `defaults.tcp.cc`) and a typed value
//! ([`OverrideValue`]: a boolean, an integer, a float, a string or an array). [`ScenarioSource::build`]
//! parses the text into its TOML tree, puts each value into the tree at its path (creating
//! tables as needed, never editing text), and reads the result with the same readers and checks
//! as a file. A bad value is reported like a bad value in the file, but located at the override:
//! `x.toml: override `topology.bottleneck.rate = "20Mbs"`: ...; fix: ...`.
//! [`ScenarioSource::render`] gives the scenario as run, as TOML.

use super::error::{ErrorKind, ScenarioError};
use super::loader::{read_document, syntax_error, LoadOptions};
use super::model::Scenario;
use super::source::{Source, Span};
use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A value given to a key by an override, typed as in TOML.
#[derive(Clone, Debug, PartialEq)]
pub enum OverrideValue {
    /// `true` or `false`.
    Bool(bool),
    /// An integer.
    Integer(i64),
    /// A float.
    Float(f64),
    /// A string (quantities with units are strings: `"20Mbps"`).
    String(String),
    /// An array.
    Array(Vec<OverrideValue>),
}

impl OverrideValue {
    /// Reads a value given on the command line: TOML when it is one (`20`, `0.5`, `true`,
    /// `"x"`, `["a", "b"]`), otherwise the text as a string, so that `20Mbps` needs no quotes.
    pub fn parse_cli(text: &str) -> OverrideValue {
        let trimmed = text.trim();
        match DeValue::parse(trimmed) {
            Ok(v) => {
                from_devalue(v.get_ref()).unwrap_or_else(|| OverrideValue::String(text.into()))
            }
            Err(_) => OverrideValue::String(text.to_string()),
        }
    }

    /// The value as TOML text.
    fn to_toml(&self) -> toml::Value {
        match self {
            OverrideValue::Bool(b) => toml::Value::Boolean(*b),
            OverrideValue::Integer(i) => toml::Value::Integer(*i),
            OverrideValue::Float(f) => toml::Value::Float(*f),
            OverrideValue::String(s) => toml::Value::String(s.clone()),
            OverrideValue::Array(items) => {
                toml::Value::Array(items.iter().map(OverrideValue::to_toml).collect())
            }
        }
    }
}

impl fmt::Display for OverrideValue {
    /// The value as written in TOML: `20`, `"20Mbps"`, `[1, 2]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_toml())
    }
}

impl From<bool> for OverrideValue {
    fn from(v: bool) -> Self {
        OverrideValue::Bool(v)
    }
}
impl From<i64> for OverrideValue {
    fn from(v: i64) -> Self {
        OverrideValue::Integer(v)
    }
}
impl From<f64> for OverrideValue {
    fn from(v: f64) -> Self {
        OverrideValue::Float(v)
    }
}
impl From<&str> for OverrideValue {
    fn from(v: &str) -> Self {
        OverrideValue::String(v.to_string())
    }
}
impl From<String> for OverrideValue {
    fn from(v: String) -> Self {
        OverrideValue::String(v)
    }
}

/// A scalar or array TOML value as an [`OverrideValue`] (`None` for tables and date-times).
fn from_devalue(v: &DeValue<'_>) -> Option<OverrideValue> {
    Some(match v {
        DeValue::Boolean(b) => OverrideValue::Bool(*b),
        DeValue::Integer(i) => {
            OverrideValue::Integer(i64::from_str_radix(i.as_str(), i.radix()).ok()?)
        }
        DeValue::Float(f) => OverrideValue::Float(f.as_str().parse().ok()?),
        DeValue::String(s) => OverrideValue::String(s.to_string()),
        DeValue::Array(a) => OverrideValue::Array(
            a.iter()
                .map(|x| from_devalue(x.get_ref()))
                .collect::<Option<Vec<_>>>()?,
        ),
        DeValue::Table(_) | DeValue::Datetime(_) => return None,
    })
}

/// One step of a key path: a key, then zero or more array indices (`flow[0]`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    key: String,
    indices: Vec<usize>,
}

/// One override: a key path and its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    /// The key path as written: `topology.bottleneck.rate`, `flow[0].count`.
    pub key: String,
    /// The value.
    pub value: OverrideValue,
    steps: Vec<Step>,
    /// The value as TOML text, which the tree's value is parsed from.
    toml: String,
}

impl Override {
    /// How the override is named in messages: `` override `flow[0].count = 3` ``.
    fn label(&self) -> String {
        format!("override `{} = {}`", self.key, self.value)
    }
}

/// Splits `flow[0].count` into its steps, or says what is wrong with the path.
fn parse_path(key: &str) -> Result<Vec<Step>, (String, String)> {
    let fix = "write the key as dotted names with optional [index] after a name, e.g. \
               `topology.bottleneck.rate` or `flow[0].count`";
    if key.trim().is_empty() {
        return Err(("the override key is empty".into(), fix.into()));
    }
    let mut steps = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        let bare = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if name.is_empty() || !name.chars().all(bare) {
            return Err((
                format!("override key `{key}` has an empty or invalid name `{name}`"),
                fix.into(),
            ));
        }
        let mut indices = Vec::new();
        while !rest.is_empty() {
            let inner = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(n, after)| n.parse::<usize>().ok().map(|n| (n, after)));
            let Some((n, after)) = inner else {
                return Err((
                    format!("override key `{key}` has a malformed index in `{part}`"),
                    "an index is a whole number from 0 in brackets, e.g. `flow[0]`".into(),
                ));
            };
            indices.push(n);
            rest = after;
        }
        steps.push(Step {
            key: name.to_string(),
            indices,
        });
    }
    Ok(steps)
}

/// A scenario's text plus the overrides to apply when it is read.
#[derive(Clone, Debug)]
pub struct ScenarioSource {
    text: String,
    path: Option<PathBuf>,
    overrides: Vec<Override>,
    /// The memory the scenario may need, in bytes ([`super::limits`]).
    max_memory: u64,
}

impl ScenarioSource {
    /// The scenario file at `path`.
    pub fn from_file(path: &Path) -> Result<ScenarioSource, ScenarioError> {
        let text = super::limits::read_scenario_file(path)?;
        Ok(ScenarioSource::from_text(text, Some(path)))
    }

    /// Scenario `text`; `path`, if given, names it in errors and gives the default name.
    pub fn from_text(text: impl Into<String>, path: Option<&Path>) -> ScenarioSource {
        ScenarioSource {
            text: text.into(),
            path: path.map(Path::to_path_buf),
            overrides: Vec::new(),
            max_memory: super::limits::DEFAULT_MAX_MEMORY,
        }
    }

    /// Sets the memory the scenario may need (default
    /// [`super::limits::DEFAULT_MAX_MEMORY`]); [`ScenarioSource::build`] refuses a scenario
    /// whose estimate is over it.
    pub fn set_max_memory(&mut self, bytes: u64) {
        self.max_memory = bytes;
    }

    /// Sets `key` (a dotted path such as `topology.bottleneck.rate` or `flow[0].count`) to
    /// `value`, replacing an earlier override of the same key. Only the path's syntax is
    /// checked here; the value is checked by [`ScenarioSource::build`], like the file's.
    pub fn set(
        &mut self,
        key: &str,
        value: impl Into<OverrideValue>,
    ) -> Result<&mut ScenarioSource, ScenarioError> {
        let steps = parse_path(key).map_err(|(message, fix)| self.error(message, fix))?;
        let value = value.into();
        let o = Override {
            key: key.to_string(),
            toml: value.to_string(),
            value,
            steps,
        };
        match self.overrides.iter_mut().find(|x| x.key == o.key) {
            Some(old) => *old = o,
            None => self.overrides.push(o),
        }
        Ok(self)
    }

    /// Sets a `KEY=VALUE` override as given on the command line ([`OverrideValue::parse_cli`]).
    pub fn set_cli(&mut self, assignment: &str) -> Result<&mut ScenarioSource, ScenarioError> {
        let Some((key, value)) = assignment.split_once('=') else {
            return Err(self.error(
                format!("override `{assignment}` has no `=`"),
                "write it as KEY=VALUE, e.g. `--set topology.bottleneck.rate=20Mbps`",
            ));
        };
        self.set(key.trim(), OverrideValue::parse_cli(value))
    }

    /// The overrides, in the order first set.
    pub fn overrides(&self) -> &[Override] {
        &self.overrides
    }

    /// The scenario text, before overrides.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The file the text came from.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Reads and validates the scenario with the overrides applied.
    pub fn build(&self) -> Result<Scenario, ScenarioError> {
        let labels: Vec<String> = self.overrides.iter().map(Override::label).collect();
        let src = Source::with_overrides(&self.text, self.path.as_deref(), labels);
        let doc = self.tree(&src)?;
        let root = super::table::Table::root(&src, doc.get_ref());
        read_document(
            &src,
            root,
            self.path.as_deref(),
            LoadOptions::default(),
            self.max_memory,
        )
    }

    /// The scenario as run: the file's keys with the overrides applied, as TOML text. Reading it
    /// back gives the same scenario as [`ScenarioSource::build`] (comments and `{i}` expansion
    /// are kept as written).
    pub fn render(&self) -> Result<String, ScenarioError> {
        let labels: Vec<String> = self.overrides.iter().map(Override::label).collect();
        let src = Source::with_overrides(&self.text, self.path.as_deref(), labels);
        let doc = self.tree(&src)?;
        let mut table = toml::Table::new();
        if let Some(name) = self.path.as_deref().and_then(Path::file_stem) {
            // The name a file gets from its stem would be lost in a file named otherwise.
            table.insert(
                "name".into(),
                toml::Value::String(name.to_string_lossy().into_owned()),
            );
        }
        for (k, v) in doc.get_ref() {
            table.insert(k.get_ref().to_string(), to_toml(v.get_ref()));
        }
        toml::to_string(&table).map_err(|e| {
            self.error(
                format!("cannot write the scenario as TOML: {e}"),
                "report this as a bug in concord",
            )
        })
    }

    /// The TOML tree of the text with the overrides put in.
    fn tree<'s>(&'s self, src: &'s Source<'s>) -> Result<Spanned<DeTable<'s>>, ScenarioError> {
        let mut doc = DeTable::parse(src.text()).map_err(|e| syntax_error(src, &e))?;
        for (k, o) in self.overrides.iter().enumerate() {
            let span = src.override_span(k);
            let parsed = DeValue::parse(&o.toml).map_err(|e| {
                self.error(
                    format!("{}: the value does not read back as TOML: {e}", o.label()),
                    "give a boolean, number, string or array of them",
                )
            })?;
            let value = respan(parsed.into_inner(), &span);
            put(doc.get_mut(), o, value, &span)
                .map_err(|(message, fix)| src.error(&span, ErrorKind::UnknownKey, message, fix))?;
        }
        Ok(doc)
    }

    /// An error about the scenario as a whole (no position).
    fn error(&self, message: impl Into<String>, fix: impl Into<String>) -> ScenarioError {
        let path = self
            .path
            .as_deref()
            .map_or_else(|| "<input>".to_string(), |p| p.display().to_string());
        ScenarioError::new(path, 0, 0, ErrorKind::BadValue, message, fix)
    }
}

/// `v` with every span (its own and its entries') set to `span`, the override's.
fn respan<'i>(v: DeValue<'i>, span: &Span) -> Spanned<DeValue<'i>> {
    let v = match v {
        DeValue::Array(items) => DeValue::Array(
            items
                .into_iter()
                .map(|x| respan(x.into_inner(), span))
                .collect(),
        ),
        DeValue::Table(t) => DeValue::Table(
            t.into_iter()
                .map(|(k, x)| {
                    (
                        Spanned::new(span.clone(), k.into_inner()),
                        respan(x.into_inner(), span),
                    )
                })
                .collect(),
        ),
        other => other,
    };
    Spanned::new(span.clone(), v)
}

/// Puts `value` into `root` at `o`'s path, creating missing tables; the error says what is in
/// the way and how to fix it.
fn put<'i>(
    root: &mut DeTable<'i>,
    o: &Override,
    value: Spanned<DeValue<'i>>,
    span: &Span,
) -> Result<(), (String, String)> {
    let mut table = root;
    let mut walked = String::new();
    let last = o.steps.len().saturating_sub(1);
    for (n, step) in o.steps.iter().enumerate() {
        if !walked.is_empty() {
            walked.push('.');
        }
        walked.push_str(&step.key);
        let key = Spanned::new(span.clone(), Cow::Owned(step.key.clone()));
        if n == last && step.indices.is_empty() {
            table.insert(key, value);
            return Ok(());
        }
        let exists = table.iter().any(|(k, _)| k.get_ref() == step.key.as_str());
        if !exists && !step.indices.is_empty() {
            return Err((
                format!("the scenario has no `{walked}` to index"),
                format!(
                    "write the [[{}]] entries in the file first, or set a key that exists",
                    step.key
                ),
            ));
        }
        let mut slot = table
            .entry(key)
            .or_insert_with(|| Spanned::new(span.clone(), DeValue::Table(DeTable::new())));
        for &i in &step.indices {
            let type_name = super::value::type_name(slot.get_ref());
            let DeValue::Array(items) = slot.get_mut() else {
                return Err((
                    format!("`{walked}` is {type_name}, not an array"),
                    format!("drop the index after `{}`", step.key),
                ));
            };
            let len = items.len();
            let Some(item) = items.get_mut(i) else {
                return Err((
                    format!(
                        "`{walked}` has {len} {}, so there is no index {i}",
                        if len == 1 { "entry" } else { "entries" }
                    ),
                    format!("indices count from 0: use 0 to {}", len.saturating_sub(1)),
                ));
            };
            walked.push_str(&format!("[{i}]"));
            slot = item;
        }
        if n == last {
            *slot = value;
            return Ok(());
        }
        let type_name = super::value::type_name(slot.get_ref());
        let DeValue::Table(t) = slot.get_mut() else {
            return Err((
                format!("`{walked}` is {type_name}, not a table with keys"),
                format!("set `{walked}` itself"),
            ));
        };
        table = t;
    }
    Ok(())
}

/// A TOML tree value as an owned [`toml::Value`], for writing the scenario as run.
fn to_toml(v: &DeValue<'_>) -> toml::Value {
    match v {
        DeValue::String(s) => toml::Value::String(s.to_string()),
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map(toml::Value::Integer)
            .unwrap_or_else(|_| toml::Value::String(i.to_string())),
        DeValue::Float(f) => f
            .as_str()
            .replace('_', "")
            .parse()
            .map(toml::Value::Float)
            .unwrap_or_else(|_| toml::Value::String(f.to_string())),
        DeValue::Boolean(b) => toml::Value::Boolean(*b),
        DeValue::Datetime(d) => toml::Value::Datetime(*d),
        DeValue::Array(a) => toml::Value::Array(a.iter().map(|x| to_toml(x.get_ref())).collect()),
        DeValue::Table(t) => toml::Value::Table(
            t.iter()
                .map(|(k, x)| (k.get_ref().to_string(), to_toml(x.get_ref())))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    const DUMBBELL: &str = r#"
duration = "2s"
seed = 1

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "23ms" }
access = { rate = "1Gbps", delay = "1ms" }

[[flow]]
name = "f{i}"
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2
"#;

    fn source() -> ScenarioSource {
        ScenarioSource::from_text(DUMBBELL, None)
    }

    /// The scenario of `DUMBBELL` with `from` replaced by `to` in its text: what an override
    /// must be equal to.
    fn edited(from: &str, to: &str) -> Scenario {
        assert!(DUMBBELL.contains(from), "the test's text has {from}");
        parse_str(&DUMBBELL.replacen(from, to, 1), None).expect("edited text is valid")
    }

    fn error(s: &ScenarioSource) -> String {
        s.build().expect_err("the override is refused").to_string()
    }

    #[test]
    fn no_override_reads_like_the_file() {
        assert_eq!(
            source().build().expect("valid"),
            parse_str(DUMBBELL, None).expect("valid")
        );
    }

    #[test]
    fn a_string_override_replaces_an_inline_table_key() {
        let mut s = source();
        s.set("topology.bottleneck.rate", "20Mbps").expect("path");
        let sc = s.build().expect("valid");
        assert_eq!(sc, edited("rate = \"10Mbps\"", "rate = \"20Mbps\""));
        assert!(sc
            .links
            .iter()
            .any(|l| l.forward.rate == concord_cc::units::Rate::from_bps(20_000_000)));
    }

    #[test]
    fn an_indexed_override_changes_one_array_entry() {
        let mut s = source();
        s.set("flow[0].count", 1_i64).expect("path");
        let sc = s.build().expect("valid");
        assert_eq!(sc.flows.len(), 1);
        assert_eq!(sc, edited("count = 2", "count = 1"));
    }

    #[test]
    fn a_top_level_integer_override_sets_the_seed() {
        let mut s = source();
        s.set("seed", 7_i64).expect("path");
        assert_eq!(s.build().expect("valid").seed, 7);
        assert_eq!(s.build().expect("valid"), edited("seed = 1", "seed = 7"));
    }

    #[test]
    fn an_override_can_add_a_key_and_its_tables() {
        let mut s = source();
        s.set("defaults.tcp.cc", "westwood").expect("path");
        // The same key written in the file, in a [defaults.tcp] section.
        let written = DUMBBELL.replace(
            "[topology]",
            "[defaults.tcp]\ncc = \"westwood\"\n\n[topology]",
        );
        assert_eq!(
            s.build().expect("valid"),
            parse_str(&written, None).expect("valid")
        );
    }

    #[test]
    fn a_later_set_of_the_same_key_replaces_the_earlier() {
        let mut s = source();
        s.set("seed", 3_i64).expect("path");
        s.set("seed", 4_i64).expect("path");
        assert_eq!(s.overrides().len(), 1);
        assert_eq!(s.build().expect("valid").seed, 4);
    }

    #[test]
    fn a_bad_value_is_refused_by_the_files_own_reader_naming_the_override() {
        let mut s = source();
        s.set("topology.bottleneck.rate", "20Mbs").expect("path");
        let e = error(&s);
        assert!(
            e.starts_with("<input>: override `topology.bottleneck.rate = \"20Mbs\"`: "),
            "{e}"
        );
        assert!(e.contains("; fix: "), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused() {
        let mut s = source();
        s.set("flow[0].count", "two").expect("path");
        let e = error(&s);
        assert!(
            e.starts_with("<input>: override `flow[0].count = \"two\"`: "),
            "{e}"
        );
        assert!(e.contains("must be an integer"), "{e}");
    }

    #[test]
    fn an_unknown_key_gets_a_suggestion() {
        let mut s = source();
        s.set("topology.bottleneck.rat", "20Mbps").expect("path");
        let e = error(&s);
        assert!(e.contains("unknown key `rat`"), "{e}");
        assert!(e.contains("did you mean `rate`?"), "{e}");
        assert!(
            e.starts_with("<input>: override `topology.bottleneck.rat"),
            "{e}"
        );
    }

    #[test]
    fn an_index_past_the_end_names_the_entries() {
        let mut s = source();
        s.set("flow[3].count", 1_i64).expect("path");
        assert_eq!(
            error(&s),
            "<input>: override `flow[3].count = 1`: `flow` has 1 entry, so there \
             is no index 3; fix: indices count from 0: use 0 to 0"
        );
    }

    #[test]
    fn a_path_through_a_value_is_refused() {
        let mut s = source();
        s.set("duration.x", "1s").expect("path");
        let e = error(&s);
        assert!(
            e.contains("`duration` is a string, not a table with keys; fix: set `duration` itself"),
            "{e}"
        );
    }

    #[test]
    fn malformed_paths_are_refused_when_set() {
        for bad in ["", "a..b", "flow[x].count", "flow[0", "a b"] {
            let e = source()
                .set(bad, 1_i64)
                .map(|_| ())
                .expect_err(bad)
                .to_string();
            assert!(e.starts_with("<input>: "), "{bad}: {e}");
            assert!(e.contains("; fix: "), "{bad}: {e}");
        }
    }

    #[test]
    fn command_line_values_are_typed_as_toml_or_else_strings() {
        assert_eq!(OverrideValue::parse_cli("20"), OverrideValue::Integer(20));
        assert_eq!(OverrideValue::parse_cli("0.5"), OverrideValue::Float(0.5));
        assert_eq!(OverrideValue::parse_cli("true"), OverrideValue::Bool(true));
        assert_eq!(
            OverrideValue::parse_cli("20Mbps"),
            OverrideValue::String("20Mbps".into())
        );
        assert_eq!(
            OverrideValue::parse_cli("\"20\""),
            OverrideValue::String("20".into())
        );
        assert_eq!(
            OverrideValue::parse_cli("[\"a\", 1]"),
            OverrideValue::Array(vec![
                OverrideValue::String("a".into()),
                OverrideValue::Integer(1)
            ])
        );
        let mut s = source();
        s.set_cli("topology.bottleneck.delay=10ms").expect("path");
        assert_eq!(s.build().expect("valid"), edited("\"23ms\"", "\"10ms\""));
        assert!(source().set_cli("seed").is_err());
    }

    #[test]
    fn the_rendered_scenario_reads_back_as_the_same_scenario() {
        let mut s = source();
        s.set("topology.bottleneck.rate", "20Mbps").expect("path");
        s.set("flow[0].count", 1_i64).expect("path");
        let text = s.render().expect("renders");
        assert!(text.contains("20Mbps"), "{text}");
        assert_eq!(
            parse_str(&text, None).expect("valid"),
            s.build().expect("valid")
        );
    }
}
