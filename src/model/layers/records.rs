//! The records the layers simulation keeps per call, per attempt in flight and per job, and what a service
//! answers.

use crate::metrics::Phase;
use crate::policy::BackoffMemory;
use crate::policy::limiters::Permit;
use crate::time::{SimDuration, SimTime};

/// What a service answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Status {
    Ok,
    Failed,
    /// Refused unworked because its queue was full: the overload signal limiters such as AWS adaptive mode and
    /// Google's adaptive throttling react to.
    Throttled,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    First,
    Retry,
    Hedge,
}

/// An attempt in flight: its tag, the job handling it and when it was sent.
#[derive(Clone, Copy, Debug)]
pub(super) struct InFlight {
    pub(super) tag: u32,
    pub(super) job: u32,
    pub(super) sent: SimTime,
    /// The limiter's permit this copy was sent with (a retry's; never a hedge's).
    pub(super) permit: Option<Permit>,
    /// For traces: a hedged copy, and the backoff slept before it.
    pub(super) hedge: bool,
    pub(super) slept: SimDuration,
}

/// One caller's call to one service, across its attempts.
#[derive(Clone, Copy, Debug)]
pub(super) struct Call {
    /// The job this call serves (its caller's attempt), `NONE` for a user request.
    pub(super) parent: u32,
    /// That attempt's tag (0 for a user request), which names the parent of this call's spans in traces.
    pub(super) parent_tag: u32,
    /// The next call of the same parent job (the parent's children form a list).
    pub(super) next_sibling: u32,
    /// 0 for the user's client, else 1 + the calling service's index.
    pub(super) caller: u8,
    pub(super) service: u8,
    pub(super) done: bool,
    pub(super) failed_attempts: u32,
    pub(super) memory: BackoffMemory,
    pub(super) started: SimTime,
    /// Which limiter the caller uses (see [`LayersRun::limiters`]).
    pub(super) limiter: u32,
    /// A retry's permit from the limiter, until the retry is sent (then its copy carries it).
    pub(super) permit: Option<Permit>,
    /// The pending backoff timer's tag.
    pub(super) timer: u32,
    /// The user request this call is part of (for traces), and the backoff it is sleeping.
    pub(super) request: u32,
    /// When that user request was sent, relative to the trigger.
    pub(super) phase: Phase,
    pub(super) slept: SimDuration,
    pub(super) in_flight: [Option<InFlight>; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum JobState {
    /// On the wire.
    Pending,
    /// In the service's queue.
    Queued,
    Working,
    /// Waiting for the calls it made to the services below.
    Waiting,
}

/// One attempt as the service handling it sees it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Job {
    pub(super) call: u32,
    pub(super) tag: u32,
    pub(super) service: u8,
    pub(super) state: JobState,
    pub(super) cancelled: bool,
    /// A hedged copy: its work is drawn from the hedges' stream, so hedging shifts no first copy's.
    pub(super) hedge: bool,
    /// Calls made and not yet finished.
    pub(super) pending: u32,
    pub(super) first_child: u32,
}
