//! What an emulation measures, kept where both sides reach it: the server model's own [`Tally`], filled with the
//! same counts in scenario time as a simulated run fills it, and the requests' registry (when each was first sent,
//! which attempt is current, how often its side effect was applied), which the built-in server reads for its
//! accounting only (late work, duplicates, the trigger's phases), never to decide an answer. Held for
//! microseconds under one lock, never across a wait.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use tokio::sync::oneshot;

use crate::engine::{RunSeeds, SimRng, Stream};
use crate::metrics::{Phase, Trigger};
use crate::model::RunOutput;
use crate::model::server::ServerConfig;
use crate::model::server::tally::Tally;
use crate::policy::limiters::Limiter;
use crate::time::{SimDuration, SimTime};

/// A request the clients have sent.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Entry {
    pub(crate) phase: Phase,
    /// The attempt the client waits for (0: none).
    pub(crate) current: u32,
    pub(crate) open: bool,
    /// Successful services of its attempts.
    pub(crate) applied: u32,
}

/// The shared books of one emulated run.
pub(crate) struct Books {
    pub(crate) tally: Tally,
    pub(crate) requests: HashMap<u64, Entry>,
    trigger: Option<Trigger>,
    /// The scenario time of the last thing that changed anything.
    pub(crate) last_activity: SimTime,
    /// The fleet's retry limiters, one per client instance (empty without a limiter).
    pub(crate) limiters: Vec<Limiter>,
    pub(crate) jitter: SimRng,
    pub(crate) admission: SimRng,
    pub(crate) arrivals: SimRng,
    /// Attempts sent so far, and the most the run may send (`--max-requests`).
    pub(crate) attempts_sent: u64,
    pub(crate) max_attempts: u64,
    /// The run stopped sending early: it hit a bound or a signal.
    pub(crate) truncated: bool,
    /// Attempts that ended without an HTTP answer for a reason other than a reset (a malformed answer, a socket
    /// error), and the first such reason: the client treats them as resets, and the user hears of them.
    pub(crate) broken_answers: u64,
    pub(crate) first_broken: Option<String>,
    /// The server's side, when the emulator runs its own.
    pub(crate) server: ServerBooks,
}

/// The built-in server's state that the simulation keeps in its run: busy workers, the queue's length, the rate
/// limiter, and its draws.
pub(crate) struct ServerBooks {
    pub(crate) busy: u32,
    pub(crate) queued: u64,
    pub(crate) bucket: Option<crate::policy::TokenBucket>,
    pub(crate) service: SimRng,
    pub(crate) network: SimRng,
    pub(crate) faults: SimRng,
    /// Attempts the server holds (queued or in service): the run ends when none is left.
    pub(crate) holding: u64,
    /// The queue: one grant per waiting attempt, first in first out; a cancelled attempt's grant is dead.
    pub(crate) waiters: VecDeque<oneshot::Sender<()>>,
}

impl Books {
    pub(crate) fn new(config: &ServerConfig, seeds: RunSeeds, bucket: SimDuration, max_attempts: u64) -> Books {
        Books {
            tally: Tally::new(bucket),
            requests: HashMap::new(),
            trigger: config.trigger(),
            last_activity: SimTime::ZERO,
            limiters: config.retry_limiters(),
            jitter: seeds.stream(Stream::Jitter),
            admission: seeds.stream(Stream::Admission),
            arrivals: seeds.stream(Stream::Arrivals),
            attempts_sent: 0,
            max_attempts,
            truncated: false,
            broken_answers: 0,
            first_broken: None,
            server: ServerBooks {
                busy: 0,
                queued: 0,
                bucket: config.rate_bucket(),
                service: seeds.stream(Stream::Service),
                network: seeds.stream(Stream::Network),
                faults: seeds.stream(Stream::Faults),
                holding: 0,
                waiters: VecDeque::new(),
            },
        }
    }

    /// Something happened at `now`.
    pub(crate) fn touch(&mut self, now: SimTime) {
        self.last_activity = self.last_activity.max(now);
    }

    /// A new request, first sent at `now`: its id.
    pub(crate) fn open_request(&mut self, now: SimTime) -> u64 {
        let id = self.tally.counts.requests;
        let phase = self.trigger.map_or(Phase::Before, |trigger| trigger.phase(now));
        self.requests.insert(id, Entry { phase, current: 0, open: true, applied: 0 });
        self.tally.offered(phase, now);
        self.touch(now);
        id
    }

    /// An attempt arrives at a server at `now`: a call, in the phase of its request.
    pub(crate) fn call(&mut self, request: Option<u64>, now: SimTime) {
        let phase = request.and_then(|id| self.requests.get(&id)).map(|entry| entry.phase);
        self.tally.arrived(phase, now);
        self.touch(now);
    }

    /// Whether `attempt` is the one its request's client still waits for.
    pub(crate) fn is_current(&self, request: Option<u64>, attempt: Option<u32>) -> bool {
        match (request.and_then(|id| self.requests.get(&id)), attempt) {
            (Some(entry), Some(attempt)) => entry.open && entry.current == attempt,
            // An attempt from outside the fleet (curl): someone waits for it.
            _ => true,
        }
    }

    /// A request ended: it is no longer waited for.
    pub(crate) fn close(&mut self, request: u64) {
        if let Some(entry) = self.requests.get_mut(&request) {
            entry.open = false;
            entry.current = 0;
        }
    }
}

/// The books behind their lock.
#[derive(Clone)]
pub(crate) struct Shared(std::sync::Arc<Mutex<Books>>);

impl Shared {
    pub(crate) fn new(books: Books) -> Shared {
        Shared(std::sync::Arc::new(Mutex::new(books)))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Books> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The run's metrics, as a simulated run reports them; `events` is 0 (no engine ran). Takes the tally.
    pub(crate) fn finish(&self, config: &ServerConfig) -> RunOutput {
        let mut books = self.lock();
        let width = books.tally.timeline[0].width();
        let tally = std::mem::replace(&mut books.tally, Tally::new(width));
        let mut output = tally.finish(config, books.trigger, Vec::new(), 0, books.last_activity);
        output.truncated = books.truncated;
        output
    }
}
