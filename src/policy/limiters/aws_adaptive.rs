use super::{Failed, Admission, AwsRetryQuota, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::{SimDuration, SimTime};

/// Seconds since t = 0, the unit of every rate here.
fn seconds(now: SimTime) -> f64 {
    now.as_nanos() as f64 / 1e9
}

/// The CUBIC curve AWS adaptive mode steers its send rate with. After a throttle at `t_fail`, with `W_max` the
/// rate at that moment: `rate(t) = C·(t − t_fail − K)³ + W_max`, `K = ∛(W_max·(1 − β)/C)`, C = 0.4, β = 0.7; the
/// throttle itself sets the rate to `β·W_max`. So the rate is back at `W_max` at `t_fail + K` and grows beyond.
/// Source: botocore `retries/throttling.py` (CubicCalculator), the same constants in the other SDKs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cubic {
    c: f64,
    beta: f64,
    w_max: f64,
    k: f64,
    last_fail: f64,
}

impl Cubic {
    /// The SDKs' constants, starting from `W_max = 0` at t = 0 (so before any throttle the rate grows as 0.4·t³).
    pub fn new() -> Self {
        Cubic { c: 0.4, beta: 0.7, w_max: 0.0, k: 0.0, last_fail: 0.0 }
    }

    /// `K`, the time after the last throttle at which the curve is back at `W_max`.
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The rate after a success at `t` seconds.
    pub fn success(&self, t: f64) -> f64 {
        self.c * (t - self.last_fail - self.k).powi(3) + self.w_max
    }

    /// A throttle at `t` seconds while sending at `rate`: remembers `W_max = rate` and returns `β·rate`.
    pub fn throttle(&mut self, rate: f64, t: f64) -> f64 {
        self.w_max = rate;
        self.k = (self.w_max * (1.0 - self.beta) / self.c).cbrt();
        self.last_fail = t;
        rate * self.beta
    }
}

impl Default for Cubic {
    fn default() -> Self {
        Self::new()
    }
}

/// The client's measured request rate, as the SDKs smooth it: responses are counted in half-second buckets; when a
/// response falls in a later bucket than the last update, `rate = 0.8·(count / seconds since that update) +
/// 0.2·rate` and the count restarts. Source: botocore `retries/adaptive.py` (RateClocker: smoothing 0.8, time
/// bucket 0.5 s; the first bucket starts at ⌊t₀⌋).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateClocker {
    measured: f64,
    last_bucket: f64,
    count: f64,
}

impl RateClocker {
    const SMOOTHING: f64 = 0.8;
    const BUCKETS_PER_SECOND: f64 = 2.0;

    pub fn new() -> Self {
        RateClocker { measured: 0.0, last_bucket: 0.0, count: 0.0 }
    }

    /// Counts one response at `t` seconds and returns the measured rate.
    pub fn record(&mut self, t: f64) -> f64 {
        let bucket = (t * Self::BUCKETS_PER_SECOND).floor() / Self::BUCKETS_PER_SECOND;
        self.count += 1.0;
        if bucket > self.last_bucket {
            let current = self.count / (bucket - self.last_bucket);
            self.measured = Self::SMOOTHING * current + (1.0 - Self::SMOOTHING) * self.measured;
            self.count = 0.0;
            self.last_bucket = bucket;
        }
        self.measured
    }

    pub fn rate(&self) -> f64 {
        self.measured
    }
}

impl Default for RateClocker {
    fn default() -> Self {
        Self::new()
    }
}

/// The token bucket of the client rate limiter: fills at `max(rate, 0.5)` tokens/s up to `max(rate, 1)` tokens;
/// starts empty. Source: botocore `retries/bucket.py` (TokenBucket, minimum rate 0.5).
#[derive(Clone, Copy, Debug, PartialEq)]
struct SendBucket {
    fill_rate: f64,
    capacity: f64,
    tokens: f64,
    updated: f64,
}

impl SendBucket {
    const MIN_RATE: f64 = 0.5;

    fn new() -> Self {
        SendBucket { fill_rate: 1.0, capacity: 1.0, tokens: 0.0, updated: 0.0 }
    }

    fn refill(&mut self, t: f64) {
        self.tokens = (self.tokens + (t - self.updated).max(0.0) * self.fill_rate).min(self.capacity);
        self.updated = self.updated.max(t);
    }

    fn set_rate(&mut self, rate: f64, t: f64) {
        self.refill(t);
        self.fill_rate = rate.max(Self::MIN_RATE);
        self.capacity = rate.max(1.0);
        self.tokens = self.tokens.min(self.capacity);
    }

    /// Takes a token, now or (reserving it: the balance goes negative) after the returned wait in seconds.
    fn take(&mut self, t: f64) -> f64 {
        self.refill(t);
        let wait = if self.tokens >= 1.0 { 0.0 } else { (1.0 - self.tokens) / self.fill_rate };
        self.tokens -= 1.0;
        wait
    }
}

/// AWS SDK "adaptive" retry mode: the standard retry quota ([`AwsRetryQuota`]) plus a client-side rate limiter.
/// The limiter is off until the first throttling response; from then on every attempt takes a token from a bucket
/// whose fill rate follows [`Cubic`]. On each response, with `m` the [`RateClocker`] rate: after a throttle the
/// new rate is `β·W_max` with `W_max = m` (the first time) or `min(m, current fill rate)`; after any other response
/// it is the CUBIC curve at that time; either way the bucket's rate becomes `min(new rate, 2·m)`, at least 0.5/s.
///
/// Convention: a client without a token is told to wait (`Admission::Wait`) until its token arrives and keeps its
/// place: the token is reserved at once, so waiting clients are served in order at the fill rate (the SDKs block
/// the calling thread; a later rate change does not move a reservation here). Source: botocore
/// `retries/adaptive.py` (ClientRateLimiter) and the AWS SDKs and Tools reference guide, "Retry behavior".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AwsAdaptive {
    quota: AwsRetryQuota,
    cubic: Cubic,
    clocker: RateClocker,
    bucket: SendBucket,
    enabled: bool,
}

impl AwsAdaptive {
    /// The quota's standard values (500, 5, 10) and the SDKs' CUBIC constants.
    pub fn standard() -> Self {
        AwsAdaptive {
            quota: AwsRetryQuota::standard(),
            cubic: Cubic::new(),
            clocker: RateClocker::new(),
            bucket: SendBucket::new(),
            enabled: false,
        }
    }

    /// Whether the rate limiter is on (after the first throttle).
    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The bucket's current fill rate, tokens per second.
    pub fn fill_rate(&self) -> f64 {
        self.bucket.fill_rate
    }

    /// The smoothed measured rate, responses per second.
    pub fn measured_rate(&self) -> f64 {
        self.clocker.rate()
    }

    pub fn cubic(&self) -> &Cubic {
        &self.cubic
    }

    /// The standard retry quota it spends retries from.
    #[cfg(test)]
    pub(crate) fn quota(&self) -> &AwsRetryQuota {
        &self.quota
    }
}

impl RetryLimiter for AwsAdaptive {
    fn acquire_retry(&mut self, now: SimTime, failed: Failed) -> Option<Permit> {
        self.quota.acquire_retry(now, failed)
    }

    fn release(&mut self, now: SimTime, permit: Permit) {
        self.quota.release(now, permit);
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        self.quota.record(now, outcome);
        let t = seconds(now);
        let measured = self.clocker.record(t);
        let new_rate = if outcome.throttled {
            let rate = if self.enabled { measured.min(self.bucket.fill_rate) } else { measured };
            self.enabled = true;
            self.cubic.throttle(rate, t)
        } else {
            self.cubic.success(t)
        };
        self.bucket.set_rate(new_rate.min(2.0 * measured), t);
    }

    fn admit(&mut self, now: SimTime, _: f64) -> Admission {
        if !self.enabled {
            return Admission::Send;
        }
        let wait = self.bucket.take(seconds(now));
        if wait > 0.0 { Admission::Wait(SimDuration::from_nanos_f64((wait * 1e9).ceil())) } else { Admission::Send }
    }
}

/// `limiter = "aws-adaptive"`.
pub struct AwsAdaptiveMode;

impl ShippedLimiter for AwsAdaptiveMode {
    type State = AwsAdaptive;
    const NAME: &'static str = "aws-adaptive";
    const ABOUT: &'static str = "AWS SDK adaptive mode: the standard retry quota plus a CUBIC client-side rate limiter that slows on \
                                 throttling";
    const SOURCE: &'static str = "AWS SDKs and Tools reference guide, \"Retry behavior\" (adaptive mode); botocore retries/adaptive.py";

    fn build(_: &Point) -> Result<AwsAdaptive, ParamError> {
        Ok(AwsAdaptive::standard())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: f64) -> SimTime {
        SimTime::ZERO + SimDuration::from_nanos_f64(seconds * 1e9)
    }

    #[test]
    fn cubic_drops_to_beta_then_regains_w_max_at_k_and_grows_beyond() {
        let mut cubic = Cubic::new();
        assert_eq!(cubic.throttle(10.0, 100.0), 7.0);
        let k = (10.0_f64 * 0.3 / 0.4).cbrt();
        assert!((cubic.k() - k).abs() < 1e-12 && (k - 1.957_433_7).abs() < 1e-6);
        assert!((cubic.success(100.0) - 7.0).abs() < 1e-9, "the curve starts at β·W_max");
        assert!((cubic.success(100.0 + k) - 10.0).abs() < 1e-12);
        assert!(cubic.success(100.0 + k / 2.0) < 10.0);
        let beyond = cubic.success(100.0 + 2.0 * k);
        assert!((beyond - (10.0 + 0.4 * k.powi(3))).abs() < 1e-9 && beyond > 10.0);
    }

    #[test]
    fn the_clocker_smooths_half_second_buckets() {
        let mut clocker = RateClocker::new();
        // Ten responses in the first half second: no later bucket yet.
        for i in 0..10 {
            assert_eq!(clocker.record(0.04 * f64::from(i)), 0.0);
        }
        // The eleventh falls in bucket 0.5: 11 responses over 0.5 s = 22/s, weighted 0.8.
        assert!((clocker.record(0.5) - 17.6).abs() < 1e-9);
        // One more in bucket 1.5: 1 response over 1 s, 0.8·1 + 0.2·17.6.
        assert!((clocker.record(1.6) - 4.32).abs() < 1e-9);
    }

    #[test]
    fn after_the_first_throttle_the_rate_is_beta_times_the_measured_rate_and_admission_paces_sends() {
        let mut limiter = AwsAdaptive::standard();
        // 20 responses a second for 5 s, all fine: the limiter stays off and admits everything.
        let mut t = 0.0;
        while t < 5.0 {
            assert_eq!(limiter.admit(at(t), 0.5), Admission::Send);
            limiter.record(at(t), Outcome::success(None));
            t += 0.05;
        }
        assert!(!limiter.enabled());
        let measured_before = limiter.measured_rate();
        assert!((measured_before - 20.0).abs() < 1.0, "{measured_before}");
        limiter.record(at(5.0), Outcome::throttled(None));
        assert!(limiter.enabled());
        let measured = limiter.measured_rate();
        assert!((limiter.fill_rate() - 0.7 * measured).abs() < 1e-9, "{} vs {measured}", limiter.fill_rate());
        // The bucket holds at most max(rate, 1) tokens: drain it, then each further attempt waits 1/rate more.
        let rate = limiter.fill_rate();
        let mut sent_now = 0;
        let first = loop {
            match limiter.admit(at(5.0), 0.5) {
                Admission::Send => sent_now += 1,
                Admission::Wait(wait) => break wait,
                Admission::Reject => panic!("adaptive mode never rejects"),
            }
        };
        assert!(f64::from(sent_now) <= rate.ceil(), "{sent_now} tokens at rate {rate}");
        let Admission::Wait(second) = limiter.admit(at(5.0), 0.5) else { panic!("expected a wait") };
        assert!(first.as_secs_f64() <= 1.0 / rate + 1e-9);
        assert!((second.as_secs_f64() - first.as_secs_f64() - 1.0 / rate).abs() < 1e-6, "one token apart");
    }

    #[test]
    fn the_fill_rate_never_drops_below_half_a_token_per_second() {
        let mut limiter = AwsAdaptive::standard();
        limiter.record(at(10.0), Outcome::throttled(None));
        assert!(limiter.enabled());
        assert_eq!(limiter.fill_rate(), 0.5, "measured rate ≈ 0 after a single response");
        // The bucket filled to its capacity of one token while the limiter was off; the next token takes 2 s.
        assert_eq!(limiter.admit(at(10.0), 0.5), Admission::Send);
        assert_eq!(limiter.admit(at(10.0), 0.5), Admission::Wait(SimDuration::from_secs(2)));
    }

    #[test]
    fn retries_still_spend_the_standard_quota() {
        let mut limiter = AwsAdaptive::standard();
        let mut retries = 0;
        while let Some(permit) = limiter.acquire_retry(SimTime::ZERO, Failed::Error) {
            limiter.record(SimTime::ZERO, Outcome::failure(Some(permit)));
            retries += 1;
        }
        assert_eq!(retries, 100);
    }
}
