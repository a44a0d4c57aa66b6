use super::*;
use crate::model::ModelKind;
use crate::model::params::Point;
use crate::policy::{BackoffParams, Strategy};

const BUCKET: SimDuration = SimDuration::from_millis(10);

/// A point of the server model with every default, then `changes` applied.
fn config(changes: &[(&str, Value)]) -> ServerConfig {
    let kind = ModelKind::Server;
    let entries = kind
        .params()
        .map(|spec| {
            let value = changes.iter().find(|(key, _)| *key == spec.key).map(|(_, v)| *v).or(match spec.default {
                ParamDefault::Value(value) => Some(value),
                _ => None,
            });
            (spec, value)
        })
        .collect();
    Server::configure(&Point::new(entries)).unwrap()
}

fn ms(n: u64) -> Value {
    Value::Duration(SimDuration::from_millis(n))
}

fn run_metrics(config: &ServerConfig, seed: u64) -> Vec<f64> {
    Server::simulate(config, seed, BUCKET).metrics
}

#[test]
fn an_uncontended_burst_succeeds_with_one_call_per_request() {
    let m = run_metrics(&config(&[("clients", Value::Count(50))]), 1);
    assert_eq!(m[metric::REQUESTS], 50.0);
    assert_eq!(m[metric::CALLS], 50.0);
    assert_eq!(m[metric::SUCCEEDED], 50.0);
    assert_eq!(m[metric::SUCCESS_RATE], 1.0);
    assert_eq!(m[metric::AMPLIFICATION], 1.0);
    assert!(m[metric::UTILISATION].is_nan(), "unlimited workers have no utilisation");
}

#[test]
fn a_full_queue_rejects_and_clients_retry_until_served() {
    let c = config(&[
        ("clients", Value::Count(20)),
        ("workers", Value::Count(1)),
        ("queue_limit", Value::Count(0)),
        ("service", Value::Choice("constant")),
        ("strategy", Value::Choice("full-jitter")),
    ]);
    let m = run_metrics(&c, 2);
    assert_eq!(m[metric::SUCCEEDED], 20.0);
    assert!(m[metric::REJECTED] > 0.0);
    assert_eq!(m[metric::CALLS], 20.0 + m[metric::RETRIES]);
    assert_eq!(m[metric::REJECTED], m[metric::RETRIES], "every rejection is retried once");
    // One worker serving 20 constant 10 ms requests is busy 200 ms in all.
    let busy_ms = m[metric::UTILISATION] * m[metric::COMPLETION_MS];
    assert!((busy_ms - 200.0).abs() < 1e-6, "{busy_ms}");
}

#[test]
fn max_attempts_dead_letters_requests() {
    let c = config(&[
        ("clients", Value::Count(30)),
        ("workers", Value::Count(1)),
        ("queue_limit", Value::Count(0)),
        ("strategy", Value::Choice("none")),
        ("max_attempts", Value::Count(2)),
    ]);
    let m = run_metrics(&c, 3);
    assert!(m[metric::GAVE_UP] > 0.0);
    assert_eq!(m[metric::SUCCEEDED] + m[metric::GAVE_UP], 30.0);
    assert!(m[metric::CALLS] <= 60.0);
}

#[test]
fn timeouts_fail_attempts_and_abandoned_work_still_runs() {
    let changes = [
        ("clients", Value::Count(10)),
        ("workers", Value::Count(1)),
        ("service", Value::Choice("constant")),
        ("service_mean", ms(100)),
        ("timeout", ms(50)),
        ("max_attempts", Value::Count(3)),
        ("strategy", Value::Choice("constant")),
    ];
    let abandon = run_metrics(&config(&changes), 4);
    assert_eq!(abandon[metric::SUCCEEDED], 0.0, "no attempt can finish within its timeout");
    assert_eq!(abandon[metric::GAVE_UP], 10.0);
    assert_eq!(abandon[metric::TIMEOUTS], 30.0);
    assert_eq!(abandon[metric::CALLS], 30.0);
    // Abandoned: the single worker still serves all 30 attempts, 100 ms each.
    let abandon_busy = abandon[metric::UTILISATION] * abandon[metric::COMPLETION_MS];
    assert!((abandon_busy - 3000.0).abs() < 1e-6, "{abandon_busy}");

    let mut cancel_changes = changes.to_vec();
    cancel_changes.push(("on_timeout", Value::Choice("cancel")));
    let cancel = run_metrics(&config(&cancel_changes), 4);
    let cancel_busy = cancel[metric::UTILISATION] * cancel[metric::COMPLETION_MS];
    assert!(cancel_busy < abandon_busy / 2.0, "cancelled queued work is dropped: {cancel_busy} ms busy");
}

#[test]
fn a_closed_loop_keeps_each_client_to_one_request_at_a_time() {
    let c = config(&[
        ("kind", Value::Choice("closed")),
        ("clients", Value::Count(3)),
        ("think_time", ms(100)),
        ("duration", ms(10_000)),
        ("workers", Value::Count(1)),
    ]);
    let m = run_metrics(&c, 5);
    // Each cycle is think (100 ms) + about one service (10 ms): about 3 × 10 s / 110 ms ≈ 270 requests.
    assert!((200.0..330.0).contains(&m[metric::REQUESTS]), "{}", m[metric::REQUESTS]);
    assert_eq!(m[metric::SUCCEEDED], m[metric::REQUESTS]);
}

#[test]
fn open_arrivals_follow_the_rate() {
    let c = config(&[("kind", Value::Choice("open")), ("rate", Value::Real(200.0)), ("duration", ms(50_000))]);
    let m = run_metrics(&c, 6);
    // Poisson: 10,000 expected, sd 100.
    assert!((m[metric::REQUESTS] - 10_000.0).abs() < 400.0, "{}", m[metric::REQUESTS]);
}

#[test]
fn queue_limit_without_workers_is_refused() {
    let kind = ModelKind::Server;
    let entries = kind
        .params()
        .map(|spec| {
            let value = if spec.key == "queue_limit" {
                Some(Value::Count(5))
            } else if let ParamDefault::Value(v) = spec.default {
                Some(v)
            } else {
                None
            };
            (spec, value)
        })
        .collect();
    let error = Server::configure(&Point::new(entries)).err().unwrap();
    assert_eq!(error.key, "queue_limit");
}

#[test]
fn retry_policy_comes_from_the_client_section() {
    let c = config(&[("strategy", Value::Choice("exponential")), ("base", ms(7))]);
    assert_eq!(c.retry.strategy, Strategy::Exponential);
    assert_eq!(c.retry.backoff, BackoffParams { base: SimDuration::from_millis(7), ..BackoffParams::AWS_2015 });
}
