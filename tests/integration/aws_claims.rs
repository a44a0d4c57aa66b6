//! The published claims of the AWS 2015 study (docs/references.md#the-aws-2015-study), checked on a smaller run of
//! `scenarios/aws-jitter-2015.toml` (clients 50 and 100, 30 replicates). Each comparison must hold beyond the
//! 95% confidence intervals of both sides, not just on the means.

use std::path::Path;

use retrylab::model::ModelKind;
use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::Estimate;
use retrylab::sweep::{SweepSettings, run_sweep};

struct Study {
    scenario: Scenario,
    labels: Vec<(i64, String)>,
    summary: Vec<Vec<Estimate>>,
    timelines: Vec<Vec<f64>>,
}

impl Study {
    fn run() -> Study {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/aws-jitter-2015.toml");
        let overrides = ["sweep.clients=[50, 100]".to_owned(), "replicates=30".to_owned()];
        let scenario = Scenario::load(&path, &overrides).unwrap();
        let points = plan(&scenario).unwrap();
        let settings = SweepSettings::for_scenario(&scenario, None);
        let runs = run_sweep(&points, settings, &|| {}).unwrap();
        let aggregate = aggregate(scenario.model, points.len(), &runs);
        let labels = points
            .iter()
            .map(|p| match (&p.swept[0], &p.swept[1]) {
                (retrylab::params::Value::Count(c), s) => (*c, s.to_string()),
                other => panic!("unexpected sweep layout {other:?}"),
            })
            .collect();
        Study { scenario, labels, summary: aggregate.summary, timelines: aggregate.timelines }
    }

    fn index(&self, clients: i64, strategy: &str) -> usize {
        self.labels.iter().position(|(c, s)| *c == clients && s == strategy).unwrap()
    }

    fn metric(&self, clients: i64, strategy: &str, metric: &str) -> Estimate {
        let m = ModelKind::Occ.metric_index(metric).unwrap();
        self.summary[self.index(clients, strategy)][m]
    }
}

/// `a` is larger than `b` even at the near ends of both 95% intervals.
fn clearly_greater(a: Estimate, b: Estimate) -> bool {
    a.mean - a.ci95 > b.mean + b.ci95
}

#[test]
fn published_claims_hold_beyond_their_confidence_intervals() {
    let study = Study::run();
    let calls = |strategy| study.metric(100, strategy, "calls");
    let time = |strategy| study.metric(100, strategy, "completion_ms");

    // "at 100 clients jitter cut the call count by more than half compared with un-jittered exponential"
    let (full, exponential) = (calls("full-jitter"), calls("exponential"));
    assert!(full.mean + full.ci95 < 0.5 * (exponential.mean - exponential.ci95), "{full:?} vs {exponential:?}");

    // "un-jittered exponential is the clear loser in work and time" (among the backoff strategies)
    for strategy in ["full-jitter", "equal-jitter", "decorrelated-jitter"] {
        assert!(clearly_greater(calls("exponential"), calls(strategy)), "work: exponential vs {strategy}");
    }
    for strategy in ["none", "full-jitter", "equal-jitter", "decorrelated-jitter"] {
        assert!(clearly_greater(time("exponential"), time(strategy)), "time: exponential vs {strategy}");
    }

    // "full and equal jitter do about the same work, decorrelated more"
    let (full, equal) = (calls("full-jitter"), calls("equal-jitter"));
    let gap = (full.mean - equal.mean).abs() - (full.ci95 + equal.ci95);
    assert!(gap < 0.1 * full.mean, "full {full:?} and equal {equal:?} differ by more than 10%");
    assert!(clearly_greater(calls("decorrelated-jitter"), calls("full-jitter")));
    assert!(clearly_greater(calls("decorrelated-jitter"), calls("equal-jitter")));

    // "equal jitter takes much longer than full"
    assert!(clearly_greater(time("equal-jitter"), time("full-jitter")));

    // "work grows ~N²" without backoff: doubling the clients should roughly quadruple the calls.
    let (n50, n100) = (study.metric(50, "none", "calls"), study.metric(100, "none", "calls"));
    let low_ratio = (n100.mean - n100.ci95) / (n50.mean + n50.ci95);
    let high_ratio = (n100.mean + n100.ci95) / (n50.mean - n50.ci95);
    assert!(low_ratio > 3.0 && high_ratio < 4.5, "none: calls(100)/calls(50) in [{low_ratio}, {high_ratio}]");
}

#[test]
fn unjittered_exponential_retries_in_waves_that_jitter_flattens() {
    // After the first rounds (t ≥ 500 ms), the busiest 20 ms bucket of un-jittered exponential holds several
    // times more calls than full jitter's busiest: its clients still retry in lock-step.
    let study = Study::run();
    let bucket_ms = study.scenario.timeline_bucket.as_millis_f64();
    let series = ModelKind::Occ.timeline_series();
    let calls = series.iter().position(|name| *name == "calls").unwrap();
    let late_peak = |strategy| {
        let timeline = &study.timelines[study.index(100, strategy)];
        let skip = (500.0 / bucket_ms) as usize;
        timeline.chunks(series.len()).skip(skip).map(|bucket| bucket[calls]).fold(0.0, f64::max)
    };
    let (exponential, full) = (late_peak("exponential"), late_peak("full-jitter"));
    assert!(exponential > 4.0 * full, "late peaks: exponential {exponential}, full jitter {full}");
}
