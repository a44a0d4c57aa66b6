//! The events `retrylab rare` estimates: the stuck-state verdicts, a queue level, or a condition on the run's
//! final metrics.

use crate::tune::expr::{Constraint, ExprError, parse_constraint};

/// What a run must do, within the horizon, to count.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Event {
    /// The run tipped and never recovered before arrivals stopped (the `stuck` metric is 1).
    Stuck,
    /// The run tipped (the `tipped` metric is 1), recovered or not.
    Tipped,
    /// The server's live queue reached this length.
    QueueAtLeast(u64),
    /// A condition on the run's final metrics, such as `success_rate <= 0.5`; `text` as written.
    Metrics { text: String, constraint: Constraint },
}

/// Why `--event` was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EventError {
    /// `queue>=` without a whole number.
    Level(String),
    /// An expression that does not parse, at a column.
    Expr(ExprError),
}

impl Event {
    /// Reads `stuck`, `tipped`, `queue>=N` (also `queue >= N`, `queue≥N`) or a constraint over `metrics`.
    pub(crate) fn parse(text: &str, metrics: &[&str]) -> Result<Event, EventError> {
        let trimmed = text.trim();
        match trimmed {
            "stuck" => return Ok(Event::Stuck),
            "tipped" => return Ok(Event::Tipped),
            _ => {}
        }
        let compact: String = trimmed.chars().filter(|c| !c.is_whitespace()).collect();
        let level = compact.strip_prefix("queue>=").or_else(|| compact.strip_prefix("queue≥"));
        if let Some(level) = level {
            return match level.parse::<u64>() {
                Ok(level) if level > 0 => Ok(Event::QueueAtLeast(level)),
                _ => Err(EventError::Level(format!(
                    "`queue>=` takes a queue length of at least 1, e.g. queue>=40; got {level:?}"
                ))),
            };
        }
        parse_constraint(trimmed, metrics)
            .map(|constraint| Event::Metrics { text: trimmed.to_owned(), constraint })
            .map_err(|mut error| {
                error.message.push_str(
                    "; an event is stuck, tipped, queue>=N, or a condition on the run's metrics such as \
                     \"success_rate <= 0.5\"",
                );
                EventError::Expr(error)
            })
    }

    /// The event as the report names it.
    pub(crate) fn describe(&self) -> String {
        match self {
            Event::Stuck => "stuck".into(),
            Event::Tipped => "tipped".into(),
            Event::QueueAtLeast(level) => format!("queue>={level}"),
            Event::Metrics { text, .. } => text.clone(),
        }
    }

    /// Whether the stuck-state verdict judges it (it then needs a trigger, or `warmup` in its place).
    pub(crate) fn needs_verdict(&self) -> bool {
        matches!(self, Event::Stuck | Event::Tipped)
            || matches!(self, Event::Metrics { constraint, .. }
                if constraint.lhs.terms.iter().any(|(_, name)| VERDICT_METRICS.contains(&name.as_str())))
    }
}

/// The metrics the verdict writes.
const VERDICT_METRICS: [&str; 5] = ["tipped", "stuck", "recovered", "recovery_ms", "recovered_at_ms"];

#[cfg(test)]
mod tests {
    use super::*;

    const METRICS: [&str; 3] = ["success_rate", "stuck", "calls"];

    #[test]
    fn the_named_events_and_a_queue_level_parse() {
        assert_eq!(Event::parse("stuck", &METRICS), Ok(Event::Stuck));
        assert_eq!(Event::parse(" tipped ", &METRICS), Ok(Event::Tipped));
        assert_eq!(Event::parse("queue>=40", &METRICS), Ok(Event::QueueAtLeast(40)));
        assert_eq!(Event::parse("queue >= 7", &METRICS), Ok(Event::QueueAtLeast(7)));
        assert_eq!(Event::parse("queue≥3", &METRICS), Ok(Event::QueueAtLeast(3)));
        assert!(matches!(Event::parse("queue>=0", &METRICS), Err(EventError::Level(_))));
        assert!(matches!(Event::parse("queue>=x", &METRICS), Err(EventError::Level(_))));
    }

    #[test]
    fn a_condition_on_metrics_parses_and_an_unknown_metric_is_refused_at_its_column() {
        let event = Event::parse("success_rate <= 0.5", &METRICS).unwrap();
        let Event::Metrics { constraint, .. } = &event else { panic!("{event:?}") };
        assert!(constraint.holds(|_| 0.4));
        assert!(!constraint.holds(|_| 0.6));
        assert!(!event.needs_verdict());
        assert!(Event::parse("stuck >= 1", &METRICS).unwrap().needs_verdict());
        assert!(Event::Stuck.needs_verdict() && Event::Tipped.needs_verdict());
        assert!(!Event::QueueAtLeast(3).needs_verdict());
        let Err(EventError::Expr(error)) = Event::parse("calls + goodput <= 3", &METRICS) else { panic!() };
        assert_eq!(error.column, 9);
        assert!(error.message.contains("queue>=N"), "{}", error.message);
        assert_eq!(event.describe(), "success_rate <= 0.5");
        assert_eq!(Event::QueueAtLeast(5).describe(), "queue>=5");
    }
}
