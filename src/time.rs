//! Integer virtual time, the leaf every layer shares (engine, policy, metrics, workload, models): one tick is one
//! nanosecond, and `u64` nanoseconds cover 584 years of simulated time. Durations are written with their unit
//! ("5ms", "2s", "51.2us", "1.5min"); a bare number is refused, because a silent unit is how a 5-second timeout
//! becomes a 5-millisecond one.

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
    /// The end of time (584 years on): an open end no run reaches.
    pub const MAX: SimTime = SimTime(u64::MAX);

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

/// Accepted units and their length in nanoseconds.
pub const DURATION_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("min", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Parses `text` into a duration, rounding to the nearest nanosecond. The error says what was expected.
pub fn parse_duration(text: &str) -> Result<SimDuration, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let unit = unit.trim();
    let hint = "write a non-negative number and a unit, like \"5ms\" (units: ns, us, ms, s, min, h)";
    if trimmed.starts_with('-') {
        return Err(format!("durations cannot be negative (\"{text}\"); {hint}"));
    }
    if number.is_empty() {
        return Err(format!("\"{text}\" is not a duration; {hint}"));
    }
    let Some(&(_, unit_nanos)) = DURATION_UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(if unit.is_empty() {
            format!("\"{text}\" has no unit; {hint}")
        } else {
            format!("unknown unit \"{unit}\" in \"{text}\"; {hint}")
        });
    };
    let digits = number.replace('_', "");
    let (whole, fraction) = digits.split_once('.').unwrap_or((&digits, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return Err(format!("\"{text}\" is not a duration; {hint}"));
    }
    let too_long = || format!("\"{text}\" is too long (the limit is {}, about 584 years)", SimDuration::MAX);
    nanos_of(whole, fraction, unit_nanos).map(SimDuration::from_nanos).ok_or_else(too_long)
}

/// Fraction digits read exactly: 10^24 times the longest unit (an hour, 3.6·10^12 ns) still fits in a u128.
/// Digits past these change the duration by less than 10^-11 ns, and never its rounding to the nanosecond but
/// at an exact half.
const MAX_FRACTION_DIGITS: usize = 24;

/// `whole.fraction` units in nanoseconds, rounded to the nearest (halves up), in exact integer arithmetic; `None`
/// past `u64::MAX`, never wrapped or saturated.
fn nanos_of(whole: &str, fraction: &str, unit_nanos: u64) -> Option<u64> {
    let unit = u128::from(unit_nanos);
    let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().ok()? };
    let fraction = &fraction[..fraction.len().min(MAX_FRACTION_DIGITS)];
    let fraction_nanos = if fraction.is_empty() {
        0
    } else {
        let scale = 10_u128.pow(fraction.len() as u32);
        (fraction.parse::<u128>().ok()? * unit + scale / 2) / scale
    };
    let nanos = whole.checked_mul(unit)?.checked_add(fraction_nanos)?;
    u64::try_from(nanos).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (`set_overrides`): 39 digits times a unit overflowed u128, a panic with overflow checks
    /// and a silently wrapped duration without.
    #[test]
    fn durations_past_u128_are_too_long_not_wrapped() {
        for text in ["340282366920938463463374607431768211455ms", "34028236692093846346337460743176821145.5h"] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.contains("too long"), "{text}: {error}");
        }
    }

    /// A whole part past u128 with a fraction used to become its fraction alone, and more than 18 fraction
    /// digits took a float path that saturated at the limit.
    #[test]
    fn long_numbers_are_too_long_whatever_their_fraction() {
        for text in [
            "1234567890123456789012345678901234567890.5s",
            "18446744073709551616ns",
            "18446744073.709551616s",
            "99999999999.0000000000000000001s",
            "5124096h",
        ] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.contains("too long") && error.contains("584 years"), "{text}: {error}");
        }
        assert_eq!(parse_duration("18446744073709551615ns"), Ok(SimDuration::MAX));
        assert_eq!(parse_duration("1.0000000000000000000000000009s"), Ok(SimDuration::from_secs(1)));
        assert_eq!(parse_duration("0.0000000015s"), Ok(SimDuration::from_nanos(2)), "halves round up");
        assert_eq!(parse_duration(".5ms"), Ok(SimDuration::from_micros(500)));
    }

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

    #[test]
    fn parses_every_unit_exactly() {
        let cases = [
            ("5ms", 5_000_000),
            ("2s", 2_000_000_000),
            ("51.2us", 51_200),
            ("51.2µs", 51_200),
            ("9.6us", 9_600),
            ("1.5min", 90_000_000_000),
            ("1h", 3_600_000_000_000),
            ("100ns", 100),
            ("0.1s", 100_000_000),
            ("1_000ms", 1_000_000_000),
            ("0s", 0),
            (" 3 ms ", 3_000_000),
        ];
        for (text, nanos) in cases {
            assert_eq!(parse_duration(text), Ok(SimDuration::from_nanos(nanos)), "{text}");
        }
    }

    #[test]
    fn refuses_unitless_negative_and_unknown() {
        for text in ["5", "-5ms", "ms", "5 parsecs", "", "1.2.3s", "5Ms"] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.contains("like \"5ms\""), "{text}: {error}");
        }
    }

    #[test]
    fn round_trips_through_display() {
        for text in ["5ms", "2s", "51.2us", "1.5s", "7ns"] {
            assert_eq!(parse_duration(text).unwrap().to_string(), text);
        }
    }
}
