//! `retrylab delays`: what a strategy or preset sleeps before each retry, sampled without a simulation.
//!
//! The policy is read exactly as a scenario's `[client]` table is (the server model's vocabulary, so every
//! strategy and preset is accepted and `--set` is checked like a scenario's values); then `samples` independent
//! operations each draw the sleeps before retries n = 1, 2, …, R from one seeded stream, so the output is a
//! function of the arguments alone. Only the backoff is sampled: no attempt takes time, no limiter refuses, no
//! deadline ends the retrying, and no Retry-After hint replaces a sleep.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::engine::sim_rng;
use crate::error::{InputError, Origin};
use crate::model::client::{BACKOFF_KEYS, StrategyChoice, retry_policy};
use crate::policy::{BackoffMemory, FailureKind, RetryPolicy, Strategy, presets};
use crate::report::terminal::{View, wrap};
use crate::scenario::{Scenario, plan, point_of};

/// What the error messages call the command's own input.
const SOURCE_NAME: &str = "retrylab delays";
/// Retries shown for a policy that never stops retrying, unless `--retries` says otherwise.
const RETRIES_WHEN_UNLIMITED: u32 = 10;
/// At most this many retries per operation.
pub const MAX_RETRIES: u32 = 1_000;
/// At most this many sampled operations.
pub const MAX_SAMPLES: u32 = 10_000_000;
/// At most this many sleeps in all (retries × samples), about 400 MB of samples.
const MAX_DRAWS: u64 = 50_000_000;

/// Options of `retrylab delays`.
#[derive(Clone, Debug)]
pub struct DelaysOptions {
    /// A strategy or a preset, as `strategy` in `[client]` takes it.
    pub policy: String,
    /// `KEY=VALUE` settings of the backoff keys, applied in order.
    pub set: Vec<String>,
    /// Sample retries 1..=R, ignoring `max_attempts` (default: every retry `max_attempts` allows).
    pub retries: Option<u32>,
    /// Independent operations sampled.
    pub samples: u32,
    pub seed: u64,
    /// The kind of failure each retry follows (the sleep depends on it for some SDKs).
    pub error: FailureKind,
    pub format: DelaysFormat,
}

/// How `retrylab delays` writes its table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DelaysFormat {
    /// An aligned table for people.
    Table,
    /// `retry,mean_ms,p10_ms,p50_ms,p90_ms,min_ms,max_ms,at_mean_ms`.
    Csv,
    /// Every sample: `retry,sleep_ms`, retry-major, for statistical comparisons.
    Raw,
}

/// The summary of the sleeps before one retry over every sampled operation, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct RetryDelays {
    pub(crate) retry: u32,
    pub(crate) mean_ms: f64,
    pub(crate) p10_ms: f64,
    pub(crate) p50_ms: f64,
    pub(crate) p90_ms: f64,
    pub(crate) min_ms: f64,
    pub(crate) max_ms: f64,
    /// The mean time from the first attempt to this retry, counting sleeps only.
    pub(crate) at_mean_ms: f64,
}

/// `retrylab delays`.
pub fn delays(options: &DelaysOptions, stdout: &mut dyn Write) -> Result<(), Error> {
    let policy = policy_of(&options.policy, &options.set)?;
    let retries = retry_count(&policy, options)?;
    let sleeps = sample(&policy, retries, options.samples, options.seed, options.error);
    let mut text = String::new();
    match options.format {
        DelaysFormat::Raw => {
            text.push_str("retry,sleep_ms\n");
            for (index, column) in sleeps.iter().enumerate() {
                for sleep in column {
                    text.push_str(&format!("{},{}\n", index + 1, sleep));
                }
            }
        }
        DelaysFormat::Csv => {
            text.push_str("retry,mean_ms,p10_ms,p50_ms,p90_ms,min_ms,max_ms,at_mean_ms\n");
            for row in summarise(sleeps) {
                text.push_str(&format!(
                    "{},{},{},{},{},{},{},{}\n",
                    row.retry, row.mean_ms, row.p10_ms, row.p50_ms, row.p90_ms, row.min_ms, row.max_ms, row.at_mean_ms
                ));
            }
        }
        DelaysFormat::Table => {
            let width = View::for_stdout().width;
            text = table(&options.policy, &policy, options, summarise(sleeps), width);
        }
    }
    stdout.write_all(text.as_bytes()).map_err(|source| Error::Write { path: PathBuf::from("<stdout>"), source })
}

/// Reads `name` and the `--set` values as a scenario's `[client]` table would be read.
fn policy_of(name: &str, set: &[String]) -> Result<RetryPolicy, Error> {
    let bad = |key: &str, message: String| InputError::new(SOURCE_NAME, Origin::Default, Some(key.to_owned()), message);
    if StrategyChoice::from_name(name).is_none() {
        let names: Vec<&str> = Strategy::NAMES.iter().chain(presets::NAMES).copied().collect();
        let message = format!("\"{name}\" is neither a strategy nor a preset; valid: {}", names.join(", "));
        return Err(bad("STRATEGY", message).into());
    }
    for argument in set {
        let key = argument.split_once('=').map_or(argument.as_str(), |(key, _)| key).trim();
        if !BACKOFF_KEYS.contains(&key.strip_prefix("client.").unwrap_or(key)) {
            let origin = Origin::CommandLine(argument.clone());
            let message = format!("not a backoff key; delays takes {}", BACKOFF_KEYS.join(", "));
            return Err(InputError::new(SOURCE_NAME, origin, Some(key.to_owned()), message).into());
        }
    }
    // One client, so that even a preset whose limiter counts the starts of one process is accepted.
    let source = format!(
        "schema_version = 1\nname = \"delays\"\n[model]\nkind = \"server\"\n[workload]\nkind = \"burst\"\n\
         clients = 1\n[client]\nstrategy = \"{name}\"\n"
    );
    let scenario = Scenario::with_overrides(Path::new(SOURCE_NAME), source, set)?;
    plan(&scenario)?;
    let point = point_of(&scenario, &[]);
    let (policy, _) = retry_policy(&point).map_err(|problem| bad(problem.key, problem.message))?;
    Ok(policy)
}

/// The retries to sample: `--retries`, else every retry `max_attempts` allows, held to the same 1..=MAX_RETRIES
/// as `--retries` (a larger `max_attempts` is refused, naming the `--set` that gave it).
fn retry_count(policy: &RetryPolicy, options: &DelaysOptions) -> Result<u32, Error> {
    let retries = match (options.retries, policy.max_attempts) {
        (Some(retries), _) => retries,
        (None, Some(attempts)) => attempts - 1,
        (None, None) => RETRIES_WHEN_UNLIMITED,
    };
    if retries > MAX_RETRIES {
        let key = |argument: &String| {
            let key = argument.split_once('=').map_or(argument.as_str(), |(key, _)| key).trim();
            key.strip_prefix("client.").unwrap_or(key) == "max_attempts"
        };
        let origin = options.set.iter().rev().find(|argument| key(argument)).cloned();
        let message = format!(
            "{} attempts is {retries} retries, and delays samples at most {MAX_RETRIES} (as --retries takes \
             1..={MAX_RETRIES}); give max_attempts at most {}, or pass --retries N to sample the first N",
            retries + 1,
            MAX_RETRIES + 1
        );
        let origin = origin.map_or(Origin::Default, Origin::CommandLine);
        return Err(InputError::new(SOURCE_NAME, origin, Some("client.max_attempts".into()), message).into());
    }
    if u64::from(retries) * u64::from(options.samples) > MAX_DRAWS {
        return Err(Error::Usage(format!(
            "{retries} retries × {} samples is more than {MAX_DRAWS} draws; ask for fewer of either",
            options.samples
        )));
    }
    if retries == 0 {
        return Err(Error::Usage(format!(
            "{} never retries (max_attempts = 1); pass --retries N to sample its sleeps anyway",
            options.policy
        )));
    }
    Ok(retries)
}

/// The sleeps in milliseconds, one column per retry (`columns[n − 1]` holds retry n), one row per operation.
pub(crate) fn sample(policy: &RetryPolicy, retries: u32, samples: u32, seed: u64, kind: FailureKind) -> Vec<Vec<f64>> {
    let mut rng = sim_rng(seed);
    let mut columns: Vec<Vec<f64>> = (0..retries).map(|_| Vec::with_capacity(samples as usize)).collect();
    for _ in 0..samples {
        let mut memory = BackoffMemory::default();
        for (index, column) in columns.iter_mut().enumerate() {
            let sleep = policy.sleep_before(index as u32 + 1, kind, &mut memory, &mut rng);
            column.push(sleep.as_millis_f64());
        }
    }
    columns
}

/// Per retry: the mean, the p10, p50 and p90 (nearest rank), the extremes, and the mean time since the first
/// attempt (the sum of the mean sleeps so far).
pub(crate) fn summarise(columns: Vec<Vec<f64>>) -> Vec<RetryDelays> {
    let mut at_mean_ms = 0.0;
    columns
        .into_iter()
        .enumerate()
        .map(|(index, mut column)| {
            column.sort_by(f64::total_cmp);
            let count = column.len();
            let rank = |q: f64| column[((q * count as f64).ceil() as usize).clamp(1, count) - 1];
            let mean_ms = column.iter().sum::<f64>() / count as f64;
            at_mean_ms += mean_ms;
            RetryDelays {
                retry: index as u32 + 1,
                mean_ms,
                p10_ms: rank(0.1),
                p50_ms: rank(0.5),
                p90_ms: rank(0.9),
                min_ms: column[0],
                max_ms: column[count - 1],
                at_mean_ms,
            }
        })
        .collect()
}

/// A number of milliseconds as people read it: `0`, `12.5 ms`, `1.25 s`, `5 min`.
fn readable(ms: f64) -> String {
    let trimmed = |value: f64| {
        let text = format!("{value:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    };
    match ms {
        0.0 => "0".into(),
        ms if ms < 1_000.0 => format!("{} ms", trimmed(ms)),
        ms if ms < 120_000.0 => format!("{} s", trimmed(ms / 1_000.0)),
        ms if ms < 7_200_000.0 => format!("{} min", trimmed(ms / 60_000.0)),
        ms => format!("{} h", trimmed(ms / 3_600_000.0)),
    }
}

/// The table's columns, and the order in which they are left out when the table is wider than the terminal: the
/// extremes first, then the outer percentiles, then the running total; `retry` and `mean` always stay.
const HEADER: [&str; 8] = ["retry", "mean", "p10", "p50", "p90", "min", "max", "since first try"];
const LEFT_OUT_FIRST: [usize; 6] = [5, 6, 2, 4, 7, 3];

/// The table for people, every line at most `width` columns (the policy wraps; columns that do not fit are left
/// out, and a line says which).
fn table(name: &str, policy: &RetryPolicy, options: &DelaysOptions, rows: Vec<RetryDelays>, width: usize) -> String {
    let error = match options.error {
        FailureKind::Transient => "after transient errors",
        FailureKind::Throttling => "after throttling errors",
    };
    let mut lines = wrap(&format!("{name}: {policy}"), width, 4);
    lines.extend(wrap(
        &format!("sleep before retry n, {error}; {} operations, seed {}", options.samples, options.seed),
        width,
        4,
    ));
    lines.push(String::new());
    let cells: Vec<[String; 8]> = rows
        .iter()
        .map(|row| {
            [
                row.retry.to_string(),
                readable(row.mean_ms),
                readable(row.p10_ms),
                readable(row.p50_ms),
                readable(row.p90_ms),
                readable(row.min_ms),
                readable(row.max_ms),
                readable(row.at_mean_ms),
            ]
        })
        .collect();
    let widths: Vec<usize> = (0..HEADER.len())
        .map(|column| {
            cells.iter().map(|row| row[column].chars().count()).chain([HEADER[column].len()]).max().unwrap_or(0)
        })
        .collect();
    let mut shown: Vec<usize> = (0..HEADER.len()).collect();
    let total = |shown: &[usize]| shown.iter().map(|&c| widths[c]).sum::<usize>() + 2 * (shown.len() - 1);
    let mut left_out = Vec::new();
    for column in LEFT_OUT_FIRST {
        if total(&shown) <= width {
            break;
        }
        shown.retain(|&c| c != column);
        left_out.push(HEADER[column]);
    }
    let line = |values: &dyn Fn(usize) -> String| {
        let padded: Vec<String> = shown.iter().map(|&c| format!("{:>w$}", values(c), w = widths[c])).collect();
        padded.join("  ").trim_end().to_owned()
    };
    lines.push(line(&|c| HEADER[c].to_owned()));
    for row in &cells {
        lines.push(line(&|c| row[c].clone()));
    }
    if !left_out.is_empty() {
        lines.push(String::new());
        let note = format!("({} left out to fit {width} columns; --csv has every column)", left_out.join(", "));
        lines.extend(wrap(&note, width, 1));
    }
    if policy.throttling_base.is_some() && options.error == FailureKind::Transient {
        lines.push(String::new());
        lines.extend(wrap("(after throttling errors the base differs: --error throttling)", width, 1));
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(policy: &str, set: &[&str]) -> DelaysOptions {
        DelaysOptions {
            policy: policy.into(),
            set: set.iter().map(|s| s.to_string()).collect(),
            retries: None,
            samples: 20_000,
            seed: 1,
            error: FailureKind::Transient,
            format: DelaysFormat::Csv,
        }
    }

    fn rows(options: &DelaysOptions) -> Vec<RetryDelays> {
        let policy = policy_of(&options.policy, &options.set).unwrap();
        let retries = retry_count(&policy, options).unwrap();
        summarise(sample(&policy, retries, options.samples, options.seed, options.error))
    }

    #[test]
    fn a_deterministic_schedule_is_exact_and_accumulates() {
        let rows = rows(&options("exponential-from-base", &["base=10ms", "cap=1s", "client.max_attempts=5"]));
        let sleeps: Vec<f64> = rows.iter().map(|row| row.p50_ms).collect();
        assert_eq!(sleeps, [10.0, 20.0, 40.0, 80.0]);
        assert!(rows.iter().all(|row| row.min_ms == row.max_ms && row.mean_ms == row.p50_ms));
        assert_eq!(rows.iter().map(|row| row.at_mean_ms).collect::<Vec<_>>(), [10.0, 30.0, 70.0, 150.0]);
    }

    #[test]
    fn full_jitter_is_uniform_over_its_window_within_the_sampling_error() {
        let mut full = options("full-jitter", &["base=100ms", "cap=10s", "max_attempts=4"]);
        full.samples = 40_000;
        for row in rows(&full) {
            let window = 100.0 * 2f64.powi(row.retry as i32);
            // U(0, w): mean w/2 with sd w/√12; 5 standard errors of the mean.
            let tolerance = 5.0 * window / 12f64.sqrt() / (full.samples as f64).sqrt();
            assert!((row.mean_ms - window / 2.0).abs() < tolerance, "{row:?}");
            assert!((row.p90_ms - 0.9 * window).abs() < 0.02 * window, "{row:?}");
            assert!(row.min_ms >= 0.0 && row.max_ms <= window, "{row:?}");
        }
    }

    #[test]
    fn every_strategy_and_preset_can_be_sampled() {
        for name in Strategy::NAMES.iter().chain(presets::NAMES) {
            let policy = policy_of(name, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            for kind in [FailureKind::Transient, FailureKind::Throttling] {
                for column in sample(&policy, 12, 200, 2, kind) {
                    assert!(column.iter().all(|&ms| ms.is_finite() && ms >= 0.0), "{name}");
                }
            }
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_samples_and_another_seed_others() {
        let policy = policy_of("decorrelated-jitter", &[]).unwrap();
        let a = sample(&policy, 3, 100, 7, FailureKind::Transient);
        assert_eq!(a, sample(&policy, 3, 100, 7, FailureKind::Transient));
        assert_ne!(a, sample(&policy, 3, 100, 8, FailureKind::Transient));
    }

    #[test]
    fn retries_overrides_max_attempts_and_a_policy_without_retries_is_refused() {
        let mut three = options("exponential", &["max_attempts=1"]);
        assert!(matches!(retry_count(&policy_of("exponential", &three.set).unwrap(), &three), Err(Error::Usage(_))));
        three.retries = Some(3);
        assert_eq!(rows(&three).len(), 3);
        assert_eq!(rows(&options("k8s-crashloop", &[])).len() as u32, RETRIES_WHEN_UNLIMITED);
    }

    #[test]
    fn max_attempts_is_held_to_the_retries_cap_and_the_refusal_names_its_argument() {
        let most = options("full-jitter", &["max_attempts=1001"]);
        assert_eq!(retry_count(&policy_of("full-jitter", &most.set).unwrap(), &most).unwrap(), MAX_RETRIES);
        let over = options("full-jitter", &["base=5ms", "client.max_attempts=1002"]);
        let error = retry_count(&policy_of("full-jitter", &over.set).unwrap(), &over).unwrap_err();
        assert!(matches!(error, Error::Input(_)), "{error:?}");
        let message = error.to_string();
        assert!(
            message.starts_with("retrylab delays: --set client.max_attempts=1002: client.max_attempts:"),
            "{message}"
        );
        assert!(message.contains("1001 retries") && message.contains("1..=1000"), "{message}");
        let mut capped = over.clone();
        capped.retries = Some(3);
        assert_eq!(retry_count(&policy_of("full-jitter", &capped.set).unwrap(), &capped).unwrap(), 3);
    }

    #[test]
    fn the_table_keeps_to_its_width_leaving_out_the_extremes_first() {
        let options = options("full-jitter", &["base=100ms", "cap=10s", "max_attempts=8"]);
        let policy = policy_of(&options.policy, &options.set).unwrap();
        let wide = table("full-jitter", &policy, &options, rows(&options), 200);
        assert!(wide.contains("since first try") && !wide.contains("left out"), "{wide}");
        for width in [20, 40, 60] {
            let text = table("full-jitter", &policy, &options, rows(&options), width);
            assert!(text.lines().all(|line| line.chars().count() <= width), "{width}:\n{text}");
            let header = text.lines().find(|line| line.trim_start().starts_with("retry")).unwrap();
            assert!(header.contains("mean") && !header.contains("min"), "{width}:\n{text}");
            let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
            assert!(words.contains("(min, max") && words.contains("--csv has every column"), "{width}:\n{text}");
        }
    }

    #[test]
    fn bad_names_keys_and_values_are_located() {
        let error = |name: &str, set: &[&str]| policy_of(name, &options(name, set).set).unwrap_err().to_string();
        let unknown = error("ful-jitter", &[]);
        assert!(unknown.starts_with("retrylab delays: STRATEGY: \"ful-jitter\" is neither"), "{unknown}");
        assert!(unknown.contains("full-jitter") && unknown.contains("aws-sdk-standard"), "{unknown}");
        let key = error("full-jitter", &["clients=5"]);
        assert!(key.starts_with("retrylab delays: --set clients=5: clients: not a backoff key"), "{key}");
        let value = error("full-jitter", &["cap=soon"]);
        assert!(
            value.starts_with("retrylab delays: --set cap=soon: client.cap: \"soon\" is not a duration"),
            "{value}"
        );
        let order = error("full-jitter", &["base=2s", "cap=1s"]);
        assert!(order.contains("client.cap") && order.contains("at least base"), "{order}");
    }
}
