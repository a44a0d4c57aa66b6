//! retrylab: a discrete-event lab for retry behaviour.
//!
//! A tour, following the data:
//!
//! - [`scenario`] reads a TOML study, checks it with located errors ([`InputError`]), applies `--set`
//!   overrides and expands its sweep into points;
//! - [`params`] is what those points are made of: each model's and policy's typed parameters ([`params::ParamSpec`],
//!   [`params::Point`]), the one vocabulary every model shares;
//! - [`model`] holds the systems under test (the AWS 2015 OCC row, a contended server, a shared channel, a graph
//!   of services, a fan-out); each turns a point into a configuration and runs one replicate;
//! - [`sweep`] runs every (point, replicate) pair in parallel with seeds that do not depend on threads;
//! - [`shard`] splits those pairs among processes or machines, stores each finished point losslessly, and merges
//!   the shards back into the runs one process would have made;
//! - [`report`] folds the runs into estimates with confidence intervals ([`stats`]) and writes CSV, a manifest,
//!   charts and report.html; [`commands`] are the CLI's verbs as functions;
//! - underneath, [`engine`] (a FIFO-on-ties event queue and the run loop) and [`policy`] (backoff strategies,
//!   presets and retry limiters, pure values) know nothing of each other; both count time with [`time`].
//!
//! A whole study, from text to estimates:
//!
//! ```
//! use retrylab::scenario::{Scenario, plan};
//! use retrylab::sweep::{SweepSettings, run_sweep};
//!
//! let text = r#"
//!     schema_version = 1
//!     replicates = 3
//!     [model]
//!     kind = "occ"
//!     clients = 20
//!     [sweep]
//!     strategy = ["exponential", "full-jitter"]
//! "#;
//! let scenario = Scenario::from_source("demo.toml".as_ref(), text.to_owned()).unwrap();
//! let points = plan(&scenario).unwrap();
//! let settings = SweepSettings::for_scenario(&scenario, Some(1));
//! let runs = run_sweep(&points, settings, &|| {}).unwrap();
//! let results = retrylab::report::aggregate(scenario.model, points.len(), &runs);
//! let calls = scenario.model.metric_index("calls").unwrap();
//! // Every one of the 20 clients writes at least once.
//! assert!(results.summary.iter().all(|point| point[calls].mean >= 20.0));
//! ```
//!
//! A strategy on its own, as a teacher shows it: the sleeps before retries 1, 2, 3, … (the first retry is
//! `n = 1`) of capped exponential backoff and of full jitter, which draws each sleep below the same curve.
//!
//! ```
//! use rand::SeedableRng;
//! use retrylab::policy::{BackoffMemory, BackoffParams, Strategy};
//! use retrylab::time::SimDuration;
//!
//! let params = BackoffParams::AWS_2015; // base 5 ms, cap 2 s, multiplier 2
//! let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
//! let mut memory = BackoffMemory::default();
//! for n in 1..=12 {
//!     let exponential = Strategy::Exponential.delay(&params, n, &mut memory, &mut rng);
//!     let jittered = Strategy::FullJitter.delay(&params, n, &mut memory, &mut rng);
//!     assert_eq!(exponential, SimDuration::from_millis((5 << n).min(2_000)));
//!     assert!(jittered <= exponential);
//! }
//! ```
//!
//! A model of your own on the engine: a [`engine::Model`] reacts to its events and schedules new ones. Here one
//! client retries a call that fails twice, sleeping 10 ms, then 20 ms, before it succeeds at t = 30 ms.
//!
//! ```
//! use retrylab::engine::{Model, RunLimit, Scheduler, run};
//! use retrylab::time::{SimDuration, SimTime};
//!
//! #[derive(Clone, Copy)]
//! enum Event {
//!     /// Attempt number n reaches a server that answers only the third.
//!     Attempt(u32),
//! }
//!
//! struct FlakyCall {
//!     succeeded_at: Option<SimTime>,
//! }
//!
//! impl Model for FlakyCall {
//!     type Event = Event;
//!     fn handle(&mut self, Event::Attempt(n): Event, scheduler: &mut Scheduler<Event>) {
//!         if n == 3 {
//!             self.succeeded_at = Some(scheduler.now());
//!         } else {
//!             let sleep = SimDuration::from_millis(10 << (n - 1));
//!             scheduler.schedule_in(sleep, Event::Attempt(n + 1));
//!         }
//!     }
//! }
//!
//! let mut model = FlakyCall { succeeded_at: None };
//! let mut scheduler = Scheduler::with_capacity(4);
//! scheduler.schedule_at(SimTime::ZERO, Event::Attempt(1));
//! let stats = run(&mut model, &mut scheduler, RunLimit::default());
//! assert_eq!(stats.events, 3);
//! assert_eq!(model.succeeded_at, Some(SimTime::ZERO + SimDuration::from_millis(30)));
//! ```
//!
//! The simulated systems themselves are registered in [`model`]: a new one is a file implementing its
//! (crate-internal) `SimModel` trait plus one line in its registry, as a new strategy, preset or limiter is in
//! [`policy`].

#![warn(unreachable_pub)]

pub mod analysis;
pub(crate) mod budget;
pub mod commands;
pub mod emulate;
pub mod engine;
mod error;
pub mod import;
pub mod interrupt;
pub mod lab;
pub(crate) mod loopback;
pub(crate) mod metrics;
pub mod model;
pub mod params;
pub mod policy;
pub mod report;
pub mod scenario;
pub mod shard;
pub mod stats;
pub mod sweep;
pub mod time;
pub(crate) mod tune;
pub(crate) mod workload;

pub use error::{Error, InputError, LineCol, Origin, Result};
