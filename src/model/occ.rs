//! The optimistic-concurrency (OCC) row of the AWS 2015 study (Brooker, "Exponential Backoff And Jitter").
//!
//! One row with a version number. Each client reads the version, then writes with it; the write succeeds iff the
//! version is unchanged, which bumps it. Every network hop (request or reply) takes |Normal(mean, sd)|. After a
//! failed write the client counts the failure (so the first retry has n = 1), sleeps `backoff(n)` and re-reads;
//! the sleep is added to that read's network delay. All clients start at t = 0 and stop after their first
//! successful write (or when their policy gives up). "calls" counts server WRITE calls only, as the study does;
//! completion is the time of the last event.

use rand_distr::{Distribution, Normal};

use super::client;
use super::distributions;
use super::trace::Tracer;
use super::{Footprint, RunOutput, RunSettings, SimModel};
use crate::engine::{Model, RunSeeds, Scheduler, SimRng, Stream, run};
use crate::metrics::{BucketCounter, lay_out_timeline};
use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::policy::{BackoffMemory, FailureKind, RetryDecision, RetryPolicy};
use crate::time::{SimDuration, SimTime};

/// The OCC model (scenario `kind = "occ"`).
pub(crate) struct Occ;

/// `[model]`, in the order they are hashed into seeds.
const OCC_PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        Section::Model,
        "clients",
        ParamKind::Count { min: 1, max: 10_000_000 },
        ParamDefault::Required,
        "clients contending for the row, all starting at t = 0",
    ),
    distributions::network_delay(ParamDefault::millis(10)).formerly(Section::Model, "network_mean"),
    ParamSpec::new(
        Section::Model,
        "network_sd",
        ParamKind::Duration,
        ParamDefault::millis(2),
        "standard deviation of one network hop: each takes |Normal(network_delay, network_sd)|",
    ),
];

/// `[client]`: the OCC model simulates no retry limiter, so it runs the presets that ship none.
const OCC_CLIENT_PARAMS: &[ParamSpec] = &[
    client::strategy(client::POLICIES_WITHOUT_LIMITER, "full-jitter"),
    client::base(ParamDefault::millis(5)),
    client::cap(ParamDefault::millis(2000)),
    client::multiplier(ParamDefault::Value(Value::Real(2.0))),
    client::FLOOR,
    client::JITTER,
    client::JITTER_FRACTION,
    client::STEPS,
    client::max_attempts(u32::MAX as i64, ParamDefault::Unset),
    client::DEADLINE,
];

/// The timeline's series, counted per bucket.
pub(super) mod series {
    series! {
        CALLS = "calls": "WRITE calls reaching the server in the bucket",
        RETRIES = "retries": "of those, WRITEs after a client's first",
    }
}

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        CALLS = "calls" (Count): "server WRITE calls (the study's measure of work)",
        READS = "reads" (Count): "server READ calls",
        ATTEMPTS = "attempts" (Count): "read-then-write attempts by all clients; each ends in one WRITE, so attempts = calls here",
        RETRIES = "retries" (Count): "attempts after the first, over all clients",
        GAVE_UP = "gave_up" (Count): "clients whose policy gave up before a successful write",
        SUCCESS_RATE = "success_rate" (Fraction): "fraction of clients that wrote successfully",
        COMPLETION_MS = "completion_ms" (Milliseconds): "time of the last event (the study's completion time)",
        PEAK_CALLS_PER_BUCKET = "peak_calls_per_bucket" (Count): "most WRITE calls in one timeline bucket, the first attempts included",
        RETRY_PEAK_PER_BUCKET = "retry_peak_per_bucket" (Count): "most retry WRITEs in one timeline bucket",
        RETRY_PEAK_TO_MEAN = "retry_peak_to_mean" (Ratio): "retry_peak_per_bucket over the mean retries per bucket from the first retry to the last, empty buckets included: about 1 when retries are spread evenly, large when they come in waves",
        RETRY_DISPERSION = "retry_dispersion" (Ratio): "variance over mean of retries per bucket from the first retry to the last: about 1 when retries are independent (Poisson), far above when clients retry in lock-step",
        EVENTS = "events" (Count): "engine events (message deliveries) in the run",
    }
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct OccConfig {
    pub clients: u32,
    pub network: Normal<f64>,
    pub retry: RetryPolicy,
}

impl SimModel for Occ {
    const KIND: &'static str = "occ";
    const ABOUT: &'static str = "one OCC row under contention, as in the AWS 2015 backoff-and-jitter study";
    const PARAMS: &'static [&'static [ParamSpec]] = &[OCC_PARAMS, OCC_CLIENT_PARAMS];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["calls", "completion_ms"];

    type Config = OccConfig;

    fn configure(point: &Point) -> Result<OccConfig, ParamError> {
        let mean = point.duration("network_delay")?;
        let sd = point.duration("network_sd")?;
        let network = Normal::new(mean.as_nanos_f64(), sd.as_nanos_f64())
            .map_err(|err| ParamError::new("network_sd", err.to_string()))?;
        let clients = point.count("clients")?;
        let clients = u32::try_from(clients)
            .map_err(|_| ParamError::new("clients", format!("{clients} is out of range")))?;
        Ok(OccConfig { clients, network, retry: client::retry_policy(point)?.0 })
    }

    fn trace_owner(_: &OccConfig) -> &'static str {
        "client"
    }

    /// The OCC model has no limiter and retries every conflict: its policy is the backoff alone.
    fn describe_policy(_: &Point, config: &OccConfig) -> Result<Option<String>, ParamError> {
        Ok(Some(config.retry.to_string()))
    }

    fn footprint(config: &OccConfig) -> Footprint {
        let records = u64::from(config.clients);
        Footprint {
            horizon: None,
            records,
            bytes_per_record: BYTES_PER_CLIENT,
            trace_spans: config.retry.max_attempts.map(|n| records * u64::from(n)),
            // The tracer's (start, backoff slept) of each client's attempt in flight.
            trace_bytes_per_record: size_of::<super::trace::OpenAttempt>() as u64,
            ..Footprint::default()
        }
    }

    fn simulate(config: &OccConfig, run_settings: RunSettings) -> RunOutput {
        if run_settings.trace { simulate_with::<true>(config, run_settings) } else { simulate_with::<false>(config, run_settings) }
    }
}

/// One replicate; `TRACE` is a compile-time switch so that untraced runs carry no tracing code at all.
fn simulate_with<const TRACE: bool>(config: &OccConfig, run_settings: RunSettings) -> RunOutput {
    let mut scheduler = Scheduler::with_capacity(config.clients as usize);
        let mut model = OccRun::<TRACE>::new(config, run_settings.seeds, run_settings.bucket);
        if TRACE {
            let mut tracer = Tracer::default();
            (0..config.clients).for_each(|client| tracer.begin(client, SimTime::ZERO, SimDuration::ZERO));
            model.tracer = Some(tracer);
        }
        for client in 0..config.clients {
            let hop = model.hop();
            scheduler.schedule_in(hop, OccEvent::ReadArrives(client));
        }
        let stats = run(&mut model, &mut scheduler, run_settings.limit());
        let mut output = model.finish(stats.events, stats.end_time.as_millis_f64());
        output.truncated = stats.truncated;
        output
}

/// A message in flight; the payload is the client's index.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OccEvent {
    /// A client's READ reaches the server.
    ReadArrives(u32),
    /// The READ's reply reaches the client, which sends its WRITE.
    ReadReply(u32),
    /// A client's WRITE reaches the server.
    WriteArrives(u32),
    /// The WRITE's reply reaches the client: success or conflict.
    WriteReply { client: u32, succeeded: bool },
}

/// Memory per client: its state and two pending events, each counted twice for the slack of growing buffers.
const BYTES_PER_CLIENT: u64 = (size_of::<ClientState>() + 2 * 2 * size_of::<(u64, OccEvent)>()) as u64;

#[derive(Clone, Copy, Default)]
struct ClientState {
    version_read: u64,
    failed_attempts: u32,
    memory: BackoffMemory,
}

/// The state of one replicate.
struct OccRun<'a, const TRACE: bool> {
    config: &'a OccConfig,
    /// Network delays (the world's stream) and backoff jitter (the policy's).
    network: SimRng,
    jitter: SimRng,
    version: u64,
    clients: Vec<ClientState>,
    writes_per_bucket: BucketCounter,
    retries_per_bucket: BucketCounter,
    reads: u64,
    writes: u64,
    succeeded: u32,
    gave_up: u32,
    /// Spans per attempt, when tracing.
    tracer: Option<Tracer>,
}

impl<'a, const TRACE: bool> OccRun<'a, TRACE> {
    fn new(config: &'a OccConfig, seeds: RunSeeds, bucket: SimDuration) -> Self {
        OccRun {
            config,
            network: seeds.stream(Stream::Network),
            jitter: seeds.stream(Stream::Jitter),
            version: 0,
            clients: vec![ClientState::default(); config.clients as usize],
            writes_per_bucket: BucketCounter::new(bucket),
            retries_per_bucket: BucketCounter::new(bucket),
            reads: 0,
            writes: 0,
            succeeded: 0,
            gave_up: 0,
            tracer: None,
        }
    }

    /// One network hop: |Normal(mean, sd)|.
    #[inline]
    fn hop(&mut self) -> SimDuration {
        SimDuration::from_nanos_f64(self.config.network.sample(&mut self.network).abs())
    }

    fn finish(self, events: u64, completion_ms: f64) -> RunOutput {
        let clients = f64::from(self.config.clients);
        let mut metrics = vec![0.0; metric::COUNT];
        metrics[metric::CALLS] = self.writes as f64;
        metrics[metric::READS] = self.reads as f64;
        metrics[metric::ATTEMPTS] = self.writes as f64;
        metrics[metric::RETRIES] = self.writes as f64 - clients;
        metrics[metric::GAVE_UP] = f64::from(self.gave_up);
        metrics[metric::SUCCESS_RATE] = f64::from(self.succeeded) / clients;
        metrics[metric::COMPLETION_MS] = completion_ms;
        metrics[metric::PEAK_CALLS_PER_BUCKET] = f64::from(self.writes_per_bucket.peak());
        let synchrony = self.retries_per_bucket.synchrony();
        metrics[metric::RETRY_PEAK_PER_BUCKET] = synchrony.map_or(f64::NAN, |s| f64::from(s.peak));
        metrics[metric::RETRY_PEAK_TO_MEAN] = synchrony.map_or(f64::NAN, |s| s.peak_to_mean);
        metrics[metric::RETRY_DISPERSION] = synchrony.map_or(f64::NAN, |s| s.dispersion);
        metrics[metric::EVENTS] = events as f64;
        let timeline = lay_out_timeline(
            series::COUNT,
            &[(series::CALLS, self.writes_per_bucket.counts()), (series::RETRIES, self.retries_per_bucket.counts())],
        );
        let spans = self.tracer.map(|t| t.spans).unwrap_or_default();
        RunOutput { metrics, timeline, events, spans, ..RunOutput::default() }
    }
}

impl<const TRACE: bool> Model for OccRun<'_, TRACE> {
    type Event = OccEvent;

    #[inline]
    fn handle(&mut self, event: OccEvent, scheduler: &mut Scheduler<OccEvent>) {
        match event {
            OccEvent::ReadArrives(client) => {
                self.reads += 1;
                self.clients[client as usize].version_read = self.version;
                let hop = self.hop();
                scheduler.schedule_in(hop, OccEvent::ReadReply(client));
            }
            OccEvent::ReadReply(client) => {
                let hop = self.hop();
                scheduler.schedule_in(hop, OccEvent::WriteArrives(client));
            }
            OccEvent::WriteArrives(client) => {
                self.writes += 1;
                self.writes_per_bucket.record(scheduler.now());
                if self.clients[client as usize].failed_attempts > 0 {
                    self.retries_per_bucket.record(scheduler.now());
                }
                let succeeded = self.clients[client as usize].version_read == self.version;
                if succeeded {
                    self.version += 1;
                }
                let hop = self.hop();
                scheduler.schedule_in(hop, OccEvent::WriteReply { client, succeeded });
            }
            OccEvent::WriteReply { client, succeeded } if TRACE => {
                let attempt = self.clients[client as usize].failed_attempts + 1;
                let (outcome, status) = if succeeded { ("success", 200) } else { ("conflict", 409) };
                if let Some(tracer) = &mut self.tracer {
                    tracer.end(client, scheduler.now(), attempt, outcome, status);
                }
                self.write_reply(client, succeeded, scheduler);
            }
            OccEvent::WriteReply { client, succeeded } => self.write_reply(client, succeeded, scheduler),
        }
    }
}

impl<const TRACE: bool> OccRun<'_, TRACE> {
    /// A WRITE's reply: done, or sleep and re-read.
    #[inline]
    fn write_reply(&mut self, client: u32, succeeded: bool, scheduler: &mut Scheduler<OccEvent>) {
        match succeeded {
            true => self.succeeded += 1,
            false => {
                let elapsed = scheduler.now().saturating_since(SimTime::ZERO);
                let state = &mut self.clients[client as usize];
                state.failed_attempts += 1;
                let decision = self.config.retry.after_failure(
                    state.failed_attempts,
                    elapsed,
                    (FailureKind::Transient, None),
                    &mut state.memory,
                    &mut self.jitter,
                );
                match decision {
                    RetryDecision::RetryAfter(sleep) => {
                        if TRACE && let Some(tracer) = &mut self.tracer {
                            tracer.begin(client, scheduler.now() + sleep, sleep);
                        }
                        let hop = self.hop();
                        scheduler.schedule_in(hop + sleep, OccEvent::ReadArrives(client));
                    }
                    RetryDecision::GiveUp(_) => self.gave_up += 1,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelKind;
    use crate::policy::{BackoffParams, Strategy};

    fn config(clients: u32, strategy: Strategy) -> OccConfig {
        OccConfig {
            clients,
            network: Normal::new(10e6, 2e6).unwrap(),
            retry: RetryPolicy {
                strategy,
                backoff: BackoffParams::AWS_2015,
                max_attempts: None,
                deadline: None,
                retry_after: crate::policy::RetryAfterPolicy::Honour,
                pushback: crate::policy::PushbackPolicy::Ignore,
                throttling_base: None,
            },
        }
    }

    const BUCKET: SimDuration = SimDuration::from_millis(10);

    #[test]
    fn every_client_succeeds_exactly_once_and_writes_at_least_once() {
        for &strategy in Strategy::ALL {
            for seed in 0..5 {
                let out = Occ::simulate(&config(25, strategy), RunSettings::new(seed, BUCKET));
                let m = &out.metrics;
                assert_eq!(m[metric::SUCCESS_RATE], 1.0, "{strategy}");
                assert_eq!(m[metric::GAVE_UP], 0.0);
                assert!(m[metric::CALLS] >= 25.0, "{strategy}: writes ≥ clients");
                // Every attempt is one READ and one WRITE.
                assert_eq!(m[metric::READS], m[metric::CALLS]);
                // Four hops (events) per attempt.
                assert_eq!(out.events as f64, 4.0 * m[metric::CALLS]);
                let total = |series: usize| out.timeline.iter().skip(series).step_by(series::COUNT).sum::<f64>();
                assert_eq!(total(series::CALLS), m[metric::CALLS]);
                assert_eq!(total(series::RETRIES), m[metric::RETRIES]);
            }
        }
    }

    #[test]
    fn a_single_client_needs_exactly_one_attempt() {
        let out = Occ::simulate(&config(1, Strategy::Exponential), RunSettings::new(3, BUCKET));
        assert_eq!(out.metrics[metric::CALLS], 1.0);
        assert_eq!(out.metrics[metric::RETRIES], 0.0);
        // Four hops of about 10 ms each.
        let completion = out.metrics[metric::COMPLETION_MS];
        assert!((20.0..60.0).contains(&completion), "{completion}");
    }

    #[test]
    fn without_backoff_one_client_wins_per_round_so_work_grows_quadratically() {
        // With no sleep, all remaining clients collide every round and exactly one wins per round, so the
        // total writes are close to N(N+1)/2 (hop jitter lets a few late clients skip a round).
        let clients = 40;
        let out = Occ::simulate(&config(clients, Strategy::None), RunSettings::new(9, BUCKET));
        let calls = out.metrics[metric::CALLS];
        let n = f64::from(clients);
        assert!(calls > 0.5 * n * (n + 1.0) / 2.0 && calls <= n * (n + 1.0) / 2.0 * 1.5, "calls = {calls}");
    }

    #[test]
    fn max_attempts_makes_clients_give_up() {
        let mut limited = config(50, Strategy::None);
        limited.retry.max_attempts = Some(2);
        let out = Occ::simulate(&limited, RunSettings::new(1, BUCKET));
        let m = &out.metrics;
        assert!(m[metric::GAVE_UP] > 0.0);
        assert!(m[metric::CALLS] <= 100.0, "at most two attempts per client");
        let succeeded = m[metric::SUCCESS_RATE] * 50.0;
        assert_eq!(succeeded + m[metric::GAVE_UP], 50.0);
    }

    #[test]
    fn same_seed_same_run() {
        let a = Occ::simulate(&config(30, Strategy::FullJitter), RunSettings::new(42, BUCKET));
        let b = Occ::simulate(&config(30, Strategy::FullJitter), RunSettings::new(42, BUCKET));
        let c = Occ::simulate(&config(30, Strategy::FullJitter), RunSettings::new(43, BUCKET));
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn presets_supply_backoff_and_attempts_and_every_client_ends() {
        // OCC has no limiter: a preset contributes its strategy, base, cap, multiplier and max_attempts only.
        for preset in crate::policy::presets::ALL {
            let point = ModelKind::Occ.point_with(&[
                ("clients", crate::model::Value::Count(10)),
                ("strategy", crate::model::Value::Choice(preset.name)),
            ]);
            let config = Occ::configure(&point).unwrap_or_else(|e| panic!("{}: {e:?}", preset.name));
            assert_eq!(config.retry.backoff, preset.backoff);
            assert_eq!(config.retry.max_attempts, preset.max_attempts);
            let m = Occ::simulate(&config, RunSettings::new(5, BUCKET)).metrics;
            assert_eq!(m[metric::SUCCESS_RATE] * 10.0 + m[metric::GAVE_UP], 10.0, "{}", preset.name);
            let most = f64::from(preset.max_attempts.unwrap_or(u32::MAX)) * 10.0;
            assert!(m[metric::CALLS] >= 10.0 && m[metric::CALLS] <= most, "{}", preset.name);
        }
    }

    #[test]
    fn metric_positions_match_the_declared_names() {
        let kind = ModelKind::Occ;
        assert_eq!(kind.metrics().len(), metric::COUNT);
        assert_eq!(kind.metric_index("calls"), Some(metric::CALLS));
        assert_eq!(kind.metric_index("completion_ms"), Some(metric::COMPLETION_MS));
        assert_eq!(kind.metric_index("peak_calls_per_bucket"), Some(metric::PEAK_CALLS_PER_BUCKET));
        assert_eq!(kind.metric_index("events"), Some(metric::EVENTS));
    }
}
