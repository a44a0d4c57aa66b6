//! The CLI's verbs as library functions: `run`, `validate`, `strategies`, and (in `view`) `show`, `plot` and
//! `compare`. The binary only parses arguments and maps errors to exit codes.

mod view;

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::Error;
use crate::model::ModelKind;
use crate::policy::{Strategy, presets};
use crate::report::{self, RunInfo, atomic};
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::sweep::{SweepSettings, run_sweep};
pub use view::{CompareOptions, compare, plot, show};

/// Options of `retrylab run`.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub scenarios: Vec<PathBuf>,
    /// Output folder; with several scenarios, each gets a subfolder named after its file stem.
    pub out: Option<PathBuf>,
    pub seed: Option<u64>,
    pub replicates: Option<u32>,
    pub threads: Option<usize>,
    /// `KEY=VALUE` overrides, applied in order to every scenario.
    pub set: Vec<String>,
    pub quiet: bool,
    /// After writing each results folder, draw it in the terminal as `retrylab show` does.
    pub show: bool,
}

/// The default output folder of a scenario: `results/<file stem>/`.
pub fn default_out_dir(scenario: &Scenario) -> PathBuf {
    Path::new("results").join(scenario.stem())
}

/// Loads and checks a scenario completely (every sweep point included), applying the overrides.
fn prepare(path: &Path, options: &RunOptions) -> Result<(Scenario, Vec<PlannedPoint>), Error> {
    let mut scenario = Scenario::load(path, &options.set)?;
    if let Some(seed) = options.seed {
        scenario.seed = seed;
    }
    if let Some(replicates) = options.replicates {
        scenario.replicates = replicates;
    }
    let points = plan(&scenario)?;
    Ok((scenario, points))
}

/// `retrylab run`: validates every scenario first, then runs each and writes its results folder.
pub fn run(options: &RunOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let mut prepared = Vec::new();
    for path in &options.scenarios {
        prepared.push(prepare(path, options)?);
    }
    let several = prepared.len() > 1;
    let mut seen = HashSet::new();
    let mut jobs = Vec::new();
    for (scenario, points) in prepared {
        let out = match &options.out {
            Some(dir) if several => dir.join(scenario.stem()),
            Some(dir) => dir.clone(),
            None => default_out_dir(&scenario),
        };
        if !seen.insert(out.clone()) {
            return Err(Error::Usage(format!(
                "two scenarios would write to the same folder {}; rename one or run them separately",
                out.display()
            )));
        }
        jobs.push((scenario, points, out));
    }
    for (_, _, out) in &jobs {
        atomic::ensure_writable_dir(out)?;
    }
    for (scenario, points, out) in &jobs {
        run_one(scenario, points, out, options, stdout)?;
        if options.show {
            let _ = writeln!(stdout);
            show(std::slice::from_ref(out), &report::terminal::View::for_stdout(), stdout)?;
        }
    }
    Ok(())
}

fn progress_bar(total: u64, label: &str, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(total);
    let style = ProgressStyle::with_template("{prefix:.bold} [{wide_bar:.cyan/blue}] {pos}/{len} runs · eta {eta}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(label.to_owned());
    bar
}

fn run_one(
    scenario: &Scenario,
    points: &[PlannedPoint],
    out: &Path,
    options: &RunOptions,
    stdout: &mut dyn Write,
) -> Result<(), Error> {
    let total = points.len() as u64 * u64::from(scenario.replicates);
    let bar = progress_bar(total, &scenario.name, options.quiet);
    let started = Instant::now();
    let settings = SweepSettings::for_scenario(scenario, options.threads);
    let runs = run_sweep(points, settings, &|| bar.inc(1)).map_err(|e| Error::Threads(e.to_string()))?;
    bar.finish_and_clear();
    let elapsed_s = started.elapsed().as_secs_f64();
    let aggregate = report::aggregate(scenario.model, points.len(), &runs);
    let threads = options.threads.unwrap_or_else(rayon::current_num_threads);
    let info = RunInfo { threads, elapsed_s, overrides: options.set.clone() };
    let written = report::write_results(scenario, points, &runs, &aggregate, &info, out)?;
    if aggregate.truncated_runs > 0 {
        eprintln!(
            "warning: {}: {} of {} runs stopped at max_events_per_run = {} with work still pending (an unstable \
             system?); their metrics cover only the simulated part, and runs.csv marks them truncated = 1",
            scenario.name,
            aggregate.truncated_runs,
            runs.len(),
            scenario.max_events_per_run
        );
    }
    if !options.quiet {
        let rate = aggregate.events as f64 / elapsed_s.max(1e-9) / 1e6;
        let _ = writeln!(
            stdout,
            "{}: {} points × {} replicates, {} events in {elapsed_s:.2} s ({rate:.1} M events/s on {threads} threads)",
            scenario.name,
            points.len(),
            scenario.replicates,
            aggregate.events,
        );
        let _ = writeln!(stdout, "wrote {} files to {}", written.len(), out.display());
    }
    Ok(())
}

/// `retrylab validate`: checks every scenario (and every sweep point) without running anything.
pub fn validate(paths: &[PathBuf], stdout: &mut dyn Write) -> Result<(), Error> {
    let options = RunOptions::default();
    for path in paths {
        let (scenario, points) = prepare(path, &options)?;
        let _ = writeln!(
            stdout,
            "ok: {} ({} model, {} points × {} replicates)",
            scenario.display_path(),
            scenario.model.name(),
            points.len(),
            scenario.replicates
        );
    }
    Ok(())
}

/// `retrylab strategies`: every strategy with its formula, every preset with its parameters and source, and the
/// conventions the formulas share.
pub fn strategies(stdout: &mut dyn Write) -> Result<(), Error> {
    let mut text = String::new();
    text.push_str("Backoff strategies (set `strategy` in [client]):\n\n");
    let width = Strategy::ALL.iter().map(|s| s.name().len()).max().unwrap_or(0);
    for strategy in Strategy::ALL {
        text.push_str(&format!(
            "  {:width$}  sleep = {}\n  {:width$}  {}\n",
            strategy.name(),
            strategy.formula(),
            "",
            strategy.about()
        ));
    }
    text.push_str(
        "\nPresets (set `strategy` to one: it fixes base, cap, multiplier and max_attempts, and brings its limiter\n\
         when `limiter` is \"none\"):\n\n",
    );
    let width = presets::ALL.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for preset in presets::ALL {
        let attempts = preset.max_attempts.map_or("unlimited attempts".to_owned(), |n| format!("{n} attempts"));
        text.push_str(&format!(
            "  {:width$}  {}, b = {}, c = {}, m = {}; {attempts}; limiter {}\n  {:width$}  source: {}\n",
            preset.name,
            preset.strategy,
            preset.backoff.base,
            preset.backoff.cap,
            preset.backoff.multiplier,
            preset.limiter,
            "",
            preset.source
        ));
    }
    text.push_str(
        "\nConventions: n = attempts failed so far, so the first retry has n = 1 (the AWS 2015 simulator's\n\
         numbering); b = base, c = cap, m = multiplier (default 2); U(x, y) is a uniform draw.\n\
         Limits in [client]: max_attempts counts the first try; deadline gives up rather than sleep past it.\n",
    );
    text.push_str("\nModels (set `kind` in [model]):\n\n");
    for kind in ModelKind::ALL {
        text.push_str(&format!("  {}  {}\n", kind.name(), kind.about()));
        for spec in kind.params() {
            let key = format!("{}.{}", spec.section.name(), spec.key);
            text.push_str(&format!("      {key:21} {}\n", spec.help));
        }
    }
    stdout.write_all(text.as_bytes()).map_err(|source| Error::Write { path: PathBuf::from("<stdout>"), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_lists_every_preset_with_its_parameters_and_source() {
        let mut out = Vec::new();
        strategies(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for preset in presets::ALL {
            let line = text.lines().find(|line| line.trim_start().starts_with(&format!("{} ", preset.name)));
            let line = line.unwrap_or_else(|| panic!("{} is not listed", preset.name));
            assert!(line.contains(preset.strategy.name()) && line.contains(preset.limiter), "{line}");
            assert!(text.contains(preset.source), "{}", preset.name);
        }
        assert!(text.contains("tcp-rfc6298       exponential-from-base, b = 1s, c = 120s, m = 2; 16 attempts"));
    }
}
