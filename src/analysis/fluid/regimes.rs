//! The fluid limit's stationary regimes at a constant arrival rate λ, from its equations rather than by stepping.
//!
//! With a FIFO wait W and an admitted share q of arrivals, an attempt is answered in time with probability
//! f(W) = P(S + ℓB ≤ T − 2d − W); it fails by refusal (1 − q), by timeout q(1 − f) or by an error answer, and
//! after the n-th failure it is retried with the policy's share r_n. The attempts per request are
//! Ā = Σ_n Π_{j<n} c_j with c_j the retried share of attempt j's failures, and attempts arrive at a = λĀ.
//! A regime balances a against the capacity C = c / (E[S] + ℓc) (Bronson et al. 2021, §3; DesCartes' storm):
//! - **healthy**: W = 0, q = 1, busy workers B = a(E[S] + ℓB) below c;
//! - **stuck** (bounded queue K): the queue full, W = K/C, and q solving q·a(W, q) = C with q < 1;
//! - **stuck, growing** (no bound): with f = 0 the attempts a exceed C; the queue grows at a − C;
//! - **separatrix**: the wait W* where a(W*, 1) = C, the unstable point between the two basins, Q* = C·W*.
//!
//! A fleet's ratio budget (share p of requests, reserve m retries/s) grants a share g of the retries asked for,
//! each class alike: g = 1 while the retries fit under p·λ + m, else the g at which they equal it (the budget's
//! stationary rate: each second frees the reserve's m on top of the p·λ deposited).
//!
//! The healthy and stuck regimes are stable where they exist (dQ/dt = a(W(Q)) − C changes sign through them
//! downward), the separatrix is not.

use super::model::FluidModel;
use super::tables::Failure;
use crate::model::server::OnTimeout;

/// Which regime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RegimeKind {
    Healthy,
    Separatrix,
    Stuck,
    Growing,
}

impl RegimeKind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            RegimeKind::Healthy => "healthy",
            RegimeKind::Separatrix => "separatrix",
            RegimeKind::Stuck => "stuck",
            RegimeKind::Growing => "stuck-growing",
        }
    }
}

/// A stationary regime's rates (per second) and levels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Regime {
    pub(crate) kind: RegimeKind,
    pub(crate) stable: bool,
    pub(crate) goodput: f64,
    pub(crate) attempts: f64,
    pub(crate) retries: f64,
    /// Attempts the server refused (a full queue's 503s), as the simulation's `rejected`.
    pub(crate) rejected: f64,
    /// Retries the fleet's budget refused, as the simulation's `refused`.
    pub(crate) refused: f64,
    pub(crate) late: f64,
    pub(crate) queue: f64,
    pub(crate) wait_s: f64,
    /// The queue's growth per second (stuck-growing only).
    pub(crate) growth: f64,
}

/// The regimes at one rate, or why there are none to compute.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Regimes {
    /// λ, new requests per second (scaled).
    pub(crate) rate: f64,
    /// C, services per second with every worker busy (∞ without a worker limit).
    pub(crate) capacity: f64,
    pub(crate) list: Vec<Regime>,
}

/// Why no regimes were computed.
pub(crate) fn unsupported(model: &FluidModel) -> Option<&'static str> {
    match (&model.arrivals, model.on_timeout) {
        (crate::workload::Arrivals::Open { .. }, OnTimeout::Abandon) => None,
        (crate::workload::Arrivals::Open { .. }, OnTimeout::Cancel) => {
            Some("regimes are solved for on_timeout = \"abandon\"; with \"cancel\" read the trajectory")
        }
        _ => Some("regimes need an open workload (a constant rate to balance); read the trajectory"),
    }
}

/// Attempts per second, the share of the admitted ones answered in time, and the retries the budget refused.
struct Flow {
    attempts: f64,
    on_time: f64,
    refused: f64,
}

impl FluidModel {
    /// The share of attempts answered before their client's timeout after waiting `wait_s` with `busy` busy.
    fn on_time(&self, wait_s: f64, busy: f64) -> f64 {
        let Some(timeout) = self.timeout_s else { return 1.0 };
        let load = self.latency_per_request_s * busy / self.scale;
        self.service.cdf(timeout - 2.0 * self.network_s - wait_s - load)
    }

    /// Attempts per second and the on-time share at rate `rate`, wait `wait_s`, admitted share `admitted`.
    fn flow(&self, rate: f64, wait_s: f64, admitted: f64, busy: f64) -> Flow {
        let on_time = self.on_time(wait_s, busy);
        let errors: f64 = self.service_failures.iter().filter(|(_, retried)| *retried).map(|(p, _)| p).sum();
        let plain = admitted * ((1.0 - on_time) * f64::from(u8::from(self.retry_timeouts)) + on_time * errors);
        let refused = (1.0 - admitted) * f64::from(u8::from(self.retry_503));
        let continued = |n: usize| {
            plain * self.table.step(Failure::Plain, n).retried + refused * self.table.step(Failure::Refused, n).retried
        };
        // Attempts and retries asked for, per request, when the budget grants the share `grant` of them.
        let per_request = |grant: f64| {
            let (mut reach, mut attempts, mut wanted) = (1.0, 0.0, 0.0);
            for n in 1..=self.classes {
                attempts += reach;
                wanted += reach * continued(n);
                reach *= grant * continued(n);
            }
            // Classes past the last repeat it: a geometric tail.
            let last = continued(self.classes);
            let tail = if reach == 0.0 {
                0.0
            } else if grant * last < 1.0 {
                reach / (1.0 - grant * last)
            } else {
                f64::INFINITY
            };
            (attempts + tail, wanted + tail * last)
        };
        let grant = match &self.budget {
            Some(budget) if rate > 0.0 => {
                let (share, reserve_per_s) = budget.rates();
                let allowed = share + reserve_per_s / rate;
                if per_request(1.0).0 - 1.0 <= allowed {
                    1.0
                } else {
                    bisect(0.0, 1.0, 0.0, |grant| per_request(grant).0 - 1.0 > allowed)
                }
            }
            _ => 1.0,
        };
        let (attempts, wanted) = per_request(grant);
        let refused = if grant < 1.0 { rate * wanted * (1.0 - grant) } else { 0.0 };
        Flow { attempts: rate * attempts, on_time, refused }
    }

    fn regime(&self, kind: RegimeKind, rate: f64, wait_s: f64, admitted: f64, busy: f64, capacity: f64) -> Regime {
        let flow = self.flow(rate, wait_s, admitted, busy);
        // Stuck, the server serves at capacity by definition (q·a = C), whatever a is, even unbounded.
        let served = match kind {
            RegimeKind::Stuck | RegimeKind::Growing => capacity,
            RegimeKind::Healthy | RegimeKind::Separatrix => admitted * flow.attempts,
        };
        let growth = if kind == RegimeKind::Growing { flow.attempts - capacity } else { 0.0 };
        Regime {
            kind,
            stable: kind != RegimeKind::Separatrix,
            goodput: served * flow.on_time * self.success_share,
            attempts: flow.attempts,
            retries: flow.attempts - rate,
            // An unbounded queue refuses nothing, however fast it grows.
            rejected: if kind == RegimeKind::Growing { 0.0 } else { flow.attempts - served },
            refused: flow.refused,
            late: served * (1.0 - flow.on_time),
            queue: if kind == RegimeKind::Growing { f64::INFINITY } else { capacity * wait_s },
            wait_s: if kind == RegimeKind::Growing { f64::INFINITY } else { wait_s },
            growth,
        }
    }

    /// The regimes at the open workload's last rate (after any spike), with every fault over.
    pub(crate) fn regimes(&self, rate: f64) -> Regimes {
        let mean = self.service.mean();
        let load = self.latency_per_request_s / self.scale;
        let capacity = self.workers / (mean + load * self.workers);
        let mut list = Vec::new();
        // Healthy: B = a(E[S] + ℓB), found by iteration from an idle server.
        let mut busy = 0.0;
        for _ in 0..200 {
            let attempts = self.flow(rate, 0.0, 1.0, busy).attempts;
            let next = if attempts * load < 1.0 { attempts * mean / (1.0 - attempts * load) } else { f64::INFINITY };
            if (next - busy).abs() <= 1e-12 * next.max(1.0) || !next.is_finite() {
                busy = next;
                break;
            }
            busy = next;
        }
        if busy < self.workers {
            list.push(self.regime(RegimeKind::Healthy, rate, 0.0, 1.0, busy, capacity));
        }
        if !self.workers.is_finite() {
            return Regimes { rate, capacity, list };
        }
        let attempts_at = |wait_s: f64| self.flow(rate, wait_s, 1.0, self.workers).attempts;
        let longest = if self.queue_limit.is_finite() {
            self.queue_limit / capacity
        } else {
            self.timeout_s.map_or(f64::INFINITY, |t| t + self.service.points.last().map_or(0.0, |p| p.0) + 1.0)
        };
        if longest.is_finite() && attempts_at(0.0) < capacity && attempts_at(longest) > capacity {
            let wait = bisect(0.0, longest, 0.0, |w| attempts_at(w) > capacity);
            list.push(self.regime(RegimeKind::Separatrix, rate, wait, 1.0, self.workers, capacity));
        }
        if self.queue_limit.is_finite() {
            let wait = self.queue_limit / capacity;
            let admitted_rate = |q: f64| q * self.flow(rate, wait, q, self.workers).attempts;
            if admitted_rate(1.0) > capacity {
                let q = bisect(0.0, 1.0, 0.0, |q| q > 0.0 && admitted_rate(q) > capacity);
                list.push(self.regime(RegimeKind::Stuck, rate, wait, q, self.workers, capacity));
            }
        } else if attempts_at(f64::INFINITY) > capacity {
            list.push(self.regime(RegimeKind::Growing, rate, f64::INFINITY, 1.0, self.workers, capacity));
        }
        Regimes { rate, capacity, list }
    }
}

/// The point in [low, high] where `above` turns from false to true, to `tolerance` (0: to the last bit).
pub(crate) fn bisect(mut low: f64, mut high: f64, tolerance: f64, above: impl Fn(f64) -> bool) -> f64 {
    for _ in 0..200 {
        let middle = 0.5 * (low + high);
        if middle <= low || middle >= high || high - low <= tolerance {
            break;
        }
        if above(middle) {
            high = middle;
        } else {
            low = middle;
        }
    }
    0.5 * (low + high)
}
