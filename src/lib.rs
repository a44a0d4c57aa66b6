pub mod commands;
pub mod engine;
mod error;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod sweep;

pub use error::{Error, Result};
