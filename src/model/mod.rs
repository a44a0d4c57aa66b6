//! The systems under test, one file (or folder) each. A model declares its parameters, metrics and timeline series, turns a
//! sweep [`Point`] into a typed configuration, and runs one replicate on the engine.
//!
//! A new model is one new file implementing the crate-internal `SimModel` trait plus one line in
//! `register_models!` below.

pub(crate) mod client;
pub(crate) mod distributions;
pub(crate) mod faults;
pub(crate) mod verdict;

pub mod trace;

use std::sync::atomic::AtomicUsize;

use crate::engine::RunSeeds;
use crate::params::{ParamError, ParamSpec, PartTable, Point, Value};
use crate::stats::Support;
use crate::time::SimDuration;

/// One output metric: a column `name` in runs.csv, and `name_mean`/`name_sd`/`name_ci95` in summary.csv.
#[derive(Debug)]
pub struct MetricSpec {
    pub name: &'static str,
    /// What it means, in one line: the metrics reference, chart titles and report.html read it.
    pub help: &'static str,
    pub unit: Unit,
    /// The name it was published under, before a rename; still accepted where a scenario names a metric.
    pub formerly: Option<&'static str>,
}

impl MetricSpec {
    /// Whether `name` names this metric, by its name or its former name.
    pub fn answers_to(&self, name: &str) -> bool {
        self.name == name || self.formerly == Some(name)
    }
}

/// What a metric's number is: it decides the label of a chart's axis, the range the metric's intervals stay in,
/// and how the reference describes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A number of things in one run (calls, requests, events).
    Count,
    /// A number of things divided by the run's user requests.
    PerRequest,
    /// A share, from 0 to 1.
    Fraction,
    /// 1 when something happened in the run, else 0; over replicates, the proportion of runs.
    Outcome,
    Milliseconds,
    PerSecond,
    /// A ratio of two quantities, 0 or more, with no upper bound (a peak over a mean, collisions per frame).
    Ratio,
    /// A change per slot, of either sign (a backlog's slope).
    PerSlot,
}

impl Unit {
    /// The unit as an axis label or a reference entry shows it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Count => "count",
            Unit::PerRequest => "per request",
            Unit::Fraction => "fraction, 0 to 1",
            Unit::Outcome => "share of runs, 0 to 1",
            Unit::Milliseconds => "ms",
            Unit::PerSecond => "per second",
            Unit::Ratio => "ratio",
            Unit::PerSlot => "per slot, of either sign",
        }
    }

    /// What every run's value can be, which keeps the interval of their mean inside it.
    pub fn support(self) -> Support {
        match self {
            Unit::Outcome => Support::Binary,
            Unit::Fraction => Support::Within { min: 0.0, max: 1.0 },
            Unit::Count | Unit::PerRequest | Unit::Milliseconds | Unit::PerSecond | Unit::Ratio => {
                Support::Within { min: 0.0, max: f64::INFINITY }
            }
            Unit::PerSlot => Support::Real,
        }
    }
}

/// How one replicate runs: its seeds, the timeline's bucket width, and a cap on events.
#[derive(Clone, Copy, Debug)]
pub struct RunSettings {
    pub seeds: RunSeeds,
    pub bucket: SimDuration,
    /// A run that reaches this many events stops there and is reported as truncated: an unstable system (a
    /// retry storm that never drains) would otherwise grow until memory runs out.
    pub max_events: u64,
    /// Record a [`trace::Span`] per attempt into [`RunOutput::spans`] (for `--trace`; off in sweeps).
    pub trace: bool,
    /// The flag that ends the run early once non-zero: the process's stop signal, or a lab run's own flag.
    pub stop: &'static AtomicUsize,
}

/// The default cap on events per run, for runs of up to [`DEFAULT_MAX_EVENTS`] / [`EVENTS_PER_RECORD`] clients.
pub const DEFAULT_MAX_EVENTS: u64 = 50_000_000;
/// Beyond that, the default cap grows with the run's clients (its [`Footprint`] records): a herd of ten million
/// needs about 12 events per client.
pub const EVENTS_PER_RECORD: u64 = 100;

/// The cap on events of a run of `config`: the scenario's `max_events_per_run` if it sets one, else
/// [`DEFAULT_MAX_EVENTS`] or [`EVENTS_PER_RECORD`] per record, whichever is larger.
pub fn event_cap(explicit: Option<u64>, config: &ModelConfig) -> u64 {
    explicit.unwrap_or_else(|| DEFAULT_MAX_EVENTS.max(config.footprint().records.saturating_mul(EVENTS_PER_RECORD)))
}

impl RunSettings {
    /// Settings with one seed for the world and the policy (tests, and runs outside a sweep).
    pub fn new(seed: u64, bucket: SimDuration) -> Self {
        RunSettings {
            seeds: RunSeeds::single(seed),
            bucket,
            max_events: DEFAULT_MAX_EVENTS,
            trace: false,
            stop: &crate::interrupt::SIGNAL,
        }
    }

    /// The engine's limits for this run: the event cap, and its stop flag (a run in progress ends when a signal
    /// arrives or the lab cancels it; the sweep then keeps none of its point's runs).
    pub fn limit(&self) -> crate::engine::RunLimit {
        crate::engine::RunLimit {
            max_events: self.max_events,
            abort: Some(self.stop),
            ..crate::engine::RunLimit::default()
        }
    }
}

/// What one replicate measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunOutput {
    /// One value per metric of the model (its `metric::SPECS`), in that order.
    pub metrics: Vec<f64>,
    /// Bucket-major: for each timeline bucket, one value per series of the model (its `series::NAMES`).
    pub timeline: Vec<f64>,
    /// Events the engine delivered.
    pub events: u64,
    /// The run hit its event cap with events still pending.
    pub truncated: bool,
    /// Latencies of successful requests, for models that measure them (the CDF chart).
    pub latency: Option<crate::metrics::SparseHistogram>,
    /// Spans of time the charts shade (fault windows, a trigger), as (start, end).
    pub highlights: Vec<(crate::time::SimTime, crate::time::SimTime)>,
    /// One per attempt when [`RunSettings::trace`] was set, else empty.
    pub spans: Vec<trace::Span>,
}

/// A simulated system. Its module also declares its output columns, by convention in two child modules the
/// registry reads: `metric` (with [`metrics!`]) and `series` (with [`series!`]).
pub(crate) trait SimModel {
    /// The value of `kind` in the scenario's `[model]` table.
    const KIND: &'static str;
    const ABOUT: &'static str;
    /// Its own `[model]` parameters followed by any shared ones (such as the `[client]` policy).
    const PARAMS: &'static [&'static [ParamSpec]];
    /// The metrics charted against the sweep's x axis when the scenario does not choose.
    const DEFAULT_CHART_METRICS: &'static [&'static str];
    /// The timeline series charted when the scenario does not choose, one column each (empty: the first series).
    const DEFAULT_TIMELINE_SERIES: &'static [&'static str] = &[];
    /// Named parts a scenario may declare in tables of their own (the services of a call graph).
    const PARTS: Option<&'static PartTable> = None;
    /// The settings that decide the model's verdicts (queue bounds, workers, timeouts, the network), shown with
    /// every default resolved wherever the effective policy is (`--list-points`, the manifest, `show`, report.html).
    const SETTINGS: &'static [&'static str] = &[];
    /// The timeline series that tell whether a backlog was still growing when new work stopped, for models that
    /// keep one (a server's queue, a message queue); see [`Backlog`].
    const BACKLOG: Option<Backlog> = None;

    type Config: Send + Sync;

    /// Checks a point's values together (for example `cap ≥ base`) and builds the typed configuration.
    fn configure(point: &Point) -> Result<Self::Config, ParamError>;

    /// Runs one replicate.
    fn simulate(config: &Self::Config, run: RunSettings) -> RunOutput;

    /// The analytic value of `metric` when the swept parameter `x_key` takes the value `x` (other parameters
    /// as in `config`), for models with a closed form; the charts draw it over the simulated points.
    fn theory(_config: &Self::Config, _metric: &str, _x_key: &str, _x: f64) -> Option<f64> {
        None
    }

    /// Names of the services a trace's `layer` indexes (the layered model's graph); empty elsewhere.
    fn service_names(_config: &Self::Config) -> Vec<String> {
        Vec::new()
    }

    /// What a trace's span owner is: a client, a station, a request.
    fn trace_owner(_config: &Self::Config) -> &'static str {
        "request"
    }

    /// The client policy a point runs (`config`, configured from `point`), presets resolved, in one line for
    /// people (`--list-points`, the manifest, `show`); `None` for models whose clients have no retry policy to
    /// speak of.
    fn describe_policy(_point: &Point, _config: &Self::Config) -> Result<Option<String>, ParamError> {
        Ok(None)
    }

    /// What one run of `config` holds in memory, for the plan's estimate (see [`Footprint`]).
    fn footprint(_config: &Self::Config) -> Footprint {
        Footprint::default()
    }
}

/// Where a model's timeline shows a backlog that can outgrow a run: the report warns when the level was still
/// rising as new work stopped (see `report::warnings`), since a verdict then depends on what the queue holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backlog {
    /// The series holding the backlog's level per bucket (its maximum in the bucket).
    pub level: &'static str,
    /// The series counting new work per bucket; the window judged ends with its last non-zero bucket.
    pub offered: &'static str,
    /// The series counting work finished for nobody (clients that had given up), and the one counting work
    /// finished for someone, if the model counts them.
    pub wasted: Option<(&'static str, &'static str)>,
    /// What waits, in words ("the server's queue").
    pub what: &'static str,
    /// What bounds it or drains it, in words, naming the keys to set.
    pub remedy: &'static str,
}

/// What one run holds in memory besides its timeline, roughly, for the plan's estimate (`src/budget.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Footprint {
    /// The simulated time the timeline reaches, when the configuration fixes it; `None` for a burst, which ends
    /// when its last client is done.
    pub horizon: Option<SimDuration>,
    /// Records alive at once at the peak: clients, requests in flight, stations.
    pub records: u64,
    /// Bytes per record, its share of pending events included.
    pub bytes_per_record: u64,
    /// Bytes the run holds besides its records and timeline: one limiter or clock per client instance, lists that
    /// grow with the run (a cluster per busy spell).
    pub other_bytes: u64,
    /// The most spans a trace of the run can record, when the configuration bounds it (before
    /// [`trace::MAX_TRACE_SPANS`]); `None`: only that cap bounds it.
    pub trace_spans: Option<u64>,
    /// Bytes per record a traced run adds: what a model keeps per owner only to trace it.
    pub trace_bytes_per_record: u64,
}

/// Declares a model's output columns once. `metrics! { CALLS = "calls" (Count): "help", … }` (a unit of
/// [`Unit`], and `formerly "old"` after it for a renamed metric) defines `SPECS` (the
/// [`MetricSpec`] table, in the order of runs.csv's columns), one index constant per metric into
/// [`RunOutput::metrics`] (`CALLS`), `COUNT`, and `INDICES` (each constant's name with its value, which a test
/// checks against the column it indexes). `series! { CALLS = "calls", … }` does the same for the timeline's
/// series (`NAMES` and `HELP` instead of `SPECS`), indexing each bucket of [`RunOutput::timeline`].
macro_rules! metrics {
    ($($(#[$doc:meta])* $index:ident = $name:literal ($unit:ident $(, formerly $old:literal)?) : $help:expr),+ $(,)?) => {
        column_indices!($($(#[$doc])* $index = $name),+);
        pub(crate) const SPECS: &[$crate::model::MetricSpec] = &[$($crate::model::MetricSpec {
            name: $name,
            help: $help,
            unit: $crate::model::Unit::$unit,
            formerly: former_name!($($old)?),
        }),+];
    };
}

/// `Some(name)` for a metric's former name, `None` without one.
macro_rules! former_name {
    () => {
        None
    };
    ($old:literal) => {
        Some($old)
    };
}

/// See [`metrics!`].
macro_rules! series {
    ($($(#[$doc:meta])* $index:ident = $name:literal : $help:expr),+ $(,)?) => {
        column_indices!($($(#[$doc])* $index = $name),+);
        pub(crate) const NAMES: &[&str] = &[$($name),+];
        /// What each series counts per bucket, in the order of `NAMES`.
        pub(crate) const HELP: &[&str] = &[$($help),+];
    };
}

/// The index constants of [`metrics!`] and [`series!`]: 0, 1, 2, … in the order written.
macro_rules! column_indices {
    ($($(#[$doc:meta])* $index:ident = $name:literal),+) => {
        #[allow(clippy::upper_case_acronyms, non_camel_case_types, dead_code)]
        #[repr(usize)]
        enum Position { $($index),+ }
        $($(#[$doc])* #[allow(dead_code)] pub(crate) const $index: usize = Position::$index as usize;)+
        #[allow(dead_code)]
        pub(crate) const COUNT: usize = [$($name),+].len();
        #[cfg(test)]
        pub(crate) const INDICES: &[(&str, usize)] = &[$((stringify!($index), $index)),+];
    };
}

macro_rules! register_models {
    ($($module:ident :: $model:ident => $variant:ident),+ $(,)?) => {
        $(pub(crate) mod $module;)+

        /// Every registered model, by its scenario-file `kind`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum ModelKind { $($variant),+ }

        /// A model's typed configuration for one sweep point: opaque outside the crate, ready to simulate. Its
        /// `Debug` text names every field, so two configurations that print alike run alike.
        #[derive(Debug)]
        pub struct ModelConfig(pub(crate) Configured);

        /// The configuration of each model (boxed: configurations differ widely in size).
        #[derive(Debug)]
        pub(crate) enum Configured { $($variant(Box<<$module::$model as SimModel>::Config>)),+ }

        impl ModelKind {
            pub const ALL: &'static [ModelKind] = &[$(ModelKind::$variant),+];
            pub const NAMES: &'static [&'static str] = &[$(<$module::$model as SimModel>::KIND),+];

            pub fn name(self) -> &'static str {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::KIND),+ }
            }
            pub fn about(self) -> &'static str {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::ABOUT),+ }
            }
            pub fn param_groups(self) -> &'static [&'static [ParamSpec]] {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::PARAMS),+ }
            }
            pub fn metrics(self) -> &'static [MetricSpec] {
                match self { $(ModelKind::$variant => $module::metric::SPECS),+ }
            }
            /// The index of the model's first outcome metric (1 or 0 per run), which splits a point's timelines
            /// when its runs disagree.
            pub fn outcome_metric(self) -> Option<usize> {
                self.metrics().iter().position(|spec| spec.unit == Unit::Outcome)
            }
            /// The index constants of the model's metrics and timeline series, as (name, value).
            #[cfg(test)]
            pub(crate) fn index_constants(self) -> [&'static [(&'static str, usize)]; 2] {
                match self { $(ModelKind::$variant => [$module::metric::INDICES, $module::series::INDICES]),+ }
            }
            /// What each timeline series holds per bucket, in the order of [`ModelKind::timeline_series`].
            pub fn timeline_help(self) -> &'static [&'static str] {
                match self { $(ModelKind::$variant => $module::series::HELP),+ }
            }
            pub fn timeline_series(self) -> &'static [&'static str] {
                match self { $(ModelKind::$variant => $module::series::NAMES),+ }
            }
            pub fn default_chart_metrics(self) -> &'static [&'static str] {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::DEFAULT_CHART_METRICS),+ }
            }
            /// The settings that decide the model's verdicts (see [`SimModel::SETTINGS`]).
            pub fn verdict_settings(self) -> &'static [&'static str] {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::SETTINGS),+ }
            }
            /// Where the model's timeline shows its backlog, if it keeps one.
            pub fn backlog(self) -> Option<Backlog> {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::BACKLOG),+ }
            }
            /// The timeline series the timeline chart draws when the scenario does not choose (empty: the first).
            pub fn default_timeline_series(self) -> &'static [&'static str] {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::DEFAULT_TIMELINE_SERIES),+ }
            }
            pub fn part_table(self) -> Option<&'static PartTable> {
                match self { $(ModelKind::$variant => <$module::$model as SimModel>::PARTS),+ }
            }
            pub fn configure(self, point: &Point) -> Result<ModelConfig, ParamError> {
                match self {
                    $(ModelKind::$variant => <$module::$model as SimModel>::configure(point).map(|config| ModelConfig(Configured::$variant(Box::new(config))))),+
                }
            }
        }

        impl ModelConfig {
            /// The model this configures.
            pub fn kind(&self) -> ModelKind {
                match &self.0 { $(Configured::$variant(_) => ModelKind::$variant),+ }
            }

            pub fn simulate(&self, run: RunSettings) -> RunOutput {
                match &self.0 { $(Configured::$variant(config) => <$module::$model as SimModel>::simulate(config, run)),+ }
            }

            /// Names of the services a trace's `layer` indexes (the layered model's graph); empty elsewhere.
            pub fn service_names(&self) -> Vec<String> {
                match &self.0 { $(Configured::$variant(config) => <$module::$model as SimModel>::service_names(config)),+ }
            }

            /// The client policy this configuration of `point` runs, in one line (see
            /// [`SimModel::describe_policy`]).
            pub fn describe_policy(&self, point: &Point) -> Result<Option<String>, ParamError> {
                match &self.0 { $(Configured::$variant(config) => <$module::$model as SimModel>::describe_policy(point, config)),+ }
            }

            /// What one run of this configuration holds in memory besides its timeline.
            pub(crate) fn footprint(&self) -> Footprint {
                match &self.0 { $(Configured::$variant(config) => <$module::$model as SimModel>::footprint(config)),+ }
            }

            /// What a trace's span owner is: a client, a station, a request.
            pub fn trace_owner(&self) -> &'static str {
                match &self.0 { $(Configured::$variant(config) => <$module::$model as SimModel>::trace_owner(config)),+ }
            }

            /// The analytic value of `metric` when the swept parameter `x_key` takes the value `x`, for models with
            /// a closed form.
            pub fn theory(&self, metric: &str, x_key: &str, x: f64) -> Option<f64> {
                match &self.0 { $(Configured::$variant(config) => <$module::$model as SimModel>::theory(config, metric, x_key, x)),+ }
            }
        }
    };
}

register_models! {
    occ::Occ => Occ,
    server::Server => Server,
    channel::Channel => Channel,
    layers::Layers => Layers,
    fanout::Fanout => Fanout,
    periodic_sync::PeriodicSync => PeriodicSync,
    queue::Queue => Queue,
}

impl ModelKind {
    pub fn from_name(name: &str) -> Option<ModelKind> {
        ModelKind::ALL.iter().copied().find(|kind| kind.name() == name)
    }

    /// Every parameter of the model, shared groups included, in output order.
    pub fn params(self) -> impl Iterator<Item = &'static ParamSpec> {
        self.param_groups().iter().flat_map(|group| group.iter())
    }

    /// A point with every parameter at its default, then `changes` applied by key (a parameter's name or its
    /// former name), for tests, benchmarks and examples; scenarios build their points from files. Panics on a key
    /// the model does not have, so a typo cannot silently leave a default in place.
    pub fn point_with(self, changes: &[(&str, Value)]) -> Point {
        for (key, _) in changes {
            assert!(self.params().any(|spec| spec.answers_to(None, key)), "the {} model has no `{key}`", self.name());
        }
        let entries = self
            .params()
            .map(|spec| {
                let changed =
                    changes.iter().find(|(key, _)| spec.answers_to(None, key)).map(|(_, value)| value.clone());
                (spec, changed.or_else(|| spec.default.hashed_value()))
            })
            .collect();
        let written = self.params().filter(|spec| changes.iter().any(|(key, _)| spec.answers_to(None, key)));
        Point::new(entries).with_written(written.map(|spec| spec.key).collect())
    }

    /// The settings of `point` that decide the model's verdicts, every default resolved, in one line; then, for
    /// each named part that sets some of them itself, `; part: …`. `None` for models that declare none.
    pub fn describe_settings(self, point: &Point) -> Option<String> {
        let keys = self.verdict_settings();
        if keys.is_empty() {
            return None;
        }
        let mut text = point.describe_keys(keys);
        for part in point.parts() {
            let own: Vec<&str> = keys.iter().copied().filter(|key| part.get(key).is_some()).collect();
            if !own.is_empty() {
                let values: Vec<String> = own.iter().map(|key| format!("{key} {}", part.get(key).unwrap())).collect();
                text.push_str(&format!("; {}: {}", part.name, values.join(", ")));
            }
        }
        Some(text)
    }

    /// The position of the metric `name` names (by its name or its former name).
    pub fn metric_index(self, name: &str) -> Option<usize> {
        self.metrics().iter().position(|metric| metric.answers_to(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every setting a model shows and every series its backlog names is one it declares, so none is silently
    /// left out of `--list-points` or a warning.
    #[test]
    fn settings_and_backlog_series_are_declared() {
        for kind in ModelKind::ALL {
            for key in kind.verdict_settings() {
                assert!(kind.params().any(|spec| spec.key == *key), "{}: {key}", kind.name());
            }
            if let Some(backlog) = kind.backlog() {
                let mut names = vec![backlog.level, backlog.offered];
                names.extend(backlog.wasted.map(|(wasted, useful)| [wasted, useful]).into_iter().flatten());
                for name in names {
                    assert!(kind.timeline_series().contains(&name), "{}: {name}", kind.name());
                }
            }
        }
    }

    /// Every index constant a model's code uses names the column it indexes (`CALLS` → `calls`), and the
    /// constants number the columns 0, 1, 2, … in order, so a metric can be neither misplaced nor mislabelled.
    #[test]
    fn every_metric_and_series_index_names_its_column() {
        for kind in ModelKind::ALL {
            let [metric_indices, series_indices] = kind.index_constants();
            let metric_names: Vec<&str> = kind.metrics().iter().map(|metric| metric.name).collect();
            for (indices, names) in
                [(metric_indices, metric_names.as_slice()), (series_indices, kind.timeline_series())]
            {
                assert_eq!(indices.len(), names.len(), "{}: one constant per column", kind.name());
                for (position, &(constant, index)) in indices.iter().enumerate() {
                    assert_eq!(index, position, "{}: {constant}", kind.name());
                    assert_eq!(
                        constant.to_lowercase(),
                        names[index],
                        "{}: {constant} indexes column {index}",
                        kind.name()
                    );
                }
            }
        }
    }
}
