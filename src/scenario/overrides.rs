//! `--set KEY=VALUE`: change one key of a loaded scenario from the command line. Every key a scenario file can
//! hold can be set, in order, each checked as the file's own values are:
//!
//! - a top-level key: `seed`, `replicates`, `timeline_bucket`, `max_events_per_run`, `name`, `description`;
//! - a parameter, bare or with its table (`clients`, `model.clients`, `client.base`), by its name or its former
//!   name: a single value fixes it (and removes it from the sweep); a list or `{ from, to, step }` range sweeps it;
//! - a sweep axis (`sweep.clients`), which sweeps even a single value;
//! - a chart option (`charts.x`, `charts.timeline_until`, `charts.heatmap`, …), checked against the sweep as it
//!   stands then (so set `charts.*` after the `--set` that changes the sweep);
//! - a part's own value or links (`layer.db.workers`, `layer.api.calls`), for models with parts.
//!
//! VALUE is read as a TOML value, or as a plain string when it is not one, so `--set strategy=full-jitter` needs
//! no quotes. Errors name the argument instead of a line of the file. A scenario's own top-level
//! `set = ["KEY=VALUE", …]` is applied the same way after the rest of the file (and before any `--set`), its
//! errors located at the entry.

use std::borrow::Cow;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::chart_options::{CHART_KEYS, read_chart_key};
use super::locator::Locator;
use super::parse::{axis_values, parse_bucket, parse_event_cap, parse_replicates, parse_seed, resolve_param};
use super::parts::set_part_key;
use super::value::{convert, type_name};
use super::{Scenario, SweepAxis};
use crate::error::{InputError, Origin};

/// The top-level keys `--set` takes besides parameters and tables.
const TOP_LEVEL_KEYS: &[&str] = &["seed", "replicates", "timeline_bucket", "max_events_per_run", "name", "description"];

pub(super) fn apply(scenario: &mut Scenario, argument: &str) -> Result<(), InputError> {
    let file = scenario.display_path();
    let origin = Origin::CommandLine(argument.to_owned());
    let Some((key, text)) = argument.split_once('=') else {
        return Err(InputError::new(&file, origin, None, "expected KEY=VALUE, like `clients=50`"));
    };
    let key = key.trim();
    let text = text.trim();
    let value = DeValue::parse(text).unwrap_or_else(|_| Spanned::new(0..text.len(), DeValue::String(text.into())));
    let at = Locator { file: &file, source: text, command_line: Some(argument) };
    let bad = |message: &str| at.error(0..0, key, message);
    let string = || match value.get_ref() {
        DeValue::String(text) => Ok(text.to_string()),
        other => Err(bad(&format!("expected a string, found {}", type_name(other)))),
    };
    match key {
        "seed" => {
            scenario.seed =
                parse_seed(value.get_ref()).ok_or_else(|| bad("expected a whole number from 0 to 2^63 − 1"))?
        }
        "replicates" => {
            scenario.replicates =
                parse_replicates(value.get_ref()).ok_or_else(|| bad("expected a whole number from 1 to 1000000"))?
        }
        "timeline_bucket" => scenario.timeline_bucket = parse_bucket(value.get_ref()).map_err(|why| bad(&why))?,
        "max_events_per_run" => {
            scenario.max_events_per_run =
                Some(parse_event_cap(value.get_ref()).ok_or_else(|| bad("expected a whole number ≥ 1000"))?)
        }
        "name" => scenario.name = string()?,
        "description" => scenario.description = string()?,
        _ => {
            if let Some(chart_key) = key.strip_prefix("charts.") {
                return set_chart(scenario, chart_key, &value, at);
            }
            if let Some(table) = scenario.model.part_table()
                && let Some(rest) = key.strip_prefix(table.table).and_then(|rest| rest.strip_prefix('.'))
            {
                let mut parts = scenario.parts.to_vec();
                if parts.is_empty() {
                    return Err(bad(&format!(
                        "the scenario declares no [{}.*] tables; add them to the file first",
                        table.table
                    )));
                }
                set_part_key(scenario.model, table, &mut parts, &mut scenario.part_origins, rest, &value, at)?;
                scenario.parts = parts.into();
                return Ok(());
            }
            set_param(scenario, key, &value, origin, at)?;
        }
    }
    Ok(())
}

/// One entry of the file's own `set` list: applied as `--set` applies it, then every place it set (and any error
/// it meets) is located at the entry in the file rather than on a command line.
pub(super) fn apply_from_file(scenario: &mut Scenario, argument: &str, at: Origin) -> Result<(), InputError> {
    let given = Origin::CommandLine(argument.to_owned());
    apply(scenario, argument).map_err(|error| InputError { origin: at.clone(), ..error })?;
    let relocate = |origin: &mut Origin| {
        if *origin == given {
            *origin = at.clone();
        }
    };
    scenario.settings.iter_mut().for_each(|setting| relocate(&mut setting.origin));
    scenario.sweep.iter_mut().for_each(|axis| relocate(&mut axis.origin));
    for part in &mut scenario.part_origins {
        relocate(&mut part.table);
        part.values.iter_mut().for_each(|(_, origin)| relocate(origin));
    }
    Ok(())
}

/// The scenario text with `overrides` written into its own `set` list (after any it holds already), so that
/// `retrylab run` on the result gives what `--set` with them gives on the original. The rest of the text, comments
/// included, is kept as it is; a new list goes after the file's opening comments.
pub(crate) fn write_into_source(source: &str, overrides: &[String]) -> Result<String, InputError> {
    if overrides.is_empty() {
        return Ok(source.to_owned());
    }
    let quoted = |text: &str| toml::Value::String(text.to_owned()).to_string();
    let listed = |items: &[String]| items.iter().map(|item| format!("  {},\n", quoted(item))).collect::<String>();
    let root = DeTable::parse(source).map_err(|error| {
        let at = Locator { file: "scenario", source, command_line: None };
        at.error(error.span().unwrap_or(0..0), "", format!("invalid TOML: {}", error.message()))
    })?;
    if let Some(value) = super::parse::find(root.get_ref(), "set") {
        let mut items: Vec<String> = match value.get_ref() {
            DeValue::Array(items) => {
                items.iter().filter_map(|item| item.get_ref().as_str().map(str::to_owned)).collect()
            }
            _ => Vec::new(),
        };
        items.extend(overrides.iter().cloned());
        let span = value.span();
        return Ok(format!("{}[\n{}]{}", &source[..span.start], listed(&items), &source[span.end..]));
    }
    let opening: usize = source
        .split_inclusive('\n')
        .take_while(|line| line.trim().is_empty() || line.trim_start().starts_with('#'))
        .map(str::len)
        .sum();
    let (head, rest) = source.split_at(opening);
    let separator = if head.is_empty() || head.ends_with('\n') { "" } else { "\n" };
    Ok(format!(
        "{head}{separator}# Changed in the retrylab lab. These overrides apply after the rest of this file, in order, as \
         `--set` applies\n# them, so `retrylab run` on this file gives the numbers the lab showed.\nset = [\n{}]\n{rest}",
        listed(overrides)
    ))
}

/// A parameter or a sweep axis.
fn set_param(
    scenario: &mut Scenario,
    key: &str,
    value: &Spanned<DeValue<'_>>,
    origin: Origin,
    at: Locator<'_>,
) -> Result<(), InputError> {
    let (sweep_only, param_key) = match key.strip_prefix("sweep.") {
        Some(rest) => (true, rest),
        None => (false, key),
    };
    let Some((spec, name)) = resolve_param(scenario.model, param_key) else {
        let mut valid = TOP_LEVEL_KEYS.to_vec();
        valid.extend(scenario.model.params().map(|spec| spec.key));
        let tables = match scenario.model.part_table() {
            Some(table) => format!("charts.KEY, {}.NAME.KEY", table.table),
            None => "charts.KEY".to_owned(),
        };
        return Err(at.error(
            0..0,
            key,
            format!("unknown key `{key}`; valid keys: {}, sweep.KEY, {tables}", valid.join(", ")),
        ));
    };
    let dotted = Scenario::dotted_key(spec);
    if let Some(table) = scenario.model.part_table().filter(|table| table.replaces.contains(&spec.key))
        && !scenario.parts.is_empty()
    {
        return Err(at.error(
            0..0,
            &dotted,
            format!("the [{}.*] tables give the graph here; change them instead of `{}`", table.table, spec.key),
        ));
    }
    // A list-valued parameter sweeps only a list of lists.
    let is_list = match (spec.kind, value.get_ref()) {
        (kind, DeValue::Array(items)) if kind.takes_a_list() => {
            items.first().is_some_and(|item| matches!(item.get_ref(), DeValue::Array(_)))
        }
        (_, DeValue::Array(_) | DeValue::Table(_)) => true,
        _ => false,
    };
    let position = scenario.sweep.iter().position(|axis| std::ptr::eq(axis.spec, spec));
    if is_list || sweep_only {
        let values = axis_values(spec, &dotted, value, at)?;
        let axis = SweepAxis { spec, name, values, origin };
        match position {
            Some(i) => scenario.sweep[i] = axis,
            None => scenario.sweep.push(axis),
        }
    } else {
        let converted = convert(spec, &dotted, value.get_ref(), value.span(), at)?;
        if let Some(i) = position {
            scenario.sweep.remove(i);
        }
        let setting =
            scenario.settings.iter_mut().find(|s| std::ptr::eq(s.spec, spec)).expect("every parameter has a setting");
        setting.value = Some(converted);
        setting.origin = origin;
    }
    Ok(())
}

/// One key of `[charts]`, replacing what the file gave it.
fn set_chart(
    scenario: &mut Scenario,
    chart_key: &str,
    value: &Spanned<DeValue<'_>>,
    at: Locator<'_>,
) -> Result<(), InputError> {
    if chart_key.contains('.') {
        let (table, _) = chart_key.split_once('.').unwrap_or_default();
        return Err(at.error(
            0..0,
            &format!("charts.{chart_key}"),
            if CHART_KEYS.contains(&table) {
                format!("set the whole `charts.{table}`, as an inline table: --set 'charts.{table}={{ … }}'")
            } else {
                format!("unknown chart option; valid: {}", CHART_KEYS.join(", "))
            },
        ));
    }
    // Heatmaps and bar charts must not share a file name: the ones not being replaced keep theirs.
    let mut taken: Vec<String> = match chart_key {
        "heatmap" => scenario.charts.bars.iter().map(|bars| bars.name.clone()).collect(),
        "bars" => scenario.charts.heatmaps.iter().map(|heatmap| heatmap.name.clone()).collect(),
        _ => Vec::new(),
    };
    let key = Spanned::new(0..0, Cow::Borrowed(chart_key));
    let mut charts = scenario.charts.clone();
    read_chart_key(scenario.model, &mut charts, &key, value, &scenario.sweep, &mut taken, at)?;
    scenario.charts = charts;
    Ok(())
}
