//! The verbs that read results folders back: `show`, `plot` and `compare`.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::report::compare::Comparison;
use crate::report::read::ResultsFolder;
use crate::report::terminal::{self, View};

fn write_out(stdout: &mut dyn Write, text: &str) -> Result<(), Error> {
    stdout.write_all(text.as_bytes()).map_err(|source| Error::Write { path: PathBuf::from("<stdout>"), source })
}

/// `retrylab show`: the timeline sparklines and the summary table of each folder, drawn for `view`.
pub fn show(dirs: &[PathBuf], view: &View, stdout: &mut dyn Write) -> Result<(), Error> {
    let folders = dirs.iter().map(|dir| ResultsFolder::open(dir)).collect::<Result<Vec<_>, _>>()?;
    for (i, folder) in folders.iter().enumerate() {
        if i > 0 {
            write_out(stdout, "\n")?;
        }
        write_out(stdout, &terminal::render(folder, view))?;
    }
    Ok(())
}

/// `retrylab plot`: redraws the charts of each folder from its tables, manifest and scenario.
pub fn plot(dirs: &[PathBuf], stdout: &mut dyn Write) -> Result<(), Error> {
    let folders = dirs.iter().map(|dir| ResultsFolder::open(dir)).collect::<Result<Vec<_>, _>>()?;
    // Every scenario is rebuilt before anything is drawn, so bad input writes nothing.
    for folder in &folders {
        folder.scenario()?;
        folder.aggregate()?;
    }
    for folder in &folders {
        let written = crate::report::redraw_charts(folder)?;
        write_out(stdout, &format!("redrew {} chart files in {}\n", written.len(), folder.dir.display()))?;
    }
    Ok(())
}

/// Options of `retrylab compare`.
#[derive(Debug, Clone, Default)]
pub struct CompareOptions {
    pub dirs: Vec<PathBuf>,
    pub metric: Option<String>,
    /// The chart's path: `.svg`, `.png` or no extension; both files are written [default: ./compare].
    pub out: Option<PathBuf>,
    /// Print each folder's paired differences (paired.csv) instead of drawing.
    pub paired: bool,
}

/// The path without its `.svg` or `.png` extension; any other extension is bad input.
fn chart_stem(out: &Path) -> Result<PathBuf, Error> {
    match out.extension().and_then(|e| e.to_str()) {
        None => Ok(out.to_owned()),
        Some("svg" | "png") => Ok(out.with_extension("")),
        Some(other) => Err(Error::Usage(format!(
            "--out {}: charts are written as .svg and .png, not .{other}; give a path ending in .svg or .png, or \
             no extension",
            out.display()
        ))),
    }
}

/// `retrylab compare`: one metric of several folders on one chart, written as SVG and PNG: lines against a
/// numeric swept parameter they share, grouped bars for a named one.
pub fn compare(options: &CompareOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    if options.paired {
        // Every folder is checked, as `compare` checks it, and every table read before anything is printed.
        for dir in &options.dirs {
            ResultsFolder::open(dir)?;
        }
        let tables = options
            .dirs
            .iter()
            .map(|dir| crate::report::paired_table(dir, options.metric.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        return tables.iter().try_for_each(|table| write_out(stdout, table));
    }
    let stem = chart_stem(options.out.as_deref().unwrap_or(Path::new("compare")))?;
    for extension in ["svg", "png"] {
        super::check_output_path("--out", &stem.with_extension(extension), super::OutputKind::File)?;
    }
    let folders = options.dirs.iter().map(|dir| ResultsFolder::open(dir)).collect::<Result<Vec<_>, _>>()?;
    if folders.is_empty() {
        return Err(Error::Usage("compare needs at least one results folder".into()));
    }
    let comparison = Comparison { folders: &folders, metric: options.metric.as_deref() };
    let drawn = comparison.draw(&stem)?;
    let names: Vec<String> = drawn.files.iter().map(|path| path.display().to_string()).collect();
    let asked = drawn.asked_as.map_or_else(String::new, |old| format!(" (asked for by its former name {old})"));
    write_out(
        stdout,
        &format!("compared {}{asked} of {} folders: wrote {}\n", drawn.metric, folders.len(), names.join(" and ")),
    )
}
