//! Durations written with their unit: "5ms", "2s", "51.2us", "1.5min". A bare number is refused, because a
//! silent unit is how a 5-second timeout becomes a 5-millisecond one.

use super::time::SimDuration;

/// Accepted units and their length in nanoseconds.
pub const UNITS: &[(&str, u64)] = &[
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
    let Some(&(_, unit_nanos)) = UNITS.iter().find(|(name, _)| *name == unit) else {
        return Err(if unit.is_empty() {
            format!("\"{text}\" has no unit; {hint}")
        } else {
            format!("unknown unit \"{unit}\" in \"{text}\"; {hint}")
        });
    };
    let digits = number.replace('_', "");
    let value: f64 = digits.parse().map_err(|_| format!("\"{text}\" is not a duration; {hint}"))?;
    // Exact for integers and for decimal fractions down to 1 ns; the f64 path only serves very large values.
    let nanos = match digits.split_once('.') {
        None => digits.parse::<u128>().ok().map(|whole| whole * u128::from(unit_nanos)),
        Some((whole, fraction)) if fraction.len() <= 18 => {
            let whole: u128 = if whole.is_empty() { 0 } else { whole.parse().ok().unwrap_or(0) };
            let scale = 10_u128.pow(fraction.len() as u32);
            let fraction: u128 = if fraction.is_empty() { 0 } else { fraction.parse().ok().unwrap_or(0) };
            let unit = u128::from(unit_nanos);
            Some(whole * unit + (fraction * unit + scale / 2) / scale)
        }
        Some(_) => None,
    };
    match nanos {
        Some(n) if n <= u128::from(u64::MAX) => Ok(SimDuration::from_nanos(n as u64)),
        Some(_) => Err(format!("\"{text}\" is too long (the limit is about 584 years)")),
        None => Ok(SimDuration::from_nanos_f64(value * unit_nanos as f64)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
