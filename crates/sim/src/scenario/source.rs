//! The text being loaded, with what it takes to turn a byte span into a line and column.

use super::error::{ErrorKind, ScenarioError};
use std::ops::Range;
use std::path::Path;

/// A byte range of the source text.
pub(crate) type Span = Range<usize>;

/// The scenario text and the name it is reported under.
pub(crate) struct Source<'t> {
    path: String,
    text: &'t str,
    /// Byte offset of the start of each line.
    line_starts: Vec<usize>,
    /// How each override is named in errors (`` override `flow[0].count = 3` ``); override `k`
    /// has the one-byte span [`Source::override_span`]`(k)`, past the end of the text.
    overrides: Vec<String>,
}

impl<'t> Source<'t> {
    /// `text`, reported as `path` (or `<input>`).
    pub(crate) fn new(text: &'t str, path: Option<&Path>) -> Source<'t> {
        let path = path.map_or_else(|| "<input>".to_string(), |p| p.display().to_string());
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Source {
            path,
            text,
            line_starts,
            overrides: Vec::new(),
        }
    }

    /// `text` with overrides named by `labels`, whose values are located at
    /// [`Source::override_span`] so that errors about them name the override.
    pub(crate) fn with_overrides(
        text: &'t str,
        path: Option<&Path>,
        labels: Vec<String>,
    ) -> Source<'t> {
        Source {
            overrides: labels,
            ..Source::new(text, path)
        }
    }

    /// The span standing for override `k`: one byte, past the end of the text.
    pub(crate) fn override_span(&self, k: usize) -> Span {
        let start = self.text.len() + 1 + k;
        start..start + 1
    }

    /// The text.
    pub(crate) fn text(&self) -> &'t str {
        self.text
    }

    /// The 1-based line and column (in characters) of byte `offset`.
    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let line = self
            .line_starts
            .partition_point(|&start| start <= offset)
            .max(1);
        let start = self.line_starts.get(line - 1).copied().unwrap_or(0);
        let column = match self.text.get(start..offset) {
            Some(prefix) => prefix.chars().count(),
            None => offset - start,
        };
        (line, column + 1)
    }

    /// The 1-based line of the start of `span`.
    pub(crate) fn line(&self, span: &Span) -> usize {
        self.position(span.start).0
    }

    /// An error pointing at the start of `span`.
    pub(crate) fn error(
        &self,
        span: &Span,
        kind: ErrorKind,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ScenarioError {
        if let Some(k) = span.start.checked_sub(self.text.len() + 1) {
            if let Some(label) = self.overrides.get(k) {
                let message = format!("{label}: {}", message.into());
                return ScenarioError::new(self.path.clone(), 0, 0, kind, message, fix);
            }
        }
        let (line, column) = self.position(span.start);
        ScenarioError::new(self.path.clone(), line, column, kind, message, fix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_based_and_count_characters() {
        let s = Source::new("a = 1\nµ = \"x\"\n", None);
        assert_eq!(s.position(0), (1, 1));
        assert_eq!(s.position(4), (1, 5));
        assert_eq!(s.position(6), (2, 1));
        // 'µ' is two bytes but one column.
        assert_eq!(s.position(8), (2, 2));
        assert_eq!(s.position(1000), (3, 1));
    }
}
