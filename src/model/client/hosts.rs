//! What a model accepts depends on what its clients can host: the lists of strategies, presets and limiters
//! each kind of host runs, filtered at compile time from the registries, and why a model refuses the others.

use super::StrategyChoice;
use crate::policy::Strategy;
use crate::policy::limiters::LimiterKind;
use crate::policy::presets;

/// Which presets a model's clients can run.
#[derive(Clone, Copy)]
enum Hosts {
    /// Every preset: the model simulates every limiter.
    AnyLimiter,
    /// Presets whose limiter, if any, works for callers that handle many calls at once.
    SharedCallers,
    /// Only presets without a limiter: the model simulates none.
    NoLimiter,
}

impl Hosts {
    const fn runs(self, limiter: Option<LimiterKind>) -> bool {
        match (self, limiter) {
            (_, None) | (Hosts::AnyLimiter, Some(_)) => true,
            (Hosts::SharedCallers, Some(kind)) => !kind.one_process(),
            (Hosts::NoLimiter, Some(_)) => false,
        }
    }

    const fn preset_count(self) -> usize {
        let mut count = 0;
        let mut i = 0;
        while i < presets::ALL.len() {
            count += self.runs(presets::ALL[i].limiter) as usize;
            i += 1;
        }
        count
    }

    const fn limiter_count(self) -> usize {
        let mut count = 0;
        let mut i = 0;
        while i < LimiterKind::ALL.len() {
            count += self.runs(Some(LimiterKind::ALL[i])) as usize;
            i += 1;
        }
        count
    }

    /// Every strategy, then the presets this host runs.
    const fn strategy_names<const N: usize>(self) -> [&'static str; N] {
        let mut names = [""; N];
        let mut n = 0;
        while n < Strategy::NAMES.len() {
            names[n] = Strategy::NAMES[n];
            n += 1;
        }
        let mut i = 0;
        while i < presets::ALL.len() {
            if self.runs(presets::ALL[i].limiter) {
                names[n] = presets::ALL[i].name;
                n += 1;
            }
            i += 1;
        }
        assert!(n == N);
        names
    }

    /// `none`, `off`, `preset`, `budget`, then the shipped limiters this host runs.
    const fn limiter_names<const N: usize>(self) -> [&'static str; N] {
        let mut names = [""; N];
        names[0] = "none";
        names[1] = "off";
        names[2] = "preset";
        names[3] = "budget";
        let mut n = 4;
        let mut i = 0;
        while i < LimiterKind::ALL.len() {
            if self.runs(Some(LimiterKind::ALL[i])) {
                names[n] = LimiterKind::NAMES[i];
                n += 1;
            }
            i += 1;
        }
        assert!(n == N);
        names
    }
}

/// `strategy` in a model that simulates every limiter: every strategy and every preset.
pub(crate) const ANY_POLICY: &[&str] =
    &Hosts::AnyLimiter.strategy_names::<{ Strategy::NAMES.len() + Hosts::AnyLimiter.preset_count() }>();
/// `strategy` where callers handle many calls at once: every preset but those whose limiter counts one process.
pub(crate) const POLICIES_FOR_SHARED_CALLERS: &[&str] =
    &Hosts::SharedCallers.strategy_names::<{ Strategy::NAMES.len() + Hosts::SharedCallers.preset_count() }>();
/// `strategy` in a model without retry limiters: the strategies and the presets that ship no limiter.
pub(crate) const POLICIES_WITHOUT_LIMITER: &[&str] =
    &Hosts::NoLimiter.strategy_names::<{ Strategy::NAMES.len() + Hosts::NoLimiter.preset_count() }>();
/// `limiter` in a model that simulates every limiter.
pub(crate) const ANY_LIMITER: &[&str] = &Hosts::AnyLimiter.limiter_names::<{ 4 + Hosts::AnyLimiter.limiter_count() }>();
/// `limiter` where callers handle many calls at once.
pub(crate) const LIMITERS_FOR_SHARED_CALLERS: &[&str] =
    &Hosts::SharedCallers.limiter_names::<{ 4 + Hosts::SharedCallers.limiter_count() }>();

/// Why a model refuses a preset or limiter that exists (for the message that lists what it accepts).
pub(crate) fn refusal_hint(key: &str, name: &str) -> Option<String> {
    let one_process = "counts the starts of one process, and this model's callers handle many calls at once";
    match key {
        "strategy" => {
            let Some(StrategyChoice::Preset(preset)) = StrategyChoice::from_name(name) else { return None };
            let Some(limiter) = preset.limiter else {
                return Some(format!(
                    "the {name} preset is a whole client policy, and this model takes backoff strategies only"
                ));
            };
            Some(if limiter.one_process() {
                format!("the {name} preset brings the {limiter} limiter, which {one_process}")
            } else {
                format!("the {name} preset brings the {limiter} retry limiter, which this model does not simulate")
            })
        }
        "limiter" => LimiterKind::from_name(name)
            .filter(|kind| kind.one_process())
            .map(|_| format!("the {name} limiter {one_process}")),
        _ => None,
    }
}
