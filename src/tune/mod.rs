//! Choosing a policy with evidence: the objective and constraints `retrylab tune` reads (`expr`), and the race
//! that judges candidate policies on common random numbers (`race`). The command itself is `commands::tune`.

pub(crate) mod expr;
pub(crate) mod race;
pub(crate) mod reach;
mod student;
