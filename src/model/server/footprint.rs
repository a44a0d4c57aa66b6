//! What one run of the server model holds in memory, for the plan's estimate (`src/budget.rs`): its requests
//! alive at once (a periodic workload's jobs that outlast their period overlap), and what it keeps per client
//! whatever they do (a limiter per client instance, clocks, periodic timers, closed clients' draw counters).

use super::config::ServerConfig;
use super::request;
use crate::model::Footprint;
use crate::policy::ClientClock;
use crate::time::{SimDuration, SimTime};
use crate::workload::Arrivals;

pub(super) fn footprint(config: &ServerConfig) -> Footprint {
    let (records, requests) = match &config.workload.arrivals {
        Arrivals::Periodic { hosts, timer } => {
            let runs = runs_per_host(config, timer.period, timer.first_at);
            let slack = timer.randomized_delay + timer.accuracy;
            let all = u64::from(*hosts) * runs;
            // A request lives out its lifetime, or longer while the server holds an attempt of it (queued or in
            // service: at most the queue's limit and the workers).
            let overlapping = match (job_lifetime(config), config.queue_limit) {
                (Some(lifetime), Some(queue_limit)) => {
                    let per_host = (lifetime + slack).as_nanos().div_ceil(timer.period.as_nanos()) + 1;
                    let held = queue_limit.saturating_add(u64::from(config.workers.unwrap_or(0)));
                    all.min(u64::from(*hosts).saturating_mul(per_host).saturating_add(held))
                }
                _ => all,
            };
            (overlapping, Some(all))
        }
        Arrivals::Closed { .. } => (config.workload.peak_requests(), None),
        Arrivals::Burst { .. } | Arrivals::Open { .. } => {
            let requests = config.workload.peak_requests();
            (requests, Some(requests))
        }
    };
    let clients = u64::from(config.workload.arrivals.clients().unwrap_or(0));
    let limiters = config.limiter.as_ref().map_or(0, |limiter| limiter.bytes() * u64::from(config.limiter_instances));
    let clocks = if config.clock.is_some() { clients * size_of::<ClientClock>() as u64 } else { 0 };
    let per_client = match &config.workload.arrivals {
        // Each host's perturbation and the number of its next run.
        Arrivals::Periodic { .. } => 16,
        // Each client's count of think times drawn.
        Arrivals::Closed { .. } => 4,
        Arrivals::Burst { .. } | Arrivals::Open { .. } => 0,
    };
    // The server's queue: an entry per attempt waiting (at most its limit, and with timeouts an abandoned attempt
    // beside each retry), in a ring that grows by doubling.
    let attempts_alive = records.saturating_mul(if config.timeout.is_some() { 4 } else { 1 });
    let queue = config.queue_limit.map_or(attempts_alive, |limit| limit.min(attempts_alive));
    let queue_bytes = queue.saturating_mul(2 * size_of::<(u32, u32, SimTime)>() as u64);
    Footprint {
        horizon: config.workload.horizon(),
        records,
        bytes_per_record: request::bytes_per_request(config),
        other_bytes: limiters + clocks + clients * per_client + queue_bytes,
        trace_spans: requests.zip(config.retry.max_attempts).map(|(requests, n)| requests * u64::from(n)),
        trace_bytes_per_record: request::traced_bytes_per_request(config),
    }
}

/// Runs k = 0, 1, … of a host start at first_at + k·P, before the workload's end.
fn runs_per_host(config: &ServerConfig, period: SimDuration, first_at: SimDuration) -> u64 {
    let span = (config.workload.duration - SimTime::ZERO).as_nanos().saturating_sub(first_at.as_nanos());
    span.saturating_sub(1) / period.as_nanos().max(1) + 1
}

/// The longest a request can stay alive, when the client's policy bounds it: every attempt ends by its timeout,
/// and the attempts stop at `max_attempts` (each sleep at most the cap, stretched by jitter, or a Retry-After
/// hint) or at the deadline. `None` without a timeout, or with a limiter (whose waits have no bound of their own).
fn job_lifetime(config: &ServerConfig) -> Option<SimDuration> {
    let timeout = config.timeout?;
    if config.limiter.is_some() {
        return None;
    }
    let backoff = &config.retry.backoff;
    let sleep = SimDuration::from_nanos_f64(
        backoff.cap.max(backoff.floor).as_nanos_f64() * (1.0 + backoff.jitter_fraction.max(0.0)),
    ) + backoff.jitter;
    let sleep = sleep.max(config.overload_retry_after.unwrap_or(SimDuration::ZERO));
    let by_attempts = config.retry.max_attempts.map(|n| {
        let n = u64::from(n.max(1));
        SimDuration::from_nanos(timeout.as_nanos().saturating_mul(n).saturating_add(sleep.as_nanos().saturating_mul(n - 1)))
    });
    let by_deadline = config.retry.deadline.map(|deadline| deadline + timeout);
    match (by_attempts, by_deadline) {
        (Some(a), Some(d)) => Some(a.min(d)),
        (a, d) => a.or(d),
    }
}
