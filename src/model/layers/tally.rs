//! What a layers run counts as it goes (attempts per service and per caller, user requests and how they ended,
//! per-bucket timelines), and the metrics, timeline and verdict it reports when it ends.

use super::records::Kind;
use super::{LayersConfig, MAX_LAYERS, metric, series};
use crate::metrics::{BucketCounter, LatencyHistogram, Phase, PhaseTally, Trigger, lay_out_timeline};
use crate::model::RunOutput;
use crate::model::trace::Span;
use crate::model::verdict::VerdictTally;
use crate::time::{SimDuration, SimTime};

/// The measurements of one run.
pub(super) struct Tally {
    /// User requests sent, those that ended (succeeded or failed for good), and those that succeeded.
    pub(super) issued: u64,
    pub(super) finished: u64,
    pub(super) succeeded: u64,
    /// User requests and their attempts by when the request was sent relative to the trigger.
    pub(super) phases: PhaseTally,
    /// Per service: attempts sent to it, and of them the retries and the hedges.
    pub(super) arrivals: [u64; MAX_LAYERS],
    pub(super) retries_at: [u64; MAX_LAYERS],
    pub(super) hedges_at: [u64; MAX_LAYERS],
    /// Per phase (during the trigger, then after it), per service: attempts sent to it.
    pub(super) arrivals_by_phase: [[u64; MAX_LAYERS]; 2],
    /// Per caller: its attempts by kind (its first tries also bound its ratio budget and its hedges).
    pub(super) callers: [CallerCounts; MAX_LAYERS + 1],
    /// Retries the caller's budget or limiter refused, attempts its limiter would not send, attempts timed out.
    pub(super) refused: u64,
    pub(super) rejected_locally: u64,
    pub(super) timeouts: u64,
    /// Time from sending a user request to its success.
    pub(super) latency: LatencyHistogram,
    pub(super) timeline: [BucketCounter; series::COUNT],
    /// User requests by the bucket they were sent in, for the stuck-state verdict.
    pub(super) verdict: VerdictTally,
}

/// Counts per caller (index 0: the user's client; 1 + i: service i).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CallerCounts {
    pub(super) first_tries: u64,
    pub(super) retries: u64,
    pub(super) hedges: u64,
}

impl Tally {
    pub(super) fn new(config: &LayersConfig, bucket: SimDuration) -> Self {
        Tally {
            issued: 0,
            finished: 0,
            succeeded: 0,
            phases: PhaseTally::default(),
            arrivals: [0; MAX_LAYERS],
            retries_at: [0; MAX_LAYERS],
            hedges_at: [0; MAX_LAYERS],
            arrivals_by_phase: [[0; MAX_LAYERS]; 2],
            callers: [CallerCounts::default(); MAX_LAYERS + 1],
            refused: 0,
            rejected_locally: 0,
            timeouts: 0,
            latency: LatencyHistogram::default(),
            timeline: std::array::from_fn(|_| BucketCounter::new(bucket)),
            // In good time: within the user client's timeout, or at any time without one.
            verdict: VerdictTally::new(bucket, config.user.timeout.unwrap_or(SimDuration::MAX)),
        }
    }

    /// A user request of `phase` is sent at `now`.
    pub(super) fn user_request(&mut self, phase: Phase, now: SimTime) {
        self.issued += 1;
        self.verdict.offered(now);
        self.phases.request(phase);
    }

    /// `caller` sends an attempt of `kind` to `service` (a bottom one if `bottom`) at `now`, for a user request
    /// of `phase`.
    pub(super) fn attempt(&mut self, caller: u8, service: u8, kind: Kind, phase: Phase, bottom: bool, now: SimTime) {
        let counts = &mut self.callers[caller as usize];
        match kind {
            Kind::First => counts.first_tries += 1,
            Kind::Retry => {
                counts.retries += 1;
                self.retries_at[service as usize] += 1;
            }
            Kind::Hedge => {
                counts.hedges += 1;
                self.hedges_at[service as usize] += 1;
            }
        }
        self.arrivals[service as usize] += 1;
        self.phases.attempt(phase);
        match phase {
            Phase::Before => {}
            Phase::During => self.arrivals_by_phase[0][service as usize] += 1,
            Phase::After => self.arrivals_by_phase[1][service as usize] += 1,
        }
        self.timeline[series::CALLS].record(now);
        if bottom {
            self.timeline[series::BOTTOM_CALLS].record(now);
        }
    }

    /// The user request of `phase` sent at `started` has its final result at `now`.
    pub(super) fn user_request_ended(&mut self, phase: Phase, started: SimTime, now: SimTime, succeeded: bool) {
        self.finished += 1;
        self.phases.ended(phase, succeeded.then(|| now - started));
        if succeeded {
            self.verdict.succeeded(started, now);
            self.succeeded += 1;
            self.latency.record(now - started);
            self.timeline[series::GOODPUT].record(now);
        }
    }

    /// The run's metrics and timeline, once it ended after `events` events.
    pub(super) fn finish(
        self,
        config: &LayersConfig,
        trigger: Option<Trigger>,
        spans: Vec<Span>,
        events: u64,
    ) -> RunOutput {
        let requests = self.issued.max(1) as f64;
        let layers = config.services.len();
        let per_request = |n: u64| n as f64 / requests;
        let mut metrics = vec![f64::NAN; metric::COUNT];
        metrics[metric::REQUESTS] = self.issued as f64;
        metrics[metric::SUCCESS_RATE] =
            if self.finished == 0 { f64::NAN } else { self.succeeded as f64 / self.finished as f64 };
        metrics[metric::AMPLIFICATION] = per_request(self.arrivals.iter().sum());
        let bottom: u64 = (0..layers).filter(|&s| config.is_bottom(s)).map(|s| self.arrivals[s]).sum();
        metrics[metric::BOTTOM_CALLS_PER_REQUEST] = per_request(bottom);
        metrics[metric::RETRIES_PER_REQUEST] = per_request(self.callers.iter().map(|c| c.retries).sum());
        metrics[metric::HEDGES_PER_REQUEST] = per_request(self.callers.iter().map(|c| c.hedges).sum());
        metrics[metric::TIMEOUTS_PER_REQUEST] = per_request(self.timeouts);
        metrics[metric::REFUSED_PER_REQUEST] = per_request(self.refused);
        metrics[metric::REJECTED_LOCALLY_PER_REQUEST] = per_request(self.rejected_locally);
        metrics[metric::LATENCY_P50_MS] = self.latency.quantile_nanos(0.5) / 1e6;
        metrics[metric::LATENCY_P99_MS] = self.latency.quantile_nanos(0.99) / 1e6;
        metrics[metric::EVENTS] = events as f64;
        for layer in 0..layers {
            metrics[metric::AMPLIFICATION_L1 + layer] = per_request(self.arrivals[layer]);
            metrics[metric::RETRIES_PER_REQUEST_L1 + layer] = per_request(self.retries_at[layer]);
            metrics[metric::HEDGES_PER_REQUEST_L1 + layer] = per_request(self.hedges_at[layer]);
        }
        if trigger.is_some() {
            let [during, after] = self.phases.metrics();
            metrics[metric::SUCCESS_RATE_DURING] = during.success_rate;
            metrics[metric::SUCCESS_RATE_AFTER] = after.success_rate;
            metrics[metric::AMPLIFICATION_DURING] = during.amplification;
            metrics[metric::AMPLIFICATION_AFTER] = after.amplification;
            metrics[metric::LATENCY_P99_MS_DURING] = during.latency_p99_ms;
            metrics[metric::LATENCY_P99_MS_AFTER] = after.latency_p99_ms;
            for layer in 0..layers {
                let [during, after] = self.arrivals_by_phase.map(|arrivals| arrivals[layer]);
                metrics[metric::AMPLIFICATION_L1_DURING + layer] = self.phases.per_request(Phase::During, during);
                metrics[metric::AMPLIFICATION_L1_AFTER + layer] = self.phases.per_request(Phase::After, after);
            }
        }
        let verdict = self.verdict.judge(trigger.map(|trigger| trigger.end), config.verdict);
        verdict.write(&mut metrics, metric::VERDICT);
        let columns: Vec<(usize, &[u32])> = self.timeline.iter().map(BucketCounter::counts).enumerate().collect();
        let timeline = lay_out_timeline(series::COUNT, &columns);
        let highlights =
            config.services.iter().flat_map(|s| s.faults.windows().iter().map(|w| (w.start, w.end))).collect();
        let latency = Some(self.latency.sparse());
        RunOutput { metrics, timeline, events, latency, highlights, spans, ..RunOutput::default() }
    }
}
