//! googleapis service configs, read as gapic-generator-python 1.44 and google-api-core 2.44 run them, and as a
//! gRPC channel would (`--reading channel`).

use super::{import, value};
use crate::commands::check_runs;
use crate::import::*;

const SPANNER: &str = r#"{
  "methodConfig": [{
    "name": [
      {"service": "google.spanner.v1.Spanner", "method": "ExecuteSql"},
      {"service": "google.spanner.v1.Spanner", "method": "Read"}
    ],
    "timeout": "30s",
    "retryPolicy": {
      "initialBackoff": "0.250s",
      "maxBackoff": "32s",
      "backoffMultiplier": 1.3,
      "retryableStatusCodes": ["UNAVAILABLE", "RESOURCE_EXHAUSTED"]
    }
  }, {
    "name": [{"service": "google.spanner.v1.Spanner"}],
    "timeout": "3600s"
  }, {
    "name": [{"service": "google.spanner.v1.Spanner", "method": "Commit"}],
    "retryPolicy": {"maxAttempts": 5, "retryableStatusCodes": ["UNAVAILABLE"]}
  }, {
    "name": [{"service": "google.spanner.v1.Spanner", "method": "ListSessions"}],
    "timeout": "10s"
  }]
}"#;

fn read(text: &str, method: &str, pins: &[versions::Pinned], reading: Option<&str>) -> Result<Imported, Problem> {
    (googleapis::FORMAT.translate)(&Input::new(text), &Ask { choice: Some(method), pins, reading })
}

#[test]
fn a_method_runs_google_api_core_with_no_attempt_cap_full_jitter_and_its_timeout_as_the_deadline() {
    let sql = read(SPANNER, "google.spanner.v1.Spanner/ExecuteSql", &[], None).unwrap();
    for (key, expected) in [
        ("strategy", "\"full-jitter-from-base\""),
        ("base", "\"250ms\""),
        ("cap", "\"32s\""),
        ("multiplier", "1.3"),
        ("deadline", "\"30s\""),
        ("timeout", "\"30s\""),
        ("retry_on", "[\"502\", \"503\", \"reset\", \"429\"]"),
        ("retry_after", "\"ignore\""),
    ] {
        assert_eq!(value(&sql, key).as_deref(), Some(expected), "{key}: {sql:#?}");
    }
    assert_eq!(value(&sql, "max_attempts"), None, "no attempt cap");
    assert_eq!(value(&sql, "pushback"), None, "the generated clients give the channel no retry policy");
    check_runs(&sql, "spanner").unwrap();
    // maxAttempts is never read; a policy without backoff keeps google-api-core's defaults; no timeout: no end.
    let commit = read(SPANNER, "google.spanner.v1.Spanner/Commit", &[], None).unwrap();
    assert_eq!(
        (value(&commit, "base").as_deref(), value(&commit, "cap").as_deref()),
        (Some("\"1s\""), Some("\"60s\""))
    );
    assert_eq!(
        (value(&commit, "max_attempts"), value(&commit, "deadline"), value(&commit, "timeout")),
        (None, None, None)
    );
    let said = |imported: &Imported, text: &str| imported.warnings.iter().any(|w| w.message.contains(text));
    assert!(said(&commit, "the generated clients never read it"), "{commit:#?}");
    assert!(said(&commit, "retries without end"), "{commit:#?}");
    // A timeout without a retry policy: one attempt with that timeout.
    let list = read(SPANNER, "google.spanner.v1.Spanner/ListSessions", &[], None).unwrap();
    assert_eq!(
        (value(&list, "max_attempts").as_deref(), value(&list, "timeout").as_deref()),
        (Some("1"), Some("\"10s\""))
    );
    // A service-wide name matches no method in gapic-generator-python.
    let other = read(SPANNER, "google.spanner.v1.Spanner/BeginTransaction", &[], None).unwrap();
    assert_eq!((value(&other, "max_attempts").as_deref(), value(&other, "timeout")), (Some("1"), None));
    assert!(said(&other, "covered only by a service-wide name"), "{other:#?}");
}

#[test]
fn the_channel_reading_is_grpcs_and_each_reading_names_the_other() {
    // A channel refuses the whole config for Commit's policy, which has no backoff; without it the rest is read.
    let problem = read(SPANNER, "google.spanner.v1.Spanner/ListSessions", &[], Some("channel")).unwrap_err();
    assert!(problem.message.contains("refuses the whole service config"), "{problem:?}");
    let complete = SPANNER.replacen("\"initialBackoff\"", "\"maxAttempts\": 5, \"initialBackoff\"", 1).replace(
        "\"retryPolicy\": {\"maxAttempts\": 5, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}",
        "\"timeout\": \"1s\"",
    );
    let channel = read(&complete, "google.spanner.v1.Spanner/ExecuteSql", &[], Some("channel")).unwrap();
    assert_eq!(value(&channel, "strategy").as_deref(), Some("\"grpc-jitter\""));
    assert_eq!(value(&channel, "max_attempts").as_deref(), Some("5"));
    assert_eq!(value(&channel, "pushback").as_deref(), Some("\"honour\""));
    assert!(channel.warnings.iter().any(|w| w.message.contains("read as a gRPC channel runs it")), "{channel:#?}");
    assert_eq!(channel.warnings.iter().filter(|w| w.message.contains("googleapis")).count(), 0, "one note, not two");
    // A channel refuses a retry policy without maxAttempts, as gRFC A6 does.
    let no_attempts = SPANNER.replace(
        "\"retryPolicy\": {\"maxAttempts\": 5, \"retryableStatusCodes\": [\"UNAVAILABLE\"]}",
        "\"timeout\": \"1s\"",
    );
    let problem = read(&no_attempts, "google.spanner.v1.Spanner/ExecuteSql", &[], Some("channel")).unwrap_err();
    assert!(problem.message.contains("gRFC A6 requires it"), "{problem:?}");
    let as_grpc = import(&grpc::FORMAT, &complete, Some("google.spanner.v1.Spanner/ExecuteSql")).unwrap();
    assert!(as_grpc.warnings.iter().any(|w| w.message.contains("looks like a googleapis service config")));
}

#[test]
fn googleapis_files_are_told_from_channel_configs_by_their_services() {
    let detected = |text: &str| FORMATS.iter().find(|format| (format.detect)(&Input::new(text))).map(|f| f.name);
    assert_eq!(detected(SPANNER), Some("googleapis"));
    assert_eq!(detected(&SPANNER.replace("google.spanner.v1.Spanner", "shop.Cart")), Some("grpc"));
    let mixed = SPANNER.replacen("google.spanner.v1.Spanner", "shop.Cart", 1);
    assert_eq!(detected(&mixed), Some("grpc"), "one service of the user's own makes it a channel config");
    assert_eq!(detected("{\"methodConfig\": []}"), Some("grpc"));
}

#[test]
fn codes_must_be_grpcs_names_and_an_initial_wait_above_the_maximum_depends_on_the_release() {
    let lower = SPANNER.replace("\"RESOURCE_EXHAUSTED\"", "\"resource_exhausted\"");
    let problem = read(&lower, "google.spanner.v1.Spanner/ExecuteSql", &[], None).unwrap_err();
    assert_eq!(problem.at.map(|at| at.line), Some(12), "{problem:?}");
    assert!(problem.message.contains("grpc.StatusCode"), "{problem:?}");
    let above = SPANNER.replace("\"0.250s\"", "\"40s\"");
    let newer = read(&above, "google.spanner.v1.Spanner/ExecuteSql", &[], None).unwrap();
    assert_eq!(value(&newer, "base").as_deref(), Some("\"32s\""), "the first wait is capped too");
    assert!(newer.releases.iter().any(|line| line.starts_with("google-api-core 2.16 or later")), "{newer:#?}");
    let pins = versions::parse_pins(["google-api-core=2.15"]).unwrap();
    let older = read(&above, "google.spanner.v1.Spanner/ExecuteSql", &pins, None).unwrap();
    assert!(older.warnings.iter().any(|w| w.message.contains("before google-api-core 2.16")), "{older:#?}");
    let ordinary = read(SPANNER, "google.spanner.v1.Spanner/ExecuteSql", &[], None).unwrap();
    assert!(
        !ordinary.releases.iter().any(|line| line.contains("2.16")),
        "2.16 does not matter when initialBackoff ≤ maxBackoff"
    );
}

#[test]
fn before_google_api_core_2_11_the_sleep_is_approximated_and_said_so() {
    let pins = versions::parse_pins(["google-api-core=2.10"]).unwrap();
    let older = read(SPANNER, "google.spanner.v1.Spanner/ExecuteSql", &pins, None).unwrap();
    assert_eq!(value(&older, "base").as_deref(), Some("\"500ms\""), "twice the initial backoff");
    assert!(older.warnings.iter().any(|w| w.message.starts_with("APPROXIMATE")), "{older:#?}");
    assert!(older.releases.iter().any(|line| line.starts_with("google-api-core before 2.11")), "{older:#?}");
    let timeout = older.settings.iter().find(|setting| setting.key == "timeout").unwrap();
    assert!(timeout.from.ends_with("each attempt's, whole"), "{timeout:?}");
    let unknown = SPANNER.replace("\"timeout\": \"30s\"", "\"timeout\": \"30s\", \"foobar\": 1");
    let read_unknown = read(&unknown, "google.spanner.v1.Spanner/ExecuteSql", &[], None).unwrap();
    assert!(
        read_unknown.warnings.iter().any(|w| w.field == "methodConfig[0].foobar" && w.message.starts_with("IGNORED"))
    );
    let unnamed = read(SPANNER, "google.spanner.v1.Other/Method", &[], None).unwrap();
    assert_eq!(value(&unnamed, "max_attempts").as_deref(), Some("1"));
    assert!(unnamed.warnings.iter().any(|w| w.message.contains("no config names google.spanner.v1.Other/Method")));
}
