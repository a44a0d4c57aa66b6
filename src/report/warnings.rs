//! What a results folder says about its own numbers beyond them: a backlog (a server's queue, a message queue)
//! still growing when new work stopped. Such a run's verdict ("never recovers", a p99) depends on how much the
//! queue was allowed to hold, so the summary line and `manifest.json`'s `warnings` say so, with what to set.
//!
//! Judged on each point's mean timeline over its replicates, from the model's [`Backlog`] series: the window is
//! every bucket up to the last with new work offered, and it must have work offered in at least half its buckets
//! (a steady load, not a burst or a periodic herd, whose queues drain by design). With `k` = an eighth of it, the
//! backlog is growing when its mean level over the last `k` buckets is at least [`MIN_WAITING`] and at least a
//! second's worth of the window's mean offered rate, more than [`RISE`] times the `k` before, and more than
//! [`RISE`] times its mean over the window's first half. A level held at a bound, a stable queue's fluctuations, a
//! queue short against the load and one that drained do not pass them all.

use crate::model::Backlog;
use crate::report::Aggregate;
use crate::scenario::{PlannedPoint, Scenario};

/// Fewer waiting than this is no backlog worth a word.
const MIN_WAITING: f64 = 10.0;
/// How much the backlog must have risen, over the stretch before and over the window's first half.
const RISE: f64 = 1.1;
/// Windows shorter than this many buckets are not judged (a burst's single release, a short run).
const MIN_BUCKETS: usize = 16;

/// One warning per point whose backlog was still growing when new work stopped, in point order.
pub fn backlog_warnings(scenario: &Scenario, points: &[PlannedPoint], aggregate: &Aggregate) -> Vec<String> {
    let Some(backlog) = scenario.model.backlog() else { return Vec::new() };
    let series = scenario.model.timeline_series();
    let index = |name: &str| series.iter().position(|s| *s == name);
    let (Some(level), Some(offered)) = (index(backlog.level), index(backlog.offered)) else { return Vec::new() };
    let wasted = backlog.wasted.and_then(|(wasted, useful)| Some((index(wasted)?, index(useful)?)));
    let columns = Columns { width: series.len(), level, offered, wasted };
    let bucket_ms = scenario.timeline_bucket.as_millis_f64();
    points
        .iter()
        .zip(&aggregate.timelines)
        .filter_map(|(point, timeline)| {
            let growth = Growth::of(timeline, &columns, bucket_ms)?;
            Some(growth.describe(scenario, point, &backlog, bucket_ms))
        })
        .collect()
}

/// Where a model's backlog series sit in a bucket-major timeline row.
struct Columns {
    width: usize,
    level: usize,
    offered: usize,
    wasted: Option<(usize, usize)>,
}

/// A backlog found growing at the end of its window.
#[derive(Debug, PartialEq)]
struct Growth {
    /// Buckets in the window (new work offered up to the last of them).
    window: usize,
    /// Buckets in each compared stretch.
    stretch: usize,
    /// The level in the window's last bucket, and the mean levels of the last stretch and the one before it.
    waiting_at_end: f64,
    last: f64,
    before: f64,
    /// Of the work finished in the last stretch, the share done for clients that had given up.
    wasted_share: Option<f64>,
}

impl Growth {
    /// The growth on `timeline` (bucket-major, buckets `bucket_ms` wide), if the backlog was growing.
    fn of(timeline: &[f64], columns: &Columns, bucket_ms: f64) -> Option<Growth> {
        let buckets = timeline.len() / columns.width.max(1);
        let value = |bucket: usize, column: usize| timeline[bucket * columns.width + column];
        let window = (0..buckets).rev().find(|&bucket| value(bucket, columns.offered) > 0.0)? + 1;
        let busy = (0..window).filter(|&bucket| value(bucket, columns.offered) > 0.0).count();
        if window < MIN_BUCKETS || busy * 2 < window {
            return None;
        }
        let offered_per_second =
            (0..window).map(|bucket| value(bucket, columns.offered)).sum::<f64>() / (window as f64 * bucket_ms / 1e3);
        let stretch = window / 8;
        let mean_level = |from: usize, to: usize| {
            (from..to).map(|bucket| value(bucket, columns.level)).sum::<f64>() / (to - from) as f64
        };
        let last = mean_level(window - stretch, window);
        let before = mean_level(window - 2 * stretch, window - stretch);
        let first_half = mean_level(0, window / 2);
        if last < MIN_WAITING.max(offered_per_second) || last <= RISE * before || last <= RISE * first_half {
            return None;
        }
        let wasted_share = columns.wasted.and_then(|(wasted, useful)| {
            let sum = |column: usize| (window - stretch..window).map(|bucket| value(bucket, column)).sum::<f64>();
            let (wasted, useful) = (sum(wasted), sum(useful));
            (wasted + useful > 0.0).then(|| wasted / (wasted + useful))
        });
        Some(Growth { window, stretch, waiting_at_end: value(window - 1, columns.level), last, before, wasted_share })
    }

    fn describe(&self, scenario: &Scenario, point: &PlannedPoint, backlog: &Backlog, bucket_ms: f64) -> String {
        let swept: Vec<String> =
            scenario.sweep.iter().zip(&point.swept).map(|(axis, value)| format!("{}={value}", axis.name)).collect();
        let at = if swept.is_empty() { format!("point {}", point.index) } else { swept.join(", ") };
        let seconds = |buckets: usize| super::format_number(buckets as f64 * bucket_ms / 1000.0);
        let mut text = format!(
            "{at}: {} was still growing when new work stopped at {} s: {} waiting then (mean over replicates), its \
             mean level {} over the last {} s against {} over the {} s before",
            backlog.what,
            seconds(self.window),
            super::format_number(self.waiting_at_end.round()),
            super::format_number(self.last.round()),
            seconds(self.stretch),
            super::format_number(self.before.round()),
            seconds(self.stretch),
        );
        if let Some(share) = self.wasted_share.filter(|share| *share > 0.0) {
            text.push_str(&format!(
                "; {}% of the work it finished in those last {} s was for clients that had already given up",
                super::format_number((share * 100.0).round()),
                seconds(self.stretch)
            ));
        }
        if let Some(settings) = &point.settings {
            text.push_str(&format!(". Settings: {settings}"));
        }
        text.push_str(&format!(". To change it: {}", backlog.remedy));
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLUMNS: Columns = Columns { width: 4, level: 0, offered: 1, wasted: Some((2, 3)) };
    /// One offered request per 500 ms bucket: 2 a second.
    const BUCKET_MS: f64 = 500.0;

    /// A timeline of `levels`, work offered in every bucket but the last `idle`, one wasted service per bucket
    /// against three useful ones.
    fn timeline(levels: &[f64], idle: usize) -> Vec<f64> {
        let offered_until = levels.len() - idle;
        levels
            .iter()
            .enumerate()
            .flat_map(|(i, &level)| [level, f64::from(u8::from(i < offered_until)), 1.0, 3.0])
            .collect()
    }

    #[test]
    fn a_queue_rising_to_the_end_of_its_window_is_growing() {
        let levels: Vec<f64> = (0..64).map(|i| i as f64 * 2.0).collect();
        let growth = Growth::of(&timeline(&levels, 0), &COLUMNS, BUCKET_MS).expect("growing");
        assert_eq!((growth.window, growth.stretch, growth.waiting_at_end), (64, 8, 126.0));
        assert_eq!(growth.last, (56..64).map(|i| i as f64 * 2.0).sum::<f64>() / 8.0);
        assert_eq!(growth.before, (48..56).map(|i| i as f64 * 2.0).sum::<f64>() / 8.0);
        assert_eq!(growth.wasted_share, Some(0.25));
    }

    #[test]
    fn the_window_ends_with_the_last_work_offered_and_the_drain_after_it_is_not_judged() {
        let mut levels: Vec<f64> = (0..64).map(|i| i as f64 * 2.0).collect();
        levels.extend((0..40).map(|i| 126.0 - i as f64 * 3.0));
        let growth = Growth::of(&timeline(&levels, 40), &COLUMNS, BUCKET_MS).expect("growing within its window");
        assert_eq!(growth.window, 64);
    }

    #[test]
    fn a_level_held_at_a_bound_a_small_queue_and_a_short_window_are_not_growing() {
        let held: Vec<f64> = (0..64).map(|i| (i as f64 * 10.0).min(200.0)).collect();
        assert_eq!(Growth::of(&timeline(&held, 0), &COLUMNS, BUCKET_MS), None, "held at its bound");
        let small: Vec<f64> = (0..64).map(|i| i as f64 / 10.0).collect();
        assert_eq!(Growth::of(&timeline(&small, 0), &COLUMNS, BUCKET_MS), None, "fewer than MIN_WAITING");
        let short: Vec<f64> = (0..15).map(|i| i as f64 * 100.0).collect();
        assert_eq!(Growth::of(&timeline(&short, 0), &COLUMNS, BUCKET_MS), None, "shorter than MIN_BUCKETS");
        let mut herd = timeline(&(0..64).map(|i| i as f64 * 2.0).collect::<Vec<f64>>(), 0);
        for bucket in (0..64).filter(|bucket| bucket % 8 != 7) {
            herd[bucket * 4 + 1] = 0.0;
        }
        assert_eq!(Growth::of(&herd, &COLUMNS, BUCKET_MS), None, "work offered in one bucket of eight: a herd");
        let heavy: Vec<f64> = (0..64).map(|i| i as f64 / 2.0).collect();
        let under_a_second = |mut timeline: Vec<f64>| {
            timeline.chunks_mut(4).for_each(|bucket| bucket[1] = 100.0);
            timeline
        };
        assert!(
            Growth::of(&timeline(&heavy, 0), &COLUMNS, BUCKET_MS).is_some(),
            "about 30 waiting, 2 offered a second"
        );
        assert_eq!(
            Growth::of(&under_a_second(timeline(&heavy, 0)), &COLUMNS, BUCKET_MS),
            None,
            "about 30 waiting is less than a second of 200 offered a second"
        );
        let mut dipped: Vec<f64> = vec![500.0; 32];
        dipped.extend([vec![20.0; 24], vec![60.0; 8]].concat());
        assert_eq!(
            Growth::of(&timeline(&dipped, 0), &COLUMNS, BUCKET_MS),
            None,
            "rising again, but below its first half"
        );
    }
}
