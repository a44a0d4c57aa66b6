//! Located input errors: which file (or command-line argument), which line and column, which key, what is wrong
//! and what would be valid.

use std::fmt;
use std::ops::Range;

/// A 1-based line and column (columns count characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
}

impl LineCol {
    /// The position of byte `offset` in `text` (clamped to the end of the text).
    pub fn of_offset(text: &str, offset: usize) -> LineCol {
        let offset = offset.min(text.len());
        let before = &text[..text.floor_char_boundary(offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        LineCol { line, column: before[line_start..].chars().count() + 1 }
    }
}

/// Where a setting came from.
#[derive(Clone, Debug, PartialEq)]
pub enum Origin {
    /// A position in the scenario file.
    File(LineCol),
    /// A `--set KEY=VALUE` argument, verbatim.
    CommandLine(String),
    /// Not written anywhere: the parameter's default.
    Default,
}

/// Bad input: a scenario file or command-line value that cannot be used. Always exit code 2.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct InputError {
    /// The scenario file's path as the user gave it.
    pub file: String,
    pub origin: Origin,
    /// The dotted key the problem concerns (`client.strategy`), when there is one.
    pub key: Option<String>,
    /// What is wrong, and what would be valid.
    pub message: String,
}

impl InputError {
    pub fn new(file: &str, origin: Origin, key: Option<String>, message: impl Into<String>) -> Self {
        InputError { file: file.to_owned(), origin, key, message: message.into() }
    }
}

impl fmt::Display for InputError {
    /// `scenarios/x.toml:7:12: client.strategy: unknown strategy "ful-jitter"; valid: …`
    /// or `scenarios/x.toml: --set cap=1ms: client.cap: …` for command-line values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        match &self.origin {
            Origin::File(at) => write!(f, ":{}:{}", at.line, at.column)?,
            Origin::CommandLine(argument) => write!(f, ": --set {argument}")?,
            Origin::Default => {}
        }
        if let Some(key) = &self.key {
            write!(f, ": {key}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Turns byte spans of one scenario's source into [`Origin`]s.
#[derive(Clone, Copy)]
pub struct Locator<'a> {
    pub file: &'a str,
    pub source: &'a str,
    /// `Some(argument)` when the text being read is a `--set` value rather than the file.
    pub command_line: Option<&'a str>,
}

impl Locator<'_> {
    pub fn origin(&self, span: Range<usize>) -> Origin {
        match self.command_line {
            Some(argument) => Origin::CommandLine(argument.to_owned()),
            None => Origin::File(LineCol::of_offset(self.source, span.start)),
        }
    }

    pub fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> InputError {
        let key = (!key.is_empty()).then(|| key.to_owned());
        InputError::new(self.file, self.origin(span), key, message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_become_one_based_lines_and_character_columns() {
        let text = "a = 1\nµs = \"x\"\n";
        assert_eq!(LineCol::of_offset(text, 0), LineCol { line: 1, column: 1 });
        assert_eq!(LineCol::of_offset(text, 4), LineCol { line: 1, column: 5 });
        // 'µ' is two bytes: the '=' on line 2 is byte 10 but column 4.
        assert_eq!(LineCol::of_offset(text, 10), LineCol { line: 2, column: 4 });
        assert_eq!(LineCol::of_offset(text, 999), LineCol { line: 3, column: 1 });
    }

    #[test]
    fn messages_name_file_position_and_key() {
        let error = InputError::new(
            "s.toml",
            Origin::File(LineCol { line: 7, column: 12 }),
            Some("client.strategy".into()),
            "unknown strategy",
        );
        assert_eq!(error.to_string(), "s.toml:7:12: client.strategy: unknown strategy");
        let error = InputError::new("s.toml", Origin::CommandLine("cap=1ms".into()), Some("client.cap".into()), "x");
        assert_eq!(error.to_string(), "s.toml: --set cap=1ms: client.cap: x");
    }
}
