//! Client-side policies: backoff strategies and retry limits. Pure values and functions, unit-testable without
//! the engine: they take the failure count, the elapsed time and a random source, and return a decision.

pub mod backoff;
mod classify;
mod clock;
mod hedge;
pub mod limiters;
pub mod presets;
mod retry;
mod token_bucket;

pub use backoff::{BackoffFormula, BackoffMemory, BackoffParams, Strategy, sidekiq_custom_delay, sidekiq_delay};
pub use classify::{
    Classifier, PushbackPolicy, RETRY_ON_SYNTAX, RETRYABLE_STATUSES, Response, RetryAfterPolicy, RetryOn,
};
pub use clock::{AlignOffset, Alignment, ClientClock, ClockPolicy, ClockSkew, next_aligned, uniform_below};
pub use hedge::{Hedge, HedgeMode};
pub use presets::Preset;
pub use retry::{FailureKind, GiveUpReason, Pushback, RetryDecision, RetryPolicy};
pub use token_bucket::TokenBucket;

/// A seeded generator for the policy tests: the same Xoshiro256++ stream the simulations use, built here so that
/// policy does not import the engine even in its tests.
#[cfg(test)]
pub(crate) fn test_rng(seed: u64) -> rand_xoshiro::Xoshiro256PlusPlus {
    rand::SeedableRng::seed_from_u64(seed)
}
