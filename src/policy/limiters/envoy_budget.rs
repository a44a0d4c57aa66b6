use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::time::SimTime;

/// Envoy's cluster retry budget: the retries in progress may not exceed
/// `max(min_retry_concurrency, ⌊budget_percent × (active + pending requests)⌋)`; defaults 3 and 20%.
///
/// Conventions: an attempt is active from [`RetryLimiter::on_send`] until its outcome is recorded (this model has
/// no connection-pool queue, so nothing is pending); a retry is in progress from the moment it is granted (Envoy
/// takes the retry resource when it schedules the retry, before the backoff sleep) until its outcome is
/// recorded. Source: Envoy `RetryBudget` (budget_percent, min_retry_concurrency) in the cluster circuit breakers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnvoyRetryBudget {
    budget_fraction: f64,
    min_concurrency: u32,
    active: u32,
    retries: u32,
}

impl EnvoyRetryBudget {
    /// Envoy's defaults: 20% of active requests, at least 3 concurrent retries.
    pub fn envoy_default() -> Self {
        Self::new(0.2, 3)
    }

    pub fn new(budget_fraction: f64, min_concurrency: u32) -> Self {
        EnvoyRetryBudget { budget_fraction, min_concurrency, active: 0, retries: 0 }
    }

    /// Retries allowed in progress right now.
    pub fn max_retries(&self) -> u32 {
        let share = (self.budget_fraction * f64::from(self.active)).floor() as u32;
        share.max(self.min_concurrency)
    }

    /// Attempts in flight and retries in progress.
    pub fn counts(&self) -> (u32, u32) {
        (self.active, self.retries)
    }
}

impl RetryLimiter for EnvoyRetryBudget {
    fn acquire_retry(&mut self, _: SimTime, _: Failed) -> Option<Permit> {
        (self.retries < self.max_retries()).then(|| {
            self.retries += 1;
            Permit::costing(1.0)
        })
    }

    fn record(&mut self, _: SimTime, outcome: Outcome) {
        self.active = self.active.saturating_sub(1);
        if outcome.permit.is_some() {
            self.retries = self.retries.saturating_sub(1);
        }
    }

    fn on_send(&mut self, _: SimTime, _: bool) {
        self.active += 1;
    }

    fn release(&mut self, _: SimTime, _: Permit) {
        self.retries = self.retries.saturating_sub(1);
    }

    fn withdraw(&mut self, _: SimTime, sent: bool, permit: Option<Permit>) {
        if sent {
            self.active = self.active.saturating_sub(1);
        }
        if permit.is_some() {
            self.retries = self.retries.saturating_sub(1);
        }
    }
}

/// `limiter = "envoy"`.
pub struct Envoy;

impl ShippedLimiter for Envoy {
    type State = EnvoyRetryBudget;
    const NAME: &'static str = "envoy";
    const ABOUT: &'static str = "Envoy's cluster retry budget: retries in progress ≤ max(3, 20% of active requests); \
                                 budget_percent = 0 gives the plain max_retries breaker (min_retry_concurrency of them)";
    const SOURCE: &'static str = "Envoy cluster circuit breakers, retry_budget (budget_percent 20%, min_retry_concurrency 3)";
    const KNOBS: &'static [ParamSpec] = &[
        ParamSpec::new(
            Section::Client,
            "budget_percent",
            ParamKind::Real { min: 0.0, max: 100.0 },
            ParamDefault::Implied(Value::Real(20.0)),
            "envoy: retry_budget.budget_percent, the share of active requests that may be retries, 0 to 100",
        ),
        ParamSpec::new(
            Section::Client,
            "min_retry_concurrency",
            ParamKind::Count { min: 0, max: 1_000_000 },
            ParamDefault::Implied(Value::Count(3)),
            "envoy: retry_budget.min_retry_concurrency, the retries always allowed in progress (or max_retries)",
        ),
    ];

    fn build(point: &Point) -> Result<EnvoyRetryBudget, ParamError> {
        let percent = point.real("budget_percent")?;
        let floor = u32::try_from(point.count("min_retry_concurrency")?)
            .map_err(|_| ParamError::new("min_retry_concurrency", "must be a whole number from 0".into()))?;
        Ok(EnvoyRetryBudget::new(percent / 100.0, floor))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_active(active: u32) -> EnvoyRetryBudget {
        let mut budget = EnvoyRetryBudget::envoy_default();
        for _ in 0..active {
            budget.on_send(SimTime::ZERO, false);
        }
        budget
    }

    fn grants(budget: &mut EnvoyRetryBudget) -> u32 {
        let mut granted = 0;
        while budget.acquire_retry(SimTime::ZERO, Failed::Error).is_some() {
            granted += 1;
            assert!(granted < 10_000);
        }
        granted
    }

    #[test]
    fn few_active_requests_allow_exactly_three_concurrent_retries() {
        let mut budget = with_active(10);
        assert_eq!(grants(&mut budget), 3, "20% of 10 is 2, below the minimum of 3");
        // A retry that ends frees its place.
        budget.on_send(SimTime::ZERO, true);
        budget.record(SimTime::ZERO, Outcome::success(Some(Permit::costing(1.0))));
        assert_eq!(grants(&mut budget), 1);
    }

    #[test]
    fn the_knobs_set_the_share_and_the_floor_and_zero_percent_is_the_max_retries_breaker() {
        use crate::model::ModelKind;
        let point = |changes: &[(&str, Value)]| {
            let mut all = vec![("limiter", Value::Choice("envoy"))];
            all.extend_from_slice(changes);
            ModelKind::Server.point_with(&all)
        };
        let default = Envoy::build(&point(&[])).unwrap();
        assert_eq!(default, EnvoyRetryBudget::envoy_default());
        let mut tuned = Envoy::build(&point(&[("budget_percent", Value::Real(50.0)), ("min_retry_concurrency", Value::Count(1))])).unwrap();
        for _ in 0..10 {
            tuned.on_send(SimTime::ZERO, false);
        }
        assert_eq!(tuned.max_retries(), 5, "50% of 10");
        let mut breaker = Envoy::build(&point(&[("budget_percent", Value::Real(0.0)), ("min_retry_concurrency", Value::Count(7))])).unwrap();
        for _ in 0..1000 {
            breaker.on_send(SimTime::ZERO, false);
        }
        assert_eq!(breaker.max_retries(), 7, "a fixed concurrency limit whatever the load");
    }

    #[test]
    fn many_active_requests_allow_twenty_percent() {
        let mut budget = with_active(100);
        assert_eq!(grants(&mut budget), 20);
        let mut budget = with_active(1_004);
        assert_eq!(grants(&mut budget), 200, "⌊0.2 × 1004⌋");
    }

    #[test]
    fn first_try_outcomes_shrink_the_active_count_but_not_the_retries() {
        let mut budget = with_active(50);
        assert_eq!(grants(&mut budget), 10);
        for _ in 0..40 {
            budget.record(SimTime::ZERO, Outcome::failure(None));
        }
        assert_eq!(budget.counts(), (10, 10));
        assert_eq!(budget.max_retries(), 3);
        assert_eq!(grants(&mut budget), 0);
    }

    #[test]
    fn withdrawn_attempts_and_unsent_retries_leave_the_counts() {
        let mut budget = with_active(2);
        let permit = budget.acquire_retry(SimTime::ZERO, Failed::Error);
        assert_eq!(budget.counts(), (2, 1));
        // A hedge race's loser is withdrawn: no longer active.
        budget.withdraw(SimTime::ZERO, true, None);
        // The granted retry is cancelled during its backoff: no longer in progress, never was active.
        budget.withdraw(SimTime::ZERO, false, permit);
        assert_eq!(budget.counts(), (1, 0));
    }
}
