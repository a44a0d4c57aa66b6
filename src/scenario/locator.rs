//! Turning byte spans of a scenario's TOML (or of a `--set` value) into located [`InputError`]s.

use std::ops::Range;

use crate::error::{InputError, LineCol, Origin};

/// Turns byte spans of one scenario's source into [`Origin`]s.
#[derive(Clone, Copy)]
pub(super) struct Locator<'a> {
    pub file: &'a str,
    pub source: &'a str,
    /// `Some(argument)` when the text being read is a `--set` value rather than the file.
    pub command_line: Option<&'a str>,
}

impl Locator<'_> {
    pub(super) fn origin(&self, span: Range<usize>) -> Origin {
        match self.command_line {
            Some(argument) => Origin::CommandLine(argument.to_owned()),
            None => Origin::File(LineCol::of_offset(self.source, span.start)),
        }
    }

    pub(super) fn error(&self, span: Range<usize>, key: &str, message: impl Into<String>) -> InputError {
        let key = (!key.is_empty()).then(|| key.to_owned());
        InputError::new(self.file, self.origin(span), key, message)
    }
}
