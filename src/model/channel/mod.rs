//! A shared channel where simultaneous senders destroy each other: pure and slotted ALOHA, Ethernet CSMA/CD with
//! truncated binary exponential backoff, and the "ideal" contention of Metcalfe & Boggs (1976).
//!
//! Time is counted in slots (`slot_time`; for ALOHA a slot is one frame time). Populations:
//! - `infinite`: transmissions form a Poisson stream of `load` (G) per slot, the textbook assumption (ALOHA);
//! - `saturated`: `stations` always have a frame. Slotted ALOHA stations send with probability p = G/N per slot,
//!   `ideal` stations with p = 1/N per contention slot: each slot draws the number of senders K ~ Binomial(N, p)
//!   and, only when K = 1, the sender, uniform over the N stations (the same law as N independent coin flips, in
//!   O(1) per slot); Ethernet stations back off with the `[client]` strategy (802.3: `ethernet-beb`, 16 attempts);
//! - `poisson`: new frames arrive at `arrival_rate` per slot over all stations, each station queues its own and
//!   backs off after a collision with the `[client]` strategy (slotted ALOHA);
//! - `bernoulli`: the same stations, each receiving a frame with probability `arrival_rate`/N per slot, the
//!   model of Håstad, Leighton & Rogoff (1996) (`arrivals.rs`); both queued populations report whether their
//!   backlog kept growing (`stability.rs`).
//!
//! Ethernet at 10 Mb/s: a frame of B bytes takes 8B/10⁷ s; a collision occupies one slot (51.2 µs, detection
//! and the 32-bit jam) and every transmission is followed by the 96-bit inter-frame gap (9.6 µs). Stations are
//! 1-persistent: whoever is ready when the channel goes idle sends.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::trace::{MAX_TRACE_SPANS, Span};
use rand::RngExt;
use rand_distr::{Binomial, Distribution, Poisson};

use super::{Footprint, RunOutput, RunSettings};
use super::client;

mod arrivals;
mod footprint;
mod stability;
use crate::params::{Choice, choices, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section};
use super::SimModel;
use crate::params::Value;
use crate::engine::{ABORT_POLL_EVENTS, RunLimit, RunSeeds, SimRng, Stream};
use crate::time::{SimDuration, SimTime};
use crate::metrics::{BucketCounter, BucketMax, LatencyHistogram, lay_out_timeline};
use crate::policy::{
    BackoffMemory, BackoffParams, FailureKind, RetryAfterPolicy, RetryDecision, RetryPolicy, Strategy,
};

/// The shared-channel model (scenario `kind = "channel"`).
pub(crate) struct Channel;

/// 10 Mb/s: 100 ns per bit.
const NANOS_PER_BIT: u64 = 100;
/// 802.3 inter-frame gap: 96 bit times.
const INTER_FRAME_GAP: SimDuration = SimDuration::from_nanos(96 * NANOS_PER_BIT);

const CHANNEL_PARAMS: &[ParamSpec] = &[
    ParamSpec::new(Section::Model, "protocol", ParamKind::Choice(Protocol::NAMES), ParamDefault::Value(Value::Choice("slotted-aloha")), "pure-aloha, slotted-aloha, ethernet (CSMA/CD) or ideal (Metcalfe & Boggs contention)"),
    ParamSpec::new(Section::Model, "population", ParamKind::Choice(Population::NAMES), ParamDefault::Value(Value::Choice("infinite")), "infinite (Poisson attempts at G per slot), saturated (stations always ready), poisson or bernoulli arrivals to queued stations"),
    ParamSpec::new(Section::Model, "load", ParamKind::Real { min: 0.0, max: 1000.0 }, ParamDefault::Value(Value::Real(1.0)), "G: attempts per slot (infinite), or N·p for saturated slotted ALOHA (> 0)"),
    ParamSpec::new(Section::Model, "stations", ParamKind::Count { min: 1, max: 1_000_000 }, ParamDefault::Value(Value::Count(2)), "stations sharing the channel (saturated, poisson and bernoulli populations)"),
    ParamSpec::new(Section::Model, "arrival_rate", ParamKind::Real { min: 0.0, max: 1000.0 }, ParamDefault::Value(Value::Real(0.5)), "poisson and bernoulli: new frames per slot, all stations together (bernoulli: at most N)"),
    ParamSpec::new(Section::Model, "queue_limit", ParamKind::Count { min: 1, max: 100_000_000 }, ParamDefault::Unset, "poisson and bernoulli: frames a station can hold; more are dropped (unset: unlimited)"),
    ParamSpec::new(Section::Model, "slot_time", ParamKind::Duration, ParamDefault::Value(Value::Duration(SimDuration::from_nanos(51_200))), "the slot (ALOHA: one frame time; 802.3 at 10 Mb/s: 512 bit times = 51.2us)"),
    ParamSpec::new(Section::Model, "frame_bytes", ParamKind::Count { min: 64, max: 1518 }, ParamDefault::Value(Value::Count(512)), "Ethernet and ideal: frame size, 64 to 1518 bytes"),
    ParamSpec::new(Section::Model, "slots", ParamKind::Count { min: 1, max: 10_000_000_000 }, ParamDefault::Value(Value::Count(100_000)), "run length in slots").measurement(),
];

/// `[client]`: a station's backoff after a collision, in slots (the slot is the strategy's base, so there is no
/// `base`); the channel runs strategies only, not presets. `multiplier` came later: hashed only when set.
const CHANNEL_CLIENT_PARAMS: &[ParamSpec] = &[
    client::strategy(Strategy::NAMES, "ethernet-beb"),
    client::max_attempts(u32::MAX as i64, ParamDefault::Value(Value::Count(16))),
    client::cap(ParamDefault::Value(Value::Duration(SimDuration::from_secs(3600)))),
    client::multiplier(ParamDefault::Implied(Value::Real(2.0))),
];

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        THROUGHPUT = "throughput" (Fraction): "S: fraction of time carrying successful frames",
        OFFERED_LOAD = "offered_load" (Ratio): "G: transmission attempts per slot (ALOHA) or per frame time",
        COLLISIONS = "collisions" (Ratio): "collisions per successful frame",
        SUCCESSES = "successes" (Count): "frames delivered",
        ATTEMPTS = "attempts" (Count): "transmissions started",
        DROPS = "drops" (Count): "frames dropped: attempts exhausted or a full station queue",
        ACCESS_DELAY_P50_MS = "access_delay_p50_ms" (Milliseconds): "median time from a frame's turn (or arrival) to its delivery",
        ACCESS_DELAY_P99_MS = "access_delay_p99_ms" (Milliseconds): "99th percentile of access delay",
        FAIRNESS = "fairness" (Fraction): "Jain's index of the stations' successes: 1 = equal shares, 1/N = one hog",
        TOP_SHARE = "top_share" (Fraction): "the busiest station's share of each timeline bucket's successes, averaged over busy buckets",
        FIRST_SUCCESS_COLLISIONS = "first_success_collisions" (Count): "collisions before the first success of the run",
        BACKLOG_MEAN = "backlog_mean" (Count): "frames waiting at queued stations (poisson, bernoulli), averaged over slots",
        EVENTS = "events" (Count): "channel events: slots, transmissions or idle-to-busy changes",
        BACKLOG_SLOPE = "backlog_slope" (PerSlot): "frames waiting at queued stations: least-squares slope over the run's second half",
        GROWING = "growing" (Outcome): "1 if the backlog grew: the fitted rise over the run's second half passed 2% of the frames arriving in it",
    }
}

/// The timeline's series: counted per bucket, then the busiest station's share of the bucket's successes (1
/// when one station hogs the channel) and the backlog.
pub(super) mod series {
    series! {
        SUCCESSES = "successes": "frames delivered in the bucket",
        COLLISIONS = "collisions": "collisions in the bucket",
        TOP_SHARE = "top_share": "the busiest station's share of the bucket's successes",
        BACKLOG = "backlog": "the most frames waiting at queued stations during the bucket",
    }
    /// The series counted per bucket come first.
    pub(crate) const COUNTED: usize = TOP_SHARE;
}

choices! {
    /// Who may talk when.
    pub(crate) enum Protocol {
        PureAloha = "pure-aloha",
        SlottedAloha = "slotted-aloha",
        /// CSMA/CD.
        Ethernet = "ethernet",
        /// Metcalfe & Boggs contention.
        Ideal = "ideal",
    }
}

choices! {
    /// Who has frames to send.
    pub(crate) enum Population {
        /// Poisson attempts at G per slot, from infinitely many stations.
        Infinite = "infinite",
        /// Stations that always have a frame ready.
        Saturated = "saturated",
        /// Poisson arrivals of frames to `stations` queues.
        Poisson = "poisson",
        /// Each of the `stations` queues receives a frame with probability `arrival_rate`/N per slot.
        Bernoulli = "bernoulli",
    }
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct ChannelConfig {
    pub protocol: Protocol,
    pub population: Population,
    pub load: f64,
    pub stations: u32,
    pub arrival_rate: f64,
    pub queue_limit: Option<u32>,
    pub slot: SimDuration,
    /// Ethernet and ideal: one frame's transmission time at 10 Mb/s.
    pub frame: SimDuration,
    pub slots: u64,
    pub retry: RetryPolicy,
}

impl SimModel for Channel {
    const KIND: &'static str = "channel";
    const ABOUT: &'static str = "a shared channel: pure and slotted ALOHA, Ethernet CSMA/CD with backoff, ideal contention";
    const PARAMS: &'static [&'static [ParamSpec]] = &[CHANNEL_PARAMS, CHANNEL_CLIENT_PARAMS];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["throughput", "collisions"];

    type Config = ChannelConfig;

    fn configure(point: &Point) -> Result<ChannelConfig, ParamError> {
        let protocol = point.choice_of::<Protocol>("protocol")?;
        let population = point.choice_of::<Population>("population")?;
        let supported = matches!(
            (protocol, population),
            (Protocol::PureAloha, Population::Infinite)
                | (Protocol::SlottedAloha, _)
                | (Protocol::Ethernet | Protocol::Ideal, Population::Saturated)
        );
        if !supported {
            return Err(ParamError::new("population", "pure-aloha takes the infinite population; ethernet and ideal take saturated stations".into()));
        }
        let load = point.real("load")?;
        if load <= 0.0 {
            return Err(ParamError::new("load", "G must be greater than 0".into()));
        }
        let stations = point.count("stations")? as u32;
        if protocol == Protocol::SlottedAloha && population == Population::Saturated && load > f64::from(stations) {
            return Err(ParamError::new("load", format!("saturated stations send with probability G/N, so G may not exceed N = {stations}")));
        }
        let arrival_rate = point.real("arrival_rate")?;
        if population == Population::Bernoulli && arrival_rate > f64::from(stations) {
            return Err(ParamError::new("arrival_rate", format!("bernoulli stations each receive a frame with probability arrival_rate/N, so it may not exceed N = {stations}")));
        }
        let slot = point.duration("slot_time")?;
        if slot.is_zero() {
            return Err(ParamError::new("slot_time", "must be longer than 0".into()));
        }
        let frame = SimDuration::from_nanos(point.count("frame_bytes")? as u64 * 8 * NANOS_PER_BIT);
        let strategy = point.choice_of::<Strategy>("strategy")?;
        let cap = point.duration("cap")?;
        if cap < slot {
            return Err(ParamError::new("cap", format!("cap ({cap}) must be at least one slot ({slot})")));
        }
        Ok(ChannelConfig {
            protocol,
            population,
            load,
            stations,
            arrival_rate,
            queue_limit: point.optional_count("queue_limit")?.map(|n| n as u32),
            slot,
            frame,
            slots: point.count("slots")? as u64,
            retry: RetryPolicy {
                strategy,
                backoff: BackoffParams::new(slot, cap, point.real("multiplier")?),
                max_attempts: Some(point.count("max_attempts")? as u32),
                deadline: None,
                retry_after: RetryAfterPolicy::Ignore,
                pushback: crate::policy::PushbackPolicy::Ignore,
                throttling_base: None,
            },
        })
    }

    fn trace_owner(_: &ChannelConfig) -> &'static str {
        "station"
    }

    /// A station's state (ready time, backoff memory, counters: about 64 bytes) and its place in the queue of
    /// waiting stations; the timeline reaches `slots` slots.
    fn footprint(config: &ChannelConfig) -> Footprint {
        footprint::footprint(config)
    }

    fn simulate(config: &ChannelConfig, run: RunSettings) -> RunOutput {
        if run.trace { simulate_with::<true>(config, run) } else { simulate_with::<false>(config, run) }
    }

    fn theory(config: &ChannelConfig, metric: &str, x_key: &str, x: f64) -> Option<f64> {
        if metric != "throughput" {
            return None;
        }
        match (config.protocol, config.population, x_key) {
            (Protocol::PureAloha, _, "load") => Some(x * (-2.0 * x).exp()),
            (Protocol::SlottedAloha, Population::Infinite, "load") => Some(x * (-x).exp()),
            (Protocol::SlottedAloha, Population::Saturated, "load") => {
                let n = f64::from(config.stations);
                Some(x * (1.0 - x / n).powf(n - 1.0))
            }
            (Protocol::Ideal, _, "stations") => Some(metcalfe_boggs_efficiency(x, config.frame, config.slot)),
            _ => None,
        }
    }
}

/// Metcalfe & Boggs (1976): with Q stations each sending with probability 1/Q per contention slot,
/// A = (1 − 1/Q)^(Q−1), W = (1 − A)/A slots of contention per packet, E = P/(P + W·T).
pub(crate) fn metcalfe_boggs_efficiency(q: f64, frame: SimDuration, slot: SimDuration) -> f64 {
    let acquire = if q <= 1.0 { 1.0 } else { (1.0 - 1.0 / q).powf(q - 1.0) };
    let wait_slots = (1.0 - acquire) / acquire;
    let packet = frame.as_nanos_f64();
    packet / (packet + wait_slots * slot.as_nanos_f64())
}

/// One replicate; `TRACE` is a compile-time switch so that untraced runs carry no tracing code at all.
fn simulate_with<const TRACE: bool>(config: &ChannelConfig, run: RunSettings) -> RunOutput {
    let mut sim = ChannelRun::<TRACE>::new(config, run.seeds, run.bucket, run.limit());
    if TRACE {
        sim.spans = Some(Vec::new());
    }
    match (config.protocol, config.population) {
        (Protocol::PureAloha, _) => sim.pure_aloha(),
        (Protocol::SlottedAloha, Population::Infinite) => sim.slotted_infinite(),
        (Protocol::SlottedAloha, Population::Saturated) => sim.slotted_saturated(),
        (Protocol::SlottedAloha, Population::Poisson | Population::Bernoulli) => sim.slotted_stations(),
        (Protocol::Ethernet, _) => sim.ethernet(),
        (Protocol::Ideal, _) => sim.ideal(),
    }
    sim.finish()
}

/// The state of one replicate.
struct ChannelRun<'a, const TRACE: bool> {
    config: &'a ChannelConfig,
    /// Who sends when (the world's stream: new frames, and how many saturated stations send and which one).
    arrivals: SimRng,
    /// Traces only: which stations took part in a collision of slotted ALOHA or ideal contention, from the
    /// arrivals stream jumped 2^128 draws ahead, so that a traced run draws what the untraced one does.
    trace_identities: SimRng,
    /// Traces only: the colliding stations of the current slot (reused, so a slot allocates nothing).
    colliders: Vec<u32>,
    /// Backoff draws (the policy's stream).
    jitter: SimRng,
    busy_nanos: f64,
    end: SimTime,
    attempts: u64,
    successes: u64,
    collisions: u64,
    drops: u64,
    first_success_collisions: Option<u64>,
    events: u64,
    /// The event cap and the process's stop signal.
    limit: RunLimit,
    truncated: bool,
    backlog_slot_sum: f64,
    /// Queued populations: the backlog's trend over the second half of the slots.
    trend: stability::BacklogTrend,
    per_station: Vec<u64>,
    access_delay: LatencyHistogram,
    timeline: [BucketCounter; series::COUNTED],
    backlog: BucketMax,
    /// Per station, successes in the current timeline bucket; flushed into `top_share` when the bucket ends.
    bucket_successes: Vec<u32>,
    current_bucket: u64,
    top_share: Vec<f64>,
    /// One span per transmission, when tracing.
    spans: Option<Vec<Span>>,
}

impl<'a, const TRACE: bool> ChannelRun<'a, TRACE> {
    fn new(config: &'a ChannelConfig, seeds: RunSeeds, bucket: SimDuration, limit: RunLimit) -> Self {
        ChannelRun {
            config,
            arrivals: seeds.stream(Stream::Arrivals),
            trace_identities: {
                let mut rng = seeds.stream(Stream::Arrivals);
                rng.jump();
                rng
            },
            colliders: Vec::new(),
            jitter: seeds.stream(Stream::Jitter),
            busy_nanos: 0.0,
            end: SimTime::ZERO,
            attempts: 0,
            successes: 0,
            collisions: 0,
            drops: 0,
            first_success_collisions: None,
            events: 0,
            limit,
            truncated: false,
            backlog_slot_sum: 0.0,
            trend: stability::BacklogTrend::new(config.slots),
            per_station: vec![0; config.stations as usize],
            access_delay: LatencyHistogram::default(),
            timeline: std::array::from_fn(|_| BucketCounter::new(bucket)),
            backlog: BucketMax::new(bucket),
            bucket_successes: vec![0; config.stations as usize],
            current_bucket: 0,
            top_share: Vec::new(),
            spans: None,
        }
    }

    /// Saturated stations' slot: K ~ Binomial(N, p) senders and, when K = 1, the sender, uniform over the N
    /// stations (given one sender, each station is as likely as any other); both from the arrivals stream.
    fn draw_senders(&mut self, senders: &Binomial) -> (u64, Option<u32>) {
        let sent = senders.sample(&mut self.arrivals);
        let sender = (sent == 1).then(|| self.arrivals.random_range(0..self.config.stations));
        (sent, sender)
    }

    /// Traces one slot of saturated stations: the lone sender for `alone`, or `sent` distinct stations, uniform
    /// among the N (Floyd's sampling without replacement), colliding for `collided`, in station order.
    fn trace_slot(&mut self, at: SimTime, sent: u64, sender: Option<u32>, alone: SimDuration, collided: SimDuration) {
        if !TRACE || self.spans.as_ref().is_none_or(|spans| spans.len() >= MAX_TRACE_SPANS) {
            return;
        }
        if let Some(station) = sender {
            self.trace(u64::from(station), at, alone, 1, true, SimDuration::ZERO);
            return;
        }
        let mut colliders = std::mem::take(&mut self.colliders);
        colliders.clear();
        let n = self.config.stations;
        let k = u32::try_from(sent).expect("at most N stations send");
        for top in n - k..n {
            let pick = self.trace_identities.random_range(0..=top);
            colliders.push(if colliders.contains(&pick) { top } else { pick });
        }
        colliders.sort_unstable();
        for &station in &colliders {
            self.trace(u64::from(station), at, collided, 1, false, SimDuration::ZERO);
        }
        self.colliders = colliders;
    }

    /// Records one transmission of `owner` (a station, or for an infinite population the transmission itself)
    /// when tracing.
    #[inline]
    fn trace(&mut self, owner: u64, start: SimTime, length: SimDuration, attempt: u32, sent_alone: bool, slept: SimDuration) {
        if TRACE && let Some(spans) = self.spans.as_mut().filter(|spans| spans.len() < MAX_TRACE_SPANS) {
            let (outcome, status) = if sent_alone { ("success", 200) } else { ("collision", 0) };
            let owner = owner.min(u64::from(u32::MAX)) as u32;
            let end = start + length;
            spans.push(Span { owner, layer: 0, start, end, attempt, outcome, status, slept, hedge: false, id: 0, parent: 0, at_server: None });
        }
    }

    /// Counts one event; true once the run has used up its events or, looked at every [`ABORT_POLL_EVENTS`]
    /// events, its abort flag is up (it is then marked truncated).
    #[inline]
    fn out_of_events(&mut self) -> bool {
        self.events += 1;
        if self.events > self.limit.max_events {
            self.events = self.limit.max_events;
            self.truncated = true;
        } else if self.events.is_multiple_of(ABORT_POLL_EVENTS) && self.limit.aborted() {
            self.truncated = true;
        }
        self.truncated
    }

    /// Closes timeline buckets up to the one holding `at`, recording each one's top station share.
    fn flush_share(&mut self, at: SimTime) {
        let width = self.timeline[series::SUCCESSES].width().as_nanos();
        let bucket = (at.as_nanos() / width).min(crate::metrics::MAX_BUCKETS as u64);
        while self.current_bucket < bucket {
            let total: u32 = self.bucket_successes.iter().sum();
            let top = self.bucket_successes.iter().copied().max().unwrap_or(0);
            self.top_share.push(if total == 0 { 0.0 } else { f64::from(top) / f64::from(total) });
            self.bucket_successes.iter_mut().for_each(|count| *count = 0);
            self.current_bucket += 1;
        }
    }

    fn slot_start(&self, slot: u64) -> SimTime {
        SimTime::from_nanos(slot.saturating_mul(self.config.slot.as_nanos()))
    }

    fn success(&mut self, at: SimTime, station: Option<u32>, carried: SimDuration) {
        self.successes += 1;
        self.busy_nanos += carried.as_nanos_f64();
        self.first_success_collisions.get_or_insert(self.collisions);
        self.timeline[series::SUCCESSES].record(at);
        if let Some(station) = station {
            self.per_station[station as usize] += 1;
            self.flush_share(at);
            self.bucket_successes[station as usize] += 1;
        }
    }

    fn collision(&mut self, at: SimTime) {
        self.collisions += 1;
        self.timeline[series::COLLISIONS].record(at);
    }

    /// Pure ALOHA, infinite population: transmissions start as a Poisson stream of G per frame time T; one
    /// succeeds iff no other starts within T before or after it (a vulnerable period of 2T).
    fn pure_aloha(&mut self) {
        let frame = self.config.slot.as_nanos_f64();
        let horizon = self.config.slots as f64 * frame;
        let rate = self.config.load / frame;
        let next_start = |rng: &mut SimRng, from: f64| from - (1.0 - rng.random::<f64>()).ln() / rate;
        let (mut previous, mut current) = (f64::NEG_INFINITY, next_start(&mut self.arrivals, 0.0));
        let mut in_overlap = false;
        while current < horizon {
            if self.out_of_events() {
                break;
            }
            let next = next_start(&mut self.arrivals, current);
            self.attempts += 1;
            let at = SimTime::from_nanos(current as u64);
            let clear_before = current - previous >= frame;
            let clear_after = next - current >= frame;
            self.trace(self.attempts, at, self.config.slot, 1, clear_before && clear_after, SimDuration::ZERO);
            if clear_before && clear_after {
                self.success(at, None, self.config.slot);
            }
            // A collision episode is a chain of overlapping transmissions; count it once, when it starts.
            if !clear_after && !in_overlap {
                self.collision(at);
            }
            in_overlap = !clear_after;
            (previous, current) = (current, next);
        }
        self.end = SimTime::from_nanos(horizon.min(current) as u64);
    }

    /// Slotted ALOHA, infinite population: each slot carries K ~ Poisson(G) transmissions and succeeds iff K = 1.
    fn slotted_infinite(&mut self) {
        let arrivals = Poisson::new(self.config.load).expect("load > 0 is validated");
        for slot in 0..self.config.slots {
            if self.out_of_events() {
                break;
            }
            let at = self.slot_start(slot);
            let sent = arrivals.sample(&mut self.arrivals) as u64;
            if TRACE {
                for k in 0..sent {
                    self.trace(self.attempts + k, at, self.config.slot, 1, sent == 1, SimDuration::ZERO);
                }
            }
            self.attempts += sent;
            match sent {
                0 => {}
                1 => self.success(at, None, self.config.slot),
                _ => self.collision(at),
            }
        }
        // One event per slot: a truncated run ends at the last slot it simulated.
        self.end = self.slot_start(self.events.min(self.config.slots));
    }

    /// Slotted ALOHA with N saturated stations, each sending with probability p = G/N in every slot: K ~
    /// Binomial(N, G/N) senders per slot, a success iff K = 1.
    fn slotted_saturated(&mut self) {
        let p = self.config.load / f64::from(self.config.stations);
        let senders = Binomial::new(u64::from(self.config.stations), p).expect("0 < G ≤ N is validated");
        for slot in 0..self.config.slots {
            if self.out_of_events() {
                break;
            }
            let at = self.slot_start(slot);
            let (sent, sender) = self.draw_senders(&senders);
            self.trace_slot(at, sent, sender, self.config.slot, self.config.slot);
            self.attempts += sent;
            match (sent, sender) {
                (_, Some(station)) => self.success(at, Some(station), self.config.slot),
                (0, None) => {}
                _ => self.collision(at),
            }
        }
        // One event per slot: a truncated run ends at the last slot it simulated.
        self.end = self.slot_start(self.events.min(self.config.slots));
    }

    /// Slotted ALOHA with N stations, Poisson or Bernoulli arrivals and per-station queues. A frame that arrives
    /// at an idle station is sent in its arrival slot; a station whose frame collided in slot s waits
    /// W = `floor(backoff / slot)` slots (from the `[client]` strategy) and sends in slot s + 1 + W, so a wait of 0
    /// sends in the next slot (the `hlr-*` strategies' W ~ Geometric(1/f) on {0, 1, …} is their per-slot coin).
    /// The stations with frames wait in a binary heap keyed by the slot they may send in, so a slot costs
    /// O(k log N) for k senders, not a scan of all N; the senders act in station order, as a scan's would.
    fn slotted_stations(&mut self) {
        let n = self.config.stations as usize;
        let mut queues: Vec<std::collections::VecDeque<u64>> = vec![std::collections::VecDeque::new(); n];
        let mut failed = vec![0_u32; n];
        let mut ready_slot = vec![0_u64; n];
        let mut memory = vec![BackoffMemory::default(); n];
        let bernoulli = self.config.population == Population::Bernoulli;
        let arrivals = arrivals::NewFrames::new(bernoulli, self.config.arrival_rate, self.config.stations);
        let mut arrived = Vec::new();
        let slot_nanos = self.config.slot.as_nanos();
        let mut backlog = 0_u64;
        let mut senders = Vec::with_capacity(n);
        // (ready slot, station) of every station with a frame queued, once each.
        let mut waiting: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::with_capacity(n);
        for slot in 0..self.config.slots {
            if self.out_of_events() {
                break;
            }
            let at = self.slot_start(slot);
            arrivals.draw(&mut self.arrivals, n, &mut arrived);
            for &station in &arrived {
                if self.config.queue_limit.is_some_and(|limit| queues[station].len() >= limit as usize) {
                    self.drops += 1;
                } else {
                    if queues[station].is_empty() {
                        ready_slot[station] = slot;
                        waiting.push(Reverse((slot, station)));
                    }
                    queues[station].push_back(slot);
                    backlog += 1;
                }
            }
            senders.clear();
            while let Some(&Reverse((ready, station))) = waiting.peek() {
                if ready > slot {
                    break;
                }
                waiting.pop();
                senders.push(station);
            }
            senders.sort_unstable();
            if TRACE {
                for &station in &senders {
                    let attempt = failed[station] + 1;
                    self.trace(station as u64, at, self.config.slot, attempt, senders.len() == 1, SimDuration::ZERO);
                }
            }
            self.attempts += senders.len() as u64;
            if senders.len() == 1 {
                let station = senders[0];
                let arrived = queues[station].pop_front().unwrap_or(slot);
                backlog -= 1;
                failed[station] = 0;
                ready_slot[station] = slot + 1;
                if !queues[station].is_empty() {
                    waiting.push(Reverse((slot + 1, station)));
                }
                self.access_delay.record(SimDuration::from_nanos((slot + 1 - arrived) * slot_nanos));
                self.success(at, Some(station as u32), self.config.slot);
            } else if senders.len() > 1 {
                self.collision(at);
                for &station in &senders {
                    failed[station] += 1;
                    let decision = self.config.retry.after_failure(
                        failed[station],
                        SimDuration::ZERO,
                        (FailureKind::Transient, None),
                        &mut memory[station],
                        &mut self.jitter,
                    );
                    match decision {
                        RetryDecision::RetryAfter(sleep) => ready_slot[station] = slot + 1 + sleep.as_nanos() / slot_nanos,
                        RetryDecision::GiveUp(_) => {
                            queues[station].pop_front();
                            backlog -= 1;
                            self.drops += 1;
                            failed[station] = 0;
                            ready_slot[station] = slot + 1;
                        }
                    }
                    if !queues[station].is_empty() {
                        waiting.push(Reverse((ready_slot[station], station)));
                    }
                }
            }
            self.backlog_slot_sum += backlog as f64;
            self.backlog.record(at, backlog.min(u64::from(u32::MAX)) as u32);
            self.trend.record(slot, backlog, arrived.len());
        }
        // One event per slot: a truncated run ends at the last slot it simulated.
        self.end = self.slot_start(self.events.min(self.config.slots));
    }

    /// Ethernet CSMA/CD with saturated stations: when the channel goes idle, every station whose backoff has
    /// expired sends; one sender is a success (frame + gap), several collide (one slot + gap) and back off.
    /// Stations wait in a binary heap keyed by ready time: finding the k senders costs O(k log N), not O(N), and
    /// they draw their backoffs in station order, as a scan would. Not the engine's event queue: the winner's next
    /// turn may come before the next station's, which the queue has shown by then, and its radix form (past 4,096
    /// entries) takes no push before an entry it has shown.
    fn ethernet(&mut self) {
        let n = self.config.stations as usize;
        let horizon = self.slot_start(self.config.slots);
        let mut waiting: BinaryHeap<Reverse<(SimTime, usize)>> = (0..n).map(|station| Reverse((SimTime::ZERO, station))).collect();
        let mut turn_started = vec![SimTime::ZERO; n];
        let mut slept = vec![SimDuration::ZERO; n];
        let mut failed = vec![0_u32; n];
        let mut memory = vec![BackoffMemory::default(); n];
        let mut senders = Vec::with_capacity(n);
        let mut now = SimTime::ZERO;
        while now < horizon {
            if self.out_of_events() {
                break;
            }
            senders.clear();
            while let Some(&Reverse((ready, station))) = waiting.peek() {
                if ready > now {
                    break;
                }
                waiting.pop();
                senders.push(station);
            }
            if senders.is_empty() {
                now = waiting.peek().map_or(horizon, |&Reverse((ready, _))| ready);
                continue;
            }
            senders.sort_unstable();
            if TRACE {
                let alone = senders.len() == 1;
                let length = if alone { self.config.frame } else { self.config.slot };
                for &station in &senders {
                    self.trace(station as u64, now, length, failed[station] + 1, alone, slept[station]);
                }
            }
            self.attempts += senders.len() as u64;
            if let [station] = senders[..] {
                let done = now + self.config.frame;
                self.access_delay.record(done - turn_started[station]);
                self.success(now, Some(station as u32), self.config.frame);
                now = done + INTER_FRAME_GAP;
                failed[station] = 0;
                slept[station] = SimDuration::ZERO;
                waiting.push(Reverse((now, station)));
                turn_started[station] = now;
            } else {
                self.collision(now);
                let after = now + self.config.slot + INTER_FRAME_GAP;
                for &station in &senders {
                    failed[station] += 1;
                    let decision =
                        self.config.retry.after_failure(failed[station], SimDuration::ZERO, (FailureKind::Transient, None), &mut memory[station], &mut self.jitter);
                    match decision {
                        RetryDecision::RetryAfter(sleep) => {
                            waiting.push(Reverse((after + sleep, station)));
                            slept[station] = sleep;
                        }
                        RetryDecision::GiveUp(_) => {
                            self.drops += 1;
                            failed[station] = 0;
                            slept[station] = SimDuration::ZERO;
                            waiting.push(Reverse((after, station)));
                            turn_started[station] = after;
                        }
                    }
                }
                now = after;
            }
        }
        self.end = now;
    }

    /// Metcalfe & Boggs's ideal contention: Q saturated stations each send with probability 1/Q per contention
    /// slot, K ~ Binomial(Q, 1/Q) senders; one sender holds the channel for a frame, otherwise the slot is lost.
    fn ideal(&mut self) {
        let q = self.config.stations;
        let senders = Binomial::new(u64::from(q), 1.0 / f64::from(q)).expect("Q ≥ 1 is validated");
        let horizon = self.slot_start(self.config.slots);
        let mut now = SimTime::ZERO;
        while now < horizon {
            if self.out_of_events() {
                break;
            }
            let (sent, sender) = self.draw_senders(&senders);
            // A collision holds the channel for one contention slot, a success for a frame.
            self.trace_slot(now, sent, sender, self.config.frame, self.config.slot);
            self.attempts += sent;
            if let Some(station) = sender {
                self.success(now, Some(station), self.config.frame);
                now += self.config.frame;
            } else {
                if sent > 1 {
                    self.collision(now);
                }
                now += self.config.slot;
            }
        }
        self.end = now;
    }

    fn finish(mut self) -> RunOutput {
        let queued = matches!(self.config.population, Population::Poisson | Population::Bernoulli);
        if queued || self.config.population == Population::Saturated {
            let end = self.end + self.timeline[series::SUCCESSES].width();
            self.flush_share(end);
        }
        let spans = self.spans.take().unwrap_or_default();
        let end_nanos = self.end.as_nanos() as f64;
        let slots_elapsed = end_nanos / self.config.slot.as_nanos_f64();
        let mut metrics = vec![0.0; metric::COUNT];
        metrics[metric::THROUGHPUT] = if end_nanos > 0.0 { self.busy_nanos / end_nanos } else { f64::NAN };
        metrics[metric::OFFERED_LOAD] = match self.config.protocol {
            Protocol::PureAloha | Protocol::SlottedAloha => self.attempts as f64 / slots_elapsed,
            Protocol::Ethernet | Protocol::Ideal => self.attempts as f64 / (end_nanos / self.config.frame.as_nanos_f64()),
        };
        metrics[metric::COLLISIONS] =
            if self.successes == 0 { f64::NAN } else { self.collisions as f64 / self.successes as f64 };
        metrics[metric::SUCCESSES] = self.successes as f64;
        metrics[metric::ATTEMPTS] = self.attempts as f64;
        metrics[metric::DROPS] = self.drops as f64;
        metrics[metric::ACCESS_DELAY_P50_MS] = self.access_delay.quantile_nanos(0.5) / 1e6;
        metrics[metric::ACCESS_DELAY_P99_MS] = self.access_delay.quantile_nanos(0.99) / 1e6;
        let counted = queued || self.config.population == Population::Saturated;
        let total: f64 = self.per_station.iter().map(|&s| s as f64).sum();
        let squares: f64 = self.per_station.iter().map(|&s| (s as f64).powi(2)).sum();
        metrics[metric::FAIRNESS] = if counted && squares > 0.0 {
            total * total / (self.per_station.len() as f64 * squares)
        } else {
            f64::NAN
        };
        let busy_buckets: Vec<f64> = self.top_share.iter().copied().filter(|share| *share > 0.0).collect();
        metrics[metric::TOP_SHARE] = if counted && !busy_buckets.is_empty() {
            busy_buckets.iter().sum::<f64>() / busy_buckets.len() as f64
        } else {
            f64::NAN
        };
        metrics[metric::FIRST_SUCCESS_COLLISIONS] = self.first_success_collisions.map_or(f64::NAN, |c| c as f64);
        metrics[metric::BACKLOG_MEAN] = if queued { self.backlog_slot_sum / self.config.slots as f64 } else { f64::NAN };
        metrics[metric::BACKLOG_SLOPE] = if queued { self.trend.slope() } else { f64::NAN };
        metrics[metric::GROWING] = if queued { self.trend.growing() } else { f64::NAN };
        metrics[metric::EVENTS] = self.events as f64;
        let mut columns: Vec<(usize, &[u32])> = self.timeline.iter().map(BucketCounter::counts).enumerate().collect();
        columns.push((series::BACKLOG, self.backlog.maxima()));
        let mut timeline = lay_out_timeline(series::COUNT, &columns);
        for (bucket, &share) in self.top_share.iter().enumerate().take(timeline.len() / series::COUNT) {
            timeline[bucket * series::COUNT + series::TOP_SHARE] = share;
        }
        RunOutput { metrics, timeline, events: self.events, truncated: self.truncated, spans, ..RunOutput::default() }
    }
}

#[cfg(test)]
mod tests;
