//! manifest.json: what produced a results folder, so it can be checked and reproduced.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::scenario::{PlannedPoint, Scenario};

#[derive(Serialize)]
pub struct Manifest {
    pub retrylab_version: &'static str,
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
}

#[derive(Serialize)]
pub struct ScenarioInfo {
    pub name: String,
    pub path: String,
    pub sha256: String,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

impl Manifest {
    pub fn new(
        scenario: &Scenario,
        points: &[PlannedPoint],
        threads: usize,
        aggregate: &super::Aggregate,
        elapsed_s: f64,
    ) -> Self {
        Manifest {
            retrylab_version: env!("CARGO_PKG_VERSION"),
            scenario: ScenarioInfo {
                name: scenario.name.clone(),
                path: scenario.display_path(),
                sha256: sha256_hex(scenario.source.as_bytes()),
            },
            model: scenario.model.name(),
            master_seed: scenario.seed,
            replicates: scenario.replicates,
            threads,
            points: points.len(),
            point_ids: points.iter().map(PlannedPoint::id).collect(),
            swept: scenario.sweep.iter().map(|axis| axis.spec.key).collect(),
            timeline_bucket: scenario.timeline_bucket.to_string(),
            events: aggregate.events,
            max_events_per_run: scenario.max_events_per_run,
            truncated_runs: aggregate.truncated_runs,
            elapsed_s,
            command_line: std::env::args().collect(),
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
