//! The bench's controls, generated from the scenario and its model's typed parameters (the same [`ParamSpec`]s
//! that check a scenario file), so the page offers exactly the keys `--set` takes, with their kinds, bounds,
//! defaults and help, and the strategies, presets and limiters grouped with their one-line descriptions.

use serde_json::{Value, json};

use crate::Origin;
use crate::commands::strategies::OWN_LIMITERS;
use crate::model::faults::FAULT_SYNTAX;
use crate::params::{ParamDefault, ParamKind, ParamSpec};
use crate::policy::limiters::LimiterKind;
use crate::policy::{Strategy, presets};
use crate::scenario::Scenario;

/// One control per parameter of the scenario's model (in declaration order), then `replicates` and `seed`.
pub(crate) fn controls(scenario: &Scenario) -> Vec<Value> {
    let mut controls: Vec<Value> = scenario
        .settings
        .iter()
        .map(|setting| {
            let spec = setting.spec;
            let mut control = describe(spec);
            control["value"] = json!(setting.value.as_ref().map(ToString::to_string));
            control["written"] = json!(!matches!(setting.origin, Origin::Default));
            if let Some(axis) = scenario.axis(spec.key) {
                control["swept"] = json!(axis.values.iter().map(ToString::to_string).collect::<Vec<_>>());
            }
            control
        })
        .collect();
    controls.push(json!({
        "key": "replicates", "section": "run", "name": "replicates", "kind": "count", "min": 1, "max": 1_000_000,
        "value": scenario.replicates.to_string(), "written": true,
        "help": "runs per point, each on its own random numbers; more replicates, narrower intervals",
    }));
    controls.push(json!({
        "key": "seed", "section": "run", "name": "seed", "kind": "count", "min": 0, "max": i64::MAX,
        "value": scenario.seed.to_string(), "written": true,
        "help": "the master seed: the same seed gives the same numbers, on any machine",
    }));
    controls
}

/// A parameter's key (as `--set` takes it), kind, bounds, default and help.
fn describe(spec: &ParamSpec) -> Value {
    let mut control = json!({
        "key": format!("{}.{}", spec.section.name(), spec.key),
        "section": spec.section.name(),
        "name": spec.key,
        "help": spec.help,
        "default": match &spec.default {
            ParamDefault::Required | ParamDefault::Unset => None,
            ParamDefault::Implied(value) | ParamDefault::Value(value) => Some(value.to_string()),
        },
        "required": matches!(spec.default, ParamDefault::Required),
    });
    let (kind, extra) = match spec.kind {
        ParamKind::Count { min, max } => ("count", json!({ "min": min, "max": max })),
        ParamKind::Real { min, max } => ("real", json!({ "min": finite(min), "max": finite(max) })),
        ParamKind::Duration => ("duration", json!({})),
        ParamKind::Choice(names) => ("choice", json!({ "groups": groups(spec.key, names) })),
        ParamKind::ChoiceList(names) => ("choice-list", json!({ "groups": groups(spec.key, names) })),
        // Fault windows get a timeline on the page, on which an outage is placed by dragging.
        ParamKind::Text { syntax } if syntax == FAULT_SYNTAX => {
            ("text", json!({ "syntax": syntax, "widget": "faults" }))
        }
        ParamKind::Text { syntax } => ("text", json!({ "syntax": syntax })),
        ParamKind::List { syntax } => ("list", json!({ "syntax": syntax })),
    };
    control["kind"] = json!(kind);
    if let (Value::Object(control), Value::Object(extra)) = (&mut control, extra) {
        control.extend(extra);
    }
    control
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// A choice's names in groups with a line each: strategies and presets for `strategy`, the lab's own and the
/// shipped limiters for `limiter`, one plain group otherwise.
fn groups(key: &str, names: &[&str]) -> Vec<Value> {
    let option = |name: &str, about: &str| json!({ "name": name, "about": about });
    let listed = |name: &&str| names.contains(name);
    match key {
        "strategy" => {
            let strategies: Vec<Value> = Strategy::ALL
                .iter()
                .filter(|strategy| listed(&strategy.name()))
                .map(|strategy| {
                    option(strategy.name(), &format!("sleep = {}: {}", strategy.formula(), strategy.about()))
                })
                .collect();
            let presets: Vec<Value> = presets::ALL
                .iter()
                .filter(|preset| listed(&preset.name))
                .map(|preset| {
                    option(preset.name, &format!("{} as shipped; source: {}", preset.strategy, preset.source))
                })
                .collect();
            vec![
                json!({ "label": "strategies", "options": strategies }),
                json!({ "label": "presets", "options": presets }),
            ]
        }
        "limiter" => {
            let own: Vec<Value> =
                OWN_LIMITERS.iter().filter(|(name, _)| listed(name)).map(|(name, about)| option(name, about)).collect();
            let shipped: Vec<Value> = LimiterKind::ALL
                .iter()
                .filter(|kind| listed(&kind.name()))
                .map(|kind| option(kind.name(), kind.about()))
                .collect();
            vec![
                json!({ "label": "the client's own", "options": own }),
                json!({ "label": "shipped limiters", "options": shipped }),
            ]
        }
        _ => vec![json!({ "label": key, "options": names.iter().map(|name| option(name, "")).collect::<Vec<_>>() })],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const HERD: &str = include_str!("../../scenarios/thundering-herd.toml");

    #[test]
    fn the_controls_are_the_models_keys_with_their_values() {
        let scenario = Scenario::from_source(Path::new("herd.toml"), HERD.to_owned()).unwrap();
        let controls = controls(&scenario);
        let by_key = |key: &str| controls.iter().find(|control| control["key"] == key).unwrap().clone();
        let workers = by_key("model.workers");
        assert_eq!((workers["kind"].as_str(), workers["value"].as_str()), (Some("count"), Some("10")));
        assert_eq!(workers["written"], true);
        let strategy = by_key("client.strategy");
        assert_eq!(strategy["swept"], json!(["none", "exponential", "full-jitter", "decorrelated-jitter"]));
        let groups = strategy["groups"].as_array().unwrap();
        assert_eq!(groups[0]["label"], "strategies");
        assert!(groups[1]["options"].as_array().unwrap().iter().any(|option| option["name"] == "grpc"));
        assert_eq!(by_key("replicates")["value"], "20");
        assert_eq!(by_key("model.faults")["widget"], "faults");
        assert_eq!(by_key("model.service")["widget"], Value::Null);
        let every = scenario.settings.len() + 2;
        assert_eq!(controls.len(), every);
    }
}
