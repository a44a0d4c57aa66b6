//! Limiters stacked: `limiter = ["aws-quota", "budget"]`, where a retry needs every member's consent.

use super::{Admission, Failed, Limiter, LimiterKind, Outcome, Permit, RetryLimiter};
use crate::time::SimTime;

/// The most members a stack can have: every shipped limiter once, and the model's own budget.
pub(super) const MAX_MEMBERS: usize = LimiterKind::ALL.len() + 1;

/// Several limiters that must all agree. A retry is granted only when every member grants it, asked in the
/// order written; when one refuses, the members that already granted it take their grant back
/// ([`RetryLimiter::release`]), so a refused retry costs nothing and the order of the grants does not matter.
/// An attempt is sent only when every member admits it (the longest wait wins; the first rejection rejects it,
/// and a member that made it wait before has counted the wait). Every member sees every outcome, send and
/// withdrawal. The permit the stack hands out costs the most any member charged, which is what the one member
/// that refunds by cost (an AWS quota; a stack takes at most one) gets back on success; the other limiters only
/// ask whether an attempt was a retry. It holds the latest reservation any member made.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterStack(Vec<Limiter>);

impl LimiterStack {
    /// A stack of `members`, at most [`MAX_MEMBERS`] of them and none a stack itself (the caller lists each
    /// limiter once).
    pub fn new(members: Vec<Limiter>) -> LimiterStack {
        assert!(members.len() <= MAX_MEMBERS, "a stack lists each limiter once");
        assert!(!members.iter().any(|member| matches!(member, Limiter::Stack(_))), "stacks do not nest");
        LimiterStack(members)
    }

    /// Its members, in the order they are asked.
    pub fn members(&self) -> &[Limiter] {
        &self.0
    }
}

impl RetryLimiter for LimiterStack {
    fn acquire_retry(&mut self, now: SimTime, failed: Failed) -> Option<Permit> {
        // The grants so far, kept on the stack: no allocation per retry decision.
        let mut granted = [Permit::costing(0.0); MAX_MEMBERS];
        for index in 0..self.0.len() {
            match self.0[index].acquire_retry(now, failed) {
                Some(permit) => granted[index] = permit,
                None => {
                    for (earlier, &permit) in self.0[..index].iter_mut().zip(&granted) {
                        earlier.release(now, permit);
                    }
                    return None;
                }
            }
        }
        let granted = &granted[..self.0.len()];
        Some(Permit {
            cost: granted.iter().map(|permit| permit.cost).fold(0.0, f64::max),
            not_before: granted.iter().map(|permit| permit.not_before).max().unwrap_or(SimTime::ZERO),
        })
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        for member in &mut self.0 {
            member.record(now, outcome);
        }
    }

    /// Members are asked in order; the first rejection rejects the attempt, and later members are not asked
    /// (they would count an attempt that is never sent).
    fn admit(&mut self, now: SimTime, draw: f64) -> Admission {
        let mut answer = Admission::Send;
        for member in &mut self.0 {
            answer = match (answer, member.admit(now, draw)) {
                (_, Admission::Reject) => return Admission::Reject,
                (Admission::Wait(a), Admission::Wait(b)) => Admission::Wait(a.max(b)),
                (Admission::Wait(wait), _) | (_, Admission::Wait(wait)) => Admission::Wait(wait),
                (_, Admission::Send) => answer,
            };
        }
        answer
    }

    fn on_send(&mut self, now: SimTime, is_retry: bool) {
        for member in &mut self.0 {
            member.on_send(now, is_retry);
        }
    }

    fn withdraw(&mut self, now: SimTime, sent: bool, permit: Option<Permit>) {
        for member in &mut self.0 {
            member.withdraw(now, sent, permit);
        }
    }

    fn release(&mut self, now: SimTime, permit: Permit) {
        for member in &mut self.0 {
            member.release(now, permit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limiters::{AwsRetryQuota, GrpcThrottle, RetryBudget};
    use crate::time::SimDuration;

    #[test]
    fn a_retry_needs_every_members_consent_and_a_refusal_returns_the_others_permits() {
        // A quota of 10 tokens (5 per retry) and a budget whose only allowance is a reserve of one retry.
        let mut stack = LimiterStack::new(vec![
            Limiter::AwsQuota(AwsRetryQuota::new(10.0, 5.0, 10.0, 5.0)),
            Limiter::Budget(RetryBudget::new(0.0, 1.0, SimDuration::from_secs(1))),
        ]);
        // The budget's reserve is one retry per second: the first retry passes both, and costs the quota 5.
        let permit = stack.acquire_retry(SimTime::ZERO, Failed::Error).expect("both grant");
        assert_eq!(permit.cost, 5.0, "the stack's permit costs the most any member charged");
        stack.record(SimTime::ZERO, Outcome::failure(Some(permit)));
        // The second: the quota grants (5 of its last 5 tokens), the budget refuses: no retry, and the quota takes
        // its grant back, so a refused retry costs nothing.
        assert_eq!(stack.acquire_retry(SimTime::ZERO, Failed::Error), None);
        let later = SimTime::ZERO + SimDuration::from_secs(2);
        // Two seconds later the budget's reserve is back, and the quota still has the 5 tokens for it.
        assert!(stack.acquire_retry(later, Failed::Error).is_some());
        assert_eq!(stack.acquire_retry(later, Failed::Error), None, "now both are spent");
        let Limiter::AwsQuota(quota) = &mut stack.0[0] else { panic!("the quota is the first member") };
        assert!(quota.acquire_retry(later, Failed::Error).is_none(), "the quota gave its last tokens to the retry");
        let mut grpc = LimiterStack::new(vec![Limiter::Grpc(GrpcThrottle::new(10.0, 0.1))]);
        assert!(grpc.acquire_retry(SimTime::ZERO, Failed::Error).is_some(), "a stack of one is that limiter");
    }
}
