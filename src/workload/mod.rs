//! Workloads: who sends requests, and when. Models that send requests share them (the `[workload]` keys):
//!
//! - `burst`: `clients` requests released together at t = 0;
//! - `open`: Poisson arrivals at `rate` per second, or at a rate that follows a `schedule`, until `duration`;
//! - `closed`: `clients` clients that each think for Exp(`think_time`) between requests, until `duration`;
//! - `periodic`: `clients` hosts that each run a job every `period` by their own clock, as systemd timers and cron
//!   do ([`periodic`]), until `duration`.
//!
//! Schedule syntax: comma-separated `TIME=RATE` points (requests per second), the first at `0s`. The rate holds
//! from one point to the next (a step), unless the next point starts with `~`, in which case it ramps linearly to
//! it. After the last point the rate holds. Examples: `"0s=40, 20s=80, 25s=40"` (a 5 s spike),
//! `"0s=40, ~30s=80, ~60s=0"` (a slow ramp up and down).

use rand::{Rng, RngExt};
use rand_distr::{Distribution, Exp};

use crate::params::{ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value, choices};
use crate::time::{SimDuration, SimTime, parse_duration};

choices! {
    /// The `kind` of a workload.
    pub(crate) enum WorkloadKind {
        /// All requests at t = 0.
        Burst = "burst",
        /// Poisson arrivals.
        Open = "open",
        /// Clients with think time.
        Closed = "closed",
        /// Hosts with a job every period, by the clock.
        Periodic = "periodic",
    }
}

impl WorkloadKind {
    /// The `[workload]` keys this kind reads besides `kind`. A key that no kind a scenario runs reads would
    /// change nothing, so it is refused ([`unread_key`]). A burst reads `warmup` only to refuse one above 0.
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            WorkloadKind::Burst => &["clients", "warmup"],
            WorkloadKind::Open => &["rate", "schedule", "duration", "warmup"],
            WorkloadKind::Closed => &["clients", "think_time", "duration", "warmup"],
            WorkloadKind::Periodic => {
                &["clients", "period", "first_at", "accuracy", "randomized_delay", "duration", "warmup"]
            }
        }
    }
}

/// The first of the `written` `[workload]` keys that none of `kinds` (every kind the scenario's points take)
/// reads, with the message that says which kinds do.
pub(crate) fn unread_key<'k>(
    kinds: &[WorkloadKind],
    written: impl IntoIterator<Item = &'k str>,
) -> Option<(&'k str, String)> {
    let key = written.into_iter().find(|key| *key != "kind" && !kinds.iter().any(|kind| kind.keys().contains(key)))?;
    let readers: Vec<String> = <WorkloadKind as crate::params::Choice>::ALL
        .iter()
        .filter(|kind| kind.keys().contains(&key))
        .map(|kind| format!("\"{kind}\""))
        .collect();
    let chosen: Vec<String> = kinds.iter().map(|kind| format!("\"{kind}\"")).collect();
    let reads: Vec<&str> = kinds.iter().flat_map(|kind| kind.keys().iter().copied()).collect();
    let mut read_here: Vec<&str> = Vec::new();
    reads.into_iter().for_each(|key| {
        if !read_here.contains(&key) {
            read_here.push(key)
        }
    });
    Some((
        key,
        format!(
            "belongs to kind = {}; remove it or set that kind (kind = {} reads only {})",
            readers.join(" or "),
            chosen.join(" and "),
            read_here.join(", ")
        ),
    ))
}

mod periodic;

pub(crate) use periodic::PeriodicTimer;

/// The `[workload]` keys, in the order they are hashed into seeds.
pub(crate) const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        Section::Workload,
        "kind",
        ParamKind::Choice(<WorkloadKind as crate::params::Choice>::NAMES),
        ParamDefault::Value(Value::Choice("burst")),
        "burst (all at t = 0), open (Poisson arrivals), closed (clients with think time) or periodic (hosts with a job \
         every period, by the clock: systemd timers, cron)",
    ),
    ParamSpec::new(
        Section::Workload,
        "clients",
        ParamKind::Count { min: 1, max: 100_000_000 },
        ParamDefault::Value(Value::Count(100)),
        "burst: requests released together; closed: clients; periodic: hosts",
    ),
    ParamSpec::new(
        Section::Workload,
        "rate",
        ParamKind::Real { min: 0.0, max: 1e9 },
        ParamDefault::Value(Value::Real(100.0)),
        "open: new requests per second",
    ),
    ParamSpec::new(
        Section::Workload,
        "schedule",
        ParamKind::Text { syntax: SCHEDULE_SYNTAX },
        ParamDefault::Unset,
        "open: a rate that steps or ramps over time, replacing `rate`",
    ),
    ParamSpec::new(
        Section::Workload,
        "think_time",
        ParamKind::Duration,
        ParamDefault::millis(1000),
        "closed: mean think time between requests",
    ),
    ParamSpec::new(
        Section::Workload,
        "duration",
        ParamKind::Duration,
        ParamDefault::millis(10_000),
        "open, closed and periodic: new requests stop at this time",
    )
    .measurement(),
    ParamSpec::new(
        Section::Workload,
        "period",
        ParamKind::Duration,
        ParamDefault::Implied(Value::Duration(SimDuration::from_secs(3600))),
        "periodic: a job every this long on each host's clock (OnCalendar=, a cron schedule)",
    ),
    ParamSpec::new(
        Section::Workload,
        "first_at",
        ParamKind::Duration,
        ParamDefault::Unset,
        "periodic: the first boundary on the hosts' clocks, then every period (unset: one period after the start)",
    ),
    ParamSpec::new(
        Section::Workload,
        "accuracy",
        ParamKind::Duration,
        ParamDefault::Implied(Value::Duration(SimDuration::from_secs(60))),
        "periodic: systemd's AccuracySec (default 1min): each host runs within this window after the boundary, at a \
         position stable per host; 0s: exactly at the boundary, as cron does",
    ),
    ParamSpec::new(
        Section::Workload,
        "randomized_delay",
        ParamKind::Duration,
        ParamDefault::Implied(Value::Duration(SimDuration::ZERO)),
        "periodic: systemd's RandomizedDelaySec: a fresh U[0, this) delay at every run, before the accuracy window",
    ),
    ParamSpec::new(
        Section::Workload,
        "warmup",
        ParamKind::Duration,
        ParamDefault::millis(0),
        "requests sent before this are left out of the metrics",
    )
    .measurement(),
];

/// Who sends requests, and when.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Arrivals {
    Burst { requests: u32 },
    Open { schedule: RateSchedule },
    Closed { clients: u32, think_time: ThinkTime },
    Periodic { hosts: u32, timer: PeriodicTimer },
}

/// A workload as a point describes it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Workload {
    pub arrivals: Arrivals,
    /// New requests stop at this time (open and closed).
    pub duration: SimTime,
    /// Requests sent before this are left out of the metrics.
    pub warmup: SimTime,
}

impl Workload {
    /// The workload the point's [`PARAMS`] describe.
    pub(crate) fn configure(point: &Point) -> Result<Workload, ParamError> {
        let kind = point.choice_of::<WorkloadKind>("kind")?;
        let arrivals = match kind {
            WorkloadKind::Burst => Arrivals::Burst { requests: point.count("clients")? as u32 },
            WorkloadKind::Open => match point.get("schedule")? {
                Some(Value::Text(text)) => Arrivals::Open {
                    schedule: RateSchedule::parse(&text).map_err(|message| ParamError::new("schedule", message))?,
                },
                _ => {
                    let rate = point.real("rate")?;
                    if rate <= 0.0 {
                        return Err(ParamError::new("rate", "an open workload needs rate > 0".into()));
                    }
                    Arrivals::Open { schedule: RateSchedule::constant(rate) }
                }
            },
            WorkloadKind::Closed => Arrivals::Closed {
                clients: point.count("clients")? as u32,
                think_time: ThinkTime::with_mean(point.duration("think_time")?),
            },
            WorkloadKind::Periodic => {
                let period = point.duration("period")?;
                if period.is_zero() {
                    return Err(ParamError::new("period", "a period of 0 would run every job at once, forever".into()));
                }
                let first_at = point.optional_duration("first_at")?.unwrap_or(period);
                let duration = point.duration("duration")?;
                if first_at >= duration {
                    return Err(ParamError::new(
                        "first_at",
                        format!("the first run ({first_at}) must come before `duration` ({duration}), or nothing runs"),
                    ));
                }
                let timer = PeriodicTimer {
                    period,
                    first_at,
                    accuracy: point.duration("accuracy")?,
                    randomized_delay: point.duration("randomized_delay")?,
                };
                Arrivals::Periodic { hosts: point.count("clients")? as u32, timer }
            }
        };
        if kind == WorkloadKind::Open && point.is_written("schedule") && point.is_written("rate") {
            return Err(ParamError::new("rate", "the `schedule` replaces the rate; remove one of the two".into()));
        }
        let duration = SimTime::ZERO + point.duration("duration")?;
        let warmup = SimTime::ZERO + point.duration("warmup")?;
        if !arrivals.is_burst() && warmup >= duration {
            return Err(ParamError::new("warmup", "must be shorter than `duration`".into()));
        }
        if arrivals.is_burst() && warmup > SimTime::ZERO {
            return Err(ParamError::new(
                "warmup",
                "a burst sends every request at t = 0, so a warmup would leave every one out of the metrics".into(),
            ));
        }
        if let Arrivals::Open { schedule } = &arrivals
            && schedule.first_arrival_possible() >= duration
        {
            return Err(ParamError::new(
                "schedule",
                format!(
                    "its rate is 0 until {}, at or after `duration` ({}): nothing would arrive",
                    schedule.first_arrival_possible() - SimTime::ZERO,
                    duration - SimTime::ZERO
                ),
            ));
        }
        Ok(Workload { arrivals, duration, warmup })
    }

    /// Requests alive at once at most: a burst's, the closed clients, the periodic hosts; for an open workload,
    /// every arrival of the run (a bound: finished requests' records are reused).
    pub(crate) fn peak_requests(&self) -> u64 {
        match &self.arrivals {
            Arrivals::Burst { requests } => u64::from(*requests),
            Arrivals::Closed { clients, .. } => u64::from(*clients),
            Arrivals::Periodic { hosts, .. } => u64::from(*hosts),
            Arrivals::Open { schedule } => (schedule.max_rate() * (self.duration - SimTime::ZERO).as_secs_f64()) as u64,
        }
    }

    /// How far the timeline reaches: the arrivals' end, or `None` for a burst (it ends when its clients are done).
    pub(crate) fn horizon(&self) -> Option<SimDuration> {
        (!self.arrivals.is_burst()).then(|| self.duration - SimTime::ZERO)
    }
}

impl Arrivals {
    pub(crate) fn is_burst(&self) -> bool {
        matches!(self, Arrivals::Burst { .. })
    }

    /// The clients (hosts) of a burst, closed or periodic workload; an open one has none of its own.
    pub(crate) fn clients(&self) -> Option<u32> {
        match self {
            Arrivals::Burst { requests: clients }
            | Arrivals::Closed { clients, .. }
            | Arrivals::Periodic { hosts: clients, .. } => Some(*clients),
            Arrivals::Open { .. } => None,
        }
    }

    /// The period of a periodic workload.
    pub(crate) fn period(&self) -> Option<SimDuration> {
        match self {
            Arrivals::Periodic { timer, .. } => Some(timer.period),
            _ => None,
        }
    }
}

/// A closed client's think time between requests: Exp(mean), or none at all for a mean of 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ThinkTime(Option<Exp<f64>>, SimDuration);

impl ThinkTime {
    pub(crate) fn with_mean(mean: SimDuration) -> ThinkTime {
        ThinkTime(Exp::new(1.0 / mean.as_nanos_f64()).ok().filter(|_| !mean.is_zero()), mean)
    }

    /// The mean think time.
    pub(crate) fn mean(&self) -> SimDuration {
        self.1
    }

    /// One draw (none for a mean of 0).
    pub(crate) fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> SimDuration {
        self.0.map_or(SimDuration::ZERO, |exp| SimDuration::from_nanos_f64(exp.sample(rng)))
    }
}

/// Closed clients' think times, each drawn from its own counter (client, request number): a client's n-th think
/// time is the same whatever the policy did before it, so policies compared on common random numbers see the
/// same clients.
#[derive(Clone)]
pub(crate) struct ThinkDraws {
    seed: u64,
    drawn: Vec<u32>,
}

impl ThinkDraws {
    /// Counters for the closed clients of `arrivals` (none for other workloads).
    pub(crate) fn new(seed: u64, arrivals: &Arrivals) -> ThinkDraws {
        let clients = match arrivals {
            Arrivals::Closed { clients, .. } => *clients as usize,
            _ => 0,
        };
        ThinkDraws { seed, drawn: vec![0; clients] }
    }

    /// Draws the next think times from `seed` (each client's count goes on): for a branched run (rare events).
    pub(crate) fn reseed(&mut self, seed: u64) {
        self.seed = seed;
    }

    /// `client`'s next think time.
    pub(crate) fn next(&mut self, think_time: &ThinkTime, client: u32) -> SimDuration {
        let count = &mut self.drawn[client as usize];
        let counter = (u64::from(client) << 32) | u64::from(*count);
        *count += 1;
        think_time.sample(&mut crate::engine::sim_rng(crate::engine::mix64(self.seed ^ crate::engine::mix64(counter))))
    }
}

/// The syntax, for error messages and `retrylab strategies`.
pub(crate) const SCHEDULE_SYNTAX: &str =
    "\"0s=40, 20s=80, 25s=40\": TIME=RATE points from 0s; `~TIME=RATE` ramps to a point";

/// The highest rate a schedule may name, as for the constant `rate`.
const MAX_RATE: f64 = 1e9;
/// The most points a schedule takes.
pub(crate) const MAX_SCHEDULE_POINTS: usize = 10_000;

#[derive(Clone, Copy, Debug, PartialEq)]
struct SchedulePoint {
    at: SimTime,
    rate_per_second: f64,
    /// The rate moves linearly from the previous point to this one.
    ramp: bool,
}

/// A piecewise constant or linear arrival rate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct RateSchedule {
    points: Vec<SchedulePoint>,
}

impl RateSchedule {
    /// A rate that never changes.
    pub(crate) fn constant(rate_per_second: f64) -> Self {
        RateSchedule { points: vec![SchedulePoint { at: SimTime::ZERO, rate_per_second, ramp: false }] }
    }

    /// Parses the schedule syntax; the error says what is wrong and what would be valid.
    pub(crate) fn parse(text: &str) -> Result<Self, String> {
        let mut points: Vec<SchedulePoint> = Vec::new();
        for (index, item) in text.split(',').map(str::trim).enumerate() {
            if index == MAX_SCHEDULE_POINTS {
                return Err(format!(
                    "more than {MAX_SCHEDULE_POINTS} points; a ramp (~TIME=RATE) draws a slope in one"
                ));
            }
            let (ramp, item) = match item.strip_prefix('~') {
                Some(rest) => (true, rest.trim()),
                None => (false, item),
            };
            let Some((time, rate)) = item.split_once('=') else {
                return Err(format!("\"{item}\" is not TIME=RATE; expected {SCHEDULE_SYNTAX}"));
            };
            let at = SimTime::ZERO + parse_duration(time)?;
            let rate_per_second: f64 =
                rate.trim().parse().ok().filter(|r: &f64| (0.0..=MAX_RATE).contains(r)).ok_or_else(|| {
                    format!("rate \"{}\" must be a number from 0 to 1e9 (requests per second)", rate.trim())
                })?;
            if index == 0 && at != SimTime::ZERO {
                return Err(format!(
                    "the schedule must start at 0s, not {time}, so that no time is left without a rate"
                ));
            }
            if index == 0 && ramp {
                return Err("the first point cannot ramp: there is nothing before it".into());
            }
            if let Some(previous) = points.last()
                && at <= previous.at
            {
                return Err(format!(
                    "times must increase: {} comes after {}",
                    at - SimTime::ZERO,
                    previous.at - SimTime::ZERO
                ));
            }
            points.push(SchedulePoint { at, rate_per_second, ramp });
        }
        if points.iter().all(|p| p.rate_per_second == 0.0) {
            return Err("every rate is 0: nothing would ever arrive".into());
        }
        Ok(RateSchedule { points })
    }

    /// The rate in requests per second at `t`.
    pub(crate) fn rate_at(&self, t: SimTime) -> f64 {
        let next = self.points.partition_point(|p| p.at <= t);
        let current = self.points[next.saturating_sub(1)];
        match self.points.get(next) {
            Some(following) if following.ramp => {
                let span = (following.at - current.at).as_nanos_f64();
                let done = (t - current.at).as_nanos_f64() / span;
                current.rate_per_second + (following.rate_per_second - current.rate_per_second) * done
            }
            _ => current.rate_per_second,
        }
    }

    /// The next arrival after `now` of a Poisson process whose rate follows the schedule, or `None` once arrivals
    /// stop at `until`. A Poisson stream at the peak rate, thinned: a candidate at `t` is kept with probability
    /// rate(t) / peak (Lewis & Shedler 1979). Gaps are drawn by inverse transform, Exp(peak) = −ln(1 − U)/peak
    /// with U uniform in [0, 1); a constant rate keeps every candidate and draws once per arrival.
    pub(crate) fn next_arrival_after<R: Rng + ?Sized>(
        &self,
        now: SimTime,
        until: SimTime,
        rng: &mut R,
    ) -> Option<SimTime> {
        let peak = self.max_rate();
        let mut t = now;
        loop {
            let gap = -(1.0 - rng.random::<f64>()).ln() / peak * 1e9;
            t += SimDuration::from_nanos_f64(gap);
            if t >= until {
                return None;
            }
            let rate = self.rate_at(t);
            if rate >= peak || rng.random::<f64>() * peak < rate {
                return Some(t);
            }
        }
    }

    /// The earliest time the rate is above 0 (a ramp rises at once after the point it starts from).
    pub(crate) fn first_arrival_possible(&self) -> SimTime {
        let mut previous: Option<SchedulePoint> = None;
        for point in &self.points {
            if point.rate_per_second > 0.0 {
                return match previous {
                    Some(before) if point.ramp => before.at,
                    _ => point.at,
                };
            }
            previous = Some(*point);
        }
        SimTime::MAX
    }

    /// The rate after the schedule's last point, where it stays.
    pub(crate) fn final_rate(&self) -> f64 {
        self.points.last().map_or(0.0, |p| p.rate_per_second)
    }

    /// The highest rate anywhere (the envelope used to thin a Poisson stream).
    pub(crate) fn max_rate(&self) -> f64 {
        self.points.iter().map(|p| p.rate_per_second).fold(0.0, f64::max)
    }

    /// Expected arrivals in `[0, until)`, integrating the rate.
    #[cfg(test)]
    pub(crate) fn expected_arrivals(&self, until: SimTime) -> f64 {
        let steps = 10_000;
        let width = until.as_nanos() as f64 / steps as f64;
        (0..steps).map(|i| self.rate_at(SimTime::from_nanos(((i as f64 + 0.5) * width) as u64)) * width / 1e9).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_clients_think_times_do_not_depend_on_the_order_clients_ask() {
        let think = ThinkTime::with_mean(SimDuration::from_millis(100));
        let arrivals = Arrivals::Closed { clients: 3, think_time: think };
        let (mut one, mut other) = (ThinkDraws::new(7, &arrivals), ThinkDraws::new(7, &arrivals));
        let in_order: Vec<SimDuration> = [0, 0, 1, 2, 1].iter().map(|&c| one.next(&think, c)).collect();
        let reordered: Vec<SimDuration> = [1, 2, 0, 1, 0].iter().map(|&c| other.next(&think, c)).collect();
        // Client 0's first and second, client 1's first and second, client 2's first: the same in both orders.
        assert_eq!((in_order[0], in_order[1]), (reordered[2], reordered[4]));
        assert_eq!((in_order[2], in_order[4]), (reordered[0], reordered[3]));
        assert_eq!(in_order[3], reordered[1]);
        assert_ne!(in_order[0], in_order[1]);
    }

    fn at(seconds: f64) -> SimTime {
        SimTime::from_nanos((seconds * 1e9) as u64)
    }

    #[test]
    fn steps_hold_until_the_next_point() {
        let spike = RateSchedule::parse("0s=40, 20s=80, 25s=40").unwrap();
        assert_eq!(spike.rate_at(at(0.0)), 40.0);
        assert_eq!(spike.rate_at(at(19.999)), 40.0);
        assert_eq!(spike.rate_at(at(20.0)), 80.0);
        assert_eq!(spike.rate_at(at(24.9)), 80.0);
        assert_eq!(spike.rate_at(at(25.0)), 40.0);
        assert_eq!(spike.rate_at(at(1000.0)), 40.0);
        assert_eq!(spike.max_rate(), 80.0);
        assert!((spike.expected_arrivals(at(60.0)) - (55.0 * 40.0 + 5.0 * 80.0)).abs() < 1.0);
    }

    #[test]
    fn ramps_interpolate_linearly() {
        let ramp = RateSchedule::parse("0s=40, ~30s=80, ~60s=0").unwrap();
        assert_eq!(ramp.rate_at(at(15.0)), 60.0);
        assert_eq!(ramp.rate_at(at(30.0)), 80.0);
        assert_eq!(ramp.rate_at(at(45.0)), 40.0);
        assert_eq!(ramp.rate_at(at(90.0)), 0.0);
    }

    #[test]
    fn the_first_arrival_possible_is_where_the_rate_leaves_0() {
        let at_s = |text: &str| RateSchedule::parse(text).unwrap().first_arrival_possible();
        assert_eq!(at_s("0s=40"), at(0.0));
        assert_eq!(at_s("0s=0, 100s=50"), at(100.0));
        assert_eq!(at_s("0s=0, 30s=0, ~100s=50"), at(30.0), "a ramp rises from its start");
    }

    #[test]
    fn a_key_no_chosen_kind_reads_is_named_with_the_kinds_that_read_it() {
        use WorkloadKind::{Burst, Closed, Open};
        assert_eq!(unread_key(&[Open, Closed], ["kind", "rate", "clients", "think_time"]), None);
        let (key, message) = unread_key(&[Burst], ["clients", "think_time"]).unwrap();
        assert_eq!(key, "think_time");
        assert!(
            message.starts_with("belongs to kind = \"closed\";") && message.contains("reads only clients"),
            "{message}"
        );
        let (key, message) = unread_key(&[Open], ["clients"]).unwrap();
        assert_eq!(key, "clients");
        assert!(message.contains("\"burst\" or \"closed\" or \"periodic\""), "{message}");
    }

    #[test]
    fn bad_schedules_say_why() {
        for (text, expected) in [
            ("10s=40", "must start at 0s"),
            ("0s=40, 20s=-1", "must be a number from 0"),
            ("0s=1e12", "must be a number from 0"),
            ("0s=40, 20s=80, 10s=40", "times must increase"),
            ("0s=40, 20s", "is not TIME=RATE"),
            ("0s=0", "nothing would ever arrive"),
            ("0=40", "has no unit"),
            ("~0s=40", "cannot ramp"),
        ] {
            let error = RateSchedule::parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
        }
    }
}
