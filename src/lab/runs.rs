//! The lab's runs: the study's own sweep and report, on a bounded number of slots, each with a stop flag so that a
//! newer run on the same channel (a page's pane) cancels the older one, and with the lab's size limits checked
//! before anything runs.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use crate::budget::{Bytes, MemoryEstimate};
use crate::interrupt::CANCELLED;
use crate::report::{self, CsvTables};
use crate::scenario::{PlannedPoint, Scenario};
use crate::sweep::{PointWork, SweepSettings, run_work};
use crate::{Error, interrupt};

/// Runs at once; a request beyond them is answered 503 with Retry-After.
pub(crate) const MAX_RUNS: usize = 4;
/// The most client records a lab study may simulate in all (clients or requests per run, times its runs): about
/// what two cores finish in a few seconds. Larger studies belong to the CLI.
pub(crate) const MAX_RECORDS: u64 = 4_000_000;
/// The most memory a lab study may be estimated to need.
pub(crate) const MAX_MEMORY_BYTES: u64 = 1 << 30;

/// One flag per slot: 0 while its run may go on, [`CANCELLED`] once a newer run replaces it, a signal's number
/// when the process stops. Static, as the engine polls a `&'static` flag.
static FLAGS: [AtomicUsize; MAX_RUNS] = [const { AtomicUsize::new(0) }; MAX_RUNS];
/// Runs finished, per slot (the progress a page shows).
static DONE: [AtomicU64; MAX_RUNS] = [const { AtomicU64::new(0) }; MAX_RUNS];

/// Who holds each slot: the channel its run was started on and how many runs it has in all.
static SLOTS: Mutex<[Option<Holder>; MAX_RUNS]> = Mutex::new([const { None }; MAX_RUNS]);

#[derive(Clone, Debug)]
struct Holder {
    channel: Option<String>,
    total: u64,
}

/// A run's progress, as `GET /api/progress` reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub(crate) struct Progress {
    pub(crate) channel: Option<String>,
    pub(crate) done: u64,
    pub(crate) total: u64,
}

/// A slot held for one run; dropping it frees the slot.
pub(crate) struct Slot {
    index: usize,
}

impl Slot {
    /// Takes a free slot for a run of `total` runs on `channel`, first cancelling any run on the same channel.
    /// `None` when every slot is busy.
    pub(crate) fn take(channel: Option<&str>, total: u64) -> Option<Slot> {
        let mut slots = SLOTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(channel) = channel {
            for (index, holder) in slots.iter().enumerate() {
                if holder.as_ref().is_some_and(|holder| holder.channel.as_deref() == Some(channel)) {
                    FLAGS[index].store(CANCELLED, Ordering::Relaxed);
                }
            }
        }
        let index = slots.iter().position(Option::is_none)?;
        slots[index] = Some(Holder { channel: channel.map(str::to_owned), total });
        FLAGS[index].store(interrupt::SIGNAL.load(Ordering::Relaxed), Ordering::Relaxed);
        DONE[index].store(0, Ordering::Relaxed);
        Some(Slot { index })
    }

    /// Stops this slot's run at its next poll (the lab's time limit).
    pub(crate) fn cancel(&self) {
        FLAGS[self.index].store(CANCELLED, Ordering::Relaxed);
    }

    pub(crate) fn flag(&self) -> &'static AtomicUsize {
        &FLAGS[self.index]
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut slots = SLOTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slots[self.index] = None;
    }
}

/// Every run in progress.
pub(crate) fn progress() -> Vec<Progress> {
    let slots = SLOTS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    slots
        .iter()
        .enumerate()
        .filter_map(|(index, holder)| {
            holder.as_ref().map(|holder| Progress {
                channel: holder.channel.clone(),
                done: DONE[index].load(Ordering::Relaxed),
                total: holder.total,
            })
        })
        .collect()
}

/// Copies a process signal into every slot's flag, so runs in progress end when the server stops.
pub(crate) fn stop_all(signal: usize) {
    for flag in &FLAGS {
        flag.store(signal.max(1), Ordering::Relaxed);
    }
}

/// What one lab run produced: the CSV tables `retrylab run` would write, and the manifest's warnings.
pub(crate) struct Finished {
    pub(crate) tables: CsvTables,
    pub(crate) warnings: Vec<String>,
    /// Each point's effective client policy (every caller's, in a call graph), each distinct one once.
    pub(crate) policies: Vec<String>,
    pub(crate) events: u64,
    pub(crate) truncated_runs: usize,
}

/// Refuses, before anything runs, a study too large for the lab, saying what to change and how the CLI runs it.
pub(crate) fn check_size(scenario: &Scenario, points: &[PlannedPoint], command: &str) -> Result<(), Error> {
    let runs = points.len() as u64 * u64::from(scenario.replicates);
    let records: u64 = points
        .iter()
        .map(|point| point.config.footprint().records.saturating_mul(u64::from(scenario.replicates)))
        .fold(0, u64::saturating_add);
    let threads = rayon::current_num_threads();
    let estimate = MemoryEstimate::of(scenario, &points.iter().collect::<Vec<_>>(), threads);
    let problem = if records > MAX_RECORDS {
        format!(
            "{runs} runs of {} client records in all, more than the lab's {MAX_RECORDS}; to make it smaller: fewer \
             replicates (replicates=…), fewer sweep points or fewer clients",
            records
        )
    } else if estimate.peak_bytes > MAX_MEMORY_BYTES {
        format!(
            "it needs {estimate}, more than the lab's {}; to need less: {}",
            Bytes(MAX_MEMORY_BYTES),
            estimate.advice()
        )
    } else {
        return Ok(());
    };
    Err(Error::Usage(format!("this study is too large for the lab: {problem}. The CLI runs it as it is:\n  {command}")))
}

/// The points' effective policies, in plan order, each once.
fn distinct_policies(points: &[PlannedPoint]) -> Vec<String> {
    let mut policies: Vec<String> = Vec::new();
    for policy in points.iter().filter_map(|point| point.policy.as_ref()) {
        if !policies.contains(policy) {
            policies.push(policy.clone());
        }
    }
    policies
}

/// Runs every point and replicate of the study on `slot`, and builds its tables as `retrylab run` does.
pub(crate) fn execute(scenario: &Scenario, points: &[PlannedPoint], slot: &Slot) -> Result<Finished, Error> {
    let work: Vec<PointWork> =
        (0..points.len()).map(|point| PointWork { point, replicates: (0..scenario.replicates).collect() }).collect();
    let settings = SweepSettings { stop: slot.flag(), ..SweepSettings::for_scenario(scenario, None) };
    let done = &DONE[slot.index];
    let swept = run_work(points, &work, settings, &|| _ = done.fetch_add(1, Ordering::Relaxed), &|_, _| Ok(()))?;
    let aggregate = report::aggregate_swept(scenario.model, &swept);
    Ok(Finished {
        tables: report::csv_tables(scenario, points, &swept.runs, &aggregate),
        warnings: report::backlog_warnings(scenario, points, &aggregate),
        policies: distinct_policies(points),
        events: aggregate.events,
        truncated_runs: swept.runs.iter().filter(|run| run.output.truncated).count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_on_the_same_channel_cancels_the_older_and_slots_are_bounded() {
        let first = Slot::take(Some("pane-a"), 10).unwrap();
        assert_eq!(first.flag().load(Ordering::Relaxed), 0);
        let other = Slot::take(Some("pane-b"), 5).unwrap();
        let second = Slot::take(Some("pane-a"), 10).unwrap();
        assert_eq!(first.flag().load(Ordering::Relaxed), CANCELLED, "the older run on pane-a is cancelled");
        assert_eq!(other.flag().load(Ordering::Relaxed), 0, "a run on another channel goes on");
        assert_eq!(second.flag().load(Ordering::Relaxed), 0);
        let fourth = Slot::take(None, 1).unwrap();
        assert!(Slot::take(None, 1).is_none(), "only {MAX_RUNS} runs at once");
        drop(fourth);
        assert!(Slot::take(None, 1).is_some(), "a freed slot is taken again");
        let channels: Vec<_> = progress().into_iter().map(|progress| progress.channel).collect();
        assert!(channels.contains(&Some("pane-b".to_owned())));
        drop((first, second, other));
    }
}

#[cfg(test)]
mod size_tests {
    use super::*;
    use crate::scenario::plan;

    fn check(scenario: &str, set: &[&str]) -> Result<(), String> {
        let text = std::fs::read_to_string(format!("scenarios/{scenario}.toml")).unwrap();
        let set: Vec<String> = set.iter().map(|s| (*s).to_owned()).collect();
        let path = std::path::PathBuf::from(format!("scenarios/{scenario}.toml"));
        let scenario = Scenario::with_overrides(&path, text, &set).unwrap();
        let points = plan(&scenario).unwrap();
        check_size(&scenario, &points, "retrylab run …").map_err(|error| error.to_string())
    }

    #[test]
    fn the_labs_size_limit_counts_every_runs_clients_and_the_memory_estimate() {
        // 4 strategies × 10 replicates × 100,000 clients: exactly the limit, accepted; one client more is not.
        assert_eq!(check("thundering-herd", &["clients=100000", "replicates=10"]), Ok(()));
        let over = check("thundering-herd", &["clients=100001", "replicates=10"]).unwrap_err();
        assert!(over.contains("40 runs of 4000040 client records"), "{over}");
        assert!(over.contains("The CLI runs it as it is:\n  retrylab run …"), "{over}");
        // A 1 µs timeline over a 40 s run is gigabytes of buckets although the clients are few.
        let memory = check("metastable", &["timeline_bucket=1us", "replicates=1"]).unwrap_err();
        assert!(memory.contains("more than the lab's 1.00 GiB"), "{memory}");
    }
}
