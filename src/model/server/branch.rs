//! A server run that can be stopped where its queue reaches a level, copied, given new random streams and
//! continued: what multilevel splitting (`retrylab rare`, src/analysis/rare/) needs from the model. A [`Branch`]
//! advanced without a level and finished gives exactly the output of [`super::run::simulate`] with the same seeds.

use super::config::ServerConfig;
use super::run::{Running, ServerEvent, ServerRun};
use crate::engine::{Model, RunLimit, RunSeeds, Scheduler};
use crate::model::RunOutput;
use crate::time::{SimDuration, SimTime};

/// What the splitting levels measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Importance {
    /// Attempts waiting in the server's queue (cancelled ones left out).
    Queue,
    /// Requests sent and not yet ended: the clients' backlog.
    Backlog,
}

impl Importance {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Importance::Queue => "queue",
            Importance::Backlog => "backlog",
        }
    }
}

/// Why [`Branch::advance`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The importance reached the level (at an event no later than the horizon).
    Level,
    /// The next event comes after the horizon.
    Horizon,
    /// No event is left: the run is over.
    Ended,
    /// The run's event cap was reached.
    Capped,
}

/// A server run in progress, with the largest queue and importance it has seen.
#[derive(Clone)]
pub(crate) struct Branch<'a> {
    running: Running<'a>,
    importance: Importance,
    /// The largest live queue so far, along the whole path from t = 0.
    max_queue: u64,
    /// The largest importance so far.
    max_importance: u64,
}

/// The run's model with a watch: after each event it notes the queue and the importance, and stops the run once
/// the importance reaches `level`.
struct Watch<'r, 'a> {
    state: &'r mut ServerRun<'a>,
    importance: Importance,
    level: u64,
    max_queue: u64,
    max_importance: u64,
}

fn importance_of(state: &ServerRun<'_>, importance: Importance) -> u64 {
    match importance {
        Importance::Queue => state.live_queue() as u64,
        Importance::Backlog => state.backlog(),
    }
}

impl Model for Watch<'_, '_> {
    type Event = ServerEvent;

    #[inline]
    fn prefetch(&self, event: &ServerEvent) {
        self.state.prefetch(event);
    }

    fn handle(&mut self, event: ServerEvent, scheduler: &mut Scheduler<ServerEvent>) {
        self.state.handle(event, scheduler);
        self.max_queue = self.max_queue.max(self.state.live_queue() as u64);
        let now = importance_of(self.state, self.importance);
        self.max_importance = self.max_importance.max(now);
        if now >= self.level {
            scheduler.stop();
        }
    }
}

impl<'a> Branch<'a> {
    /// A run of `config` at t = 0, its streams seeded from `seeds`, measured in buckets `bucket` wide.
    pub(crate) fn start(config: &'a ServerConfig, seeds: RunSeeds, bucket: SimDuration, importance: Importance) -> Self {
        Branch { running: Running::start(config, seeds, bucket, false), importance, max_queue: 0, max_importance: 0 }
    }

    /// The importance now.
    pub(crate) fn importance(&self) -> u64 {
        importance_of(&self.running.state, self.importance)
    }

    /// The largest live queue seen so far on this run's path.
    pub(crate) fn max_queue(&self) -> u64 {
        self.max_queue
    }

    /// The largest importance seen so far on this run's path.
    pub(crate) fn max_importance(&self) -> u64 {
        self.max_importance
    }

    /// Events delivered so far on this run's path (its ancestors' included).
    pub(crate) fn events(&self) -> u64 {
        self.running.events
    }

    /// Runs until the importance is at least `level` (`None`: no level), the next event comes after `horizon`,
    /// no event is left, or the path has delivered `max_events`. A run already at the level returns at once.
    pub(crate) fn advance(&mut self, level: Option<u64>, horizon: SimTime, max_events: u64) -> Stop {
        let level = level.unwrap_or(u64::MAX);
        if self.importance() >= level {
            return Stop::Level;
        }
        let remaining = max_events.saturating_sub(self.running.events);
        if remaining == 0 {
            return Stop::Capped;
        }
        let limit = RunLimit { max_events: remaining, horizon, abort: Some(&crate::interrupt::SIGNAL) };
        let Running { state, scheduler, .. } = &mut self.running;
        let mut watch = Watch {
            state,
            importance: self.importance,
            level,
            max_queue: self.max_queue,
            max_importance: self.max_importance,
        };
        let stats = Running::advance_with(scheduler, &mut watch, limit);
        let (max_queue, max_importance) = (watch.max_queue, watch.max_importance);
        self.max_queue = max_queue;
        self.max_importance = max_importance;
        self.running.note(stats);
        if self.importance() >= level {
            Stop::Level
        } else if !stats.truncated {
            Stop::Ended
        } else if self.running.events >= max_events {
            Stop::Capped
        } else {
            Stop::Horizon
        }
    }

    /// Draws from streams seeded by `seeds` from now on.
    pub(crate) fn reseed(&mut self, seeds: RunSeeds) {
        self.running.state.reseed(seeds);
    }

    /// A copy that draws from streams seeded by `seeds` from now on.
    #[cfg(test)]
    pub(crate) fn reseeded(&self, seeds: RunSeeds) -> Branch<'a> {
        let mut copy = self.clone();
        copy.reseed(seeds);
        copy
    }

    /// Runs to the end (or the cap) and reports the run's output; `events` counts the whole path's.
    pub(crate) fn finish(mut self, max_events: u64) -> RunOutput {
        self.advance(None, SimTime::from_nanos(u64::MAX), max_events);
        self.running.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::server::tests::{config as config_with, ms};
    use crate::params::Value;

    /// An open workload slightly over capacity whose queue builds: it crosses level 20 midway through its run.
    fn config() -> ServerConfig {
        config_with(&[
            ("kind", Value::Choice("open")),
            ("workers", Value::Count(2)),
            ("queue_limit", Value::Count(60)),
            ("rate", Value::Real(55.0)),
            ("duration", ms(20_000)),
            ("service_mean", ms(40)),
            ("timeout", ms(1_000)),
            ("strategy", Value::Choice("exponential")),
            ("max_attempts", Value::Count(4)),
        ])
    }

    const BUCKET: SimDuration = SimDuration::from_secs(1);
    const NEVER: SimTime = SimTime::from_nanos(u64::MAX);

    #[test]
    fn a_run_stopped_at_a_level_and_cloned_goes_on_exactly_as_the_original() {
        let config = config();
        let seeds = RunSeeds::single(7);
        let plain = super::super::run::simulate(&config, crate::model::RunSettings::new(7, BUCKET));
        let mut branch = Branch::start(&config, seeds, BUCKET, Importance::Queue);
        assert_eq!(branch.advance(Some(20), NEVER, u64::MAX), Stop::Level);
        assert!(branch.importance() >= 20 && branch.max_queue() >= 20);
        let copy = branch.clone();
        let midway = branch.events();
        assert!(midway > 0 && midway < plain.events, "stopped midway: {midway} of {}", plain.events);
        let (original, copied) = (branch.finish(u64::MAX), copy.finish(u64::MAX));
        for output in [&original, &copied] {
            assert_eq!(output.metrics.len(), plain.metrics.len());
            for (a, b) in output.metrics.iter().zip(&plain.metrics) {
                assert!(a.to_bits() == b.to_bits(), "{a} against {b}");
            }
            assert_eq!(output.timeline.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                plain.timeline.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
            assert_eq!(output.events, plain.events);
        }
    }

    #[test]
    fn a_reseeded_copy_branches_off_and_two_seeds_differ() {
        let config = config();
        let mut branch = Branch::start(&config, RunSeeds::single(7), BUCKET, Importance::Queue);
        assert_eq!(branch.advance(Some(20), NEVER, u64::MAX), Stop::Level);
        let a = branch.reseeded(RunSeeds::single(100)).finish(u64::MAX);
        let b = branch.reseeded(RunSeeds::single(101)).finish(u64::MAX);
        let again = branch.reseeded(RunSeeds::single(100)).finish(u64::MAX);
        let plain = branch.finish(u64::MAX);
        assert_ne!(a.timeline, plain.timeline, "a reseeded branch draws anew");
        assert_ne!(a.timeline, b.timeline);
        assert_eq!(a.timeline, again.timeline, "the same seed, the same branch");
    }

    #[test]
    fn the_horizon_the_end_and_the_cap_stop_a_run() {
        let config = config();
        let mut branch = Branch::start(&config, RunSeeds::single(3), BUCKET, Importance::Backlog);
        assert_eq!(branch.advance(Some(u64::MAX), SimTime::ZERO + SimDuration::from_secs(2), u64::MAX), Stop::Horizon);
        let at_two = branch.events();
        assert!(at_two > 0);
        assert_eq!(branch.advance(None, NEVER, at_two + 5), Stop::Capped);
        assert_eq!(branch.events(), at_two + 5);
        assert_eq!(branch.advance(None, NEVER, u64::MAX), Stop::Ended);
        assert!(branch.max_importance() > 0);
        assert_eq!(branch.importance(), 0, "every request ended");
    }
}
