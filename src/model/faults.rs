//! Fault windows: spans of time in which the server misbehaves.
//!
//! Syntax: comma-separated `START..END KIND` windows, in time order and not overlapping, where KIND is
//! `fail-fast` (every attempt is answered 503 at once), `reset` (the connection is reset: no status at all),
//! `black-hole` (attempts vanish: no answer, so only the client's timeout ends them) or `slowdown xF` (service
//! takes F times longer). Example:
//! `"20s..25s black-hole, 40s..50s slowdown x3"`.

use crate::time::{SimTime, parse_duration};

pub(crate) const FAULT_SYNTAX: &str = "\"20s..25s black-hole, 40s..50s slowdown x3\": START..END fail-fast | reset | black-hole | slowdown xF, in time order";

/// A larger slowdown stops being a slowdown and becomes an outage: use `black-hole`.
pub(crate) const MAX_SLOWDOWN: f64 = 1000.0;
/// The most fault windows a run takes (a run looks up its current window on every arrival).
pub(crate) const MAX_FAULT_WINDOWS: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum FaultKind {
    FailFast,
    Reset,
    BlackHole,
    Slowdown(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct FaultWindow {
    pub start: SimTime,
    pub end: SimTime,
    pub kind: FaultKind,
}

/// Non-overlapping fault windows in time order.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Faults {
    windows: Vec<FaultWindow>,
}

impl Faults {
    pub(crate) fn parse(text: &str) -> Result<Faults, String> {
        let mut windows: Vec<FaultWindow> = Vec::new();
        for item in text.split(',').map(str::trim).filter(|item| !item.is_empty()) {
            if windows.len() == MAX_FAULT_WINDOWS {
                return Err(format!("more than {MAX_FAULT_WINDOWS} fault windows; merge neighbouring ones"));
            }
            let (span, kind) =
                item.split_once(' ').ok_or_else(|| format!("\"{item}\" has no kind; expected {FAULT_SYNTAX}"))?;
            let (start, end) = span
                .split_once("..")
                .ok_or_else(|| format!("\"{span}\" is not START..END; expected {FAULT_SYNTAX}"))?;
            let start = SimTime::ZERO + parse_duration(start)?;
            let end = SimTime::ZERO + parse_duration(end)?;
            if end <= start {
                return Err(format!("window \"{span}\" ends before it starts"));
            }
            let kind = match kind.trim() {
                "fail-fast" => FaultKind::FailFast,
                "reset" => FaultKind::Reset,
                "black-hole" => FaultKind::BlackHole,
                other => match other.strip_prefix("slowdown x").map(|f| f.trim().parse::<f64>()) {
                    Some(Ok(factor)) if factor > 0.0 && factor <= MAX_SLOWDOWN => FaultKind::Slowdown(factor),
                    Some(_) => {
                        return Err(format!(
                            "\"{other}\": the slowdown factor must be a number from 0 to {MAX_SLOWDOWN}, like x3"
                        ));
                    }
                    None => {
                        return Err(format!(
                            "unknown fault \"{other}\"; valid: fail-fast, reset, black-hole, slowdown xF"
                        ));
                    }
                },
            };
            if let Some(previous) = windows.last()
                && start < previous.end
            {
                return Err(format!("window \"{span}\" overlaps the one before it; list windows in time order"));
            }
            windows.push(FaultWindow { start, end, kind });
        }
        Ok(Faults { windows })
    }

    /// Adds one window `[start, end)` where it belongs in time order; refused when it is empty or overlaps a
    /// window already there.
    pub(crate) fn add(&mut self, window: FaultWindow) -> Result<(), String> {
        if window.end <= window.start {
            return Err("the window is empty: it must end after it starts".into());
        }
        let index = self.windows.partition_point(|w| w.start < window.start);
        let before = index.checked_sub(1).map(|i| &self.windows[i]);
        let after = self.windows.get(index);
        if before.is_some_and(|w| w.end > window.start) || after.is_some_and(|w| w.start < window.end) {
            let (start, end) = (window.start - SimTime::ZERO, window.end - SimTime::ZERO);
            return Err(format!("the window {start}..{end} overlaps a window of `faults`"));
        }
        self.windows.insert(index, window);
        Ok(())
    }

    /// The fault in force at `t` (windows include their start and exclude their end).
    #[inline]
    pub(crate) fn at(&self, t: SimTime) -> Option<FaultKind> {
        if self.windows.is_empty() {
            return None;
        }
        let index = self.windows.partition_point(|w| w.end <= t);
        self.windows.get(index).filter(|w| w.start <= t).map(|w| w.kind)
    }

    pub(crate) fn windows(&self) -> &[FaultWindow] {
        &self.windows
    }

    pub(crate) fn has_black_hole(&self) -> bool {
        self.windows.iter().any(|w| w.kind == FaultKind::BlackHole)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: u64) -> SimTime {
        SimTime::from_nanos(seconds * 1_000_000_000)
    }

    #[test]
    fn windows_apply_from_start_to_just_before_end() {
        let faults = Faults::parse("20s..25s black-hole, 40s..50s slowdown x3, 60s..61s fail-fast").unwrap();
        assert_eq!(faults.at(at(19)), None);
        assert_eq!(faults.at(at(20)), Some(FaultKind::BlackHole));
        assert_eq!(faults.at(at(25)), None);
        assert_eq!(faults.at(at(45)), Some(FaultKind::Slowdown(3.0)));
        assert_eq!(faults.at(at(60)), Some(FaultKind::FailFast));
        assert_eq!(faults.at(at(61)), None);
        assert!(faults.has_black_hole());
        assert_eq!(Faults::parse("").unwrap().at(at(1)), None);
    }

    #[test]
    fn an_added_window_keeps_time_order_and_may_not_overlap() {
        let mut faults = Faults::parse("20s..25s black-hole, 40s..50s slowdown x3").unwrap();
        faults.add(FaultWindow { start: at(30), end: at(35), kind: FaultKind::FailFast }).unwrap();
        let starts: Vec<SimTime> = faults.windows().iter().map(|w| w.start).collect();
        assert_eq!(starts, [at(20), at(30), at(40)]);
        assert_eq!(faults.at(at(32)), Some(FaultKind::FailFast));
        for (start, end) in [(24, 26), (39, 41), (21, 22), (10, 60)] {
            let error = faults.add(FaultWindow { start: at(start), end: at(end), kind: FaultKind::Reset }).unwrap_err();
            assert!(error.contains("overlaps"), "{start}..{end}: {error}");
        }
        let error = faults.add(FaultWindow { start: at(5), end: at(5), kind: FaultKind::Reset }).unwrap_err();
        assert!(error.contains("empty"), "{error}");
        assert_eq!(faults.windows().len(), 3, "refused windows are not added");
    }

    #[test]
    fn inverted_overlapping_and_unknown_windows_are_refused() {
        for (text, expected) in [
            ("25s..20s fail-fast", "ends before it starts"),
            ("20s..30s fail-fast, 25s..40s black-hole", "overlaps"),
            ("20s..30s melt", "unknown fault"),
            ("20s..30s slowdown x0", "must be a number from 0 to 1000"),
            ("20s..30s slowdown x1e300", "must be a number from 0 to 1000"),
            ("20s-30s fail-fast", "is not START..END"),
            ("20s..30", "has no kind"),
        ] {
            let error = Faults::parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
