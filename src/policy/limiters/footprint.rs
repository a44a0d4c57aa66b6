//! What one limiter instance holds in memory, for the plan's estimate (`src/budget.rs`): with
//! `limiter_scope = "client"` every client keeps its own.

use super::Limiter;

/// What the allocator adds to each heap block (glibc's malloc: an 8-byte size field, 16-byte alignment).
const ALLOCATION_OVERHEAD_BYTES: u64 = 16;

impl Limiter {
    /// Bytes one instance holds: the value itself and what it allocated (windows of seconds or calls, a stack's
    /// members), each block with the allocator's overhead.
    pub(crate) fn bytes(&self) -> u64 {
        let block = |bytes: usize| if bytes == 0 { 0 } else { bytes as u64 + ALLOCATION_OVERHEAD_BYTES };
        let heap = match self {
            Limiter::Budget(budget) | Limiter::Finagle(budget) => block(budget.heap_bytes()),
            Limiter::Breaker(breaker) => block(breaker.heap_bytes()),
            // The members live in the stack's own block, in place of `size_of::<Limiter>()` each.
            Limiter::Stack(stack) => {
                let members = stack.members();
                let inner: u64 = members.iter().map(|member| member.bytes() - size_of::<Limiter>() as u64).sum();
                block(size_of_val(members)) + inner
            }
            _ => 0,
        };
        size_of::<Limiter>() as u64 + heap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::limiters::{CircuitBreaker, LimiterStack, RetryBudget};
    use crate::time::SimDuration;

    #[test]
    fn a_limiter_counts_its_windows_and_a_stack_its_members() {
        let plain = size_of::<Limiter>() as u64;
        let breaker = Limiter::Breaker(CircuitBreaker::new(0.1, 1_000, SimDuration::from_secs(5)));
        assert_eq!(breaker.bytes(), plain + 1_000 + ALLOCATION_OVERHEAD_BYTES);
        let budget = Limiter::Budget(RetryBudget::new(0.2, 10.0, SimDuration::from_secs(10)));
        assert_eq!(budget.bytes(), plain + 10 * 16 + ALLOCATION_OVERHEAD_BYTES);
        let stack = Limiter::Stack(LimiterStack::new(vec![breaker.clone(), budget.clone()]));
        assert_eq!(
            stack.bytes(),
            plain + 2 * plain + ALLOCATION_OVERHEAD_BYTES + (breaker.bytes() - plain) + (budget.bytes() - plain)
        );
    }
}
