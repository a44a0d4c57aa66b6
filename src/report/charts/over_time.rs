//! The charts of what happened over a run, at the focus points: the timeline (one series per bucket), goodput
//! against offered load, and the distribution of time to success.

use super::metric::replicates_note;
use super::panels::{Cdf, Panel};
use super::pins::Focus;
use super::text::{TimeUnit, duration_text};
use super::{Chart, Frame};
use crate::model::ModelKind;
use crate::params::{Section, Value};
use crate::report::aggregate::Aggregate;
use crate::scenario::{PlannedPoint, Scenario};

/// One series of a bucket-major timeline as `(bucket start in ms, value)`, cropped at `[charts] timeline_until`.
fn series_points(scenario: &Scenario, timeline: &[f64], series: usize) -> Vec<(f64, f64)> {
    let stride = scenario.model.timeline_series().len();
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    let until_ms = scenario.charts.timeline_until.map(|d| d.as_millis_f64());
    timeline
        .iter()
        .skip(series)
        .step_by(stride)
        .enumerate()
        .map(|(bucket, &value)| (bucket as f64 * bucket_ms, value))
        .take_while(|(t, _)| until_ms.is_none_or(|until| *t < until))
        .collect()
}

/// Panels of the focus points, each with the timeline series `series` (the first coloured, the rest grey) and
/// its shaded spans, with times in the unit the longest of them calls for. A point whose replicates ended apart
/// (some recovered, some not) gets one panel per group instead of a mean that no run experienced.
fn time_panels(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus, series: &[usize]) -> (Vec<Panel>, TimeUnit) {
    let total = scenario.replicates;
    let mut panels: Vec<Panel> = Vec::new();
    for (point, label) in &focus.points {
        let shaded = aggregate.highlights.get(*point).cloned().unwrap_or_default();
        let lines = |timeline: &[f64]| series.iter().map(|&s| series_points(scenario, timeline, s)).collect();
        match aggregate.outcome_groups.get(*point).filter(|groups| !groups.is_empty()) {
            Some(groups) => panels.extend(groups.iter().map(|group| {
                Panel {
                    label: format!("{label} · {} ({} of {total} runs)", group.label, group.runs)
                        .trim_start_matches(" · ")
                        .to_owned(),
                    lines: lines(&group.timeline),
                    shaded: shaded.clone(),
                }
            })),
            None => panels.push(Panel { label: label.clone(), lines: lines(&aggregate.timelines[*point]), shaded }),
        }
    }
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    let end = panels.iter().flat_map(|p| p.lines.iter().flatten()).map(|(t, _)| t + bucket_ms).fold(0.0, f64::max);
    let unit = TimeUnit::for_span(end);
    for panel in &mut panels {
        for (t, _) in panel.lines.iter_mut().flatten() {
            *t /= unit.ms();
        }
        for (start, end) in &mut panel.shaded {
            (*start, *end) = (*start / unit.ms(), *end / unit.ms());
        }
    }
    (panels, unit)
}

/// A series' help without its "in the bucket": what it counts.
fn counted(help: &str) -> String {
    help.replace(" in the bucket", "").replace(" during the bucket", "")
}

/// A series' help per bucket of `bucket`: "attempts reaching the server per 20 ms, rejected ones included".
fn per_bucket(help: &str, bucket: &str) -> String {
    if help.contains(" in the bucket") {
        help.replace(" in the bucket", &format!(" per {bucket}"))
    } else if help.contains(" during the bucket") {
        help.replace(" during the bucket", &format!(" in each {bucket}"))
    } else {
        format!("{help} ({bucket} buckets)")
    }
}

/// Whether sharp peaks in the first timeline series can only be clients retrying together: every client starts
/// at t = 0 (the OCC model's contenders, a burst workload), so nothing but retries comes after the release.
fn released_together(scenario: &Scenario, points: &[PlannedPoint], focus: &Focus) -> bool {
    if scenario.model == ModelKind::Occ {
        return true;
    }
    let is_kind = |spec: &crate::params::ParamSpec| spec.section == Section::Workload && spec.key == "kind";
    let burst = Value::Choice("burst");
    match scenario.sweep.iter().position(|axis| is_kind(axis.spec)) {
        Some(axis) => focus.points.iter().all(|(point, _)| points[*point].swept[axis] == burst),
        None => scenario.settings.iter().find(|setting| is_kind(setting.spec)).is_some_and(|setting| {
            setting.value.clone().or_else(|| setting.spec.default.hashed_value()).as_ref() == Some(&burst)
        }),
    }
}

/// Says so when some focus point is drawn per group of its replicates.
fn split_note(aggregate: &Aggregate, focus: &Focus) -> Option<String> {
    let split =
        focus.points.iter().any(|(point, _)| aggregate.outcome_groups.get(*point).is_some_and(|g| !g.is_empty()));
    split.then(|| "runs that ended apart are drawn per outcome, each the mean of its own runs".to_owned())
}

/// The notes every over-time chart starts its subtitle with: where it is drawn, and over what.
fn base_notes(focus: &Focus, what: String) -> Vec<String> {
    let mut notes = Vec::new();
    if !focus.at_text.is_empty() {
        notes.push(focus.at_text.clone());
    }
    notes.push(what);
    notes
}

/// One timeline series (`[charts] timeline_series`, else the model's first) at the focus points, one panel each.
pub(super) fn timeline_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    focus: &Focus,
) -> Option<Chart> {
    let all = scenario.model.timeline_series();
    let series_name = scenario.charts.timeline_series.or_else(|| all.first().copied())?;
    let series_index = all.iter().position(|name| *name == series_name)?;
    let help = scenario.model.timeline_help().get(series_index).copied().unwrap_or(series_name);
    let bucket = duration_text(scenario.timeline_bucket.as_millis_f64());
    let (panels, unit) = time_panels(scenario, aggregate, focus, &[series_index]);
    let what = format!("{series_name}: {}, every panel on one scale", replicates_note(scenario.replicates));
    let mut notes = base_notes(focus, what);
    notes.extend(split_note(aggregate, focus));
    if panels.iter().any(|panel| !panel.shaded.is_empty()) {
        notes.push("shaded: fault window or trigger".into());
    }
    if series_index == 0 && released_together(scenario, points, focus) {
        notes.push(
            "all clients start at t = 0, so sharp peaks after the first are clients retrying in lock-step".into(),
        );
    }
    Some(Chart::Panels {
        frame: Frame {
            title: format!("{}: {}", scenario.name, per_bucket(help, &bucket)),
            subtitle: notes.join(" · "),
            x_label: format!("time ({})", unit.symbol()),
            // A count per bucket says so; a level or a share is named alone.
            y_label: if help.contains(" in the bucket") {
                format!("{series_name} per {bucket}")
            } else {
                series_name.to_owned()
            },
        },
        panels,
    })
}

/// Goodput against offered load over time, with the trigger and fault windows shaded (models whose timeline has
/// both series).
pub(super) fn flow_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let series = scenario.model.timeline_series();
    let help = scenario.model.timeline_help();
    let goodput = series.iter().position(|name| *name == "goodput")?;
    let offered = series.iter().position(|name| *name == "offered")?;
    let bucket = duration_text(scenario.timeline_bucket.as_millis_f64());
    let (panels, unit) = time_panels(scenario, aggregate, focus, &[goodput, offered]);
    let what = format!("per {bucket}, {}", replicates_note(scenario.replicates));
    let mut notes = base_notes(focus, what);
    notes.extend(split_note(aggregate, focus));
    let describe = |index: usize| help.get(index).map_or_else(|| series[index].to_owned(), |h| counted(h));
    notes.push(format!("coloured: goodput, {}; grey: offered, {}", describe(goodput), describe(offered)));
    if panels.iter().any(|panel| !panel.shaded.is_empty()) {
        notes.push("shaded: fault window or trigger".into());
    }
    Some(Chart::Panels {
        frame: Frame {
            title: format!("{}: goodput and offered load", scenario.name),
            subtitle: notes.join(" · "),
            x_label: format!("time ({})", unit.symbol()),
            y_label: format!("requests per {bucket}"),
        },
        panels,
    })
}

/// The distribution of time to success at the focus points, all replicates together.
pub(super) fn latency_cdf_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let lines: Vec<(String, Vec<(f64, f64)>)> = focus
        .points
        .iter()
        .filter_map(|(point, label)| {
            let cdf = aggregate.latency.get(*point)?.as_ref().filter(|cdf| !cdf.is_empty())?;
            Some((label.clone(), cdf.clone()))
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    let pooled = match scenario.replicates {
        1 => "1 replicate".to_owned(),
        n => format!("all {n} replicates pooled"),
    };
    let what = format!("share of successful requests done within x, {pooled}; ● median, ▲ 99th percentile");
    let notes = base_notes(focus, what);
    Some(Chart::Cdf(Cdf {
        frame: Frame {
            title: format!("{}: time to success", scenario.name),
            subtitle: notes.join(" · "),
            x_label: "time from first send to success (log scale; steps at the histogram's bucket edges)".into(),
            y_label: "fraction of successes".into(),
        },
        legend_title: focus.series_name.unwrap_or_default().to_owned(),
        lines,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_help_reads_per_bucket() {
        let help = "attempts reaching the server in the bucket, rejected ones included";
        assert_eq!(per_bucket(help, "20 ms"), "attempts reaching the server per 20 ms, rejected ones included");
        assert_eq!(
            per_bucket("the longest the server's queue was during the bucket", "1 s"),
            "the longest the server's queue was in each 1 s"
        );
        assert_eq!(per_bucket("a share of successes", "1 s"), "a share of successes (1 s buckets)");
        assert_eq!(counted("new requests (first tries) sent in the bucket"), "new requests (first tries) sent");
    }
}
