//! The `[client]` vocabulary: one definition of each key that models with clients share (keys.rs), so the same
//! key means the same thing in every model (only its default may differ), and the one place where a strategy or a
//! preset, the attempts and a retry limiter compose into a client policy (here).
//!
//! `strategy` takes a strategy name or a preset name ([`crate::policy::presets`]): a preset fills the backoff keys
//! ([`BACKOFF_KEYS`]) and `retry_on` that the scenario does not write, and brings its retry limiter, used when
//! `limiter` is `"none"` (tuned by the limiter's knobs like an explicit one).
//!
//! What a model accepts depends on what its clients can host: the lists of hosts.rs are filtered at compile time
//! from the registries, so a model's error messages and `retrylab strategies` list exactly what it runs.

mod hosts;
mod keys;
#[cfg(test)]
mod tests;

pub(crate) use hosts::{
    ANY_LIMITER, ANY_POLICY, LIMITERS_FOR_SHARED_CALLERS, POLICIES_FOR_SHARED_CALLERS, POLICIES_WITHOUT_LIMITER,
    refusal_hint,
};
pub(crate) use keys::*;

use crate::params::{ParamError, Point, Value};
use crate::policy::limiters::{Limiter, LimiterKind, LimiterStack};
use crate::policy::presets::Preset;
use crate::policy::{
    Alignment, BackoffParams, ClockPolicy, ClockSkew, Hedge, RetryAfterPolicy, RetryOn, RetryPolicy, Strategy,
};
use crate::time::SimDuration;

/// What `strategy` names: a backoff formula with the client's own values, or a preset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum StrategyChoice {
    Formula(Strategy),
    Preset(&'static Preset),
}

impl StrategyChoice {
    pub(crate) fn from_name(name: &str) -> Option<StrategyChoice> {
        match Preset::lookup(name) {
            Some(preset) => Some(StrategyChoice::Preset(preset)),
            None => Strategy::from_name(name).map(StrategyChoice::Formula),
        }
    }
}

/// What `limiter` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LimiterChoice {
    /// No limiter of the client's own: the preset's, if `strategy` is one (`none`, or `preset` to say so).
    None,
    /// No limiter at all, not even a preset's.
    Off,
    /// The model's own ratio budget: retries ≤ `budget` × first tries (each model says over which window).
    Budget,
    Shipped(LimiterKind),
}

impl LimiterChoice {
    pub(crate) fn from_name(name: &str) -> Option<LimiterChoice> {
        match name {
            "none" | "preset" => Some(LimiterChoice::None),
            "off" => Some(LimiterChoice::Off),
            "budget" => Some(LimiterChoice::Budget),
            other => LimiterKind::from_name(other).map(LimiterChoice::Shipped),
        }
    }
}

/// The clocks a point's `align`, `align_offset` and `clock_skew` describe: `None` when nothing waits by the
/// clock. `periodic` is the period of a periodic workload, whose jobs run by the clients' clocks too. A skew of a
/// period or more is refused: clocks that far apart meet the same boundaries as clocks off by the remainder.
pub(crate) fn clock_policy(point: &Point, periodic: Option<SimDuration>) -> Result<Option<ClockPolicy>, ParamError> {
    let period = point.optional_duration("align")?;
    if period.is_some_and(SimDuration::is_zero) {
        return Err(ParamError::new(
            "align",
            "a period of 0 aligns nothing: give a period like \"10s\", or remove `align` for relative waits".into(),
        ));
    }
    if period.is_none() && point.is_written("align_offset") {
        return Err(ParamError::new("align_offset", "has no effect without `align`; set it too".into()));
    }
    let skew = match point.get("clock_skew")? {
        Some(Value::Text(text)) => ClockSkew::parse(&text).map_err(|why| ParamError::new("clock_skew", why))?,
        _ => ClockSkew::Zero,
    };
    if skew != ClockSkew::Zero && period.is_none() && periodic.is_none() {
        return Err(ParamError::new(
            "clock_skew",
            "moves only what runs by the clock: set `align`, or use a periodic workload".into(),
        ));
    }
    for (key, limit) in [("align", period), ("period", periodic)] {
        if let Some(limit) = limit
            && skew.scale() >= limit
        {
            return Err(ParamError::new(
                "clock_skew",
                format!(
                    "a skew of {} is a whole period of `{key}` ({limit}) or more: clocks that far apart meet the same \
                     boundaries as clocks off by the remainder; give a skew below {limit}",
                    skew.scale()
                ),
            ));
        }
    }
    let align = period.map(|period| point.choice_of("align_offset").map(|offset| Alignment { period, offset }));
    let align = align.transpose()?;
    Ok((align.is_some() || skew != ClockSkew::Zero || periodic.is_some()).then_some(ClockPolicy { align, skew }))
}

/// The hedge a point's `hedge`, `hedge_delay` and `hedge_percentile` describe.
pub(crate) fn hedge(point: &Point) -> Result<Hedge, ParamError> {
    Ok(Hedge::new(point.choice_of("hedge")?, point.duration("hedge_delay")?, point.real("hedge_percentile")?))
}

/// A client's retry policy and the preset it came from, if `strategy` named one. A preset fills the backoff keys
/// ([`BACKOFF_KEYS`]) with its library's values; a key the scenario gives explicitly overrides the preset's (as
/// a configuration overrides a library's default), and every other key keeps the model's default. The
/// Retry-After handling is the preset's, else `Honour` (models with hints set their own).
pub(crate) fn retry_policy(point: &Point) -> Result<(RetryPolicy, Option<&'static Preset>), ParamError> {
    let deadline = point.optional_duration("deadline")?;
    let name = point.choice("strategy")?;
    let choice = StrategyChoice::from_name(name).ok_or_else(|| {
        ParamError::new("strategy", format!("internal error: \"{name}\" is neither a strategy nor a preset"))
    })?;
    let (mut policy, preset) = match choice {
        StrategyChoice::Preset(preset) => (preset.policy(deadline), Some(preset)),
        StrategyChoice::Formula(strategy) => {
            let policy = RetryPolicy {
                strategy,
                backoff: BackoffParams::new(point.duration("base")?, point.duration("cap")?, point.real("multiplier")?),
                max_attempts: None,
                deadline,
                retry_after: RetryAfterPolicy::Honour,
                pushback: crate::policy::PushbackPolicy::Ignore,
                throttling_base: None,
            };
            (policy, None)
        }
    };
    // From a preset, only what the scenario gives; for a formula, every key (its default when not given).
    let wanted = |key: &'static str| -> Result<bool, ParamError> {
        Ok(point.entries().iter().any(|(spec, _)| spec.key == key) && (preset.is_none() || point.is_written(key)))
    };
    let backoff = &mut policy.backoff;
    if preset.is_some() {
        if wanted("base")? {
            backoff.base = point.duration("base")?;
        }
        if wanted("cap")? {
            backoff.cap = point.duration("cap")?;
        }
        if wanted("multiplier")? {
            backoff.multiplier = point.real("multiplier")?;
        }
    }
    if wanted("floor")? {
        backoff.floor = point.duration("floor")?;
    }
    if wanted("jitter")? {
        backoff.jitter = point.duration("jitter")?;
    }
    if wanted("jitter_fraction")? {
        backoff.jitter_fraction = point.real("jitter_fraction")?;
    }
    if wanted("steps")? {
        backoff.steps = point.count("steps")? as u32;
    }
    if wanted("max_attempts")? {
        policy.max_attempts = point.optional_count("max_attempts")?.map(|n| n as u32);
    }
    if wanted("throttling_base")? {
        policy.throttling_base = point.optional_duration("throttling_base")?;
    }
    let (base, cap) = (policy.backoff.base, policy.backoff.cap);
    if base.is_zero() && preset.is_none() && policy.strategy != Strategy::None {
        return Err(ParamError::new(
            "base",
            "must be greater than 0 (for no sleep at all use strategy = \"none\")".into(),
        ));
    }
    if cap < base {
        return Err(ParamError::new("cap", format!("cap ({cap}) must be at least base ({base})")));
    }
    if policy.backoff.floor > cap {
        return Err(ParamError::new("floor", format!("floor ({}) must be at most cap ({cap})", policy.backoff.floor)));
    }
    Ok((policy, preset))
}

/// The outcomes a client retries: `retry_on` when the scenario writes it, else the list of `preset` (unless the
/// scenario writes `classifier`, which then decides), else `otherwise` (the model's own default).
pub(crate) fn retry_on(point: &Point, preset: Option<&Preset>, otherwise: RetryOn) -> Result<RetryOn, ParamError> {
    let classifier_written = point.is_written("classifier");
    if point.is_written("retry_on") {
        if classifier_written {
            return Err(ParamError::new(
                "retry_on",
                "give either `classifier` or `retry_on` (a classifier is a named list: retry_on = \"body-aware\")"
                    .into(),
            ));
        }
        let Some(Value::Text(text)) = point.get("retry_on")? else {
            return Err(ParamError::new("retry_on", "internal error: not a list".into()));
        };
        return RetryOn::parse(&text).map_err(|why| ParamError::new("retry_on", why));
    }
    match preset.and_then(|preset| preset.retry_on) {
        Some(list) if !classifier_written => {
            RetryOn::parse(list).map_err(|why| ParamError::new("strategy", format!("internal error: {why}")))
        }
        _ => Ok(otherwise),
    }
}

/// The client policy a point runs, after the preset is resolved, in one line: `policy` (the backoff with its
/// parameters and attempts, as the model configured it), the limiter with its knobs (and whose it is), and what
/// is retried (`retry_on`, when the model has a list).
pub(crate) fn describe_policy(
    point: &Point,
    policy: &RetryPolicy,
    retry_on: Option<&RetryOn>,
) -> Result<String, ParamError> {
    let (_, preset) = retry_policy(point)?;
    let mut text = policy.to_string();
    let mut limiters = Vec::new();
    for name in point.choice_list("limiter")? {
        limiters.push(match LimiterChoice::from_name(name) {
            Some(LimiterChoice::Budget) => format!("budget {}", point.real("budget")?),
            Some(LimiterChoice::Shipped(kind)) => describe_limiter(point, kind)?,
            Some(LimiterChoice::None) => match preset.and_then(|preset| preset.limiter) {
                Some(kind) => format!("{} (the preset's)", describe_limiter(point, kind)?),
                None => "none".to_owned(),
            },
            Some(LimiterChoice::Off) | None => "none".to_owned(),
        });
    }
    text.push_str(&format!(", limiter {}", limiters.join(" + ")));
    if let Some(retry_on) = retry_on {
        text.push_str(&format!(", retry_on {retry_on}"));
    }
    let has = |key: &str| point.entries().iter().any(|(spec, _)| spec.key == key);
    if has("align")
        && let Some(period) = point.optional_duration("align")?
    {
        text.push_str(&format!(", waits until the clock's next {period} ({} offset)", point.choice("align_offset")?));
    }
    if has("clock_skew")
        && let Some(Value::Text(skew)) = point.get("clock_skew")?
    {
        text.push_str(&format!(", clock skew {skew}"));
    }
    Ok(text)
}

/// A shipped limiter's name with its knobs' values: `grpc (max_tokens 10, token_ratio 0.1)`.
fn describe_limiter(point: &Point, kind: LimiterKind) -> Result<String, ParamError> {
    let knobs: Vec<String> = kind
        .knobs()
        .iter()
        .map(|knob| Ok(point.get(knob.key)?.map(|value| format!("{} {value}", knob.key))))
        .filter_map(Result::transpose)
        .collect::<Result<_, ParamError>>()?;
    Ok(if knobs.is_empty() { kind.name().to_owned() } else { format!("{} ({})", kind.name(), knobs.join(", ")) })
}

/// The limiters a client runs, from `limiter`: the model's own ratio budget, the shipped ones, or both.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LimiterSetting {
    /// `budget` among them, with its ratio; the model keeps the books.
    pub(crate) budget: Option<f64>,
    /// The shipped limiters, in the order written.
    pub(crate) shipped: Vec<Limiter>,
}

impl LimiterSetting {
    /// The shipped limiters and `own` (a model's own budget, kept as a limiter) as one: none, the one, or a
    /// [`LimiterStack`] asking them in that order.
    pub(crate) fn combined(self, own: Option<Limiter>) -> Option<Limiter> {
        let mut members = self.shipped;
        members.extend(own);
        match members.len() {
            0 => None,
            1 => members.pop(),
            _ => Some(Limiter::Stack(LimiterStack::new(members))),
        }
    }
}

/// Limiters that refund a successful retry by its permit's cost: a stack hands one permit to all its members,
/// so it may hold at most one of them.
const REFUNDING: &[LimiterKind] = &[LimiterKind::AwsQuota, LimiterKind::AwsQuota2026, LimiterKind::AwsAdaptive];

/// The limiters a point's `limiter`, `budget` and knobs describe; with `limiter = "none"`, the limiter of
/// `preset` if it brings one. `none` and `off` stand alone; a name may appear once.
pub(crate) fn limiter_setting(point: &Point, preset: Option<&Preset>) -> Result<LimiterSetting, ParamError> {
    let names = point.choice_list("limiter")?;
    if let (["none"], Some(kind)) = (&names[..], preset.and_then(|preset| preset.limiter))
        && point.is_written("limiter")
    {
        // A written `none` would be a label that says no limiter ran where the preset's did.
        return Err(ParamError::new(
            "limiter",
            format!(
                "with the {} preset, \"none\" would still run its {kind} limiter: write \"preset\" for that, or \
                 \"off\" for no limiter at all",
                preset.map_or("", |preset| preset.name)
            ),
        ));
    }
    let mut setting = LimiterSetting::default();
    let mut shipped = Vec::new();
    for (position, name) in names.iter().enumerate() {
        if names[..position].contains(name) {
            return Err(ParamError::new("limiter", format!("\"{name}\" is listed twice")));
        }
        let choice = LimiterChoice::from_name(name)
            .ok_or_else(|| ParamError::new("limiter", format!("internal error: unknown limiter \"{name}\"")))?;
        match choice {
            LimiterChoice::None | LimiterChoice::Off if names.len() > 1 => {
                return Err(ParamError::new(
                    "limiter",
                    format!("\"{name}\" stands alone; list only the limiters to stack"),
                ));
            }
            LimiterChoice::Off => {}
            LimiterChoice::None => {
                shipped.extend(preset.and_then(|preset| preset.limiter).map(|kind| kind.build(point)))
            }
            LimiterChoice::Budget => setting.budget = Some(point.real("budget")?),
            LimiterChoice::Shipped(kind) => shipped.push(kind.build(point)),
        }
    }
    let refunding: Vec<&str> =
        names.iter().copied().filter(|name| REFUNDING.iter().any(|kind| kind.name() == *name)).collect();
    if refunding.len() > 1 {
        return Err(ParamError::new(
            "limiter",
            format!("{} both refund retries by their cost; a stack takes one of them", refunding.join(" and ")),
        ));
    }
    setting.shipped = shipped.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok(setting)
}
