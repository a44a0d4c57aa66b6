//! Time distributions the models draw from, parameterised by their mean (and spread) in nanoseconds.

use rand::RngExt;
use rand_distr::{Distribution, Exp, LogNormal};

use crate::engine::SimRng;
use crate::params::{Choice, ParamDefault, ParamError, ParamKind, ParamSpec, Point, Section, Value, choices};
use crate::time::SimDuration;

/// A non-negative random duration.
#[derive(Clone, Debug)]
pub(crate) enum TimeDistribution {
    /// Always the mean.
    Constant(f64),
    /// Exponential with the given mean (memoryless: M/M/c queues); the mean in nanoseconds beside it.
    Exponential(Exp<f64>, f64),
    /// Log-normal with the given mean and standard deviation: σ² = ln(1 + sd²/mean²), μ = ln(mean) − σ²/2; the
    /// mean in nanoseconds beside it.
    LogNormal(LogNormal<f64>, f64),
    /// `slow` with probability `p_slow`, else `fast` (a heavy tail in two values).
    Bimodal { fast: f64, slow: f64, p_slow: f64 },
}

choices! {
    /// The shapes of [`TimeDistribution`], as a scenario names them.
    pub(crate) enum DistributionKind {
        Constant = "constant",
        Exponential = "exponential",
        LogNormal = "lognormal",
        Bimodal = "bimodal",
    }
}

choices! {
    /// The shapes a network delay may take (a subset of [`DistributionKind`]).
    pub(crate) enum NetworkKind {
        Constant = "constant",
        Exponential = "exponential",
    }
}

/// `service`: the shape of a service's time per call.
pub(crate) const fn service(default: &'static str) -> ParamSpec {
    ParamSpec::new(
        Section::Model,
        "service",
        ParamKind::Choice(DistributionKind::NAMES),
        ParamDefault::Value(Value::Choice(default)),
        "service-time distribution: constant, exponential or lognormal with mean `service_mean` (and sd \
         `service_sd`), or bimodal (`service_mean`, or `slow_service` with `slow_probability`)",
    )
}

/// `service_mean`.
pub(crate) const fn service_mean(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(
        Section::Model,
        "service_mean",
        ParamKind::Duration,
        default,
        "mean service time (the fast mode of bimodal)",
    )
}

/// `service_sd`.
pub(crate) const fn service_sd(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(
        Section::Model,
        "service_sd",
        ParamKind::Duration,
        default,
        "standard deviation of lognormal service",
    )
}

/// `slow_service`.
pub(crate) const fn slow_service(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(Section::Model, "slow_service", ParamKind::Duration, default, "the slow mode of bimodal service")
}

/// `slow_probability`.
pub(crate) const fn slow_probability(default: f64) -> ParamSpec {
    ParamSpec::new(
        Section::Model,
        "slow_probability",
        ParamKind::Real { min: 0.0, max: 1.0 },
        ParamDefault::Value(Value::Real(default)),
        "the chance a bimodal service takes `slow_service`",
    )
}

/// `network`: the shape of each one-way network delay.
pub(crate) const fn network(default: &'static str) -> ParamSpec {
    ParamSpec::new(
        Section::Model,
        "network",
        ParamKind::Choice(NetworkKind::NAMES),
        ParamDefault::Value(Value::Choice(default)),
        "network-delay distribution: constant or exponential, with mean `network_delay`",
    )
}

/// `network_delay`.
pub(crate) const fn network_delay(default: ParamDefault) -> ParamSpec {
    ParamSpec::new(Section::Model, "network_delay", ParamKind::Duration, default, "mean one-way network delay")
}

impl TimeDistribution {
    /// The service-time distribution a point's `service`, `service_mean`, `service_sd`, `slow_service` and
    /// `slow_probability` describe.
    pub(crate) fn service(point: &Point) -> Result<TimeDistribution, ParamError> {
        TimeDistribution::new(
            point.choice_of("service")?,
            point.duration("service_mean")?,
            point.duration("service_sd")?,
            point.duration("slow_service")?,
            point.real("slow_probability")?,
            "service",
        )
    }

    /// The network-delay distribution of a point's `network` and `network_delay`.
    pub(crate) fn network(point: &Point) -> Result<TimeDistribution, ParamError> {
        point.choice_of::<NetworkKind>("network")?.distribution(point.duration("network_delay")?)
    }
}

impl NetworkKind {
    /// An exponential or constant delay with this mean.
    pub(crate) fn distribution(self, mean: SimDuration) -> Result<TimeDistribution, ParamError> {
        let kind = match self {
            NetworkKind::Constant => DistributionKind::Constant,
            NetworkKind::Exponential => DistributionKind::Exponential,
        };
        TimeDistribution::new(kind, mean, SimDuration::ZERO, SimDuration::ZERO, 0.0, "network")
    }
}

impl TimeDistribution {
    /// Builds a distribution of this kind. `key` names the parameter blamed for invalid values.
    pub(crate) fn new(
        kind: DistributionKind,
        mean: SimDuration,
        sd: SimDuration,
        slow: SimDuration,
        p_slow: f64,
        key: &'static str,
    ) -> Result<TimeDistribution, ParamError> {
        let mean_nanos = mean.as_nanos_f64();
        let invalid = |message: String| ParamError::new(key, message);
        match kind {
            DistributionKind::Constant => Ok(TimeDistribution::Constant(mean_nanos)),
            DistributionKind::Exponential if mean_nanos > 0.0 => {
                let exp = Exp::new(1.0 / mean_nanos).map_err(|e| invalid(e.to_string()))?;
                Ok(TimeDistribution::Exponential(exp, mean_nanos))
            }
            DistributionKind::Exponential => Ok(TimeDistribution::Constant(0.0)),
            DistributionKind::LogNormal => {
                if mean_nanos <= 0.0 {
                    return Err(invalid("a log-normal needs a mean > 0".into()));
                }
                let ratio = sd.as_nanos_f64() / mean_nanos;
                let sigma_squared = (1.0 + ratio * ratio).ln();
                let mu = mean_nanos.ln() - sigma_squared / 2.0;
                LogNormal::new(mu, sigma_squared.sqrt())
                    .map(|lognormal| TimeDistribution::LogNormal(lognormal, mean_nanos))
                    .map_err(|e| invalid(e.to_string()))
            }
            DistributionKind::Bimodal => {
                Ok(TimeDistribution::Bimodal { fast: mean_nanos, slow: slow.as_nanos_f64(), p_slow })
            }
        }
    }

    /// The mean, in nanoseconds.
    pub(crate) fn mean_nanos(&self) -> f64 {
        match self {
            TimeDistribution::Constant(nanos) => *nanos,
            TimeDistribution::Exponential(_, mean) | TimeDistribution::LogNormal(_, mean) => *mean,
            TimeDistribution::Bimodal { fast, slow, p_slow } => fast * (1.0 - p_slow) + slow * p_slow,
        }
    }

    /// True when a sample takes nothing from the random stream (a constant).
    pub(crate) fn is_constant(&self) -> bool {
        matches!(self, TimeDistribution::Constant(_))
    }

    /// One draw, in nanoseconds.
    #[inline]
    pub(crate) fn sample_nanos(&self, rng: &mut SimRng) -> f64 {
        match self {
            TimeDistribution::Constant(nanos) => *nanos,
            TimeDistribution::Exponential(exp, _) => exp.sample(rng),
            TimeDistribution::LogNormal(lognormal, _) => lognormal.sample(rng),
            TimeDistribution::Bimodal { fast, slow, p_slow } => {
                if rng.random::<f64>() < *p_slow {
                    *slow
                } else {
                    *fast
                }
            }
        }
    }

    #[inline]
    pub(crate) fn sample(&self, rng: &mut SimRng) -> SimDuration {
        SimDuration::from_nanos_f64(self.sample_nanos(rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim_rng;

    fn sample_mean(distribution: &TimeDistribution, n: usize) -> (f64, f64) {
        let mut rng = sim_rng(5);
        let samples: Vec<f64> = (0..n).map(|_| distribution.sample_nanos(&mut rng)).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let var = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
        (mean, 3.29 * (var / n as f64).sqrt())
    }

    #[test]
    fn every_distribution_has_the_mean_it_was_given() {
        let ms = SimDuration::from_millis;
        for &kind in DistributionKind::ALL {
            let distribution = TimeDistribution::new(kind, ms(10), ms(5), ms(100), 0.01, "service").unwrap();
            let expected = if kind == DistributionKind::Bimodal { 10e6 * 0.99 + 100e6 * 0.01 } else { 10e6 };
            let (mean, half_width) = sample_mean(&distribution, 200_000);
            assert!((mean - expected).abs() <= half_width.max(1.0), "{kind}: {mean} vs {expected} ± {half_width}");
        }
    }

    #[test]
    fn lognormal_has_the_requested_spread() {
        let distribution = TimeDistribution::new(
            DistributionKind::LogNormal,
            SimDuration::from_millis(10),
            SimDuration::from_millis(20),
            SimDuration::ZERO,
            0.0,
            "s",
        )
        .unwrap();
        let mut rng = sim_rng(9);
        let n = 400_000;
        let samples: Vec<f64> = (0..n).map(|_| distribution.sample_nanos(&mut rng)).collect();
        let mean = samples.iter().sum::<f64>() / n as f64;
        let sd = (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt();
        // The sample sd of a heavy-tailed log-normal converges slowly; 10% is several standard errors here.
        assert!((sd - 20e6).abs() < 2e6, "sd {sd}");
    }
}
