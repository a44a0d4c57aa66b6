//! The library's error types: [`Error`], and [`InputError`], bad input located at its file, line:column and key.
//! Messages do not repeat their `source`: print the chain (`{:#}` with anyhow) to see the cause.
//! [`Error::is_bad_input`] separates the user's mistakes (exit code 2) from failures of the run itself (exit 1).

use std::fmt;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A scenario or command-line value that cannot be used; the message locates it.
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot read scenario {}", path.display())]
    ReadScenario { path: PathBuf, source: std::io::Error },
    #[error("cannot write to output folder {}", path.display())]
    OutputFolder { path: PathBuf, source: std::io::Error },
    /// Bad usage that clap cannot see (for example two scenarios with the same output folder).
    #[error("{0}")]
    Usage(String),
    #[error("failed to write {}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("failed to draw {}: {message}", path.display())]
    Chart { path: PathBuf, message: String },
    #[error("cannot start worker threads: {0}")]
    Threads(String),
    /// A folder given to `show`, `plot` or `compare` that cannot be read as results: the message says what is
    /// wrong and what would be valid.
    #[error("{}: {message}", path.display())]
    Results { path: PathBuf, message: String },
    /// Shard folders that cannot be merged or resumed (missing, duplicated, from another study): the message lists
    /// what is wrong and how to fix it.
    #[error("{0}")]
    Shards(String),
    /// A signal (Ctrl-C, SIGTERM) stopped the work before it was done; the message says what was kept. When
    /// `resumable`, the same command with `--resume` goes on from there. The binary exits with 128 + `signal`.
    #[error("{message}")]
    Interrupted { signal: i32, message: String, resumable: bool },
    /// `retrylab emulate --check`: the emulation and the simulation differ beyond their intervals and the measured
    /// overhead; the message says how many comparisons and where the table is. Exit code 1.
    #[error("{0}")]
    Disagreement(String),
    /// The browser lab stopped a run because a newer one took its place (or the server is shutting down).
    #[error("cancelled: a newer run took this one's place")]
    Cancelled,
}

impl Error {
    /// True for errors the user can fix by changing the input (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::Input(_)
                | Error::ReadScenario { .. }
                | Error::OutputFolder { .. }
                | Error::Usage(_)
                | Error::Results { .. }
                | Error::Shards(_)
        )
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

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
#[non_exhaustive]
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
