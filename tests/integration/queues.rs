//! The queue model end to end: the committed scenarios' orderings of dead letters and latencies, and the
//! refusals of values that make no sense.

use std::path::Path;

use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::stats::Estimate;
use retrylab::sweep::{SweepSettings, run_sweep};

use crate::common::assert_refused;

/// The committed scenario `name` with `overrides`: its points' swept values (as text) and summaries.
fn committed(name: &str, overrides: &[&str]) -> (Scenario, Vec<(String, Vec<Estimate>)>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("scenarios/{name}.toml"));
    let overrides: Vec<String> = overrides.iter().map(|o| (*o).to_owned()).collect();
    let scenario = Scenario::load(&path, &overrides).unwrap();
    let points = plan(&scenario).unwrap();
    let runs = run_sweep(&points, SweepSettings::for_scenario(&scenario, None), &|| {}).unwrap();
    let summary = aggregate(scenario.model, points.len(), &runs).summary;
    let labels = points.iter().map(|p| p.swept.iter().map(ToString::to_string).collect::<Vec<_>>().join(","));
    let points = labels.zip(summary).collect();
    (scenario, points)
}

fn mean(scenario: &Scenario, points: &[(String, Vec<Estimate>)], label: &str, metric: &str) -> Estimate {
    let index = scenario.model.metric_index(metric).unwrap();
    points.iter().find(|(l, _)| l == label).unwrap_or_else(|| panic!("no point {label}")).1[index]
}

#[test]
fn in_a_five_minute_outage_fixed_delays_dead_letter_and_backoff_and_sidekiq_ride_it_out() {
    let (scenario, points) = committed("queue-outage", &["replicates=3", "sweep.max_receives=[5]"]);
    let dead = |label: &str| mean(&scenario, &points, label, "dead_lettered");
    let ttl = dead("ttl-queue,none,5");
    let visibility = dead("visibility-timeout,none,5");
    // Five receives 10 s apart last 40 s, 30 s apart 2 min: the shorter delay gives up on more of the outage's
    // 15,000 messages, beyond both intervals.
    assert!(ttl.lo95 > visibility.hi95 && visibility.lo95 > 1_000.0, "ttl {ttl:?}, visibility {visibility:?}");
    // Backoff (10, 20, 40, 80 s) and Sidekiq (15, 16–25, 31–49, 96–132 s) need longer for five receives than
    // messages born late in the outage wait; those born early still run out.
    for label in ["visibility-timeout,exponential,5", "sidekiq,none,5"] {
        assert!(dead(label).hi95 < visibility.lo95, "{label}: {:?}", dead(label));
    }
}

#[test]
fn ordered_partitions_wait_behind_poison_messages_and_unordered_ones_do_not() {
    let (scenario, points) = committed("poison-messages", &["replicates=3"]);
    let p99 = |label: &str| mean(&scenario, &points, label, "latency_p99_ms");
    for partitions in ["10", "100", "1000"] {
        let (unordered, ordered) = (p99(&format!("{partitions},unordered")), p99(&format!("{partitions},ordered")));
        assert!(unordered.hi95 < 1_000.0, "{partitions}: unordered p99 {unordered:?}");
        assert!(ordered.lo95 > 10_000.0, "{partitions}: ordered p99 {ordered:?}");
    }
}

const QUEUE: &str = r#"schema_version = 1

[model]
kind = "queue"
redelivery = "ttl-queue"
ttl = "10s"
max_receives = 5

[workload]
kind = "burst"
clients = 10
"#;

#[test]
fn queue_values_that_make_no_sense_are_refused_with_their_place() {
    let refused = |from: &str, to: &str, expected: &[&str]| assert_refused(QUEUE, "queue.toml", from, to, expected);
    refused("max_receives = 5", "max_receives = 0", &["model.max_receives", "from 1 to"]);
    refused("ttl = \"10s\"", "ttl = \"-10s\"", &["model.ttl", "cannot be negative"]);
    refused(
        "redelivery = \"ttl-queue\"",
        "redelivery = \"kafka\"",
        &["model.redelivery", "visibility-timeout, ttl-queue, sidekiq"],
    );
    refused(
        "ttl = \"10s\"",
        "visibility_timeout = \"10s\"",
        &["visibility_timeout", "belongs to redelivery = \"visibility-timeout\""],
    );
    refused("kind = \"burst\"", "kind = \"closed\"", &["workload.kind", "producers do not wait"]);
    refused("max_receives = 5", "faults = \"1s..2s black-hole\"", &["faults", "need a `timeout`"]);
}
