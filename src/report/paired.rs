//! paired.csv: how two values of a policy axis differ, replicate by replicate. Points that differ only in client
//! policy meet the same world in the same replicate (common random numbers), so the per-replicate difference of a
//! metric drops the noise both share; its interval sits beside the one the same runs give unpaired.

use super::aggregate::Aggregate;
use super::tables::{filled_metrics, finish, format_number, swept_header, writer};
use crate::params::SeedSide;
use crate::scenario::{PlannedPoint, Scenario};
use crate::stats::Difference;
use crate::sweep::Run;

/// One row per (policy axis, values of the other axes, pair a < b of the axis's values in sweep order): the
/// swept values (empty under the compared axis), `axis`, `a`, `b`, `replicates`, then per metric M
/// `M_diff_mean` (mean of M(a) − M(b)), `M_paired_ci95` and `M_unpaired_ci95`. `None` without a policy axis of
/// two or more values.
pub(super) fn paired_csv(
    scenario: &Scenario,
    points: &[PlannedPoint],
    runs: &[Run],
    aggregate: &Aggregate,
) -> Option<Vec<u8>> {
    let axes: Vec<usize> = (0..scenario.sweep.len())
        .filter(|&i| scenario.sweep[i].spec.side == SeedSide::Policy && scenario.sweep[i].values.len() > 1)
        .collect();
    if axes.is_empty() {
        return None;
    }
    let filled = filled_metrics(aggregate);
    let metrics: Vec<usize> = (0..filled.len()).filter(|&m| filled[m]).collect();
    // Per point, its runs by replicate number: pairs are joined on it.
    let mut by_point: Vec<std::collections::BTreeMap<u32, &Run>> = vec![Default::default(); points.len()];
    for run in runs {
        by_point[run.point].insert(run.replicate, run);
    }
    let mut out = writer();
    let mut header = swept_header(scenario);
    header.extend(["axis", "a", "b", "replicates"].map(str::to_owned));
    for &m in &metrics {
        let name = scenario.model.metrics()[m].name;
        header.extend(["diff_mean", "paired_ci95", "unpaired_ci95"].map(|suffix| format!("{name}_{suffix}")));
    }
    let _ = out.write_record(&header);
    for &axis in &axes {
        // Points grouped by their other swept values, groups and members in canonical order.
        let mut groups: Vec<Vec<&PlannedPoint>> = Vec::new();
        for point in points {
            let context = |p: &PlannedPoint| {
                (0..p.swept.len()).filter(|&i| i != axis).map(|i| p.swept[i].clone()).collect::<Vec<_>>()
            };
            match groups.iter_mut().find(|group| context(group[0]) == context(point)) {
                Some(group) => group.push(point),
                None => groups.push(vec![point]),
            }
        }
        for group in &groups {
            for (i, a) in group.iter().enumerate() {
                for b in &group[i + 1..] {
                    let mut row: Vec<String> = a.swept.iter().map(|value| value.to_string()).collect();
                    row[axis].clear();
                    row.extend([
                        scenario.sweep[axis].name.to_owned(),
                        a.swept[axis].to_string(),
                        b.swept[axis].to_string(),
                    ]);
                    let common: Vec<u32> =
                        by_point[a.index].keys().copied().filter(|r| by_point[b.index].contains_key(r)).collect();
                    row.push(common.len().to_string());
                    for &m in &metrics {
                        let values = |p: &PlannedPoint| {
                            common.iter().map(|r| by_point[p.index][r].output.metrics[m]).collect::<Vec<f64>>()
                        };
                        let difference = Difference::paired(&values(a), &values(b));
                        row.extend(
                            [difference.mean, difference.paired_ci95, difference.unpaired_ci95].map(format_number),
                        );
                    }
                    let _ = out.write_record(&row);
                }
            }
        }
    }
    Some(finish(out))
}

/// `retrylab compare DIR --paired`: the paired differences of `metric` (default: the first in the file) from
/// `dir/paired.csv` as a text table: per pair, `a − b` with its paired half-width, the unpaired one, and the
/// variance reduction factor (s²a + s²b) / s²(a − b), the replicates an unpaired comparison would need per paired
/// one, recovered from the half-widths: (unpaired / t(ν))² / (paired / t(n − 1))², Welch's ν taken as 2n − 2.
pub(crate) fn paired_table(dir: &std::path::Path, metric: Option<&str>) -> Result<String, crate::Error> {
    let path = dir.join("paired.csv");
    let bad = |message: String| crate::Error::Results { path: path.clone(), message };
    let mut reader = csv::Reader::from_path(&path).map_err(|e| {
        bad(format!("{e}; a folder has paired.csv only when its sweep has a [client] key with two or more values"))
    })?;
    let header: Vec<String> = reader.headers().map_err(|e| bad(e.to_string()))?.iter().map(str::to_owned).collect();
    let metrics: Vec<&str> = header.iter().filter_map(|h| h.strip_suffix("_diff_mean")).collect();
    let metric = match metric {
        Some(m) if metrics.contains(&m) => m,
        Some(m) => return Err(bad(format!("no metric `{m}` here; metrics: {}", metrics.join(", ")))),
        None => metrics.first().copied().ok_or_else(|| bad("no metric columns".into()))?,
    };
    let column = |name: &str| header.iter().position(|h| h == name).ok_or_else(|| bad(format!("no column {name}")));
    let (axis_column, replicates) = (column("axis")?, column("replicates")?);
    if axis_column + 2 >= header.len() {
        return Err(bad("no `a` and `b` columns after `axis`".into()));
    }
    let cells = [format!("{metric}_diff_mean"), format!("{metric}_paired_ci95"), format!("{metric}_unpaired_ci95")]
        .map(|name| column(&name));
    let [mean, paired, unpaired] = cells;
    let (mean, paired, unpaired) = (mean?, paired?, unpaired?);
    let mut text = format!("{}: {metric}, a − b per replicate (common random numbers)\n", dir.display());
    let _ = std::fmt::Write::write_fmt(
        &mut text,
        format_args!(
            "{:<44} {:>26} {:>14} {:>8}\n",
            "pair (other swept values)", "a − b ± paired 95%", "unpaired 95%", "VRF"
        ),
    );
    for record in reader.records() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        if record.len() != header.len() {
            return Err(bad(format!("a row has {} cells, the header {}", record.len(), header.len())));
        }
        let context: Vec<String> = (0..axis_column)
            .filter(|&i| !record[i].is_empty())
            .map(|i| format!("{}={}", header[i], &record[i]))
            .collect();
        let pair = format!("{} − {}", &record[axis_column + 1], &record[axis_column + 2]);
        let pair = if context.is_empty() { pair } else { format!("{pair} ({})", context.join(", ")) };
        let number = |i: usize| record[i].parse::<f64>().unwrap_or(f64::NAN);
        let n = record[replicates].parse::<usize>().unwrap_or(0);
        let t_ratio = crate::stats::t_975(n.saturating_sub(1)) / crate::stats::t_975(2 * n.saturating_sub(1));
        let factor = (number(unpaired) / number(paired) * t_ratio).powi(2);
        let factor = if factor.is_finite() { format!("{factor:.1}") } else { "-".into() };
        let _ = std::fmt::Write::write_fmt(
            &mut text,
            format_args!(
                "{pair:<44} {:>26} {:>14} {factor:>8}\n",
                format!("{} ± {}", &record[mean], &record[paired]),
                format!("± {}", &record[unpaired]),
            ),
        );
    }
    text.push_str(
        "VRF: variance of a − b unpaired over paired: the replicates an unpaired comparison needs per paired one\n",
    );
    Ok(text)
}
