//! Choosing a policy with evidence: the objective and constraints `retrylab tune` reads (`expr`), what the metrics
//! can reach (`reach`), and the race that judges candidate policies on common random numbers (`race`, with
//! Student's t tail in `student`). The command itself is `commands::tune`.

pub(crate) mod expr;
pub(crate) mod race;
pub(crate) mod reach;
mod student;
