//! A chain of services that each retry: user → layer 1 → layer 2 → … → layer L. Every caller (the user's client
//! and each layer but the last) may retry its calls to the layer below; the bottom layer fails each call with
//! probability `failure_probability` (1: hard down). A layer that finally fails reports the failure to its own
//! caller, which may retry in turn, so attempts multiply: with A attempts per caller and a hard-down bottom,
//! the bottom sees A^L calls per user request (ANCHORS.md, "Retry amplification").
//!
//! Each hop takes `hop_delay`, each layer `service_time` before answering (or calling down). `placement` says
//! which callers retry: `every`, only the `top` (the user's client) or only the `bottom` (the last layer's
//! client). With `limiter = "budget"`, `budget` (b) limits each caller's retries to b × its first tries so far.

use super::{MetricSpec, ParamDefault, ParamError, ParamKind, ParamSpec, Point, RunOutput, RunSettings, Section};
use super::distributions::TimeDistribution;
use super::{SimModel, Value};
use crate::engine::{Model, Scheduler, SimDuration, SimRng, SimTime, run, sim_rng};
use crate::metrics::{BucketCounter, LatencyHistogram};
use crate::policy::limiters::{LIMITER_NAMES, Limiter, Outcome, Permit, RetryLimiter};
use crate::policy::{BackoffMemory, BackoffParams, RetryAfterPolicy, RetryDecision, RetryPolicy, Strategy};
use rand::RngExt;

/// The layered-services model (scenario `kind = "layers"`).
pub struct Layers;

/// The deepest chain the ledger has columns for.
pub const MAX_LAYERS: usize = 8;

const LAYER_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Model,
        key: "layers",
        kind: ParamKind::Count { min: 1, max: MAX_LAYERS as i64 },
        default: ParamDefault::Value(Value::Count(3)),
        help: "L: services in the chain; the last one is the bottom",
    },
    ParamSpec {
        section: Section::Model,
        key: "attempts",
        kind: ParamKind::Count { min: 1, max: 100 },
        default: ParamDefault::Value(Value::Count(3)),
        help: "A: attempts each retrying caller makes per call, the first included",
    },
    ParamSpec {
        section: Section::Model,
        key: "placement",
        kind: ParamKind::Choice(&["every", "top", "bottom"]),
        default: ParamDefault::Value(Value::Choice("every")),
        help: "which callers retry: every layer, only the user's client (top), or only the last layer's (bottom)",
    },
    ParamSpec {
        section: Section::Model,
        key: "failure_probability",
        kind: ParamKind::Real { min: 0.0, max: 1.0 },
        default: ParamDefault::Value(Value::Real(1.0)),
        help: "p: chance the bottom layer fails a call (1: hard down)",
    },
    ParamSpec {
        section: Section::Model,
        key: "limiter",
        kind: ParamKind::Choice(LIMITER_NAMES),
        default: ParamDefault::Value(Value::Choice("none")),
        help: "none; budget (retries ≤ `budget` × first tries); token-bucket (0.1 per call, capacity 5, a retry \
               spends 1); breaker (no retries while > 10% of the last 100 calls failed, 1 s pauses); grpc (10, \
               0.1); aws-quota (500, 5, 10); finagle (20% + 10/s over 10 s)",
    },
    ParamSpec {
        section: Section::Model,
        key: "budget",
        kind: ParamKind::Real { min: 0.0, max: 1.0 },
        default: ParamDefault::Value(Value::Real(0.2)),
        help: "b, the retry budget's fraction, 0 to 1 (with limiter = \"budget\")",
    },
    ParamSpec {
        section: Section::Model,
        key: "hop_delay",
        kind: ParamKind::Duration,
        default: ParamDefault::Value(Value::Duration(SimDuration::from_millis(1))),
        help: "one-way network delay between adjacent layers",
    },
    ParamSpec {
        section: Section::Model,
        key: "network",
        kind: ParamKind::Choice(&["constant", "exponential"]),
        default: ParamDefault::Value(Value::Choice("constant")),
        help: "distribution of each hop's delay, with mean `hop_delay`",
    },
    ParamSpec {
        section: Section::Model,
        key: "service_time",
        kind: ParamKind::Duration,
        default: ParamDefault::Value(Value::Duration(SimDuration::from_millis(1))),
        help: "time a layer works on a call before answering or calling down",
    },
];

const LAYER_WORKLOAD_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Workload,
        key: "clients",
        kind: ParamKind::Count { min: 1, max: 1_000_000 },
        default: ParamDefault::Value(Value::Count(1)),
        help: "user clients sharing the requests at random, each with its own limiter",
    },
    ParamSpec {
        section: Section::Workload,
        key: "requests",
        kind: ParamKind::Count { min: 1, max: 100_000_000 },
        default: ParamDefault::Value(Value::Count(1_000)),
        help: "user requests, arriving as a Poisson stream at `rate`",
    },
    ParamSpec {
        section: Section::Workload,
        key: "rate",
        kind: ParamKind::Real { min: 0.0, max: 1e9 },
        default: ParamDefault::Value(Value::Real(100.0)),
        help: "user requests per second (> 0)",
    },
];

const LAYER_CLIENT_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        section: Section::Client,
        key: "strategy",
        kind: ParamKind::Choice(Strategy::NAMES),
        default: ParamDefault::Value(Value::Choice("full-jitter")),
        help: "backoff between a caller's attempts",
    },
    ParamSpec {
        section: Section::Client,
        key: "base",
        kind: ParamKind::Duration,
        default: ParamDefault::Value(Value::Duration(SimDuration::from_millis(10))),
        help: "b of the backoff formula",
    },
    ParamSpec {
        section: Section::Client,
        key: "cap",
        kind: ParamKind::Duration,
        default: ParamDefault::Value(Value::Duration(SimDuration::from_secs(1))),
        help: "c of the backoff formula",
    },
];

mod metric {
    pub const REQUESTS: usize = 0;
    pub const SUCCESS_RATE: usize = 1;
    pub const AMPLIFICATION: usize = 2;
    pub const BOTTOM_CALLS: usize = 3;
    pub const RETRIES: usize = 4;
    pub const LATENCY_P50_MS: usize = 5;
    pub const LATENCY_P99_MS: usize = 6;
    pub const EVENTS: usize = 7;
    pub const REFUSED: usize = 8;
    /// `amplification_l1` … `amplification_l8` follow.
    pub const LAYER_0: usize = 9;
    pub const COUNT: usize = LAYER_0 + super::MAX_LAYERS;
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub struct LayersConfig {
    pub layers: usize,
    pub attempts: u32,
    /// `retries[c]`: caller `c` (0 = the user's client, calling layer 1) retries.
    pub retries: [bool; MAX_LAYERS],
    pub failure_probability: f64,
    pub budget: Option<f64>,
    /// The limiter every caller starts with (user clients get one each; each layer has one).
    pub limiter: Option<Limiter>,
    pub clients: usize,
    pub hop: TimeDistribution,
    pub service: SimDuration,
    pub requests: u64,
    pub rate_per_nano: f64,
    pub backoff: RetryPolicy,
}

impl SimModel for Layers {
    const KIND: &'static str = "layers";
    const ABOUT: &'static str = "a chain of services that each retry: amplification across layers";
    const PARAMS: &'static [&'static [ParamSpec]] = &[LAYER_PARAMS, LAYER_WORKLOAD_PARAMS, LAYER_CLIENT_PARAMS];
    const METRICS: &'static [MetricSpec] = &[
        MetricSpec { name: "requests", help: "user requests" },
        MetricSpec { name: "success_rate", help: "user requests that succeeded" },
        MetricSpec { name: "amplification", help: "calls at every layer together, per user request" },
        MetricSpec { name: "bottom_calls", help: "calls reaching the bottom layer, per user request" },
        MetricSpec { name: "retries", help: "retries by all callers, per user request" },
        MetricSpec { name: "latency_p50_ms", help: "median time from a user request to its answer" },
        MetricSpec { name: "latency_p99_ms", help: "99th percentile of that time" },
        MetricSpec { name: "events", help: "engine events in the run" },
        MetricSpec { name: "refused", help: "retries the limiter refused, per user request" },
        MetricSpec { name: "amplification_l1", help: "calls reaching layer 1 per user request" },
        MetricSpec { name: "amplification_l2", help: "calls reaching layer 2 per user request" },
        MetricSpec { name: "amplification_l3", help: "calls reaching layer 3 per user request" },
        MetricSpec { name: "amplification_l4", help: "calls reaching layer 4 per user request" },
        MetricSpec { name: "amplification_l5", help: "calls reaching layer 5 per user request" },
        MetricSpec { name: "amplification_l6", help: "calls reaching layer 6 per user request" },
        MetricSpec { name: "amplification_l7", help: "calls reaching layer 7 per user request" },
        MetricSpec { name: "amplification_l8", help: "calls reaching layer 8 per user request" },
    ];
    const TIMELINE: &'static [&'static str] = &["bottom_calls"];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["bottom_calls", "amplification", "success_rate"];

    type Config = LayersConfig;

    fn configure(point: &Point) -> Result<LayersConfig, ParamError> {
        let layers = point.count("layers")? as usize;
        let mut retries = [false; MAX_LAYERS];
        match point.choice("placement")? {
            "every" => retries[..layers].iter_mut().for_each(|r| *r = true),
            "top" => retries[0] = true,
            _ => retries[layers - 1] = true,
        }
        let rate = point.real("rate")?;
        if rate <= 0.0 {
            return Err(ParamError { key: "rate", message: "must be greater than 0".into() });
        }
        let base = point.duration("base")?;
        let cap = point.duration("cap")?;
        if cap < base {
            return Err(ParamError { key: "cap", message: format!("cap ({cap}) must be at least base ({base})") });
        }
        let strategy = Strategy::from_name(point.choice("strategy")?).unwrap_or(Strategy::FullJitter);
        Ok(LayersConfig {
            layers,
            attempts: point.count("attempts")? as u32,
            retries,
            failure_probability: point.real("failure_probability")?,
            budget: match point.choice("limiter")? {
                "budget" => Some(point.real("budget")?),
                _ => None,
            },
            limiter: Limiter::preset(point.choice("limiter")?),
            clients: point.count("clients")? as usize,
            hop: TimeDistribution::new(
                point.choice("network")?,
                point.duration("hop_delay")?,
                SimDuration::ZERO,
                SimDuration::ZERO,
                0.0,
                "network",
            )?,
            service: point.duration("service_time")?,
            requests: point.count("requests")? as u64,
            rate_per_nano: rate / 1e9,
            backoff: RetryPolicy {
                strategy,
                backoff: BackoffParams { base, cap, multiplier: 2.0 },
                max_attempts: None,
                deadline: None,
                retry_after: RetryAfterPolicy::Ignore,
            },
        })
    }

    fn simulate(config: &LayersConfig, run_settings: RunSettings) -> RunOutput {
        let mut state = LayersRun::new(config, sim_rng(run_settings.seed), run_settings.bucket);
        let mut scheduler = Scheduler::with_capacity(1024);
        scheduler.schedule_at(SimTime::ZERO, LayerEvent::UserRequest);
        let stats = run(&mut state, &mut scheduler, run_settings.limit());
        let mut output = state.finish(stats.events);
        output.truncated = stats.truncated;
        output
    }
}

/// A message or timer; `call` indexes the call table.
#[derive(Clone, Copy, Debug)]
pub enum LayerEvent {
    /// The next user request arrives.
    UserRequest,
    /// An attempt of `call` reaches its target layer.
    Arrives { call: u32 },
    /// The answer to the attempt in flight of `call` reaches its caller.
    Answer { call: u32, succeeded: bool },
    /// The caller of `call` is done backing off.
    RetryDue { call: u32 },
}

/// One caller's call to the layer below, across its attempts.
#[derive(Clone, Copy, Debug, Default)]
struct Call {
    /// The call this one serves (the caller's own incoming call), `None` for a user request.
    parent: Option<u32>,
    /// Index of the caller: 0 is the user's client, which calls layer 1.
    caller: usize,
    failed_attempts: u32,
    memory: BackoffMemory,
    started: SimTime,
    /// Which limiter the caller uses: the user client's index for caller 0, else `clients + caller − 1`.
    limiter: u32,
    /// The limiter's permit for the attempt in flight (`None` for a first try).
    permit: Option<Permit>,
}

struct LayersRun<'a> {
    config: &'a LayersConfig,
    rng: SimRng,
    calls: Vec<Call>,
    free: Vec<u32>,
    issued: u64,
    succeeded: u64,
    finished: u64,
    /// Per layer (0 = layer 1): calls that reached it.
    arrivals: [u64; MAX_LAYERS],
    /// Per caller: first tries and retries so far (for the budget).
    first_tries: [u64; MAX_LAYERS],
    retries: [u64; MAX_LAYERS],
    latency: LatencyHistogram,
    bottom_timeline: BucketCounter,
    /// One per user client, then one per inner caller (layers 1 … L−1).
    limiters: Vec<Limiter>,
    refused: u64,
}

impl<'a> LayersRun<'a> {
    fn new(config: &'a LayersConfig, rng: SimRng, bucket: SimDuration) -> Self {
        LayersRun {
            config,
            rng,
            calls: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            issued: 0,
            succeeded: 0,
            finished: 0,
            arrivals: [0; MAX_LAYERS],
            first_tries: [0; MAX_LAYERS],
            retries: [0; MAX_LAYERS],
            latency: LatencyHistogram::default(),
            bottom_timeline: BucketCounter::new(bucket),
            limiters: config.limiter.iter().flat_map(|l| std::iter::repeat_n(l.clone(), config.clients + config.layers)).collect(),
            refused: 0,
        }
    }

    fn hop(&mut self) -> SimDuration {
        self.config.hop.sample(&mut self.rng)
    }

    fn new_call(&mut self, parent: Option<u32>, caller: usize, now: SimTime) -> u32 {
        let limiter = if caller == 0 {
            self.rng.random_range(0..self.config.clients) as u32
        } else {
            (self.config.clients + caller - 1) as u32
        };
        let call = Call { parent, caller, started: now, limiter, ..Call::default() };
        self.first_tries[caller] += 1;
        match self.free.pop() {
            Some(index) => {
                self.calls[index as usize] = call;
                index
            }
            None => {
                self.calls.push(call);
                (self.calls.len() - 1) as u32
            }
        }
    }

    /// Whether the caller of `call` may make another attempt: placement, attempts left, and budget.
    fn may_retry(&self, call: &Call) -> bool {
        let caller = call.caller;
        self.config.retries[caller]
            && call.failed_attempts < self.config.attempts
            && self.config.budget.is_none_or(|b| (self.retries[caller] + 1) as f64 <= b * self.first_tries[caller] as f64)
    }

    /// `call` has its final answer: pass it up one hop, or record it as the user's.
    fn finish_call(&mut self, index: u32, succeeded: bool, scheduler: &mut Scheduler<LayerEvent>) {
        let call = self.calls[index as usize];
        self.free.push(index);
        match call.parent {
            Some(parent) => scheduler.schedule_in(self.hop(), LayerEvent::Answer { call: parent, succeeded }),
            None => {
                self.finished += 1;
                if succeeded {
                    self.succeeded += 1;
                    self.latency.record(scheduler.now() - call.started);
                }
            }
        }
    }

    fn finish(self, events: u64) -> RunOutput {
        let requests = self.issued.max(1) as f64;
        let mut metrics = vec![f64::NAN; metric::COUNT];
        metrics[metric::REQUESTS] = self.issued as f64;
        metrics[metric::SUCCESS_RATE] =
            if self.finished == 0 { f64::NAN } else { self.succeeded as f64 / self.finished as f64 };
        metrics[metric::AMPLIFICATION] = self.arrivals.iter().sum::<u64>() as f64 / requests;
        metrics[metric::BOTTOM_CALLS] = self.arrivals[self.config.layers - 1] as f64 / requests;
        metrics[metric::RETRIES] = self.retries.iter().sum::<u64>() as f64 / requests;
        metrics[metric::LATENCY_P50_MS] = self.latency.quantile_nanos(0.5) / 1e6;
        metrics[metric::LATENCY_P99_MS] = self.latency.quantile_nanos(0.99) / 1e6;
        metrics[metric::EVENTS] = events as f64;
        metrics[metric::REFUSED] = self.refused as f64 / requests;
        for layer in 0..self.config.layers {
            metrics[metric::LAYER_0 + layer] = self.arrivals[layer] as f64 / requests;
        }
        let timeline = self.bottom_timeline.counts().iter().map(|&c| f64::from(c)).collect();
        RunOutput { metrics, timeline, events, ..RunOutput::default() }
    }
}

impl Model for LayersRun<'_> {
    type Event = LayerEvent;

    fn handle(&mut self, event: LayerEvent, scheduler: &mut Scheduler<LayerEvent>) {
        let now = scheduler.now();
        match event {
            LayerEvent::UserRequest => {
                self.issued += 1;
                let call = self.new_call(None, 0, now);
                scheduler.schedule_in(self.hop(), LayerEvent::Arrives { call });
                if self.issued < self.config.requests {
                    let gap = -(1.0 - self.rng.random::<f64>()).ln() / self.config.rate_per_nano;
                    scheduler.schedule_in(SimDuration::from_nanos_f64(gap), LayerEvent::UserRequest);
                }
            }
            LayerEvent::Arrives { call } => {
                let layer = self.calls[call as usize].caller;
                self.arrivals[layer] += 1;
                let work = self.config.service;
                if layer + 1 == self.config.layers {
                    self.bottom_timeline.record(now);
                    let failed = self.rng.random::<f64>() < self.config.failure_probability;
                    scheduler.schedule_in(work + self.hop(), LayerEvent::Answer { call, succeeded: !failed });
                } else {
                    let child = self.new_call(Some(call), layer + 1, now + work);
                    scheduler.schedule_in(work + self.hop(), LayerEvent::Arrives { call: child });
                }
            }
            LayerEvent::Answer { call, succeeded } => {
                let snapshot = self.calls[call as usize];
                if let Some(limiter) = self.limiters.get_mut(snapshot.limiter as usize) {
                    limiter.record(now, if succeeded { Outcome::success(snapshot.permit) } else { Outcome::failure(snapshot.permit) });
                }
                if succeeded {
                    return self.finish_call(call, true, scheduler);
                }
                let state = &mut self.calls[call as usize];
                state.failed_attempts += 1;
                let snapshot = *state;
                if !self.may_retry(&snapshot) {
                    return self.finish_call(call, false, scheduler);
                }
                if let Some(limiter) = self.limiters.get_mut(snapshot.limiter as usize) {
                    match limiter.acquire_retry(now, false) {
                        Some(permit) => self.calls[call as usize].permit = Some(permit),
                        None => {
                            self.refused += 1;
                            return self.finish_call(call, false, scheduler);
                        }
                    }
                }
                let state = &mut self.calls[call as usize];
                let elapsed = now - state.started;
                let decision =
                    self.config.backoff.after_failure(state.failed_attempts, elapsed, None, &mut state.memory, &mut self.rng);
                match decision {
                    RetryDecision::RetryAfter(sleep) => scheduler.schedule_in(sleep, LayerEvent::RetryDue { call }),
                    RetryDecision::GiveUp(_) => self.finish_call(call, false, scheduler),
                }
            }
            LayerEvent::RetryDue { call } => {
                let caller = self.calls[call as usize].caller;
                self.retries[caller] += 1;
                scheduler.schedule_in(self.hop(), LayerEvent::Arrives { call });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelKind;
    use crate::stats::{Estimate, t_975};

    const BUCKET: SimDuration = SimDuration::from_millis(100);

    /// Half-width of the 99% CI of 10 replicates: the 95% one scaled by t(0.995, 9)/t(0.975, 9).
    fn ci99(estimate: Estimate) -> f64 {
        estimate.ci95 / t_975(9) * 3.249836
    }

    fn config(changes: &[(&str, Value)]) -> LayersConfig {
        Layers::configure(&ModelKind::Layers.point_with(changes)).unwrap()
    }

    fn metrics(changes: &[(&str, Value)], seed: u64) -> Vec<f64> {
        Layers::simulate(&config(changes), RunSettings::new(seed, BUCKET)).metrics
    }

    #[test]
    fn a_hard_down_bottom_sees_a_to_the_l_calls_per_request() {
        // ANCHORS.md: 3 layers × 3 attempts = 27; 4^3 = 64; 3^5 = 243; all layers together Σ A^i.
        for (layers, attempts) in [(3_i64, 3_i64), (3, 4), (5, 3), (1, 2)] {
            let m = metrics(
                &[("layers", Value::Count(layers)), ("attempts", Value::Count(attempts)), ("requests", Value::Count(50))],
                1,
            );
            let bottom = (attempts as f64).powi(layers as i32);
            let total: f64 = (1..=layers).map(|i| (attempts as f64).powi(i as i32)).sum();
            assert_eq!(m[metric::BOTTOM_CALLS], bottom, "{layers} layers × {attempts}");
            assert_eq!(m[metric::AMPLIFICATION], total);
            assert_eq!(m[metric::SUCCESS_RATE], 0.0);
            for layer in 0..layers as usize {
                assert_eq!(m[metric::LAYER_0 + layer], (attempts as f64).powi(layer as i32 + 1));
            }
        }
    }

    #[test]
    fn retrying_only_at_the_top_or_the_bottom_sends_a_calls() {
        for placement in ["top", "bottom"] {
            let m = metrics(&[("layers", Value::Count(4)), ("placement", Value::Choice(placement))], 2);
            assert_eq!(m[metric::BOTTOM_CALLS], 3.0, "{placement}");
        }
    }

    #[test]
    fn independent_failures_give_the_geometric_load_and_success() {
        // One layer, 4 attempts (3 retries), p = 0.5: success 1 − 0.5^4 = 0.9375, load (1 − 0.5^4)/0.5 = 1.875.
        let changes = [
            ("layers", Value::Count(1)),
            ("attempts", Value::Count(4)),
            ("failure_probability", Value::Real(0.5)),
            ("requests", Value::Count(20_000)),
        ];
        let runs: Vec<Vec<f64>> = (0..10).map(|seed| metrics(&changes, seed)).collect();
        let success = Estimate::of(&runs.iter().map(|m| m[metric::SUCCESS_RATE]).collect::<Vec<_>>());
        let load = Estimate::of(&runs.iter().map(|m| m[metric::BOTTOM_CALLS]).collect::<Vec<_>>());
        assert!((success.mean - 0.9375).abs() <= ci99(success), "{success:?}");
        assert!((load.mean - 1.875).abs() <= ci99(load), "{load:?}");
        assert!(success.ci95 < 0.005 && load.ci95 < 0.02, "tight enough to mean something");
        // Across layers: expected bottom calls (1 − p^(k^L))/(1 − p), here k = 2, L = 3, p = 0.5.
        let changes = [
            ("layers", Value::Count(3)),
            ("attempts", Value::Count(2)),
            ("failure_probability", Value::Real(0.5)),
            ("requests", Value::Count(20_000)),
        ];
        let bottom: Vec<f64> = (0..10).map(|seed| metrics(&changes, seed)[metric::BOTTOM_CALLS]).collect();
        let bottom = Estimate::of(&bottom);
        let expected = (1.0 - 0.5_f64.powi(8)) / 0.5;
        assert!((bottom.mean - expected).abs() <= ci99(bottom), "{bottom:?} vs {expected}");
        assert!(bottom.ci95 < 0.02);
    }

    #[test]
    fn a_budget_of_b_per_layer_amplifies_by_one_plus_b_per_layer() {
        // ANCHORS.md: budget b at p = 1 gives (1 + b)^L.
        let m = metrics(
            &[
                ("layers", Value::Count(3)),
                ("attempts", Value::Count(10)),
                ("limiter", Value::Choice("budget")),
                ("budget", Value::Real(0.2)),
                ("requests", Value::Count(20_000)),
            ],
            3,
        );
        let expected = 1.2_f64.powi(3);
        assert!((m[metric::BOTTOM_CALLS] - expected).abs() < 0.01, "{} vs {expected}", m[metric::BOTTOM_CALLS]);
    }

    #[test]
    fn limiters_cap_retries_at_total_failure() {
        // One caller, 4 attempts, everything fails, 10,000 requests from one client.
        let run = |limiter: &'static str| {
            metrics(
                &[
                    ("layers", Value::Count(1)),
                    ("attempts", Value::Count(4)),
                    ("limiter", Value::Choice(limiter)),
                    ("requests", Value::Count(10_000)),
                ],
                4,
            )
        };
        assert_eq!(run("none")[metric::BOTTOM_CALLS], 4.0);
        // Token bucket, 0.1 per call, capacity 5: r = 0.1·(N + r), so r = N/9, plus the 5 initial tokens.
        let bucket = run("token-bucket")[metric::BOTTOM_CALLS];
        assert!((bucket - (1.0 + 1.0 / 9.0 + 5.0 / 10_000.0)).abs() < 1e-3, "{bucket}");
        // gRPC allows a retry after each of the first 4 failed calls (tokens 9, 8, 7, 6 > 5) and none after the
        // 5th, at 100% failure for good; requests that run out of attempts first use fewer.
        let grpc_retries = (run("grpc")[metric::BOTTOM_CALLS] - 1.0) * 10_000.0;
        assert!((3.0..=4.0).contains(&grpc_retries.round()), "{grpc_retries}");
        // The AWS quota pays for 100 retries, then none.
        assert_eq!(run("aws-quota")[metric::BOTTOM_CALLS], 1.0 + 100.0 / 10_000.0);
    }
}
