//! A contended server: `workers` parallel workers in front of a FIFO queue, clients that time out and retry.
//!
//! A request's attempt travels to the server (one network delay), waits in the queue if every worker is busy (or
//! is rejected with 503 when the queue is full), is served for a time drawn from the service distribution (plus
//! `latency_per_request` × the requests in service, for servers that slow down with load), and the answer
//! travels back. The client gives each attempt `timeout`; a timed-out attempt's work continues on the server
//! (`on_timeout = "abandon"`) or is dropped from the queue if it has not started (`"cancel"`). After a failed
//! attempt the client asks its retry policy (n = failed attempts so far) and either sleeps and resends, or gives
//! up. With retries off and no timeout this is an M/M/c (or M/G/c, M/D/1, closed) queue, which the theory
//! tests check.
//!
//! Answers carry a status: 200; 503 when the queue is full (with an optional Retry-After); 429 from the token
//! bucket rate limiter (Retry-After = time until its next token); and, after service, with independent
//! probabilities, 502 (transient), 400 whose body says an upstream is temporarily unavailable ("transient
//! disguised as 400") or 422 (permanent). The client's classifier decides what is retried. A successful service
//! applies the request's side effect; a second application of the same request is a duplicate unless the client
//! sends idempotency keys, in which case the server recognises it and applies nothing.

use std::collections::VecDeque;

use rand::RngExt;

use super::client::{CLIENT_PARAMS, client_policy};
use super::distributions::{DISTRIBUTION_NAMES, TimeDistribution};
use super::faults::{FAULT_SYNTAX, FaultKind, FaultWindow, Faults};
use super::{MetricSpec, RunSettings, ParamDefault, ParamError, ParamKind, ParamSpec, Point, RunOutput, Section, SimModel, Value};
use crate::engine::{Model, Scheduler, SimRng, mix64, run, sim_rng};
use crate::time::{SimDuration, SimTime};
use crate::metrics::{BucketCounter, BucketMax, LatencyHistogram};
use super::trace::Tracer;
use super::limiter_params::{LIMITER_TUNING_PARAMS, tuned_limiter};
use crate::policy::limiters::{
    Admission, LIMITER_NAMES, Limiter, Outcome as CallOutcome, Permit, RetryBudget, RetryLimiter,
};
use crate::workload::{RateSchedule, SCHEDULE_SYNTAX};
use crate::policy::{BackoffMemory, Classifier, Response, RetryAfterPolicy, RetryDecision, RetryPolicy, TokenBucket};

/// The contended-server model (scenario `kind = "server"`).
pub struct Server;

/// The longest Retry-After an answer can carry (`u32` microseconds); the limiter's hints are clamped to it.
const MAX_RETRY_AFTER: SimDuration = SimDuration::from_secs(3600);

const fn duration_param(section: Section, key: &'static str, default: ParamDefault, help: &'static str) -> ParamSpec {
    ParamSpec { section, key, kind: ParamKind::Duration, default, help }
}

const fn probability_param(key: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        section: Section::Model,
        key,
        kind: ParamKind::Real { min: 0.0, max: 1.0 },
        default: ParamDefault::Value(Value::Real(0.0)),
        help,
    }
}

const fn millis(ms: u64) -> ParamDefault {
    ParamDefault::Value(Value::Duration(SimDuration::from_millis(ms)))
}

const SERVER_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Model,
        key: "workers",
        kind: ParamKind::Count { min: 1, max: 10_000_000 },
        default: ParamDefault::Unset,
        help: "requests served in parallel (unset: unlimited)",
    },
    ParamSpec {
        section: Section::Model,
        key: "queue_limit",
        kind: ParamKind::Count { min: 0, max: 100_000_000 },
        default: ParamDefault::Unset,
        help: "requests that may wait for a worker; more are rejected with 503 (unset: unlimited)",
    },
    ParamSpec {
        section: Section::Model,
        key: "service",
        kind: ParamKind::Choice(DISTRIBUTION_NAMES),
        default: ParamDefault::Value(Value::Choice("exponential")),
        help: "service-time distribution",
    },
    duration_param(Section::Model, "service_mean", millis(10), "mean service time (the fast mode for bimodal)"),
    duration_param(Section::Model, "service_sd", millis(10), "standard deviation of lognormal service"),
    duration_param(Section::Model, "slow_service", millis(1000), "the slow mode of bimodal service"),
    ParamSpec {
        section: Section::Model,
        key: "slow_probability",
        kind: ParamKind::Real { min: 0.0, max: 1.0 },
        default: ParamDefault::Value(Value::Real(0.0)),
        help: "probability of the slow mode of bimodal service",
    },
    duration_param(
        Section::Model,
        "latency_per_request",
        millis(0),
        "k: service time grows by k × the requests in service (this one included) when it starts",
    ),
    duration_param(Section::Model, "network_delay", millis(0), "mean one-way network delay"),
    probability_param("error_probability", "chance a served attempt answers 502 (transient)"),
    probability_param("disguised_probability", "chance a served attempt answers 400 with a 'temporarily unavailable' body"),
    probability_param("permanent_probability", "chance a served attempt answers 422 (permanent)"),
    ParamSpec {
        section: Section::Model,
        key: "rate_limit",
        kind: ParamKind::Real { min: 0.0, max: 1e9 },
        default: ParamDefault::Unset,
        help: "token bucket: attempts admitted per second; others get 429 with Retry-After (unset: no limiter)",
    },
    ParamSpec {
        section: Section::Model,
        key: "rate_burst",
        kind: ParamKind::Count { min: 1, max: 1_000_000_000 },
        default: ParamDefault::Value(Value::Count(1)),
        help: "token bucket capacity: attempts admitted back to back",
    },
    ParamSpec {
        section: Section::Model,
        key: "faults",
        kind: ParamKind::Text { syntax: FAULT_SYNTAX },
        default: ParamDefault::Unset,
        help: "fault windows: fail-fast, black-hole or slowdown xF over spans of time (unset: none)",
    },
    ParamSpec {
        section: Section::Model,
        key: "outage_start",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "when the outage given by `outage_duration` begins",
    },
    ParamSpec {
        section: Section::Model,
        key: "outage_duration",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "length of the outage starting at outage_start (a fault window [start, start + duration) whose \
               length can be swept; 0s adds no window but still marks the trigger; unset: no outage)",
    },
    ParamSpec {
        section: Section::Model,
        key: "outage_kind",
        kind: ParamKind::Choice(OUTAGE_KINDS),
        default: ParamDefault::Unset,
        help: "what the server does during the outage: black-hole, fail-fast or reset (unset: black-hole)",
    },
    ParamSpec {
        section: Section::Model,
        key: "overload_retry_after",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "Retry-After sent with 503 when the queue is full (unset: none)",
    },
    ParamSpec {
        section: Section::Model,
        key: "network",
        kind: ParamKind::Choice(&["constant", "exponential"]),
        default: ParamDefault::Value(Value::Choice("constant")),
        help: "network-delay distribution",
    },
];

/// Fault kinds an outage (`outage_kind`) can take, as in the `faults` syntax.
const OUTAGE_KINDS: &[&str] = &["black-hole", "fail-fast", "reset"];

/// Workload kinds: `burst` releases `clients` requests at t = 0; `open` sends Poisson arrivals at `rate` until
/// `duration`; `closed` runs `clients` clients that each think for Exp(`think_time`) between requests.
const WORKLOAD_KINDS: &[&str] = &["burst", "open", "closed"];

const WORKLOAD_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Workload,
        key: "kind",
        kind: ParamKind::Choice(WORKLOAD_KINDS),
        default: ParamDefault::Value(Value::Choice("burst")),
        help: "burst (all at t = 0), open (Poisson arrivals) or closed (clients with think time)",
    },
    ParamSpec {
        section: Section::Workload,
        key: "clients",
        kind: ParamKind::Count { min: 1, max: 100_000_000 },
        default: ParamDefault::Value(Value::Count(100)),
        help: "burst: requests released together; closed: clients",
    },
    ParamSpec {
        section: Section::Workload,
        key: "rate",
        kind: ParamKind::Real { min: 0.0, max: 1e9 },
        default: ParamDefault::Value(Value::Real(100.0)),
        help: "open: new requests per second",
    },
    ParamSpec {
        section: Section::Workload,
        key: "schedule",
        kind: ParamKind::Text { syntax: SCHEDULE_SYNTAX },
        default: ParamDefault::Unset,
        help: "open: a rate that steps or ramps over time, replacing `rate`",
    },
    duration_param(Section::Workload, "think_time", millis(1000), "closed: mean think time between requests"),
    duration_param(Section::Workload, "duration", millis(10_000), "open and closed: new requests stop at this time"),
    duration_param(Section::Workload, "warmup", millis(0), "requests sent before this are left out of the metrics"),
    ParamSpec {
        section: Section::Workload,
        key: "good_within",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "for recovery_ms, a request counts as goodput only if it succeeds this soon after it was sent \
               (unset: the client's timeout, or any time if there is none)",
    },
    ParamSpec {
        section: Section::Workload,
        key: "trigger_start",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "when the trigger begins, for shading charts (unset: the outage's start, else the start of the last \
               fault window)",
    },
    ParamSpec {
        section: Section::Workload,
        key: "trigger_end",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "when the trigger (a spike, an outage) ends, for recovery_ms (unset: the outage's end, else the end \
               of the last fault window)",
    },
];

const SERVER_CLIENT_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Client,
        key: "timeout",
        kind: ParamKind::Duration,
        default: ParamDefault::Unset,
        help: "per-attempt timeout (unset: wait for the answer however long it takes)",
    },
    ParamSpec {
        section: Section::Client,
        key: "on_timeout",
        kind: ParamKind::Choice(&["abandon", "cancel"]),
        default: ParamDefault::Value(Value::Choice("abandon")),
        help: "what happens to a timed-out attempt's queued work: abandon (still served) or cancel (dropped)",
    },
    ParamSpec {
        section: Section::Client,
        key: "classifier",
        kind: ParamKind::Choice(Classifier::NAMES),
        default: ParamDefault::Value(Value::Choice("status-only")),
        help: "status-only (retry 429/502/503/504) or body-aware (also a 400 whose body says transient)",
    },
    ParamSpec {
        section: Section::Client,
        key: "retry_after",
        kind: ParamKind::Choice(RetryAfterPolicy::NAMES),
        default: ParamDefault::Value(Value::Choice("honour")),
        help: "Retry-After hints: honour (replaces the backoff), ignore, or honour-capped (at most the cap)",
    },
    ParamSpec {
        section: Section::Client,
        key: "limiter",
        kind: ParamKind::Choice(LIMITER_NAMES),
        default: ParamDefault::Value(Value::Choice("none")),
        help: "one retry limiter for the whole client fleet: budget (`budget` of first tries over 10 s), \
               token-bucket (0.1 per call, capacity 5), breaker (no retries while > 10% of the last 100 calls \
               failed, 1 s pauses), grpc (10, 0.1), aws-quota (500, 5, 10), finagle (20% + 10/s over 10 s), \
               envoy (concurrent retries ≤ max(3, 20% of active)), sre-ratio (retries < 10% of requests), \
               sre-throttle (local rejection, K = 2), aws-adaptive (quota + CUBIC rate limiter) or systemd (5 \
               starts per 10 s); none uses the preset's limiter when `strategy` is a preset",
    },
    ParamSpec {
        section: Section::Client,
        key: "budget",
        kind: ParamKind::Real { min: 0.0, max: 1.0 },
        default: ParamDefault::Value(Value::Real(0.1)),
        help: "with limiter = \"budget\": retries allowed per first try, 0 to 1",
    },
    ParamSpec {
        section: Section::Client,
        key: "idempotency_keys",
        kind: ParamKind::Choice(&["off", "on"]),
        default: ParamDefault::Value(Value::Choice("off")),
        help: "on: the server recognises repeats of a request and applies its side effect once",
    },
];

/// Metric positions in [`RunOutput::metrics`].
mod metric {
    pub const CALLS: usize = 0;
    pub const REQUESTS: usize = 1;
    pub const RETRIES: usize = 2;
    pub const SUCCEEDED: usize = 3;
    pub const GAVE_UP: usize = 4;
    pub const SUCCESS_RATE: usize = 5;
    pub const TIMEOUTS: usize = 6;
    pub const REJECTED: usize = 7;
    pub const AMPLIFICATION: usize = 8;
    pub const LATENCY_MEAN_MS: usize = 9;
    pub const LATENCY_P50_MS: usize = 10;
    pub const LATENCY_P90_MS: usize = 11;
    pub const LATENCY_P99_MS: usize = 12;
    pub const LATENCY_P999_MS: usize = 13;
    pub const WAIT_MEAN_MS: usize = 14;
    pub const UTILISATION: usize = 15;
    pub const GOODPUT_RPS: usize = 16;
    pub const COMPLETION_MS: usize = 17;
    pub const PEAK_CALLS_PER_BUCKET: usize = 18;
    pub const PEAK_TO_MEAN: usize = 19;
    pub const EVENTS: usize = 20;
    pub const DUPLICATES: usize = 21;
    pub const FAILED_PERMANENTLY: usize = 22;
    pub const THROTTLED: usize = 23;
    pub const SERVER_ERRORS: usize = 24;
    pub const RECOVERY_MS: usize = 25;
    pub const RECOVERED: usize = 26;
    pub const DEDUPLICATED: usize = 27;
    pub const REFUSED: usize = 28;
    pub const REJECTED_LOCALLY: usize = 29;
    pub const COUNT: usize = 30;
}

/// Timeline series positions.
mod series {
    pub const CALLS: usize = 0;
    pub const GOODPUT: usize = 1;
    pub const OFFERED: usize = 2;
    /// Counted series; the queue's length is a level, stored after them.
    pub const COUNTED: usize = 3;
    pub const QUEUE: usize = 3;
    pub const COUNT: usize = 4;
}

#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    Burst { requests: u32 },
    Open { schedule: RateSchedule },
    Closed { clients: u32 },
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub workers: Option<u32>,
    pub queue_limit: Option<u64>,
    pub service: TimeDistribution,
    pub latency_per_request: SimDuration,
    pub network: TimeDistribution,
    pub workload: Workload,
    pub think_time: TimeDistribution,
    pub duration: SimTime,
    pub warmup: SimTime,
    pub retry: RetryPolicy,
    pub timeout: Option<SimDuration>,
    pub cancel_on_timeout: bool,
    pub classifier: Classifier,
    pub idempotency_keys: bool,
    /// Probabilities of 502, disguised 400 and 422 after service, in that order.
    pub error_probabilities: [f64; 3],
    /// Token bucket (rate per second, capacity), if the server limits its rate.
    pub rate_limit: Option<(f64, f64)>,
    pub overload_retry_after: Option<SimDuration>,
    /// The client fleet's retry limiter, if any (one shared state).
    pub limiter: Option<Limiter>,
    pub faults: Faults,
    /// The trigger's span (recovery is measured from its end; charts shade it).
    pub trigger_start: Option<SimTime>,
    pub trigger_end: Option<SimTime>,
    /// Successes slower than this do not count as goodput for recovery.
    pub good_within: SimDuration,
}

impl SimModel for Server {
    const KIND: &'static str = "server";
    const ABOUT: &'static str = "a server with workers and a bounded FIFO queue; clients time out and retry";
    const PARAMS: &'static [&'static [ParamSpec]] =
        &[SERVER_PARAMS, WORKLOAD_PARAMS, CLIENT_PARAMS, SERVER_CLIENT_PARAMS, LIMITER_TUNING_PARAMS];
    const METRICS: &'static [MetricSpec] = &[
        MetricSpec { name: "calls", help: "attempts reaching the server, rejected ones included" },
        MetricSpec { name: "requests", help: "unique requests (first tries)" },
        MetricSpec { name: "retries", help: "attempts after the first" },
        MetricSpec { name: "succeeded", help: "requests answered successfully" },
        MetricSpec { name: "gave_up", help: "requests whose policy gave up (dead-lettered)" },
        MetricSpec { name: "success_rate", help: "succeeded / requests that ended (succeeded, gave up or failed)" },
        MetricSpec { name: "timeouts", help: "attempts that timed out at the client" },
        MetricSpec {
            name: "rejected",
            help: "attempts refused without service: 503 (queue full, fail-fast window) or a connection reset",
        },
        MetricSpec { name: "amplification", help: "server calls per unique request" },
        MetricSpec { name: "latency_mean_ms", help: "mean time from first send to success" },
        MetricSpec { name: "latency_p50_ms", help: "median time from first send to success" },
        MetricSpec { name: "latency_p90_ms", help: "90th percentile of time to success" },
        MetricSpec { name: "latency_p99_ms", help: "99th percentile of time to success" },
        MetricSpec { name: "latency_p999_ms", help: "99.9th percentile of time to success" },
        MetricSpec { name: "wait_mean_ms", help: "mean time an attempt waited in the queue" },
        MetricSpec { name: "utilisation", help: "busy worker time / (workers × time); empty for unlimited workers" },
        MetricSpec { name: "goodput_rps", help: "successes per second in the measured window" },
        MetricSpec {
            name: "completion_ms",
            help: "time of the last event that changed anything (timers of answered attempts do not count)",
        },
        MetricSpec { name: "peak_calls_per_bucket", help: "most server calls in one timeline bucket" },
        MetricSpec { name: "peak_to_mean", help: "peak calls per bucket over the mean of the non-empty buckets" },
        MetricSpec { name: "events", help: "engine events in the run" },
        MetricSpec { name: "duplicates", help: "side effects applied again by a retried request (without idempotency keys)" },
        MetricSpec { name: "failed_permanently", help: "requests ended by an answer the classifier does not retry" },
        MetricSpec { name: "throttled", help: "attempts answered 429 by the rate limiter" },
        MetricSpec { name: "server_errors", help: "attempts answered 502, or 400 with a transient body" },
        MetricSpec {
            name: "recovery_ms",
            help: "time from the trigger's end until goodput is back to ≥ 90% of offered load for good",
        },
        MetricSpec { name: "recovered", help: "1 if goodput recovered before new requests stopped, else 0" },
        MetricSpec {
            name: "deduplicated",
            help: "repeats of a request the server recognised by its idempotency key and did not apply again",
        },
        MetricSpec { name: "refused", help: "retries the client's limiter refused (those requests gave up)" },
        MetricSpec {
            name: "rejected_locally",
            help: "attempts the client's limiter would not send (sre-throttle, systemd): failed without a call",
        },
    ];
    const TIMELINE: &'static [&'static str] = &["calls", "goodput", "offered", "queue_max"];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["calls", "latency_p99_ms", "success_rate"];

    type Config = ServerConfig;

    fn configure(point: &Point) -> Result<ServerConfig, ParamError> {
        let workers = point.optional_count("workers")?.map(|n| n as u32);
        let queue_limit = point.optional_count("queue_limit")?.map(|n| n as u64);
        if workers.is_none() && queue_limit.is_some() {
            return Err(ParamError::new("queue_limit", "a queue limit needs a finite number of workers; set `workers` too".into()));
        }
        let service = TimeDistribution::new(
            point.choice("service")?,
            point.duration("service_mean")?,
            point.duration("service_sd")?,
            point.duration("slow_service")?,
            point.real("slow_probability")?,
            "service",
        )?;
        let network = TimeDistribution::new(
            point.choice("network")?,
            point.duration("network_delay")?,
            SimDuration::ZERO,
            SimDuration::ZERO,
            0.0,
            "network",
        )?;
        let workload = match point.choice("kind")? {
            "burst" => Workload::Burst { requests: point.count("clients")? as u32 },
            "open" => match point.get("schedule")? {
                Some(Value::Text(text)) => Workload::Open {
                    schedule: RateSchedule::parse(&text).map_err(|message| ParamError::new("schedule", message))?,
                },
                _ => {
                    let rate = point.real("rate")?;
                    if rate <= 0.0 {
                        return Err(ParamError::new("rate", "an open workload needs rate > 0".into()));
                    }
                    Workload::Open { schedule: RateSchedule::constant(rate) }
                }
            },
            _ => Workload::Closed { clients: point.count("clients")? as u32 },
        };
        let duration = SimTime::ZERO + point.duration("duration")?;
        let warmup = SimTime::ZERO + point.duration("warmup")?;
        if !matches!(workload, Workload::Burst { .. }) && warmup >= duration {
            return Err(ParamError::new("warmup", "must be shorter than `duration`".into()));
        }
        let error_probabilities = [
            point.real("error_probability")?,
            point.real("disguised_probability")?,
            point.real("permanent_probability")?,
        ];
        if error_probabilities.iter().sum::<f64>() > 1.0 {
            return Err(ParamError::new("permanent_probability", "error_probability + disguised_probability + permanent_probability must not exceed 1".into()));
        }
        let rate_limit = match point.get("rate_limit")? {
            None => None,
            Some(_) => {
                let rate = point.real("rate_limit")?;
                if rate <= 0.0 {
                    return Err(ParamError::new("rate_limit", "must be greater than 0".into()));
                }
                Some((rate, point.count("rate_burst")? as f64))
            }
        };
        let mut faults = match point.get("faults")? {
            Some(Value::Text(text)) => Faults::parse(&text).map_err(|message| ParamError::new("faults", message))?,
            _ => Faults::default(),
        };
        let timeout = point.optional_duration("timeout")?;
        if faults.has_black_hole() && timeout.is_none() {
            return Err(ParamError::new("faults", "a black-hole window needs a client `timeout`, or its requests wait forever".into()));
        }
        let outage = outage(point)?;
        if let Some(outage) = &outage {
            if outage.kind == FaultKind::BlackHole && timeout.is_none() {
                let (key, kind) = match point.get("outage_kind")? {
                    Some(_) => ("outage_kind", "a black-hole outage"),
                    None => ("outage_duration", "a black-hole outage (the default `outage_kind`)"),
                };
                return Err(ParamError::new(key, format!("{kind} needs a client `timeout`, or its requests wait forever")));
            }
            if outage.end > outage.start {
                faults.add(*outage).map_err(|message| ParamError::new("outage_duration", message))?;
            }
        }
        // An outage of length 0 has no span to shade, but recovery is still measured from its (empty) end.
        let outage_span = outage.map(|o| ((o.end > o.start).then_some(o.start), o.end));
        let last_window = faults.windows().last().map(|window| (Some(window.start), window.end));
        let (default_start, default_end) = match outage_span.or(last_window) {
            Some((start, end)) => (start, Some(end)),
            None => (None, None),
        };
        let trigger_end = point.optional_duration("trigger_end")?.map(|d| SimTime::ZERO + d).or(default_end);
        let trigger_start = point.optional_duration("trigger_start")?.map(|d| SimTime::ZERO + d).or(default_start);
        if let (Some(start), Some(end)) = (trigger_start, trigger_end)
            && start >= end
        {
            return Err(ParamError::new("trigger_start", format!("must be earlier than the trigger's end ({})", end - SimTime::ZERO)));
        }
        let overload_retry_after = point.optional_duration("overload_retry_after")?;
        if overload_retry_after.is_some_and(|hint| hint > MAX_RETRY_AFTER) {
            return Err(ParamError::new("overload_retry_after", format!("at most {MAX_RETRY_AFTER}: hints travel in whole microseconds in 32 bits")));
        }
        let (mut retry, preset_limiter) = client_policy(point)?;
        retry.retry_after = RetryAfterPolicy::from_name(point.choice("retry_after")?).unwrap_or(RetryAfterPolicy::Honour);
        let think_time =
            TimeDistribution::new("exponential", point.duration("think_time")?, SimDuration::ZERO, SimDuration::ZERO, 0.0, "think_time")?;
        Ok(ServerConfig {
            workers,
            queue_limit,
            service,
            latency_per_request: point.duration("latency_per_request")?,
            network,
            workload,
            think_time,
            duration,
            warmup,
            retry,
            timeout,
            cancel_on_timeout: point.choice("on_timeout")? == "cancel",
            classifier: Classifier::from_name(point.choice("classifier")?).unwrap_or(Classifier::StatusOnly),
            idempotency_keys: point.choice("idempotency_keys")? == "on",
            error_probabilities,
            rate_limit,
            overload_retry_after,
            limiter: match point.choice("limiter")? {
                "none" => preset_limiter,
                "budget" => Some(Limiter::Budget(RetryBudget::new(point.real("budget")?, 0.0, SimDuration::from_secs(10)))),
                name => tuned_limiter(point, name)?,
            },
            trigger_start,
            faults,
            trigger_end,
            good_within: point.optional_duration("good_within")?.or(timeout).unwrap_or(SimDuration::MAX),
        })
    }

    fn simulate(config: &ServerConfig, run_settings: RunSettings) -> RunOutput {
        let mut run_state = ServerRun::new(config, run_settings.seed, run_settings.bucket);
        if run_settings.trace {
            run_state.tracer = Some(Tracer::default());
        }
        let mut scheduler = Scheduler::with_capacity(1024);
        match config.workload {
            Workload::Burst { requests } => {
                for client in 0..requests {
                    scheduler.schedule_at(SimTime::ZERO, ServerEvent::NewRequest { client });
                }
            }
            Workload::Open { .. } => {
                if let Some(first) = run_state.next_arrival_after(SimTime::ZERO) {
                    scheduler.schedule_at(first, ServerEvent::OpenArrival);
                }
            }
            Workload::Closed { clients } => {
                for client in 0..clients {
                    let think = config.think_time.sample(&mut run_state.rng);
                    scheduler.schedule_in(think, ServerEvent::NewRequest { client });
                }
            }
        }
        let stats = run(&mut run_state, &mut scheduler, run_settings.limit());
        let end = run_state.last_activity;
        let mut output = run_state.finish(stats.events, end);
        output.truncated = stats.truncated;
        output
    }
}

/// The outage `outage_start`, `outage_duration` and `outage_kind` describe: a fault window
/// [start, start + duration), possibly empty (duration 0). `None` when `outage_duration` is unset; the other two
/// are refused without it, since they would change nothing.
fn outage(point: &Point) -> Result<Option<FaultWindow>, ParamError> {
    let kind = match point.get("outage_kind")? {
        Some(Value::Choice("fail-fast")) => FaultKind::FailFast,
        Some(Value::Choice("reset")) => FaultKind::Reset,
        _ => FaultKind::BlackHole,
    };
    let start = point.optional_duration("outage_start")?;
    let Some(duration) = point.optional_duration("outage_duration")? else {
        for key in ["outage_start", "outage_kind"] {
            if point.get(key)?.is_some() {
                return Err(ParamError::new(key, "has no effect without `outage_duration`; set it too".into()));
            }
        }
        return Ok(None);
    };
    let Some(start) = start else {
        return Err(ParamError::new("outage_duration", "an outage needs `outage_start`, the time it begins".into()));
    };
    let start = SimTime::ZERO + start;
    Ok(Some(FaultWindow { start, end: start + duration, kind }))
}

/// A message or timer. `slot` indexes the request table; `token` names one attempt, so events about an
/// attempt that is no longer current (a late answer, a timer for an attempt already answered) are recognised.
/// Tokens are unique within a run up to 2^32 attempts, far beyond any event's lifetime.
#[derive(Clone, Copy, Debug)]
pub enum ServerEvent {
    /// A client issues a new request.
    NewRequest { client: u32 },
    /// The next open-loop arrival.
    OpenArrival,
    /// An attempt reaches the server.
    AttemptArrives { slot: u32, token: u32 },
    /// A worker finishes an attempt.
    ServiceDone { slot: u32, token: u32 },
    /// The server's answer reaches the client; `retry_after_us` is its Retry-After hint in µs (0: none).
    Answer { slot: u32, token: u32, outcome: Outcome, retry_after_us: u32 },
    /// The client's per-attempt timer fires.
    Timeout { slot: u32, token: u32 },
    /// The client's backoff sleep ends.
    RetryDue { slot: u32 },
    /// The wait the client's limiter imposed on an admitted attempt ends: send it.
    AdmittedSend { slot: u32 },
}

/// What the server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// 200.
    Success,
    /// 503: the queue was full.
    Overloaded,
    /// 429: the rate limiter had no token.
    Throttled,
    /// 502 after service: a transient failure.
    TransientError,
    /// 400 after service, with a body saying an upstream is temporarily unavailable.
    DisguisedTransient,
    /// 422 after service: permanent.
    Permanent,
    /// The connection was reset: no status.
    ConnectionReset,
}

impl Outcome {
    /// A short name for traces.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Overloaded => "overloaded",
            Outcome::Throttled => "throttled",
            Outcome::TransientError => "transient-error",
            Outcome::DisguisedTransient => "disguised-transient",
            Outcome::Permanent => "permanent-error",
            Outcome::ConnectionReset => "connection-reset",
        }
    }

    /// The response as a client's classifier sees it.
    pub fn response(self) -> Response {
        let (status, transient_body) = match self {
            Outcome::Success => (200, false),
            Outcome::Overloaded => (503, true),
            Outcome::Throttled => (429, true),
            Outcome::TransientError => (502, true),
            Outcome::DisguisedTransient => (400, true),
            Outcome::Permanent => (422, false),
            Outcome::ConnectionReset => (0, false),
        };
        Response { status, transient_body }
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct Request {
    client: u32,
    sent_at: SimTime,
    /// The token of the attempt the client waits for; 0 while it sleeps and once it is done.
    token: u32,
    failed_attempts: u32,
    memory: BackoffMemory,
    measured: bool,
    /// The client still wants an answer.
    open: bool,
    /// Attempts on their way to, or held by, the server. The slot is reused only when this is 0 and the client
    /// is done, so the server can always tell which request an attempt belongs to.
    at_server: u32,
    /// Times the server applied this request's side effect.
    applied: u32,
    /// The limiter's permit for the attempt in flight (`None` for a first try).
    permit: Option<Permit>,
    /// With `on_timeout = "cancel"`: the token of this request's attempt waiting in the queue (0: none). A
    /// request has at most one such attempt, because its timeout cancels it before a retry is sent.
    queued_token: u32,
    /// The backoff slept before the attempt in flight (for traces).
    slept: SimDuration,
}

struct ServerRun<'a> {
    config: &'a ServerConfig,
    rng: SimRng,
    requests: Vec<Request>,
    free_slots: Vec<u32>,
    next_token: u32,
    queue: VecDeque<(u32, u32, SimTime)>,
    /// Queue entries whose attempts were cancelled (`on_timeout = "cancel"`); they leave when they reach the front.
    dead_entries: usize,
    busy: u32,
    busy_nanos: f64,
    limiter: Option<TokenBucket>,
    timeline: [BucketCounter; series::COUNTED],
    queue_levels: BucketMax,
    /// Prompt successes (within `good_within`) counted in the bucket their request was first sent in: the share
    /// of each bucket's offered work that was done in good time, for `recovery_ms`.
    succeeded_by_send: BucketCounter,
    /// The last time anything happened (a timer for an attempt already answered does not count).
    last_activity: SimTime,
    latency: LatencyHistogram,
    wait_nanos: f64,
    waits: u64,
    counts: Counts,
    /// The client fleet's retry limiter (the server's own rate limiter is `limiter`).
    retry_limiter: Option<Limiter>,
    /// The uniform draws handed to the limiter's admission, from a stream of their own so that runs without a
    /// probabilistic limiter draw exactly what they drew before admission existed.
    admission_rng: SimRng,
    /// Spans per attempt, when tracing.
    tracer: Option<Tracer>,
}

#[derive(Default)]
struct Counts {
    refused: u64,
    rejected_locally: u64,
    calls: u64,
    requests: u64,
    retries: u64,
    succeeded: u64,
    gave_up: u64,
    failed_permanently: u64,
    timeouts: u64,
    rejected: u64,
    throttled: u64,
    server_errors: u64,
    duplicates: u64,
    deduplicated: u64,
    measured_successes: u64,
}

impl<'a> ServerRun<'a> {
    fn new(config: &'a ServerConfig, seed: u64, bucket: SimDuration) -> Self {
        /// Tells the admission stream's seed apart from the main one.
        const ADMISSION_STREAM: u64 = 0x6164_6d69_7373_696f;
        ServerRun {
            config,
            rng: sim_rng(seed),
            requests: Vec::with_capacity(1024),
            free_slots: Vec::with_capacity(1024),
            next_token: 1,
            queue: VecDeque::with_capacity(1024),
            dead_entries: 0,
            busy: 0,
            busy_nanos: 0.0,
            limiter: config.rate_limit.map(|(rate, burst)| TokenBucket::new(rate, burst)),
            timeline: std::array::from_fn(|_| BucketCounter::new(bucket)),
            queue_levels: BucketMax::new(bucket),
            succeeded_by_send: BucketCounter::new(bucket),
            last_activity: SimTime::ZERO,
            latency: LatencyHistogram::default(),
            wait_nanos: 0.0,
            waits: 0,
            counts: Counts::default(),
            retry_limiter: config.limiter.clone(),
            admission_rng: sim_rng(mix64(seed ^ ADMISSION_STREAM)),
            tracer: None,
        }
    }

    /// The next open-loop arrival after `now`, or `None` once arrivals stop at `duration`. A Poisson stream at
    /// the schedule's peak rate, thinned: a candidate at `t` is kept with probability rate(t) / peak (Lewis &
    /// Shedler 1979), which gives a Poisson process whose rate follows the schedule.
    fn next_arrival_after(&mut self, now: SimTime) -> Option<SimTime> {
        let Workload::Open { schedule } = &self.config.workload else { return None };
        let peak = schedule.max_rate();
        let mut t = now;
        loop {
            // Inverse transform: Exp(peak) = −ln(1 − U)/peak, U in [0, 1).
            let gap = -(1.0 - self.rng.random::<f64>()).ln() / peak * 1e9;
            t += SimDuration::from_nanos_f64(gap);
            if t >= self.config.duration {
                return None;
            }
            let rate = schedule.rate_at(t);
            if rate >= peak || self.rng.random::<f64>() * peak < rate {
                return Some(t);
            }
        }
    }

    fn open_request(&mut self, client: u32, now: SimTime) -> u32 {
        let request =
            Request { client, sent_at: now, measured: now >= self.config.warmup, open: true, ..Request::default() };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.requests[slot as usize] = request;
                slot
            }
            None => {
                self.requests.push(request);
                (self.requests.len() - 1) as u32
            }
        };
        self.counts.requests += 1;
        self.timeline[series::OFFERED].record(now);
        slot
    }

    /// The client wants to send an attempt of `slot`: its limiter admits it (send now or after a wait) or
    /// rejects it, in which case the attempt fails locally and the retry policy decides what next.
    fn send_attempt(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        if let Some(limiter) = &mut self.retry_limiter {
            let draw = self.admission_rng.random::<f64>();
            match limiter.admit(scheduler.now(), draw) {
                Admission::Send => {}
                Admission::Wait(wait) => return scheduler.schedule_in(wait, ServerEvent::AdmittedSend { slot }),
                Admission::Reject => {
                    self.counts.rejected_locally += 1;
                    self.requests[slot as usize].failed_attempts += 1;
                    return self.retry_or_give_up(slot, None, false, scheduler);
                }
            }
        }
        self.dispatch(slot, scheduler);
    }

    /// An admitted attempt leaves the client.
    fn dispatch(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let is_retry = self.requests[slot as usize].failed_attempts > 0;
        self.counts.retries += u64::from(is_retry);
        if let Some(limiter) = &mut self.retry_limiter {
            limiter.on_send(scheduler.now(), is_retry);
        }
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1).max(1);
        let request = &mut self.requests[slot as usize];
        request.token = token;
        request.at_server += 1;
        if let Some(tracer) = &mut self.tracer {
            tracer.begin(request.client, scheduler.now(), request.slept);
        }
        let delay = self.config.network.sample(&mut self.rng);
        scheduler.schedule_in(delay, ServerEvent::AttemptArrives { slot, token });
        if let Some(timeout) = self.config.timeout {
            scheduler.schedule_in(timeout, ServerEvent::Timeout { slot, token });
        }
    }

    /// The server is done with an attempt: it answers, and forgets the attempt.
    fn answer(
        &mut self,
        slot: u32,
        token: u32,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
        scheduler: &mut Scheduler<ServerEvent>,
    ) {
        let retry_after_us = retry_after.map_or(0, |d| d.min(MAX_RETRY_AFTER).as_nanos().div_ceil(1_000).max(1) as u32);
        let delay = self.config.network.sample(&mut self.rng);
        scheduler.schedule_in(delay, ServerEvent::Answer { slot, token, outcome, retry_after_us });
        self.leave_server(slot);
    }

    /// Attempts waiting in the queue, cancelled ones left out.
    fn live_queue(&self) -> usize {
        self.queue.len() - self.dead_entries
    }

    fn leave_server(&mut self, slot: u32) {
        let request = &mut self.requests[slot as usize];
        request.at_server -= 1;
        if !request.open && request.at_server == 0 {
            self.free_slots.push(slot);
        }
    }

    fn start_service(&mut self, slot: u32, token: u32, queued_at: SimTime, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        self.busy += 1;
        if queued_at >= self.config.warmup {
            self.wait_nanos += (now - queued_at).as_nanos_f64();
            self.waits += 1;
        }
        let base = self.config.service.sample_nanos(&mut self.rng);
        let load = self.config.latency_per_request.as_nanos_f64() * f64::from(self.busy);
        let slowdown = match self.config.faults.at(now) {
            Some(FaultKind::Slowdown(factor)) => factor,
            _ => 1.0,
        };
        let service = SimDuration::from_nanos_f64((base + load) * slowdown);
        self.busy_nanos += service.as_nanos_f64();
        scheduler.schedule_in(service, ServerEvent::ServiceDone { slot, token });
    }

    /// The answer of a served attempt, drawn from the error probabilities.
    fn served_outcome(&mut self) -> Outcome {
        let [transient, disguised, permanent] = self.config.error_probabilities;
        if transient + disguised + permanent == 0.0 {
            return Outcome::Success;
        }
        let draw = self.rng.random::<f64>();
        if draw < transient {
            Outcome::TransientError
        } else if draw < transient + disguised {
            Outcome::DisguisedTransient
        } else if draw < transient + disguised + permanent {
            Outcome::Permanent
        } else {
            Outcome::Success
        }
    }

    /// True while `token` is the attempt the request in `slot` waits for.
    fn is_current(&self, slot: u32, token: u32) -> bool {
        self.requests.get(slot as usize).is_some_and(|request| request.open && request.token == token)
    }

    fn close_request(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let request = &mut self.requests[slot as usize];
        request.open = false;
        request.token = 0;
        let client = request.client;
        if request.at_server == 0 {
            self.free_slots.push(slot);
        }
        if let Workload::Closed { .. } = self.config.workload {
            let think = self.config.think_time.sample(&mut self.rng);
            if scheduler.now() + think < self.config.duration {
                scheduler.schedule_in(think, ServerEvent::NewRequest { client });
            }
        }
    }

    /// Tells the limiter how the attempt in flight of `slot` ended (`outcome` is one of the `Outcome`
    /// constructors, given the attempt's permit).
    fn record_outcome(&mut self, slot: u32, outcome: fn(Option<Permit>) -> CallOutcome, now: SimTime) -> CallOutcome {
        let outcome = outcome(self.requests[slot as usize].permit);
        if let Some(limiter) = &mut self.retry_limiter {
            limiter.record(now, outcome);
        }
        outcome
    }

    /// The attempt in flight of `slot` failed with a retryable `outcome`: report it, then retry or give up.
    fn attempt_failed(
        &mut self,
        slot: u32,
        hint: Option<SimDuration>,
        outcome: fn(Option<Permit>) -> CallOutcome,
        scheduler: &mut Scheduler<ServerEvent>,
    ) {
        let now = scheduler.now();
        let timed_out = self.record_outcome(slot, outcome, now).timed_out;
        let request = &mut self.requests[slot as usize];
        request.token = 0;
        request.failed_attempts += 1;
        self.retry_or_give_up(slot, hint, timed_out, scheduler);
    }

    /// After a failed attempt (`failed_attempts` already counts it): ask the retry policy, then the limiter.
    fn retry_or_give_up(
        &mut self,
        slot: u32,
        hint: Option<SimDuration>,
        timed_out: bool,
        scheduler: &mut Scheduler<ServerEvent>,
    ) {
        let now = scheduler.now();
        let request = &mut self.requests[slot as usize];
        let elapsed = now - request.sent_at;
        let mut decision =
            self.config.retry.after_failure(request.failed_attempts, elapsed, hint, &mut request.memory, &mut self.rng);
        if let (RetryDecision::RetryAfter(_), Some(limiter)) = (decision, &mut self.retry_limiter) {
            match limiter.acquire_retry(now, timed_out) {
                Some(permit) => self.requests[slot as usize].permit = Some(permit),
                None => {
                    self.counts.refused += 1;
                    decision = RetryDecision::GiveUp(crate::policy::GiveUpReason::AttemptsExhausted);
                }
            }
        }
        match decision {
            RetryDecision::RetryAfter(sleep) => {
                self.requests[slot as usize].slept = sleep;
                scheduler.schedule_in(sleep, ServerEvent::RetryDue { slot })
            }
            RetryDecision::GiveUp(_) => {
                self.counts.gave_up += 1;
                self.close_request(slot, scheduler);
            }
        }
    }

    fn succeed(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        let request = self.requests[slot as usize];
        self.counts.succeeded += 1;
        self.timeline[series::GOODPUT].record(now);
        if now - request.sent_at <= self.config.good_within {
            self.succeeded_by_send.record(request.sent_at);
        }
        if request.measured {
            self.latency.record(now - request.sent_at);
        }
        let in_window = matches!(self.config.workload, Workload::Burst { .. }) || now <= self.config.duration;
        if now >= self.config.warmup && in_window {
            self.counts.measured_successes += 1;
        }
        self.close_request(slot, scheduler);
    }

    fn finish(self, events: u64, end: SimTime) -> RunOutput {
        let counts = &self.counts;
        let ms = |nanos: f64| nanos / 1e6;
        let ratio = |a: u64, b: u64| if b == 0 { f64::NAN } else { a as f64 / b as f64 };
        let mut metrics = vec![0.0; metric::COUNT];
        metrics[metric::CALLS] = counts.calls as f64;
        metrics[metric::REQUESTS] = counts.requests as f64;
        metrics[metric::RETRIES] = counts.retries as f64;
        metrics[metric::SUCCEEDED] = counts.succeeded as f64;
        metrics[metric::GAVE_UP] = counts.gave_up as f64;
        metrics[metric::FAILED_PERMANENTLY] = counts.failed_permanently as f64;
        metrics[metric::SUCCESS_RATE] =
            ratio(counts.succeeded, counts.succeeded + counts.gave_up + counts.failed_permanently);
        metrics[metric::TIMEOUTS] = counts.timeouts as f64;
        metrics[metric::REJECTED] = counts.rejected as f64;
        metrics[metric::THROTTLED] = counts.throttled as f64;
        metrics[metric::SERVER_ERRORS] = counts.server_errors as f64;
        metrics[metric::DUPLICATES] = counts.duplicates as f64;
        metrics[metric::DEDUPLICATED] = counts.deduplicated as f64;
        metrics[metric::REFUSED] = counts.refused as f64;
        metrics[metric::REJECTED_LOCALLY] = counts.rejected_locally as f64;
        metrics[metric::AMPLIFICATION] = ratio(counts.calls, counts.requests);
        metrics[metric::LATENCY_MEAN_MS] = ms(self.latency.mean_nanos());
        for (index, q) in [
            (metric::LATENCY_P50_MS, 0.5),
            (metric::LATENCY_P90_MS, 0.9),
            (metric::LATENCY_P99_MS, 0.99),
            (metric::LATENCY_P999_MS, 0.999),
        ] {
            metrics[index] = ms(self.latency.quantile_nanos(q));
        }
        metrics[metric::WAIT_MEAN_MS] = if self.waits == 0 { f64::NAN } else { ms(self.wait_nanos / self.waits as f64) };
        let end_nanos = end.as_nanos() as f64;
        metrics[metric::UTILISATION] = match self.config.workers {
            Some(workers) if end_nanos > 0.0 => self.busy_nanos / (f64::from(workers) * end_nanos),
            _ => f64::NAN,
        };
        let window_end = match self.config.workload {
            Workload::Burst { .. } => end,
            _ => self.config.duration,
        };
        let window_nanos = (window_end - self.config.warmup).as_nanos() as f64;
        metrics[metric::GOODPUT_RPS] =
            if window_nanos > 0.0 { counts.measured_successes as f64 / (window_nanos / 1e9) } else { f64::NAN };
        metrics[metric::COMPLETION_MS] = end.as_millis_f64();
        metrics[metric::PEAK_CALLS_PER_BUCKET] = f64::from(self.timeline[series::CALLS].peak());
        metrics[metric::PEAK_TO_MEAN] = self.timeline[series::CALLS].peak_to_mean();
        metrics[metric::EVENTS] = events as f64;
        let (recovery_ms, recovered) = self.recovery();
        metrics[metric::RECOVERY_MS] = recovery_ms;
        metrics[metric::RECOVERED] = recovered;
        let counted = self.timeline.iter().map(|counter| counter.counts().len()).max().unwrap_or(0);
        let buckets = counted.max(self.queue_levels.maxima().len());
        let mut timeline = vec![0.0; buckets * series::COUNT];
        for (series_index, counter) in self.timeline.iter().enumerate() {
            for (bucket, &count) in counter.counts().iter().enumerate() {
                timeline[bucket * series::COUNT + series_index] = f64::from(count);
            }
        }
        for (bucket, &level) in self.queue_levels.maxima().iter().enumerate() {
            timeline[bucket * series::COUNT + series::QUEUE] = f64::from(level);
        }
        let mut highlights: Vec<(SimTime, SimTime)> =
            self.config.faults.windows().iter().map(|window| (window.start, window.end)).collect();
        if let (Some(start), Some(end)) = (self.config.trigger_start, self.config.trigger_end)
            && !highlights.contains(&(start, end))
        {
            highlights.push((start, end));
        }
        let spans = self.tracer.map(|t| t.spans).unwrap_or_default();
        RunOutput { metrics, timeline, events, truncated: false, latency: Some(self.latency.sparse()), highlights, spans }
    }

    /// `(recovery_ms, recovered)`: the first bucket from which goodput stays ≥ 90% of the offered load in every
    /// bucket that ends before new requests stop, measured from the trigger's end. A bucket's goodput here is
    /// the work offered in that bucket that succeeded within `good_within`, so a healthy bucket scores about
    /// 100% whatever the Poisson noise in how many arrived. NaN and 0 when it never recovers; NaN and NaN when there is no
    /// trigger or the workload is a burst (which offers nothing after t = 0).
    fn recovery(&self) -> (f64, f64) {
        let Some(trigger_end) = self.config.trigger_end else { return (f64::NAN, f64::NAN) };
        if matches!(self.config.workload, Workload::Burst { .. }) {
            return (f64::NAN, f64::NAN);
        }
        let width = self.timeline[series::CALLS].width().as_nanos();
        let first = trigger_end.as_nanos().div_ceil(width) as usize;
        let end = (self.config.duration.as_nanos() / width) as usize;
        let count = |series_index: usize, bucket: usize| {
            f64::from(self.timeline[series_index].counts().get(bucket).copied().unwrap_or(0))
        };
        let done = |bucket: usize| f64::from(self.succeeded_by_send.counts().get(bucket).copied().unwrap_or(0));
        let healthy = |bucket: usize| done(bucket) >= 0.9 * count(series::OFFERED, bucket);
        if first >= end {
            // The trigger outlasts the arrivals: there is nothing after it to recover in.
            return (f64::NAN, f64::NAN);
        }
        let mut since = end;
        while since > first && healthy(since - 1) {
            since -= 1;
        }
        if since == end && end > first {
            return (f64::NAN, 0.0);
        }
        let recovered_at = SimTime::from_nanos(since as u64 * width);
        ((recovered_at.saturating_since(trigger_end)).as_millis_f64(), 1.0)
    }
}

impl Model for ServerRun<'_> {
    type Event = ServerEvent;

    fn handle(&mut self, event: ServerEvent, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        let stale = match event {
            ServerEvent::Answer { slot, token, .. } | ServerEvent::Timeout { slot, token } => !self.is_current(slot, token),
            _ => false,
        };
        if !stale {
            self.last_activity = now;
        }
        match event {
            ServerEvent::NewRequest { client } => {
                let slot = self.open_request(client, now);
                self.send_attempt(slot, scheduler);
            }
            ServerEvent::OpenArrival => {
                // Open-loop requests have no client of their own: each traces as its own owner.
                let owner = self.counts.requests as u32;
                let slot = self.open_request(owner, now);
                self.send_attempt(slot, scheduler);
                if let Some(next) = self.next_arrival_after(now) {
                    scheduler.schedule_at(next, ServerEvent::OpenArrival);
                }
            }
            ServerEvent::AttemptArrives { slot, token } => {
                self.counts.calls += 1;
                self.timeline[series::CALLS].record(now);
                if self.config.cancel_on_timeout && !self.is_current(slot, token) {
                    // The client cancelled this attempt while it was on its way.
                    return self.leave_server(slot);
                }
                match self.config.faults.at(now) {
                    Some(FaultKind::BlackHole) => return self.leave_server(slot),
                    Some(FaultKind::FailFast) => {
                        self.counts.rejected += 1;
                        return self.answer(slot, token, Outcome::Overloaded, None, scheduler);
                    }
                    Some(FaultKind::Reset) => {
                        self.counts.rejected += 1;
                        return self.answer(slot, token, Outcome::ConnectionReset, None, scheduler);
                    }
                    _ => {}
                }
                if let Some(Err(wait)) = self.limiter.as_mut().map(|bucket| bucket.try_take(now)) {
                    self.counts.throttled += 1;
                    self.answer(slot, token, Outcome::Throttled, Some(wait), scheduler);
                } else if self.config.workers.is_none_or(|workers| self.busy < workers) {
                    self.start_service(slot, token, now, scheduler);
                } else if self.config.queue_limit.is_none_or(|limit| (self.live_queue() as u64) < limit) {
                    self.queue.push_back((slot, token, now));
                    self.requests[slot as usize].queued_token = token;
                    self.queue_levels.record(now, self.live_queue() as u32);
                } else {
                    self.counts.rejected += 1;
                    self.answer(slot, token, Outcome::Overloaded, self.config.overload_retry_after, scheduler);
                }
            }
            ServerEvent::ServiceDone { slot, token } => {
                self.busy -= 1;
                let outcome = self.served_outcome();
                match outcome {
                    Outcome::Success => {
                        let request = &mut self.requests[slot as usize];
                        request.applied += 1;
                        if request.applied > 1 {
                            if self.config.idempotency_keys {
                                self.counts.deduplicated += 1;
                            } else {
                                self.counts.duplicates += 1;
                            }
                        }
                    }
                    Outcome::TransientError | Outcome::DisguisedTransient => self.counts.server_errors += 1,
                    _ => {}
                }
                self.answer(slot, token, outcome, None, scheduler);
                while let Some((next_slot, next_token, queued_at)) = self.queue.pop_front() {
                    if self.config.cancel_on_timeout {
                        let request = &mut self.requests[next_slot as usize];
                        if request.queued_token != next_token {
                            // Cancelled at its timeout; it already left the server then.
                            self.dead_entries -= 1;
                            continue;
                        }
                        request.queued_token = 0;
                    }
                    self.start_service(next_slot, next_token, queued_at, scheduler);
                    break;
                }
                self.queue_levels.record(now, self.live_queue() as u32);
            }
            ServerEvent::Answer { slot, token, outcome, retry_after_us } => {
                if !self.is_current(slot, token) {
                    return;
                }
                if let Some(tracer) = &mut self.tracer {
                    let request = &self.requests[slot as usize];
                    let name = if outcome == Outcome::Success { "success" } else { outcome.name() };
                    let status = outcome.response().status;
                    tracer.end(request.client, now, request.failed_attempts + 1, name, status);
                }
                if outcome == Outcome::Success {
                    self.record_outcome(slot, CallOutcome::success, now);
                    self.succeed(slot, scheduler);
                } else if self.config.classifier.is_retryable(outcome.response()) {
                    let hint = (retry_after_us > 0).then(|| SimDuration::from_micros(u64::from(retry_after_us)));
                    let failure = if outcome == Outcome::Throttled { CallOutcome::throttled } else { CallOutcome::failure };
                    self.attempt_failed(slot, hint, failure, scheduler);
                } else {
                    self.record_outcome(slot, CallOutcome::failure, now);
                    self.counts.failed_permanently += 1;
                    self.close_request(slot, scheduler);
                }
            }
            ServerEvent::Timeout { slot, token } => {
                if self.is_current(slot, token) {
                    self.counts.timeouts += 1;
                    if let Some(tracer) = &mut self.tracer {
                        let request = &self.requests[slot as usize];
                        tracer.end(request.client, now, request.failed_attempts + 1, "timeout", 0);
                    }
                    if self.config.cancel_on_timeout && self.requests[slot as usize].queued_token == token {
                        self.requests[slot as usize].queued_token = 0;
                        self.dead_entries += 1;
                        self.leave_server(slot);
                        self.queue_levels.record(now, self.live_queue() as u32);
                    }
                    self.attempt_failed(slot, None, CallOutcome::timeout, scheduler);
                }
            }
            ServerEvent::RetryDue { slot } => self.send_attempt(slot, scheduler),
            ServerEvent::AdmittedSend { slot } => self.dispatch(slot, scheduler),
        }
    }
}

#[cfg(test)]
mod tests;
