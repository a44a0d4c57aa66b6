//! A call graph of services that each retry: user → layer 1 → … → the bottom. Every caller (the user's client
//! and each layer that calls others) may retry its calls to the layers below; a layer that finally fails
//! reports the failure to its own caller, which may retry in turn, so attempts multiply: with A attempts per
//! caller and a hard-down bottom, the bottom sees A^L calls per user request (ANCHORS.md, "Retry
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

mod run;
#[cfg(test)]
mod tests;

use super::distributions::{DISTRIBUTION_NAMES, TimeDistribution};
use super::faults::{FAULT_SYNTAX, FaultKind, Faults};
use super::{MetricSpec, ParamDefault, ParamError, ParamKind, ParamSpec, PartTable, Point, RunOutput, RunSettings};
use super::limiter_params::{LIMITER_TUNING_KEYS, LIMITER_TUNING_PARAMS, tuned_limiter};
use super::{Section, SimModel, Value};
use crate::time::SimDuration;
use crate::policy::limiters::{LIMITER_NAMES, Limiter};
use crate::policy::presets::{self, Preset};
use crate::policy::{BackoffParams, HEDGE_NAMES, Hedge, RetryAfterPolicy, RetryPolicy, Strategy};

/// The layered-services model (scenario `kind = "layers"`).
pub struct Layers;

/// The largest graph the ledger has columns for.
pub const MAX_LAYERS: usize = 8;

/// Parameters a `[layer.<name>]` table may set for its own service.
pub const PER_LAYER_KEYS: &[&str] = &[
    "fanout",
    "workers",
    "queue_limit",
    "service",
    "service_time",
    "service_sd",
    "slow_service",
    "slow_probability",
    "failure_probability",
    "faults",
    "attempts",
    "limiter",
    "budget",
    "strategy",
    "base",
    "cap",
    "timeout",
    "hedge",
    "hedge_delay",
    "hedge_percentile",
    "hedge_max_extra",
];

const PER_LAYER_AND_TUNING_KEYS: [&str; PER_LAYER_KEYS.len() + LIMITER_TUNING_KEYS.len()] =
    presets::concat(PER_LAYER_KEYS, LIMITER_TUNING_KEYS);

const GRAPH: PartTable = PartTable {
    table: "layer",
    link_key: "calls",
    overridable: &PER_LAYER_AND_TUNING_KEYS,
    replaces: &["layers"],
    max_parts: MAX_LAYERS,
};

const fn param(section: Section, key: &'static str, kind: ParamKind, default: Value, help: &'static str) -> ParamSpec {
    ParamSpec { section, key, kind, default: ParamDefault::Value(default), help }
}

const fn unset(section: Section, key: &'static str, kind: ParamKind, help: &'static str) -> ParamSpec {
    ParamSpec { section, key, kind, default: ParamDefault::Unset, help }
}

const fn ms(millis: u64) -> SimDuration {
    SimDuration::from_millis(millis)
}

const LAYER_PARAMS: &[ParamSpec] = &[
    param(
        Section::Model,
        "layers",
        ParamKind::Count { min: 1, max: MAX_LAYERS as i64 },
        Value::Count(3),
        "L: services in a uniform chain; the last one is the bottom (unused with [layer.*] tables)",
    ),
    param(
        Section::Model,
        "attempts",
        ParamKind::Count { min: 1, max: 100 },
        Value::Count(3),
        "A: attempts each retrying caller makes per call, the first included",
    ),
    param(
        Section::Model,
        "placement",
        ParamKind::Choice(&["every", "top", "bottom"]),
        Value::Choice("every"),
        "which callers retry: every one, only the user's client (top), or only the callers of the bottom services",
    ),
    param(
        Section::Model,
        "failure_probability",
        ParamKind::Real { min: 0.0, max: 1.0 },
        Value::Real(1.0),
        "p: chance a bottom service (one that calls nobody) fails a call (1: hard down); others fail only when \
         their table sets it",
    ),
    unset(
        Section::Model,
        "faults",
        ParamKind::Text { syntax: FAULT_SYNTAX },
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
    unset(
        Section::Model,
        "queue_limit",
        ParamKind::Count { min: 0, max: 100_000_000 },
        "calls a service's queue holds; a call finding it full fails at once (unset: unbounded)",
    ),
    param(
        Section::Model,
        "service",
        ParamKind::Choice(DISTRIBUTION_NAMES),
        Value::Choice("constant"),
        "distribution of a service's work per call: constant, exponential or lognormal with mean `service_time` \
         (and sd `service_sd`), or bimodal (`service_time`, or `slow_service` with `slow_probability`)",
    ),
    param(
        Section::Model,
        "service_time",
        ParamKind::Duration,
        Value::Duration(ms(1)),
        "time a service works on a call before answering or calling down",
    ),
    param(Section::Model, "service_sd", ParamKind::Duration, Value::Duration(ms(1)), "lognormal work: its sd"),
    param(Section::Model, "slow_service", ParamKind::Duration, Value::Duration(ms(1000)), "bimodal work: the slow value"),
    param(
        Section::Model,
        "slow_probability",
        ParamKind::Real { min: 0.0, max: 1.0 },
        Value::Real(0.01),
        "bimodal work: the chance a call takes `slow_service`",
    ),
    param(
        Section::Model,
        "limiter",
        ParamKind::Choice(LIMITER_NAMES),
        Value::Choice("none"),
        "retry limiter of every caller: none; budget (retries ≤ `budget` × first tries); token-bucket (0.1 per \
         call, capacity 5, a retry spends 1); breaker (no retries while > 10% of the last 100 calls failed, 1 s \
         pauses); grpc (10, 0.1); aws-quota (500, 5, 10); finagle (20% + 10/s over 10 s)",
    ),
    param(
        Section::Model,
        "budget",
        ParamKind::Real { min: 0.0, max: 1.0 },
        Value::Real(0.2),
        "b, the retry budget's fraction, 0 to 1 (with limiter = \"budget\")",
    ),
    param(
        Section::Model,
        "hop_delay",
        ParamKind::Duration,
        Value::Duration(ms(1)),
        "one-way network delay between a caller and the service it calls",
    ),
    param(
        Section::Model,
        "network",
        ParamKind::Choice(&["constant", "exponential"]),
        Value::Choice("constant"),
        "distribution of each hop's delay, with mean `hop_delay`",
    ),
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
    ),
    param(
        Section::Workload,
        "rate",
        ParamKind::Real { min: 0.0, max: 1e9 },
        Value::Real(100.0),
        "user requests per second (> 0)",
    ),
];

const LAYER_CLIENT_PARAMS: &[ParamSpec] = &[
    param(
        Section::Client,
        "strategy",
        ParamKind::Choice(presets::STRATEGY_CHOICES),
        Value::Choice("full-jitter"),
        "backoff between a caller's attempts, or a preset (see `retrylab strategies`), which also brings its \
         attempts and, with limiter = \"none\", its limiter",
    ),
    param(Section::Client, "base", ParamKind::Duration, Value::Duration(ms(10)), "b of the backoff formula"),
    param(Section::Client, "cap", ParamKind::Duration, Value::Duration(ms(1000)), "c of the backoff formula"),
    unset(
        Section::Client,
        "timeout",
        ParamKind::Duration,
        "a caller abandons an attempt with no answer after this long, and may retry (unset: waits for the answer)",
    ),
    param(
        Section::Client,
        "hedge",
        ParamKind::Choice(HEDGE_NAMES),
        Value::Choice("off"),
        "send a second copy of an attempt still unanswered after `hedge_delay` (fixed) or after the caller's \
         running `hedge_percentile` latency (percentile); the first answer wins, the other copy is cancelled",
    ),
    param(
        Section::Client,
        "hedge_placement",
        ParamKind::Choice(&["every", "top", "bottom"]),
        Value::Choice("every"),
        "which callers hedge (when `hedge` is on): every one, only the user's client, or only the callers of the \
         bottom services",
    ),
    param(
        Section::Client,
        "hedge_delay",
        ParamKind::Duration,
        Value::Duration(ms(50)),
        "fixed hedging: wait this long for an answer before sending the copy",
    ),
    param(
        Section::Client,
        "hedge_percentile",
        ParamKind::Real { min: 0.5, max: 0.9999 },
        Value::Real(0.95),
        "percentile hedging: wait for this percentile of the latencies the caller has seen",
    ),
    unset(
        Section::Client,
        "hedge_max_extra",
        ParamKind::Real { min: 0.0, max: 1.0 },
        "at most this many hedges per first try of the caller, 0 to 1 (unset: no cap)",
    ),
];

mod metric {
    pub const REQUESTS: usize = 0;
    pub const SUCCESS_RATE: usize = 1;
    pub const AMPLIFICATION: usize = 2;
    pub const BOTTOM_CALLS: usize = 3;
    pub const RETRIES: usize = 4;
    pub const HEDGES: usize = 5;
    pub const TIMEOUTS: usize = 6;
    pub const REFUSED: usize = 7;
    pub const LATENCY_P50_MS: usize = 8;
    pub const LATENCY_P99_MS: usize = 9;
    pub const EVENTS: usize = 10;
    pub const REJECTED_LOCALLY: usize = 11;
    /// `amplification_l1` … `amplification_l8`, then `retries_l1` …, then `hedges_l1` … follow.
    pub const LAYER_0: usize = 12;
    pub const RETRIES_L0: usize = LAYER_0 + super::MAX_LAYERS;
    pub const HEDGES_L0: usize = RETRIES_L0 + super::MAX_LAYERS;
    pub const COUNT: usize = HEDGES_L0 + super::MAX_LAYERS;
}

/// The timeline series, per bucket.
mod series {
    /// Attempts arriving at the bottom services.
    pub const BOTTOM_CALLS: usize = 0;
    /// Attempts sent to any service.
    pub const CALLS: usize = 1;
    /// User requests answered with success.
    pub const GOODPUT: usize = 2;
    pub const COUNT: usize = 3;
}

/// How one caller (the user's client, or a service calling the ones below it) treats its calls.
#[derive(Clone, Debug)]
pub struct CallerPolicy {
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
}

/// One service of the graph.
#[derive(Clone, Debug)]
pub struct Service {
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
pub struct LayersConfig {
    /// Entry first, then breadth-first: the order of the `_lN` columns.
    pub services: Vec<Service>,
    /// The user's client's policy towards the entry service.
    pub user: CallerPolicy,
    pub clients: usize,
    pub hop: TimeDistribution,
    pub requests: u64,
    pub rate_per_nano: f64,
}

impl LayersConfig {
    pub fn is_bottom(&self, service: usize) -> bool {
        self.services[service].calls.is_empty()
    }
}

impl SimModel for Layers {
    const KIND: &'static str = "layers";
    const ABOUT: &'static str = "a graph of services that each retry: amplification across layers";
    const PARAMS: &'static [&'static [ParamSpec]] =
        &[LAYER_PARAMS, LAYER_WORKLOAD_PARAMS, LAYER_CLIENT_PARAMS, LIMITER_TUNING_PARAMS];
    const METRICS: &'static [MetricSpec] = &[
        MetricSpec { name: "requests", help: "user requests" },
        MetricSpec { name: "success_rate", help: "user requests that succeeded" },
        MetricSpec { name: "amplification", help: "attempts at every service together, per user request" },
        MetricSpec { name: "bottom_calls", help: "attempts reaching the bottom services, per user request" },
        MetricSpec { name: "retries", help: "retries by all callers, per user request" },
        MetricSpec { name: "hedges", help: "hedged copies sent by all callers, per user request" },
        MetricSpec { name: "timeouts", help: "attempts abandoned by their caller's timeout, per user request" },
        MetricSpec { name: "refused", help: "retries a limiter or budget refused, per user request" },
        MetricSpec { name: "latency_p50_ms", help: "median time from a user request to its successful answer" },
        MetricSpec { name: "latency_p99_ms", help: "99th percentile of the time from a user request to its successful answer" },
        MetricSpec { name: "events", help: "engine events in the run" },
        MetricSpec {
            name: "rejected_locally",
            help: "attempts a client-side limiter (sre-throttle, systemd) refused to send, per user request",
        },
        MetricSpec { name: "amplification_l1", help: "attempts reaching service 1 (the entry) per user request" },
        MetricSpec { name: "amplification_l2", help: "attempts reaching service 2 per user request" },
        MetricSpec { name: "amplification_l3", help: "attempts reaching service 3 per user request" },
        MetricSpec { name: "amplification_l4", help: "attempts reaching service 4 per user request" },
        MetricSpec { name: "amplification_l5", help: "attempts reaching service 5 per user request" },
        MetricSpec { name: "amplification_l6", help: "attempts reaching service 6 per user request" },
        MetricSpec { name: "amplification_l7", help: "attempts reaching service 7 per user request" },
        MetricSpec { name: "amplification_l8", help: "attempts reaching service 8 per user request" },
        MetricSpec { name: "retries_l1", help: "of amplification_l1, the retries" },
        MetricSpec { name: "retries_l2", help: "of amplification_l2, the retries" },
        MetricSpec { name: "retries_l3", help: "of amplification_l3, the retries" },
        MetricSpec { name: "retries_l4", help: "of amplification_l4, the retries" },
        MetricSpec { name: "retries_l5", help: "of amplification_l5, the retries" },
        MetricSpec { name: "retries_l6", help: "of amplification_l6, the retries" },
        MetricSpec { name: "retries_l7", help: "of amplification_l7, the retries" },
        MetricSpec { name: "retries_l8", help: "of amplification_l8, the retries" },
        MetricSpec { name: "hedges_l1", help: "of amplification_l1, the hedges (the rest are first tries)" },
        MetricSpec { name: "hedges_l2", help: "of amplification_l2, the hedges" },
        MetricSpec { name: "hedges_l3", help: "of amplification_l3, the hedges" },
        MetricSpec { name: "hedges_l4", help: "of amplification_l4, the hedges" },
        MetricSpec { name: "hedges_l5", help: "of amplification_l5, the hedges" },
        MetricSpec { name: "hedges_l6", help: "of amplification_l6, the hedges" },
        MetricSpec { name: "hedges_l7", help: "of amplification_l7, the hedges" },
        MetricSpec { name: "hedges_l8", help: "of amplification_l8, the hedges" },
    ];
    const TIMELINE: &'static [&'static str] = &["bottom_calls", "calls", "goodput"];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["bottom_calls", "amplification", "success_rate"];
    const PARTS: Option<&'static PartTable> = Some(&GRAPH);

    type Config = LayersConfig;

    fn configure(point: &Point) -> Result<LayersConfig, ParamError> {
        let rate = point.real("rate")?;
        if rate <= 0.0 {
            return Err(ParamError::new("rate", "must be greater than 0".into()));
        }
        let placement = point.choice("placement")?;
        let hedge_placement = point.choice("hedge_placement")?;
        let (names, calls, points) = graph(point)?;
        let bottom = |i: usize| calls[i].is_empty();
        let mut services = Vec::with_capacity(names.len());
        for (i, own) in points.iter().enumerate() {
            let part = own.parts().iter().find(|p| p.name == names[i]);
            let sets = |key: &str| part.is_some_and(|p| p.get(key).is_some());
            // Errors about a value this service's table sets are located there; others at the model-wide value.
            let located = |error: ParamError| {
                if sets(error.key) || (error.key == "cap" && sets("base")) {
                    error.in_part(&names[i])
                } else {
                    error
                }
            };
            let placed = |placement: &str| match placement {
                "every" => true,
                "top" => false,
                _ => calls[i].iter().any(|&c| bottom(c as usize)),
            };
            // A table's own `attempts` or `hedge` wins over the model-wide placement (and over a preset's attempts).
            let retries = placed(placement) || sets("attempts");
            let hedges = placed(hedge_placement) || sets("hedge");
            let policy = caller_policy(own, retries, hedges, sets("attempts")).map_err(located)?;
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
                work: TimeDistribution::new(
                    own.choice("service")?,
                    own.duration("service_time")?,
                    own.duration("service_sd")?,
                    own.duration("slow_service")?,
                    own.real("slow_probability")?,
                    "service",
                )
                .map_err(located)?,
                failure_probability,
                faults,
                policy,
            });
        }
        let user_placed = |placement: &str| placement != "bottom" || bottom(0);
        let user = caller_policy(point, user_placed(placement), user_placed(hedge_placement), false)?;
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
            hop: TimeDistribution::new(
                point.choice("network")?,
                point.duration("hop_delay")?,
                SimDuration::ZERO,
                SimDuration::ZERO,
                0.0,
                "network",
            )?,
            requests: point.count("requests")? as u64,
            rate_per_nano: rate / 1e9,
        })
    }

    fn simulate(config: &LayersConfig, run_settings: RunSettings) -> RunOutput {
        run::simulate(config, run_settings)
    }

    fn service_names(config: &LayersConfig) -> Vec<String> {
        config.services.iter().map(|service| service.name.clone()).collect()
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

/// One caller's policy from its point; `retries` and `hedges` say whether placement lets it retry or hedge, and
/// `own_attempts` whether its `attempts` was set for it alone (then a preset's attempts do not replace it).
fn caller_policy(point: &Point, retries: bool, hedges: bool, own_attempts: bool) -> Result<CallerPolicy, ParamError> {
    let base = point.duration("base")?;
    let cap = point.duration("cap")?;
    if cap < base {
        return Err(ParamError::new("cap", format!("cap ({cap}) must be at least base ({base})")));
    }
    let hedge_max_extra = match point.get("hedge_max_extra")? {
        Some(_) => Some(point.real("hedge_max_extra")?),
        None => None,
    };
    let hedge =
        Hedge::from_choice(point.choice("hedge")?, point.duration("hedge_delay")?, point.real("hedge_percentile")?);
    if hedge.doubles_every_call() && hedge_max_extra.is_none() {
        return Err(ParamError::new("hedge_delay", "a zero delay with no `hedge_max_extra` cap doubles every attempt; give a delay > 0 or a cap"
                .into()));
    }
    let hedge = if hedges { hedge } else { Hedge::Off };
    let limiter_name = point.choice("limiter")?;
    let strategy_name = point.choice("strategy")?;
    let mut backoff = RetryPolicy {
        strategy: Strategy::from_name(strategy_name).unwrap_or(Strategy::FullJitter),
        backoff: BackoffParams { base, cap, multiplier: 2.0 },
        max_attempts: None,
        deadline: None,
        retry_after: RetryAfterPolicy::Ignore,
    };
    let mut attempts = point.count("attempts")? as u32;
    let mut limiter = tuned_limiter(point, limiter_name)?;
    if let Some(preset) = Preset::lookup(strategy_name) {
        backoff = RetryPolicy { max_attempts: None, ..preset.apply(backoff) };
        if !own_attempts {
            attempts = preset.max_attempts.unwrap_or(attempts);
        }
        if limiter_name == "none" {
            limiter = preset.limiter();
        }
    }
    Ok(CallerPolicy {
        attempts: if retries { attempts } else { 1 },
        backoff,
        timeout: point.optional_duration("timeout")?,
        hedge,
        hedge_max_extra,
        budget: (limiter_name == "budget").then(|| point.real("budget")).transpose()?,
        limiter,
    })
}
