//! Limiters stacked: `limiter = ["aws-quota", "budget"]`, where a retry needs every member's consent.

use super::{Admission, Failed, Limiter, Outcome, Permit, RetryLimiter};
use crate::time::SimTime;

/// Several limiters that must all agree. A retry is granted only when every member grants it, asked in the
/// order written; when one refuses, the members that already granted it take their grant back
/// ([`RetryLimiter::release`]), so a refused retry costs nothing and the order does not matter. An attempt is sent only when every member admits it (the longest wait wins, a
/// rejection by any rejects it). Every member sees every outcome, send and withdrawal. The permit the stack
/// hands out costs the most any member charged, which is what a refunding member (the AWS quota) gets back on
/// success; the other limiters only ask whether an attempt was a retry.
#[derive(Clone, Debug, PartialEq)]
pub struct LimiterStack(pub Vec<Limiter>);

impl RetryLimiter for LimiterStack {
    fn acquire_retry(&mut self, now: SimTime, failed: Failed) -> Option<Permit> {
        let mut granted: Vec<Permit> = Vec::with_capacity(self.0.len());
        for member in &mut self.0 {
            match member.acquire_retry(now, failed) {
                Some(permit) => granted.push(permit),
                None => {
                    for (earlier, permit) in self.0.iter_mut().zip(granted) {
                        earlier.release(now, permit);
                    }
                    return None;
                }
            }
        }
        Some(Permit { cost: granted.iter().map(|permit| permit.cost).fold(0.0, f64::max) })
    }

    fn record(&mut self, now: SimTime, outcome: Outcome) {
        for member in &mut self.0 {
            member.record(now, outcome);
        }
    }

    fn admit(&mut self, now: SimTime, draw: f64) -> Admission {
        let mut answer = Admission::Send;
        for member in &mut self.0 {
            answer = match (answer, member.admit(now, draw)) {
                (Admission::Reject, _) | (_, Admission::Reject) => Admission::Reject,
                (Admission::Wait(a), Admission::Wait(b)) => Admission::Wait(a.max(b)),
                (Admission::Wait(wait), Admission::Send) | (Admission::Send, Admission::Wait(wait)) => {
                    Admission::Wait(wait)
                }
                (Admission::Send, Admission::Send) => Admission::Send,
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
        let mut stack = LimiterStack(vec![
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
        let Limiter::AwsQuota(quota) = &mut stack.0[0] else { unreachable!() };
        assert!(quota.acquire_retry(later, Failed::Error).is_none(), "the quota gave its last tokens to the retry");
        let mut grpc = LimiterStack(vec![Limiter::Grpc(GrpcThrottle::new(10.0, 0.1))]);
        assert!(grpc.acquire_retry(SimTime::ZERO, Failed::Error).is_some(), "a stack of one is that limiter");
    }
}
