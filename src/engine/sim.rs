//! The event loop. It pops the earliest event, advances the clock and hands the event to the model; the model
//! schedules follow-up events through the [`Scheduler`]. The loop knows nothing of what the events mean.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::queue::EventQueue;
use crate::time::{SimDuration, SimTime};

/// A system under simulation: it reacts to its own events and schedules new ones.
pub trait Model {
    /// A small `Copy` value: the payload of one message delivery or timer.
    type Event: Copy;

    /// Reacts to `event`, delivered at `scheduler.now()`.
    fn handle(&mut self, event: Self::Event, scheduler: &mut Scheduler<Self::Event>);

    /// A hint that `event` is likely to be handled soon: a model whose events index large tables may prefetch
    /// the entry `event` will touch, so the memory load overlaps the events handled before it. No effect on results.
    #[inline]
    fn prefetch(&self, _event: &Self::Event) {}
}

/// The clock and the future event list, as seen by a model.
#[derive(Clone)]
pub struct Scheduler<E> {
    queue: EventQueue<E>,
    now: SimTime,
    stop_requested: bool,
}

impl<E: Copy> Scheduler<E> {
    pub fn with_capacity(capacity: usize) -> Self {
        Scheduler { queue: EventQueue::with_capacity(capacity), now: SimTime::ZERO, stop_requested: false }
    }

    /// Rewinds to t = 0 with no pending events, keeping the queue's allocation for the next run.
    pub fn reset(&mut self) {
        self.queue.clear();
        self.now = SimTime::ZERO;
        self.stop_requested = false;
    }

    /// The current instant: the time of the event being handled.
    #[inline]
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Schedules `event` at `now + delay`.
    #[inline]
    pub fn schedule_in(&mut self, delay: SimDuration, event: E) {
        self.queue.push(self.now + delay, event);
    }

    /// Schedules `event` at `at`. An instant in the past is a model bug; it is moved to `now` so that time
    /// never goes back (and trips an assertion in debug builds).
    #[inline]
    pub fn schedule_at(&mut self, at: SimTime, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        self.queue.push(at.max(self.now), event);
    }

    /// Ends the run after the current event.
    pub fn stop(&mut self) {
        self.stop_requested = true;
    }

    /// Clears a [`Scheduler::stop`], so that the next [`run`] goes on from where the last one stopped.
    pub fn resume(&mut self) {
        self.stop_requested = false;
    }

    /// Events still waiting.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }
}

/// Guards against runs that would not end on their own.
#[derive(Clone, Copy, Debug)]
pub struct RunLimit {
    /// Stop after this many events.
    pub max_events: u64,
    /// Do not deliver events later than this instant.
    pub horizon: SimTime,
    /// Stop, as truncated, once this is non-zero (a signal asked the process to stop). Read every
    /// [`ABORT_POLL_EVENTS`] events, by the comparison that already checks the event cap, so a long run ends
    /// promptly at no cost per event.
    pub abort: Option<&'static AtomicUsize>,
}

/// How many events pass between two reads of [`RunLimit::abort`].
pub const ABORT_POLL_EVENTS: u64 = 1 << 16;

impl RunLimit {
    /// Whether the abort flag is up (a signal asked the process to stop).
    #[inline]
    pub fn aborted(&self) -> bool {
        self.abort.is_some_and(|flag| flag.load(Ordering::Relaxed) != 0)
    }
}

impl Default for RunLimit {
    fn default() -> Self {
        RunLimit { max_events: u64::MAX, horizon: SimTime::from_nanos(u64::MAX), abort: None }
    }
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunStats {
    /// Events delivered to the model (one event = one delivery of a message or a timer).
    pub events: u64,
    /// The time of the last delivered event.
    pub end_time: SimTime,
    /// True when a [`RunLimit`] cut the run short while events were still pending.
    pub truncated: bool,
}

/// Delivers events to `model` in (time, insertion) order until none are left, the model stops, or `limit` is hit
/// (its abort flag included).
pub fn run<M: Model>(model: &mut M, scheduler: &mut Scheduler<M::Event>, limit: RunLimit) -> RunStats {
    let mut events = 0_u64;
    let mut truncated = false;
    // The event count at which to look at the limits again: one comparison per event covers both the cap and the
    // abort poll.
    let mut next_look = limit.max_events.min(ABORT_POLL_EVENTS);
    while let Some((at, event)) = scheduler.queue.pop_noting_soon(|soon| model.prefetch(soon)) {
        if events >= next_look || at > limit.horizon {
            if events >= limit.max_events || at > limit.horizon || limit.aborted() {
                scheduler.queue.unpop();
                truncated = true;
                break;
            }
            next_look = limit.max_events.min(events + ABORT_POLL_EVENTS);
        }
        scheduler.now = at;
        events += 1;
        model.handle(event, scheduler);
        if scheduler.stop_requested {
            break;
        }
    }
    RunStats { events, end_time: scheduler.now, truncated }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each event re-schedules itself after a pseudo-random delay derived from a counter, and records the clock.
    struct Recorder {
        seen: Vec<SimTime>,
        budget: u32,
    }

    impl Model for Recorder {
        type Event = u32;
        fn handle(&mut self, event: u32, scheduler: &mut Scheduler<u32>) {
            self.seen.push(scheduler.now());
            if self.budget > 0 {
                self.budget -= 1;
                let delay = SimDuration::from_nanos(u64::from(event.wrapping_mul(2_654_435_761) % 97));
                scheduler.schedule_in(delay, event + 1);
                scheduler.schedule_in(SimDuration::ZERO, event + 7);
            }
        }
    }

    #[test]
    fn time_never_goes_back_and_every_event_is_counted() {
        let mut model = Recorder { seen: Vec::new(), budget: 500 };
        let mut scheduler = Scheduler::with_capacity(16);
        for i in 0..10 {
            scheduler.schedule_at(SimTime::from_nanos(i * 13 % 40), i as u32);
        }
        let stats = run(&mut model, &mut scheduler, RunLimit::default());
        assert!(model.seen.windows(2).all(|pair| pair[0] <= pair[1]));
        assert_eq!(stats.events as usize, model.seen.len());
        assert_eq!(stats.events, 10 + 2 * 500);
        assert_eq!(stats.end_time, *model.seen.last().unwrap());
        assert!(!stats.truncated);
    }

    #[test]
    fn limits_cut_runs_short_and_say_so() {
        let mut model = Recorder { seen: Vec::new(), budget: u32::MAX };
        let mut scheduler = Scheduler::with_capacity(16);
        scheduler.schedule_at(SimTime::ZERO, 1);
        let limit = RunLimit { max_events: 100, ..RunLimit::default() };
        let stats = run(&mut model, &mut scheduler, limit);
        assert_eq!(stats.events, 100);
        assert!(stats.truncated);
        // The event that met the limit stays queued: a second run delivers it first.
        let pending = scheduler.pending();
        assert!(pending > 0);
        let next = run(&mut model, &mut scheduler, RunLimit { max_events: 1, ..RunLimit::default() });
        assert_eq!(next.events, 1);
        assert_eq!(scheduler.pending(), pending + 1, "delivered one, which scheduled two");
    }

    #[test]
    fn a_raised_abort_flag_ends_the_run_at_the_next_poll() {
        static ABORT: AtomicUsize = AtomicUsize::new(0);
        let mut model = Recorder { seen: Vec::new(), budget: u32::MAX };
        let mut scheduler = Scheduler::with_capacity(16);
        scheduler.schedule_at(SimTime::ZERO, 1);
        let limit = RunLimit { max_events: 3 * ABORT_POLL_EVENTS, abort: Some(&ABORT), ..RunLimit::default() };
        assert_eq!(run(&mut model, &mut scheduler, limit).events, 3 * ABORT_POLL_EVENTS, "not raised: no effect");
        ABORT.store(2, Ordering::Relaxed);
        let stats = run(&mut model, &mut scheduler, limit);
        assert_eq!(stats.events, ABORT_POLL_EVENTS);
        assert!(stats.truncated);
    }
}
