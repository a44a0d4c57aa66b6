//! Preset tests: registration, and each preset's schedule against its sources (docs/references.md, "Retry
//! limiters as shipped"), with attempt numbering n = 1 for the first retry.

use super::*;
use crate::policy::limiters::LimiterKind;
use crate::policy::test_rng;
use crate::policy::{BackoffMemory, FailureKind, GiveUpReason, RetryDecision};
use crate::time::SimDuration;

fn policy(name: &str) -> RetryPolicy {
    Preset::lookup(name).unwrap_or_else(|| panic!("no preset {name}")).policy(None)
}

/// The sleeps before retries 1, 2, … with instant failures, until the policy gives up or `limit` retries.
fn sleeps(policy: &RetryPolicy, seed: u64, limit: u32) -> (Vec<f64>, Option<GiveUpReason>) {
    let mut rng = test_rng(seed);
    let mut memory = BackoffMemory::default();
    let mut out = Vec::new();
    let mut elapsed = SimDuration::ZERO;
    for failed in 1..=limit {
        match policy.after_failure(failed, elapsed, (FailureKind::Transient, None), &mut memory, &mut rng) {
            RetryDecision::RetryAfter(sleep) => {
                elapsed = elapsed.saturating_add(sleep);
                out.push(sleep.as_secs_f64());
            }
            RetryDecision::GiveUp(reason) => return (out, Some(reason)),
        }
    }
    (out, None)
}

#[test]
fn every_preset_file_is_registered_and_names_are_unique_and_disjoint_from_strategies() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/policy/presets");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let stem = entry.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned();
        if stem == "mod" || stem == "tests" {
            continue;
        }
        files += 1;
        let name = stem.replace('_', "-");
        assert!(Preset::lookup(&name).is_some(), "presets/{stem}.rs is not registered in ALL as \"{name}\"");
    }
    assert_eq!(files, ALL.len(), "one file per preset");
    let mut names = NAMES.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), ALL.len());
    for preset in ALL {
        assert!(Strategy::from_name(preset.name).is_none(), "{} is also a strategy", preset.name);
        assert!(!preset.source.is_empty());
        assert_eq!(preset.shipped_limiter().is_some(), preset.limiter.is_some(), "{}", preset.name);
        assert!(preset.backoff.cap >= preset.backoff.base);
    }
}

#[test]
fn tcp_retransmits_at_1_3_7_15_31_63_seconds_and_gives_up_after_16_attempts() {
    let (sleeps, gave_up) = sleeps(&policy("tcp-rfc6298"), 1, 100);
    let times: Vec<f64> = sleeps
        .iter()
        .scan(0.0, |t, s| {
            *t += s;
            Some(*t)
        })
        .collect();
    assert_eq!(times[..6], [1.0, 3.0, 7.0, 15.0, 31.0, 63.0]);
    assert_eq!(sleeps[6..], [64.0, 120.0, 120.0, 120.0, 120.0, 120.0, 120.0, 120.0, 120.0], "cap ≥ 60 s");
    assert_eq!(sleeps.len(), 15, "15 retransmissions");
    assert_eq!(gave_up, Some(GiveUpReason::AttemptsExhausted));
}

/// The kubelet's restart times, from the first start at 0, of a container that runs `run` before each crash:
/// each restart comes the policy's sleep after the exit, and a run longer than 10 minutes makes the kubelet
/// forget the backoff, so the count starts over (Kubernetes 1.32+: a flat 600 s, pkg/kubelet/kubelet.go).
fn restart_times(name: &str, run: f64, restarts: usize) -> Vec<f64> {
    let policy = policy(name);
    let mut rng = test_rng(0);
    let mut memory = BackoffMemory::default();
    let (mut now, mut crashes) = (0.0, 0);
    (0..restarts)
        .map(|_| {
            now += run;
            crashes = if run > 600.0 { 1 } else { crashes + 1 };
            now += policy.sleep_before(crashes, FailureKind::Transient, &mut memory, &mut rng).as_secs_f64();
            now
        })
        .collect()
}

#[test]
fn k8s_crashloop_restarts_at_once_then_after_10_20_40_80_160_then_300_seconds_forever() {
    let (sleeps, gave_up) = sleeps(&policy("k8s-crashloop"), 2, 1_000);
    assert_eq!(sleeps[..8], [0.0, 10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0]);
    assert!(sleeps[8..].iter().all(|&s| s == 300.0));
    assert_eq!(gave_up, None, "unlimited");
    // Restart times worked out from kubelet's flowcontrol.Backoff, counted from each exit.
    assert_eq!(restart_times("k8s-crashloop", 0.0, 10), [0., 10., 30., 70., 150., 310., 610., 910., 1210., 1510.]);
    assert_eq!(restart_times("k8s-crashloop", 10.0, 10), [10., 30., 60., 110., 200., 370., 680., 990., 1300., 1610.]);
    assert_eq!(restart_times("k8s-crashloop", 601.0, 3), [601.0, 1202.0, 1803.0], "a clean run resets the backoff");
    // KEP-4603's reduced decay: 1 s doubling to 60 s.
    assert_eq!(restart_times("k8s-crashloop-reduced", 0.0, 10), [0., 1., 3., 7., 15., 31., 63., 123., 183., 243.]);
}

#[test]
fn systemd_restarts_every_100_ms_and_climbs_geometrically_with_restart_steps() {
    let (constant, gave_up) = sleeps(&policy("systemd"), 3, 20);
    assert!(constant.iter().all(|&s| s == 0.1) && gave_up.is_none());
    // service_restart_usec_next with RestartSec 100 ms, RestartMaxDelaySec 60 s, RestartSteps 5, in whole µs.
    let stepped = RetryPolicy {
        backoff: BackoffParams { cap: SimDuration::from_secs(60), steps: 5, ..policy("systemd").backoff },
        ..policy("systemd")
    };
    let micros: Vec<u64> = sleeps(&stepped, 3, 8).0.iter().map(|s| (s * 1e6).round() as u64).collect();
    assert_eq!(micros, [100_000, 359_443, 1_291_994, 4_643_984, 16_692_485, 60_000_000, 60_000_000, 60_000_000]);
    // The man page's example: RestartSec 10 s, RestartSteps 4, RestartMaxDelaySec 160 s.
    let doubling = RetryPolicy {
        backoff: BackoffParams::new(SimDuration::from_secs(10), SimDuration::from_secs(160), 2.0),
        ..stepped
    };
    let doubling = RetryPolicy { backoff: BackoffParams { steps: 4, ..doubling.backoff }, ..doubling };
    assert_eq!(sleeps(&doubling, 3, 6).0, [10.0, 20.0, 40.0, 80.0, 160.0, 160.0]);
}

#[test]
fn client_go_sleeps_as_wait_backoff_steps_with_up_to_ten_percent_jitter() {
    // DefaultRetry: 5 attempts, 4 sleeps in [10 ms, 11 ms); DefaultBackoff: 4 attempts, 10, 50, 250 ms × [1, 1.1).
    let (retry, gave_up) = sleeps(&policy("client-go-retry"), 4, 100);
    assert_eq!((retry.len(), gave_up), (4, Some(GiveUpReason::AttemptsExhausted)));
    assert!(retry.iter().all(|&s| (0.010..0.011).contains(&s)), "{retry:?}");
    let (backoff, _) = sleeps(&policy("client-go-backoff"), 5, 100);
    assert_eq!(backoff.len(), 3);
    for (sleep, base) in backoff.iter().zip([0.010, 0.050, 0.250]) {
        assert!((base..base * 1.1).contains(sleep), "{backoff:?}");
    }
    assert_mean_near(&retry_sleeps("client-go-backoff", 2, 40_000, 6), 0.050 * 1.05, "client-go-backoff retry 2");
    // The workqueue's per-item limiter: 5 ms·2^(n−1), reaching its 1000 s cap at the 19th requeue.
    let (requeues, _) = sleeps(&policy("client-go-workqueue"), 7, 20);
    assert_eq!(requeues[..4], [0.005, 0.010, 0.020, 0.040]);
    assert_eq!((requeues[17], requeues[18]), (655.36, 1000.0));
}

#[test]
fn botocore_and_the_js_sdk_back_off_from_50_ms_after_errors_and_1_s_after_throttling() {
    for name in ["botocore-standard", "botocore-adaptive", "aws-sdk-js-v3"] {
        let preset = policy(name);
        let mut rng = test_rng(8);
        for (kind, base) in [(FailureKind::Transient, 0.05), (FailureKind::Throttling, 1.0)] {
            for n in 1..=2_u32 {
                let window = base * f64::from(1 << (n - 1));
                let samples: Vec<f64> = (0..20_000)
                    .map(|_| {
                        let mut memory = BackoffMemory::default();
                        preset.sleep_before(n, kind, &mut memory, &mut rng).as_secs_f64()
                    })
                    .collect();
                assert!(samples.iter().all(|&s| (0.0..window).contains(&s)), "{name} {kind:?} retry {n}");
                // The JS SDK floors to whole ms: its mean sits half a millisecond lower.
                let floor = if name == "aws-sdk-js-v3" { 0.0005 } else { 0.0 };
                assert_mean_near(&samples, window / 2.0 - floor, &format!("{name} {kind:?} retry {n}"));
            }
        }
        assert_eq!(sleeps(&preset, 9, 10).0.len(), 2, "{name}: 3 attempts");
    }
    let js: Vec<f64> = retry_sleeps("aws-sdk-js-v3", 1, 2_000, 10);
    assert!(js.iter().all(|&s| (s * 1e3).fract() == 0.0), "whole milliseconds");
    // The legacy mode: U(0, 1)·2^(n−1) s, 5 attempts, no cap.
    for n in 1..=4_u32 {
        let window = f64::from(1 << (n - 1));
        assert_mean_near(&retry_sleeps("botocore-legacy", n, 40_000, 11), window / 2.0, "botocore-legacy");
    }
    assert_eq!(sleeps(&policy("botocore-legacy"), 12, 10).0.len(), 4);
}

#[test]
fn urllib3_retries_at_once_then_doubles_its_backoff_factor_and_google_api_core_stops_at_120_s() {
    let (zero, gave_up) = sleeps(&policy("urllib3"), 13, 10);
    assert_eq!((zero, gave_up), (vec![0.0, 0.0, 0.0], Some(GiveUpReason::AttemptsExhausted)), "Retry(3), factor 0");
    let factor = RetryPolicy {
        backoff: BackoffParams { base: SimDuration::from_millis(100), ..policy("urllib3").backoff },
        max_attempts: None,
        ..policy("urllib3")
    };
    // The urllib3 docs' example for backoff_factor 0.1: 0, 0.2, 0.4, 0.8 s, …, capped at 120 s.
    let (doubling, _) = sleeps(&factor, 14, 15);
    assert_eq!(doubling[..5], [0.0, 0.2, 0.4, 0.8, 1.6]);
    assert_eq!(doubling[14], 120.0);
    // google-api-core: U(0, min(2^(n−1), 60)) s, and no sleep past 120 s since the call began.
    assert_mean_near(&retry_sleeps("google-api-core", 3, 40_000, 15), 2.0, "google-api-core retry 3");
    let (google, gave_up) = sleeps(&policy("google-api-core"), 16, 1_000);
    assert!(google.iter().sum::<f64>() < 120.0 && gave_up == Some(GiveUpReason::DeadlineExceeded));
}

/// Asserts the sample mean is within the 99.9% confidence interval (z = 3.29) of `expected`.
fn assert_mean_near(samples: &[f64], expected: f64, what: &str) {
    let n = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / n;
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half_width = 3.29 * (variance / n).sqrt();
    assert!((mean - expected).abs() <= half_width, "{what}: mean {mean} not within ±{half_width} of {expected}");
}

/// Sleeps before retry `n` (1-based) over `count` independent operations.
fn retry_sleeps(name: &str, n: u32, count: usize, seed: u64) -> Vec<f64> {
    let policy = policy(name);
    let mut rng = test_rng(seed);
    (0..count)
        .map(|_| {
            let mut memory = BackoffMemory::default();
            for earlier in 1..n {
                policy.after_failure(earlier, SimDuration::ZERO, (FailureKind::Transient, None), &mut memory, &mut rng);
            }
            match policy.after_failure(n, SimDuration::ZERO, (FailureKind::Transient, None), &mut memory, &mut rng) {
                RetryDecision::RetryAfter(sleep) => sleep.as_secs_f64(),
                RetryDecision::GiveUp(reason) => panic!("{name} gave up before retry {n}: {reason:?}"),
            }
        })
        .collect()
}

#[test]
fn aws_standard_sleeps_uniformly_below_min_of_2_to_the_i_minus_1_seconds_and_20_seconds() {
    for (i, window) in [(1_u32, 1.0), (2, 2.0)] {
        for name in ["aws-sdk-standard", "aws-sdk-adaptive"] {
            let samples = retry_sleeps(name, i, 40_000, 10 + u64::from(i));
            assert!(samples.iter().all(|&s| (0.0..window).contains(&s)), "{name} retry {i}");
            assert_mean_near(&samples, window / 2.0, &format!("{name} retry {i}"));
        }
    }
    assert_eq!(sleeps(&policy("aws-sdk-standard"), 4, 10).1, Some(GiveUpReason::AttemptsExhausted));
    assert_eq!(sleeps(&policy("aws-sdk-standard"), 4, 10).0.len(), 2, "3 attempts");
    // Beyond the third attempt, were it allowed: retry 6 would have a window of min(32 s, 20 s).
    let long = RetryPolicy { max_attempts: None, ..policy("aws-sdk-standard") };
    let (far, _) = sleeps(&long, 5, 40);
    assert!(far.iter().all(|&s| s < 20.0));
}

#[test]
fn envoy_sleeps_below_a_doubling_25_ms_window_capped_at_250_ms_with_two_attempts() {
    let samples = retry_sleeps("envoy", 1, 40_000, 20);
    assert!(samples.iter().all(|&s| (0.0..0.025).contains(&s)));
    assert_mean_near(&samples, 0.0125, "envoy retry 1");
    assert_eq!(sleeps(&policy("envoy"), 21, 10).0.len(), 1, "num_retries 1");
    // Envoy's JitteredExponentialBackOffStrategy: windows 25, 50, 100, 200, then 250 ms.
    for (n, window) in [(2_u32, 0.05), (3, 0.1), (4, 0.2), (5, 0.25), (9, 0.25)] {
        let unlimited = RetryPolicy { max_attempts: None, ..policy("envoy") };
        let mut rng = test_rng(22 + u64::from(n));
        let draws: Vec<f64> = (0..20_000)
            .map(|_| {
                unlimited.sleep_before(n, FailureKind::Transient, &mut BackoffMemory::default(), &mut rng).as_secs_f64()
            })
            .collect();
        assert!(draws.iter().all(|&s| s < window), "retry {n}");
        assert_mean_near(&draws, window / 2.0, &format!("envoy retry {n}"));
    }
}

#[test]
fn grpc_sleeps_within_twenty_percent_of_the_capped_exponential_and_the_old_variant_below_it() {
    for (n, centre) in [(1_u32, 0.1), (2, 0.2), (3, 0.4)] {
        let samples = retry_sleeps("grpc", n, 40_000, 30 + u64::from(n));
        assert!(samples.iter().all(|&s| s >= 0.8 * centre - 1e-9 && s < 1.2 * centre + 1e-9), "retry {n}");
        assert_mean_near(&samples, centre, &format!("grpc retry {n}"));
        let old = retry_sleeps("grpc-full-jitter", n, 40_000, 40 + u64::from(n));
        assert!(old.iter().all(|&s| (0.0..centre).contains(&s)));
        assert_mean_near(&old, centre / 2.0, &format!("grpc-full-jitter retry {n}"));
    }
    assert_eq!(sleeps(&policy("grpc"), 5, 10).0.len(), 3, "maxAttempts 4");
    // At the cap the jitter still applies: up to 1.2 s.
    let unlimited = RetryPolicy { max_attempts: None, ..policy("grpc") };
    let (capped, _) = sleeps(&unlimited, 6, 200);
    assert!(capped[10..].iter().all(|&s| (0.8..1.2).contains(&s)));
    assert!(capped[10..].iter().any(|&s| s > 1.0));
}

#[test]
fn finagle_requeues_without_delay_and_presets_carry_their_limiters() {
    let (sleeps, gave_up) = sleeps(&policy("finagle"), 7, 100);
    assert!(sleeps.iter().all(|&s| s == 0.0));
    assert_eq!((sleeps.len(), gave_up), (20, Some(GiveUpReason::AttemptsExhausted)));
    let limiter = |name| Preset::lookup(name).unwrap().limiter;
    assert_eq!(limiter("aws-sdk-standard"), Some(LimiterKind::AwsQuota));
    assert_eq!(limiter("aws-sdk-adaptive"), Some(LimiterKind::AwsAdaptive));
    assert_eq!(limiter("grpc"), Some(LimiterKind::Grpc));
    assert_eq!(limiter("envoy"), Some(LimiterKind::Envoy));
    assert_eq!(limiter("finagle"), Some(LimiterKind::Finagle));
    assert_eq!(limiter("systemd"), Some(LimiterKind::Systemd));
    assert_eq!(limiter("k8s-crashloop"), None);
    assert_eq!(limiter("botocore-standard"), Some(LimiterKind::AwsQuota2026));
    assert_eq!(limiter("aws-sdk-js-v3"), Some(LimiterKind::AwsQuota2026));
    assert_eq!(limiter("botocore-adaptive"), Some(LimiterKind::AwsAdaptive));
    let retry_after = |name| Preset::lookup(name).unwrap().retry_after;
    assert_eq!(retry_after("botocore-standard"), RetryAfterPolicy::AwsBounded);
    assert_eq!(retry_after("urllib3"), RetryAfterPolicy::Honour);
    assert_eq!(retry_after("google-api-core"), RetryAfterPolicy::Ignore);
}
