//! The fluid trajectory: the server model's expected counts, stepped through time.
//!
//! Mass moves between compartments as requests do in the simulation, in the same order within an instant:
//! workers free up, queued attempts whose client's timeout passed are flagged (`abandon`) or dropped (`cancel`),
//! clients act on what reached them (answers and timeouts, each retried with the sleep law of its attempt class),
//! new requests are sent, and the server serves its queue and then admits what arrived (start while a worker is
//! free, else queue while there is room, else refuse with a 503). A start draws its service time over the
//! service law, stretched by the slowdown and the load at that instant, as the simulation fixes it at the start;
//! the share of it answered before the client's timeout is on time, the rest is late work. Every delay lands on
//! the nearest step (`Rings::add`); the timeline counts each flow at its exact time (`Stepper::count`).

use std::collections::VecDeque;

use super::model::FluidModel;
use super::tables::Failure;
use crate::model::faults::FaultKind;
use crate::model::server::OnTimeout;
use crate::policy::limiters::RetryBudget;
use crate::workload::Arrivals;

/// The timeline's columns, as the simulation's timeline.csv names them.
pub(crate) const SERIES: [&str; 7] = ["calls", "goodput", "offered", "retries", "late", "rejected", "queue_max"];
const CALLS: usize = 0;
const GOODPUT: usize = 1;
pub(super) const OFFERED: usize = 2;
const RETRIES: usize = 3;
const LATE: usize = 4;
const REJECTED: usize = 5;
const QUEUE_MAX: usize = 6;

/// The run's totals, in requests (expected counts).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Totals {
    pub(crate) calls: f64,
    pub(crate) requests: f64,
    pub(crate) retries: f64,
    pub(crate) succeeded: f64,
    pub(crate) gave_up: f64,
    /// Retries the fleet's budget refused (their requests gave up, and are in `gave_up` too).
    pub(crate) refused: f64,
    pub(crate) failed_permanently: f64,
    pub(crate) timeouts: f64,
    pub(crate) rejected: f64,
    pub(crate) late: f64,
}

/// A fluid run: the timeline per bucket, the in-time successes by first-send bucket, the totals.
#[derive(Clone, Debug)]
pub(crate) struct Trajectory {
    /// One row per bucket, in [`SERIES`] order.
    pub(crate) rows: Vec<[f64; 7]>,
    /// First tries answered successfully within `good_within`, by the bucket they were sent in.
    pub(crate) in_time: Vec<f64>,
    pub(crate) totals: Totals,
    /// The last step's time, in seconds.
    pub(crate) end_s: f64,
    /// False when the step limit came before the system drained.
    pub(crate) drained: bool,
    /// A closed workload's clients thinking at the end: all of them once drained.
    pub(crate) thinking: f64,
}

/// Ring buffers of future mass, one per lane, indexed by step modulo a power of two longer than any delay.
struct Rings {
    mask: usize,
    data: Vec<f64>,
    /// Mass added and not yet taken, over every lane.
    pending: f64,
}

impl Rings {
    fn new(lanes: usize, length: usize) -> Rings {
        Rings { mask: length - 1, data: vec![0.0; lanes * length], pending: 0.0 }
    }

    /// Adds `mass` to `lane` at `at` steps (fractional), on the nearest step and never before `earliest`. Step s
    /// acts at time s·h and stands for [s − ½, s + ½)·h: a delay that is a whole number of steps lands exactly, any
    /// other is late or early by half a step at most and on average not at all.
    fn add(&mut self, lane: usize, at: f64, mass: f64, earliest: usize) {
        if mass == 0.0 {
            return;
        }
        let step = (at.max(earliest as f64) + 0.5).floor() as usize;
        self.data[lane * (self.mask + 1) + (step & self.mask)] += mass;
        self.pending += mass;
    }

    fn take(&mut self, lane: usize, step: usize) -> f64 {
        let slot = &mut self.data[lane * (self.mask + 1) + (step & self.mask)];
        let mass = std::mem::take(slot);
        self.pending -= mass;
        mass
    }
}

/// Lanes of the per-class rings: `lane(self.classes, kind, class)`.
#[derive(Clone, Copy)]
enum Kind {
    /// Attempts reaching the server.
    Arrive,
    /// Answers after service, reaching the client in time.
    Answered,
    /// A full queue's 503 reaching the client (with `overload_retry_after`).
    Overloaded,
    /// A fail-fast window's 503 reaching the client.
    FailFast,
    /// A reset reaching the client.
    Reset,
    /// The client's timeout firing.
    Timeout,
}
const KINDS: usize = 6;

/// The lane of `kind`'s ring for attempt class `class` (1-based) among `classes`.
fn lane(classes: usize, kind: Kind, class: usize) -> usize {
    kind as usize * classes + class - 1
}

/// What one attempt class's clients met in a step: every outcome, the requests that ended, and the failures the
/// policy may retry (plain ones and a full queue's 503s).
#[derive(Clone, Copy, Debug, Default)]
struct Wanting {
    outcomes: f64,
    ended: f64,
    plain: f64,
    refused: f64,
}

/// A queued parcel: the mass of one attempt class that arrived at one step.
#[derive(Clone, Copy, Debug)]
struct Parcel {
    arrived: usize,
    class: usize,
    mass: f64,
    timed_out: bool,
}

/// Integrates `model` from t = 0 until it drains (or `max_steps`).
pub(crate) fn integrate(model: &FluidModel) -> Trajectory {
    Stepper::new(model).run()
}

struct Stepper<'m> {
    model: &'m FluidModel,
    classes: usize,
    per_class: Rings,
    /// Workers freed.
    freed: Rings,
    queue: VecDeque<Parcel>,
    /// Parcels at the queue's front already flagged timed out (`abandon`).
    flagged: usize,
    queued: f64,
    busy: f64,
    thinking: f64,
    budget: Option<RetryBudget>,
    rows: Vec<[f64; 7]>,
    in_time: Vec<f64>,
    totals: Totals,
}

impl<'m> Stepper<'m> {
    fn new(model: &'m FluidModel) -> Stepper<'m> {
        let thinking = match model.arrivals {
            Arrivals::Closed { clients, .. } => f64::from(clients) * model.scale,
            _ => 0.0,
        };
        Stepper {
            model,
            classes: model.classes,
            per_class: Rings::new(KINDS * model.classes, model.ring_length),
            freed: Rings::new(1, model.ring_length),
            queue: VecDeque::new(),
            flagged: 0,
            queued: 0.0,
            busy: 0.0,
            thinking,
            budget: model.budget.clone(),
            rows: Vec::new(),
            in_time: Vec::new(),
            totals: Totals::default(),
        }
    }

    /// Counts `mass` in `series` at `at` steps: in the bucket that holds that time, however the mass itself is
    /// then stepped, so counts are not smeared across a bucket's edge.
    fn count(&mut self, series: usize, at: f64, mass: f64) {
        let bucket = (at.max(0.0) / self.model.steps_per_bucket as f64).floor() as usize;
        self.count_in(series, bucket, mass);
    }

    fn count_in(&mut self, series: usize, bucket: usize, mass: f64) {
        self.bucket_row(bucket)[series] += mass;
    }

    /// The row of the bucket that holds `step`.
    fn row(&mut self, step: usize) -> &mut [f64; 7] {
        self.bucket_row(step / self.model.steps_per_bucket)
    }

    /// The row of `bucket`, the rows grown to hold it.
    fn bucket_row(&mut self, bucket: usize) -> &mut [f64; 7] {
        if self.rows.len() <= bucket {
            self.rows.resize(bucket + 1, [0.0; 7]);
        }
        &mut self.rows[bucket]
    }

    fn run(mut self) -> Trajectory {
        let model = self.model;
        let mut step = 0;
        let drained = loop {
            self.step(step);
            step += 1;
            let arrivals_over = step >= model.arrivals_end_step;
            let live = self.per_class.pending + self.freed.pending + self.queued + self.busy;
            if arrivals_over && live <= 1e-9 * self.totals.requests.max(1.0) {
                break true;
            }
            if step >= model.max_steps {
                break false;
            }
        };
        self.in_time.resize(self.rows.len(), 0.0);
        Trajectory {
            rows: self.rows,
            in_time: self.in_time,
            totals: self.totals,
            end_s: step as f64 * model.step_s,
            drained,
            thinking: self.thinking,
        }
    }

    fn step(&mut self, step: usize) {
        let freed = self.freed.take(0, step);
        self.busy = (self.busy - freed).max(0.0);
        self.sweep_deadlines(step);
        self.clients_act(step);
        self.first_tries(step);
        self.serve_queue(step);
        self.admit(step);
        let queued = self.queued;
        let row = self.row(step);
        row[QUEUE_MAX] = row[QUEUE_MAX].max(queued);
    }

    /// Queued parcels whose client's timeout is due: their clients time out now.
    fn sweep_deadlines(&mut self, step: usize) {
        let Some(timeout) = self.model.timeout_steps else { return };
        let due = |parcel: &Parcel| parcel.arrived + timeout <= step + self.model.network_steps;
        match self.model.on_timeout {
            OnTimeout::Cancel => {
                while let Some(parcel) = self.queue.front().copied().filter(due) {
                    self.queue.pop_front();
                    self.queued -= parcel.mass;
                    self.per_class.add(lane(self.classes, Kind::Timeout, parcel.class), step as f64, parcel.mass, step);
                }
            }
            OnTimeout::Abandon => {
                while let Some(parcel) = self.queue.get_mut(self.flagged).filter(|parcel| due(parcel)) {
                    parcel.timed_out = true;
                    let (class, mass) = (parcel.class, parcel.mass);
                    self.flagged += 1;
                    self.per_class.add(lane(self.classes, Kind::Timeout, class), step as f64, mass, step);
                }
            }
        }
    }

    /// What reached the clients at `step`, every class alike: each answer and timeout ends its request or asks for
    /// a retry; the fleet's budget, if any, books the first tries' outcomes and grants the same share of every
    /// class's retries (as the simulation's, one at a time, would over the step); then they are retried.
    fn clients_act(&mut self, step: usize) {
        let mut wanting = [Wanting::default(); super::tables::MAX_CLASSES];
        for class in 1..=self.model.classes {
            wanting[class - 1] = self.outcomes(step, class);
        }
        let grant = self.grant(step, &wanting[..self.classes]);
        for (class, wants) in wanting.iter().enumerate().take(self.classes) {
            let ended = wants.ended
                + self.retry(step, class + 1, Failure::Plain, wants.plain, grant)
                + self.retry(step, class + 1, Failure::Refused, wants.refused, grant);
            self.thinking += ended;
        }
    }

    /// The budget's share granted of the retries `wanting` asks for at `step` (1 without a budget).
    fn grant(&mut self, step: usize, wanting: &[Wanting]) -> f64 {
        let model = self.model;
        let Some(budget) = self.budget.as_mut() else { return 1.0 };
        let now = model.time_of(step);
        budget.deposit(now, wanting[0].outcomes);
        let wanted: f64 = wanting
            .iter()
            .enumerate()
            .map(|(class, wants)| {
                let share = |failure| model.table.step(failure, class + 1).retried;
                wants.plain * share(Failure::Plain) + wants.refused * share(Failure::Refused)
            })
            .sum();
        if wanted <= 0.0 {
            return 1.0;
        }
        budget.withdraw_up_to(now, wanted) / wanted
    }

    /// What reached class `class`'s clients at `step`: the requests it ended, and the failures the policy may retry.
    fn outcomes(&mut self, step: usize, class: usize) -> Wanting {
        let model = self.model;
        let answered = self.per_class.take(lane(self.classes, Kind::Answered, class), step);
        let success = answered * model.success_share;
        self.totals.succeeded += success;
        let mut plain = 0.0;
        let mut ended = success;
        for (probability, retried) in model.service_failures {
            if retried {
                plain += answered * probability;
            } else {
                self.totals.failed_permanently += answered * probability;
                ended += answered * probability;
            }
        }
        let timeouts = self.per_class.take(lane(self.classes, Kind::Timeout, class), step);
        self.totals.timeouts += timeouts;
        if model.retry_timeouts {
            plain += timeouts;
        } else {
            // A timeout left out of `retry_on`: the policy gives up.
            self.totals.gave_up += timeouts;
            ended += timeouts;
        }
        let mut refused = 0.0;
        let mut taken = 0.0;
        for (kind, retried, failure) in [
            (Kind::Reset, model.retry_reset, Failure::Plain),
            (Kind::FailFast, model.retry_503, Failure::Plain),
            (Kind::Overloaded, model.retry_503, Failure::Refused),
        ] {
            let mass = self.per_class.take(lane(self.classes, kind, class), step);
            taken += mass;
            match (retried, failure) {
                (true, Failure::Plain) => plain += mass,
                (true, Failure::Refused) => refused += mass,
                (false, _) => {
                    // An answer the classifier does not retry ends the request.
                    self.totals.failed_permanently += mass;
                    ended += mass;
                }
            }
        }
        Wanting { outcomes: answered + timeouts + taken, ended, plain, refused }
    }

    /// Retries `mass` of class `class` after a failure: the share the policy gives up ends, and of the rest the
    /// budget's `grant`; that is sent after the class's sleep law and arrives one network delay later. Returns the
    /// mass that ended.
    fn retry(&mut self, step: usize, class: usize, failure: Failure, mass: f64, grant: f64) -> f64 {
        if mass == 0.0 {
            return 0.0;
        }
        let model = self.model;
        let kernel = &model.kernels[failure as usize][class.min(model.classes) - 1];
        let mut gave_up = mass * (1.0 - kernel.retried);
        let mut retried = mass * kernel.retried;
        if grant < 1.0 {
            let refused = retried * (1.0 - grant);
            self.totals.refused += refused;
            gave_up += refused;
            retried -= refused;
        }
        self.totals.gave_up += gave_up;
        self.totals.retries += retried;
        let next = (class + 1).min(model.classes);
        let arrive = lane(self.classes, Kind::Arrive, next);
        for &(offset, weight) in &kernel.by_step {
            self.per_class.add(arrive, (step + offset + model.network_steps) as f64, retried * weight, step);
        }
        let per_bucket = model.steps_per_bucket;
        for (series, at) in [(RETRIES, step), (CALLS, step + model.network_steps)] {
            let (bucket, phase) = (at / per_bucket, at % per_bucket);
            for &(later, weight) in &kernel.by_bucket[phase] {
                self.count_in(series, bucket + later, retried * weight);
            }
        }
        gave_up
    }

    /// New requests sent at `step`: a burst at 0, an open workload's rate, a closed workload's clients done thinking.
    fn first_tries(&mut self, step: usize) {
        let model = self.model;
        let sent = match &model.arrivals {
            Arrivals::Burst { requests } if step == 0 => f64::from(*requests) * model.scale,
            Arrivals::Open { schedule } if step <= model.arrivals_end_step => {
                // Step s stands for [s − ½, s + ½)·h, cut to the arrivals' span [0, duration).
                let duration = model.arrivals_end_step as f64;
                let length = (step as f64 + 0.5).min(duration) - (step as f64 - 0.5).max(0.0);
                schedule.rate_at(model.time_of(step)) * model.scale * model.step_s * length.max(0.0)
            }
            Arrivals::Closed { .. } if step < model.arrivals_end_step => {
                let sent = self.thinking * model.think_share;
                self.thinking -= sent;
                sent
            }
            _ => 0.0,
        };
        if sent == 0.0 {
            return;
        }
        self.totals.requests += sent;
        self.count(OFFERED, step as f64, sent);
        self.count(CALLS, (step + model.network_steps) as f64, sent);
        self.per_class.add(lane(self.classes, Kind::Arrive, 1), (step + model.network_steps) as f64, sent, step);
    }

    /// Workers that are free take parcels from the queue's front.
    fn serve_queue(&mut self, step: usize) {
        while self.busy < self.model.workers {
            let Some(front) = self.queue.front_mut() else { break };
            let amount = front.mass.min(self.model.workers - self.busy);
            let parcel = Parcel { mass: amount, ..*front };
            front.mass -= amount;
            self.queued -= amount;
            if front.mass <= 1e-12 * amount {
                // What is left is rounding: the parcel is gone.
                self.queued -= front.mass;
                self.queue.pop_front();
                self.flagged = self.flagged.saturating_sub(1);
            }
            self.start(step, parcel);
        }
        if self.queue.is_empty() {
            self.queued = 0.0;
        }
    }

    /// Attempts reaching the server at `step`, met by the fault in force or admitted. Every class meets the same
    /// odds: the free workers and queue places are shared in proportion to what arrived, as arrivals interleave
    /// within a step.
    fn admit(&mut self, step: usize) {
        let model = self.model;
        let mut arriving = [0.0; super::tables::MAX_CLASSES];
        for (class, mass) in arriving.iter_mut().enumerate().take(self.classes) {
            *mass = self.per_class.take(lane(self.classes, Kind::Arrive, class + 1), step);
        }
        let total: f64 = arriving.iter().sum();
        if total == 0.0 {
            return;
        }
        self.totals.calls += total;
        let back = (step + model.network_steps) as f64;
        let answer = match model.faults.at(model.time_of(step)) {
            Some(FaultKind::BlackHole) => {
                let deadline = (step + model.timeout_steps.unwrap_or(0)).saturating_sub(model.network_steps);
                for (class, &mass) in arriving.iter().enumerate().take(self.classes) {
                    self.per_class.add(lane(self.classes, Kind::Timeout, class + 1), deadline as f64, mass, step + 1);
                }
                return;
            }
            Some(FaultKind::FailFast) => Some(Kind::FailFast),
            Some(FaultKind::Reset) => Some(Kind::Reset),
            None | Some(FaultKind::Slowdown(_)) => None,
        };
        if let Some(kind) = answer {
            self.totals.rejected += total;
            self.row(step)[REJECTED] += total;
            for (class, &mass) in arriving.iter().enumerate().take(self.classes) {
                self.per_class.add(lane(self.classes, kind, class + 1), back, mass, step + 1);
            }
            return;
        }
        let free = if self.queue.is_empty() { (model.workers - self.busy).max(0.0) } else { 0.0 };
        let started = total.min(free);
        let queued = (total - started).min((model.queue_limit - self.queued).max(0.0));
        let refused = total - started - queued;
        let (start_share, queue_share) = (started / total, queued / total);
        for (class, &mass) in arriving.iter().enumerate().take(self.classes) {
            if mass == 0.0 {
                continue;
            }
            let parcel = Parcel { arrived: step, class: class + 1, mass: mass * start_share, timed_out: false };
            if parcel.mass > 0.0 {
                self.start(step, parcel);
            }
            if queue_share > 0.0 {
                self.queue.push_back(Parcel { mass: mass * queue_share, ..parcel });
            }
            let refused_mass = mass * (1.0 - start_share - queue_share);
            self.per_class.add(lane(self.classes, Kind::Overloaded, class + 1), back, refused_mass, step + 1);
        }
        self.queued += queued;
        if refused > 0.0 {
            self.totals.rejected += refused;
            self.row(step)[REJECTED] += refused;
        }
    }

    /// Starts serving `parcel` at `step`: its service ends over the service law, on time or late.
    fn start(&mut self, step: usize, parcel: Parcel) {
        let model = self.model;
        self.busy += parcel.mass;
        let stretch = match model.faults.at(model.time_of(step)) {
            Some(FaultKind::Slowdown(factor)) => factor,
            _ => 1.0,
        };
        let load = model.latency_per_request_s * self.busy.min(model.workers) / model.scale;
        let waited = (step - parcel.arrived) as f64;
        let network = model.network_steps as f64;
        let budget = model.timeout_steps.map(|timeout| timeout as f64 - 2.0 * network - waited);
        let good = model.good_within_steps.map(|good| good - 2.0 * network - waited);
        let sent_bucket = parcel.arrived.saturating_sub(model.network_steps) / model.steps_per_bucket;
        for &(service_s, weight) in &model.service.points {
            let length = (service_s + load) * stretch / model.step_s;
            let mass = parcel.mass * weight;
            let done = step as f64 + length;
            self.freed.add(0, done, mass, step + 1);
            let on_time = !parcel.timed_out && budget.is_none_or(|budget| length <= budget);
            if on_time {
                self.per_class.add(lane(self.classes, Kind::Answered, parcel.class), done + network, mass, step + 1);
                self.count(GOODPUT, (done + network).max(step as f64 + 1.0), mass * model.success_share);
                if parcel.class == 1 && good.is_none_or(|good| length <= good) {
                    if self.in_time.len() <= sent_bucket {
                        self.in_time.resize(sent_bucket + 1, 0.0);
                    }
                    self.in_time[sent_bucket] += mass * model.success_share;
                }
            } else {
                self.totals.late += mass;
                self.count(LATE, done.max(step as f64 + 1.0), mass);
                if !parcel.timed_out {
                    let deadline =
                        (parcel.arrived + model.timeout_steps.unwrap_or(0)).saturating_sub(model.network_steps);
                    self.per_class.add(
                        lane(self.classes, Kind::Timeout, parcel.class),
                        deadline as f64,
                        mass,
                        step + 1,
                    );
                }
            }
        }
    }
}
