//! A point of the server model, checked as a whole and turned into a typed [`ServerConfig`].

use super::params::{HintHeader, LimiterScope, OnTimeout, OutageKind};
use crate::model::client;
use crate::model::distributions::TimeDistribution;
use crate::model::faults::{FaultKind, FaultWindow, Faults};
use crate::params::{ParamError, Point, Switch, Value};
use crate::policy::limiters::{Limiter, RetryBudget};
use crate::policy::{Classifier, RetryOn, RetryPolicy};
use crate::time::{SimDuration, SimTime};
use crate::policy::ClockPolicy;
use crate::workload::Workload;

/// The longest Retry-After an answer can carry (`u32` microseconds); the limiter's hints are clamped to it.
pub(crate) const MAX_RETRY_AFTER: SimDuration = SimDuration::from_secs(3600);

/// The window of the server model's ratio budget (`limiter = "budget"`): first tries count once answered, for
/// 10 s, with no reserve.
const BUDGET_WINDOW: SimDuration = SimDuration::from_secs(10);

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct ServerConfig {
    pub workers: Option<u32>,
    pub queue_limit: Option<u64>,
    pub service: TimeDistribution,
    pub latency_per_request: SimDuration,
    pub network: TimeDistribution,
    pub workload: Workload,
    pub retry: RetryPolicy,
    pub timeout: Option<SimDuration>,
    pub on_timeout: OnTimeout,
    /// The outcomes the clients retry.
    pub retry_on: RetryOn,
    pub idempotency_keys: bool,
    /// Probabilities of 502, disguised 400 and 422 after service, in that order.
    pub error_probabilities: [f64; 3],
    /// Token bucket (rate per second, capacity), if the server limits its rate.
    pub rate_limit: Option<(f64, f64)>,
    pub overload_retry_after: Option<SimDuration>,
    /// How the server's hints travel, so which clients read them.
    pub hint_header: HintHeader,
    /// The retry limiter, if any: one shared by the fleet, or the state each client instance starts with.
    pub limiter: Option<Limiter>,
    /// How many limiters there are: 1 for the fleet, else one per client instance (a request's instance is its
    /// client, or for open workloads its arrival number modulo this).
    pub limiter_instances: u32,
    pub faults: Faults,
    /// The trigger's span (recovery is measured from its end; charts shade it).
    pub trigger_start: Option<SimTime>,
    pub trigger_end: Option<SimTime>,
    /// Successes slower than this do not count as goodput for recovery.
    pub good_within: SimDuration,
    /// How a run is judged tipped or stuck after its trigger.
    pub verdict: crate::model::verdict::VerdictRule,
    /// The clients' clocks, when anything waits by them (aligned retries, periodic jobs).
    pub clock: Option<ClockPolicy>,
}

impl ServerConfig {
    /// The trigger, if the run has one: requests are tallied by when they were first sent relative to it.
    pub(crate) fn trigger(&self) -> Option<crate::metrics::Trigger> {
        self.trigger_end.map(|end| crate::metrics::Trigger { start: self.trigger_start.unwrap_or(end), end })
    }

    /// The server's rate limiter, if it has one.
    pub(crate) fn rate_bucket(&self) -> Option<crate::policy::TokenBucket> {
        self.rate_limit.map(|(rate, burst)| crate::policy::TokenBucket::new(rate, burst))
    }

    /// The clients' retry limiters, one per instance (empty without a limiter).
    pub(crate) fn retry_limiters(&self) -> Vec<Limiter> {
        self.limiter.iter().flat_map(|limiter| vec![limiter.clone(); self.limiter_instances as usize]).collect()
    }

    /// The length of a service started at `now` whose draw is `base_nanos`, with `busy` workers busy (itself
    /// included): the draw plus `latency_per_request` per busy worker, times a slowdown window's factor.
    #[inline]
    pub(crate) fn service_time(&self, base_nanos: f64, busy: u32, now: SimTime) -> SimDuration {
        let load = self.latency_per_request.as_nanos_f64() * f64::from(busy);
        let slowdown = match self.faults.at(now) {
            Some(FaultKind::Slowdown(factor)) => factor,
            None | Some(FaultKind::FailFast | FaultKind::Reset | FaultKind::BlackHole) => 1.0,
        };
        SimDuration::from_nanos_f64((base_nanos + load) * slowdown)
    }
}

/// Checks a point's values together and builds its configuration.
pub(super) fn configure(point: &Point) -> Result<ServerConfig, ParamError> {
    let workers = point.optional_count("workers")?.map(|n| n as u32);
    let queue_limit = point.optional_count("queue_limit")?.map(|n| n as u64);
    if workers.is_none() && queue_limit.is_some() {
        return Err(ParamError::new(
            "queue_limit",
            "a queue limit needs a finite number of workers; set `workers` too".into(),
        ));
    }
    let service = TimeDistribution::service(point)?;
    let network = TimeDistribution::network(point)?;
    let workload = Workload::configure(point)?;
    let error_probabilities = [
        point.real("error_probability")?,
        point.real("disguised_probability")?,
        point.real("permanent_probability")?,
    ];
    if error_probabilities.iter().sum::<f64>() > 1.0 {
        return Err(ParamError::new(
            "permanent_probability",
            "error_probability + disguised_probability + permanent_probability must not exceed 1".into(),
        ));
    }
    let rate_limit = match point.optional_real("rate_limit")? {
        None => None,
        Some(rate) if rate <= 0.0 => return Err(ParamError::new("rate_limit", "must be greater than 0".into())),
        Some(rate) => Some((rate, point.count("rate_burst")? as f64)),
    };
    let mut faults = match point.get("faults")? {
        Some(Value::Text(text)) => Faults::parse(&text).map_err(|message| ParamError::new("faults", message))?,
        _ => Faults::default(),
    };
    let timeout = point.optional_duration("timeout")?;
    if faults.has_black_hole() && timeout.is_none() {
        return Err(ParamError::new(
            "faults",
            "a black-hole window needs a client `timeout`, or its requests wait forever".into(),
        ));
    }
    let outage = outage(point)?;
    if let Some(outage) = &outage {
        if outage.kind == FaultKind::BlackHole && timeout.is_none() {
            let (key, kind) = match point.get("outage_kind")? {
                Some(_) => ("outage_kind", "a black-hole outage"),
                None => ("outage_duration", "a black-hole outage (the default `outage_kind`)"),
            };
            return Err(ParamError::new(key, format!("{kind} needs a client `timeout`, or its requests wait forever")));
        }
        if outage.end > outage.start {
            faults.add(*outage).map_err(|message| ParamError::new("outage_duration", message))?;
        }
    }
    // An outage of length 0 has no span to shade, but recovery is still measured from its (empty) end.
    let outage_span = outage.map(|o| ((o.end > o.start).then_some(o.start), o.end));
    let last_window = faults.windows().last().map(|window| (Some(window.start), window.end));
    let (default_start, default_end) = match outage_span.or(last_window) {
        Some((start, end)) => (start, Some(end)),
        None => (None, None),
    };
    let trigger_end = point.optional_duration("trigger_end")?.map(|d| SimTime::ZERO + d).or(default_end);
    let trigger_start = point.optional_duration("trigger_start")?.map(|d| SimTime::ZERO + d).or(default_start);
    if let (Some(start), Some(end)) = (trigger_start, trigger_end)
        && start >= end
    {
        return Err(ParamError::new(
            "trigger_start",
            format!("must be earlier than the trigger's end ({})", end - SimTime::ZERO),
        ));
    }
    let overload_retry_after = point.optional_duration("overload_retry_after")?;
    if overload_retry_after.is_some_and(|hint| hint > MAX_RETRY_AFTER) {
        return Err(ParamError::new(
            "overload_retry_after",
            format!("at most {MAX_RETRY_AFTER}: hints travel in whole microseconds in 32 bits"),
        ));
    }
    let (mut retry, preset) = client::retry_policy(point)?;
    if preset.is_none() || point.is_written("retry_after") {
        retry.retry_after = point.choice_of("retry_after")?;
    }
    if preset.is_none() || point.is_written("pushback") {
        retry.pushback = point.choice_of("pushback")?;
    }
    let setting = client::limiter_setting(point, preset)?;
    // The fleet's ratio budget is kept as one more limiter, asked after the shipped ones.
    let budget = setting.budget.map(|ratio| Limiter::Budget(RetryBudget::new(ratio, 0.0, BUDGET_WINDOW)));
    let limiter = setting.combined(budget);
    let limiter_instances = limiter_instances(point, &workload)?;
    let workload_period = workload.arrivals.period();
    // Per client instance, a limiter that counts one process's starts means what it says.
    if point.choice_of::<LimiterScope>("limiter_scope")? == LimiterScope::Fleet {
        check_one_process(point, &limiter, &workload)?;
    }
    Ok(ServerConfig {
        workers,
        queue_limit,
        service,
        latency_per_request: point.duration("latency_per_request")?,
        network,
        workload,
        retry,
        timeout,
        on_timeout: point.choice_of("on_timeout")?,
        retry_on: client::retry_on(point, preset, RetryOn::of_classifier(point.choice_of::<Classifier>("classifier")?))?,
        idempotency_keys: point.choice_of::<Switch>("idempotency_keys")? == Switch::On,
        error_probabilities,
        rate_limit,
        overload_retry_after,
        hint_header: point.choice_of("hint_header")?,
        limiter,
        limiter_instances,
        trigger_start,
        faults,
        trigger_end,
        good_within: point.optional_duration("good_within")?.or(timeout).unwrap_or(SimDuration::MAX),
        verdict: crate::model::verdict::VerdictRule::of(point)?,
        clock: client::clock_policy(point, workload_period)?,
    })
}

/// The number of limiters `limiter_scope` asks for: 1 for the fleet; per client, the clients of a burst or closed
/// workload, or `client_instances` for an open one (which has no clients of its own).
fn limiter_instances(point: &Point, workload: &Workload) -> Result<u32, ParamError> {
    let instances = point.optional_count("client_instances")?;
    match point.choice_of::<LimiterScope>("limiter_scope")? {
        LimiterScope::Fleet => match instances {
            Some(_) => Err(ParamError::new(
                "client_instances",
                "counts client instances for limiter_scope = \"client\"; set that too, or remove this".into(),
            )),
            None => Ok(1),
        },
        LimiterScope::Client => match (workload.arrivals.clients(), instances) {
            (Some(clients), None) => Ok(clients),
            (Some(_), Some(_)) => Err(ParamError::new(
                "client_instances",
                "a burst, closed or periodic workload has one instance per client already; remove it".into(),
            )),
            (None, Some(n)) => Ok(n as u32),
            (None, None) => Err(ParamError::new(
                "limiter_scope",
                "an open workload has no clients of its own: give client_instances, the client objects its \
                 requests are spread over"
                    .into(),
            )),
        },
    }
}

/// With `limiter_scope = "fleet"` the server model shares one limiter among all its clients: a limiter that counts
/// the starts of one process (systemd's) then means something only when there is one client.
fn check_one_process(point: &Point, limiter: &Option<Limiter>, workload: &Workload) -> Result<(), ParamError> {
    let systemd = match limiter {
        Some(Limiter::Systemd(_)) => true,
        Some(Limiter::Stack(stack)) => stack.members().iter().any(|member| matches!(member, Limiter::Systemd(_))),
        _ => false,
    };
    if !systemd {
        return Ok(());
    }
    let one_client = workload.arrivals.clients() == Some(1);
    if one_client {
        return Ok(());
    }
    let names = point.choice_list("limiter")?;
    let key = if names == ["none"] || names == ["preset"] { "strategy" } else { "limiter" };
    Err(ParamError::new(
        key,
        "systemd's start limit counts the starts of one unit, and here one limiter serves the whole fleet: use it \
         with clients = 1 (a burst or closed workload), or give each client its own with limiter_scope = \"client\""
            .into(),
    ))
}

/// The outage `outage_start`, `outage_duration` and `outage_kind` describe: a fault window
/// [start, start + duration), possibly empty (duration 0). `None` when `outage_duration` is unset; the other two
/// are refused without it, since they would change nothing.
fn outage(point: &Point) -> Result<Option<FaultWindow>, ParamError> {
    let kind = match point.optional_choice_of::<OutageKind>("outage_kind")? {
        None | Some(OutageKind::BlackHole) => FaultKind::BlackHole,
        Some(OutageKind::FailFast) => FaultKind::FailFast,
        Some(OutageKind::Reset) => FaultKind::Reset,
    };
    let start = point.optional_duration("outage_start")?;
    let Some(duration) = point.optional_duration("outage_duration")? else {
        for key in ["outage_start", "outage_kind"] {
            if point.get(key)?.is_some() {
                return Err(ParamError::new(key, "has no effect without `outage_duration`; set it too".into()));
            }
        }
        return Ok(None);
    };
    let Some(start) = start else {
        return Err(ParamError::new("outage_duration", "an outage needs `outage_start`, the time it begins".into()));
    };
    let start = SimTime::ZERO + start;
    Ok(Some(FaultWindow { start, end: start + duration, kind }))
}
