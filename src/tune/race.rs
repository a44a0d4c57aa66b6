//! Racing candidate policies on common random numbers. Every candidate runs the same replicates (so replicate i of
//! each meets the same world), in rounds that double the replicates of the candidates still racing. After each
//! round the best candidate (feasible by its means first, then the lowest objective mean) stays, and another
//! leaves once its paired 95% interval of (objective − best's) lies above zero, or once some constraint's interval
//! lies wholly on the wrong side, or once it scores exactly as the best on every replicate (a policy that acts
//! alike: common random numbers give it the very same runs). A racing scheme in the spirit of Maron & Moore's
//! Hoeffding races (1994) and F-Race (Birattari et al. 2002), with Student's paired interval as the test. The race ends when one candidate is
//! left or the budget of runs is spent; its verdict depends on the runs' values alone, so it is deterministic.

use std::ops::Range;

use super::expr::{Constraint, Objective};
use crate::stats::{Difference, Estimate};

/// Replicates of every candidate in the first round.
pub(crate) const FIRST_ROUND: u32 = 5;

/// Where a candidate stands.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Status {
    Racing,
    /// The same effective policy as the earlier candidate: not run, it shares that one's verdict.
    SameAs(usize),
    /// Out of the race after `replicates`, for `reason`.
    Dropped {
        replicates: u32,
        reason: String,
    },
    /// Out of the race after `replicates` on which it scored exactly as candidate `with`, the leader then.
    Tied {
        replicates: u32,
        with: usize,
    },
}

/// One candidate's runs so far.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    /// Per replicate, the objective's value (NaN where a metric it names was undefined).
    pub(crate) objective: Vec<f64>,
    /// Per constraint, per replicate: how far inside the constraint the run was (negative: outside; −∞ where a
    /// metric it names was undefined, which no bound can be said to hold for).
    pub(crate) slack: Vec<Vec<f64>>,
    /// Per replicate, a hash of every metric's value: equal fingerprints on every replicate mean the very same runs.
    pub(crate) fingerprints: Vec<u64>,
    pub(crate) status: Status,
}

impl Entry {
    pub(crate) fn replicates(&self) -> u32 {
        self.objective.len() as u32
    }

    fn feasible_by_means(&self) -> bool {
        self.slack.iter().all(|slack| Estimate::of(slack).mean >= 0.0)
    }

    /// Replicates on which the objective was undefined (a metric it names had no value, such as a p99 latency
    /// in a run where nothing succeeded).
    fn undefined(&self) -> usize {
        self.objective.iter().filter(|x| x.is_nan()).count()
    }

    /// Why some constraint is broken for sure: undefined on a replicate, or its interval wholly on the wrong side
    /// (after two replicates at least).
    fn surely_broken(&self, constraints: &[Constraint]) -> Option<String> {
        let n = self.replicates();
        self.slack.iter().zip(constraints).find_map(|(slack, constraint)| {
            let undefined = slack.iter().filter(|s| **s == f64::NEG_INFINITY).count();
            let estimate = Estimate::of(slack);
            if undefined > 0 {
                Some(format!("breaks `{constraint}`: undefined on {undefined} of {n} replicates"))
            } else if n >= 2 && estimate.hi95 < 0.0 {
                Some(format!("breaks `{constraint}` (slack {:.4} ± {:.4})", estimate.mean, estimate.ci95))
            } else {
                None
            }
        })
    }
}

/// The state of a race.
pub(crate) struct Race {
    pub(crate) objective: Objective,
    pub(crate) constraints: Vec<Constraint>,
    pub(crate) entries: Vec<Entry>,
    budget: u64,
    spent: u64,
}

impl Race {
    /// A race of `same_as.len()` candidates (`same_as[i]`: an earlier candidate with the same policy).
    pub(crate) fn new(
        same_as: &[Option<usize>],
        objective: Objective,
        constraints: Vec<Constraint>,
        budget: u64,
    ) -> Race {
        let entries = same_as
            .iter()
            .map(|same| Entry {
                objective: Vec::new(),
                slack: vec![Vec::new(); constraints.len()],
                fingerprints: Vec::new(),
                status: same.map_or(Status::Racing, Status::SameAs),
            })
            .collect();
        Race { objective, constraints, entries, budget, spent: 0 }
    }

    pub(crate) fn spent(&self) -> u64 {
        self.spent
    }

    fn racing(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.entries.len()).filter(|&i| self.entries[i].status == Status::Racing)
    }

    /// The replicates each racing candidate runs next (empty: the race is over). Every racing candidate is brought
    /// to the same count: twice the current one (`FIRST_ROUND` at first), or as far as the budget reaches.
    pub(crate) fn next_round(&self) -> Vec<(usize, Range<u32>)> {
        let racing: Vec<usize> = self.racing().collect();
        let have = racing.iter().map(|&i| self.entries[i].replicates()).max().unwrap_or(0);
        if racing.is_empty() || (racing.len() == 1 && have >= FIRST_ROUND) || self.hopeless() {
            return Vec::new();
        }
        let left = self.budget - self.spent;
        let cost =
            |target: u32| -> u64 { racing.iter().map(|&i| u64::from(target - self.entries[i].replicates())).sum() };
        let mut target = if have == 0 { FIRST_ROUND } else { have * 2 };
        if cost(target) > left {
            let per_candidate = (left / racing.len() as u64) as u32;
            target = have + per_candidate;
            // Bring everyone to `have` first (all are there after any full round).
            if per_candidate == 0 || cost(target) > left {
                return Vec::new();
            }
        }
        racing.into_iter().map(|i| (i, self.entries[i].replicates()..target)).filter(|(_, r)| !r.is_empty()).collect()
    }

    /// Every racing candidate is sure to break a constraint: nothing is left to learn.
    fn hopeless(&self) -> bool {
        !self.constraints.is_empty()
            && self.racing().all(|i| self.entries[i].surely_broken(&self.constraints).is_some())
    }

    /// Records replicate `replicate` of `candidate`: every metric's value (`metrics`), and by name.
    pub(crate) fn record(&mut self, candidate: usize, replicate: u32, metrics: &[f64], value_of: impl Fn(&str) -> f64) {
        let entry = &mut self.entries[candidate];
        let at = replicate as usize;
        let grow = |series: &mut Vec<f64>| {
            if series.len() <= at {
                series.resize(at + 1, f64::NAN);
            }
        };
        grow(&mut entry.objective);
        entry.objective[at] = self.objective.eval(&value_of);
        for (constraint, slack) in self.constraints.iter().zip(&mut entry.slack) {
            grow(slack);
            let value = constraint.slack(&value_of);
            slack[at] = if value.is_nan() { f64::NEG_INFINITY } else { value };
        }
        if entry.fingerprints.len() <= at {
            entry.fingerprints.resize(at + 1, 0);
        }
        let bits: Vec<u8> = metrics.iter().flat_map(|x| x.to_bits().to_le_bytes()).collect();
        entry.fingerprints[at] = crate::engine::stable_hash(&bits);
        self.spent += 1;
    }

    /// The candidate leading the race: feasible by its means first, then the lowest objective mean.
    pub(crate) fn leader(&self) -> Option<usize> {
        self.racing()
            .min_by(|&a, &b| self.order_key(a).partial_cmp(&self.order_key(b)).unwrap_or(std::cmp::Ordering::Equal))
    }

    /// Feasible by the means first, then defined on every replicate, then the lowest objective mean.
    fn order_key(&self, i: usize) -> (bool, bool, f64) {
        let entry = &self.entries[i];
        let mean = Estimate::of(&entry.objective).mean;
        (!entry.feasible_by_means(), entry.undefined() > 0, if mean.is_nan() { f64::INFINITY } else { mean })
    }

    /// `a`'s objective minus `b`'s, replicate by replicate.
    pub(crate) fn versus(&self, a: usize, b: usize) -> Difference {
        let (a, b) = (&self.entries[a].objective, &self.entries[b].objective);
        let n = a.len().min(b.len());
        Difference::paired(&a[..n], &b[..n])
    }

    /// Drops the candidates the last round decided against.
    pub(crate) fn judge(&mut self, label: impl Fn(usize) -> String) {
        let Some(leader) = self.leader() else { return };
        let leader_feasible = self.entries[leader].feasible_by_means();
        let leader_defined = self.entries[leader].undefined() == 0;
        let mut verdicts = Vec::new();
        for i in self.racing().filter(|&i| i != leader) {
            let entry = &self.entries[i];
            let replicates = entry.replicates();
            if replicates < 2 {
                continue;
            }
            if let Some(reason) = entry.surely_broken(&self.constraints).filter(|_| leader_feasible) {
                verdicts.push((i, Status::Dropped { replicates, reason }));
                continue;
            }
            let undefined = entry.undefined();
            if undefined > 0 && leader_defined {
                let reason = format!("objective undefined on {undefined} of {replicates} replicates");
                verdicts.push((i, Status::Dropped { replicates, reason }));
                continue;
            }
            let common = replicates.min(self.entries[leader].replicates()) as usize;
            if entry.fingerprints[..common] == self.entries[leader].fingerprints[..common]
                && common == replicates as usize
            {
                // Two policies that act alike (attempts never reached, a cap never hit) get the very same runs on
                // common random numbers, every metric equal: no number of replicates would tell them apart.
                verdicts.push((i, Status::Tied { replicates, with: leader }));
                continue;
            }
            let difference = self.versus(i, leader);
            if leader_feasible && difference.mean - difference.paired_ci95 > 0.0 {
                let reason = format!(
                    "worse than {} by {:.4} ± {:.4} (paired 95% CI)",
                    label(leader),
                    difference.mean,
                    difference.paired_ci95
                );
                verdicts.push((i, Status::Dropped { replicates, reason }));
            }
        }
        for (i, status) in verdicts {
            self.entries[i].status = status;
        }
    }

    /// Candidates from best to worst: still racing (by feasibility, then mean), then those dropped later before
    /// those dropped earlier; candidates with a twin are left out.
    pub(crate) fn ranking(&self) -> Vec<usize> {
        let mut order: Vec<usize> =
            (0..self.entries.len()).filter(|&i| !matches!(self.entries[i].status, Status::SameAs(_))).collect();
        order.sort_by(|&a, &b| {
            let key = |i: usize| {
                let dropped = self.entries[i].status != Status::Racing;
                let (infeasible, undefined, mean) = self.order_key(i);
                (dropped, u32::MAX - self.entries[i].replicates(), infeasible, undefined, mean)
            };
            key(a).partial_cmp(&key(b)).unwrap_or(std::cmp::Ordering::Equal)
        });
        order
    }

    /// Whether candidate `i`'s means meet every constraint.
    pub(crate) fn feasible(&self, i: usize) -> bool {
        self.entries[i].feasible_by_means()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tune::expr::{parse_constraint, parse_objective};

    /// Candidates whose objective is `mean + world noise`: the race keeps the lowest mean and drops the others.
    fn race(means: &[f64], budget: u64) -> Race {
        let metrics = ["x", "ok"];
        let objective = parse_objective("x", &metrics).unwrap();
        let constraints = vec![parse_constraint("ok >= 0.5", &metrics).unwrap()];
        let mut race = Race::new(&vec![None; means.len()], objective, constraints, budget);
        loop {
            let round = race.next_round();
            if round.is_empty() {
                break;
            }
            for (candidate, replicates) in round {
                for r in replicates {
                    // The world's noise is shared by every candidate in replicate r; a little of its own on top.
                    let world = ((r as f64) * 0.7).sin() * 10.0;
                    let own = ((r as f64 + candidate as f64 * 3.1) * 1.3).cos() * 0.2;
                    let ok = if candidate == 0 { 0.0 } else { 1.0 };
                    let x = means[candidate] + world + own;
                    race.record(candidate, r, &[x, ok], |name| if name == "x" { x } else { ok });
                }
            }
            race.judge(|i| format!("#{i}"));
        }
        race
    }

    #[test]
    fn the_race_keeps_the_best_feasible_candidate_and_spends_no_more_than_its_budget() {
        // Candidate 0 is the lowest but breaks its constraint; candidate 2 is the best feasible one.
        let race = race(&[0.0, 3.0, 1.0, 1.5, 5.0], 400);
        assert_eq!(race.ranking()[0], 2);
        assert!(race.spent() <= 400);
        assert!(matches!(&race.entries[0].status, Status::Dropped { reason, .. } if reason.contains("breaks")));
        assert!(matches!(&race.entries[4].status, Status::Dropped { reason, .. } if reason.contains("worse than #2")));
        // Common random numbers: a difference of 0.5 against world noise of ±10 is decided in a few replicates.
        assert!(race.entries[3].replicates() <= 20, "{:?}", race.entries[3].objective.len());
    }

    /// Two candidates with the same objective on every replicate but another metric apart are not a tie; the
    /// same runs are; a candidate whose objective is undefined leaves.
    #[test]
    fn only_identical_runs_tie_and_an_undefined_objective_loses() {
        let metrics = ["x", "y"];
        let objective = parse_objective("x", &metrics).unwrap();
        let mut race = Race::new(&[None, None, None, None], objective, Vec::new(), 40);
        for (candidate, replicates) in race.next_round() {
            for r in replicates {
                let x = [1.0, 1.0, 1.0, f64::NAN][candidate] + f64::from(r);
                let y = [5.0, 5.0, 6.0, 5.0][candidate];
                race.record(candidate, r, &[x, y], |name| if name == "x" { x } else { y });
            }
        }
        race.judge(|i| format!("#{i}"));
        assert_eq!(race.entries[0].status, Status::Racing);
        assert_eq!(race.entries[1].status, Status::Tied { replicates: 5, with: 0 });
        assert_eq!(race.entries[2].status, Status::Racing, "same objective, other runs: still open");
        assert!(
            matches!(&race.entries[3].status, Status::Dropped { reason, .. } if reason.contains("undefined on 5 of 5"))
        );
    }

    #[test]
    fn a_budget_too_small_for_a_round_stops_the_race() {
        let race = race(&[1.0, 2.0, 3.0], 12);
        assert_eq!(race.spent(), 12, "the first round shrinks to 4 replicates each, and nothing is left after it");
    }
}
