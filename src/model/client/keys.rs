//! One definition of each `[client]` key that models with clients share, so the same key means the same thing
//! in every model (only its default may differ).

use crate::params::{Choice, ParamDefault, ParamKind, ParamSpec, Section, Value};
use crate::policy::{AlignOffset, ClockSkew, HedgeMode};
use crate::time::SimDuration;

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

/// `pushback`: what a client does with a gRPC server's pushback (gRFC A6).
pub(crate) const PUSHBACK: ParamSpec = ParamSpec::new(
    Section::Client,
    "pushback",
    ParamKind::Choice(crate::policy::PushbackPolicy::NAMES),
    ParamDefault::Implied(Value::Choice("ignore")),
    "gRPC pushback (grpc-retry-pushback-ms): ignore, or honour (retry after exactly the pushback and restart the \
     backoff from its base, as gRPC clients do) (unset with a preset: the preset's)",
);

/// `import`: a retry configuration file whose translation fills the client keys the scenario does not write (see
/// src/scenario/imports.rs). Only its translation seeds the runs, so importing a file runs exactly what pasting
/// `retrylab import`'s table runs.
pub(crate) const IMPORT: ParamSpec = ParamSpec::new(
    Section::Client,
    "import",
    ParamKind::Text { syntax: IMPORT_SYNTAX },
    ParamDefault::Unset,
    "a real retry configuration (gRPC service config, Envoy route, AWS profile, …; see `retrylab import`) whose \
     policy fills every client key the scenario does not write",
)
.measurement();

/// How `import` is written.
pub(crate) const IMPORT_SYNTAX: &str = "a path relative to the scenario's folder, with #ENTRY to pick a method, route, profile \
     or instance: \"configs/service-config.json#shop.Cart/Checkout\"";

/// `import_format`: the imported file's format, when it cannot be recognised from the file.
pub(crate) const IMPORT_FORMAT: ParamSpec = ParamSpec::new(
    Section::Client,
    "import_format",
    ParamKind::Choice(crate::import::FORMAT_NAMES),
    ParamDefault::Unset,
    "the format of the `import` file (unset: recognised from the file)",
)
.measurement();

/// `import_method`, `import_route`, `import_profile`, `import_instance`: which entry of the imported file to use,
/// named as its format names them.
pub(crate) const IMPORT_METHOD: ParamSpec =
    import_entry("import_method", "the gRPC method (service/method) or Spring method of the `import` file to use");
pub(crate) const IMPORT_ROUTE: ParamSpec =
    import_entry("import_route", "the Envoy, Istio or Linkerd route of the `import` file to use");
pub(crate) const IMPORT_PROFILE: ParamSpec =
    import_entry("import_profile", "the AWS config profile of the `import` file to use");
pub(crate) const IMPORT_INSTANCE: ParamSpec =
    import_entry("import_instance", "the Resilience4j, Polly or client-go instance of the `import` file to use");

/// `import_version`: releases of the file's consumers to read it as (`retrylab import --version`).
pub(crate) const IMPORT_VERSION: ParamSpec = ParamSpec::new(
    Section::Client,
    "import_version",
    ParamKind::Text { syntax: "NAME=X.Y, comma-separated: \"istio=1.22\", \"grpc-go=1.68, grpc-java=1.79\"" },
    ParamDefault::Unset,
    "releases to read the `import` file as, where a default changed between releases (unset: the newest checked)",
)
.measurement();

/// `import_reading`: how to read a file that can be read two ways (`retrylab import --reading`).
pub(crate) const IMPORT_READING: ParamSpec = ParamSpec::new(
    Section::Client,
    "import_reading",
    ParamKind::Text { syntax: "a reading the file's format has: gapic or channel for a googleapis config" },
    ParamDefault::Unset,
    "how to read an `import` file that can be read two ways (unset: the format's default reading)",
)
.measurement();

/// Every key that says what to import, `import` first.
pub(crate) const IMPORT_KEYS: &[&str] = &[
    "import",
    "import_format",
    "import_method",
    "import_route",
    "import_profile",
    "import_instance",
    "import_version",
    "import_reading",
];

const fn import_entry(key: &'static str, help: &'static str) -> ParamSpec {
    let kind = ParamKind::Text { syntax: "a name as the file writes it" };
    ParamSpec::new(Section::Client, key, kind, ParamDefault::Unset, help).measurement()
}
