//! The client vocabulary's checks: presets fill what a scenario leaves unwritten, limiters compose, and the
//! filtered lists hold what each host runs.

use super::*;
use crate::model::ModelKind;
use crate::params::Point;
use crate::policy::AlignOffset;
use crate::policy::presets;
use crate::time::SimDuration;

fn server_point(changes: &[(&str, Value)]) -> Point {
    ModelKind::Server.point_with(changes)
}

#[test]
fn every_preset_fills_the_backoff_keys_the_scenario_leaves_unwritten() {
    for preset in presets::ALL {
        let point = server_point(&[
            ("strategy", Value::Choice(preset.name)),
            ("deadline", Value::Duration(SimDuration::from_secs(7))),
        ]);
        let (policy, from) = retry_policy(&point).unwrap_or_else(|e| panic!("{}: {e:?}", preset.name));
        assert_eq!(from, Some(preset));
        assert_eq!(policy.strategy, preset.strategy);
        assert_eq!(policy.backoff, preset.backoff, "{}: the model's default base gives way", preset.name);
        assert_eq!(policy.max_attempts, preset.max_attempts);
        assert_eq!(policy.deadline, Some(SimDuration::from_secs(7)), "the deadline is the client's");
        let limiter = limiter_setting(&point, from).unwrap();
        let expected = LimiterSetting { budget: None, shipped: preset.shipped_limiter().into_iter().collect() };
        assert_eq!(limiter, expected, "{}", preset.name);
    }
}

#[test]
fn a_written_key_overrides_the_presets_value() {
    let point = server_point(&[
        ("strategy", Value::Choice("k8s-crashloop")),
        ("cap", Value::Duration(SimDuration::from_secs(60))),
        ("max_attempts", Value::Count(4)),
    ]);
    let (policy, _) = retry_policy(&point).unwrap();
    let shipped = Preset::lookup("k8s-crashloop").unwrap().backoff;
    assert_eq!(policy.backoff, BackoffParams { cap: SimDuration::from_secs(60), ..shipped });
    assert_eq!(policy.max_attempts, Some(4));
    let too_low = server_point(&[
        ("strategy", Value::Choice("k8s-crashloop")),
        ("cap", Value::Duration(SimDuration::from_secs(1))),
    ]);
    assert_eq!(retry_policy(&too_low).unwrap_err().key, "cap", "checked as the client's own values are");
}

#[test]
fn limiter_off_turns_a_presets_limiter_off_and_the_description_says_whose_limiter_runs() {
    let point = |limiter: &'static str| {
        server_point(&[("strategy", Value::Choice("botocore-standard")), ("limiter", Value::Choice(limiter))])
    };
    let preset = Preset::lookup("botocore-standard");
    assert_eq!(limiter_setting(&point("off"), preset).unwrap(), LimiterSetting::default());
    assert_ne!(limiter_setting(&point("preset"), preset).unwrap(), LimiterSetting::default());
    // Unwritten, `none` runs the preset's limiter; written, it would mislabel the point, so it is refused.
    let unwritten = server_point(&[("strategy", Value::Choice("botocore-standard"))]);
    assert_eq!(limiter_setting(&unwritten, preset).unwrap(), limiter_setting(&point("preset"), preset).unwrap());
    let written = limiter_setting(&point("none"), preset).unwrap_err();
    assert!(written.message.contains("write \"preset\" for that, or \"off\""), "{}", written.message);
    let (policy, _) = retry_policy(&point("preset")).unwrap();
    let text = describe_policy(&point("preset"), &policy, None).unwrap();
    assert_eq!(
        text,
        "full-jitter-from-base b=50ms (1s after throttling) c=20s m=2, 3 attempts, Retry-After aws-bounded, \
         limiter aws-quota-2026 (the preset's)"
    );
    let grpc = server_point(&[("limiter", Value::Choice("grpc")), ("max_tokens", Value::Real(20.0))]);
    let (policy, _) = retry_policy(&grpc).unwrap();
    assert!(describe_policy(&grpc, &policy, None).unwrap().ends_with("limiter grpc (max_tokens 20, token_ratio 0.1)"));
}

#[test]
fn the_description_says_when_a_client_waits_by_its_clock() {
    let point = server_point(&[
        ("align", Value::Duration(SimDuration::from_secs(10))),
        ("align_offset", Value::Choice("per-client")),
        ("clock_skew", Value::Text("normal 200ms".into())),
    ]);
    let (policy, _) = retry_policy(&point).unwrap();
    let text = describe_policy(&point, &policy, None).unwrap();
    assert!(
        text.ends_with(", waits until the clock's next 10s (per-client offset), clock skew normal 200ms"),
        "{text}"
    );
    let clock = clock_policy(&point, None).unwrap().unwrap();
    assert_eq!(clock.skew, ClockSkew::Normal(2e8));
    assert_eq!(clock.align, Some(Alignment { period: SimDuration::from_secs(10), offset: AlignOffset::PerClient }));
    assert_eq!(clock_policy(&server_point(&[]), None).unwrap(), None, "nothing by the clock: no clocks");
}

#[test]
fn a_plain_strategy_keeps_the_client_values_and_brings_no_limiter() {
    let point = server_point(&[("strategy", Value::Choice("exponential"))]);
    let (policy, preset) = retry_policy(&point).unwrap();
    assert_eq!(policy.strategy, Strategy::Exponential);
    assert_eq!(policy.backoff, BackoffParams::AWS_2015);
    assert_eq!((preset, limiter_setting(&point, preset).unwrap()), (None, LimiterSetting::default()));
}

#[test]
fn knobs_tune_an_explicit_limiter_and_a_presets_own() {
    let tuned = |changes: &[(&str, Value)]| limiter_setting(&server_point(changes), None).unwrap();
    let grpc = |max_tokens: f64| {
        let knobs = LimiterKind::Grpc.knobs().iter();
        let point =
            Point::new(knobs.map(|k| (k, (k.key == "max_tokens").then_some(Value::Real(max_tokens)))).collect());
        LimiterSetting { budget: None, shipped: vec![LimiterKind::Grpc.build(&point).unwrap()] }
    };
    let explicit = tuned(&[("limiter", Value::Choice("grpc")), ("max_tokens", Value::Real(20.0))]);
    assert_eq!(explicit, grpc(20.0));
    let point = server_point(&[("strategy", Value::Choice("grpc")), ("max_tokens", Value::Real(20.0))]);
    assert_eq!(limiter_setting(&point, Preset::lookup("grpc")).unwrap(), grpc(20.0));
    assert_eq!(
        tuned(&[("limiter", Value::Choice("budget"))]),
        LimiterSetting { budget: Some(0.1), shipped: Vec::new() }
    );
}

#[test]
fn the_filtered_lists_hold_what_each_host_runs() {
    assert_eq!(ANY_POLICY.len(), Strategy::NAMES.len() + presets::ALL.len());
    assert!(POLICIES_FOR_SHARED_CALLERS.contains(&"grpc") && !POLICIES_FOR_SHARED_CALLERS.contains(&"systemd"));
    assert!(POLICIES_WITHOUT_LIMITER.contains(&"k8s-crashloop") && !POLICIES_WITHOUT_LIMITER.contains(&"grpc"));
    assert_eq!(ANY_LIMITER.len(), 4 + LimiterKind::ALL.len());
    assert!(!LIMITERS_FOR_SHARED_CALLERS.contains(&"systemd") && LIMITERS_FOR_SHARED_CALLERS.contains(&"envoy"));
    for name in ANY_POLICY {
        assert!(StrategyChoice::from_name(name).is_some(), "{name}");
    }
    for name in ANY_LIMITER {
        assert!(LimiterChoice::from_name(name).is_some(), "{name}");
    }
}
