//! Named presets: complete client policies as real libraries ship them, each named after its library and version.
//! A preset gives the backoff strategy with its parameters, the attempts allowed, the retry limiter it ships with
//! (a [`LimiterKind`], if any), its Retry-After handling, its own deadline and the outcomes it retries, and says
//! where the values come from.
//!
//! Models accept a preset name wherever they accept a strategy name (`strategy = "grpc"`): the preset fills the
//! backoff keys the scenario leaves unwritten (a written key wins, as a configuration overrides a library's
//! defaults), and its limiter applies when the model's own `limiter` is `"none"` (an explicit limiter wins; the
//! limiter's knobs tune it either way); a model that cannot run the limiter refuses the preset. Attempt numbering is the crate's: `n` = attempts failed so far, the first
//! retry has `n = 1`.
//!
//! A preset is one file holding a `pub(super) const PRESET: Preset`, plus its `mod` line and its entry in [`ALL`]
//! below; a test fails if a file in this folder is not registered.

mod aws_sdk_adaptive;
mod aws_sdk_js_v3;
mod aws_sdk_standard;
mod botocore_adaptive;
mod botocore_legacy;
mod botocore_standard;
mod client_go_backoff;
mod client_go_retry;
mod client_go_workqueue;
mod envoy;
mod finagle;
mod google_api_core;
mod grpc;
mod grpc_full_jitter;
mod k8s_crashloop;
mod k8s_crashloop_reduced;
mod systemd;
mod tcp_rfc6298;
mod urllib3;

use super::limiters::{Limiter, LimiterKind};
use super::{BackoffParams, PushbackPolicy, RetryAfterPolicy, RetryPolicy, Strategy};
use crate::time::SimDuration;

/// One named client policy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    /// The kebab-case name used in scenario files (never a strategy's name).
    pub name: &'static str,
    pub strategy: Strategy,
    pub backoff: BackoffParams,
    /// Total attempts, the first try included (`None`: unlimited).
    pub max_attempts: Option<u32>,
    /// The retry limiter it ships with, if any.
    pub limiter: Option<LimiterKind>,
    /// The base after a throttling answer, where the library backs off longer when throttled.
    pub throttling_base: Option<SimDuration>,
    /// What the library does with a Retry-After hint.
    pub retry_after: RetryAfterPolicy,
    /// What the library does with a gRPC pushback (only gRPC's own retries read it).
    pub pushback: PushbackPolicy,
    /// The library's own time limit for a whole call, if it has one (the client's `deadline`, when written, wins).
    pub deadline: Option<SimDuration>,
    /// The outcomes the library retries by default, in `retry_on` syntax; `None` where the library has no list of
    /// its own (the model's `classifier` decides).
    pub retry_on: Option<&'static str>,
    /// One line: where the values come from.
    pub source: &'static str,
}

/// Every preset, in the order `retrylab strategies` lists them.
pub const ALL: &[Preset] = &[
    aws_sdk_standard::PRESET,
    aws_sdk_adaptive::PRESET,
    botocore_standard::PRESET,
    botocore_legacy::PRESET,
    botocore_adaptive::PRESET,
    aws_sdk_js_v3::PRESET,
    urllib3::PRESET,
    google_api_core::PRESET,
    grpc::PRESET,
    grpc_full_jitter::PRESET,
    envoy::PRESET,
    finagle::PRESET,
    k8s_crashloop::PRESET,
    k8s_crashloop_reduced::PRESET,
    client_go_retry::PRESET,
    client_go_backoff::PRESET,
    client_go_workqueue::PRESET,
    systemd::PRESET,
    tcp_rfc6298::PRESET,
];

const fn preset_names<const N: usize>(presets: &[Preset]) -> [&'static str; N] {
    assert!(presets.len() == N);
    let mut names = [""; N];
    let mut i = 0;
    while i < N {
        names[i] = presets[i].name;
        i += 1;
    }
    names
}

/// The presets' names, in the order of [`ALL`].
pub const NAMES: &[&str] = &preset_names::<{ ALL.len() }>(ALL);

impl Preset {
    /// The preset called `name`, if there is one.
    pub fn lookup(name: &str) -> Option<&'static Preset> {
        ALL.iter().find(|preset| preset.name == name)
    }

    /// The retry policy this preset ships: its strategy, backoff parameters, attempts and Retry-After handling,
    /// with the client's `deadline`.
    pub fn policy(&self, deadline: Option<SimDuration>) -> RetryPolicy {
        RetryPolicy {
            strategy: self.strategy,
            backoff: self.backoff,
            max_attempts: self.max_attempts,
            deadline: deadline.or(self.deadline),
            retry_after: self.retry_after,
            pushback: self.pushback,
            throttling_base: self.throttling_base,
        }
    }

    /// A fresh instance of this preset's limiter as it ships, if it has one.
    pub fn shipped_limiter(&self) -> Option<Limiter> {
        self.limiter.map(LimiterKind::shipped)
    }
}

#[cfg(test)]
mod tests;
