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

#[test]
fn k8s_crashloop_restarts_after_10_20_40_80_160_then_300_seconds_forever() {
    let (sleeps, gave_up) = sleeps(&policy("k8s-crashloop"), 2, 1_000);
    assert_eq!(sleeps[..7], [10.0, 20.0, 40.0, 80.0, 160.0, 300.0, 300.0]);
    assert!(sleeps[7..].iter().all(|&s| s == 300.0));
    assert_eq!(gave_up, None, "unlimited");
}

#[test]
fn systemd_restarts_every_100_ms() {
    let (sleeps, gave_up) = sleeps(&policy("systemd"), 3, 20);
    assert!(sleeps.iter().all(|&s| s == 0.1) && gave_up.is_none());
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
fn envoy_sleeps_below_2_to_the_n_minus_1_times_25_ms_capped_at_250_ms_with_two_attempts() {
    let samples = retry_sleeps("envoy", 1, 40_000, 20);
    assert!(samples.iter().all(|&s| (0.0..0.025).contains(&s)));
    assert_mean_near(&samples, 0.0125, "envoy retry 1");
    assert_eq!(sleeps(&policy("envoy"), 21, 10).0.len(), 1, "num_retries 1");
    let unlimited = RetryPolicy { max_attempts: None, ..policy("envoy") };
    let (many, _) = sleeps(&unlimited, 22, 2_000);
    assert!(many.iter().all(|&s| s <= 0.25));
    assert!(many[..3].iter().zip([0.025, 0.075, 0.175]).all(|(&s, window)| s < window));
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
}
