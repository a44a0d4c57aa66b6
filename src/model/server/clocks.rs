//! The server model's clients' clocks: one per client (per request for an open workload), their skews drawn from
//! the world's clock stream and their offsets from the policy's, and the periodic workload's runs (the world's
//! timer stream), each scheduled when the one before it starts.

use crate::engine::{RunSeeds, SimRng, Stream};
use crate::policy::{ClientClock, ClockPolicy, RetryDecision};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Arrivals, PeriodicTimer};

#[derive(Clone)]
pub(super) struct Clocks {
    policy: Option<ClockPolicy>,
    /// Skews (the world's clock stream) and offsets (the policy's) of open workloads' requests, and per-attempt
    /// offsets.
    skews: SimRng,
    offsets: SimRng,
    /// Perturbations and randomized delays of periodic jobs (the world's timer stream).
    timers: SimRng,
    /// Per client (host) of a burst, closed or periodic workload; empty without a clock policy.
    per_client: Vec<ClientClock>,
    periodic: Option<Periodic>,
}

#[derive(Clone)]
struct Periodic {
    timer: PeriodicTimer,
    /// Per host: systemd's perturbation, and the next run's number.
    perturbation: Vec<SimDuration>,
    next_run: Vec<u64>,
    /// No run starts at or after this.
    until: SimTime,
}

impl Clocks {
    pub(super) fn new(policy: Option<ClockPolicy>, arrivals: &Arrivals, until: SimTime, seeds: RunSeeds) -> Clocks {
        let (mut skews, mut offsets, mut timers) =
            (seeds.stream(Stream::Clocks), seeds.stream(Stream::Offsets), seeds.stream(Stream::Timers));
        let clients = arrivals.clients().unwrap_or(0) as usize;
        let per_client = match policy {
            Some(policy) => (0..clients).map(|_| policy.client_clock(&mut skews, &mut offsets)).collect(),
            None => Vec::new(),
        };
        let periodic = match arrivals {
            Arrivals::Periodic { hosts, timer } => Some(Periodic {
                timer: *timer,
                perturbation: (0..*hosts).map(|_| PeriodicTimer::host_perturbation(&mut timers)).collect(),
                next_run: vec![0; *hosts as usize],
                until,
            }),
            _ => None,
        };
        Clocks { policy, skews, offsets, timers, per_client, periodic }
    }

    /// The clock of a new request of `client` (`None`: an open workload's request, which gets a clock of its own).
    pub(super) fn of_request(&mut self, client: Option<u32>) -> ClientClock {
        match (self.policy, client) {
            (None, _) => ClientClock::default(),
            (Some(_), Some(client)) => self.per_client[client as usize],
            (Some(policy), None) => policy.client_clock(&mut self.skews, &mut self.offsets),
        }
    }

    /// A retry decision made at `now`, `elapsed` into the request, stretched to the request's clock.
    pub(super) fn align(
        &mut self,
        decision: RetryDecision,
        at: (SimTime, SimDuration),
        deadline: Option<SimDuration>,
        clock: &ClientClock,
    ) -> RetryDecision {
        match self.policy {
            Some(policy) => policy.align_decision(decision, at, deadline, clock, &mut self.offsets),
            None => decision,
        }
    }

    /// The time of `host`'s next periodic run, if it starts before the workload stops; counts it as scheduled.
    pub(super) fn next_run(&mut self, host: u32) -> Option<SimTime> {
        let periodic = self.periodic.as_mut()?;
        let index = host as usize;
        let k = periodic.next_run[index];
        periodic.next_run[index] += 1;
        let skew = self.per_client.get(index).map_or(0, |clock| clock.skew_nanos);
        let at = periodic.timer.run_at(k, skew, periodic.perturbation[index], &mut self.timers);
        (at < periodic.until).then_some(at)
    }
}
