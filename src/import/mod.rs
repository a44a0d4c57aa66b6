//! `retrylab import`: a retry configuration as a real library or proxy reads it (a gRPC service config, an AWS
//! config profile, …) translated into the lab's own `[client]` vocabulary, each setting with the field it came
//! from, and a warning for every trap crossed on the way (counting conventions, clamps, defaults filled in,
//! approximations). One format is one file of this folder and one line of [`formats!`]; docs/import.md documents
//! each with its sources.

use std::fmt::Write as _;

use crate::error::{InputError, LineCol, Origin};

mod code;
pub(crate) mod doc;
mod read;
pub(crate) mod spelling;
pub(crate) mod versions;

#[cfg(test)]
pub(crate) use read::MAX_CONFIG_BYTES;
pub(crate) use read::{check_ask, format_of, import_file, read_config, translate};
use versions::{Change, Consumer, Pinned, Version};

/// Declares the formats: each module exports `FORMAT`, and the list's order is the order detection tries them.
macro_rules! formats {
    ($($module:ident),+ $(,)?) => {
        $(mod $module;)+
        /// Every format `retrylab import` reads, in the order detection tries them.
        pub(crate) const FORMATS: &[&Format] = &[$(&$module::FORMAT),+];
        /// Their `--format` names (a scenario's `import_format` takes one).
        pub(crate) const FORMAT_NAMES: &[&str] = &[$($module::FORMAT.name),+];
    };
}

formats!(googleapis, grpc, istio, linkerd, envoy, resilience4j, polly, aws_config, spring, client_go);

/// One configuration format.
pub(crate) struct Format {
    /// The `--format` name.
    pub(crate) name: &'static str,
    /// What it is, in a few words, with the version of its documentation the translation follows.
    pub(crate) about: &'static str,
    /// What `--route`/`--method` names in this format (`method`, `route`, `profile`, …).
    pub(crate) entry: &'static str,
    /// Whether the file looks like this format.
    pub(crate) detect: fn(&Input<'_>) -> bool,
    /// Why a file that nearly looks like this format is not one (a duplicate section, a misplaced key), for the
    /// refusal of a file no format recognises.
    pub(crate) near_miss: Option<fn(&Input<'_>) -> Option<Problem>>,
    /// The chosen entry (or the only one) in the lab's vocabulary.
    pub(crate) translate: fn(&Input<'_>, &Ask<'_>) -> Result<Imported, Problem>,
    /// Whose releases change the translation ([`versions`]); `--version` may name only these.
    pub(crate) consumers: &'static [&'static Consumer],
    /// The ways the file can be read (`--reading`), the default first, each with what it means; empty when there
    /// is one.
    pub(crate) readings: &'static [(&'static str, &'static str)],
}

/// What the user asked of a translation beyond the file: the entry, the releases, the reading.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ask<'a> {
    /// The method, route, profile or instance (`--method`, …), when the file holds several.
    pub(crate) choice: Option<&'a str>,
    /// Releases named with `--version`, checked against the format's consumers.
    pub(crate) pins: &'a [Pinned],
    /// `--reading`, checked against the format's readings.
    pub(crate) reading: Option<&'a str>,
}

impl Ask<'_> {
    /// The release of `consumer` to read the file as: the one named, else the newest checked.
    pub(crate) fn release(&self, consumer: &'static Consumer) -> Version {
        self.pins.iter().find(|pin| pin.consumer.name == consumer.name).map_or(consumer.newest, |pin| pin.version)
    }

    /// Whether `--version` named a release of `consumer`.
    pub(crate) fn named(&self, consumer: &'static Consumer) -> bool {
        self.pins.iter().any(|pin| pin.consumer.name == consumer.name)
    }
}

/// A file to import: its text and, when it reads as YAML or JSON, its documents.
pub(crate) struct Input<'a> {
    pub(crate) text: &'a str,
    pub(crate) tree: Result<Vec<doc::Node>, doc::SyntaxError>,
}

impl<'a> Input<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Input { text, tree: doc::parse(text) }
    }

    /// Every document of the file (Kubernetes manifests hold several); a syntax error is the format's error.
    pub(crate) fn documents(&self) -> Result<&[doc::Node], Problem> {
        self.tree
            .as_deref()
            .map_err(|error| Problem::new(Some(error.at), "", format!("invalid YAML: {}", error.message)))
    }

    /// The file's only document, for formats that hold one; a syntax error is the format's error.
    pub(crate) fn document(&self) -> Result<&doc::Node, Problem> {
        match &self.tree {
            Ok(documents) if documents.len() == 1 => Ok(&documents[0]),
            Ok(documents) if documents.is_empty() => Err(Problem::new(None, "", "the file is empty")),
            Ok(documents) => Err(Problem::new(
                Some(documents[1].at),
                "",
                format!("{} documents in one file; this format holds one", documents.len()),
            )),
            Err(error) => Err(Problem::new(Some(error.at), "", format!("invalid YAML/JSON: {}", error.message))),
        }
    }
}

/// What is wrong with the file: where, the field, and what would be valid.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Problem {
    pub(crate) at: Option<LineCol>,
    pub(crate) field: String,
    pub(crate) message: String,
}

impl Problem {
    pub(crate) fn new(at: Option<LineCol>, field: &str, message: impl Into<String>) -> Self {
        Problem { at, field: field.to_owned(), message: message.into() }
    }

    fn into_input_error(self, file: &str) -> InputError {
        let origin = self.at.map_or(Origin::Default, Origin::File);
        InputError::new(file, origin, (!self.field.is_empty()).then_some(self.field), self.message)
    }
}

/// The translation: `[client]` settings, each with the field it came from, and the traps crossed.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Imported {
    /// Which entry of the file was translated (`helloworld.Greeter/SayHello`), when the format has entries.
    pub(crate) entry: Option<String>,
    pub(crate) settings: Vec<Setting>,
    pub(crate) warnings: Vec<Problem>,
    /// For which releases the translation holds, where a default it relies on changed between releases: one line
    /// each (`Istio 1.24 or later: a route without retries leaves a plain 503 alone`).
    pub(crate) releases: Vec<String>,
}

/// One `[client]` key: its TOML value and where it came from in the file.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Setting {
    pub(crate) key: &'static str,
    pub(crate) value: toml::Value,
    pub(crate) from: String,
}

impl Imported {
    pub(crate) fn set(&mut self, key: &'static str, value: impl Into<toml::Value>, from: impl Into<String>) {
        self.settings.retain(|setting| setting.key != key);
        self.settings.push(Setting { key, value: value.into(), from: from.into() });
    }

    pub(crate) fn warn(&mut self, at: Option<LineCol>, field: &str, message: impl Into<String>) {
        self.warnings.push(Problem::new(at, field, message));
    }

    /// Records that the translation relies on a default of `consumer` that `change` changed: the line says which
    /// side of the change the release read is on, and how to read another. Returns whether that release has the
    /// change.
    pub(crate) fn holds_for(&mut self, consumer: &'static Consumer, change: &Change, ask: &Ask<'_>) -> bool {
        let release = ask.release(consumer);
        let range = consumer.range(release, change.since);
        let changed = release >= change.since;
        let what = if changed { change.after } else { change.before };
        let line = if ask.named(consumer) {
            format!("{range} (--version {}={release}; {}): {what}", consumer.name, change.source)
        } else {
            format!(
                "{range} (assumed: the newest release checked is {}; --version {}=X.Y reads another; {}): {what}",
                consumer.newest, consumer.name, change.source
            )
        };
        self.read_as(line);
        changed
    }

    /// Records for which releases the translation holds, in words of the format's own.
    pub(crate) fn read_as(&mut self, line: String) {
        if !self.releases.contains(&line) {
            self.releases.push(line);
        }
    }

    /// The `[client]` table as TOML, each line commented with its source, the traps listed after it.
    pub(crate) fn client_block(&self, header: &str) -> String {
        let lines: Vec<String> =
            self.settings.iter().map(|setting| format!("{} = {}", setting.key, setting.value)).collect();
        let width = lines.iter().map(|line| line.chars().count()).max().unwrap_or(0);
        let mut block = format!("# {header}\n");
        for line in &self.releases {
            let _ = writeln!(block, "# {line}");
        }
        block.push_str("[client]\n");
        for (line, setting) in lines.iter().zip(&self.settings) {
            let _ = writeln!(block, "{line:width$}  # {}", setting.from);
        }
        if !self.warnings.is_empty() {
            block.push_str("# Traps crossed on the way:\n");
            for warning in &self.warnings {
                let _ = writeln!(block, "# - {}", describe(warning));
            }
        }
        block
    }
}

/// `field (line L): message`, as a warning reads in the block and on stderr.
pub(crate) fn describe(warning: &Problem) -> String {
    let place = match (warning.field.is_empty(), warning.at) {
        (true, None) => String::new(),
        (true, Some(at)) => format!("line {}: ", at.line),
        (false, None) => format!("{}: ", warning.field),
        (false, Some(at)) => format!("{} (line {}): ", warning.field, at.line),
    };
    format!("{place}{}", warning.message)
}

/// The format whose `--format` name is `name`.
pub(crate) fn format_named(name: &str) -> Option<&'static Format> {
    FORMATS.iter().copied().find(|format| format.name == name)
}

/// The formats' `--format` names, in the order detection tries them.
pub fn names() -> Vec<&'static str> {
    FORMAT_NAMES.to_vec()
}

/// Picks the entry `choice` names among `entries` (or the only one); the message lists them otherwise.
pub(crate) fn choose<'e, T>(
    entries: &'e [(String, T)],
    choice: Option<&str>,
    what: &str,
) -> Result<&'e (String, T), Problem> {
    let listed = || entries.iter().map(|(name, _)| format!("  {name}")).collect::<Vec<_>>().join("\n");
    match (choice, entries) {
        (_, []) => Err(Problem::new(None, "", format!("the file holds no {what} with a retry policy"))),
        (None, [only]) => Ok(only),
        (None, _) => Err(Problem::new(
            None,
            "",
            format!("the file holds {} {what}s; choose one with --{what} NAME:\n{}", entries.len(), listed()),
        )),
        (Some(name), _) => entries
            .iter()
            .find(|(entry, _)| entry == name)
            .ok_or_else(|| Problem::new(None, "", format!("no {what} {name:?} in the file; it holds:\n{}", listed()))),
    }
}

/// The longest duration protobuf's Duration holds: 10,000 years of seconds.
const MAX_PROTO_SECONDS: f64 = 315_576_000_000.0;

/// A duration the way protobuf's JSON writes one: decimal seconds with an `s` ("0.1s", "1.5s", "2s").
pub(crate) fn proto_duration(node: &doc::Node, field: &str) -> Result<std::time::Duration, Problem> {
    let bad =
        || Problem::new(Some(node.at), field, format!("expected a duration like \"0.1s\", found {}", shown(node)));
    let doc::Value::Text(text) = &node.value else { return Err(bad()) };
    let number = text.strip_suffix('s').ok_or_else(bad)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if !(digits(whole) && digits(fraction) && fraction.len() <= 9 && !(whole.is_empty() && fraction.is_empty())) {
        return Err(bad());
    }
    let seconds: f64 = format!("0{number}").parse().map_err(|_| bad())?;
    if !(0.0..=MAX_PROTO_SECONDS).contains(&seconds) {
        return Err(bad());
    }
    duration_from_secs(seconds).ok_or_else(|| too_long(Some(node.at), field, &shown(node)))
}

/// "expected WHAT, found VALUE", located at the value.
pub(crate) fn expected(node: &doc::Node, field: &str, what: &str) -> Problem {
    Problem::new(Some(node.at), field, format!("expected {what}, found {}", shown(node)))
}

/// The text of a node, when it is text.
pub(crate) fn text(node: Option<&doc::Node>) -> Option<&str> {
    match node.map(|node| &node.value) {
        Some(doc::Value::Text(text)) => Some(text),
        _ => None,
    }
}

/// A duration as protobuf JSON writes it, for the source comments ("0.1s").
pub(crate) fn seconds(duration: std::time::Duration) -> String {
    format!("\"{}s\"", duration.as_secs_f64())
}

/// A value as a message quotes it.
pub(crate) fn shown(node: &doc::Node) -> String {
    match &node.value {
        doc::Value::Text(text) => format!("{text:?}"),
        doc::Value::Integer(n) => n.to_string(),
        doc::Value::Real(x) => x.to_string(),
        doc::Value::Bool(b) => b.to_string(),
        _ => node.kind().to_owned(),
    }
}

/// The longest sleep a scenario can hold: 2^64 − 1 ns, about 584 years.
pub(crate) const LONGEST_SLEEP: std::time::Duration = std::time::Duration::from_nanos(u64::MAX);

/// `secs` seconds as a duration; `None` for a negative or NaN number, or one past [`LONGEST_SLEEP`], where
/// `Duration::from_secs_f64` would panic or the lab could not sleep that long.
pub(crate) fn duration_from_secs(secs: f64) -> Option<std::time::Duration> {
    // try_from_secs_f64 refuses negative and NaN numbers itself.
    std::time::Duration::try_from_secs_f64(secs).ok().filter(|duration| *duration <= LONGEST_SLEEP)
}

/// The problem of a duration a file gives that is longer than [`LONGEST_SLEEP`].
pub(crate) fn too_long(at: Option<LineCol>, field: &str, found: &str) -> Problem {
    Problem::new(at, field, format!("{found} is longer than the lab can sleep (2^64 ns, about 584 years)"))
}

/// `duration × factor` for a factor ≥ 0, saturating at [`LONGEST_SLEEP`] where `Duration::mul_f64` would panic
/// (0 for a negative or NaN factor, which the callers have refused already).
pub(crate) fn scaled(duration: std::time::Duration, factor: f64) -> std::time::Duration {
    let secs = duration.as_secs_f64() * factor;
    if secs.is_nan() || secs.is_sign_negative() {
        return std::time::Duration::ZERO;
    }
    std::time::Duration::try_from_secs_f64(secs).map_or(LONGEST_SLEEP, |product| product.min(LONGEST_SLEEP))
}

/// The counting trap's warning, for a format whose `field` counts `retries` after the first try (Envoy, Istio,
/// Linkerd, Polly, Spring 7) where the lab's `max_attempts` counts every attempt.
pub(crate) fn counts_retries(imported: &mut Imported, at: Option<LineCol>, field: &str, retries: i64) {
    let message = format!("counts retries, not attempts: {retries} retries are max_attempts = {}", retries + 1);
    imported.warn(at, field, message);
}

/// Warns, at the cap field a file left unset, when the waits grow past [`LONGEST_SLEEP`] before the attempts run
/// out, so the cap the translation writes is the lab's limit rather than anything the library reaches.
pub(crate) fn warn_if_capped_at_longest(imported: &mut Imported, longest: std::time::Duration, cap_field: &str) {
    if longest >= LONGEST_SLEEP {
        imported.warn(
            None,
            cap_field,
            "unset, and the waits grow past 584 years (the longest the lab can sleep) before the attempts run out: \
             the translation caps them there; set a cap to bound the waits",
        );
    }
}

/// A duration as the lab's scenarios write one ("100ms", "1.5s").
pub(crate) fn lab_duration(duration: std::time::Duration) -> String {
    let nanos = duration.as_nanos();
    match nanos {
        0 => "0s".to_owned(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// Warns of keys of `node` (a mapping) outside `known`, for a consumer that skips fields it does not know: the
/// setting a misspelt key meant is lost without a word, so the import says it loudly.
pub(crate) fn ignored_keys(
    node: &doc::Node,
    known: &[&str],
    within: &str,
    consumer: &str,
    warnings: &mut Vec<Problem>,
) {
    if let doc::Value::Map(entries) = &node.value {
        for (key, at, _) in entries {
            if !known.contains(&key.as_str()) {
                let field = if within.is_empty() { key.clone() } else { format!("{within}.{key}") };
                let message = format!(
                    "IGNORED: {consumer} skips a field it does not know, silently; if this was meant as one of {}, \
                     its setting is lost",
                    known.join(", ")
                );
                warnings.push(Problem::new(Some(*at), &field, message));
            }
        }
    }
}

/// Refuses keys of `node` (a mapping) outside `known`, naming the valid ones.
pub(crate) fn known_keys(node: &doc::Node, known: &[&str], within: &str) -> Result<(), Problem> {
    if let doc::Value::Map(entries) = &node.value {
        for (key, at, _) in entries {
            if !known.contains(&key.as_str()) {
                let field = if within.is_empty() { key.clone() } else { format!("{within}.{key}") };
                let message = format!("unknown field `{key}`; valid here: {}", known.join(", "));
                return Err(Problem::new(Some(*at), &field, message));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
