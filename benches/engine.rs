//! Engine throughput on the OCC model, in events per second (criterion reports it as "elem/s").
//!
//! Run: `cargo bench --bench engine`. The README's performance section quotes these figures.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use retrylab::engine::SimDuration;
use retrylab::model::{ModelKind, Point, Value};

fn occ_point(clients: i64, strategy: &'static str) -> retrylab::model::ModelConfig {
    let kind = ModelKind::Occ;
    let entries = kind
        .params()
        .map(|spec| {
            let value = match spec.key {
                "clients" => Some(Value::Count(clients)),
                "strategy" => Some(Value::Choice(strategy)),
                _ => match spec.default {
                    retrylab::model::ParamDefault::Value(value) => Some(value),
                    _ => None,
                },
            };
            (spec, value)
        })
        .collect();
    kind.configure(&Point::new(entries)).expect("valid point")
}

fn occ_events_per_second(c: &mut Criterion) {
    let bucket = SimDuration::from_millis(10);
    let mut group = c.benchmark_group("occ");
    for (clients, strategy) in [(100, "full-jitter"), (100, "exponential"), (100, "none")] {
        let config = occ_point(clients, strategy);
        // One iteration runs the same 16 seeds, so the events per iteration are exact, not estimated.
        let seeds = 0..16_u64;
        let events: u64 = seeds.clone().map(|seed| config.simulate(seed, bucket).events).sum();
        group.throughput(Throughput::Elements(events));
        group.bench_function(format!("{strategy}/{clients}-clients"), |b| {
            b.iter(|| seeds.clone().map(|seed| black_box(config.simulate(black_box(seed), bucket).events)).sum::<u64>())
        });
    }
    group.finish();
}

criterion_group!(benches, occ_events_per_second);
criterion_main!(benches);
