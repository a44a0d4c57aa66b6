use super::*;
use std::time::Duration;

fn import(format: &Format, text: &str, choice: Option<&str>) -> Result<Imported, Problem> {
    (format.translate)(&Input::new(text), choice)
}

fn value(imported: &Imported, key: &str) -> Option<String> {
    imported.settings.iter().find(|setting| setting.key == key).map(|setting| setting.value.to_string())
}

const GRPC: &str = r#"{
  "methodConfig": [{
    "name": [{"service": "helloworld.Greeter", "method": "SayHello"}],
    "timeout": "2s",
    "retryPolicy": {
      "maxAttempts": 7,
      "initialBackoff": "0.1s",
      "maxBackoff": "1.5s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "resource_exhausted", 13]
    }
  }, {
    "name": [{"service": "helloworld.Greeter"}],
    "waitForReady": true
  }],
  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1234}
}"#;

#[test]
fn a_grpc_retry_policy_becomes_the_labs_keys_field_by_field() {
    let imported = import(&grpc::FORMAT, GRPC, Some("helloworld.Greeter/SayHello")).unwrap();
    for (key, expected) in [
        ("strategy", "\"grpc-jitter\""),
        ("max_attempts", "5"),
        ("base", "\"100ms\""),
        ("cap", "\"1500ms\""),
        ("multiplier", "2.0"),
        ("retry_on", "[\"502\", \"503\", \"reset\", \"429\"]"),
        ("timeout", "\"2s\""),
        ("deadline", "\"2s\""),
        ("retry_after", "\"honour\""),
        ("limiter", "\"grpc\""),
        ("max_tokens", "10.0"),
        ("token_ratio", "0.123"),
        ("limiter_scope", "\"client\""),
    ] {
        assert_eq!(value(&imported, key).as_deref(), Some(expected), "{key}: {imported:#?}");
    }
    let warnings: Vec<String> = imported.warnings.iter().map(describe).collect();
    let said = |text: &str| warnings.iter().any(|warning| warning.contains(text));
    assert!(said("methodConfig[0].retryPolicy.maxAttempts (line 6): 7 is above gRPC's limit of 5"), "{warnings:#?}");
    assert!(said("INTERNAL: the server model never answers it"), "{warnings:#?}");
    assert!(said("0.1234 has more than 3 decimals; gRPC keeps 0.123"), "{warnings:#?}");
    assert!(
        said("[1] (line 10): \"resource_exhausted\": A6 allows any case, but the C core (grpcio) refuses"),
        "{warnings:#?}"
    );
    assert!(said("[2] (line 10): 13: A6 and grpc-go accept numbers"), "{warnings:#?}");
    assert!(said("perAttemptRecvTimeout: unset"), "{warnings:#?}");
    assert_eq!(imported.entry.as_deref(), Some("helloworld.Greeter/SayHello"));
}

#[test]
fn grpc_implementations_differences_are_warned_about() {
    let text = GRPC
        .replace("\"maxAttempts\": 7", "\"MaxAttempts\": 3")
        .replace("\"0.1s\"", "\".1s\"")
        .replace("\"maxTokens\": 10", "\"maxTokens\": 2000")
        .replace("\"backoffMultiplier\": 2", "\"backoffMultiplier\": 0.5")
        .replace("\"methodConfig\": [{", "\"methodConfig\": [{\"name\": [], \"timeout\": \"1s\"}, {");
    let imported = import(&grpc::FORMAT, &text, Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!(value(&imported, "max_attempts").as_deref(), Some("3"));
    assert_eq!(value(&imported, "base").as_deref(), Some("\"100ms\""));
    assert_eq!(value(&imported, "max_tokens").as_deref(), Some("2000.0"));
    let warnings: Vec<String> = imported.warnings.iter().map(describe).collect();
    let said = |text: &str| warnings.iter().any(|warning| warning.contains(text));
    assert!(said("MaxAttempts (line 6): grpc-go reads `MaxAttempts` as `maxAttempts`; the C core"), "{warnings:#?}");
    assert!(said("initialBackoff (line 7): \".1s\": grpc-go reads a duration without its leading 0"), "{warnings:#?}");
    assert!(said("write \"0.1s\""), "{warnings:#?}");
    assert!(said("2000 is above A6's limit of 1000"), "{warnings:#?}");
    assert!(said("below 1: the waits shrink"), "{warnings:#?}");
    assert!(said("methodConfig[0].name (line 2): no name: gRPC skips this method config"), "{warnings:#?}");
    let experimental =
        GRPC.replace("\"backoffMultiplier\": 2,", "\"backoffMultiplier\": 2, \"perAttemptRecvTimeout\": \"0.3s\",");
    let imported = import(&grpc::FORMAT, &experimental, Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!(value(&imported, "timeout").as_deref(), Some("\"300ms\""));
    assert!(value(&imported, "retry_on").unwrap().contains("timeout"));
    assert!(imported.warnings.iter().any(|w| w.message.contains("grpc.experimental.enable_hedging")));
    let hedged = GRPC.replace("\"retryPolicy\"", "\"hedgingPolicy\"");
    let hedged = import(&grpc::FORMAT, &hedged, Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!(value(&hedged, "max_attempts").as_deref(), Some("1"));
    assert!(hedged.warnings.iter().any(|w| w.message.contains("ignore hedgingPolicy")));
}

#[test]
fn grpc_finds_a_method_as_grpc_does_and_lists_the_entries_otherwise() {
    // Another method of the service falls back to the service-wide config: no retry policy, one attempt.
    let service = import(&grpc::FORMAT, GRPC, Some("helloworld.Greeter/SayGoodbye")).unwrap();
    assert_eq!(service.entry.as_deref(), Some("helloworld.Greeter/*"));
    assert_eq!(value(&service, "max_attempts").as_deref(), Some("1"));
    let none = import(&grpc::FORMAT, GRPC, None).unwrap_err();
    assert!(none.message.contains("2 methods; choose one with --method NAME"), "{}", none.message);
    assert!(none.message.contains("  helloworld.Greeter/SayHello\n  helloworld.Greeter/*"), "{}", none.message);
    let missing = import(&grpc::FORMAT, GRPC, Some("other.Service/Call")).unwrap_err();
    assert!(missing.message.contains("no method \"other.Service/Call\""), "{}", missing.message);
}

#[test]
fn bad_grpc_files_are_refused_where_they_are_wrong() {
    let with =
        |from: &str, to: &str| import(&grpc::FORMAT, &GRPC.replace(from, to), Some("helloworld.Greeter/SayHello"));
    for (from, to, field, line, message) in [
        ("\"maxAttempts\": 7", "\"maxAttempts\": 1", "methodConfig[0].retryPolicy.maxAttempts", 6, "1 is below 2"),
        (
            "\"maxAttempts\": 7",
            "\"maxAttempts\": \"7\"",
            "methodConfig[0].retryPolicy.maxAttempts",
            6,
            "expected a whole",
        ),
        ("\"0.1s\"", "\"100ms\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "expected a duration like \"0.1s\""),
        ("\"0.1s\"", "\"0s\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "longer than 0s"),
        (
            "\"backoffMultiplier\": 2",
            "\"backoffMultiplier\": 0",
            "methodConfig[0].retryPolicy.backoffMultiplier",
            9,
            "a number > 0",
        ),
        ("13]", "\"SOMETIMES\"]", "methodConfig[0].retryPolicy.retryableStatusCodes[2]", 10, "not a gRPC status code"),
        ("\"maxTokens\": 10", "\"maxTokens\": 0", "retryThrottling.maxTokens", 16, "not above 0"),
        ("\"0.1s\"", "\"0.1234567891s\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "like \"0.1s\""),
        ("\"0.1s\"", "\"s\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "like \"0.1s\""),
        (
            "\"service\": \"helloworld.Greeter\"}]",
            "\"service\": \"helloworld.Greeter\", \"method\": \"SayHello\"}]",
            "methodConfig[1].name",
            12,
            "named by two method configs",
        ),
        ("\"tokenRatio\": 0.1234", "\"tokenRatio\": 0", "retryThrottling.tokenRatio", 16, "greater than 0"),
        ("\"maxBackoff\"", "\"maxBackof\"", "methodConfig[0].retryPolicy.maxBackof", 8, "unknown field `maxBackof`"),
        ("\"waitForReady\"", "\"waitForReadyy\"", "methodConfig[1].waitForReadyy", 14, "unknown field"),
    ] {
        let problem = with(from, to).expect_err(to);
        assert_eq!((problem.field.as_str(), problem.at.map(|at| at.line)), (field, Some(line)), "{to}: {problem:?}");
        assert!(problem.message.contains(message), "{to}: {problem:?}");
    }
    let both = GRPC.replace("\"timeout\": \"2s\",", "\"timeout\": \"2s\", \"hedgingPolicy\": {},");
    let problem = import(&grpc::FORMAT, &both, Some("helloworld.Greeter/SayHello")).unwrap_err();
    assert!(problem.message.contains("not both"), "{problem:?}");
    let problem = import(&grpc::FORMAT, "{\"methodConfig\": [1, 2}", None).unwrap_err();
    assert!(problem.message.starts_with("invalid YAML/JSON"), "{problem:?}");
    assert_eq!(problem.at.map(|at| at.line), Some(1));
    let problem = import(&grpc::FORMAT, "{\"methodConfig\": [1]}", None).unwrap_err();
    assert_eq!(
        (problem.field.as_str(), problem.message.as_str()),
        ("methodConfig[0]", "expected a method config (a JSON object), found 1")
    );
}

const AWS: &str = "\
# shared config
[default]
region = eu-west-1
retry_mode = adaptive
max_attempts = 5

[profile batch]
retry_mode = legacy
s3 =
  max_concurrent_requests = 20

[sso-session corp]
sso_region = us-east-1
";

#[test]
fn an_aws_profile_becomes_the_preset_of_its_mode() {
    let default = import(&aws_config::FORMAT, AWS, Some("default")).unwrap();
    assert_eq!(value(&default, "strategy").as_deref(), Some("\"aws-sdk-adaptive\""));
    assert_eq!(value(&default, "max_attempts").as_deref(), Some("5"));
    assert!(default.warnings.iter().any(|warning| warning.message.contains("botocore-standard")));
    let batch = import(&aws_config::FORMAT, AWS, Some("batch")).unwrap();
    assert_eq!(value(&batch, "strategy").as_deref(), Some("\"botocore-legacy\""));
    assert_eq!(value(&batch, "max_attempts"), None, "the preset's own attempts");
    let problem = import(&aws_config::FORMAT, AWS, None).unwrap_err();
    assert!(problem.message.contains("2 profiles; choose one with --profile NAME"), "{problem:?}");
    let unset = import(&aws_config::FORMAT, "[profile x]\nmax_attempts = 2\n", None).unwrap();
    assert_eq!(value(&unset, "strategy").as_deref(), Some("\"aws-sdk-standard\""));
    assert!(unset.warnings.iter().any(|warning| warning.message.starts_with("unset: each SDK picks")));
}

#[test]
fn bad_aws_profiles_are_refused_where_they_are_wrong() {
    for (text, line, message) in [
        ("[default]\nretry_mode = fast\n", 2, "\"fast\" is not a retry mode; valid: standard, adaptive, legacy"),
        ("[default]\nmax_attempts = three\n", 2, "not a whole number"),
        ("[default]\nmax_attempts = 0\n", 2, "outside 1 to 1000"),
        ("[default]\nmax-attempts = 3\n", 2, "unknown retry setting `max-attempts`"),
        ("[default\nretry_mode = standard\n", 1, "must end with `]`"),
        ("[default]\nretry_mode standard\n", 2, "expected `key = value`"),
        ("[default]\n[default]\n", 2, "given twice"),
    ] {
        let problem = import(&aws_config::FORMAT, text, None).expect_err(text);
        assert_eq!(problem.at.map(|at| at.line), Some(line), "{text}: {problem:?}");
        assert!(problem.message.contains(message), "{text}: {problem:?}");
    }
}

#[test]
fn a_file_is_recognised_by_its_shape_and_every_translation_runs() {
    let detected = |text: &str| FORMATS.iter().find(|format| (format.detect)(&Input::new(text))).map(|f| f.name);
    assert_eq!(detected(GRPC), Some("grpc"));
    assert_eq!(detected(AWS), Some("aws-config"));
    assert_eq!(detected("[default]\nregion = x\n"), None);
    assert_eq!(detected("{\"other\": 1}"), None);
    for (format, text, choice) in
        [(&grpc::FORMAT, GRPC, "helloworld.Greeter/SayHello"), (&aws_config::FORMAT, AWS, "default")]
    {
        let imported = import(format, text, Some(choice)).unwrap();
        check_runs(&imported, "test")
            .unwrap_or_else(|error| panic!("{}: {error}\n{}", format.name, imported.client_block("x")));
    }
}

#[test]
fn the_block_names_each_keys_source_and_lists_the_traps() {
    let imported = import(&grpc::FORMAT, GRPC, Some("helloworld.Greeter/SayHello")).unwrap();
    let block = imported.client_block("retrylab import svc.json (grpc, method helloworld.Greeter/SayHello)");
    assert!(
        block.starts_with("# retrylab import svc.json (grpc, method helloworld.Greeter/SayHello)\n[client]\n"),
        "{block}"
    );
    assert!(block.contains("max_attempts = 5 "), "{block}");
    assert!(
        block.contains("# methodConfig[0].retryPolicy.maxAttempts = 7: every attempt, the first included\n"),
        "{block}"
    );
    assert!(
        block.contains("# Traps crossed on the way:\n# - methodConfig[0].retryPolicy.maxAttempts (line 6)"),
        "{block}"
    );
    let parsed: toml::Table = block.parse().unwrap();
    assert_eq!(parsed["client"]["max_attempts"].as_integer(), Some(5));
}

const ENVOY: &str = "\
static_resources:
  listeners:
  - name: ingress
    filter_chains:
    - filters:
      - name: envoy.filters.network.http_connection_manager
        typed_config:
          route_config:
            virtual_hosts:
            - name: shop
              domains: [\"*\"]
              retry_policy:
                retry_on: connect-failure
                num_retries: 2
              routes:
              - name: cart
                match: {prefix: /cart}
                route:
                  cluster: cart
                  timeout: 3s
                  retry_policy:
                    retry_on: 5xx,retriable-status-codes,bogus
                    retriable_status_codes: [429]
                    num_retries: 4
                    per_try_timeout: 0.5s
                    retry_back_off: {base_interval: 0.1s}
              - match: {prefix: /}
                route: {cluster: web}
  clusters:
  - name: cart
    circuit_breakers:
      thresholds:
      - priority: DEFAULT
        retry_budget: {budget_percent: {value: 25.0}, min_retry_concurrency: 5}
";

#[test]
fn an_envoy_route_becomes_the_labs_keys_and_its_clusters_budget() {
    let cart = import(&envoy::FORMAT, ENVOY, Some("shop/cart")).unwrap();
    for (key, expected) in [
        ("strategy", "\"full-jitter-from-base\""),
        ("max_attempts", "5"),
        ("base", "\"100ms\""),
        ("cap", "\"1s\""),
        ("timeout", "\"500ms\""),
        ("deadline", "\"3s\""),
        ("retry_on", "[\"5xx\", \"reset\", \"429\", \"timeout\"]"),
        ("retry_after", "\"ignore\""),
        ("limiter", "\"envoy\""),
        ("budget_percent", "25.0"),
        ("min_retry_concurrency", "5"),
    ] {
        assert_eq!(value(&cart, key).as_deref(), Some(expected), "{key}: {cart:#?}");
    }
    let warnings: Vec<String> = cart.warnings.iter().map(describe).collect();
    assert!(warnings.iter().any(|w| w.contains("\"bogus\" is no condition Envoy knows")), "{warnings:#?}");
    assert!(warnings.iter().any(|w| w.contains("caps at 10 × base_interval")), "{warnings:#?}");
    // The other route inherits its virtual host's policy, defaults and the default breaker of an unknown cluster.
    let web = import(&envoy::FORMAT, ENVOY, Some("shop//")).unwrap();
    assert_eq!(value(&web, "max_attempts").as_deref(), Some("3"));
    assert_eq!(value(&web, "retry_on").as_deref(), Some("[\"reset\"]"));
    assert_eq!((value(&web, "base").as_deref(), value(&web, "cap").as_deref()), (Some("\"25ms\""), Some("\"250ms\"")));
    assert_eq!(value(&web, "timeout").as_deref(), Some("\"15s\""), "Envoy's default route timeout");
    assert_eq!(
        (value(&web, "budget_percent").as_deref(), value(&web, "min_retry_concurrency").as_deref()),
        (Some("0.0"), Some("3"))
    );
    let said: Vec<String> = web.warnings.iter().map(describe).collect();
    assert!(said.iter().any(|w| w.contains("its virtual host's applies")), "{said:#?}");
    assert!(said.iter().any(|w| w.contains("not in this file")), "{said:#?}");
    let problem = import(&envoy::FORMAT, ENVOY, None).unwrap_err();
    assert!(problem.message.contains("2 routes; choose one with --route NAME:\n  shop/cart\n  shop//"), "{problem:?}");
    for (from, to, line, message) in [
        ("num_retries: 4", "num_retries: -1", 24, "a whole number of retries"),
        ("base_interval: 0.1s", "base_interval: 100ms", 26, "like \"0.1s\""),
        ("per_try_timeout: 0.5s", "per_try_timout: 0.5s", 25, "unknown field `per_try_timout`"),
        ("{base_interval: 0.1s}", "{base_interval: 0.1s, max_interval: 0.05s}", 26, "shorter than base_interval"),
    ] {
        let problem = import(&envoy::FORMAT, &ENVOY.replace(from, to), Some("shop/cart")).expect_err(to);
        assert_eq!(problem.at.map(|at| at.line), Some(line), "{to}: {problem:?}");
        assert!(problem.message.contains(message), "{to}: {problem:?}");
    }
    let imported = import(&envoy::FORMAT, ENVOY, Some("shop/cart")).unwrap();
    check_runs(&imported, "envoy").unwrap_or_else(|error| panic!("{error}\n{}", imported.client_block("x")));
    assert_eq!(FORMATS.iter().find(|f| (f.detect)(&Input::new(ENVOY))).map(|f| f.name), Some("envoy"));
}

const ISTIO: &str = "\
apiVersion: networking.istio.io/v1
kind: VirtualService
metadata: {name: reviews}
spec:
  hosts: [reviews]
  http:
  - name: v2
    timeout: 10s
    retries:
      attempts: 3
      perTryTimeout: 2s
      retryOn: gateway-error,connect-failure,429
      backoff: 50ms
    route:
    - destination: {host: reviews.prod.svc.cluster.local, subset: v2}
  - name: default
    route:
    - destination: {host: ratings}
  - name: off
    retries: {perTryTimeout: 1s}
    route:
    - destination: {host: ratings}
---
apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: reviews}
spec:
  host: reviews
  trafficPolicy:
    retryBudget: {percent: 10, minRetryConcurrency: 2}
";

#[test]
fn an_istio_route_becomes_envoys_policy_with_istios_defaults_and_traps() {
    let v2 = import(&istio::FORMAT, ISTIO, Some("reviews/v2")).unwrap();
    for (key, expected) in [
        ("max_attempts", "4"),
        ("base", "\"50ms\""),
        ("cap", "\"500ms\""),
        ("timeout", "\"2s\""),
        ("deadline", "\"10s\""),
        ("retry_on", "[\"502\", \"503\", \"504\", \"reset\", \"429\", \"timeout\"]"),
        ("limiter", "\"envoy\""),
        ("budget_percent", "10.0"),
        ("min_retry_concurrency", "2"),
    ] {
        assert_eq!(value(&v2, key).as_deref(), Some(expected), "{key}: {v2:#?}");
    }
    assert!(
        v2.warnings.iter().any(|w| w.message.contains("counts retries, not attempts: 3 retries are max_attempts = 4"))
    );
    let default = import(&istio::FORMAT, ISTIO, Some("reviews/default")).unwrap();
    assert_eq!(value(&default, "max_attempts").as_deref(), Some("3"), "Istio's default: 2 retries");
    assert_eq!(value(&default, "retry_on").as_deref(), Some("[\"reset\", \"503\"]"));
    assert_eq!(value(&default, "limiter").as_deref(), Some("\"off\""));
    assert_eq!(value(&default, "timeout"), None);
    let said: Vec<String> = default.warnings.iter().map(describe).collect();
    assert!(said.iter().any(|w| w.contains("2^32 − 1")), "{said:#?}");
    assert!(said.iter().any(|w| w.contains("cancelled: the server model never answers it")), "{said:#?}");
    let off = import(&istio::FORMAT, ISTIO, Some("reviews/off")).unwrap();
    assert_eq!(value(&off, "max_attempts").as_deref(), Some("1"));
    assert!(off.warnings.iter().any(|w| w.message.contains("turns retries off")));
    for (from, to, line, message) in [
        ("backoff: 50ms", "backoff: 50", 13, "like \"25ms\""),
        ("attempts: 3", "attempts: three", 10, "a whole number of retries"),
        ("perTryTimeout: 2s", "perTryTimeOut: 2s", 11, "unknown field `perTryTimeOut`"),
        ("timeout: 10s", "timeout: 10 s", 8, "like \"25ms\""),
    ] {
        let problem = import(&istio::FORMAT, &ISTIO.replace(from, to), Some("reviews/v2")).expect_err(to);
        assert_eq!(problem.at.map(|at| at.line), Some(line), "{to}: {problem:?}");
        assert!(problem.message.contains(message), "{to}: {problem:?}");
    }
    for choice in ["reviews/v2", "reviews/default", "reviews/off"] {
        let imported = import(&istio::FORMAT, ISTIO, Some(choice)).unwrap();
        check_runs(&imported, "istio")
            .unwrap_or_else(|error| panic!("{choice}: {error}\n{}", imported.client_block("x")));
    }
    assert_eq!(FORMATS.iter().find(|f| (f.detect)(&Input::new(ISTIO))).map(|f| f.name), Some("istio"));
}

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

#[test]
fn a_file_must_hold_one_document_and_problems_read_as_the_clis_errors() {
    let empty = import(&grpc::FORMAT, "", None).unwrap_err();
    assert_eq!((empty.at, empty.message.as_str()), (None, "the file is empty"));
    let two = import(&grpc::FORMAT, "{\"methodConfig\": []}\n---\n{}\n", None).unwrap_err();
    assert_eq!(
        (two.at.map(|at| at.line), two.message.as_str()),
        (Some(3), "2 documents in one file; this format holds one")
    );
    let at = Some(LineCol { line: 4, column: 7 });
    assert_eq!(Problem::new(at, "", "bad").into_input_error("f.json").to_string(), "f.json:4:7: bad");
    assert_eq!(Problem::new(at, "a.b", "bad").into_input_error("f.json").to_string(), "f.json:4:7: a.b: bad");
    assert_eq!(Problem::new(None, "a.b", "bad").into_input_error("f.json").to_string(), "f.json: a.b: bad");
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

const LINKERD: &str = "\
apiVersion: v1
kind: Service
metadata:
  name: books
  annotations:
    retry.linkerd.io/http: 5xx,429
    retry.linkerd.io/limit: \"0\"
    retry.linkerd.io/timeout: 300ms
    timeout.linkerd.io/request: 2s
---
apiVersion: linkerd.io/v1alpha2
kind: ServiceProfile
metadata: {name: authors.default.svc.cluster.local}
spec:
  retryBudget: {retryRatio: 0.3, minRetriesPerSecond: 5, ttl: 20s}
  routes:
  - name: GET /authors
    isRetryable: true
  - name: POST /authors
";

#[test]
fn linkerd_annotations_and_profiles_become_their_policies() {
    let books = import(&linkerd::FORMAT, LINKERD, Some("Service/books")).unwrap();
    for (key, expected) in [
        ("max_attempts", "2"),
        ("timeout", "\"300ms\""),
        ("deadline", "\"2s\""),
        ("retry_on", "[\"reset\", \"timeout\", \"5xx\", \"429\"]"),
        ("limiter", "\"off\""),
    ] {
        assert_eq!(value(&books, key).as_deref(), Some(expected), "{key}: {books:#?}");
    }
    assert!(books.warnings.iter().any(|w| w.message.contains("\"0\" is read as unset")));
    let authors = import(&linkerd::FORMAT, LINKERD, Some("authors.default.svc.cluster.local/GET /authors")).unwrap();
    for (key, expected) in [
        ("strategy", "\"none\""),
        ("limiter", "\"gateway-budget\""),
        ("retry_percent", "0.3"),
        ("min_retry_rate", "5.0"),
        ("retry_interval", "\"20s\""),
    ] {
        assert_eq!(value(&authors, key).as_deref(), Some(expected), "{key}: {authors:#?}");
    }
    check_runs(&books, "linkerd").unwrap();
    check_runs(&authors, "linkerd").unwrap();
    let problem =
        import(&linkerd::FORMAT, &LINKERD.replace("5xx,429", "5xx,teapot"), Some("Service/books")).unwrap_err();
    assert_eq!(problem.at.map(|at| at.line), Some(6), "{problem:?}");
    let problem = import(
        &linkerd::FORMAT,
        &LINKERD.replace("ttl: 20s", "ttl: 2m"),
        Some("authors.default.svc.cluster.local/GET /authors"),
    )
    .unwrap_err();
    assert!(problem.message.contains("outside 1s to 60s"), "{problem:?}");
    let problem = import(&linkerd::FORMAT, LINKERD, None).unwrap_err();
    assert!(problem.message.contains("2 routes"), "{problem:?}");
    assert_eq!(FORMATS.iter().find(|f| (f.detect)(&Input::new(LINKERD))).map(|f| f.name), Some("linkerd"));
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
