//! Sharded sweeps through the real binary, each shard its own process: merged shards give byte-identical CSV and
//! charts to one unsharded run, whatever the shard layout and thread counts; merge refuses missing, repeated,
//! unfinished and foreign shards without writing anything; `--shard auto` reads Slurm, Kubernetes and AWS Batch
//! indices; `--resume` after a kill reruns only the unfinished points.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::{SLOW, listing, retrylab, write_scenario};
use predicates::prelude::*;
use retrylab::shard::codec;

/// A contended-server sweep (so latency.csv is written too) of 6 points; 5 replicates do not divide evenly into
/// 3 shards, so shards own different numbers of runs.
const SWEEP: &str = r#"schema_version = 1
name = "sharded"
seed = 77
replicates = 5
timeline_bucket = "10ms"

[model]
kind = "server"
workers = 2
queue_limit = 10
service = "exponential"
service_mean = "5ms"

[workload]
kind = "burst"
clients = 40

[client]
base = "5ms"
cap = "1s"

[sweep]
workers = [2, 4]
strategy = ["exponential", "full-jitter", "decorrelated-jitter"]
"#;

/// The scheduler variables `--shard auto` reads; removed from every child so a CI job inside an array job does
/// not leak its own.
const SCHEDULER_VARIABLES: &[&str] = &[
    "SLURM_ARRAY_TASK_ID",
    "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX",
    "SLURM_ARRAY_TASK_STEP",
    "SLURM_ARRAY_TASK_COUNT",
    "JOB_COMPLETION_INDEX",
    "AWS_BATCH_JOB_ARRAY_INDEX",
];

fn command(args: &[&str]) -> assert_cmd::Command {
    let mut command = retrylab();
    for name in SCHEDULER_VARIABLES {
        command.env_remove(name);
    }
    command.args(args);
    command
}

fn path(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Every file of a results folder except the two that record how it was made (manifest.json, report.html).
fn result_files(dir: &Path) -> Vec<String> {
    listing(dir).into_iter().filter(|name| name != "manifest.json" && name != "report.html").collect()
}

fn assert_same_results(expected: &Path, got: &Path) {
    let files = result_files(expected);
    assert!(files.iter().any(|f| f == "latency.csv") && files.iter().any(|f| f.ends_with(".png")), "{files:?}");
    assert_eq!(files, result_files(got), "{} and {} hold different files", expected.display(), got.display());
    for name in files {
        let (a, b) = (std::fs::read(expected.join(&name)).unwrap(), std::fs::read(got.join(&name)).unwrap());
        assert!(a == b, "{name} differs between {} and {}", expected.display(), got.display());
    }
}

struct Study {
    _dir: tempfile::TempDir,
    root: PathBuf,
    scenario: PathBuf,
    unsharded: PathBuf,
}

fn study() -> Study {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_owned();
    let scenario = write_scenario(&root, "sharded.toml", SWEEP);
    let unsharded = root.join("unsharded");
    command(&["run", path(&scenario), "--out", path(&unsharded), "--quiet"]).assert().success();
    assert!(!unsharded.join(".retrylab-checkpoint").exists(), "a finished run leaves no checkpoint");
    Study { _dir: dir, root, scenario, unsharded }
}

impl Study {
    fn shard(&self, shard: &str, out: &Path, extra: &[&str]) -> assert_cmd::assert::Assert {
        let mut args = vec!["run", path(&self.scenario), "--shard", shard, "--out", path(out), "--quiet"];
        args.extend_from_slice(extra);
        command(&args).assert()
    }
}

#[test]
fn three_shards_merged_are_byte_identical_to_one_run() {
    let study = study();
    for (by, threads) in [("runs", ["1", "2", "1"]), ("points", ["2", "1", "2"])] {
        let shards = study.root.join(format!("shards-{by}"));
        for (index, threads) in threads.iter().enumerate() {
            let shard = format!("{index}/3");
            study.shard(&shard, &shards, &["--shard-by", by, "--threads", threads]).success();
        }
        let merged = study.root.join(format!("merged-{by}"));
        command(&["merge", path(&shards), "--out", path(&merged)])
            .assert()
            .success()
            .stdout(predicate::str::contains("merged 3 shards (6 points × 5 replicates"));
        assert_same_results(&study.unsharded, &merged);
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(merged.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["merged_shards"], 3);
    }
    let whole = study.root.join("whole");
    study.shard("0/1", &whole, &[]).success();
    let merged = study.root.join("merged-whole");
    command(&["merge", path(&whole.join("shard-0-of-1")), "--out", path(&merged), "--quiet"]).assert().success();
    assert_same_results(&study.unsharded, &merged);

    // Shards of the two layouts do not mix, even though together they hold every run.
    let mixed = [study.root.join("shards-runs/shard-0-of-3"), study.root.join("shards-points/shard-1-of-3")];
    command(&["merge", path(&mixed[0]), path(&mixed[1]), "--out", path(&study.root.join("mixed"))])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("3 shards by runs vs 3 shards by points"));
}

/// A fault window (shaded in the charts, kept per run) and an event cap that truncates some of the 30 runs, not
/// all: both survive sharding.
#[test]
fn truncated_runs_and_fault_windows_merge_byte_identically() {
    let study = study();
    let overrides = [
        "--set",
        "faults=20ms..60ms black-hole",
        "--set",
        "client.timeout=50ms",
        "--set",
        "clients=76",
        "--set",
        "max_events_per_run=1000",
    ];
    let unsharded = study.root.join("faults-unsharded");
    let assert =
        command(&[&["run", path(&study.scenario), "--out", path(&unsharded), "--quiet"][..], &overrides].concat())
            .assert()
            .success()
            .stderr(predicate::str::is_match(r"\b([1-9]|[12][0-9]) of 30 runs stopped at max_events_per_run").unwrap());
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    let truncated = stderr.split(" of 30 runs").next().unwrap().rsplit(' ').next().unwrap().to_owned();
    let manifest = std::fs::read_to_string(unsharded.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"shaded_ms\""), "{manifest}");
    let shards = study.root.join("faults-shards");
    for index in 0..4 {
        study.shard(&format!("{index}/4"), &shards, &overrides).success();
    }
    let merged = study.root.join("faults-merged");
    command(&["merge", path(&shards), "--out", path(&merged), "--quiet"])
        .assert()
        .success()
        .stderr(predicate::str::contains(format!(" {truncated} of 30 runs stopped at max_events_per_run")));
    assert_same_results(&unsharded, &merged);
}

#[test]
fn a_shard_manifest_names_its_study_and_points() {
    let study = study();
    let shards = study.root.join("shards");
    study.shard("1/3", &shards, &["--shard-by", "points"]).success();
    let folder = shards.join("shard-1-of-3");
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(folder.join("shard.json")).unwrap()).unwrap();
    let scenario_sha = retrylab::report::sha256_hex(SWEEP.as_bytes());
    assert_eq!(manifest["study"]["scenario_sha256"], scenario_sha.as_str());
    assert_eq!(manifest["study"]["master_seed"], 77);
    assert_eq!(manifest["study"]["retrylab_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(manifest["shard"], serde_json::json!({"index": 1, "count": 3, "by": "points"}));
    // By points, shard 1 of 3 owns points 1 and 4 of the 6, with all 5 replicates each.
    let listed = command(&["run", path(&study.scenario), "--list-points"]).output().unwrap();
    let ids: Vec<String> = String::from_utf8(listed.stdout)
        .unwrap()
        .lines()
        .skip(1)
        .map(|line| line.split('\t').nth(2).unwrap().to_owned())
        .collect();
    assert_eq!(manifest["point_ids"], serde_json::json!([ids[1], ids[4]]));
    assert_eq!(manifest["runs"], 10);
    assert_eq!(listing(&folder.join("points")).len(), 2);
    // Run again without --resume: it says it starts afresh, and does.
    command(&["run", path(&study.scenario), "--shard", "1/3", "--shard-by", "points", "--out", path(&shards)])
        .assert()
        .success()
        .stderr(predicate::str::contains("held 2 finished points of an earlier run; starting afresh"))
        .stdout(predicate::str::contains("(10 simulated now"));
}

#[test]
fn merge_refuses_a_missing_shard_and_writes_nothing() {
    let study = study();
    let shards = study.root.join("shards");
    for shard in ["0/3", "2/3"] {
        study.shard(shard, &shards, &[]).success();
    }
    let out = study.root.join("merged");
    command(&["merge", path(&shards), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("missing 1 of 3 shards: 1/3"))
        .stderr(predicate::str::contains(format!(
            "--shard 1/3 --seed 77 --replicates 5 --out {} --resume",
            path(&shards)
        )))
        // Round-robin over 30 runs: shard 1 owns runs 1, 4, 7, …, so replicates 1 and 4 of point 0.
        .stderr(
            predicate::str::contains("missing runs of 6 points: point 0 (")
                .and(predicate::str::contains("replicates 1 4,")),
        );
    assert!(!out.exists(), "a refused merge writes nothing");
}

#[test]
fn merge_refuses_shards_of_another_seed_repeated_or_unfinished() {
    let study = study();
    let shards = study.root.join("shards");
    study.shard("0/2", &shards, &[]).success();
    let other_seed = study.root.join("other-seed");
    study.shard("1/2", &other_seed, &["--seed", "78"]).success();
    let out = study.root.join("merged");
    command(&["merge", path(&shards), path(&other_seed), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("do not belong together"))
        .stderr(predicate::str::contains("seed 77 vs 78"));

    let copy = study.root.join("copy");
    std::fs::create_dir_all(copy.join("points")).unwrap();
    let first = shards.join("shard-0-of-2");
    for name in ["study.json", "shard.json"] {
        std::fs::copy(first.join(name), copy.join(name)).unwrap();
    }
    command(&["merge", path(&shards), path(&copy), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shard 0/2 is given 2 times"))
        .stderr(predicate::str::contains("missing 1 of 2 shards: 1/2"));

    study.shard("1/2", &shards, &[]).success();
    std::fs::remove_file(shards.join("shard-1-of-2/shard.json")).unwrap();
    command(&["merge", path(&shards), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shard-1-of-2 is incomplete").and(predicate::str::contains("--resume")));
    assert!(!out.exists(), "a refused merge writes nothing");

    // An unnamed scenario takes its name (and chart titles) from its file: copies under two names do not mix.
    let unnamed = SWEEP.replace("name = \"sharded\"\n", "");
    let copies = study.root.join("copies");
    for (index, name) in ["a.toml", "b.toml"].iter().enumerate() {
        let scenario = write_scenario(&study.root, name, &unnamed);
        let shard = format!("{index}/2");
        command(&["run", path(&scenario), "--shard", &shard, "--out", path(&copies), "--quiet"]).assert().success();
    }
    command(&["merge", path(&copies), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("scenario name a vs b"));

    // Shards of another build are refused even when they agree with each other.
    study.shard("1/2", &shards, &[]).success();
    for shard in ["shard-0-of-2", "shard-1-of-2"] {
        let file = shards.join(shard).join("shard.json");
        let text = std::fs::read_to_string(&file).unwrap();
        let version = format!("\"retrylab_version\": \"{}\"", env!("CARGO_PKG_VERSION"));
        assert!(text.contains(&version), "{text}");
        std::fs::write(&file, text.replace(&version, "\"retrylab_version\": \"0.0.1\"")).unwrap();
    }
    command(&["merge", path(&shards), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("run by retrylab 0.0.1"));
    assert!(!out.exists(), "a refused merge writes nothing");

    command(&["merge", path(&shards), "--out", path(&shards.join("shard-0-of-2"))])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is a shard folder"));

    command(&["merge", path(&study.root.join("unsharded")), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no shard folders here"));
}

#[test]
fn shard_auto_reads_slurm_kubernetes_and_aws_batch_indices() {
    let study = study();
    let shards = study.root.join("shards");
    let args = ["run", path(&study.scenario), "--shard", "auto", "--out", path(&shards), "--quiet"];
    // A Slurm array submitted as --array=0-2: task 1 is shard 1 of 3.
    command(&args)
        .env("SLURM_ARRAY_TASK_ID", "1")
        .env("SLURM_ARRAY_TASK_MIN", "0")
        .env("SLURM_ARRAY_TASK_MAX", "2")
        .env("SLURM_ARRAY_TASK_COUNT", "3")
        .assert()
        .success();
    command(&[&args[..], &["--shard-count", "3"]].concat()).env("JOB_COMPLETION_INDEX", "2").assert().success();
    command(&[&args[..], &["--shard-count", "3"]].concat()).env("AWS_BATCH_JOB_ARRAY_INDEX", "0").assert().success();
    assert_eq!(listing(&shards), ["shard-0-of-3", "shard-1-of-3", "shard-2-of-3"]);
    let merged = study.root.join("merged");
    command(&["merge", path(&shards), "--out", path(&merged), "--quiet"]).assert().success();
    assert_same_results(&study.unsharded, &merged);

    command(&args).assert().code(2).stderr(predicate::str::contains("no array-job index in the environment"));
    command(&args)
        .env("JOB_COMPLETION_INDEX", "1")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("add --shard-count N"));
    command(&["run", path(&study.scenario), "--shard", "3/3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("numbered 0 to 2"));
}

/// The point files of a shard folder, sorted (so by point index).
fn point_files(folder: &Path) -> Vec<PathBuf> {
    finished_points(&folder.join("points")).into_iter().map(|(name, _)| folder.join("points").join(name)).collect()
}

#[test]
fn merge_and_resume_check_every_point_file() {
    let study = study();
    let shards = study.root.join("shards");
    for shard in ["0/2", "1/2"] {
        study.shard(shard, &shards, &[]).success();
    }
    let folder = shards.join("shard-1-of-2");
    let files = point_files(&folder);
    let out = study.root.join("merged");

    // A flipped byte: merge refuses; --resume reruns that point and the merge is whole again.
    let original = std::fs::read(&files[2]).unwrap();
    let mut damaged = original.clone();
    damaged[original.len() / 2] ^= 1;
    std::fs::write(&files[2], &damaged).unwrap();
    command(&["merge", path(&shards), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("checksum does not match").and(predicate::str::contains("--resume")));
    assert!(!out.exists(), "a refused merge writes nothing");
    study.shard("1/2", &shards, &["--resume"]).success().stderr(predicate::str::contains("running its point again"));
    assert_eq!(std::fs::read(&files[2]).unwrap(), original, "the rerun point is stored as before");

    // A file with a valid checksum that lacks the model's metrics: merge refuses it (no panic), resume reruns it.
    let mut forged = codec::decode(&original).unwrap();
    forged.runs.iter_mut().for_each(|run| run.output.metrics.pop().map(drop).unwrap_or_default());
    let bytes = codec::encode(&forged.fingerprint, forged.point, forged.point_hash, &forged.runs, &forged.timelines);
    std::fs::write(&files[2], bytes).unwrap();
    command(&["merge", path(&shards), "--out", path(&out)])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("metrics; the"));
    assert!(!out.exists(), "a refused merge writes nothing");
    study.shard("1/2", &shards, &["--resume"]).success().stderr(predicate::str::contains("ignoring it"));
    assert_eq!(std::fs::read(&files[2]).unwrap(), original);

    // A copy of one point's file under another name (a sync tool's conflict copy) is not counted twice.
    let copy = folder.join("points").join("p0000000-conflict-copy.bin");
    std::fs::copy(&files[0], &copy).unwrap();
    study
        .shard("1/2", &shards, &["--resume"])
        .success()
        .stderr(predicate::str::contains("its name is not its point's"));
    command(&["merge", path(&shards), "--out", path(&out), "--quiet"]).assert().success();
    assert_same_results(&study.unsharded, &out);
}

/// Starts `args`, waits until `points` holds two finished point files, and kills the process (a preempted job).
/// Should the machine finish first, `restore` puts the folder in the state a kill leaves instead.
fn interrupt(args: &[&str], points: &Path, restore: &dyn Fn()) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while finished_points(points).len() < 2
        && child.try_wait().unwrap().is_none()
        && started.elapsed() < Duration::from_secs(120)
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = child.kill();
    if child.wait().unwrap().success() {
        restore();
    }
}

/// Copies `study.json` and the first `count` point files of shard folder `from` into `to` (made if needed).
fn copy_partial_shard(from: &Path, to: &Path, count: usize) {
    std::fs::create_dir_all(to.join("points")).unwrap();
    std::fs::copy(from.join("study.json"), to.join("study.json")).unwrap();
    for file in point_files(from).iter().take(count) {
        std::fs::copy(file, to.join("points").join(file.file_name().unwrap())).unwrap();
    }
}

/// The finished point files in `points` (not the hidden files being written) with their inode numbers (a
/// rewritten file gets a new one).
fn finished_points(points: &Path) -> Vec<(String, u64)> {
    listing(points)
        .into_iter()
        .filter(|name| name.starts_with('p') && name.ends_with(".bin"))
        .map(|name| {
            let inode = std::fs::metadata(points.join(&name)).unwrap().ino();
            (name, inode)
        })
        .collect()
}

#[test]
fn resume_after_a_kill_reruns_only_the_unfinished_points() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), "slow.toml", SLOW);
    let reference = dir.path().join("reference");
    command(&["run", path(&scenario), "--out", path(&reference), "--quiet"]).assert().success();

    // A shard, as an array job would run it.
    let shards = dir.path().join("shards");
    let folder = shards.join("shard-0-of-1");
    let args = ["run", path(&scenario), "--shard", "0/1", "--out", path(&shards), "--threads", "1"];
    let cut_back = || {
        std::fs::remove_file(folder.join("shard.json")).unwrap();
        point_files(&folder).iter().skip(5).for_each(|file| std::fs::remove_file(file).unwrap());
    };
    interrupt(&args, &folder.join("points"), &cut_back);
    assert!(!folder.join("shard.json").exists(), "an interrupted shard is not marked complete");
    let kept = finished_points(&folder.join("points"));
    assert!(kept.len() >= 2 && kept.len() < 12, "{kept:?}");
    command(&["merge", path(&shards), "--out", path(&dir.path().join("early"))])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("incomplete"));
    command(&[&args[..], &["--resume"]].concat())
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("{} of 12 points already done", kept.len())))
        .stdout(predicate::str::contains(format!("({} simulated now", 2 * (12 - kept.len()))));
    let after = finished_points(&folder.join("points"));
    assert_eq!(after.len(), 12);
    for entry in &kept {
        assert!(after.contains(entry), "{} was written again", entry.0);
    }
    let merged = dir.path().join("merged");
    command(&["merge", path(&shards), "--out", path(&merged), "--quiet"]).assert().success();
    for name in ["summary.csv", "runs.csv", "timeline.csv"] {
        assert_eq!(std::fs::read(reference.join(name)).unwrap(), std::fs::read(merged.join(name)).unwrap(), "{name}");
    }

    // An unsharded run keeps the same checkpoint inside its output folder until its results are written: the
    // whole sweep as shard 0/1, so the finished shard above holds the same point files.
    let out = dir.path().join("out");
    let checkpoint = out.join(".retrylab-checkpoint");
    let args = ["run", path(&scenario), "--out", path(&out), "--threads", "1"];
    interrupt(&args, &checkpoint.join("points"), &|| copy_partial_shard(&folder, &checkpoint, 5));
    let kept = finished_points(&checkpoint.join("points"));
    assert!(kept.len() >= 2 && kept.len() < 12, "{kept:?}");
    command(&[&args[..], &["--resume"]].concat())
        .assert()
        .success()
        .stdout(predicate::str::contains(format!("{} of 12 points already done", kept.len())));
    assert!(!checkpoint.exists(), "the checkpoint is removed once the results are written");
    for name in ["summary.csv", "runs.csv", "timeline.csv"] {
        assert_eq!(std::fs::read(reference.join(name)).unwrap(), std::fs::read(out.join(name)).unwrap(), "{name}");
    }

    // A resumed run must be the same study: other replicates are refused before anything runs, and the folder is
    // left as it was.
    copy_partial_shard(&folder, &checkpoint, 4);
    let before = finished_points(&checkpoint.join("points"));
    command(&[&args[..], &["--resume", "--replicates", "3"]].concat())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("different study").and(predicate::str::contains("replicates 3 vs 2")));
    assert_eq!(finished_points(&checkpoint.join("points")), before);
}
