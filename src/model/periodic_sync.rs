//! Periodic timers that synchronise themselves: the Periodic Messages model of Floyd & Jacobson, "The
//! Synchronization of Periodic Routing Messages" (IEEE/ACM ToN 2(2), 1994).
//!
//! `nodes` routers share a broadcast network. When a node's timer expires it sends its routing message, which
//! reaches every node at once (no propagation delay). Every node, the sender included, spends `busy_per_message`
//! (Tc) on each message, one at a time in the order they arrive; a node whose timer has expired resets it only
//! once it has nothing left to process, to U[Tp − Tr, Tp + Tr] (`period` Tp, `jitter` Tr). That last rule couples
//! the nodes: every node sees the same messages at the same instants, so the nodes that sent during one busy
//! spell of the network all finish it together and reset at the same moment; a group of i nodes then comes
//! round about (i − 1)·Tc later each period than a lone node, drifting into the others. With too little
//! randomness the groups grow until every node sends at once; with enough they break up.
//!
//! A *cluster* is the set of nodes that send in one busy spell (from a message sent while the network was idle
//! until the last message of the spell has been processed). The run is *synchronised* while a cluster of every
//! node ended less than one round ago (a round: Tp + Tr + 2·N·Tc, the longest a round of a synchronised group can
//! last).

use rand::RngExt;

use super::trace::{MAX_TRACE_SPANS, Span};
use super::{Footprint, RunOutput, RunSettings, SimModel};
use crate::engine::{Model, Scheduler, SimRng, Stream, run};
use crate::metrics::{BucketCounter, BucketMax, lay_out_timeline};
use crate::params::{Choice, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value, choices};
use crate::time::{SimDuration, SimTime};

/// The periodic-sync model (scenario `kind = "periodic-sync"`).
pub(crate) struct PeriodicSync;

choices! {
    /// How the nodes' first timers are set.
    pub(crate) enum Start {
        /// Each first expiry uniform in [0, Tp).
        Random = "random",
        /// Every node's timer expires at t = 0.
        Synchronised = "synchronised",
    }
}

/// `[model]`, in the order they are hashed into seeds.
const PARAMS: &[ParamSpec] = &[
    ParamSpec::new(
        Section::Model,
        "nodes",
        ParamKind::Count { min: 2, max: 10_000 },
        ParamDefault::Value(Value::Count(20)),
        "N: routers that each send a routing message every period",
    ),
    ParamSpec::new(
        Section::Model,
        "period",
        ParamKind::Duration,
        ParamDefault::Value(Value::Duration(SimDuration::from_secs(121))),
        "Tp: the mean time between a node's timer reset and its next expiry (Floyd & Jacobson's runs: 121 s)",
    ),
    ParamSpec::new(
        Section::Model,
        "jitter",
        ParamKind::Duration,
        ParamDefault::Value(Value::Duration(SimDuration::from_millis(100))),
        "Tr: each timer is drawn from U[Tp − Tr, Tp + Tr] (at most Tp; Tp/2 is the randomisation the paper recommends)",
    ).policy(),
    ParamSpec::new(
        Section::Model,
        "busy_per_message",
        ParamKind::Duration,
        ParamDefault::Value(Value::Duration(SimDuration::from_millis(110))),
        "Tc: the time a node spends preparing its own message or processing another's (the paper's runs: 0.11 s)",
    ),
    ParamSpec::new(
        Section::Model,
        "start",
        ParamKind::Choice(Start::NAMES),
        ParamDefault::Value(Value::Choice("random")),
        "random (first expiries uniform over one period) or synchronised (every timer expires at t = 0)",
    ),
    ParamSpec::new(
        Section::Model,
        "duration",
        ParamKind::Duration,
        ParamDefault::Value(Value::Duration(SimDuration::from_secs(100_000))),
        "the run stops at this time",
    ).measurement(),
];

/// The metrics, in the order of runs.csv's columns, and their positions in [`RunOutput::metrics`].
pub(super) mod metric {
    metrics! {
        MESSAGES = "messages" (Count): "routing messages sent",
        CLUSTERS = "clusters" (Count): "busy spells of the network, each with the nodes that sent in it",
        LARGEST_CLUSTER = "largest_cluster" (Count): "the most nodes that sent in one busy spell",
        MEAN_CLUSTER_SIZE = "mean_cluster_size" (Count): "the size of the cluster a message was sent in, averaged over messages: 1 when no two nodes meet, N when all send together",
        SYNCHRONISED_FRACTION = "synchronised_fraction" (Fraction): "share of the run during which a cluster of every node ended less than one round (Tp + Tr + 2·N·Tc) before",
        TIME_TO_SYNC_MS = "time_to_sync_ms" (Milliseconds): "when the first cluster of every node ended; empty if none did",
        EVENTS = "events" (Count): "engine events in the run",
    }
}

/// The timeline's series: messages counted per bucket, then the largest cluster ending in it (a level).
pub(super) mod series {
    series! {
        MESSAGES = "messages": "routing messages sent in the bucket",
        LARGEST_CLUSTER = "largest_cluster": "the largest cluster that ended in the bucket (0: none ended)",
    }
}

/// Typed parameters of one point.
#[derive(Clone, Debug)]
pub(crate) struct PeriodicSyncConfig {
    pub nodes: u32,
    pub period: SimDuration,
    pub jitter: SimDuration,
    pub busy_per_message: SimDuration,
    pub start: Start,
    pub duration: SimDuration,
}

impl PeriodicSyncConfig {
    /// How long after a cluster of every node the run still counts as synchronised: Tp + Tr + 2·N·Tc.
    fn round(&self) -> SimDuration {
        self.period + self.jitter + SimDuration::from_nanos(2 * u64::from(self.nodes) * self.busy_per_message.as_nanos())
    }
}

impl SimModel for PeriodicSync {
    const KIND: &'static str = "periodic-sync";
    const ABOUT: &'static str = "periodic routing messages that fall into step (Floyd & Jacobson 1994)";
    const PARAMS: &'static [&'static [ParamSpec]] = &[PARAMS];
    const DEFAULT_CHART_METRICS: &'static [&'static str] = &["synchronised_fraction", "mean_cluster_size"];

    type Config = PeriodicSyncConfig;

    fn configure(point: &Point) -> Result<PeriodicSyncConfig, ParamError> {
        let period = point.duration("period")?;
        if period.is_zero() {
            return Err(ParamError::new("period", "a period of 0 would send forever at one instant".into()));
        }
        let jitter = point.duration("jitter")?;
        if jitter > period {
            return Err(ParamError::new(
                "jitter",
                format!("at most the period ({period}): a timer drawn from U[Tp − Tr, Tp + Tr] cannot be negative"),
            ));
        }
        let busy_per_message = point.duration("busy_per_message")?;
        if busy_per_message.is_zero() {
            return Err(ParamError::new(
                "busy_per_message",
                "must be longer than 0: with no work per message nothing couples the nodes".into(),
            ));
        }
        let duration = point.duration("duration")?;
        if duration < period {
            return Err(ParamError::new("duration", format!("must be at least one period ({period})")));
        }
        Ok(PeriodicSyncConfig {
            nodes: point.count("nodes")? as u32,
            period,
            jitter,
            busy_per_message,
            start: point.choice_of("start")?,
            duration,
        })
    }

    fn footprint(config: &PeriodicSyncConfig) -> Footprint {
        // Each node's timer is Tp on average and a spell lasts at least Tc: about duration / (Tp + Tc) + 1
        // messages a node, and at most one cluster (16 bytes) per message.
        let cycle = config.period.as_nanos().saturating_add(config.busy_per_message.as_nanos()).max(1);
        let messages = u64::from(config.nodes) * (config.duration.as_nanos() / cycle + 1);
        Footprint {
            horizon: Some(config.duration),
            records: u64::from(config.nodes),
            bytes_per_record: 256,
            other_bytes: messages.saturating_mul(size_of::<(SimTime, u32)>() as u64),
            trace_spans: Some(messages),
            trace_bytes_per_record: 0,
        }
    }

    fn simulate(config: &PeriodicSyncConfig, settings: RunSettings) -> RunOutput {
        let mut state = SyncRun::new(config, settings.seeds.stream(Stream::Clocks), settings.bucket);
        if settings.trace {
            state.spans = Some(Vec::new());
        }
        let mut scheduler = Scheduler::with_capacity(4 * config.nodes as usize);
        for node in 0..config.nodes {
            let first = match config.start {
                Start::Random => SimDuration::from_nanos(state.rng.random_range(0..config.period.as_nanos())),
                Start::Synchronised => SimDuration::ZERO,
            };
            scheduler.schedule_in(first, SyncEvent::TimerExpires { node });
        }
        let limit = crate::engine::RunLimit { horizon: SimTime::ZERO + config.duration, ..settings.limit() };
        let stats = run(&mut state, &mut scheduler, limit);
        let mut output = state.finish(stats.events);
        output.truncated = stats.truncated && stats.events >= settings.max_events;
        output
    }

    fn trace_owner(_config: &PeriodicSyncConfig) -> &'static str {
        "node"
    }
}

#[derive(Clone, Copy, Debug)]
enum SyncEvent {
    TimerExpires { node: u32 },
    /// The network's spell number `spell` may be over: every message sent in it has been processed.
    SpellEnds { spell: u32 },
}

struct SyncRun<'a> {
    config: &'a PeriodicSyncConfig,
    rng: SimRng,
    /// When every node will have processed every message sent so far (all nodes see the same messages).
    idle_at: SimTime,
    /// The current spell's number, and the nodes that sent in it (they reset their timers when it ends).
    spell: u32,
    senders: Vec<u32>,
    /// (end, size) of every cluster, in order.
    clusters: Vec<(SimTime, u32)>,
    messages: u64,
    /// Σ over messages of the size of the cluster each was sent in.
    message_cluster_sum: u64,
    timeline_messages: BucketCounter,
    timeline_largest: BucketMax,
    /// When tracing: one span per message, from its sending until the network has processed it.
    spans: Option<Vec<Span>>,
    /// Per node: messages sent (the span's attempt number).
    sent: Vec<u32>,
}

impl<'a> SyncRun<'a> {
    fn new(config: &'a PeriodicSyncConfig, rng: SimRng, bucket: SimDuration) -> Self {
        SyncRun {
            config,
            rng,
            idle_at: SimTime::ZERO,
            spell: 0,
            senders: Vec::with_capacity(config.nodes as usize),
            clusters: Vec::new(),
            messages: 0,
            message_cluster_sum: 0,
            timeline_messages: BucketCounter::new(bucket),
            timeline_largest: BucketMax::new(bucket),
            spans: None,
            sent: vec![0; config.nodes as usize],
        }
    }

    /// `node` sends: its message joins the spell in progress, or opens a new one if the network is idle.
    fn timer_expires(&mut self, node: u32, scheduler: &mut Scheduler<SyncEvent>) {
        let now = scheduler.now();
        if now >= self.idle_at {
            // The last spell's end may be due at this very instant but not yet handled: close it first.
            self.end_spell(scheduler);
            self.idle_at = now;
        }
        self.idle_at += self.config.busy_per_message;
        self.senders.push(node);
        self.messages += 1;
        self.timeline_messages.record(now);
        self.sent[node as usize] += 1;
        if let Some(spans) = self.spans.as_mut().filter(|spans| spans.len() < MAX_TRACE_SPANS) {
            let attempt = self.sent[node as usize];
            let (start, end) = (now, self.idle_at);
            let slept = SimDuration::ZERO;
            let (outcome, hedge) = ("sent", false);
            spans.push(Span { owner: node, layer: 0, start, end, attempt, outcome, status: 0, slept, hedge, id: 0, parent: 0, at_server: None });
        }
        scheduler.schedule_at(self.idle_at, SyncEvent::SpellEnds { spell: self.spell });
    }

    /// Ends the spell in progress, if any: its senders form one cluster and reset their timers.
    fn end_spell(&mut self, scheduler: &mut Scheduler<SyncEvent>) {
        self.close_cluster();
        let end = self.idle_at;
        let (tp, tr) = (self.config.period.as_nanos(), self.config.jitter.as_nanos());
        for index in 0..self.senders.len() {
            let timer = tp - tr + self.rng.random_range(0..=2 * tr);
            let node = self.senders[index];
            scheduler.schedule_at(end + SimDuration::from_nanos(timer), SyncEvent::TimerExpires { node });
        }
        self.senders.clear();
        self.spell = self.spell.wrapping_add(1);
    }

    /// Records the spell in progress, if any node sent in it, as a cluster ending at `idle_at`.
    fn close_cluster(&mut self) {
        if !self.senders.is_empty() {
            let size = self.senders.len() as u32;
            self.clusters.push((self.idle_at, size));
            self.message_cluster_sum += u64::from(size) * u64::from(size);
            self.timeline_largest.record(self.idle_at, size);
        }
    }

    fn finish(mut self, events: u64) -> RunOutput {
        // A spell still open at the horizon is a cluster cut short; count it as it stands.
        self.idle_at = self.idle_at.min(SimTime::ZERO + self.config.duration);
        self.close_cluster();
        let all = self.config.nodes;
        let end = SimTime::ZERO + self.config.duration;
        let round = self.config.round();
        // The union of [end of a full cluster, + round), within the run.
        let (mut synchronised, mut covered_until) = (SimDuration::ZERO, SimTime::ZERO);
        for &(at, _) in self.clusters.iter().filter(|(_, size)| *size >= all) {
            let from = at.max(covered_until);
            let to = (at + round).min(end);
            if to > from {
                synchronised = synchronised + (to - from);
            }
            covered_until = covered_until.max(to);
        }
        let mut metrics = vec![0.0; metric::COUNT];
        metrics[metric::MESSAGES] = self.messages as f64;
        metrics[metric::CLUSTERS] = self.clusters.len() as f64;
        metrics[metric::LARGEST_CLUSTER] = self.clusters.iter().map(|&(_, size)| size).max().unwrap_or(0) as f64;
        metrics[metric::MEAN_CLUSTER_SIZE] = if self.messages == 0 {
            f64::NAN
        } else {
            self.message_cluster_sum as f64 / self.messages as f64
        };
        metrics[metric::SYNCHRONISED_FRACTION] = synchronised.as_nanos_f64() / self.config.duration.as_nanos_f64();
        metrics[metric::TIME_TO_SYNC_MS] =
            self.clusters.iter().find(|(_, size)| *size >= all).map_or(f64::NAN, |(at, _)| at.as_millis_f64());
        metrics[metric::EVENTS] = events as f64;
        let timeline = lay_out_timeline(
            series::COUNT,
            &[(series::MESSAGES, self.timeline_messages.counts()), (series::LARGEST_CLUSTER, self.timeline_largest.maxima())],
        );
        let spans = self.spans.unwrap_or_default();
        RunOutput { metrics, timeline, events, spans, ..RunOutput::default() }
    }
}


impl Model for SyncRun<'_> {
    type Event = SyncEvent;

    fn handle(&mut self, event: SyncEvent, scheduler: &mut Scheduler<SyncEvent>) {
        match event {
            SyncEvent::TimerExpires { node } => self.timer_expires(node, scheduler),
            SyncEvent::SpellEnds { spell } => {
                if spell == self.spell && scheduler.now() >= self.idle_at {
                    self.end_spell(scheduler);
                }
            }
        }
    }
}
