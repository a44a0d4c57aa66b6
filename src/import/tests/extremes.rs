//! Durations past what the lab can sleep (2^64 ns, about 584 years): a file that writes one is refused at its
//! line, a wait that only grows past it is capped there, and neither panics.

use super::{import, value};
use crate::commands::check_runs;
use crate::import::*;
use std::time::Duration;

const LONGEST: &str = "\"18446744073709551615ns\"";

fn refused_at(format: &Format, text: &str, line: usize, field: &str) {
    let problem = import(format, text, None).unwrap_err();
    assert_eq!(problem.at.map(|at| at.line), Some(line), "{problem:?}");
    assert!(problem.field.ends_with(field), "{problem:?}");
    assert!(problem.message.contains("longer than the lab can sleep"), "{problem:?}");
}

#[test]
fn seconds_and_products_stop_at_the_longest_sleep() {
    assert_eq!(duration_from_secs(1.5), Some(Duration::from_millis(1500)));
    assert_eq!(duration_from_secs(1e10), Some(Duration::from_secs(10_000_000_000)), "317 years fit");
    for refused in [-1.0, f64::NAN, 1e300, f64::INFINITY] {
        assert_eq!(duration_from_secs(refused), None, "{refused}");
    }
    assert_eq!(scaled(Duration::from_millis(100), 2.5), Duration::from_millis(250));
    assert_eq!(scaled(Duration::from_secs(1), 1e300), LONGEST_SLEEP);
    assert_eq!(scaled(Duration::from_secs(1), f64::INFINITY), LONGEST_SLEEP);
    assert_eq!(scaled(Duration::from_secs(1), -1.0), Duration::ZERO);
    assert_eq!(scaled(Duration::from_secs(1), f64::NAN), Duration::ZERO);
}

#[test]
fn polly_without_max_delay_retrying_for_ever_is_capped_at_the_longest_sleep_with_a_warning() {
    let text =
        r#"{ "Retry": { "BackoffType": "Exponential", "Delay": "1.00:00:00", "MaxRetryAttempts": 2147483647 } }"#;
    let imported = import(&polly::FORMAT, text, None).unwrap();
    assert_eq!(value(&imported, "cap").as_deref(), Some(LONGEST), "{imported:#?}");
    assert!(imported.warnings.iter().any(|w| w.message.contains("Polly#1866")), "{imported:#?}");
    check_runs(&imported, "polly").unwrap();
    // With MaxDelay, or with few retries, the cap is what Polly reaches and nothing is said.
    let bounded = import(&polly::FORMAT, &text.replace("2147483647", "30").replace("1.00:00:00", "00:00:02"), None);
    let bounded = bounded.unwrap();
    assert_eq!(value(&bounded, "cap").as_deref(), Some("\"1073741824s\""), "2 s · 2^29");
    assert!(!bounded.warnings.iter().any(|w| w.message.contains("Polly#1866")), "{bounded:#?}");
    let text = "{ \"Retry\": { \"BackoffType\": \"Constant\",\n \"Delay\": \"10675200.00:00:00\" } }";
    let problem = import(&polly::FORMAT, text, None).unwrap_err();
    assert_eq!((problem.at.map(|at| at.line), problem.message.contains("TimeSpan")), (Some(2), true), "{problem:?}");
    refused_at(
        &polly::FORMAT,
        "{ \"Retry\": { \"BackoffType\": \"Constant\",\n \"Delay\": \"300000.00:00:00\" } }",
        2,
        "Delay",
    );
}

#[test]
fn library_waits_past_the_longest_sleep_are_refused_where_written() {
    refused_at(
        &resilience4j::FORMAT,
        "resilience4j:\n  retry:\n    instances:\n      a:\n        waitDuration: PT1e300S\n",
        5,
        "waitDuration",
    );
    refused_at(
        &grpc::FORMAT,
        "{\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": {\"maxAttempts\": 3,\n\"initialBackoff\": \"300000000000s\", \"maxBackoff\": \"300000000000s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}}]}",
        2,
        "initialBackoff",
    );
    let retry = "import org.springframework.retry.annotation.*;\nclass A {\n  @Retryable(backoff = @Backoff(delay = 1e300))\n  void call() {}\n}\n";
    refused_at(&spring::FORMAT, retry, 3, "@Backoff.delay");
    let framework = "import org.springframework.resilience.annotation.Retryable;\nclass A {\n  @Retryable(maxRetries = 2, DELAY)\n  void call() {}\n}\n";
    for (attribute, field) in [
        ("delay = 1e300", "@Retryable.delay"),
        ("maxDelay = 1e300", "@Retryable.maxDelay"),
        ("timeout = 1e300", "@Retryable.timeout"),
    ] {
        refused_at(&spring::FORMAT, &framework.replace("DELAY", attribute), 3, field);
    }
    let problem = import(
        &client_go::FORMAT,
        "package x\nvar b = wait.Backoff{\nDuration: 1e300 * time.Second, Steps: 5}\n",
        None,
    );
    assert_eq!(problem.unwrap_err().at.map(|at| at.line), Some(3));
}

#[test]
fn waits_that_grow_past_the_longest_sleep_are_capped_there() {
    let r4j = "resilience4j:\n  retry:\n    instances:\n      a:\n        maxAttempts: 100\n        waitDuration: 10s\n        enableExponentialBackoff: true\n        exponentialBackoffMultiplier: 1000\n";
    let go = "package x\nvar b = wait.Backoff{Duration: 10 * time.Second, Factor: 1000, Steps: 100}\n";
    let spring7 = "import org.springframework.resilience.annotation.Retryable;\nclass A {\n  @Retryable(maxRetries = 100, delay = 10000, multiplier = 1000)\n  void call() {}\n}\n";
    let capped = "waits grow past 584 years (the longest the lab can sleep) before the attempts run out";
    for (format, text, cap_field) in [
        (&resilience4j::FORMAT, r4j, "exponentialMaxWaitDuration"),
        (&client_go::FORMAT, go, "b.Cap"),
        (&spring::FORMAT, spring7, "@Retryable.maxDelay"),
    ] {
        let imported = import(format, text, None).unwrap();
        assert_eq!(value(&imported, "base").as_deref(), Some("\"10s\""), "{imported:#?}");
        assert_eq!(value(&imported, "cap").as_deref(), Some(LONGEST), "{imported:#?}");
        let warned: Vec<_> = imported.warnings.iter().filter(|w| w.message.contains(capped)).collect();
        assert!(warned.len() == 1 && warned[0].field.ends_with(cap_field), "{imported:#?}");
        check_runs(&imported, format.name).unwrap();
        // Ten attempts doubling from 10 s stay well inside 584 years: the cap is what the library reaches, unsaid.
        let few = import(format, &text.replace("1000", "2").replace("100", "10"), None).unwrap();
        assert!(few.warnings.iter().all(|w| !w.message.contains(capped)), "{few:#?}");
    }
}
