//! `retrylab tune`: races the candidate policies of a scenario's `[tune]` table on common random numbers (see
//! `tune::race`) and writes the ranking (tune.csv), the winner's `[client]` block (recommendation.toml) and a chart
//! of every candidate's objective with its 95% interval (tune.svg, tune.png). Runs are checkpointed after each
//! round (`.retrylab-tune-runs`), so `--resume` continues an interrupted search, or a finished one with a larger budget,
//! without running anything twice.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::Error;
use crate::params::{ParamKind, Value};
use crate::report::{atomic, csv_finish, csv_writer, draw_candidates, format_number};
use crate::scenario::{MAX_BUDGET, Origin, PlannedPoint, Scenario, Setting, plan_one, swept_at};
use crate::stats::Estimate;
use crate::sweep::{PointWork, SweepSettings, run_work};
use crate::tune::expr::{Constraint, ExprError, Objective, parse_constraint, parse_objective};
use crate::tune::race::{Race, Status};

/// Candidates at most in one search: more is a typo in a range.
const MAX_CANDIDATES: usize = 10_000;
/// Runs per candidate the default budget allows.
const DEFAULT_RUNS_PER_CANDIDATE: u64 = 40;
/// Candidates the chart shows: one colour each.
const CHART_CANDIDATES: usize = 10;
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
struct Candidate {
    label: String,
    point: Result<usize, String>,
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
    let metric_names: Vec<&str> = scenario.model.metrics().iter().map(|m| m.name).collect();
    let objective = match (&options.objective, table.objective) {
        (Some(text), _) => parse_objective(text, &metric_names).map_err(|e| flag_error("--objective", text, &e))?,
        (None, Some(objective)) => objective,
        (None, None) => {
            return Err(Error::Input(scenario.error(
                table.origin.clone(),
                Some("tune.objective".into()),
                "missing: set `objective` in [tune] or give --objective, e.g. \"calls + 0.01 * latency_p99_ms\"",
            )));
        }
    };
    let constraints: Vec<Constraint> = if options.constraints.is_empty() {
        table.constraints
    } else {
        let parse =
            |text: &String| parse_constraint(text, &metric_names).map_err(|e| flag_error("--constraint", text, &e));
        options.constraints.iter().map(parse).collect::<Result<_, _>>()?
    };
    if table.space.is_empty() {
        return Err(Error::Input(scenario.error(
            table.origin.clone(),
            Some("tune".into()),
            "searches nothing: list [client] values to compare, e.g. strategy = [\"exponential\", \"full-jitter\"]",
        )));
    }
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
    let mut first_refusal = None;
    for index in 0..count {
        let label = label(&scenario, &swept_at(&scenario, index));
        let point = match plan_one(&scenario, index) {
            Ok(planned) => {
                points.push(planned);
                Ok(points.len() - 1)
            }
            Err(refusal) => {
                let message = refusal.message.clone();
                first_refusal.get_or_insert(refusal);
                Err(message)
            }
        };
        candidates.push(Candidate { label, point });
    }
    if points.is_empty() {
        return Err(Error::Input(first_refusal.expect("every candidate was refused")));
    }
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
    let mut stored = HashMap::new();
    if options.resume {
        stored = Checkpoint::read(&out.join(CHECKPOINT), &checkpoint, model.metrics().len());
        if stored.is_empty() && !options.quiet {
            eprintln!("note: no runs of this study to resume in {}; starting afresh", out.join(CHECKPOINT).display());
        }
    }
    let mut fresh = 0_u64;
    let point_of: Vec<usize> = candidates.iter().map(|c| c.point.clone().unwrap_or(usize::MAX)).collect();
    let mut candidate_of = vec![0; points.len()];
    for (candidate, &point) in point_of.iter().enumerate().filter(|(_, p)| **p != usize::MAX) {
        candidate_of[point] = candidate;
    }
    let mut race = Race::new(&same_as, objective, constraints, budget);
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
                return Err(Error::Interrupted {
                    signal,
                    message: format!(
                        "{}: interrupted by {}; kept {} runs of finished rounds in {}",
                        scenario.name,
                        crate::interrupt::name(signal),
                        stored.len(),
                        out.join(CHECKPOINT).display()
                    ),
                    resumable: !stored.is_empty(),
                });
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
        Checkpoint::write(&out.join(CHECKPOINT), &checkpoint, &stored)?;
        race.judge(|i| candidates[i].label.clone());
    }
    bar.finish_and_clear();

    let ranking = race.ranking();
    let winner = ranking[0];
    let named = named_metrics(&race.objective, &race.constraints);
    let means = |candidate: usize, metric: &str| -> Estimate {
        let n = race.entries[candidate].replicates();
        let values: Vec<f64> = (0..n).map(|r| value(&stored[&(points[point_of[candidate]].hash, r)], metric)).collect();
        Estimate::of(&values)
    };
    let mut written = Vec::new();
    let csv = tune_csv(&scenario, &candidates, &points, &race, &ranking, &named, &means);
    atomic::write_atomic(&out.join("tune.csv"), &csv)?;
    written.push(out.join("tune.csv"));
    let recommendation = recommendation(&scenario, &candidates, &points, &race, &ranking, budget, &means);
    atomic::write_atomic(&out.join("recommendation.toml"), recommendation.as_bytes())?;
    written.push(out.join("recommendation.toml"));
    written.extend(chart(&scenario, &candidates, &race, &ranking, &out.join("tune"))?);

    if options.quiet {
        return Ok(());
    }
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
    let tied: Vec<&str> =
        ranking.iter().filter(|&&i| tied_with(&race, i, winner)).map(|&i| candidates[i].label.as_str()).collect();
    if !tied.is_empty() {
        let _ = writeln!(stdout, "tied:  {} (the same score on every replicate)", tied.join("; "));
    }
    if let Some(&second) = runner_up(&race, &ranking) {
        let difference = race.versus(second, winner);
        let _ = writeln!(
            stdout,
            "next:  {}  (+{} ± {} paired 95% CI, unpaired ± {})",
            candidates[second].label,
            format_number(difference.mean),
            format_number(difference.paired_ci95),
            format_number(difference.unpaired_ci95),
        );
    }
    if options.show {
        let _ = writeln!(stdout, "\n{}", String::from_utf8_lossy(&csv));
    }
    for path in &written {
        let _ = writeln!(stdout, "wrote {}", path.display());
    }
    Ok(())
}

/// Whether candidate `i` left the race tied with `winner`.
fn tied_with(race: &Race, i: usize, winner: usize) -> bool {
    matches!(race.entries[i].status, Status::Tied { with, .. } if with == winner)
}

/// The best candidate after the winner and those tied with it.
fn runner_up<'r>(race: &Race, ranking: &'r [usize]) -> Option<&'r usize> {
    ranking.iter().skip(1).find(|&&i| !tied_with(race, i, ranking[0]))
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

fn status_text(race: &Race, candidates: &[Candidate], i: usize, rank: Option<usize>) -> String {
    match &race.entries[i].status {
        Status::Racing if rank == Some(1) => "best".into(),
        Status::Racing => "undecided".into(),
        Status::Dropped { replicates, reason } => format!("dropped after {replicates}: {reason}"),
        Status::Tied { replicates, with } => {
            format!("dropped after {replicates}: scores exactly as {} on every replicate", candidates[*with].label)
        }
        Status::SameAs(j) if *j == i => format!("refused: {}", candidates[i].point.clone().err().unwrap_or_default()),
        Status::SameAs(j) => format!("same policy as {}", candidates[*j].label),
    }
}

/// tune.csv: every candidate, ranked ones first; per candidate its swept values, the effective policy, replicates
/// spent, the objective's mean and interval, its paired difference from the best, and the named metrics' means.
fn tune_csv(
    scenario: &Scenario,
    candidates: &[Candidate],
    points: &[PlannedPoint],
    race: &Race,
    ranking: &[usize],
    named: &[String],
    means: &dyn Fn(usize, &str) -> Estimate,
) -> Vec<u8> {
    let mut out = csv_writer();
    let mut header: Vec<String> = vec!["rank".into()];
    header.extend(scenario.sweep.iter().map(|axis| axis.name.to_owned()));
    header.extend(
        [
            "replicates",
            "objective_mean",
            "objective_ci95",
            "vs_best_mean",
            "vs_best_paired_ci95",
            "vs_best_unpaired_ci95",
            "feasible",
        ]
        .map(str::to_owned),
    );
    header.extend(named.iter().flat_map(|m| [format!("{m}_mean"), format!("{m}_ci95")]));
    header.extend(["status", "policy"].map(str::to_owned));
    let _ = out.write_record(&header);
    let winner = ranking[0];
    let unranked = (0..candidates.len()).filter(|i| !ranking.contains(i));
    for (position, i) in ranking.iter().copied().chain(unranked).enumerate() {
        let rank = (position < ranking.len()).then_some(position + 1);
        let point = candidates[i].point.as_ref().ok().map(|&p| &points[p]);
        let mut row: Vec<String> = vec![rank.map_or_else(String::new, |r| r.to_string())];
        row.extend(swept_at(scenario, i).iter().map(Value::to_string));
        if rank.is_some() {
            let estimate = Estimate::of(&race.entries[i].objective);
            let versus = race.versus(i, winner);
            row.push(race.entries[i].replicates().to_string());
            row.extend(
                [estimate.mean, estimate.ci95, versus.mean, versus.paired_ci95, versus.unpaired_ci95]
                    .map(format_number),
            );
            row.push(race.feasible(i).to_string());
            for metric in named {
                let e = means(i, metric);
                row.extend([format_number(e.mean), format_number(e.ci95)]);
            }
        } else {
            row.extend(std::iter::repeat_n(String::new(), 7 + 2 * named.len()));
        }
        row.push(status_text(race, candidates, i, rank));
        row.push(point.and_then(|p| p.policy.clone()).unwrap_or_default());
        let _ = out.write_record(&row);
    }
    csv_finish(out)
}

/// A value as TOML writes it: numbers bare, names and durations quoted, lists as arrays of strings.
fn toml_value(kind: ParamKind, value: &Value) -> String {
    match value {
        Value::Count(_) | Value::Real(_) => value.to_string(),
        Value::Text(text) if kind.takes_a_list() => {
            let items: Vec<String> = text.split(", ").map(|item| format!("{item:?}")).collect();
            format!("[{}]", items.join(", "))
        }
        _ => format!("{:?}", value.to_string()),
    }
}

/// recommendation.toml: the winner's `[client]` block (the scenario's own `[client]` values, the searched ones
/// replaced), with the evidence in comments.
fn recommendation(
    scenario: &Scenario,
    candidates: &[Candidate],
    points: &[PlannedPoint],
    race: &Race,
    ranking: &[usize],
    budget: u64,
    means: &dyn Fn(usize, &str) -> Estimate,
) -> String {
    let winner = ranking[0];
    let estimate = Estimate::of(&race.entries[winner].objective);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "# retrylab tune {} (seed {}): {} runs of a budget of {budget}",
        scenario.display_path(),
        scenario.seed,
        race.spent()
    );
    let _ = writeln!(
        text,
        "# best of {} candidates: {} = {} ± {} (95% CI, {} replicates)",
        candidates.len(),
        race.objective,
        format_number(estimate.mean),
        format_number(estimate.ci95),
        race.entries[winner].replicates()
    );
    for constraint in &race.constraints {
        let holds = constraint.holds(|m| means(winner, m).mean);
        let _ = writeln!(
            text,
            "# {constraint}: {}",
            if holds { "met (by the mean)" } else { "NOT met: no candidate meets every constraint" }
        );
    }
    for &i in ranking.iter().filter(|&&i| tied_with(race, i, winner)) {
        let _ = writeln!(text, "# tied: {} scores exactly as the best on every replicate", candidates[i].label);
    }
    if let Some(&second) = runner_up(race, ranking) {
        let d = race.versus(second, winner);
        let _ = writeln!(
            text,
            "# runner-up {}: worse by {} ± {} (paired 95% CI over {} common replicates)",
            candidates[second].label,
            format_number(d.mean),
            format_number(d.paired_ci95),
            d.replicates
        );
    }
    if let Ok(&point) = candidates[winner].point.as_ref()
        && let Some(policy) = &points[point].policy
    {
        let _ = writeln!(text, "# effective policy: {policy}");
    }
    let _ = writeln!(text, "[client]");
    let swept = swept_at(scenario, winner);
    let client = scenario.settings.iter().filter(|s: &&Setting| s.spec.section == crate::params::Section::Client);
    for setting in client {
        let searched = scenario.sweep.iter().position(|axis| std::ptr::eq(axis.spec, setting.spec));
        let value = match searched {
            Some(axis) => Some(swept[axis].clone()),
            None if setting.origin != Origin::Default => setting.value.clone(),
            None => None,
        };
        if let Some(value) = value {
            let _ = writeln!(text, "{} = {}", setting.spec.key, toml_value(setting.spec.kind, &value));
        }
    }
    text
}

/// tune.svg and tune.png: the best candidates' objective means with their intervals.
fn chart(
    scenario: &Scenario,
    candidates: &[Candidate],
    race: &Race,
    ranking: &[usize],
    stem: &Path,
) -> Result<Vec<PathBuf>, Error> {
    let bars: Vec<(String, f64, f64, f64)> = ranking
        .iter()
        .take(CHART_CANDIDATES)
        .enumerate()
        .map(|(position, &i)| {
            let e = Estimate::of(&race.entries[i].objective);
            let mark = if race.feasible(i) { "" } else { " (breaks a constraint)" };
            let dropped = if race.entries[i].status == Status::Racing { "" } else { " (dropped)" };
            (format!("#{} {}{mark}{dropped}", position + 1, candidates[i].label), e.mean, e.lo95, e.hi95)
        })
        .collect();
    let constraints: Vec<String> = race.constraints.iter().map(ToString::to_string).collect();
    let shown = if ranking.len() > CHART_CANDIDATES {
        format!("best {CHART_CANDIDATES} of {}", ranking.len())
    } else {
        format!("{} candidates", ranking.len())
    };
    let subject =
        if constraints.is_empty() { String::new() } else { format!(" · subject to {}", constraints.join(", ")) };
    draw_candidates(
        format!("{}: tune", scenario.name),
        format!(
            "{shown} · lower is better{subject} · whiskers: each one's 95% CI; the race compares paired differences (tune.csv) · {} runs",
            race.spent()
        ),
        format!("objective: {}", race.objective),
        bars,
        stem,
    )
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
