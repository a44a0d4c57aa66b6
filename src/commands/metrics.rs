//! `retrylab metrics [MODEL]`: the metrics reference, generated from the models' metric and series tables (name,
//! unit, meaning, how replicates are summarised), as text or, with `--markdown`, as the page docs/metrics.md is.

use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

use crate::Error;
use crate::model::{ModelKind, Unit};

/// How summary.csv summarises a metric over a point's replicates, by unit.
fn aggregation(unit: Unit) -> &'static str {
    match unit {
        Unit::Outcome => "share of runs; Wilson interval",
        Unit::Fraction => "mean; t interval within 0 to 1",
        Unit::Count | Unit::PerRequest | Unit::Milliseconds | Unit::PerSecond | Unit::Ratio => {
            "mean; t interval from 0"
        }
        Unit::PerSlot => "mean; t interval",
    }
}

/// `retrylab metrics`: every model's metrics, or one model's.
pub fn metrics(model: Option<&str>, markdown: bool, stdout: &mut dyn Write) -> Result<(), Error> {
    let models = match model {
        None => ModelKind::ALL.to_vec(),
        Some(name) => vec![ModelKind::from_name(name).ok_or_else(|| {
            Error::Usage(format!("unknown model \"{name}\"; the models are {}", ModelKind::NAMES.join(", ")))
        })?],
    };
    let text = if markdown { markdown_page(&models) } else { plain(&models) };
    stdout.write_all(text.as_bytes()).map_err(|source| Error::Write { path: PathBuf::from("<stdout>"), source })
}

fn plain(models: &[ModelKind]) -> String {
    let mut text = String::new();
    text.push_str(
        "runs.csv holds one value per run; summary.csv M_mean, M_sd, M_ci95 and the 95% interval's ends M_lo95 and\n\
         M_hi95 per point, over its replicates (an outcome's mean is the share of runs where it happened, its interval\n\
         Wilson's). A metric no run of a study could fill is left out.\n",
    );
    for &model in models {
        let _ = writeln!(text, "\n{} ({})", model.name(), model.about());
        let width = model.metrics().iter().map(|m| m.name.len()).chain(model.timeline_series().iter().map(|s| s.len()));
        let width = width.max().unwrap_or(0);
        for metric in model.metrics() {
            let former = metric.formerly.map_or_else(String::new, |old| format!(" (formerly {old})"));
            let _ = writeln!(text, "  {:width$}  {:21}  {}{former}", metric.name, metric.unit.label(), metric.help);
        }
        text.push_str("  timeline.csv, per bucket:\n");
        for (series, help) in model.timeline_series().iter().zip(model.timeline_help()) {
            let _ = writeln!(text, "  {series:width$}  {:21}  {help}", "count");
        }
    }
    text
}

fn markdown_page(models: &[ModelKind]) -> String {
    let mut text = String::from(
        "# Metrics\n\n\
         What every column of a results folder means, model by model. [Back to the index](README.md).\n\n\
         This page is generated from the models' metric tables by `retrylab metrics --markdown` (a test checks that\n\
         it matches); `retrylab metrics MODEL` prints one model's in the terminal.\n\n\
         - **runs.csv** holds one value per run (one replicate of one sweep point).\n\
         - **summary.csv** holds, per point, `M_mean`, `M_sd`, `M_ci95`, `M_lo95` and `M_hi95` of each metric `M`\n  \
           over the point's replicates: the mean, the sample standard deviation, the half-width of the 95%\n  \
           confidence interval of the mean (Student's t), and that interval's ends kept inside the metric's range:\n  \
           an *outcome* (1 or 0 per run, so its mean is the share of runs where it happened) gets the Wilson score\n  \
           interval; any other metric the t interval cut at its bounds (0 to 1 for a fraction, 0 and up otherwise).\n\
         - A metric no run of a study could fill (the ledger of a service the graph does not have, recovery in a\n  \
           workload with nothing to recover from) is left out of both files; a value a single run could not define\n  \
           (a latency with no success) is an empty cell.\n\
         - **timeline.csv** holds, per point and bucket (`bucket_start_ms`), the mean over replicates of each series.\n  \
           Where a point's replicates disagree on an outcome (some recovered, some not), **timeline_by_outcome.csv**\n  \
           holds one mean per group of replicates (`outcome`, `runs`), and the charts draw the groups.\n\
         - Units: *count*, a number of things in the run; *per request*, divided by the run's user requests;\n  \
           *fraction*, a share from 0 to 1; *ms*; *per second*; *ratio*, a non-negative ratio with no upper bound;\n  \
           *per slot*, a change per slot of either sign (a backlog's slope).\n\
         - **Herds**: where every client starts at once (a burst workload, the OCC model), a run's busiest bucket\n  \
           is its release, so `peak_calls_per_bucket` (which counts it: the load the server meets at once) says\n  \
           little about the policy, and reads higher for full jitter than for exponential backoff, as full jitter's\n  \
           first retries (0 to the base) land in the release's bucket too. Whether retries come in waves is\n  \
           `retry_peak_to_mean` and `retry_dispersion`, counted over retries alone from the first to the last. So\n  \
           the charts of such a scenario lead with those two unless `[charts] metrics` chooses, and its report.html\n  \
           shows the timeline first, then them, and leads its table with them; the peak keeps its meaning rather\n  \
           than being measured without the release.\n",
    );
    for &model in models {
        let _ = write!(text, "\n## {}\n\n{}.\n\n", model.name(), capitalised(model.about()));
        text.push_str("| metric | unit | meaning | summarised as |\n|---|---|---|---|\n");
        for metric in model.metrics() {
            let former = metric.formerly.map_or_else(String::new, |old| format!(" (formerly `{old}`)"));
            let _ = writeln!(
                text,
                "| `{}` | {} | {}{former} | {} |",
                metric.name,
                metric.unit.label(),
                metric.help.replace('|', "\\|"),
                aggregation(metric.unit)
            );
        }
        text.push_str("\nTimeline series, per bucket:\n\n");
        for (series, help) in model.timeline_series().iter().zip(model.timeline_help()) {
            let _ = writeln!(text, "- `{series}`: {help}");
        }
    }
    text
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: Option<&str>, markdown: bool) -> Result<String, Error> {
        let mut out = Vec::new();
        metrics(model, markdown, &mut out)?;
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn the_reference_lists_every_metric_and_series_of_every_model_with_its_unit() {
        for &model in ModelKind::ALL {
            let text = run(Some(model.name()), false).unwrap();
            for metric in model.metrics() {
                let line = text.lines().find(|line| line.trim_start().starts_with(&format!("{} ", metric.name)));
                let line = line.unwrap_or_else(|| panic!("{}: {} is not listed", model.name(), metric.name));
                assert!(line.contains(metric.unit.label()) && line.contains(metric.help), "{line}");
            }
            for series in model.timeline_series() {
                assert!(text.lines().any(|line| line.trim_start().starts_with(&format!("{series} "))), "{series}");
            }
        }
        let layers = run(Some("layers"), false).unwrap();
        assert!(layers.contains("per request") && layers.contains("(formerly bottom_calls)"), "{layers}");
        assert!(!layers.contains("\nserver ("), "one model only");
        assert!(matches!(run(Some("nope"), false), Err(Error::Usage(message)) if message.contains("layers")));
    }

    /// docs/metrics.md is this command's output, so the page cannot drift from the metric tables.
    #[test]
    fn docs_metrics_md_is_the_generated_page() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/metrics.md");
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == run(None, true).unwrap(),
            "docs/metrics.md is out of date: regenerate it with `cargo run -- metrics --markdown > docs/metrics.md`"
        );
    }
}
