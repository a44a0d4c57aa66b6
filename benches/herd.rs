//! Thundering herds at scale, in events per second (criterion's "elem/s") and wall time per run: the herd of
//! `scenarios/thundering-herd.toml` (a burst released at t = 0 against a server with exponential 10 ms service
//! and 1 ms network, clients retrying with full jitter, base 10 ms, cap 10 s), one replicate on one thread,
//! scaled up:
//!
//! - 1,000,000 clients against 10,000 workers and a 100,000-deep queue;
//! - 10,000,000 clients against 100,000 workers and a 1,000,000-deep queue (issue 19 estimates about 180 M
//!   events and a minute per run), only when `RETRYLAB_BENCH_HUGE=1`.
//!
//! Each case first runs once to count its events and to check that the run drained rather than hit its event
//! cap; every sample is then one whole run.
//!
//! Run: `cargo bench --bench herd` (the 1M herd), `RETRYLAB_BENCH_HUGE=1 cargo bench --bench herd` (both).
//! docs/performance.md quotes these figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use retrylab::model::{ModelKind, RunSettings};
use retrylab::params::Value;
use retrylab::time::SimDuration;

/// The scenario's seed and timeline bucket.
const SEED: u64 = 1000;
const BUCKET: SimDuration = SimDuration::from_millis(10);

/// Far above the 10M herd's events, so that no case is cut short.
const MAX_EVENTS: u64 = 2_000_000_000;

const SAMPLES: usize = 10;

/// The 10M herd runs only when this variable is `1`.
const HUGE: &str = "RETRYLAB_BENCH_HUGE";

/// `scenarios/thundering-herd.toml` with `clients`, `workers` and `queue_limit` scaled and full jitter.
fn herd(clients: i64, workers: i64, queue_limit: i64) -> retrylab::model::ModelConfig {
    let kind = ModelKind::Server;
    let point = kind.point_with(&[
        ("kind", Value::Choice("burst")),
        ("clients", Value::Count(clients)),
        ("workers", Value::Count(workers)),
        ("queue_limit", Value::Count(queue_limit)),
        ("service", Value::Choice("exponential")),
        ("service_mean", Value::Duration(SimDuration::from_millis(10))),
        ("network_delay", Value::Duration(SimDuration::from_millis(1))),
        ("strategy", Value::Choice("full-jitter")),
        ("base", Value::Duration(SimDuration::from_millis(10))),
        ("cap", Value::Duration(SimDuration::from_secs(10))),
    ]);
    kind.configure(&point).expect("valid point")
}

fn settings() -> RunSettings {
    RunSettings { max_events: MAX_EVENTS, ..RunSettings::new(SEED, BUCKET) }
}

fn herds(c: &mut Criterion) {
    let mut cases = vec![("1000000-clients/10000-workers", herd(1_000_000, 10_000, 100_000))];
    if std::env::var(HUGE).is_ok_and(|value| value == "1") {
        cases.push(("10000000-clients/100000-workers", herd(10_000_000, 100_000, 1_000_000)));
    } else {
        eprintln!("herd: the 10,000,000-client case is skipped; set {HUGE}=1 to run it");
    }
    let mut group = c.benchmark_group("herd");
    // Flat sampling with a small time budget makes every sample one run (criterion then warns that it cannot
    // finish 10 samples in that budget, which is expected) and the warm-up a single run.
    group
        .sample_size(SAMPLES)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1));
    for (name, config) in cases {
        let started = Instant::now();
        let output = config.simulate(settings());
        let once = started.elapsed();
        assert!(!output.truncated, "{name}: the run hit its cap of {MAX_EVENTS} events");
        eprintln!("herd/{name}: {} events in one run, {once:.2?} untimed", output.events);
        group.throughput(Throughput::Elements(output.events));
        group.bench_function(name, |b| b.iter(|| black_box(config.simulate(black_box(settings())).events)));
    }
    group.finish();
}

criterion_group!(benches, herds);
criterion_main!(benches);
