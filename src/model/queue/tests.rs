use super::*;
use crate::model::ModelKind;
use crate::params::Value;
use crate::policy::test_rng;
use crate::policy::{BackoffParams, Strategy, sidekiq_custom_delay, sidekiq_delay};
use crate::time::SimDuration;

const BUCKET: SimDuration = SimDuration::from_secs(1);

fn config(changes: &[(&str, Value)]) -> QueueConfig {
    Queue::configure(&ModelKind::Queue.point_with(changes)).unwrap()
}

fn metrics(config: &QueueConfig, seed: u64) -> Vec<f64> {
    Queue::simulate(config, RunSettings::new(seed, BUCKET)).metrics
}

fn secs(n: u64) -> Value {
    Value::Duration(SimDuration::from_secs(n))
}

#[test]
fn a_downstream_that_never_fails_redelivers_nothing() {
    let c = config(&[("kind", Value::Choice("open")), ("rate", Value::Real(100.0)), ("duration", secs(60))]);
    let m = metrics(&c, 1);
    assert!(m[metric::MESSAGES] > 5_000.0);
    assert_eq!(m[metric::PROCESSED], m[metric::MESSAGES]);
    assert_eq!(m[metric::RECEIVES], m[metric::MESSAGES]);
    for index in [metric::REDELIVERIES, metric::DEAD_LETTERED, metric::DUPLICATES_PROCESSED, metric::TIMEOUTS] {
        assert_eq!(m[index], 0.0, "{}", metric::SPECS[index].name);
    }
    assert_eq!(m[metric::AMPLIFICATION], 1.0);
}

#[test]
fn with_every_call_failing_each_message_is_received_max_receives_times_then_dead_lettered() {
    for redelivery in ["visibility-timeout", "ttl-queue", "sidekiq"] {
        let mut changes = vec![
            ("clients", Value::Count(100)),
            ("failure_probability", Value::Real(1.0)),
            ("redelivery", Value::Choice(redelivery)),
            ("max_receives", Value::Count(4)),
        ];
        match redelivery {
            "visibility-timeout" => changes.push(("visibility_timeout", secs(2))),
            "ttl-queue" => changes.push(("ttl", secs(2))),
            _ => {}
        }
        let m = metrics(&config(&changes), 2);
        assert_eq!(m[metric::RECEIVES], 400.0, "{redelivery}");
        assert_eq!(m[metric::REDELIVERIES], 300.0, "{redelivery}");
        assert_eq!(m[metric::DEAD_LETTERED], 100.0, "{redelivery}");
        assert_eq!(m[metric::PROCESSED], 0.0, "{redelivery}");
        assert_eq!(m[metric::SUCCESS_RATE], 0.0, "{redelivery}");
    }
}

#[test]
fn sidekiqs_schedule_is_its_formula_and_its_25_retries_take_about_three_weeks() {
    let mut rng = test_rng(4);
    for n in 1..=25_u32 {
        let count = u64::from(n - 1);
        let mut seen = [false; 10];
        for _ in 0..400 {
            let delay = sidekiq_delay(n, &mut rng).as_nanos() / 1_000_000_000;
            let jitter = delay - (count.pow(4) + 15);
            assert_eq!(jitter % (count + 1), 0, "retry {n}: {delay} s");
            seen[(jitter / (count + 1)) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s), "retry {n}: every r in 0..=9 drawn");
    }
    // A custom delay (sidekiq_retry_in, or the queue model's backoff strategy) keeps Sidekiq's jitter.
    let custom = SimDuration::from_secs(100);
    let mut seen = [false; 10];
    for _ in 0..400 {
        let jitter = (sidekiq_custom_delay(3, custom, &mut rng).as_nanos() - custom.as_nanos()) / 1_000_000_000;
        assert_eq!(jitter % 3, 0);
        seen[(jitter / 3) as usize] = true;
    }
    assert!(seen.iter().all(|&s| s), "100 s + r·3 s for every r in 0..=9");
    // As a strategy, b is the unit and c the cap.
    let params = BackoffParams::new(SimDuration::from_millis(1), SimDuration::from_secs(100), 1.0);
    let mut memory = crate::policy::BackoffMemory::default();
    let capped = Strategy::Sidekiq.delay(&params, 20, &mut memory, &mut rng);
    assert_eq!(capped, SimDuration::from_secs(100), "19⁴ ms is past the 100 s cap");
    // One job failing every time: dead after its 26th execution, Σ (count⁴ + 15) = 1,763,395 s plus a jitter of
    // at most Σ 9·(count + 1) = 2,925 s (about 20.4 days).
    let c = config(&[
        ("clients", Value::Count(1)),
        ("failure_probability", Value::Real(1.0)),
        ("redelivery", Value::Choice("sidekiq")),
        ("service", Value::Choice("constant")),
        ("service_mean", Value::Duration(SimDuration::ZERO)),
    ]);
    let m = metrics(&c, 5);
    assert_eq!((m[metric::RECEIVES], m[metric::DEAD_LETTERED]), (26.0, 1.0));
    let dead_at_s = m[metric::COMPLETION_MS] / 1e3;
    assert!((1_763_395.0..=1_763_395.0 + 2_925.0).contains(&dead_at_s), "{dead_at_s}");
}

#[test]
fn a_visibility_timeout_shorter_than_the_processing_hands_the_message_out_twice() {
    let c = config(&[
        ("clients", Value::Count(1)),
        ("workers", Value::Count(2)),
        ("service", Value::Choice("constant")),
        ("service_mean", secs(3)),
        ("visibility_timeout", secs(2)),
    ]);
    let m = metrics(&c, 3);
    // Received at 0 s and again at 2 s; acknowledged at 3 s, processed again at 5 s.
    assert_eq!((m[metric::RECEIVES], m[metric::REDELIVERIES]), (2.0, 1.0));
    assert_eq!((m[metric::PROCESSED], m[metric::DUPLICATES_PROCESSED]), (1.0, 1.0));
    assert_eq!(m[metric::LATENCY_MEAN_MS], 3_000.0);
}

/// Erlang's C formula: the chance an arrival waits in an M/M/c queue with offered load `a` = λ/μ.
fn erlang_c(servers: u32, a: f64) -> f64 {
    let rho = a / f64::from(servers);
    let mut term = 1.0;
    let mut sum = 1.0;
    for k in 1..servers {
        term *= a / f64::from(k);
        sum += term;
    }
    let last = term * a / f64::from(servers) / (1.0 - rho);
    last / (sum + last)
}

#[test]
fn queue_depth_obeys_littles_law_and_erlang_c_in_a_stable_queue() {
    // M/M/10 at λ = 100/s, mean service 80 ms: a = 8, ρ = 0.8; L = a + C·ρ/(1 − ρ).
    let c = config(&[
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(100.0)),
        ("duration", secs(300)),
        ("service_mean", Value::Duration(SimDuration::from_millis(80))),
    ]);
    let runs: Vec<Vec<f64>> = (0..20).map(|seed| metrics(&c, 100 + seed)).collect();
    let depth: Vec<f64> = runs.iter().map(|m| m[metric::QUEUE_DEPTH_MEAN]).collect();
    let theory = 8.0 + erlang_c(10, 8.0) * 0.8 / 0.2;
    let n = depth.len() as f64;
    let mean = depth.iter().sum::<f64>() / n;
    let sd = (depth.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    assert!((mean - theory).abs() < 3.29 * sd / n.sqrt(), "L = {mean} ± {sd}, Erlang C {theory}");
    // Little's law on each run's own path: the time-average depth is the arrival rate times the mean time in
    // the queue, up to the edges of the run (an empty start, a drain of well under a second).
    for m in &runs {
        let little = m[metric::MESSAGES] / (m[metric::COMPLETION_MS] / 1e3) * m[metric::LATENCY_MEAN_MS] / 1e3;
        assert!((m[metric::QUEUE_DEPTH_MEAN] / little - 1.0).abs() < 1e-3, "{} vs {little}", m[metric::QUEUE_DEPTH_MEAN]);
    }
}

#[test]
fn an_ordered_partition_waits_behind_its_poison_message() {
    let point = |ordering: &'static str| {
        let mut changes = vec![
            ("clients", Value::Count(200)),
            ("workers", Value::Count(20)),
            ("poison_probability", Value::Real(0.05)),
            ("redelivery", Value::Choice("ttl-queue")),
            ("ttl", secs(5)),
            ("max_receives", Value::Count(3)),
            ("ordering", Value::Choice(ordering)),
        ];
        if ordering == "ordered" {
            changes.push(("partitions", Value::Count(10)));
        }
        config(&changes)
    };
    let (unordered, ordered) = (metrics(&point("unordered"), 6), metrics(&point("ordered"), 6));
    // The same messages are poison in both (drawn in the same order): the same dead letters.
    assert_eq!(unordered[metric::DEAD_LETTERED], ordered[metric::DEAD_LETTERED]);
    assert!(unordered[metric::DEAD_LETTERED] > 0.0);
    // Unordered, healthy messages never wait for a poison one: 200 messages at 20 at a time take about 0.5 s.
    // Ordered, a partition behind a poison head waits its two 5 s delays.
    assert!(unordered[metric::LATENCY_P99_MS] < 2_000.0, "{}", unordered[metric::LATENCY_P99_MS]);
    assert!(ordered[metric::LATENCY_P99_MS] > 10_000.0, "{}", ordered[metric::LATENCY_P99_MS]);
}
