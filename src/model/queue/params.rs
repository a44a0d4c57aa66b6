//! The queue model's parameters, in the order they are hashed into seeds, and the typed configuration.

use crate::model::client;
use crate::model::distributions::{self, TimeDistribution};
use crate::model::faults::{FAULT_SYNTAX, Faults};
use crate::params::{
    Choice, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value, choices, concat_groups,
};
use crate::policy::{RetryPolicy, Strategy};
use crate::time::SimDuration;
use crate::workload::{Workload, WorkloadKind};

choices! {
    /// How a failed message comes back (`redelivery`).
    pub(crate) enum RedeliveryRule {
        VisibilityTimeout = "visibility-timeout",
        TtlQueue = "ttl-queue",
        Sidekiq = "sidekiq",
    }
}

choices! {
    /// Whether a partition delivers its messages one at a time, in order (`ordering`).
    pub(crate) enum Ordering {
        Unordered = "unordered",
        Ordered = "ordered",
    }
}

/// Sidekiq's default retry count: 25 retries, so 26 executions.
pub(crate) const SIDEKIQ_EXECUTIONS: u32 = 26;

/// The redelivery rule with its delay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Redelivery {
    /// Visible again `visibility` after each receipt; with `backoff`, the consumer sets the visibility to the
    /// strategy's delay when processing fails.
    VisibilityTimeout { visibility: SimDuration, backoff: bool },
    /// Back after `ttl` in a delay queue, or after the strategy's delay with `backoff`.
    TtlQueue { ttl: SimDuration, backoff: bool },
    /// Sidekiq's retry set: its own schedule, or with `backoff` the strategy's delay plus Sidekiq's jitter (as
    /// for a job's `sidekiq_retry_in`).
    Sidekiq { backoff: bool },
}

const fn probability(key: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec::new(Section::Model, key, ParamKind::Real { min: 0.0, max: 1.0 }, ParamDefault::Value(Value::Real(0.0)), help)
}

/// `[model]`: the consumers, the downstream and the queue's rules.
const QUEUE: &[ParamSpec] = &[
    ParamSpec::new(
        Section::Model,
        "workers",
        ParamKind::Count { min: 1, max: 1_000_000 },
        ParamDefault::Value(Value::Count(10)),
        "consumers, each processing one message at a time",
    ),
    ParamSpec::new(
        Section::Model,
        "capacity",
        ParamKind::Count { min: 1, max: 100_000_000 },
        ParamDefault::Unset,
        "the downstream's concurrent calls; a call beyond them fails at once (unset: unlimited)",
    ),
    distributions::service("exponential"),
    distributions::service_mean(ParamDefault::millis(50)),
    distributions::service_sd(ParamDefault::millis(50)),
    distributions::slow_service(ParamDefault::millis(1000)),
    distributions::slow_probability(0.0),
    probability("failure_probability", "chance a downstream call fails after its service"),
    probability("poison_probability", "chance a message is poison: its processing fails every time"),
    ParamSpec::new(
        Section::Model,
        "faults",
        ParamKind::Text { syntax: FAULT_SYNTAX },
        ParamDefault::Unset,
        "fault windows of the downstream: fail-fast, reset, black-hole (needs a consumer timeout) or slowdown xF",
    ),
    ParamSpec::new(
        Section::Model,
        "redelivery",
        ParamKind::Choice(RedeliveryRule::NAMES),
        ParamDefault::Value(Value::Choice("visibility-timeout")),
        "how a failed message comes back: visibility-timeout (SQS), ttl-queue (RabbitMQ delay queue and dead-letter \
         exchange) or sidekiq (its retry set and schedule)",
    ).policy(),
    ParamSpec::new(
        Section::Model,
        "visibility_timeout",
        ParamKind::Duration,
        ParamDefault::Value(Value::Duration(SimDuration::from_secs(30))),
        "visibility-timeout: a received message is invisible this long from its receipt (SQS's default: 30 s)",
    ).policy(),
    ParamSpec::new(
        Section::Model,
        "ttl",
        ParamKind::Duration,
        ParamDefault::Value(Value::Duration(SimDuration::from_secs(10))),
        "ttl-queue: a failed message waits this long in the delay queue (with a backoff strategy: the strategy's delay)",
    ).policy(),
    ParamSpec::new(
        Section::Model,
        "max_receives",
        ParamKind::Count { min: 1, max: 1_000_000 },
        ParamDefault::Unset,
        "receives before a message goes to the dead-letter queue (SQS maxReceiveCount; unset: never, or 26 for \
         sidekiq: its 25 retries)",
    ).policy(),
    ParamSpec::new(
        Section::Model,
        "ordering",
        ParamKind::Choice(Ordering::NAMES),
        ParamDefault::Value(Value::Choice("unordered")),
        "unordered (any consumer takes any visible message) or ordered (a partition delivers its next message only \
         when its head is done or dead-lettered)",
    ),
    ParamSpec::new(
        Section::Model,
        "partitions",
        ParamKind::Count { min: 1, max: 1_000_000 },
        ParamDefault::Value(Value::Count(10)),
        "ordered: message groups (SQS FIFO) or partitions (Kafka); messages are spread over them in turn (no effect \
         unordered)",
    ),
];

/// `[client]`: the consumer.
const CONSUMER: &[ParamSpec] = &[
    client::TIMEOUT,
    client::strategy(client::POLICIES_WITHOUT_LIMITER, "none"),
    client::base(ParamDefault::millis(1000)),
    client::cap(ParamDefault::millis(300_000)),
    client::multiplier(ParamDefault::Value(Value::Real(2.0))),
    client::FLOOR,
    client::JITTER,
    client::JITTER_FRACTION,
    client::STEPS,
    client::DEADLINE,
];

/// Every parameter group.
pub(super) const PARAMS: [&[ParamSpec]; 3] = concat_groups(&[QUEUE, crate::workload::PARAMS, CONSUMER], &[]);

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct QueueConfig {
    pub workers: u32,
    pub capacity: Option<u32>,
    pub service: TimeDistribution,
    pub failure_probability: f64,
    pub poison_probability: f64,
    pub faults: Faults,
    pub redelivery: Redelivery,
    /// Receives before the dead-letter queue (`None`: never).
    pub max_receives: Option<u32>,
    pub ordering: Ordering,
    pub partitions: u32,
    pub workload: Workload,
    /// The consumer's processing timeout.
    pub timeout: Option<SimDuration>,
    /// The delay between receives for the rules that take a strategy, and the deadline since enqueue.
    pub retry: RetryPolicy,
}

pub(super) fn configure(point: &Point) -> Result<QueueConfig, ParamError> {
    let kind = point.choice_of::<WorkloadKind>("kind")?;
    let why = match kind {
        WorkloadKind::Closed => Some("a queue's producers do not wait for their messages"),
        WorkloadKind::Periodic => Some("it has no periodic producers (a periodic workload is the server model's)"),
        WorkloadKind::Burst | WorkloadKind::Open => None,
    };
    if let Some(why) = why {
        return Err(ParamError::new(
            "kind",
            format!("the queue model cannot run kind = \"{kind}\": {why}; use \"burst\" or \"open\""),
        ));
    }
    let workload = Workload::configure(point)?;
    let (retry, _) = client::retry_policy(point)?;
    let backoff = retry.strategy != Strategy::None;
    let rule = point.choice_of::<RedeliveryRule>("redelivery")?;
    let redelivery = match rule {
        RedeliveryRule::VisibilityTimeout => {
            Redelivery::VisibilityTimeout { visibility: point.duration("visibility_timeout")?, backoff }
        }
        RedeliveryRule::TtlQueue => Redelivery::TtlQueue { ttl: point.duration("ttl")?, backoff },
        RedeliveryRule::Sidekiq => Redelivery::Sidekiq { backoff },
    };
    for (key, belongs) in [
        ("visibility_timeout", RedeliveryRule::VisibilityTimeout),
        ("ttl", RedeliveryRule::TtlQueue),
    ] {
        if point.is_written(key) && rule != belongs {
            return Err(ParamError::new(key, format!("belongs to redelivery = \"{belongs}\"; remove it or set that rule")));
        }
    }
    if let Redelivery::VisibilityTimeout { visibility, backoff: false } = redelivery
        && visibility.is_zero()
    {
        return Err(ParamError::new(
            "visibility_timeout",
            "a visibility timeout of 0 hands every message to every consumer at once: give one > 0".into(),
        ));
    }
    let max_receives = point.optional_count("max_receives")?.map(|n| n as u32);
    let max_receives = match rule {
        RedeliveryRule::Sidekiq => Some(max_receives.unwrap_or(SIDEKIQ_EXECUTIONS)),
        _ => max_receives,
    };
    let ordering = point.choice_of::<Ordering>("ordering")?;
    let faults = match point.get("faults")? {
        Some(Value::Text(text)) => Faults::parse(&text).map_err(|message| ParamError::new("faults", message))?,
        _ => Faults::default(),
    };
    let timeout = point.optional_duration("timeout")?;
    if faults.has_black_hole() && timeout.is_none() {
        return Err(ParamError::new(
            "faults",
            "a black-hole window never answers, so the consumers need a `timeout`".into(),
        ));
    }
    Ok(QueueConfig {
        workers: point.count("workers")? as u32,
        capacity: point.optional_count("capacity")?.map(|n| n as u32),
        service: TimeDistribution::service(point)?,
        failure_probability: point.real("failure_probability")?,
        poison_probability: point.real("poison_probability")?,
        faults,
        redelivery,
        max_receives,
        ordering,
        partitions: point.count("partitions")? as u32,
        workload,
        timeout,
        retry,
    })
}
