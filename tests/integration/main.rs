//! retrylab's integration tests, one binary (one link on a 2-core machine instead of one per file). Most drive the
//! real `retrylab` binary as a user would; the statistical ones (AWS claims, queueing theory) call the library.

mod aws_claims;
mod boundary;
mod charts;
mod charts_present;
mod cli;
mod clocks;
mod common;
mod determinism;
mod docs;
mod emulate;
mod failing_disk;
mod golden;
mod honest_metrics;
mod hostile_input;
mod import;
mod interrupts;
mod lab;
mod memory;
mod metastability;
mod models_input;
mod png_text;
mod questions;
mod queueing_theory;
mod queues;
mod refused_before_work;
mod report_html;
mod shard;
mod show_axes;
mod teaching;
mod trace;
mod tune;
mod tune_exits;
mod tune_trust;
mod view;
mod visibility;
