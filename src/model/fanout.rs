//! Fan-out and hedged requests, after Dean & Barroso, "The Tail at Scale" (2013).
//!
//! Each user request calls `fanout` leaf servers in parallel and is done when the slowest answers. A leaf call
//! takes a time drawn from the service distribution (by default 10 ms, but 1 s once in a hundred calls), so a
//! request is slow whenever any one of its leaves is: P(slow) = 1 − 0.99^100 = 63.4% for 100 leaves. Hedging
//! sends a second copy of a leaf call that has not answered after a delay (`fixed`, or the running
//! `hedge_percentile` of leaf latencies) to another replica, keeps whichever answers first and cancels the
//! other. Leaves are independent, so each is drawn directly, without an event queue: one event per leaf call.

use super::trace::{MAX_TRACE_SPANS, Span};
use super::distributions::{self, TimeDistribution};
use super::client;
use super::{Footprint, RunOutput, RunSettings};
use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section};
use super::SimModel;
use crate::params::Value;
use crate::engine::{ABORT_POLL_EVENTS, RunLimit, Streams};
use crate::time::{SimDuration, SimTime};
use crate::metrics::{BucketCounter, LatencyHistogram};
use crate::policy::Hedge;

/// The fan-out model (scenario `kind = "fanout"`).
pub(crate) struct Fanout;

/// The running percentile is refreshed every this many leaf calls.
const PERCENTILE_REFRESH: u64 = 1_000;

/// `[model]`, then `[client]`, in the order they are hashed into seeds.
const FANOUT_PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        Section::Model,
        "fanout",
        ParamKind::Count { min: 1, max: 100_000 },
        ParamDefault::Value(Value::Count(100)),
        "leaf servers every request calls in parallel",
    ),
    distributions::service("bimodal"),
    distributions::service_mean(ParamDefault::millis(10)),
    distributions::service_sd(ParamDefault::millis(10)),
    distributions::slow_service(ParamDefault::millis(1000)),
    distributions::slow_probability(0.01),
    ParamSpec::new(
        Section::Model,
        "slow_threshold",
        ParamKind::Duration,
        ParamDefault::millis(500),
        "a request taking at least this long counts as slow",
    ).measurement(),
    ParamSpec::new(
        Section::Model,
        "requests",
        ParamKind::Count { min: 1, max: 100_000_000 },
        ParamDefault::Value(Value::Count(10_000)),
        "user requests per run",
    ).measurement(),
];

const HEDGE_PARAMS: &[ParamSpec] = &[client::HEDGE, client::hedge_delay(ParamDefault::millis(50)), client::HEDGE_PERCENTILE];

/// The timeline's one series, counted per bucket.
pub(super) mod series {
    series! { HEDGES = "hedges": "hedged copies sent in the bucket" }
}

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        SLOW_FRACTION = "slow_fraction" (Fraction): "requests that took at least slow_threshold",
        LATENCY_P50_MS = "latency_p50_ms" (Milliseconds): "median request latency (the slowest leaf)",
        LATENCY_P99_MS = "latency_p99_ms" (Milliseconds): "99th percentile of request latency",
        LATENCY_P999_MS = "latency_p999_ms" (Milliseconds): "99.9th percentile of request latency",
        EXTRA_LOAD = "extra_load" (Ratio): "hedged copies sent, per leaf call",
        EVENTS = "events" (Count): "leaf calls, hedges included",
    }
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct FanoutConfig {
    pub fanout: u32,
    pub leaf: TimeDistribution,
    pub slow_threshold: SimDuration,
    pub requests: u64,
    pub hedge: Hedge,
}

impl SimModel for Fanout {
    const KIND: &'static str = "fanout";
    const ABOUT: &'static str = "fan-out to many leaves, with hedged requests (The Tail at Scale)";
    const PARAMS: &'static [&'static [ParamSpec]] = &[FANOUT_PARAMS, HEDGE_PARAMS];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["slow_fraction", "latency_p99_ms", "extra_load"];

    type Config = FanoutConfig;

    fn configure(point: &Point) -> Result<FanoutConfig, ParamError> {
        let leaf = TimeDistribution::service(point)?;
        let hedge = client::hedge(point)?;
        if hedge.doubles_every_call() {
            return Err(ParamError::new("hedge_delay", "must be longer than 0: a zero delay doubles every call".into()));
        }
        Ok(FanoutConfig {
            fanout: point.count("fanout")? as u32,
            leaf,
            slow_threshold: point.duration("slow_threshold")?,
            requests: point.count("requests")? as u64,
            hedge,
        })
    }

    fn simulate(config: &FanoutConfig, run: RunSettings) -> RunOutput {
        simulate_within(config, run, run.limit())
    }

    /// Requests are simulated one after another (one every millisecond of the timeline) and keep nothing: the
    /// timeline is what grows. A trace holds every leaf call, and a hedge beside a slow one.
    fn footprint(config: &FanoutConfig) -> Footprint {
        let hedged = !matches!(config.hedge, Hedge::Off);
        Footprint {
            // The timeline counts hedges: without them it stays empty.
            horizon: Some(if hedged { SimDuration::from_millis(config.requests) } else { SimDuration::ZERO }),
            trace_spans: Some(config.requests.saturating_mul(u64::from(config.fanout) * (1 + u64::from(hedged)))),
            ..Footprint::default()
        }
    }
}

/// One replicate, stopped as truncated at `limit`'s event cap or, looked at every [`ABORT_POLL_EVENTS`] calls,
/// once its abort flag is up.
fn simulate_within(config: &FanoutConfig, run: RunSettings, limit: RunLimit) -> RunOutput {
    // First copies and hedged copies draw from streams of their own, so that hedging shifts no first copy.
    let Streams { service: mut first_copies, hedges: mut hedged_copies, .. } = Streams::new(run.seeds);
    let mut leaves = LatencyHistogram::default();
    let mut requests = LatencyHistogram::default();
    let mut hedges_per_bucket = BucketCounter::new(run.bucket);
    let (mut calls, mut hedges, mut slow) = (0_u64, 0_u64, 0_u64);
    let mut delay = match config.hedge {
        Hedge::Fixed(delay) => Some(delay),
        Hedge::Off | Hedge::Percentile(_) => None,
    };
    let mut truncated = false;
    // The call count at which to look at the limits again: the cap, and the abort flag every ABORT_POLL_EVENTS.
    let mut next_look = limit.max_events.min(ABORT_POLL_EVENTS);
    let mut spans = Vec::new();
    // Requests follow one another one millisecond apart, for the timeline only.
    'requests: for request in 0..config.requests {
        let at = SimTime::from_nanos(request * 1_000_000);
        let mut slowest = SimDuration::ZERO;
        for _ in 0..config.fanout {
            if calls >= next_look {
                if calls >= limit.max_events || limit.aborted() {
                    truncated = true;
                    break 'requests;
                }
                next_look = limit.max_events.min(calls + ABORT_POLL_EVENTS);
            }
            calls += 1;
            let first = config.leaf.sample(&mut first_copies);
            let answer = match delay {
                Some(wait) if first > wait => {
                    hedges += 1;
                    calls += 1;
                    hedges_per_bucket.record(at);
                    let second = wait + config.leaf.sample(&mut hedged_copies);
                    if run.trace && spans.len() < MAX_TRACE_SPANS {
                        let answer = first.min(second);
                        let outcome = |won: bool| if won { ("success", 200) } else { ("cancelled", 0) };
                        let ((a, a_status), (b, b_status)) = (outcome(first <= second), outcome(second < first));
                        let span = |start: SimTime, outcome, status, hedge| Span {
                            owner: request as u32,
                            layer: 0,
                            start,
                            end: at + answer,
                            attempt: 1,
                            outcome,
                            status,
                            slept: SimDuration::ZERO,
                            hedge,
                            id: 0,
                            parent: 0,
                            at_server: None,
                        };
                        spans.push(span(at, a, a_status, false));
                        spans.push(span(at + wait, b, b_status, true));
                    }
                    first.min(second)
                }
                _ => {
                    if run.trace && spans.len() < MAX_TRACE_SPANS {
                        spans.push(Span {
                            owner: request as u32,
                            layer: 0,
                            start: at,
                            end: at + first,
                            attempt: 1,
                            outcome: "success",
                            status: 200,
                            slept: SimDuration::ZERO,
                            hedge: false,
                            id: 0,
                            parent: 0,
                            at_server: None,
                        });
                    }
                    first
                }
            };
            leaves.record(first);
            slowest = slowest.max(answer);
            if let Hedge::Percentile(q) = config.hedge
                && calls % PERCENTILE_REFRESH == 0
            {
                delay = Some(SimDuration::from_nanos_f64(leaves.quantile_nanos(q)));
            }
        }
        requests.record(slowest);
        slow += u64::from(slowest >= config.slow_threshold);
    }
    let done = requests.count().max(1) as f64;
    let mut metrics = vec![0.0; metric::COUNT];
    metrics[metric::SLOW_FRACTION] = slow as f64 / done;
    metrics[metric::LATENCY_P50_MS] = requests.quantile_nanos(0.5) / 1e6;
    metrics[metric::LATENCY_P99_MS] = requests.quantile_nanos(0.99) / 1e6;
    metrics[metric::LATENCY_P999_MS] = requests.quantile_nanos(0.999) / 1e6;
    metrics[metric::EXTRA_LOAD] = hedges as f64 / (calls - hedges).max(1) as f64;
    metrics[metric::EVENTS] = calls as f64;
    let timeline = hedges_per_bucket.counts().iter().map(|&c| f64::from(c)).collect();
    let latency = Some(requests.sparse());
    RunOutput { metrics, timeline, events: calls, truncated, latency, spans, ..RunOutput::default() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelKind;
    use crate::stats::{Estimate, t_975};

    fn estimate(changes: &[(&str, Value)], metric: usize) -> Estimate {
        let config = Fanout::configure(&ModelKind::Fanout.point_with(changes)).unwrap();
        let bucket = SimDuration::from_secs(1);
        let values: Vec<f64> = (0..20).map(|seed| Fanout::simulate(&config, RunSettings::new(seed, bucket)).metrics[metric]).collect();
        Estimate::of(&values)
    }

    /// A raised abort flag (the process's stop signal) ends a run as truncated at the next poll, as the engine's
    /// loop does, though the fan-out model keeps its own loop.
    #[test]
    fn a_raised_abort_flag_ends_a_fanout_run_at_the_next_poll() {
        static ABORT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
        let config = Fanout::configure(&ModelKind::Fanout.point_with(&[("requests", Value::Count(10_000))])).unwrap();
        let run = RunSettings::new(3, SimDuration::from_secs(1));
        let limit = RunLimit { max_events: u64::MAX, abort: Some(&ABORT), ..RunLimit::default() };
        let stopped = simulate_within(&config, run, limit);
        assert!(stopped.truncated);
        assert_eq!(stopped.events, ABORT_POLL_EVENTS, "stopped at the first poll");
        let whole = Fanout::simulate(&config, run);
        assert!(!whole.truncated && whole.events >= 10_000 * 100, "{} events", whole.events);
    }

    #[test]
    fn without_hedging_a_request_is_slow_if_any_of_its_100_leaves_is() {
        // docs/references.md#the-tail-at-scale: 1 − 0.99^100 = 63.4%.
        let slow = estimate(&[], metric::SLOW_FRACTION);
        let expected = 1.0 - 0.99_f64.powi(100);
        let ci99 = slow.ci95 / t_975(19) * 2.860935;
        assert!((slow.mean - expected).abs() <= ci99, "{slow:?} vs {expected}");
        assert!(slow.ci95 < 0.01);
    }

    #[test]
    fn hedging_at_the_p95_recovers_the_tail_for_a_few_percent_extra_load() {
        // The p95 of these leaves is their fast mode (10 ms), so only the 1% slow calls are hedged, once the
        // first 1,000 calls have given a percentile: extra load 0.01·(1 − 1000/10^6). A hedged leaf is slow
        // only if both copies are (10^−4), so of 10,000 requests the first 10 are slow with 1 − 0.99^100 and
        // the rest with 1 − (1 − 10^−4)^100.
        let hedged = [("hedge", Value::Choice("percentile"))];
        let ci99 = |e: Estimate| e.ci95 / t_975(19) * 2.860935;
        let extra = estimate(&hedged, metric::EXTRA_LOAD);
        let expected_extra = 0.01 * (1.0 - 1_000.0 / 1e6);
        assert!((extra.mean - expected_extra).abs() <= ci99(extra), "{extra:?} vs {expected_extra}");
        let slow = estimate(&hedged, metric::SLOW_FRACTION);
        let expected_slow = 0.001 * (1.0 - 0.99_f64.powi(100)) + 0.999 * (1.0 - (1.0 - 1e-4_f64).powi(100));
        assert!((slow.mean - expected_slow).abs() <= ci99(slow), "{slow:?} vs {expected_slow}");
    }

    #[test]
    fn a_zero_hedge_delay_is_refused() {
        let point = ModelKind::Fanout
            .point_with(&[("hedge", Value::Choice("fixed")), ("hedge_delay", Value::Duration(SimDuration::ZERO))]);
        assert_eq!(Fanout::configure(&point).err().unwrap().key, "hedge_delay");
    }
}
