//! A table of a scenario file, read key by key: unknown keys are refused with a suggestion,
//! missing required keys are reported at the table's header.

use super::error::{ErrorKind, ScenarioError};
use super::loader::ROOT_KEYS;
use super::source::{Source, Span};
use super::suggest;
use super::value::{Field, Value};
use toml::de::{DeTable, DeValue};

/// A TOML table and how it is named in messages (`[[link]] #2`, `` `queue` of [[link]] #1 ``).
#[derive(Clone)]
pub(crate) struct Table<'a> {
    src: &'a Source<'a>,
    map: &'a DeTable<'a>,
    span: Span,
    what: String,
}

impl<'a> Table<'a> {
    /// The document's top-level table.
    pub(crate) fn root(src: &'a Source<'a>, map: &'a DeTable<'a>) -> Table<'a> {
        Table {
            src,
            map,
            span: 0..0,
            what: "the top level".to_string(),
        }
    }

    /// `field`'s value as a table named `what`.
    pub(crate) fn of(
        field: &Field<'a>,
        what: impl Into<String>,
    ) -> Result<Table<'a>, ScenarioError> {
        match field.value.get_ref() {
            DeValue::Table(map) => Ok(Table {
                src: field.src,
                map,
                span: field.span(),
                what: what.into(),
            }),
            _ => Err(field.wrong_type("a table", "{ ... }")),
        }
    }

    /// `field`'s value as an array of tables, the `k`-th named `[[key]] #k`.
    pub(crate) fn array_of(field: &Field<'a>) -> Result<Vec<Table<'a>>, ScenarioError> {
        let section = &field.key;
        let not_array = || {
            field.error(
                ErrorKind::WrongType,
                format!(
                    "`{section}` must be an array of tables, not {}",
                    super::value::type_name(field.value.get_ref())
                ),
                format!("write each entry as its own [[{section}]] section"),
            )
        };
        let DeValue::Array(items) = field.value.get_ref() else {
            return Err(not_array());
        };
        let mut tables = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let DeValue::Table(map) = item.get_ref() else {
                return Err(field.src.error(
                    &item.span(),
                    ErrorKind::WrongType,
                    format!(
                        "entry {} of `{section}` must be a table, not {}",
                        i + 1,
                        super::value::type_name(item.get_ref())
                    ),
                    format!("write each entry as its own [[{section}]] section"),
                ));
            };
            tables.push(Table {
                src: field.src,
                map,
                span: item.span(),
                what: format!("[[{section}]] #{}", i + 1),
            });
        }
        Ok(tables)
    }

    /// How the table is named in messages.
    pub(crate) fn what(&self) -> &str {
        &self.what
    }

    /// Where the table starts (its header, or its inline braces).
    pub(crate) fn span(&self) -> Span {
        self.span.clone()
    }

    /// The text the table was read from.
    pub(crate) fn src(&self) -> &'a Source<'a> {
        self.src
    }

    /// An error pointing at the table's header.
    pub(crate) fn error(
        &self,
        kind: ErrorKind,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ScenarioError {
        self.src.error(&self.span, kind, message, fix)
    }

    /// Refuses the first key (in file order) that is not in `keys`.
    pub(crate) fn allow(self, keys: &[&str]) -> Result<Table<'a>, ScenarioError> {
        self.allow_explained(keys, |_| None)
    }

    /// Refuses the first key (in file order) that is not in `keys`; `explain` may give a better
    /// message and fix for a key that is valid elsewhere (a `bytes` on a CBR flow).
    pub(crate) fn allow_explained(
        self,
        keys: &[&str],
        explain: impl Fn(&str) -> Option<(String, String)>,
    ) -> Result<Table<'a>, ScenarioError> {
        let unknown = self
            .map
            .iter()
            .filter(|(k, _)| !keys.contains(&k.get_ref().as_ref()))
            .min_by_key(|(k, _)| k.span().start);
        let Some((key, _)) = unknown else {
            return Ok(self);
        };
        let name: &str = key.get_ref().as_ref();
        let (message, fix) = explain(name).unwrap_or_else(|| {
            let top_level = self.span != (0..0) && ROOT_KEYS.contains(&name);
            let fix = match suggest::closest(name, keys.iter().copied()) {
                Some(c) => format!("did you mean `{c}`?"),
                None if top_level => format!(
                    "`{name}` is a top-level key, and keys after a [section] header belong to that section; \
                     move it above the first header"
                ),
                None => format!("the keys of {} are: {}", self.what, keys.join(", ")),
            };
            (format!("unknown key `{name}` in {}", self.what), fix)
        });
        Err(self
            .src
            .error(&key.span(), ErrorKind::UnknownKey, message, fix))
    }

    /// The value under `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<Field<'a>> {
        self.entry(key).map(|v| Field::new(self.src, key, v))
    }

    /// True if `key` is present.
    pub(crate) fn has(&self, key: &str) -> bool {
        self.entry(key).is_some()
    }

    /// The value under `key`, or an error at the table's header saying to add
    /// `key = example`.
    pub(crate) fn require(&self, key: &str, example: &str) -> Result<Field<'a>, ScenarioError> {
        self.get(key).ok_or_else(|| {
            self.error(
                ErrorKind::MissingKey,
                format!("{} has no `{key}`, which is required", self.what),
                format!("add `{key} = {example}`"),
            )
        })
    }

    /// Where `key` sits one level down, in a section of this table (`[name]` or `[[name]]`),
    /// with that section's name: for a key written under the wrong header.
    pub(crate) fn find_below(&self, key: &str) -> Option<(Span, String)> {
        let mut found: Option<(Span, String)> = None;
        for (section, value) in self.map.iter() {
            let tables: Vec<(&DeTable<'a>, String)> = match value.get_ref() {
                DeValue::Table(t) => vec![(t, format!("[{}]", section.get_ref()))],
                DeValue::Array(items) => items
                    .iter()
                    .enumerate()
                    .filter_map(|(i, item)| match item.get_ref() {
                        DeValue::Table(t) => {
                            Some((t, format!("[[{}]] #{}", section.get_ref(), i + 1)))
                        }
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            for (t, name) in tables {
                if let Some((k, _)) = t.iter().find(|(k, _)| k.get_ref().as_ref() == key) {
                    if found.as_ref().is_none_or(|(s, _)| k.span().start < s.start) {
                        found = Some((k.span(), name));
                    }
                }
            }
        }
        found
    }

    fn entry(&self, key: &str) -> Option<&'a Value<'a>> {
        self.map
            .iter()
            .find(|(k, _)| k.get_ref().as_ref() == key)
            .map(|(_, v)| v)
    }
}
