//! The whole AWS 2015 study (`scenarios/aws-jitter-2015.toml`: 5 strategies × 19 client counts × 100
//! replicates) on one thread, twice side by side: with retrylab's OCC model (the sweep runner on a one-thread
//! pool, every metric and timeline it records) and with a minimal simulation of the same model written here
//! from scratch (a `std` binary heap of (time, sequence, event), counting WRITE calls and the completion time
//! only). The difference is what retrylab's engine, policy layer and metrics cost over the least a simulator
//! of this model has to do.
//!
//! Before measuring, the setup checks that both agree on the study's numbers at 100 clients (the mean calls
//! and completion time of every strategy, within four standard errors of the difference), so both rows do the
//! same work; it also prints how many runs of the whole study matched to the call.
//!
//! Run: `cargo bench --bench aws_baseline`. docs/performance.md quotes these figures.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};
use rand_xoshiro::Xoshiro256PlusPlus;
use retrylab::engine::Stream;
use retrylab::params::Value;
use retrylab::scenario::{PlannedPoint, Scenario, plan};
use retrylab::sweep::{Run, SweepSettings, run_sweep};

/// The baseline: the OCC row of Brooker's study, every rule restated from `src/model/occ.rs`.
mod baseline {
    use super::*;

    /// The five strategies of the study. With `v = min(cap, base·multiplier^n)` after the n-th failed write:
    /// none sleeps 0, exponential v, full jitter U(0, v), equal jitter v/2 + U(0, v/2), decorrelated jitter
    /// min(cap, U(base, 3·s)) with s the client's previous sleep (base before its first retry).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub(super) enum Backoff {
        None,
        Exponential,
        FullJitter,
        EqualJitter,
        DecorrelatedJitter,
    }

    impl Backoff {
        pub(super) fn named(name: &str) -> Backoff {
            match name {
                "none" => Backoff::None,
                "exponential" => Backoff::Exponential,
                "full-jitter" => Backoff::FullJitter,
                "equal-jitter" => Backoff::EqualJitter,
                "decorrelated-jitter" => Backoff::DecorrelatedJitter,
                other => panic!("the baseline has no strategy {other}"),
            }
        }
    }

    /// The study's constants, in nanoseconds.
    #[derive(Clone, Copy, Debug)]
    pub(super) struct Constants {
        pub network_mean: f64,
        pub network_sd: f64,
        pub base: f64,
        pub cap: f64,
        pub multiplier: f64,
    }

    /// What one run measures.
    #[derive(Clone, Copy, Debug)]
    pub(super) struct Outcome {
        /// WRITE calls reaching the row.
        pub calls: u64,
        /// The time of the last message delivery, in nanoseconds.
        pub completion: u64,
    }

    impl Outcome {
        /// [calls, completion in ms], as retrylab's metrics report them.
        pub(super) fn measured(&self) -> [f64; 2] {
            [self.calls as f64, self.completion as f64 / 1e6]
        }
    }

    /// A message delivery. The derived order is never consulted: the heap orders by (time, sequence) first,
    /// and sequences are unique.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum Message {
        ReadAtServer(u32),
        ReadAtClient(u32),
        WriteAtServer(u32),
        WriteAtClient(u32, bool),
    }

    #[derive(Clone, Copy, Default)]
    struct Client {
        version_read: u64,
        failures: u32,
        previous_sleep: f64,
    }

    /// Rounds a non-negative length of time to whole nanoseconds (the engine keeps integer nanoseconds too).
    fn whole(nanos: f64) -> u64 {
        (nanos + 0.5) as u64
    }

    /// One run: `clients` clients read the row's version at t = 0 and write it back; a write with a stale
    /// version conflicts, and its client backs off and reads again. Every hop is |Normal(mean, sd)|, drawn from
    /// the network generator in the order the hops are sent; sleeps draw from the jitter generator.
    pub(super) fn run(
        constants: &Constants,
        backoff: Backoff,
        clients: u32,
        network_seed: u64,
        jitter_seed: u64,
    ) -> Outcome {
        let hop_length = Normal::new(constants.network_mean, constants.network_sd).expect("a valid normal");
        let mut network = Xoshiro256PlusPlus::seed_from_u64(network_seed);
        let mut jitter = Xoshiro256PlusPlus::seed_from_u64(jitter_seed);
        let mut hop = || whole(hop_length.sample(&mut network).abs());

        let mut pending: BinaryHeap<Reverse<(u64, u64, Message)>> = BinaryHeap::with_capacity(clients as usize);
        let mut sequence = 0_u64;
        let mut send = |pending: &mut BinaryHeap<_>, at: u64, message: Message| {
            pending.push(Reverse((at, sequence, message)));
            sequence += 1;
        };
        let mut states = vec![Client::default(); clients as usize];
        let mut version = 0_u64;
        let mut calls = 0_u64;
        let mut now = 0_u64;

        for client in 0..clients {
            send(&mut pending, hop(), Message::ReadAtServer(client));
        }
        while let Some(Reverse((at, _, message))) = pending.pop() {
            now = at;
            match message {
                Message::ReadAtServer(client) => {
                    states[client as usize].version_read = version;
                    send(&mut pending, now + hop(), Message::ReadAtClient(client));
                }
                Message::ReadAtClient(client) => send(&mut pending, now + hop(), Message::WriteAtServer(client)),
                Message::WriteAtServer(client) => {
                    calls += 1;
                    let fresh = states[client as usize].version_read == version;
                    if fresh {
                        version += 1;
                    }
                    send(&mut pending, now + hop(), Message::WriteAtClient(client, fresh));
                }
                Message::WriteAtClient(_, true) => {}
                Message::WriteAtClient(client, false) => {
                    let state = &mut states[client as usize];
                    state.failures += 1;
                    let window = || {
                        let exponent = i32::try_from(state.failures).unwrap_or(i32::MAX);
                        (constants.base * constants.multiplier.powi(exponent)).min(constants.cap)
                    };
                    let sleep = match backoff {
                        Backoff::None => 0.0,
                        Backoff::Exponential => window(),
                        Backoff::FullJitter => window() * jitter.random::<f64>(),
                        Backoff::EqualJitter => {
                            let half = window() / 2.0;
                            half + half * jitter.random::<f64>()
                        }
                        Backoff::DecorrelatedJitter => {
                            let previous = if state.failures == 1 { constants.base } else { state.previous_sleep };
                            let spread = (3.0 * previous - constants.base).max(0.0);
                            let drawn = (constants.base + spread * jitter.random::<f64>()).min(constants.cap);
                            state.previous_sleep = drawn;
                            drawn
                        }
                    };
                    send(&mut pending, now + hop() + whole(sleep), Message::ReadAtServer(client));
                }
            }
        }
        Outcome { calls, completion: now }
    }
}

/// The study, loaded and planned as `retrylab run` does.
struct Study {
    scenario: Scenario,
    points: Vec<PlannedPoint>,
    constants: baseline::Constants,
    /// Per point, the baseline's view of it: (strategy, clients).
    cases: Vec<(baseline::Backoff, u32)>,
}

impl Study {
    fn load() -> Study {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/aws-jitter-2015.toml");
        let scenario = Scenario::load(&path, &[]).expect("the committed scenario is valid");
        let points = plan(&scenario).expect("valid points");
        let nanos = |key: &str| match setting(&scenario, key) {
            Value::Duration(duration) => duration.as_nanos() as f64,
            other => panic!("{key} = {other}: expected a duration"),
        };
        let multiplier = match setting(&scenario, "multiplier") {
            Value::Real(x) => x,
            Value::Count(n) => n as f64,
            other => panic!("multiplier = {other}: expected a number"),
        };
        let constants = baseline::Constants {
            network_mean: nanos("network_delay"),
            network_sd: nanos("network_sd"),
            base: nanos("base"),
            cap: nanos("cap"),
            multiplier,
        };
        let axis = |key: &str| scenario.sweep.iter().position(|axis| axis.answers_to(key)).expect("swept");
        let (clients_axis, strategy_axis) = (axis("clients"), axis("strategy"));
        let cases = points
            .iter()
            .map(|point| {
                let Value::Choice(strategy) = point.swept[strategy_axis] else { panic!("strategy is a name") };
                let Value::Count(clients) = point.swept[clients_axis] else { panic!("clients is a count") };
                (baseline::Backoff::named(strategy), u32::try_from(clients).expect("clients fit in u32"))
            })
            .collect();
        Study { scenario, points, constants, cases }
    }

    /// Every run through retrylab's sweep runner on a one-thread pool, in (point, replicate) order.
    fn run_retrylab(&self) -> Vec<Run> {
        let settings = SweepSettings::for_scenario(&self.scenario, Some(1));
        run_sweep(&self.points, settings, &|| {}).expect("a one-thread pool")
    }

    /// Per point, per replicate, retrylab's [calls, completion in ms], and the engine's events in all.
    fn retrylab_outcomes(&self) -> (Vec<Vec<[f64; 2]>>, u64) {
        let runs = self.run_retrylab();
        let calls = self.scenario.model.metric_index("calls").expect("occ counts calls");
        let completion = self.scenario.model.metric_index("completion_ms").expect("occ times completion");
        let mut per_point = vec![Vec::new(); self.points.len()];
        for run in &runs {
            assert!(!run.output.truncated, "point {} replicate {} was cut short", run.point, run.replicate);
            per_point[run.point].push([run.output.metrics[calls], run.output.metrics[completion]]);
        }
        (per_point, runs.iter().map(|run| run.output.events).sum())
    }

    /// Every run through the baseline, with the seeds retrylab gives the same (point, replicate).
    fn run_baseline(&self) -> Vec<Vec<baseline::Outcome>> {
        self.points
            .iter()
            .zip(&self.cases)
            .map(|(point, &(backoff, clients))| {
                (0..self.scenario.replicates)
                    .map(|replicate| {
                        let seeds = point.seeds(self.scenario.seed, replicate);
                        let (network, jitter) = (seeds.seed_of(Stream::Network), seeds.seed_of(Stream::Jitter));
                        baseline::run(&self.constants, backoff, clients, network, jitter)
                    })
                    .collect()
            })
            .collect()
    }
}

/// A `[model]` or `[client]` value of the scenario, its default where the file leaves it out.
fn setting(scenario: &Scenario, key: &str) -> Value {
    let setting = scenario.settings.iter().find(|s| s.spec.answers_to(None, key)).expect("a parameter of occ");
    setting.value.clone().or_else(|| setting.spec.default.hashed_value()).expect("a value or a default")
}

/// Mean and standard error of the mean.
fn mean_and_se(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (variance / n).sqrt())
}

/// At 100 clients, each strategy's mean calls and completion time agree within four standard errors of their
/// difference; prints how many runs of the study agree exactly.
fn check_agreement(study: &Study, ours: &[Vec<[f64; 2]>], theirs: &[Vec<baseline::Outcome>]) {
    for (point, &(backoff, clients)) in study.cases.iter().enumerate() {
        if clients != 100 {
            continue;
        }
        let theirs: Vec<[f64; 2]> = theirs[point].iter().map(baseline::Outcome::measured).collect();
        for (column, name) in ["calls", "completion_ms"].into_iter().enumerate() {
            let (a, a_se) = mean_and_se(&ours[point].iter().map(|run| run[column]).collect::<Vec<_>>());
            let (b, b_se) = mean_and_se(&theirs.iter().map(|run| run[column]).collect::<Vec<_>>());
            let tolerance = 4.0 * a_se.hypot(b_se);
            eprintln!(
                "{backoff:?} at 100 clients, mean {name}: retrylab {a:.1} ± {a_se:.1}, baseline {b:.1} ± {b_se:.1}"
            );
            assert!((a - b).abs() <= tolerance, "{backoff:?}: {name} differ by more than {tolerance:.1}");
        }
    }
    let runs = ours.iter().flatten().count();
    let same = ours.iter().flatten().zip(theirs.iter().flatten()).filter(|(a, b)| a[0] == b.calls as f64).count();
    eprintln!("aws-jitter-2015: {same} of {runs} runs have the same calls in both");
}

fn aws_study(c: &mut Criterion) {
    let study = Study::load();
    let (ours, events) = study.retrylab_outcomes();
    let theirs = study.run_baseline();
    check_agreement(&study, &ours, &theirs);
    // Four deliveries per attempt: read there and back, write there and back.
    let baseline_events = 4 * theirs.iter().flatten().map(|outcome| outcome.calls).sum::<u64>();
    eprintln!("aws-jitter-2015: {events} events through retrylab, {baseline_events} through the baseline");

    let mut group = c.benchmark_group("aws-jitter-2015/1-thread");
    // Every sample is one whole study (criterion warns that 10 do not fit the budget; that is expected).
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(1));
    group.throughput(Throughput::Elements(events));
    group.bench_function("retrylab", |b| b.iter(|| black_box(study.run_retrylab().len())));
    group.throughput(Throughput::Elements(baseline_events));
    group.bench_function("baseline", |b| b.iter(|| black_box(study.run_baseline().len())));
    group.finish();
}

criterion_group!(benches, aws_study);
criterion_main!(benches);
