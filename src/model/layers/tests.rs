//! Anchors and behaviour of the layered model.

use super::*;
use crate::time::SimDuration;
use crate::model::ModelKind;
use crate::policy::limiters::StartLimit;
use crate::stats::{Estimate, t_975};

const BUCKET: SimDuration = SimDuration::from_millis(100);

/// Half-width of the 99% CI of 10 replicates: the 95% one scaled by t(0.995, 9)/t(0.975, 9).
fn ci99(estimate: Estimate) -> f64 {
    estimate.ci95 / t_975(9) * 3.249836
}

fn config(changes: &[(&str, Value)]) -> LayersConfig {
    Layers::configure(&ModelKind::Layers.point_with(changes)).unwrap()
}

fn metrics(changes: &[(&str, Value)], seed: u64) -> Vec<f64> {
    Layers::simulate(&config(changes), RunSettings::new(seed, BUCKET)).metrics
}

#[test]
fn a_hard_down_bottom_sees_a_to_the_l_calls_per_request() {
    // docs/references.md#retry-amplification: 3 layers × 3 attempts = 27; 4^3 = 64; 3^5 = 243; all layers together Σ A^i.
    for (layers, attempts) in [(3_i64, 3_i64), (3, 4), (5, 3), (1, 2)] {
        let m = metrics(
            &[("layers", Value::Count(layers)), ("attempts", Value::Count(attempts)), ("requests", Value::Count(50))],
            1,
        );
        let bottom = (attempts as f64).powi(layers as i32);
        let total: f64 = (1..=layers).map(|i| (attempts as f64).powi(i as i32)).sum();
        assert_eq!(m[metric::BOTTOM_CALLS_PER_REQUEST], bottom, "{layers} layers × {attempts}");
        assert_eq!(m[metric::AMPLIFICATION], total);
        assert_eq!(m[metric::SUCCESS_RATE], 0.0);
        for layer in 0..layers as usize {
            assert_eq!(m[metric::AMPLIFICATION_L1 + layer], (attempts as f64).powi(layer as i32 + 1));
        }
    }
}

#[test]
fn retrying_only_at_the_top_or_the_bottom_sends_a_calls() {
    for (placement, entry_calls) in [("top", 3.0), ("bottom", 1.0)] {
        let changes = [("layers", Value::Count(4)), ("attempts", Value::Count(3)), ("placement", Value::Choice(placement))];
        let m = metrics(&changes, 2);
        assert_eq!(m[metric::BOTTOM_CALLS_PER_REQUEST], 3.0, "{placement}");
        // Retrying at the top multiplies every layer's calls by 3; at the bottom only the last one's.
        assert_eq!(m[metric::AMPLIFICATION_L1], entry_calls, "{placement}");
        assert_eq!(m[metric::AMPLIFICATION_L1 + 2], entry_calls, "{placement}");
    }
}

#[test]
fn independent_failures_give_the_geometric_load_and_success() {
    // One layer, 4 attempts (3 retries), p = 0.5: success 1 − 0.5^4 = 0.9375, load (1 − 0.5^4)/0.5 = 1.875.
    let changes = [
        ("layers", Value::Count(1)),
        ("attempts", Value::Count(4)),
        ("failure_probability", Value::Real(0.5)),
        ("requests", Value::Count(20_000)),
    ];
    let runs: Vec<Vec<f64>> = (0..10).map(|seed| metrics(&changes, seed)).collect();
    let success = Estimate::of(&runs.iter().map(|m| m[metric::SUCCESS_RATE]).collect::<Vec<_>>());
    let load = Estimate::of(&runs.iter().map(|m| m[metric::BOTTOM_CALLS_PER_REQUEST]).collect::<Vec<_>>());
    assert!((success.mean - 0.9375).abs() <= ci99(success), "{success:?}");
    assert!((load.mean - 1.875).abs() <= ci99(load), "{load:?}");
    assert!(success.ci95 < 0.005 && load.ci95 < 0.02, "tight enough to mean something");
    // Across layers: expected bottom calls (1 − p^(k^L))/(1 − p), here k = 2, L = 3, p = 0.5.
    let changes = [
        ("layers", Value::Count(3)),
        ("attempts", Value::Count(2)),
        ("failure_probability", Value::Real(0.5)),
        ("requests", Value::Count(20_000)),
    ];
    let bottom: Vec<f64> = (0..10).map(|seed| metrics(&changes, seed)[metric::BOTTOM_CALLS_PER_REQUEST]).collect();
    let bottom = Estimate::of(&bottom);
    let expected = (1.0 - 0.5_f64.powi(8)) / 0.5;
    assert!((bottom.mean - expected).abs() <= ci99(bottom), "{bottom:?} vs {expected}");
    assert!(bottom.ci95 < 0.02);
}

#[test]
fn a_budget_of_b_per_layer_amplifies_by_one_plus_b_per_layer() {
    // docs/references.md#retry-amplification: budget b at p = 1 gives (1 + b)^L.
    let m = metrics(
        &[
            ("layers", Value::Count(3)),
            ("attempts", Value::Count(10)),
            ("limiter", Value::Choice("budget")),
            ("budget", Value::Real(0.2)),
            ("requests", Value::Count(20_000)),
        ],
        3,
    );
    let expected = 1.2_f64.powi(3);
    assert!((m[metric::BOTTOM_CALLS_PER_REQUEST] - expected).abs() < 0.01, "{} vs {expected}", m[metric::BOTTOM_CALLS_PER_REQUEST]);
}

#[test]
fn limiters_cap_retries_at_total_failure() {
    // One caller, 4 attempts, everything fails, 10,000 requests from one client.
    let run = |limiter: &'static str| {
        metrics(
            &[
                ("layers", Value::Count(1)),
                ("attempts", Value::Count(4)),
                ("limiter", Value::Choice(limiter)),
                ("requests", Value::Count(10_000)),
            ],
            4,
        )
    };
    assert_eq!(run("none")[metric::BOTTOM_CALLS_PER_REQUEST], 4.0);
    // Token bucket, 0.1 per call, capacity 5: r = 0.1·(N + r), so r = N/9, plus the 5 initial tokens.
    let bucket = run("token-bucket")[metric::BOTTOM_CALLS_PER_REQUEST];
    assert!((bucket - (1.0 + 1.0 / 9.0 + 5.0 / 10_000.0)).abs() < 1e-3, "{bucket}");
    // gRPC allows a retry after each of the first 4 failed calls (tokens 9, 8, 7, 6 > 5) and none after the
    // 5th, at 100% failure for good; requests that run out of attempts first use fewer.
    let grpc_retries = (run("grpc")[metric::BOTTOM_CALLS_PER_REQUEST] - 1.0) * 10_000.0;
    assert!((3.0..=4.0).contains(&grpc_retries.round()), "{grpc_retries}");
    // The AWS quota pays for 100 retries, then none.
    assert_eq!(run("aws-quota")[metric::BOTTOM_CALLS_PER_REQUEST], 1.0 + 100.0 / 10_000.0);
}

/// Runs the only point of a scenario text, `replicates` times with seeds 0, 1, ….
fn runs_of(text: &str, replicates: u64) -> Vec<Vec<f64>> {
    let scenario = crate::scenario::Scenario::from_source(std::path::Path::new("t.toml"), text.to_owned())
        .unwrap_or_else(|e| panic!("{e}"));
    let points = crate::scenario::plan(&scenario).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(points.len(), 1);
    (0..replicates).map(|seed| points[0].config.simulate(RunSettings::new(seed, BUCKET)).metrics).collect()
}

fn estimate(runs: &[Vec<f64>], index: usize) -> Estimate {
    Estimate::of(&runs.iter().map(|m| m[index]).collect::<Vec<_>>())
}

#[test]
fn a_graph_fans_out_and_counts_each_service_in_breadth_first_order() {
    // api calls auth and catalog once each; each of those calls db twice. Nothing fails.
    let runs = runs_of(
        r#"
schema_version = 1
[model]
kind = "layers"
failure_probability = 0.0
[workload]
requests = 100
[layer.api]
calls = ["auth", "catalog"]
[layer.auth]
calls = "db"
fanout = 2
[layer.catalog]
calls = "db"
fanout = 2
[layer.db]
"#,
        1,
    );
    let m = &runs[0];
    // Order: api, auth, catalog, db. db sees 2 (via auth) + 2 (via catalog) per request.
    assert_eq!(m[metric::AMPLIFICATION_L1], 1.0);
    assert_eq!(m[metric::AMPLIFICATION_L1 + 1], 1.0);
    assert_eq!(m[metric::AMPLIFICATION_L1 + 2], 1.0);
    assert_eq!(m[metric::AMPLIFICATION_L1 + 3], 4.0);
    assert!(m[metric::AMPLIFICATION_L1 + 4].is_nan());
    assert_eq!(m[metric::BOTTOM_CALLS_PER_REQUEST], 4.0);
    assert_eq!(m[metric::AMPLIFICATION], 7.0);
    assert_eq!(m[metric::SUCCESS_RATE], 1.0);
}

#[test]
fn a_fan_out_succeeds_only_if_every_branch_does() {
    // One call fans out to 10 leaves that each fail with p = 0.1; no retries: success 0.9^10 = 0.3487.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
attempts = 1
failure_probability = 0.1
[workload]
requests = 20000
[layer.front]
calls = "leaf"
fanout = 10
[layer.leaf]
"#;
    let runs = runs_of(text, 10);
    let success = estimate(&runs, metric::SUCCESS_RATE);
    let expected = 0.9_f64.powi(10);
    assert!((success.mean - expected).abs() <= ci99(success), "{success:?} vs {expected}");
    assert!(success.ci95 < 0.005);
    // All ten leaf calls leave at once, before any answer, so each request sends exactly ten.
    assert!(runs.iter().all(|m| m[metric::BOTTOM_CALLS_PER_REQUEST] == 10.0), "{:?}", runs.iter().map(|m| m[metric::BOTTOM_CALLS_PER_REQUEST]).collect::<Vec<_>>());
}

#[test]
fn a_service_with_one_worker_is_an_m_m_1_queue() {
    // docs/references.md#queues: λ = 0.8, μ = 1 per ms: the response time is exponential with mean 5 ms, so its
    // median is 5·ln 2 = 3.466 ms and its 99th percentile 5·ln 100 = 23.03 ms (zero network delay).
    let text = r#"
schema_version = 1
[model]
kind = "layers"
layers = 1
failure_probability = 0.0
workers = 1
service = "exponential"
service_time = "1ms"
hop_delay = "0ms"
[workload]
requests = 200000
rate = 800
"#;
    let runs = runs_of(text, 10);
    for (index, expected) in [(metric::LATENCY_P50_MS, 5.0 * 2_f64.ln()), (metric::LATENCY_P99_MS, 5.0 * 100_f64.ln())]
    {
        let measured = estimate(&runs, index);
        // The histogram reports bucket midpoints, within 1/128 of the value.
        let tolerance = ci99(measured) + expected / 128.0;
        assert!((measured.mean - expected).abs() <= tolerance, "{measured:?} vs {expected}");
        assert!(measured.ci95 < 0.05 * expected, "{measured:?}");
    }
}

#[test]
fn a_fixed_hedge_goes_out_for_the_slow_tail_only_and_the_cap_holds() {
    // Exponential work with mean 10 ms and instant hops: the first copy is still unanswered at 20 ms with
    // probability e^−2 = 0.1353, which is the expected hedges per request.
    let text = |extra: &str| {
        format!(
            r#"
schema_version = 1
[model]
kind = "layers"
layers = 1
failure_probability = 0.0
service = "exponential"
service_time = "10ms"
hop_delay = "0ms"
[workload]
requests = 20000
[client]
hedge = "fixed"
hedge_delay = "20ms"
{extra}
"#
        )
    };
    let runs = runs_of(&text(""), 10);
    let hedges = estimate(&runs, metric::HEDGES_PER_REQUEST);
    let expected = (-2.0_f64).exp();
    assert!((hedges.mean - expected).abs() <= ci99(hedges), "{hedges:?} vs {expected}");
    assert_eq!(estimate(&runs, metric::HEDGES_PER_REQUEST_L1).mean, hedges.mean);
    // The median answer is unchanged (below the hedge delay); the p99 drops from 10·ln 100 = 46 ms to about
    // 20 ms + the faster of two fresh copies.
    assert!(estimate(&runs, metric::LATENCY_P99_MS).mean < 40.0);
    let capped = runs_of(&text("hedge_max_extra = 0.05"), 3);
    assert!(capped.iter().all(|m| m[metric::HEDGES_PER_REQUEST] <= 0.05 && m[metric::HEDGES_PER_REQUEST] > 0.045), "{capped:?}");
}

#[test]
fn timeouts_abandon_attempts_and_count_as_failures() {
    // Work takes 50 ms but the user's client waits 20 ms per attempt: every one of 3 attempts times out.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
failure_probability = 0.0
service_time = "50ms"
[workload]
requests = 100
[client]
timeout = "20ms"
max_attempts = 3
[layer.front]
calls = "back"
timeout = "1s"
[layer.back]
"#;
    let m = &runs_of(text, 1)[0];
    assert_eq!(m[metric::SUCCESS_RATE], 0.0);
    assert_eq!(m[metric::TIMEOUTS_PER_REQUEST], 3.0);
    // The abandoned attempts still run to the bottom: front does not cancel what it called.
    assert_eq!(m[metric::BOTTOM_CALLS_PER_REQUEST], 3.0);
}

#[test]
fn a_failed_branch_cancels_its_siblings_down_the_graph() {
    // front calls a (fails at once) and b (slow, 10 s); b calls c. The request fails as soon as a does, and b's
    // work is cancelled before it calls c, so c never sees a call.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
attempts = 1
failure_probability = 0.0
[workload]
requests = 50
[layer.front]
calls = ["a", "b"]
[layer.a]
failure_probability = 1.0
[layer.b]
calls = "c"
workers = 1
service_time = "10s"
[layer.c]
"#;
    let m = &runs_of(text, 1)[0];
    assert_eq!(m[metric::SUCCESS_RATE], 0.0);
    // Order: front, a, b, c.
    assert_eq!(m[metric::AMPLIFICATION_L1 + 1], 1.0);
    assert_eq!(m[metric::AMPLIFICATION_L1 + 2], 1.0);
    // Only the first request's b call ever got to work (one worker, 10 s); the rest were cancelled in its
    // queue, and that one was cancelled before it called c.
    assert_eq!(m[metric::AMPLIFICATION_L1 + 3], 0.0);
    assert!(m[metric::LATENCY_P50_MS].is_nan());
}

#[test]
fn adaptive_throttling_settles_where_the_client_sends_twice_what_is_accepted() {
    // Google SRE client-side throttling (K = 2) in front of a one-worker service with no queue and 10 ms of
    // work: at a sending rate s the service accepts A = s/(1 + 0.01·s) per second (Erlang loss), and the
    // client settles where it sends K·A, i.e. s = 2s/(1 + 0.01·s): s = 100/s, A = 50/s. Of 1,000 requests/s
    // it therefore rejects 90% locally; the first second or so, before the window fills, rejects fewer.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
layers = 1
attempts = 1
failure_probability = 0.0
workers = 1
queue_limit = 0
service_time = "10ms"
hop_delay = "0ms"
limiter = "sre-throttle"
[workload]
requests = 60000
rate = 1000
"#;
    let runs = runs_of(text, 10);
    let rejected = estimate(&runs, metric::REJECTED_LOCALLY_PER_REQUEST);
    let success = estimate(&runs, metric::SUCCESS_RATE);
    // Start-up: the window begins empty, so during about the first second of the 60 s run fewer are rejected
    // (at most 0.9 fewer) and more succeed (at most 1/11 instead of 1/20, the Erlang loss at 1,000/s).
    let start_up = 1.0 / 60.0;
    assert!(rejected.mean <= 0.9 + ci99(rejected) && rejected.mean >= 0.9 - 0.9 * start_up - ci99(rejected), "{rejected:?}");
    let success_shift = (1.0 / 11.0 - 0.05) * start_up;
    assert!(success.mean >= 0.05 - ci99(success) && success.mean <= 0.05 + success_shift + ci99(success), "{success:?}");
}

#[test]
fn limiter_knobs_tune_the_shipped_limiters() {
    // One caller, 4 attempts, total failure, 10,000 requests. A per-success bucket never refills here, so only
    // its 5 starting tokens are spent; a bigger per-call deposit buys proportionally more retries.
    let run = |changes: &[(&str, Value)]| {
        let mut all = vec![
            ("layers", Value::Count(1)),
            ("attempts", Value::Count(4)),
            ("requests", Value::Count(10_000)),
            ("limiter", Value::Choice("token-bucket")),
        ];
        all.extend_from_slice(changes);
        metrics(&all, 4)[metric::BOTTOM_CALLS_PER_REQUEST]
    };
    assert_eq!(run(&[("deposit_rule", Value::Choice("per-success"))]), 1.0 + 5.0 / 10_000.0);
    // Per call, deposit d: retries r = d·(N + r), so r/N = d/(1 − d), plus the 5 starting tokens.
    let r = run(&[("bucket_deposit", Value::Real(0.2))]);
    assert!((r - (1.0 + 0.25 + 5.0 / 10_000.0)).abs() < 1e-3, "{r}");
    let zero = Layers::configure(&ModelKind::Layers.point_with(&[
        ("limiter", Value::Choice("grpc")),
        ("token_ratio", Value::Real(0.0)),
    ]));
    assert_eq!(zero.err().map(|e| e.key), Some("token_ratio"));
}

#[test]
fn a_fan_out_whose_first_branch_is_refused_locally_fails_once_and_keeps_its_books() {
    // systemd's start limit (5 starts per 10 s) refuses most calls before they leave, failing their request at
    // once, sometimes before the front has sent its second branch. Scenarios may not give a service that limiter
    // (it counts one process's restarts), so the configuration is edited here to exercise local rejection.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
attempts = 1
failure_probability = 0.0
[workload]
requests = 300
[layer.front]
calls = "leaf"
fanout = 2
[layer.leaf]
"#;
    let scenario = crate::scenario::Scenario::from_source(std::path::Path::new("t.toml"), text.to_owned()).unwrap();
    let crate::model::Configured::Layers(mut config) = crate::scenario::plan(&scenario).unwrap().remove(0).config.0
    else {
        panic!("a layers scenario gives a layers configuration")
    };
    let start_limit = Some(Limiter::Systemd(StartLimit::systemd_default()));
    config.user.limiter = start_limit.clone();
    for service in &mut config.services {
        service.policy.limiter = start_limit.clone();
    }
    let m = Layers::simulate(&config, RunSettings::new(0, BUCKET)).metrics;
    // The run lasts about 3 s, inside both limiters' first 10 s window: the user's client sends 5 requests
    // (295 refused), the front 5 leaf calls: requests 1 and 2 get both of theirs, request 3 one (its second is
    // refused after the first has left) and requests 4 and 5 none (their first is refused before the second
    // exists). Two requests succeed.
    assert_eq!(m[metric::REQUESTS], 300.0);
    assert_eq!(m[metric::AMPLIFICATION_L1], 5.0 / 300.0);
    assert_eq!(m[metric::BOTTOM_CALLS_PER_REQUEST], 5.0 / 300.0);
    assert_eq!(m[metric::SUCCESS_RATE], 2.0 / 300.0);
    assert_eq!(m[metric::REJECTED_LOCALLY_PER_REQUEST], (295.0 + 3.0) / 300.0);
}

#[test]
fn a_limiter_that_counts_one_process_is_refused_with_what_would_be_valid() {
    for (key, line) in [("client.limiter", "[client]\nlimiter = \"systemd\""), ("client.strategy", "[client]\nstrategy = \"systemd\"")] {
        let text = format!("schema_version = 1\n[model]\nkind = \"layers\"\n{line}\n");
        let error = crate::scenario::Scenario::from_source(std::path::Path::new("t.toml"), text).unwrap_err();
        assert_eq!(error.key.as_deref(), Some(key));
        assert!(error.message.contains("counts the starts of one process") && error.message.contains("envoy"), "{}", error.message);
        assert!(!error.message.contains("systemd,"), "{}", error.message);
    }
}

#[test]
fn a_fail_fast_window_answers_on_arrival_without_queueing() {
    // One worker taking 1 s per call, but the service fails fast all along: every attempt is answered at once,
    // so a 100 ms timeout never fires.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
layers = 1
attempts = 1
failure_probability = 0.0
faults = "0s..1h fail-fast"
workers = 1
service_time = "1s"
[workload]
requests = 20
[client]
timeout = "100ms"
"#;
    let m = &runs_of(text, 1)[0];
    assert_eq!(m[metric::SUCCESS_RATE], 0.0);
    assert_eq!(m[metric::TIMEOUTS_PER_REQUEST], 0.0);
}

#[test]
fn windowed_amplification_counts_the_requests_sent_during_the_fault() {
    // Three layers, three attempts per caller, the bottom failing every call from 1 s to 2 s of a 3 s run. A
    // request sent well inside the window makes 3³ = 27 attempts at the bottom; one sent after it, exactly one.
    let text = r#"
schema_version = 1
[model]
kind = "layers"
attempts = 3
failure_probability = 0.0
[layer.front]
calls = "middle"
[layer.middle]
calls = "bottom"
[layer.bottom]
faults = "1s..2s fail-fast"
[workload]
requests = 3000
rate = 1000
[client]
strategy = "constant"
base = "1ms"
cap = "1ms"
"#;
    let m = &runs_of(text, 1)[0];
    assert_eq!(m[metric::AMPLIFICATION_L3_AFTER], 1.0, "after the window nothing fails");
    assert_eq!(m[metric::SUCCESS_RATE_AFTER], 1.0);
    // A request's 27 bottom attempts take about 150 ms (three levels of three attempts, 1 ms backoff, 1 ms hops
    // and work), so those sent in the window's last 150 ms see some land after it and make fewer: over the
    // window, more than 90% of 27.
    let during = m[metric::AMPLIFICATION_L3_DURING];
    assert!((0.9 * 27.0..=27.0).contains(&during), "{during}");
    assert!(m[metric::SUCCESS_RATE_DURING] < 0.25, "{}", m[metric::SUCCESS_RATE_DURING]);
    // The whole run dilutes it with the healthy two thirds.
    let whole = m[metric::AMPLIFICATION_L3];
    assert!(whole > 1.0 && whole < during / 2.0, "{whole} vs {during}");
    assert!(m[metric::AMPLIFICATION_DURING] > m[metric::AMPLIFICATION] && m[metric::AMPLIFICATION_AFTER] == 3.0);
}

#[test]
fn a_run_without_a_fault_window_has_no_windowed_metrics() {
    let m = metrics(&[("layers", Value::Count(2)), ("failure_probability", Value::Real(0.0))], 1);
    for index in [metric::SUCCESS_RATE_DURING, metric::AMPLIFICATION_AFTER, metric::AMPLIFICATION_L1_DURING] {
        assert!(m[index].is_nan(), "{}", metric::SPECS[index].name);
    }
}

#[test]
fn retry_on_decides_which_failures_a_caller_retries_model_wide_and_per_layer() {
    // A hard-down bottom answers errors (503): left out of the list, nobody retries, so the bottom sees 1 call.
    let base = [("layers", Value::Count(3)), ("max_attempts", Value::Count(3)), ("requests", Value::Count(50))];
    let with = |retry_on: &str| {
        let mut changes = base.to_vec();
        changes.push(("retry_on", Value::Text(retry_on.into())));
        metrics(&changes, 3)[metric::BOTTOM_CALLS_PER_REQUEST]
    };
    assert_eq!(metrics(&base, 3)[metric::BOTTOM_CALLS_PER_REQUEST], 27.0, "every failure by default");
    assert_eq!(with("timeout, 429"), 1.0);
    assert_eq!(with("503"), 27.0);
    // Per layer, as a TOML array: only the caller of the bottom (mid) retries its errors.
    let runs = runs_of(
        r#"
schema_version = 1
[model]
kind = "layers"
[client]
max_attempts = 3
retry_on = ["timeout"]
[workload]
requests = 50
[layer.top]
calls = "mid"
[layer.mid]
calls = "bottom"
retry_on = ["503", "timeout"]
[layer.bottom]
"#,
        1,
    );
    assert_eq!(runs[0][metric::BOTTOM_CALLS_PER_REQUEST], 3.0);
    assert_eq!(runs[0][metric::AMPLIFICATION_L1 + 1], 1.0, "top does not retry mid's errors");
}

#[test]
fn client_go_requeues_wait_for_their_callers_workqueue_bucket() {
    // 200 requests at once; the service fails everything for the first 15 ms, so first tries and first retries
    // fail. The 200 requeues take the bucket's 100 tokens and reserve 100 more, 0.1 s apart; the 100 sent after
    // 5 ms fail again and reserve the next 100, which arrive from 10.1 s to 20 s: the slowest 1% of requests
    // succeed just before 20 s. Per item alone every request succeeds at its second retry, within 30 ms.
    let p99_s = |limiter: &str| {
        let text = format!(
            "schema_version = 1\n[model]\nkind = \"layers\"\nlayers = 1\nfailure_probability = 0.0\n\
             faults = \"0s..15ms fail-fast\"\n[workload]\nrequests = 200\nrate = 1e6\n\
             [client]\nstrategy = \"client-go-workqueue\"\nmax_attempts = 3\nlimiter = \"{limiter}\"\n"
        );
        let m = &runs_of(&text, 1)[0];
        assert_eq!(m[metric::SUCCESS_RATE], 1.0, "{limiter}: {m:?}");
        m[metric::LATENCY_P99_MS] / 1e3
    };
    let shipped = p99_s("preset");
    assert!((19.5..20.1).contains(&shipped), "{shipped} s");
    let per_item_only = p99_s("off");
    assert!(per_item_only < 0.03, "{per_item_only} s");
}

#[test]
fn the_verdict_judges_user_requests_by_the_bucket_they_were_sent_in() {
    // The only service fails every call from 1 s to 3 s, callers make one attempt: requests sent in the window
    // fail, the rest succeed, so the run recovers the moment the window ends and never tipped after it.
    let text = "schema_version = 1\n[model]\nkind = \"layers\"\nlayers = 1\nattempts = 1\n\
                failure_probability = 0.0\nfaults = \"1s..3s fail-fast\"\n[workload]\nrequests = 3000\nrate = 200\n";
    let m = &runs_of(text, 1)[0];
    assert_eq!((m[metric::RECOVERED], m[metric::TIPPED], m[metric::STUCK]), (1.0, 0.0, 0.0));
    assert_eq!((m[metric::RECOVERY_MS], m[metric::RECOVERED_AT_MS]), (0.0, 3_000.0));
    // A window that ends 0.5 s before the arrivals do leaves too little to judge against the 10 s hold.
    let late = &runs_of(&text.replace("1s..3s", "1s..14.5s"), 1)[0];
    assert!(late[metric::TIPPED].is_nan() && late[metric::STUCK].is_nan());
    assert_eq!(late[metric::RECOVERED], 1.0);
}

#[test]
fn a_caller_without_a_written_policy_makes_one_attempt() {
    // A hard-down bottom behind two callers that write nothing: one call each, where a default of 3 attempts per
    // caller would send 3² = 9 to the bottom.
    let quiet = metrics(&[("layers", Value::Count(3)), ("requests", Value::Count(50))], 1);
    assert_eq!(quiet[metric::BOTTOM_CALLS_PER_REQUEST], 1.0);
    assert_eq!(quiet[metric::RETRIES_PER_REQUEST], 0.0);
    // A table that writes its own attempts retries; the callers around it still do not.
    let text = "schema_version = 1\n[model]\nkind = \"layers\"\n[workload]\nrequests = 50\n\
                [layer.app]\ncalls = \"proxy\"\n[layer.proxy]\ncalls = \"db\"\nmax_attempts = 4\n[layer.db]\n";
    let m = &runs_of(text, 1)[0];
    assert_eq!(m[metric::BOTTOM_CALLS_PER_REQUEST], 4.0);
    assert_eq!((m[metric::AMPLIFICATION_L1], m[metric::AMPLIFICATION_L2]), (1.0, 1.0));
}

#[test]
fn every_callers_effective_policy_is_named_and_an_endless_preset_needs_a_limit() {
    let text = "schema_version = 1\n[model]\nkind = \"layers\"\n[workload]\nrequests = 50\n[client]\nmax_attempts = 2\n\
                [layer.app]\ncalls = \"proxy\"\n[layer.proxy]\ncalls = \"db\"\nmax_attempts = 1\n[layer.db]\n";
    let scenario = crate::scenario::Scenario::from_source(std::path::Path::new("t.toml"), text.to_owned()).unwrap();
    let points = crate::scenario::plan(&scenario).unwrap();
    let policy = points[0].policy.clone().unwrap();
    assert!(policy.starts_with("user, app: full-jitter b=10ms c=1s m=2, 2 attempts"), "{policy}");
    assert!(policy.ends_with("; proxy: 1 attempt (no retries)"), "{policy}");
    assert!(!policy.contains("db"), "the bottom calls nobody: {policy}");
    let endless = ModelKind::Layers.point_with(&[("strategy", Value::Choice("client-go-workqueue"))]);
    let error = Layers::configure(&endless).err().unwrap();
    assert_eq!(error.key, "max_attempts");
    assert!(error.message.contains("\"client-go-workqueue\" retries without end"), "{}", error.message);
    let bounded = ModelKind::Layers
        .point_with(&[("strategy", Value::Choice("client-go-workqueue")), ("attempts", Value::Count(5))]);
    assert_eq!(Layers::configure(&bounded).unwrap().user.attempts, 5);
}
