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

pub(crate) mod branch;
mod clocks;
mod config;
pub(crate) mod decide;
mod footprint;
#[cfg(test)]
mod limiter_tests;
pub(crate) mod outcome;
mod params;
mod request;
mod run;
pub(crate) mod tally;
#[cfg(test)]
mod tests;

pub(crate) use config::{MAX_RETRY_AFTER, ServerConfig};
pub(crate) use params::{HintHeader, OnTimeout};

use super::{Backlog, Footprint, RunOutput, RunSettings, SimModel, client};
use crate::params::{ParamError, ParamSpec, Point, concat_groups};
use crate::policy::limiters::LimiterKind;

/// The contended-server model (scenario `kind = "server"`).
pub(crate) struct Server;

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        CALLS = "calls" (Count): "attempts reaching the server, rejected ones included",
        REQUESTS = "requests" (Count): "unique requests (first tries)",
        RETRIES = "retries" (Count): "attempts after the first",
        SUCCEEDED = "succeeded" (Count): "requests answered successfully",
        GAVE_UP = "gave_up" (Count): "requests whose policy gave up (dead-lettered)",
        SUCCESS_RATE = "success_rate" (Fraction): "succeeded / requests that ended (succeeded, gave up or failed)",
        TIMEOUTS = "timeouts" (Count): "attempts that timed out at the client",
        REJECTED = "rejected" (Count): "attempts refused without service: 503 (queue full, fail-fast window) or a connection reset",
        AMPLIFICATION = "amplification" (PerRequest): "server calls per unique request",
        LATENCY_MEAN_MS = "latency_mean_ms" (Milliseconds): "mean time from first send to success",
        LATENCY_P50_MS = "latency_p50_ms" (Milliseconds): "median time from first send to success",
        LATENCY_P90_MS = "latency_p90_ms" (Milliseconds): "90th percentile of time to success",
        LATENCY_P99_MS = "latency_p99_ms" (Milliseconds): "99th percentile of time to success",
        LATENCY_P999_MS = "latency_p999_ms" (Milliseconds): "99.9th percentile of time to success",
        WAIT_MEAN_MS = "wait_mean_ms" (Milliseconds): "mean time an attempt waited in the queue",
        UTILISATION = "utilisation" (Fraction): "busy worker time / (workers × time); empty for unlimited workers",
        GOODPUT_RPS = "goodput_rps" (PerSecond): "successes per second in the measured window",
        COMPLETION_MS = "completion_ms" (Milliseconds): "time of the last event that changed anything (timers of answered attempts do not count)",
        PEAK_CALLS_PER_BUCKET = "peak_calls_per_bucket" (Count): "most attempts reaching the server in one timeline bucket, a burst's first release included",
        RETRY_PEAK_PER_BUCKET = "retry_peak_per_bucket" (Count): "most retries sent in one timeline bucket",
        RETRY_PEAK_TO_MEAN = "retry_peak_to_mean" (Ratio): "retry_peak_per_bucket over the mean retries per bucket from the first retry to the last, empty buckets included: about 1 when retries are spread evenly, large when they come in waves",
        RETRY_DISPERSION = "retry_dispersion" (Ratio): "variance over mean of retries per bucket from the first retry to the last: about 1 when retries are independent (Poisson), far above when clients retry in lock-step",
        EVENTS = "events" (Count): "engine events in the run (a burst's release counts as one; a retry sent as it is decided has no event of its own)",
        DUPLICATES = "duplicates" (Count): "side effects applied again by a retried request (without idempotency keys)",
        FAILED_PERMANENTLY = "failed_permanently" (Count): "requests ended by an answer the classifier does not retry",
        THROTTLED = "throttled" (Count): "attempts answered 429 by the rate limiter",
        SERVER_ERRORS = "server_errors" (Count): "attempts answered 502, or 400 with a transient body",
        RECOVERY_MS = "recovery_ms" (Milliseconds): "time from the trigger's end until goodput is back to ≥ 90% of offered load for good",
        RECOVERED = "recovered" (Outcome): "1 if goodput recovered before new requests stopped, else 0",
        DEDUPLICATED = "deduplicated" (Count): "repeats of a request the server recognised by its idempotency key and did not apply again",
        REFUSED = "refused" (Count): "retries the client's limiter refused (those requests gave up)",
        SUCCESS_RATE_DURING = "success_rate_during" (Fraction): "success_rate of the requests first sent during the trigger (an outage, a fault window, trigger_start to trigger_end)",
        SUCCESS_RATE_AFTER = "success_rate_after" (Fraction): "success_rate of the requests first sent after the trigger ended",
        AMPLIFICATION_DURING = "amplification_during" (PerRequest): "attempts reaching the server per request first sent during the trigger",
        AMPLIFICATION_AFTER = "amplification_after" (PerRequest): "attempts reaching the server per request first sent after the trigger ended",
        LATENCY_P99_MS_DURING = "latency_p99_ms_during" (Milliseconds): "99th percentile of time to success of the requests first sent during the trigger",
        LATENCY_P99_MS_AFTER = "latency_p99_ms_after" (Milliseconds): "99th percentile of time to success of the requests first sent after the trigger ended",
        REJECTED_LOCALLY = "rejected_locally" (Count): "attempts the client's limiter would not send (sre-throttle, systemd): failed without a call",
        TIPPED = "tipped" (Outcome): "1 if, after the trigger ended, less than stuck_below of the work offered in each bucket succeeded in good time for stuck_hold in a row",
        STUCK = "stuck" (Outcome): "1 if the run tipped and goodput never recovered before new requests stopped; its mean over replicates is the stuck fraction",
        RECOVERED_AT_MS = "recovered_at_ms" (Milliseconds): "when goodput was back for good, on the run's clock: the trigger's end plus recovery_ms",
        PEAK_RPS = "peak_rps" (PerSecond): "most new requests (first tries) sent in one second, counted in whole seconds from t = 0",
        REQUEST_PEAK_TO_MEAN = "request_peak_to_mean" (Ratio): "peak_rps over the mean rate of new requests: clients / period for a periodic workload, requests / duration for open and closed ones; empty for a burst",
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

/// The timeline's series: counted per bucket, then the queue's length (a level: its maximum in the bucket).
pub(crate) mod series {
    series! {
        CALLS = "calls": "attempts reaching the server in the bucket, rejected ones included",
        GOODPUT = "goodput": "requests answered successfully in the bucket",
        OFFERED = "offered": "new requests (first tries) sent in the bucket",
        RETRIES = "retries": "retries sent in the bucket",
        LATE = "late": "services finished in the bucket for attempts nobody waits for any more (timed out, or answered by another attempt): wasted work",
        REJECTED = "rejected": "attempts refused without service in the bucket (a full queue, a fail-fast window, a reset)",
        QUEUE_MAX = "queue_max": "the longest the server's queue was during the bucket",
    }
    /// The series counted per bucket come first; the rest are levels.
    pub(crate) const COUNTED: usize = QUEUE_MAX;
}

/// Every parameter group, the limiters' knobs last.
const PARAMS: [&[ParamSpec]; 5 + LimiterKind::KNOBS.len()] = concat_groups(
    &[params::SERVER, crate::workload::PARAMS, params::RECOVERY, crate::model::verdict::PARAMS, params::CLIENT],
    LimiterKind::KNOBS,
);

impl SimModel for Server {
    const KIND: &'static str = "server";
    const ABOUT: &'static str = "a server with workers and a bounded FIFO queue; clients time out and retry";
    const PARAMS: &'static [&'static [ParamSpec]] = &PARAMS;
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["calls", "latency_p99_ms", "success_rate"];
    const SETTINGS: &'static [&'static str] = &[
        "workers",
        "queue_limit",
        "service",
        "service_mean",
        "network",
        "network_delay",
        "timeout",
        "on_timeout",
        "limiter_scope",
    ];
    const BACKLOG: Option<Backlog> = Some(Backlog {
        level: "queue_max",
        offered: "offered",
        wasted: Some(("late", "goodput")),
        what: "the server's queue",
        remedy: "bound the queue with [model] queue_limit (503 when full), or drop timed-out work with a client \
                 timeout and on_timeout = \"cancel\"",
    });

    type Config = ServerConfig;

    fn configure(point: &Point) -> Result<ServerConfig, ParamError> {
        config::configure(point)
    }

    /// Open-loop requests have no client of their own: each is its own owner.
    fn trace_owner(config: &ServerConfig) -> &'static str {
        match config.workload.arrivals.clients() {
            Some(_) => "client",
            None => "request",
        }
    }

    fn describe_policy(point: &Point, config: &ServerConfig) -> Result<Option<String>, ParamError> {
        let mut text = client::describe_policy(point, &config.retry, Some(&config.retry_on))?;
        if config.limiter.is_some() && point.choice("limiter_scope")? == "client" {
            text.push_str(&format!(", one limiter per client instance ({})", config.limiter_instances));
        }
        Ok(Some(text))
    }

    fn footprint(config: &ServerConfig) -> Footprint {
        footprint::footprint(config)
    }

    fn simulate(config: &ServerConfig, run_settings: RunSettings) -> RunOutput {
        run::simulate(config, run_settings)
    }
}
