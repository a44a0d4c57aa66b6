//! Retry limiters as real systems ship them: they decide whether a client may retry at all, whatever its
//! backoff says, and some of them whether it may send at all. Each keeps per-client state and sees every result;
//! pure values, no engine and no random source (a probabilistic limiter is handed a uniform draw).
//!
//! The protocol, for every attempt of an operation, in this order:
//!
//! 1. **Retry permission** (retries only): after a failed attempt, if the backoff policy would retry, the model
//!    asks [`RetryLimiter::acquire_retry`], which may spend tokens and answers with a [`Permit`] or `None` (give
//!    up). A permit may hold a reservation ([`Permit::not_before`]): the retry then sleeps the longer of its
//!    backoff and the time until the reservation ([`Permit::sleep`]).
//! 2. **Admission** (every attempt, first tries included): just before sending, the model calls
//!    [`RetryLimiter::admit`] with a uniform draw from `[0, 1)` taken from its own rng. The answer is an
//!    [`Admission`]: `Send`; `Reject`, the attempt fails locally without reaching the server (the model counts
//!    it, does not report an outcome for it, and lets its retry policy decide what next); or `Wait(d)`, the
//!    attempt is admitted but must be sent `d` from now (the limiter has already counted it: the model does not
//!    ask again). The default admits everything.
//! 3. **Send**: when the attempt actually leaves, the model calls [`RetryLimiter::on_send`] (`is_retry` false
//!    for a first try), so concurrency-based limiters can count what is in flight. Default: nothing.
//! 4. **Outcome**: once the attempt has an outcome (an answer or a timeout, exactly once per sent attempt) the
//!    model reports it with [`RetryLimiter::record`], passing back the permit the attempt was made with, if any
//!    (AWS refunds a successful retry's cost), and whether the server refused it as throttled (429).
//! 5. **Withdrawal**: an attempt sent but then cancelled by its caller (it will have no outcome), or a retry
//!    granted but never sent, is reported once with [`RetryLimiter::withdraw`], so counts of what is in flight
//!    stay right. Default: nothing.

pub use aws_adaptive::{AwsAdaptive, Cubic, RateClocker};
pub use aws_quota::AwsRetryQuota;
pub use circuit_breaker::{BreakerState, BreakerStyle, CircuitBreaker};
pub use envoy_budget::EnvoyRetryBudget;
pub use grpc_throttle::GrpcThrottle;
pub use requeue_bucket::RequeueBucket;
pub use retry_budget::RetryBudget;
pub use sre_ratio::SreRetryRatio;
pub use sre_throttle::SreAdaptiveThrottle;
pub use start_limit::StartLimit;
pub use token_bucket_deposit::{DepositRule, RetryTokenBucket};

mod footprint;
mod stack;
mod window;

pub use stack::LimiterStack;

use crate::params::{ParamError, ParamSpec, Point};
use crate::time::{SimDuration, SimTime};

/// One limiter as it ships, registered under its scenario-file name: a unit struct in the limiter's own file
/// says what it is, where it comes from, which `[client]` knobs tune it and how it is built from them. The
/// knobs' defaults are [`crate::params::ParamDefault::Implied`] values: the shipped ones, read when unset and
/// hashed into no seed.
pub trait ShippedLimiter {
    /// The state one client keeps.
    type State: RetryLimiter;
    /// The name in scenario files (`limiter = "grpc"`), kebab-case.
    const NAME: &'static str;
    /// One line: what it does, with its shipped defaults.
    const ABOUT: &'static str;
    /// Where the behaviour and its defaults come from.
    const SOURCE: &'static str;
    /// Its `[client]` knobs, if it has any.
    const KNOBS: &'static [ParamSpec] = &[];
    /// It counts the starts of one process (systemd's start limit), so only a model whose limiter serves one
    /// client doing one thing at a time may use it.
    const ONE_PROCESS: bool = false;

    /// The limiter a point's knobs describe (the shipped one when none is set).
    fn build(point: &Point) -> Result<Self::State, ParamError>;
}

/// Registers the shipped limiters: each line names the file, its [`ShippedLimiter`] and the variant it gets in
/// [`LimiterKind`] (the name) and [`Limiter`] (the state). The order is `retrylab strategies`' order, and the
/// order of the knobs in every model's parameters (so it must not change: knobs are hashed in that order).
macro_rules! register_limiters {
    ($($module:ident :: $entry:ident => $variant:ident),+ $(,)?) => {
        $(mod $module; pub use $module::$entry;)+

        /// Every shipped limiter, by name.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum LimiterKind { $($variant),+ }

        /// One client's limiter state, whichever limiter it is, dispatched with a `match`: a shipped one, or a
        /// model's own ratio budget (`limiter = "budget"`, which each model sizes itself).
        #[derive(Clone, Debug, PartialEq)]
        pub enum Limiter {
            Budget(RetryBudget),
            /// Several limiters that must all agree (`limiter = ["aws-quota", "budget"]`).
            Stack(LimiterStack),
            $($variant(<$entry as ShippedLimiter>::State)),+
        }

        impl LimiterKind {
            pub const ALL: &'static [LimiterKind] = &[$(LimiterKind::$variant),+];
            pub const NAMES: &'static [&'static str] = &[$(<$entry as ShippedLimiter>::NAME),+];
            /// Every limiter's knobs, one group per limiter in registration order.
            pub const KNOBS: &'static [&'static [ParamSpec]] = &[$(<$entry as ShippedLimiter>::KNOBS),+];

            pub fn name(self) -> &'static str {
                match self { $(LimiterKind::$variant => <$entry as ShippedLimiter>::NAME),+ }
            }
            pub fn about(self) -> &'static str {
                match self { $(LimiterKind::$variant => <$entry as ShippedLimiter>::ABOUT),+ }
            }
            pub fn source(self) -> &'static str {
                match self { $(LimiterKind::$variant => <$entry as ShippedLimiter>::SOURCE),+ }
            }
            pub fn knobs(self) -> &'static [ParamSpec] {
                match self { $(LimiterKind::$variant => <$entry as ShippedLimiter>::KNOBS),+ }
            }
            /// See [`ShippedLimiter::ONE_PROCESS`].
            pub const fn one_process(self) -> bool {
                match self { $(LimiterKind::$variant => <$entry as ShippedLimiter>::ONE_PROCESS),+ }
            }
            /// The limiter, tuned by the point's knobs.
            pub fn build(self, point: &Point) -> Result<Limiter, ParamError> {
                match self { $(LimiterKind::$variant => <$entry as ShippedLimiter>::build(point).map(Limiter::$variant)),+ }
            }
        }

        impl RetryLimiter for Limiter {
            fn acquire_retry(&mut self, now: SimTime, failed: Failed) -> Option<Permit> {
                match self {
                    Limiter::Budget(limiter) => limiter.acquire_retry(now, failed),
                    Limiter::Stack(limiter) => limiter.acquire_retry(now, failed),
                    $(Limiter::$variant(limiter) => limiter.acquire_retry(now, failed)),+
                }
            }
            fn record(&mut self, now: SimTime, outcome: Outcome) {
                match self {
                    Limiter::Budget(limiter) => limiter.record(now, outcome),
                    Limiter::Stack(limiter) => limiter.record(now, outcome),
                    $(Limiter::$variant(limiter) => limiter.record(now, outcome)),+
                }
            }
            fn admit(&mut self, now: SimTime, draw: f64) -> Admission {
                match self {
                    Limiter::Budget(limiter) => limiter.admit(now, draw),
                    Limiter::Stack(limiter) => limiter.admit(now, draw),
                    $(Limiter::$variant(limiter) => limiter.admit(now, draw)),+
                }
            }
            fn on_send(&mut self, now: SimTime, is_retry: bool) {
                match self {
                    Limiter::Budget(limiter) => limiter.on_send(now, is_retry),
                    Limiter::Stack(limiter) => limiter.on_send(now, is_retry),
                    $(Limiter::$variant(limiter) => limiter.on_send(now, is_retry)),+
                }
            }
            fn release(&mut self, now: SimTime, permit: Permit) {
                match self {
                    Limiter::Budget(limiter) => limiter.release(now, permit),
                    Limiter::Stack(limiter) => limiter.release(now, permit),
                    $(Limiter::$variant(limiter) => limiter.release(now, permit)),+
                }
            }
            fn withdraw(&mut self, now: SimTime, sent: bool, permit: Option<Permit>) {
                match self {
                    Limiter::Budget(limiter) => limiter.withdraw(now, sent, permit),
                    Limiter::Stack(limiter) => limiter.withdraw(now, sent, permit),
                    $(Limiter::$variant(limiter) => limiter.withdraw(now, sent, permit)),+
                }
            }
        }
    };
}

register_limiters! {
    grpc_throttle::Grpc => Grpc,
    token_bucket_deposit::TokenBucket => TokenBucket,
    circuit_breaker::Breaker => Breaker,
    aws_quota::AwsQuota => AwsQuota,
    retry_budget::Finagle => Finagle,
    envoy_budget::Envoy => Envoy,
    sre_ratio::SreRatio => SreRatio,
    sre_throttle::SreThrottle => SreThrottle,
    aws_adaptive::AwsAdaptiveMode => AwsAdaptive,
    start_limit::Systemd => Systemd,
    aws_quota_2026::AwsQuota2026 => AwsQuota2026,
    gateway_budget::GatewayBudget => GatewayBudget,
    requeue_bucket::ClientGoBucket => ClientGoBucket,
}

/// The number of knobs of all limiters together.
const fn knob_count() -> usize {
    let mut count = 0;
    let mut i = 0;
    while i < LimiterKind::KNOBS.len() {
        count += LimiterKind::KNOBS[i].len();
        i += 1;
    }
    count
}

/// Every knob's key, in registration order.
const fn knob_keys<const N: usize>() -> [&'static str; N] {
    let mut keys = [""; N];
    let mut n = 0;
    let mut i = 0;
    while i < LimiterKind::KNOBS.len() {
        let mut j = 0;
        while j < LimiterKind::KNOBS[i].len() {
            keys[n] = LimiterKind::KNOBS[i][j].key;
            n += 1;
            j += 1;
        }
        i += 1;
    }
    keys
}

impl LimiterKind {
    /// The keys of every limiter's knobs (for models whose parts may set them).
    pub const KNOB_KEYS: &'static [&'static str] = &knob_keys::<{ knob_count() }>();

    pub fn from_name(name: &str) -> Option<LimiterKind> {
        LimiterKind::ALL.iter().copied().find(|kind| kind.name() == name)
    }

    /// The limiter as it ships: its knobs at their defaults.
    pub fn shipped(self) -> Limiter {
        let point = Point::new(self.knobs().iter().map(|spec| (spec, None)).collect());
        self.build(&point).unwrap_or_else(|error| panic!("{}'s shipped defaults are invalid: {error}", self.name()))
    }
}

impl std::fmt::Display for LimiterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The value of knob `key`, which must be greater than 0: `why` says what 0 would mean.
pub(crate) fn positive_knob(point: &Point, key: &'static str, why: &str) -> Result<f64, ParamError> {
    let value = point.real(key)?;
    if value > 0.0 { Ok(value) } else { Err(ParamError::new(key, format!("must be greater than 0: {why}"))) }
}

/// Permission to make one retry: what it cost (returned on success by limiters that refund), and the earliest
/// time it may be sent (a reservation, as client-go's workqueue bucket makes one).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Permit {
    pub cost: f64,
    /// The retry is not sent before this time: the model sleeps the longer of its backoff and the span until
    /// then (client-go's `MaxOf`). [`SimTime::ZERO`] for limiters that reserve nothing.
    pub not_before: SimTime,
}

impl Permit {
    /// A permit that cost `cost` and may be used at once.
    pub const fn costing(cost: f64) -> Permit {
        Permit { cost, not_before: SimTime::ZERO }
    }

    /// The sleep before the retry: the backoff's `sleep`, or longer if the reservation is later than that.
    pub fn sleep(self, now: SimTime, sleep: SimDuration) -> SimDuration {
        sleep.max(self.not_before.saturating_since(now))
    }
}

/// What one attempt came to. Build it with the constructors ([`Outcome::success`], [`Outcome::failure`],
/// [`Outcome::timeout`], [`Outcome::throttled`], [`Outcome::first_try`]) rather than a struct literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outcome {
    pub succeeded: bool,
    /// The attempt failed by timing out (AWS charges more for retrying those).
    pub timed_out: bool,
    /// The server refused the attempt as throttled (HTTP 429 from a rate limiter). AWS adaptive mode slows down
    /// on these; Google's adaptive throttling does not count them as accepted.
    pub throttled: bool,
    /// The permit this attempt was made with: `None` for a first try.
    pub permit: Option<Permit>,
}

impl Outcome {
    /// A first try that succeeded or failed (not by timeout, not throttled).
    pub fn first_try(succeeded: bool) -> Self {
        Outcome { succeeded, timed_out: false, throttled: false, permit: None }
    }

    /// An attempt that succeeded.
    pub fn success(permit: Option<Permit>) -> Self {
        Outcome { succeeded: true, timed_out: false, throttled: false, permit }
    }

    /// An attempt the server answered with an error other than throttling.
    pub fn failure(permit: Option<Permit>) -> Self {
        Outcome { succeeded: false, timed_out: false, throttled: false, permit }
    }

    /// An attempt that timed out at the client.
    pub fn timeout(permit: Option<Permit>) -> Self {
        Outcome { succeeded: false, timed_out: true, throttled: false, permit }
    }

    /// An attempt the server refused as throttled (429).
    pub fn throttled(permit: Option<Permit>) -> Self {
        Outcome { succeeded: false, timed_out: false, throttled: true, permit }
    }
}

/// How the attempt a client wants to retry failed, for limiters whose price depends on it (the AWS quotas).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    /// An error answer or a reset.
    Error,
    /// No answer before the client's timeout.
    Timeout,
    /// The server said to slow down (429).
    Throttled,
}

impl Failed {
    /// `Timeout` when `timed_out`, else `Throttled` when `throttled`, else `Error`.
    pub fn of(timed_out: bool, throttled: bool) -> Failed {
        match (timed_out, throttled) {
            (true, _) => Failed::Timeout,
            (false, true) => Failed::Throttled,
            (false, false) => Failed::Error,
        }
    }
}

/// A limiter's answer before an attempt is sent (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Send it now.
    Send,
    /// Do not send it: it fails locally, without reaching the server.
    Reject,
    /// Admitted, but send it this much later (the limiter has counted it already).
    Wait(SimDuration),
}

/// One client's retry limiter. `acquire_retry` and `record` are required; `admit` and `on_send` default to
/// admitting everything and ignoring sends, so limiters that only gate retries need not mention them.
pub trait RetryLimiter {
    /// May the client retry now? `failed` says how the attempt to be retried failed.
    fn acquire_retry(&mut self, now: SimTime, failed: Failed) -> Option<Permit>;
    /// Every sent attempt's result, first tries included.
    fn record(&mut self, now: SimTime, outcome: Outcome);
    /// Before every attempt (first tries included): send it, reject it locally, or send it later. `draw` is a
    /// uniform draw from `[0, 1)`, used only by probabilistic limiters.
    fn admit(&mut self, _now: SimTime, _draw: f64) -> Admission {
        Admission::Send
    }
    /// An attempt leaves now; `is_retry` is false for a first try.
    fn on_send(&mut self, _now: SimTime, _is_retry: bool) {}
    /// The caller gave up on something without an outcome: an attempt it had sent (`sent`: a hedge race's loser,
    /// a branch of a failed fan-out) or a retry it was granted but never sent (cancelled during its backoff).
    /// `permit` is the retry's permit, if it was one. Default: nothing.
    fn withdraw(&mut self, _now: SimTime, _sent: bool, _permit: Option<Permit>) {}
    /// Undoes a grant `acquire_retry` just made at `now` that will not be used, because another limiter of a
    /// [`LimiterStack`] refused the retry: the limiter is left as if it had not been asked. Default: nothing, for
    /// limiters whose grant changes nothing.
    fn release(&mut self, _now: SimTime, _permit: Permit) {}
}

#[cfg(test)]
mod properties;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{ParamDefault, Section};

    #[test]
    fn releasing_a_grant_leaves_every_limiter_as_if_it_had_not_been_asked() {
        let t = SimTime::ZERO + SimDuration::from_millis(1_500);
        for &kind in LimiterKind::ALL {
            let point = Point::new(kind.knobs().iter().map(|spec| (spec, None)).collect());
            let mut limiter = kind.build(&point).unwrap();
            // Some history first, so that windows and counters hold something.
            limiter.on_send(t, false);
            limiter.record(t, Outcome::first_try(true));
            let before = limiter.clone();
            let permit = limiter.acquire_retry(t, Failed::Error).unwrap_or_else(|| panic!("{kind} grants at first"));
            limiter.release(t, permit);
            assert_eq!(limiter, before, "{kind}");
        }
        let mut budget = Limiter::Budget(RetryBudget::finagle());
        budget.record(t, Outcome::first_try(true));
        let before = budget.clone();
        let permit = budget.acquire_retry(t, Failed::Error).unwrap();
        budget.release(t, permit);
        assert_eq!(budget, before);
    }

    #[test]
    fn names_are_unique_kebab_case_and_find_their_limiter() {
        let mut names = LimiterKind::NAMES.to_vec();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), LimiterKind::NAMES.len(), "names are unique");
        for &kind in LimiterKind::ALL {
            assert_eq!(LimiterKind::from_name(kind.name()), Some(kind));
            assert!(kind.name().chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{kind}");
            assert!(!kind.about().is_empty() && !kind.source().is_empty(), "{kind}");
            for knob in kind.knobs() {
                // A knob is hashed into no seed unless set: adding one to a limiter moves no published number.
                assert!(
                    matches!(knob.default, ParamDefault::Implied(_) | ParamDefault::Unset),
                    "{kind}: {} must default to the shipped value without being hashed",
                    knob.key
                );
                assert_eq!(knob.section, Section::Client, "{kind}: {}", knob.key);
            }
        }
        assert_eq!(LimiterKind::from_name("envoy-budget"), None);
    }

    #[test]
    fn limiters_that_only_gate_retries_admit_everything_by_default() {
        let mut grpc = LimiterKind::Grpc.shipped();
        assert_eq!(grpc.admit(SimTime::ZERO, 0.0), Admission::Send);
        grpc.on_send(SimTime::ZERO, false);
        assert_eq!(grpc.admit(SimTime::ZERO, 0.999), Admission::Send);
    }
}
