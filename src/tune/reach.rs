//! What the metrics can reach, so that a goal no run could meet is refused before any run: each metric's range
//! by its unit (a fraction stays in [0, 1], a count at 0 or more), and the metrics a configuration never defines
//! (the stuck-state verdict of `model::verdict` needs a trigger to judge from; the layered model's `_during` and
//! `_after` metrics need fault windows).

use crate::model::{Configured, ModelConfig, ModelKind};
use crate::stats::Support;

/// The stuck-state verdict's metrics: NaN in every run without a trigger (see `model::verdict::Verdict`).
const VERDICT: &[&str] = &["recovery_ms", "recovered", "recovered_at_ms", "tipped", "stuck"];

/// The least and greatest value a run can give `metric` (unbounded for a name the model does not have).
pub(crate) fn metric_range(model: ModelKind, metric: &str) -> (f64, f64) {
    let support = model.metrics().iter().find(|spec| spec.answers_to(metric)).map(|spec| spec.unit.support());
    match support {
        Some(Support::Binary) => (0.0, 1.0),
        Some(Support::Within { min, max }) => (min, max),
        Some(Support::Real) | None => (f64::NEG_INFINITY, f64::INFINITY),
    }
}

/// Why `metric` is undefined in every run of `config`, if it is.
pub(crate) fn never_defined(config: &ModelConfig, metric: &str) -> Option<&'static str> {
    match &config.0 {
        Configured::Server(server) if server.trigger_end.is_none() && VERDICT.contains(&metric) => {
            Some("the scenario has no trigger (an outage, fault windows or trigger_end), so no run is judged")
        }
        Configured::Layers(layers) => {
            let phased = VERDICT.contains(&metric) || metric.ends_with("_during") || metric.ends_with("_after");
            let no_trigger = layers.services.iter().all(|service| service.faults.windows().is_empty());
            (phased && no_trigger).then_some("no service has fault windows, so no run has a trigger to measure from")
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Value;
    use crate::time::SimDuration;

    #[test]
    fn the_verdict_is_undefinable_without_a_trigger_and_ranges_follow_units() {
        let server = ModelKind::Server;
        let calm = server.configure(&server.point_with(&[])).unwrap();
        assert!(never_defined(&calm, "recovery_ms").is_some_and(|why| why.contains("no trigger")));
        assert_eq!(never_defined(&calm, "calls"), None);
        let outage = [
            ("outage_start", Value::Duration(SimDuration::from_secs(1))),
            ("outage_duration", Value::Duration(SimDuration::from_secs(2))),
            ("timeout", Value::Duration(SimDuration::from_secs(1))),
        ];
        let triggered = server.configure(&server.point_with(&outage)).unwrap();
        assert_eq!(never_defined(&triggered, "recovery_ms"), None);
        assert_eq!(metric_range(server, "success_rate"), (0.0, 1.0));
        assert_eq!(metric_range(server, "calls"), (0.0, f64::INFINITY));
        assert_eq!(metric_range(server, "stuck"), (0.0, 1.0));
    }
}
