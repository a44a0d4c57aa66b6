//! Walks the TOML document with its spans and builds a [`Scenario`], refusing unknown keys and wrong types.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::chart_options;
use super::locator::Locator;
use super::value::{convert, integer, number, type_name};
use super::{
    ChartOptions, DEFAULT_REPLICATES, DEFAULT_SEED, DEFAULT_TIMELINE_BUCKET, SCHEMA_VERSION, Scenario, Setting,
    SweepAxis,
};
use crate::error::{InputError, LineCol, Origin};
use crate::model::ModelKind;
use crate::params::{ParamDefault, ParamKind, ParamSpec, Section, Value};
use crate::time::SimDuration;
use crate::time::parse_duration;

const TOP_LEVEL_KEYS: &[&str] = &[
    "schema_version",
    "name",
    "description",
    "seed",
    "replicates",
    "timeline_bucket",
    "max_events_per_run",
    "model",
    "workload",
    "client",
    "sweep",
    "charts",
    "tune",
    "set",
];
const RANGE_KEYS: &[&str] = &["from", "to", "step"];
/// Finer timeline buckets would cost memory without showing anything a chart can draw.
pub(super) const MIN_TIMELINE_BUCKET: SimDuration = SimDuration::from_micros(1);
/// Sweeps larger than this are almost certainly a typo in a range.
pub(super) const MAX_AXIS_VALUES: usize = 100_000;

type Entry<'i> = (&'i Spanned<std::borrow::Cow<'i, str>>, &'i Spanned<DeValue<'i>>);

pub(super) fn find<'t, 'i>(table: &'t DeTable<'i>, key: &str) -> Option<&'t Spanned<DeValue<'i>>> {
    table.iter().find(|(k, _)| k.get_ref() == key).map(|(_, v)| v)
}

pub(super) fn as_table<'t, 'i>(
    value: &'t Spanned<DeValue<'i>>,
    key: &str,
    at: Locator<'_>,
) -> Result<&'t DeTable<'i>, InputError> {
    value
        .get_ref()
        .as_table()
        .ok_or_else(|| at.error(value.span(), key, format!("expected a table, found {}", type_name(value.get_ref()))))
}

pub(super) fn unknown_key(at: Locator<'_>, span: Range<usize>, key: &str, where_: &str, valid: &[&str]) -> InputError {
    at.error(span, key, format!("unknown key `{key}` in {where_}; valid keys: {}", valid.join(", ")))
}

/// Parses scenario text.
pub(super) fn parse(path: &Path, source: String) -> Result<Scenario, InputError> {
    let file = path.display().to_string();
    let at = Locator { file: &file, source: &source, command_line: None };
    let root = DeTable::parse(&source).map_err(|error| {
        let offset = error.span().map_or(0, |span| span.start);
        let message = error.message().lines().next().unwrap_or("invalid TOML").trim().to_owned();
        let duplicate = error
            .span()
            .filter(|_| message.starts_with("duplicate key"))
            .and_then(|span| source.get(span))
            .map(|key| key.trim().trim_matches(|c| c == '"' || c == '\''))
            .filter(|key| !key.is_empty() && key.len() <= 100 && !key.contains('\n'));
        let (key, message) = match duplicate {
            Some(key) => (
                Some(key.to_owned()),
                format!("invalid TOML: `{key}` is set twice in one table (a duplicate key); keep one"),
            ),
            None => (None, format!("invalid TOML: {message}")),
        };
        InputError::new(&file, Origin::File(LineCol::of_offset(&source, offset)), key, message)
    })?;
    let root_span = root.span();
    let root = root.get_ref();

    let part_tables: Vec<&str> = ModelKind::ALL.iter().filter_map(|m| m.part_table()).map(|t| t.table).collect();
    for (key, _) in root.iter() {
        let key_text = key.get_ref().as_ref();
        if !TOP_LEVEL_KEYS.contains(&key_text) && !part_tables.contains(&key_text) {
            return Err(unknown_key(at, key.span(), key.get_ref(), "the scenario", TOP_LEVEL_KEYS));
        }
    }

    let version = find(root, "schema_version").ok_or_else(|| {
        at.error(
            root_span.start..root_span.start,
            "schema_version",
            format!("missing; add `schema_version = {SCHEMA_VERSION}` at the top"),
        )
    })?;
    match integer(version.get_ref()) {
        Some(SCHEMA_VERSION) => {}
        Some(other) => {
            return Err(at.error(
                version.span(),
                "schema_version",
                format!("version {other} is not supported; this retrylab reads version {SCHEMA_VERSION}"),
            ));
        }
        None => {
            return Err(at.error(version.span(), "schema_version", format!("expected the integer {SCHEMA_VERSION}")));
        }
    }

    let text = |key: &str| -> Result<Option<String>, InputError> {
        match find(root, key) {
            None => Ok(None),
            Some(value) => match value.get_ref() {
                DeValue::String(s) => Ok(Some(s.to_string())),
                other => Err(at.error(value.span(), key, format!("expected a string, found {}", type_name(other)))),
            },
        }
    };
    let name = text("name")?
        .unwrap_or_else(|| path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned()));
    let description = text("description")?.unwrap_or_default();

    let seed = match find(root, "seed") {
        None => DEFAULT_SEED,
        Some(value) => parse_seed(value.get_ref())
            .ok_or_else(|| at.error(value.span(), "seed", "expected a whole number from 0 to 2^63 − 1"))?,
    };
    let replicates = match find(root, "replicates") {
        None => DEFAULT_REPLICATES,
        Some(value) => parse_replicates(value.get_ref())
            .ok_or_else(|| at.error(value.span(), "replicates", "expected a whole number from 1 to 1000000"))?,
    };
    let timeline_bucket = match find(root, "timeline_bucket") {
        None => DEFAULT_TIMELINE_BUCKET,
        Some(value) => parse_bucket(value.get_ref()).map_err(|why| at.error(value.span(), "timeline_bucket", why))?,
    };

    let max_events_per_run = match find(root, "max_events_per_run") {
        None => None,
        Some(value) => Some(
            parse_event_cap(value.get_ref())
                .ok_or_else(|| at.error(value.span(), "max_events_per_run", "expected a whole number ≥ 1000"))?,
        ),
    };
    let model_value = find(root, "model").ok_or_else(|| {
        at.error(
            root_span.start..root_span.start,
            "model",
            format!("missing [model] table; add one with `kind = \"{}\"`", ModelKind::NAMES.join("\" | \"")),
        )
    })?;
    let model_table = as_table(model_value, "model", at)?;
    let kind_value = find(model_table, "kind").ok_or_else(|| {
        at.error(model_value.span(), "model.kind", format!("missing; valid kinds: {}", ModelKind::NAMES.join(", ")))
    })?;
    let model = match kind_value.get_ref() {
        DeValue::String(kind) => ModelKind::from_name(kind).ok_or_else(|| {
            at.error(
                kind_value.span(),
                "model.kind",
                format!("unknown model \"{kind}\"; valid kinds: {}", ModelKind::NAMES.join(", ")),
            )
        })?,
        other => {
            return Err(at.error(
                kind_value.span(),
                "model.kind",
                format!("expected a string, found {}", type_name(other)),
            ));
        }
    };

    let mut settings: Vec<Setting> = model
        .params()
        .map(|spec| {
            let value = spec.default.hashed_value();
            Setting { spec, value, origin: Origin::Default }
        })
        .collect();

    read_section(model, Section::Model, model_table.iter(), at, &mut settings)?;
    for section in [Section::Workload, Section::Client] {
        if let Some(value) = find(root, section.name()) {
            let table = as_table(value, section.name(), at)?;
            if !model.params().any(|spec| spec.section == section) {
                return Err(at.error(
                    value.span(),
                    section.name(),
                    format!("the \"{}\" model takes no [{}] table; remove it", model.name(), section.name()),
                ));
            }
            read_section(model, section, table.iter(), at, &mut settings)?;
        }
    }

    let mut sweep = Vec::new();
    if let Some(sweep_value) = find(root, "sweep") {
        for (key, value) in as_table(sweep_value, "sweep", at)?.iter() {
            let (spec, name) = resolve_param(model, key.get_ref()).ok_or_else(|| {
                let valid: Vec<&str> = model.params().map(|spec| spec.key).collect();
                unknown_key(at, key.span(), key.get_ref(), "[sweep]", &valid)
            })?;
            let dotted = format!("sweep.{}", key.get_ref());
            if let Some(earlier) = sweep.iter().find(|axis: &&SweepAxis| std::ptr::eq(axis.spec, spec)) {
                return Err(at.error(
                    key.span(),
                    &dotted,
                    format!("`{}` is already swept above (as `{}`); give it one list or range", spec.key, earlier.name),
                ));
            }
            let values = axis_values(spec, &dotted, value, at)?;
            sweep.push(SweepAxis { spec, name, values, origin: at.origin(key.span()) });
        }
    }

    for setting in &settings {
        if matches!(setting.spec.default, ParamDefault::Required)
            && setting.value.is_none()
            && !sweep.iter().any(|axis| std::ptr::eq(axis.spec, setting.spec))
        {
            let section = setting.spec.section.name();
            return Err(at.error(
                model_value.span().start..model_value.span().start,
                &Scenario::dotted_key(setting.spec),
                format!(
                    "missing; set `{}` in [{section}] or sweep it in [sweep] ({})",
                    setting.spec.key, setting.spec.help
                ),
            ));
        }
    }

    let mut parts = Vec::new();
    let mut part_origins = Vec::new();
    for (key, value) in root.iter().filter(|(key, _)| part_tables.contains(&key.get_ref().as_ref())) {
        let Some(spec) = model.part_table().filter(|spec| spec.table == key.get_ref().as_ref()) else {
            return Err(at.error(
                key.span(),
                key.get_ref(),
                format!("the \"{}\" model takes no [{}.*] tables; remove them", model.name(), key.get_ref()),
            ));
        };
        (parts, part_origins) = super::parts::read_parts(model, spec, value, at)?;
        for replaced in spec.replaces {
            let swept = sweep.iter().find(|axis| axis.spec.key == *replaced).map(|axis| axis.origin.clone());
            let set = settings.iter().find(|s| s.spec.key == *replaced).map(|s| s.origin.clone());
            if let Some(origin) = swept.or(set).filter(|origin| *origin != Origin::Default) {
                return Err(InputError::new(
                    &file,
                    origin,
                    Some(
                        settings
                            .iter()
                            .find(|s| s.spec.key == *replaced)
                            .map_or_else(|| replaced.to_string(), |s| Scenario::dotted_key(s.spec)),
                    ),
                    format!("the [{}.*] tables give the graph here; remove `{replaced}`", spec.table),
                ));
            }
        }
    }

    let charts = match find(root, "charts") {
        None => ChartOptions::default(),
        Some(value) => chart_options::read_charts(model, as_table(value, "charts", at)?, &sweep, at)?,
    };

    let tune = find(root, "tune").map(|value| super::tune::read_tune(model, value, at)).transpose()?;
    let file_overrides = find(root, "set").map(|value| read_file_overrides(value, at)).transpose()?;

    let mut scenario = Scenario {
        path: path.to_owned(),
        source: source.clone(),
        name,
        description,
        model,
        seed,
        replicates,
        timeline_bucket,
        max_events_per_run,
        settings,
        sweep,
        charts,
        parts: parts.into(),
        part_origins,
        tune,
        imports: Vec::new(),
    };
    for (argument, origin) in file_overrides.into_iter().flatten() {
        super::overrides::apply_from_file(&mut scenario, &argument, origin)?;
    }
    Ok(scenario)
}

/// The file's own `set = ["KEY=VALUE", …]`: overrides applied after the rest of the file, as `--set` applies them
/// (the lab's "download the scenario" writes them), each with where it is written.
fn read_file_overrides(value: &Spanned<DeValue<'_>>, at: Locator<'_>) -> Result<Vec<(String, Origin)>, InputError> {
    let expected = "expected a list of \"KEY=VALUE\" strings, as --set takes them";
    let DeValue::Array(items) = value.get_ref() else {
        return Err(at.error(value.span(), "set", format!("{expected}, found {}", type_name(value.get_ref()))));
    };
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::String(text) => Ok((text.to_string(), at.origin(item.span()))),
            other => Err(at.error(item.span(), "set", format!("{expected}, found {}", type_name(other)))),
        })
        .collect()
}

pub(super) fn parse_seed(value: &DeValue<'_>) -> Option<u64> {
    integer(value).and_then(|n| u64::try_from(n).ok())
}

pub(super) fn parse_replicates(value: &DeValue<'_>) -> Option<u32> {
    integer(value).filter(|n| (1..=1_000_000).contains(n)).map(|n| n as u32)
}

pub(super) fn parse_event_cap(value: &DeValue<'_>) -> Option<u64> {
    integer(value).filter(|n| *n >= 1000).map(|n| n as u64)
}

pub(super) fn parse_bucket(value: &DeValue<'_>) -> Result<SimDuration, String> {
    let DeValue::String(text) = value else {
        return Err(format!("expected a duration with its unit, like \"10ms\", found {}", type_name(value)));
    };
    let bucket = parse_duration(text)?;
    if bucket < MIN_TIMELINE_BUCKET {
        return Err(format!("must be at least {MIN_TIMELINE_BUCKET} (\"{text}\" would need a bucket per nanosecond)"));
    }
    Ok(bucket)
}

/// Finds a parameter by bare key (`clients`) or dotted key (`model.clients`, `client.base`), by its name or its
/// former name, with the spelling used (the key's last part).
pub(super) fn resolve_param(model: ModelKind, key: &str) -> Option<(&'static ParamSpec, &'static str)> {
    let (section, bare) = match key.split_once('.') {
        Some((section, bare)) => (Some(Section::ALL.into_iter().find(|s| s.name() == section)?), bare),
        None => (None, key),
    };
    let spec = model.params().find(|spec| spec.answers_to(section, bare))?;
    Some((spec, spec.spelling(bare)?))
}

fn read_section<'i>(
    model: ModelKind,
    section: Section,
    entries: impl Iterator<Item = Entry<'i>>,
    at: Locator<'_>,
    settings: &mut [Setting],
) -> Result<(), InputError> {
    let valid: Vec<&str> = model.params().filter(|spec| spec.section == section).map(|spec| spec.key).collect();
    for (key, value) in entries {
        let key_text = key.get_ref().as_ref();
        if section == Section::Model && key_text == "kind" {
            continue;
        }
        let dotted = format!("{}.{key_text}", section.name());
        let Some(setting) = settings.iter_mut().find(|s| s.spec.answers_to(Some(section), key_text)) else {
            let mut valid = valid.clone();
            if section == Section::Model {
                valid.insert(0, "kind");
            }
            let table = format!("[{}] (model \"{}\")", section.name(), model.name());
            return Err(unknown_key(at, key.span(), &dotted, &table, &valid));
        };
        let list_kind = setting.spec.kind.takes_a_list();
        if (matches!(value.get_ref(), DeValue::Array(_)) && !list_kind) || is_range(value.get_ref()) {
            return Err(at.error(
                value.span(),
                &dotted,
                format!(
                    "a list or range belongs in [sweep]: move it there as `{key_text} = …` to run one point per value"
                ),
            ));
        }
        if let Origin::File(first) = setting.origin {
            return Err(at.error(
                key.span(),
                &dotted,
                format!(
                    "`{}`{} is set twice, here and on line {}; keep one",
                    setting.spec.dotted(),
                    setting.spec.formerly.map_or_else(String::new, |(s, k)| format!(" (formerly `{}.{k}`)", s.name())),
                    first.line,
                ),
            ));
        }
        setting.value = Some(convert(setting.spec, &dotted, value.get_ref(), value.span(), at)?);
        setting.origin = at.origin(value.span());
    }
    Ok(())
}

fn is_range(value: &DeValue<'_>) -> bool {
    value.as_table().is_some_and(|table| table.iter().any(|(k, _)| RANGE_KEYS.contains(&k.get_ref().as_ref())))
}

/// The values of one sweep axis: an array of values, or a `{ from, to, step }` range (both ends included when
/// the steps land on `to`). A scalar is a one-value axis.
pub(super) fn axis_values(
    spec: &'static ParamSpec,
    key: &str,
    value: &Spanned<DeValue<'_>>,
    at: Locator<'_>,
) -> Result<Vec<Value>, InputError> {
    let values = match value.get_ref() {
        DeValue::Array(items) => {
            if items.is_empty() {
                return Err(at.error(value.span(), key, "an empty list sweeps nothing; give at least one value"));
            }
            items
                .iter()
                .map(|item| convert(spec, key, item.get_ref(), item.span(), at))
                .collect::<Result<Vec<_>, _>>()?
        }
        DeValue::Table(table) => range_values(spec, key, table, value.span(), at)?,
        _ => vec![convert(spec, key, value.get_ref(), value.span(), at)?],
    };
    if values.len() > MAX_AXIS_VALUES {
        return Err(at.error(
            value.span(),
            key,
            format!("{} values is more than the limit of {MAX_AXIS_VALUES}; check the step", values.len()),
        ));
    }
    Ok(values)
}

fn range_values(
    spec: &'static ParamSpec,
    key: &str,
    table: &DeTable<'_>,
    span: Range<usize>,
    at: Locator<'_>,
) -> Result<Vec<Value>, InputError> {
    for (k, _) in table.iter() {
        if !RANGE_KEYS.contains(&k.get_ref().as_ref()) {
            return Err(unknown_key(at, k.span(), &format!("{key}.{}", k.get_ref()), "a range", RANGE_KEYS));
        }
    }
    let part = |name: &str| {
        find(table, name).ok_or_else(|| {
            at.error(span.clone(), key, format!("a range needs `from`, `to` and `step`; `{name}` is missing"))
        })
    };
    let (from, to, step) = (part("from")?, part("to")?, part("step")?);
    let from_value = convert(spec, &format!("{key}.from"), from.get_ref(), from.span(), at)?;
    let to_value = convert(spec, &format!("{key}.to"), to.get_ref(), to.span(), at)?;
    let step_key = format!("{key}.step");
    let too_many =
        || at.error(span.clone(), key, format!("the range has more than {MAX_AXIS_VALUES} values; check the step"));
    match (spec.kind, from_value, to_value) {
        (ParamKind::Count { .. }, Value::Count(low), Value::Count(high)) => {
            let step = integer(step.get_ref())
                .filter(|s| *s > 0)
                .ok_or_else(|| at.error(step.span(), &step_key, "expected a whole number > 0"))?;
            check_order(low <= high, key, &span, at)?;
            let count = (high - low) / step + 1;
            if count > MAX_AXIS_VALUES as i64 {
                return Err(too_many());
            }
            Ok((0..count).map(|i| Value::Count(low + i * step)).collect())
        }
        (ParamKind::Real { .. }, Value::Real(low), Value::Real(high)) => {
            let step = number(step.get_ref())
                .filter(|s| s.is_finite() && *s > 0.0)
                .ok_or_else(|| at.error(step.span(), &step_key, "expected a number > 0"))?;
            check_order(low <= high, key, &span, at)?;
            // A small tolerance keeps `to` when decimal steps do not add up exactly (0.1 + 0.2 ≠ 0.3).
            let count = ((high - low) / step + 1e-9).floor() + 1.0;
            if count > MAX_AXIS_VALUES as f64 {
                return Err(too_many());
            }
            Ok((0..count as usize).map(|i| Value::Real(low + i as f64 * step)).collect())
        }
        (ParamKind::Duration, Value::Duration(low), Value::Duration(high)) => {
            let step = match step.get_ref() {
                DeValue::String(text) => parse_duration(text).ok().filter(|d| !d.is_zero()),
                _ => None,
            }
            .ok_or_else(|| at.error(step.span(), &step_key, "expected a duration > 0 with its unit, like \"5ms\""))?;
            check_order(low <= high, key, &span, at)?;
            let count = (high.as_nanos() - low.as_nanos()) / step.as_nanos();
            if count >= MAX_AXIS_VALUES as u64 {
                return Err(too_many());
            }
            let count = count + 1;
            Ok((0..count)
                .map(|i| Value::Duration(SimDuration::from_nanos(low.as_nanos() + i * step.as_nanos())))
                .collect())
        }
        _ => Err(at.error(
            span,
            key,
            format!(
                "`{}` takes names, so it cannot be a range; list the values instead, like [\"a\", \"b\"]",
                spec.key
            ),
        )),
    }
}

fn check_order(ok: bool, key: &str, span: &Range<usize>, at: Locator<'_>) -> Result<(), InputError> {
    if ok { Ok(()) } else { Err(at.error(span.clone(), key, "`from` must not be greater than `to`")) }
}
