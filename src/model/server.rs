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

use std::collections::VecDeque;

use super::client::{CLIENT_PARAMS, retry_policy};
use super::distributions::{DISTRIBUTION_NAMES, TimeDistribution};
use super::{MetricSpec, ParamDefault, ParamError, ParamKind, ParamSpec, Point, RunOutput, Section, SimModel, Value};
use crate::engine::{Model, RunLimit, Scheduler, SimDuration, SimRng, SimTime, run, sim_rng};
use crate::metrics::{BucketCounter, LatencyHistogram};
use crate::policy::{BackoffMemory, RetryDecision, RetryPolicy};

/// The contended-server model (scenario `kind = "server"`).
pub struct Server;

const fn duration_param(section: Section, key: &'static str, default: ParamDefault, help: &'static str) -> ParamSpec {
    ParamSpec { section, key, kind: ParamKind::Duration, default, help }
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
    ParamSpec {
        section: Section::Model,
        key: "network",
        kind: ParamKind::Choice(&["constant", "exponential"]),
        default: ParamDefault::Value(Value::Choice("constant")),
        help: "network-delay distribution",
    },
];

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
    duration_param(Section::Workload, "think_time", millis(1000), "closed: mean think time between requests"),
    duration_param(Section::Workload, "duration", millis(10_000), "open and closed: new requests stop at this time"),
    duration_param(Section::Workload, "warmup", millis(0), "requests sent before this are left out of the metrics"),
];

const TIMEOUT_PARAMS: &[ParamSpec] = &[
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
    pub const COUNT: usize = 21;
}

/// Timeline series positions.
mod series {
    pub const CALLS: usize = 0;
    pub const GOODPUT: usize = 1;
    pub const OFFERED: usize = 2;
    pub const COUNT: usize = 3;
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Workload {
    Burst { requests: u32 },
    Open { rate_per_nano: f64 },
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
}

impl SimModel for Server {
    const KIND: &'static str = "server";
    const ABOUT: &'static str = "a server with workers and a bounded FIFO queue; clients time out and retry";
    const PARAMS: &'static [&'static [ParamSpec]] = &[SERVER_PARAMS, WORKLOAD_PARAMS, CLIENT_PARAMS, TIMEOUT_PARAMS];
    const METRICS: &'static [MetricSpec] = &[
        MetricSpec { name: "calls", help: "attempts reaching the server, rejected ones included" },
        MetricSpec { name: "requests", help: "unique requests (first tries)" },
        MetricSpec { name: "retries", help: "attempts after the first" },
        MetricSpec { name: "succeeded", help: "requests answered successfully" },
        MetricSpec { name: "gave_up", help: "requests whose policy gave up (dead-lettered)" },
        MetricSpec { name: "success_rate", help: "succeeded / (succeeded + gave_up)" },
        MetricSpec { name: "timeouts", help: "attempts that timed out at the client" },
        MetricSpec { name: "rejected", help: "attempts rejected with 503 because the queue was full" },
        MetricSpec { name: "amplification", help: "server calls per unique request" },
        MetricSpec { name: "latency_mean_ms", help: "mean time from first send to success" },
        MetricSpec { name: "latency_p50_ms", help: "median time from first send to success" },
        MetricSpec { name: "latency_p90_ms", help: "90th percentile of time to success" },
        MetricSpec { name: "latency_p99_ms", help: "99th percentile of time to success" },
        MetricSpec { name: "latency_p999_ms", help: "99.9th percentile of time to success" },
        MetricSpec { name: "wait_mean_ms", help: "mean time an attempt waited in the queue" },
        MetricSpec { name: "utilisation", help: "busy worker time / (workers × time); empty for unlimited workers" },
        MetricSpec { name: "goodput_rps", help: "successes per second in the measured window" },
        MetricSpec { name: "completion_ms", help: "time of the last event" },
        MetricSpec { name: "peak_calls_per_bucket", help: "most server calls in one timeline bucket" },
        MetricSpec { name: "peak_to_mean", help: "peak calls per bucket over the mean of the non-empty buckets" },
        MetricSpec { name: "events", help: "engine events in the run" },
    ];
    const TIMELINE: &'static [&'static str] = &["calls", "goodput", "offered"];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["calls", "latency_p99_ms", "success_rate"];

    type Config = ServerConfig;

    fn configure(point: &Point) -> Result<ServerConfig, ParamError> {
        let workers = point.optional_count("workers")?.map(|n| n as u32);
        let queue_limit = point.optional_count("queue_limit")?.map(|n| n as u64);
        if workers.is_none() && queue_limit.is_some() {
            return Err(ParamError {
                key: "queue_limit",
                message: "a queue limit needs a finite number of workers; set `workers` too".into(),
            });
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
            "open" => {
                let rate = point.real("rate")?;
                if rate <= 0.0 {
                    return Err(ParamError { key: "rate", message: "an open workload needs rate > 0".into() });
                }
                Workload::Open { rate_per_nano: rate / 1e9 }
            }
            _ => Workload::Closed { clients: point.count("clients")? as u32 },
        };
        let duration = SimTime::ZERO + point.duration("duration")?;
        let warmup = SimTime::ZERO + point.duration("warmup")?;
        if !matches!(workload, Workload::Burst { .. }) && warmup >= duration {
            return Err(ParamError { key: "warmup", message: "must be shorter than `duration`".into() });
        }
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
            retry: retry_policy(point)?,
            timeout: point.optional_duration("timeout")?,
            cancel_on_timeout: point.choice("on_timeout")? == "cancel",
        })
    }

    fn simulate(config: &ServerConfig, seed: u64, bucket: SimDuration) -> RunOutput {
        let mut run_state = ServerRun::new(config, sim_rng(seed), bucket);
        let mut scheduler = Scheduler::with_capacity(1024);
        match config.workload {
            Workload::Burst { requests } => {
                for client in 0..requests {
                    scheduler.schedule_at(SimTime::ZERO, ServerEvent::NewRequest { client });
                }
            }
            Workload::Open { .. } => {
                let first = run_state.next_arrival_gap();
                scheduler.schedule_in(first, ServerEvent::OpenArrival);
            }
            Workload::Closed { clients } => {
                for client in 0..clients {
                    let think = config.think_time.sample(&mut run_state.rng);
                    scheduler.schedule_in(think, ServerEvent::NewRequest { client });
                }
            }
        }
        let stats = run(&mut run_state, &mut scheduler, RunLimit::default());
        run_state.finish(stats.events, stats.end_time)
    }
}

/// A message or timer. `slot` indexes the request table; `token` names one attempt, so events about an
/// attempt that is no longer current (a late answer, a timer for an attempt already answered) are recognised.
#[derive(Clone, Copy, Debug)]
pub enum ServerEvent {
    /// A client issues a new request.
    NewRequest { client: u32 },
    /// The next open-loop arrival.
    OpenArrival,
    /// An attempt reaches the server.
    AttemptArrives { slot: u32, token: u64 },
    /// A worker finishes an attempt.
    ServiceDone { slot: u32, token: u64 },
    /// The server's answer reaches the client.
    Answer { slot: u32, token: u64, outcome: Outcome },
    /// The client's per-attempt timer fires.
    Timeout { slot: u32, token: u64 },
    /// The client's backoff sleep ends.
    RetryDue { slot: u32 },
}

/// What the server answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Success,
    /// 503: the queue was full.
    Rejected,
}

#[derive(Clone, Copy, Debug, Default)]
struct Request {
    client: u32,
    sent_at: SimTime,
    /// The token of the attempt in flight; 0 while sleeping between attempts.
    token: u64,
    failed_attempts: u32,
    memory: BackoffMemory,
    measured: bool,
}

struct ServerRun<'a> {
    config: &'a ServerConfig,
    rng: SimRng,
    requests: Vec<Request>,
    free_slots: Vec<u32>,
    next_token: u64,
    queue: VecDeque<(u32, u64, SimTime)>,
    busy: u32,
    busy_nanos: f64,
    timeline: [BucketCounter; series::COUNT],
    latency: LatencyHistogram,
    wait_nanos: f64,
    waits: u64,
    counts: Counts,
}

#[derive(Default)]
struct Counts {
    calls: u64,
    requests: u64,
    retries: u64,
    succeeded: u64,
    gave_up: u64,
    timeouts: u64,
    rejected: u64,
    measured_successes: u64,
}

impl<'a> ServerRun<'a> {
    fn new(config: &'a ServerConfig, rng: SimRng, bucket: SimDuration) -> Self {
        ServerRun {
            config,
            rng,
            requests: Vec::with_capacity(1024),
            free_slots: Vec::with_capacity(1024),
            next_token: 1,
            queue: VecDeque::with_capacity(1024),
            busy: 0,
            busy_nanos: 0.0,
            timeline: std::array::from_fn(|_| BucketCounter::new(bucket)),
            latency: LatencyHistogram::default(),
            wait_nanos: 0.0,
            waits: 0,
            counts: Counts::default(),
        }
    }

    fn next_arrival_gap(&mut self) -> SimDuration {
        let Workload::Open { rate_per_nano } = self.config.workload else { return SimDuration::MAX };
        use rand::RngExt;
        // Inverse transform: Exp(rate) = −ln(1 − U)/rate, U in [0, 1).
        SimDuration::from_nanos_f64(-(1.0 - self.rng.random::<f64>()).ln() / rate_per_nano)
    }

    fn open_request(&mut self, client: u32, now: SimTime) -> u32 {
        let request = Request {
            client,
            sent_at: now,
            measured: now >= self.config.warmup,
            ..Request::default()
        };
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

    fn send_attempt(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let token = self.next_token;
        self.next_token += 1;
        self.requests[slot as usize].token = token;
        let delay = self.config.network.sample(&mut self.rng);
        scheduler.schedule_in(delay, ServerEvent::AttemptArrives { slot, token });
        if let Some(timeout) = self.config.timeout {
            scheduler.schedule_in(timeout, ServerEvent::Timeout { slot, token });
        }
    }

    fn answer(&mut self, slot: u32, token: u64, outcome: Outcome, scheduler: &mut Scheduler<ServerEvent>) {
        let delay = self.config.network.sample(&mut self.rng);
        scheduler.schedule_in(delay, ServerEvent::Answer { slot, token, outcome });
    }

    fn start_service(&mut self, slot: u32, token: u64, queued_at: SimTime, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        self.busy += 1;
        if queued_at >= self.config.warmup {
            self.wait_nanos += (now - queued_at).as_nanos_f64();
            self.waits += 1;
        }
        let base = self.config.service.sample_nanos(&mut self.rng);
        let load = self.config.latency_per_request.as_nanos_f64() * f64::from(self.busy);
        let service = SimDuration::from_nanos_f64(base + load);
        self.busy_nanos += service.as_nanos_f64();
        scheduler.schedule_in(service, ServerEvent::ServiceDone { slot, token });
    }

    /// True while `token` is the attempt in flight of the request in `slot`.
    fn is_current(&self, slot: u32, token: u64) -> bool {
        self.requests.get(slot as usize).is_some_and(|request| request.token == token)
    }

    fn close_request(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let client = self.requests[slot as usize].client;
        self.requests[slot as usize].token = 0;
        self.free_slots.push(slot);
        if let Workload::Closed { .. } = self.config.workload {
            let think = self.config.think_time.sample(&mut self.rng);
            if scheduler.now() + think < self.config.duration {
                scheduler.schedule_in(think, ServerEvent::NewRequest { client });
            }
        }
    }

    fn attempt_failed(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        let request = &mut self.requests[slot as usize];
        request.token = 0;
        request.failed_attempts += 1;
        let elapsed = now - request.sent_at;
        match self.config.retry.after_failure(request.failed_attempts, elapsed, &mut request.memory, &mut self.rng) {
            RetryDecision::RetryAfter(sleep) => scheduler.schedule_in(sleep, ServerEvent::RetryDue { slot }),
            RetryDecision::GiveUp(_) => {
                self.counts.gave_up += 1;
                self.close_request(slot, scheduler);
            }
        }
    }

    fn finish(self, events: u64, end: SimTime) -> RunOutput {
        let counts = &self.counts;
        let ms = |nanos: f64| nanos / 1e6;
        let mut metrics = vec![0.0; metric::COUNT];
        metrics[metric::CALLS] = counts.calls as f64;
        metrics[metric::REQUESTS] = counts.requests as f64;
        metrics[metric::RETRIES] = counts.retries as f64;
        metrics[metric::SUCCEEDED] = counts.succeeded as f64;
        metrics[metric::GAVE_UP] = counts.gave_up as f64;
        let finished = counts.succeeded + counts.gave_up;
        metrics[metric::SUCCESS_RATE] = if finished == 0 { f64::NAN } else { counts.succeeded as f64 / finished as f64 };
        metrics[metric::TIMEOUTS] = counts.timeouts as f64;
        metrics[metric::REJECTED] = counts.rejected as f64;
        metrics[metric::AMPLIFICATION] =
            if counts.requests == 0 { f64::NAN } else { counts.calls as f64 / counts.requests as f64 };
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
        let buckets = self.timeline.iter().map(|counter| counter.counts().len()).max().unwrap_or(0);
        let mut timeline = vec![0.0; buckets * series::COUNT];
        for (series_index, counter) in self.timeline.iter().enumerate() {
            for (bucket, &count) in counter.counts().iter().enumerate() {
                timeline[bucket * series::COUNT + series_index] = f64::from(count);
            }
        }
        RunOutput { metrics, timeline, events }
    }
}

impl Model for ServerRun<'_> {
    type Event = ServerEvent;

    fn handle(&mut self, event: ServerEvent, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        match event {
            ServerEvent::NewRequest { client } => {
                let slot = self.open_request(client, now);
                self.send_attempt(slot, scheduler);
            }
            ServerEvent::OpenArrival => {
                let slot = self.open_request(0, now);
                self.send_attempt(slot, scheduler);
                let gap = self.next_arrival_gap();
                if now + gap < self.config.duration {
                    scheduler.schedule_in(gap, ServerEvent::OpenArrival);
                }
            }
            ServerEvent::AttemptArrives { slot, token } => {
                self.counts.calls += 1;
                self.timeline[series::CALLS].record(now);
                if self.config.workers.is_none_or(|workers| self.busy < workers) {
                    self.start_service(slot, token, now, scheduler);
                } else if self.config.queue_limit.is_none_or(|limit| (self.queue.len() as u64) < limit) {
                    self.queue.push_back((slot, token, now));
                } else {
                    self.counts.rejected += 1;
                    self.answer(slot, token, Outcome::Rejected, scheduler);
                }
            }
            ServerEvent::ServiceDone { slot, token } => {
                self.busy -= 1;
                self.answer(slot, token, Outcome::Success, scheduler);
                while let Some((next_slot, next_token, queued_at)) = self.queue.pop_front() {
                    if self.config.cancel_on_timeout && !self.is_current(next_slot, next_token) {
                        continue;
                    }
                    self.start_service(next_slot, next_token, queued_at, scheduler);
                    break;
                }
            }
            ServerEvent::Answer { slot, token, outcome } => {
                if !self.is_current(slot, token) {
                    return;
                }
                match outcome {
                    Outcome::Success => {
                        let request = self.requests[slot as usize];
                        self.counts.succeeded += 1;
                        self.timeline[series::GOODPUT].record(now);
                        if request.measured {
                            self.latency.record(now - request.sent_at);
                        }
                        if now >= self.config.warmup
                            && (matches!(self.config.workload, Workload::Burst { .. }) || now <= self.config.duration)
                        {
                            self.counts.measured_successes += 1;
                        }
                        self.close_request(slot, scheduler);
                    }
                    Outcome::Rejected => self.attempt_failed(slot, scheduler),
                }
            }
            ServerEvent::Timeout { slot, token } => {
                if self.is_current(slot, token) {
                    self.counts.timeouts += 1;
                    self.attempt_failed(slot, scheduler);
                }
            }
            ServerEvent::RetryDue { slot } => {
                self.counts.retries += 1;
                self.send_attempt(slot, scheduler);
            }
        }
    }
}

#[cfg(test)]
mod tests;
