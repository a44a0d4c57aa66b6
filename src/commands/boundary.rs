//! `retrylab boundary`: the value of one parameter at which a system tips into a stuck state, by bisection.
//!
//! Each probe pins the parameter (as `--set KEY=VALUE` would) and runs replicates of the one point that is left,
//! in batches, until the Wilson 95% interval of its stuck fraction (the share of runs whose `stuck` is 1; or whose
//! `--verdict` metric is, any outcome of the model such as the channel's `growing`) lies
//! wholly below or wholly above the target fraction Q (`--stuck`, one half by default), or `max_replicates` is
//! reached. The two ends must fall on opposite sides; the bracket is then halved at its midpoint until it is no
//! wider than the tolerance. A probe still undecided after `max_replicates` is at the boundary within the noise
//! of that many runs: the search stops there. Replicate seeds are the ones `retrylab run` uses, so the result
//! depends on the arguments alone. Every argument, both ends' points included, is checked before the first
//! probe runs.

use std::io::Write;
use std::path::PathBuf;

use crate::Error;
use crate::model::Unit;
use crate::params::{ParamKind, Value};
use crate::scenario::{Scenario, plan};
use crate::stats::{Estimate, Support};
use crate::sweep::{PointWork, SweepSettings, run_work};
use crate::time::{SimDuration, parse_duration};

/// The stuck fraction the boundary separates unless `--stuck` says otherwise.
pub const DEFAULT_STUCK_FRACTION: f64 = 0.5;
/// The outcome judged per run unless `--verdict` says otherwise.
pub const DEFAULT_VERDICT: &str = "stuck";
/// Replicates run per batch of a probe.
const BATCH: u32 = 10;
/// Probes after which the search stops whatever the tolerance (a bracket halved 40 times).
const MAX_PROBES: usize = 42;

/// Options of `retrylab boundary`.
#[derive(Clone, Debug)]
pub struct BoundaryOptions {
    pub scenario: PathBuf,
    /// The parameter searched: a numeric or duration key of the scenario's model.
    pub over: String,
    /// The bracket's ends, as the key's values are written; default: the ends of the key's sweep axis.
    pub between: Option<(String, String)>,
    /// Stop once the bracket is this narrow (written as the key's values are); default: 1/64 of the bracket.
    pub tolerance: Option<String>,
    pub set: Vec<String>,
    /// Replicates at most per probe.
    pub max_replicates: u32,
    pub threads: Option<usize>,
    /// Write CSV (one row per probe, with the boundary found) instead of the table.
    pub csv: bool,
    /// `--stuck Q`: the stuck fraction whose crossing is the boundary, strictly between 0 and 1.
    pub stuck_fraction: f64,
    /// `--verdict METRIC`: the outcome metric (1 or 0 per run) whose share is judged; [`DEFAULT_VERDICT`] by default.
    pub verdict: String,
}

/// The numeric kind of the searched key: values are bisected as numbers and written back in its syntax.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Scale {
    Count,
    Real,
    /// In nanoseconds.
    Duration,
}

impl Scale {
    /// The scale of a numeric or duration parameter; `None` for any other kind.
    pub(crate) fn of_kind(kind: &ParamKind) -> Option<Scale> {
        match kind {
            ParamKind::Count { .. } => Some(Scale::Count),
            ParamKind::Real { .. } => Some(Scale::Real),
            ParamKind::Duration => Some(Scale::Duration),
            _ => None,
        }
    }

    pub(crate) fn parse(self, key: &str, text: &str) -> Result<f64, Error> {
        let bad = |why: String| Error::Usage(format!("boundary: `{text}` is not a value of {key}: {why}"));
        match self {
            Scale::Duration => parse_duration(text).map(|d| d.as_nanos() as f64).map_err(bad),
            Scale::Count | Scale::Real => {
                text.trim().parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| bad("write a number".into()))
            }
        }
    }

    pub(crate) fn of_value(self, value: &Value) -> Option<f64> {
        match (self, value) {
            (Scale::Count, Value::Count(n)) => Some(*n as f64),
            (Scale::Real, Value::Real(x)) => Some(*x),
            (Scale::Duration, Value::Duration(d)) => Some(d.as_nanos() as f64),
            _ => None,
        }
    }

    /// The value as `--set` takes it (counts rounded, durations to the nanosecond).
    pub(crate) fn write(self, x: f64) -> String {
        match self {
            Scale::Count => format!("{}", x.round()),
            Scale::Real => format!("{x}"),
            Scale::Duration => SimDuration::from_nanos_f64(x).to_string(),
        }
    }

    /// The value as the outputs show it: durations in ms.
    pub(crate) fn show(self, x: f64) -> String {
        match self {
            Scale::Duration => format!("{}ms", (x / 1e4).round() / 100.0),
            Scale::Count => format!("{}", x.round()),
            Scale::Real => format!("{}", (x * 1e4).round() / 1e4),
        }
    }
}

/// What a probe found.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Side {
    Stable,
    Stuck,
    /// Neither within `max_replicates`: at the boundary within the noise.
    Undecided,
}

impl Side {
    /// The side's word, the verdict's name for the side past the boundary (`stuck` unless `--verdict` says).
    fn name(self, verdict: &str) -> &str {
        match self {
            Side::Stable => "stable",
            Side::Stuck => verdict,
            Side::Undecided => "undecided",
        }
    }
}

struct Probe {
    value: f64,
    runs: u32,
    stuck: u32,
    estimate: Estimate,
    side: Side,
}

/// `retrylab boundary`: prints each probe, then the boundary and its bracket (or CSV, [`CSV_HEADER`]).
pub fn boundary(options: &BoundaryOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let target = options.stuck_fraction;
    if !(target > 0.0 && target < 1.0) {
        return Err(Error::Usage(format!(
            "boundary: --stuck {target} must lie strictly between 0 and 1 (the share of runs stuck at the boundary; \
             default {DEFAULT_STUCK_FRACTION})"
        )));
    }
    let scenario = Scenario::load(&options.scenario, &options.set)?;
    let key = options.over.rsplit('.').next().unwrap_or(&options.over);
    let spec = scenario.model.params().find(|spec| spec.answers_to(None, key)).ok_or_else(|| {
        Error::Usage(format!("boundary: the {} model has no parameter `{}`", scenario.model.name(), options.over))
    })?;
    let Some(scale) = Scale::of_kind(&spec.kind) else {
        return Err(Error::Usage(format!(
            "boundary: {} is not a number or a duration; search a load, a length or a capacity",
            spec.key
        )));
    };
    let verdict = options.verdict.as_str();
    let outcomes: Vec<&str> =
        scenario.model.metrics().iter().filter(|spec| spec.unit == Unit::Outcome).map(|spec| spec.name).collect();
    let stuck_index = scenario
        .model
        .metric_index(verdict)
        .filter(|&index| scenario.model.metrics()[index].unit == Unit::Outcome)
        .ok_or_else(|| {
            Error::Usage(if verdict == DEFAULT_VERDICT {
                format!(
                    "boundary: the {} model has no stuck-state verdict (server and layers do){}",
                    scenario.model.name(),
                    if outcomes.is_empty() { String::new() } else { format!("; judge one of its outcomes with --verdict: {}", outcomes.join(", ")) }
                )
            } else {
                format!(
                    "boundary: --verdict {verdict} is not an outcome of the {} model (a metric that is 1 or 0 per run); \
                     its outcomes: {}",
                    scenario.model.name(),
                    if outcomes.is_empty() { "none".to_owned() } else { outcomes.join(", ") }
                )
            })
        })?;
    let (mut low, mut high) = match &options.between {
        Some((a, b)) => (scale.parse(spec.key, a)?, scale.parse(spec.key, b)?),
        None => {
            let axis = scenario.axis(key).ok_or_else(|| {
                Error::Usage(format!(
                    "boundary: {} is not swept in {}; give --between A B",
                    spec.key,
                    scenario.display_path()
                ))
            })?;
            let values: Vec<f64> = axis.values.iter().filter_map(|v| scale.of_value(v)).collect();
            let min = values.iter().copied().fold(f64::INFINITY, f64::min);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (min, max)
        }
    };
    if low.partial_cmp(&high) != Some(std::cmp::Ordering::Less) {
        return Err(Error::Usage(format!(
            "boundary: the bracket of {} must run from a smaller to a larger value (got {} to {})",
            spec.key,
            scale.show(low),
            scale.show(high)
        )));
    }
    let tolerance = match &options.tolerance {
        Some(text) => scale.parse(spec.key, text)?,
        None => (high - low) / 64.0,
    };
    if options.tolerance.is_some() && tolerance <= 0.0 {
        return Err(Error::Usage(format!(
            "boundary: --tolerance {} must be greater than 0 (in {}'s units): the search stops once the bracket is \
             this narrow",
            options.tolerance.as_deref().unwrap_or_default(),
            spec.key
        )));
    }
    // Counts are bisected in whole steps.
    let tolerance = if scale == Scale::Count { tolerance.max(1.0) } else { tolerance };

    // The scenario with KEY pinned at `value`, and its one point: both ends are checked this way before either
    // is probed.
    let pinned = |value: f64| -> Result<(Scenario, Vec<crate::scenario::PlannedPoint>), Error> {
        let mut set = options.set.clone();
        set.push(format!("{}={}", spec.key, scale.write(value)));
        let scenario = Scenario::load(&options.scenario, &set)?;
        let points = plan(&scenario)?;
        if points.len() != 1 {
            let swept: Vec<&str> = scenario.sweep.iter().map(|axis| axis.name).collect();
            return Err(Error::Usage(format!(
                "boundary: with {} pinned the scenario still has {} points; pin {} with --set",
                spec.key,
                points.len(),
                swept.join(", ")
            )));
        }
        Ok((scenario, points))
    };
    for end in [low, high] {
        pinned(end)?;
    }

    let probe = |value: f64| -> Result<Probe, Error> {
        let (scenario, points) = pinned(value)?;
        let settings = SweepSettings::for_scenario(&scenario, options.threads);
        let mut verdicts = Vec::new();
        loop {
            let start = verdicts.len() as u32;
            let work = [PointWork { point: 0, replicates: (start..start + BATCH).collect() }];
            let runs = run_work(&points, &work, settings, &|| {}, &|_, _| Ok(()))?.runs;
            for run in runs {
                let stuck = run.output.metrics[stuck_index];
                if stuck.is_nan() && verdict == DEFAULT_VERDICT {
                    return Err(Error::Usage(format!(
                        "boundary: at {}={} a run has no verdict: the scenario needs a trigger (an outage, a fault \
                         window or trigger_end) followed by at least stuck_hold of arrivals",
                        spec.key,
                        scale.write(value)
                    )));
                }
                if stuck.is_nan() {
                    return Err(Error::Usage(format!(
                        "boundary: at {}={} a run leaves {verdict} empty: this point of the {} model does not judge it",
                        spec.key,
                        scale.write(value),
                        scenario.model.name()
                    )));
                }
                verdicts.push(stuck);
            }
            let estimate = Estimate::within(&verdicts, Support::Binary);
            let side = if estimate.hi95 < target {
                Side::Stable
            } else if estimate.lo95 > target {
                Side::Stuck
            } else {
                Side::Undecided
            };
            let runs = verdicts.len() as u32;
            if side != Side::Undecided || runs >= options.max_replicates {
                let stuck = verdicts.iter().filter(|&&v| v == 1.0).count() as u32;
                return Ok(Probe { value, runs, stuck, estimate, side });
            }
        }
    };

    // Each probe is printed as soon as it is decided, so a long search shows its progress.
    let width = spec.key.len().max(14);
    let line = |p: &Probe| {
        let side = match p.side {
            Side::Undecided => "undecided: at the boundary",
            side => side.name(verdict),
        };
        let stuck = format!("{} of {}", p.stuck, p.runs);
        let fraction = format!("{:.2} [{:.2}, {:.2}]", p.estimate.mean, p.estimate.lo95, p.estimate.hi95);
        format!("{:>width$}  {stuck:>12}  {fraction:<27}  {side}\n", scale.show(p.value))
    };
    let mut print = |text: String| -> Result<(), Error> {
        if options.csv {
            return Ok(());
        }
        stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).map_err(stdout_error)
    };
    print(format!(
        "{:>width$}  {:>12}  {:<27}  verdict ({verdict} fraction against {target})\n",
        spec.key,
        format!("{verdict} runs"),
        format!("{verdict} fraction (Wilson 95%)")
    ))?;
    let mut probes = Vec::new();
    for end in [low, high] {
        let found = probe(end)?;
        print(line(&found))?;
        probes.push(found);
    }
    let (low_side, high_side) = (probes[0].side, probes[1].side);
    if low_side == Side::Undecided || high_side == Side::Undecided || low_side == high_side {
        let describe = |p: &Probe| format!("{} of {} runs {verdict} at {}", p.stuck, p.runs, scale.show(p.value));
        return Err(Error::Usage(format!(
            "boundary: {} and {}: the ends must be clearly stable on one side and clearly {verdict} on the other; \
             widen --between",
            describe(&probes[0]),
            describe(&probes[1])
        )));
    }
    let mut at_boundary = None;
    while high - low > tolerance && probes.len() < MAX_PROBES {
        let middle = if scale == Scale::Count { ((low + high) / 2.0).round() } else { (low + high) / 2.0 };
        if middle <= low || middle >= high {
            break;
        }
        let found = probe(middle)?;
        print(line(&found))?;
        match found.side {
            Side::Undecided => at_boundary = Some(middle),
            side if side == low_side => low = middle,
            _ => high = middle,
        }
        probes.push(found);
        if at_boundary.is_some() {
            break;
        }
    }
    let estimate = at_boundary.unwrap_or((low + high) / 2.0);
    let runs: u32 = probes.iter().map(|p| p.runs).sum();
    print(format!(
        "boundary: {} = {} (between {} and {}) where the {verdict} fraction crosses {target}, {runs} runs\n",
        spec.key,
        scale.show(estimate),
        scale.show(low),
        scale.show(high)
    ))?;
    if !options.csv && verdict == DEFAULT_VERDICT {
        print(fluid_line(options, spec.key, scale, (probes[0].value, probes[1].value), tolerance))?;
    }
    if options.csv {
        let number = |x: f64| if scale == Scale::Duration { format!("{}", x / 1e6) } else { format!("{x}") };
        let mut text = String::from(CSV_HEADER);
        text.push('\n');
        for (index, p) in probes.iter().enumerate() {
            text.push_str(&format!(
                "{},{},{},{},{runs},{target},{index},{},{},{},{},{},{},{}\n",
                spec.key,
                number(estimate),
                number(low),
                number(high),
                number(p.value),
                p.runs,
                p.stuck,
                p.estimate.mean,
                p.estimate.lo95,
                p.estimate.hi95,
                p.side.name(verdict)
            ));
        }
        stdout.write_all(text.as_bytes()).map_err(stdout_error)?;
    }
    Ok(())
}

/// The fluid limit's answer beside the simulation's: where its trajectory ends stuck and where its stuck regime
/// appears, over the same bracket (server scenarios the fluid limit can express; otherwise why not).
fn fluid_line(options: &BoundaryOptions, key: &str, scale: Scale, ends: (f64, f64), tolerance: f64) -> String {
    let fluid_options = super::FluidOptions {
        scenario: options.scenario.clone(),
        set: options.set.clone(),
        scale: 1.0,
        step: None,
        csv: None,
        over: Some(key.to_owned()),
        between: None,
        tolerance: None,
    };
    let settings = crate::analysis::fluid::StepSettings { bucket: SimDuration::from_secs(1), step: None, scale: 1.0 };
    match super::fluid_over::measure(&fluid_options, settings, (key, scale), ends, tolerance) {
        Ok(found) => {
            let at = |x: Option<f64>, what: &str| match x {
                Some(x) => format!("{what} from {key} = {}", scale.show(x)),
                None => format!("{what} nowhere in the bracket"),
            };
            format!(
                "fluid limit: {}; {} (retrylab fluid --over {key})\n",
                at(found.trajectory, "its trajectory ends stuck"),
                at(found.stuck_regime, "a stuck regime exists")
            )
        }
        Err(error) => {
            let why = error.to_string();
            let why = why.rsplit(": ").next().unwrap_or(&why).to_owned();
            format!("fluid limit: none ({why})\n")
        }
    }
}

/// `boundary --csv`: one row per probe in the order run, each with the search's result (durations in ms). With
/// `--verdict`, the `stuck` columns count that outcome and `verdict` names it for the side past the boundary.
const CSV_HEADER: &str = "key,boundary,low,high,runs,stuck_target,probe,value,probe_runs,stuck,stuck_fraction,\
                              stuck_lo95,stuck_hi95,verdict";

fn stdout_error(source: std::io::Error) -> Error {
    Error::Write { path: PathBuf::from("<stdout>"), source }
}
