use super::{Failed, Outcome, Permit, RetryLimiter, ShippedLimiter, positive_knob};
use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::time::{SimDuration, SimTime};

/// A reservation token bucket over retries, as golang.org/x/time/rate's `Limiter.Reserve` keeps one: the bucket
/// refills at `rate` tokens per second up to `burst`, and every retry takes a token at once, even one not there
/// yet: the tokens go negative and the retry is reserved for when its token arrives, −tokens/rate from now. It
/// never refuses a retry, it only delays it; first tries pass untouched (client-go rate-limits requeues only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequeueBucket {
    rate_per_second: f64,
    burst: f64,
    tokens: f64,
    updated: SimTime,
    /// `(tokens, updated)` before the last grant, so that a stack can take it back exactly.
    before_grant: (f64, SimTime),
}

impl RequeueBucket {
    /// A full bucket. `rate_per_second` and `burst` must be positive (validated by callers).
    pub fn new(rate_per_second: f64, burst: f64) -> Self {
        RequeueBucket { rate_per_second, burst, tokens: burst, updated: SimTime::ZERO, before_grant: (burst, SimTime::ZERO) }
    }

    /// The tokens at `now` (negative while reservations wait for theirs).
    pub fn tokens_at(&self, now: SimTime) -> f64 {
        let refill = now.saturating_since(self.updated).as_secs_f64() * self.rate_per_second;
        (self.tokens + refill).min(self.burst)
    }
}

impl RetryLimiter for RequeueBucket {
    /// Takes a token, reserving the retry for when it arrives: `not_before` = now + max(0, −tokens)/rate.
    fn acquire_retry(&mut self, now: SimTime, _: Failed) -> Option<Permit> {
        self.before_grant = (self.tokens, self.updated);
        self.tokens = self.tokens_at(now) - 1.0;
        self.updated = now;
        let wait = SimDuration::from_nanos_f64((-self.tokens).max(0.0) / self.rate_per_second * 1e9);
        Some(Permit { cost: 0.0, not_before: now + wait })
    }

    fn release(&mut self, _: SimTime, _: Permit) {
        (self.tokens, self.updated) = self.before_grant;
    }

    fn record(&mut self, _: SimTime, _: Outcome) {}
}

/// `limiter = "client-go-bucket"`: the shared half of client-go's default controller rate limiter.
pub struct ClientGoBucket;

impl ShippedLimiter for ClientGoBucket {
    type State = RequeueBucket;
    const NAME: &'static str = "client-go-bucket";
    const ABOUT: &'static str = "client-go workqueue bucket: requeues reserve a token of a bucket refilled at requeue_qps up to \
                                 requeue_burst and wait for it, never refused (10/s, burst 100)";
    const SOURCE: &'static str = "k8s.io/client-go util/workqueue/default_rate_limiters.go (BucketRateLimiter over \
                                  rate.NewLimiter(10, 100)); golang.org/x/time/rate Limiter.Reserve";
    const KNOBS: &'static [ParamSpec] = &[
        ParamSpec::new(
            Section::Client,
            "requeue_qps",
            ParamKind::Real { min: 0.0, max: 1e9 },
            ParamDefault::Implied(Value::Real(10.0)),
            "client-go-bucket: tokens per second, > 0",
        ),
        ParamSpec::new(
            Section::Client,
            "requeue_burst",
            ParamKind::Real { min: 0.0, max: 1e9 },
            ParamDefault::Implied(Value::Real(100.0)),
            "client-go-bucket: the bucket's size, at least 1",
        ),
    ];

    fn build(point: &Point) -> Result<RequeueBucket, ParamError> {
        let rate = positive_knob(point, "requeue_qps", "no requeue would ever be let through")?;
        let burst = point.real("requeue_burst")?;
        if burst < 1.0 {
            return Err(ParamError::new("requeue_burst", "must be at least 1: a bucket of less holds no whole token".into()));
        }
        Ok(RequeueBucket::new(rate, burst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at_millis(millis: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(millis)
    }

    #[test]
    fn the_burst_passes_at_once_then_each_requeue_waits_for_its_token() {
        let point = Point::new(ClientGoBucket::KNOBS.iter().map(|spec| (spec, None)).collect());
        let mut bucket = ClientGoBucket::build(&point).unwrap();
        // 150 items fail together at t = 1 s: the first 100 are not held back, the next 50 wait 0.1 s apart.
        let now = at_millis(1_000);
        let reserved: Vec<SimTime> =
            (0..150).map(|_| bucket.acquire_retry(now, Failed::Error).unwrap().not_before).collect();
        assert!(reserved[..100].iter().all(|&t| t == now));
        for (k, &t) in reserved[100..].iter().enumerate() {
            assert_eq!(t, now + SimDuration::from_millis(100 * (k as u64 + 1)), "requeue {}", 101 + k);
        }
        // Ten seconds on the bucket has refilled 100 tokens, of which the 50 reservations owed it took 50.
        assert!((bucket.tokens_at(at_millis(11_000)) - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_reservation_makes_the_retry_sleep_the_longer_of_backoff_and_wait() {
        let mut bucket = RequeueBucket::new(10.0, 1.0);
        let now = at_millis(0);
        let first = bucket.acquire_retry(now, Failed::Error).unwrap();
        assert_eq!(first.sleep(now, SimDuration::from_millis(5)), SimDuration::from_millis(5));
        let second = bucket.acquire_retry(now, Failed::Error).unwrap();
        assert_eq!(second.sleep(now, SimDuration::from_millis(5)), SimDuration::from_millis(100));
        assert_eq!(second.sleep(now, SimDuration::from_millis(250)), SimDuration::from_millis(250));
    }

    #[test]
    fn knobs_below_their_minimum_are_refused_by_name() {
        let invalid = |key: &str, value: f64| {
            let point = Point::new(
                ClientGoBucket::KNOBS
                    .iter()
                    .map(|spec| (spec, (spec.key == key).then_some(Value::Real(value))))
                    .collect(),
            );
            ClientGoBucket::build(&point).unwrap_err().to_string()
        };
        assert!(invalid("requeue_qps", 0.0).contains("requeue_qps"));
        assert!(invalid("requeue_burst", 0.5).contains("requeue_burst"));
    }
}
