//! Expands a scenario's sweep into points (the cartesian product of its axes, first axis outermost) and checks
//! each point with its model before anything runs.

use super::{Origin, Scenario};
use crate::engine::{RunSeeds, stable_hash};
use crate::error::InputError;
use crate::model::ModelConfig;
use crate::params::{Choice, ParamSpec, Point, Section, Value};
use crate::workload::WorkloadKind;

/// Refuse sweeps beyond this many points: they are typos, not studies.
pub const MAX_POINTS: usize = 1_000_000;

/// One sweep point, ready to run.
pub struct PlannedPoint {
    /// Position in the canonical order.
    pub index: usize,
    /// The swept values, aligned with `Scenario::sweep`.
    pub swept: Vec<Value>,
    /// Stable hash of every parameter's canonical text: the point's identity.
    pub hash: u64,
    /// Stable hashes of the texts that seed the world's and the policy's streams (see [`crate::params::SeedSide`]).
    pub world_hash: u64,
    pub policy_hash: u64,
    pub config: ModelConfig,
    /// The client policy the point runs, presets resolved, in one line (models with a retry policy).
    pub policy: Option<String>,
    /// The settings that decide the model's verdicts, every default resolved, in one line (see
    /// [`crate::model::ModelKind::describe_settings`]).
    pub settings: Option<String>,
}

impl PlannedPoint {
    /// A stable short id: the first 12 hex digits of the parameter hash.
    pub fn id(&self) -> String {
        format!("{:012x}", self.hash >> 16)
    }

    /// The seeds of one replicate of the point.
    pub fn seeds(&self, master_seed: u64, replicate: u32) -> RunSeeds {
        RunSeeds::of_replicate(master_seed, self.world_hash, self.policy_hash, replicate)
    }
}

/// Every point of the sweep, in canonical order, each validated by its model.
pub fn plan(scenario: &Scenario) -> Result<Vec<PlannedPoint>, InputError> {
    let count = scenario.point_count();
    if count == 0 {
        return Err(scenario.error(Origin::Default, Some("sweep".into()), "the sweep has no points"));
    }
    if count > MAX_POINTS {
        return Err(scenario.error(
            Origin::Default,
            Some("sweep".into()),
            match count {
                usize::MAX => format!("the sweep's points overflow a count (more than {})", usize::MAX),
                _ => format!("{count} points is more than the limit of {MAX_POINTS}"),
            },
        ));
    }
    check_workload_keys(scenario)?;
    (0..count).map(|index| plan_one(scenario, index)).collect()
}

/// Refuses a `[workload]` key (written, set or swept) that no kind of workload the scenario runs reads: it would
/// change nothing (see [`crate::workload::unread_key`]).
fn check_workload_keys(scenario: &Scenario) -> Result<(), InputError> {
    let shared = |spec: &ParamSpec| {
        spec.section == Section::Workload && crate::workload::PARAMS.iter().any(|own| own.key == spec.key)
    };
    let Some(kind) = scenario.settings.iter().find(|s| shared(s.spec) && s.spec.key == "kind") else {
        return Ok(());
    };
    let axis = |spec: &ParamSpec| scenario.sweep.iter().find(|axis| std::ptr::eq(axis.spec, spec));
    let values = axis(kind.spec).map_or_else(|| kind.value.iter().cloned().collect(), |axis| axis.values.clone());
    let kinds: Vec<WorkloadKind> = values
        .iter()
        .filter_map(|value| match value {
            Value::Choice(name) => WorkloadKind::from_name(name),
            _ => None,
        })
        .collect();
    let written =
        scenario.settings.iter().filter(|s| shared(s.spec) && (s.origin != Origin::Default || axis(s.spec).is_some()));
    let Some((key, message)) = crate::workload::unread_key(&kinds, written.map(|s| s.spec.key)) else {
        return Ok(());
    };
    let setting = scenario.settings.iter().find(|s| shared(s.spec) && s.spec.key == key);
    let origin = match (setting.and_then(|s| axis(s.spec)), setting) {
        (Some(axis), _) => axis.origin.clone(),
        (None, Some(setting)) => setting.origin.clone(),
        (None, None) => Origin::Default,
    };
    let dotted = setting.map_or_else(|| key.to_owned(), |s| Scenario::dotted_key(s.spec));
    Err(scenario.error(origin, Some(dotted), message))
}

/// The swept values of the point at `index` in canonical order: the mixed-radix digits of `index`, last axis
/// fastest.
pub(crate) fn swept_at(scenario: &Scenario, index: usize) -> Vec<Value> {
    let mut rest = index;
    let mut swept = vec![Value::Count(0); scenario.sweep.len()];
    for (slot, axis) in swept.iter_mut().zip(&scenario.sweep).rev() {
        *slot = axis.values[rest % axis.values.len()].clone();
        rest /= axis.values.len();
    }
    swept
}

/// The sweep point at `index` in canonical order, validated by its model.
pub(crate) fn plan_one(scenario: &Scenario, index: usize) -> Result<PlannedPoint, InputError> {
    let swept = swept_at(scenario, index);
    let (point, imported) = point_with_imports(scenario, &swept);
    let locate = |problem| locate(scenario, &swept, &imported, problem);
    let config = scenario.model.configure(&point).map_err(locate)?;
    let mut policy = config.describe_policy(&point).map_err(locate)?;
    if let Some(policy) = &mut policy
        && !imported.is_empty()
    {
        policy.push_str(&format!("; {}", imported.join("; ")));
    }
    let settings = scenario.model.describe_settings(&point);
    let hash = stable_hash(point.canonical_text().as_bytes());
    let world_hash = stable_hash(point.world_seed_text().as_bytes());
    let policy_hash = stable_hash(point.policy_seed_text().as_bytes());
    Ok(PlannedPoint { index, swept, hash, world_hash, policy_hash, config, policy, settings })
}

/// Points a model's complaint at the place the offending parameter was set (for a value a configuration gave,
/// at the `import` that named it).
fn locate(scenario: &Scenario, swept: &[Value], imported: &[String], problem: crate::params::ParamError) -> InputError {
    if let (Some(part_name), Some(table)) = (&problem.part, scenario.model.part_table())
        && let Some(index) = scenario.parts.iter().position(|part| part.name == *part_name)
    {
        let origins = &scenario.part_origins[index];
        let value_origin = origins.values.iter().find(|(key, _)| *key == problem.key).map(|(_, o)| o.clone());
        let origin = value_origin.unwrap_or_else(|| origins.table.clone());
        let key = format!("{}.{part_name}.{}", table.table, problem.key);
        return scenario.error(origin, Some(key), problem.message);
    }
    let mut setting = scenario.settings.iter().find(|s| s.spec.key == problem.key);
    let mut message = problem.message;
    let written = setting.is_some_and(|s| s.origin != Origin::Default);
    let axis = scenario.sweep.iter().find(|axis| axis.spec.key == problem.key);
    if !imported.is_empty() && !written && axis.is_none() {
        // The value came from the imported configuration (or the model's default beside it): point at `import`.
        message = format!("{message} ({})", imported.join("; "));
        setting = scenario.settings.iter().find(|s| s.spec.key == "import").or(setting);
    }
    let key = setting.map_or_else(|| problem.key.to_owned(), |s| Scenario::dotted_key(s.spec));
    let origin = match (axis, setting) {
        (Some(axis), _) => axis.origin.clone(),
        (None, Some(setting)) => setting.origin.clone(),
        (None, None) => Origin::Default,
    };
    if !scenario.sweep.is_empty() {
        let at: Vec<String> =
            scenario.sweep.iter().zip(swept).map(|(axis, value)| format!("{}={value}", axis.name)).collect();
        message = format!("{message} (at sweep point {})", at.join(", "));
    }
    if origin == Origin::Default {
        message.push_str(" (the default; set it explicitly)");
    }
    scenario.error(origin, Some(key), message)
}

/// The point the swept values `swept` (one per axis, in the sweep's order) pick out of `scenario`.
pub(crate) fn point_of(scenario: &Scenario, swept: &[Value]) -> Point {
    point_with_imports(scenario, swept).0
}

/// [`point_of`], with what the point imports (see src/scenario/imports.rs), one line per configuration.
fn point_with_imports(scenario: &Scenario, swept: &[Value]) -> (Point, Vec<String>) {
    let mut entries: Vec<_> = scenario
        .settings
        .iter()
        .map(|setting| {
            let swept_value =
                scenario.sweep.iter().position(|axis| std::ptr::eq(axis.spec, setting.spec)).map(|i| swept[i].clone());
            (setting.spec, swept_value.or_else(|| setting.value.clone()))
        })
        .collect();
    let mut written: Vec<_> = scenario
        .settings
        .iter()
        .filter(|setting| {
            setting.origin != Origin::Default || scenario.sweep.iter().any(|axis| std::ptr::eq(axis.spec, setting.spec))
        })
        .map(|setting| setting.spec.key)
        .collect();
    let mut parts = std::sync::Arc::clone(&scenario.parts);
    let imported = match scenario.imports.is_empty() {
        true => Vec::new(),
        false => super::imports::fill(scenario, &mut entries, &mut written, &mut parts),
    };
    (Point::new(entries).with_parts(parts).with_written(written), imported)
}
