//! `retrylab rare`: the same output on one thread and two, the report, every refusal before any run (exit 2,
//! a message that says what to change), and `--resume`: after lost replications or Ctrl-C, the same output as an
//! uninterrupted run. Splitting's accuracy is tested in the library (src/analysis/rare/tests.rs).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::common::{SMALL, listing, retrylab, write_scenario};

/// An M/M/1 queue at 50% load for 10 s: its live queue reaches 10 with probability about 1e-2.
const MM1: &str = r#"schema_version = 1
name = "mm1"
seed = 1
replicates = 1
timeline_bucket = "1s"

[model]
kind = "server"
workers = 1
queue_limit = 40
service = "exponential"
service_mean = "100ms"
network_delay = "0s"

[workload]
kind = "open"
rate = 5
duration = "10s"

[client]
strategy = "none"
timeout = "4s"
max_attempts = 4
retry_on = ["timeout"]
"#;

fn mm1() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_scenario(dir.path(), "mm1.toml", MM1);
    (dir, path)
}

fn output(args: &[&str]) -> (i32, String, String) {
    let out = retrylab().args(args).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

#[test]
fn rare_prints_the_same_csv_on_one_thread_and_two() {
    let (_dir, path) = mm1();
    let path = path.to_str().unwrap();
    let args = |threads: &'static str| {
        vec!["rare", path, "--within", "10s", "--event", "queue>=10", "--budget", "3000", "--csv", "--threads", threads]
    };
    let (one, two) = (output(&args("1")), output(&args("2")));
    assert_eq!(one.0, 0, "{}", one.2);
    assert_eq!(one.1, two.1);
    let lines: Vec<&str> = one.1.lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0], retrylab::commands::RARE_CSV_HEADER);
    assert!(lines[1].starts_with("queue>=10,10000,queue,"), "{}", lines[1]);
}

#[test]
fn rare_reports_the_estimate_its_interval_and_the_cost_against_brute_force() {
    let (_dir, path) = mm1();
    let (code, stdout, stderr) =
        output(&["rare", path.to_str().unwrap(), "--within", "10s", "--event", "queue >= 10", "--budget", "3000"]);
    assert_eq!(code, 0, "{stderr}");
    for needle in [
        "P(queue>=10 within 10s) = ",
        "95% interval [",
        "levels (auto, from a pilot of",
        "brute force",
        "variance ratio",
    ] {
        assert!(stdout.contains(needle), "{needle} in {stdout}");
    }
    // Judged at the end: a condition on the metrics, with explicit levels.
    let (code, stdout, stderr) = output(&[
        "rare",
        path.to_str().unwrap(),
        "--within",
        "10s",
        "--event",
        "latency_p99_ms >= 1500",
        "--levels",
        "4,8",
        "--budget",
        "1500",
        "--replications",
        "3",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("levels (given;") && stdout.contains("4, 8"), "{stdout}");
}

/// Runs `rare` with `args` after the scenario and expects exit 2 and `needles` in its message.
fn refused(scenario: &str, args: &[&str], needles: &[&str]) {
    let mut all = vec!["rare", scenario];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = output(&all);
    assert_eq!(code, 2, "{all:?}: {stdout}{stderr}");
    assert!(stdout.is_empty(), "{all:?}: nothing on stdout: {stdout}");
    for needle in needles {
        assert!(stderr.contains(needle), "{all:?}: {needle:?} in {stderr}");
    }
}

#[test]
fn rare_refuses_what_it_cannot_split_before_any_run() {
    let (dir, path) = mm1();
    let mm1 = path.to_str().unwrap();
    let occ = write_scenario(dir.path(), "occ.toml", SMALL);
    refused(occ.to_str().unwrap(), &["--within", "1s"], &["occ.toml:", "server model only"]);
    refused(mm1, &["--within", "10s", "--trace", "t.json"], &["--trace"]);
    refused("scenarios/cron-herd.toml", &["--within", "1h"], &["periodic"]);
    refused("scenarios/clock-aligned-retries.toml", &["--within", "1min"], &["align", "clocks"]);
    refused(mm1, &["--within", "10s", "--event", "queue>=41"], &["mm1.toml:", "queue_limit", "can never occur"]);
    refused(mm1, &["--within", "5s", "--event", "stuck"], &["stuck_hold", "raise --within"]);
    refused(mm1, &["--within", "10s", "--event", "goodput <= 3"], &["column 1", "goodput", "queue>=N"]);
    refused(mm1, &["--within", "10s", "--event", "queue>=x"], &["queue>="]);
    refused(mm1, &["--within", "0s"], &["--within"]);
    refused(mm1, &["--within", "10s", "--levels", "5,3"], &["--levels", "rising"]);
    refused(mm1, &["--within", "10s", "--levels", "50"], &["--levels", "queue limit 40"]);
    refused(
        mm1,
        &["--within", "10s", "--event", "queue>=10", "--levels", "3,6,9", "--budget", "100"],
        &["raise --budget to about 810"],
    );
    refused(mm1, &["--within", "10s", "--event", "queue>=30", "--budget", "200"], &["raise --budget to about"]);
    refused(mm1, &["--within", "10s", "--set", "workers=[1, 2]"], &["one point", "--set"]);
    let unlimited = write_scenario(
        dir.path(),
        "unlimited.toml",
        &MM1.replace("workers = 1\n", "").replace("queue_limit = 40\n", ""),
    );
    refused(unlimited.to_str().unwrap(), &["--within", "10s"], &["workers", "--importance backlog"]);
}

/// The CSV of `rare` on MM1 with `extra` arguments, run in `cwd`: (exit code, stdout, stderr).
fn rare_in(cwd: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["rare", "mm1.toml", "--within", "10s", "--event", "queue>=10", "--budget", "3000", "--csv"];
    args.extend_from_slice(extra);
    let out = retrylab().current_dir(cwd).args(&args).output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
}

/// Every file in `dir` with its bytes.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    listing(dir).into_iter().map(|name| (name.clone(), std::fs::read(dir.join(name)).unwrap())).collect()
}

#[test]
fn rare_resume_runs_only_the_missing_replications_and_prints_what_an_uninterrupted_run_prints() {
    let (dir, _) = mm1();
    let (code, reference, stderr) = rare_in(dir.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert_eq!(listing(dir.path()), ["mm1.toml"], "no folder without --out or --resume");

    // Nothing to resume: the default folder is made and filled, and the output is the same.
    let (code, stdout, stderr) = rare_in(dir.path(), &["--resume"]);
    assert_eq!((code, stdout.as_str()), (0, reference.as_str()), "{stderr}");
    assert!(stderr.contains("nothing to resume in results/mm1/rare; starting afresh"), "{stderr}");
    let kept = dir.path().join("results/mm1/rare");
    let mut expected: Vec<String> = (0..10).map(|r| format!("rep-{r}.json")).collect();
    expected.extend([".lock", "pilot.json", "study.json"].map(String::from));
    expected.sort();
    assert_eq!(listing(&kept), expected);

    // An interrupted estimate's folder: two replications and the pilot missing.
    for name in ["rep-2.json", "rep-7.json", "pilot.json"] {
        std::fs::remove_file(kept.join(name)).unwrap();
    }
    let (code, stdout, stderr) = rare_in(dir.path(), &["--resume", "--threads", "1"]);
    assert_eq!((code, stdout.as_str()), (0, reference.as_str()), "{stderr}");
    assert!(stderr.contains("resuming from results/mm1/rare: 8 of 10 replications already done"), "{stderr}");
    assert!(!stderr.contains("warning"), "a missing file is no damaged one: {stderr}");
    assert_eq!(listing(&kept), expected, "the missing files are written again");

    // Interrupted just after the pilot: only the pilot is read back.
    let reps: Vec<_> = (0..10).map(|r| std::fs::read(kept.join(format!("rep-{r}.json"))).unwrap()).collect();
    for r in 0..10 {
        std::fs::remove_file(kept.join(format!("rep-{r}.json"))).unwrap();
    }
    let (code, stdout, stderr) = rare_in(dir.path(), &["--resume"]);
    assert_eq!((code, stdout.as_str()), (0, reference.as_str()), "{stderr}");
    assert!(stderr.contains("resuming from results/mm1/rare: the pilot and 0 of 10 replications"), "{stderr}");
    for (r, bytes) in reps.iter().enumerate() {
        assert_eq!(&std::fs::read(kept.join(format!("rep-{r}.json"))).unwrap(), bytes, "rep-{r}.json as before");
    }

    // Nothing left to run: the kept replications are read, not run again (a changed one changes the estimate).
    let (code, stdout, stderr) = rare_in(dir.path(), &["--resume"]);
    assert_eq!((code, stdout.as_str()), (0, reference.as_str()), "{stderr}");
    assert!(stderr.contains("the pilot and 10 of 10 replications already done"), "{stderr}");
    let first = kept.join("rep-0.json");
    let text = std::fs::read_to_string(&first).unwrap();
    let bits = text.lines().find(|line| line.contains("\"estimate_bits\"")).unwrap();
    std::fs::write(&first, text.replace(bits, "  \"estimate_bits\": \"3fe0000000000000\",")).unwrap();
    let (code, stdout, stderr) = rare_in(dir.path(), &["--resume"]);
    assert_eq!(code, 0, "{stderr}");
    assert_ne!(stdout, reference, "a kept replication of 0.5 raises the estimate");
    // Without --resume the folder starts afresh, and the output is the uninterrupted one again.
    let (code, stdout, stderr) = rare_in(dir.path(), &["--out", "results/mm1/rare"]);
    assert_eq!((code, stdout.as_str()), (0, reference.as_str()), "{stderr}");
    assert!(stderr.contains("held 11 files of an earlier estimate; starting afresh (--resume keeps them)"), "{stderr}");
}

#[test]
fn rare_resume_refuses_another_study_and_leaves_its_folder_as_it_was() {
    let (dir, _) = mm1();
    let (code, _, stderr) = rare_in(dir.path(), &["--out", "kept"]);
    assert_eq!((code, stderr.as_str()), (0, ""), "a first estimate has no note or warning");
    let kept = dir.path().join("kept");
    let before = snapshot(&kept);
    let refused = |extra: &[&str], needles: &[&str]| {
        let (code, stdout, stderr) = rare_in(dir.path(), extra);
        assert_eq!(code, 2, "{extra:?}: {stderr}");
        assert!(stdout.is_empty(), "{extra:?}: {stdout}");
        for needle in needles {
            assert!(stderr.contains(needle), "{extra:?}: {needle:?} in {stderr}");
        }
        assert_eq!(snapshot(&kept), before, "{extra:?} left the folder as it was");
    };
    refused(
        &["--out", "kept", "--resume", "--seed", "2"],
        &["--resume: kept holds an estimate of a different study", "--seed 2 vs 1", "run without --resume"],
    );
    refused(
        &["--out", "kept", "--resume", "--replications", "4", "--set", "rate=6"],
        &["--set [rate=6] vs []", "--replications 4 vs 10"],
    );
    std::fs::write(dir.path().join("mm1.toml"), format!("{MM1}\n# edited\n")).unwrap();
    refused(&["--out", "kept", "--resume"], &["scenario sha256"]);
    std::fs::write(dir.path().join("mm1.toml"), MM1).unwrap();

    // A replication of another study in the folder is refused, not read.
    assert_eq!(rare_in(dir.path(), &["--out", "other", "--seed", "2"]).0, 0);
    std::fs::copy(dir.path().join("other/rep-3.json"), kept.join("rep-3.json")).unwrap();
    let before = snapshot(&kept);
    let (code, _, stderr) = rare_in(dir.path(), &["--out", "kept", "--resume"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("rep-3.json belongs to an estimate of another study"), "{stderr}");
    assert_eq!(snapshot(&kept), before);

    // Another command's folder is never written into, with or without --resume.
    let shard = dir.path().join("shard");
    std::fs::create_dir(&shard).unwrap();
    std::fs::write(shard.join("study.json"), "{\"kind\": \"retrylab shard\", \"shard_format\": 1}\n").unwrap();
    for extra in [&["--out", "shard"][..], &["--out", "shard", "--resume"]] {
        let (code, _, stderr) = rare_in(dir.path(), extra);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains("not a `retrylab rare` file (its kind is \"retrylab shard\")"), "{stderr}");
        assert_eq!(listing(&shard), ["study.json"]);
    }
}

/// Long enough to interrupt: a pilot of about 0.4 s, then ten replications of about 0.1 s each, on one thread.
const SLOW_RARE: [&str; 10] =
    ["rare", "mm1.toml", "--within", "10s", "--event", "queue>=10", "--budget", "100000", "--threads", "1"];

/// Starts SLOW_RARE into `dir`/kept and sends SIGINT once `ready` holds of the folder's files.
fn interrupted(dir: &Path, ready: impl Fn(&[String]) -> bool) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .current_dir(dir)
        .args(SLOW_RARE)
        .args(["--out", "kept"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ready(&listing(&dir.join("kept"))) {
        assert!(child.try_wait().unwrap().is_none(), "the estimate ended first");
        assert!(started.elapsed() < Duration::from_secs(300), "nothing kept in 300 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let output = child.wait_with_output().unwrap();
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).unwrap();
    (output.status.code(), text(output.stdout), text(output.stderr))
}

#[test]
fn ctrl_c_during_the_pilot_keeps_nothing_and_after_it_keeps_the_pilot() {
    let (dir, _) = mm1();
    let (code, stdout, stderr) = interrupted(dir.path(), |names| names.iter().any(|name| name == "study.json"));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("mm1: interrupted by SIGINT before the pilot finished; nothing kept"), "{stderr}");
    assert!(!stderr.contains("resume with"), "{stderr}");
    assert_eq!(listing(&dir.path().join("kept")), [".lock", "study.json"], "a pilot cut short is not kept");

    // Stopped once the pilot is kept, before any replication: the pilot alone is worth resuming from.
    let (code, _, stderr) = interrupted(dir.path(), |names| names.iter().any(|name| name == "pilot.json"));
    assert_eq!(code, Some(130), "{stderr}");
    let line = "interrupted by SIGINT; kept the pilot and 0 of 10 replications in kept; resume with:";
    assert!(stderr.contains(line), "{stderr}");
}

#[test]
fn ctrl_c_keeps_the_finished_replications_and_the_printed_command_finishes_the_estimate() {
    let (dir, _) = mm1();
    let reference = retrylab().current_dir(dir.path()).args(SLOW_RARE).output().unwrap();
    assert!(reference.status.success(), "{}", String::from_utf8_lossy(&reference.stderr));

    let (code, stdout, stderr) = interrupted(dir.path(), |names| names.iter().any(|name| name.starts_with("rep-")));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stdout.is_empty(), "no estimate from an interrupted run");
    let kept = dir.path().join("kept");
    let reps = listing(&kept).into_iter().filter(|name| name.starts_with("rep-")).count();
    assert!((1..10).contains(&reps), "{reps} replications kept");
    let kept_line = format!("mm1: interrupted by SIGINT; kept the pilot and {reps} of 10 replications in kept");
    assert!(stderr.contains(&kept_line), "{stderr}");
    assert!(listing(&kept).iter().all(|name| !name.contains(".partial-")), "no half-written file");

    let resume = stderr.lines().skip_while(|line| !line.ends_with("resume with:")).nth(1).expect(&stderr).trim();
    assert!(resume.ends_with("--out kept --resume"), "{resume}");
    let resumed = Command::new("sh").current_dir(dir.path()).args(["-c", resume]).output().unwrap();
    let stderr = String::from_utf8(resumed.stderr).unwrap();
    assert!(resumed.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("the pilot and {reps} of 10 replications already done")), "{stderr}");
    assert_eq!(String::from_utf8(resumed.stdout).unwrap(), String::from_utf8(reference.stdout).unwrap());
}
