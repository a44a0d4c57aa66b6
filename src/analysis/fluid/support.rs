//! What the fluid limit can express, decided from a point's configuration: the server model with a burst, open or
//! closed workload, a constant network delay and no client state beyond the attempt count, save one ratio budget
//! kept for the whole fleet. Each refusal names the key that asks for more.

use crate::model::distributions::TimeDistribution;
use crate::model::server::ServerConfig;
use crate::policy::limiters::{Limiter, RetryBudget};
use crate::workload::Arrivals;

/// Why a configuration has no fluid form: the key to change and what to do.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Unsupported {
    pub(crate) key: &'static str,
    pub(crate) message: String,
}

fn refuse(key: &'static str, message: &str) -> Result<(), Unsupported> {
    Err(Unsupported { key, message: format!("the fluid limit cannot express {message}") })
}

/// Accepts `config`, or says which key the fluid limit cannot express and why.
pub(crate) fn check(config: &ServerConfig) -> Result<(), Unsupported> {
    match (&config.limiter, config.limiter_instances) {
        (None, _) => {}
        (Some(limiter), 1) if fleet_budget(limiter).is_some() => {}
        (Some(limiter), _) if fleet_budget(limiter).is_some() => {
            return refuse(
                "limiter_scope",
                "a retry budget per client: each client's balance runs out on its own, which the fleet's mean does \
                 not tell; use limiter_scope = \"fleet\"",
            );
        }
        (Some(_), _) => {
            return refuse(
                "limiter",
                "this retry limiter: of the limiters only a lone ratio budget (limiter = \"budget\" or \"finagle\") \
                 has a fluid form; the others keep books (tokens, breaker states, in-flight counts) the fluid \
                 equations lack; use one of those two, remove `limiter` (and any preset's), or use `retrylab run`",
            );
        }
    }
    if !matches!(config.network, TimeDistribution::Constant(_)) {
        return refuse(
            "network",
            "a random network delay: a timeout fires at send time + timeout, and a random trip loses the send \
             time of what arrives; use network = \"constant\"",
        );
    }
    if config.retry.deadline.is_some() {
        return refuse("deadline", "a retry deadline: it needs each request's age; remove `deadline`");
    }
    if config.rate_limit.is_some() {
        return refuse(
            "rate_limit",
            "the server's rate limiter: its Retry-After hands each client its own slot; remove `rate_limit`",
        );
    }
    if let Arrivals::Periodic { .. } = config.workload.arrivals {
        return refuse(
            "kind",
            "a periodic workload: its hosts run on their own clocks; use a burst, open or closed one",
        );
    }
    if config.clock.is_some() {
        return refuse("align", "aligned retries or clock skew: they need each client's clock; remove `align`");
    }
    Ok(())
}

/// The fleet's ratio budget, when `limiter` is one (the `budget` key's or Finagle's): the one limiter the fluid
/// keeps, since its books are sums over the fleet.
pub(crate) fn fleet_budget(limiter: &Limiter) -> Option<&RetryBudget> {
    match limiter {
        Limiter::Budget(budget) | Limiter::Finagle(budget) => Some(budget),
        _ => None,
    }
}
