//! The clients: one task per client (a burst, a closed workload) or per arrival (an open one), each over a real
//! HTTP/1.1 connection kept alive between its attempts. Per attempt they follow the simulation's protocol in the
//! limiter module's order — admit, send, record the outcome, and after a failure the one copy of the retry
//! decision (`model::server::decide`) — with the scenario's policy values, on the wall clock.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use rand::RngExt;
use tokio::task::JoinSet;

use super::clock::{Clock, Lags};
use super::http::{self, Answer, Conn, Failure as HttpFailure, WallPushback};
use super::record::Shared;
use crate::model::server::decide::{self, Failure, Next, instance_limiter};
use crate::model::server::{ServerConfig, series};
use crate::policy::limiters::{Admission, Outcome as CallOutcome, Permit, RetryLimiter};
use crate::policy::{BackoffMemory, FailureKind, Pushback, Response};
use crate::time::{SimDuration, SimTime};
use crate::workload::{Arrivals, ThinkDraws};

/// Where the clients send their requests: an address already checked (never a name to look up), the Host header
/// and the path.
#[derive(Clone, Debug)]
pub(crate) struct Destination {
    pub(crate) address: SocketAddr,
    pub(crate) host: String,
    pub(crate) path: String,
}

/// The fleet of one run.
pub(crate) struct Fleet {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) books: Shared,
    pub(crate) clock: Clock,
    pub(crate) lags: Arc<Lags>,
    pub(crate) destination: Destination,
    /// Count calls and server refusals at the client (`--target`: there is no server of ours to count them).
    pub(crate) client_side: bool,
    /// Idle connections of an open workload's requests.
    pool: Mutex<Vec<Conn>>,
    think: Mutex<ThinkDraws>,
}

/// What became of one attempt on the wire.
enum Sent {
    Answer(Answer),
    TimedOut,
    /// Reset, closed before a whole answer, refused, or an answer that broke HTTP: no status.
    Reset,
}

/// How the client sees an answer.
enum Verdict {
    Success,
    Retry(FailureKind, fn(Option<Permit>) -> CallOutcome),
    Permanent,
}

impl Fleet {
    pub(crate) fn new(
        config: Arc<ServerConfig>,
        books: Shared,
        clock: Clock,
        destination: Destination,
        client_side: bool,
        think_seed: u64,
    ) -> Fleet {
        let think = ThinkDraws::new(think_seed, &config.workload.arrivals);
        Fleet {
            config,
            books,
            clock,
            lags: Arc::new(Lags::default()),
            destination,
            client_side,
            pool: Mutex::new(Vec::new()),
            think: Mutex::new(think),
        }
    }

    /// How many connections to open before the start: one per client of a burst or closed workload.
    pub(crate) fn warm_connections(config: &ServerConfig) -> u32 {
        config.workload.arrivals.clients().unwrap_or(0)
    }

    /// Runs the workload from scenario time 0 until every request has ended; `warm` holds the connections opened
    /// before the start, one per client.
    pub(crate) async fn drive(self: Arc<Self>, warm: Vec<Conn>) {
        let mut tasks = JoinSet::new();
        let mut warm = warm.into_iter();
        match &self.config.workload.arrivals {
            Arrivals::Burst { requests } => {
                for client in 0..*requests {
                    let (fleet, mut conn) = (self.clone(), warm.next());
                    tasks.spawn(async move {
                        fleet.clock.sleep_until(SimTime::ZERO, &fleet.lags).await;
                        fleet.request(client, &mut conn).await;
                    });
                }
            }
            Arrivals::Closed { clients, think_time } => {
                for client in 0..*clients {
                    let (fleet, mut conn, think_time) = (self.clone(), warm.next(), *think_time);
                    tasks.spawn(async move {
                        let mut at = SimTime::ZERO + fleet.next_think(&think_time, client);
                        loop {
                            fleet.clock.sleep_until(at, &fleet.lags).await;
                            if !fleet.request(client, &mut conn).await {
                                return;
                            }
                            at = fleet.clock.now() + fleet.next_think(&think_time, client);
                            if at >= fleet.config.workload.duration {
                                return;
                            }
                        }
                    });
                }
            }
            Arrivals::Open { schedule } => {
                let duration = self.config.workload.duration;
                let mut next = schedule.next_arrival_after(SimTime::ZERO, duration, &mut self.books.lock().arrivals);
                let mut owner = 0u32;
                while let Some(at) = next {
                    self.clock.sleep_until(at, &self.lags).await;
                    if self.books.lock().truncated {
                        break;
                    }
                    let fleet = self.clone();
                    tasks.spawn(async move {
                        let mut conn = fleet.pool.lock().unwrap_or_else(|p| p.into_inner()).pop();
                        fleet.request(owner, &mut conn).await;
                        if let Some(conn) = conn {
                            fleet.pool.lock().unwrap_or_else(|p| p.into_inner()).push(conn);
                        }
                    });
                    owner = owner.wrapping_add(1);
                    next = schedule.next_arrival_after(at, duration, &mut self.books.lock().arrivals);
                }
            }
            // Refused before any socket (support.rs).
            Arrivals::Periodic { .. } => {}
        }
        while tasks.join_next().await.is_some() {}
    }

    fn next_think(&self, think_time: &crate::workload::ThinkTime, client: u32) -> SimDuration {
        self.think.lock().unwrap_or_else(|p| p.into_inner()).next(think_time, client)
    }

    /// One request of `client` (its limiter instance), from its first try to its end; false when the run's
    /// bound on attempts stopped it.
    async fn request(&self, client: u32, conn: &mut Option<Conn>) -> bool {
        let config = &*self.config;
        let (id, sent_at) = {
            let now = self.clock.now();
            (self.books.lock().open_request(now), now)
        };
        let mut memory = BackoffMemory::default();
        let mut failed_attempts = 0u32;
        // Failed attempts when an honoured pushback last restarted the backoff.
        let mut restarted_at = 0u32;
        let mut permit: Option<Permit> = None;
        loop {
            let now = self.clock.now();
            let admission = {
                let mut books = self.books.lock();
                let books = &mut *books;
                if books.limiters.is_empty() {
                    Admission::Send
                } else {
                    let draw = books.admission.random::<f64>();
                    instance_limiter(&mut books.limiters, client).map_or(Admission::Send, |l| l.admit(now, draw))
                }
            };
            match admission {
                Admission::Send => {}
                Admission::Wait(wait) => {
                    self.clock.sleep_until(now + wait, &self.lags).await;
                }
                Admission::Reject => {
                    {
                        let mut books = self.books.lock();
                        books.tally.counts.rejected_locally += 1;
                        if let Some(taken) = permit.take()
                            && let Some(limiter) = instance_limiter(&mut books.limiters, client)
                        {
                            limiter.withdraw(now, false, Some(taken));
                        }
                    }
                    failed_attempts += 1;
                    let failure = Failure {
                        failed_attempts,
                        now,
                        elapsed: now - sent_at,
                        kind: (FailureKind::Transient, None),
                        pushback: None,
                        since_restart: failed_attempts - restarted_at,
                        timed_out: false,
                    };
                    match self.decide(client, id, &failure, &mut memory, &mut permit) {
                        Some((sleep, _)) => {
                            self.clock.sleep_until(now + sleep, &self.lags).await;
                            continue;
                        }
                        None => return true,
                    }
                }
            }
            let Some((attempt, sent)) = self.dispatch(client, id, failed_attempts > 0) else { return false };
            let deadline = config.timeout.map(|timeout| sent + timeout);
            let outcome = self.send(conn, id, attempt, deadline).await;
            let now = self.clock.now();
            let (verdict, (hint, pushback)) = match outcome {
                Sent::Answer(answer) => {
                    let hint = answer.retry_after.map(|wall| self.clock.scenario(wall));
                    let pushback = answer.pushback.map(|wall| match wall {
                        WallPushback::Wait(wait) => Pushback::Wait(self.clock.scenario(wait)),
                        WallPushback::Stop => Pushback::Stop,
                    });
                    (self.classify(&answer, now), (hint, pushback))
                }
                Sent::TimedOut => {
                    self.books.lock().tally.counts.timeouts += 1;
                    if let Some(deadline) = deadline {
                        self.lags.record(now.saturating_since(deadline));
                    }
                    // Whether a timeout is retried is the decision's (decide.rs), as in the simulation.
                    (Verdict::Retry(FailureKind::Transient, CallOutcome::timeout), (None, None))
                }
                Sent::Reset => (self.classify_status(Response { status: 0, transient_body: false }, now), (None, None)),
            };
            let Some((kind, recorded)) = self.settle(client, id, sent_at, now, verdict, permit) else { return true };
            failed_attempts += 1;
            let failure = Failure {
                failed_attempts,
                now,
                elapsed: now - sent_at,
                kind: (kind, hint),
                pushback,
                since_restart: failed_attempts - restarted_at,
                timed_out: recorded.timed_out,
            };
            match self.decide(client, id, &failure, &mut memory, &mut permit) {
                Some((sleep, restarted)) => {
                    if restarted {
                        restarted_at = failed_attempts;
                    }
                    self.clock.sleep_until(now + sleep, &self.lags).await;
                }
                None => return true,
            }
        }
    }

    /// Tells the limiter how the attempt ended and ends the request unless it failed retryably: then the failure's
    /// kind and what was recorded.
    fn settle(
        &self,
        client: u32,
        id: u64,
        sent_at: SimTime,
        now: SimTime,
        verdict: Verdict,
        permit: Option<Permit>,
    ) -> Option<(FailureKind, CallOutcome)> {
        let config = &*self.config;
        let mut books = self.books.lock();
        books.touch(now);
        if let Some(entry) = books.requests.get_mut(&id) {
            entry.current = 0;
        }
        let (recorded, retry) = match verdict {
            Verdict::Success => (CallOutcome::success(permit), None),
            Verdict::Permanent => (CallOutcome::failure(permit), None),
            Verdict::Retry(kind, outcome) => (outcome(permit), Some(kind)),
        };
        if let Some(limiter) = instance_limiter(&mut books.limiters, client) {
            limiter.record(now, recorded);
        }
        match (retry, recorded.succeeded) {
            (Some(kind), _) => return Some((kind, recorded)),
            (None, true) => succeed(&mut books, config, id, sent_at, now),
            (None, false) => {
                books.tally.counts.failed_permanently += 1;
                end_failed(&mut books, id);
            }
        }
        None
    }

    /// The retry decision after a failure: the sleep before the next attempt, or `None` when the request gave up
    /// (and was closed).
    fn decide(
        &self,
        client: u32,
        id: u64,
        failure: &Failure,
        memory: &mut BackoffMemory,
        permit: &mut Option<Permit>,
    ) -> Option<(SimDuration, bool)> {
        let mut books = self.books.lock();
        let books = &mut *books;
        let limiter = instance_limiter(&mut books.limiters, client);
        match decide::after_failure(&self.config, failure, memory, &mut books.jitter, |decision| decision, limiter) {
            Next::Retry { sleep, permit: granted, restarted } => {
                if granted.is_some() {
                    *permit = granted;
                }
                Some((sleep, restarted))
            }
            Next::GiveUp { refused } => {
                books.tally.counts.refused += u64::from(refused);
                books.tally.counts.gave_up += 1;
                end_failed(books, id);
                None
            }
        }
    }

    /// An admitted attempt leaves the client now: counted, told to the limiter and registered as the request's
    /// current one. `None` when the run's bound on attempts is reached.
    fn dispatch(&self, client: u32, id: u64, is_retry: bool) -> Option<(u32, SimTime)> {
        let now = self.clock.now();
        let mut books = self.books.lock();
        if books.attempts_sent >= books.max_attempts || crate::interrupt::requested().is_some() {
            books.truncated = true;
            books.close(id);
            return None;
        }
        books.attempts_sent += 1;
        let attempt = books.attempts_sent as u32;
        books.tally.counts.retries += u64::from(is_retry);
        if is_retry {
            books.tally.timeline[series::RETRIES].record(now);
        }
        if let Some(limiter) = instance_limiter(&mut books.limiters, client) {
            limiter.on_send(now, is_retry);
        }
        if let Some(entry) = books.requests.get_mut(&id) {
            entry.current = attempt;
        }
        if self.client_side {
            books.call(Some(id), now);
        }
        books.touch(now);
        Some((attempt, now))
    }

    /// Sends one attempt and waits for its answer until `deadline`, opening a connection when there is none.
    async fn send(&self, conn: &mut Option<Conn>, id: u64, attempt: u32, deadline: Option<SimTime>) -> Sent {
        let destination = &self.destination;
        let bytes = http::request_bytes(&destination.host, &destination.path, id, attempt, self.clock.wall_nanos());
        let exchange = async {
            let mut open = match conn.take() {
                Some(open) => open,
                None => Conn::open(destination.address).await.map_err(HttpFailure::from)?,
            };
            let answer = open.exchange(&bytes).await?;
            if open.reusable() {
                *conn = Some(open);
            }
            Ok::<Answer, HttpFailure>(answer)
        };
        let result = match deadline {
            Some(deadline) => match tokio::time::timeout_at(self.clock.deadline(deadline), exchange).await {
                Ok(result) => result,
                Err(_) => return Sent::TimedOut,
            },
            None => exchange.await,
        };
        match result {
            Ok(answer) => Sent::Answer(answer),
            Err(HttpFailure::Reset) => Sent::Reset,
            Err(broken) => {
                let mut books = self.books.lock();
                books.broken_answers += 1;
                books.first_broken.get_or_insert_with(|| broken.to_string());
                Sent::Reset
            }
        }
    }

    fn classify(&self, answer: &Answer, now: SimTime) -> Verdict {
        self.classify_status(Response { status: answer.status, transient_body: answer.transient_body }, now)
    }

    /// What the client's classifier makes of an answer (`status` 0: a reset). At the client side it also counts
    /// what the built-in server would have: refusals, throttling, server errors.
    fn classify_status(&self, response: Response, now: SimTime) -> Verdict {
        if self.client_side {
            let mut books = self.books.lock();
            match response.status {
                0 | 503 => books.tally.rejected(now),
                429 => books.tally.counts.throttled += 1,
                502 => books.tally.counts.server_errors += 1,
                400 if response.transient_body => books.tally.counts.server_errors += 1,
                _ => {}
            }
        }
        if (200..300).contains(&response.status) {
            Verdict::Success
        } else if decide::retried(&self.config, response) {
            match response.status {
                429 => Verdict::Retry(FailureKind::Throttling, CallOutcome::throttled),
                _ => Verdict::Retry(FailureKind::Transient, CallOutcome::failure),
            }
        } else {
            Verdict::Permanent
        }
    }
}

/// A request succeeded at `now`: the counts a simulated success makes.
fn succeed(books: &mut super::record::Books, config: &ServerConfig, id: u64, sent_at: SimTime, now: SimTime) {
    let phase = books.requests.get(&id).map(|entry| entry.phase).unwrap_or_default();
    books.tally.succeeded(config, phase, sent_at, sent_at >= config.workload.warmup, now);
    books.close(id);
}

/// A request ended without success.
fn end_failed(books: &mut super::record::Books, id: u64) {
    let phase = books.requests.get(&id).map(|entry| entry.phase).unwrap_or_default();
    books.tally.phases.ended(phase, None);
    books.close(id);
}
