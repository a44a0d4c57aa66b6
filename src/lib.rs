pub mod engine;
pub mod metrics;
pub mod model;
pub mod policy;
