//! What a server run measures as it goes (counts, latencies, per-bucket timelines), and the metrics, timeline
//! and verdict it reports when it ends.

use super::config::ServerConfig;
use super::{metric, series};
use crate::metrics::{
    BucketCounter, BucketMax, LatencyHistogram, Phase, PhaseMetrics, PhaseTally, Trigger, lay_out_timeline,
};
use crate::model::RunOutput;
use crate::model::trace::Span;
use crate::model::verdict::Verdict;
use crate::time::{SimDuration, SimTime};
use crate::workload::Arrivals;

/// The measurements of one run.
#[derive(Clone)]
pub(crate) struct Tally {
    pub(crate) counts: Counts,
    /// Requests and their attempts by when they were first sent relative to the trigger.
    pub(crate) phases: PhaseTally,
    pub(crate) timeline: [BucketCounter; series::COUNTED],
    pub(crate) queue_levels: BucketMax,
    /// Prompt successes (within `good_within`) counted in the bucket their request was first sent in: the share
    /// of each bucket's offered work that was done in good time, for `recovery_ms`.
    pub(crate) succeeded_by_send: BucketCounter,
    /// New requests per second, for the request peak.
    pub(crate) offered_per_second: BucketCounter,
    pub(crate) latency: LatencyHistogram,
    pub(crate) wait_nanos: f64,
    pub(crate) waits: u64,
    pub(crate) busy_nanos: f64,
}

#[derive(Clone, Default)]
pub(crate) struct Counts {
    pub(crate) refused: u64,
    pub(crate) rejected_locally: u64,
    pub(crate) calls: u64,
    pub(crate) requests: u64,
    pub(crate) retries: u64,
    pub(crate) succeeded: u64,
    pub(crate) gave_up: u64,
    pub(crate) failed_permanently: u64,
    pub(crate) timeouts: u64,
    pub(crate) rejected: u64,
    pub(crate) throttled: u64,
    pub(crate) server_errors: u64,
    pub(crate) duplicates: u64,
    pub(crate) deduplicated: u64,
    pub(crate) measured_successes: u64,
}

impl Tally {
    pub(crate) fn new(bucket: SimDuration) -> Self {
        Tally {
            counts: Counts::default(),
            phases: PhaseTally::default(),
            timeline: std::array::from_fn(|_| BucketCounter::new(bucket)),
            queue_levels: BucketMax::new(bucket),
            succeeded_by_send: BucketCounter::new(bucket),
            offered_per_second: BucketCounter::new(SimDuration::from_secs(1)),
            latency: LatencyHistogram::default(),
            wait_nanos: 0.0,
            waits: 0,
            busy_nanos: 0.0,
        }
    }

    /// A new request of `phase`, first sent at `now`.
    #[inline]
    pub(crate) fn offered(&mut self, phase: Phase, now: SimTime) {
        self.phases.request(phase);
        self.counts.requests += 1;
        self.timeline[series::OFFERED].record(now);
        self.offered_per_second.record(now);
    }

    /// An attempt reaches the server at `now`: a call, in its request's phase when the request is known.
    #[inline]
    pub(crate) fn arrived(&mut self, phase: Option<Phase>, now: SimTime) {
        self.counts.calls += 1;
        if let Some(phase) = phase {
            self.phases.attempt(phase);
        }
        self.timeline[series::CALLS].record(now);
    }

    /// The server refused an attempt unworked at `now`: a full queue's or a fail-fast window's 503, or a reset.
    #[inline]
    pub(crate) fn rejected(&mut self, now: SimTime) {
        self.counts.rejected += 1;
        self.timeline[series::REJECTED].record(now);
    }

    /// A worker starts, at `now`, an attempt queued at `queued_at`, for `service`.
    #[inline]
    pub(crate) fn service_started(&mut self, config: &ServerConfig, queued_at: SimTime, now: SimTime, service: SimDuration) {
        if queued_at >= config.workload.warmup {
            self.wait_nanos += (now - queued_at).as_nanos_f64();
            self.waits += 1;
        }
        self.busy_nanos += service.as_nanos_f64();
    }

    /// A request of `phase`, first sent at `sent_at` (`measured`: after the warm-up), succeeded at `now`.
    #[inline]
    pub(crate) fn succeeded(&mut self, config: &ServerConfig, phase: Phase, sent_at: SimTime, measured: bool, now: SimTime) {
        let latency = now - sent_at;
        self.phases.ended(phase, Some(latency));
        self.counts.succeeded += 1;
        self.timeline[series::GOODPUT].record(now);
        if latency <= config.good_within {
            self.succeeded_by_send.record(sent_at);
        }
        if measured {
            self.latency.record(latency);
        }
        let in_window = config.workload.arrivals.is_burst() || now <= config.workload.duration;
        if now >= config.workload.warmup && in_window {
            self.counts.measured_successes += 1;
        }
    }

    /// The run's metrics and timeline, once it ended at `end` after `events` events.
    pub(crate) fn finish(
        self,
        config: &ServerConfig,
        trigger: Option<Trigger>,
        spans: Vec<Span>,
        events: u64,
        end: SimTime,
    ) -> RunOutput {
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
        metrics[metric::WAIT_MEAN_MS] =
            if self.waits == 0 { f64::NAN } else { ms(self.wait_nanos / self.waits as f64) };
        let end_nanos = end.as_nanos() as f64;
        metrics[metric::UTILISATION] = match config.workers {
            Some(workers) if end_nanos > 0.0 => self.busy_nanos / (f64::from(workers) * end_nanos),
            _ => f64::NAN,
        };
        let window_end = if config.workload.arrivals.is_burst() { end } else { config.workload.duration };
        let window_nanos = (window_end - config.workload.warmup).as_nanos() as f64;
        metrics[metric::GOODPUT_RPS] =
            if window_nanos > 0.0 { counts.measured_successes as f64 / (window_nanos / 1e9) } else { f64::NAN };
        metrics[metric::COMPLETION_MS] = end.as_millis_f64();
        metrics[metric::PEAK_CALLS_PER_BUCKET] = f64::from(self.timeline[series::CALLS].peak());
        let synchrony = self.timeline[series::RETRIES].synchrony();
        metrics[metric::RETRY_PEAK_PER_BUCKET] = synchrony.map_or(f64::NAN, |s| f64::from(s.peak));
        metrics[metric::RETRY_PEAK_TO_MEAN] = synchrony.map_or(f64::NAN, |s| s.peak_to_mean);
        metrics[metric::RETRY_DISPERSION] = synchrony.map_or(f64::NAN, |s| s.dispersion);
        metrics[metric::EVENTS] = events as f64;
        metrics[metric::PEAK_RPS] = f64::from(self.offered_per_second.peak());
        metrics[metric::REQUEST_PEAK_TO_MEAN] = match &config.workload.arrivals {
            Arrivals::Burst { .. } => f64::NAN,
            Arrivals::Periodic { hosts, timer } => {
                metrics[metric::PEAK_RPS] / (f64::from(*hosts) / timer.period.as_secs_f64())
            }
            Arrivals::Open { .. } | Arrivals::Closed { .. } => {
                let mean = counts.requests as f64 / (config.workload.duration - SimTime::ZERO).as_secs_f64();
                if mean > 0.0 { metrics[metric::PEAK_RPS] / mean } else { f64::NAN }
            }
        };
        // Without a trigger there is no window: NaN, and the columns are left out.
        let [during, after] = match trigger {
            Some(_) => self.phases.metrics(),
            None => [PhaseMetrics { success_rate: f64::NAN, amplification: f64::NAN, latency_p99_ms: f64::NAN }; 2],
        };
        metrics[metric::SUCCESS_RATE_DURING] = during.success_rate;
        metrics[metric::SUCCESS_RATE_AFTER] = after.success_rate;
        metrics[metric::AMPLIFICATION_DURING] = during.amplification;
        metrics[metric::AMPLIFICATION_AFTER] = after.amplification;
        metrics[metric::LATENCY_P99_MS_DURING] = during.latency_p99_ms;
        metrics[metric::LATENCY_P99_MS_AFTER] = after.latency_p99_ms;
        self.verdict(config).write(&mut metrics, metric::VERDICT);
        let mut columns: Vec<(usize, &[u32])> = self.timeline.iter().map(BucketCounter::counts).enumerate().collect();
        columns.push((series::QUEUE_MAX, self.queue_levels.maxima()));
        let timeline = lay_out_timeline(series::COUNT, &columns);
        let mut highlights: Vec<(SimTime, SimTime)> =
            config.faults.windows().iter().map(|window| (window.start, window.end)).collect();
        if let (Some(start), Some(end)) = (config.trigger_start, config.trigger_end)
            && !highlights.contains(&(start, end))
        {
            highlights.push((start, end));
        }
        RunOutput {
            metrics,
            timeline,
            events,
            truncated: false,
            latency: Some(self.latency.sparse()),
            highlights,
            spans,
        }
    }

    /// The run's stuck-state verdict ([`Verdict`]): in-time successes by the bucket their request was first sent
    /// in, against the requests offered in it. Nothing to judge for a burst, which offers nothing after t = 0.
    fn verdict(&self, config: &ServerConfig) -> Verdict {
        let trigger_end = if config.workload.arrivals.is_burst() { None } else { config.trigger_end };
        let arrivals_end = config.workload.duration;
        let offered = &self.timeline[series::OFFERED];
        Verdict::judge(offered, &self.succeeded_by_send, trigger_end, arrivals_end, config.verdict)
    }
}
