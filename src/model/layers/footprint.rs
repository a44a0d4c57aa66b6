//! What one run of the layered model holds in memory, for the plan's estimate (`src/budget.rs`): a limiter per
//! user client (and one per service), the callers' clocks, and the calls and jobs of the user requests alive at
//! once, each reaching every service of the graph as often as the fan-outs above it multiply.

use super::LayersConfig;
use super::records::{Call, Job};
use super::run::LayerEvent;
use crate::model::Footprint;
use crate::policy::ClientClock;
use crate::policy::limiters::Limiter;
use crate::time::SimDuration;

pub(super) fn footprint(config: &LayersConfig) -> Footprint {
    let rate = config.arrivals.max_rate().max(f64::MIN_POSITIVE);
    let horizon = SimDuration::from_nanos_f64(config.requests as f64 / rate * 1e9);
    // Requests alive at once: all of them, or as many as arrive while one lives, if the user's policy bounds that.
    let alive = match request_lifetime(config) {
        Some(lifetime) => config.requests.min((rate * lifetime.as_secs_f64()).ceil() as u64 + 1),
        None => config.requests,
    };
    let limiter_slot = size_of::<Option<Limiter>>() as u64;
    let heap = |limiter: &Option<Limiter>| limiter.as_ref().map_or(0, |l| l.bytes() - size_of::<Limiter>() as u64);
    let clients = config.clients as u64;
    let services = config.services.len() as u64;
    let limiters = clients * (limiter_slot + heap(&config.user.limiter))
        + config.services.iter().map(|s| limiter_slot + heap(&s.policy.limiter)).sum::<u64>();
    let clocks = if config.clock.is_some() { (clients + services) * size_of::<ClientClock>() as u64 } else { 0 };
    Footprint {
        horizon: Some(horizon),
        records: alive.saturating_mul(calls_per_request(config)),
        bytes_per_record: BYTES_PER_CALL,
        other_bytes: limiters + clocks,
        trace_spans: None,
        trace_bytes_per_record: 0,
    }
}

/// Per call alive: its record, the jobs of up to two copies in flight (a first try and its hedge, or an
/// abandoned attempt beside its retry), their free-list entries, and three pending events.
const BYTES_PER_CALL: u64 =
    (size_of::<Call>() + 2 * size_of::<Job>() + 3 * size_of::<u32>() + 3 * size_of::<(u64, LayerEvent)>()) as u64;

/// Calls one user request makes to the services: 1 to the entry, and to each service below the calls reaching
/// its callers times their fan-out (services are listed callers first).
fn calls_per_request(config: &LayersConfig) -> u64 {
    let mut reach = vec![0_u64; config.services.len()];
    if let Some(entry) = reach.first_mut() {
        *entry = 1;
    }
    for (index, service) in config.services.iter().enumerate() {
        for &callee in &service.calls {
            let calls = reach[index].saturating_mul(u64::from(service.fanout));
            if let Some(slot) = reach.get_mut(callee as usize) {
                *slot = slot.saturating_add(calls);
            }
        }
    }
    reach.iter().copied().fold(0, u64::saturating_add).max(1)
}

/// The longest a user request can live, when the user's client bounds it: each attempt ends by its timeout, and
/// there are `attempts` of them with a sleep of at most the cap (stretched by jitter) between. `None` without a
/// timeout, or with a limiter (whose waits have no bound of their own).
fn request_lifetime(config: &LayersConfig) -> Option<SimDuration> {
    let user = &config.user;
    let timeout = user.timeout?;
    if user.limiter.is_some() {
        return None;
    }
    let backoff = &user.backoff.backoff;
    let sleep = SimDuration::from_nanos_f64(
        backoff.cap.max(backoff.floor).as_nanos_f64() * (1.0 + backoff.jitter_fraction.max(0.0)),
    ) + backoff.jitter;
    let attempts = u64::from(user.attempts.max(1));
    let nanos = timeout.as_nanos().saturating_mul(attempts).saturating_add(sleep.as_nanos().saturating_mul(attempts - 1));
    Some(SimDuration::from_nanos(nanos))
}
