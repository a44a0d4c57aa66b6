//! The words and numbers around a chart's plot: titles and subtitles fitted to the chart's width, axis titles
//! from a metric's spec, the unit of a time axis, and tick labels.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{DrawResult, FONT, GREY};
use crate::model::{MetricSpec, Unit};
use crate::report::tables::format_number;

/// The unit a time axis counts in, chosen so that its numbers stay short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::report) enum TimeUnit {
    Milliseconds,
    Seconds,
    Minutes,
}

impl TimeUnit {
    /// For an axis reaching `max_ms`: milliseconds below 10 s, seconds up to 10 min, minutes beyond.
    pub(in crate::report) fn for_span(max_ms: f64) -> TimeUnit {
        if max_ms < 10_000.0 {
            TimeUnit::Milliseconds
        } else if max_ms <= 600_000.0 {
            TimeUnit::Seconds
        } else {
            TimeUnit::Minutes
        }
    }

    /// Milliseconds in one of this unit.
    pub(in crate::report) fn ms(self) -> f64 {
        match self {
            TimeUnit::Milliseconds => 1.0,
            TimeUnit::Seconds => 1_000.0,
            TimeUnit::Minutes => 60_000.0,
        }
    }

    pub(in crate::report) fn symbol(self) -> &'static str {
        match self {
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "min",
        }
    }
}

/// A span of time as a reader writes it: "20 ms", "1 s", "1.5 s", "2 min".
pub(in crate::report) fn duration_text(ms: f64) -> String {
    let unit = if ms >= 60_000.0 && ms % 60_000.0 == 0.0 {
        TimeUnit::Minutes
    } else if ms >= 1_000.0 {
        TimeUnit::Seconds
    } else {
        TimeUnit::Milliseconds
    };
    format!("{} {}", format_number(round_to(ms / unit.ms(), 4)), unit.symbol())
}

/// `x` rounded to `digits` significant digits (so that 1000.0000000001 prints as 1000).
fn round_to(x: f64, digits: i32) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10_f64.powi(digits - 1 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

/// A tick label of a linear axis: the number as the CSV writes it, rounded to 6 significant digits.
pub(in crate::report) fn tick_label(x: f64) -> String {
    format_number(round_to(x, 6))
}

/// A tick label of a logarithmic time axis in ms: "1 ms", "10 ms", "100 ms", "1 s", "10 s".
pub(in crate::report) fn log_time_tick(ms: f64) -> String {
    if ms >= 1_000.0 {
        format!("{} s", format_number(round_to(ms / 1_000.0, 3)))
    } else {
        format!("{} ms", format_number(round_to(ms, 3)))
    }
}

/// The axis title of a metric: its name in words, without the unit its name ends in, then its unit:
/// "latency p99 (ms)", "success rate (fraction, 0 to 1)", "bottom calls (per request)".
pub(in crate::report) fn metric_axis_title(spec: &MetricSpec) -> String {
    let suffixes: &[&str] = match spec.unit {
        Unit::Milliseconds => &["_ms"],
        Unit::PerSecond => &["_rps", "_per_second"],
        Unit::PerRequest => &["_per_request"],
        _ => &[],
    };
    let name = suffixes.iter().find_map(|suffix| spec.name.strip_suffix(suffix)).unwrap_or(spec.name);
    format!("{} ({})", name.replace('_', " "), spec.unit.label())
}

/// A metric in milliseconds drawn in the unit its largest value `max_ms` calls for: the axis title
/// ("latency p99 (s)") and the divisor; other metrics as they are.
pub(in crate::report) fn metric_scale(spec: &MetricSpec, max_ms: f64) -> (String, f64) {
    let title = metric_axis_title(spec);
    if spec.unit != Unit::Milliseconds {
        return (title, 1.0);
    }
    let unit = TimeUnit::for_span(max_ms);
    (title.replace("(ms)", &format!("({})", unit.symbol())), unit.ms())
}

/// What a metric's chart shows, in words, from its help: the help itself, except that an outcome's "1 if X,
/// else 0" becomes the share of runs in which X.
pub(in crate::report) fn metric_phrase(spec: &MetricSpec) -> String {
    if spec.unit == Unit::Outcome {
        let condition = spec.help.strip_prefix("1 if ").and_then(|rest| rest.strip_suffix(", else 0"));
        return match condition {
            Some(condition) => format!("share of runs in which {condition}"),
            None => format!("share of runs: {}", spec.help),
        };
    }
    spec.help.to_owned()
}

/// A chart title: "metastable: 99th percentile of time to success by rate", with a comma before "by" when the
/// phrase is long or has commas of its own, so that "by" is not read as part of it.
pub(in crate::report) fn title_by(scenario: &str, phrase: &str, by: &str) -> String {
    if by.is_empty() {
        return format!("{scenario}: {phrase}");
    }
    let separator = if phrase.contains(',') || phrase.ends_with(')') || phrase.len() > 40 { "," } else { "" };
    format!("{scenario}: {phrase}{separator} by {by}")
}

/// `text` in lines no wider than `width` pixels at the largest size from `size` down to `min` that fits it on
/// one line, else on two at `min` (split at the space nearest the middle), else on as many as it takes.
pub(in crate::report) fn fit_lines(text: &str, width: u32, size: f64, min: f64, bold: bool) -> (f64, Vec<String>) {
    let style = if bold { FontStyle::Bold } else { FontStyle::Normal };
    let wide = |text: &str, size: f64| (FONT, size, style).into_font().box_size(text).map_or(0, |(w, _)| w);
    let mut current = size;
    while current > min && wide(text, current) > width {
        current -= 1.0;
    }
    if wide(text, current) <= width {
        return (current, vec![text.to_owned()]);
    }
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let candidate = if line.is_empty() { word.to_owned() } else { format!("{line} {word}") };
        if !line.is_empty() && wide(&candidate, min) > width {
            lines.push(std::mem::replace(&mut line, word.to_owned()));
        } else {
            line = candidate;
        }
    }
    lines.push(line);
    (min, lines)
}

/// Draws a chart's title (bold, centred) and its subtitle (grey, centred) at the top of `area`, each fitted to
/// the width, and returns the area below them.
pub(in crate::report) fn draw_headings<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    title: &str,
    subtitle: &str,
) -> Result<DrawingArea<DB, Shift>, String> {
    let (width, _) = area.dim_in_pixel();
    let usable = width.saturating_sub(40);
    let mut y = 8;
    for (text, size, min, bold, colour) in [(title, 26.0, 17.0, true, BLACK), (subtitle, 16.0, 13.0, false, GREY)] {
        if text.is_empty() {
            continue;
        }
        let (size, lines) = fit_lines(text, usable, size, min, bold);
        let style = if bold { FontStyle::Bold } else { FontStyle::Normal };
        for line in lines {
            let font = (FONT, size, style).into_font().color(&colour).pos(Pos::new(HPos::Center, VPos::Top));
            area.draw(&Text::new(line, (width as i32 / 2, y), font)).map_err(|e| e.to_string())?;
            y += (size * 1.3).round() as i32;
        }
        y += 4;
    }
    Ok(area.split_vertically(y + 4).1)
}

/// Draws `text` as a y axis title: rotated, centred on the height of `area`, at `x` pixels from its left.
pub(in crate::report) fn draw_y_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    x: i32,
    size: f64,
) -> DrawResult {
    let (_, height) = area.dim_in_pixel();
    let style = (FONT, size)
        .into_font()
        .transform(FontTransform::Rotate270)
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    area.draw(&Text::new(text, (x, height as i32 / 2), style)).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_time_axes_count_in_seconds_then_minutes() {
        assert_eq!(TimeUnit::for_span(3_000.0), TimeUnit::Milliseconds);
        assert_eq!(TimeUnit::for_span(9_999.0), TimeUnit::Milliseconds);
        assert_eq!(TimeUnit::for_span(140_000.0), TimeUnit::Seconds);
        assert_eq!(TimeUnit::for_span(600_000.0), TimeUnit::Seconds);
        assert_eq!(TimeUnit::for_span(3_600_000.0), TimeUnit::Minutes);
        assert_eq!(duration_text(20.0), "20 ms");
        assert_eq!(duration_text(1_000.0), "1 s");
        assert_eq!(duration_text(1_500.0), "1.5 s");
        assert_eq!(duration_text(120_000.0), "2 min");
        assert_eq!(duration_text(90_000.0), "90 s");
    }

    #[test]
    fn log_ticks_are_whole_numbers_with_their_unit() {
        let ticks: Vec<String> = [1.0, 10.0, 100.0, 1_000.000_000_000_1, 10_000.0].map(log_time_tick).into();
        assert_eq!(ticks, ["1 ms", "10 ms", "100 ms", "1 s", "10 s"]);
        assert_eq!(log_time_tick(0.1), "0.1 ms");
        assert_eq!(tick_label(0.300_000_000_000_000_04), "0.3");
        assert_eq!(tick_label(140_000.0), "140000");
    }

    fn spec(name: &'static str, help: &'static str, unit: Unit) -> MetricSpec {
        MetricSpec { name, help, unit, formerly: None }
    }

    #[test]
    fn axis_titles_say_the_unit_once() {
        let title = |name, unit| metric_axis_title(&spec(name, "", unit));
        assert_eq!(title("latency_p99_ms", Unit::Milliseconds), "latency p99 (ms)");
        assert_eq!(title("success_rate", Unit::Fraction), "success rate (fraction, 0 to 1)");
        assert_eq!(title("bottom_calls_per_request", Unit::PerRequest), "bottom calls (per request)");
        assert_eq!(title("goodput_rps", Unit::PerSecond), "goodput (per second)");
        assert_eq!(title("calls", Unit::Count), "calls (count)");
    }

    #[test]
    fn long_durations_are_drawn_in_seconds() {
        let p99 = spec("latency_p99_ms", "", Unit::Milliseconds);
        assert_eq!(metric_scale(&p99, 900.0), ("latency p99 (ms)".to_owned(), 1.0));
        assert_eq!(metric_scale(&p99, 25_000.0), ("latency p99 (s)".to_owned(), 1_000.0));
        let calls = spec("calls", "", Unit::Count);
        assert_eq!(metric_scale(&calls, 25_000.0), ("calls (count)".to_owned(), 1.0));
    }

    #[test]
    fn an_outcome_reads_as_a_share_of_runs() {
        let recovered = spec("recovered", "1 if goodput recovered before new requests stopped, else 0", Unit::Outcome);
        assert_eq!(metric_phrase(&recovered), "share of runs in which goodput recovered before new requests stopped");
        let odd = spec("tipped", "whether it tipped", Unit::Outcome);
        assert_eq!(metric_phrase(&odd), "share of runs: whether it tipped");
        let p99 = spec("latency_p99_ms", "99th percentile of time to success", Unit::Milliseconds);
        assert_eq!(metric_phrase(&p99), "99th percentile of time to success");
    }

    #[test]
    fn titles_set_by_apart_from_a_long_phrase() {
        assert_eq!(title_by("m", "median time", "rate"), "m: median time by rate");
        assert_eq!(title_by("m", "a, b", "rate"), "m: a, b, by rate");
        assert_eq!(title_by("m", "calls (all)", "rate"), "m: calls (all), by rate");
        assert_eq!(title_by("m", "median time", ""), "m: median time");
    }

    #[test]
    fn text_shrinks_then_wraps_to_fit() {
        super::super::register_font();
        let (size, lines) = fit_lines("short", 500, 26.0, 17.0, true);
        assert_eq!((size, lines.len()), (26.0, 1));
        let long = "a title that is much too long to fit on one line of a narrow chart at any size";
        let (size, lines) = fit_lines(long, 300, 26.0, 17.0, true);
        assert_eq!(size, 17.0);
        assert!(lines.len() >= 2, "{lines:?}");
        assert_eq!(lines.join(" "), long, "no word is lost");
    }
}
