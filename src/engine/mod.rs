//! The discrete-event engine: integer virtual time, a deterministic event queue, seeded random streams.
//! It knows nothing about clients, servers or retries; models plug in through [`Model`].

mod queue;
mod radix;
mod rng;
mod sim;

pub use queue::EventQueue;
pub use rng::{RunSeeds, SimRng, Stream, Streams, mix64, replicate_seed, sim_rng, stable_hash};
pub use sim::{ABORT_POLL_EVENTS, Model, RunLimit, RunStats, Scheduler, run};
