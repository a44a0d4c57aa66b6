//! `retrylab rare`: the probability that one point of a server scenario reaches an event within a horizon, by
//! multilevel splitting (src/analysis/rare/), with its interval, its cost in engine events and brute force's.
//! Everything that cannot work is refused before any run, at the key or flag to change. With `--out` or `--resume`
//! the pilot and each replication are kept as they finish (`checkpoint`), so an interrupted estimate goes on.

mod checkpoint;

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::fluid::stdout_error;
use super::{OutputKind, check_output_path};
use crate::Error;
use crate::analysis::rare::{self, Event, EventError, Replication, Report, Setup, Short};
use crate::engine::mix64;
use crate::model::server::ServerConfig;
use crate::model::server::branch::Importance;
use crate::model::{Configured, ModelKind};
use crate::report::sha256_hex;
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::time::{SimDuration, SimTime, parse_duration};
use crate::workload::Arrivals;
use checkpoint::{Folder, Stored};

/// The most replications `--replications` takes.
pub const MAX_REPLICATIONS: u32 = 1_000;

/// `--importance`: what the levels measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RareImportance {
    /// The server's live queue.
    Queue,
    /// The clients' open requests.
    Backlog,
}

/// Options of `retrylab rare`.
#[derive(Clone, Debug)]
pub struct RareOptions {
    pub scenario: PathBuf,
    /// The horizon T, as a duration.
    pub within: String,
    /// `stuck`, `tipped`, `queue>=N` or a condition on the run's metrics.
    pub event: String,
    /// Trajectories in all, pilot included.
    pub budget: u64,
    pub replications: u32,
    pub importance: RareImportance,
    /// `auto`, or `L1,L2,...`.
    pub levels: String,
    pub seed: Option<u64>,
    pub set: Vec<String>,
    pub threads: Option<usize>,
    pub csv: bool,
    /// Keep the pilot and each finished replication in this folder.
    pub out: Option<PathBuf>,
    /// Start from what an earlier estimate of the same study kept (in `out`, or `results/<stem>/rare`).
    pub resume: bool,
}

/// A point checked for splitting, with what the estimate needs.
struct Study {
    scenario: Scenario,
    point: PlannedPoint,
    config: ServerConfig,
    horizon: SimTime,
    event: Event,
}

/// `retrylab rare`: checks everything, runs the pilot and the replications (keeping them with `--out` or
/// `--resume`), prints the report or one CSV row.
pub fn rare(options: &RareOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let within = match parse_duration(&options.within) {
        Ok(within) if within > SimDuration::ZERO => within,
        Ok(_) => return Err(Error::Usage(format!("--within {}: must be longer than 0 (say 1h)", options.within))),
        Err(why) => return Err(Error::Usage(format!("--within {}: {why}", options.within))),
    };
    let levels = parse_levels(&options.levels)?;
    let importance = match options.importance {
        RareImportance::Queue => Importance::Queue,
        RareImportance::Backlog => Importance::Backlog,
    };
    let study = study(options, within, importance)?;
    let cap = match importance {
        Importance::Queue => study.config.queue_limit,
        Importance::Backlog => None,
    };
    check_levels(levels.as_deref(), cap, &study.event, importance)?;
    let master = options.seed.unwrap_or(study.scenario.seed);
    let seed_of = |replicate: u32| {
        let seeds = study.point.seeds(master, replicate);
        mix64(seeds.world ^ mix64(seeds.policy))
    };
    let setup = Setup {
        config: &study.config,
        bucket: study.scenario.timeline_bucket,
        horizon: study.horizon,
        max_events: crate::model::event_cap(study.scenario.max_events_per_run, &study.point.config),
        event: study.event.clone(),
        importance,
        levels,
        cap,
        budget: options.budget as usize,
        replication_seeds: (0..options.replications).map(seed_of).collect(),
        pilot_seed: seed_of(u32::MAX),
    };
    let folder = folder(options, &study, &setup, master)?;
    let report = match options.threads {
        None => estimate(options, &study, &setup, folder.as_ref()),
        Some(threads) => rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .map_err(|e| Error::Threads(e.to_string()))?
            .install(|| estimate(options, &study, &setup, folder.as_ref())),
    }?;
    let text = if options.csv {
        csv(&study, &setup, &report)
    } else {
        human(&study, &setup, &report, (master, &options.within))
    };
    stdout.write_all(text.as_bytes()).map_err(stdout_error)
}

/// The folder that `--out` or `--resume` keeps the work in (`None` without either), checked before any run.
fn folder(options: &RareOptions, study: &Study, setup: &Setup<'_>, master: u64) -> Result<Option<Folder>, Error> {
    if options.out.is_none() && !options.resume {
        return Ok(None);
    }
    let dir = options.out.clone().unwrap_or_else(|| super::default_out_dir(&study.scenario).join("rare"));
    let argument = if options.out.is_some() { "--out" } else { "the output folder" };
    check_output_path(argument, &dir, OutputKind::Folder)?;
    let record = checkpoint::Study {
        retrylab_version: env!("CARGO_PKG_VERSION").to_owned(),
        scenario_name: study.scenario.name.clone(),
        scenario_sha256: sha256_hex(study.scenario.source.as_bytes()),
        overrides: options.set.clone(),
        seed: master,
        within: (study.horizon - SimTime::ZERO).to_string(),
        event: study.event.describe(),
        importance: setup.importance.name().to_owned(),
        levels: setup.levels.as_ref().map_or_else(|| "auto".to_owned(), |levels| join(levels, ",")),
        budget: options.budget,
        replications: options.replications,
    };
    let folder = Folder::new(dir, record);
    folder.check(options.resume)?;
    Ok(Some(folder))
}

/// Plans and runs the estimate; with a folder, keeps the pilot and each replication there as they finish, and
/// with `--resume` starts from what an earlier estimate of the study kept.
fn estimate(options: &RareOptions, study: &Study, setup: &Setup<'_>, folder: Option<&Folder>) -> Result<Report, Error> {
    let count = setup.replication_seeds.len();
    let stored = match folder {
        Some(folder) if options.resume => folder.stored(&setup.replication_seeds)?,
        _ => Stored { pilot: None, replications: (0..count).map(|_| None).collect() },
    };
    let _lock = folder.map(|folder| folder.open(options.resume)).transpose()?;
    let had_pilot = stored.pilot.is_some();
    if let Some(folder) = folder.filter(|_| options.resume) {
        match stored.replications.iter().flatten().count() {
            0 if !had_pilot => eprintln!("note: nothing to resume in {}; starting afresh", folder.dir.display()),
            done => eprintln!(
                "note: resuming from {}: {}{done} of {count} replications already done",
                folder.dir.display(),
                if had_pilot { "the pilot and " } else { "" }
            ),
        }
    }
    // A signal ends the estimate with what the folder holds and how to go on.
    let interrupted = |signal: i32, pilot: bool, kept: usize| {
        let name = crate::interrupt::name(signal);
        let scenario = &study.scenario.name;
        let (message, resumable) = match folder {
            None => (
                format!(
                    "{scenario}: interrupted by {name}; nothing kept (with --resume each finished replication is \
                     kept, and the same command goes on from it)"
                ),
                false,
            ),
            Some(_) if !pilot && kept == 0 => {
                (format!("{scenario}: interrupted by {name} before the pilot finished; nothing kept"), false)
            }
            Some(folder) => (
                format!(
                    "{scenario}: interrupted by {name}; kept {}{kept} of {count} replications in {}",
                    if pilot { "the pilot and " } else { "" },
                    folder.dir.display()
                ),
                true,
            ),
        };
        Error::Interrupted { signal, message, resumable }
    };
    let planned = rare::plan(setup, stored.pilot);
    if let Some(signal) = crate::interrupt::requested() {
        return Err(interrupted(signal, had_pilot, stored.replications.iter().flatten().count()));
    }
    let plan = planned.map_err(|Short::Budget { needed, why }| {
        Error::Usage(format!("--budget {}: {why}; raise --budget to about {needed}", options.budget))
    })?;
    let done = match folder {
        Some(folder) => {
            if !had_pilot {
                folder.keep_pilot(&plan.pilot)?;
            }
            folder.fit(stored.replications, &plan.design)
        }
        None => vec![None; count],
    };
    let already = done.iter().flatten().count();
    let saved = AtomicUsize::new(0);
    let keep = |index: usize, replication: &Replication| {
        if let Some(folder) = folder {
            folder.keep(index, setup.replication_seeds[index], &plan.design, replication)?;
            saved.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    };
    let replications = rare::replications(setup, &plan.design, done, &keep).map_err(|error| match error {
        Error::Interrupted { signal, .. } => interrupted(signal, true, already + saved.load(Ordering::Relaxed)),
        other => other,
    })?;
    Ok(rare::report(setup, &plan, replications))
}

/// `auto`, or strictly rising levels above 0.
fn parse_levels(text: &str) -> Result<Option<Vec<u64>>, Error> {
    if text.trim() == "auto" {
        return Ok(None);
    }
    let bad =
        |why: &str| Error::Usage(format!("--levels {text}: {why}; write auto or rising whole numbers, e.g. 5,10,20"));
    let levels: Vec<u64> = text
        .split(',')
        .map(|part| part.trim().parse::<u64>())
        .collect::<Result<_, _>>()
        .map_err(|_| bad("not a list of whole numbers"))?;
    if levels.first() == Some(&0) || levels.windows(2).any(|pair| pair[0] >= pair[1]) {
        return Err(bad("each level must be above 0 and above the one before"));
    }
    Ok(Some(levels))
}

/// Explicit levels the importance can reach, below a queue event's level.
fn check_levels(levels: Option<&[u64]>, cap: Option<u64>, event: &Event, importance: Importance) -> Result<(), Error> {
    let Some(levels) = levels else { return Ok(()) };
    let top = levels.last().copied().unwrap_or(0);
    if let Some(cap) = cap
        && top > cap
    {
        return Err(Error::Usage(format!(
            "--levels: {top} is above the queue limit {cap}, which the queue never passes; keep every level at most {cap}"
        )));
    }
    if let (Event::QueueAtLeast(target), Importance::Queue) = (event, importance)
        && top > *target
    {
        return Err(Error::Usage(format!(
            "--levels: {top} is above the event's queue>={target}, where splitting already stops; keep the levels below {target}"
        )));
    }
    Ok(())
}

/// Loads the scenario (its `duration` set to the horizon), checks that splitting can estimate the event on it,
/// and resolves a verdict's missing trigger to `warmup`.
fn study(options: &RareOptions, within: SimDuration, importance: Importance) -> Result<Study, Error> {
    let scenario = Scenario::load(&options.scenario, &options.set)?;
    if scenario.model != ModelKind::Server {
        return Err(scenario
            .error(
                scenario.origin_of_text("kind"),
                Some("model.kind".into()),
                format!(
                    "`retrylab rare` splits runs of the server model only (kind = \"server\"); this scenario's model \
                     is \"{}\"",
                    scenario.model.name()
                ),
            )
            .into());
    }
    let (scenario, points) = with_horizon(options, scenario, within)?;
    for point in &points {
        let Configured::Server(config) = &point.config.0 else { unreachable!("a server scenario's point") };
        refuse_unsplittable(&scenario, config, importance)?;
    }
    if points.len() != 1 {
        let axes: Vec<&str> = scenario.sweep.iter().map(|axis| axis.name).collect();
        return Err(scenario
            .refuse_at(
                axes[0],
                &format!(
                    "`retrylab rare` estimates one point, and this scenario sweeps {} into {} points: pin each swept key \
                     with --set KEY=VALUE",
                    axes.join(", "),
                    points.len()
                ),
            )
            .into());
    }
    let point = points.into_iter().next().expect("one point");
    let Configured::Server(config) = &point.config.0 else { unreachable!("a server scenario's point") };
    let mut config = ServerConfig::clone(config);
    let horizon = SimTime::ZERO + within;
    let metrics: Vec<&str> = ModelKind::Server.metrics().iter().map(|m| m.name).collect();
    let event = Event::parse(&options.event, &metrics).map_err(|error| match error {
        EventError::Level(why) => Error::Usage(format!("--event {:?}: {why}", options.event)),
        EventError::Expr(error) => {
            let caret = " ".repeat(error.column.saturating_sub(1));
            let text = &options.event;
            Error::Usage(format!("--event {text:?}: column {}: {}\n  {text}\n  {caret}^", error.column, error.message))
        }
    })?;
    if let (Event::QueueAtLeast(level), Some(limit)) = (&event, config.queue_limit)
        && *level > limit
    {
        return Err(scenario
            .refuse_at(
                "queue_limit",
                &format!(
                    "the queue never holds more than queue_limit = {limit}, so --event queue>={level} can never occur; \
                     ask for queue>={limit} at most, or raise queue_limit"
                ),
            )
            .into());
    }
    if event.needs_verdict() {
        judge_from_warmup(&scenario, &mut config, horizon)?;
    }
    Ok(Study { scenario, point, config, horizon, event })
}

/// The scenario planned with `duration` at the horizon, so arrivals stop and the verdict ends there (a burst has
/// no duration: the horizon only bounds when levels count).
fn with_horizon(
    options: &RareOptions,
    scenario: Scenario,
    within: SimDuration,
) -> Result<(Scenario, Vec<PlannedPoint>), Error> {
    let points = plan(&scenario)?;
    let burst = points.iter().all(|point| {
        matches!(&point.config.0, Configured::Server(config) if matches!(config.workload.arrivals, Arrivals::Burst { .. }))
    });
    if burst {
        return Ok((scenario, points));
    }
    let mut set = options.set.clone();
    set.push(format!("duration={}", within));
    let scenario = Scenario::load(&options.scenario, &set)?;
    let points = plan(&scenario)?;
    Ok((scenario, points))
}

/// Refuses what a branched run cannot reproduce: clocks (aligned retries, periodic jobs), whose streams a copy
/// would share, and a queue importance where the queue never fills.
fn refuse_unsplittable(scenario: &Scenario, config: &ServerConfig, importance: Importance) -> Result<(), Error> {
    if matches!(config.workload.arrivals, Arrivals::Periodic { .. }) {
        return Err(scenario
            .refuse_at(
                "kind",
                "`retrylab rare` does not split periodic workloads (their clocks); use an open or closed workload",
            )
            .into());
    }
    if config.clock.is_some() {
        return Err(scenario
            .refuse_at("align", "`retrylab rare` does not split runs whose clients wait by their clocks; unset align")
            .into());
    }
    if importance == Importance::Queue && config.workers.is_none() {
        return Err(scenario
            .refuse_at(
                "workers",
                "with unlimited workers nothing ever waits in the queue, so it cannot guide splitting: set workers, or \
                 use --importance backlog",
            )
            .into());
    }
    Ok(())
}

/// `stuck` and `tipped` are judged from the trigger's end; a scenario without a trigger is judged from `warmup`
/// (t = 0 without one). Refuses a horizon that leaves less than `stuck_hold` to judge.
fn judge_from_warmup(scenario: &Scenario, config: &mut ServerConfig, horizon: SimTime) -> Result<(), Error> {
    if config.trigger_end.is_none() {
        config.trigger_end = Some(config.workload.warmup);
    }
    let from = config.trigger_end.expect("set above");
    let hold = config.verdict.stuck_hold;
    if from >= horizon || horizon - from < hold {
        let left = horizon.saturating_since(from);
        return Err(scenario
            .refuse_at(
                "stuck_hold",
                &format!(
                    "the horizon leaves {} after the trigger's end (or warmup) at {}, less than stuck_hold = {}: no run \
                     can tip; raise --within or lower stuck_hold",
                    left,
                    from - SimTime::ZERO,
                    hold
                ),
            )
            .into());
    }
    Ok(())
}

fn join<T: ToString>(values: &[T], separator: &str) -> String {
    values.iter().map(ToString::to_string).collect::<Vec<_>>().join(separator)
}

/// The report in words.
fn human(study: &Study, setup: &Setup<'_>, report: &Report, (master, within): (u64, &str)) -> String {
    let within = within.trim();
    let event = study.event.describe();
    let e = &report.estimate;
    let how = if report.auto_levels {
        format!("auto, from a pilot of {} runs", report.pilot_runs)
    } else {
        format!("given; {} plain runs measured a run's cost", report.pilot_runs)
    };
    let stages: Vec<String> = report.stage_probabilities.iter().map(|p| format!("{p:.3}")).collect();
    let spent = (report.events + report.pilot_events) as f64;
    let mut text = format!("rare event in {}: {event} within {within}\n", study.scenario.display_path());
    text += &format!("importance: {}; levels ({how}): {}\n", setup.importance.name(), join(&report.levels, ", "));
    text += &format!(
        "{} replications of {} trajectories per stage (seed {master})\n\n",
        report.replications.len(),
        report.effort
    );
    text += &format!(
        "P({event} within {within}) = {:.3e}   95% interval [{:.3e}, {:.3e}]   relative half-width {:.0}%\n",
        e.mean,
        e.lo95,
        e.hi95,
        100.0 * report.relative_half_width
    );
    if !stages.is_empty() {
        text += &format!("stage probabilities (share reaching the next level): {}\n", stages.join(" "));
    }
    text += &format!(
        "cost: {spent:.3e} engine events ({:.3e} in the pilot); a plain run: {:.0} events\n",
        report.pilot_events as f64, report.run_events
    );
    if e.mean > 0.0 && report.relative_half_width > 0.0 {
        text += &format!(
            "brute force for the same interval: about {:.3e} events, {:.0}× this cost\n",
            report.brute_force_events,
            report.brute_force_events / spent
        );
        text += &format!("variance ratio against plain Monte Carlo at equal cost: {:.3}\n", report.variance_ratio);
    } else if e.mean == 0.0 {
        text += "no replication reached the event: the estimate is 0 with no interval; raise --budget, or check the \
                 event can happen within the horizon\n";
    }
    text
}

/// The CSV header of `--csv`.
pub const RARE_CSV_HEADER: &str = "event,within_ms,importance,levels,replications,runs_per_stage,estimate,lo95,hi95,\
rhw,stage_probabilities,events,pilot_events,run_events,brute_force_events,variance_ratio";

/// One row under [`RARE_CSV_HEADER`]; levels and stage probabilities are space-separated.
fn csv(study: &Study, setup: &Setup<'_>, report: &Report) -> String {
    let e = &report.estimate;
    let quote =
        |text: String| if text.contains([',', '"']) { format!("\"{}\"", text.replace('"', "\"\"")) } else { text };
    format!(
        "{RARE_CSV_HEADER}\n{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n",
        quote(study.event.describe()),
        (study.horizon - SimTime::ZERO).as_millis_f64(),
        setup.importance.name(),
        join(&report.levels, " "),
        report.replications.len(),
        report.effort,
        e.mean,
        e.lo95,
        e.hi95,
        report.relative_half_width,
        join(&report.stage_probabilities, " "),
        report.events,
        report.pilot_events,
        report.run_events,
        report.brute_force_events,
        report.variance_ratio
    )
}
