//! The `[client]` vocabulary: one definition of each key that models with clients share, so the same key means
//! the same thing in every model (only its default may differ), and the one place where a strategy or a preset,
//! the attempts and a retry limiter compose into a client policy.
//!
//! `strategy` takes a strategy name or a preset name ([`crate::policy::presets`]): a preset fills the backoff keys
//! ([`BACKOFF_KEYS`]) and `retry_on` that the scenario does not write, and brings its retry limiter, used when
//! `limiter` is `"none"` (tuned by the limiter's knobs like an explicit one).
//!
//! What a model accepts depends on what its clients can host: the lists below are filtered at compile time
//! from the registries, so a model's error messages and `retrylab strategies` list exactly what it runs.

use crate::params::{Choice, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value};
use crate::policy::limiters::{Limiter, LimiterKind, LimiterStack};
use crate::policy::presets::{self, Preset};
use crate::policy::{
    AlignOffset, Alignment, BackoffParams, ClockPolicy, ClockSkew, Hedge, HedgeMode, RetryAfterPolicy, RetryOn,
    RetryPolicy, Strategy,
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

/// Which presets a model's clients can run.
#[derive(Clone, Copy)]
enum Hosts {
    /// Every preset: the model simulates every limiter.
    AnyLimiter,
    /// Presets whose limiter, if any, works for callers that handle many calls at once.
    SharedCallers,
    /// Only presets without a limiter: the model simulates none.
    NoLimiter,
}

impl Hosts {
    const fn runs(self, limiter: Option<LimiterKind>) -> bool {
        match (self, limiter) {
            (_, None) | (Hosts::AnyLimiter, Some(_)) => true,
            (Hosts::SharedCallers, Some(kind)) => !kind.one_process(),
            (Hosts::NoLimiter, Some(_)) => false,
        }
    }

    const fn preset_count(self) -> usize {
        let mut count = 0;
        let mut i = 0;
        while i < presets::ALL.len() {
            count += self.runs(presets::ALL[i].limiter) as usize;
            i += 1;
        }
        count
    }

    const fn limiter_count(self) -> usize {
        let mut count = 0;
        let mut i = 0;
        while i < LimiterKind::ALL.len() {
            count += self.runs(Some(LimiterKind::ALL[i])) as usize;
            i += 1;
        }
        count
    }

    /// Every strategy, then the presets this host runs.
    const fn strategy_names<const N: usize>(self) -> [&'static str; N] {
        let mut names = [""; N];
        let mut n = 0;
        while n < Strategy::NAMES.len() {
            names[n] = Strategy::NAMES[n];
            n += 1;
        }
        let mut i = 0;
        while i < presets::ALL.len() {
            if self.runs(presets::ALL[i].limiter) {
                names[n] = presets::ALL[i].name;
                n += 1;
            }
            i += 1;
        }
        assert!(n == N);
        names
    }

    /// `none`, `off`, `preset`, `budget`, then the shipped limiters this host runs.
    const fn limiter_names<const N: usize>(self) -> [&'static str; N] {
        let mut names = [""; N];
        names[0] = "none";
        names[1] = "off";
        names[2] = "preset";
        names[3] = "budget";
        let mut n = 4;
        let mut i = 0;
        while i < LimiterKind::ALL.len() {
            if self.runs(Some(LimiterKind::ALL[i])) {
                names[n] = LimiterKind::NAMES[i];
                n += 1;
            }
            i += 1;
        }
        assert!(n == N);
        names
    }
}

/// `strategy` in a model that simulates every limiter: every strategy and every preset.
pub(crate) const ANY_POLICY: &[&str] =
    &Hosts::AnyLimiter.strategy_names::<{ Strategy::NAMES.len() + Hosts::AnyLimiter.preset_count() }>();
/// `strategy` where callers handle many calls at once: every preset but those whose limiter counts one process.
pub(crate) const POLICIES_FOR_SHARED_CALLERS: &[&str] =
    &Hosts::SharedCallers.strategy_names::<{ Strategy::NAMES.len() + Hosts::SharedCallers.preset_count() }>();
/// `strategy` in a model without retry limiters: the strategies and the presets that ship no limiter.
pub(crate) const POLICIES_WITHOUT_LIMITER: &[&str] =
    &Hosts::NoLimiter.strategy_names::<{ Strategy::NAMES.len() + Hosts::NoLimiter.preset_count() }>();
/// `limiter` in a model that simulates every limiter.
pub(crate) const ANY_LIMITER: &[&str] = &Hosts::AnyLimiter.limiter_names::<{ 4 + Hosts::AnyLimiter.limiter_count() }>();
/// `limiter` where callers handle many calls at once.
pub(crate) const LIMITERS_FOR_SHARED_CALLERS: &[&str] =
    &Hosts::SharedCallers.limiter_names::<{ 4 + Hosts::SharedCallers.limiter_count() }>();

/// Why a model refuses a preset or limiter that exists (for the message that lists what it accepts).
pub(crate) fn refusal_hint(key: &str, name: &str) -> Option<String> {
    let one_process = "counts the starts of one process, and this model's callers handle many calls at once";
    match key {
        "strategy" => {
            let Some(StrategyChoice::Preset(preset)) = StrategyChoice::from_name(name) else { return None };
            let Some(limiter) = preset.limiter else {
                return Some(format!(
                    "the {name} preset is a whole client policy, and this model takes backoff strategies only"
                ));
            };
            Some(if limiter.one_process() {
                format!("the {name} preset brings the {limiter} limiter, which {one_process}")
            } else {
                format!("the {name} preset brings the {limiter} retry limiter, which this model does not simulate")
            })
        }
        "limiter" => LimiterKind::from_name(name)
            .filter(|kind| kind.one_process())
            .map(|_| format!("the {name} limiter {one_process}")),
        _ => None,
    }
}

/// `strategy`: a backoff formula, or a preset out of `choices`.
pub(crate) const fn strategy(choices: &'static [&'static str], default: &'static str) -> ParamSpec {
    ParamSpec::new(
        Section::Client,
        "strategy",
        ParamKind::Choice(choices),
        ParamDefault::Value(Value::Choice(default)),
        "backoff strategy, or a preset that also fills base, cap, multiplier, max_attempts and brings its limiter (see \
         `retrylab strategies`)",
    )
}

/// `base`, b of the backoff formulas.
pub(crate) const fn base(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(Section::Client, "base", ParamKind::Duration, default, "b: base sleep of the backoff formula (> 0)")
}

/// `cap`, c of the backoff formulas.
pub(crate) const fn cap(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(Section::Client, "cap", ParamKind::Duration, default, "c: no sleep is longer than this (≥ base)")
}

/// `multiplier`, m of the exponential formulas.
pub(crate) const fn multiplier(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(
        Section::Client,
        "multiplier",
        ParamKind::Real { min: 1.0, max: 1e6 },
        default,
        "m: growth factor of the exponential formulas",
    )
}

/// `floor`, f of the formulas that have one.
pub(crate) const FLOOR: ParamSpec = ParamSpec::new(
    Section::Client,
    "floor",
    ParamKind::Duration,
    ParamDefault::Implied(Value::Duration(SimDuration::ZERO)),
    "f: no sleep is shorter than this, in the formulas that name f (tenacity's min)",
);

/// `jitter`, j of the formulas that add one.
pub(crate) const JITTER: ParamSpec = ParamSpec::new(
    Section::Client,
    "jitter",
    ParamKind::Duration,
    ParamDefault::Implied(Value::Duration(SimDuration::ZERO)),
    "j: width of the additive jitter U(0, j), in the formulas that name j (urllib3 backoff_jitter, tenacity \
     jitter, systemd RestartRandomizedDelaySec)",
);

/// `jitter_fraction`, q of the formulas with a proportional jitter.
pub(crate) const JITTER_FRACTION: ParamSpec = ParamSpec::new(
    Section::Client,
    "jitter_fraction",
    ParamKind::Real { min: 0.0, max: 100.0 },
    ParamDefault::Implied(Value::Real(0.0)),
    "q: the sleep grows by U(0, q) times itself, in the formulas that name q (client-go Backoff.Jitter)",
);

/// `steps`, k of the formulas that climb from base to cap in steps.
pub(crate) const STEPS: ParamSpec = ParamSpec::new(
    Section::Client,
    "steps",
    ParamKind::Count { min: 0, max: 1_000_000 },
    ParamDefault::Implied(Value::Count(0)),
    "k: restarts taken to climb from base to cap, in the formulas that name k (systemd RestartSteps)",
);

/// `throttling_base`, the base after a throttling answer (429).
pub(crate) const THROTTLING_BASE: ParamSpec = ParamSpec::new(
    Section::Client,
    "throttling_base",
    ParamKind::Duration,
    ParamDefault::Unset,
    "b after a throttling answer (429), for SDKs that back off longer when throttled (unset: base)",
);

/// The keys that shape a backoff, which a preset fills and an explicitly given value overrides.
pub(crate) const BACKOFF_KEYS: &[&str] =
    &["base", "cap", "multiplier", "max_attempts", "floor", "jitter", "jitter_fraction", "steps", "throttling_base"];

/// `max_attempts`, at most `max`; the help says what unset means only where it can be unset.
pub(crate) const fn max_attempts(max: i64, default: ParamDefault) -> ParamSpec {
    let help = match default {
        ParamDefault::Unset => "attempts allowed per call, the first try included (unset: unlimited)",
        ParamDefault::Required | ParamDefault::Implied(_) | ParamDefault::Value(_) => {
            "attempts allowed per call, the first try included"
        }
    };
    ParamSpec::new(Section::Client, "max_attempts", ParamKind::Count { min: 1, max }, default, help)
}

/// `deadline`.
pub(crate) const DEADLINE: ParamSpec = ParamSpec::new(
    Section::Client,
    "deadline",
    ParamKind::Duration,
    ParamDefault::Unset,
    "give up instead of sleeping past this time since the call began (unset: none)",
);

/// `timeout`, per attempt.
pub(crate) const TIMEOUT: ParamSpec = ParamSpec::new(
    Section::Client,
    "timeout",
    ParamKind::Duration,
    ParamDefault::Unset,
    "per-attempt timeout: an attempt with no answer after this long fails and may be retried (unset: wait for the \
     answer however long it takes)",
);

/// `align`: waits end on the client's clock (see [`crate::policy::ClockPolicy`]).
pub(crate) const ALIGN: ParamSpec = ParamSpec::new(
    Section::Client,
    "align",
    ParamKind::Duration,
    ParamDefault::Unset,
    "P: a retry waits, after its backoff, until the next multiple of this period on the client's own clock (with \
     strategy = \"none\", instead of a backoff); unset: relative waits",
);

/// `align_offset`.
pub(crate) const ALIGN_OFFSET: ParamSpec = ParamSpec::new(
    Section::Client,
    "align_offset",
    ParamKind::Choice(AlignOffset::NAMES),
    ParamDefault::Implied(Value::Choice("none")),
    "with align: aim at the top of the period (none), at a stable offset in [0, P) drawn per client (per-client, \
     like systemd's per-host AccuracySec spread), or at a fresh one per wait (per-attempt: a relative wait uniform over one period)",
);

/// `clock_skew`.
pub(crate) const CLOCK_SKEW: ParamSpec = ParamSpec::new(
    Section::Client,
    "clock_skew",
    ParamKind::Text { syntax: ClockSkew::SYNTAX },
    ParamDefault::Unset,
    "how far each client's clock is off, drawn once per client; it moves clock-aligned waits (and the server \
     model's periodic jobs) (unset: every clock right)",
)
.world();

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

/// `limiter`, one of `choices` or a list of them.
pub(crate) const fn limiter(choices: &'static [&'static str]) -> ParamSpec {
    ParamSpec::new(
        Section::Client,
        "limiter",
        ParamKind::ChoiceList(choices),
        ParamDefault::Value(Value::Choice("none")),
        "retry limiter: none (a preset's own, when `strategy` is one; write preset to run it from a sweep or --set), \
         off (none at all, not even a preset's), budget \
         (retries ≤ budget × first tries), or a limiter as shipped, tuned by its knobs (see `retrylab strategies`); a \
         list stacks them: [\"aws-quota\", \"budget\"] retries only with every one's consent",
    )
}

/// `budget`, the ratio of `limiter = "budget"`.
pub(crate) const fn budget(default: f64) -> ParamSpec {
    ParamSpec::new(
        Section::Client,
        "budget",
        ParamKind::Real { min: 0.0, max: 1.0 },
        ParamDefault::Value(Value::Real(default)),
        "with limiter = \"budget\": retries allowed per first try, 0 to 1",
    )
}

/// `hedge`: whether and when a caller sends a second copy of an attempt.
pub(crate) const HEDGE: ParamSpec = ParamSpec::new(
    Section::Client,
    "hedge",
    ParamKind::Choice(HedgeMode::NAMES),
    ParamDefault::Value(Value::Choice("off")),
    "send a second copy of an attempt still unanswered after `hedge_delay` (fixed) or after the running \
     `hedge_percentile` of the caller's latencies (percentile); the first answer wins, the other copy is cancelled",
);

/// `hedge_delay`.
pub(crate) const fn hedge_delay(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(
        Section::Client,
        "hedge_delay",
        ParamKind::Duration,
        default,
        "fixed hedging: wait this long for an answer before sending the copy",
    )
}

/// `hedge_percentile`.
pub(crate) const HEDGE_PERCENTILE: ParamSpec = ParamSpec::new(
    Section::Client,
    "hedge_percentile",
    ParamKind::Real { min: 0.5, max: 0.9999 },
    ParamDefault::Value(Value::Real(0.95)),
    "percentile hedging: wait for this percentile of the latencies the caller has seen so far",
);

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelKind;
    use crate::time::SimDuration;

    fn server_point(changes: &[(&str, Value)]) -> Point {
        ModelKind::Server.point_with(changes)
    }

    #[test]
    fn every_preset_fills_the_backoff_keys_the_scenario_leaves_unwritten() {
        for preset in presets::ALL {
            let point = server_point(&[
                ("strategy", Value::Choice(preset.name)),
                ("deadline", Value::Duration(SimDuration::from_secs(7))),
            ]);
            let (policy, from) = retry_policy(&point).unwrap_or_else(|e| panic!("{}: {e:?}", preset.name));
            assert_eq!(from, Some(preset));
            assert_eq!(policy.strategy, preset.strategy);
            assert_eq!(policy.backoff, preset.backoff, "{}: the model's default base gives way", preset.name);
            assert_eq!(policy.max_attempts, preset.max_attempts);
            assert_eq!(policy.deadline, Some(SimDuration::from_secs(7)), "the deadline is the client's");
            let limiter = limiter_setting(&point, from).unwrap();
            let expected = LimiterSetting { budget: None, shipped: preset.shipped_limiter().into_iter().collect() };
            assert_eq!(limiter, expected, "{}", preset.name);
        }
    }

    #[test]
    fn a_written_key_overrides_the_presets_value() {
        let point = server_point(&[
            ("strategy", Value::Choice("k8s-crashloop")),
            ("cap", Value::Duration(SimDuration::from_secs(60))),
            ("max_attempts", Value::Count(4)),
        ]);
        let (policy, _) = retry_policy(&point).unwrap();
        let shipped = Preset::lookup("k8s-crashloop").unwrap().backoff;
        assert_eq!(policy.backoff, BackoffParams { cap: SimDuration::from_secs(60), ..shipped });
        assert_eq!(policy.max_attempts, Some(4));
        let too_low = server_point(&[
            ("strategy", Value::Choice("k8s-crashloop")),
            ("cap", Value::Duration(SimDuration::from_secs(1))),
        ]);
        assert_eq!(retry_policy(&too_low).unwrap_err().key, "cap", "checked as the client's own values are");
    }

    #[test]
    fn limiter_off_turns_a_presets_limiter_off_and_the_description_says_whose_limiter_runs() {
        let point = |limiter: &'static str| {
            server_point(&[("strategy", Value::Choice("botocore-standard")), ("limiter", Value::Choice(limiter))])
        };
        let preset = Preset::lookup("botocore-standard");
        assert_eq!(limiter_setting(&point("off"), preset).unwrap(), LimiterSetting::default());
        assert_ne!(limiter_setting(&point("preset"), preset).unwrap(), LimiterSetting::default());
        // Unwritten, `none` runs the preset's limiter; written, it would mislabel the point, so it is refused.
        let unwritten = server_point(&[("strategy", Value::Choice("botocore-standard"))]);
        assert_eq!(limiter_setting(&unwritten, preset).unwrap(), limiter_setting(&point("preset"), preset).unwrap());
        let written = limiter_setting(&point("none"), preset).unwrap_err();
        assert!(written.message.contains("write \"preset\" for that, or \"off\""), "{}", written.message);
        let (policy, _) = retry_policy(&point("preset")).unwrap();
        let text = describe_policy(&point("preset"), &policy, None).unwrap();
        assert_eq!(
            text,
            "full-jitter-from-base b=50ms (1s after throttling) c=20s m=2, 3 attempts, Retry-After aws-bounded, \
             limiter aws-quota-2026 (the preset's)"
        );
        let grpc = server_point(&[("limiter", Value::Choice("grpc")), ("max_tokens", Value::Real(20.0))]);
        let (policy, _) = retry_policy(&grpc).unwrap();
        assert!(
            describe_policy(&grpc, &policy, None).unwrap().ends_with("limiter grpc (max_tokens 20, token_ratio 0.1)")
        );
    }

    #[test]
    fn the_description_says_when_a_client_waits_by_its_clock() {
        let point = server_point(&[
            ("align", Value::Duration(SimDuration::from_secs(10))),
            ("align_offset", Value::Choice("per-client")),
            ("clock_skew", Value::Text("normal 200ms".into())),
        ]);
        let (policy, _) = retry_policy(&point).unwrap();
        let text = describe_policy(&point, &policy, None).unwrap();
        assert!(
            text.ends_with(", waits until the clock's next 10s (per-client offset), clock skew normal 200ms"),
            "{text}"
        );
        let clock = clock_policy(&point, None).unwrap().unwrap();
        assert_eq!(clock.skew, ClockSkew::Normal(2e8));
        assert_eq!(clock.align, Some(Alignment { period: SimDuration::from_secs(10), offset: AlignOffset::PerClient }));
        assert_eq!(clock_policy(&server_point(&[]), None).unwrap(), None, "nothing by the clock: no clocks");
    }

    #[test]
    fn a_plain_strategy_keeps_the_client_values_and_brings_no_limiter() {
        let point = server_point(&[("strategy", Value::Choice("exponential"))]);
        let (policy, preset) = retry_policy(&point).unwrap();
        assert_eq!(policy.strategy, Strategy::Exponential);
        assert_eq!(policy.backoff, BackoffParams::AWS_2015);
        assert_eq!((preset, limiter_setting(&point, preset).unwrap()), (None, LimiterSetting::default()));
    }

    #[test]
    fn knobs_tune_an_explicit_limiter_and_a_presets_own() {
        let tuned = |changes: &[(&str, Value)]| limiter_setting(&server_point(changes), None).unwrap();
        let grpc = |max_tokens: f64| {
            let knobs = LimiterKind::Grpc.knobs().iter();
            let point =
                Point::new(knobs.map(|k| (k, (k.key == "max_tokens").then_some(Value::Real(max_tokens)))).collect());
            LimiterSetting { budget: None, shipped: vec![LimiterKind::Grpc.build(&point).unwrap()] }
        };
        let explicit = tuned(&[("limiter", Value::Choice("grpc")), ("max_tokens", Value::Real(20.0))]);
        assert_eq!(explicit, grpc(20.0));
        let point = server_point(&[("strategy", Value::Choice("grpc")), ("max_tokens", Value::Real(20.0))]);
        assert_eq!(limiter_setting(&point, Preset::lookup("grpc")).unwrap(), grpc(20.0));
        assert_eq!(
            tuned(&[("limiter", Value::Choice("budget"))]),
            LimiterSetting { budget: Some(0.1), shipped: Vec::new() }
        );
    }

    #[test]
    fn the_filtered_lists_hold_what_each_host_runs() {
        assert_eq!(ANY_POLICY.len(), Strategy::NAMES.len() + presets::ALL.len());
        assert!(POLICIES_FOR_SHARED_CALLERS.contains(&"grpc") && !POLICIES_FOR_SHARED_CALLERS.contains(&"systemd"));
        assert!(POLICIES_WITHOUT_LIMITER.contains(&"k8s-crashloop") && !POLICIES_WITHOUT_LIMITER.contains(&"grpc"));
        assert_eq!(ANY_LIMITER.len(), 4 + LimiterKind::ALL.len());
        assert!(!LIMITERS_FOR_SHARED_CALLERS.contains(&"systemd") && LIMITERS_FOR_SHARED_CALLERS.contains(&"envoy"));
        for name in ANY_POLICY {
            assert!(StrategyChoice::from_name(name).is_some(), "{name}");
        }
        for name in ANY_LIMITER {
            assert!(LimiterChoice::from_name(name).is_some(), "{name}");
        }
    }
}
