//! A message queue and its consumers: producers enqueue messages, `workers` consumers receive them one at a time,
//! process each against a downstream service and acknowledge it on success. A message whose processing fails (an
//! error, the consumer's `timeout`, a full downstream) comes back by the queue's redelivery rule, and after
//! `max_receives` receives it goes to the dead-letter queue instead:
//!
//! - `visibility-timeout` (Amazon SQS): a received message is invisible for `visibility_timeout` from its
//!   receipt and then visible again, whether or not its consumer is done with it (so a slow success can be
//!   processed twice); with a backoff `strategy` the consumer sets the visibility after a failure to the
//!   strategy's delay, as consumers do with ChangeMessageVisibility. The receive that would exceed
//!   `max_receives` (SQS's maxReceiveCount) moves the message to the dead-letter queue instead.
//! - `ttl-queue` (RabbitMQ): a failed message is rejected to a delay queue whose TTL (`ttl`, or the strategy's
//!   delay per attempt) returns it through the dead-letter exchange; the consumer sends it to the dead-letter
//!   queue once it has been received `max_receives` times (counting the `x-death` header).
//! - `sidekiq`: a failed job waits in the retry set for Sidekiq's own delay, (n − 1)^4 + 15 + U{0..9}·n seconds
//!   before retry n (the strategy's delay replaces the first two terms, as a job's `sidekiq_retry_in` does), and after
//!   `max_receives` executions (26: 25 retries, by default) goes to the dead set.
//!
//! `poison_probability` makes a message fail every time. With `ordering = "ordered"`, messages are spread over
//! `partitions` (SQS FIFO message groups, Kafka partitions) and a partition delivers its next message only once
//! its head is done or dead-lettered: a poison message holds its partition up for all its receives.
//!
//! Conventions: a *receive* is one delivery of a message to a consumer (the first included); a *redelivery* is
//! every receive after the first. A message is *in the queue* from its enqueue until it is acknowledged or
//! dead-lettered (`queue_depth`); its end-to-end latency runs from enqueue to the acknowledgement.

mod params;
mod run;
#[cfg(test)]
mod tests;

pub(crate) use params::{QueueConfig, Redelivery};

use super::{Backlog, Footprint, RunOutput, RunSettings, SimModel};
use crate::params::{ParamError, ParamSpec, Point};

/// The queue model (scenario `kind = "queue"`).
pub(crate) struct Queue;

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        MESSAGES = "messages" (Count): "messages enqueued",
        PROCESSED = "processed" (Count): "messages acknowledged after a successful processing",
        DEAD_LETTERED = "dead_lettered" (Count): "messages moved to the dead-letter queue (Sidekiq: the dead set)",
        SUCCESS_RATE = "success_rate" (Fraction): "processed / (processed + dead_lettered)",
        RECEIVES = "receives" (Count): "deliveries of a message to a consumer, the first ones included",
        REDELIVERIES = "redeliveries" (Count): "receives after a message's first",
        DUPLICATES_PROCESSED = "duplicates_processed" (Count): "successful processings of a message already processed (at-least-once: its visibility ran out before the acknowledgement)",
        DOWNSTREAM_CALLS = "downstream_calls" (Count): "calls the consumers made to the downstream",
        AMPLIFICATION = "amplification" (PerRequest): "downstream calls per message",
        TIMEOUTS = "timeouts" (Count): "processings the consumer's timeout ended",
        LATENCY_MEAN_MS = "latency_mean_ms" (Milliseconds): "mean time from enqueue to acknowledgement",
        LATENCY_P50_MS = "latency_p50_ms" (Milliseconds): "median time from enqueue to acknowledgement",
        LATENCY_P99_MS = "latency_p99_ms" (Milliseconds): "99th percentile of the time from enqueue to acknowledgement",
        LATENCY_P999_MS = "latency_p999_ms" (Milliseconds): "99.9th percentile of the time from enqueue to acknowledgement",
        OLDEST_MESSAGE_AGE_MS = "oldest_message_age_ms" (Milliseconds): "the age the oldest message in the queue reached: the longest a message stayed before its acknowledgement, dead-lettering or the end of the run",
        QUEUE_DEPTH_MEAN = "queue_depth_mean" (Count): "messages in the queue (neither acknowledged nor dead-lettered), averaged over time from 0 to the last event",
        COMPLETION_MS = "completion_ms" (Milliseconds): "time of the last event",
        EVENTS = "events" (Count): "engine events in the run",
    }
}

/// The timeline's series: counted per bucket, then the queue's depth (a level: its maximum in the bucket).
pub(super) mod series {
    series! {
        ENQUEUED = "enqueued": "messages enqueued in the bucket",
        RECEIVED = "received": "receives in the bucket, redeliveries included",
        REDELIVERED = "redelivered": "receives after a message's first, in the bucket",
        PROCESSED = "processed": "messages acknowledged in the bucket",
        DEAD_LETTERED = "dead_lettered": "messages dead-lettered in the bucket",
        QUEUE_DEPTH = "queue_depth": "the most messages in the queue during the bucket (neither acknowledged nor dead-lettered)",
    }
    /// The series counted per bucket come first; the rest are levels.
    pub(crate) const COUNTED: usize = QUEUE_DEPTH;
}

impl SimModel for Queue {
    const KIND: &'static str = "queue";
    const ABOUT: &'static str = "a message queue with consumers: visibility timeouts, TTL delay queues, Sidekiq retries, dead letters";
    const PARAMS: &'static [&'static [ParamSpec]] = &params::PARAMS;
    const SETTINGS: &'static [&'static str] =
        &["workers", "capacity", "service", "service_mean", "redelivery", "visibility_timeout", "max_receives", "timeout"];
    const BACKLOG: Option<Backlog> = Some(Backlog {
        level: "queue_depth",
        offered: "enqueued",
        wasted: None,
        what: "the message queue",
        remedy: "add consumers ([model] workers), or set [model] max_receives so that failing messages leave for the \
                 dead-letter queue",
    });
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["dead_lettered", "redeliveries", "latency_p99_ms"];
    /// Messages given up on and the backlog they leave: enqueued, the first series, is flat under an open stream.
    const DEFAULT_TIMELINE_SERIES: &'static [&'static str] = &["dead_lettered", "queue_depth"];

    type Config = QueueConfig;

    fn configure(point: &Point) -> Result<QueueConfig, ParamError> {
        params::configure(point)
    }

    fn footprint(config: &QueueConfig) -> Footprint {
        let records = config.workload.peak_requests();
        let partitions = if config.ordering == params::Ordering::Ordered { u64::from(config.partitions) } else { 0 };
        Footprint {
            horizon: config.workload.horizon(),
            records,
            bytes_per_record: run::BYTES_PER_MESSAGE,
            other_bytes: u64::from(config.workers) * run::BYTES_PER_WORKER + partitions * run::BYTES_PER_PARTITION,
            trace_spans: config.max_receives.map(|receives| records.saturating_mul(u64::from(receives))),
            trace_bytes_per_record: 0,
        }
    }

    fn simulate(config: &QueueConfig, settings: RunSettings) -> RunOutput {
        run::simulate(config, settings)
    }

    /// Spans are receives, owned by their message.
    fn trace_owner(_config: &QueueConfig) -> &'static str {
        "message"
    }

    /// The redelivery rule with its delay, and the receives before the dead letters.
    fn describe_policy(_point: &Point, config: &QueueConfig) -> Result<Option<String>, ParamError> {
        let backoff = || {
            let text = config.retry.to_string();
            text.split(", ").next().unwrap_or_default().to_owned()
        };
        let delay = match config.redelivery {
            Redelivery::VisibilityTimeout { visibility, backoff: false } => format!("visibility timeout {visibility}"),
            Redelivery::VisibilityTimeout { backoff: true, .. } => format!("visibility set to {} on failure", backoff()),
            Redelivery::TtlQueue { ttl, backoff: false } => format!("TTL queue {ttl}"),
            Redelivery::TtlQueue { backoff: true, .. } => format!("TTL per attempt {}", backoff()),
            Redelivery::Sidekiq { backoff: false } => "Sidekiq's retry schedule".to_owned(),
            Redelivery::Sidekiq { backoff: true } => format!("Sidekiq's retry set, delay {}", backoff()),
        };
        let max = config.max_receives.map_or("no dead letters".to_owned(), |n| format!("dead letters after {n} receives"));
        let deadline = config.retry.deadline.map_or(String::new(), |d| format!(", or {d} after enqueue"));
        Ok(Some(format!("{delay}, {max}{deadline}")))
    }
}
