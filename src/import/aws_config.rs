//! AWS shared config file (`~/.aws/config`): a profile's `retry_mode` and `max_attempts`.
//! Source: AWS SDKs and Tools Reference Guide, "Retry behavior" (settings `retry_mode`, `max_attempts`); the
//! behaviour of each mode is the lab's presets, checked against botocore and @smithy (docs/strategies.md).
//!
//! `max_attempts` counts every attempt, the first included. Only the retry keys are read; a key that looks like a
//! misspelt one (`retry-mode`, `max_retries`) is refused rather than silently left at its default.

use super::{Ask, Format, Imported, Input, Problem, choose};
use crate::error::LineCol;

pub(super) const FORMAT: Format = Format {
    name: "aws-config",
    about: "AWS shared config file (~/.aws/config): a profile's retry_mode and max_attempts",
    entry: "profile",
    detect,
    near_miss: Some(near_miss),
    translate,
    consumers: &[],
    readings: &[],
};

/// Each mode as the lab's preset, with why, and the presets of the SDKs that since 2026 run it from a 50 ms base
/// (botocore 1.44.8 and @smithy/util-retry 4.6.2, checked against both by scripts/real-clients and real-imports).
const MODES: &[(&str, &str, &str, &str)] = &[
    ("standard", "aws-sdk-standard", "standard mode as the SDKs reference guide gives it", "\"botocore-standard\" or \"aws-sdk-js-v3\""),
    ("adaptive", "aws-sdk-adaptive", "adaptive mode: standard plus the client-side rate limiter", "\"botocore-adaptive\""),
    ("legacy", "botocore-legacy", "legacy mode as botocore runs it (each SDK had its own)", ""),
];
/// The most attempts a profile may ask for: beyond this the lab's sweep would be a typo's, not a policy's.
const MAX_ATTEMPTS_LIMIT: i64 = 1000;

/// One `[section]` of the file: its profile name and its `key = value` lines with their positions.
struct Section {
    profile: String,
    keys: Vec<(String, String, LineCol)>,
}

/// A file with profile sections that cannot be read (a profile given twice, a broken header): the reason.
fn near_miss(input: &Input<'_>) -> Option<Problem> {
    let profiles = input.text.lines().map(str::trim).any(|line| line.starts_with("[profile ") || line == "[default]");
    profiles.then(|| sections(input.text).err()).flatten()
}

fn sections(text: &str) -> Result<Vec<Section>, Problem> {
    let mut sections: Vec<Section> = Vec::new();
    let mut in_profile = false;
    for (number, line) in text.lines().enumerate() {
        let at = |column: usize| LineCol { line: number + 1, column };
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(header) = trimmed.strip_prefix('[') {
            let name = header.strip_suffix(']').ok_or_else(|| {
                Problem::new(Some(at(1)), "", "a section header must end with `]`, like [profile prod]")
            })?;
            let name = name.trim();
            let profile = match name.strip_prefix("profile ") {
                Some(profile) => Some(profile.trim()),
                None if name == "default" => Some("default"),
                None => None,
            };
            in_profile = profile.is_some();
            if let Some(profile) = profile {
                if sections.iter().any(|section| section.profile == profile) {
                    let message = format!(
                        "[{name}] is a second section for profile {profile:?}; botocore's parser refuses the whole \
                         file (a duplicate section): merge the two"
                    );
                    return Err(Problem::new(Some(at(1)), "", message));
                }
                sections.push(Section { profile: profile.to_owned(), keys: Vec::new() });
            }
            continue;
        }
        // Indented lines under an empty value are a service's sub-settings (`s3 =` then `  max_concurrent_requests`).
        if line.starts_with([' ', '\t']) || !in_profile {
            continue;
        }
        let (key, value) = trimmed.split_once('=').ok_or_else(|| {
            Problem::new(Some(at(1)), "", format!("expected `key = value`, found {trimmed:?}"))
        })?;
        let column = line.len() - line.trim_start().len() + 1;
        if let Some(section) = sections.last_mut() {
            section.keys.push((key.trim().to_owned(), value.trim().to_owned(), at(column)));
        }
    }
    Ok(sections)
}

fn detect(input: &Input<'_>) -> bool {
    sections(input.text).is_ok_and(|sections| {
        sections.iter().any(|section| section.keys.iter().any(|(key, _, _)| key == "retry_mode" || key == "max_attempts"))
    })
}

fn translate(input: &Input<'_>, ask: &Ask<'_>) -> Result<Imported, Problem> {
    let sections = sections(input.text)?;
    let entries: Vec<(String, &Section)> =
        sections.iter().map(|section| (section.profile.clone(), section)).collect();
    let (name, section) = choose(&entries, ask.choice, "profile")?;
    let mut imported = Imported { entry: Some(name.clone()), ..Imported::default() };
    let field = |key: &str| format!("[{}] {key}", if name == "default" { "default".to_owned() } else { format!("profile {name}") });
    for (key, _, at) in &section.keys {
        let lowered = key.to_ascii_lowercase();
        let retryish = lowered.contains("retr") || lowered.contains("attempt");
        if retryish && key != "retry_mode" && key != "max_attempts" {
            let message = format!("unknown retry setting `{key}`; the AWS config file's are retry_mode and max_attempts");
            return Err(Problem::new(Some(*at), &field(key), message));
        }
    }
    let find = |key: &str| section.keys.iter().find(|(k, _, _)| k == key);
    let (mode, mode_from) = match find("retry_mode") {
        Some((_, value, at)) => {
            let Some(mode) = MODES.iter().find(|(name, ..)| name == value) else {
                let valid: Vec<&str> = MODES.iter().map(|(name, ..)| *name).collect();
                let message = format!("{value:?} is not a retry mode; valid: {}", valid.join(", "));
                return Err(Problem::new(Some(*at), &field("retry_mode"), message));
            };
            (mode, format!("{} = {value}", field("retry_mode")))
        }
        None => {
            imported.warn(
                None,
                &field("retry_mode"),
                "unset: each SDK picks its own default mode (standard in the current reference guide; legacy in \
                 older botocore and SDKs); standard is assumed, set it to be sure",
            );
            (&MODES[0], format!("{} unset: standard assumed", field("retry_mode")))
        }
    };
    imported.set("strategy", mode.1, format!("{mode_from}: {}", mode.2));
    if mode.0 != "legacy" {
        // botocore 1.44.8 builds the quota (and adaptive mode's rate limiter) in register_retry_handler(client),
        // once per client object (retries/standard.py, adaptive.py); the SDKs reference guide keeps it per client.
        imported.set("limiter_scope", "client", "the SDKs keep the retry quota per client object: one per client");
    }
    if !mode.3.is_empty() {
        let message = format!(
            "since 2026 botocore and the JavaScript SDK retry from a 50 ms base with a dearer quota; for them use \
             strategy = {} (docs/strategies.md)",
            mode.3
        );
        imported.warn(None, &field("retry_mode"), &message);
    }
    if let Some((_, value, at)) = find("max_attempts") {
        let attempts: i64 = value.parse().map_err(|_| {
            Problem::new(Some(*at), &field("max_attempts"), format!("{value:?} is not a whole number of attempts"))
        })?;
        if !(1..=MAX_ATTEMPTS_LIMIT).contains(&attempts) {
            let message = format!("{attempts} is outside 1 to {MAX_ATTEMPTS_LIMIT} attempts");
            return Err(Problem::new(Some(*at), &field("max_attempts"), message));
        }
        imported.set(
            "max_attempts",
            attempts,
            format!("{} = {value}: every attempt, the first included", field("max_attempts")),
        );
    }
    Ok(imported)
}
