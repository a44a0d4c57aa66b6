use super::{Failed, Admission, Outcome, Permit, RetryLimiter, ShippedLimiter};
use crate::params::{ParamError, Point};
use crate::time::{SimDuration, SimTime};

/// systemd's start rate limit: at most `burst` starts (StartLimitBurst, default 5) per `interval`
/// (StartLimitIntervalSec, default 10 s). As in systemd's `ratelimit_below`, the interval is a fixed window that
/// opens at the first start after the previous window ended; a start more than `interval` after the window
/// opened opens a new one. A start beyond the burst inside a window is refused: the attempt fails locally (the
/// unit is "failed"). Every attempt counts as a start, first tries included.
///
/// Convention: here a refused unit may start again once the window has passed, as it would after
/// `systemctl reset-failed` or a manual start; systemd itself does not restart a unit that hit the limit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StartLimit {
    burst: u32,
    interval: SimDuration,
    window_start: Option<SimTime>,
    starts: u32,
}

impl StartLimit {
    /// systemd's defaults: 5 starts per 10 s.
    pub fn systemd_default() -> Self {
        Self::new(5, SimDuration::from_secs(10))
    }

    pub fn new(burst: u32, interval: SimDuration) -> Self {
        StartLimit { burst, interval, window_start: None, starts: 0 }
    }
}

impl RetryLimiter for StartLimit {
    fn acquire_retry(&mut self, _: SimTime, _: Failed) -> Option<Permit> {
        Some(Permit::costing(0.0))
    }

    fn record(&mut self, _: SimTime, _: Outcome) {}

    fn admit(&mut self, now: SimTime, _: f64) -> Admission {
        match self.window_start {
            Some(start) if now - start <= self.interval => {}
            _ => {
                self.window_start = Some(now);
                self.starts = 0;
            }
        }
        if self.starts < self.burst {
            self.starts += 1;
            Admission::Send
        } else {
            Admission::Reject
        }
    }
}

/// `limiter = "systemd"`.
pub struct Systemd;

impl ShippedLimiter for Systemd {
    type State = StartLimit;
    const NAME: &'static str = "systemd";
    const ABOUT: &'static str = "systemd's start limit: at most 5 starts per 10 s; a start beyond it fails locally";
    const SOURCE: &'static str = "systemd.unit(5) StartLimitIntervalSec, StartLimitBurst";
    const ONE_PROCESS: bool = true;

    fn build(_: &Point) -> Result<StartLimit, ParamError> {
        Ok(StartLimit::systemd_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn five_starts_per_ten_seconds_then_refusal_until_the_window_passes() {
        let mut limit = StartLimit::systemd_default();
        let at = |ms: u64| SimTime::ZERO + SimDuration::from_millis(ms);
        // RestartSec = 100 ms: starts at 0, 0.1, …, 0.4 s are allowed, the sixth at 0.5 s is refused.
        for i in 0..5 {
            assert_eq!(limit.admit(at(100 * i), 0.0), Admission::Send, "start {}", i + 1);
        }
        assert_eq!(limit.admit(at(500), 0.0), Admission::Reject);
        assert_eq!(limit.admit(at(10_000), 0.0), Admission::Reject, "10 s after the first start is still inside");
        assert_eq!(limit.admit(at(10_001), 0.0), Admission::Send, "a new window opens");
        for i in 0..4 {
            assert_eq!(limit.admit(at(10_002 + i), 0.0), Admission::Send);
        }
        assert_eq!(limit.admit(at(20_001), 0.0), Admission::Reject);
        assert_eq!(limit.admit(at(20_002), 0.0), Admission::Send);
    }
}
