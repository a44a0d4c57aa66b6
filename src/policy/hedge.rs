//! Hedged requests (Dean & Barroso, "The Tail at Scale", 2013): a caller sends a second copy of an attempt that
//! is still unanswered after a while, takes whichever answer comes first and cancels the other copy.

use crate::time::SimDuration;

/// The names a scenario uses for `hedge`.
pub const HEDGE_NAMES: &[&str] = &["off", "fixed", "percentile"];

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
    /// The hedge named `name` (one of [`HEDGE_NAMES`]; anything else is `Off`) with its delay or quantile.
    pub fn from_choice(name: &str, delay: SimDuration, quantile: f64) -> Hedge {
        match name {
            "fixed" => Hedge::Fixed(delay),
            "percentile" => Hedge::Percentile(quantile),
            _ => Hedge::Off,
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
        let ms = SimDuration::from_millis;
        assert_eq!(Hedge::from_choice("fixed", ms(20), 0.95), Hedge::Fixed(ms(20)));
        assert_eq!(Hedge::from_choice("percentile", ms(20), 0.95), Hedge::Percentile(0.95));
        assert_eq!(Hedge::from_choice("off", ms(20), 0.95), Hedge::Off);
        assert!(Hedge::from_choice("fixed", SimDuration::ZERO, 0.95).doubles_every_call());
        assert!(!Hedge::from_choice("percentile", SimDuration::ZERO, 0.95).doubles_every_call());
        assert!(!Hedge::from_choice("fixed", ms(1), 0.95).doubles_every_call());
    }
}
