//! `retrylab fluid --over KEY`: along one key, where the fluid limit's stuck regime appears, where its healthy
//! regime disappears (between the two both exist: the hysteresis band), and where its trajectory ends stuck.
//! Regimes are exact arithmetic and cheap, so they are bisected to a millionth of the bracket; the trajectory is
//! integrated per probe and bisected to the tolerance.

use std::io::Write;

use super::boundary::Scale;
use super::fluid::{FluidOptions, csv_number, pinned_study, stdout_error};
use crate::Error;
use crate::analysis::fluid::{FluidPoint, RegimeKind, StepSettings, bisect};
use crate::scenario::Scenario;

/// What is known of one probe.
#[derive(Clone, Copy, Debug, PartialEq)]
struct State {
    /// `None` when no regimes are computed for this scenario.
    stuck_regime: Option<bool>,
    healthy_regime: Option<bool>,
    /// `None` without a verdict (no trigger).
    trajectory_stuck: Option<bool>,
}

fn state(scenario: &Scenario, fluid: &FluidPoint, with_trajectory: bool) -> State {
    let regimes = fluid.regimes().ok();
    let has = |kinds: &[RegimeKind]| regimes.as_ref().map(|r| r.list.iter().any(|regime| kinds.contains(&regime.kind)));
    let trajectory_stuck = with_trajectory
        .then(|| fluid.verdict(&fluid.integrate(), scenario.timeline_bucket))
        .filter(|verdict| !verdict.stuck.is_nan())
        .map(|verdict| verdict.stuck == 1.0);
    State {
        stuck_regime: has(&[RegimeKind::Stuck, RegimeKind::Growing]),
        healthy_regime: has(&[RegimeKind::Healthy]),
        trajectory_stuck,
    }
}

/// Bisection for `--over`, the scenario reloaded with KEY pinned at each probe.
pub(super) fn boundaries(options: &FluidOptions, settings: StepSettings, stdout: &mut dyn Write) -> Result<(), Error> {
    let over = options.over.as_deref().unwrap_or_default();
    let scenario = Scenario::load(&options.scenario, &options.set)?;
    let key = over.rsplit('.').next().unwrap_or(over);
    let spec = scenario.model.params().find(|spec| spec.answers_to(None, key)).ok_or_else(|| {
        Error::Usage(format!("fluid --over: the {} model has no parameter `{over}`", scenario.model.name()))
    })?;
    let scale = Scale::of_kind(&spec.kind).ok_or_else(|| {
        Error::Usage(format!(
            "fluid --over: {} is not a number or a duration; search a load, a length or a capacity",
            spec.key
        ))
    })?;
    let (low, high) = match &options.between {
        Some((a, b)) => (scale.parse(spec.key, a)?, scale.parse(spec.key, b)?),
        None => {
            let axis = scenario.axis(key).ok_or_else(|| {
                Error::Usage(format!(
                    "fluid --over: {} is not swept in {}; give --between A B",
                    spec.key,
                    scenario.display_path()
                ))
            })?;
            let values: Vec<f64> = axis.values.iter().filter_map(|v| scale.of_value(v)).collect();
            (
                values.iter().copied().fold(f64::INFINITY, f64::min),
                values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            )
        }
    };
    if low.partial_cmp(&high) != Some(std::cmp::Ordering::Less) {
        return Err(Error::Usage(format!(
            "fluid --over: the bracket of {} must run from a smaller to a larger value (got {} to {})",
            spec.key,
            scale.show(low),
            scale.show(high)
        )));
    }
    let tolerance = match &options.tolerance {
        Some(text) => {
            let tolerance = scale.parse(spec.key, text)?;
            if tolerance <= 0.0 {
                return Err(Error::Usage(format!(
                    "fluid --over: --tolerance {text} must be greater than 0 (in {}'s units)",
                    spec.key
                )));
            }
            tolerance
        }
        None => (high - low) / 1024.0,
    };
    let tolerance = if scale == Scale::Count { tolerance.max(1.0) } else { tolerance };
    let found = measure(options, settings, (spec.key, scale), (low, high), tolerance)?;
    let Found { ends, stuck_regime, healthy_regime, trajectory } = found;
    let rows = [
        ("stuck_regime", "stuck regime", stuck_regime, ends.map(|s| s.stuck_regime)),
        ("healthy_regime", "healthy regime", healthy_regime, ends.map(|s| s.healthy_regime)),
        ("trajectory_stuck", "trajectory ends", trajectory, ends.map(|s| s.trajectory_stuck)),
    ];
    let text = if options.csv.is_some() {
        let mut text = String::from("key,what,boundary,low,high,at_low,at_high\n");
        let number = |x: f64| csv_number(if scale == Scale::Duration { x / 1e6 } else { x });
        for (name, _, boundary, [at_low, at_high]) in rows {
            let side = |s: Option<bool>| s.map_or(String::new(), |b| u8::from(b).to_string());
            text.push_str(&format!(
                "{},{name},{},{},{},{},{}\n",
                spec.key,
                boundary.map_or(String::new(), number),
                number(low),
                number(high),
                side(at_low),
                side(at_high)
            ));
        }
        text
    } else {
        let mut text = format!(
            "fluid limit of {} along {} from {} to {}:\n",
            scenario.display_path(),
            spec.key,
            scale.show(low),
            scale.show(high)
        );
        for (name, title, boundary, [at_low, at_high]) in rows {
            let word = |s: Option<bool>| match (s, name) {
                (Some(true), "trajectory_stuck") => "stuck",
                (Some(false), "trajectory_stuck") => "not stuck",
                (Some(true), _) => "present",
                (Some(false), _) => "absent",
                (None, _) => "not computed",
            };
            let line = match (boundary, at_low, at_high) {
                (Some(at), Some(a), _) => format!(
                    "{} = {} ({} at {}, {} at {})",
                    spec.key,
                    scale.show(at),
                    word(Some(a)),
                    scale.show(low),
                    word(Some(!a)),
                    scale.show(high)
                ),
                (None, Some(a), Some(b)) if a == b => format!("{} throughout", word(Some(a))),
                (_, None, None) if name == "trajectory_stuck" => {
                    "no verdict: the scenario needs a trigger (an outage, fault windows or trigger_end)".into()
                }
                (_, None, None) => "not computed (regimes need an open workload and on_timeout = \"abandon\")".into(),
                (_, a, b) => format!("{} at {}, {} at {}", word(a), scale.show(low), word(b), scale.show(high)),
            };
            text.push_str(&format!("  {title:<22} {line}\n"));
        }
        let both = |s: &State| s.stuck_regime == Some(true) && s.healthy_regime == Some(true);
        let band = match (stuck_regime, healthy_regime) {
            (Some(stuck), Some(healthy)) => Some((stuck.min(healthy), stuck.max(healthy))),
            (Some(stuck), None) if both(&ends[1]) => Some((stuck, f64::INFINITY)),
            (Some(stuck), None) if both(&ends[0]) => Some((f64::NEG_INFINITY, stuck)),
            (None, Some(healthy)) if both(&ends[1]) => Some((healthy, f64::INFINITY)),
            (None, Some(healthy)) if both(&ends[0]) => Some((f64::NEG_INFINITY, healthy)),
            (None, None) if both(&ends[0]) && both(&ends[1]) => Some((f64::NEG_INFINITY, f64::INFINITY)),
            _ => None,
        };
        if let Some((from, to)) = band {
            let end = |x: f64, beyond: &str| if x.is_finite() { scale.show(x) } else { beyond.to_owned() };
            text.push_str(&format!(
                "  {:<22} {} from {} to {}: both regimes exist there, and which one holds depends on the past\n",
                "bistable (hysteresis)",
                spec.key,
                end(from, &format!("below {}", scale.show(low))),
                end(to, &format!("beyond {}", scale.show(high)))
            ));
        }
        text
    };
    stdout.write_all(text.as_bytes()).map_err(stdout_error)
}

/// The three crossings along KEY between `low` and `high`, with what holds at each end.
pub(super) struct Found {
    ends: [State; 2],
    pub(super) stuck_regime: Option<f64>,
    healthy_regime: Option<f64>,
    pub(super) trajectory: Option<f64>,
}

/// Bisects each property that differs between the ends; both ends are built (and so checked) first.
pub(super) fn measure(
    options: &FluidOptions,
    settings: StepSettings,
    (key, scale): (&str, Scale),
    (low, high): (f64, f64),
    tolerance: f64,
) -> Result<Found, Error> {
    // Both ends are built (and so checked) before anything is integrated.
    let (low_scenario, low_fluid) = pinned_study(options, settings, key, scale, low)?;
    let (high_scenario, high_fluid) = pinned_study(options, settings, key, scale, high)?;
    let ends = [state(&low_scenario, &low_fluid, true), state(&high_scenario, &high_fluid, true)];
    let probe = |value: f64, with_trajectory: bool| -> State {
        match pinned_study(options, settings, key, scale, value) {
            Ok((scenario, fluid)) => state(&scenario, &fluid, with_trajectory),
            // A value between two valid ends is valid; should it not be, it counts as neither side.
            Err(_) => State { stuck_regime: None, healthy_regime: None, trajectory_stuck: None },
        }
    };
    let regime_tolerance = (high - low) * 1e-6;
    let regime_tolerance = if scale == Scale::Count { 1.0 } else { regime_tolerance };
    let stuck_regime =
        find(ends, |s| s.stuck_regime, |v| bisect(low, high, regime_tolerance, |x| probe(x, false).stuck_regime != v));
    let healthy_regime = find(
        ends,
        |s| s.healthy_regime,
        |v| bisect(low, high, regime_tolerance, |x| probe(x, false).healthy_regime != v),
    );
    let trajectory =
        find(ends, |s| s.trajectory_stuck, |v| bisect(low, high, tolerance, |x| probe(x, true).trajectory_stuck != v));
    Ok(Found { ends, stuck_regime, healthy_regime, trajectory })
}

/// The crossing of one property between the ends, if the ends differ in it.
fn find(
    ends: [State; 2],
    property: impl Fn(&State) -> Option<bool>,
    crossing: impl Fn(Option<bool>) -> f64,
) -> Option<f64> {
    let (low, high) = (property(&ends[0]), property(&ends[1]));
    match (low, high) {
        (Some(a), Some(b)) if a != b => Some(crossing(Some(a))),
        _ => None,
    }
}
