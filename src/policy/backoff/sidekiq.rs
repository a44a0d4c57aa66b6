use super::{BackoffFormula, BackoffMemory, BackoffParams};
use crate::time::SimDuration;
use rand::{Rng, RngExt};

/// Sidekiq's retry schedule (sidekiq/sidekiq `lib/sidekiq/job_retry.rb`, `delay_for`): before retry n the job
/// waits count⁴ + 15 + r·(count + 1) seconds, count = n − 1 its retry count so far and r uniform in
/// {0, …, 9}; `b` is the unit (1 s for Sidekiq's own) and `c` caps it. Sidekiq retries 25 times, about three
/// weeks in all, then moves the job to the dead set.
pub struct Sidekiq;

impl BackoffFormula for Sidekiq {
    const NAME: &'static str = "sidekiq";
    const FORMULA: &'static str = "min(c, b·((n−1)⁴ + 15 + r·n)), r uniform in {0, …, 9}";
    const ABOUT: &'static str = "Sidekiq's job retry schedule: quartic growth plus a jitter that grows with n";

    fn delay<R: Rng + ?Sized>(
        params: &BackoffParams,
        n: u32,
        _: &mut BackoffMemory,
        rng: &mut R,
    ) -> SimDuration {
        let count = u64::from(n.max(1) - 1);
        let jitter = rng.random_range(0..10_u64) * (count + 1);
        let units = count.saturating_pow(4).saturating_add(15).saturating_add(jitter);
        SimDuration::from_nanos(params.base.as_nanos().saturating_mul(units)).min(params.cap)
    }
}

/// Sidekiq's own delay before retry `n`: the formula in seconds, uncapped.
pub fn sidekiq_delay<R: Rng + ?Sized>(n: u32, rng: &mut R) -> SimDuration {
    let params = BackoffParams::new(SimDuration::from_secs(1), SimDuration::MAX, 1.0);
    Sidekiq::delay(&params, n, &mut BackoffMemory::default(), rng)
}

/// The delay before retry `n` of a job whose `sidekiq_retry_in` asks for `custom`: custom + r·n seconds, r uniform
/// in {0, …, 9} (Sidekiq adds its jitter to a custom delay too); Sidekiq's own delay when `custom` is 0.
pub fn sidekiq_custom_delay<R: Rng + ?Sized>(n: u32, custom: SimDuration, rng: &mut R) -> SimDuration {
    if custom.is_zero() {
        return sidekiq_delay(n, rng);
    }
    let jitter = rng.random_range(0..10_u64) * u64::from(n.max(1));
    custom + SimDuration::from_secs(jitter)
}
