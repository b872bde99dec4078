//! The error a scenario file is rejected with: where, what, and how to fix it.

use std::fmt;

/// What sort of mistake a [`ScenarioError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The file could not be read.
    Io,
    /// The text is not valid TOML.
    Syntax,
    /// A key the scenario format does not know.
    UnknownKey,
    /// A required key is absent.
    MissingKey,
    /// A value has the wrong TOML type (a number where a string belongs, ...).
    WrongType,
    /// A value is malformed or out of range: a bad unit, a negative or zero quantity, an unknown
    /// kind.
    BadValue,
    /// A name refers to nothing: a node, flow or channel that does not exist.
    UnknownName,
    /// Two things share a name, or two links join the same pair of nodes.
    Duplicate,
    /// Values that are fine alone do not fit together: stop before start, no path between a
    /// flow's hosts, a flow between routers.
    Inconsistent,
}

/// Why a scenario was rejected.
///
/// It displays as one line, `{path}:{line}:{column}: {message}; fix: {fix}`, for example
/// `scenarios/x.toml:12:1: unknown key `rat` in [[link]] #2; fix: did you mean `rate`?`.
/// An error about the file as a whole (it cannot be read) has no position and displays as
/// `{path}: {message}; fix: {fix}`. Text read from memory is named `<input>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// The file, or `<input>` for text that did not come from a file.
    pub path: String,
    /// 1-based line of the offending key or value; 0 for errors about the whole file.
    pub line: usize,
    /// 1-based column (in characters) of the offending key or value; 0 with `line`.
    pub column: usize,
    /// The sort of mistake.
    pub kind: ErrorKind,
    /// What is wrong, in one line.
    pub message: String,
    /// How to put it right, in one line.
    pub fix: String,
}

impl ScenarioError {
    /// An error at `line`:`column` of `path`. Line breaks and other control characters in the
    /// texts are escaped so that the error always displays on one line.
    pub fn new(
        path: impl Into<String>,
        line: usize,
        column: usize,
        kind: ErrorKind,
        message: impl Into<String>,
        fix: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            path: one_line(&path.into()),
            line,
            column,
            kind,
            message: one_line(&message.into()),
            fix: one_line(&fix.into()),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}; fix: {}", self.path, self.message, self.fix)
        } else {
            write!(
                f,
                "{}:{}:{}: {}; fix: {}",
                self.path, self.line, self.column, self.message, self.fix
            )
        }
    }
}

impl std::error::Error for ScenarioError {}

/// `text` with control characters escaped (`\n`, `\t`, `\u{1b}`).
fn one_line(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn displays_path_line_column_message_and_fix_on_one_line() {
        let e = ScenarioError::new(
            "x.toml",
            12,
            8,
            ErrorKind::UnknownKey,
            "unknown key `rat`",
            "did you mean\n`rate`?",
        );
        assert_eq!(
            e.to_string(),
            "x.toml:12:8: unknown key `rat`; fix: did you mean\\n`rate`?"
        );
    }

    #[test]
    fn a_file_level_error_has_no_position() {
        let e = ScenarioError::new(
            "x.toml",
            0,
            0,
            ErrorKind::Io,
            "cannot read it",
            "check the path",
        );
        assert_eq!(e.to_string(), "x.toml: cannot read it; fix: check the path");
    }
}
