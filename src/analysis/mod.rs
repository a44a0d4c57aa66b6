//! Analyses beside the simulation: answers computed from a scenario's configuration rather than by running
//! replicates. [`fluid`] is the server model's large-N (mean-field) limit: its trajectory, its stationary regimes
//! and the boundary where a stuck regime appears.

pub mod fluid;
pub mod rare;
