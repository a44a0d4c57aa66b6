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
}

/// Per-owner bookkeeping for models whose owners have one attempt at a time: when the attempt in flight began
/// and the backoff slept before it.
#[derive(Clone, Debug, Default)]
pub struct Tracer {
    pub spans: Vec<Span>,
    open: Vec<(SimTime, SimDuration)>,
}

impl Tracer {
    /// An attempt of `owner` leaves at `start` after sleeping `slept`.
    pub fn begin(&mut self, owner: u32, start: SimTime, slept: SimDuration) {
        let index = owner as usize;
        if self.open.len() <= index {
            self.open.resize(index + 1, (SimTime::ZERO, SimDuration::ZERO));
        }
        self.open[index] = (start, slept);
    }

    /// The attempt of `owner` in flight ends at `end`.
    pub fn end(&mut self, owner: u32, end: SimTime, attempt: u32, outcome: &'static str, status: u16) {
        if self.spans.len() >= MAX_TRACE_SPANS {
            return;
        }
        let (start, slept) = self.open.get(owner as usize).copied().unwrap_or((end, SimDuration::ZERO));
        let span =
            Span { owner, layer: 0, start, end, attempt, outcome, status, slept, hedge: false, id: 0, parent: 0 };
        self.spans.push(span);
    }
}
