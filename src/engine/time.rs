//! Integer virtual time. One tick is one nanosecond; `u64` nanoseconds cover 584 years of simulated time.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

const NANOS_PER_MICRO: u64 = 1_000;
const NANOS_PER_MILLI: u64 = 1_000_000;
const NANOS_PER_SEC: u64 = 1_000_000_000;

/// An instant of virtual time: nanoseconds since the start of a run (t = 0).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct SimTime(u64);

/// A span of virtual time in nanoseconds. Never negative.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct SimDuration(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);

    pub const fn from_nanos(nanos: u64) -> Self {
        SimTime(nanos)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Milliseconds since t = 0, as a float (for reports only; the engine never computes with floats).
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MILLI as f64
    }

    /// The span from `earlier` to `self`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    pub const fn from_nanos(nanos: u64) -> Self {
        SimDuration(nanos)
    }

    pub const fn from_micros(micros: u64) -> Self {
        SimDuration(micros * NANOS_PER_MICRO)
    }

    pub const fn from_millis(millis: u64) -> Self {
        SimDuration(millis * NANOS_PER_MILLI)
    }

    pub const fn from_secs(secs: u64) -> Self {
        SimDuration(secs * NANOS_PER_SEC)
    }

    /// Rounds a number of nanoseconds to the nearest tick (halves round up), saturating at the ends.
    #[inline]
    pub fn from_nanos_f64(nanos: f64) -> Self {
        // `as` saturates: NaN → 0, negative → 0, too large → u64::MAX. Adding 0.5 before truncating rounds
        // non-negative values without the libm call that `f64::round` costs on baseline x86-64.
        SimDuration((nanos + 0.5) as u64)
    }

    pub fn from_millis_f64(millis: f64) -> Self {
        Self::from_nanos_f64(millis * NANOS_PER_MILLI as f64)
    }

    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    pub fn as_nanos_f64(self) -> f64 {
        self.0 as f64
    }

    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_MILLI as f64
    }

    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }

    pub const fn saturating_add(self, other: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(other.0))
    }

    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    /// Saturates at the end of representable time instead of wrapping.
    fn add(self, rhs: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, rhs: SimDuration) {
        *self = *self + rhs;
    }
}

impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, rhs: SimDuration) -> SimDuration {
        self.saturating_add(rhs)
    }
}

impl Sub for SimTime {
    type Output = SimDuration;
    /// The span between two instants; saturates at zero.
    fn sub(self, rhs: SimTime) -> SimDuration {
        self.saturating_since(rhs)
    }
}

impl fmt::Display for SimDuration {
    /// Shortest exact form in the largest unit that keeps it readable: `5ms`, `2s`, `51.2us`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nanos = self.0;
        let (unit, scale) = if nanos == 0 {
            return f.write_str("0s");
        } else if nanos >= NANOS_PER_SEC {
            ("s", NANOS_PER_SEC)
        } else if nanos >= NANOS_PER_MILLI {
            ("ms", NANOS_PER_MILLI)
        } else if nanos >= NANOS_PER_MICRO {
            ("us", NANOS_PER_MICRO)
        } else {
            ("ns", 1)
        };
        let whole = nanos / scale;
        let frac = nanos % scale;
        if frac == 0 {
            write!(f, "{whole}{unit}")
        } else {
            let digits = scale.ilog10() as usize;
            let text = format!("{frac:0digits$}");
            write!(f, "{whole}.{}{unit}", text.trim_end_matches('0'))
        }
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "t={}", SimDuration(self.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_picks_the_largest_readable_unit() {
        assert_eq!(SimDuration::from_millis(5).to_string(), "5ms");
        assert_eq!(SimDuration::from_secs(2).to_string(), "2s");
        assert_eq!(SimDuration::from_nanos(51_200).to_string(), "51.2us");
        assert_eq!(SimDuration::from_nanos(1_500_000_000).to_string(), "1.5s");
        assert_eq!(SimDuration::from_nanos(7).to_string(), "7ns");
        assert_eq!(SimDuration::ZERO.to_string(), "0s");
    }

    #[test]
    fn arithmetic_saturates_instead_of_wrapping() {
        let late = SimTime::from_nanos(u64::MAX - 1);
        assert_eq!((late + SimDuration::from_secs(1)).as_nanos(), u64::MAX);
        assert_eq!(SimTime::ZERO - late, SimDuration::ZERO);
        assert_eq!(SimDuration::from_nanos_f64(-3.0), SimDuration::ZERO);
        assert_eq!(SimDuration::from_millis_f64(1.25).as_nanos(), 1_250_000);
    }
}
