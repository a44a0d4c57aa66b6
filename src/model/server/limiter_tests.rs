//! The server model with retry limiters: what each lets through, and how presets, stacks and scopes choose them.

use super::Server;
use super::tests::{config, ms, run_metrics, text};
use super::metric;
use crate::model::{ModelKind, SimModel};
use crate::params::Value;
use crate::policy::Strategy;
use crate::policy::limiters::Limiter;

#[test]
fn a_client_limiter_caps_retries_during_an_outage() {
    // Everything fails fast for the whole run; each request may try 4 times. The AWS quota pays for 100
    // retries (5 tokens each out of 500) and refuses the rest; a token bucket starts with 5 retries and earns
    // 0.1 per call after that.
    let case = |limiter| {
        run_metrics(
            &config(&[
                ("kind", Value::Choice("open")),
                ("rate", Value::Real(100.0)),
                ("duration", ms(10_000)),
                ("faults", text("0s..1h fail-fast")),
                ("strategy", Value::Choice("constant")),
                ("base", ms(1)),
                ("max_attempts", Value::Count(4)),
                ("limiter", Value::Choice(limiter)),
            ]),
            20,
        )
    };
    let unlimited = case("none");
    assert_eq!(unlimited[metric::RETRIES], 3.0 * unlimited[metric::REQUESTS]);
    let quota = case("aws-quota");
    assert_eq!(quota[metric::RETRIES], 100.0);
    assert!(quota[metric::REFUSED] > 0.0 && quota[metric::REFUSED] <= quota[metric::REQUESTS]);
    let bucket = case("token-bucket");
    let expected = (bucket[metric::CALLS] * 0.1 + 5.0).floor();
    assert!((bucket[metric::RETRIES] - expected).abs() <= 1.0, "{} vs {expected}", bucket[metric::RETRIES]);
}

/// An open workload of 100 requests/s for 10 s against a server whose token bucket admits 40/s (429 beyond).
fn rate_limited(strategy: &'static str, seed: u64) -> Vec<f64> {
    run_metrics(
        &config(&[
            ("kind", Value::Choice("open")),
            ("rate", Value::Real(100.0)),
            ("duration", ms(10_000)),
            ("rate_limit", Value::Real(40.0)),
            ("strategy", Value::Choice(strategy)),
        ]),
        seed,
    )
}

#[test]
fn aws_adaptive_mode_sends_fewer_throttled_attempts_than_standard_mode() {
    let throttled = |strategy| {
        let values: Vec<f64> = (0..8).map(|seed| rate_limited(strategy, 100 + seed)[metric::THROTTLED]).collect();
        crate::stats::Estimate::of(&values)
    };
    let standard = throttled("aws-sdk-standard");
    let adaptive = throttled("aws-sdk-adaptive");
    assert!(
        adaptive.mean + adaptive.ci95 < standard.mean - standard.ci95,
        "adaptive {} ± {} vs standard {} ± {}",
        adaptive.mean,
        adaptive.ci95,
        standard.mean,
        standard.ci95
    );
    // Standard mode's three attempts and its quota: at most 2 retries per request.
    let one = rate_limited("aws-sdk-standard", 100);
    assert!(one[metric::RETRIES] <= 2.0 * one[metric::REQUESTS]);
    // Adaptive mode paces its sends instead: it rejects nothing locally.
    assert_eq!(rate_limited("aws-sdk-adaptive", 100)[metric::REJECTED_LOCALLY], 0.0);
}

#[test]
fn a_preset_brings_its_limiter_unless_the_model_names_one() {
    let preset = config(&[("strategy", Value::Choice("grpc"))]);
    assert_eq!(preset.retry.strategy, Strategy::GrpcJitter);
    assert_eq!(preset.retry.max_attempts, Some(4));
    assert!(matches!(preset.limiter, Some(Limiter::Grpc(_))));
    let explicit = config(&[("strategy", Value::Choice("grpc")), ("limiter", Value::Choice("aws-quota"))]);
    assert!(matches!(explicit.limiter, Some(Limiter::AwsQuota(_))));
    let k8s = config(&[("strategy", Value::Choice("k8s-crashloop"))]);
    assert_eq!(k8s.limiter, None);
}

#[test]
fn sre_throttling_rejects_attempts_locally_during_an_outage_and_they_never_reach_the_server() {
    // Everything is throttled (a 1 request per hour token bucket with its one token spent at once), so nothing is
    // accepted and the client's rejection probability climbs towards 1.
    let case = |limiter| {
        run_metrics(
            &config(&[
                ("kind", Value::Choice("open")),
                ("rate", Value::Real(100.0)),
                ("duration", ms(10_000)),
                ("rate_limit", Value::Real(1.0 / 3600.0)),
                ("retry_after", Value::Choice("ignore")),
                ("strategy", Value::Choice("constant")),
                ("base", ms(10)),
                ("max_attempts", Value::Count(3)),
                ("limiter", Value::Choice(limiter)),
            ]),
            7,
        )
    };
    // The bucket's one token serves the very first request; every other request makes its three attempts.
    let attempts = |m: &[f64]| 3.0 * (m[metric::REQUESTS] - 1.0) + 1.0;
    let plain = case("none");
    let sre = case("sre-throttle");
    assert_eq!(plain[metric::REJECTED_LOCALLY], 0.0);
    assert_eq!(plain[metric::CALLS], attempts(&plain));
    // Every attempt either reached the server or was rejected locally.
    assert_eq!(sre[metric::CALLS] + sre[metric::REJECTED_LOCALLY], attempts(&sre));
    // With accepts = 1 the probability after r requests is (r − 2)/(r + 1): almost everything is rejected.
    assert!(sre[metric::REJECTED_LOCALLY] > 0.95 * 3.0 * sre[metric::REQUESTS], "{}", sre[metric::REJECTED_LOCALLY]);
}

#[test]
fn the_systemd_preset_stops_after_five_starts_per_ten_seconds() {
    // One request against a server that always fails fast: restarts every 100 ms, five per window.
    let m = run_metrics(
        &config(&[
            ("clients", Value::Count(1)),
            ("faults", text("0s..1h fail-fast")),
            ("strategy", Value::Choice("systemd")),
            ("deadline", ms(25_000)),
        ]),
        3,
    );
    // Windows open at 0 s, ~10.1 s and ~20.2 s: 15 starts reach the server before the 25 s deadline.
    assert_eq!(m[metric::CALLS], 15.0);
    assert!(m[metric::REJECTED_LOCALLY] > 200.0, "refused restarts every 100 ms in between");
}

#[test]
fn stacked_limiters_retry_only_with_every_ones_consent() {
    // Every answer fails; 1,000 clients. The classic AWS quota alone allows 100 retries (500 tokens / 5), a 5%
    // budget 50 (of the 1,000 answered first tries), the two stacked the fewer of the two: a retry one refuses
    // costs the other nothing.
    let retries = |limiter: Value, budget: f64| {
        let c = config(&[
            ("clients", Value::Count(1_000)),
            ("error_probability", Value::Real(1.0)),
            ("max_attempts", Value::Count(10)),
            ("budget", Value::Real(budget)),
            ("limiter", limiter),
        ]);
        run_metrics(&c, 13)[metric::RETRIES]
    };
    let stack = || Value::Text("aws-quota, budget".into());
    assert_eq!(retries(Value::Choice("aws-quota"), 0.05), 100.0);
    assert_eq!(retries(Value::Choice("budget"), 0.05), 50.0);
    assert_eq!(retries(stack(), 0.05), 50.0);
    assert_eq!(retries(stack(), 0.5), 100.0, "with a looser budget the quota binds");
    let refused = |limiter: &str| {
        Server::configure(&ModelKind::Server.point_with(&[("limiter", Value::Text(limiter.into()))])).unwrap_err()
    };
    assert!(refused("none, budget").message.contains("\"none\" stands alone"));
    assert!(refused("grpc, grpc").message.contains("listed twice"));
}

#[test]
fn a_limiter_per_client_instance_keeps_each_clients_books() {
    // Every answer fails; each client may retry 9 times. One AWS quota for the fleet allows 100 retries in all;
    // one per client (as each SDK client object keeps its own) lets every client spend its 9.
    let retries = |changes: &[(&str, Value)]| {
        let mut all = vec![
            ("error_probability", Value::Real(1.0)),
            ("max_attempts", Value::Count(10)),
            ("limiter", Value::Choice("aws-quota")),
        ];
        all.extend_from_slice(changes);
        run_metrics(&config(&all), 14)[metric::RETRIES]
    };
    let burst = ("clients", Value::Count(1_000));
    assert_eq!(retries(std::slice::from_ref(&burst)), 100.0);
    assert_eq!(retries(&[burst, ("limiter_scope", Value::Choice("client"))]), 9_000.0);
    // An open workload's requests take turns over `client_instances` client objects: 3 quotas of 100 retries.
    let open = [
        ("kind", Value::Choice("open")),
        ("rate", Value::Real(1_000.0)),
        ("duration", ms(2_000)),
        ("limiter_scope", Value::Choice("client")),
        ("client_instances", Value::Count(3)),
    ];
    assert_eq!(retries(&open), 300.0);
    let refused = |changes: &[(&str, Value)]| Server::configure(&ModelKind::Server.point_with(changes)).unwrap_err();
    let no_instances = refused(&[("kind", Value::Choice("open")), ("limiter_scope", Value::Choice("client"))]);
    assert_eq!(no_instances.key, "limiter_scope");
    assert!(no_instances.message.contains("give client_instances"), "{}", no_instances.message);
    assert_eq!(refused(&[("client_instances", Value::Count(3))]).key, "client_instances");
    // Per client, systemd's start limit is allowed with many clients.
    let systemd = [("clients", Value::Count(5)), ("strategy", Value::Choice("systemd"))];
    assert!(Server::configure(&ModelKind::Server.point_with(&systemd)).is_err());
    let per_client = [systemd[0].clone(), systemd[1].clone(), ("limiter_scope", Value::Choice("client"))];
    assert!(Server::configure(&ModelKind::Server.point_with(&per_client)).is_ok());
}

#[test]
fn client_go_requeues_wait_for_the_workqueue_bucket_after_its_burst() {
    // 500 items that fail every time, three tries each: 1,000 requeues. Per item they would wait 5 and 10 ms;
    // the shared bucket lets 100 through at once and then one per 1/requeue_qps, so the last requeue leaves
    // when the 1,000th token arrives: (1,000 − 100) / 10 per second = 90 s.
    let completion_s = |changes: &[(&str, Value)]| {
        let mut all = vec![
            ("clients", Value::Count(500)),
            ("error_probability", Value::Real(1.0)),
            ("strategy", Value::Choice("client-go-workqueue")),
            ("max_attempts", Value::Count(3)),
        ];
        all.extend_from_slice(changes);
        let m = run_metrics(&config(&all), 21);
        assert_eq!(m[metric::RETRIES], 1_000.0);
        m[metric::COMPLETION_MS] / 1e3
    };
    let shipped = completion_s(&[]);
    assert!((90.0..90.5).contains(&shipped), "{shipped} s");
    let faster = completion_s(&[("requeue_qps", Value::Real(100.0))]);
    assert!((9.0..9.5).contains(&faster), "{faster} s");
    let per_item_only = completion_s(&[("limiter", Value::Choice("off"))]);
    assert!(per_item_only < 1.0, "{per_item_only} s");
}
