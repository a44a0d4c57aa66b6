//! One replicate of the queue model: messages in a table indexed by their number, the visible ones in a FIFO (or,
//! ordered, per partition with a FIFO of partitions whose head is visible), and consumers that take the oldest.
//! A message's `epoch` names its latest receipt or delay, so a visibility event that a later receipt or an
//! acknowledgement has overtaken is recognised and dropped.

use std::collections::VecDeque;

use rand::RngExt;

use super::params::{Ordering, QueueConfig, Redelivery};
use super::{metric, series};
use crate::engine::{Model, RunSeeds, Scheduler, Streams, run};
use crate::metrics::{BucketCounter, BucketMax, LatencyHistogram, lay_out_timeline};
use crate::model::faults::FaultKind;
use crate::model::trace::{MAX_TRACE_SPANS, Span};
use crate::model::{RunOutput, RunSettings};
use crate::policy::{BackoffMemory, FailureKind, sidekiq_custom_delay, sidekiq_delay};
use crate::time::{SimDuration, SimTime};
use crate::workload::Arrivals;

pub(super) fn simulate(config: &QueueConfig, settings: RunSettings) -> RunOutput {
    let mut state = QueueRun::new(config, settings.seeds, settings.bucket);
    if settings.trace {
        state.spans = Some(Vec::new());
    }
    let mut scheduler = Scheduler::with_capacity(1024);
    match &config.workload.arrivals {
        Arrivals::Burst { requests } => {
            for _ in 0..*requests {
                scheduler.schedule_at(SimTime::ZERO, QueueEvent::Produce);
            }
        }
        Arrivals::Open { schedule } => {
            if let Some(first) = schedule.next_arrival_after(SimTime::ZERO, config.workload.duration, &mut state.streams.arrivals) {
                scheduler.schedule_at(first, QueueEvent::OpenArrival);
            }
        }
        Arrivals::Closed { .. } | Arrivals::Periodic { .. } => {}
    }
    let stats = run(&mut state, &mut scheduler, settings.limit());
    let mut output = state.finish(stats.events);
    output.truncated = stats.truncated;
    output
}

#[derive(Clone, Copy, Debug)]
pub(super) enum QueueEvent {
    /// A producer enqueues one message (a burst's).
    Produce,
    /// The next open-loop message.
    OpenArrival,
    /// A message becomes visible again, if `epoch` is still its latest receipt or delay.
    Visible { message: u32, epoch: u32 },
    /// The downstream finishes worker `worker`'s call `token` (successfully or not).
    CallDone { worker: u32, token: u32, ok: bool },
    /// Worker `worker`'s processing timeout for call `token`.
    Timeout { worker: u32, token: u32 },
    /// The downstream refused worker `worker`'s call `token` at once (full, or a fail-fast fault).
    Refused { worker: u32, token: u32 },
}

/// Memory per message alive: its record and two pending events, each counted twice for the slack of growing
/// buffers (the plan's memory estimate).
pub(super) const BYTES_PER_MESSAGE: u64 = (size_of::<Message>() + 2 * 2 * size_of::<(u64, QueueEvent)>()) as u64;

/// Memory per consumer (its call in progress, its place on the idle list) and per partition of an ordered queue
/// (its FIFO and that FIFO's first block), whatever the messages do (the plan's memory estimate).
pub(super) const BYTES_PER_WORKER: u64 = (size_of::<Worker>() + size_of::<u32>()) as u64;
pub(super) const BYTES_PER_PARTITION: u64 = (size_of::<VecDeque<u32>>() + 4 * size_of::<u32>() + 16) as u64;

#[derive(Clone, Copy, Debug, Default)]
struct Message {
    enqueued: SimTime,
    receives: u32,
    epoch: u32,
    /// In the FIFO of visible messages (or at its partition's head, ready to be received).
    visible: bool,
    /// Acknowledged or dead-lettered.
    finished: bool,
    poison: bool,
    partition: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct Worker {
    /// The call in progress (0: idle).
    token: u32,
    message: u32,
    /// The message's epoch at this receipt (a failure may change its visibility only while it is current).
    receipt: u32,
    started: SimTime,
}

struct QueueRun<'a> {
    config: &'a QueueConfig,
    /// One random stream per purpose. Which messages are poison is drawn with the arrivals, in enqueue order: the
    /// same messages are poison whatever the consumers do.
    streams: Streams,
    messages: Vec<Message>,
    /// Unordered: visible messages, oldest first (entries no longer visible are skipped).
    visible: VecDeque<u32>,
    /// Ordered: each partition's unfinished messages in order, and the partitions whose head is visible.
    partitions: Vec<VecDeque<u32>>,
    ready_partitions: VecDeque<u32>,
    workers: Vec<Worker>,
    idle: Vec<u32>,
    next_token: u32,
    /// Downstream calls in progress (for `capacity`).
    calls_in_progress: u32,
    depth: u32,
    depth_area: f64,
    depth_changed: SimTime,
    last_activity: SimTime,
    oldest_age: SimDuration,
    counts: Counts,
    latency: LatencyHistogram,
    timeline: [BucketCounter; series::COUNTED],
    depth_levels: BucketMax,
    spans: Option<Vec<Span>>,
}

#[derive(Default)]
struct Counts {
    processed: u64,
    dead_lettered: u64,
    receives: u64,
    redeliveries: u64,
    duplicates_processed: u64,
    downstream_calls: u64,
    timeouts: u64,
}

impl<'a> QueueRun<'a> {
    fn new(config: &'a QueueConfig, seeds: RunSeeds, bucket: SimDuration) -> Self {
        let ordered = config.ordering == Ordering::Ordered;
        QueueRun {
            config,
            streams: Streams::new(seeds),
            messages: Vec::with_capacity(1024),
            visible: VecDeque::with_capacity(1024),
            partitions: if ordered { vec![VecDeque::new(); config.partitions as usize] } else { Vec::new() },
            ready_partitions: VecDeque::new(),
            workers: vec![Worker::default(); config.workers as usize],
            idle: (0..config.workers).rev().collect(),
            next_token: 1,
            calls_in_progress: 0,
            depth: 0,
            depth_area: 0.0,
            depth_changed: SimTime::ZERO,
            last_activity: SimTime::ZERO,
            oldest_age: SimDuration::ZERO,
            counts: Counts::default(),
            latency: LatencyHistogram::default(),
            timeline: std::array::from_fn(|_| BucketCounter::new(bucket)),
            depth_levels: BucketMax::new(bucket),
            spans: None,
        }
    }

    fn set_depth(&mut self, now: SimTime, depth: u32) {
        self.depth_area += f64::from(self.depth) * (now - self.depth_changed).as_nanos_f64();
        self.depth_changed = now;
        self.depth = depth;
        self.depth_levels.record(now, depth);
    }

    fn enqueue(&mut self, now: SimTime) {
        let id = self.messages.len() as u32;
        let poison =
            self.config.poison_probability > 0.0 && self.streams.arrivals.random::<f64>() < self.config.poison_probability;
        let partition = if self.partitions.is_empty() { 0 } else { id % self.config.partitions };
        self.messages.push(Message { enqueued: now, poison, partition, ..Message::default() });
        self.timeline[series::ENQUEUED].record(now);
        self.set_depth(now, self.depth + 1);
        if let Some(queue) = self.partitions.get_mut(partition as usize) {
            queue.push_back(id);
        }
        self.make_visible(id);
    }

    fn make_visible(&mut self, id: u32) {
        let message = &mut self.messages[id as usize];
        message.visible = true;
        let partition = message.partition;
        match self.partitions.get(partition as usize) {
            None => self.visible.push_back(id),
            Some(queue) if queue.front() == Some(&id) => self.ready_partitions.push_back(partition),
            Some(_) => {}
        }
    }

    /// The next message a consumer may receive, taken out of the visible set.
    fn take_next(&mut self) -> Option<u32> {
        loop {
            let id = if self.partitions.is_empty() {
                self.visible.pop_front()?
            } else {
                let partition = self.ready_partitions.pop_front()?;
                *self.partitions[partition as usize].front()?
            };
            let message = &mut self.messages[id as usize];
            if message.visible && !message.finished {
                message.visible = false;
                return Some(id);
            }
        }
    }

    /// Idle consumers receive visible messages.
    fn dispatch(&mut self, scheduler: &mut Scheduler<QueueEvent>) {
        while !self.idle.is_empty() {
            let Some(id) = self.take_next() else { return };
            self.receive(id, scheduler);
        }
    }

    fn receive(&mut self, id: u32, scheduler: &mut Scheduler<QueueEvent>) {
        let now = scheduler.now();
        let config = self.config;
        let message = &mut self.messages[id as usize];
        let sqs = matches!(config.redelivery, Redelivery::VisibilityTimeout { .. });
        if sqs && config.max_receives.is_some_and(|max| message.receives >= max) {
            // The receive that would exceed maxReceiveCount moves the message instead.
            return self.dead_letter(id, now);
        }
        message.receives += 1;
        message.epoch = message.epoch.wrapping_add(1);
        let (receives, epoch) = (message.receives, message.epoch);
        self.counts.receives += 1;
        self.timeline[series::RECEIVED].record(now);
        if receives > 1 {
            self.counts.redeliveries += 1;
            self.timeline[series::REDELIVERED].record(now);
        }
        if let Redelivery::VisibilityTimeout { visibility, .. } = config.redelivery {
            scheduler.schedule_in(visibility, QueueEvent::Visible { message: id, epoch });
        }
        let worker = self.idle.pop().expect("dispatch checked for an idle consumer");
        let token = self.next_token;
        self.next_token = self.next_token.wrapping_add(1).max(1);
        self.workers[worker as usize] = Worker { token, message: id, receipt: epoch, started: now };
        if let Some(timeout) = config.timeout {
            scheduler.schedule_in(timeout, QueueEvent::Timeout { worker, token });
        }
        self.call_downstream(worker, token, scheduler);
    }

    fn call_downstream(&mut self, worker: u32, token: u32, scheduler: &mut Scheduler<QueueEvent>) {
        let now = scheduler.now();
        self.counts.downstream_calls += 1;
        let full = self.config.capacity.is_some_and(|capacity| self.calls_in_progress >= capacity);
        let fault = self.config.faults.at(now);
        let service = match fault {
            _ if full => None,
            Some(FaultKind::FailFast | FaultKind::Reset) => None,
            Some(FaultKind::BlackHole) => return,
            Some(FaultKind::Slowdown(factor)) => {
                Some(SimDuration::from_nanos_f64(self.config.service.sample_nanos(&mut self.streams.service) * factor))
            }
            None => Some(self.config.service.sample(&mut self.streams.service)),
        };
        let Some(service) = service else {
            // Refused at once; an event of its own, so that a fault window does not recurse through the queue.
            return scheduler.schedule_in(SimDuration::ZERO, QueueEvent::Refused { worker, token });
        };
        let poison = self.messages[self.workers[worker as usize].message as usize].poison;
        let failed = poison
            || (self.config.failure_probability > 0.0 && self.streams.faults.random::<f64>() < self.config.failure_probability);
        self.calls_in_progress += 1;
        scheduler.schedule_in(service, QueueEvent::CallDone { worker, token, ok: !failed });
    }

    /// Worker `worker` is done with its message: acknowledged if `ok`, else redelivered by the rule.
    fn processing_ended(
        &mut self,
        worker: u32,
        ok: bool,
        outcome: &'static str,
        scheduler: &mut Scheduler<QueueEvent>,
    ) {
        let now = scheduler.now();
        let Worker { message: id, receipt, started, .. } = self.workers[worker as usize];
        self.workers[worker as usize].token = 0;
        self.idle.push(worker);
        let message = self.messages[id as usize];
        if let Some(spans) = self.spans.as_mut().filter(|spans| spans.len() < MAX_TRACE_SPANS) {
            let (attempt, status) = (message.receives, if ok { 200 } else { 503 });
            let outcome = if ok && message.finished { "duplicate" } else { outcome };
            spans.push(Span {
                owner: id,
                layer: 0,
                start: started,
                end: now,
                attempt,
                outcome,
                status,
                slept: SimDuration::ZERO,
                hedge: false,
                id: 0,
                parent: 0,
                at_server: None,
            });
        }
        if message.finished {
            self.counts.duplicates_processed += u64::from(ok);
        } else if ok {
            self.counts.processed += 1;
            self.latency.record(now - message.enqueued);
            self.timeline[series::PROCESSED].record(now);
            self.leave(id, now);
        } else {
            self.redeliver(id, receipt, scheduler);
        }
        self.dispatch(scheduler);
    }

    /// A failed message comes back by the rule, or goes to the dead letters.
    fn redeliver(&mut self, id: u32, receipt: u32, scheduler: &mut Scheduler<QueueEvent>) {
        let now = scheduler.now();
        let message = self.messages[id as usize];
        let exhausted = self.config.max_receives.is_some_and(|max| message.receives >= max);
        let delay = match self.config.redelivery {
            // Visible again when the receipt's timeout runs out, already scheduled.
            Redelivery::VisibilityTimeout { backoff: false, .. } => return,
            // ChangeMessageVisibility needs the current receipt; the dead letters come at the next receive.
            Redelivery::VisibilityTimeout { backoff: true, .. } if receipt != message.epoch => return,
            Redelivery::VisibilityTimeout { backoff: true, .. } => self.backoff(message.receives),
            _ if exhausted => return self.dead_letter(id, now),
            Redelivery::TtlQueue { ttl, backoff: false } => ttl,
            Redelivery::TtlQueue { backoff: true, .. } => self.backoff(message.receives),
            Redelivery::Sidekiq { backoff: false } => sidekiq_delay(message.receives, &mut self.streams.jitter),
            Redelivery::Sidekiq { backoff: true } => {
                let custom = self.backoff(message.receives);
                sidekiq_custom_delay(message.receives, custom, &mut self.streams.jitter)
            }
        };
        let message = &mut self.messages[id as usize];
        message.epoch = message.epoch.wrapping_add(1);
        scheduler.schedule_in(delay, QueueEvent::Visible { message: id, epoch: message.epoch });
    }

    /// The strategy's delay after `n` failed receives.
    fn backoff(&mut self, n: u32) -> SimDuration {
        let mut memory = BackoffMemory::default();
        self.config.retry.sleep_before(n, FailureKind::Transient, &mut memory, &mut self.streams.jitter)
    }

    fn dead_letter(&mut self, id: u32, now: SimTime) {
        self.counts.dead_lettered += 1;
        self.timeline[series::DEAD_LETTERED].record(now);
        self.leave(id, now);
    }

    /// `id` leaves the queue (acknowledged or dead-lettered); an ordered partition moves on to its next message.
    fn leave(&mut self, id: u32, now: SimTime) {
        let message = &mut self.messages[id as usize];
        message.finished = true;
        let (partition, enqueued) = (message.partition, message.enqueued);
        self.oldest_age = self.oldest_age.max(now - enqueued);
        self.set_depth(now, self.depth - 1);
        let Some(queue) = self.partitions.get_mut(partition as usize) else { return };
        while queue.front().is_some_and(|&head| self.messages[head as usize].finished) {
            queue.pop_front();
        }
        if let Some(&head) = queue.front()
            && self.messages[head as usize].visible
        {
            self.ready_partitions.push_back(partition);
        }
    }

    fn finish_run(&mut self) {
        let end = self.last_activity;
        self.set_depth(end, self.depth);
        for message in self.messages.iter().filter(|message| !message.finished) {
            self.oldest_age = self.oldest_age.max(end - message.enqueued);
        }
    }

    fn finish(mut self, events: u64) -> RunOutput {
        self.finish_run();
        let counts = &self.counts;
        let ms = |nanos: f64| nanos / 1e6;
        let messages = self.messages.len() as f64;
        let mut metrics = vec![0.0; metric::COUNT];
        metrics[metric::MESSAGES] = messages;
        metrics[metric::PROCESSED] = counts.processed as f64;
        metrics[metric::DEAD_LETTERED] = counts.dead_lettered as f64;
        let ended = counts.processed + counts.dead_lettered;
        metrics[metric::SUCCESS_RATE] = if ended == 0 { f64::NAN } else { counts.processed as f64 / ended as f64 };
        metrics[metric::RECEIVES] = counts.receives as f64;
        metrics[metric::REDELIVERIES] = counts.redeliveries as f64;
        metrics[metric::DUPLICATES_PROCESSED] = counts.duplicates_processed as f64;
        metrics[metric::DOWNSTREAM_CALLS] = counts.downstream_calls as f64;
        metrics[metric::AMPLIFICATION] =
            if messages == 0.0 { f64::NAN } else { counts.downstream_calls as f64 / messages };
        metrics[metric::TIMEOUTS] = counts.timeouts as f64;
        metrics[metric::LATENCY_MEAN_MS] = ms(self.latency.mean_nanos());
        for (index, q) in
            [(metric::LATENCY_P50_MS, 0.5), (metric::LATENCY_P99_MS, 0.99), (metric::LATENCY_P999_MS, 0.999)]
        {
            metrics[index] = ms(self.latency.quantile_nanos(q));
        }
        metrics[metric::OLDEST_MESSAGE_AGE_MS] = self.oldest_age.as_millis_f64();
        let span = self.last_activity.as_nanos() as f64;
        metrics[metric::QUEUE_DEPTH_MEAN] = if span > 0.0 { self.depth_area / span } else { f64::NAN };
        metrics[metric::COMPLETION_MS] = self.last_activity.as_millis_f64();
        metrics[metric::EVENTS] = events as f64;
        let mut columns: Vec<(usize, &[u32])> = self.timeline.iter().map(BucketCounter::counts).enumerate().collect();
        columns.push((series::QUEUE_DEPTH, self.depth_levels.maxima()));
        let timeline = lay_out_timeline(series::COUNT, &columns);
        let highlights = self.config.faults.windows().iter().map(|window| (window.start, window.end)).collect();
        RunOutput {
            metrics,
            timeline,
            events,
            latency: Some(self.latency.sparse()),
            highlights,
            spans: self.spans.unwrap_or_default(),
            ..RunOutput::default()
        }
    }
}

impl Model for QueueRun<'_> {
    type Event = QueueEvent;

    fn handle(&mut self, event: QueueEvent, scheduler: &mut Scheduler<QueueEvent>) {
        let now = scheduler.now();
        match event {
            QueueEvent::Produce => {
                self.enqueue(now);
                self.dispatch(scheduler);
            }
            QueueEvent::OpenArrival => {
                self.enqueue(now);
                self.dispatch(scheduler);
                let Arrivals::Open { schedule } = &self.config.workload.arrivals else { return };
                if let Some(next) = schedule.next_arrival_after(now, self.config.workload.duration, &mut self.streams.arrivals) {
                    scheduler.schedule_at(next, QueueEvent::OpenArrival);
                }
            }
            QueueEvent::Visible { message: id, epoch } => {
                let message = self.messages[id as usize];
                if message.finished || message.epoch != epoch || message.visible {
                    return;
                }
                let too_old = self.config.retry.deadline.is_some_and(|deadline| now - message.enqueued >= deadline);
                if too_old {
                    self.dead_letter(id, now);
                } else {
                    self.make_visible(id);
                    self.dispatch(scheduler);
                }
            }
            QueueEvent::CallDone { worker, token, ok } => {
                self.calls_in_progress = self.calls_in_progress.saturating_sub(1);
                if self.workers[worker as usize].token != token {
                    return;
                }
                self.processing_ended(worker, ok, if ok { "processed" } else { "failed" }, scheduler);
            }
            QueueEvent::Refused { worker, token } => {
                if self.workers[worker as usize].token != token {
                    return;
                }
                self.processing_ended(worker, false, "refused", scheduler);
            }
            QueueEvent::Timeout { worker, token } => {
                if self.workers[worker as usize].token != token {
                    return;
                }
                self.counts.timeouts += 1;
                self.processing_ended(worker, false, "timeout", scheduler);
            }
        }
        self.last_activity = now;
    }
}
