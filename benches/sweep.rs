//! Whole-scenario wall time on every core, simulation and aggregation only (no files written):
//! `scenarios/aws-jitter-2015.toml` (95 points × 100 replicates, about 60 M events) and a 100,000-client
//! thundering herd.
//!
//! Run: `cargo bench --bench sweep`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retrylab::report::aggregate;
use retrylab::scenario::{Scenario, plan};
use retrylab::sweep::{SweepSettings, run_sweep};

fn aws_study(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/aws-jitter-2015.toml");
    let scenario = Scenario::load(&path, &[]).expect("the committed scenario is valid");
    let points = plan(&scenario).expect("valid points");
    let settings = SweepSettings::for_scenario(&scenario, None);
    let run = || {
        let runs = run_sweep(&points, settings, &|| {}).expect("thread pool");
        aggregate(scenario.model, points.len(), &runs)
    };
    let events = run().events;
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function(format!("aws-jitter-2015/{}-threads", rayon::current_num_threads()), |b| {
        b.iter(|| black_box(run().events))
    });
    group.finish();
}

/// `scenarios/thundering-herd.toml` scaled to 100,000 clients released at once, full jitter, one replicate.
fn herd_100k(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/thundering-herd.toml");
    let overrides = ["clients=100000".to_owned(), "strategy=full-jitter".to_owned(), "replicates=1".to_owned()];
    let scenario = Scenario::load(&path, &overrides).expect("the committed scenario is valid");
    let points = plan(&scenario).expect("valid points");
    let settings = SweepSettings::for_scenario(&scenario, None);
    let run = || aggregate(scenario.model, points.len(), &run_sweep(&points, settings, &|| {}).expect("thread pool"));
    let events = run().events;
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("thundering-herd/100000-clients/full-jitter", |b| b.iter(|| black_box(run().events)));
    group.finish();
}

criterion_group!(benches, aws_study, herd_100k);
criterion_main!(benches);
