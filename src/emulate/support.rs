//! What the emulator can run, decided from the scenario before any socket: the server model with a burst, open or
//! closed workload and no client clock (aligned retries and clock skew need the simulation's clocks, which the
//! emulator does not have yet). Refusals are located at the key that asks for what cannot be emulated.

use std::sync::Arc;

use crate::error::InputError;
use crate::model::server::ServerConfig;
use crate::model::{Configured, ModelKind};
use crate::scenario::{PlannedPoint, Scenario};
use crate::workload::Arrivals;

/// Every point's server configuration, or the first reason the scenario cannot be emulated.
pub(crate) fn configs(scenario: &Scenario, points: &[PlannedPoint]) -> Result<Vec<Arc<ServerConfig>>, InputError> {
    if scenario.model != ModelKind::Server {
        return Err(scenario.error(
            scenario.origin_of_text("kind"),
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

fn refuse(scenario: &Scenario, key: &str, message: &str) -> InputError {
    scenario.refuse_at(key, message)
}
