//! manifest.json: what produced a results folder, so it can be checked, reproduced and read back.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::scenario::{PlannedPoint, Scenario};

/// The layout of the results folders this build writes, recorded in the manifest as `results_format`.
///
/// Compatibility rule: the number changes whenever a file, column or manifest field that `show`, `plot` or
/// `compare` reads changes meaning or goes away (adding files or columns that old readers can ignore does not
/// change it). This build reads every format from 1 to `RESULTS_FORMAT` and refuses newer ones, naming both
/// versions. Format 1 is the layout before the field existed (no `results_format`, no latency.csv, no scenario
/// text or overrides in the manifest); format 2 adds them.
pub const RESULTS_FORMAT: u32 = 2;

#[derive(Serialize)]
pub struct Manifest {
    pub retrylab_version: &'static str,
    pub results_format: u32,
    pub scenario: ScenarioInfo,
    pub model: &'static str,
    pub master_seed: u64,
    pub replicates: u32,
    pub threads: usize,
    pub points: usize,
    pub point_ids: Vec<String>,
    pub swept: Vec<&'static str>,
    pub timeline_bucket: String,
    pub events: u64,
    pub max_events_per_run: u64,
    pub truncated_runs: usize,
    pub elapsed_s: f64,
    pub command_line: Vec<String>,
    /// The number of shards merged into these results; left out for a run on one machine.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_shards: Option<u32>,
    /// Per point, the client policy it ran, presets resolved; left out for models without one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub policies: Vec<String>,
    /// Per point, the model's settings that decide its verdicts, every default resolved (`queue_limit unset:
    /// unlimited (default)`); left out for models without such settings.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// What the results say about themselves beyond their numbers: a backlog still growing when new work stopped
    /// (see `report::warnings`). Empty when there is nothing to say.
    pub warnings: Vec<String>,
    /// Per point, the time spans in ms the over-time charts shade (fault and trigger windows); left out when no
    /// point has any.
    #[serde(skip_serializing_if = "no_spans")]
    pub shaded_ms: Vec<Vec<(f64, f64)>>,
    /// "emulated" for results measured on real sockets (`retrylab emulate`); left out for simulated ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<EmulationInfo>,
}

/// How an emulation ran and what it cost: the server it loaded, its time scale, and its overhead, in scenario
/// time (wall time divided by the scale).
#[derive(Clone, Debug, Serialize)]
pub struct EmulationInfo {
    /// "built-in" (the emulator's own server on loopback) or the `--target` URL.
    pub server: String,
    /// Wall seconds per scenario second.
    pub time_scale: f64,
    /// How late timers (services, backoffs, think times, arrivals, timeouts) woke: mean, median and 99th
    /// percentile.
    pub timer_lag_mean_ms: f64,
    pub timer_lag_p50_ms: f64,
    pub timer_lag_p99_ms: f64,
    /// From a client's send to the server's read of the head: mean and 99th percentile (built-in server only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_mean_ms: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_p99_ms: Option<f64>,
    /// The scenario's mean service time (measured over draws), against which the overhead is judged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_mean_ms: Option<f64>,
    /// The largest share of the mean service time the timer lag's 99th percentile may take (`--max-overhead`),
    /// and the share it took.
    pub overhead_allowed: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overhead_measured: Option<f64>,
    /// The bounds printed before the start: attempts, and wall seconds per run.
    pub max_requests: u64,
    pub max_duration_s: f64,
    /// CPU cores the machine offered.
    pub cores: usize,
    /// Results are written even after Ctrl-C (`--target`: what was measured is kept).
    #[serde(skip)]
    pub keeps_on_signal: bool,
}

fn no_spans(spans: &[Vec<(f64, f64)>]) -> bool {
    spans.iter().all(Vec::is_empty)
}

#[derive(Serialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub path: String,
    pub sha256: String,
    /// The `--set KEY=VALUE` overrides applied to the file, in order.
    pub overrides: Vec<String>,
    /// The scenario file's text, so `retrylab plot` can redraw the charts even after the file changes.
    pub text: String,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Manifest {
    pub fn new(
        scenario: &Scenario,
        points: &[PlannedPoint],
        info: &super::RunInfo,
        aggregate: &super::Aggregate,
    ) -> Self {
        Manifest {
            retrylab_version: env!("CARGO_PKG_VERSION"),
            results_format: RESULTS_FORMAT,
            scenario: ScenarioInfo {
                name: scenario.name.clone(),
                path: scenario.display_path(),
                sha256: sha256_hex(scenario.source.as_bytes()),
                overrides: info.overrides.clone(),
                text: scenario.source.clone(),
            },
            model: scenario.model.name(),
            master_seed: scenario.seed,
            replicates: scenario.replicates,
            threads: info.threads,
            points: points.len(),
            point_ids: points.iter().map(PlannedPoint::id).collect(),
            swept: scenario.sweep.iter().map(|axis| axis.name).collect(),
            timeline_bucket: scenario.timeline_bucket.to_string(),
            events: aggregate.events,
            max_events_per_run: points
                .iter()
                .map(|point| crate::model::event_cap(scenario.max_events_per_run, &point.config))
                .max()
                .unwrap_or(crate::model::DEFAULT_MAX_EVENTS),
            truncated_runs: aggregate.truncated_runs,
            elapsed_s: info.elapsed_s,
            command_line: std::env::args().collect(),
            merged_shards: info.shards,
            shaded_ms: aggregate.highlights.clone(),
            policies: points.iter().filter_map(|point| point.policy.clone()).collect(),
            settings: points.iter().filter_map(|point| point.settings.clone()).collect(),
            warnings: super::backlog_warnings(scenario, points, aggregate),
            mode: info.emulation.as_ref().map(|_| "emulated"),
            emulation: info.emulation.clone(),
        }
    }

    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_matches_the_standard_test_vector() {
        assert_eq!(super::sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
