//! The binary's signals. SIGINT and SIGTERM only record themselves, for the library to stop at the next run or
//! point and keep what is finished; a second one exits at once. SIGXFSZ is caught so that a write past the
//! file-size limit fails with "File too large" and is reported, instead of killing the process.

use std::sync::atomic::AtomicBool;

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// Set by the first SIGINT or SIGTERM: a second one then exits at once with its code.
static STOPPING: AtomicBool = AtomicBool::new(false);
/// Set by SIGXFSZ; nothing reads it, the failed write reports the limit.
static FILE_TOO_LARGE: AtomicBool = AtomicBool::new(false);

/// Installs the handlers. The order matters: the second signal's exit is checked before the first sets the flag.
pub fn install() -> std::io::Result<()> {
    for signal in [SIGINT, SIGTERM] {
        flag::register_conditional_shutdown(signal, exit_code(signal), &STOPPING)?;
        flag::register_usize(signal, &retrylab::interrupt::SIGNAL, signal as usize)?;
        flag::register(signal, &STOPPING)?;
    }
    #[cfg(unix)]
    flag::register(signal_hook::consts::SIGXFSZ, &FILE_TOO_LARGE)?;
    Ok(())
}

/// The shell's convention for a process stopped by `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// The command line that goes on from an interrupted run: `args` (the program and its arguments as given) with
/// `--resume` added unless present, before a `--` if there is one, each quoted for a POSIX shell where needed.
pub fn resume_command(args: &[String]) -> String {
    let mut args = args.to_vec();
    if !args.iter().any(|arg| arg == "--resume") {
        let at = args.iter().position(|arg| arg == "--").unwrap_or(args.len());
        args.insert(at, "--resume".to_owned());
    }
    args.iter().map(|arg| shell_quote(arg)).collect::<Vec<_>>().join(" ")
}

/// `arg` as a POSIX shell reads it back: as is when it holds only safe characters, else in single quotes.
fn shell_quote(arg: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./=:,+@%^".contains(c);
    if !arg.is_empty() && arg.chars().all(safe) {
        return arg.to_owned();
    }
    format!("'{}'", arg.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn resume_is_added_once_and_before_a_double_dash() {
        let plain = strings(&["retrylab", "run", "s.toml", "--out", "results/s"]);
        assert_eq!(resume_command(&plain), "retrylab run s.toml --out results/s --resume");
        let again = strings(&["retrylab", "run", "s.toml", "--resume"]);
        assert_eq!(resume_command(&again), "retrylab run s.toml --resume");
        let dashes = strings(&["retrylab", "run", "--", "-odd.toml"]);
        assert_eq!(resume_command(&dashes), "retrylab run --resume -- -odd.toml");
    }

    #[test]
    fn arguments_a_shell_would_split_or_expand_are_quoted() {
        let args =
            strings(&["retrylab", "run", "my study.toml", "--set", "strategy=[\"none\", 'x']", "--set", "a=$HOME", ""]);
        assert_eq!(
            resume_command(&args),
            r#"retrylab run 'my study.toml' --set 'strategy=["none", '\''x'\'']' --set 'a=$HOME' '' --resume"#
        );
    }
}
