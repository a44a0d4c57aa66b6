//! The built-in server: the server model on a real socket. It listens on 127.0.0.1 (a backlog of 4,096, so a herd's
//! connections are not dropped at the default 128), on its own thread and tokio runtime, and answers each request
//! in the order run.rs applies its rules: a network delay, the fault window at arrival (black hole: read and never
//! answer; fail-fast: 503; reset: RST), the rate limiter's 429 with Retry-After, a free worker or a place in the
//! FIFO queue or an immediate 503 when it is full, the service time as a real wait, the error draws after it, and a
//! network delay back. With `on_timeout = "cancel"` a queued attempt whose client hung up leaves the queue; with
//! `"abandon"` it is served anyway, as late work.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::oneshot;

use super::clock::{Clock, Lags};
use super::http::{self, RequestHead};
use super::record::{Books, Shared};
use crate::loopback::{Refusal, allowed_hosts, check_host_origin};
use crate::model::faults::FaultKind;
use crate::model::server::outcome::Outcome;
use crate::model::server::{HintHeader, OnTimeout, ServerConfig, series};
use crate::time::{SimDuration, SimTime};

/// The listen backlog: a herd connects all at once.
const BACKLOG: u32 = 4096;

/// A running built-in server.
pub(crate) struct ServerHandle {
    pub(crate) address: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// How late the server's waits (network delays, services) woke, in scenario time.
    pub(crate) lags: Arc<Lags>,
    /// From the client's send to the server's read of the request head, in scenario time: the kernel's and the
    /// runtimes' share, which the model does not have.
    pub(crate) transport: Arc<Lags>,
}

/// What one server connection shares with the others.
struct Context {
    config: Arc<ServerConfig>,
    books: Shared,
    clock: Arc<OnceLock<Clock>>,
    allowed: Vec<String>,
    lags: Arc<Lags>,
    transport: Arc<Lags>,
}

impl Context {
    fn clock(&self) -> Clock {
        self.clock.get().copied().unwrap_or_else(|| Clock::new(tokio::time::Instant::now(), 1.0))
    }
}

/// What the server does with an attempt.
enum Reply {
    Answer(Outcome, Option<SimDuration>),
    /// Send a reset: linger 0, then close.
    Reset,
    /// Say nothing until the client hangs up (a black hole, or a queued attempt the client cancelled).
    Silent,
}

/// Starts the server on 127.0.0.1 with a free port. `clock` is set before the first request can come.
pub(crate) fn start(config: Arc<ServerConfig>, books: Shared, clock: Arc<OnceLock<Clock>>) -> io::Result<ServerHandle> {
    let (stop, stopped) = oneshot::channel();
    let (bound, address) = std::sync::mpsc::channel();
    let lags = Arc::new(Lags::default());
    let transport = Arc::new(Lags::default());
    let (server_lags, server_transport) = (lags.clone(), transport.clone());
    let thread = std::thread::Builder::new().name("emulated-server".into()).spawn(move || {
        let runtime = match tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build() {
            Ok(runtime) => runtime,
            Err(error) => return drop(bound.send(Err(error))),
        };
        runtime.block_on(async move {
            let listener = match listen() {
                Ok(listener) => listener,
                Err(error) => return drop(bound.send(Err(error))),
            };
            let Ok(address) = listener.local_addr() else { return };
            let allowed = allowed_hosts(address);
            let _ = bound.send(Ok(address));
            let context =
                Arc::new(Context { config, books, clock, allowed, lags: server_lags, transport: server_transport });
            let mut stopped = stopped;
            loop {
                tokio::select! {
                    _ = &mut stopped => return,
                    accepted = listener.accept() => {
                        if let Ok((stream, _)) = accepted {
                            tokio::spawn(connection(stream, context.clone()));
                        }
                    }
                }
            }
        });
    })?;
    let address = address.recv().map_err(|_| io::Error::other("the server thread ended before it listened"))??;
    Ok(ServerHandle { address, stop: Some(stop), thread: Some(thread), lags, transport })
}

fn listen() -> io::Result<tokio::net::TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)))?;
    socket.listen(BACKLOG)
}

impl ServerHandle {
    /// Stops accepting, closes every connection and waits for the server's thread.
    pub(crate) fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        self.shut_down();
    }
}

/// One client connection: requests one after another until the client hangs up.
async fn connection(mut stream: TcpStream, context: Arc<Context>) {
    let _ = stream.set_nodelay(true);
    let mut buffer = Vec::with_capacity(1024);
    while let Ok(Some(head)) = http::read_request(&mut stream, &mut buffer).await {
        let refusal = check_host_origin(head.host.as_deref(), head.origin.as_deref(), &context.allowed);
        let bytes = match refusal {
            Err(Refusal::ForeignHost(message)) => http::answer_bytes(421, None, http::HintHeaders::NONE, &message),
            Err(Refusal::ForeignOrigin(message)) => http::answer_bytes(403, None, http::HintHeaders::NONE, &message),
            Ok(()) => match attempt(&context, &head, &mut stream, &mut buffer).await {
                Reply::Answer(outcome, hint) => answer(&context, outcome, hint).await,
                Reply::Reset => {
                    // The reset takes the trip back like any answer.
                    network_delay(&context).await;
                    let _ = stream.set_zero_linger();
                    return;
                }
                Reply::Silent => return closed(&mut stream, &mut buffer).await,
            },
        };
        if stream.write_all(&bytes).await.is_err() {
            return;
        }
    }
}

/// Returns once the client has closed the connection (bytes it sends meanwhile are kept in `buffer`).
async fn closed(stream: &mut TcpStream, buffer: &mut Vec<u8>) {
    let mut chunk = [0u8; 1024];
    while let Ok(read @ 1..) = stream.read(&mut chunk).await {
        buffer.extend_from_slice(&chunk[..read]);
    }
}

/// Sleeps a network delay drawn from the scenario's distribution; returns the scenario time after it.
async fn network_delay(context: &Context) -> SimTime {
    let clock = context.clock();
    let delay = context.config.network.sample(&mut context.books.lock().server.network);
    if delay.is_zero() {
        return clock.now();
    }
    clock.sleep_until(clock.now() + delay, &context.lags).await
}

/// The answer's bytes, after the network delay back.
async fn answer(context: &Context, outcome: Outcome, hint: Option<SimDuration>) -> Vec<u8> {
    network_delay(context).await;
    let response = outcome.response();
    let body = match outcome {
        Outcome::DisguisedTransient => "upstream temporarily unavailable",
        other => other.name(),
    };
    let wall_hint = hint.map(|hint| context.clock().wall(hint.min(crate::model::server::MAX_RETRY_AFTER)));
    let headers = match context.config.hint_header {
        HintHeader::RetryAfter => http::HintHeaders::RETRY_AFTER,
        HintHeader::GrpcPushback => http::HintHeaders { retry_after: false, pushback: true },
        HintHeader::Both => http::HintHeaders { retry_after: true, pushback: true },
    };
    http::answer_bytes(response.status, wall_hint, headers, body)
}

/// One attempt, from its arrival to the outcome of its service.
async fn attempt(context: &Context, head: &RequestHead, stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Reply {
    let clock = context.clock();
    if let Some(sent_ns) = head.sent_ns {
        let read_ns = clock.wall_nanos();
        context.transport.record(clock.scenario(std::time::Duration::from_nanos(read_ns.saturating_sub(sent_ns))));
    }
    let arrived = network_delay(context).await;
    let config = &context.config;
    let queued = {
        let mut books = context.books.lock();
        books.call(head.request, arrived);
        if config.on_timeout == OnTimeout::Cancel && !books.is_current(head.request, head.attempt) {
            // The client cancelled this attempt while it was on its way.
            return Reply::Silent;
        }
        match config.faults.at(arrived) {
            Some(FaultKind::BlackHole) => return Reply::Silent,
            Some(FaultKind::FailFast) => {
                books.tally.rejected(arrived);
                return Reply::Answer(Outcome::Overloaded, None);
            }
            Some(FaultKind::Reset) => {
                books.tally.rejected(arrived);
                return Reply::Reset;
            }
            None | Some(FaultKind::Slowdown(_)) => {}
        }
        if let Some(Err(wait)) = books.server.bucket.as_mut().map(|bucket| bucket.try_take(arrived)) {
            books.tally.counts.throttled += 1;
            return Reply::Answer(Outcome::Throttled, Some(wait));
        }
        books.server.holding += 1;
        if config.workers.is_none_or(|workers| books.server.busy < workers) {
            books.server.busy += 1;
            None
        } else if config.queue_limit.is_none_or(|limit| books.server.queued < limit) {
            let (grant, granted) = oneshot::channel();
            books.server.waiters.push_back(grant);
            books.server.queued += 1;
            let level = books.server.queued as u32;
            books.tally.queue_levels.record(arrived, level);
            Some(granted)
        } else {
            books.server.holding -= 1;
            books.tally.rejected(arrived);
            return Reply::Answer(Outcome::Overloaded, config.overload_retry_after);
        }
    };
    if let Some(granted) = queued
        && !wait_for_worker(context, granted, stream, buffer).await
    {
        return Reply::Silent;
    }
    serve(context, head, arrived).await
}

/// Waits in the queue for a worker; false when the client hung up first and `on_timeout = "cancel"` took the
/// attempt out of the queue.
async fn wait_for_worker(
    context: &Context,
    mut granted: oneshot::Receiver<()>,
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
) -> bool {
    if context.config.on_timeout != OnTimeout::Cancel {
        return (&mut granted).await.is_ok();
    }
    tokio::select! {
        grant = &mut granted => grant.is_ok(),
        () = closed(stream, buffer) => {
            let mut books = context.books.lock();
            granted.close();
            if granted.try_recv().is_ok() {
                // Granted as the client left: the worker goes to the next in line.
                release_worker(&mut books, context.clock().now());
            } else {
                books.server.queued -= 1;
                let (now, level) = (context.clock().now(), books.server.queued as u32);
                books.tally.queue_levels.record(now, level);
            }
            books.server.holding -= 1;
            false
        }
    }
}

/// A worker is done: it takes the next live attempt in the queue, or becomes free.
fn release_worker(books: &mut Books, now: SimTime) {
    while let Some(waiter) = books.server.waiters.pop_front() {
        if waiter.send(()).is_ok() {
            books.server.queued -= 1;
            let level = books.server.queued as u32;
            books.tally.queue_levels.record(now, level);
            return;
        }
    }
    books.server.busy -= 1;
}

/// Serves an attempt that holds a worker: the service time as a real wait, then the error draws.
async fn serve(context: &Context, head: &RequestHead, queued_at: SimTime) -> Reply {
    let clock = context.clock();
    let config = &context.config;
    let (started, service) = {
        let mut books = context.books.lock();
        let now = clock.now();
        let base = config.service.sample_nanos(&mut books.server.service);
        let service = config.service_time(base, books.server.busy, now);
        books.tally.service_started(config, queued_at, now, service);
        (now, service)
    };
    let done = clock.sleep_until(started + service, &context.lags).await;
    let mut books = context.books.lock();
    if !books.is_current(head.request, head.attempt) {
        books.tally.timeline[series::LATE].record(done);
    }
    let outcome = Outcome::after_service(config.error_probabilities, &mut books.server.faults);
    match outcome {
        Outcome::Success => {
            if let Some(entry) = head.request.and_then(|id| books.requests.get_mut(&id)) {
                entry.applied += 1;
                if entry.applied > 1 {
                    if config.idempotency_keys {
                        books.tally.counts.deduplicated += 1;
                    } else {
                        books.tally.counts.duplicates += 1;
                    }
                }
            }
        }
        Outcome::TransientError | Outcome::DisguisedTransient => books.tally.counts.server_errors += 1,
        _ => {}
    }
    release_worker(&mut books, done);
    books.server.holding -= 1;
    books.touch(done);
    Reply::Answer(outcome, None)
}
