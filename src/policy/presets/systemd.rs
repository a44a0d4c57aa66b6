use super::Preset;
use crate::policy::limiters::LimiterKind;
use crate::policy::{BackoffParams, PushbackPolicy, RetryAfterPolicy, Strategy};
use crate::time::SimDuration;

/// systemd `Restart=` with its defaults: RestartSec 100 ms between attempts, and the start limit
/// (StartLimitBurst 5 per StartLimitIntervalSec 10 s) refusing the sixth start inside a window. RestartSteps is
/// `steps` and RestartMaxDelaySec `cap` (systemd 254; the delay climbs geometrically from base to cap), and v262's
/// RestartRandomizedDelaySec is `jitter` (`src/core/service.c`, service_restart_usec_next).
pub(super) const PRESET: Preset = Preset {
    name: "systemd",
    strategy: Strategy::GeometricSteps,
    backoff: BackoffParams::new(SimDuration::from_millis(100), SimDuration::from_millis(100), 2.0),
    max_attempts: None,
    limiter: Some(LimiterKind::Systemd),
    throttling_base: None,
    retry_after: RetryAfterPolicy::Honour,
    pushback: PushbackPolicy::Ignore,
    retry_on: None,
    deadline: None,
    source: "systemd src/core/service.c (service_restart_usec_next); systemd.service(5) RestartSec, RestartSteps, \
             RestartMaxDelaySec; systemd.unit(5) StartLimitIntervalSec, StartLimitBurst",
};
