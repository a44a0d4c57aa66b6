//! What one run of the channel model holds in memory, for the plan's estimate (`src/budget.rs`): every station's
//! counters, and what its protocol keeps per station (Ethernet's and Poisson slotted ALOHA's waiting heap, turn,
//! failures and backoff memory; the latter's frame queues, which hold at most every frame that arrives).

use std::collections::VecDeque;

use super::{ChannelConfig, Population, Protocol};
use crate::model::Footprint;
use crate::policy::BackoffMemory;
use crate::time::SimDuration;

/// Per station, whatever the protocol: its successes in all and in the current timeline bucket.
const COUNTERS: usize = size_of::<u64>() + size_of::<u32>();
/// Per station in a heap keyed by time, with its place in a slot's senders, failures and backoff memory.
const CONTENDER: usize =
    size_of::<(u64, usize)>() + size_of::<usize>() + size_of::<u32>() + size_of::<BackoffMemory>();

pub(super) fn footprint(config: &ChannelConfig) -> Footprint {
    let horizon = SimDuration::from_nanos(config.slots.saturating_mul(config.slot.as_nanos()));
    let stations = u64::from(config.stations);
    let (per_station, frames) = match (config.protocol, config.population) {
        // A turn's start and the backoff slept before it.
        (Protocol::Ethernet, _) => (COUNTERS + CONTENDER + 2 * size_of::<SimDuration>(), 0),
        // A frame queue (its first block of 4 included), the slot it may send in; the frames queued, at most
        // every arrival (or the queue limits), 8 bytes each with room to grow.
        (Protocol::SlottedAloha, Population::Poisson | Population::Bernoulli) => {
            let queue = size_of::<VecDeque<u64>>() + 4 * size_of::<u64>() + 16;
            let arrivals = (config.arrival_rate * config.slots as f64).ceil() as u64;
            let limit = config.queue_limit.map_or(u64::MAX, |limit| stations.saturating_mul(u64::from(limit)));
            (COUNTERS + CONTENDER + queue + size_of::<u64>(), arrivals.min(limit).saturating_mul(16))
        }
        _ => (COUNTERS, 0),
    };
    Footprint {
        horizon: Some(horizon),
        records: stations,
        bytes_per_record: per_station as u64,
        other_bytes: frames,
        trace_spans: None,
        trace_bytes_per_record: 0,
    }
}
