//! Envoy, Istio and Linkerd.

use super::{import, value};
use crate::commands::check_runs;
use crate::import::*;

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
    retries: {attempts: 0}
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
    // Since Istio 1.24 the default leaves a plain 503 alone; Envoy's `unavailable` matches only a gRPC status.
    assert_eq!(value(&default, "retry_on").as_deref(), Some("[\"reset\"]"));
    assert!(default.releases.iter().any(|line| line.starts_with("Istio 1.24 or later (assumed")), "{default:#?}");
    let pins = crate::import::versions::parse_pins(["istio=1.23"]).unwrap();
    let older = (istio::FORMAT.translate)(
        &Input::new(ISTIO),
        &Ask { choice: Some("reviews/default"), pins: &pins, reading: None },
    );
    let older = older.unwrap();
    assert_eq!(value(&older, "retry_on").as_deref(), Some("[\"reset\", \"503\"]"));
    assert!(
        older.releases.iter().any(|line| line.starts_with("Istio before 1.24 (--version istio=1.23")),
        "{older:#?}"
    );
    let grpc = (istio::FORMAT.translate)(
        &Input::new(ISTIO),
        &Ask { choice: Some("reviews/default"), pins: &[], reading: Some("grpc") },
    );
    assert_eq!(value(&grpc.unwrap(), "retry_on").as_deref(), Some("[\"reset\", \"502\", \"503\"]"));
    assert_eq!(value(&default, "limiter").as_deref(), Some("\"off\""));
    assert_eq!(value(&default, "timeout"), None);
    let said: Vec<String> = default.warnings.iter().map(describe).collect();
    assert!(said.iter().any(|w| w.contains("2^32 − 1")), "{said:#?}");
    assert!(said.iter().any(|w| w.contains("cancelled: the server model never answers it")), "{said:#?}");
    let off = import(&istio::FORMAT, ISTIO, Some("reviews/off")).unwrap();
    assert_eq!(value(&off, "max_attempts").as_deref(), Some("1"));
    assert!(off.warnings.iter().any(|w| w.message.contains("turns retries off")));
    // Istio's validation refuses a disabled policy that still configures retries.
    let refused = import(&istio::FORMAT, &ISTIO.replace("{attempts: 0}", "{perTryTimeout: 1s}"), Some("reviews/off"));
    assert!(refused.unwrap_err().message.contains("Istio refuses the route"));
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
        ("retry_on", "[\"5xx\", \"429\", \"timeout\"]"),
        ("limiter", "\"off\""),
    ] {
        assert_eq!(value(&books, key).as_deref(), Some(expected), "{key}: {books:#?}");
    }
    assert!(books.warnings.iter().any(|w| w.message.contains("\"0\" is read as unset")));
    // 25 ms doubling plus up to 100% extra, capped at 250 ms after the extra: exactly the lab's strategy.
    for (key, expected) in [
        ("strategy", "\"proportional-jitter-capped\""),
        ("base", "\"25ms\""),
        ("cap", "\"250ms\""),
        ("jitter_fraction", "1.0"),
    ] {
        assert_eq!(value(&books, key).as_deref(), Some(expected), "{key}: {books:#?}");
    }
    assert!(!books.warnings.iter().any(|w| w.field == "backoff"), "{:#?}", books.warnings);
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
    // A list Linkerd cannot read drops a Service's retries, and an HTTPRoute is refused by its webhook.
    let dropped = import(&linkerd::FORMAT, &LINKERD.replace("5xx,429", "5xx, 429"), Some("Service/books")).unwrap();
    assert_eq!(value(&dropped, "max_attempts").as_deref(), Some("1"));
    assert!(dropped.warnings.iter().any(|w| w.at.map(|at| at.line) == Some(6) && w.message.contains("drops")));
    let route = LINKERD.replace("5xx,429", "5xx,teapot").replace("kind: Service", "kind: HTTPRoute");
    let problem = import(&linkerd::FORMAT, &route, Some("HTTPRoute/books")).unwrap_err();
    assert_eq!(problem.at.map(|at| at.line), Some(6), "{problem:?}");
    assert!(problem.message.contains("admission webhook refuses the HTTPRoute"), "{problem:?}");
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
