//! The plan's memory estimate, checked against `--max-memory` before any run starts.
//!
//! A sweep holds at its peak: the runs in progress (one per worker thread), each with its records (clients,
//! requests in flight and their pending events: [`Footprint`]) and its timeline while it is counted (4 bytes per
//! bucket and series) and handed over (8 more); every point's summed timeline (16 bytes per bucket and series, per
//! outcome group); the finished runs' metrics and latency histograms; and the process itself. With `--trace`, the
//! traced run is re-run once the sweep is done and its results written: the peak is then the larger of the sweep's
//! and the trace's (that run's records, its spans and the file built in memory). The estimate is an order of
//! magnitude, not a promise: docs/performance.md compares it with measured peaks.

use std::fmt;

use crate::model::Footprint;
use crate::model::trace::{MAX_TRACE_SPANS, Span};
use crate::scenario::{PlannedPoint, Scenario};

/// The process without any run: code, the scenario and its plan, thread stacks (measured: 7–9 MiB).
const BASE_BYTES: u64 = 8 << 20;
/// Per run, while it runs: its latency histogram, random streams and counters.
const RUN_BYTES: u64 = 256 << 10;
/// Per finished run: its metrics and latency histogram, as kept until the results are written.
const FINISHED_RUN_BYTES: u64 = 8 << 10;
/// Per bucket and series while a run counts it (u32) and hands it over (f64).
const RUN_TIMELINE_BYTES: u64 = 4 + 8;
/// Per bucket and series of a point's summed timeline, per outcome group (an exact 128-bit sum).
const POINT_TIMELINE_BYTES: u64 = 16;
/// Per span of a trace: the span, and its share of the file built in memory before it is written. Measured on
/// a 100,000-client herd's first 250,000 attempts: Chrome trace JSON 300 bytes a span; OTLP/JSON 784 (each
/// request's root span and trace bookkeeping shared among its 2.5 attempts), up to about 1,000 when every
/// request makes one attempt.
const TRACE_SPAN_BYTES: u64 = size_of::<Span>() as u64;
const CHROME_JSON_BYTES_PER_SPAN: u64 = 320;
const OTLP_JSON_BYTES_PER_SPAN: u64 = 1_000;

/// What a plan will hold in memory at its peak, by part.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct MemoryEstimate {
    pub(crate) peak_bytes: u64,
    /// Runs at once: the worker threads, or fewer runs.
    pub(crate) concurrent_runs: u64,
    /// The largest run's records (clients, requests and their pending events).
    pub(crate) records_bytes: u64,
    /// The largest run's timeline while it runs.
    pub(crate) run_timeline_bytes: u64,
    /// Every point's summed timeline.
    pub(crate) point_timelines_bytes: u64,
    /// Finished runs' results.
    pub(crate) finished_bytes: u64,
    /// Points whose timeline length is not known before they run (a burst's): not counted.
    pub(crate) unbounded_points: usize,
    /// With `--trace`: what the traced run holds once the sweep is done (its records and timeline, its spans, the
    /// file in memory), the process included; 0 without.
    pub(crate) trace_bytes: u64,
}

impl MemoryEstimate {
    /// The estimate for running `points` of `scenario` with `threads` worker threads.
    pub(crate) fn of(scenario: &Scenario, points: &[&PlannedPoint], threads: usize) -> MemoryEstimate {
        let series = scenario.model.timeline_series().len().max(1) as u64;
        let groups = if scenario.model.outcome_metric().is_some() { 2 } else { 1 };
        let bucket_nanos = scenario.timeline_bucket.as_nanos().max(1);
        let buckets =
            |footprint: &Footprint| footprint.horizon.map(|horizon| horizon.as_nanos().div_ceil(bucket_nanos) + 1);
        let footprints: Vec<Footprint> = points.iter().map(|point| point.config.footprint()).collect();
        let records_bytes = footprints.iter().map(run_bytes).max().unwrap_or(0);
        let timeline_buckets = footprints.iter().filter_map(buckets).max().unwrap_or(0);
        let run_timeline_bytes = timeline_buckets.saturating_mul(series * RUN_TIMELINE_BYTES);
        let point_timelines_bytes: u64 = footprints
            .iter()
            .filter_map(buckets)
            .map(|buckets| buckets.saturating_mul(series * POINT_TIMELINE_BYTES * groups))
            .fold(0, u64::saturating_add);
        let runs = points.len() as u64 * u64::from(scenario.replicates);
        let concurrent_runs = (threads.max(1) as u64).min(runs.max(1));
        let per_run = records_bytes.saturating_add(run_timeline_bytes).saturating_add(RUN_BYTES);
        let finished_bytes = runs.saturating_mul(FINISHED_RUN_BYTES);
        let peak_bytes = BASE_BYTES
            .saturating_add(concurrent_runs.saturating_mul(per_run))
            .saturating_add(point_timelines_bytes)
            .saturating_add(finished_bytes);
        MemoryEstimate {
            peak_bytes,
            concurrent_runs,
            records_bytes,
            run_timeline_bytes,
            point_timelines_bytes,
            finished_bytes,
            unbounded_points: footprints.iter().filter(|f| f.horizon.is_none()).count(),
            trace_bytes: 0,
        }
    }

    /// The estimate when a run of `point` is also traced (`--trace`), as OTLP/JSON if `otlp`, else Chrome trace
    /// JSON. The trace runs after the sweep, so the peak is the larger of the two.
    pub(crate) fn with_trace(mut self, scenario: &Scenario, point: &PlannedPoint, otlp: bool) -> Self {
        let footprint = point.config.footprint();
        let series = scenario.model.timeline_series().len().max(1) as u64;
        let bucket_nanos = scenario.timeline_bucket.as_nanos();
        let spans = footprint.trace_spans.map_or(MAX_TRACE_SPANS as u64, |bound| bound.min(MAX_TRACE_SPANS as u64));
        let json = if otlp { OTLP_JSON_BYTES_PER_SPAN } else { CHROME_JSON_BYTES_PER_SPAN };
        let timeline = footprint.horizon.map_or(0, |horizon| {
            (horizon.as_nanos().div_ceil(bucket_nanos.max(1)) + 1).saturating_mul(series * RUN_TIMELINE_BYTES)
        });
        let traced_records = footprint.records.saturating_mul(footprint.trace_bytes_per_record);
        self.trace_bytes = BASE_BYTES
            .saturating_add(RUN_BYTES)
            .saturating_add(run_bytes(&footprint))
            .saturating_add(traced_records)
            .saturating_add(timeline)
            .saturating_add(spans.saturating_mul(TRACE_SPAN_BYTES + json));
        self.peak_bytes = self.peak_bytes.max(self.trace_bytes);
        self
    }

    /// What to change to need less, largest part first.
    pub(crate) fn advice(&self) -> String {
        let mut advice = Vec::new();
        if self.run_timeline_bytes.max(self.point_timelines_bytes) >= self.records_bytes {
            advice.push("a wider timeline_bucket (--set timeline_bucket=…)");
        }
        let running = self.concurrent_runs.saturating_mul(self.records_bytes.saturating_add(self.run_timeline_bytes));
        if self.concurrent_runs > 1 && running >= self.peak_bytes / 2 {
            advice.push("fewer runs at once (--threads)");
        }
        if self.records_bytes >= self.run_timeline_bytes {
            advice.push("fewer clients per run");
        }
        if self.trace_bytes >= self.peak_bytes {
            advice.push("a smaller point to trace (--trace-point), or no --trace");
        }
        advice.push("fewer points per process (--shard I/N, then retrylab merge)");
        advice.join(", ")
    }
}

impl fmt::Display for MemoryEstimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "about {} at its peak: {} run(s) at once × ({} of clients, requests, limiters and pending events + {} of \
             timeline), {} of summed timelines, {} of finished runs",
            Bytes(self.peak_bytes),
            self.concurrent_runs,
            Bytes(self.records_bytes),
            Bytes(self.run_timeline_bytes),
            Bytes(self.point_timelines_bytes),
            Bytes(self.finished_bytes),
        )?;
        if self.trace_bytes > 0 {
            write!(f, "; then {} to trace one run", Bytes(self.trace_bytes))?;
        }
        if self.unbounded_points > 0 {
            write!(
                f,
                " (not counted: the timelines of {} point(s) whose length is known only once they ran, such as a burst's)",
                self.unbounded_points
            )?;
        }
        Ok(())
    }
}

/// What one run holds besides its timeline: its records, and what it keeps whatever its clients do.
fn run_bytes(footprint: &Footprint) -> u64 {
    footprint.records.saturating_mul(footprint.bytes_per_record).saturating_add(footprint.other_bytes)
}

/// A byte count in binary units, three significant digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bytes(pub(crate) u64);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        match unit {
            0 => write!(f, "{} B", self.0),
            _ if value < 10.0 => write!(f, "{value:.2} {}", UNITS[unit]),
            _ if value < 100.0 => write!(f, "{value:.1} {}", UNITS[unit]),
            _ => write!(f, "{value:.0} {}", UNITS[unit]),
        }
    }
}

/// A size as the command line gives it: a number and a unit, decimal (`kB`, `MB`, `GB`, `TB`) or binary (`KiB`,
/// `MiB`, `GiB`, `TiB`), or bytes (`B`, or no unit).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    if number.is_empty() {
        return Err(format!("{text:?} is not a size: expected a number and a unit, e.g. 8GB or 512MiB"));
    }
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        _ => return Err(format!("unknown unit {unit:?}: use B, kB, MB, GB, TB, KiB, MiB, GiB or TiB (e.g. 8GB)")),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size: expected a number and a unit, e.g. 8GB or 512MiB"))?;
    let bytes = value * factor as f64;
    if bytes >= u64::MAX as f64 {
        return Err(format!("{text:?} is out of range: the largest size is {} bytes (16EiB)", u64::MAX));
    }
    if bytes.is_nan() || bytes < 1.0 {
        return Err(format!("{text:?} is out of range: give at least 1 byte"));
    }
    Ok(bytes as u64)
}

/// Half the machine's memory (Linux: `MemTotal` of /proc/meminfo), the default `--max-memory`; `None` where it
/// cannot be read.
pub(crate) fn default_limit() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|line| line.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024 / 2)
}

/// The process's peak resident memory so far (Linux: `VmHWM` of /proc/self/status); `None` elsewhere.
pub(crate) fn peak_resident() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_decimal_and_binary_units_and_bad_ones_say_what_is_valid() {
        assert_eq!(parse_size("8GB"), Ok(8_000_000_000));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("1.5 GiB"), Ok(3 << 29));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("8 parsecs").unwrap_err().contains("GiB"));
        assert!(parse_size("lots").unwrap_err().contains("not a size"));
        assert!(parse_size("0").unwrap_err().contains("at least 1 byte"));
    }

    #[test]
    fn bytes_print_with_three_significant_digits() {
        assert_eq!(Bytes(512).to_string(), "512 B");
        assert_eq!(Bytes(1536).to_string(), "1.50 KiB");
        assert_eq!(Bytes(200 << 20).to_string(), "200 MiB");
        assert_eq!(Bytes(25 << 30).to_string(), "25.0 GiB");
    }
}
