//! Stopping early on a signal. The binary's handlers store the signal's number in [`SIGNAL`] and do nothing else;
//! a sweep then starts no new run and stores no further point, and the engine ends runs in progress (see
//! [`crate::engine::RunLimit::abort`]).
//!
//! A run can also be given a stop flag of its own ([`crate::sweep::SweepSettings::stop`]): the browser lab gives
//! each run one, and raises it to [`CANCELLED`] when a newer run replaces it.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::Error;

/// The number of the signal that asked the process to stop; 0 until one does. Only signal handlers set it.
pub static SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// The value a run's own stop flag takes when the run is cancelled (no signal has this number).
pub const CANCELLED: usize = usize::MAX;

/// The signal that asked the process to stop, if one has.
pub fn requested() -> Option<i32> {
    match SIGNAL.load(Ordering::Relaxed) {
        0 => None,
        signal => Some(i32::try_from(signal).unwrap_or(i32::MAX)),
    }
}

/// `Err(Error::Interrupted)` once a signal has asked the process to stop; work checks it before each step.
pub(crate) fn check() -> Result<(), Error> {
    check_flag(&SIGNAL)
}

/// `check` for a run's stop flag: [`Error::Cancelled`] once it holds [`CANCELLED`], [`Error::Interrupted`] once
/// it holds a signal's number (the lab copies a signal into every run's flag), and for any flag the process's
/// own signal too.
pub(crate) fn check_flag(flag: &AtomicUsize) -> Result<(), Error> {
    let raised = match flag.load(Ordering::Relaxed) {
        CANCELLED => return Err(Error::Cancelled),
        0 => SIGNAL.load(Ordering::Relaxed),
        signal => signal,
    };
    if raised == 0 {
        return Ok(());
    }
    let signal = i32::try_from(raised).unwrap_or(i32::MAX);
    Err(Error::Interrupted { signal, message: format!("interrupted by {}", name(signal)), resumable: false })
}

/// `SIGINT` for 2 and `SIGTERM` for 15 (the signals the binary stops on), else `signal N`.
pub fn name(signal: i32) -> String {
    match signal {
        2 => "SIGINT".to_owned(),
        15 => "SIGTERM".to_owned(),
        other => format!("signal {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_own_flag_tells_a_cancelled_run_from_a_signalled_one() {
        static FLAG: AtomicUsize = AtomicUsize::new(0);
        assert!(check_flag(&FLAG).is_ok());
        FLAG.store(CANCELLED, Ordering::Relaxed);
        assert!(matches!(check_flag(&FLAG), Err(Error::Cancelled)));
        FLAG.store(15, Ordering::Relaxed);
        let Err(Error::Interrupted { signal, message, resumable }) = check_flag(&FLAG) else {
            panic!("not interrupted")
        };
        assert_eq!((signal, message.as_str(), resumable), (15, "interrupted by SIGTERM", false));
    }
}
