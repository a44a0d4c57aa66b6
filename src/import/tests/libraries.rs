//! Resilience4j, Polly, client-go and Spring.

use super::{import, value};
use crate::commands::check_runs;
use crate::import::*;
use std::time::Duration;

const RESILIENCE4J: &str = "\
resilience4j:
  retry:
    configs:
      default:
        max-attempts: 4
        waitDuration: 200ms
    instances:
      payments:
        enableExponentialBackoff: true
        exponentialBackoffMultiplier: 2
        exponentialMaxWaitDuration: 1s
      search:
        baseConfig: slow
        enableRandomizedWait: true
";

#[test]
fn resilience4j_instances_merge_their_config_and_spread_waits_exactly() {
    let with_slow = format!("{RESILIENCE4J}      reports:\n        waitDuration: PT2S\n");
    let text = RESILIENCE4J.replace("    instances:", "      slow:\n        waitDuration: 1000\n    instances:");
    let payments = import(&resilience4j::FORMAT, &text, Some("payments")).unwrap();
    for (key, expected) in [
        ("strategy", "\"exponential-from-base\""),
        ("max_attempts", "4"),
        ("base", "\"200ms\""),
        ("cap", "\"1s\""),
        ("multiplier", "2.0"),
    ] {
        assert_eq!(value(&payments, key).as_deref(), Some(expected), "{key}: {payments:#?}");
    }
    // Randomized waits of 1 s ± 50%: U[500 ms, 1.5 s) is proportional-jitter from 500 ms with q = 2.
    let search = import(&resilience4j::FORMAT, &text, Some("search")).unwrap();
    for (key, expected) in [
        ("strategy", "\"proportional-jitter\""),
        ("base", "\"500ms\""),
        ("jitter_fraction", "2.0"),
        ("max_attempts", "3"),
    ] {
        assert_eq!(value(&search, key).as_deref(), Some(expected), "{key}: {search:#?}");
    }
    check_runs(&search, "r4j").unwrap();
    check_runs(&payments, "r4j").unwrap();
    let reports = import(&resilience4j::FORMAT, &with_slow, Some("reports")).unwrap();
    assert_eq!(
        (value(&reports, "strategy").as_deref(), value(&reports, "base").as_deref()),
        (Some("\"constant\""), Some("\"2s\""))
    );
    // The cap is ignored without a multiplier, and exponential waits need a waitDuration somewhere.
    let ignored = RESILIENCE4J
        .replace("        exponentialBackoffMultiplier: 2\n", "")
        .replace("        waitDuration: 200ms\n", "");
    let imported = import(&resilience4j::FORMAT, &ignored, Some("payments")).unwrap();
    let said: Vec<String> = imported.warnings.iter().map(describe).collect();
    assert!(
        said.iter().any(|w| w.contains("ignored: Resilience4j applies it only with exponentialBackoffMultiplier")),
        "{said:#?}"
    );
    assert!(said.iter().any(|w| w.contains("the waits stay a fixed 500ms")), "{said:#?}");
    assert_eq!(value(&imported, "strategy").as_deref(), Some("\"constant\""));
    for (from, to, line, message) in [
        ("max-attempts: 4", "max-atempts: 4", 5, "unknown field `max-atempts`"),
        ("waitDuration: 200ms", "waitDuration: 200 parsecs", 6, "like \"500ms\""),
        ("baseConfig: slow", "baseConfig: fast", 15, "no config \"fast\""),
    ] {
        let problem = import(
            &resilience4j::FORMAT,
            &text.replace(from, to),
            Some(if line == 15 { "search" } else { "payments" }),
        )
        .expect_err(to);
        assert_eq!(problem.at.map(|at| at.line), Some(line), "{to}: {problem:?}");
        assert!(problem.message.contains(message), "{to}: {problem:?}");
    }
    let problem = import(&resilience4j::FORMAT, &text, None).unwrap_err();
    assert!(problem.message.contains("choose one with --instance NAME"), "{problem:?}");
}

const POLLY: &str = r#"{
  "Resilience": {
    "Standard": {
      "AttemptTimeout": { "Timeout": "00:00:01" },
      "TotalRequestTimeout": { "Timeout": "00:00:05" },
      "Retry": { "MaxRetryAttempts": 4, "Delay": "00:00:00.2", "MaxDelay": "00:00:02" }
    },
    "Core": { "MaxRetryAttempts": 2, "BackoffType": "Constant", "UseJitter": true, "Delay": "2" }
  }
}"#;

#[test]
fn resilience4j_reads_any_split_of_its_dotted_keys_and_refuses_one_property_given_twice() {
    let dotted = "resilience4j.retry:\n  instances:\n    a:\n      maxAttempts: 4\n\
                  resilience4j.retry.instances.b.max-attempts: 5\n\
                  resilience4j:\n  retry.configs.default.wait-duration: 2s\n";
    let a = import(&resilience4j::FORMAT, dotted, Some("a")).unwrap();
    assert_eq!((value(&a, "max_attempts").as_deref(), value(&a, "base").as_deref()), (Some("4"), Some("\"2s\"")));
    let b = import(&resilience4j::FORMAT, dotted, Some("b")).unwrap();
    assert_eq!(value(&b, "max_attempts").as_deref(), Some("5"));
    assert_eq!(FORMATS.iter().find(|f| (f.detect)(&Input::new(dotted))).map(|f| f.name), Some("resilience4j"));
    let twice = "resilience4j.retry.instances.a.maxAttempts: 3\nresilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 4\n";
    let problem = import(&resilience4j::FORMAT, twice, Some("a")).unwrap_err();
    assert_eq!(
        (problem.field.as_str(), problem.at.map(|at| at.line)),
        ("resilience4j.retry.instances.a.maxAttempts", Some(6))
    );
    let relaxed = "resilience4j.retry.instances.a:\n  max-attempts: 3\n  maxAttempts: 4\n";
    let problem = import(&resilience4j::FORMAT, relaxed, Some("a")).unwrap_err();
    assert!(problem.message.contains("relaxed binding"), "{problem:?}");
    // A refusal that names its cause, where no format recognises the file.
    let near = (resilience4j::FORMAT.near_miss.unwrap())(&Input::new(twice)).unwrap();
    assert!(near.message.contains("is given twice"), "{near:?}");
    let breaker = "resilience4j.circuitbreaker:\n  instances:\n    a: {}\n";
    let near = (resilience4j::FORMAT.near_miss.unwrap())(&Input::new(breaker)).unwrap();
    assert!(near.message.contains("(circuitbreaker) but no `resilience4j.retry` section"), "{near:?}");
    assert!((resilience4j::FORMAT.near_miss.unwrap())(&Input::new("kind: Thing\n")).is_none());
}

#[test]
fn polly_options_follow_their_backoff_type_and_the_http_defaults() {
    let standard = import(&polly::FORMAT, POLLY, Some("Resilience.Standard.Retry")).unwrap();
    for (key, expected) in [
        ("strategy", "\"polly-v2\""),
        ("max_attempts", "5"),
        ("base", "\"200ms\""),
        ("cap", "\"2s\""),
        ("timeout", "\"1s\""),
        ("deadline", "\"5s\""),
        ("retry_after", "\"honour\""),
    ] {
        assert_eq!(value(&standard, key).as_deref(), Some(expected), "{key}: {standard:#?}");
    }
    check_runs(&standard, "polly").unwrap();
    let core = import(&polly::FORMAT, POLLY, Some("Resilience.Core")).unwrap();
    assert_eq!(value(&core, "strategy").as_deref(), Some("\"proportional-jitter\""));
    assert_eq!(value(&core, "base").as_deref(), Some("\"129600s\""), "0.75 × 2 days");
    assert!(core.warnings.iter().any(|w| w.message.contains("\"2\" is 2 day(s)")), "{core:#?}");
    assert_eq!(value(&core, "retry_after").as_deref(), Some("\"ignore\""));
    check_runs(&core, "polly").unwrap();
    let problem =
        import(&polly::FORMAT, &POLLY.replace("\"Constant\"", "\"Fibonacci\""), Some("Resilience.Core")).unwrap_err();
    assert_eq!(
        (problem.at.map(|at| at.line), problem.message.contains("Constant, Linear or Exponential")),
        (Some(8), true),
        "{problem:?}"
    );
    let problem = import(&polly::FORMAT, &POLLY.replace("00:00:00.2", "00:61:00"), Some("Resilience.Standard.Retry"))
        .unwrap_err();
    assert!(problem.message.contains("expected a TimeSpan"), "{problem:?}");
    assert_eq!(FORMATS.iter().find(|f| (f.detect)(&Input::new(POLLY))).map(|f| f.name), Some("polly"));
}

const CLIENT_GO: &str = "\
package controller

var syncBackoff = wait.Backoff{
	Duration: 100 * time.Millisecond,
	Factor:   2.0,
	Jitter:   0.5,
	Steps:    6,
	Cap:      time.Second,
}

func update() error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error { return nil })
}
";

#[test]
fn client_go_backoffs_are_proportional_jitter_with_steps_as_attempts() {
    let sync = import(&client_go::FORMAT, CLIENT_GO, Some("syncBackoff")).unwrap();
    for (key, expected) in [
        ("strategy", "\"proportional-jitter\""),
        ("base", "\"100ms\""),
        ("multiplier", "2.0"),
        ("jitter_fraction", "0.5"),
        ("cap", "\"1s\""),
        ("max_attempts", "6"),
    ] {
        assert_eq!(value(&sync, key).as_deref(), Some(expected), "{key}: {sync:#?}");
    }
    assert!(sync.warnings.iter().any(|w| w.message.contains("sets Steps to 0")), "{sync:#?}");
    let default = import(&client_go::FORMAT, CLIENT_GO, Some("retry.DefaultRetry")).unwrap();
    assert_eq!(
        (value(&default, "base").as_deref(), value(&default, "max_attempts").as_deref()),
        (Some("\"10ms\""), Some("5"))
    );
    assert_eq!(value(&default, "cap").as_deref(), Some("\"10ms\""), "Factor 1: every sleep is the base");
    check_runs(&sync, "go").unwrap();
    check_runs(&default, "go").unwrap();
    let problem = import(&client_go::FORMAT, &CLIENT_GO.replace("Jitter:   0.5", "Jiter:   0.5"), Some("syncBackoff"))
        .unwrap_err();
    assert_eq!(
        (problem.at.map(|at| (at.line, at.column)), problem.field.as_str()),
        (Some((6, 2)), "syncBackoff.Jiter")
    );
    let problem = import(
        &client_go::FORMAT,
        &CLIENT_GO.replace("100 * time.Millisecond", "100 * time.Fortnight"),
        Some("syncBackoff"),
    )
    .unwrap_err();
    assert!(problem.message.contains("expected a duration"), "{problem:?}");
    assert_eq!(client_go_duration("2 * time.Second"), Some(Duration::from_secs(2)));
    assert_eq!(FORMATS.iter().find(|f| (f.detect)(&Input::new(CLIENT_GO))).map(|f| f.name), Some("client-go"));
}

fn client_go_duration(text: &str) -> Option<std::time::Duration> {
    let literal = format!("b := wait.Backoff{{Duration: {text}, Steps: 2}}");
    let imported = import(&client_go::FORMAT, &literal, None).ok()?;
    let base = value(&imported, "base")?;
    let millis: u64 = base.trim_matches('"').strip_suffix('s').and_then(|s| s.parse().ok()).map(|s: u64| s * 1000)?;
    Some(std::time::Duration::from_millis(millis))
}

const SPRING: &str = r#"
import org.springframework.retry.annotation.Retryable;

class Payments {
    @Retryable(maxAttempts = 4, backoff = @Backoff(delay = 100, multiplier = 2))
    public void charge(Order order) {}

    @Retryable(retryFor = IOException.class, backoff = @Backoff(delay = 200, maxDelay = 600))
    public void refund(Order order) {}

    @org.springframework.resilience.annotation.Retryable(maxRetries = 2, delay = 50, multiplier = 3, maxDelay = 400)
    public void notify(Order order) {}
}
"#;

#[test]
fn spring_retryable_annotations_of_both_generations() {
    let charge = import(&spring::FORMAT, SPRING, Some("charge")).unwrap();
    for (key, expected) in [
        ("strategy", "\"exponential-from-base\""),
        ("max_attempts", "4"),
        ("base", "\"100ms\""),
        ("multiplier", "2.0"),
        ("cap", "\"30s\""),
    ] {
        assert_eq!(value(&charge, key).as_deref(), Some(expected), "{key}: {charge:#?}");
    }
    assert!(charge.warnings.iter().any(|w| w.message.contains("caps the exponential waits at 30s")));
    // delay 200 ms, maxDelay 600 ms, no multiplier: uniform in [200, 600) = proportional jitter with q = 2.
    let refund = import(&spring::FORMAT, SPRING, Some("refund")).unwrap();
    for (key, expected) in [
        ("strategy", "\"proportional-jitter\""),
        ("base", "\"200ms\""),
        ("jitter_fraction", "2.0"),
        ("max_attempts", "3"),
    ] {
        assert_eq!(value(&refund, key).as_deref(), Some(expected), "{key}: {refund:#?}");
    }
    let notify = import(&spring::FORMAT, SPRING, Some("notify")).unwrap();
    for (key, expected) in [
        ("strategy", "\"exponential-from-base\""),
        ("max_attempts", "3"),
        ("base", "\"50ms\""),
        ("multiplier", "3.0"),
        ("cap", "\"400ms\""),
    ] {
        assert_eq!(value(&notify, key).as_deref(), Some(expected), "{key}: {notify:#?}");
    }
    assert!(notify.warnings.iter().any(|w| w.message.contains("counts retries, not attempts")));
    for imported in [&charge, &refund, &notify] {
        check_runs(imported, "spring").unwrap();
    }
    let problem =
        import(&spring::FORMAT, &SPRING.replace("maxAttempts = 4", "maxAtempts = 4"), Some("charge")).unwrap_err();
    assert_eq!(
        (problem.at.map(|at| at.line), problem.field.as_str()),
        (Some(5), "@Retryable.maxAtempts"),
        "{problem:?}"
    );
    let problem = import(&spring::FORMAT, SPRING, None).unwrap_err();
    assert!(
        problem.message.contains("3 methods; choose one with --method NAME:\n  charge\n  refund\n  notify"),
        "{problem:?}"
    );
}

/// Where a library spreads the wait and then caps it, the translation caps after the spread too: past the cap
/// every wait is exactly the cap, as in Resilience4j, Spring Retry's random back-off and Linkerd.
#[test]
fn a_spread_then_capped_wait_keeps_its_point_mass_at_the_cap() {
    let r4j = RESILIENCE4J.replace("        baseConfig: slow\n", "        enableExponentialBackoff: true\n        exponentialBackoffMultiplier: 2\n        exponentialMaxWaitDuration: 1s\n        randomizedWaitFactor: 0.5\n");
    let search = import(&resilience4j::FORMAT, &r4j, Some("search")).unwrap();
    for (key, expected) in [
        ("strategy", "\"proportional-jitter-capped\""),
        ("base", "\"100ms\""),
        ("jitter_fraction", "2.0"),
        ("multiplier", "2.0"),
        ("cap", "\"1s\""),
    ] {
        assert_eq!(value(&search, key).as_deref(), Some(expected), "{key}: {search:#?}");
    }
    assert!(
        !search.warnings.iter().any(|w| w.field == "exponentialMaxWaitDuration"),
        "exact now: {:#?}",
        search.warnings
    );
    let random = SPRING.replace("multiplier = 2))", "multiplier = 2, maxDelay = 1000, random = true))");
    let charge = import(&spring::FORMAT, &random, Some("charge")).unwrap();
    for (key, expected) in
        [("strategy", "\"proportional-jitter-capped\""), ("jitter_fraction", "1.0"), ("cap", "\"1s\"")]
    {
        assert_eq!(value(&charge, key).as_deref(), Some(expected), "{key}: {charge:#?}");
    }
    assert!(!charge.warnings.iter().any(|w| w.field == "@Backoff.random"), "{:#?}", charge.warnings);
    for imported in [&search, &charge] {
        check_runs(imported, "spread").unwrap();
    }
}
