//! The charts of what happened over a run, at the focus points: the timeline (one series per bucket), goodput
//! against offered load, and the distribution of time to success.

use super::metric::replicates_note;
use super::panels::{Cdf, Panel};
use super::pins::Focus;
use super::text::{TimeUnit, duration_text};
use super::{Chart, Frame, Look};
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
/// its shaded spans, in column `column`, with times in the unit the longest of them calls for. A point whose
/// replicates ended apart (some recovered, some not) gets one panel per group instead of a mean that no run
/// experienced.
fn time_panels(
    scenario: &Scenario,
    aggregate: &Aggregate,
    focus: &Focus,
    series: &[usize],
    column: usize,
) -> Vec<Panel> {
    let total = scenario.replicates;
    let mut panels: Vec<Panel> = Vec::new();
    for ((point, label), key) in focus.points.iter().zip(&focus.keys) {
        let shaded = aggregate.highlights.get(*point).cloned().unwrap_or_default();
        let lines = |timeline: &[f64]| series.iter().map(|&s| series_points(scenario, timeline, s)).collect();
        match aggregate.outcome_groups.get(*point).filter(|groups| !groups.is_empty()) {
            Some(groups) => panels.extend(groups.iter().map(|group| {
                Panel {
                    label: format!("{label} · {} ({} of {total} runs)", group.label, group.runs)
                        .trim_start_matches(" · ")
                        .to_owned(),
                    key: key.clone(),
                    column,
                    lines: lines(&group.timeline),
                    shaded: shaded.clone(),
                }
            })),
            None => panels.push(Panel {
                label: label.clone(),
                key: key.clone(),
                column,
                lines: lines(&aggregate.timelines[*point]),
                shaded,
            }),
        }
    }
    panels
}

/// `panels`' times in ms rescaled to the unit the longest of them calls for, which is returned.
fn in_time_unit(scenario: &Scenario, panels: &mut [Panel]) -> TimeUnit {
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    let end = panels.iter().flat_map(|p| p.lines.iter().flatten()).map(|(t, _)| t + bucket_ms).fold(0.0, f64::max);
    let unit = TimeUnit::for_span(end);
    for panel in panels {
        for (t, _) in panel.lines.iter_mut().flatten() {
            *t /= unit.ms();
        }
        for (start, end) in &mut panel.shaded {
            (*start, *end) = (*start / unit.ms(), *end / unit.ms());
        }
    }
    unit
}

/// On a linear axis shared by `panels` (`(label, its largest value)`), says so when one is 20 times or more
/// above all the others, which then look flat, and how to see them.
pub(super) fn dwarfed_note(peaks: &[(String, f64)]) -> Option<String> {
    const RATIO: f64 = 20.0;
    let mut sorted: Vec<&(String, f64)> = peaks.iter().filter(|(_, peak)| peak.is_finite()).collect();
    sorted.sort_by(|a, b| b.1.total_cmp(&a.1));
    let (top, second) = (sorted.first()?, sorted.get(1)?);
    (second.1 > 0.0 && top.1 >= RATIO * second.1).then(|| {
        format!(
            "{} peaks at {:.0}× the rest, which look flat on this linear axis: y_scale = \"log\" shows them",
            top.0,
            (top.1 / second.1).floor()
        )
    })
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
pub(super) fn released_together(scenario: &Scenario, points: &[PlannedPoint], focus: &Focus) -> bool {
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

/// The timeline series (`[charts] timeline_series`, else the model's defaults, else its first) at the focus
/// points: one panel each, and one column of panels per series, each column on its own scale.
pub(super) fn timeline_chart(
    scenario: &Scenario,
    points: &[PlannedPoint],
    aggregate: &Aggregate,
    focus: &Focus,
    look: Look,
) -> Option<Chart> {
    let all = scenario.model.timeline_series();
    let mut names: Vec<&'static str> = scenario.charts.timeline_series.clone();
    if names.is_empty() {
        names = scenario.model.default_timeline_series().to_vec();
    }
    if names.is_empty() {
        names.extend(all.first().copied());
    }
    let indices: Vec<usize> = names.iter().filter_map(|name| all.iter().position(|s| s == name)).collect();
    let first = *indices.first()?;
    let helps = scenario.model.timeline_help();
    let help = |index: usize| helps.get(index).copied().unwrap_or(all[index]);
    let bucket = duration_text(scenario.timeline_bucket.as_millis_f64());
    let mut panels: Vec<Panel> = Vec::new();
    for (column, &index) in indices.iter().enumerate() {
        panels.extend(time_panels(scenario, aggregate, focus, &[index], column));
    }
    let unit = in_time_unit(scenario, &mut panels);
    let counted_per_bucket = |index: usize| help(index).contains(" in the bucket");
    let axis_title = |index: usize| {
        if counted_per_bucket(index) { format!("{} per {bucket}", all[index]) } else { all[index].to_owned() }
    };
    let shown: Vec<&str> = indices.iter().map(|&i| all[i]).collect();
    let scale = if indices.len() > 1 { "each column on one scale" } else { "every panel on one scale" };
    let what = format!("{}: {}, {scale}", shown.join(", "), replicates_note(scenario.replicates));
    let mut notes = base_notes(focus, what);
    notes.extend(split_note(aggregate, focus));
    if panels.iter().any(|panel| !panel.shaded.is_empty()) {
        notes.push("shaded: fault window or trigger".into());
    }
    if first == 0 && released_together(scenario, points, focus) {
        notes.push(
            "all clients start at t = 0, so sharp peaks after the first are clients retrying in lock-step".into(),
        );
    }
    if !look.log_y {
        for column in 0..indices.len() {
            let peaks: Vec<(String, f64)> = panels
                .iter()
                .filter(|panel| panel.column == column)
                .map(|panel| (panel.label.clone(), panel.lines.iter().flatten().map(|(_, y)| *y).fold(0.0, f64::max)))
                .collect();
            notes.extend(dwarfed_note(&peaks));
        }
    }
    let (title, y_label, columns) = match indices.as_slice() {
        [only] => (format!("{}: {}", scenario.name, per_bucket(help(*only), &bucket)), axis_title(*only), Vec::new()),
        _ => {
            let y_label = if indices.iter().all(|&i| counted_per_bucket(i)) {
                format!("per {bucket}")
            } else {
                format!("per {bucket}, or the most in each {bucket}")
            };
            (
                format!("{}: {} over time", scenario.name, and_list(&shown)),
                y_label,
                indices.iter().map(|&i| axis_title(i)).collect(),
            )
        }
    };
    Some(Chart::Panels {
        frame: Frame { title, subtitle: notes.join(" · "), x_label: format!("time ({})", unit.symbol()), y_label },
        panels,
        columns,
    })
}

/// "a", "a and b", "a, b and c".
fn and_list(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Goodput against offered load over time, with the trigger and fault windows shaded (models whose timeline has
/// both series).
pub(super) fn flow_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let series = scenario.model.timeline_series();
    let help = scenario.model.timeline_help();
    let goodput = series.iter().position(|name| *name == "goodput")?;
    let offered = series.iter().position(|name| *name == "offered")?;
    let bucket = duration_text(scenario.timeline_bucket.as_millis_f64());
    let mut panels = time_panels(scenario, aggregate, focus, &[goodput, offered], 0);
    let unit = in_time_unit(scenario, &mut panels);
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
        columns: Vec::new(),
    })
}

/// A CDF's label and its points.
type CdfLine = (String, Vec<(f64, f64)>);

/// The distribution of time to success at the focus points, all replicates together.
pub(super) fn latency_cdf_chart(scenario: &Scenario, aggregate: &Aggregate, focus: &Focus) -> Option<Chart> {
    let (lines, keys): (Vec<CdfLine>, Vec<String>) = focus
        .points
        .iter()
        .zip(&focus.keys)
        .filter_map(|((point, label), key)| {
            let cdf = aggregate.latency.get(*point)?.as_ref().filter(|cdf| !cdf.is_empty())?;
            Some(((label.clone(), cdf.clone()), key.clone()))
        })
        .unzip();
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
        keys,
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

    #[test]
    fn every_models_default_timeline_series_are_its_own() {
        for &model in crate::model::ModelKind::ALL {
            for name in model.default_timeline_series() {
                assert!(model.timeline_series().contains(name), "{}: {name}", model.name());
            }
        }
        assert_eq!(crate::model::ModelKind::Queue.default_timeline_series(), ["dead_lettered", "queue_depth"]);
    }

    #[test]
    fn a_series_twenty_times_the_rest_is_named_on_a_linear_axis() {
        let peaks = |values: &[f64]| -> Vec<(String, f64)> {
            values.iter().enumerate().map(|(i, v)| (format!("s{i}"), *v)).collect()
        };
        let note = dwarfed_note(&peaks(&[30.0, 1_000.0, 45.0])).unwrap();
        assert!(note.starts_with("s1 peaks at 22× the rest") && note.contains("y_scale = \"log\""), "{note}");
        assert_eq!(dwarfed_note(&peaks(&[60.0, 1_000.0, 45.0])), None, "16× is not hidden");
        assert_eq!(dwarfed_note(&peaks(&[0.0, 1_000.0])), None, "a flat zero is no hidden series");
        assert_eq!(dwarfed_note(&peaks(&[1_000.0])), None);
        assert_eq!(and_list(&["a", "b", "c"]), "a, b and c");
    }
}
