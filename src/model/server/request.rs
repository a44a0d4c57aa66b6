//! The server model's request records: a small one every attempt reads, and the extras only limiters, client
//! clocks and traces read, in a table of their own that stays empty without them. With a million clients the
//! records outgrow the caches, and the first load of a record is most of an event's cost (docs/performance.md).

use super::config::ServerConfig;
use super::run::ServerEvent;
use crate::metrics::Phase;
use crate::model::trace::OpenAttempt;
use crate::policy::limiters::Permit;
use super::params::HintHeader;
use crate::policy::{BackoffMemory, ClientClock, PushbackPolicy};
use crate::time::{SimDuration, SimTime};

/// Memory per request alive (the plan's memory estimate): its record (and extras, if `config` keeps them), its
/// free-list entry, and its pending events. Without a timeout a request's events follow one another: one. With a
/// timeout, attempts abandoned at their timeout stay at the server beside the retries: four, and a deadline
/// (docs/performance.md#memory). A trace's extras are left out, traces being small.
pub(super) fn bytes_per_request(config: &ServerConfig) -> u64 {
    let extras = if keeps_extras(config, false) { size_of::<RequestExtras>() } else { 0 };
    let (pending_events, deadline) = match config.timeout {
        Some(_) => (4, size_of::<(SimTime, u32, u32)>()),
        None => (1, 0),
    };
    (size_of::<Request>() + extras + size_of::<u32>() + pending_events * size_of::<(u64, ServerEvent)>() + deadline)
        as u64
}

/// Memory per request that a traced run adds: the extras it keeps for the trace (if it keeps none otherwise), and
/// the tracer's record of the owner's attempt in flight.
pub(super) fn traced_bytes_per_request(config: &ServerConfig) -> u64 {
    let extras = if keeps_extras(config, false) { 0 } else { size_of::<RequestExtras>() };
    (extras + size_of::<OpenAttempt>()) as u64
}

/// Whether a run needs its requests' [`RequestExtras`].
pub(super) fn keeps_extras(config: &ServerConfig, trace: bool) -> bool {
    let reads_pushback = config.retry.pushback == PushbackPolicy::Honour && config.hint_header != HintHeader::RetryAfter;
    config.limiter.is_some() || config.clock.is_some() || trace || reads_pushback
}

#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Request {
    /// When the request was first sent, relative to the trigger (for the windowed metrics).
    pub(super) phase: Phase,
    pub(super) client: u32,
    pub(super) sent_at: SimTime,
    /// The token of the attempt the client waits for (or, when its retries are sent as they are decided, will send
    /// once its sleep ends); 0 while it sleeps otherwise, and once it is done.
    pub(super) token: u32,
    pub(super) failed_attempts: u32,
    pub(super) memory: BackoffMemory,
    pub(super) measured: bool,
    /// The client still wants an answer.
    pub(super) open: bool,
    /// Attempts on their way to, or held by, the server. The slot is reused only when this is 0 and the client
    /// is done, so the server can always tell which request an attempt belongs to.
    pub(super) at_server: u32,
    /// Times the server applied this request's side effect.
    pub(super) applied: u32,
    /// With `on_timeout = "cancel"`: the token of this request's attempt waiting in the queue (0: none). A
    /// request has at most one such attempt, because its timeout cancels it before a retry is sent.
    pub(super) queued_token: u32,
}

// Every event about an attempt reads this record: keep it within 48 bytes.
const _: () = assert!(size_of::<Request>() <= 48);

/// The part of a request only a retry limiter, a client clock or a trace reads.
#[derive(Clone, Copy, Debug, Default)]
struct RequestExtras {
    /// The limiter's permit for the attempt in flight (`None` for a first try).
    permit: Option<Permit>,
    /// The backoff slept before the attempt in flight (for traces).
    slept: SimDuration,
    /// The clock its client waits by.
    clock: ClientClock,
    /// Failed attempts when an honoured pushback last restarted the backoff (0: never).
    restarted_at: u32,
}

/// The requests' extras, indexed by slot like the records; empty, and every read a default, when the run keeps
/// none (see [`keeps_extras`]).
#[derive(Clone)]
pub(super) struct ExtrasTable {
    rows: Vec<RequestExtras>,
    kept: bool,
}

impl ExtrasTable {
    pub(super) fn new(kept: bool) -> Self {
        ExtrasTable { rows: Vec::new(), kept }
    }

    /// Starts the extras of a new request in `slot` (one past the last slot, or a reused one).
    pub(super) fn open(&mut self, slot: u32, clock: ClientClock) {
        if !self.kept {
            return;
        }
        let extras = RequestExtras { clock, ..RequestExtras::default() };
        match self.rows.get_mut(slot as usize) {
            Some(row) => *row = extras,
            None => self.rows.push(extras),
        }
    }

    pub(super) fn permit(&self, slot: u32) -> Option<Permit> {
        self.rows.get(slot as usize).and_then(|extras| extras.permit)
    }

    pub(super) fn set_permit(&mut self, slot: u32, permit: Permit) {
        if let Some(extras) = self.rows.get_mut(slot as usize) {
            extras.permit = Some(permit);
        }
    }

    pub(super) fn take_permit(&mut self, slot: u32) -> Option<Permit> {
        self.rows.get_mut(slot as usize).and_then(|extras| extras.permit.take())
    }

    pub(super) fn slept(&self, slot: u32) -> SimDuration {
        self.rows.get(slot as usize).map_or(SimDuration::ZERO, |extras| extras.slept)
    }

    pub(super) fn set_slept(&mut self, slot: u32, slept: SimDuration) {
        if let Some(extras) = self.rows.get_mut(slot as usize) {
            extras.slept = slept;
        }
    }

    pub(super) fn restarted_at(&self, slot: u32) -> u32 {
        self.rows.get(slot as usize).map_or(0, |extras| extras.restarted_at)
    }

    pub(super) fn set_restarted_at(&mut self, slot: u32, failed_attempts: u32) {
        if let Some(extras) = self.rows.get_mut(slot as usize) {
            extras.restarted_at = failed_attempts;
        }
    }

    pub(super) fn clock(&self, slot: u32) -> ClientClock {
        self.rows.get(slot as usize).map_or_else(ClientClock::default, |extras| extras.clock)
    }
}
