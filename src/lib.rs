//! retrylab: a discrete-event lab for retry behaviour.
//!
//! A tour, following the data:
//!
//! - [`scenario`] reads a TOML study, checks it with located errors and expands its sweep into points;
//! - [`model`] holds the systems under test (the AWS 2015 OCC row, …); each turns a point into a configuration;
//! - [`sweep`] runs every (point, replicate) pair in parallel with seeds that do not depend on threads;
//! - [`shard`] splits those pairs among processes or machines, stores each finished point losslessly, and merges
//!   the shards back into the runs one process would have made;
//! - [`report`] folds the runs into estimates with confidence intervals and writes CSV, a manifest and charts;
//! - underneath, [`engine`] (integer time, a FIFO-on-ties event queue) and [`policy`] (backoff strategies and
//!   retry limits) know nothing of each other.
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

#![warn(unreachable_pub)]

pub mod commands;
pub mod engine;
mod error;
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
pub(crate) mod workload;

pub use error::{Error, InputError, LineCol, Origin, Result};
