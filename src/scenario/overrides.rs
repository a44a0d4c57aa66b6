//! `--set KEY=VALUE`: change one setting of a loaded scenario from the command line.
//!
//! KEY is a top-level key (`seed`, `replicates`, `timeline_bucket`, `max_events_per_run`), a parameter (`clients`, `model.clients`,
//! `client.base`) or a sweep axis (`sweep.clients`). VALUE is read as a TOML value, or as a plain string when it
//! is not one, so `--set strategy=full-jitter` needs no quotes. A scalar fixes a parameter (and removes it from
//! the sweep); a list or `{ from, to, step }` range sweeps it.

use toml::de::DeValue;

use super::locator::Locator;
use super::parse::{axis_values, parse_bucket, parse_event_cap, parse_replicates, parse_seed, resolve_param};
use super::value::convert;
use super::{Scenario, SweepAxis};
use crate::error::{InputError, Origin};

pub fn apply(scenario: &mut Scenario, argument: &str) -> Result<(), InputError> {
    let file = scenario.display_path();
    let origin = Origin::CommandLine(argument.to_owned());
    let Some((key, text)) = argument.split_once('=') else {
        return Err(InputError::new(&file, origin, None, "expected KEY=VALUE, like `clients=50`"));
    };
    let key = key.trim();
    let text = text.trim();
    let parsed = DeValue::parse(text).ok();
    let owned_string;
    let value = match &parsed {
        Some(value) => value,
        None => {
            owned_string = toml::Spanned::new(0..text.len(), DeValue::String(text.into()));
            &owned_string
        }
    };
    let at = Locator { file: &file, source: text, command_line: Some(argument) };
    let bad = |message: &str| at.error(0..0, key, message);
    match key {
        "seed" => {
            scenario.seed =
                parse_seed(value.get_ref()).ok_or_else(|| bad("expected a whole number from 0 to 2^63 − 1"))?
        }
        "replicates" => {
            scenario.replicates =
                parse_replicates(value.get_ref()).ok_or_else(|| bad("expected a whole number from 1 to 1000000"))?
        }
        "timeline_bucket" => scenario.timeline_bucket = parse_bucket(value.get_ref()).map_err(|why| bad(&why))?,
        "max_events_per_run" => {
            scenario.max_events_per_run =
                parse_event_cap(value.get_ref()).ok_or_else(|| bad("expected a whole number ≥ 1000"))?
        }
        _ => {
            let (sweep_only, param_key) = match key.strip_prefix("sweep.") {
                Some(rest) => (true, rest),
                None => (false, key),
            };
            let Some((spec, name)) = resolve_param(scenario.model, param_key) else {
                let mut valid = vec!["seed", "replicates", "timeline_bucket", "max_events_per_run"];
                valid.extend(scenario.model.params().map(|spec| spec.key));
                return Err(bad(&format!("unknown key `{key}`; valid keys: {}", valid.join(", "))));
            };
            let dotted = Scenario::dotted_key(spec);
            let is_list = matches!(value.get_ref(), DeValue::Array(_) | DeValue::Table(_));
            let position = scenario.sweep.iter().position(|axis| std::ptr::eq(axis.spec, spec));
            if is_list || sweep_only {
                let values = axis_values(spec, &dotted, value, at)?;
                let axis = SweepAxis { spec, name, values, origin: origin.clone() };
                match position {
                    Some(i) => scenario.sweep[i] = axis,
                    None => scenario.sweep.push(axis),
                }
            } else {
                let converted = convert(spec, &dotted, value.get_ref(), value.span(), at)?;
                if let Some(i) = position {
                    scenario.sweep.remove(i);
                }
                let setting = scenario
                    .settings
                    .iter_mut()
                    .find(|s| std::ptr::eq(s.spec, spec))
                    .expect("every parameter has a setting");
                setting.value = Some(converted);
                setting.origin = origin;
            }
        }
    }
    Ok(())
}
