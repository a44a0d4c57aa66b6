//! The library's error type. Messages do not repeat their `source`: print the chain (`{:#}` with anyhow) to
//! see the cause.
//! [`Error::is_bad_input`] separates the user's mistakes (exit code 2) from failures
//! of the run itself (exit code 1).

use std::path::PathBuf;

use crate::scenario::InputError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A scenario or command-line value that cannot be used; the message locates it.
    #[error(transparent)]
    Input(#[from] InputError),
    #[error("cannot read scenario {}", path.display())]
    ReadScenario { path: PathBuf, source: std::io::Error },
    #[error("cannot write to output folder {}", path.display())]
    OutputFolder { path: PathBuf, source: std::io::Error },
    /// Bad usage that clap cannot see (for example two scenarios with the same output folder).
    #[error("{0}")]
    Usage(String),
    #[error("failed to write {}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("failed to draw {}: {message}", path.display())]
    Chart { path: PathBuf, message: String },
    #[error("cannot start worker threads: {0}")]
    Threads(String),
    /// A folder given to `show`, `plot` or `compare` that cannot be read as results: the message says what is
    /// wrong and what would be valid.
    #[error("{}: {message}", path.display())]
    Results { path: PathBuf, message: String },
    /// Shard folders that cannot be merged or resumed (missing, duplicated, from another study): the message lists
    /// what is wrong and how to fix it.
    #[error("{0}")]
    Shards(String),
}

impl Error {
    /// True for errors the user can fix by changing the input (exit code 2).
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::Input(_)
                | Error::ReadScenario { .. }
                | Error::OutputFolder { .. }
                | Error::Usage(_)
                | Error::Results { .. }
                | Error::Shards(_)
        )
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
