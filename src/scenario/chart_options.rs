//! The chart tables inside `[charts]` that name swept parameters and metrics: `heatmap` and `bars`, and the
//! `at = { key = value }` tables they, `at` (the metric charts) and `timeline_at` use to pin swept parameters.
//!
//! ```toml
//! [charts.heatmap]                 # or [[charts.heatmap]] several times, or heatmap = { … }
//! x = "outage_duration"            # swept parameters on the two axes (any kind: numbers or names)
//! y = "rate"
//! metric = "recovery_ms"
//! at = { limiter = "budget" }      # optional; swept parameters left free make one panel per combination
//! name = "heatmap_recovery_ms"     # optional file stem (default heatmap_<metric>)
//! fluid = true                     # optional: draw the fluid limit's stuck boundary (server scenarios)
//! y_label = "new requests per second"   # optional axis titles (default: key and help of the parameter)
//!
//! [charts.bars]                    # or [[charts.bars]]
//! metrics = ["amplification_l1", "amplification_l2"]   # one group of bars per metric
//! series = "placement"             # optional swept parameter: one bar (colour) per value
//! at = { layers = 5 }              # the other swept parameters (default: the middle of each axis)
//! name = "bars"                    # optional file stem (default bars)
//! ```
//!
//! The plain keys of `[charts]` are read here too: `title`, `y_scale` ("linear" or "log"), `size` ("screen" or
//! "slide") and `timeline_series` (one series or a list).

use std::borrow::Cow;
use std::ops::Range;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::locator::Locator;
use super::parse::{as_table, find, unknown_key};
use super::value::convert;
use super::{ChartOptions, SweepAxis};
use crate::error::InputError;
use crate::model::ModelKind;
use crate::params::Value;
use crate::time::parse_duration;

/// The keys of `[charts]`.
pub(super) const CHART_KEYS: &[&str] = &[
    "x",
    "series",
    "metrics",
    "at",
    "timeline_at",
    "timeline_until",
    "timeline_series",
    "heatmap",
    "bars",
    "title",
    "y_scale",
    "size",
];
const HEATMAP_KEYS: &[&str] = &["x", "y", "metric", "at", "name", "x_label", "y_label", "fluid"];
const BARS_KEYS: &[&str] = &["metrics", "series", "at", "name"];
/// Chart file stems the other charts use.
const RESERVED_NAMES: &[&str] = &["timeline", "goodput", "latency_cdf", "summary", "runs", "manifest"];
/// More panels than this would be too small to read: pin some parameters with `at` instead.
pub const MAX_HEATMAP_PANELS: usize = 12;

/// `[charts] y_scale`: how values map to heights.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum YScale {
    /// From 0, evenly.
    #[default]
    Linear,
    /// Powers of ten evenly apart, over the positive values (0 is drawn at the axis's floor).
    Log,
}

/// `[charts] size`: the charts' pixel size.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ChartSize {
    /// As each chart needs (about 1100 × 680), for reading on a screen or in report.html.
    #[default]
    Screen,
    /// 1920 × 1080 for a slide: the same chart laid out on 960 × 540 and drawn twice as large, so that its
    /// smallest text (tick labels) is 21 px tall.
    Slide,
}

/// `[charts.heatmap]`: one cell per (x, y) value pair, coloured by the metric's mean over replicates.
#[derive(Debug, Clone)]
pub struct HeatmapOptions {
    pub x: &'static str,
    pub y: &'static str,
    pub metric: &'static str,
    /// Swept parameters pinned to one value; the others (besides x and y) make one panel per combination.
    pub at: Vec<(&'static str, Value)>,
    /// The file stem: `<name>.svg` and `<name>.png`.
    pub name: String,
    /// Axis titles (default: each parameter's key and the first clause of its help).
    pub x_label: Option<String>,
    pub y_label: Option<String>,
    /// `fluid = true`: draw where the fluid limit's trajectory turns stuck, between the cells (server scenarios).
    pub fluid: bool,
}

/// `[charts.bars]`: grouped bars, one group per metric, one bar per value of `series`.
#[derive(Debug, Clone)]
pub struct BarsOptions {
    pub metrics: Vec<&'static str>,
    pub series: Option<&'static str>,
    /// Swept parameters pinned to one value; any other (besides the series) is drawn at its middle value.
    pub at: Vec<(&'static str, Value)>,
    pub name: String,
}

/// The key of a swept parameter named by `value`, or an error listing the swept ones.
pub(super) fn swept_key(
    value: &Spanned<DeValue<'_>>,
    key: &str,
    sweep: &[SweepAxis],
    at: Locator<'_>,
) -> Result<&'static str, InputError> {
    let name = value
        .get_ref()
        .as_str()
        .ok_or_else(|| at.error(value.span(), key, "expected the name of a swept parameter"))?;
    sweep.iter().find(|axis| axis.answers_to(name)).map(|axis| axis.name).ok_or_else(|| {
        at.error(value.span(), key, format!("\"{name}\" is not swept; swept parameters: {}", swept_list(sweep)))
    })
}

fn swept_list(sweep: &[SweepAxis]) -> String {
    if sweep.is_empty() { "none".to_owned() } else { sweep.iter().map(|a| a.name).collect::<Vec<_>>().join(", ") }
}

/// An `at = { key = value, … }` table: each key a swept parameter, each value one of its swept values.
pub(super) fn pinned_values(
    value: &Spanned<DeValue<'_>>,
    dotted: &str,
    sweep: &[SweepAxis],
    at: Locator<'_>,
) -> Result<Vec<(&'static str, Value)>, InputError> {
    let mut pinned = Vec::new();
    for (param, wanted) in as_table(value, dotted, at)?.iter() {
        let param_key = format!("{dotted}.{}", param.get_ref());
        let axis = sweep.iter().find(|axis| axis.answers_to(param.get_ref().as_ref())).ok_or_else(|| {
            at.error(
                param.span(),
                &param_key,
                format!("not a swept parameter; swept parameters: {}", swept_list(sweep)),
            )
        })?;
        let wanted_value = convert(axis.spec, &param_key, wanted.get_ref(), wanted.span(), at)?;
        if !axis.values.contains(&wanted_value) {
            return Err(at.error(wanted.span(), &param_key, format!("{wanted_value} is not one of the swept values")));
        }
        pinned.push((axis.name, wanted_value));
    }
    Ok(pinned)
}

/// Reads the `[charts]` table.
pub(super) fn read_charts(
    model: ModelKind,
    table: &DeTable<'_>,
    sweep: &[SweepAxis],
    at: Locator<'_>,
) -> Result<ChartOptions, InputError> {
    let mut taken = Vec::new();
    let mut options = ChartOptions::default();
    for (key, value) in table.iter() {
        read_chart_key(model, &mut options, key, value, sweep, &mut taken, at)?;
    }
    Ok(options)
}

/// Reads one key of `[charts]` into `options` (replacing what it held); `taken` holds the file stems the other
/// heatmaps and bar charts use.
pub(super) fn read_chart_key(
    model: ModelKind,
    options: &mut ChartOptions,
    key: &Spanned<Cow<'_, str>>,
    value: &Spanned<DeValue<'_>>,
    sweep: &[SweepAxis],
    taken: &mut Vec<String>,
    at: Locator<'_>,
) -> Result<(), InputError> {
    let dotted = format!("charts.{}", key.get_ref());
    match key.get_ref().as_ref() {
        "x" => options.x = Some(swept_key(value, &dotted, sweep, at)?),
        "series" => options.series = Some(swept_key(value, &dotted, sweep, at)?),
        "metrics" => {
            let items = value
                .get_ref()
                .as_array()
                .ok_or_else(|| at.error(value.span(), &dotted, "expected a list of metric names"))?;
            options.metrics =
                items.iter().map(|item| metric_name(model, item, &dotted, at)).collect::<Result<_, _>>()?;
        }
        "at" => options.at = pinned_values(value, &dotted, sweep, at)?,
        "timeline_at" => options.timeline_at = pinned_values(value, &dotted, sweep, at)?,
        "heatmap" => options.heatmaps = read_heatmaps(model, value, sweep, taken, at)?,
        "bars" => options.bars = read_bars(model, value, sweep, taken, at)?,
        "timeline_until" => {
            let until = value.get_ref().as_str().map(parse_duration);
            options.timeline_until = match until {
                Some(Ok(duration)) if !duration.is_zero() => Some(duration),
                Some(Err(why)) => return Err(at.error(value.span(), &dotted, why)),
                _ => return Err(at.error(value.span(), &dotted, "expected a duration > 0 with its unit, like \"5s\"")),
            };
        }
        "timeline_series" => options.timeline_series = timeline_series(model, value, &dotted, at)?,
        "title" => {
            let title = value.get_ref().as_str().map(str::trim).filter(|t| !t.is_empty());
            let title = title.ok_or_else(|| at.error(value.span(), &dotted, "expected the charts' title as text"))?;
            options.title = Some(title.to_owned());
        }
        "y_scale" => {
            options.y_scale = match value.get_ref().as_str() {
                Some("linear") => YScale::Linear,
                Some("log") => YScale::Log,
                _ => return Err(at.error(value.span(), &dotted, "expected \"linear\" or \"log\"")),
            }
        }
        "size" => {
            options.size = match value.get_ref().as_str() {
                Some("screen") => ChartSize::Screen,
                Some("slide") => ChartSize::Slide,
                _ => {
                    return Err(at.error(
                        value.span(),
                        &dotted,
                        "expected \"screen\" (each chart's own size) or \"slide\" (1920 × 1080)",
                    ));
                }
            }
        }
        other => return Err(unknown_key(at, key.span(), other, "[charts]", CHART_KEYS)),
    }
    Ok(())
}

/// `timeline_series`: one series of the model, or a non-empty list of distinct ones (one column each).
fn timeline_series(
    model: ModelKind,
    value: &Spanned<DeValue<'_>>,
    key: &str,
    at: Locator<'_>,
) -> Result<Vec<&'static str>, InputError> {
    let valid = model.timeline_series();
    let one = |item: &Spanned<DeValue<'_>>| {
        let name = item.get_ref().as_str().unwrap_or_default();
        valid.iter().copied().find(|s| *s == name).ok_or_else(|| {
            at.error(item.span(), key, format!("unknown series \"{name}\"; valid: {}", valid.join(", ")))
        })
    };
    let names: Vec<&'static str> = match value.get_ref() {
        DeValue::Array(items) if !items.is_empty() => items.iter().map(one).collect::<Result<_, _>>()?,
        DeValue::Array(_) => {
            return Err(at.error(
                value.span(),
                key,
                format!("an empty list draws nothing; valid: {}", valid.join(", ")),
            ));
        }
        _ => vec![one(value)?],
    };
    if let Some(repeated) = names.iter().enumerate().find_map(|(i, n)| names[..i].contains(n).then_some(*n)) {
        return Err(at.error(value.span(), key, format!("\"{repeated}\" is listed twice")));
    }
    Ok(names)
}

/// A metric of the model named by `value`.
pub(super) fn metric_name(
    model: ModelKind,
    value: &Spanned<DeValue<'_>>,
    key: &str,
    at: Locator<'_>,
) -> Result<&'static str, InputError> {
    let name = value.get_ref().as_str().unwrap_or_default();
    model.metrics().iter().find(|m| m.answers_to(name)).map(|m| m.name).ok_or_else(|| {
        let valid: Vec<&str> = model.metrics().iter().map(|m| m.name).collect();
        at.error(value.span(), key, format!("unknown metric \"{name}\"; valid: {}", valid.join(", ")))
    })
}

/// The tables of a `heatmap` or `bars` entry: one table, or a list of them (`[[charts.heatmap]]`).
fn tables<'t, 'i>(
    value: &'t Spanned<DeValue<'i>>,
    dotted: &str,
    at: Locator<'_>,
) -> Result<Vec<(&'t DeTable<'i>, Range<usize>)>, InputError> {
    match value.get_ref() {
        DeValue::Array(items) if !items.is_empty() => {
            items.iter().map(|item| as_table(item, dotted, at).map(|table| (table, item.span()))).collect()
        }
        DeValue::Array(_) => Err(at.error(value.span(), dotted, "an empty list draws nothing; give a table")),
        _ => Ok(vec![(as_table(value, dotted, at)?, value.span())]),
    }
}

/// A chart's file stem: letters, digits, `_` and `-`, not one another chart already uses.
fn file_name(
    value: &Spanned<DeValue<'_>>,
    key: &str,
    model: ModelKind,
    taken: &[String],
    at: Locator<'_>,
) -> Result<String, InputError> {
    let name = value
        .get_ref()
        .as_str()
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .ok_or_else(|| at.error(value.span(), key, "expected a file name of letters, digits, `_` and `-`"))?;
    check_free(name, value.span(), key, model, taken, at)?;
    Ok(name.to_owned())
}

fn check_free(
    name: &str,
    span: Range<usize>,
    key: &str,
    model: ModelKind,
    taken: &[String],
    at: Locator<'_>,
) -> Result<(), InputError> {
    let clash = RESERVED_NAMES.contains(&name) || model.metrics().iter().any(|m| m.name == name);
    if clash || taken.iter().any(|t| t == name) {
        return Err(at.error(
            span,
            key,
            format!("another chart is already written as \"{name}\"; give this one its own `name`"),
        ));
    }
    Ok(())
}

fn missing(span: Range<usize>, dotted: &str, key: &str, what: &str, at: Locator<'_>) -> InputError {
    at.error(span, &format!("{dotted}.{key}"), format!("missing; give {what}"))
}

/// Reads `heatmap = …` into `out`; `taken` collects the file stems in use.
pub(super) fn read_heatmaps(
    model: ModelKind,
    value: &Spanned<DeValue<'_>>,
    sweep: &[SweepAxis],
    taken: &mut Vec<String>,
    at: Locator<'_>,
) -> Result<Vec<HeatmapOptions>, InputError> {
    let dotted = "charts.heatmap";
    let mut heatmaps = Vec::new();
    for (table, span) in tables(value, dotted, at)? {
        for (key, _) in table.iter() {
            if !HEATMAP_KEYS.contains(&key.get_ref().as_ref()) {
                let key_text = format!("{dotted}.{}", key.get_ref());
                return Err(unknown_key(at, key.span(), &key_text, "a heatmap", HEATMAP_KEYS));
            }
        }
        let part = |key: &str, what: &str| {
            find(table, key)
                .ok_or_else(|| missing(span.clone(), dotted, key, what, at))
                .map(|v| (v, format!("{dotted}.{key}")))
        };
        let (x_value, x_key) = part("x", "the swept parameter along the x axis")?;
        let x = swept_key(x_value, &x_key, sweep, at)?;
        let (y_value, y_key) = part("y", "the swept parameter along the y axis")?;
        let y = swept_key(y_value, &y_key, sweep, at)?;
        if x == y {
            return Err(at.error(y_value.span(), &y_key, format!("\"{y}\" is already on the x axis; choose another")));
        }
        let (metric_value, metric_key) = part("metric", "the metric that colours the cells")?;
        let metric = metric_name(model, metric_value, &metric_key, at)?;
        let mut pinned = Vec::new();
        if let Some(at_value) = find(table, "at") {
            let at_key = format!("{dotted}.at");
            pinned = pinned_values(at_value, &at_key, sweep, at)?;
            if let Some((key, _)) = pinned.iter().find(|(key, _)| *key == x || *key == y) {
                return Err(at.error(
                    at_value.span(),
                    &at_key,
                    format!("\"{key}\" is on an axis of the heatmap; it cannot also be pinned"),
                ));
            }
        }
        let free: Vec<&SweepAxis> = sweep
            .iter()
            .filter(|axis| ![x, y].contains(&axis.name) && !pinned.iter().any(|(k, _)| *k == axis.name))
            .collect();
        let panels =
            free.iter().try_fold(1_usize, |product, axis| product.checked_mul(axis.values.len())).unwrap_or(usize::MAX);
        if panels > MAX_HEATMAP_PANELS {
            let names: Vec<&str> = free.iter().map(|axis| axis.name).collect();
            return Err(at.error(
                span,
                dotted,
                format!(
                    "{panels} panels (one per combination of {}) is more than {MAX_HEATMAP_PANELS}; pin some with \
                     `at = {{ {} = … }}`",
                    names.join(", "),
                    names[0]
                ),
            ));
        }
        let name = match find(table, "name") {
            Some(name_value) => file_name(name_value, &format!("{dotted}.name"), model, taken, at)?,
            None => {
                let name = format!("heatmap_{metric}");
                check_free(&name, span.clone(), dotted, model, taken, at)?;
                name
            }
        };
        let label = |key: &str| {
            find(table, key)
                .map(|value| {
                    value.get_ref().as_str().map(str::to_owned).ok_or_else(|| {
                        at.error(value.span(), &format!("{dotted}.{key}"), "expected the axis title as a string")
                    })
                })
                .transpose()
        };
        let (x_label, y_label) = (label("x_label")?, label("y_label")?);
        let fluid = match find(table, "fluid") {
            None => false,
            Some(value) => value.get_ref().as_bool().ok_or_else(|| {
                at.error(
                    value.span(),
                    &format!("{dotted}.fluid"),
                    "expected true or false (true draws the fluid limit's stuck boundary)",
                )
            })?,
        };
        taken.push(name.clone());
        heatmaps.push(HeatmapOptions { x, y, metric, at: pinned, name, x_label, y_label, fluid });
    }
    Ok(heatmaps)
}

/// Reads `bars = …`; `taken` collects the file stems in use.
pub(super) fn read_bars(
    model: ModelKind,
    value: &Spanned<DeValue<'_>>,
    sweep: &[SweepAxis],
    taken: &mut Vec<String>,
    at: Locator<'_>,
) -> Result<Vec<BarsOptions>, InputError> {
    let dotted = "charts.bars";
    let mut charts = Vec::new();
    for (table, span) in tables(value, dotted, at)? {
        for (key, _) in table.iter() {
            if !BARS_KEYS.contains(&key.get_ref().as_ref()) {
                let key_text = format!("{dotted}.{}", key.get_ref());
                return Err(unknown_key(at, key.span(), &key_text, "a bars chart", BARS_KEYS));
            }
        }
        let metrics_key = format!("{dotted}.metrics");
        let metrics_value = find(table, "metrics")
            .ok_or_else(|| missing(span.clone(), dotted, "metrics", "a list of metrics, one group of bars each", at))?;
        let items = match metrics_value.get_ref() {
            DeValue::Array(items) if !items.is_empty() => items,
            _ => return Err(at.error(metrics_value.span(), &metrics_key, "expected a non-empty list of metric names")),
        };
        let metrics = items.iter().map(|item| metric_name(model, item, &metrics_key, at)).collect::<Result<_, _>>()?;
        let series = find(table, "series").map(|v| swept_key(v, &format!("{dotted}.series"), sweep, at)).transpose()?;
        let mut pinned = Vec::new();
        if let Some(at_value) = find(table, "at") {
            let at_key = format!("{dotted}.at");
            pinned = pinned_values(at_value, &at_key, sweep, at)?;
            if let Some(series) = series.filter(|s| pinned.iter().any(|(key, _)| key == s)) {
                return Err(at.error(
                    at_value.span(),
                    &at_key,
                    format!("\"{series}\" is the series (one bar per value); it cannot also be pinned"),
                ));
            }
        }
        let name = match find(table, "name") {
            Some(name_value) => file_name(name_value, &format!("{dotted}.name"), model, taken, at)?,
            None => {
                check_free("bars", span.clone(), dotted, model, taken, at)?;
                "bars".to_owned()
            }
        };
        taken.push(name.clone());
        charts.push(BarsOptions { metrics, series, at: pinned, name });
    }
    Ok(charts)
}
