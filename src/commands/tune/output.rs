//! What `retrylab tune` writes and prints once the race is over: tune.csv, recommendation.toml (the winner's block,
//! with the evidence and the command that reproduces its runs), the chart, and the lines on stdout.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::Candidate;
use crate::Error;
use crate::params::{ParamKind, Section, Value};
use crate::report::{csv_finish, csv_writer, draw_candidates, format_number};
use crate::scenario::{Origin, PlannedPoint, Scenario, swept_at};
use crate::stats::{Estimate, Support};
use crate::tune::expr::Constraint;
use crate::tune::race::{FAMILY_ALPHA, Race, Status};

/// Candidates the chart shows: one colour each.
const CHART_CANDIDATES: usize = 10;

/// A finished search, as the outputs read it.
pub(super) struct Outcome<'a> {
    pub(super) scenario: &'a Scenario,
    pub(super) candidates: &'a [Candidate],
    pub(super) points: &'a [PlannedPoint],
    pub(super) race: &'a Race,
    /// Candidates from best to worst (see [`Race::ranking`]).
    pub(super) ranking: Vec<usize>,
    pub(super) budget: u64,
    /// The metrics the objective and the constraints name, each once, in order.
    pub(super) named: Vec<String>,
    /// A candidate's values of a metric, replicate by replicate.
    pub(super) values: &'a dyn Fn(usize, &str) -> Vec<f64>,
    /// The `--set` arguments the search ran with.
    pub(super) overrides: &'a [String],
    /// Whether the scenario had a `[sweep]` the search left aside.
    pub(super) sweep_left_aside: bool,
}

impl Outcome<'_> {
    fn winner(&self) -> usize {
        self.ranking[0]
    }

    fn mean(&self, candidate: usize, metric: &str) -> Estimate {
        Estimate::of(&(self.values)(candidate, metric))
    }

    /// Whether candidate `i` left the race tied with the winner.
    pub(super) fn tied_with_winner(&self, i: usize) -> bool {
        matches!(self.race.entries[i].status, Status::Tied { with, .. } if with == self.winner())
    }

    /// The best candidate after the winner and those tied with it.
    pub(super) fn runner_up(&self) -> Option<usize> {
        self.ranking.iter().skip(1).copied().find(|&i| !self.tied_with_winner(i))
    }

    /// `amount` in the objective's terms: "300 calls" for a lone metric, else "300 of `2 * calls + …`".
    fn amount(&self, amount: f64) -> String {
        let objective = &self.race.objective;
        match objective.terms.as_slice() {
            [(coefficient, metric)] if *coefficient == 1.0 && objective.constant == 0.0 => {
                format!("{} {metric}", format_number(amount))
            }
            _ => format!("{} of `{objective}`", format_number(amount)),
        }
    }

    /// The left side of `constraint` for candidate `i`: its mean and 95% interval, kept inside the metric's range
    /// when the left side is one metric.
    fn constraint_estimate(&self, i: usize, constraint: &Constraint) -> Estimate {
        let metrics: Vec<Vec<f64>> = constraint.lhs.terms.iter().map(|(_, m)| (self.values)(i, m)).collect();
        let replicates = metrics.first().map_or(0, Vec::len);
        let lhs: Vec<f64> = (0..replicates)
            .map(|r| {
                constraint.lhs.eval(|name| {
                    let at = constraint.lhs.terms.iter().position(|(_, m)| m == name);
                    at.map_or(f64::NAN, |k| metrics[k][r])
                })
            })
            .collect();
        let support = match constraint.lhs.terms.as_slice() {
            [(coefficient, metric)] if *coefficient == 1.0 => self
                .scenario
                .model
                .metrics()
                .iter()
                .find(|spec| spec.answers_to(metric))
                .map_or(Support::Real, |spec| spec.unit.support()),
            _ => Support::Real,
        };
        Estimate::within(&lhs, support)
    }

    /// "fails `success_rate >= 0.99` (0.97 [0.96, 0.98])" for each constraint candidate `i` misses by its means.
    fn failures(&self, i: usize) -> Vec<String> {
        let race = self.race;
        race.constraints
            .iter()
            .filter(|constraint| !constraint.holds(|metric| self.mean(i, metric).mean))
            .map(|constraint| {
                let e = self.constraint_estimate(i, constraint);
                let [mean, lo, hi] = [e.mean, e.lo95, e.hi95].map(format_number);
                format!("fails {constraint} ({mean} [{lo}, {hi}])")
            })
            .collect()
    }

    /// How candidate `i` compares with the winner, in words: "worse by 295 calls (± 0, paired 95% CI over 20
    /// common replicates)", or for one that misses a constraint "cheaper by 300 calls (…) but fails
    /// success_rate >= 0.99 (0.97 [0.96, 0.98])".
    pub(super) fn versus_winner(&self, i: usize) -> String {
        let d = self.race.versus(i, self.winner());
        let interval =
            format!("± {}, paired 95% CI over {} common replicates", format_number(d.paired_ci95), d.replicates);
        let compared = if d.mean > 0.0 {
            format!("worse by {} ({interval})", self.amount(d.mean))
        } else if d.mean < 0.0 {
            format!("cheaper by {} ({interval})", self.amount(-d.mean))
        } else {
            format!("the same on average ({interval})")
        };
        let failures = self.failures(i);
        if failures.is_empty() {
            compared
        } else {
            format!("{compared} {} {}", if d.mean < 0.0 { "but" } else { "and" }, failures.join(" and "))
        }
    }

    /// Why candidate `i` tied with `with`: the objective's metrics it matched on every replicate.
    fn tie(&self, with: usize) -> String {
        let metrics: Vec<&str> = self.race.objective.terms.iter().map(|(_, m)| m.as_str()).collect();
        format!(
            "ties with {}: the same {} on every replicate (every metric alike: the same runs)",
            self.candidates[with].label,
            metrics.join(", ")
        )
    }

    fn status_text(&self, i: usize, rank: Option<usize>) -> String {
        match &self.race.entries[i].status {
            Status::Racing if rank == Some(1) => "best".into(),
            Status::Racing => "undecided".into(),
            Status::Dropped { replicates, reason, .. } => format!("dropped after {replicates}: {reason}"),
            Status::Tied { replicates, with } => format!("dropped after {replicates}: {}", self.tie(*with)),
            Status::SameAs(j) if *j == i => {
                format!("refused: {}", self.candidates[i].point.clone().err().unwrap_or_default())
            }
            Status::SameAs(j) => format!("same policy as {}", self.candidates[*j].label),
        }
    }

    /// The race's error control in one line, for recommendation.toml and stdout.
    pub(super) fn guarantee(&self) -> String {
        let rounds = self.race.rounds();
        format!(
            "family-wise error {FAMILY_ALPHA}: the chance the race dropped a best candidate, over its {rounds} \
             round{} (each test in round r at {FAMILY_ALPHA}/2^(r+1)/{}, Bonferroni)",
            if rounds == 1 { "" } else { "s" },
            self.race.tests_per_round()
        )
    }

    /// tune.csv: every candidate, ranked ones first; per candidate its swept values, replicates spent, the
    /// objective's mean and interval, its paired difference from the best, the named metrics' means, the race's
    /// family-wise level and the test that dropped it, its status and the effective policy.
    pub(super) fn tune_csv(&self) -> Vec<u8> {
        let (scenario, race) = (self.scenario, self.race);
        let mut out = csv_writer();
        let mut header: Vec<String> = vec!["rank".into()];
        header.extend(scenario.sweep.iter().map(|axis| axis.name.to_owned()));
        header.extend(
            [
                "replicates",
                "objective_mean",
                "objective_ci95",
                "vs_best_mean",
                "vs_best_paired_ci95",
                "vs_best_unpaired_ci95",
                "feasible",
            ]
            .map(str::to_owned),
        );
        header.extend(self.named.iter().flat_map(|m| [format!("{m}_mean"), format!("{m}_ci95")]));
        header.extend(["familywise_alpha", "drop_p_value", "drop_level", "status", "policy"].map(str::to_owned));
        let _ = out.write_record(&header);
        let unranked = (0..self.candidates.len()).filter(|i| !self.ranking.contains(i));
        for (position, i) in self.ranking.iter().copied().chain(unranked).enumerate() {
            let rank = (position < self.ranking.len()).then_some(position + 1);
            let point = self.candidates[i].point.as_ref().ok().map(|&p| &self.points[p]);
            let mut row: Vec<String> = vec![rank.map_or_else(String::new, |r| r.to_string())];
            row.extend(swept_at(scenario, i).iter().map(Value::to_string));
            if rank.is_some() {
                let estimate = Estimate::of(&race.entries[i].objective);
                let versus = race.versus(i, self.winner());
                row.push(race.entries[i].replicates().to_string());
                row.extend(
                    [estimate.mean, estimate.ci95, versus.mean, versus.paired_ci95, versus.unpaired_ci95]
                        .map(format_number),
                );
                row.push(race.feasible(i).to_string());
                for metric in &self.named {
                    let e = self.mean(i, metric);
                    row.extend([format_number(e.mean), format_number(e.ci95)]);
                }
            } else {
                row.extend(std::iter::repeat_n(String::new(), 7 + 2 * self.named.len()));
            }
            row.push(FAMILY_ALPHA.to_string());
            match &race.entries[i].status {
                Status::Dropped { test: Some(test), .. } => {
                    row.extend([format_number(test.p_value), format_number(test.level)]);
                }
                _ => row.extend([String::new(), String::new()]),
            }
            row.push(self.status_text(i, rank));
            row.push(point.and_then(|p| p.policy.clone()).unwrap_or_default());
            let _ = out.write_record(&row);
        }
        csv_finish(out)
    }

    /// recommendation.toml: the winner's `[client]` table (the scenario's own `[client]` values, the searched ones
    /// replaced) and, when a searched key lives in `[model]`, its `[model]` table likewise; the evidence and the
    /// command that reproduces the winner's runs in comments.
    pub(super) fn recommendation(&self) -> String {
        let (scenario, race, winner) = (self.scenario, self.race, self.winner());
        let estimate = Estimate::of(&race.entries[winner].objective);
        let replicates = race.entries[winner].replicates();
        let mut text = String::new();
        let _ = writeln!(
            text,
            "# retrylab tune {} (seed {}): {} runs of a budget of {}",
            scenario.display_path(),
            scenario.seed,
            race.spent(),
            self.budget
        );
        let _ = writeln!(
            text,
            "# best of {} candidates: {} = {} ± {} (95% CI, {replicates} replicates)",
            self.candidates.len(),
            race.objective,
            format_number(estimate.mean),
            format_number(estimate.ci95),
        );
        for constraint in &race.constraints {
            let holds = constraint.holds(|m| self.mean(winner, m).mean);
            let _ = writeln!(
                text,
                "# {constraint}: {}",
                if holds { "met (by the mean)" } else { "NOT met: no candidate meets every constraint" }
            );
        }
        let _ = writeln!(text, "# the race: {}", self.guarantee());
        for &i in self.ranking.iter().filter(|&&i| self.tied_with_winner(i)) {
            let _ = writeln!(text, "# tied: {} {}", self.candidates[i].label, self.tie(winner));
        }
        if let Some(second) = self.runner_up() {
            let _ = writeln!(text, "# runner-up {}: {}", self.candidates[second].label, self.versus_winner(second));
        }
        if let Ok(&point) = self.candidates[winner].point.as_ref() {
            if let Some(policy) = &self.points[point].policy {
                let _ = writeln!(text, "# effective policy: {policy}");
            }
            let _ = writeln!(text, "# point id {}", self.points[point].id());
        }
        let sections = self.sections();
        let tables: Vec<String> = sections.iter().map(|section| format!("[{}]", section.name())).collect();
        let _ = writeln!(
            text,
            "# to reproduce the winner's {replicates} runs, put {} below in place of the scenario's own{} and run:",
            tables.join(" and "),
            if self.sweep_left_aside { " (and remove its [sweep])" } else { "" }
        );
        let _ = writeln!(text, "#   {}", self.reproduce_command(replicates));
        let swept = swept_at(scenario, winner);
        for section in sections {
            let _ = writeln!(text, "[{}]", section.name());
            if section == Section::Model {
                let _ = writeln!(text, "kind = {}", toml_string(scenario.model.name()));
            }
            for setting in scenario.settings.iter().filter(|s| s.spec.section == section) {
                let searched = scenario.sweep.iter().position(|axis| std::ptr::eq(axis.spec, setting.spec));
                let value = match searched {
                    Some(axis) => Some(swept[axis].clone()),
                    None if setting.origin != Origin::Default => setting.value.clone(),
                    None => None,
                };
                if let Some(value) = value {
                    let _ = writeln!(text, "{} = {}", setting.spec.key, toml_value(setting.spec.kind, &value));
                }
            }
        }
        text
    }

    /// The tables the block holds: `[client]`, and each other table a searched key lives in (`[model]` for a
    /// queue's redelivery rule).
    fn sections(&self) -> Vec<Section> {
        let searched = |section: Section| self.scenario.sweep.iter().any(|axis| axis.spec.section == section);
        let others = [Section::Model, Section::Workload].into_iter().filter(|&section| searched(section));
        std::iter::once(Section::Client).chain(others).collect()
    }

    /// `retrylab run SCENARIO --seed S --replicates N [--set …]`: the same seeds as the search's runs of the winner
    /// (a run's seeds come from the master seed, the replicate and the point's values, as in the search).
    fn reproduce_command(&self, replicates: u32) -> String {
        let mut words = vec![
            "retrylab".to_owned(),
            "run".to_owned(),
            shell_quote(&self.scenario.display_path()),
            "--seed".to_owned(),
            self.scenario.seed.to_string(),
            "--replicates".to_owned(),
            replicates.to_string(),
        ];
        // Overrides of a sweep, or of a searched key (which the block's own value must win over), are left out.
        let searched = |set: &str| {
            let key = set.split_once('=').map_or(set, |(key, _)| key).trim();
            self.scenario.axis(key.rsplit('.').next().unwrap_or(key)).is_some()
        };
        for set in self.overrides.iter().filter(|set| !set.starts_with("sweep.") && !searched(set)) {
            words.extend(["--set".to_owned(), shell_quote(set)]);
        }
        words.join(" ")
    }

    /// tune.svg and tune.png: the best candidates' objective means with their intervals.
    pub(super) fn chart(&self, stem: &Path) -> Result<Vec<PathBuf>, Error> {
        let race = self.race;
        let bars: Vec<(String, f64, f64, f64)> = self
            .ranking
            .iter()
            .take(CHART_CANDIDATES)
            .enumerate()
            .map(|(position, &i)| {
                let e = Estimate::of(&race.entries[i].objective);
                let mark = if race.feasible(i) { "" } else { " (breaks a constraint)" };
                let dropped = if race.entries[i].status == Status::Racing { "" } else { " (dropped)" };
                (format!("#{} {}{mark}{dropped}", position + 1, self.candidates[i].label), e.mean, e.lo95, e.hi95)
            })
            .collect();
        let constraints: Vec<String> = race.constraints.iter().map(ToString::to_string).collect();
        let shown = if self.ranking.len() > CHART_CANDIDATES {
            format!("best {CHART_CANDIDATES} of {}", self.ranking.len())
        } else {
            format!("{} candidates", self.ranking.len())
        };
        let subject =
            if constraints.is_empty() { String::new() } else { format!(" · subject to {}", constraints.join(", ")) };
        draw_candidates(
            format!("{}: tune", self.scenario.name),
            format!(
                "{shown} · lower is better{subject} · whiskers: each one's 95% CI; the race compares paired differences (tune.csv) · {} runs",
                race.spent()
            ),
            format!("objective: {}", race.objective),
            bars,
            stem,
        )
    }
}

/// A value as TOML writes it: whole numbers bare, other numbers in a form TOML reads as a float, names and
/// durations quoted, lists as arrays of strings.
fn toml_value(kind: ParamKind, value: &Value) -> String {
    match value {
        Value::Count(n) => n.to_string(),
        Value::Real(x) => format!("{x:?}"),
        Value::Text(text) if kind.takes_a_list() => {
            let items: Vec<String> = text.split(", ").map(toml_string).collect();
            format!("[{}]", items.join(", "))
        }
        _ => toml_string(&value.to_string()),
    }
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
fn toml_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\t' => quoted.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(quoted, "\\u{:04X}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// `word` as a POSIX shell reads it back: bare when it holds only safe characters, else in single quotes.
fn shell_quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_written_as_toml_reads_them_back() {
        let kind = ParamKind::Real { min: 0.0, max: f64::INFINITY };
        for (value, text) in [(2.0, "2.0"), (0.1, "0.1"), (1e-7, "1e-7"), (1e300, "1e300")] {
            assert_eq!(toml_value(kind, &Value::Real(value)), text);
            let parsed: toml::Table = format!("x = {text}").parse().unwrap();
            assert_eq!(parsed["x"].as_float(), Some(value));
        }
        assert_eq!(toml_string("a\"b\\c\u{1b}"), r#""a\"b\\c\u001B""#);
        let parsed: toml::Table = format!("x = {}", toml_string("a\"b\\c\u{1b}\n")).parse().unwrap();
        assert_eq!(parsed["x"].as_str(), Some("a\"b\\c\u{1b}\n"));
        assert_eq!(shell_quote("scenarios/a b.toml"), "'scenarios/a b.toml'");
        assert_eq!(shell_quote("workers=5"), "workers=5");
    }
}
