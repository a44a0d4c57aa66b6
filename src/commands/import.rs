//! `retrylab import FILE`: the `[client]` table of a real retry configuration (src/import/), printed or written to
//! a file, with every trap crossed printed as a warning on stderr.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::import::{self, Imported};
use crate::report::atomic;
use crate::scenario::{Scenario, plan};

/// What `retrylab import` was asked.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    pub file: PathBuf,
    /// The format's name; detected from the file when `None`.
    pub format: Option<String>,
    /// The method, route or profile to translate, for files that hold several.
    pub choice: Option<String>,
    /// `NAME=X.Y` releases to read the file as (`--version`), where a default changed between releases.
    pub versions: Vec<String>,
    /// How to read a file that can be read two ways (`--reading`, e.g. `channel` for a googleapis config).
    pub reading: Option<String>,
    /// Where to write the table instead of stdout.
    pub out: Option<PathBuf>,
}

pub fn import(options: &ImportOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let pins = import::versions::parse_pins(options.versions.iter().map(String::as_str))
        .map_err(|message| Error::Usage(format!("--version: {message}")))?;
    let ask = import::Ask { choice: options.choice.as_deref(), pins: &pins, reading: options.reading.as_deref() };
    let (format, imported) = import::import_file(&options.file, options.format.as_deref(), &ask)?;
    check_runs(&imported, &options.file.display().to_string())?;
    let entry = imported.entry.as_deref().map_or_else(String::new, |entry| format!(", {} {entry}", format.entry));
    let header = format!("retrylab import {} ({}{entry})", options.file.display(), format.name);
    let block = imported.client_block(&header);
    for warning in &imported.warnings {
        let place = warning.at.map_or_else(String::new, |at| format!(":{}:{}", at.line, at.column));
        let field = if warning.field.is_empty() { String::new() } else { format!(" {}:", warning.field) };
        eprintln!("warning: {}{place}:{field} {}", options.file.display(), warning.message);
    }
    match &options.out {
        Some(path) => atomic::write_atomic(path, block.as_bytes()),
        None => stdout
            .write_all(block.as_bytes())
            .map_err(|source| Error::Write { path: PathBuf::from("<stdout>"), source }),
    }
}

/// The translation must be a `[client]` table the server model runs: a scenario around it is parsed and planned.
pub(crate) fn check_runs(imported: &Imported, file: &str) -> Result<(), crate::Error> {
    let scenario = format!(
        "schema_version = 1\n[model]\nkind = \"server\"\n[workload]\nkind = \"burst\"\nclients = 1\n{}",
        imported.client_block("check")
    );
    Scenario::from_source(Path::new(file), scenario)
        .map_err(crate::Error::from)
        .and_then(|scenario| plan(&scenario).map(drop).map_err(crate::Error::from))
        .map_err(|error| {
            crate::Error::Usage(format!("{file}: the translation is not a policy the lab can run: {error}"))
        })
}
