//! Property tests of every registered limiter (issue 20): random scripts of first tries, outcomes, retries,
//! cancellations and withdrawals, at random times, drive each limiter (shipped or with random knobs, alone or in a
//! stack) through the protocol of the module docs, and each limiter's documented bound is checked on what it
//! granted: buckets keep their tokens in [0, capacity] and grant no more than they were given; ratio budgets grant
//! no more than ratio × requests + reserve over their window. [`bound_of`] matches every [`LimiterKind`], so a new
//! limiter does not compile until it states its bound here.

use proptest::prelude::{Just, ProptestConfig, any, prop_assert, prop_oneof, proptest};
use proptest::strategy::Strategy;
use proptest::test_runner::TestCaseError;

use super::*;
use crate::params::{ParamKind, Value};

/// How an attempt in flight ends.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Success,
    Error,
    Timeout,
    Throttled,
}

/// One step of a script; every step acts at the time of the previous one plus `dt_ms`.
#[derive(Clone, Debug)]
enum Op {
    /// A first try is admitted (with `draw`) and, unless rejected, sent.
    FirstTry { draw: f64 },
    /// The attempt in flight at `slot` (modulo their number) ends; a failure asks for a retry, which is admitted
    /// and sent, or cancelled during its backoff when `cancel`.
    Finish { slot: usize, ending: Ending, draw: f64, cancel: bool },
    /// The attempt in flight at `slot` is withdrawn (a hedge race's loser).
    Withdraw { slot: usize },
    /// A retry granted and taken back at once, as a stack does when a later member refuses.
    Release,
}

/// What the limiter was told and answered, in order.
#[derive(Clone, Copy, Debug)]
enum Event {
    Admit { at: SimTime, draw: f64, answer: Admission },
    Send { at: SimTime, retry: bool },
    Record { at: SimTime, outcome: Outcome },
    Grant { at: SimTime, failed: Failed, permit: Permit },
    Release { at: SimTime },
    Withdraw { at: SimTime, sent: bool, permit: Option<Permit> },
}

fn ending() -> impl Strategy<Value = Ending> {
    prop_oneof![Just(Ending::Success), Just(Ending::Error), Just(Ending::Timeout), Just(Ending::Throttled)]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0.0..1.0_f64).prop_map(|draw| Op::FirstTry { draw }),
        6 => (any::<usize>(), ending(), 0.0..1.0_f64, proptest::bool::weighted(0.1))
            .prop_map(|(slot, ending, draw, cancel)| Op::Finish { slot, ending, draw, cancel }),
        1 => any::<usize>().prop_map(|slot| Op::Withdraw { slot }),
        1 => Just(Op::Release),
    ]
}

/// Steps mostly at the same instant or milliseconds apart, sometimes seconds or minutes, so that windows of 1 s to
/// 2 min both fill and expire.
fn script() -> impl Strategy<Value = Vec<(u64, Op)>> {
    let dt = prop_oneof![4 => Just(0_u64), 4 => 0..50_u64, 2 => 0..3_000_u64, 1 => 0..150_000_u64];
    proptest::collection::vec((dt, op()), 1..300)
}

/// A limiter driven as a model drives it, each event logged and checked as it happens: `check` sees the limiter
/// as it is then, and every event so far.
struct Driver<'a, C> {
    limiter: &'a mut Limiter,
    now: SimTime,
    log: Vec<Event>,
    check: C,
}

impl<C: FnMut(&Limiter, &[Event]) -> Result<(), TestCaseError>> Driver<'_, C> {
    fn note(&mut self, event: Event) -> Result<(), TestCaseError> {
        self.log.push(event);
        (self.check)(self.limiter, &self.log)
    }

    /// Admits an attempt (a retry if it has a permit) and sends it; `None` if it was rejected.
    fn send(&mut self, draw: f64, permit: Option<Permit>) -> Result<Option<Option<Permit>>, TestCaseError> {
        let (at, retry) = (self.now, permit.is_some());
        let answer = self.limiter.admit(at, draw);
        self.note(Event::Admit { at, draw, answer })?;
        if answer == Admission::Reject {
            if let Some(permit) = permit {
                self.limiter.withdraw(at, false, Some(permit));
                self.note(Event::Withdraw { at, sent: false, permit: Some(permit) })?;
            }
            return Ok(None);
        }
        self.limiter.on_send(at, retry);
        self.note(Event::Send { at, retry })?;
        Ok(Some(permit))
    }
}

/// Drives `limiter` through `script` as a model would, calling `check` after every event.
fn drive(
    limiter: &mut Limiter,
    script: &[(u64, Op)],
    check: impl FnMut(&Limiter, &[Event]) -> Result<(), TestCaseError>,
) -> Result<(), TestCaseError> {
    let mut driver = Driver { limiter, now: SimTime::ZERO, log: Vec::new(), check };
    let mut in_flight: Vec<Option<Permit>> = Vec::new();
    for (dt_ms, op) in script {
        driver.now += SimDuration::from_millis(*dt_ms);
        let at = driver.now;
        match *op {
            Op::FirstTry { draw } => in_flight.extend(driver.send(draw, None)?),
            Op::Finish { slot, ending, draw, cancel } if !in_flight.is_empty() => {
                let permit = in_flight.swap_remove(slot % in_flight.len());
                let outcome = match ending {
                    Ending::Success => Outcome::success(permit),
                    Ending::Error => Outcome::failure(permit),
                    Ending::Timeout => Outcome::timeout(permit),
                    Ending::Throttled => Outcome::throttled(permit),
                };
                driver.limiter.record(at, outcome);
                driver.note(Event::Record { at, outcome })?;
                if outcome.succeeded {
                    continue;
                }
                let failed = Failed::of(outcome.timed_out, outcome.throttled);
                if let Some(permit) = driver.limiter.acquire_retry(at, failed) {
                    driver.note(Event::Grant { at, failed, permit })?;
                    if cancel {
                        driver.limiter.withdraw(at, false, Some(permit));
                        driver.note(Event::Withdraw { at, sent: false, permit: Some(permit) })?;
                    } else {
                        in_flight.extend(driver.send(draw, Some(permit))?);
                    }
                }
            }
            Op::Withdraw { slot } if !in_flight.is_empty() => {
                let permit = in_flight.swap_remove(slot % in_flight.len());
                driver.limiter.withdraw(at, true, permit);
                driver.note(Event::Withdraw { at, sent: true, permit })?;
            }
            Op::Release => {
                if let Some(permit) = driver.limiter.acquire_retry(at, Failed::Error) {
                    driver.note(Event::Grant { at, failed: Failed::Error, permit })?;
                    driver.limiter.release(at, permit);
                    driver.note(Event::Release { at })?;
                }
            }
            Op::Finish { .. } | Op::Withdraw { .. } => {}
        }
    }
    Ok(())
}

/// A limiter's documented bound, with the values it is checked at.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// Brooker's bucket: tokens in [0, capacity]; a retry spends 1, a call (or a success) deposits `deposit`.
    Bucket { capacity: f64, deposit: f64, per_call: bool },
    /// The AWS quota: tokens in [0, capacity]; a retry spends its price, a success refunds.
    Quota { capacity: f64, error: f64, timeout: f64, throttled: f64 },
    /// Finagle, Linkerd, the Gateway API: retries ≤ percent × requests + reserve over `window` whole seconds.
    Ratio { percent: f64, reserve: f64, window: u64 },
    /// Envoy: retries in progress ≤ max(min, ⌊fraction × active⌋).
    Concurrency { fraction: f64, min: u32 },
    /// The SRE book: a retry only while retries < ratio × requests over `window` whole seconds.
    SreRatio { ratio: f64, window: u64 },
    /// The SRE book's adaptive throttling: reject iff draw < max(0, (requests − k·accepts) / (requests + 1)).
    SreThrottle { k: f64, window: u64 },
    /// gRPC: tokens in [0, max]; a retry only while tokens > max / 2.
    Grpc { max: f64, ratio: f64 },
    /// systemd: at most `burst` starts per fixed window of `interval`.
    Starts { burst: usize, interval: SimDuration },
    /// A breaker: no retry while open, one probe when half-open; the ratio gate: failures ≤ threshold × first tries.
    Breaker { threshold: f64, gate: bool },
    /// client-go's bucket: in any span of L seconds at most burst + rate × L retries are reserved.
    Reservations { rate: f64, burst: f64 },
}

/// The bound of `kind` at `point`'s knobs. Exhaustive: a new limiter states its bound here.
fn bound_of(kind: LimiterKind, point: &Point) -> Bound {
    let real = |key| point.real(key).unwrap();
    match kind {
        LimiterKind::Grpc => Bound::Grpc { max: real("max_tokens"), ratio: real("token_ratio") },
        LimiterKind::TokenBucket => Bound::Bucket {
            capacity: real("bucket_capacity"),
            deposit: real("bucket_deposit"),
            per_call: point.choice_of::<DepositRule>("deposit_rule").unwrap() == DepositRule::PerCall,
        },
        LimiterKind::Breaker => Bound::Breaker {
            threshold: real("breaker_threshold"),
            gate: point.choice_of::<BreakerStyle>("breaker_style").unwrap() == BreakerStyle::RatioGate,
        },
        LimiterKind::AwsQuota | LimiterKind::AwsAdaptive => {
            Bound::Quota { capacity: 500.0, error: 5.0, timeout: 10.0, throttled: 5.0 }
        }
        LimiterKind::AwsQuota2026 => Bound::Quota { capacity: 500.0, error: 14.0, timeout: 14.0, throttled: 5.0 },
        LimiterKind::Finagle => Bound::Ratio { percent: 0.2, reserve: 100.0, window: 10 },
        LimiterKind::GatewayBudget => {
            let window = point.duration("retry_interval").unwrap().as_secs_f64().ceil() as u64;
            Bound::Ratio { percent: real("retry_percent"), reserve: real("min_retry_rate") * window as f64, window }
        }
        LimiterKind::Envoy => Bound::Concurrency {
            fraction: real("budget_percent") / 100.0,
            min: u32::try_from(point.count("min_retry_concurrency").unwrap()).unwrap(),
        },
        LimiterKind::SreRatio => Bound::SreRatio { ratio: 0.1, window: 120 },
        LimiterKind::SreThrottle => Bound::SreThrottle { k: 2.0, window: 120 },
        LimiterKind::Systemd => Bound::Starts { burst: 5, interval: SimDuration::from_secs(10) },
        LimiterKind::ClientGoBucket => Bound::Reservations { rate: real("requeue_qps"), burst: real("requeue_burst") },
    }
}

/// Sums over the events, per window of whole seconds ending at `at`'s second.
fn in_window(log: &[Event], at: SimTime, window: u64, mut count: impl FnMut(&Event) -> f64) -> f64 {
    let second = |t: SimTime| t.as_nanos() / 1_000_000_000;
    let first = (second(at) + 1).saturating_sub(window);
    log.iter().filter(|event| (first..=second(at)).contains(&second(event_time(event)))).map(&mut count).sum()
}

fn event_time(event: &Event) -> SimTime {
    match *event {
        Event::Admit { at, .. }
        | Event::Send { at, .. }
        | Event::Record { at, .. }
        | Event::Grant { at, .. }
        | Event::Release { at }
        | Event::Withdraw { at, .. } => at,
    }
}

/// The most that the events `(i, j]` take out of a bucket beyond what they put in, over every `i < j`, when each
/// event takes `debit(event)` (and puts in a negative debit).
fn largest_net_debit(log: &[Event], mut debit: impl FnMut(&Event) -> f64) -> f64 {
    let (mut sum, mut lowest, mut largest) = (0.0_f64, 0.0_f64, 0.0_f64);
    for event in log {
        sum += debit(event);
        largest = largest.max(sum - lowest);
        lowest = lowest.min(sum);
    }
    largest
}

const EPSILON: f64 = 1e-9;

/// Checks `bound` on the events so far, the last of which is the newest; `member` is the limiter that bound is
/// of (a stack's member, or the limiter itself), for the bounds stated on its state.
fn check(bound: Bound, member: &Limiter, log: &[Event]) -> Result<(), TestCaseError> {
    let Some(last) = log.last() else { return Ok(()) };
    let retries_in_progress = |log: &[Event]| {
        log.iter()
            .map(|event| match event {
                Event::Grant { .. } => 1.0,
                Event::Release { .. } | Event::Record { outcome: Outcome { permit: Some(_), .. }, .. } => -1.0,
                Event::Withdraw { permit: Some(_), .. } => -1.0,
                _ => 0.0,
            })
            .sum::<f64>()
    };
    match bound {
        Bound::Bucket { capacity, deposit, per_call } => {
            let Limiter::TokenBucket(bucket) = member else { unreachable!() };
            prop_assert!((0.0..=capacity).contains(&bucket.tokens()), "tokens {} of {capacity}", bucket.tokens());
            let net = largest_net_debit(log, |event| match event {
                Event::Grant { .. } => 1.0,
                Event::Release { .. } => -1.0,
                Event::Record { outcome, .. } if per_call || outcome.succeeded => -deposit,
                _ => 0.0,
            });
            prop_assert!(net <= capacity + EPSILON, "granted {net} more than deposited, capacity {capacity}");
        }
        Bound::Quota { capacity, error, timeout, throttled } => {
            let quota = match member {
                Limiter::AwsQuota(quota) | Limiter::AwsQuota2026(quota) => quota,
                Limiter::AwsAdaptive(adaptive) => adaptive.quota(),
                _ => unreachable!(),
            };
            prop_assert!((0.0..=capacity).contains(&quota.tokens()), "tokens {} of {capacity}", quota.tokens());
            let mut price = 0.0;
            let net = largest_net_debit(log, |event| match event {
                Event::Grant { failed, .. } => {
                    price = match failed {
                        Failed::Error => error,
                        Failed::Timeout => timeout,
                        Failed::Throttled => throttled,
                    };
                    price
                }
                Event::Release { .. } => -price,
                Event::Record { outcome, .. } if outcome.succeeded => -outcome.permit.map_or(1.0, |p| p.cost),
                _ => 0.0,
            });
            prop_assert!(net <= capacity + EPSILON, "spent {net} more than refunded, capacity {capacity}");
        }
        Bound::Ratio { percent, reserve, window } => {
            if let Event::Grant { at, .. } = *last {
                let retries = in_window(log, at, window, |event| match event {
                    Event::Grant { .. } => 1.0,
                    Event::Release { .. } => -1.0,
                    _ => 0.0,
                });
                let requests = in_window(log, at, window, |event| {
                    f64::from(matches!(event, Event::Record { outcome: Outcome { permit: None, .. }, .. }))
                });
                prop_assert!(
                    retries <= percent * requests + reserve + EPSILON,
                    "{retries} retries over {requests} requests in {window} s: {percent} × requests + {reserve}"
                );
            }
        }
        Bound::Concurrency { fraction, min } => {
            if let Event::Grant { .. } = last {
                let active: f64 = log
                    .iter()
                    .map(|event| match event {
                        Event::Send { .. } => 1.0,
                        Event::Record { .. } | Event::Withdraw { sent: true, .. } => -1.0,
                        _ => 0.0,
                    })
                    .sum();
                let allowed = f64::from(min).max((fraction * active).floor());
                let retries = retries_in_progress(log);
                prop_assert!(retries <= allowed, "{retries} retries in progress, {active} active: at most {allowed}");
            }
        }
        Bound::SreRatio { ratio, window } => {
            if let Event::Grant { at, .. } = *last {
                let before = &log[..log.len() - 1];
                let retries = in_window(before, at, window, |event| match event {
                    Event::Grant { .. } => 1.0,
                    Event::Release { .. } => -1.0,
                    _ => 0.0,
                });
                let first_tries =
                    in_window(before, at, window, |event| f64::from(matches!(event, Event::Send { retry: false, .. })));
                let requests = first_tries + retries;
                prop_assert!(retries < ratio * requests, "granted at {retries} retries of {requests} requests");
            }
        }
        Bound::SreThrottle { k, window } => {
            if let Event::Admit { at, draw, answer } = *last {
                let before = &log[..log.len() - 1];
                let requests = in_window(before, at, window, |event| f64::from(matches!(event, Event::Admit { .. })));
                let accepts = in_window(before, at, window, |event| match event {
                    Event::Record { outcome, .. } => f64::from(!outcome.throttled && !outcome.timed_out),
                    _ => 0.0,
                });
                let reject = ((requests - k * accepts) / (requests + 1.0)).max(0.0);
                prop_assert!(
                    (answer == Admission::Reject) == (draw < reject),
                    "{answer:?} at draw {draw} with {requests} requests, {accepts} accepts"
                );
            }
        }
        Bound::Grpc { max, ratio } => {
            let Limiter::Grpc(throttle) = member else { unreachable!() };
            prop_assert!((0.0..=max).contains(&throttle.tokens()), "tokens {} of {max}", throttle.tokens());
            if let Event::Grant { .. } = last {
                let mut tokens = max;
                for event in log {
                    if let Event::Record { outcome, .. } = event {
                        tokens = if outcome.succeeded { (tokens + ratio).min(max) } else { (tokens - 1.0).max(0.0) };
                    }
                }
                prop_assert!(tokens > max / 2.0 - EPSILON, "granted at {tokens} tokens of {max}");
            }
        }
        Bound::Starts { burst, interval } => {
            let admitted: Vec<SimTime> = log
                .iter()
                .filter_map(|event| match *event {
                    Event::Admit { at, answer, .. } if answer != Admission::Reject => Some(at),
                    _ => None,
                })
                .collect();
            // Fixed windows: 2·burst + 1 starts in a row span three windows, so more than one interval.
            if let Some(window) = admitted.windows(2 * burst + 1).last() {
                prop_assert!(window[2 * burst] - window[0] > interval, "{} starts within {interval}", 2 * burst + 1);
            }
            if let Event::Admit { at, answer: Admission::Reject, .. } = *last {
                let recent = admitted.iter().filter(|&&t| at - t <= interval).count();
                prop_assert!(recent >= burst, "refused after {recent} starts within {interval}");
            }
        }
        Bound::Breaker { threshold, gate } => {
            let Limiter::Breaker(breaker) = member else { unreachable!() };
            if let (Event::Grant { .. }, false) = (last, gate) {
                // An open breaker grants nothing; a half-open one its probe.
                let state = breaker.state();
                prop_assert!(
                    matches!(state, BreakerState::Closed | BreakerState::HalfOpen { probing: true }),
                    "granted, and now {state:?}"
                );
            }
            if let (Event::Grant { .. }, true) = (last, gate) {
                let first_tries = log.iter().filter(|event| matches!(event, Event::Send { retry: false, .. })).count();
                let failures = log
                    .iter()
                    .filter(|event| matches!(event, Event::Record { outcome, .. } if !outcome.succeeded))
                    .count();
                prop_assert!(failures as f64 <= threshold * first_tries as f64 + EPSILON);
            }
        }
        Bound::Reservations { rate, burst } => {
            let mut times: Vec<SimTime> = Vec::new();
            for event in log {
                match *event {
                    Event::Grant { permit, .. } => times.push(permit.not_before),
                    Event::Release { .. } => {
                        times.pop();
                    }
                    _ => {}
                }
            }
            times.sort_unstable();
            for (i, &start) in times.iter().enumerate() {
                for (n, &end) in times[i..].iter().enumerate() {
                    // Reservations are rounded down to whole nanoseconds: one more nanosecond of tokens.
                    let allowed = burst + rate * ((end - start).as_secs_f64() + 1e-9);
                    prop_assert!((n + 1) as f64 <= allowed + EPSILON, "{} retries reserved in {}", n + 1, end - start);
                }
            }
        }
    }
    Ok(())
}

/// A point of `kind`'s knobs: each left at its shipped value or set to one drawn from `draws` within its range
/// (kept small: capacities up to 100, windows up to a minute). `None` when the knobs do not make a limiter.
fn knobs(kind: LimiterKind, draws: &[Option<u8>]) -> Option<Point> {
    let values = kind.knobs().iter().zip(draws.iter().chain(std::iter::repeat(&None))).map(|(spec, draw)| {
        let value = draw.map(|draw| {
            let share = f64::from(draw) / 255.0;
            match spec.kind {
                ParamKind::Real { min, max } => Value::Real(min + (max.min(100.0) - min) * share),
                ParamKind::Count { min, max } => Value::Count(min + ((max.min(min + 200) - min) as f64 * share) as i64),
                ParamKind::Duration => Value::Duration(SimDuration::from_millis((share * 60_000.0) as u64)),
                ParamKind::Choice(names) => Value::Choice(names[usize::from(draw) % names.len()]),
                other => panic!("{kind}: no draw for a knob of kind {other:?}"),
            }
        });
        (spec, value)
    });
    let point = Point::new(values.collect());
    kind.build(&point).is_ok().then_some(point)
}

fn kind() -> impl Strategy<Value = LimiterKind> {
    proptest::sample::select(LimiterKind::ALL)
}

fn draws() -> impl Strategy<Value = Vec<Option<u8>>> {
    proptest::collection::vec(proptest::option::of(any::<u8>()), 8)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_limiter_keeps_its_documented_bound(draws in draws(), script in script()) {
        for &kind in LimiterKind::ALL {
            let point = knobs(kind, &draws).unwrap_or_else(|| knobs(kind, &[]).expect("the shipped knobs build"));
            let bound = bound_of(kind, &point);
            let mut limiter = kind.build(&point).unwrap();
            drive(&mut limiter, &script, |limiter, log| check(bound, limiter, log))
                .map_err(|error| TestCaseError::fail(format!("{kind}: {error}")))?;
        }
    }

    #[test]
    fn a_models_own_budget_grants_at_most_its_ratio_of_requests_plus_its_reserve(
        percent in 0.0..1.0_f64,
        rate in 0.0..20.0_f64,
        window in 1..30_u64,
        script in script(),
    ) {
        let mut limiter = Limiter::Budget(RetryBudget::new(percent, rate, SimDuration::from_secs(window)));
        let bound = Bound::Ratio { percent, reserve: rate * window as f64, window };
        drive(&mut limiter, &script, |limiter, log| check(bound, limiter, log))?;
    }

    #[test]
    fn every_member_of_a_stack_keeps_its_bound(
        members in proptest::collection::vec((kind(), draws()), 1..4),
        script in script(),
    ) {
        // As scenarios allow them: each limiter once, at most one AWS quota (a stack refunds one member by cost)
        // and at most one limiter that rejects attempts (systemd, SRE throttling), whose answer is the stack's.
        let mut kinds: Vec<LimiterKind> = Vec::new();
        let mut built = Vec::new();
        for (kind, draws) in members {
            let quota = |k: &LimiterKind| matches!(k, LimiterKind::AwsQuota | LimiterKind::AwsQuota2026 | LimiterKind::AwsAdaptive);
            let rejects = |k: &LimiterKind| matches!(k, LimiterKind::Systemd | LimiterKind::SreThrottle);
            if kinds.contains(&kind) || (quota(&kind) && kinds.iter().any(quota)) || (rejects(&kind) && kinds.iter().any(rejects)) {
                continue;
            }
            let point = knobs(kind, &draws).unwrap_or_else(|| knobs(kind, &[]).expect("the shipped knobs build"));
            kinds.push(kind);
            built.push((bound_of(kind, &point), kind.build(&point).unwrap()));
        }
        let bounds: Vec<Bound> = built.iter().map(|(bound, _)| *bound).collect();
        let mut stack = Limiter::Stack(LimiterStack::new(built.into_iter().map(|(_, limiter)| limiter).collect()));
        drive(&mut stack, &script, |stack, log| {
            let Limiter::Stack(stack) = stack else { unreachable!() };
            for (&bound, member) in bounds.iter().zip(stack.members()) {
                check(bound, member, log)?;
            }
            Ok(())
        })?;
    }
}
