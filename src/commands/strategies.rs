//! `retrylab strategies`: every backoff strategy, preset and retry limiter, and per model exactly what it
//! accepts (its keys with their defaults and former names, its strategies, presets and limiters), all generated
//! from the registries the models read, so the listing cannot drift from what a scenario may say.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use crate::Error;
use crate::model::ModelKind;
use crate::params::{ParamDefault, ParamKind, ParamSpec, Section};
use crate::policy::limiters::LimiterKind;
use crate::policy::{Strategy, presets};

/// What `limiter` accepts besides the shipped limiters, with what it means.
pub(crate) const OWN_LIMITERS: &[(&str, &str)] = &[
    ("none", "no limiter of the client's own: the preset's, when `strategy` is a preset (written, refused there)"),
    ("off", "no limiter at all, not even a preset's"),
    ("preset", "the preset's own limiter, when `strategy` is a preset; else none"),
    (
        "budget",
        "the model's own ratio budget, retries ≤ budget × first tries: over 10 s for the server's client fleet \
         (first tries counted once answered), over the whole run for each caller of a call graph",
    ),
];

/// `retrylab strategies`.
pub fn strategies(stdout: &mut dyn Write) -> Result<(), Error> {
    stdout.write_all(listing().as_bytes()).map_err(|source| Error::Write { path: PathBuf::from("<stdout>"), source })
}

fn listing() -> String {
    let mut text = String::new();
    strategies_section(&mut text);
    presets_section(&mut text);
    limiters_section(&mut text);
    text.push_str(
        "\nConventions: n = attempts failed so far, so the first retry has n = 1 (the AWS 2015 simulator's\n\
         numbering); b = base, c = cap, m = multiplier (default 2); U(x, y) is a uniform draw.\n\
         Limits in [client]: max_attempts counts the first try; deadline gives up rather than sleep past it.\n",
    );
    text.push_str("\nModels (set `kind` in [model]), each with exactly what it accepts:\n");
    for &kind in ModelKind::ALL {
        model_section(&mut text, kind);
    }
    text
}

fn strategies_section(text: &mut String) {
    text.push_str("Backoff strategies (set `strategy` in [client]):\n\n");
    let width = Strategy::NAMES.iter().map(|name| name.len()).max().unwrap_or(0);
    for strategy in Strategy::ALL {
        let _ = writeln!(text, "  {:width$}  sleep = {}", strategy.name(), strategy.formula());
        let _ = writeln!(text, "  {:width$}  {}", "", strategy.about());
    }
}

fn presets_section(text: &mut String) {
    text.push_str(
        "\nPresets (set `strategy` to one: it fills base, cap, multiplier, max_attempts and the other backoff keys\n\
         unless the scenario writes them, and brings its limiter when `limiter` is \"none\"; f floor, j jitter,\n\
         q jitter_fraction, k steps):\n\n",
    );
    let width = presets::ALL.iter().map(|preset| preset.name.len()).max().unwrap_or(0);
    for preset in presets::ALL {
        let attempts = preset.max_attempts.map_or("unlimited attempts".to_owned(), |n| format!("{n} attempts"));
        let limiter = preset.limiter.map_or("none", LimiterKind::name);
        let backoff = preset.backoff;
        let mut extras = String::new();
        if let Some(base) = preset.throttling_base {
            let _ = write!(extras, " ({base} after throttling)");
        }
        for (letter, value, set) in [
            ("f", backoff.floor.to_string(), !backoff.floor.is_zero()),
            ("j", backoff.jitter.to_string(), !backoff.jitter.is_zero()),
            ("q", backoff.jitter_fraction.to_string(), backoff.jitter_fraction > 0.0),
            ("k", backoff.steps.to_string(), backoff.steps > 0),
        ] {
            if set {
                let _ = write!(extras, ", {letter} = {value}");
            }
        }
        let deadline = preset.deadline.map_or(String::new(), |deadline| format!(", deadline {deadline}"));
        let _ = writeln!(
            text,
            "  {:width$}  {}, b = {}{extras}, c = {}, m = {}; {attempts}{deadline}; limiter {limiter}; Retry-After {}",
            preset.name, preset.strategy, backoff.base, backoff.cap, backoff.multiplier, preset.retry_after
        );
        let _ = writeln!(text, "  {:width$}  source: {}", "", preset.source);
    }
}

fn limiters_section(text: &mut String) {
    text.push_str(
        "\nRetry limiters (set `limiter` in [client]; its knobs, also in [client], start at the shipped values):\n\n",
    );
    let width = LimiterKind::NAMES.iter().chain(OWN_LIMITERS.iter().map(|(name, _)| name)).map(|n| n.len()).max();
    let width = width.unwrap_or(0);
    for (name, about) in OWN_LIMITERS {
        let _ = writeln!(text, "  {name:width$}  {about}");
    }
    for &kind in LimiterKind::ALL {
        let _ = writeln!(text, "  {:width$}  {}", kind.name(), kind.about());
        if !kind.knobs().is_empty() {
            let knobs: Vec<String> =
                kind.knobs().iter().map(|knob| format!("{}{}", knob.key, default_note(knob))).collect();
            let _ = writeln!(text, "  {:width$}  knobs: {}", "", knobs.join(", "));
        }
        let _ = writeln!(text, "  {:width$}  source: {}", "", kind.source());
    }
}

/// ` (default X)`, ` (required)` or nothing for a parameter that is unset by default.
fn default_note(spec: &ParamSpec) -> String {
    match &spec.default {
        ParamDefault::Required => " (required)".to_owned(),
        ParamDefault::Unset => String::new(),
        ParamDefault::Implied(value) | ParamDefault::Value(value) => format!(" (default {value})"),
    }
}

/// The names of `key`'s choices in `kind`, if it has that key.
fn choices(kind: ModelKind, key: &str) -> Option<&'static [&'static str]> {
    kind.params().find(|spec| spec.key == key).and_then(|spec| match spec.kind {
        ParamKind::Choice(names) | ParamKind::ChoiceList(names) => Some(names),
        ParamKind::Count { .. }
        | ParamKind::Real { .. }
        | ParamKind::Duration
        | ParamKind::Text { .. }
        | ParamKind::List { .. } => None,
    })
}

fn model_section(text: &mut String, kind: ModelKind) {
    let _ = writeln!(text, "\n  {}  {}", kind.name(), kind.about());
    if let Some(names) = choices(kind, "strategy") {
        let (formulas, presets): (Vec<&str>, Vec<&str>) = names.iter().partition(|name| Strategy::NAMES.contains(name));
        let strategies =
            if formulas.len() == Strategy::NAMES.len() { "every strategy".to_owned() } else { formulas.join(", ") };
        let presets = if presets.is_empty() { "none".to_owned() } else { presets.join(", ") };
        let _ = writeln!(text, "    strategy: {strategies}; presets: {presets}");
    }
    let limiters = choices(kind, "limiter")
        .map_or("none (this model simulates no retry limiter)".to_owned(), |names| names.join(", "));
    let _ = writeln!(text, "    limiter: {limiters}");
    let knob_keys = LimiterKind::KNOB_KEYS;
    let width = kind.params().map(|spec| spec.key.len()).max().unwrap_or(0);
    for section in Section::ALL {
        let specs: Vec<&ParamSpec> =
            kind.params().filter(|spec| spec.section == section && !knob_keys.contains(&spec.key)).collect();
        if specs.is_empty() {
            continue;
        }
        let _ = writeln!(text, "    [{}]", section.name());
        for spec in specs {
            let former = spec.formerly.map_or_else(String::new, |(s, key)| format!(" (formerly {}.{key})", s.name()));
            let _ = writeln!(text, "      {:width$}  {}{}{former}", spec.key, spec.help, default_note(spec));
        }
    }
    if kind.params().any(|spec| knob_keys.contains(&spec.key)) {
        let _ = writeln!(text, "      and the limiters' knobs: {}", knob_keys.join(", "));
    }
    if let Some(table) = kind.part_table() {
        let _ = writeln!(
            text,
            "    [{}.NAME] tables: `{}` and their own {}",
            table.table,
            table.link_key,
            table.overridable.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_is_listed_with_its_parameters_and_source() {
        let text = listing();
        for preset in presets::ALL {
            let line = text.lines().find(|line| line.trim_start().starts_with(&format!("{} ", preset.name)));
            let line = line.unwrap_or_else(|| panic!("{} is not listed", preset.name));
            let limiter = preset.limiter.map_or("none", LimiterKind::name);
            assert!(line.contains(preset.strategy.name()) && line.contains(limiter), "{line}");
            assert!(text.contains(preset.source), "{}", preset.name);
        }
        let tcp = text.lines().find(|line| line.trim_start().starts_with("tcp-rfc6298 ")).unwrap();
        assert!(
            tcp.ends_with(
                "exponential-from-base, b = 1s, c = 120s, m = 2; 16 attempts; limiter none; Retry-After \
                               honour"
            ),
            "{tcp}"
        );
    }

    #[test]
    fn every_limiter_is_listed_with_its_knobs_and_defaults() {
        let text = listing();
        for &kind in LimiterKind::ALL {
            assert!(text.contains(kind.about()) && text.contains(kind.source()), "{kind}");
        }
        assert!(text.contains("knobs: max_tokens (default 10), token_ratio (default 0.1)"), "{text}");
    }

    /// Each model's lines say exactly what its parameters accept: the lists come from the same specs the
    /// scenario reader checks values against.
    #[test]
    fn each_model_lists_what_it_accepts() {
        let text = listing();
        let block = |kind: ModelKind| {
            let start = text.find(&format!("\n  {}  ", kind.name())).unwrap();
            let end = text[start + 1..].find("\n  \n").map_or(text.len(), |e| start + 1 + e);
            text[start..end].to_owned()
        };
        let occ = block(ModelKind::Occ);
        let presets = "presets: botocore-legacy, urllib3, google-api-core, k8s-crashloop, k8s-crashloop-reduced, \
                       client-go-retry, client-go-backoff, tcp-rfc6298\n";
        assert!(occ.contains(presets), "the presets without a limiter: {occ}");
        assert!(occ.contains("limiter: none (this model simulates no retry limiter)"), "{occ}");
        let layers = block(ModelKind::Layers);
        assert!(layers.contains("max_attempts") && layers.contains("(formerly model.attempts)"), "{layers}");
        let limiter_line = layers.lines().find(|line| line.trim_start().starts_with("limiter:")).unwrap();
        assert!(limiter_line.contains("envoy") && !limiter_line.contains("systemd"), "{limiter_line}");
        let server = block(ModelKind::Server);
        assert!(server.lines().any(|line| line.trim_start().starts_with("limiter:") && line.contains("systemd")));
        let channel = block(ModelKind::Channel);
        assert!(channel.contains("strategy: every strategy; presets: none"), "{channel}");
    }
}
