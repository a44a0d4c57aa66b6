pub mod engine;
mod error;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod scenario;

pub use error::{Error, Result};
