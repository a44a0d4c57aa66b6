//! Spans for trace export: one per attempt of one replicate, recorded only when [`RunSettings::trace`] is set
//! (models check one flag per attempt otherwise).
//!
//! [`RunSettings::trace`]: super::RunSettings::trace

use crate::time::{SimDuration, SimTime};

/// A trace keeps at most this many spans (about 75 MB of JSON); later attempts are left out.
pub const MAX_TRACE_SPANS: usize = 250_000;

/// One attempt, from when it left its client to when the client learned how it ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Whose operation it belongs to: the client (OCC, closed workloads), the request (open workloads, the
    /// layered model's user requests) or the station (channel).
    pub owner: u32,
    /// The service it went to (layered model; 0 elsewhere).
    pub layer: u8,
    pub start: SimTime,
    pub end: SimTime,
    /// 1 for the first try.
    pub attempt: u32,
    /// How it ended: `success`, `conflict`, `error`, `timeout`, `throttled`, `collision`, `cancelled`, ….
    pub outcome: &'static str,
    /// The HTTP-like status it was answered with, 0 for none.
    pub status: u16,
    /// The backoff slept before it (0 for a first try).
    pub slept: SimDuration,
    /// A hedged copy rather than a first try or retry.
    pub hedge: bool,
    /// Its own id within the run (the layered model's attempt tag), or 0 for spans that need none: the exporter
    /// numbers those.
    pub id: u32,
    /// The id of the span it was sent under (the caller's attempt, in the layered model), or 0: the owner's
    /// operation itself.
    pub parent: u32,
    /// Where the model sees it (the server model): when it reached the server, and when a worker began and ended
    /// its service, if that happened before the attempt ended; `None` otherwise.
    pub at_server: Option<AtServer>,
}

/// An attempt's time at a server: arrival, then the span of its service if a worker took it up in time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AtServer {
    pub arrived: SimTime,
    pub service: Option<(SimTime, SimTime)>,
}

/// The attempt in flight of one owner, as the tracer keeps it until the attempt ends.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OpenAttempt {
    start: SimTime,
    slept: SimDuration,
    at_server: Option<AtServer>,
}

/// Per-owner bookkeeping for models whose owners have one attempt at a time: when the attempt in flight began
/// and the backoff slept before it.
#[derive(Clone, Debug, Default)]
pub struct Tracer {
    pub spans: Vec<Span>,
    open: Vec<OpenAttempt>,
}

impl Tracer {
    /// An attempt of `owner` leaves at `start` after sleeping `slept`.
    pub fn begin(&mut self, owner: u32, start: SimTime, slept: SimDuration) {
        let index = owner as usize;
        if self.open.len() <= index {
            let none = OpenAttempt { start: SimTime::ZERO, slept: SimDuration::ZERO, at_server: None };
            self.open.resize(index + 1, none);
        }
        self.open[index] = OpenAttempt { start, slept, at_server: None };
    }

    /// The attempt of `owner` in flight reaches the server at `at`.
    pub fn arrived(&mut self, owner: u32, at: SimTime) {
        if let Some(open) = self.open.get_mut(owner as usize) {
            open.at_server = Some(AtServer { arrived: at, service: None });
        }
    }

    /// A worker serves the attempt of `owner` in flight from `start` to `end`.
    pub fn served(&mut self, owner: u32, start: SimTime, end: SimTime) {
        if let Some(AtServer { service, .. }) =
            self.open.get_mut(owner as usize).and_then(|open| open.at_server.as_mut())
        {
            *service = Some((start, end));
        }
    }

    /// The attempt of `owner` in flight ends at `end`.
    pub fn end(&mut self, owner: u32, end: SimTime, attempt: u32, outcome: &'static str, status: u16) {
        if self.spans.len() >= MAX_TRACE_SPANS {
            return;
        }
        let open = self.open.get(owner as usize).copied();
        let OpenAttempt { start, slept, at_server } =
            open.unwrap_or(OpenAttempt { start: end, slept: SimDuration::ZERO, at_server: None });
        let span = Span {
            owner,
            layer: 0,
            start,
            end,
            attempt,
            outcome,
            status,
            slept,
            hedge: false,
            id: 0,
            parent: 0,
            at_server,
        };
        self.spans.push(span);
    }
}
