//! The CLI's verbs as library functions: `run`, `validate`, `strategies`, `delays`, `import`, `boundary`, `tune`, `merge`
//! (with the checkpointed runs, in `sharded`), and (in `view`) `show`, `plot` and `compare`. The binary only parses arguments and maps errors to
//! exit codes.

mod boundary;
mod delays;
mod fluid;
mod fluid_over;
mod import;
mod rare;
#[cfg(test)]
pub(crate) use import::check_runs;
mod metrics;
mod paths;
mod sharded;
pub(crate) mod strategies;
mod tune;
mod view;

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::Error;
use crate::budget::{self, Bytes, MemoryEstimate};
use crate::report::staging::StagedFile;
use crate::report::{self, atomic};
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::shard::{ShardFolder, ShardSpec};
use crate::sweep::SweepSettings;
pub use boundary::{BoundaryOptions, DEFAULT_STUCK_FRACTION, DEFAULT_VERDICT, boundary};
pub use delays::{DelaysFormat, DelaysOptions, MAX_RETRIES, MAX_SAMPLES, delays};
pub use fluid::{FluidCsv, FluidOptions, MAX_FLUID_SCALE, fluid};
pub use import::{ImportOptions, import};
pub use metrics::metrics;
pub use paths::{OutputKind, check_output_path};
pub use rare::{MAX_REPLICATIONS as MAX_RARE_REPLICATIONS, RARE_CSV_HEADER, RareImportance, RareOptions, rare};
pub use sharded::merge;
use sharded::run_one;
pub use strategies::strategies;
pub use tune::{TuneOptions, tune};
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
    /// Write every attempt of one replicate as a Chrome trace.
    pub trace: Option<TraceRequest>,
    /// After writing each results folder, draw it in the terminal as `retrylab show` does.
    pub show: bool,
    /// Run only this shard's part of each sweep, into `<out>/shard-I-of-N/`, for `retrylab merge` to join.
    pub shard: Option<ShardSpec>,
    /// Skip the points an interrupted earlier run of the same study already finished.
    pub resume: bool,
    /// `--max-memory`: refuse a plan estimated to need more (a size such as `8GB`; `None`: half the machine's).
    pub max_memory: Option<String>,
}

/// `--trace FILE --trace-point N --trace-replicate R`.
#[derive(Debug, Clone)]
pub struct TraceRequest {
    pub file: PathBuf,
    /// Position in the canonical point order (the rows of summary.csv).
    pub point: usize,
    pub replicate: u32,
    /// Write OTLP/JSON instead of Chrome trace JSON.
    pub otlp: bool,
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
    if !options.quiet {
        for note in scenario.import_notes() {
            eprintln!("warning: {note}");
        }
    }
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
        let mut out = match &options.out {
            Some(dir) if several => dir.join(scenario.stem()),
            Some(dir) => dir.clone(),
            None if options.shard.is_some() => default_out_dir(&scenario).join("shards"),
            None => default_out_dir(&scenario),
        };
        if let Some(shard) = &options.shard {
            out.push(shard.folder_name());
        }
        if !seen.insert(out.clone()) {
            return Err(Error::Usage(format!(
                "two scenarios would write to the same folder {}; rename one or run them separately",
                out.display()
            )));
        }
        jobs.push((scenario, points, out));
    }
    let argument = if options.out.is_some() { "--out" } else { "the output folder" };
    for (_, _, out) in &jobs {
        check_output_path(argument, out, OutputKind::Folder)?;
    }
    if let Some(trace) = &options.trace {
        check_trace_request(trace, &jobs)?;
    }
    check_memory(&jobs, options)?;
    if options.resume {
        for (scenario, points, out) in &jobs {
            let (dir, record) = sharded::checkpoint(scenario, points, out, options);
            ShardFolder::check_resumable(&dir, &record)?;
        }
    }
    for (_, _, out) in &jobs {
        atomic::ensure_writable_dir(out)?;
    }
    for (scenario, points, out) in &jobs {
        // The trace is written first, beside its file, and moved into place only after the results: a disk that
        // cannot hold it fails the run before the results folder changes.
        let trace = options.trace.as_ref().map(|trace| stage_trace(scenario, points, trace, options.threads));
        let trace = trace.transpose()?;
        run_one(scenario, points, out, options, stdout)?;
        if let (Some(staged), Some(request)) = (trace, &options.trace) {
            staged.commit(request, stdout, options.quiet)?;
        }
        if options.show {
            let _ = writeln!(stdout);
            show(std::slice::from_ref(out), &report::terminal::View::for_stdout(), stdout)?;
        }
    }
    Ok(())
}

/// Refuses, before anything runs or is written, a plan whose estimated peak memory is above `--max-memory`.
fn check_memory(jobs: &[(Scenario, Vec<PlannedPoint>, PathBuf)], options: &RunOptions) -> Result<(), Error> {
    let limit = match &options.max_memory {
        Some(text) => {
            Some(budget::parse_size(text).map_err(|problem| Error::Usage(format!("--max-memory: {problem}")))?)
        }
        None => budget::default_limit(),
    };
    let Some(limit) = limit else { return Ok(()) };
    let threads = options.threads.unwrap_or_else(rayon::current_num_threads);
    for (scenario, points, _) in jobs {
        let shard = options.shard.unwrap_or(ShardSpec::WHOLE);
        let owned = shard.owned_points(points, scenario.replicates);
        let mut estimate = MemoryEstimate::of(scenario, &owned, threads);
        if let Some(trace) = options.trace.as_ref().filter(|trace| trace.point < points.len()) {
            estimate = estimate.with_trace(scenario, &points[trace.point], trace.otlp);
        }
        if estimate.peak_bytes > limit {
            let whose = if options.max_memory.is_some() { "" } else { " (the default: half of this machine's memory)" };
            return Err(Error::Usage(format!(
                "{}: this plan needs {estimate}.\nThat is more than --max-memory {}{whose}. To need less: {}; or raise \
                 --max-memory if the machine has room.",
                scenario.display_path(),
                Bytes(limit),
                estimate.advice()
            )));
        }
    }
    Ok(())
}

/// Refuses a trace request that names no run of the (single) scenario, before anything runs.
fn check_trace_request(trace: &TraceRequest, jobs: &[(Scenario, Vec<PlannedPoint>, PathBuf)]) -> Result<(), Error> {
    let [(scenario, points, _)] = jobs else {
        return Err(Error::Usage("--trace takes one scenario; run the others separately".into()));
    };
    if trace.point >= points.len() {
        return Err(Error::Usage(format!(
            "--trace-point {} is out of range: {} has {} points (0 to {})",
            trace.point,
            scenario.display_path(),
            points.len(),
            points.len() - 1
        )));
    }
    if trace.replicate >= scenario.replicates {
        return Err(Error::Usage(format!(
            "--trace-replicate {} is out of range: {} runs {} replicates (0 to {})",
            trace.replicate,
            scenario.display_path(),
            scenario.replicates,
            scenario.replicates - 1
        )));
    }
    // A trace inside a results folder not made yet is checked with that folder.
    let out = &jobs[0].2;
    if trace.file.parent() != Some(out.as_path()) || out.exists() {
        check_output_path("--trace", &trace.file, OutputKind::File)?;
    }
    Ok(())
}

/// The value of parameter `key` at `point` (swept or set), as text.
fn point_value(scenario: &Scenario, point: &PlannedPoint, key: &str) -> Option<String> {
    match scenario.sweep.iter().position(|axis| axis.answers_to(key)) {
        Some(axis) => Some(point.swept[axis].to_string()),
        None => scenario
            .settings
            .iter()
            .find(|s| s.spec.answers_to(None, key))
            .and_then(|s| s.value.as_ref())
            .map(|v| v.to_string()),
    }
}

/// A trace written beside its file, with what to say once it is moved into place.
struct StagedTrace {
    file: StagedFile,
    spans: usize,
    /// `; peak memory …, estimated …` for the line that reports the trace (empty where the peak is unknown).
    memory: String,
}

impl StagedTrace {
    fn commit(self, trace: &TraceRequest, stdout: &mut dyn Write, quiet: bool) -> Result<(), Error> {
        self.file.commit()?;
        if self.spans >= crate::model::trace::MAX_TRACE_SPANS {
            eprintln!(
                "warning: the trace keeps the first {} attempts only; trace a smaller point or fewer requests for all",
                self.spans
            );
        }
        if !quiet {
            let _ = writeln!(
                stdout,
                "wrote {} attempts of point {} replicate {} to {} ({}{})",
                self.spans,
                trace.point,
                trace.replicate,
                trace.file.display(),
                if trace.otlp { report::otlp::OPEN_HINT } else { "open it in ui.perfetto.dev" },
                self.memory
            );
        }
        Ok(())
    }
}

/// Re-runs the chosen replicate with tracing on (the same seed, so the same run as in runs.csv) and writes its
/// attempts as a Chrome trace (or OTLP/JSON) beside the trace's file, for [`StagedTrace::commit`].
fn stage_trace(
    scenario: &Scenario,
    points: &[PlannedPoint],
    trace: &TraceRequest,
    threads: Option<usize>,
) -> Result<StagedTrace, Error> {
    let point = &points[trace.point];
    let settings = SweepSettings::for_scenario(scenario, threads);
    let seeds = point.seeds(settings.master_seed, trace.replicate);
    let seed = seeds.policy;
    let run_settings = crate::model::RunSettings {
        seeds,
        bucket: settings.timeline_bucket,
        max_events: crate::model::event_cap(settings.max_events_per_run, &point.config),
        trace: true,
        stop: settings.stop,
    };
    let output = point.config.simulate(run_settings);
    crate::interrupt::check()?;
    let owner_label = point.config.trace_owner();
    let strategy = point_value(scenario, point, "strategy").unwrap_or_else(|| "-".into());
    let point_id = point.id();
    let context = report::trace::TraceContext {
        scenario: &scenario.name,
        model: scenario.model.name(),
        owner_label,
        strategy: &strategy,
        layer_names: &point.config.service_names(),
        point: trace.point,
        point_id: &point_id,
        replicate: trace.replicate,
        seed,
    };
    let bytes = if trace.otlp {
        report::otlp::otlp_json(&output.spans, &context)
    } else {
        report::trace::chrome_trace_json(&output.spans, &context)
    };
    let threads = threads.unwrap_or_else(rayon::current_num_threads);
    let all: Vec<&PlannedPoint> = points.iter().collect();
    let estimate = MemoryEstimate::of(scenario, &all, threads).with_trace(scenario, point, trace.otlp);
    let memory = budget::peak_resident().map_or(String::new(), |peak| {
        format!("; peak memory {}, estimated {}", Bytes(peak), Bytes(estimate.peak_bytes))
    });
    Ok(StagedTrace { file: StagedFile::write(&trace.file, &bytes)?, spans: output.spans.len(), memory })
}

pub(crate) fn progress_bar(total: u64, label: &str, quiet: bool) -> ProgressBar {
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

/// `retrylab validate`: checks every scenario (and every sweep point) without running anything.
pub fn validate(paths: &[PathBuf], set: &[String], stdout: &mut dyn Write) -> Result<(), Error> {
    for path in paths {
        validate_scenario(&Scenario::load(path, set)?, stdout)?;
    }
    Ok(())
}

/// `validate`'s work on a scenario already parsed (with its `--set` overrides applied): plans every point and
/// prints the plan and its memory estimate. Public so the fuzz targets take the path `validate` takes.
pub fn validate_scenario(scenario: &Scenario, stdout: &mut dyn Write) -> Result<(), Error> {
    let points = plan(scenario)?;
    let _ = writeln!(
        stdout,
        "ok: {} ({} model, {} points × {} replicates)",
        scenario.display_path(),
        scenario.model.name(),
        points.len(),
        scenario.replicates
    );
    for note in scenario.import_notes() {
        let _ = writeln!(stdout, "  import: {note}");
    }
    let threads = rayon::current_num_threads();
    let estimate = MemoryEstimate::of(scenario, &points.iter().collect::<Vec<_>>(), threads);
    let _ = writeln!(stdout, "  memory on {threads} threads: {estimate}");
    Ok(())
}

/// `retrylab run --list-points`: every sweep point of each scenario (after `--set` overrides) in canonical order,
/// one tab-separated line each: the scenario's name, the point's position (the row of summary.csv), its stable
/// id (a hash of every parameter, the same on every machine), the swept values, then the effective policy and the
/// model's verdict-deciding settings with every default resolved (for models that have them). Runs nothing.
pub fn list_points(paths: &[PathBuf], set: &[String], stdout: &mut dyn Write) -> Result<(), Error> {
    let options = RunOptions { set: set.to_vec(), ..RunOptions::default() };
    let mut prepared = Vec::new();
    for path in paths {
        prepared.push(prepare(path, &options)?);
    }
    for (scenario, points) in &prepared {
        let mut header = vec!["scenario".to_owned(), "index".to_owned(), "id".to_owned()];
        header.extend(scenario.sweep.iter().map(|axis| axis.name.to_owned()));
        let with_policy = points.iter().any(|point| point.policy.is_some());
        if with_policy {
            header.push("policy".to_owned());
        }
        let with_settings = points.iter().any(|point| point.settings.is_some());
        if with_settings {
            header.push("model".to_owned());
        }
        let _ = writeln!(stdout, "{}", header.join("\t"));
        for point in points {
            let mut line = vec![scenario.name.clone(), point.index.to_string(), point.id()];
            line.extend(point.swept.iter().map(|value| value.to_string()));
            if with_policy {
                line.push(point.policy.clone().unwrap_or_default());
            }
            if with_settings {
                line.push(point.settings.clone().unwrap_or_default());
            }
            let _ = writeln!(stdout, "{}", line.join("\t"));
        }
    }
    Ok(())
}
