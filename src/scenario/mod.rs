//! Scenario files: the TOML schema, its validation with located errors, `--set` overrides, and the expansion of
//! a sweep into points.
//!
//! ```toml
//! schema_version = 1
//! name = "aws-jitter-2015"
//! seed = 2015
//! replicates = 100
//! timeline_bucket = "10ms"
//!
//! [model]
//! kind = "occ"
//! clients = 100
//!
//! [client]
//! strategy = "full-jitter"
//! base = "5ms"
//! cap = "2s"
//!
//! [sweep]                       # the cartesian product of these lists / ranges
//! clients = { from = 10, to = 190, step = 10 }
//! strategy = ["none", "exponential", "full-jitter"]
//! ```

mod chart_options;
mod imports;
mod locator;
mod overrides;
mod parse;
mod parts;
mod plan;
mod tune;
mod value;

use std::path::{Path, PathBuf};

pub use crate::error::{InputError, LineCol, Origin};
pub use crate::time::parse_duration;
pub use chart_options::{BarsOptions, ChartSize, HeatmapOptions, MAX_HEATMAP_PANELS, YScale};
pub(crate) use overrides::write_into_source;
pub use parts::PartOrigins;
pub(crate) use plan::point_of;
pub use plan::{MAX_POINTS, PlannedPoint, plan};
pub(crate) use plan::{plan_one, swept_at};
pub(crate) use tune::out_of_reach;
pub use tune::{MAX_BUDGET, TuneTable};

use crate::model::ModelKind;
use crate::params::{ParamSpec, Part, Value};
use crate::time::SimDuration;

/// The only schema version this build reads.
pub const SCHEMA_VERSION: i64 = 1;

/// A parsed, validated scenario.
#[derive(Debug)]
pub struct Scenario {
    /// The path as the user gave it.
    pub path: PathBuf,
    /// The file's text, kept for the manifest's checksum.
    pub source: String,
    pub name: String,
    pub description: String,
    pub model: ModelKind,
    pub seed: u64,
    pub replicates: u32,
    pub timeline_bucket: SimDuration,
    /// Events after which a run stops and is reported as truncated (a guard against retry storms that never
    /// drain); `None`: [`crate::model::event_cap`]'s default, which grows with the clients.
    pub max_events_per_run: Option<u64>,
    /// One entry per model parameter, in the model's declaration order.
    pub settings: Vec<Setting>,
    /// Swept parameters, outermost first.
    pub sweep: Vec<SweepAxis>,
    pub charts: ChartOptions,
    /// Named parts from `[<table>.<name>]` tables (the services of a call graph), for models that take them.
    pub parts: std::sync::Arc<[Part]>,
    /// Where each part's values were written, aligned with `parts`.
    pub part_origins: Vec<PartOrigins>,
    /// What `retrylab tune` searches (`[tune]`); `run` leaves it aside.
    pub tune: Option<TuneTable>,
    /// The configurations its `import` keys name, read and translated (see src/scenario/imports.rs).
    pub(crate) imports: Vec<imports::ImportedPolicy>,
}

/// A parameter's value outside the sweep, and where it was set.
#[derive(Debug, Clone)]
pub struct Setting {
    pub spec: &'static ParamSpec,
    pub value: Option<Value>,
    pub origin: Origin,
}

/// One swept parameter and its values in order.
#[derive(Debug, Clone)]
pub struct SweepAxis {
    pub spec: &'static ParamSpec,
    /// The key as the scenario spells it (the parameter's name or its former one): the column in the CSV
    /// outputs, so renaming a parameter changed no published table.
    pub name: &'static str,
    pub values: Vec<Value>,
    pub origin: Origin,
}

impl SweepAxis {
    /// Whether `key` names this axis: its spelling in the sweep, or the parameter's name or former name.
    pub fn answers_to(&self, key: &str) -> bool {
        self.name == key || self.spec.answers_to(None, key)
    }
}

/// What the `[charts]` table asks for; anything unset is chosen when the charts are drawn.
#[derive(Debug, Clone, Default)]
pub struct ChartOptions {
    /// The swept parameter on the x axis of the metric charts.
    pub x: Option<&'static str>,
    /// The swept parameter that makes one line per value.
    pub series: Option<&'static str>,
    /// Metrics to chart against x.
    pub metrics: Vec<&'static str>,
    /// Swept parameters the metric charts pin to one value (the others make lines or panels).
    pub at: Vec<(&'static str, Value)>,
    /// The values of the other swept parameters at which the timeline chart is drawn.
    pub timeline_at: Vec<(&'static str, Value)>,
    /// Crop the timeline chart at this time.
    pub timeline_until: Option<SimDuration>,
    /// The timeline series the timeline chart draws, one column each (default: the model's choice, else its
    /// first).
    pub timeline_series: Vec<&'static str>,
    /// Heatmaps of one metric over two swept parameters (`[charts.heatmap]`).
    pub heatmaps: Vec<HeatmapOptions>,
    /// Grouped bar charts of several metrics (`[charts.bars]`).
    pub bars: Vec<BarsOptions>,
    /// The title of every chart, in place of the one made from the metric (which then leads the subtitle).
    pub title: Option<String>,
    /// The y axis of the metric charts, bars, timeline and goodput.
    pub y_scale: YScale,
    /// The charts' pixel size.
    pub size: ChartSize,
}

/// The largest scenario file read (4 MiB): far beyond any study written by hand, small enough to parse at once.
pub const MAX_SCENARIO_BYTES: u64 = 4 << 20;

/// Default replicates and seed when the file does not say.
pub const DEFAULT_REPLICATES: u32 = 1;
pub const DEFAULT_SEED: u64 = 1;
pub const DEFAULT_TIMELINE_BUCKET: SimDuration = SimDuration::from_millis(10);

impl Scenario {
    /// Reads, parses and validates `path`, then applies `--set KEY=VALUE` overrides in order. A file larger than
    /// [`MAX_SCENARIO_BYTES`] is refused before it is read.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, crate::Error> {
        let read_error = |source| crate::Error::ReadScenario { path: path.to_owned(), source };
        let bytes = std::fs::metadata(path).map_err(read_error)?.len();
        if bytes > MAX_SCENARIO_BYTES {
            return Err(crate::Error::Usage(format!(
                "{}: {bytes} bytes is more than a scenario file may hold ({MAX_SCENARIO_BYTES}); a sweep's values \
                 fit in ranges ({{ from = …, to = …, step = … }}), and long schedules in fewer points",
                path.display()
            )));
        }
        let source = std::fs::read_to_string(path).map_err(read_error)?;
        Scenario::with_overrides(path, source, overrides)
    }

    /// Parses and validates scenario text, then applies `--set KEY=VALUE` overrides in order; `path` is used in
    /// messages and for the default name. The files it imports are read once every override is applied.
    pub fn with_overrides(path: &Path, source: String, overrides: &[String]) -> Result<Scenario, crate::Error> {
        let mut scenario = parse::parse(path, source)?;
        for argument in overrides {
            overrides::apply(&mut scenario, argument)?;
        }
        imports::resolve(&mut scenario)?;
        Ok(scenario)
    }

    /// Parses and validates scenario text, and reads the files it imports; `path` is used in messages, for the
    /// default name and as the folder imports are relative to.
    pub fn from_source(path: &Path, source: String) -> Result<Scenario, InputError> {
        let mut scenario = parse::parse(path, source)?;
        imports::resolve(&mut scenario)?;
        Ok(scenario)
    }

    /// The traps crossed by the configurations the scenario imports, and the keys they give that its model left
    /// out, one line each with the file's line and column.
    pub fn import_notes(&self) -> Vec<String> {
        imports::notes(self)
    }

    /// The file name as shown in messages.
    pub fn display_path(&self) -> String {
        self.path.display().to_string()
    }

    /// The file stem: the default output folder name.
    pub fn stem(&self) -> String {
        self.path.file_stem().map_or_else(|| self.name.clone(), |stem| stem.to_string_lossy().into_owned())
    }

    /// The swept parameter `key` names (by its spelling in the sweep, its name or its former name).
    pub fn axis(&self, key: &str) -> Option<&SweepAxis> {
        self.sweep.iter().find(|axis| axis.answers_to(key))
    }

    /// The number of sweep points (the product of the axes' lengths; `usize::MAX` when that overflows).
    pub fn point_count(&self) -> usize {
        self.sweep
            .iter()
            .try_fold(1_usize, |product, axis| product.checked_mul(axis.values.len()))
            .unwrap_or(usize::MAX)
    }

    pub(crate) fn dotted_key(spec: &ParamSpec) -> String {
        format!("{}.{}", spec.section.name(), spec.key)
    }

    pub(crate) fn error(&self, origin: Origin, key: Option<String>, message: impl Into<String>) -> InputError {
        InputError::new(&self.display_path(), origin, key, message)
    }

    /// An error located where `key` was set (or swept), else at the first line that writes `key =`, else at the
    /// file: for verbs that refuse what a scenario asks for (`emulate`, `fluid`).
    pub(crate) fn refuse_at(&self, key: &str, message: &str) -> InputError {
        let axis = self.sweep.iter().find(|axis| axis.spec.key == key).map(|axis| (axis.origin.clone(), axis.name));
        let setting = self.settings.iter().find(|s| s.spec.key == key && s.origin != Origin::Default);
        let setting = setting.map(|s| (s.origin.clone(), s.spec.key));
        let (origin, name) = axis.or(setting).unwrap_or((self.origin_of_text(key), key));
        let dotted = self.settings.iter().find(|s| s.spec.key == name).map(|s| Scenario::dotted_key(s.spec));
        self.error(origin, Some(dotted.unwrap_or_else(|| name.to_owned())), message)
    }

    /// The first line of the scenario file that sets `key` (`key =` at a line's start), else the file as a whole.
    pub(crate) fn origin_of_text(&self, key: &str) -> Origin {
        let mut offset = 0;
        for line in self.source.split_inclusive('\n') {
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix(key)
                && rest.trim_start().starts_with('=')
            {
                let column_offset = offset + (line.len() - trimmed.len());
                return Origin::File(crate::error::LineCol::of_offset(&self.source, column_offset));
            }
            offset += line.len();
        }
        Origin::Default
    }
}

#[cfg(test)]
mod tests;
