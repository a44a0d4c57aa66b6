use super::*;
use crate::model::ModelKind;
use crate::model::faults::FaultKind;
use crate::params::Value;
use crate::policy::{BackoffParams, Strategy};
use crate::time::{SimDuration, SimTime};

const BUCKET: SimDuration = SimDuration::from_millis(10);

/// A point of the server model with every default, then `changes` applied.
pub(super) fn config(changes: &[(&str, Value)]) -> ServerConfig {
    Server::configure(&ModelKind::Server.point_with(changes)).unwrap()
}

pub(super) fn ms(n: u64) -> Value {
    Value::Duration(SimDuration::from_millis(n))
}

pub(super) fn run_metrics(config: &ServerConfig, seed: u64) -> Vec<f64> {
    Server::simulate(config, RunSettings::new(seed, BUCKET)).metrics
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
    let point = ModelKind::Server.point_with(&[("queue_limit", Value::Count(5))]);
    assert_eq!(Server::configure(&point).err().unwrap().key, "queue_limit");
}

#[test]
fn retry_policy_comes_from_the_client_section() {
    let c = config(&[("strategy", Value::Choice("exponential")), ("base", ms(7))]);
    assert_eq!(c.retry.strategy, Strategy::Exponential);
    assert_eq!(c.retry.backoff, BackoffParams { base: SimDuration::from_millis(7), ..BackoffParams::AWS_2015 });
}

/// One worker, no queue, constant 100 ms service, no network delay: the second of two simultaneous clients is
/// rejected with 503 and a Retry-After of 500 ms. Its own backoff is a constant 1 ms, capped at `cap`.
fn retry_after_case(policy: &'static str, cap: Value) -> Vec<f64> {
    run_metrics(
        &config(&[
            ("clients", Value::Count(2)),
            ("workers", Value::Count(1)),
            ("queue_limit", Value::Count(0)),
            ("service", Value::Choice("constant")),
            ("service_mean", ms(100)),
            ("overload_retry_after", ms(500)),
            ("strategy", Value::Choice("constant")),
            ("base", ms(1)),
            ("cap", cap),
            ("retry_after", Value::Choice(policy)),
        ]),
        7,
    )
}

#[test]
fn an_honoured_retry_after_delays_the_retry_to_at_least_the_hint() {
    let honour = retry_after_case("honour", ms(2_000));
    assert_eq!(honour[metric::REJECTED], 1.0, "one rejection, then the worker is free");
    assert!(honour[metric::COMPLETION_MS] >= 600.0, "retry at 500 ms, served by 600 ms: {}", honour[metric::COMPLETION_MS]);
    let ignore = retry_after_case("ignore", ms(2_000));
    assert!(ignore[metric::REJECTED] > 1.0, "1 ms retries bounce until the worker frees up");
    assert!(ignore[metric::COMPLETION_MS] < 300.0, "{}", ignore[metric::COMPLETION_MS]);
    let capped = retry_after_case("honour-capped", ms(150));
    let done = capped[metric::COMPLETION_MS];
    assert!((250.0..300.0).contains(&done), "hint capped at 150 ms: retry at 150, done at 250: {done}");
}

#[test]
fn a_grpc_pushback_reaches_only_clients_that_read_it_and_a_retry_after_only_the_others() {
    let case = |header: &'static str, retry_after: &'static str, pushback: &'static str| {
        let c = config(&[
            ("clients", Value::Count(2)),
            ("workers", Value::Count(1)),
            ("queue_limit", Value::Count(0)),
            ("service", Value::Choice("constant")),
            ("service_mean", ms(100)),
            ("overload_retry_after", ms(500)),
            ("hint_header", Value::Choice(header)),
            ("strategy", Value::Choice("constant")),
            ("base", ms(1)),
            ("retry_after", Value::Choice(retry_after)),
            ("pushback", Value::Choice(pushback)),
        ]);
        run_metrics(&c, 7)[metric::COMPLETION_MS]
    };
    // Waiting the hint: the retry at 500 ms is served by 600 ms; not reading it: 1 ms retries until the worker is
    // free, done by 300 ms.
    let waited = |done: f64| done >= 600.0;
    assert!(waited(case("grpc-retry-pushback-ms", "ignore", "honour")), "a gRPC client reads the pushback");
    assert!(waited(case("both", "ignore", "honour")));
    assert!(waited(case("both", "honour", "ignore")));
    assert!(!waited(case("grpc-retry-pushback-ms", "honour", "ignore")), "an HTTP client reads no pushback");
    assert!(!waited(case("retry-after", "ignore", "honour")), "a gRPC client reads no Retry-After");
    assert!(waited(case("retry-after", "honour", "ignore")), "the default: Retry-After, read by HTTP clients");
}

#[test]
fn the_rate_limiter_answers_429_and_its_hint_spaces_the_retries() {
    let m = run_metrics(
        &config(&[
            ("clients", Value::Count(5)),
            ("rate_limit", Value::Real(10.0)),
            ("rate_burst", Value::Count(1)),
            ("service", Value::Choice("constant")),
        ]),
        8,
    );
    assert_eq!(m[metric::SUCCEEDED], 5.0);
    assert!(m[metric::THROTTLED] >= 4.0);
    // One token per 100 ms: the fifth request cannot be admitted before 400 ms.
    assert!(m[metric::COMPLETION_MS] >= 400.0, "{}", m[metric::COMPLETION_MS]);
}

#[test]
fn status_only_gives_up_on_disguised_400s_and_body_aware_retries_them() {
    let case = |classifier| {
        run_metrics(
            &config(&[
                ("clients", Value::Count(40)),
                ("disguised_probability", Value::Real(1.0)),
                ("max_attempts", Value::Count(3)),
                ("classifier", Value::Choice(classifier)),
            ]),
            9,
        )
    };
    let status_only = case("status-only");
    assert_eq!(status_only[metric::CALLS], 40.0, "a 400 is never retried by status-only");
    assert_eq!(status_only[metric::FAILED_PERMANENTLY], 40.0);
    let body_aware = case("body-aware");
    assert_eq!(body_aware[metric::CALLS], 120.0, "every attempt is retried up to max_attempts");
    assert_eq!(body_aware[metric::GAVE_UP], 40.0);
    assert_eq!(body_aware[metric::FAILED_PERMANENTLY], 0.0);
}

#[test]
fn body_aware_recovers_work_that_status_only_loses() {
    let case = |classifier| {
        run_metrics(
            &config(&[
                ("clients", Value::Count(2_000)),
                ("disguised_probability", Value::Real(0.3)),
                ("max_attempts", Value::Count(4)),
                ("classifier", Value::Choice(classifier)),
            ]),
            10,
        )
    };
    // Status-only loses every request whose first answer is a disguised 400: about 30%.
    let lost = case("status-only")[metric::FAILED_PERMANENTLY] / 2_000.0;
    assert!((lost - 0.3).abs() < 4.0 * (0.3_f64 * 0.7 / 2_000.0).sqrt(), "lost {lost}");
    // Body-aware loses only requests that draw four in a row: 0.3^4 < 1%.
    let recovered = case("body-aware")[metric::SUCCESS_RATE];
    assert!(recovered > 0.98, "{recovered}");
}

#[test]
fn permanent_errors_are_never_retried() {
    let m = run_metrics(
        &config(&[("clients", Value::Count(10)), ("permanent_probability", Value::Real(1.0)), ("classifier", Value::Choice("body-aware"))]),
        11,
    );
    assert_eq!((m[metric::CALLS], m[metric::FAILED_PERMANENTLY], m[metric::SUCCESS_RATE]), (10.0, 10.0, 0.0));
}

#[test]
fn retries_after_timeouts_duplicate_side_effects_unless_idempotency_keys_are_on() {
    let case = |keys| {
        run_metrics(
            &config(&[
                ("clients", Value::Count(10)),
                ("service", Value::Choice("constant")),
                ("service_mean", ms(100)),
                ("timeout", ms(50)),
                ("max_attempts", Value::Count(3)),
                ("strategy", Value::Choice("constant")),
                ("idempotency_keys", Value::Choice(keys)),
            ]),
            12,
        )
    };
    // Every attempt times out at the client but completes on the server (abandoned, not cancelled): each
    // request's effect is applied three times, two of them duplicates.
    let without = case("off");
    assert_eq!(without[metric::GAVE_UP], 10.0);
    assert_eq!(without[metric::DUPLICATES], 20.0);
    let with = case("on");
    assert_eq!(with[metric::DUPLICATES], 0.0);
    assert_eq!(with[metric::DEDUPLICATED], 20.0, "the same repeats reach the server and are recognised");
    assert_eq!(without[metric::DEDUPLICATED], 0.0);
    assert_eq!(with[metric::CALLS], without[metric::CALLS]);
}

#[test]
fn error_probabilities_may_not_exceed_one_together() {
    let point = ModelKind::Server
        .point_with(&[("error_probability", Value::Real(0.6)), ("permanent_probability", Value::Real(0.6))]);
    assert_eq!(Server::configure(&point).err().unwrap().key, "permanent_probability");
}

pub(super) fn text(value: &str) -> Value {
    Value::Text(value.into())
}

#[test]
fn a_scheduled_spike_brings_the_expected_arrivals() {
    let schedule = "0s=40, 20s=80, 25s=40";
    let m = run_metrics(
        &config(&[("kind", Value::Choice("open")), ("schedule", text(schedule)), ("duration", ms(60_000))]),
        13,
    );
    // 55 s at 40/s + 5 s at 80/s = 2,600 expected; Poisson sd ≈ 51.
    assert!((m[metric::REQUESTS] - 2_600.0).abs() < 4.0 * 2_600_f64.sqrt(), "{}", m[metric::REQUESTS]);
}

#[test]
fn a_fail_fast_window_rejects_every_attempt_inside_it() {
    let m = run_metrics(
        &config(&[
            ("kind", Value::Choice("open")),
            ("rate", Value::Real(100.0)),
            ("duration", ms(10_000)),
            ("faults", text("2s..4s fail-fast")),
            ("max_attempts", Value::Count(1)),
        ]),
        14,
    );
    // Arrivals in the 2 s window: Poisson(200).
    assert!((m[metric::GAVE_UP] - 200.0).abs() < 4.0 * 200_f64.sqrt(), "{}", m[metric::GAVE_UP]);
    assert_eq!(m[metric::GAVE_UP], m[metric::REJECTED]);
}

#[test]
fn a_black_hole_needs_a_timeout_and_then_times_out_its_attempts() {
    let without = ModelKind::Server.point_with(&[("faults", text("1s..2s black-hole"))]);
    assert_eq!(Server::configure(&without).err().unwrap().key, "faults");
    let m = run_metrics(
        &config(&[
            ("kind", Value::Choice("open")),
            ("rate", Value::Real(100.0)),
            ("duration", ms(5_000)),
            ("faults", text("1s..2s black-hole")),
            ("timeout", ms(200)),
            ("max_attempts", Value::Count(1)),
        ]),
        15,
    );
    assert!((m[metric::TIMEOUTS] - 100.0).abs() < 4.0 * 10.0, "{}", m[metric::TIMEOUTS]);
    assert_eq!(m[metric::TIMEOUTS], m[metric::GAVE_UP]);
}

#[test]
fn a_slowdown_multiplies_service_time() {
    let m = run_metrics(
        &config(&[
            ("clients", Value::Count(10)),
            ("service", Value::Choice("constant")),
            ("service_mean", ms(10)),
            ("faults", text("0s..1s slowdown x3")),
        ]),
        16,
    );
    assert!((m[metric::LATENCY_MEAN_MS] - 30.0).abs() < 1e-6, "{}", m[metric::LATENCY_MEAN_MS]);
}

#[test]
fn recovery_is_measured_from_the_trigger_and_absent_when_it_never_comes() {
    // 1,000 requests/s in 1 s buckets: a healthy bucket's goodput is within a few percent of its offered load
    // (Poisson sd ≈ 32), so the 90% threshold is crossed only by real trouble.
    let base = [
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(1_000.0)),
        ("duration", ms(30_000)),
        ("workers", Value::Count(4)),
        ("service_mean", ms(1)),
        ("timeout", ms(500)),
        ("strategy", Value::Choice("full-jitter")),
        ("base", ms(100)),
        ("cap", ms(2_000)),
        ("max_attempts", Value::Count(4)),
    ];
    let second = SimDuration::from_secs(1);
    let mut outage = base.to_vec();
    outage.push(("faults", text("10s..12s fail-fast")));
    let m = Server::simulate(&config(&outage), RunSettings::new(17, second)).metrics;
    assert_eq!(m[metric::RECOVERED], 1.0);
    // Retries of requests rejected in the outage finish within a few seconds of its end.
    assert!((0.0..5_000.0).contains(&m[metric::RECOVERY_MS]), "{}", m[metric::RECOVERY_MS]);

    let mut endless = base.to_vec();
    endless.push(("faults", text("10s..40s fail-fast")));
    endless.push(("trigger_end", ms(12_000)));
    let m = Server::simulate(&config(&endless), RunSettings::new(17, second)).metrics;
    assert_eq!(m[metric::RECOVERED], 0.0);
    assert!(m[metric::RECOVERY_MS].is_nan());
}

#[test]
fn connection_resets_are_retried_by_every_classifier() {
    let m = run_metrics(
        &config(&[
            ("kind", Value::Choice("open")),
            ("rate", Value::Real(100.0)),
            ("duration", ms(10_000)),
            ("faults", text("2s..4s reset")),
            ("strategy", Value::Choice("full-jitter")),
            ("base", ms(500)),
            ("max_attempts", Value::Count(10)),
            ("classifier", Value::Choice("status-only")),
        ]),
        18,
    );
    assert!(m[metric::REJECTED] > 100.0, "the window resets a couple of hundred attempts");
    assert_eq!(m[metric::FAILED_PERMANENTLY], 0.0);
    assert_eq!(m[metric::SUCCESS_RATE], 1.0, "every reset is retried until the window closes");
}

#[test]
fn cancelled_attempts_free_their_queue_place_at_once() {
    // One worker busy for 10 s with the first client's attempt, a queue of one place, attempts that time out
    // after 100 ms and retry 50 ms later. Abandoned, the second client's first attempt holds the place until
    // the worker takes it at 10 s, so every retry of both clients is rejected (2 × 19). Cancelled, the place is
    // free again at each timeout and only one of the two retries arriving together is turned away (19).
    let case = |on_timeout| {
        run_metrics(
            &config(&[
                ("clients", Value::Count(2)),
                ("workers", Value::Count(1)),
                ("queue_limit", Value::Count(1)),
                ("service", Value::Choice("constant")),
                ("service_mean", ms(10_000)),
                ("timeout", ms(100)),
                ("strategy", Value::Choice("constant")),
                ("base", ms(50)),
                ("max_attempts", Value::Count(20)),
                ("on_timeout", Value::Choice(on_timeout)),
            ]),
            19,
        )
    };
    let abandon = case("abandon");
    let cancel = case("cancel");
    assert_eq!(abandon[metric::REJECTED], 38.0);
    assert_eq!(cancel[metric::REJECTED], 19.0);
}

#[test]
fn an_outage_adds_one_fault_window_and_places_the_trigger_on_it() {
    let c = config(&[
        ("faults", text("1s..2s slowdown x2")),
        ("outage_start", ms(5_000)),
        ("outage_duration", ms(1_500)),
        ("timeout", ms(100)),
    ]);
    let at = |ms: u64| SimTime::from_nanos(ms * 1_000_000);
    let windows: Vec<(SimTime, SimTime, FaultKind)> = c.faults.windows().iter().map(|w| (w.start, w.end, w.kind)).collect();
    assert_eq!(
        windows,
        [(at(1_000), at(2_000), FaultKind::Slowdown(2.0)), (at(5_000), at(6_500), FaultKind::BlackHole)],
        "black-hole unless outage_kind says otherwise"
    );
    assert_eq!((c.trigger_start, c.trigger_end), (Some(at(5_000)), Some(at(6_500))));

    let c = config(&[
        ("outage_start", ms(5_000)),
        ("outage_duration", ms(1_000)),
        ("outage_kind", Value::Choice("fail-fast")),
        ("trigger_end", ms(7_000)),
    ]);
    assert_eq!(c.faults.at(at(5_500)), Some(FaultKind::FailFast));
    assert_eq!((c.trigger_start, c.trigger_end), (Some(at(5_000)), Some(at(7_000))), "an explicit trigger wins");

    let c = config(&[("outage_start", ms(5_000)), ("outage_duration", ms(0)), ("timeout", ms(100))]);
    assert!(c.faults.windows().is_empty(), "a zero-length outage adds no window");
    assert_eq!((c.trigger_start, c.trigger_end), (None, Some(at(5_000))), "but recovery is measured from it");
}

#[test]
fn outage_parameters_are_refused_alone_overlapping_or_black_holed_without_a_timeout() {
    let refused = |changes: &[(&str, Value)]| Server::configure(&ModelKind::Server.point_with(changes)).unwrap_err();
    let error = refused(&[("outage_duration", ms(1_000)), ("timeout", ms(100))]);
    assert_eq!(error.key, "outage_duration");
    assert!(error.message.contains("needs `outage_start`"), "{}", error.message);
    let error = refused(&[("outage_start", ms(1_000))]);
    assert_eq!(error.key, "outage_start");
    assert!(error.message.contains("without `outage_duration`"), "{}", error.message);
    assert_eq!(refused(&[("outage_kind", Value::Choice("reset"))]).key, "outage_kind");
    let error = refused(&[
        ("faults", text("1s..3s fail-fast")),
        ("outage_start", ms(2_000)),
        ("outage_duration", ms(2_000)),
        ("outage_kind", Value::Choice("reset")),
    ]);
    assert_eq!(error.key, "outage_duration");
    assert!(error.message.contains("overlaps"), "{}", error.message);
    let error = refused(&[("outage_start", ms(1_000)), ("outage_duration", ms(1_000))]);
    assert_eq!(error.key, "outage_duration");
    assert!(error.message.contains("needs a client `timeout`"), "{}", error.message);
}

#[test]
fn an_outage_behaves_like_the_same_fault_window() {
    let base = [
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(200.0)),
        ("duration", ms(5_000)),
        ("timeout", ms(200)),
        ("max_attempts", Value::Count(2)),
        ("strategy", Value::Choice("full-jitter")),
    ];
    let mut by_faults = base.to_vec();
    by_faults.push(("faults", text("1s..2s black-hole")));
    let mut by_outage = base.to_vec();
    by_outage.extend([("outage_start", ms(1_000)), ("outage_duration", ms(1_000))]);
    let a = Server::simulate(&config(&by_faults), RunSettings::new(18, BUCKET));
    let b = Server::simulate(&config(&by_outage), RunSettings::new(18, BUCKET));
    assert_eq!(a.metrics[metric::TIMEOUTS], b.metrics[metric::TIMEOUTS]);
    assert!(a.metrics[metric::TIMEOUTS] > 100.0, "the window swallowed attempts");
    assert_eq!(a.highlights, b.highlights);
    assert_eq!(a.timeline, b.timeline, "same window, same seed: the same run");
}

/// The claim of scenarios/metastable.toml on a small instance: 90% load on 10 workers (capacity 1,000/s), a 2 s
/// black-hole trigger, 1 s timeouts, 3 attempts, abandoned work still served.
fn metastable_case(outage: u64, limiter: &'static str, seed: u64) -> Vec<f64> {
    let c = config(&[
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(900.0)),
        ("duration", ms(20_000)),
        ("workers", Value::Count(10)),
        ("service_mean", ms(10)),
        ("network_delay", ms(1)),
        ("outage_start", ms(5_000)),
        ("outage_duration", ms(outage)),
        ("timeout", ms(1_000)),
        ("max_attempts", Value::Count(3)),
        ("strategy", Value::Choice("exponential")),
        ("base", ms(100)),
        ("cap", ms(2_000)),
        ("limiter", Value::Choice(limiter)),
        ("budget", Value::Real(0.1)),
    ]);
    Server::simulate(&c, RunSettings::new(seed, SimDuration::from_millis(100))).metrics
}

#[test]
fn retries_without_a_budget_stay_stuck_after_a_trigger_and_a_budget_recovers() {
    for seed in 1..=5 {
        let calm = metastable_case(0, "none", seed);
        assert_eq!(calm[metric::RECOVERED], 1.0, "seed {seed}: stable without the trigger");
        assert_eq!(calm[metric::TIMEOUTS], 0.0, "seed {seed}: no attempt waits 1 s at 90% load");

        let stuck = metastable_case(2_000, "none", seed);
        assert_eq!(stuck[metric::RECOVERED], 0.0, "seed {seed}: the trigger ends at 7 s, the overload never does");
        assert!(stuck[metric::RECOVERY_MS].is_nan());
        assert!(stuck[metric::AMPLIFICATION] > 2.0, "seed {seed}: most requests use all 3 attempts");
        assert!(stuck[metric::SUCCESS_RATE] < 0.6, "seed {seed}: {}", stuck[metric::SUCCESS_RATE]);

        let budget = metastable_case(2_000, "budget", seed);
        assert_eq!(budget[metric::RECOVERED], 1.0, "seed {seed}: a 10% budget recovers");
        assert!(budget[metric::RECOVERY_MS] < 1_000.0, "seed {seed}: {}", budget[metric::RECOVERY_MS]);
        assert!(budget[metric::AMPLIFICATION] < 1.1, "seed {seed}: {}", budget[metric::AMPLIFICATION]);
    }
}

#[test]
fn windowed_metrics_look_at_the_requests_sent_during_and_after_the_outage() {
    // 200 requests/s against a fast server, black-holed from 2 s to 3 s of a 6 s run; 100 ms timeouts and 3
    // attempts. Requests sent during the outage time out and retry into it; those sent after it succeed at once.
    let c = config(&[
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(200.0)),
        ("duration", ms(6_000)),
        ("service", Value::Choice("constant")),
        ("outage_start", ms(2_000)),
        ("outage_duration", ms(1_000)),
        ("timeout", ms(100)),
        ("strategy", Value::Choice("constant")),
        ("base", ms(50)),
        ("cap", ms(50)),
        ("max_attempts", Value::Count(3)),
    ]);
    let m = run_metrics(&c, 9);
    assert_eq!((m[metric::SUCCESS_RATE_AFTER], m[metric::AMPLIFICATION_AFTER]), (1.0, 1.0));
    // Within the outage, only requests sent in its last ~300 ms (three attempts 150 ms apart) can reach the
    // server after it: most of the second's requests fail after all three attempts.
    assert!(m[metric::SUCCESS_RATE_DURING] < 0.5, "{}", m[metric::SUCCESS_RATE_DURING]);
    assert!(m[metric::AMPLIFICATION_DURING] > 2.5, "{}", m[metric::AMPLIFICATION_DURING]);
    assert!(m[metric::AMPLIFICATION_DURING] > m[metric::AMPLIFICATION] && m[metric::AMPLIFICATION] > 1.0);
    assert!(m[metric::LATENCY_P99_MS_DURING] > m[metric::LATENCY_P99_MS_AFTER]);
    // Without a trigger the windows are undefined.
    let calm = run_metrics(&config(&[("kind", Value::Choice("open")), ("duration", ms(2_000))]), 9);
    assert!(calm[metric::SUCCESS_RATE_DURING].is_nan() && calm[metric::AMPLIFICATION_AFTER].is_nan());
}

#[test]
fn retry_on_lists_what_is_retried_and_an_unlisted_failure_ends_the_request() {
    let case = |retry_on: &str, changes: &[(&str, Value)]| {
        let mut all = vec![("clients", Value::Count(40)), ("max_attempts", Value::Count(3))];
        all.extend_from_slice(changes);
        all.push(("retry_on", Value::Text(retry_on.into())));
        run_metrics(&config(&all), 12)
    };
    let errors = [("error_probability", Value::Real(1.0))];
    // A 502 left out of the list ends each request at its first answer, as a permanent failure.
    let unlisted = case("503, timeout", &errors);
    assert_eq!((unlisted[metric::CALLS], unlisted[metric::FAILED_PERMANENTLY]), (40.0, 40.0));
    let listed = case("502", &errors);
    assert_eq!((listed[metric::CALLS], listed[metric::GAVE_UP]), (120.0, 40.0), "retried up to max_attempts");
    // The disguised 400 is retried when listed as `disguised` (or as 400), as body-aware does.
    let disguised = [("disguised_probability", Value::Real(1.0))];
    assert_eq!(case("disguised", &disguised)[metric::CALLS], 120.0);
    assert_eq!(case("502, 503", &disguised)[metric::CALLS], 40.0);
    // A timeout left out of the list gives up at once: counted in gave_up, not retried.
    let black_hole = [
        ("timeout", ms(100)),
        ("outage_start", ms(0)),
        ("outage_duration", ms(10_000)),
        ("outage_kind", Value::Choice("black-hole")),
    ];
    let no_timeouts = case("503", &black_hole);
    assert_eq!((no_timeouts[metric::CALLS], no_timeouts[metric::GAVE_UP]), (40.0, 40.0));
    assert_eq!(case("timeout", &black_hole)[metric::CALLS], 120.0);
}

#[test]
fn retry_on_refuses_unknown_outcomes_and_a_classifier_beside_it() {
    let point = |changes: &[(&str, Value)]| Server::configure(&ModelKind::Server.point_with(changes));
    let bad = point(&[("retry_on", Value::Text("503, tiemout".into()))]).unwrap_err();
    assert_eq!(bad.key, "retry_on");
    assert!(bad.message.contains("unknown outcome \"tiemout\""), "{}", bad.message);
    let both = point(&[("retry_on", Value::Text("503".into())), ("classifier", Value::Choice("body-aware"))]);
    assert!(both.unwrap_err().message.contains("either `classifier` or `retry_on`"));
    // A preset brings its library's list: urllib3 retries 413, 429 and 503, not 502.
    let urllib3 = Server::configure(&ModelKind::Server.point_with(&[("strategy", Value::Choice("urllib3"))])).unwrap();
    assert_eq!(urllib3.retry_on, crate::policy::RetryOn::parse("413, 429, 503, timeout, reset").unwrap());
}

/// A traced run sends each retry when its sleep ends (a `RetryDue` event); an untraced one sends it when decided
/// (`sends_at_decision`). Both hand out the same draws in the same order, so with continuous service times (no
/// two events at the same nanosecond, whose order may differ) every metric and timeline bucket has the same bits,
/// but `events`, which counts one `RetryDue` per retry more in the traced run.
#[test]
fn sending_retries_when_decided_moves_nothing_but_the_event_count() {
    for (strategy, service) in [("full-jitter", "exponential"), ("decorrelated-jitter", "lognormal")] {
        let c = config(&[
            ("clients", Value::Count(300)),
            ("workers", Value::Count(2)),
            ("queue_limit", Value::Count(3)),
            ("service", Value::Choice(service)),
            ("service_mean", ms(2)),
            ("network_delay", ms(1)),
            ("strategy", Value::Choice(strategy)),
        ]);
        let plain = Server::simulate(&c, RunSettings::new(7, BUCKET));
        let traced = Server::simulate(&c, RunSettings { trace: true, ..RunSettings::new(7, BUCKET) });
        let bits = |values: &[f64]| values.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let but_events = |metrics: &[f64]| {
            let mut metrics = metrics.to_vec();
            metrics[metric::EVENTS] = 0.0;
            bits(&metrics)
        };
        assert!(plain.metrics[metric::RETRIES] > 100.0, "{strategy}: the server must be contended");
        assert_eq!(but_events(&plain.metrics), but_events(&traced.metrics), "{strategy}");
        assert_eq!(bits(&plain.timeline), bits(&traced.timeline), "{strategy}");
        assert_eq!(plain.latency, traced.latency, "{strategy}");
        let saved = traced.metrics[metric::EVENTS] - plain.metrics[metric::EVENTS];
        assert_eq!(saved, plain.metrics[metric::RETRIES], "{strategy}: one event saved per retry");
    }
}

/// A trace says where each attempt was at the server: it arrived one network delay after it left, waited, and a
/// worker served it within the attempt's span. With two workers no three services overlap, and every attempt
/// served before its answer is in the trace; a black-holed attempt arrives and is never served.
#[test]
fn a_trace_records_each_attempts_arrival_and_service_at_the_server() {
    let c = config(&[
        ("clients", Value::Count(200)),
        ("workers", Value::Count(2)),
        ("queue_limit", Value::Count(5)),
        ("service_mean", ms(2)),
        ("network_delay", ms(1)),
        ("timeout", ms(40)),
        ("faults", Value::Text("300ms..320ms black-hole".into())),
    ]);
    let traced = Server::simulate(&c, RunSettings { trace: true, ..RunSettings::new(3, BUCKET) });
    let mut services = Vec::new();
    let one_ms = SimDuration::from_millis(1);
    for span in &traced.spans {
        let at = span.at_server.unwrap_or_else(|| panic!("every attempt reaches the server: {span:?}"));
        assert_eq!(at.arrived, span.start + one_ms, "{span:?}");
        match (span.outcome, at.service) {
            ("success", Some((start, end))) => {
                assert!(at.arrived <= start && start < end && end + one_ms == span.end, "{span:?}");
                services.push((start, end));
            }
            ("success", None) => panic!("a served attempt has its service: {span:?}"),
            (_, Some((start, end))) => assert!(at.arrived <= start && start < end, "{span:?}"),
            (_, None) => {}
        }
    }
    assert!(services.len() >= 200, "{}", services.len());
    let held = traced.spans.iter().filter(|span| span.outcome == "timeout" && span.at_server.unwrap().service.is_none());
    assert!(held.count() > 0, "the black hole holds attempts until they time out");
    // At any service start, at most two services are under way (this one included).
    for &(start, _) in &services {
        let busy = services.iter().filter(|&&(s, e)| s <= start && start < e).count();
        assert!(busy <= 2, "{busy} services at once at {start:?}");
    }
}
