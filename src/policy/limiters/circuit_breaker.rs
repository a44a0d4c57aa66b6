use super::window::SecondWindow;
use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{Choice, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Switch, Value, choices};
use crate::time::{SimDuration, SimTime};

choices! {
    /// How a breaker decides.
    pub enum BreakerStyle {
        /// Closed, open for `breaker_open_for` when the recent failure ratio passes the threshold, then one probe.
        ThreeState = "three-state",
        /// Brooker's retry_sim (mbrooker/simulator_example, retry_sim/retry_strategy.py): no states; a retry is
        /// allowed while the client's failed attempts since the start, over the first tries it has sent, are at
        /// most the threshold.
        RatioGate = "ratio-gate",
    }
}

/// A breaker's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BreakerState {
    /// Retries allowed.
    Closed,
    /// Retries refused until the given time.
    Open { until: SimTime },
    /// One probe retry allowed; its result closes or reopens the breaker.
    HalfOpen { probing: bool },
}

/// Which calls a breaker's failure ratio is taken over.
#[derive(Clone, Debug, PartialEq)]
enum Window {
    /// The last `outcomes.len()` calls (a ring of "failed?").
    Calls { outcomes: Vec<bool>, next: usize, filled: usize, failures: usize },
    /// The calls of the last whole seconds: (calls, failures) per second.
    Time(SecondWindow),
    /// Every call since the start.
    Cumulative { calls: u64, failures: u64 },
}

/// A retry circuit breaker: if more than `threshold` of the recent calls failed, stop retrying (open) for
/// `open_for`; then let one retry through (half-open) and close on its success or reopen on its failure.
/// "Recent" is the last N calls, the last T seconds, or (cumulative) every call so far. Brooker (2022) uses a
/// 10% threshold.
#[derive(Clone, Debug, PartialEq)]
pub struct CircuitBreaker {
    threshold: f64,
    open_for: SimDuration,
    window: Window,
    state: BreakerState,
    /// `Some((first tries sent, failed attempts))` for the ratio gate, which replaces the states.
    gate: Option<(u64, u64)>,
}

impl CircuitBreaker {
    /// Bytes it holds on the heap: its window of calls or seconds (for the plan's memory estimate).
    pub(super) fn heap_bytes(&self) -> usize {
        match &self.window {
            Window::Calls { outcomes, .. } => outcomes.capacity(),
            Window::Time(seconds) => seconds.heap_bytes(),
            Window::Cumulative { .. } => 0,
        }
    }

    /// Over the last `window` calls.
    pub fn new(threshold: f64, window: usize, open_for: SimDuration) -> Self {
        let window = Window::Calls { outcomes: vec![false; window.max(1)], next: 0, filled: 0, failures: 0 };
        CircuitBreaker { threshold, open_for, window, state: BreakerState::Closed, gate: None }
    }

    /// Over the calls of the last `window` of time (whole seconds).
    pub fn over_time(threshold: f64, window: SimDuration, open_for: SimDuration) -> Self {
        CircuitBreaker {
            threshold,
            open_for,
            window: Window::Time(SecondWindow::new(window)),
            state: BreakerState::Closed,
            gate: None,
        }
    }

    /// Over every call since the start.
    pub fn cumulative(threshold: f64, open_for: SimDuration) -> Self {
        let window = Window::Cumulative { calls: 0, failures: 0 };
        CircuitBreaker { threshold, open_for, window, state: BreakerState::Closed, gate: None }
    }

    /// Brooker's ratio gate: retries while failed attempts / first tries ≤ `threshold`, counted since the start
    /// (a ratio that can pass 1, since retries fail too).
    pub fn ratio_gate(threshold: f64) -> Self {
        CircuitBreaker { gate: Some((0, 0)), ..CircuitBreaker::cumulative(threshold, SimDuration::ZERO) }
    }

    pub fn state(&self) -> BreakerState {
        self.state
    }

    fn failure_ratio(&mut self, now: SimTime) -> f64 {
        let (calls, failures) = match &mut self.window {
            Window::Calls { filled, failures, .. } => (*filled as f64, *failures as f64),
            Window::Time(seconds) => seconds.totals(now),
            Window::Cumulative { calls, failures } => (*calls as f64, *failures as f64),
        };
        if calls == 0.0 { 0.0 } else { failures / calls }
    }

    fn remember(&mut self, now: SimTime, failed: bool) {
        match &mut self.window {
            Window::Calls { outcomes, next, filled, failures } => {
                if *filled == outcomes.len() && outcomes[*next] {
                    *failures -= 1;
                }
                outcomes[*next] = failed;
                *failures += usize::from(failed);
                *next = (*next + 1) % outcomes.len();
                *filled = (*filled + 1).min(outcomes.len());
            }
            Window::Time(seconds) => seconds.add(now, 1.0, f64::from(u8::from(failed))),
            Window::Cumulative { calls, failures } => {
                *calls += 1;
                *failures += u64::from(failed);
            }
        }
    }
}

impl RetryLimiter for CircuitBreaker {
    /// A probe granted in the half-open state and not used leaves the breaker half-open and unprobed.
    fn release(&mut self, _: SimTime, _: Permit) {
        if self.state == (BreakerState::HalfOpen { probing: true }) {
            self.state = BreakerState::HalfOpen { probing: false };
        }
    }

    fn acquire_retry(&mut self, now: SimTime, _: Failed) -> Option<Permit> {
        if let Some((first_tries, failed)) = self.gate {
            return (failed as f64 <= self.threshold * first_tries as f64).then_some(Permit::costing(0.0));
        }
        if let BreakerState::Open { until } = self.state
            && now >= until
        {
            self.state = BreakerState::HalfOpen { probing: false };
        }
        match self.state {
            BreakerState::Closed => Some(Permit::costing(0.0)),
            BreakerState::HalfOpen { probing: false } => {
                self.state = BreakerState::HalfOpen { probing: true };
                Some(Permit::costing(0.0))
            }
            _ => None,
        }
    }

    fn on_send(&mut self, _: SimTime, is_retry: bool) {
        if let Some((first_tries, _)) = &mut self.gate {
            *first_tries += u64::from(!is_retry);
        }
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        if let Some((_, failed)) = &mut self.gate {
            *failed += u64::from(!outcome.succeeded);
            return;
        }
        self.remember(now, !outcome.succeeded);
        let ratio = self.failure_ratio(now);
        match self.state {
            BreakerState::HalfOpen { probing: true } if outcome.permit.is_some() => {
                self.state = if outcome.succeeded {
                    BreakerState::Closed
                } else {
                    BreakerState::Open { until: now + self.open_for }
                };
            }
            BreakerState::Closed if ratio > self.threshold => {
                self.state = BreakerState::Open { until: now + self.open_for };
            }
            _ => {}
        }
    }
}

/// `limiter = "breaker"`: a retry circuit breaker at Brooker's 10%.
pub struct Breaker;

impl ShippedLimiter for Breaker {
    type State = CircuitBreaker;
    const NAME: &'static str = "breaker";
    const ABOUT: &'static str = "retry circuit breaker: no retries while more than breaker_threshold of the recent \
                                 calls failed, then one probe after breaker_open_for (10% of the last 100 calls, 1 s)";
    const SOURCE: &'static str = "Brooker, \"Fixing retries with token buckets and circuit breakers\" (2022)";
    const KNOBS: &'static [ParamSpec] = &[
        ParamSpec::new(
            Section::Client,
            "breaker_threshold",
            ParamKind::Real { min: 0.0, max: 1.0 },
            ParamDefault::Implied(Value::Real(0.1)),
            "breaker: open while more than this fraction of the recent calls failed",
        ),
        ParamSpec::new(
            Section::Client,
            "breaker_window",
            ParamKind::Count { min: 1, max: 10_000_000 },
            ParamDefault::Implied(Value::Count(100)),
            "breaker: recent = the last this many calls",
        ),
        ParamSpec::new(
            Section::Client,
            "breaker_window_time",
            ParamKind::Duration,
            ParamDefault::Unset,
            "breaker: recent = the calls of this last span of time, in whole seconds (instead of breaker_window)",
        ),
        ParamSpec::new(
            Section::Client,
            "breaker_cumulative",
            ParamKind::Choice(Switch::NAMES),
            ParamDefault::Implied(Value::Choice("off")),
            "breaker: on = count every call since the start (instead of a window)",
        ),
        ParamSpec::new(
            Section::Client,
            "breaker_open_for",
            ParamKind::Duration,
            ParamDefault::Implied(Value::Duration(SimDuration::from_secs(1))),
            "breaker: how long it stays open before a probe",
        ),
        ParamSpec::new(
            Section::Client,
            "breaker_style",
            ParamKind::Choice(BreakerStyle::NAMES),
            ParamDefault::Implied(Value::Choice("three-state")),
            "breaker: three-state (closed, open, one probe) or ratio-gate (Brooker's retry_sim: retry while failed \
             attempts / first tries since the start ≤ breaker_threshold; no window, no pause)",
        ),
    ];

    fn build(point: &Point) -> Result<CircuitBreaker, ParamError> {
        let threshold = point.real("breaker_threshold")?;
        if point.choice_of::<BreakerStyle>("breaker_style")? == BreakerStyle::RatioGate {
            let ignored = ["breaker_window", "breaker_window_time", "breaker_cumulative", "breaker_open_for"];
            if let Some(&key) = ignored.iter().find(|key| point.is_written(key)) {
                return Err(ParamError::new(key, "the ratio gate has no window and no pause: leave it out".into()));
            }
            return Ok(CircuitBreaker::ratio_gate(threshold));
        }
        let open_for = point.duration("breaker_open_for")?;
        let count_given = point.is_given("breaker_window")?;
        let span = point.optional_duration("breaker_window_time")?;
        let cumulative = point.choice_of::<Switch>("breaker_cumulative")? == Switch::On;
        match (count_given, span, cumulative) {
            (true, Some(_), _) | (true, None, true) | (false, Some(_), true) => Err(ParamError::new(
                if cumulative { "breaker_cumulative" } else { "breaker_window_time" },
                "choose one of breaker_window (calls), breaker_window_time (time) and breaker_cumulative = \"on\""
                    .into(),
            )),
            (false, Some(span), false) if span.is_zero() => Err(ParamError::new(
                "breaker_window_time",
                "must be longer than 0 (at least one second is kept)".into(),
            )),
            (false, Some(span), false) => Ok(CircuitBreaker::over_time(threshold, span, open_for)),
            (false, None, true) => Ok(CircuitBreaker::cumulative(threshold, open_for)),
            (_, None, false) => Ok(CircuitBreaker::new(threshold, point.count("breaker_window")? as usize, open_for)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_above_the_threshold_probes_after_the_pause_and_closes_on_success() {
        let mut breaker = CircuitBreaker::new(0.1, 10, SimDuration::from_secs(1));
        let t0 = SimTime::ZERO;
        for _ in 0..9 {
            breaker.record(t0, Outcome::first_try(true));
        }
        breaker.record(t0, Outcome::first_try(false));
        assert_eq!(breaker.state(), BreakerState::Closed, "1 failure in 10 is not more than 10%");
        breaker.record(t0, Outcome::first_try(false));
        assert!(matches!(breaker.state(), BreakerState::Open { .. }), "2 in 10 is");
        assert_eq!(breaker.acquire_retry(t0 + SimDuration::from_millis(999), Failed::Error), None);
        let later = t0 + SimDuration::from_secs(1);
        let probe = breaker.acquire_retry(later, Failed::Error);
        assert!(probe.is_some());
        assert_eq!(breaker.acquire_retry(later, Failed::Error), None, "one probe at a time");
        breaker.record(later, Outcome::success(probe));
        assert_eq!(breaker.state(), BreakerState::Closed);
    }

    #[test]
    fn the_ratio_gate_retries_while_failed_attempts_stay_within_the_threshold_of_first_tries() {
        let t = SimTime::ZERO;
        // A client whose very first call fails: 1 failure over 1 first try is above 10%, no retry.
        let mut first = CircuitBreaker::ratio_gate(0.1);
        first.on_send(t, false);
        first.record(t, Outcome::first_try(false));
        assert_eq!(first.acquire_retry(t, Failed::Error), None);
        // Nine successes first: 1 failure over 10 first tries is 10%, allowed; the retry counts as sent but not
        // as a first try, and when it fails too, 2 over 10 is above the threshold.
        let mut gate = CircuitBreaker::ratio_gate(0.1);
        for _ in 0..9 {
            gate.on_send(t, false);
            gate.record(t, Outcome::first_try(true));
        }
        gate.on_send(t, false);
        gate.record(t, Outcome::first_try(false));
        let permit = gate.acquire_retry(t, Failed::Error).expect("1 in 10 is not above 10%");
        gate.on_send(t, true);
        gate.record(t, Outcome::failure(Some(permit)));
        assert_eq!(gate.acquire_retry(t, Failed::Error), None, "2 failed attempts over 10 first tries");
        assert_eq!(gate.state(), BreakerState::Closed, "the gate has no states");
    }

    #[test]
    fn a_failed_probe_reopens() {
        let mut breaker = CircuitBreaker::new(0.1, 4, SimDuration::from_secs(1));
        for _ in 0..4 {
            breaker.record(SimTime::ZERO, Outcome::first_try(false));
        }
        let later = SimTime::ZERO + SimDuration::from_secs(2);
        let probe = breaker.acquire_retry(later, Failed::Error);
        breaker.record(later, Outcome::failure(probe));
        assert_eq!(breaker.state(), BreakerState::Open { until: later + SimDuration::from_secs(1) });
    }

    #[test]
    fn a_time_window_forgets_old_calls_and_a_cumulative_one_never_does() {
        let at = |ms: u64| SimTime::ZERO + SimDuration::from_millis(ms);
        let pause = SimDuration::from_millis(100);
        let mut timed = CircuitBreaker::over_time(0.5, SimDuration::from_secs(2), pause);
        let mut forever = CircuitBreaker::cumulative(0.5, pause);
        for breaker in [&mut timed, &mut forever] {
            for _ in 0..3 {
                breaker.record(at(0), Outcome::first_try(true));
            }
            breaker.record(at(3_000), Outcome::first_try(false));
        }
        // The three successes at 0 s have left the 2 s window: one failure of one call is 100%.
        assert!(matches!(timed.state(), BreakerState::Open { .. }));
        // Counted from the start it is 1 failure in 4 calls.
        assert_eq!(forever.state(), BreakerState::Closed);
        forever.record(at(3_000), Outcome::first_try(false));
        assert_eq!(forever.state(), BreakerState::Closed, "2 of 5");
        forever.record(at(3_000), Outcome::first_try(false));
        assert_eq!(forever.state(), BreakerState::Closed, "3 of 6 is not more than half");
        forever.record(at(3_000), Outcome::first_try(false));
        assert!(matches!(forever.state(), BreakerState::Open { .. }), "4 of 7 is");
    }
}
