//! Hedged requests (Dean & Barroso, "The Tail at Scale", 2013): a caller sends a second copy of an attempt that
//! is still unanswered after a while, takes whichever answer comes first and cancels the other copy.

use crate::params::choices;
use crate::time::SimDuration;

choices! {
    /// The `hedge` setting: whether a caller hedges, and what decides when.
    pub enum HedgeMode {
        Off = "off",
        /// After `hedge_delay`.
        Fixed = "fixed",
        /// After the running `hedge_percentile` of the caller's latencies.
        Percentile = "percentile",
    }
}

/// When a caller sends the second copy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hedge {
    Off,
    /// After this long without an answer.
    Fixed(SimDuration),
    /// After this quantile (0.95: the p95) of the latencies the caller has seen so far.
    Percentile(f64),
}

impl Hedge {
    /// The hedge `mode` describes, with its delay or quantile.
    pub fn new(mode: HedgeMode, delay: SimDuration, quantile: f64) -> Hedge {
        match mode {
            HedgeMode::Off => Hedge::Off,
            HedgeMode::Fixed => Hedge::Fixed(delay),
            HedgeMode::Percentile => Hedge::Percentile(quantile),
        }
    }

    /// A fixed hedge with no delay: it doubles every call, so models refuse it unless the extra load is capped.
    pub fn doubles_every_call(self) -> bool {
        self == Hedge::Fixed(SimDuration::ZERO)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_pick_the_kind_and_only_a_zero_fixed_delay_doubles_every_call() {
        use crate::params::Choice;
        let ms = SimDuration::from_millis;
        let hedge = |name: &str, delay: SimDuration| Hedge::new(HedgeMode::from_name(name).unwrap(), delay, 0.95);
        assert_eq!(hedge("fixed", ms(20)), Hedge::Fixed(ms(20)));
        assert_eq!(hedge("percentile", ms(20)), Hedge::Percentile(0.95));
        assert_eq!(hedge("off", ms(20)), Hedge::Off);
        assert!(hedge("fixed", SimDuration::ZERO).doubles_every_call());
        assert!(!hedge("percentile", SimDuration::ZERO).doubles_every_call());
        assert!(!hedge("fixed", ms(1)).doubles_every_call());
    }
}
