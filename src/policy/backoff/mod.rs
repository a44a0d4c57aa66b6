//! Backoff strategies: how long a client sleeps before retry number `n`.
//!
//! **Attempt numbering, used by every formula here:** `n` is the number of attempts that have failed so far, so
//! the first retry has `n = 1`, the second `n = 2`, and so on. This is the convention of the AWS 2015 study's
//! simulator (its `attempt` counter is incremented before the first sleep), so `exponential` sleeps `base·m`
//! before the first retry. Strategies that follow another numbering (Polly's retry index `i = n − 1`) say so.
//!
//! Each strategy is one file holding a unit struct that implements [`BackoffFormula`], plus one line in the
//! `register_strategies!` list below; the [`Strategy`] enum it generates dispatches with a `match`, not a
//! virtual call.

use rand::Rng;

use crate::time::SimDuration;

/// Parameters of the formulas: `b` (base), `c` (cap), `m` (multiplier), and those only some formulas read
/// (each formula's text names the letters it uses): `f` (floor), `j` (additive jitter), `q` (proportional jitter),
/// `k` (steps).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BackoffParams {
    pub base: SimDuration,
    pub cap: SimDuration,
    pub multiplier: f64,
    /// f: no sleep shorter than this (tenacity's `min`).
    pub floor: SimDuration,
    /// j: the width of an additive jitter U(0, j) (urllib3's `backoff_jitter`, tenacity's `jitter`, systemd's
    /// `RestartRandomizedDelaySec`).
    pub jitter: SimDuration,
    /// q: a proportional jitter, the sleep times 1 + U(0, q) (client-go's `Backoff.Jitter`).
    pub jitter_fraction: f64,
    /// k: the number of steps from base to cap (systemd's `RestartSteps`).
    pub steps: u32,
}

impl BackoffParams {
    /// The AWS 2015 study's values: base 5 ms, cap 2 s, multiplier 2.
    pub const AWS_2015: BackoffParams = BackoffParams::new(SimDuration::from_millis(5), SimDuration::from_secs(2), 2.0);

    /// Base, cap and multiplier, with no floor, no jitter and no steps.
    pub const fn new(base: SimDuration, cap: SimDuration, multiplier: f64) -> BackoffParams {
        BackoffParams {
            base,
            cap,
            multiplier,
            floor: SimDuration::ZERO,
            jitter: SimDuration::ZERO,
            jitter_fraction: 0.0,
            steps: 0,
        }
    }

    pub(crate) fn base_nanos(&self) -> f64 {
        self.base.as_nanos_f64()
    }

    pub(crate) fn cap_nanos(&self) -> f64 {
        self.cap.as_nanos_f64()
    }

    /// `b·m^k`, uncapped (0 when b is 0, however large `m^k` grows).
    pub(crate) fn exponential_nanos(&self, k: u32) -> f64 {
        if self.base.is_zero() {
            return 0.0;
        }
        self.base_nanos() * self.multiplier.powi(k.min(i32::MAX as u32) as i32)
    }

    /// `min(c, b·m^n)`, the capped exponential that several jittered formulas start from.
    pub(crate) fn capped_exponential_nanos(&self, n: u32) -> f64 {
        self.exponential_nanos(n).min(self.cap_nanos())
    }
}

/// What one operation's client carries from one retry to the next, for formulas that depend on their previous
/// draw (decorrelated jitter keeps its previous sleep, Polly V2 its previous `f(t)`). Formulas reset it
/// themselves when `n = 1`, so one value can serve many operations in a row.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BackoffMemory(pub f64);

/// One backoff formula. Implementors are unit structs; all state lives in [`BackoffMemory`].
pub trait BackoffFormula {
    /// The kebab-case name used in scenario files and on the command line.
    const NAME: &'static str;
    /// The formula in terms of `n`, `b`, `c`, `m` (and `f`, `j`, `q`, `k` for the formulas that read them) and
    /// `U(x, y)` (uniform draw), for `retrylab strategies`.
    const FORMULA: &'static str;
    /// One sentence: what it is for, and where it comes from.
    const ABOUT: &'static str;

    /// The sleep before retry `n` (`n ≥ 1`, see the module docs).
    fn delay<R: Rng + ?Sized>(params: &BackoffParams, n: u32, memory: &mut BackoffMemory, rng: &mut R) -> SimDuration;
}

/// A uniform draw from `[low, high)` (or exactly `low` when `high ≤ low`).
#[inline]
pub(crate) fn uniform<R: Rng + ?Sized>(rng: &mut R, low: f64, high: f64) -> f64 {
    use rand::RngExt;
    low + (high - low).max(0.0) * rng.random::<f64>()
}

/// The wait of a station that sends in each slot with probability `p` (Håstad, Leighton & Rogoff's per-slot
/// coin): W silent slots, W ~ Geometric(p) on {0, 1, …} (P(W = k) = (1 − p)^k·p, mean (1 − p)/p), drawn at once
/// by inversion, W = ⌊ln(1 − U) / ln(1 − p)⌋, then `b·W` capped at `c`. A `p` of 0 (or one so small that W
/// overflows) waits `c`; a `p` of 1 or more waits 0.
pub(crate) fn per_slot_wait<R: Rng + ?Sized>(params: &BackoffParams, p: f64, rng: &mut R) -> SimDuration {
    use rand::RngExt;
    let u: f64 = rng.random();
    if p >= 1.0 || params.base.is_zero() {
        return SimDuration::ZERO;
    }
    // ln_1p keeps ln(1 − p) exact for tiny p (2^−40), where 1 − p would round to 1.
    let slots = ((1.0 - u).ln() / (-p).ln_1p()).floor();
    if !(slots.is_finite() && slots * params.base_nanos() < params.cap_nanos()) {
        return params.cap;
    }
    SimDuration::from_nanos(params.base.as_nanos() * slots as u64)
}

macro_rules! register_strategies {
    ($($module:ident :: $formula:ident => $variant:ident),+ $(,)?) => {
        $(mod $module; pub use $module::$formula;)+
        pub use sidekiq::{sidekiq_custom_delay, sidekiq_delay};

        /// Every registered backoff strategy, named as in scenario files.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Strategy { $($variant),+ }

        impl Strategy {
            /// All strategies, in the order `retrylab strategies` lists them.
            pub const ALL: &'static [Strategy] = &[$(Strategy::$variant),+];

            /// Their scenario-file names, in the same order.
            pub const NAMES: &'static [&'static str] = &[$(<$formula as BackoffFormula>::NAME),+];

            pub fn name(self) -> &'static str {
                match self { $(Strategy::$variant => <$formula as BackoffFormula>::NAME),+ }
            }

            pub fn formula(self) -> &'static str {
                match self { $(Strategy::$variant => <$formula as BackoffFormula>::FORMULA),+ }
            }

            pub fn about(self) -> &'static str {
                match self { $(Strategy::$variant => <$formula as BackoffFormula>::ABOUT),+ }
            }

            /// The sleep before retry `n` (`n ≥ 1`: the first retry is `n = 1`).
            #[inline]
            pub fn delay<R: Rng + ?Sized>(
                self,
                params: &BackoffParams,
                n: u32,
                memory: &mut BackoffMemory,
                rng: &mut R,
            ) -> SimDuration {
                match self { $(Strategy::$variant => <$formula as BackoffFormula>::delay(params, n, memory, rng)),+ }
            }
        }
    };
}

register_strategies! {
    none::NoBackoff => None,
    constant::Constant => Constant,
    linear::Linear => Linear,
    exponential::Exponential => Exponential,
    full_jitter::FullJitter => FullJitter,
    equal_jitter::EqualJitter => EqualJitter,
    decorrelated_jitter::DecorrelatedJitter => DecorrelatedJitter,
    decorrelated_range_clamp::DecorrelatedRangeClamp => DecorrelatedRangeClamp,
    polly_v2::PollyV2 => PollyV2,
    ethernet_beb::EthernetBeb => EthernetBeb,
    quadratic::Quadratic => Quadratic,
    exponential_from_base::ExponentialFromBase => ExponentialFromBase,
    full_jitter_from_base::FullJitterFromBase => FullJitterFromBase,
    grpc_jitter::GrpcJitter => GrpcJitter,
    envoy_jitter::EnvoyJitter => EnvoyJitter,
    clamped_exponential::ClampedExponential => ClampedExponential,
    floored_full_jitter::FlooredFullJitter => FlooredFullJitter,
    exponential_plus_jitter::ExponentialPlusJitter => ExponentialPlusJitter,
    zero_then_exponential::ZeroThenExponential => ZeroThenExponential,
    full_jitter_whole_ms::FullJitterWholeMs => FullJitterWholeMs,
    geometric_steps::GeometricSteps => GeometricSteps,
    proportional_jitter::ProportionalJitter => ProportionalJitter,
    proportional_jitter_capped::ProportionalJitterCapped => ProportionalJitterCapped,
    immediate_then_exponential::ImmediateThenExponential => ImmediateThenExponential,
    sidekiq::Sidekiq => Sidekiq,
    hlr_exponential::HlrExponential => HlrExponential,
    hlr_polynomial::HlrPolynomial => HlrPolynomial,
}

impl Strategy {
    /// Looks a strategy up by its scenario-file name.
    pub fn from_name(name: &str) -> Option<Strategy> {
        Strategy::ALL.iter().copied().find(|strategy| strategy.name() == name)
    }

    /// The valid names, comma-separated, for error messages.
    pub fn valid_names() -> String {
        Strategy::ALL.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")
    }
}

impl crate::params::Choice for Strategy {
    const NAMES: &'static [&'static str] = Strategy::NAMES;
    const ALL: &'static [Strategy] = Strategy::ALL;

    fn name(self) -> &'static str {
        Strategy::name(self)
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests;
