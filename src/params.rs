//! Typed parameters: what a model or a client policy accepts (its [`ParamSpec`]s) and one concrete choice of them
//! (a [`Point`]). The scenario layer fills points from TOML and locates errors; models and policies only read
//! typed values. A leaf beside `time`: policy and model both use it, neither through the other.

use std::fmt;
use std::sync::Arc;

use crate::time::SimDuration;

/// The scenario-file table a parameter lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Section {
    /// `[model]`: the system under test.
    Model,
    /// `[workload]`: who sends requests, and when.
    Workload,
    /// `[client]`: the clients' retry policy.
    Client,
}

impl Section {
    /// Every section, in the order a scenario file usually lists them.
    pub const ALL: [Section; 3] = [Section::Model, Section::Workload, Section::Client];

    pub fn name(self) -> &'static str {
        match self {
            Section::Model => "model",
            Section::Workload => "workload",
            Section::Client => "client",
        }
    }
}

/// What values a parameter accepts.
#[derive(Clone, Copy, Debug)]
pub enum ParamKind {
    /// A whole number in `min..=max`.
    Count { min: i64, max: i64 },
    /// A finite number in `min..=max`.
    Real { min: f64, max: f64 },
    /// A non-negative duration written with its unit: "5ms", "2s", "51.2us".
    Duration,
    /// One name out of a fixed list (the names of a [`Choice`] enum).
    Choice(&'static [&'static str]),
    /// Free text that the model reads itself (a rate schedule, a list of fault windows), with its syntax.
    Text { syntax: &'static str },
    /// A list of names the model reads itself, written as a TOML array of strings or one comma-separated string;
    /// held as [`Value::Text`] with the items joined by ", ". In `[sweep]`, each item of the axis is one list.
    List { syntax: &'static str },
    /// One name out of a fixed list, or several as a TOML array (each checked as a [`ParamKind::Choice`]): one is
    /// held as [`Value::Choice`], several as [`Value::Text`] joined by ", ". In `[sweep]`, each item is one value.
    ChoiceList(&'static [&'static str]),
}

impl ParamKind {
    /// Whether a TOML array in a table is one value of this kind rather than a sweep.
    pub fn takes_a_list(self) -> bool {
        matches!(self, ParamKind::List { .. } | ParamKind::ChoiceList(_))
    }
}

impl ParamKind {
    /// How the kind is described in error messages.
    pub fn describe(self) -> String {
        match self {
            ParamKind::Count { min, max } if max == i64::MAX => format!("a whole number ≥ {min}"),
            ParamKind::Count { min, max } => format!("a whole number from {min} to {max}"),
            ParamKind::Real { min, max } if max == f64::INFINITY => format!("a number ≥ {min}"),
            ParamKind::Real { min, max } => format!("a number from {min} to {max}"),
            ParamKind::Duration => "a duration with its unit, like \"5ms\" (units: ns, us, ms, s, min, h)".into(),
            ParamKind::Choice(names) => format!("one of: {}", names.join(", ")),
            ParamKind::Text { syntax } => format!("a string: {syntax}"),
            ParamKind::List { syntax } => format!("a list of strings: {syntax}"),
            ParamKind::ChoiceList(names) => format!("one of, or a list of: {}", names.join(", ")),
        }
    }
}

/// A parameter's value when the scenario does not give one.
#[derive(Clone, Debug)]
pub enum ParamDefault {
    /// The scenario must set it.
    Required,
    /// Unset means "no limit" (or whatever the parameter's doc says).
    Unset,
    /// Read as this value, but left out of the point's canonical text while unset, so that adding the parameter
    /// to a model after its results were published moved no seed (a limiter's knobs start from the limiter's
    /// shipped defaults this way).
    Implied(Value),
    /// This value, hashed into the seeds like a value the scenario wrote.
    Value(Value),
}

impl ParamDefault {
    /// A duration default of `millis` milliseconds.
    pub const fn millis(millis: u64) -> ParamDefault {
        ParamDefault::Value(Value::Duration(SimDuration::from_millis(millis)))
    }

    /// The value written into a fresh point (hashed into its seed): `Implied` defaults are not.
    pub fn hashed_value(&self) -> Option<Value> {
        match self {
            ParamDefault::Value(value) => Some(value.clone()),
            ParamDefault::Implied(_) | ParamDefault::Required | ParamDefault::Unset => None,
        }
    }
}

/// One parameter a model or a client policy accepts.
#[derive(Debug)]
pub struct ParamSpec {
    pub section: Section,
    /// The key in its section, one name for one quantity across models.
    pub key: &'static str,
    pub kind: ParamKind,
    pub default: ParamDefault,
    pub help: &'static str,
    /// The earlier name of a parameter renamed after results were published: still accepted (an alias), and the
    /// name its value is hashed under, so the rename moved no seed.
    pub formerly: Option<(Section, &'static str)>,
    /// Which random streams the value seeds (see [`SeedSide`]).
    pub side: SeedSide,
}

/// Which seeds a parameter's value enters. The rule: what describes the system and its workload seeds the world's
/// streams and the policy's; what the clients choose seeds the policy's only; what only cuts a run short or says
/// what to measure enters no seed, so a longer run extends a shorter one draw for draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeedSide {
    /// `[model]` and `[workload]` parameters (and `[client]` ones marked `.world()`): both seeds.
    World,
    /// `[client]` parameters (and retry choices in other tables, marked `.policy()`): the policy's seed only.
    Policy,
    /// Run length and measurement (duration, warmup, slots, thresholds): no seed.
    Measurement,
}

impl ParamSpec {
    pub const fn new(
        section: Section,
        key: &'static str,
        kind: ParamKind,
        default: ParamDefault,
        help: &'static str,
    ) -> ParamSpec {
        let side = match section {
            Section::Model | Section::Workload => SeedSide::World,
            Section::Client => SeedSide::Policy,
        };
        ParamSpec { section, key, kind, default, help, formerly: None, side }
    }

    /// The same parameter, one that only cuts a run short or says what to measure: it enters no seed.
    pub const fn measurement(mut self) -> ParamSpec {
        self.side = SeedSide::Measurement;
        self
    }

    /// The same parameter, a retry choice written outside `[client]` (a queue consumer's redelivery rule, which
    /// callers of a call graph retry): it seeds the policy's streams only.
    pub const fn policy(mut self) -> ParamSpec {
        self.side = SeedSide::Policy;
        self
    }

    /// The same parameter, one written in `[client]` that describes the world, not a choice (the clients' clock
    /// skew, how many client processes there are): it seeds the world's streams too.
    pub const fn world(mut self) -> ParamSpec {
        self.side = SeedSide::World;
        self
    }

    /// The same parameter, once called `key` in `section` (see [`ParamSpec::formerly`]).
    pub const fn formerly(mut self, section: Section, key: &'static str) -> ParamSpec {
        self.formerly = Some((section, key));
        self
    }

    /// The section and key its value is hashed under: the former name if it has one.
    pub fn seed_name(&self) -> (Section, &'static str) {
        self.formerly.unwrap_or((self.section, self.key))
    }

    /// Whether `key` (bare, or in `section` when given) names this parameter, by its name or its former name.
    pub fn answers_to(&self, section: Option<Section>, key: &str) -> bool {
        let matches =
            |(own_section, own_key): (Section, &str)| own_key == key && section.is_none_or(|s| s == own_section);
        matches((self.section, self.key)) || self.formerly.is_some_and(matches)
    }

    /// The name `key` stands for: this parameter's own key or its former one (`None` if neither).
    pub fn spelling(&self, key: &str) -> Option<&'static str> {
        if self.key == key {
            Some(self.key)
        } else {
            self.formerly.map(|(_, former)| former).filter(|former| *former == key)
        }
    }

    /// `section.key`, as in messages.
    pub fn dotted(&self) -> String {
        format!("{}.{}", self.section.name(), self.key)
    }
}

/// `first` followed by `second`, at compile time (name lists built from two registries).
pub(crate) const fn concat<const N: usize>(first: &[&'static str], second: &[&'static str]) -> [&'static str; N] {
    assert!(first.len() + second.len() == N);
    let mut names = [""; N];
    let mut i = 0;
    while i < first.len() {
        names[i] = first[i];
        i += 1;
    }
    let mut j = 0;
    while j < second.len() {
        names[i + j] = second[j];
        j += 1;
    }
    names
}

/// `first` followed by `second`, at compile time: a model's parameter groups with the limiters' knob groups.
pub(crate) const fn concat_groups<const N: usize>(
    first: &[&'static [ParamSpec]],
    second: &[&'static [ParamSpec]],
) -> [&'static [ParamSpec]; N] {
    assert!(first.len() + second.len() == N);
    let mut groups: [&'static [ParamSpec]; N] = [&[]; N];
    let mut i = 0;
    while i < first.len() {
        groups[i] = first[i];
        i += 1;
    }
    let mut j = 0;
    while j < second.len() {
        groups[i + j] = second[j];
        j += 1;
    }
    groups
}

/// A parameter whose value is one name out of a fixed list, read as an enum so that code matches on it
/// exhaustively. Declared with the crate's `choices!` macro.
pub trait Choice: Copy + 'static {
    /// The scenario-file names, in the order of `ALL`.
    const NAMES: &'static [&'static str];
    const ALL: &'static [Self];

    fn name(self) -> &'static str;

    fn from_name(name: &str) -> Option<Self> {
        Self::NAMES.iter().position(|n| *n == name).map(|index| Self::ALL[index])
    }
}

/// Declares an enum whose variants have scenario-file names, implementing [`Choice`]:
/// `choices! { pub enum OnTimeout { Abandon = "abandon", Cancel = "cancel" } }`.
macro_rules! choices {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$variant_meta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        $vis enum $name { $($(#[$variant_meta])* $variant),+ }

        impl $crate::params::Choice for $name {
            const NAMES: &'static [&'static str] = &[$($text),+];
            const ALL: &'static [Self] = &[$($name::$variant),+];

            fn name(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str($crate::params::Choice::name(*self))
            }
        }
    };
}
pub(crate) use choices;

choices! {
    /// An on/off setting.
    pub enum Switch {
        Off = "off",
        On = "on",
    }
}

/// A parameter value, already checked against its [`ParamKind`]. Cheap to clone (text is shared).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Count(i64),
    Real(f64),
    Duration(SimDuration),
    Choice(&'static str),
    Text(Arc<str>),
}

impl Value {
    /// A number for chart axes: counts and reals as they are, durations in milliseconds; `None` for names.
    pub fn as_axis_number(&self) -> Option<f64> {
        match self {
            Value::Count(n) => Some(*n as f64),
            Value::Real(x) => Some(*x),
            Value::Duration(d) => Some(d.as_millis_f64()),
            Value::Choice(_) | Value::Text(_) => None,
        }
    }
}

impl fmt::Display for Value {
    /// The canonical text used in CSV columns and in seed hashing: `100`, `2.5`, `5ms`, `full-jitter`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Count(n) => write!(f, "{n}"),
            Value::Real(x) => write!(f, "{x}"),
            Value::Duration(d) => write!(f, "{d}"),
            Value::Choice(name) => f.write_str(name),
            Value::Text(text) => f.write_str(text),
        }
    }
}

/// A model's complaint about one parameter of a point (for example `cap` below `base`). `part` names the part
/// whose own value is at fault (`api` for a value set in `[layer.api]`); `None` means the model-wide value. The
/// scenario layer turns it into a located error from these fields alone.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {message}")]
#[non_exhaustive]
pub struct ParamError {
    pub key: &'static str,
    pub part: Option<String>,
    pub message: String,
}

impl ParamError {
    /// A complaint about the model-wide value of `key`.
    pub fn new(key: &'static str, message: String) -> Self {
        ParamError { key, part: None, message }
    }

    /// The same complaint, about the value `part` sets for itself.
    pub fn in_part(self, part: &str) -> Self {
        ParamError { part: Some(part.to_owned()), ..self }
    }
}

/// Where a model's named parts are declared: one table per part, `[<table>.<name>]` (for example
/// `[layer.api]`), holding the names of the parts it links to under `link_key` and values for any of the
/// `overridable` parameters, which replace the model-wide value for that part only.
#[derive(Debug)]
pub struct PartTable {
    /// The top-level table name: `layer` for `[layer.api]`.
    pub table: &'static str,
    /// The key listing the parts this one links to (`calls = ["auth", "db"]`).
    pub link_key: &'static str,
    /// Parameters a part may set for itself.
    pub overridable: &'static [&'static str],
    /// Model-wide parameters the tables replace (a scenario with tables may not set them).
    pub replaces: &'static [&'static str],
    pub max_parts: usize,
}

/// One named part of a model (a service in a call graph), as a scenario declared it.
#[derive(Clone, Debug)]
pub struct Part {
    pub name: String,
    /// Indices into the point's parts of the parts this one links to, in the order written.
    pub links: Vec<usize>,
    /// Parameter values this part sets for itself.
    pub overrides: Vec<(&'static ParamSpec, Value)>,
}

impl Part {
    /// This part's own value of `key`, if it sets one.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.overrides.iter().find(|(spec, _)| spec.key == key).map(|(_, value)| value)
    }
}

/// One full assignment of a model's parameters: a sweep point.
#[derive(Clone, Debug)]
pub struct Point {
    entries: Vec<(&'static ParamSpec, Option<Value>)>,
    parts: Arc<[Part]>,
    /// The keys the scenario wrote (in a table, a sweep or `--set`), as opposed to defaults.
    written: Vec<&'static str>,
}

impl Point {
    /// A point whose every value counts as written.
    pub fn new(entries: Vec<(&'static ParamSpec, Option<Value>)>) -> Self {
        let written = entries.iter().filter(|(_, value)| value.is_some()).map(|(spec, _)| spec.key).collect();
        Point { entries, parts: Arc::from(Vec::new()), written }
    }

    /// The same point, with only `keys` counting as written by the scenario.
    pub fn with_written(mut self, keys: Vec<&'static str>) -> Self {
        self.written = keys;
        self
    }

    /// Whether the scenario wrote `key` (a table, a sweep, `--set`, a part's own table), rather than leaving it
    /// at its default: a preset's value gives way only to a written one.
    pub fn is_written(&self, key: &str) -> bool {
        self.written.contains(&key)
    }

    /// The same point with these named parts (empty for models without parts).
    pub fn with_parts(mut self, parts: Arc<[Part]>) -> Self {
        self.parts = parts;
        self
    }

    pub fn parts(&self) -> &[Part] {
        &self.parts
    }

    /// A point whose model-wide values are replaced by `part`'s own ones where it sets them.
    pub fn for_part(&self, part: &Part) -> Point {
        let entries = self
            .entries
            .iter()
            .map(|(spec, value)| {
                let own = part.overrides.iter().find(|(s, _)| std::ptr::eq(*s, *spec)).map(|(_, v)| v.clone());
                (*spec, own.or_else(|| value.clone()))
            })
            .collect();
        let mut written = self.written.clone();
        written.extend(part.overrides.iter().map(|(spec, _)| spec.key));
        Point { entries, parts: Arc::clone(&self.parts), written }
    }

    pub fn entries(&self) -> &[(&'static ParamSpec, Option<Value>)] {
        &self.entries
    }

    /// The value of `key` (an implied default when unset), `None` when unset without one; an error if the model
    /// never declared `key` (a bug in the model).
    pub fn get(&self, key: &'static str) -> Result<Option<Value>, ParamError> {
        let (spec, value) = self.entries.iter().find(|(spec, _)| spec.key == key).ok_or_else(|| {
            ParamError::new(key, "internal error: the model reads a parameter it did not declare".into())
        })?;
        Ok(value.clone().or_else(|| match &spec.default {
            ParamDefault::Implied(implied) => Some(implied.clone()),
            _ => None,
        }))
    }

    /// `key value` for each of `keys` as the point runs it, joined by ", ": a value the scenario did not write is
    /// marked `(default)`, and an unset one reads as its help's `(unset: …)` says (`queue_limit unset: unlimited
    /// (default)`). Keys the point does not declare are left out.
    pub fn describe_keys(&self, keys: &[&str]) -> String {
        let mut described = Vec::new();
        for key in keys {
            let Some((spec, value)) = self.entries.iter().find(|(spec, _)| spec.key == *key) else { continue };
            let value = value.clone().or_else(|| match &spec.default {
                ParamDefault::Implied(implied) => Some(implied.clone()),
                _ => None,
            });
            let text = match value {
                Some(value) => format!("{key} {value}"),
                None => match spec.help.split_once("(unset: ") {
                    Some((_, rest)) => {
                        format!("{key} unset: {}", rest.split_once(')').map_or(rest, |(meaning, _)| meaning))
                    }
                    None => format!("{key} unset"),
                },
            };
            let default = if self.is_written(key) { "" } else { " (default)" };
            described.push(format!("{text}{default}"));
        }
        described.join(", ")
    }

    /// Whether the point holds a value of its own for `key`: written by the scenario (a table, a sweep, `--set`) or
    /// a hashed default, as opposed to an implied default or nothing.
    pub fn is_given(&self, key: &'static str) -> Result<bool, ParamError> {
        self.entries.iter().find(|(spec, _)| spec.key == key).map(|(_, value)| value.is_some()).ok_or_else(|| {
            ParamError::new(key, "internal error: the model reads a parameter it did not declare".into())
        })
    }

    /// The value of `key`, which must be set (declared with a default, required, or swept).
    fn required(&self, key: &'static str) -> Result<Value, ParamError> {
        self.get(key)?.ok_or_else(|| ParamError::new(key, "missing; this model needs it".into()))
    }

    fn wrong_kind(key: &'static str, value: Value) -> ParamError {
        ParamError::new(key, format!("internal error: unexpected value {value}"))
    }

    pub fn count(&self, key: &'static str) -> Result<i64, ParamError> {
        match self.required(key)? {
            Value::Count(n) => Ok(n),
            other => Err(Self::wrong_kind(key, other)),
        }
    }

    pub fn real(&self, key: &'static str) -> Result<f64, ParamError> {
        match self.required(key)? {
            Value::Real(x) => Ok(x),
            Value::Count(n) => Ok(n as f64),
            other => Err(Self::wrong_kind(key, other)),
        }
    }

    pub fn duration(&self, key: &'static str) -> Result<SimDuration, ParamError> {
        match self.required(key)? {
            Value::Duration(d) => Ok(d),
            other => Err(Self::wrong_kind(key, other)),
        }
    }

    pub fn choice(&self, key: &'static str) -> Result<&'static str, ParamError> {
        match self.required(key)? {
            Value::Choice(name) => Ok(name),
            other => Err(Self::wrong_kind(key, other)),
        }
    }

    /// The names of a [`ParamKind::ChoiceList`] value, in the order written.
    pub fn choice_list(&self, key: &'static str) -> Result<Vec<&'static str>, ParamError> {
        let (spec, _) = self.entries.iter().find(|(spec, _)| spec.key == key).ok_or_else(|| {
            ParamError::new(key, "internal error: the model reads a parameter it did not declare".into())
        })?;
        let ParamKind::ChoiceList(names) = spec.kind else {
            return Err(ParamError::new(key, "internal error: not a list of choices".into()));
        };
        let text = self.required(key)?.to_string();
        text.split(", ")
            .map(|item| {
                names
                    .iter()
                    .copied()
                    .find(|name| *name == item)
                    .ok_or_else(|| ParamError::new(key, format!("internal error: unexpected value {item}")))
            })
            .collect()
    }

    /// The value of a choice parameter as its enum.
    pub fn choice_of<C: Choice>(&self, key: &'static str) -> Result<C, ParamError> {
        let name = self.choice(key)?;
        C::from_name(name).ok_or_else(|| Self::wrong_kind(key, Value::Choice(name)))
    }

    /// Like [`Point::choice_of`], for a choice whose absence means "the default behaviour".
    pub fn optional_choice_of<C: Choice>(&self, key: &'static str) -> Result<Option<C>, ParamError> {
        if self.get(key)?.is_none() { Ok(None) } else { self.choice_of(key).map(Some) }
    }

    /// Like [`Point::real`], for a parameter whose absence means "none".
    pub fn optional_real(&self, key: &'static str) -> Result<Option<f64>, ParamError> {
        if self.get(key)?.is_none() { Ok(None) } else { self.real(key).map(Some) }
    }

    /// Like [`Point::count`], for a parameter whose absence means "no limit".
    pub fn optional_count(&self, key: &'static str) -> Result<Option<i64>, ParamError> {
        if self.get(key)?.is_none() { Ok(None) } else { self.count(key).map(Some) }
    }

    /// Like [`Point::duration`], for a parameter whose absence means "none".
    pub fn optional_duration(&self, key: &'static str) -> Result<Option<SimDuration>, ParamError> {
        if self.get(key)?.is_none() { Ok(None) } else { self.duration(key).map(Some) }
    }

    /// `section.key=value;…` over every set parameter, in declaration order: the point's identity (its id).
    /// Each value goes under its parameter's [`ParamSpec::seed_name`], so renamed parameters keep their ids.
    pub fn canonical_text(&self) -> String {
        self.text_of(|_| true)
    }

    /// The canonical text of the parameters that seed the world's streams.
    pub fn world_seed_text(&self) -> String {
        self.text_of(|side| side == SeedSide::World)
    }

    /// The canonical text of the parameters that seed the policy's streams: all but the measurement ones.
    pub fn policy_seed_text(&self) -> String {
        self.text_of(|side| side != SeedSide::Measurement)
    }

    fn text_of(&self, keep: impl Fn(SeedSide) -> bool) -> String {
        let mut text = String::new();
        for (spec, value) in &self.entries {
            if let Some(value) = value
                && keep(spec.side)
            {
                let (section, key) = spec.seed_name();
                text.push_str(&format!("{}.{key}={value};", section.name()));
            }
        }
        for part in self.parts.iter() {
            let links: Vec<&str> = part.links.iter().map(|&i| self.parts[i].name.as_str()).collect();
            text.push_str(&format!("part.{}.links={};", part.name, links.join(",")));
            for (spec, value) in &part.overrides {
                if keep(spec.side) {
                    text.push_str(&format!("part.{}.{}={value};", part.name, spec.seed_name().1));
                }
            }
        }
        text
    }
}
