//! `import = "configs/service-config.json"`: clients that run a real retry configuration. The file is translated
//! as `retrylab import` translates it (src/import/), and its settings fill every client key the scenario does not
//! write: in `[client]` for the whole model, in a `[layer.*]` table for that service alone (where the layer's
//! import also beats the model-wide keys, as the layer's own keys do). A key the scenario writes, sweeps or
//! `--set`s wins over the import, as it wins over a preset. `import` can be swept to compare configurations, each
//! value naming its entry after a `#` when the file holds several.
//!
//! The files are read when the scenario is loaded, after every `--set`, so every problem is reported before any
//! work, at the file's line and column. Only the translated values seed a run (the `import*` keys are measurement
//! keys), so importing a file runs exactly what pasting `retrylab import`'s table runs.

use std::path::Path;
use std::sync::Arc;

use toml::de::DeValue;

use super::locator::Locator;
use super::parse::resolve_param;
use super::value::convert;
use super::{Origin, Scenario};
use crate::error::InputError;
use crate::import::{self, Format};
use crate::params::{ParamSpec, Part, Value};

/// The most distinct imports a scenario's sweep may ask for.
const MAX_IMPORTS: usize = 256;

/// Keys a translation may give that a model without them has no use for: left out, with a note.
const LEFT_OUT_WHERE_ABSENT: &[(&str, &str)] = &[
    ("retry_after", "this model's services send no Retry-After"),
    ("pushback", "this model's services send no gRPC pushback"),
    ("limiter_scope", "each caller of this model keeps its own limiter"),
];

/// One configuration, read and translated for the scenario's model.
#[derive(Debug)]
pub(crate) struct ImportedPolicy {
    request: Request,
    /// `configs/x.json (grpc, method shop.Cart/*)`: what a point's policy line says it imported.
    label: String,
    /// The translation, as values of the model's parameters.
    values: Vec<(&'static ParamSpec, Value)>,
    /// The traps crossed (as `retrylab import` warns of them) and the keys left out, each with the file's place.
    pub(crate) notes: Vec<String>,
}

/// What the `import*` keys of `[client]` or of one `[layer.*]` table ask for. Two requests are the same when they
/// ask for the same thing, wherever it was written.
#[derive(Clone, Debug)]
struct Request {
    /// The path as written, relative to the scenario's folder, without its `#ENTRY`.
    file: String,
    format: Option<&'static str>,
    /// The key that names the entry (`import_method`, or `import` for a `#ENTRY`) and the name.
    entry: Option<(&'static str, String)>,
    /// For a `[layer.*]` table: only the keys such a table may set apply.
    for_part: bool,
    /// `import_version` and `import_reading` as written, each with where.
    versions: Option<(String, Origin)>,
    reading: Option<(String, Origin)>,
}

impl PartialEq for Request {
    fn eq(&self, other: &Request) -> bool {
        let text = |written: &Option<(String, Origin)>| written.as_ref().map(|(text, _)| text.clone());
        (&self.file, self.format, &self.entry, self.for_part)
            == (&other.file, other.format, &other.entry, other.for_part)
            && text(&self.versions) == text(&other.versions)
            && text(&self.reading) == text(&other.reading)
    }
}

/// Reads and translates every configuration `scenario` imports (each value of a swept `import` included); a file
/// that cannot be read or translated, or whose translation this model cannot run, is an error located in the file
/// or at the key that named it.
pub(super) fn resolve(scenario: &mut Scenario) -> Result<(), InputError> {
    let mut wanted: Vec<(Request, Origin, String)> = Vec::new();
    for combination in model_wide_combinations(scenario)? {
        let get = |key: &str| combination.iter().find(|(k, _, _)| *k == key).map(|(_, v, o)| (v.clone(), o.clone()));
        if let Some((request, origin)) = request_of(scenario, &get, false)? {
            wanted.push((request, origin, "client.import".to_owned()));
        }
    }
    for (index, part) in scenario.parts.iter().enumerate() {
        let origins = &scenario.part_origins[index];
        let get = |key: &str| {
            let origin = origins.values.iter().find(|(k, _)| *k == key).map_or(Origin::Default, |(_, o)| o.clone());
            text_of(part.get(key)).map(|text| (text, origin))
        };
        if let Some((request, origin)) = request_of(scenario, &get, true)? {
            let table = scenario.model.part_table().map_or("", |table| table.table);
            wanted.push((request, origin, format!("{table}.{}.import", part.name)));
        }
    }
    let mut imports: Vec<ImportedPolicy> = Vec::new();
    for (request, origin, key) in wanted {
        if imports.iter().any(|done| done.request == request) {
            continue;
        }
        if imports.len() == MAX_IMPORTS {
            let message = format!("more than {MAX_IMPORTS} different imports; sweep fewer files");
            return Err(scenario.error(origin, Some(key), message));
        }
        imports.push(read(scenario, request, &origin, &key)?);
    }
    scenario.imports = imports;
    Ok(())
}

/// The text of a value of an `import*` key.
fn text_of(value: Option<&Value>) -> Option<String> {
    match value {
        Some(Value::Text(text)) => Some(text.to_string()),
        Some(Value::Choice(name)) => Some((*name).to_owned()),
        _ => None,
    }
}

type Combination = Vec<(&'static str, String, Origin)>;

/// Every combination of the model-wide `import*` values the sweep can form, each value with where it was written.
fn model_wide_combinations(scenario: &Scenario) -> Result<Vec<Combination>, InputError> {
    let mut combinations: Vec<Combination> = vec![Vec::new()];
    for key in crate::model::client::IMPORT_KEYS {
        let Some(setting) = scenario.settings.iter().find(|setting| setting.spec.key == *key) else { continue };
        let (values, origin) = match scenario.sweep.iter().find(|axis| std::ptr::eq(axis.spec, setting.spec)) {
            Some(axis) => (axis.values.iter().filter_map(|v| text_of(Some(v))).collect(), axis.origin.clone()),
            None => (text_of(setting.value.as_ref()).into_iter().collect::<Vec<_>>(), setting.origin.clone()),
        };
        if values.is_empty() {
            continue;
        }
        if combinations.len().saturating_mul(values.len()) > MAX_IMPORTS {
            let message = format!("the sweep asks for more than {MAX_IMPORTS} different imports; sweep fewer files");
            return Err(scenario.error(origin, Some(Scenario::dotted_key(setting.spec)), message));
        }
        let mut next = Vec::with_capacity(combinations.len() * values.len());
        for done in &combinations {
            for value in &values {
                let mut combination = done.clone();
                combination.push((*key, value.clone(), origin.clone()));
                next.push(combination);
            }
        }
        combinations = next;
    }
    Ok(combinations)
}

/// The request the `import*` values `get` returns describe, with where `import` was written; `None` without
/// `import`.
fn request_of(
    scenario: &Scenario,
    get: &dyn Fn(&str) -> Option<(String, Origin)>,
    for_part: bool,
) -> Result<Option<(Request, Origin)>, InputError> {
    let prefix = if for_part { "" } else { "client." };
    let Some((written, origin)) = get("import") else {
        return match crate::model::client::IMPORT_KEYS.iter().find_map(|key| get(key).map(|(_, o)| (key, o))) {
            Some((key, origin)) => Err(scenario.error(
                origin,
                Some(format!("{prefix}{key}")),
                "has no effect without `import`; set it too",
            )),
            None => Ok(None),
        };
    };
    let (file, hash_entry) = match written.split_once('#') {
        Some((file, entry)) => (file.to_owned(), Some(("import", entry.to_owned()))),
        None => (written.clone(), None),
    };
    let mut entries: Vec<(&'static str, String, Origin)> =
        hash_entry.into_iter().map(|(k, e)| (k, e, origin.clone())).collect();
    for key in ["import_method", "import_route", "import_profile", "import_instance"] {
        entries.extend(get(key).map(|(name, at)| (key, name, at)));
    }
    if let [(first, _, _), (second, _, at), ..] = &entries[..] {
        let first = if *first == "import" { "a #ENTRY in `import`".to_owned() } else { format!("`{first}`") };
        let message = format!("{first} already names the entry to import; give one of them");
        return Err(scenario.error(at.clone(), Some(format!("{prefix}{second}")), message));
    }
    if file.trim().is_empty() {
        return Err(scenario.error(origin, Some(format!("{prefix}import")), "names no file"));
    }
    let format = get("import_format").and_then(|(name, _)| import::format_named(&name)).map(|format| format.name);
    let entry = entries.pop().map(|(key, name, _)| (key, name));
    let (versions, reading) = (get("import_version"), get("import_reading"));
    Ok(Some((Request { file, format, entry, for_part, versions, reading }, origin)))
}

/// Reads and translates one requested file for `scenario`'s model.
fn read(scenario: &Scenario, request: Request, origin: &Origin, key: &str) -> Result<ImportedPolicy, InputError> {
    let at_key = |message: String| scenario.error(origin.clone(), Some(key.to_owned()), message);
    let folder = scenario.path.parent().unwrap_or(Path::new(""));
    let path = folder.join(&request.file);
    let shown = path.display().to_string();
    let text = import::read_config(&path, &shown).map_err(at_key)?;
    let imported_by = format!("imported by {}", place(scenario, origin, key));
    let in_file = |error: InputError| InputError { message: format!("{} ({imported_by})", error.message), ..error };
    let format = match request.format.and_then(import::format_named) {
        Some(format) => format,
        None => import::format_of(&shown, &text).map_err(in_file)?,
    };
    check_entry_key(&request, format).map_err(at_key)?;
    let at = |(_, written): &(String, Origin), key: &str, message: String| {
        let prefix = if request.for_part { "" } else { "client." };
        scenario.error(written.clone(), Some(format!("{prefix}{key}")), message)
    };
    let pins = match &request.versions {
        Some(versions) => {
            import::versions::parse_pins([versions.0.as_str()]).map_err(|m| at(versions, "import_version", m))?
        }
        None => Vec::new(),
    };
    let ask = import::Ask {
        choice: request.entry.as_ref().map(|(_, name)| name.as_str()),
        pins: &pins,
        reading: request.reading.as_ref().map(|(reading, _)| reading.as_str()),
    };
    if let Err(message) = import::check_ask(format, &ask) {
        let message = message.replace("--version", "import_version").replace("--reading", "import_reading");
        let (key, written) = match (&request.reading, &request.versions) {
            (Some(reading), _) if message.starts_with("import_reading") => ("import_reading", reading),
            (_, Some(versions)) => ("import_version", versions),
            (Some(reading), None) => ("import_reading", reading),
            (None, None) => unreachable!("an empty ask passes every check"),
        };
        return Err(at(written, key, message));
    }
    let (format, imported) = import::translate(&shown, &text, Some(format), &ask).map_err(in_file)?;
    let entry = imported.entry.as_deref().map_or_else(String::new, |entry| format!(", {} {entry}", format.entry));
    let label = format!("{} ({}{entry})", request.file, format.name);
    let mut notes: Vec<String> = imported
        .warnings
        .iter()
        .map(|warning| {
            let place = warning.at.map_or_else(String::new, |at| format!(":{}:{}", at.line, at.column));
            let field = if warning.field.is_empty() { String::new() } else { format!(" {}:", warning.field) };
            format!("{shown}{place}:{field} {}", warning.message)
        })
        .collect();
    let mut values = Vec::new();
    for setting in &imported.settings {
        let Some(spec) = spec_for(scenario, setting.key, request.for_part) else {
            let Some((_, why)) = LEFT_OUT_WHERE_ABSENT.iter().find(|(left_out, _)| *left_out == setting.key) else {
                let place = if request.for_part { "a [layer.*] table" } else { "this model" };
                return Err(at_key(format!(
                    "{shown} gives `{} = {}` (from {}), which {place} does not take; import it into a server scenario, \
                     or write the scenario's own policy",
                    setting.key, setting.value, setting.from
                )));
            };
            notes.push(format!(
                "{shown}: `{} = {}` (from {}) is left out: {why}",
                setting.key, setting.value, setting.from
            ));
            continue;
        };
        let text = setting.value.to_string();
        let raw = DeValue::parse(&text).map_err(|error| at_key(format!("internal error: {error}")))?;
        let locator = Locator { file: &shown, source: &text, command_line: None };
        let value = convert(spec, setting.key, raw.get_ref(), raw.span(), locator).map_err(|error| {
            at_key(format!(
                "{shown} gives `{} = {text}` (from {}), which this model refuses: {}",
                setting.key, setting.from, error.message
            ))
        })?;
        values.push((spec, value));
    }
    Ok(ImportedPolicy { request, label, values, notes })
}

/// `scenario.toml:7:10 client.import`, or the `--set` that wrote it.
fn place(scenario: &Scenario, origin: &Origin, key: &str) -> String {
    match origin {
        Origin::File(at) => format!("{}:{}:{} {key}", scenario.display_path(), at.line, at.column),
        Origin::CommandLine(argument) => format!("--set {argument}"),
        Origin::Default => format!("{} {key}", scenario.display_path()),
    }
}

/// The model's parameter `key` names, when the model (or, for a part, its `[layer.*]` tables) takes it.
fn spec_for(scenario: &Scenario, key: &str, for_part: bool) -> Option<&'static ParamSpec> {
    let (spec, _) = resolve_param(scenario.model, key)?;
    let overridable = scenario.model.part_table().is_some_and(|table| table.overridable.contains(&spec.key));
    (!for_part || overridable).then_some(spec)
}

/// Refuses an entry key of another format's kind (`import_route` for a gRPC service config, whose entries are
/// methods).
fn check_entry_key(request: &Request, format: &Format) -> Result<(), String> {
    match &request.entry {
        Some((key, _)) if *key != "import" && key.strip_prefix("import_") != Some(format.entry) => Err(format!(
            "`{key}` names a {}, but {} is a {} file, whose entries are {}s: write import_{} (or {}#NAME)",
            key.trim_start_matches("import_"),
            request.file,
            format.name,
            format.entry,
            format.entry,
            request.file
        )),
        _ => Ok(()),
    }
}

/// The policy a point imports, applied: the model-wide import fills `entries` where `written` lacks the key (and
/// counts it written, so a preset it names gives way to the keys it sets), and each part's own import fills that
/// part's values. Returns what was imported, for the point's policy line.
pub(super) fn fill(
    scenario: &Scenario,
    entries: &mut [(&'static ParamSpec, Option<Value>)],
    written: &mut Vec<&'static str>,
    parts: &mut Arc<[Part]>,
) -> Vec<String> {
    let mut labels = Vec::new();
    let get = |key: &str| {
        let value = entries.iter().find(|(spec, _)| spec.key == key).and_then(|(_, value)| text_of(value.as_ref()));
        value.map(|text| (text, Origin::Default))
    };
    if let Ok(Some((request, _))) = request_of(scenario, &get, false)
        && let Some(imported) = scenario.imports.iter().find(|done| done.request == request)
    {
        for (spec, value) in &imported.values {
            if written.contains(&spec.key) {
                continue;
            }
            if let Some(entry) = entries.iter_mut().find(|(own, _)| std::ptr::eq(*own, *spec)) {
                entry.1 = Some(value.clone());
                written.push(spec.key);
            }
        }
        labels.push(format!("imported from {}", imported.label));
    }
    if parts.iter().any(|part| part.get("import").is_some()) {
        let mut expanded = parts.to_vec();
        for part in &mut expanded {
            let get = |key: &str| text_of(part.get(key)).map(|text| (text, Origin::Default));
            let Ok(Some((request, _))) = request_of(scenario, &get, true) else { continue };
            let Some(imported) = scenario.imports.iter().find(|done| done.request == request) else { continue };
            for (spec, value) in &imported.values {
                if part.get(spec.key).is_none() {
                    part.overrides.push((spec, value.clone()));
                }
            }
            labels.push(format!("{} imports {}", part.name, imported.label));
        }
        *parts = expanded.into();
    }
    labels
}

/// Every trap the scenario's imports crossed, and every key left out, one line each (printed before a run); for a
/// call graph whose tables import, which callers' policies still come from the model-wide keys.
pub(crate) fn notes(scenario: &Scenario) -> Vec<String> {
    let mut notes: Vec<String> = Vec::new();
    for note in scenario.imports.iter().flat_map(|imported| &imported.notes) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    notes.extend(model_wide_callers(scenario));
    notes
}

/// For a call graph whose `[layer.*]` tables import: the import sets only its own service's policy, so name the
/// other callers (the users' clients and every service that calls others without an import or `max_attempts` of
/// its own) and the model-wide `max_attempts` they run with.
fn model_wide_callers(scenario: &Scenario) -> Option<String> {
    let table = scenario.model.part_table()?.table;
    let importing: Vec<&str> =
        scenario.parts.iter().filter(|part| part.get("import").is_some()).map(|part| part.name.as_str()).collect();
    if importing.is_empty() {
        return None;
    }
    let own_policy = |part: &crate::params::Part| part.get("import").is_some() || part.get("max_attempts").is_some();
    let mut others = vec!["the users' clients".to_owned()];
    others.extend(
        scenario
            .parts
            .iter()
            .filter(|part| !part.links.is_empty() && !own_policy(part))
            .map(|part| format!("[{table}.{}]", part.name)),
    );
    let written = scenario.settings.iter().find(|setting| setting.spec.key == "max_attempts");
    let swept = scenario.sweep.iter().find(|axis| axis.spec.key == "max_attempts");
    let attempts = match (swept, written.and_then(|setting| setting.value.as_ref().map(|v| (v, &setting.origin)))) {
        (Some(axis), _) => {
            let values: Vec<String> = axis.values.iter().map(ToString::to_string).collect();
            format!("the swept max_attempts ({})", values.join(", "))
        }
        (None, Some((value, origin))) if *origin != Origin::Default => format!("max_attempts = {value}"),
        _ => "no max_attempts written, so 1 attempt each: no retries".to_owned(),
    };
    let tables: Vec<String> = importing.iter().map(|name| format!("[{table}.{name}]")).collect();
    let others = match others.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        None => unreachable!("the users' clients are always there"),
    };
    Some(format!(
        "{} import{} a policy for {} own service alone; {others} run the model-wide [client] policy: {attempts}",
        tables.join(", "),
        if tables.len() == 1 { "s" } else { "" },
        if tables.len() == 1 { "its" } else { "each one's" },
    ))
}

#[cfg(test)]
mod tests;
