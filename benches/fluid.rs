//! The fluid limit of a billion clients: `retrylab fluid` on the thundering herd scaled ×10^6 (10^9 clients,
//! 10^7 workers, 10^8 queue places), with full jitter and with exponential backoff. Its cost does not depend on
//! the number of clients; the retry laws' sampling and the steps of the trajectory are all of it.
//!
//! Run: `cargo bench --bench fluid`. docs/analysis.md quotes these figures.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use retrylab::commands::{FluidOptions, fluid};

fn herd(strategy: &str) -> FluidOptions {
    FluidOptions {
        scenario: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/thundering-herd.toml"),
        set: vec![format!("strategy={strategy}")],
        scale: 1e6,
        step: None,
        csv: None,
        over: None,
        between: None,
        tolerance: None,
    }
}

fn billion_clients(c: &mut Criterion) {
    let mut group = c.benchmark_group("fluid_herd_1e9_clients");
    group.sample_size(10);
    for strategy in ["full-jitter", "exponential"] {
        let options = herd(strategy);
        group.bench_function(strategy, |b| {
            b.iter(|| {
                let mut out = Vec::new();
                fluid(black_box(&options), &mut out).unwrap();
                out
            })
        });
    }
    group.finish();
}

criterion_group!(benches, billion_clients);
criterion_main!(benches);
