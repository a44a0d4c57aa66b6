//! One replicate of the server model: requests in a slab reused through a free list, attempts named by tokens
//! so that late answers and stale timers are recognised, and the server's FIFO queue. What it measures is kept in
//! a [`Tally`] (tally.rs).

use std::collections::VecDeque;

use rand::RngExt;

use super::clocks::Clocks;
use super::config::{MAX_RETRY_AFTER, ServerConfig};
use super::decide::{self, Failure, Next, instance_limiter};
use super::outcome::Outcome;
use super::params::OnTimeout;
use super::request::{ExtrasTable, Request, keeps_extras};
use super::series;
use super::tally::Tally;
use crate::engine::{Model, RunLimit, RunSeeds, RunStats, Scheduler, Stream, Streams, run};
use crate::metrics::{Phase, Trigger};
use crate::model::faults::FaultKind;
use crate::model::trace::Tracer;
use crate::model::{RunOutput, RunSettings};
use crate::policy::limiters::{Admission, Limiter, Outcome as CallOutcome, Permit, RetryLimiter};
use crate::policy::{FailureKind, TokenBucket};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Arrivals, ThinkDraws};

/// Runs one replicate: [`Running::start`], then every event, then [`Running::finish`].
pub(super) fn simulate(config: &ServerConfig, run_settings: RunSettings) -> RunOutput {
    let mut running = Running::start(config, run_settings.seeds, run_settings.bucket, run_settings.trace);
    running.advance(run_settings.limit());
    running.finish()
}

/// A replicate in progress: the model's state, its pending events and how many the engine has delivered. It can
/// be advanced in pieces, cloned between them (rare-event splitting branches a run this way, see branch.rs), and
/// finished into the run's output.
#[derive(Clone)]
pub(super) struct Running<'a> {
    pub(super) state: ServerRun<'a>,
    pub(super) scheduler: Scheduler<ServerEvent>,
    /// Events delivered so far, over every piece.
    pub(super) events: u64,
    /// The last piece was cut short by its limit with events still pending.
    pub(super) truncated: bool,
}

impl<'a> Running<'a> {
    /// The run at t = 0 with its first events scheduled.
    pub(super) fn start(config: &'a ServerConfig, seeds: RunSeeds, bucket: SimDuration, trace: bool) -> Self {
        let mut run_state = ServerRun::new(config, seeds, bucket, trace);
        crate::engine::advise_huge_pages(&run_state.requests);
        let mut scheduler = Scheduler::with_capacity(1024);
        match &config.workload.arrivals {
            Arrivals::Burst { requests } => {
                scheduler.schedule_at(SimTime::ZERO, ServerEvent::Burst { clients: *requests })
            }
            Arrivals::Open { .. } => {
                if let Some(first) = run_state.next_arrival_after(SimTime::ZERO) {
                    scheduler.schedule_at(first, ServerEvent::OpenArrival);
                }
            }
            Arrivals::Closed { clients, think_time } => {
                for client in 0..*clients {
                    let think = run_state.think.next(think_time, client);
                    scheduler.schedule_in(think, ServerEvent::NewRequest { client });
                }
            }
            Arrivals::Periodic { hosts, .. } => {
                for host in 0..*hosts {
                    if let Some(at) = run_state.clocks.next_run(host) {
                        scheduler.schedule_at(at, ServerEvent::NewRequest { client: host });
                    }
                }
            }
        }
        Running { state: run_state, scheduler, events: 0, truncated: false }
    }

    /// Delivers events to `model` (the run's state, or a wrapper around it) until none are left, the model stops
    /// the run, or `limit` is hit; a stop request is cleared first, so a stopped run can go on.
    pub(super) fn advance_with<M: Model<Event = ServerEvent>>(
        scheduler: &mut Scheduler<ServerEvent>,
        model: &mut M,
        limit: RunLimit,
    ) -> RunStats {
        scheduler.resume();
        run(model, scheduler, limit)
    }

    /// Delivers events until none are left or `limit` is hit.
    pub(super) fn advance(&mut self, limit: RunLimit) -> RunStats {
        let stats = Running::advance_with(&mut self.scheduler, &mut self.state, limit);
        self.note(stats);
        stats
    }

    /// Counts a piece's events and whether it was cut short.
    pub(super) fn note(&mut self, stats: RunStats) {
        self.events += stats.events;
        self.truncated = stats.truncated;
    }

    /// The run's metrics, timeline and spans.
    pub(super) fn finish(self) -> RunOutput {
        let run_state = self.state;
        let end = run_state.last_activity;
        let spans = run_state.tracer.map(|tracer| tracer.spans).unwrap_or_default();
        let mut output = run_state.tally.finish(run_state.config, run_state.trigger, spans, self.events, end);
        output.truncated = self.truncated;
        output
    }
}

/// A message or timer. `slot` indexes the request table; `token` names one attempt, so events about an
/// attempt that is no longer current (a late answer, a timer for an attempt already answered) are recognised.
/// Tokens are unique within a run up to 2^32 attempts, far beyond any event's lifetime.
#[derive(Clone, Copy, Debug)]
pub(super) enum ServerEvent {
    /// A client issues a new request.
    NewRequest { client: u32 },
    /// Clients `0..clients` each issue a request, in order: a burst released as one event, which hands out
    /// the same draws and schedules the same events, in the same order, as one `NewRequest` per client queued
    /// together at that instant, without queueing millions of them.
    Burst { clients: u32 },
    /// The next open-loop arrival.
    OpenArrival,
    /// An attempt reaches the server.
    AttemptArrives { slot: u32, token: u32 },
    /// A worker finishes an attempt.
    ServiceDone { slot: u32, token: u32 },
    /// The server's answer reaches the client; `retry_after_us` is its Retry-After hint in µs (0: none).
    Answer { slot: u32, token: u32, outcome: Outcome, retry_after_us: u32 },
    /// The earliest pending attempt timeout is due (see [`ServerRun::deadlines`]).
    Timeouts,
    /// The client's backoff sleep ends.
    RetryDue { slot: u32 },
    /// The wait the client's limiter imposed on an admitted attempt ends: send it.
    AdmittedSend { slot: u32 },
}

#[derive(Clone)]
pub(super) struct ServerRun<'a> {
    config: &'a ServerConfig,
    /// The trigger, if the run has one: requests are tallied by when they were first sent relative to it.
    trigger: Option<Trigger>,
    /// What the run measures.
    tally: Tally,
    /// Arrivals, service, network, faults, jitter and admission, each drawn from its own stream.
    streams: Streams,
    think: ThinkDraws,
    requests: Vec<Request>,
    /// Indexed like `requests` when a limiter, a clock policy or a trace needs them; else empty.
    extras: ExtrasTable,
    free_slots: Vec<u32>,
    next_token: u32,
    queue: VecDeque<(u32, u32, SimTime)>,
    /// Queue entries whose attempts were cancelled (`on_timeout = "cancel"`); they leave when they reach the front.
    dead_entries: usize,
    busy: u32,
    limiter: Option<TokenBucket>,
    /// The last time anything happened (a timer for an attempt already answered does not count).
    last_activity: SimTime,
    /// The client fleet's retry limiter (the server's own rate limiter is `limiter`).
    /// The fleet's limiter, or one per client instance (empty without a limiter).
    retry_limiters: Vec<Limiter>,
    /// Spans per attempt, when tracing.
    tracer: Option<Tracer>,
    /// The clients' clocks and the periodic workload's runs.
    clocks: Clocks,
    /// Attempts' timeout deadlines (deadline, slot, token) in sending order. The timeout is one fixed length, so
    /// they come due in that order, and one engine timer armed for the front replaces a timer per attempt that
    /// would stay queued after its attempt was answered.
    deadlines: VecDeque<(SimTime, u32, u32)>,
    /// A `Timeouts` event is pending (or being handled).
    timer_armed: bool,
    /// Retries are sent when decided, their arrival scheduled after the sleep and the trip: one event fewer per
    /// retry (see [`sends_at_decision`]).
    sends_at_decision: bool,
}

/// Whether a retry can be sent when the client decides it rather than when its sleep ends: when the send reads
/// and changes nothing other events share. No limiter admits it, no timeout deadline is queued for it, no trace
/// records it, and the trip takes a constant time, so no draw is taken out of turn. Other events see the retry
/// only when it arrives, with the same draws in the same order. One thing differs: the arrival is queued when
/// the retry is decided, so among events due at the same nanosecond it may come earlier than it would have.
fn sends_at_decision(config: &ServerConfig, trace: bool) -> bool {
    config.limiter.is_none() && config.timeout.is_none() && !trace && config.network.is_constant()
}

impl<'a> ServerRun<'a> {
    fn new(config: &'a ServerConfig, seeds: RunSeeds, bucket: SimDuration, trace: bool) -> Self {
        ServerRun {
            config,
            trigger: config.trigger(),
            tally: Tally::new(bucket),
            requests: Vec::with_capacity(config.workload.arrivals.clients().unwrap_or(1024) as usize),
            extras: ExtrasTable::new(keeps_extras(config, trace)),
            free_slots: Vec::with_capacity(1024),
            next_token: 1,
            queue: VecDeque::with_capacity(1024),
            dead_entries: 0,
            busy: 0,
            limiter: config.rate_bucket(),
            last_activity: SimTime::ZERO,
            retry_limiters: config.retry_limiters(),
            tracer: trace.then(Tracer::default),
            clocks: Clocks::new(config.clock, &config.workload.arrivals, config.workload.duration, seeds),
            streams: Streams::new(seeds),
            think: ThinkDraws::new(seeds.seed_of(Stream::Think), &config.workload.arrivals),
            deadlines: VecDeque::new(),
            timer_armed: false,
            sends_at_decision: sends_at_decision(config, trace),
        }
    }

    /// `on_timeout = "cancel"`: a timed-out attempt's queued work is dropped.
    fn cancels_on_timeout(&self) -> bool {
        self.config.on_timeout == OnTimeout::Cancel
    }

    /// The next open-loop arrival after `now`, or `None` once arrivals stop at `duration`.
    fn next_arrival_after(&mut self, now: SimTime) -> Option<SimTime> {
        let Arrivals::Open { schedule } = &self.config.workload.arrivals else { return None };
        schedule.next_arrival_after(now, self.config.workload.duration, &mut self.streams.arrivals)
    }

    fn open_request(&mut self, client: u32, now: SimTime) -> u32 {
        let clock = self.clocks.of_request(self.config.workload.arrivals.clients().map(|_| client));
        let measured = now >= self.config.workload.warmup;
        let request = Request { client, sent_at: now, measured, open: true, ..Request::default() };
        let request = Request { phase: self.trigger.map_or(Phase::Before, |trigger| trigger.phase(now)), ..request };
        self.tally.offered(request.phase, now);
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.requests[slot as usize] = request;
                slot
            }
            None => {
                self.requests.push(request);
                (self.requests.len() - 1) as u32
            }
        };
        self.extras.open(slot, clock);
        slot
    }

    /// Client `client` issues a request (and, on a periodic workload, schedules its next run).
    fn new_request(&mut self, client: u32, scheduler: &mut Scheduler<ServerEvent>) {
        if let Some(next) = self.clocks.next_run(client) {
            scheduler.schedule_at(next, ServerEvent::NewRequest { client });
        }
        let slot = self.open_request(client, scheduler.now());
        self.send_attempt(slot, scheduler);
    }

    /// The limiter that keeps the books of `slot`'s client: the fleet's, or its client instance's.
    fn limiter_of(&mut self, slot: u32) -> Option<&mut Limiter> {
        instance_limiter(&mut self.retry_limiters, self.requests[slot as usize].client)
    }

    /// The client wants to send an attempt of `slot`: its limiter admits it (send now or after a wait) or
    /// rejects it, in which case the attempt fails locally and the retry policy decides what next.
    fn send_attempt(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        if !self.retry_limiters.is_empty() {
            let draw = self.streams.admission.random::<f64>();
            let admission = self.limiter_of(slot).map_or(Admission::Send, |limiter| limiter.admit(scheduler.now(), draw));
            match admission {
                Admission::Send => {}
                Admission::Wait(wait) => return scheduler.schedule_in(wait, ServerEvent::AdmittedSend { slot }),
                Admission::Reject => {
                    self.tally.counts.rejected_locally += 1;
                    // A retry granted but never sent: its permit goes back as a withdrawal.
                    if let Some(permit) = self.extras.take_permit(slot)
                        && let Some(limiter) = self.limiter_of(slot)
                    {
                        limiter.withdraw(scheduler.now(), false, Some(permit));
                    }
                    self.requests[slot as usize].failed_attempts += 1;
                    return self.retry_or_give_up(slot, (FailureKind::Transient, None), false, scheduler);
                }
            }
        }
        self.dispatch(slot, scheduler.now(), scheduler);
    }

    /// An admitted attempt leaves the client at `at`: now, or when a retry's sleep ends (see
    /// [`sends_at_decision`]).
    fn dispatch(&mut self, slot: u32, at: SimTime, scheduler: &mut Scheduler<ServerEvent>) {
        let is_retry = self.requests[slot as usize].failed_attempts > 0;
        self.tally.counts.retries += u64::from(is_retry);
        if is_retry {
            self.tally.timeline[series::RETRIES].record(at);
        }
        if let Some(limiter) = self.limiter_of(slot) {
            limiter.on_send(at, is_retry);
        }
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1).max(1);
        let request = &mut self.requests[slot as usize];
        request.token = token;
        request.at_server += 1;
        if let Some(tracer) = &mut self.tracer {
            tracer.begin(request.client, at, self.extras.slept(slot));
        }
        let delay = self.config.network.sample(&mut self.streams.network);
        scheduler.schedule_at(at + delay, ServerEvent::AttemptArrives { slot, token });
        if let Some(timeout) = self.config.timeout {
            self.deadlines.push_back((at + timeout, slot, token));
            if !self.timer_armed {
                self.timer_armed = true;
                scheduler.schedule_at(at + timeout, ServerEvent::Timeouts);
            }
        }
    }

    /// The server is done with an attempt: it answers, and forgets the attempt.
    fn answer(
        &mut self,
        slot: u32,
        token: u32,
        outcome: Outcome,
        retry_after: Option<SimDuration>,
        scheduler: &mut Scheduler<ServerEvent>,
    ) {
        let retry_after_us = retry_after.map_or(0, |d| d.min(MAX_RETRY_AFTER).as_nanos().div_ceil(1_000).max(1) as u32);
        let delay = self.config.network.sample(&mut self.streams.network);
        scheduler.schedule_in(delay, ServerEvent::Answer { slot, token, outcome, retry_after_us });
        self.leave_server(slot);
    }

    /// Attempts waiting in the queue, cancelled ones left out.
    pub(super) fn live_queue(&self) -> usize {
        self.queue.len() - self.dead_entries
    }

    /// Requests sent and not yet ended (succeeded, given up or failed for good): the clients' backlog.
    pub(super) fn backlog(&self) -> u64 {
        let counts = &self.tally.counts;
        counts.requests - counts.succeeded - counts.gave_up - counts.failed_permanently
    }

    /// Draws from new streams from now on: every world and policy stream, and the closed clients' think times.
    /// Events already scheduled stay as they are. A clone reseeded this way branches off its original.
    pub(super) fn reseed(&mut self, seeds: RunSeeds) {
        self.streams = Streams::new(seeds);
        self.think.reseed(seeds.seed_of(Stream::Think));
    }

    fn leave_server(&mut self, slot: u32) {
        let request = &mut self.requests[slot as usize];
        request.at_server -= 1;
        if !request.open && request.at_server == 0 {
            self.free_slots.push(slot);
        }
    }

    fn start_service(&mut self, slot: u32, token: u32, queued_at: SimTime, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        self.busy += 1;
        let base = self.config.service.sample_nanos(&mut self.streams.service);
        let service = self.config.service_time(base, self.busy, now);
        self.tally.service_started(self.config, queued_at, now, service);
        if self.tracer.is_some() && self.is_current(slot, token) {
            let client = self.requests[slot as usize].client;
            if let Some(tracer) = &mut self.tracer {
                tracer.served(client, now, now + service);
            }
        }
        scheduler.schedule_in(service, ServerEvent::ServiceDone { slot, token });
    }

    /// The limiter's permit for the attempt in flight of `slot`.
    fn permit(&self, slot: u32) -> Option<Permit> {
        self.extras.permit(slot)
    }

    /// True while `token` is the attempt the request in `slot` waits for.
    fn is_current(&self, slot: u32, token: u32) -> bool {
        self.requests.get(slot as usize).is_some_and(|request| request.open && request.token == token)
    }

    fn close_request(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let request = &mut self.requests[slot as usize];
        request.open = false;
        request.token = 0;
        let client = request.client;
        if request.at_server == 0 {
            self.free_slots.push(slot);
        }
        if let Arrivals::Closed { think_time, .. } = &self.config.workload.arrivals {
            let think = self.think.next(think_time, client);
            if scheduler.now() + think < self.config.workload.duration {
                scheduler.schedule_in(think, ServerEvent::NewRequest { client });
            }
        }
    }

    /// Tells the limiter how the attempt in flight of `slot` ended (`outcome` is one of the `Outcome`
    /// constructors, given the attempt's permit).
    fn record_outcome(&mut self, slot: u32, outcome: fn(Option<Permit>) -> CallOutcome, now: SimTime) -> CallOutcome {
        let outcome = outcome(self.permit(slot));
        if let Some(limiter) = self.limiter_of(slot) {
            limiter.record(now, outcome);
        }
        outcome
    }

    /// The attempt in flight of `slot` failed with a retryable `outcome`: report it, then retry or give up.
    fn attempt_failed(
        &mut self,
        slot: u32,
        failure: (FailureKind, Option<SimDuration>),
        outcome: fn(Option<Permit>) -> CallOutcome,
        scheduler: &mut Scheduler<ServerEvent>,
    ) {
        let now = scheduler.now();
        let timed_out = self.record_outcome(slot, outcome, now).timed_out;
        let request = &mut self.requests[slot as usize];
        request.token = 0;
        request.failed_attempts += 1;
        self.retry_or_give_up(slot, failure, timed_out, scheduler);
    }

    /// After a failed attempt (`failed_attempts` already counts it): decide.rs's protocol, then act on it.
    fn retry_or_give_up(
        &mut self,
        slot: u32,
        kind: (FailureKind, Option<SimDuration>),
        timed_out: bool,
        scheduler: &mut Scheduler<ServerEvent>,
    ) {
        let now = scheduler.now();
        let request = &mut self.requests[slot as usize];
        let elapsed = now - request.sent_at;
        let (retry_after, pushback) = self.config.hint_header.split(kind.1);
        let since_restart = request.failed_attempts - self.extras.restarted_at(slot);
        let failure = Failure {
            failed_attempts: request.failed_attempts,
            now,
            elapsed,
            kind: (kind.0, retry_after),
            pushback,
            since_restart,
            timed_out,
        };
        let clock = self.extras.clock(slot);
        let align = |decision| self.clocks.align(decision, (now, elapsed), self.config.retry.deadline, &clock);
        let limiter = instance_limiter(&mut self.retry_limiters, request.client);
        match decide::after_failure(self.config, &failure, &mut request.memory, &mut self.streams.jitter, align, limiter) {
            Next::Retry { sleep, permit, restarted } => {
                if let Some(permit) = permit {
                    self.extras.set_permit(slot, permit);
                }
                if restarted {
                    self.extras.set_restarted_at(slot, failure.failed_attempts);
                }
                self.extras.set_slept(slot, sleep);
                if self.sends_at_decision {
                    self.dispatch(slot, now + sleep, scheduler)
                } else {
                    scheduler.schedule_in(sleep, ServerEvent::RetryDue { slot })
                }
            }
            Next::GiveUp { refused } => {
                self.tally.counts.refused += u64::from(refused);
                self.tally.counts.gave_up += 1;
                self.tally.phases.ended(self.requests[slot as usize].phase, None);
                self.close_request(slot, scheduler);
            }
        }
    }

    fn succeed(&mut self, slot: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        let request = self.requests[slot as usize];
        self.tally.succeeded(self.config, request.phase, request.sent_at, request.measured, now);
        self.close_request(slot, scheduler);
    }

    /// Times out every attempt whose deadline has come, then re-arms the timer for the next attempt still waited
    /// for: deadlines of attempts already answered leave without an event.
    fn timeouts_due(&mut self, scheduler: &mut Scheduler<ServerEvent>) {
        // Retries sent from here push new deadlines; they must not arm a second timer.
        self.timer_armed = true;
        while let Some(&(deadline, slot, token)) = self.deadlines.front() {
            if !self.is_current(slot, token) {
                self.deadlines.pop_front();
                continue;
            }
            if deadline > scheduler.now() {
                return scheduler.schedule_at(deadline, ServerEvent::Timeouts);
            }
            self.deadlines.pop_front();
            self.timeout(slot, token, scheduler);
        }
        self.timer_armed = false;
    }

    /// The timeout of attempt `token` of `slot`, which is still waited for.
    fn timeout(&mut self, slot: u32, token: u32, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        self.last_activity = now;
        self.tally.counts.timeouts += 1;
        if let Some(tracer) = &mut self.tracer {
            let request = &self.requests[slot as usize];
            tracer.end(request.client, now, request.failed_attempts + 1, "timeout", 0);
        }
        if self.cancels_on_timeout() && self.requests[slot as usize].queued_token == token {
            self.requests[slot as usize].queued_token = 0;
            self.dead_entries += 1;
            self.leave_server(slot);
            self.tally.queue_levels.record(now, self.live_queue() as u32);
        }
        self.attempt_failed(slot, (FailureKind::Transient, None), CallOutcome::timeout, scheduler);
    }
}

impl Model for ServerRun<'_> {
    type Event = ServerEvent;

    /// Every event about an attempt reads its request's record; with a million clients the table outgrows the
    /// caches and that first load dominates (docs/performance.md).
    #[inline]
    fn prefetch(&self, event: &ServerEvent) {
        let slot = match *event {
            ServerEvent::AttemptArrives { slot, .. }
            | ServerEvent::ServiceDone { slot, .. }
            | ServerEvent::Answer { slot, .. }
            | ServerEvent::RetryDue { slot }
            | ServerEvent::AdmittedSend { slot } => slot,
            ServerEvent::NewRequest { .. }
            | ServerEvent::Burst { .. }
            | ServerEvent::OpenArrival
            | ServerEvent::Timeouts => return,
        };
        if let Some(request) = self.requests.get(slot as usize) {
            crate::engine::prefetch(request);
        }
    }

    fn handle(&mut self, event: ServerEvent, scheduler: &mut Scheduler<ServerEvent>) {
        let now = scheduler.now();
        let stale = match event {
            ServerEvent::Answer { slot, token, .. } => !self.is_current(slot, token),
            // Counts as activity only if it times out an attempt still waited for (see `timeout`).
            ServerEvent::Timeouts => true,
            _ => false,
        };
        if !stale {
            self.last_activity = now;
        }
        match event {
            ServerEvent::NewRequest { client } => self.new_request(client, scheduler),
            ServerEvent::Burst { clients } => (0..clients).for_each(|client| self.new_request(client, scheduler)),
            ServerEvent::OpenArrival => {
                // Open-loop requests have no client of their own: each traces as its own owner.
                let owner = self.tally.counts.requests as u32;
                let slot = self.open_request(owner, now);
                self.send_attempt(slot, scheduler);
                if let Some(next) = self.next_arrival_after(now) {
                    scheduler.schedule_at(next, ServerEvent::OpenArrival);
                }
            }
            ServerEvent::AttemptArrives { slot, token } => {
                self.tally.arrived(self.requests.get(slot as usize).map(|request| request.phase), now);
                if self.cancels_on_timeout() && !self.is_current(slot, token) {
                    // The client cancelled this attempt while it was on its way.
                    return self.leave_server(slot);
                }
                if self.tracer.is_some() && self.is_current(slot, token) {
                    let client = self.requests[slot as usize].client;
                    if let Some(tracer) = &mut self.tracer {
                        tracer.arrived(client, now);
                    }
                }
                match self.config.faults.at(now) {
                    Some(FaultKind::BlackHole) => return self.leave_server(slot),
                    Some(FaultKind::FailFast) => {
                        self.tally.rejected(now);
                        return self.answer(slot, token, Outcome::Overloaded, None, scheduler);
                    }
                    Some(FaultKind::Reset) => {
                        self.tally.rejected(now);
                        return self.answer(slot, token, Outcome::ConnectionReset, None, scheduler);
                    }
                    None | Some(FaultKind::Slowdown(_)) => {}
                }
                if let Some(Err(wait)) = self.limiter.as_mut().map(|bucket| bucket.try_take(now)) {
                    self.tally.counts.throttled += 1;
                    self.answer(slot, token, Outcome::Throttled, Some(wait), scheduler);
                } else if self.config.workers.is_none_or(|workers| self.busy < workers) {
                    self.start_service(slot, token, now, scheduler);
                } else if self.config.queue_limit.is_none_or(|limit| (self.live_queue() as u64) < limit) {
                    self.queue.push_back((slot, token, now));
                    self.requests[slot as usize].queued_token = token;
                    self.tally.queue_levels.record(now, self.live_queue() as u32);
                } else {
                    self.tally.rejected(now);
                    self.answer(slot, token, Outcome::Overloaded, self.config.overload_retry_after, scheduler);
                }
            }
            ServerEvent::ServiceDone { slot, token } => {
                self.busy -= 1;
                if !self.is_current(slot, token) {
                    self.tally.timeline[series::LATE].record(now);
                }
                let outcome = Outcome::after_service(self.config.error_probabilities, &mut self.streams.faults);
                match outcome {
                    Outcome::Success => {
                        let request = &mut self.requests[slot as usize];
                        request.applied += 1;
                        if request.applied > 1 {
                            if self.config.idempotency_keys {
                                self.tally.counts.deduplicated += 1;
                            } else {
                                self.tally.counts.duplicates += 1;
                            }
                        }
                    }
                    Outcome::TransientError | Outcome::DisguisedTransient => self.tally.counts.server_errors += 1,
                    _ => {}
                }
                self.answer(slot, token, outcome, None, scheduler);
                while let Some((next_slot, next_token, queued_at)) = self.queue.pop_front() {
                    if self.cancels_on_timeout() {
                        let request = &mut self.requests[next_slot as usize];
                        if request.queued_token != next_token {
                            // Cancelled at its timeout; it already left the server then.
                            self.dead_entries -= 1;
                            continue;
                        }
                        request.queued_token = 0;
                    }
                    self.start_service(next_slot, next_token, queued_at, scheduler);
                    break;
                }
                self.tally.queue_levels.record(now, self.live_queue() as u32);
            }
            ServerEvent::Answer { slot, token, outcome, retry_after_us } => {
                if !self.is_current(slot, token) {
                    return;
                }
                if let Some(tracer) = &mut self.tracer {
                    let request = &self.requests[slot as usize];
                    let name = if outcome == Outcome::Success { "success" } else { outcome.name() };
                    let status = outcome.response().status;
                    tracer.end(request.client, now, request.failed_attempts + 1, name, status);
                }
                if outcome == Outcome::Success {
                    self.record_outcome(slot, CallOutcome::success, now);
                    self.succeed(slot, scheduler);
                } else if decide::retried(self.config, outcome.response()) {
                    let hint = (retry_after_us > 0).then(|| SimDuration::from_micros(u64::from(retry_after_us)));
                    let (kind, failure) = if outcome == Outcome::Throttled {
                        (FailureKind::Throttling, CallOutcome::throttled as fn(_) -> _)
                    } else {
                        (FailureKind::Transient, CallOutcome::failure as fn(_) -> _)
                    };
                    self.attempt_failed(slot, (kind, hint), failure, scheduler);
                } else {
                    self.record_outcome(slot, CallOutcome::failure, now);
                    self.tally.counts.failed_permanently += 1;
                    self.tally.phases.ended(self.requests[slot as usize].phase, None);
                    self.close_request(slot, scheduler);
                }
            }
            ServerEvent::Timeouts => self.timeouts_due(scheduler),
            ServerEvent::RetryDue { slot } => self.send_attempt(slot, scheduler),
            ServerEvent::AdmittedSend { slot } => self.dispatch(slot, now, scheduler),
        }
    }
}

