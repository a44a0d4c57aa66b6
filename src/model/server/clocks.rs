//! The server model's clients' clocks: one per client (per request for an open workload), drawn from the world's
//! clock stream, and the periodic workload's runs, each scheduled when the one before it starts.

use crate::engine::SimRng;
use crate::policy::{ClientClock, ClockPolicy, RetryDecision};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Arrivals, PeriodicTimer};

pub(super) struct Clocks {
    policy: Option<ClockPolicy>,
    rng: SimRng,
    /// Per client (host) of a burst, closed or periodic workload; empty without a clock policy.
    per_client: Vec<ClientClock>,
    periodic: Option<Periodic>,
}

struct Periodic {
    timer: PeriodicTimer,
    /// Per host: systemd's perturbation, and the next run's number.
    perturbation: Vec<SimDuration>,
    next_run: Vec<u64>,
    /// No run starts at or after this.
    until: SimTime,
}

impl Clocks {
    pub(super) fn new(policy: Option<ClockPolicy>, arrivals: &Arrivals, until: SimTime, mut rng: SimRng) -> Clocks {
        let clients = arrivals.clients().unwrap_or(0) as usize;
        let per_client = match policy {
            Some(policy) => (0..clients).map(|_| policy.client_clock(&mut rng)).collect(),
            None => Vec::new(),
        };
        let periodic = match arrivals {
            Arrivals::Periodic { hosts, timer } => Some(Periodic {
                timer: *timer,
                perturbation: (0..*hosts).map(|_| PeriodicTimer::host_perturbation(&mut rng)).collect(),
                next_run: vec![0; *hosts as usize],
                until,
            }),
            _ => None,
        };
        Clocks { policy, rng, per_client, periodic }
    }

    /// The clock of a new request of `client` (`None`: an open workload's request, which gets a clock of its own).
    pub(super) fn of_request(&mut self, client: Option<u32>) -> ClientClock {
        match (self.policy, client) {
            (None, _) => ClientClock::default(),
            (Some(_), Some(client)) => self.per_client[client as usize],
            (Some(policy), None) => policy.client_clock(&mut self.rng),
        }
    }

    /// A retry decision made at `now`, `elapsed` into the request, stretched to the request's clock (a
    /// per-attempt offset drawn from `jitter`, the policy's stream).
    pub(super) fn align(
        &self,
        decision: RetryDecision,
        at: (SimTime, SimDuration),
        deadline: Option<SimDuration>,
        clock: &ClientClock,
        jitter: &mut SimRng,
    ) -> RetryDecision {
        match self.policy {
            Some(policy) => policy.align_decision(decision, at, deadline, clock, jitter),
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
        let at = periodic.timer.run_at(k, skew, periodic.perturbation[index], &mut self.rng);
        (at < periodic.until).then_some(at)
    }
}
