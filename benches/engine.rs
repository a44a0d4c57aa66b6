//! Engine throughput on the OCC model, in events per second (criterion reports it as "elem/s").
//!
//! Run: `cargo bench --bench engine`. docs/performance.md quotes these figures.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retrylab::model::{ModelKind, RunSettings};
use retrylab::params::Value;
use retrylab::time::SimDuration;

/// A configuration of `kind` with every default, then `changes` applied.
fn point(kind: ModelKind, changes: &[(&str, Value)]) -> retrylab::model::ModelConfig {
    kind.configure(&kind.point_with(changes)).expect("valid point")
}

fn occ_events_per_second(c: &mut Criterion) {
    let bucket = SimDuration::from_millis(10);
    let mut group = c.benchmark_group("occ");
    for (clients, strategy) in [(100, "full-jitter"), (100, "exponential"), (100, "none")] {
        let config =
            point(ModelKind::Occ, &[("clients", Value::Count(clients)), ("strategy", Value::Choice(strategy))]);
        // One iteration runs the same 16 seeds, so the events per iteration are exact, not estimated.
        let seeds = 0..16_u64;
        let events: u64 = seeds.clone().map(|seed| config.simulate(RunSettings::new(seed, bucket)).events).sum();
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{strategy}/{clients}-clients"), |b| {
            b.iter(|| {
                seeds
                    .clone()
                    .map(|seed| black_box(config.simulate(RunSettings::new(black_box(seed), bucket)).events))
                    .sum::<u64>()
            })
        });
    }
    group.finish();
}

/// The contended server under a 10,000-client herd: 20 workers, a 500-deep queue, 1 ms network, full jitter.
fn server_events_per_second(c: &mut Criterion) {
    let bucket = SimDuration::from_millis(10);
    let config = point(
        ModelKind::Server,
        &[
            ("clients", Value::Count(10_000)),
            ("workers", Value::Count(20)),
            ("queue_limit", Value::Count(500)),
            ("network_delay", Value::Duration(SimDuration::from_millis(1))),
            ("strategy", Value::Choice("full-jitter")),
            ("base", Value::Duration(SimDuration::from_millis(10))),
            ("cap", Value::Duration(SimDuration::from_secs(10))),
        ],
    );
    let seeds = 0..4_u64;
    let events: u64 = seeds.clone().map(|seed| config.simulate(RunSettings::new(seed, bucket)).events).sum();
    let mut group = c.benchmark_group("server");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("full-jitter/10000-clients", |b| {
        b.iter(|| {
            seeds
                .clone()
                .map(|seed| black_box(config.simulate(RunSettings::new(black_box(seed), bucket)).events))
                .sum::<u64>()
        })
    });
    group.finish();
}

/// The shared channel: 10^7 slots of slotted ALOHA at G = 1 (one event per slot), and Ethernet with 32
/// saturated stations.
fn channel_events_per_second(c: &mut Criterion) {
    let bucket = SimDuration::from_millis(100);
    let mut group = c.benchmark_group("channel");
    group.sample_size(10);
    let cases = [
        ("slotted-aloha/10^7-slots", vec![("slots", Value::Count(10_000_000))]),
        (
            "ethernet/32-stations",
            vec![
                ("protocol", Value::Choice("ethernet")),
                ("population", Value::Choice("saturated")),
                ("stations", Value::Count(32)),
                ("slots", Value::Count(2_000_000)),
            ],
        ),
    ];
    for (name, changes) in cases {
        let config = point(ModelKind::Channel, &changes);
        let events = config.simulate(RunSettings::new(0, bucket)).events;
        group.throughput(Throughput::Elements(events));
        group.bench_function(name, |b| {
            b.iter(|| black_box(config.simulate(RunSettings::new(black_box(0), bucket)).events))
        });
    }
    group.finish();
}

/// Issue 5's target: a 5-layer chain at 10,000 user requests/s for 60 simulated seconds (600,000 requests),
/// each layer a 32-worker server with exponential 1 ms work, exponential 1 ms hops, a 1 s timeout and 3
/// attempts at every layer, the bottom failing 1% of calls.
fn layers_chain(c: &mut Criterion) {
    let bucket = SimDuration::from_millis(100);
    let ms = SimDuration::from_millis;
    let config = point(
        ModelKind::Layers,
        &[
            ("layers", Value::Count(5)),
            ("attempts", Value::Count(3)),
            ("failure_probability", Value::Real(0.01)),
            ("workers", Value::Count(32)),
            ("service", Value::Choice("exponential")),
            ("service_time", Value::Duration(ms(1))),
            ("network", Value::Choice("exponential")),
            ("hop_delay", Value::Duration(ms(1))),
            ("timeout", Value::Duration(ms(1000))),
            ("requests", Value::Count(600_000)),
            ("rate", Value::Real(10_000.0)),
        ],
    );
    let events = config.simulate(RunSettings::new(0, bucket)).events;
    let mut group = c.benchmark_group("layers");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("5-layer-chain/10000-rps/60s", |b| {
        b.iter(|| black_box(config.simulate(RunSettings::new(black_box(0), bucket)).events))
    });
    group.finish();
}

criterion_group!(benches, occ_events_per_second, server_events_per_second, channel_events_per_second, layers_chain);
criterion_main!(benches);
