//! One replicate of the layered model: calls (a caller's request across its attempts) and jobs (one attempt
//! being handled by a service) live in slabs reused through free lists, so the event loop allocates nothing
//! once they have grown to the run's peak.

use std::collections::VecDeque;

use rand::RngExt;

use super::records::{Call, InFlight, Job, JobState, Kind, Status};
use super::tally::Tally;
use super::{CallerPolicy, LayersConfig, MAX_LAYERS};
use crate::engine::{Model, RunSeeds, Scheduler, Streams, run};
use crate::metrics::{LatencyHistogram, Phase, Trigger};
use crate::model::faults::FaultKind;
use crate::model::trace::{MAX_TRACE_SPANS, Span};
use crate::model::{RunOutput, RunSettings};
use crate::policy::limiters::{Admission, Failed, Limiter, Outcome, RetryLimiter};
use crate::policy::{BackoffMemory, ClientClock, FailureKind, Hedge, Response, RetryDecision};
use crate::time::{SimDuration, SimTime};

/// "No index" in the slabs' links.
const NONE: u32 = u32::MAX;
/// Callers with percentile hedging refresh their delay after this many new latency samples.
const PERCENTILE_REFRESH: u64 = 256;
/// Percentile hedging waits for this many samples before it hedges at all.
const PERCENTILE_WARMUP: u64 = 1_000;

pub(super) fn simulate(config: &LayersConfig, settings: RunSettings) -> RunOutput {
    let mut state = LayersRun::new(config, settings.seeds, settings.bucket);
    if settings.trace {
        state.spans = Some(Vec::new());
    }
    let mut scheduler = Scheduler::with_capacity(1024);
    scheduler.schedule_at(SimTime::ZERO, LayerEvent::UserRequest);
    let stats = run(&mut state, &mut scheduler, settings.limit());
    let mut output = state.finish(stats.events);
    output.truncated = stats.truncated;
    output
}

/// A message or timer. `tag` identifies one attempt (or one backoff timer) of a call, so that events about an
/// attempt the caller has given up on, or a call slot since reused, are recognised and dropped.
#[derive(Clone, Copy, Debug)]
pub(super) enum LayerEvent {
    /// The next user request arrives.
    UserRequest,
    /// An attempt reaches its service.
    Arrives { job: u32 },
    /// A service finishes its own work on an attempt.
    WorkDone { job: u32 },
    /// The answer to attempt `tag` of `call` reaches the caller.
    Answer { call: u32, tag: u32, status: Status },
    /// A limiter's wait is over: send the attempt of `call` it admitted (`tag` is the call's timer).
    Admitted { call: u32, tag: u32, kind: Kind },
    /// The earliest pending timeout of `caller` is due (see [`LayersRun::deadlines`]).
    Timeouts { caller: u8 },
    /// The caller of `call` is done backing off.
    RetryDue { call: u32, tag: u32 },
    /// Time to hedge attempt `tag` of `call` if it is still unanswered.
    HedgeDue { call: u32, tag: u32 },
}

struct LayersRun<'a> {
    config: &'a LayersConfig,
    /// The span of the services' fault windows, if any: requests are tallied by when they were sent relative to it.
    trigger: Option<Trigger>,
    /// What the run measures.
    tally: Tally,
    /// One random stream per purpose (world: arrivals, service, network, faults, clocks; policy: jitter, admission).
    streams: Streams,
    calls: Vec<Call>,
    free_calls: Vec<u32>,
    jobs: Vec<Job>,
    free_jobs: Vec<u32>,
    next_tag: u32,
    /// Per caller: latencies of its answered attempts, and the hedge delay they give.
    observed: Vec<Option<LatencyHistogram>>,
    hedge_delay: [Option<SimDuration>; MAX_LAYERS + 1],
    busy: [u32; MAX_LAYERS],
    queues: Vec<VecDeque<u32>>,
    /// Per service: queued jobs not cancelled (the queue also holds cancelled ones until a worker skips them).
    queued: [u32; MAX_LAYERS],
    /// Per caller: retries granted by the ratio budget.
    budget_spent: [u64; MAX_LAYERS + 1],
    /// One per user client, then one per service (shared by all its instances).
    limiters: Vec<Option<Limiter>>,
    /// Per caller: its attempts' timeout deadlines in sending order. A caller's timeout is one fixed length,
    /// so deadlines come due in that order, and one engine timer per caller (armed for the front) replaces
    /// one event per attempt; entries of attempts answered in time are skipped when they come due.
    deadlines: Vec<VecDeque<(SimTime, u32, u32)>>,
    timer_armed: [bool; MAX_LAYERS + 1],
    /// One span per attempt, when tracing.
    spans: Option<Vec<Span>>,
    /// Per limiter (user client, then service): the clock its retries wait by.
    clocks: Vec<ClientClock>,
}

impl<'a> LayersRun<'a> {
    fn new(config: &'a LayersConfig, seeds: RunSeeds, bucket: SimDuration) -> Self {
        let mut streams = Streams::new(seeds);
        let clocks = config.draw_clocks(&mut streams);
        let mut limiters = vec![config.user.limiter.clone(); config.clients];
        limiters.extend(config.services.iter().map(|s| s.policy.limiter.clone()));
        let mut hedge_delay = [None; MAX_LAYERS + 1];
        for (caller, slot) in hedge_delay.iter_mut().enumerate().take(config.services.len() + 1) {
            if let Hedge::Fixed(delay) = Self::policy_of(config, caller).hedge {
                *slot = Some(delay);
            }
        }
        let percentile = |caller: usize| matches!(Self::policy_of(config, caller).hedge, Hedge::Percentile(_));
        let windows = config.services.iter().flat_map(|service| service.faults.windows());
        let trigger = windows.fold(None, |span: Option<Trigger>, window| {
            Some(span.map_or(Trigger { start: window.start, end: window.end }, |span| Trigger {
                start: span.start.min(window.start),
                end: span.end.max(window.end),
            }))
        });
        LayersRun {
            config,
            trigger,
            tally: Tally::new(config, bucket),
            calls: Vec::with_capacity(1024),
            free_calls: Vec::with_capacity(1024),
            jobs: Vec::with_capacity(1024),
            free_jobs: Vec::with_capacity(1024),
            next_tag: 0,
            observed: (0..=config.services.len()).map(|c| percentile(c).then(LatencyHistogram::default)).collect(),
            hedge_delay,
            busy: [0; MAX_LAYERS],
            queued: [0; MAX_LAYERS],
            budget_spent: [0; MAX_LAYERS + 1],
            queues: config
                .services
                .iter()
                .map(|s| VecDeque::with_capacity(if s.workers > 0 { 1024 } else { 0 }))
                .collect(),
            limiters,
            deadlines: (0..=config.services.len()).map(|_| VecDeque::new()).collect(),
            timer_armed: [false; MAX_LAYERS + 1],
            spans: None,
            streams,
            clocks,
        }
    }

    fn policy_of(config: &LayersConfig, caller: usize) -> &CallerPolicy {
        if caller == 0 { &config.user } else { &config.services[caller - 1].policy }
    }

    fn policy(&self, caller: u8) -> &'a CallerPolicy {
        Self::policy_of(self.config, caller as usize)
    }

    fn hop(&mut self) -> SimDuration {
        self.config.hop.sample(&mut self.streams.network)
    }

    /// A fresh tag; never 0, which marks a free job.
    fn tag(&mut self) -> u32 {
        self.next_tag = self.next_tag.checked_add(1).unwrap_or(1);
        self.next_tag
    }

    fn free_job(&mut self, job: u32) {
        self.jobs[job as usize].tag = 0;
        self.free_jobs.push(job);
    }

    fn new_call(&mut self, parent: u32, caller: u8, service: u8, now: SimTime) -> u32 {
        let limiter = if caller == 0 {
            self.streams.arrivals.random_range(0..self.config.clients) as u32
        } else {
            (self.config.clients + caller as usize - 1) as u32
        };
        let call = Call {
            parent,
            parent_tag: if parent == NONE { 0 } else { self.jobs[parent as usize].tag },
            next_sibling: NONE,
            caller,
            service,
            done: false,
            failed_attempts: 0,
            memory: BackoffMemory::default(),
            started: now,
            limiter,
            permit: None,
            timer: 0,
            // A user request is tallied once its call exists: its number is the count so far.
            request: if parent == NONE {
                self.tally.issued as u32
            } else {
                self.calls[self.jobs[parent as usize].call as usize].request
            },
            phase: if parent == NONE {
                self.trigger.map_or(Phase::Before, |trigger| trigger.phase(now))
            } else {
                self.calls[self.jobs[parent as usize].call as usize].phase
            },
            slept: SimDuration::ZERO,
            in_flight: [None; 2],
        };
        match self.free_calls.pop() {
            Some(index) => {
                self.calls[index as usize] = call;
                index
            }
            None => {
                self.calls.push(call);
                (self.calls.len() - 1) as u32
            }
        }
    }

    fn new_job(&mut self, call: u32, tag: u32, service: u8, hedge: bool) -> u32 {
        let state = JobState::Pending;
        let job = Job { call, tag, service, state, cancelled: false, hedge, pending: 0, first_child: NONE };
        match self.free_jobs.pop() {
            Some(index) => {
                self.jobs[index as usize] = job;
                index
            }
            None => {
                self.jobs.push(job);
                (self.jobs.len() - 1) as u32
            }
        }
    }

    /// Asks the caller's limiter to admit a first try or retry of `call`, then sends it now, later, or not at
    /// all (a local rejection is a failed attempt that never left). Hedges skip admission.
    fn send(&mut self, call: u32, kind: Kind, scheduler: &mut Scheduler<LayerEvent>) {
        let limiter = self.calls[call as usize].limiter as usize;
        if kind != Kind::Hedge && self.limiters[limiter].is_some() {
            let draw = self.streams.admission.random::<f64>();
            let admission = match &mut self.limiters[limiter] {
                Some(limiter) => limiter.admit(scheduler.now(), draw),
                None => Admission::Send,
            };
            match admission {
                Admission::Send => {}
                Admission::Reject => {
                    self.tally.rejected_locally += 1;
                    // A retry granted but never sent: its permit goes back as a withdrawal.
                    if let (Some(permit), Some(limiter)) =
                        (self.calls[call as usize].permit.take(), &mut self.limiters[limiter])
                    {
                        limiter.withdraw(scheduler.now(), false, Some(permit));
                    }
                    return self.after_failure(call, Failed::Error, true, scheduler);
                }
                Admission::Wait(delay) => {
                    let tag = self.tag();
                    self.calls[call as usize].timer = tag;
                    return scheduler.schedule_in(delay, LayerEvent::Admitted { call, tag, kind });
                }
            }
        }
        self.dispatch(call, kind, scheduler);
    }

    /// Sends one attempt of `call` and arms its timeout and hedge timers.
    fn dispatch(&mut self, call: u32, kind: Kind, scheduler: &mut Scheduler<LayerEvent>) {
        let now = scheduler.now();
        let limiter = self.calls[call as usize].limiter as usize;
        if let Some(limiter) = &mut self.limiters[limiter] {
            limiter.on_send(now, kind == Kind::Retry);
        }
        let tag = self.tag();
        let Call { caller, service, .. } = self.calls[call as usize];
        let job = self.new_job(call, tag, service, kind == Kind::Hedge);
        let permit = if kind == Kind::Retry { self.calls[call as usize].permit.take() } else { None };
        let flights = &mut self.calls[call as usize].in_flight;
        let slot = flights.iter().position(Option::is_none);
        debug_assert!(slot.is_some(), "at most two copies of an attempt are in flight");
        let slept = if kind == Kind::Retry { self.calls[call as usize].slept } else { SimDuration::ZERO };
        let flights = &mut self.calls[call as usize].in_flight;
        flights[slot.unwrap_or(0)] = Some(InFlight { tag, job, sent: now, permit, hedge: kind == Kind::Hedge, slept });
        let (phase, bottom) = (self.calls[call as usize].phase, self.config.is_bottom(service as usize));
        self.tally.attempt(caller, service, kind, phase, bottom, now);
        let hop = self.hop();
        scheduler.schedule_in(hop, LayerEvent::Arrives { job });
        let policy = self.policy(caller);
        if let Some(timeout) = policy.timeout {
            self.deadlines[caller as usize].push_back((now + timeout, call, tag));
            if !self.timer_armed[caller as usize] {
                self.timer_armed[caller as usize] = true;
                scheduler.schedule_in(timeout, LayerEvent::Timeouts { caller });
            }
        }
        if kind != Kind::Hedge
            && let Some(delay) = self.hedge_delay[caller as usize]
        {
            scheduler.schedule_in(delay, LayerEvent::HedgeDue { call, tag });
        }
    }

    /// A service takes on `job`: a worker if one is free, else the queue (or a fast failure when it is full).
    fn arrive(&mut self, job: u32, scheduler: &mut Scheduler<LayerEvent>) {
        if self.jobs[job as usize].cancelled {
            return self.free_job(job);
        }
        let service = self.jobs[job as usize].service as usize;
        let config = &self.config.services[service];
        match config.faults.at(scheduler.now()) {
            Some(FaultKind::FailFast | FaultKind::Reset) => return self.respond(job, Status::Failed, scheduler),
            Some(FaultKind::BlackHole) => return self.free_job(job),
            None | Some(FaultKind::Slowdown(_)) => {}
        }
        if config.workers == 0 || self.busy[service] < config.workers {
            self.busy[service] += 1;
            return self.start_work(job, scheduler);
        }
        if config.queue_limit.is_some_and(|limit| self.queued[service] >= limit) {
            return self.respond(job, Status::Throttled, scheduler);
        }
        self.jobs[job as usize].state = JobState::Queued;
        self.queued[service] += 1;
        self.queues[service].push_back(job);
    }

    fn start_work(&mut self, job: u32, scheduler: &mut Scheduler<LayerEvent>) {
        let service = &self.config.services[self.jobs[job as usize].service as usize];
        self.jobs[job as usize].state = JobState::Working;
        let stream = if self.jobs[job as usize].hedge { &mut self.streams.hedges } else { &mut self.streams.service };
        let mut work = service.work.sample(stream);
        if let Some(FaultKind::Slowdown(factor)) = service.faults.at(scheduler.now()) {
            work = SimDuration::from_nanos_f64(work.as_nanos_f64() * factor);
        }
        scheduler.schedule_in(work, LayerEvent::WorkDone { job });
    }

    /// The service is done with its own work on `job`: free the worker, then fail, answer, or call down.
    fn work_done(&mut self, job: u32, scheduler: &mut Scheduler<LayerEvent>) {
        let now = scheduler.now();
        let index = self.jobs[job as usize].service as usize;
        let service = &self.config.services[index];
        self.busy[index] -= 1;
        if service.workers > 0 {
            while let Some(next) = self.queues[index].pop_front() {
                if self.jobs[next as usize].cancelled {
                    self.free_job(next);
                    continue;
                }
                self.queued[index] -= 1;
                self.busy[index] += 1;
                self.start_work(next, scheduler);
                break;
            }
        }
        if self.jobs[job as usize].cancelled {
            return self.free_job(job);
        }
        if service.failure_probability > 0.0 && self.streams.faults.random::<f64>() < service.failure_probability {
            return self.respond(job, Status::Failed, scheduler);
        }
        if service.calls.is_empty() {
            return self.respond(job, Status::Ok, scheduler);
        }
        let caller = index as u8 + 1;
        let tag = self.jobs[job as usize].tag;
        self.jobs[job as usize].state = JobState::Waiting;
        self.jobs[job as usize].pending = service.calls.len() as u32 * service.fanout;
        for &below in &service.calls {
            for _ in 0..service.fanout {
                let child = self.new_call(job, caller, below, now);
                self.calls[child as usize].next_sibling = self.jobs[job as usize].first_child;
                self.jobs[job as usize].first_child = child;
                self.send(child, Kind::First, scheduler);
                // A child refused locally may have failed the job already (its slot freed, perhaps reused).
                if self.jobs[job as usize].tag != tag {
                    return;
                }
            }
        }
    }

    /// `job` answers its caller: frees it and the calls it made (all finished by now).
    fn respond(&mut self, job: u32, status: Status, scheduler: &mut Scheduler<LayerEvent>) {
        let Job { call, tag, .. } = self.jobs[job as usize];
        self.release_children(job);
        self.free_job(job);
        let hop = self.hop();
        scheduler.schedule_in(hop, LayerEvent::Answer { call, tag, status });
    }

    fn release_children(&mut self, job: u32) {
        let mut child = self.jobs[job as usize].first_child;
        while child != NONE {
            let next = self.calls[child as usize].next_sibling;
            self.free_calls.push(child);
            child = next;
        }
        self.jobs[job as usize].first_child = NONE;
    }

    /// Stops a call and everything it caused below: its attempts' jobs, and their calls in turn.
    fn cancel_call(&mut self, call: u32, now: SimTime) {
        let state = &mut self.calls[call as usize];
        if state.done {
            return;
        }
        state.done = true;
        let limiter = state.limiter as usize;
        if let (Some(permit), Some(limiter)) = (state.permit.take(), &mut self.limiters[limiter]) {
            limiter.withdraw(now, false, Some(permit));
        }
        for slot in 0..2 {
            if let Some(attempt) = self.calls[call as usize].in_flight[slot].take() {
                self.trace(call, attempt, now, "cancelled", 0);
                if let Some(limiter) = &mut self.limiters[limiter] {
                    limiter.withdraw(now, true, attempt.permit);
                }
                self.cancel_job(attempt.job, attempt.tag, now);
            }
        }
    }

    /// Cancels `job` if it still handles attempt `tag` (it may have answered, and been reused, already).
    fn cancel_job(&mut self, job: u32, tag: u32, now: SimTime) {
        if self.jobs[job as usize].tag != tag {
            return;
        }
        self.jobs[job as usize].cancelled = true;
        match self.jobs[job as usize].state {
            JobState::Waiting => {}
            JobState::Queued => {
                // A worker skips it later; it no longer takes a place in the queue.
                self.queued[self.jobs[job as usize].service as usize] -= 1;
                return;
            }
            // A pending event (arrival, work done) finds it cancelled and frees it.
            JobState::Pending | JobState::Working => return,
        }
        let mut child = self.jobs[job as usize].first_child;
        while child != NONE {
            self.cancel_call(child, now);
            child = self.calls[child as usize].next_sibling;
        }
        self.release_children(job);
        self.free_job(job);
    }

    /// Records how an attempt of `call` ended, when tracing.
    fn trace(&mut self, call: u32, attempt: InFlight, end: SimTime, outcome: &'static str, status: u16) {
        if let Some(spans) = self.spans.as_mut().filter(|spans| spans.len() < MAX_TRACE_SPANS) {
            let state = &self.calls[call as usize];
            let (owner, layer, start, attempt_number) =
                (state.request, state.service, attempt.sent, state.failed_attempts + 1);
            let (slept, hedge, id, parent) = (attempt.slept, attempt.hedge, attempt.tag, state.parent_tag);
            spans.push(Span {
                owner,
                layer,
                start,
                end,
                attempt: attempt_number,
                outcome,
                status,
                slept,
                hedge,
                id,
                parent,
                at_server: None,
            });
        }
    }

    /// Removes attempt `tag` from `call`'s flights; `None` if the attempt is no longer awaited.
    fn land(&mut self, call: u32, tag: u32) -> Option<InFlight> {
        let state = &mut self.calls[call as usize];
        if state.done {
            return None;
        }
        let slot = state.in_flight.iter().position(|f| f.is_some_and(|f| f.tag == tag))?;
        state.in_flight[slot].take()
    }

    fn answer(&mut self, call: u32, tag: u32, status: Status, scheduler: &mut Scheduler<LayerEvent>) {
        let now = scheduler.now();
        let Some(attempt) = self.land(call, tag) else { return };
        if self.spans.is_some() {
            let (outcome, code) = match status {
                Status::Ok => ("success", 200),
                Status::Failed => ("error", 503),
                Status::Throttled => ("throttled", 429),
            };
            self.trace(call, attempt, now, outcome, code);
        }
        let snapshot = self.calls[call as usize];
        let caller = snapshot.caller as usize;
        if let (Hedge::Percentile(q), Some(observed)) = (self.policy(snapshot.caller).hedge, &mut self.observed[caller])
        {
            observed.record(now - attempt.sent);
            let count = observed.count();
            if count >= PERCENTILE_WARMUP && count % PERCENTILE_REFRESH == 0 {
                self.hedge_delay[caller] = Some(SimDuration::from_nanos_f64(observed.quantile_nanos(q)));
            }
        }
        if let Some(limiter) = &mut self.limiters[snapshot.limiter as usize] {
            let permit = attempt.permit;
            let outcome = match status {
                Status::Ok => Outcome::success(permit),
                Status::Failed => Outcome::failure(permit),
                Status::Throttled => Outcome::throttled(permit),
            };
            limiter.record(now, outcome);
        }
        if status == Status::Ok {
            return self.finish_call(call, true, scheduler);
        }
        let retry_on = &self.policy(snapshot.caller).retry_on;
        let retried = match status {
            Status::Throttled => retry_on.rejected || retry_on.retries(Response { status: 429, transient_body: true }),
            Status::Ok | Status::Failed => retry_on.retries(Response { status: 503, transient_body: true }),
        };
        let failed = if status == Status::Throttled { Failed::Throttled } else { Failed::Error };
        self.after_failure(call, failed, retried, scheduler);
    }

    /// Times out every attempt of `caller` whose deadline has come, then re-arms the timer for the next one.
    fn timeouts_due(&mut self, caller: u8, scheduler: &mut Scheduler<LayerEvent>) {
        let now = scheduler.now();
        let index = caller as usize;
        // Retries sent from here push new deadlines; they must not arm a second timer.
        self.timer_armed[index] = true;
        while let Some(&(deadline, call, tag)) = self.deadlines[index].front() {
            if deadline > now {
                scheduler.schedule_at(deadline, LayerEvent::Timeouts { caller });
                return;
            }
            self.deadlines[index].pop_front();
            self.timeout(call, tag, scheduler);
        }
        self.timer_armed[index] = false;
    }

    fn timeout(&mut self, call: u32, tag: u32, scheduler: &mut Scheduler<LayerEvent>) {
        let Some(attempt) = self.land(call, tag) else { return };
        self.tally.timeouts += 1;
        self.trace(call, attempt, scheduler.now(), "timeout", 0);
        let snapshot = self.calls[call as usize];
        if let Some(limiter) = &mut self.limiters[snapshot.limiter as usize] {
            limiter.record(scheduler.now(), Outcome::timeout(attempt.permit));
        }
        let retried = self.policy(snapshot.caller).retry_on.timeout;
        self.after_failure(call, Failed::Timeout, retried, scheduler);
    }

    /// An attempt of `call` failed (or timed out, or was refused locally): wait for a hedge still in flight,
    /// else retry (if `retried`: the caller retries this failure) or give up.
    fn after_failure(&mut self, call: u32, failed: Failed, retried: bool, scheduler: &mut Scheduler<LayerEvent>) {
        let now = scheduler.now();
        if self.calls[call as usize].in_flight.iter().any(Option::is_some) {
            return;
        }
        let state = &mut self.calls[call as usize];
        state.failed_attempts += 1;
        let snapshot = *state;
        let caller = snapshot.caller as usize;
        let policy = self.policy(snapshot.caller);
        if !retried || snapshot.failed_attempts >= policy.attempts {
            return self.finish_call(call, false, scheduler);
        }
        let first_tries = self.tally.callers[caller].first_tries as f64;
        if policy.budget.is_some_and(|b| (self.budget_spent[caller] + 1) as f64 > b * first_tries) {
            self.tally.refused += 1;
            return self.finish_call(call, false, scheduler);
        }
        if let Some(limiter) = &mut self.limiters[snapshot.limiter as usize] {
            match limiter.acquire_retry(now, failed) {
                Some(permit) => self.calls[call as usize].permit = Some(permit),
                None => {
                    self.tally.refused += 1;
                    return self.finish_call(call, false, scheduler);
                }
            }
        }
        if policy.budget.is_some() {
            self.budget_spent[caller] += 1;
        }
        let tag = self.tag();
        let state = &mut self.calls[call as usize];
        state.timer = tag;
        let elapsed = now - state.started;
        let kind = if failed == Failed::Throttled { FailureKind::Throttling } else { FailureKind::Transient };
        let decision = policy.backoff.after_failure(
            state.failed_attempts,
            elapsed,
            (kind, None),
            &mut state.memory,
            &mut self.streams.jitter,
        );
        let decision = match self.config.clock {
            Some(clock) => {
                let own = &self.clocks[state.limiter as usize];
                clock.align_decision(decision, (now, elapsed), policy.backoff.deadline, own, &mut self.streams.offsets)
            }
            None => decision,
        };
        match decision {
            RetryDecision::RetryAfter(sleep) => {
                let sleep = state.permit.map_or(sleep, |permit| permit.sleep(now, sleep));
                state.slept = sleep;
                scheduler.schedule_in(sleep, LayerEvent::RetryDue { call, tag })
            }
            RetryDecision::GiveUp(_) => self.finish_call(call, false, scheduler),
        }
    }

    fn hedge_due(&mut self, call: u32, tag: u32, scheduler: &mut Scheduler<LayerEvent>) {
        let state = &self.calls[call as usize];
        let waiting =
            state.in_flight.iter().flatten().count() == 1 && state.in_flight.iter().flatten().any(|f| f.tag == tag);
        if state.done || !waiting {
            return;
        }
        let counts = self.tally.callers[state.caller as usize];
        let policy = self.policy(state.caller);
        if policy.hedge_max_extra.is_some_and(|cap| (counts.hedges + 1) as f64 > cap * counts.first_tries as f64) {
            return;
        }
        self.send(call, Kind::Hedge, scheduler);
    }

    /// `call` has its final result: cancel any copy still in flight, then tell the job it serves.
    fn finish_call(&mut self, call: u32, succeeded: bool, scheduler: &mut Scheduler<LayerEvent>) {
        self.cancel_call(call, scheduler.now());
        let state = self.calls[call as usize];
        if state.parent == NONE {
            self.free_calls.push(call);
            self.tally.user_request_ended(state.phase, state.started, scheduler.now(), succeeded);
            return;
        }
        let parent = state.parent;
        if !succeeded {
            // All calls must succeed: the first final failure fails the job, and its other calls are moot.
            let mut child = self.jobs[parent as usize].first_child;
            while child != NONE {
                self.cancel_call(child, scheduler.now());
                child = self.calls[child as usize].next_sibling;
            }
            return self.respond(parent, Status::Failed, scheduler);
        }
        let job = &mut self.jobs[parent as usize];
        job.pending -= 1;
        if job.pending == 0 {
            self.respond(parent, Status::Ok, scheduler);
        }
    }

    fn finish(self, events: u64) -> RunOutput {
        self.tally.finish(self.config, self.trigger, self.spans.unwrap_or_default(), events)
    }
}

impl Model for LayersRun<'_> {
    type Event = LayerEvent;

    fn handle(&mut self, event: LayerEvent, scheduler: &mut Scheduler<LayerEvent>) {
        match event {
            LayerEvent::UserRequest => {
                let call = self.new_call(NONE, 0, 0, scheduler.now());
                self.tally.user_request(self.calls[call as usize].phase, scheduler.now());
                self.send(call, Kind::First, scheduler);
                if self.tally.issued < self.config.requests
                    && let Some(next) = self.config.arrivals.next_arrival_after(
                        scheduler.now(),
                        SimTime::MAX,
                        &mut self.streams.arrivals,
                    )
                {
                    scheduler.schedule_at(next, LayerEvent::UserRequest);
                }
            }
            LayerEvent::Arrives { job } => self.arrive(job, scheduler),
            LayerEvent::WorkDone { job } => self.work_done(job, scheduler),
            LayerEvent::Answer { call, tag, status } => self.answer(call, tag, status, scheduler),
            LayerEvent::Admitted { call, tag, kind } => {
                let state = &self.calls[call as usize];
                if !state.done && state.timer == tag {
                    self.dispatch(call, kind, scheduler);
                }
            }
            LayerEvent::Timeouts { caller } => self.timeouts_due(caller, scheduler),
            LayerEvent::RetryDue { call, tag } => {
                let state = &self.calls[call as usize];
                if !state.done && state.timer == tag {
                    self.send(call, Kind::Retry, scheduler);
                }
            }
            LayerEvent::HedgeDue { call, tag } => self.hedge_due(call, tag, scheduler),
        }
    }
}
