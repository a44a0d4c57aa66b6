//! `retrylab fluid`: the server model's fluid (large-N) limit for every point of a scenario: its stationary
//! regimes at the final arrival rate, its trajectory and verdict, or with `--over` the values of one key where
//! the stuck regime appears, where the healthy one disappears, and where the trajectory ends stuck.

use std::io::Write;
use std::path::PathBuf;

use super::boundary::Scale;
use crate::Error;
use crate::analysis::fluid::{FluidPoint, Regime, RegimeKind, Regimes, SERIES, StepSettings, Trajectory};
use crate::model::{Configured, ModelKind};
use crate::scenario::{PlannedPoint, Scenario, plan};
use crate::time::{SimDuration, parse_duration};

/// The largest `--scale`: 10^12 times the scenario's arrivals and servers.
pub const MAX_FLUID_SCALE: f64 = 1e12;

/// What `--csv` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FluidCsv {
    /// Expected counts per bucket, with timeline.csv's columns.
    Timeline,
    /// One row per regime.
    Regimes,
}

/// Options of `retrylab fluid`.
#[derive(Clone, Debug)]
pub struct FluidOptions {
    pub scenario: PathBuf,
    pub set: Vec<String>,
    /// Arrivals, workers and queue places ×scale (the per-request load ÷scale).
    pub scale: f64,
    /// The time step, as a duration; default: chosen from the service, the timeout and the bucket.
    pub step: Option<String>,
    pub csv: Option<FluidCsv>,
    /// `--over KEY`: the boundaries along one key.
    pub over: Option<String>,
    pub between: Option<(String, String)>,
    pub tolerance: Option<String>,
}

/// A scenario ready for the fluid limit: every point's fluid form.
struct Study {
    scenario: Scenario,
    points: Vec<PlannedPoint>,
    fluids: Vec<FluidPoint>,
}

/// Loads `set` over the scenario and builds each point's fluid form; anything it cannot express is refused at
/// its key, before any work.
fn study(options: &FluidOptions, settings: StepSettings, set: &[String]) -> Result<Study, Error> {
    let scenario = Scenario::load(&options.scenario, set)?;
    if scenario.model != ModelKind::Server {
        return Err(scenario
            .error(
                scenario.origin_of_text("kind"),
                Some("model.kind".into()),
                format!(
                    "`retrylab fluid` has the fluid limit of the server model only (kind = \"server\"); this \
                     scenario's model is \"{}\"",
                    scenario.model.name()
                ),
            )
            .into());
    }
    let points = plan(&scenario)?;
    let settings = StepSettings { bucket: scenario.timeline_bucket, ..settings };
    let mut fluids = Vec::with_capacity(points.len());
    for point in &points {
        let Configured::Server(config) = &point.config.0 else { unreachable!("a server scenario's points") };
        let fluid = FluidPoint::new(config, settings)
            .map_err(|unsupported| scenario.refuse_at(unsupported.key, &unsupported.message))?;
        fluids.push(fluid);
    }
    Ok(Study { scenario, points, fluids })
}

/// `retrylab fluid`: prints each point's regimes and trajectory, CSV, or the boundaries along `--over`.
pub fn fluid(options: &FluidOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    if !(options.scale > 0.0 && options.scale <= MAX_FLUID_SCALE) {
        return Err(Error::Usage(format!(
            "--scale {}: must be greater than 0 and at most {MAX_FLUID_SCALE:e} (it multiplies the arrivals, workers \
             and queue places)",
            options.scale
        )));
    }
    let step = match &options.step {
        None => None,
        Some(text) => match parse_duration(text) {
            Ok(step) if step > SimDuration::ZERO => Some(step),
            Ok(_) => return Err(Error::Usage(format!("--step {text}: must be longer than 0 (say 1ms)"))),
            Err(why) => return Err(Error::Usage(format!("--step {text}: {why}"))),
        },
    };
    let settings = StepSettings { bucket: SimDuration::from_secs(1), step, scale: options.scale };
    if options.over.is_some() {
        return super::fluid_over::boundaries(options, settings, stdout);
    }
    let study = study(options, settings, &options.set)?;
    let text = match options.csv {
        Some(FluidCsv::Timeline) => timeline_csv(&study),
        Some(FluidCsv::Regimes) => regimes_csv(&study),
        None => report(&study),
    };
    stdout.write_all(text.as_bytes()).map_err(stdout_error)
}

/// The swept values of a point, as `key=value` pairs.
fn point_label(scenario: &Scenario, point: &PlannedPoint) -> String {
    let pairs: Vec<String> =
        scenario.sweep.iter().zip(&point.swept).map(|(axis, value)| format!("{}={value}", axis.name)).collect();
    pairs.join(", ")
}

/// The human report: per point, the regimes table and the trajectory's totals and verdict.
fn report(study: &Study) -> String {
    let mut text = format!(
        "fluid limit of {} ({} point{})\n",
        study.scenario.display_path(),
        study.points.len(),
        if study.points.len() == 1 { "" } else { "s" }
    );
    for (point, fluid) in study.points.iter().zip(&study.fluids) {
        let label = point_label(&study.scenario, point);
        if !label.is_empty() {
            text.push_str(&format!("\n{label}\n"));
        }
        match fluid.regimes() {
            Ok(regimes) => text.push_str(&regimes_table(&regimes, fluid.budget().is_some())),
            Err(why) => text.push_str(&format!("  regimes: none computed ({why})\n")),
        }
        let trajectory = fluid.integrate();
        text.push_str(&trajectory_lines(study, fluid, &trajectory));
    }
    text.push_str(
        "\nExpected counts of the large-N limit: no fluctuations, so no queue below capacity and no tipping by \
         chance; each retry keeps its sleep's law, not its correlation with the one before (docs/analysis.md).\n",
    );
    text
}

/// The regimes at one rate; the budget's refusals in a column of their own when there is a budget.
fn regimes_table(regimes: &Regimes, budget: bool) -> String {
    let capacity =
        if regimes.capacity.is_finite() { format!("{}/s", number(regimes.capacity)) } else { "unlimited".into() };
    let mut text = format!("  regimes at {} new requests/s (capacity {capacity}), per second:\n", number(regimes.rate));
    let row = |cells: [String; 10]| {
        let [kind, stable, numbers @ ..] = cells;
        let numbers: Vec<String> = numbers
            .iter()
            .enumerate()
            .filter(|(index, _)| budget || *index != 4)
            .map(|(index, cell)| if index == 7 { format!(" {cell:>9}") } else { format!(" {cell:>10}") })
            .collect();
        format!("    {kind:<14} {stable:<7}{}\n", numbers.concat())
    };
    let header = ["regime", "stable", "goodput", "attempts", "retries", "rejected", "refused", "late", "queue", "wait"];
    text.push_str(&row(header.map(str::to_owned)));
    for regime in &regimes.list {
        text.push_str(&row([
            regime.kind.name().to_owned(),
            (if regime.stable { "yes" } else { "no" }).to_owned(),
            number(regime.goodput),
            number(regime.attempts),
            number(regime.retries),
            number(regime.rejected),
            number(regime.refused),
            number(regime.late),
            level(regime),
            wait(regime.wait_s),
        ]));
    }
    if regimes.list.iter().all(|r| r.kind == RegimeKind::Healthy) {
        text.push_str("    no stuck regime at this rate: any backlog drains\n");
    }
    text
}

fn level(regime: &Regime) -> String {
    if regime.queue.is_finite() { number(regime.queue) } else { format!("+{}/s", number(regime.growth)) }
}

fn wait(seconds: f64) -> String {
    if !seconds.is_finite() {
        "growing".into()
    } else if seconds < 1.0 {
        format!("{} ms", number(seconds * 1000.0))
    } else {
        format!("{} s", number(seconds))
    }
}

/// Four significant digits, no exponent below 10^9.
fn number(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{}", if x == 0.0 { 0.0 } else { x });
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    let text = format!("{x:.digits$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_owned() } else { text }
}

fn trajectory_lines(study: &Study, fluid: &FluidPoint, trajectory: &Trajectory) -> String {
    let totals = trajectory.totals;
    let ended = totals.succeeded + totals.gave_up + totals.failed_permanently;
    let success_rate = if ended > 0.0 { totals.succeeded / ended } else { f64::NAN };
    let mut text = format!(
        "  trajectory ({} steps of {} ms, {} attempt classes): {} s{}\n",
        (trajectory.end_s / fluid.step_s()).round(),
        number(fluid.step_s() * 1000.0),
        fluid.classes(),
        number(trajectory.end_s),
        if trajectory.drained { ", drained" } else { ", stopped at the step limit before draining" }
    );
    if trajectory.thinking > 0.0 {
        // A closed workload: once drained, every client is back to thinking.
        text.push_str(&format!("    clients thinking at the end: {}\n", number(trajectory.thinking)));
    }
    text.push_str(&format!(
        "    requests {}, calls {} (amplification {}), retries {}, succeeded {} (success_rate {}), gave_up {}, \
         failed_permanently {}, timeouts {}, rejected {}, late {}{}\n",
        number(totals.requests),
        number(totals.calls),
        number(totals.calls / totals.requests),
        number(totals.retries),
        number(totals.succeeded),
        number(success_rate),
        number(totals.gave_up),
        number(totals.failed_permanently),
        number(totals.timeouts),
        number(totals.rejected),
        number(totals.late),
        match fluid.budget() {
            Some((share, reserve_per_s)) => format!(
                ", refused {} (the fleet's budget: {}% of requests + {} retries/s)",
                number(totals.refused),
                number(share * 100.0),
                number(reserve_per_s)
            ),
            None => String::new(),
        },
    ));
    if fluid.correlated() {
        text.push_str(
            "    note: this strategy carries each client's previous sleep into the next; the fluid keeps each retry's \
             law but not that correlation, so its counts are approximate (docs/analysis.md)\n",
        );
    }
    let verdict = fluid.verdict(trajectory, study.scenario.timeline_bucket);
    if !verdict.stuck.is_nan() {
        let state = if verdict.stuck == 1.0 {
            "stuck".to_owned()
        } else if verdict.recovered == 1.0 {
            format!("recovered {} s after the trigger", number(verdict.recovery_ms / 1000.0))
        } else {
            "not recovered, not tipped".to_owned()
        };
        let approximate = if fluid.verdict_exact() {
            ""
        } else {
            " (approximate: retries after fast failures are not counted in time)"
        };
        text.push_str(&format!("    verdict: {state}{approximate}\n"));
    }
    text
}

/// `--csv timeline`: timeline.csv's header, after the swept keys when there are any.
fn timeline_csv(study: &Study) -> String {
    let swept: Vec<&str> = study.scenario.sweep.iter().map(|axis| axis.name).collect();
    let mut header: Vec<&str> = swept.clone();
    header.push("bucket_start_ms");
    header.extend(SERIES);
    let mut text = header.join(",") + "\n";
    let bucket_ms = study.scenario.timeline_bucket.as_millis_f64();
    for (point, fluid) in study.points.iter().zip(&study.fluids) {
        let trajectory = fluid.integrate();
        let prefix: String = point.swept.iter().map(|value| format!("{value},")).collect();
        for (index, row) in trajectory.rows.iter().enumerate() {
            let cells: Vec<String> = row.iter().map(|x| csv_number(*x)).collect();
            text.push_str(&format!("{prefix}{},{}\n", csv_number(index as f64 * bucket_ms), cells.join(",")));
        }
    }
    text
}

/// The header of `--csv regimes`, after the swept keys.
pub(crate) const REGIMES_HEADER: &str = "rate_rps,capacity_rps,regime,stable,goodput_rps,attempts_rps,retries_rps,rejected_rps,refused_rps,late_rps,queue,wait_ms,growth_rps";

fn regimes_csv(study: &Study) -> String {
    let swept: Vec<&str> = study.scenario.sweep.iter().map(|axis| axis.name).collect();
    let mut text: String = swept.iter().map(|name| format!("{name},")).collect();
    text.push_str(REGIMES_HEADER);
    text.push('\n');
    for (point, fluid) in study.points.iter().zip(&study.fluids) {
        let Ok(regimes) = fluid.regimes() else { continue };
        let prefix: String = point.swept.iter().map(|value| format!("{value},")).collect();
        for regime in &regimes.list {
            let numbers = |values: &[f64]| values.iter().map(|x| csv_number(*x)).collect::<Vec<_>>().join(",");
            let cells = [
                numbers(&[regimes.rate, regimes.capacity]),
                regime.kind.name().to_owned(),
                numbers(&[
                    f64::from(u8::from(regime.stable)),
                    regime.goodput,
                    regime.attempts,
                    regime.retries,
                    regime.rejected,
                    regime.refused,
                    regime.late,
                    regime.queue,
                    regime.wait_s * 1000.0,
                    regime.growth,
                ]),
            ];
            text.push_str(&format!("{prefix}{}\n", cells.join(",")));
        }
    }
    text
}

/// A CSV cell: up to nine decimals, `inf` spelled out, empty for NaN.
pub(crate) fn csv_number(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else if x.is_infinite() {
        if x > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        let rounded = (x * 1e9).round() / 1e9;
        format!("{}", if rounded == 0.0 { 0.0 } else { rounded })
    }
}

pub(crate) fn stdout_error(source: std::io::Error) -> Error {
    Error::Write { path: PathBuf::from("<stdout>"), source }
}

/// The study with `key` pinned at `value`, for `--over`.
pub(super) fn pinned_study(
    options: &FluidOptions,
    settings: StepSettings,
    key: &str,
    scale: Scale,
    value: f64,
) -> Result<(Scenario, FluidPoint), Error> {
    let mut set = options.set.clone();
    set.push(format!("{key}={}", scale.write(value)));
    let study = study(options, settings, &set)?;
    if study.points.len() != 1 {
        let swept: Vec<&str> = study.scenario.sweep.iter().map(|axis| axis.name).collect();
        return Err(Error::Usage(format!(
            "fluid --over: with {key} pinned the scenario still has {} points; pin {} with --set",
            study.points.len(),
            swept.join(", ")
        )));
    }
    let fluid = study.fluids.into_iter().next().expect("one point");
    Ok((study.scenario, fluid))
}
