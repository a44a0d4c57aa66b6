pub mod engine;
pub mod policy;
