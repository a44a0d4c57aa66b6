//! What the emulator can run, decided from the scenario before any socket: the server model with a burst, open or
//! closed workload and no client clock (aligned retries and clock skew need the simulation's clocks, which the
//! emulator does not have yet). Refusals are located at the key that asks for what cannot be emulated.

use std::sync::Arc;

use crate::error::{InputError, LineCol, Origin};
use crate::model::server::ServerConfig;
use crate::model::{Configured, ModelKind};
use crate::scenario::{PlannedPoint, Scenario};
use crate::workload::Arrivals;

/// Every point's server configuration, or the first reason the scenario cannot be emulated.
pub(crate) fn configs(scenario: &Scenario, points: &[PlannedPoint]) -> Result<Vec<Arc<ServerConfig>>, InputError> {
    if scenario.model != ModelKind::Server {
        return Err(scenario.error(
            origin_of_text(scenario, "kind"),
            Some("model.kind".into()),
            format!(
                "`retrylab emulate` runs the server model only (kind = \"server\"); this scenario's model is \"{}\"",
                scenario.model.name()
            ),
        ));
    }
    points
        .iter()
        .map(|point| {
            let Configured::Server(config) = &point.config.0 else { unreachable!("a server scenario's points") };
            if let Arrivals::Periodic { .. } = config.workload.arrivals {
                return Err(refuse(
                    scenario,
                    "workload",
                    "a periodic workload cannot be emulated yet (its hosts' timers need the simulation's clocks); \
                     use a burst, open or closed workload",
                ));
            }
            if config.clock.is_some() {
                return Err(refuse(
                    scenario,
                    "align",
                    "aligned retries and clock skew cannot be emulated yet (they need the simulation's clocks); \
                     remove `align` and `clock_skew`",
                ));
            }
            Ok(Arc::new((**config).clone()))
        })
        .collect()
}

/// A refusal located where `key` was set (or swept), else at the file.
fn refuse(scenario: &Scenario, key: &str, message: &str) -> InputError {
    let axis = scenario.sweep.iter().find(|axis| axis.spec.key == key).map(|axis| (axis.origin.clone(), axis.name));
    let setting = scenario.settings.iter().find(|s| s.spec.key == key && s.origin != Origin::Default);
    let setting = setting.map(|s| (s.origin.clone(), s.spec.key));
    let (origin, name) = axis.or(setting).unwrap_or((origin_of_text(scenario, key), key));
    let dotted = scenario.settings.iter().find(|s| s.spec.key == name).map(|s| Scenario::dotted_key(s.spec));
    scenario.error(origin, Some(dotted.unwrap_or_else(|| name.to_owned())), message)
}

/// The first line of the scenario file that sets `key` (`key =` at a line's start), else the file as a whole.
fn origin_of_text(scenario: &Scenario, key: &str) -> Origin {
    let mut offset = 0;
    for line in scenario.source.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix(key)
            && rest.trim_start().starts_with('=')
        {
            let column_offset = offset + (line.len() - trimmed.len());
            return Origin::File(LineCol::of_offset(&scenario.source, column_offset));
        }
        offset += line.len();
    }
    Origin::Default
}
