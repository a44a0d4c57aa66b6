use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter, positive_knob};
use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::time::SimTime;

/// gRPC retry throttling (gRFC A6): `tokens` start at `max_tokens`; each failed call takes 1, each success
/// gives back `token_ratio` (never above `max_tokens`); retries are allowed only while `tokens > max_tokens / 2`.
/// Defaults in gRPC service configs are often `max_tokens = 10`, `token_ratio = 0.1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GrpcThrottle {
    max_tokens: f64,
    token_ratio: f64,
    tokens: f64,
}

impl GrpcThrottle {
    pub fn new(max_tokens: f64, token_ratio: f64) -> Self {
        GrpcThrottle { max_tokens, token_ratio, tokens: max_tokens }
    }

    pub fn tokens(&self) -> f64 {
        self.tokens
    }
}

impl RetryLimiter for GrpcThrottle {
    fn acquire_retry(&mut self, _: SimTime, _: Failed) -> Option<Permit> {
        (self.tokens > self.max_tokens / 2.0).then_some(Permit::costing(0.0))
    }

    fn record(&mut self, _: SimTime, outcome: Outcome) {
        if outcome.succeeded {
            self.tokens = (self.tokens + self.token_ratio).min(self.max_tokens);
        } else {
            self.tokens = (self.tokens - 1.0).max(0.0);
        }
    }
}

/// `limiter = "grpc"`: gRPC's retry throttling with the `retryThrottling` values of the gRFC's example.
pub struct Grpc;

impl ShippedLimiter for Grpc {
    type State = GrpcThrottle;
    const NAME: &'static str = "grpc";
    const ABOUT: &'static str = "gRPC retry throttling: a failure takes a token, a success gives back token_ratio; \
                                 retries only while tokens > max_tokens / 2 (10, 0.1)";
    const SOURCE: &'static str = "gRFC A6 client retries, retryThrottling (maxTokens, tokenRatio)";
    const KNOBS: &'static [ParamSpec] = &[
        ParamSpec::new(
            Section::Client,
            "max_tokens",
            ParamKind::Real { min: 0.0, max: 1000.0 },
            ParamDefault::Implied(Value::Real(10.0)),
            "grpc: maxTokens, > 0",
        ),
        ParamSpec::new(
            Section::Client,
            "token_ratio",
            ParamKind::Real { min: 0.0, max: 1000.0 },
            ParamDefault::Implied(Value::Real(0.1)),
            "grpc: tokenRatio, the tokens a success gives back, > 0",
        ),
    ];

    fn build(point: &Point) -> Result<GrpcThrottle, ParamError> {
        let max_tokens = positive_knob(point, "max_tokens", "with no tokens the client never retries")?;
        let ratio = positive_knob(point, "token_ratio", "with no refill one burst of failures ends retrying for good")?;
        Ok(GrpcThrottle::new(max_tokens, ratio))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_full_tokens_at_total_failure_retries_stop_after_exactly_five_failed_calls() {
        // docs/references.md#retry-limiters-as-shipped: maxTokens 10, tokenRatio 0.1; retries allowed while tokens > 5.
        let mut throttle = GrpcThrottle::new(10.0, 0.1);
        let mut failed_calls = 0;
        while throttle.acquire_retry(SimTime::ZERO, Failed::Error).is_some() {
            throttle.record(SimTime::ZERO, Outcome::first_try(false));
            failed_calls += 1;
            assert!(failed_calls < 100, "never stopped");
        }
        assert_eq!(failed_calls, 5);
    }

    #[test]
    fn retries_die_out_above_a_failure_ratio_of_ratio_over_one_plus_ratio() {
        // At failure ratio f the expected token drift per call is (1 − f)·0.1 − f: zero at f = 0.1/1.1 = 9.09%.
        // Failures spread evenly through the stream, just below and just above that ratio.
        let run = |failures_per_1000: u64| {
            let mut throttle = GrpcThrottle::new(10.0, 0.1);
            for call in 0..100_000_u64 {
                let failed = (call + 1) * failures_per_1000 / 1000 > call * failures_per_1000 / 1000;
                throttle.record(SimTime::ZERO, Outcome::first_try(!failed));
            }
            throttle.acquire_retry(SimTime::ZERO, Failed::Error).is_some()
        };
        assert!(run(85), "at 8.5% failures retries stay allowed");
        assert!(!run(97), "at 9.7% failures the tokens drain and retries stop");
        assert!((0.1_f64 / 1.1 - 0.0909).abs() < 1e-4);
    }
}
