//! Clock-aligned waits: a client that waits *by the clock* ("retry at the next full 10 s") after, or instead of,
//! "so long since my failure". Pure values over time, like the backoff formulas.
//!
//! Every client reads a clock that is off from true time by its skew s, drawn once per client from a
//! [`ClockSkew`]: local = true + s. A wait aligned to the period P with offset o may end no earlier than `earliest`
//! (the failure plus the backoff) and ends at the first local instant L > earliest + s with L ≡ o (mod P) (strictly
//! after: a client that fails on the boundary waits for the next one, as ⌊t/P⌋·P + P does); in true time, with the
//! remainder taken in [0, P),
//!
//! > wake = earliest + P − ((earliest + s − o) mod P).
//!
//! The offset o is 0 (`none`: the top of the period), a value drawn once per client from U[0, P) (`per-client`,
//! like the stable per-host position systemd gives timers inside AccuracySec), or a fresh U[0, P) draw at every
//! wait (`per-attempt`). With a fresh draw the wait after `earliest` is uniform over (0, P] whatever the clock
//! reads, so the clock stops mattering: the aligned wait becomes a relative one with uniform jitter over one period.

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Normal};

use super::retry::{GiveUpReason, RetryDecision};
use crate::params::choices;
use crate::time::{SimDuration, SimTime, parse_duration};

choices! {
    /// Where in the period a client aims (`align_offset`).
    pub enum AlignOffset {
        /// The top of the period, on the client's clock.
        None = "none",
        /// A stable offset in [0, P), drawn once per client.
        PerClient = "per-client",
        /// A fresh offset in [0, P) at every wait.
        PerAttempt = "per-attempt",
    }
}

/// How far clients' clocks are off from true time (`clock_skew`), drawn once per client; positive: ahead.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClockSkew {
    /// Every clock is right.
    Zero,
    /// Every clock is off by the same amount (ns; negative: behind).
    Constant(i64),
    /// Normal with mean 0 and this standard deviation (ns).
    Normal(f64),
    /// Uniform in ±this (ns).
    Uniform(f64),
}

impl ClockSkew {
    /// The syntax, for error messages and `retrylab strategies`.
    pub const SYNTAX: &'static str = "\"0s\" (none), \"constant 2s\" (or \"constant -2s\": every clock that far ahead or behind), \"normal 200ms\" \
         (mean 0, that standard deviation) or \"uniform 1s\" (anywhere within ±1 s)";

    /// Parses [`ClockSkew::SYNTAX`]; the error says what is wrong and what would be valid.
    pub fn parse(text: &str) -> Result<ClockSkew, String> {
        let text = text.trim();
        let (shape, amount) = match text.split_once(char::is_whitespace) {
            Some((shape, amount)) => (shape, amount.trim()),
            None => ("constant", text),
        };
        let (negative, magnitude) = match amount.strip_prefix('-') {
            Some(rest) if shape == "constant" => (true, rest),
            _ => (false, amount),
        };
        let nanos =
            parse_duration(magnitude).map_err(|why| format!("{why}; a clock skew is {}", Self::SYNTAX))?.as_nanos();
        let nanos_i64 = i64::try_from(nanos).map_err(|_| format!("\"{amount}\" is too large for a clock skew"))?;
        Ok(match shape {
            "constant" | "normal" | "uniform" if nanos == 0 => ClockSkew::Zero,
            "constant" => ClockSkew::Constant(if negative { -nanos_i64 } else { nanos_i64 }),
            "normal" => ClockSkew::Normal(nanos as f64),
            "uniform" => ClockSkew::Uniform(nanos as f64),
            other => return Err(format!("unknown shape \"{other}\"; a clock skew is {}", Self::SYNTAX)),
        })
    }

    /// Its size: |constant|, the standard deviation, or the half-width.
    pub fn scale(self) -> SimDuration {
        SimDuration::from_nanos(match self {
            ClockSkew::Zero => 0,
            ClockSkew::Constant(nanos) => nanos.unsigned_abs(),
            ClockSkew::Normal(sd) => sd as u64,
            ClockSkew::Uniform(half) => half as u64,
        })
    }

    /// One clock's skew in ns (no draw for `Zero` and `Constant`).
    pub fn draw<R: Rng + ?Sized>(self, rng: &mut R) -> i64 {
        match self {
            ClockSkew::Zero => 0,
            ClockSkew::Constant(nanos) => nanos,
            ClockSkew::Normal(sd) => Normal::new(0.0, sd).map_or(0.0, |normal| normal.sample(rng)).round() as i64,
            ClockSkew::Uniform(half) => ((rng.random::<f64>() * 2.0 - 1.0) * half).round() as i64,
        }
    }
}

impl std::fmt::Display for ClockSkew {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let scale = self.scale();
        match self {
            ClockSkew::Zero => f.write_str("0s"),
            ClockSkew::Constant(nanos) if *nanos < 0 => write!(f, "constant -{scale}"),
            ClockSkew::Constant(_) => write!(f, "constant {scale}"),
            ClockSkew::Normal(_) => write!(f, "normal {scale}"),
            ClockSkew::Uniform(_) => write!(f, "uniform {scale}"),
        }
    }
}

/// One client's clock: how far it is off, and its stable offset within the alignment period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientClock {
    /// local = true + skew.
    pub skew_nanos: i64,
    /// o for `align_offset = "per-client"` (else 0).
    pub offset: SimDuration,
}

/// Waits that end on the client's clock at k·P + o.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Alignment {
    /// P (> 0).
    pub period: SimDuration,
    pub offset: AlignOffset,
}

/// A client fleet's clocks and, if they wait by the clock, how.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClockPolicy {
    pub align: Option<Alignment>,
    pub skew: ClockSkew,
}

impl ClockPolicy {
    /// One client's clock: its skew drawn from `skews` (the world's) and, for per-client offsets, its offset from
    /// `offsets` (the policy's).
    pub fn client_clock<R: Rng + ?Sized>(&self, skews: &mut R, offsets: &mut R) -> ClientClock {
        let skew_nanos = self.skew.draw(skews);
        let offset = match self.align {
            Some(Alignment { period, offset: AlignOffset::PerClient }) => uniform_below(period, offsets),
            _ => SimDuration::ZERO,
        };
        ClientClock { skew_nanos, offset }
    }

    /// When a wait that may end no earlier than `earliest` ends, on a client with `clock` (see the module doc);
    /// `earliest` itself without alignment.
    pub fn wake<R: Rng + ?Sized>(&self, earliest: SimTime, clock: &ClientClock, rng: &mut R) -> SimTime {
        let Some(align) = self.align else { return earliest };
        let offset = match align.offset {
            AlignOffset::None => SimDuration::ZERO,
            AlignOffset::PerClient => clock.offset,
            AlignOffset::PerAttempt => uniform_below(align.period, rng),
        };
        earliest + next_aligned(earliest, clock.skew_nanos, align.period, offset)
    }

    /// A retry `decision` made at `now`, `elapsed` into the call, with its sleep stretched to the clock; a
    /// stretched sleep that would pass `deadline` gives up instead, as a sleep past it does.
    pub fn align_decision<R: Rng + ?Sized>(
        &self,
        decision: RetryDecision,
        (now, elapsed): (SimTime, SimDuration),
        deadline: Option<SimDuration>,
        clock: &ClientClock,
        rng: &mut R,
    ) -> RetryDecision {
        let RetryDecision::RetryAfter(sleep) = decision else { return decision };
        if self.align.is_none() {
            return decision;
        }
        let sleep = self.wake(now + sleep, clock, rng) - now;
        match deadline {
            Some(deadline) if elapsed + sleep >= deadline => RetryDecision::GiveUp(GiveUpReason::DeadlineExceeded),
            _ => RetryDecision::RetryAfter(sleep),
        }
    }
}

/// From `earliest` to the next instant after it that a clock `skew_nanos` ahead reads as k·`period` + `offset`:
/// period − ((earliest + skew − offset) mod period), in (0, period].
pub fn next_aligned(earliest: SimTime, skew_nanos: i64, period: SimDuration, offset: SimDuration) -> SimDuration {
    let period = i128::from(period.as_nanos().max(1));
    let local = i128::from(earliest.as_nanos()) + i128::from(skew_nanos);
    SimDuration::from_nanos((period - (local - i128::from(offset.as_nanos())).rem_euclid(period)) as u64)
}

/// U[0, `below`) in whole ns.
pub fn uniform_below<R: Rng + ?Sized>(below: SimDuration, rng: &mut R) -> SimDuration {
    SimDuration::from_nanos(rng.random_range(0..below.as_nanos().max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::test_rng;

    fn secs(s: f64) -> SimTime {
        SimTime::from_nanos((s * 1e9) as u64)
    }

    #[test]
    fn an_aligned_wait_ends_at_the_next_multiple_on_the_clients_clock() {
        let ten = SimDuration::from_secs(10);
        assert_eq!(next_aligned(secs(3.0), 0, ten, SimDuration::ZERO), SimDuration::from_secs(7));
        assert_eq!(next_aligned(secs(10.0), 0, ten, SimDuration::ZERO), ten, "on a boundary: the next one");
        // A clock 2 s ahead reads 5 s at 3 s: its 10 s comes at true 8 s.
        assert_eq!(next_aligned(secs(3.0), 2_000_000_000, ten, SimDuration::ZERO), SimDuration::from_secs(5));
        // A clock 2 s behind reads −1 s at 1 s: its 0 s comes at true 2 s.
        assert_eq!(next_aligned(secs(1.0), -2_000_000_000, ten, SimDuration::ZERO), SimDuration::from_secs(1));
        // An offset of 4 s aims at 14 s, 24 s, …
        assert_eq!(next_aligned(secs(15.0), 0, ten, SimDuration::from_secs(4)), SimDuration::from_secs(9));
    }

    #[test]
    fn skews_parse_and_say_what_is_valid() {
        assert_eq!(ClockSkew::parse("0s"), Ok(ClockSkew::Zero));
        assert_eq!(ClockSkew::parse("normal 0s"), Ok(ClockSkew::Zero));
        assert_eq!(ClockSkew::parse("2s"), Ok(ClockSkew::Constant(2_000_000_000)));
        assert_eq!(ClockSkew::parse("constant -2s"), Ok(ClockSkew::Constant(-2_000_000_000)));
        assert_eq!(ClockSkew::parse("normal 200ms"), Ok(ClockSkew::Normal(2e8)));
        assert_eq!(ClockSkew::parse(" uniform  1s "), Ok(ClockSkew::Uniform(1e9)));
        for (text, expected) in [("gaussian 1s", "unknown shape"), ("normal 1", "has no unit"), ("uniform -1s", "")] {
            let error = ClockSkew::parse(text).unwrap_err();
            assert!(error.contains(expected) && error.contains("\"normal 200ms\""), "{text}: {error}");
        }
        for skew in ["0s", "constant 2s", "constant -2s", "normal 200ms", "uniform 1s"] {
            assert_eq!(ClockSkew::parse(skew).unwrap().to_string(), skew);
        }
    }

    #[test]
    fn skews_draw_within_their_shape() {
        let mut rng = test_rng(7);
        let uniform = ClockSkew::Uniform(1e9);
        let draws: Vec<i64> = (0..10_000).map(|_| uniform.draw(&mut rng)).collect();
        assert!(draws.iter().all(|d| d.abs() <= 1_000_000_000));
        // U(−1 s, 1 s) has mean 0 and sd 1/√3 s: the mean of 10,000 lies within 4 standard errors of 0.
        let mean = draws.iter().map(|&d| d as f64).sum::<f64>() / draws.len() as f64;
        assert!(mean.abs() < 4.0 * 1e9 / 3f64.sqrt() / 100.0, "{mean}");
        assert_eq!(ClockSkew::Constant(-5).draw(&mut rng), -5);
    }

    /// With a fresh offset per wait, the wait is uniform over (0, P] wherever the clock stands: the clock no longer matters.
    #[test]
    fn a_per_attempt_offset_makes_the_wait_uniform_over_one_period_whatever_the_phase() {
        let period = SimDuration::from_secs(10);
        let policy =
            ClockPolicy { align: Some(Alignment { period, offset: AlignOffset::PerAttempt }), skew: ClockSkew::Zero };
        let mut rng = test_rng(3);
        for phase in [0.0, 2.5, 9.99] {
            let earliest = secs(100.0 + phase);
            let mut below_half = 0;
            let n = 20_000;
            for _ in 0..n {
                let wait = policy.wake(earliest, &ClientClock::default(), &mut rng) - earliest;
                assert!(!wait.is_zero() && wait <= period);
                below_half += usize::from(wait < SimDuration::from_secs(5));
            }
            // Binomial(n, 1/2): 4 standard deviations are 4·√(n/4) = 283.
            assert!((below_half as f64 - n as f64 / 2.0).abs() < 283.0, "phase {phase}: {below_half}");
        }
    }

    #[test]
    fn without_an_offset_every_client_wakes_at_the_same_instant_and_a_per_client_offset_is_stable() {
        let period = SimDuration::from_secs(10);
        let mut rng = test_rng(5);
        let none = ClockPolicy { align: Some(Alignment { period, offset: AlignOffset::None }), skew: ClockSkew::Zero };
        let wakes: Vec<SimTime> = (0..100)
            .map(|i| {
                let clock = none.client_clock(&mut rng, &mut test_rng(6));
                none.wake(secs(31.0 + i as f64 * 0.05), &clock, &mut rng)
            })
            .collect();
        assert!(wakes.iter().all(|&w| w == secs(40.0)));
        let per_client = ClockPolicy { align: Some(Alignment { period, offset: AlignOffset::PerClient }), ..none };
        let clock = per_client.client_clock(&mut rng, &mut test_rng(7));
        let first = per_client.wake(secs(31.0), &clock, &mut rng);
        let second = per_client.wake(first + SimDuration::from_secs(1), &clock, &mut rng);
        assert_eq!(second - first, period, "the same place in the next period");
    }

    #[test]
    fn an_aligned_sleep_past_the_deadline_gives_up() {
        let period = SimDuration::from_secs(10);
        let policy =
            ClockPolicy { align: Some(Alignment { period, offset: AlignOffset::None }), skew: ClockSkew::Zero };
        let mut rng = test_rng(1);
        let decision = RetryDecision::RetryAfter(SimDuration::from_secs(1));
        let at = (secs(2.0), SimDuration::from_secs(2));
        let clock = ClientClock::default();
        let stretched = policy.align_decision(decision, at, None, &clock, &mut rng);
        assert_eq!(stretched, RetryDecision::RetryAfter(SimDuration::from_secs(8)));
        let late = policy.align_decision(decision, at, Some(SimDuration::from_secs(9)), &clock, &mut rng);
        assert_eq!(late, RetryDecision::GiveUp(GiveUpReason::DeadlineExceeded));
    }
}
