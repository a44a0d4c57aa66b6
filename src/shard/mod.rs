//! Splitting a sweep over several processes or machines: which runs a shard owns, where it keeps them, and how
//! shards are merged back into the results one process would have written.
//!
//! A sweep is a canonical list of (point, replicate) runs, point-major. Shard `I` of `N` (0-based) owns either
//! every `N`-th run of that list, starting at `I` (`--shard-by runs`, the default: every shard gets an even share
//! of every point), or every replicate of every `N`-th point (`--shard-by points`). Each run's seed depends only on
//! the master seed, the point's parameters and the replicate number, so who runs it does not change it.

pub mod codec;
pub(crate) mod folder;
pub(crate) mod merge;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::sweep::PointWork;

pub use folder::{CHECKPOINT_DIR, ShardFolder, ShardManifest, Study};

/// What a shard owns: runs or whole points, round-robin over the canonical order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ShardBy {
    /// Every N-th (point, replicate) run: balanced even when points differ in cost.
    Runs,
    /// Every N-th point, with all its replicates.
    Points,
}

impl fmt::Display for ShardBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShardBy::Runs => "runs",
            ShardBy::Points => "points",
        })
    }
}

/// Shard `index` of `count` (0-based).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardSpec {
    pub index: u32,
    pub count: u32,
    pub by: ShardBy,
}

impl ShardSpec {
    /// The whole sweep as one shard: what an unsharded run checkpoints as.
    pub const WHOLE: ShardSpec = ShardSpec { index: 0, count: 1, by: ShardBy::Runs };

    /// Parses `I/N` (0 ≤ I < N).
    pub fn parse(text: &str, by: ShardBy) -> Result<ShardSpec, String> {
        let usage = || format!("--shard {text}: expected I/N with 0 ≤ I < N (for example 0/4), or auto");
        let (index, count) = text.split_once('/').ok_or_else(usage)?;
        let index: u32 = index.trim().parse().map_err(|_| usage())?;
        let count: u32 = count.trim().parse().map_err(|_| usage())?;
        ShardSpec::checked(index, count, by).map_err(|problem| format!("--shard {text}: {problem}"))
    }

    /// The value of `--shard`: `I/N`, or `auto` to read it from the scheduler's environment (see
    /// [`ShardSpec::from_environment`]).
    pub fn from_argument(text: &str, count_flag: Option<u32>, by: ShardBy) -> Result<ShardSpec, crate::Error> {
        let spec = if text.trim() == "auto" {
            ShardSpec::from_environment(&|name| std::env::var(name).ok(), count_flag, by)
        } else if count_flag.is_some() {
            Err(format!("--shard-count goes with --shard auto; --shard {text} already gives the count"))
        } else {
            ShardSpec::parse(text, by)
        };
        spec.map_err(crate::Error::Usage)
    }

    fn checked(index: u32, count: u32, by: ShardBy) -> Result<ShardSpec, String> {
        if count == 0 {
            return Err("the shard count must be at least 1".into());
        }
        if index >= count {
            return Err(format!("shard index {index} is out of range: shards are numbered 0 to {}", count - 1));
        }
        Ok(ShardSpec { index, count, by })
    }

    /// `--shard auto`: the index (and count) an array-job scheduler gives this task, read through `var`.
    ///
    /// Slurm: the index is `SLURM_ARRAY_TASK_ID` and the count `SLURM_ARRAY_TASK_COUNT` (else
    /// `SLURM_ARRAY_TASK_MAX` + 1) of an array submitted as `--array=0-<N-1>`; with `count_flag`
    /// (`--shard-count`) any task id is taken as the index, so some tasks of an array can be resubmitted on their
    /// own. Kubernetes Indexed Jobs
    /// (`JOB_COMPLETION_INDEX`) and AWS Batch array jobs (`AWS_BATCH_JOB_ARRAY_INDEX`) do not tell a task the
    /// count, so `count_flag` must.
    pub fn from_environment(
        var: &dyn Fn(&str) -> Option<String>,
        count_flag: Option<u32>,
        by: ShardBy,
    ) -> Result<ShardSpec, String> {
        let number = |name: &str| -> Result<Option<u64>, String> {
            match var(name) {
                None => Ok(None),
                Some(text) => text
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("--shard auto: {name}={text:?} is not a whole number")),
            }
        };
        let (index, count) = if let Some(id) = number("SLURM_ARRAY_TASK_ID")? {
            if let Some(count) = count_flag {
                // A resubmission of some tasks (--array=3,5 of 8) is an array of its own: its size and minimum say
                // nothing about the shard layout, so with the count given, the task id is the shard index.
                (id, u64::from(count))
            } else {
                slurm_array_position(id, &number)?
            }
        } else {
            let (name, engine) = if var("JOB_COMPLETION_INDEX").is_some() {
                ("JOB_COMPLETION_INDEX", "a Kubernetes Indexed Job (its spec.completions)")
            } else if var("AWS_BATCH_JOB_ARRAY_INDEX").is_some() {
                ("AWS_BATCH_JOB_ARRAY_INDEX", "an AWS Batch array job (its arrayProperties.size)")
            } else {
                return Err("--shard auto: no array-job index in the environment (looked for SLURM_ARRAY_TASK_ID, \
                            JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX); outside a scheduler give --shard I/N"
                    .into());
            };
            let index = number(name)?.unwrap_or(0);
            let count = count_flag.ok_or_else(|| {
                format!(
                    "--shard auto: {name} is set but the shard count is not; add --shard-count N, the size of {engine}"
                )
            })?;
            (index, u64::from(count))
        };
        let too_big = |what: &str, value: u64| format!("--shard auto: the {what} {value} is too large");
        let index = u32::try_from(index).map_err(|_| too_big("index", index))?;
        let count = u32::try_from(count).map_err(|_| too_big("count", count))?;
        ShardSpec::checked(index, count, by).map_err(|problem| format!("--shard auto: {problem}"))
    }

    /// The folder name that tags a shard's outputs: `shard-I-of-N`.
    pub fn folder_name(&self) -> String {
        format!("shard-{}-of-{}", self.index, self.count)
    }

    /// The points of a sweep of `points` × `replicates` this shard owns any runs of, in canonical order, each with
    /// the replicates it owns.
    pub fn work(&self, points: usize, replicates: u32) -> Vec<PointWork> {
        (0..points)
            .map(|point| PointWork { point, replicates: self.replicates_of(point, replicates) })
            .filter(|share| !share.replicates.is_empty())
            .collect()
    }

    /// The points of `points` this shard owns any runs of, in canonical order.
    pub fn owned_points<'a, T>(&self, points: &'a [T], replicates: u32) -> Vec<&'a T> {
        self.work(points.len(), replicates).iter().map(|share| &points[share.point]).collect()
    }

    /// The replicates of `point` this shard runs (ascending; empty when it owns none).
    pub fn replicates_of(&self, point: usize, replicates: u32) -> Vec<u32> {
        let (index, count) = (u64::from(self.index), u64::from(self.count));
        match self.by {
            ShardBy::Points if point as u64 % count == index => (0..replicates).collect(),
            ShardBy::Points => Vec::new(),
            ShardBy::Runs => {
                let first_run = point as u64 * u64::from(replicates);
                let first = (index + count - first_run % count) % count;
                (first..u64::from(replicates)).step_by(self.count as usize).map(|r| r as u32).collect()
            }
        }
    }
}

/// A Slurm array task's shard index and count: the task id of `SLURM_ARRAY_TASK_COUNT` (else of
/// `SLURM_ARRAY_TASK_MAX` + 1). Refuses arrays that do not start at 0, are stepped or have gaps: that is what
/// resubmitting some tasks of an array looks like, and numbering those tasks from 0 would silently renumber the
/// shards.
fn slurm_array_position(id: u64, number: &dyn Fn(&str) -> Result<Option<u64>, String>) -> Result<(u64, u64), String> {
    let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
    let step = number("SLURM_ARRAY_TASK_STEP")?.unwrap_or(1);
    let resubmission = |why: String| {
        format!(
            "--shard auto: this Slurm array {why}, which is what a resubmission of some tasks looks like (a whole \
             array is --array=0-<N-1>); to rerun tasks of an N-task array add --shard-count N, which uses each task \
             id as its shard index"
        )
    };
    if min != 0 {
        return Err(resubmission(format!("starts at task {min}, not 0")));
    }
    if step > 1 {
        return Err(resubmission(format!("steps by {step}")));
    }
    let span = number("SLURM_ARRAY_TASK_MAX")?.map(|max| max + 1);
    let count = match (number("SLURM_ARRAY_TASK_COUNT")?, span) {
        (Some(count), Some(span)) if count != span => {
            return Err(resubmission(format!("has {count} tasks with ids from 0 to {}", span - 1)));
        }
        (Some(count), _) | (None, Some(count)) => count,
        (None, None) => {
            return Err("--shard auto: Slurm sets SLURM_ARRAY_TASK_ID but neither SLURM_ARRAY_TASK_COUNT nor \
                        SLURM_ARRAY_TASK_MAX"
                .into());
        }
    };
    Ok((id, count))
}

impl fmt::Display for ShardSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn every_run_belongs_to_exactly_one_shard() {
        for by in [ShardBy::Runs, ShardBy::Points] {
            for count in [1, 2, 3, 7] {
                let (points, replicates) = (5, 4);
                let mut owners = vec![0; points * replicates as usize];
                for index in 0..count {
                    let shard = ShardSpec { index, count, by };
                    for point in 0..points {
                        for r in shard.replicates_of(point, replicates) {
                            owners[point * replicates as usize + r as usize] += 1;
                        }
                    }
                }
                assert!(owners.iter().all(|&n| n == 1), "{by} over {count} shards: {owners:?}");
            }
        }
    }

    #[test]
    fn runs_go_round_robin_in_canonical_order() {
        let shard = ShardSpec { index: 1, count: 3, by: ShardBy::Runs };
        // Runs 0..8 of point 0 and 1 (4 replicates each): shard 1 owns runs 1, 4, 7 = (0,1), (1,0), (1,3).
        assert_eq!(shard.replicates_of(0, 4), [1]);
        assert_eq!(shard.replicates_of(1, 4), [0, 3]);
        let shard = ShardSpec { index: 1, count: 3, by: ShardBy::Points };
        assert_eq!(shard.replicates_of(4, 2), [0, 1]);
        assert!(shard.replicates_of(3, 2).is_empty());
    }

    #[test]
    fn shard_text_is_checked() {
        assert_eq!(ShardSpec::parse("2/3", ShardBy::Runs).unwrap().folder_name(), "shard-2-of-3");
        for bad in ["3/3", "1/0", "x/3", "3", "-1/3"] {
            assert!(ShardSpec::parse(bad, ShardBy::Runs).is_err(), "{bad}");
        }
        assert!(ShardSpec::parse("3/3", ShardBy::Runs).unwrap_err().contains("0 to 2"));
    }

    #[test]
    fn slurm_arrays_map_to_zero_based_shards() {
        let from = |pairs, flag| ShardSpec::from_environment(&env(pairs), flag, ShardBy::Runs);
        // --array=0-2: task 2 is shard 2 of 3. --array=1-3 is refused: it looks like a resubmission.
        let array = [("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_COUNT", "3")];
        assert_eq!(from(&array, None).unwrap().to_string(), "2/3");
        let one_based = [("SLURM_ARRAY_TASK_ID", "2"), ("SLURM_ARRAY_TASK_MIN", "1"), ("SLURM_ARRAY_TASK_COUNT", "3")];
        assert!(from(&one_based, None).unwrap_err().contains("starts at task 1, not 0"));
        // --array=0-6:2 is refused: stepped ids would number the shards differently from a resubmission's.
        let stepped = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "6"),
            ("SLURM_ARRAY_TASK_STEP", "2"),
        ];
        assert!(from(&stepped, None).unwrap_err().contains("steps by 2"));
        // Without COUNT the size comes from MAX.
        let no_count = [("SLURM_ARRAY_TASK_ID", "3"), ("SLURM_ARRAY_TASK_MIN", "0"), ("SLURM_ARRAY_TASK_MAX", "4")];
        assert_eq!(from(&no_count, None).unwrap().to_string(), "3/5");
        // --array=0,2,5: ids with gaps.
        let gaps = [
            ("SLURM_ARRAY_TASK_ID", "2"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
            ("SLURM_ARRAY_TASK_MAX", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "3"),
        ];
        assert!(from(&gaps, None).unwrap_err().contains("has 3 tasks with ids from 0 to 5"));
        // --array=5 alone, a lone resubmission, would otherwise run the whole sweep as shard 0 of 1.
        let lone = [("SLURM_ARRAY_TASK_ID", "5"), ("SLURM_ARRAY_TASK_MIN", "5"), ("SLURM_ARRAY_TASK_COUNT", "1")];
        assert!(from(&lone, None).unwrap_err().contains("resubmission"));
        // A resubmission of tasks 3 and 5 of an 8-task array: refused unless the count is given, and then the task
        // id is the shard index.
        const RESUBMITTED: &[(&str, &str)] = &[
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_MIN", "3"),
            ("SLURM_ARRAY_TASK_MAX", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ];
        assert!(from(RESUBMITTED, None).unwrap_err().contains("--shard-count"));
        assert_eq!(from(RESUBMITTED, Some(8)).unwrap().to_string(), "5/8");
        assert!(from(RESUBMITTED, Some(4)).unwrap_err().contains("out of range"));
    }

    #[test]
    fn kubernetes_and_aws_batch_need_the_count_flag() {
        let from = |pairs, flag| ShardSpec::from_environment(&env(pairs), flag, ShardBy::Points);
        assert_eq!(from(&[("JOB_COMPLETION_INDEX", "3")], Some(4)).unwrap().to_string(), "3/4");
        assert!(from(&[("JOB_COMPLETION_INDEX", "3")], None).unwrap_err().contains("--shard-count"));
        assert_eq!(from(&[("AWS_BATCH_JOB_ARRAY_INDEX", "0")], Some(2)).unwrap().to_string(), "0/2");
        assert!(from(&[("AWS_BATCH_JOB_ARRAY_INDEX", "2")], Some(2)).unwrap_err().contains("out of range"));
        assert!(from(&[], Some(2)).unwrap_err().contains("no array-job index"));
        assert!(from(&[("JOB_COMPLETION_INDEX", "x")], Some(2)).unwrap_err().contains("whole number"));
    }
}
