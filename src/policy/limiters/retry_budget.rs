use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::{SimDuration, SimTime};

/// A retry budget as in Finagle's and tower's `RetryBudget`: every request deposits `percent` of a retry, every
/// retry withdraws one, and both expire after `ttl`; a reserve of `min_retries_per_second × ttl` retries is
/// always available on top. Defaults: 20%, 10 retries/s, 10 s. Time is kept in whole-second buckets.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryBudget {
    percent: f64,
    reserve: f64,
    /// Per second of the window, ring-indexed by second: (deposits, withdrawals).
    seconds: Vec<(f64, f64)>,
    current_second: u64,
}

impl RetryBudget {
    /// Bytes it holds on the heap: its ring of seconds (for the plan's memory estimate).
    pub(super) fn heap_bytes(&self) -> usize {
        self.seconds.capacity() * size_of::<(f64, f64)>()
    }

    /// Finagle's defaults: 20% of requests, 10 retries/s reserve, over 10 s.
    pub fn finagle() -> Self {
        Self::new(0.2, 10.0, SimDuration::from_secs(10))
    }

    pub fn new(percent: f64, min_retries_per_second: f64, ttl: SimDuration) -> Self {
        let ttl_seconds = (ttl.as_secs_f64().ceil() as usize).max(1);
        RetryBudget {
            percent,
            reserve: min_retries_per_second * ttl_seconds as f64,
            seconds: vec![(0.0, 0.0); ttl_seconds],
            current_second: 0,
        }
    }

    /// Moves the window to `now`, forgetting seconds older than the ttl.
    fn advance(&mut self, now: SimTime) {
        let second = now.as_nanos() / 1_000_000_000;
        let window = self.seconds.len() as u64;
        let stale = (second.saturating_sub(self.current_second)).min(window);
        for offset in 1..=stale {
            let index = ((self.current_second + offset) % window) as usize;
            self.seconds[index] = (0.0, 0.0);
        }
        self.current_second = self.current_second.max(second);
    }

    fn current(&mut self) -> &mut (f64, f64) {
        let index = (self.current_second % self.seconds.len() as u64) as usize;
        &mut self.seconds[index]
    }

    /// Retries the budget would allow right now.
    pub fn balance(&self) -> f64 {
        let (deposits, withdrawals) = self.seconds.iter().fold((0.0, 0.0), |(d, w), s| (d + s.0, w + s.1));
        self.reserve + self.percent * deposits - withdrawals
    }

    /// Books `requests` first tries' outcomes at `now` (fractional in the fluid limit).
    pub(crate) fn deposit(&mut self, now: SimTime, requests: f64) {
        self.advance(now);
        self.current().0 += requests;
    }

    /// Grants as many of `wanted` retries at `now` as the balance covers, books them, and returns them: the fluid
    /// limit's `min(wanted, balance)`, where a client asks for a whole retry and needs a balance of 1.
    pub(crate) fn withdraw_up_to(&mut self, now: SimTime, wanted: f64) -> f64 {
        self.advance(now);
        let granted = wanted.min(self.balance().max(0.0));
        self.current().1 += granted;
        granted
    }

    /// The share of requests that may be retried, and the reserve's retries per second (reserve / window).
    pub(crate) fn rates(&self) -> (f64, f64) {
        (self.percent, self.reserve / self.seconds.len() as f64)
    }

    /// The same budget with its reserve multiplied by `factor`: one budget for `factor` copies of a fleet.
    pub(crate) fn with_reserve_scaled(&self, factor: f64) -> RetryBudget {
        RetryBudget { reserve: self.reserve * factor, ..self.clone() }
    }
}

impl RetryLimiter for RetryBudget {
    fn acquire_retry(&mut self, now: SimTime, _: Failed) -> Option<Permit> {
        self.advance(now);
        (self.balance() >= 1.0).then(|| {
            self.current().1 += 1.0;
            Permit::costing(1.0)
        })
    }

    fn release(&mut self, now: SimTime, _: Permit) {
        self.advance(now);
        self.current().1 -= 1.0;
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        self.advance(now);
        if outcome.permit.is_none() {
            self.deposit(now, 1.0);
        }
    }
}

/// `limiter = "finagle"`.
pub struct Finagle;

impl ShippedLimiter for Finagle {
    type State = RetryBudget;
    const NAME: &'static str = "finagle";
    const ABOUT: &'static str = "Finagle's retry budget: retries ≤ 20% of requests + 10 per second, over 10 s";
    const SOURCE: &'static str = "Finagle finagle-core RetryBudget (Budget.default: 20%, 10 retries/s, ttl 10 s)";

    fn build(_: &Point) -> Result<RetryBudget, ParamError> {
        Ok(RetryBudget::finagle())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exhaust(budget: &mut RetryBudget, at: SimTime) -> u32 {
        let mut retries = 0;
        while budget.acquire_retry(at, Failed::Error).is_some() {
            retries += 1;
        }
        retries
    }

    #[test]
    fn twenty_percent_of_requests_plus_the_reserve_and_no_more() {
        let mut budget = RetryBudget::finagle();
        let t = SimTime::ZERO + SimDuration::from_millis(500);
        for _ in 0..1_000 {
            budget.record(t, Outcome::first_try(false));
        }
        // 20% of 1,000 requests + 10/s × 10 s of reserve.
        assert_eq!(exhaust(&mut budget, t), 300);
    }

    #[test]
    fn deposits_and_withdrawals_expire_after_the_ttl() {
        let mut budget = RetryBudget::new(0.5, 0.0, SimDuration::from_secs(10));
        for _ in 0..100 {
            budget.record(SimTime::ZERO, Outcome::first_try(true));
        }
        assert_eq!(exhaust(&mut budget, SimTime::ZERO + SimDuration::from_secs(9)), 50);
        // Ten seconds on, the deposits (and the withdrawals) have expired together.
        assert_eq!(exhaust(&mut budget, SimTime::ZERO + SimDuration::from_secs(19)), 0);
        assert_eq!(budget.balance(), 0.0);
    }
}
