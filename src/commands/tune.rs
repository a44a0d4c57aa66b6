//! `retrylab tune`: races the candidate policies of a scenario's `[tune]` table on common random numbers (see
//! `tune::race`) and writes, through a staging folder, the ranking (tune.csv), the winner's block
//! (recommendation.toml) and a chart of every candidate's objective with its 95% interval (tune.svg, tune.png; see
//! `output`). Runs are checkpointed after each round (`.retrylab-tune-runs`), so `--resume` continues an
//! interrupted search, or a finished one with a larger budget, without running anything twice.

mod output;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::Error;
use crate::error::InputError;
use crate::params::Value;
use crate::report::staging::Staging;
use crate::report::{atomic, format_number};
use crate::scenario::out_of_reach;
use crate::scenario::{MAX_BUDGET, Origin, PlannedPoint, Scenario, TuneTable, plan_one, swept_at};
use crate::stats::Estimate;
use crate::sweep::{PointWork, SweepSettings, run_work};
use crate::tune::expr::{Constraint, ExprError, Objective, parse_constraint, parse_objective};
use crate::tune::race::Race;
use crate::tune::reach::never_defined;
use output::Outcome;

/// Candidates at most in one search: more is a typo in a range.
const MAX_CANDIDATES: usize = 10_000;
/// Runs per candidate the default budget allows.
const DEFAULT_RUNS_PER_CANDIDATE: u64 = 40;
const CHECKPOINT: &str = ".retrylab-tune-runs";

/// Options of `retrylab tune`.
#[derive(Debug, Clone, Default)]
pub struct TuneOptions {
    pub scenario: PathBuf,
    /// Replaces the `[tune]` objective.
    pub objective: Option<String>,
    /// Replace the `[tune]` constraints when any is given.
    pub constraints: Vec<String>,
    /// Runs the search may spend [default: `[tune] budget`, else 40 per candidate].
    pub budget: Option<u64>,
    /// [default: results/<scenario stem>/tune]
    pub out: Option<PathBuf>,
    pub set: Vec<String>,
    pub seed: Option<u64>,
    pub threads: Option<usize>,
    /// Reuse the runs an earlier search of the same study checkpointed.
    pub resume: bool,
    pub quiet: bool,
    /// Print the whole ranking, not only the winner.
    pub show: bool,
}

/// One candidate: its label, and its planned point's index (or why the model refused it).
pub(super) struct Candidate {
    pub(super) label: String,
    pub(super) point: Result<usize, String>,
}

/// `retrylab tune`.
pub fn tune(options: &TuneOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let started = Instant::now();
    let mut scenario = Scenario::load(&options.scenario, &options.set)?;
    if let Some(seed) = options.seed {
        scenario.seed = seed;
    }
    let Some(table) = scenario.tune.clone() else {
        return Err(Error::Input(scenario.error(
            Origin::Default,
            Some("tune".into()),
            "no [tune] table: add one with the [client] values to search and the goal, e.g. [tune] objective = \
             \"calls\", strategy = [\"exponential\", \"full-jitter\"] (see docs/tuning.md)",
        )));
    };
    let goal = Goal::read(&scenario, options, &table)?;
    if table.space.is_empty() {
        return Err(Error::Input(scenario.error(
            table.origin.clone(),
            Some("tune".into()),
            "searches nothing: list [client] values to compare, e.g. strategy = [\"exponential\", \"full-jitter\"]",
        )));
    }
    let sweep_left_aside = !scenario.sweep.is_empty();
    let left_aside: Vec<&str> = scenario.sweep.iter().map(|axis| axis.name).collect();
    scenario.sweep = table.space;
    let count = scenario.point_count();
    if count > MAX_CANDIDATES {
        return Err(Error::Input(scenario.error(
            table.origin,
            Some("tune".into()),
            format!("{count} candidates is more than the limit of {MAX_CANDIDATES}; search fewer values"),
        )));
    }
    // The runnable candidates' points, for the runner; each candidate knows its point's index.
    let mut points: Vec<PlannedPoint> = Vec::new();
    let mut candidates: Vec<Candidate> = Vec::with_capacity(count);
    let mut refusals = Vec::new();
    for index in 0..count {
        let label = label(&scenario, &swept_at(&scenario, index));
        let point = match plan_one(&scenario, index) {
            Ok(planned) => {
                points.push(planned);
                Ok(points.len() - 1)
            }
            Err(refusal) => {
                let message = refusal.message.clone();
                refusals.push((index, refusal));
                Err(message)
            }
        };
        candidates.push(Candidate { label, point });
    }
    if points.is_empty() {
        return Err(Error::Input(refusals.swap_remove(0).1));
    }
    refuse_values_refused_everywhere(&scenario, &candidates, &refusals)?;
    goal.check_reach(&scenario, &points)?;
    // A candidate whose configured model an earlier one already has (a preset that ignores `base`) is not run.
    let mut configured: HashMap<String, usize> = HashMap::new();
    let same_as: Vec<Option<usize>> = (0..candidates.len())
        .map(|i| match candidates[i].point {
            Err(_) => Some(i),
            Ok(p) => {
                let first = *configured.entry(format!("{:?}", points[p].config)).or_insert(i);
                (first != i).then_some(first)
            }
        })
        .collect();
    let distinct = same_as.iter().filter(|same| same.is_none()).count() as u64;
    let budget = options.budget.or(table.budget).unwrap_or(DEFAULT_RUNS_PER_CANDIDATE * distinct).min(MAX_BUDGET);
    if budget < 2 * distinct {
        return Err(Error::Usage(format!(
            "a budget of {budget} runs cannot judge {distinct} candidates (2 replicates each at least, {} in all; \
             {} each to start with): raise --budget or search fewer values",
            2 * distinct,
            crate::tune::race::FIRST_ROUND
        )));
    }
    let out = options.out.clone().unwrap_or_else(|| super::default_out_dir(&scenario).join("tune"));
    atomic::ensure_writable_dir(&out)?;
    if !options.quiet && !left_aside.is_empty() {
        eprintln!("note: tune searches [tune]; the scenario's [sweep] ({}) is left aside", left_aside.join(", "));
    }

    let settings = SweepSettings::for_scenario(&scenario, options.threads);
    let model = scenario.model;
    let checkpoint = Checkpoint::header(&settings, model);
    let checkpoint_path = out.join(CHECKPOINT);
    let mut stored = HashMap::new();
    if options.resume {
        stored = Checkpoint::read(&checkpoint_path, &checkpoint, model.metrics().len());
        if stored.is_empty() && !options.quiet {
            eprintln!("note: no runs of this study to resume in {}; starting afresh", checkpoint_path.display());
        }
    }
    // Only a checkpoint this search wrote, or read, is worth resuming from.
    let interrupted = |signal: i32, stored: &HashMap<(u64, u32), Vec<f64>>| {
        let name = crate::interrupt::name(signal);
        if stored.is_empty() {
            return Error::Interrupted {
                signal,
                message: format!(
                    "{}: interrupted by {name} before its first round finished; nothing kept",
                    scenario.name
                ),
                resumable: false,
            };
        }
        Error::Interrupted {
            signal,
            message: format!(
                "{}: interrupted by {name}; kept {} runs of finished rounds in {}",
                scenario.name,
                stored.len(),
                checkpoint_path.display()
            ),
            resumable: true,
        }
    };
    let mut fresh = 0_u64;
    let point_of: Vec<usize> = candidates.iter().map(|c| c.point.clone().unwrap_or(usize::MAX)).collect();
    let mut candidate_of = vec![0; points.len()];
    for (candidate, &point) in point_of.iter().enumerate().filter(|(_, p)| **p != usize::MAX) {
        candidate_of[point] = candidate;
    }
    let mut race = Race::new(&same_as, goal.objective, goal.constraints, budget);
    let bar = super::progress_bar(budget, "tune", options.quiet);
    let value = |metrics: &[f64], name: &str| model.metric_index(name).map_or(f64::NAN, |i| metrics[i]);
    loop {
        let round = race.next_round();
        if round.is_empty() {
            break;
        }
        let key = |candidate: usize, replicate: u32| (points[point_of[candidate]].hash, replicate);
        let work: Vec<PointWork> = round
            .iter()
            .map(|(candidate, replicates)| PointWork {
                point: point_of[*candidate],
                replicates: replicates.clone().filter(|&r| !stored.contains_key(&key(*candidate, r))).collect(),
            })
            .filter(|work| !work.replicates.is_empty())
            .collect();
        let runs = match run_work(&points, &work, settings, &|| bar.inc(1), &|_, _| Ok(())) {
            Ok(swept) => swept.runs,
            Err(Error::Interrupted { signal, .. }) => {
                bar.finish_and_clear();
                // The rounds before this one are in the checkpoint, which `--resume` reads.
                return Err(interrupted(signal, &stored));
            }
            Err(other) => return Err(other),
        };
        fresh += runs.len() as u64;
        for run in runs {
            stored.insert(key(candidate_of[run.point], run.replicate), run.output.metrics);
        }
        for (candidate, replicates) in round {
            for replicate in replicates {
                let metrics = &stored[&key(candidate, replicate)];
                race.record(candidate, replicate, metrics, |name| value(metrics, name));
            }
        }
        bar.set_position(race.spent());
        Checkpoint::write(&checkpoint_path, &checkpoint, &stored)?;
        race.judge(|i| candidates[i].label.clone());
    }
    bar.finish_and_clear();

    let values = |candidate: usize, metric: &str| -> Vec<f64> {
        let n = race.entries[candidate].replicates();
        (0..n).map(|r| value(&stored[&(points[point_of[candidate]].hash, r)], metric)).collect()
    };
    let outcome = Outcome {
        scenario: &scenario,
        candidates: &candidates,
        points: &points,
        race: &race,
        ranking: race.ranking(),
        budget,
        named: named_metrics(&race.objective, &race.constraints),
        values: &values,
        overrides: &options.set,
        sweep_left_aside,
    };
    let csv = outcome.tune_csv();
    // Into a staging folder first, then moved into place together: a failing disk or a signal leaves `out` as the
    // previous search left it (the checkpoint aside, which keeps this search's runs for `--resume`).
    let staging = Staging::create(&out)?;
    let staged = (|| -> Result<Vec<PathBuf>, Error> {
        let mut written = Vec::new();
        for (name, bytes) in [("tune.csv", csv.clone()), ("recommendation.toml", outcome.recommendation().into_bytes())]
        {
            atomic::write_atomic(&staging.dir().join(name), &bytes)?;
            written.push(staging.dir().join(name));
        }
        written.extend(outcome.chart(&staging.dir().join("tune"))?);
        crate::interrupt::check()?;
        Ok(written)
    })();
    let staged = match staged {
        Err(Error::Interrupted { signal, .. }) => return Err(interrupted(signal, &stored)),
        other => other.map_err(|error| staging.in_place(error))?,
    };
    let written = staging.commit(&staged, &[])?;

    if options.quiet {
        return Ok(());
    }
    let winner = outcome.ranking[0];
    let elapsed = started.elapsed().as_secs_f64();
    let resumed = race.spent() - fresh;
    let _ = writeln!(
        stdout,
        "{}: {} candidates ({} distinct), {} of {budget} runs spent{} in {elapsed:.1} s",
        scenario.display_path(),
        candidates.len(),
        distinct,
        race.spent(),
        if resumed > 0 { format!(" ({resumed} reused from the checkpoint)") } else { String::new() },
    );
    let objective_estimate = Estimate::of(&race.entries[winner].objective);
    let _ = writeln!(
        stdout,
        "best: {}  ({} = {} ± {}, {} replicates{})",
        candidates[winner].label,
        race.objective,
        format_number(objective_estimate.mean),
        format_number(objective_estimate.ci95),
        race.entries[winner].replicates(),
        if race.feasible(winner) { "" } else { "; meets no constraint set: nothing does" },
    );
    let tied: Vec<&str> = outcome
        .ranking
        .iter()
        .filter(|&&i| outcome.tied_with_winner(i))
        .map(|&i| candidates[i].label.as_str())
        .collect();
    if !tied.is_empty() {
        let metrics: Vec<&str> = race.objective.terms.iter().map(|(_, m)| m.as_str()).collect();
        let _ = writeln!(
            stdout,
            "tied:  {} (the same {} on every replicate: the same runs)",
            tied.join("; "),
            metrics.join(", ")
        );
    }
    if let Some(second) = outcome.runner_up() {
        let _ = writeln!(stdout, "next:  {}  ({})", candidates[second].label, outcome.versus_winner(second));
    }
    let _ = writeln!(stdout, "the race: {}", outcome.guarantee());
    if options.show {
        let _ = writeln!(stdout, "\n{}", String::from_utf8_lossy(&csv));
    }
    for path in &written {
        let _ = writeln!(stdout, "wrote {}", path.display());
    }
    Ok(())
}

/// The objective and constraints a search minimises under, from the flags or the `[tune]` table, with where each
/// was given.
struct Goal {
    objective: Objective,
    /// Where the objective was given: the table's string, or `None` for `--objective`.
    objective_origin: Option<Origin>,
    constraints: Vec<Constraint>,
    constraint_origins: Vec<Option<Origin>>,
}

impl Goal {
    fn read(scenario: &Scenario, options: &TuneOptions, table: &TuneTable) -> Result<Goal, Error> {
        let metric_names: Vec<&str> = scenario.model.metrics().iter().map(|m| m.name).collect();
        let (objective, objective_origin) = match (&options.objective, &table.objective) {
            (Some(text), _) => {
                (parse_objective(text, &metric_names).map_err(|e| flag_error("--objective", text, &e))?, None)
            }
            (None, Some(objective)) => (objective.clone(), Some(table.objective_origin.clone())),
            (None, None) => {
                return Err(Error::Input(scenario.error(
                    table.origin.clone(),
                    Some("tune.objective".into()),
                    "missing: set `objective` in [tune] or give --objective, e.g. \"calls + 0.01 * latency_p99_ms\"",
                )));
            }
        };
        let mut constraints = Vec::new();
        let mut constraint_origins = Vec::new();
        if options.constraints.is_empty() {
            for (constraint, origin) in &table.constraints {
                constraints.push(constraint.clone());
                constraint_origins.push(Some(origin.clone()));
            }
        }
        for text in &options.constraints {
            let constraint = parse_constraint(text, &metric_names).map_err(|e| flag_error("--constraint", text, &e))?;
            if let Some(problem) = out_of_reach(scenario.model, &constraint) {
                return Err(Error::Usage(format!("--constraint {text:?}: {problem}")));
            }
            constraints.push(constraint);
            constraint_origins.push(None);
        }
        Ok(Goal { objective, objective_origin, constraints, constraint_origins })
    }

    /// Refuses an objective or constraint naming a metric no candidate's runs can define (`recovery_ms` with no
    /// trigger), before any run.
    fn check_reach(&self, scenario: &Scenario, points: &[PlannedPoint]) -> Result<(), Error> {
        let undefinable = |metric: &str| -> Option<&'static str> {
            let mut why = None;
            for point in points {
                why = Some(never_defined(&point.config, metric)?);
            }
            why
        };
        let goals = std::iter::once(("tune.objective", "--objective", &self.objective, &self.objective_origin)).chain(
            self.constraints
                .iter()
                .zip(&self.constraint_origins)
                .map(|(constraint, origin)| ("tune.constraints", "--constraint", &constraint.lhs, origin)),
        );
        for (key, flag, expression, origin) in goals {
            for (_, metric) in &expression.terms {
                let Some(why) = undefinable(metric) else { continue };
                let message = format!("`{metric}` is undefined in every run of every candidate: {why}");
                return Err(match origin {
                    Some(origin) => Error::Input(scenario.error(origin.clone(), Some(key.into()), message)),
                    None => Error::Usage(format!("{flag}: {message}")),
                });
            }
        }
        Ok(())
    }
}

/// Refuses a searched value that the model refuses in every combination it is part of: a mistake in `[tune]`,
/// not a candidate to list as refused.
fn refuse_values_refused_everywhere(
    scenario: &Scenario,
    candidates: &[Candidate],
    refusals: &[(usize, InputError)],
) -> Result<(), Error> {
    let mut stride = candidates.len();
    for axis in &scenario.sweep {
        stride /= axis.values.len();
        for (v, value) in axis.values.iter().enumerate() {
            let with_value = |index: &usize| (index / stride) % axis.values.len() == v;
            if (0..candidates.len()).filter(with_value).any(|index| candidates[index].point.is_ok()) {
                continue;
            }
            let (_, refusal) = refusals.iter().find(|(index, _)| with_value(index)).expect("a refused candidate");
            let key = refusal.key.as_deref().map_or_else(String::new, |key| format!("{key}: "));
            return Err(Error::Input(scenario.error(
                axis.origin.clone(),
                Some(format!("tune.{}", axis.name)),
                format!(
                    "{value} is refused in every combination searched ({key}{}); remove it or change the other values",
                    refusal.message
                ),
            )));
        }
    }
    Ok(())
}

/// A located message for an expression given on the command line, with a caret under the column.
fn flag_error(flag: &str, text: &str, error: &ExprError) -> Error {
    let caret = " ".repeat(error.column.saturating_sub(1));
    Error::Usage(format!("{flag} {text:?}: column {}: {}\n  {text}\n  {caret}^", error.column, error.message))
}

/// `strategy=full-jitter base=50ms`.
fn label(scenario: &Scenario, swept: &[Value]) -> String {
    let pairs: Vec<String> =
        scenario.sweep.iter().zip(swept).map(|(axis, value)| format!("{}={value}", axis.name)).collect();
    pairs.join(" ")
}

/// The metrics the objective and the constraints name, each once, in order.
fn named_metrics(objective: &Objective, constraints: &[Constraint]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let terms = objective.terms.iter().chain(constraints.iter().flat_map(|c| c.lhs.terms.iter()));
    for (_, name) in terms {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    names
}

/// The runs a search has done, kept between searches of the same study: one line per run, `hash replicate
/// metric-bits…` (hex, so values come back exact), under a header naming what else a run depends on.
struct Checkpoint;

impl Checkpoint {
    /// What a stored run depends on besides its point and replicate: this build, the model's metrics, the seed,
    /// the bucket and the event cap.
    fn header(settings: &SweepSettings, model: crate::model::ModelKind) -> String {
        let metrics: Vec<&str> = model.metrics().iter().map(|m| m.name).collect();
        format!(
            "retrylab-tune-runs 1 retrylab={} model={} seed={} bucket_ns={} max_events={} metrics={}",
            env!("CARGO_PKG_VERSION"),
            model.name(),
            settings.master_seed,
            settings.timeline_bucket.as_nanos(),
            settings.max_events_per_run.map_or("default".to_owned(), |cap| cap.to_string()),
            metrics.join(",")
        )
    }

    /// The runs stored under `header`, each with `metrics` values (none if the file is missing, from another
    /// study or build, or unreadable; a damaged line is skipped).
    fn read(path: &Path, header: &str, metrics: usize) -> HashMap<(u64, u32), Vec<f64>> {
        let Ok(text) = std::fs::read_to_string(path) else { return HashMap::new() };
        let mut lines = text.lines();
        if lines.next() != Some(header) {
            return HashMap::new();
        }
        let parse = |line: &str| -> Option<((u64, u32), Vec<f64>)> {
            let mut fields = line.split(' ');
            let hash = u64::from_str_radix(fields.next()?, 16).ok()?;
            let replicate = fields.next()?.parse().ok()?;
            let values: Vec<f64> =
                fields.map(|f| u64::from_str_radix(f, 16).ok().map(f64::from_bits)).collect::<Option<_>>()?;
            (values.len() == metrics).then_some(((hash, replicate), values))
        };
        lines.filter_map(parse).collect()
    }

    fn write(path: &Path, header: &str, runs: &HashMap<(u64, u32), Vec<f64>>) -> Result<(), Error> {
        let mut keys: Vec<&(u64, u32)> = runs.keys().collect();
        keys.sort();
        let mut text = format!("{header}\n");
        for key in keys {
            let _ = write!(text, "{:016x} {}", key.0, key.1);
            for value in &runs[key] {
                let _ = write!(text, " {:x}", value.to_bits());
            }
            text.push('\n');
        }
        atomic::write_atomic(path, text.as_bytes())
    }
}
