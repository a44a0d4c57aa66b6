//! The server model's parameters: what a scenario may set, in the order they are hashed into seeds (the order
//! of [`super::Server`]'s `PARAMS`; it must not change, or every published number would move).

use crate::model::client;
use crate::model::distributions;
use crate::model::faults::FAULT_SYNTAX;
use crate::params::{Choice, ParamDefault, ParamKind, ParamSpec, Section, Switch, Value, choices};
use crate::policy::{Classifier, Pushback, RETRY_ON_SYNTAX, RetryAfterPolicy};
use crate::time::SimDuration;

choices! {
    /// Whose retries a server model's limiter counts (`limiter_scope`).
    pub(crate) enum LimiterScope {
        /// One limiter for the whole client fleet.
        Fleet = "fleet",
        /// One limiter per client instance.
        Client = "client",
    }
}

choices! {
    /// What the server does during the outage of `outage_start` and `outage_duration` (a `faults` kind).
    pub(super) enum OutageKind {
        BlackHole = "black-hole",
        FailFast = "fail-fast",
        Reset = "reset",
    }
}

choices! {
    /// How the server's hints to come back later travel (`hint_header`): HTTP's Retry-After, gRPC's pushback
    /// trailer (gRFC A6), or both. A client reads only the one its protocol has (`retry_after`, `pushback`).
    pub(crate) enum HintHeader {
        RetryAfter = "retry-after",
        GrpcPushback = "grpc-retry-pushback-ms",
        Both = "both",
    }
}

impl HintHeader {
    /// A hint of the server's as each header carries it: the Retry-After, and the pushback.
    pub(crate) fn split(self, hint: Option<SimDuration>) -> (Option<SimDuration>, Option<Pushback>) {
        match self {
            HintHeader::RetryAfter => (hint, None),
            HintHeader::GrpcPushback => (None, hint.map(Pushback::Wait)),
            HintHeader::Both => (hint, hint.map(Pushback::Wait)),
        }
    }
}

choices! {
    /// What happens to a timed-out attempt's work still queued at the server.
    pub(crate) enum OnTimeout {
        /// It is still served; its answer is ignored.
        Abandon = "abandon",
        /// It is dropped from the queue.
        Cancel = "cancel",
    }
}

const fn probability(key: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec::new(
        Section::Model,
        key,
        ParamKind::Real { min: 0.0, max: 1.0 },
        ParamDefault::Value(Value::Real(0.0)),
        help,
    )
}

const fn unset(section: Section, key: &'static str, kind: ParamKind, help: &'static str) -> ParamSpec {
    ParamSpec::new(section, key, kind, ParamDefault::Unset, help)
}

/// `[model]`: the server.
pub(super) const SERVER: &[ParamSpec] = &[
    unset(
        Section::Model,
        "workers",
        ParamKind::Count { min: 1, max: 10_000_000 },
        "requests served in parallel (unset: unlimited)",
    ),
    unset(
        Section::Model,
        "queue_limit",
        ParamKind::Count { min: 0, max: 100_000_000 },
        "requests that may wait for a worker; more are rejected with 503 (unset: unlimited)",
    ),
    distributions::service("exponential"),
    distributions::service_mean(ParamDefault::millis(10)),
    distributions::service_sd(ParamDefault::millis(10)),
    distributions::slow_service(ParamDefault::millis(1000)),
    distributions::slow_probability(0.0),
    ParamSpec::new(
        Section::Model,
        "latency_per_request",
        ParamKind::Duration,
        ParamDefault::millis(0),
        "k: service time grows by k × the requests in service (this one included) when it starts",
    ),
    distributions::network_delay(ParamDefault::millis(0)),
    probability("error_probability", "chance a served attempt answers 502 (transient)"),
    probability("disguised_probability", "chance a served attempt answers 400 with a 'temporarily unavailable' body"),
    probability("permanent_probability", "chance a served attempt answers 422 (permanent)"),
    unset(
        Section::Model,
        "rate_limit",
        ParamKind::Real { min: 0.0, max: 1e9 },
        "token bucket: attempts admitted per second; others get 429 with Retry-After (unset: no limiter)",
    ),
    ParamSpec::new(
        Section::Model,
        "rate_burst",
        ParamKind::Count { min: 1, max: 1_000_000_000 },
        ParamDefault::Value(Value::Count(1)),
        "token bucket capacity: attempts admitted back to back",
    ),
    unset(
        Section::Model,
        "faults",
        ParamKind::Text { syntax: FAULT_SYNTAX },
        "fault windows: fail-fast, black-hole or slowdown xF over spans of time (unset: none)",
    ),
    unset(Section::Model, "outage_start", ParamKind::Duration, "when the outage given by `outage_duration` begins"),
    unset(
        Section::Model,
        "outage_duration",
        ParamKind::Duration,
        "length of the outage starting at outage_start (a fault window [start, start + duration) whose length can \
         be swept; 0s adds no window but still marks the trigger; unset: no outage)",
    ),
    unset(
        Section::Model,
        "outage_kind",
        ParamKind::Choice(OutageKind::NAMES),
        "what the server does during the outage: black-hole, fail-fast or reset (unset: black-hole)",
    ),
    unset(
        Section::Model,
        "overload_retry_after",
        ParamKind::Duration,
        "Retry-After sent with 503 when the queue is full (unset: none)",
    ),
    ParamSpec::new(
        Section::Model,
        "hint_header",
        ParamKind::Choice(HintHeader::NAMES),
        ParamDefault::Implied(Value::Choice("retry-after")),
        "how the hints of `overload_retry_after` and the rate limiter travel: HTTP's Retry-After, gRPC's pushback \
         trailer grpc-retry-pushback-ms (read by clients with pushback = \"honour\"), or both",
    ),
    distributions::network("constant"),
];

/// `[workload]` keys beyond the shared ones: how recovery is measured.
pub(super) const RECOVERY: &[ParamSpec] = &[
    unset(
        Section::Workload,
        "good_within",
        ParamKind::Duration,
        "for recovery_ms, a request counts as goodput only if it succeeds this soon after it was sent (unset: the \
         client's timeout, or any time if there is none)",
    ).measurement(),
    unset(
        Section::Workload,
        "trigger_start",
        ParamKind::Duration,
        "when the trigger begins, for shading charts (unset: the outage's start, else the start of the last fault \
         window)",
    ).measurement(),
    unset(
        Section::Workload,
        "trigger_end",
        ParamKind::Duration,
        "when the trigger (a spike, an outage) ends, for recovery_ms (unset: the outage's end, else the end of the \
         last fault window)",
    ).measurement(),
];

/// `[client]`: the retry policy of every client.
pub(super) const CLIENT: &[ParamSpec] = &[
    client::strategy(client::ANY_POLICY, "full-jitter"),
    client::base(ParamDefault::millis(5)),
    client::cap(ParamDefault::millis(2000)),
    client::multiplier(ParamDefault::Value(Value::Real(2.0))),
    client::FLOOR,
    client::JITTER,
    client::JITTER_FRACTION,
    client::STEPS,
    client::THROTTLING_BASE,
    client::max_attempts(u32::MAX as i64, ParamDefault::Unset),
    client::DEADLINE,
    client::TIMEOUT,
    client::ALIGN,
    client::ALIGN_OFFSET,
    client::CLOCK_SKEW,
    ParamSpec::new(
        Section::Client,
        "on_timeout",
        ParamKind::Choice(OnTimeout::NAMES),
        ParamDefault::Value(Value::Choice("abandon")),
        "what happens to a timed-out attempt's queued work: abandon (still served) or cancel (dropped)",
    ),
    ParamSpec::new(
        Section::Client,
        "classifier",
        ParamKind::Choice(Classifier::NAMES),
        ParamDefault::Value(Value::Choice("status-only")),
        "status-only (retry 429/502/503/504) or body-aware (also a 400 whose body says transient)",
    ),
    ParamSpec::new(
        Section::Client,
        "retry_on",
        ParamKind::List { syntax: RETRY_ON_SYNTAX },
        ParamDefault::Unset,
        "the outcomes retried, as clients list them, e.g. [\"429\", \"503\", \"timeout\"] (unset: the preset's list, \
         else the classifier's)",
    ),
    ParamSpec::new(
        Section::Client,
        "retry_after",
        ParamKind::Choice(RetryAfterPolicy::NAMES),
        ParamDefault::Value(Value::Choice("honour")),
        "Retry-After hints: honour (replaces the backoff), ignore, honour-capped (at most the cap), or aws-bounded \
         (the longer of the two, at most 5 s beyond the backoff) (unset with a preset: the preset's)",
    ),
    client::PUSHBACK,
    ParamSpec::new(
        Section::Client,
        "limiter_scope",
        ParamKind::Choice(LimiterScope::NAMES),
        ParamDefault::Implied(Value::Choice("fleet")),
        "whose books the limiter keeps: the whole client fleet's (one limiter), or each client instance's (one \
         per client, as AWS SDKs and gRPC keep one per client object)",
    ),
    ParamSpec::new(
        Section::Client,
        "client_instances",
        ParamKind::Count { min: 1, max: 10_000_000 },
        ParamDefault::Unset,
        "with limiter_scope = \"client\" and an open workload: the client instances its requests are spread over, \
         in turn (burst and closed workloads have one per client)",
    ).world(),
    client::limiter(client::ANY_LIMITER),
    client::budget(0.1),
    ParamSpec::new(
        Section::Client,
        "idempotency_keys",
        ParamKind::Choice(Switch::NAMES),
        ParamDefault::Value(Value::Choice("off")),
        "on: the server recognises repeats of a request and applies its side effect once",
    ),
    client::IMPORT,
    client::IMPORT_FORMAT,
    client::IMPORT_METHOD,
    client::IMPORT_ROUTE,
    client::IMPORT_PROFILE,
    client::IMPORT_INSTANCE,
    client::IMPORT_VERSION,
    client::IMPORT_READING,
];
