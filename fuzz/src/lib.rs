//! What the fuzz targets share: `retrylab validate`'s path from a parsed scenario to its plan, with the sweep
//! bounded so that one input cannot spend seconds planning.

use retrylab::scenario::{MAX_POINTS, Scenario};

/// Sweeps with more points than this (but not more than the planner's own limit) are not planned here: planning
/// is linear in the points, so a larger sweep only makes an input slower, not different. Above [`MAX_POINTS`] the
/// planner refuses the sweep at once, and that refusal is fuzzed.
pub const FUZZ_MAX_POINTS: usize = 512;

/// Plans `scenario` and prints its memory estimate, as `retrylab validate` does; an error is a fine answer, a
/// panic is a finding.
pub fn validate(scenario: &Scenario) {
    let count = scenario.point_count();
    if count > FUZZ_MAX_POINTS && count <= MAX_POINTS {
        return;
    }
    let _ = retrylab::commands::validate_scenario(scenario, &mut std::io::sink());
}
