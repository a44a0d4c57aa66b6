//! Stopping early on a signal. The binary's handlers store the signal's number in [`SIGNAL`] and do nothing else;
//! a sweep then starts no new run and stores no further point, and the engine ends runs in progress (see
//! [`crate::engine::RunLimit::abort`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Error;

/// The number of the signal that asked the process to stop; 0 until one does. Only signal handlers set it.
pub static SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// The signal that asked the process to stop, if one has.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(i32::try_from(signal).unwrap_or(i32::MAX)),
    }
}

/// `Err(Error::Interrupted)` once a signal has asked the process to stop; work checks it before each step.
pub(crate) fn check() -> Result<(), Error> {
    match requested() {
        None => Ok(()),
        Some(signal) => {
            Err(Error::Interrupted { signal, message: format!("interrupted by {}", name(signal)), resumable: false })
        }
    }
}

/// `SIGINT` for 2 and `SIGTERM` for 15 (the signals the binary stops on), else `signal N`.
pub fn name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".to_owned(),
        15 => "SIGTERM".to_owned(),
        other => format!("signal {other}"),
    }
}
