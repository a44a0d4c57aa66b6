//! A call graph of services that each retry: user → layer 1 → … → the bottom. Every caller (the user's client
//! and each layer that calls others) may retry its calls to the layers below; a layer that finally fails
//! reports the failure to its own caller, which may retry in turn, so attempts multiply: with A attempts per
//! caller and a hard-down bottom, the bottom sees A^L calls per user request (docs/references.md, "Retry
//! amplification").
//!
//! Without `[layer.*]` tables the graph is a uniform chain of `layers` services. With them, each table is one
//! service: `calls` lists the services it calls (in parallel, each `fanout` times; all must succeed) and any of
//! [`PER_LAYER_KEYS`] overrides the model-wide value for that service. Each service has its own server: `workers`
//! (0: unlimited) working `service_time` per call, a FIFO queue of at most `queue_limit` calls, its own failure
//! probability and fault windows. Its policy towards the services below is its own too: attempts, backoff,
//! per-attempt `timeout`, hedging and a retry limiter.
//!
//! Conventions: a *call* is one caller's request to one service across all its attempts; an *attempt* is one
//! copy sent (first try, retry or hedge). The ledger counts attempts per service, per user request. A timed-out
//! attempt is abandoned by its caller but not cancelled: the service below keeps working on it. A hedge race's
//! loser, and the other branches of a fan-out once one branch has failed, are cancelled, down the graph.

mod footprint;
mod records;
mod run;
mod tally;
#[cfg(test)]
mod tests;

use super::client;
use super::distributions::{self, TimeDistribution};
use super::faults::{FAULT_SYNTAX, FaultKind, Faults};
use super::{Footprint, RunOutput, RunSettings, SimModel};
use crate::params::{
    Choice, ParamDefault, ParamError, ParamKind, ParamSpec, PartTable, Point, Section, Value, choices, concat,
    concat_groups,
};
use crate::policy::limiters::{Limiter, LimiterKind};
use crate::policy::{Hedge, RETRY_ON_SYNTAX, RetryAfterPolicy, RetryOn, RetryPolicy};
use crate::time::SimDuration;
use crate::workload::RateSchedule;

/// The layered-services model (scenario `kind = "layers"`).
pub(crate) struct Layers;

/// The largest graph the ledger has columns for.
pub(crate) const MAX_LAYERS: usize = 8;

/// Parameters a `[layer.<name>]` table may set for its own service (former names are accepted too), and every
/// limiter's knobs.
pub(crate) const PER_LAYER_KEYS: &[&str] = &[
    "fanout",
    "workers",
    "queue_limit",
    "service",
    "service_mean",
    "service_sd",
    "slow_service",
    "slow_probability",
    "failure_probability",
    "faults",
    "max_attempts",
    "limiter",
    "budget",
    "strategy",
    "base",
    "cap",
    "multiplier",
    "deadline",
    "timeout",
    "hedge",
    "hedge_delay",
    "hedge_percentile",
    "hedge_max_extra",
    "retry_on",
    "floor",
    "jitter",
    "jitter_fraction",
    "steps",
    "import",
    "import_format",
    "import_method",
    "import_route",
    "import_profile",
    "import_instance",
    "import_version",
    "import_reading",
];

const PER_LAYER_AND_KNOB_KEYS: [&str; PER_LAYER_KEYS.len() + LimiterKind::KNOB_KEYS.len()] =
    concat(PER_LAYER_KEYS, LimiterKind::KNOB_KEYS);

const GRAPH: PartTable = PartTable {
    table: "layer",
    link_key: "calls",
    overridable: &PER_LAYER_AND_KNOB_KEYS,
    replaces: &["layers"],
    max_parts: MAX_LAYERS,
};

choices! {
    /// Which callers retry (`placement`) or hedge (`hedge_placement`).
    pub(crate) enum Placement {
        Every = "every",
        /// Only the user's client.
        Top = "top",
        /// Only the callers of the bottom services.
        Bottom = "bottom",
    }
}

const fn param(section: Section, key: &'static str, kind: ParamKind, default: Value, help: &'static str) -> ParamSpec {
    ParamSpec::new(section, key, kind, ParamDefault::Value(default), help)
}

/// Every parameter, in the order they are hashed into seeds (renamed ones keep their place and former name).
const LAYER_PARAMS: &[ParamSpec] = &[
    param(
        Section::Model,
        "layers",
        ParamKind::Count { min: 1, max: MAX_LAYERS as i64 },
        Value::Count(3),
        "L: services in a uniform chain; the last one is the bottom (unused with [layer.*] tables)",
    ),
    // No retry the scenario did not write: a caller without `max_attempts` (model-wide or in its own table) makes
    // one attempt, as a route without a retry policy does in Envoy and a channel without one in gRPC (A6); the
    // SRE book and the AWS Builders' Library advise retrying at one layer (docs/models.md, "Layered services").
    ParamSpec::new(
        Section::Client,
        "max_attempts",
        ParamKind::Count { min: 1, max: 100 },
        ParamDefault::Value(Value::Count(1)),
        "attempts allowed per call, the first try included; unwritten, 1: a caller retries only when the \
         scenario says so, model-wide here or in its own [layer.*] table",
    )
    .formerly(Section::Model, "attempts"),
    param(
        Section::Model,
        "placement",
        ParamKind::Choice(Placement::NAMES),
        Value::Choice("every"),
        "which callers retry: every one, only the user's client (top), or only the callers of the bottom services",
    )
    .policy(),
    param(
        Section::Model,
        "failure_probability",
        ParamKind::Real { min: 0.0, max: 1.0 },
        Value::Real(1.0),
        "p: chance a bottom service (one that calls nobody) fails a call (1: hard down); others fail only when \
         their table sets it",
    ),
    ParamSpec::new(
        Section::Model,
        "faults",
        ParamKind::Text { syntax: FAULT_SYNTAX },
        ParamDefault::Unset,
        "fault windows of the bottom services (black-hole needs a timeout in the caller)",
    ),
    param(
        Section::Model,
        "fanout",
        ParamKind::Count { min: 1, max: 10_000 },
        Value::Count(1),
        "copies of each call a service sends to each service it calls, in parallel; all must succeed",
    ),
    param(
        Section::Model,
        "workers",
        ParamKind::Count { min: 0, max: 1_000_000 },
        Value::Count(0),
        "calls a service works on at once; more wait in its queue (0: unlimited, no queue)",
    ),
    ParamSpec::new(
        Section::Model,
        "queue_limit",
        ParamKind::Count { min: 0, max: 100_000_000 },
        ParamDefault::Unset,
        "calls a service's queue holds; a call finding it full fails at once (unset: unbounded)",
    ),
    distributions::service("constant"),
    distributions::service_mean(ParamDefault::millis(1)).formerly(Section::Model, "service_time"),
    distributions::service_sd(ParamDefault::millis(1)),
    distributions::slow_service(ParamDefault::millis(1000)),
    distributions::slow_probability(0.01),
    client::limiter(client::LIMITERS_FOR_SHARED_CALLERS).formerly(Section::Model, "limiter"),
    client::budget(0.2).formerly(Section::Model, "budget"),
    distributions::network_delay(ParamDefault::millis(1)).formerly(Section::Model, "hop_delay"),
    distributions::network("constant"),
];

const LAYER_WORKLOAD_PARAMS: &[ParamSpec] = &[
    param(
        Section::Workload,
        "clients",
        ParamKind::Count { min: 1, max: 1_000_000 },
        Value::Count(1),
        "user clients sharing the requests at random, each with its own limiter",
    ),
    param(
        Section::Workload,
        "requests",
        ParamKind::Count { min: 1, max: 100_000_000 },
        Value::Count(1_000),
        "user requests, arriving as a Poisson stream at `rate`",
    )
    .measurement(),
    param(
        Section::Workload,
        "rate",
        ParamKind::Real { min: 0.0, max: 1e9 },
        Value::Real(100.0),
        "user requests per second (> 0)",
    ),
];

/// `[client]`: every caller's policy towards the services it calls. `multiplier` and `deadline` came later, so
/// they are hashed only when set.
const LAYER_CLIENT_PARAMS: &[ParamSpec] = &[
    client::strategy(client::POLICIES_FOR_SHARED_CALLERS, "full-jitter"),
    client::base(ParamDefault::millis(10)),
    client::cap(ParamDefault::millis(1000)),
    client::TIMEOUT,
    client::HEDGE,
    param(
        Section::Client,
        "hedge_placement",
        ParamKind::Choice(Placement::NAMES),
        Value::Choice("every"),
        "which callers hedge (when `hedge` is on): every one, only the user's client, or only the callers of the \
         bottom services",
    ),
    client::hedge_delay(ParamDefault::millis(50)),
    client::HEDGE_PERCENTILE,
    ParamSpec::new(
        Section::Client,
        "hedge_max_extra",
        ParamKind::Real { min: 0.0, max: 1.0 },
        ParamDefault::Unset,
        "at most this many hedges per first try of the caller, 0 to 1 (unset: no cap)",
    ),
    client::multiplier(ParamDefault::Implied(Value::Real(2.0))),
    ParamSpec::new(
        Section::Client,
        "retry_on",
        ParamKind::List { syntax: RETRY_ON_SYNTAX },
        ParamDefault::Unset,
        "the failures a caller retries: 503 (an error), 429 or rejected (a full queue), timeout, reset (unset: the \
         preset's list, else every failure)",
    ),
    client::FLOOR,
    client::JITTER,
    client::JITTER_FRACTION,
    client::STEPS,
    client::DEADLINE,
    client::ALIGN,
    client::ALIGN_OFFSET,
    client::CLOCK_SKEW,
    client::IMPORT,
    client::IMPORT_FORMAT,
    client::IMPORT_METHOD,
    client::IMPORT_ROUTE,
    client::IMPORT_PROFILE,
    client::IMPORT_INSTANCE,
    client::IMPORT_VERSION,
    client::IMPORT_READING,
];

/// Every parameter group, the limiters' knobs last.
const PARAMS: [&[ParamSpec]; 4 + LimiterKind::KNOBS.len()] = concat_groups(
    &[LAYER_PARAMS, LAYER_WORKLOAD_PARAMS, crate::model::verdict::PARAMS, LAYER_CLIENT_PARAMS],
    LimiterKind::KNOBS,
);

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        REQUESTS = "requests" (Count): "user requests",
        SUCCESS_RATE = "success_rate" (Fraction): "user requests that succeeded",
        AMPLIFICATION = "amplification" (PerRequest): "attempts at every service together, per user request",
        BOTTOM_CALLS_PER_REQUEST = "bottom_calls_per_request" (PerRequest, formerly "bottom_calls"): "attempts reaching the bottom services, per user request",
        RETRIES_PER_REQUEST = "retries_per_request" (PerRequest, formerly "retries"): "retries by all callers, per user request",
        HEDGES_PER_REQUEST = "hedges_per_request" (PerRequest, formerly "hedges"): "hedged copies sent by all callers, per user request",
        TIMEOUTS_PER_REQUEST = "timeouts_per_request" (PerRequest, formerly "timeouts"): "attempts abandoned by their caller's timeout, per user request",
        REFUSED_PER_REQUEST = "refused_per_request" (PerRequest, formerly "refused"): "retries a limiter or budget refused, per user request",
        LATENCY_P50_MS = "latency_p50_ms" (Milliseconds): "median time from a user request to its successful answer",
        LATENCY_P99_MS = "latency_p99_ms" (Milliseconds): "99th percentile of the time from a user request to its successful answer",
        EVENTS = "events" (Count): "engine events in the run",
        REJECTED_LOCALLY_PER_REQUEST = "rejected_locally_per_request" (PerRequest, formerly "rejected_locally"): "attempts a client-side limiter (sre-throttle, aws-adaptive) refused to send, per user request",
        AMPLIFICATION_L1 = "amplification_l1" (PerRequest): "attempts reaching service 1 (the entry) per user request",
        AMPLIFICATION_L2 = "amplification_l2" (PerRequest): "attempts reaching service 2 per user request",
        AMPLIFICATION_L3 = "amplification_l3" (PerRequest): "attempts reaching service 3 per user request",
        AMPLIFICATION_L4 = "amplification_l4" (PerRequest): "attempts reaching service 4 per user request",
        AMPLIFICATION_L5 = "amplification_l5" (PerRequest): "attempts reaching service 5 per user request",
        AMPLIFICATION_L6 = "amplification_l6" (PerRequest): "attempts reaching service 6 per user request",
        AMPLIFICATION_L7 = "amplification_l7" (PerRequest): "attempts reaching service 7 per user request",
        AMPLIFICATION_L8 = "amplification_l8" (PerRequest): "attempts reaching service 8 per user request",
        RETRIES_PER_REQUEST_L1 = "retries_per_request_l1" (PerRequest, formerly "retries_l1"): "of amplification_l1, the retries",
        RETRIES_PER_REQUEST_L2 = "retries_per_request_l2" (PerRequest, formerly "retries_l2"): "of amplification_l2, the retries",
        RETRIES_PER_REQUEST_L3 = "retries_per_request_l3" (PerRequest, formerly "retries_l3"): "of amplification_l3, the retries",
        RETRIES_PER_REQUEST_L4 = "retries_per_request_l4" (PerRequest, formerly "retries_l4"): "of amplification_l4, the retries",
        RETRIES_PER_REQUEST_L5 = "retries_per_request_l5" (PerRequest, formerly "retries_l5"): "of amplification_l5, the retries",
        RETRIES_PER_REQUEST_L6 = "retries_per_request_l6" (PerRequest, formerly "retries_l6"): "of amplification_l6, the retries",
        RETRIES_PER_REQUEST_L7 = "retries_per_request_l7" (PerRequest, formerly "retries_l7"): "of amplification_l7, the retries",
        RETRIES_PER_REQUEST_L8 = "retries_per_request_l8" (PerRequest, formerly "retries_l8"): "of amplification_l8, the retries",
        HEDGES_PER_REQUEST_L1 = "hedges_per_request_l1" (PerRequest, formerly "hedges_l1"): "of amplification_l1, the hedges (the rest are first tries)",
        HEDGES_PER_REQUEST_L2 = "hedges_per_request_l2" (PerRequest, formerly "hedges_l2"): "of amplification_l2, the hedges",
        HEDGES_PER_REQUEST_L3 = "hedges_per_request_l3" (PerRequest, formerly "hedges_l3"): "of amplification_l3, the hedges",
        HEDGES_PER_REQUEST_L4 = "hedges_per_request_l4" (PerRequest, formerly "hedges_l4"): "of amplification_l4, the hedges",
        HEDGES_PER_REQUEST_L5 = "hedges_per_request_l5" (PerRequest, formerly "hedges_l5"): "of amplification_l5, the hedges",
        HEDGES_PER_REQUEST_L6 = "hedges_per_request_l6" (PerRequest, formerly "hedges_l6"): "of amplification_l6, the hedges",
        HEDGES_PER_REQUEST_L7 = "hedges_per_request_l7" (PerRequest, formerly "hedges_l7"): "of amplification_l7, the hedges",
        HEDGES_PER_REQUEST_L8 = "hedges_per_request_l8" (PerRequest, formerly "hedges_l8"): "of amplification_l8, the hedges",
        SUCCESS_RATE_DURING = "success_rate_during" (Fraction): "success_rate of the user requests sent during the trigger (from the first fault window's start to the last one's end)",
        SUCCESS_RATE_AFTER = "success_rate_after" (Fraction): "success_rate of the user requests sent after the trigger ended",
        AMPLIFICATION_DURING = "amplification_during" (PerRequest): "attempts at every service per user request sent during the trigger",
        AMPLIFICATION_AFTER = "amplification_after" (PerRequest): "attempts at every service per user request sent after the trigger ended",
        LATENCY_P99_MS_DURING = "latency_p99_ms_during" (Milliseconds): "99th percentile of time to success of the user requests sent during the trigger",
        LATENCY_P99_MS_AFTER = "latency_p99_ms_after" (Milliseconds): "99th percentile of time to success of the user requests sent after the trigger ended",
        AMPLIFICATION_L1_DURING = "amplification_l1_during" (PerRequest): "attempts reaching service 1 per user request sent during the trigger",
        AMPLIFICATION_L2_DURING = "amplification_l2_during" (PerRequest): "attempts reaching service 2 per user request sent during the trigger",
        AMPLIFICATION_L3_DURING = "amplification_l3_during" (PerRequest): "attempts reaching service 3 per user request sent during the trigger",
        AMPLIFICATION_L4_DURING = "amplification_l4_during" (PerRequest): "attempts reaching service 4 per user request sent during the trigger",
        AMPLIFICATION_L5_DURING = "amplification_l5_during" (PerRequest): "attempts reaching service 5 per user request sent during the trigger",
        AMPLIFICATION_L6_DURING = "amplification_l6_during" (PerRequest): "attempts reaching service 6 per user request sent during the trigger",
        AMPLIFICATION_L7_DURING = "amplification_l7_during" (PerRequest): "attempts reaching service 7 per user request sent during the trigger",
        AMPLIFICATION_L8_DURING = "amplification_l8_during" (PerRequest): "attempts reaching service 8 per user request sent during the trigger",
        AMPLIFICATION_L1_AFTER = "amplification_l1_after" (PerRequest): "attempts reaching service 1 per user request sent after the trigger ended",
        AMPLIFICATION_L2_AFTER = "amplification_l2_after" (PerRequest): "attempts reaching service 2 per user request sent after the trigger ended",
        AMPLIFICATION_L3_AFTER = "amplification_l3_after" (PerRequest): "attempts reaching service 3 per user request sent after the trigger ended",
        AMPLIFICATION_L4_AFTER = "amplification_l4_after" (PerRequest): "attempts reaching service 4 per user request sent after the trigger ended",
        AMPLIFICATION_L5_AFTER = "amplification_l5_after" (PerRequest): "attempts reaching service 5 per user request sent after the trigger ended",
        AMPLIFICATION_L6_AFTER = "amplification_l6_after" (PerRequest): "attempts reaching service 6 per user request sent after the trigger ended",
        AMPLIFICATION_L7_AFTER = "amplification_l7_after" (PerRequest): "attempts reaching service 7 per user request sent after the trigger ended",
        AMPLIFICATION_L8_AFTER = "amplification_l8_after" (PerRequest): "attempts reaching service 8 per user request sent after the trigger ended",
        RECOVERY_MS = "recovery_ms" (Milliseconds): "time from the end of the fault windows until the user requests sent in each bucket succeed ≥ 90% in good time (within the user client's timeout) for good",
        RECOVERED = "recovered" (Outcome): "1 if goodput recovered before user requests stopped, else 0",
        RECOVERED_AT_MS = "recovered_at_ms" (Milliseconds): "when goodput was back for good, on the run's clock: the fault windows' end plus recovery_ms",
        TIPPED = "tipped" (Outcome): "1 if, after the fault windows, less than stuck_below of the user requests sent in each bucket succeeded in good time for stuck_hold in a row",
        STUCK = "stuck" (Outcome): "1 if the run tipped and goodput never recovered before user requests stopped; its mean over replicates is the stuck fraction",
    }

    use crate::model::verdict::VerdictColumns;

    /// Where the stuck-state verdict's values go.
    pub(crate) const VERDICT: VerdictColumns = VerdictColumns {
        recovery_ms: RECOVERY_MS,
        recovered: RECOVERED,
        recovered_at_ms: RECOVERED_AT_MS,
        tipped: TIPPED,
        stuck: STUCK,
    };
}

// The per-service columns are indexed as `AMPLIFICATION_L1 + service`: each group must be contiguous.
const _: () = assert!(
    metric::AMPLIFICATION_L8 == metric::AMPLIFICATION_L1 + MAX_LAYERS - 1
        && metric::RETRIES_PER_REQUEST_L8 == metric::RETRIES_PER_REQUEST_L1 + MAX_LAYERS - 1
        && metric::HEDGES_PER_REQUEST_L8 == metric::HEDGES_PER_REQUEST_L1 + MAX_LAYERS - 1
        && metric::AMPLIFICATION_L8_DURING == metric::AMPLIFICATION_L1_DURING + MAX_LAYERS - 1
        && metric::AMPLIFICATION_L8_AFTER == metric::AMPLIFICATION_L1_AFTER + MAX_LAYERS - 1
);

/// The timeline's series, counted per bucket.
pub(super) mod series {
    series! {
        BOTTOM_CALLS = "bottom_calls": "attempts arriving at the bottom services in the bucket",
        CALLS = "calls": "attempts sent to any service in the bucket",
        GOODPUT = "goodput": "user requests answered with success in the bucket",
    }
}

/// How one caller (the user's client, or a service calling the ones below it) treats its calls.
#[derive(Clone, Debug)]
pub(crate) struct CallerPolicy {
    /// Attempts per call, the first included (1: no retries).
    pub attempts: u32,
    pub backoff: RetryPolicy,
    pub timeout: Option<SimDuration>,
    pub hedge: Hedge,
    /// Hedges allowed per first try (`None`: no cap).
    pub hedge_max_extra: Option<f64>,
    /// Ratio budget: retries ≤ b × first tries so far.
    pub budget: Option<f64>,
    /// The limiter every client of this caller starts with.
    pub limiter: Option<Limiter>,
    /// The failures it retries: an error answer is a 503, a full queue's refusal a 429 or `rejected`.
    pub retry_on: RetryOn,
}

/// One service of the graph.
#[derive(Clone, Debug)]
pub(crate) struct Service {
    pub name: String,
    /// The services it calls (indices into [`LayersConfig::services`]), each `fanout` times.
    pub calls: Vec<u8>,
    pub fanout: u32,
    /// 0: unlimited.
    pub workers: u32,
    pub queue_limit: Option<u32>,
    pub work: TimeDistribution,
    pub failure_probability: f64,
    pub faults: Faults,
    /// Its policy towards the services it calls.
    pub policy: CallerPolicy,
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct LayersConfig {
    /// Entry first, then breadth-first: the order of the `_lN` columns.
    pub services: Vec<Service>,
    /// The user's client's policy towards the entry service.
    pub user: CallerPolicy,
    pub clients: usize,
    pub hop: TimeDistribution,
    pub requests: u64,
    /// User requests arrive as a Poisson stream at this (constant) rate.
    pub arrivals: RateSchedule,
    /// How a run is judged tipped or stuck after its fault windows.
    pub verdict: crate::model::verdict::VerdictRule,
    /// The callers' clocks, when their retries wait by them (one clock per user client and per service).
    pub clock: Option<crate::policy::ClockPolicy>,
}

impl LayersConfig {
    /// One clock per limiter (user client, then service): skews from the world's clock stream, offsets from the
    /// policy's.
    pub(crate) fn draw_clocks(&self, streams: &mut crate::engine::Streams) -> Vec<crate::policy::ClientClock> {
        match self.clock {
            Some(clock) => (0..self.clients + self.services.len())
                .map(|_| clock.client_clock(&mut streams.clocks, &mut streams.offsets))
                .collect(),
            None => Vec::new(),
        }
    }

    pub(crate) fn is_bottom(&self, service: usize) -> bool {
        self.services[service].calls.is_empty()
    }
}

impl SimModel for Layers {
    const KIND: &'static str = "layers";
    const ABOUT: &'static str = "a graph of services that each retry: amplification across layers";
    const PARAMS: &'static [&'static [ParamSpec]] = &PARAMS;
    const DEFAULT_CHART_METRICS: &'static [&'static str] =
        &["bottom_calls_per_request", "amplification", "success_rate"];
    const SETTINGS: &'static [&'static str] =
        &["workers", "queue_limit", "service", "service_mean", "network", "network_delay", "timeout"];
    const PARTS: Option<&'static PartTable> = Some(&GRAPH);

    type Config = LayersConfig;

    fn configure(point: &Point) -> Result<LayersConfig, ParamError> {
        let rate = point.real("rate")?;
        if rate <= 0.0 {
            return Err(ParamError::new("rate", "must be greater than 0".into()));
        }
        let placement = point.choice_of::<Placement>("placement")?;
        let hedge_placement = point.choice_of::<Placement>("hedge_placement")?;
        let (names, calls, points) = graph(point)?;
        let bottom = |i: usize| calls[i].is_empty();
        let mut services = Vec::with_capacity(names.len());
        for (i, own) in points.iter().enumerate() {
            let part = own.parts().iter().find(|p| p.name == names[i]);
            let sets = |key: &str| part.is_some_and(|p| p.get(key).is_some());
            // Errors about a value this service's table sets are located there; others at the model-wide value.
            let located = |error: ParamError| {
                if sets(error.key) || (error.key == "cap" && sets("base")) { error.in_part(&names[i]) } else { error }
            };
            let placed = |placement: Placement| match placement {
                Placement::Every => true,
                Placement::Top => false,
                Placement::Bottom => calls[i].iter().any(|&c| bottom(c as usize)),
            };
            // A table's own `max_attempts` or `hedge` wins over the model-wide placement (and over a preset's
            // attempts).
            let retries = placed(placement) || sets("max_attempts");
            let hedges = placed(hedge_placement) || sets("hedge");
            let policy = caller_policy(own, retries, hedges).map_err(located)?;
            // The model-wide failure probability and faults are the bottom services'; others only their own.
            let applies = |key: &str| bottom(i) || sets(key);
            let failure_probability =
                if applies("failure_probability") { own.real("failure_probability")? } else { 0.0 };
            let faults = match own.get("faults")? {
                Some(Value::Text(text)) if applies("faults") => {
                    Faults::parse(&text).map_err(|message| located(ParamError::new("faults", message)))?
                }
                _ => Faults::default(),
            };
            services.push(Service {
                name: names[i].clone(),
                calls: calls[i].clone(),
                fanout: own.count("fanout")? as u32,
                workers: own.count("workers")? as u32,
                queue_limit: own.optional_count("queue_limit")?.map(|n| n as u32),
                work: TimeDistribution::service(own).map_err(located)?,
                failure_probability,
                faults,
                policy,
            });
        }
        let user_placed = |placement: Placement| placement != Placement::Bottom || bottom(0);
        let user = caller_policy(point, user_placed(placement), user_placed(hedge_placement))?;
        // A black hole answers nothing: only its callers' timeouts end those attempts.
        let timeout_of = |caller: Option<usize>| match caller {
            None => user.timeout,
            Some(c) => services[c].policy.timeout,
        };
        for (i, service) in services.iter().enumerate() {
            if !service.faults.windows().iter().any(|w| w.kind == FaultKind::BlackHole) {
                continue;
            }
            let callers: Vec<Option<usize>> = if i == 0 {
                vec![None]
            } else {
                (0..services.len()).filter(|&c| services[c].calls.contains(&(i as u8))).map(Some).collect()
            };
            if callers.iter().any(|&c| timeout_of(c).is_none()) {
                let error = ParamError::new(
                    "faults",
                    format!(
                        "a black-hole window at \"{}\" never answers, so its callers need a `timeout`",
                        service.name
                    ),
                );
                let own_faults = point.parts().iter().any(|p| p.name == service.name && p.get("faults").is_some());
                return Err(if own_faults { error.in_part(&service.name) } else { error });
            }
        }
        Ok(LayersConfig {
            services,
            user,
            clients: point.count("clients")? as usize,
            hop: TimeDistribution::network(point)?,
            requests: point.count("requests")? as u64,
            arrivals: RateSchedule::constant(rate),
            verdict: crate::model::verdict::VerdictRule::of(point)?,
            clock: client::clock_policy(point, None)?,
        })
    }

    fn simulate(config: &LayersConfig, run_settings: RunSettings) -> RunOutput {
        run::simulate(config, run_settings)
    }

    fn footprint(config: &LayersConfig) -> Footprint {
        footprint::footprint(config)
    }

    fn service_names(config: &LayersConfig) -> Vec<String> {
        config.services.iter().map(|service| service.name.clone()).collect()
    }

    /// Every caller's effective policy towards the services it calls, by name (`user` for the users' clients,
    /// then each service that calls others), callers with the same policy together: `user, l1: …; l2: …`. A
    /// caller that makes one attempt reads `1 attempt (no retries)`; the bottom services call nobody.
    fn describe_policy(point: &Point, config: &LayersConfig) -> Result<Option<String>, ParamError> {
        let describe = |point: &Point, caller: &CallerPolicy| {
            if caller.attempts == 1 {
                return Ok("1 attempt (no retries)".to_owned());
            }
            let policy = RetryPolicy { max_attempts: Some(caller.attempts), ..caller.backoff };
            client::describe_policy(point, &policy, Some(&caller.retry_on))
        };
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        let mut add = |name, line: String| match groups.iter_mut().find(|(same, _)| *same == line) {
            Some((_, names)) => names.push(name),
            None => groups.push((line, vec![name])),
        };
        add("user", describe(point, &config.user)?);
        for service in config.services.iter().filter(|service| !service.calls.is_empty()) {
            let own = point.parts().iter().find(|part| part.name == service.name).map(|part| point.for_part(part));
            add(&service.name, describe(own.as_ref().unwrap_or(point), &service.policy)?);
        }
        let groups: Vec<String> = groups.iter().map(|(line, names)| format!("{}: {line}", names.join(", "))).collect();
        Ok(Some(groups.join("; ")))
    }
}

type Graph = (Vec<String>, Vec<Vec<u8>>, Vec<Point>);

/// The services' names, whom each calls, and each one's own point, entry first then breadth-first.
fn graph(point: &Point) -> Result<Graph, ParamError> {
    let parts = point.parts();
    if parts.is_empty() {
        let layers = point.count("layers")? as usize;
        let names = (1..=layers).map(|i| format!("l{i}")).collect();
        let calls = (0..layers).map(|i| if i + 1 < layers { vec![i as u8 + 1] } else { Vec::new() }).collect();
        return Ok((names, calls, vec![point.clone(); layers]));
    }
    // The scenario layer has checked names, cycles and the single entry; order breadth-first from the entry.
    let entry = (0..parts.len()).find(|&i| !parts.iter().any(|p| p.links.contains(&i))).ok_or_else(|| {
        ParamError::new("layers", "the [layer.*] tables have no entry (a service nobody calls)".into())
    })?;
    let mut order = vec![entry];
    let mut next = 0;
    while next < order.len() {
        for &link in &parts[order[next]].links {
            if !order.contains(&link) {
                order.push(link);
            }
        }
        next += 1;
    }
    let position = |part: usize| order.iter().position(|&p| p == part).unwrap_or(0) as u8;
    let names = order.iter().map(|&p| parts[p].name.clone()).collect();
    let calls = order.iter().map(|&p| parts[p].links.iter().map(|&l| position(l)).collect()).collect();
    let points = order.iter().map(|&p| point.for_part(&parts[p])).collect();
    Ok((names, calls, points))
}

/// What a caller retries unless told otherwise: every failure.
const EVERY_FAILURE: &str = "4xx, 5xx, timeout, reset, rejected";

/// One caller's policy from its point; `retries` and `hedges` say whether placement lets it retry or hedge. A
/// preset's attempts apply unless the scenario wrote `max_attempts`; a preset that retries without end needs the
/// scenario's `max_attempts` (a caller in a call graph always has a limit, and one it did not write would be a
/// retry nobody asked for, or none where the preset retries).
fn caller_policy(point: &Point, retries: bool, hedges: bool) -> Result<CallerPolicy, ParamError> {
    let (backoff, preset) = client::retry_policy(point)?;
    if let Some(preset) = preset.filter(|preset| preset.max_attempts.is_none() && !point.is_written("max_attempts")) {
        return Err(ParamError::new(
            "max_attempts",
            format!(
                "strategy = \"{}\" retries without end, and every caller of a call graph needs a limit: write \
                 max_attempts (1 to 100) for it",
                preset.name
            ),
        ));
    }
    let attempts = backoff.max_attempts.map_or(point.count("max_attempts")?, i64::from) as u32;
    // This model counts a caller's attempts itself, and its services send no Retry-After.
    let backoff = RetryPolicy { max_attempts: None, retry_after: RetryAfterPolicy::Ignore, ..backoff };
    let hedge_max_extra = point.optional_real("hedge_max_extra")?;
    let hedge = client::hedge(point)?;
    if hedge.doubles_every_call() && hedge_max_extra.is_none() {
        return Err(ParamError::new(
            "hedge_delay",
            "a zero delay with no `hedge_max_extra` cap doubles every attempt; give a delay > 0 or a cap".into(),
        ));
    }
    let setting = client::limiter_setting(point, preset)?;
    let budget = setting.budget;
    let limiter = setting.combined(None);
    Ok(CallerPolicy {
        attempts: if retries { attempts } else { 1 },
        backoff,
        timeout: point.optional_duration("timeout")?,
        hedge: if hedges { hedge } else { Hedge::Off },
        hedge_max_extra,
        budget,
        limiter,
        retry_on: client::retry_on(point, preset, RetryOn::parse(EVERY_FAILURE).expect("a valid list"))?,
    })
}
