use super::{RetryBudget, ShippedLimiter};
use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::time::SimDuration;

/// `limiter = "gateway-budget"`: the Kubernetes Gateway API's retry budget (`BackendTrafficPolicy.retryConstraint`:
/// `budget.percent` 20 over `budget.interval` 10 s, with `minRetryRate` 10 per 1 s), which is also Linkerd's
/// (`retryRatio` 0.2, `minRetriesPerSecond` 10, `ttl` 10 s): retries ≤ percent × requests in the interval, plus a
/// reserve of the minimum rate × interval. Its own file so that its knobs and source are its own; the books are
/// kept as Finagle's are ([`RetryBudget`]).
pub struct GatewayBudget;

impl ShippedLimiter for GatewayBudget {
    type State = RetryBudget;
    const NAME: &'static str = "gateway-budget";
    const ABOUT: &'static str = "Gateway API / Linkerd retry budget: retries ≤ retry_percent of the requests in \
                                 retry_interval, plus min_retry_rate per second (20%, 10 s, 10/s)";
    const SOURCE: &'static str = "Gateway API v1.3 BackendTrafficPolicy retryConstraint (GEP-3388); Linkerd \
                                  ServiceProfile retryBudget";
    const KNOBS: &'static [ParamSpec] = &[
        ParamSpec::new(
            Section::Client,
            "retry_percent",
            ParamKind::Real { min: 0.0, max: 1.0 },
            ParamDefault::Implied(Value::Real(0.2)),
            "gateway-budget: budget.percent, retries per request in the interval, 0 to 1",
        ),
        ParamSpec::new(
            Section::Client,
            "retry_interval",
            ParamKind::Duration,
            ParamDefault::Implied(Value::Duration(SimDuration::from_secs(10))),
            "gateway-budget: budget.interval, the window the requests and retries are counted over (whole seconds)",
        ),
        ParamSpec::new(
            Section::Client,
            "min_retry_rate",
            ParamKind::Real { min: 0.0, max: 1e6 },
            ParamDefault::Implied(Value::Real(10.0)),
            "gateway-budget: minRetryRate, retries per second always allowed",
        ),
    ];

    fn build(point: &Point) -> Result<RetryBudget, ParamError> {
        let interval = point.duration("retry_interval")?;
        if interval < SimDuration::from_secs(1) {
            return Err(ParamError::new("retry_interval", "must be at least 1s (the budget counts whole seconds)".into()));
        }
        Ok(RetryBudget::new(point.real("retry_percent")?, point.real("min_retry_rate")?, interval))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limiters::{Failed, Outcome, RetryLimiter};
    use crate::time::SimTime;

    #[test]
    fn the_gateway_example_1000_requests_in_10_s_allow_200_retries_above_the_reserve() {
        let point = Point::new(GatewayBudget::KNOBS.iter().map(|spec| (spec, None)).collect());
        let mut budget = GatewayBudget::build(&point).unwrap();
        let at = SimTime::ZERO + SimDuration::from_millis(500);
        for _ in 0..1000 {
            budget.record(at, Outcome::first_try(false));
        }
        let mut retries = 0;
        while budget.acquire_retry(at, Failed::Error).is_some() {
            retries += 1;
        }
        // 20% of 1000 requests, plus the reserve of 10 per second over 10 s.
        assert_eq!(retries, 200 + 100);
    }
}
