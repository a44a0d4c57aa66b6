//! Time distributions the models draw from, parameterised by their mean (and spread) in nanoseconds.

use rand::RngExt;
use rand_distr::{Distribution, Exp, LogNormal};

use super::params::ParamError;
use crate::engine::SimRng;
use crate::time::SimDuration;

/// A non-negative random duration.
#[derive(Clone, Debug)]
pub enum TimeDistribution {
    /// Always the mean.
    Constant(f64),
    /// Exponential with the given mean (memoryless: M/M/c queues).
    Exponential(Exp<f64>),
    /// Log-normal with the given mean and standard deviation: σ² = ln(1 + sd²/mean²), μ = ln(mean) − σ²/2.
    LogNormal(LogNormal<f64>),
    /// `slow` with probability `p_slow`, else `fast` (a heavy tail in two values).
    Bimodal { fast: f64, slow: f64, p_slow: f64 },
}

/// The names a scenario uses for [`TimeDistribution`]s.
pub const DISTRIBUTION_NAMES: &[&str] = &["constant", "exponential", "lognormal", "bimodal"];

impl TimeDistribution {
    /// Builds the named distribution. `key` names the parameter blamed for invalid values.
    pub fn new(
        name: &str,
        mean: SimDuration,
        sd: SimDuration,
        slow: SimDuration,
        p_slow: f64,
        key: &'static str,
    ) -> Result<TimeDistribution, ParamError> {
        let mean_nanos = mean.as_nanos_f64();
        let invalid = |message: String| ParamError::new(key, message);
        match name {
            "constant" => Ok(TimeDistribution::Constant(mean_nanos)),
            "exponential" if mean_nanos > 0.0 => {
                Ok(TimeDistribution::Exponential(Exp::new(1.0 / mean_nanos).map_err(|e| invalid(e.to_string()))?))
            }
            "exponential" => Ok(TimeDistribution::Constant(0.0)),
            "lognormal" => {
                if mean_nanos <= 0.0 {
                    return Err(invalid("a log-normal needs a mean > 0".into()));
                }
                let ratio = sd.as_nanos_f64() / mean_nanos;
                let sigma_squared = (1.0 + ratio * ratio).ln();
                let mu = mean_nanos.ln() - sigma_squared / 2.0;
                LogNormal::new(mu, sigma_squared.sqrt())
                    .map(TimeDistribution::LogNormal)
                    .map_err(|e| invalid(e.to_string()))
            }
            "bimodal" => Ok(TimeDistribution::Bimodal { fast: mean_nanos, slow: slow.as_nanos_f64(), p_slow }),
            other => {
                Err(invalid(format!("unknown distribution \"{other}\"; valid: {}", DISTRIBUTION_NAMES.join(", "))))
            }
        }
    }

    /// One draw, in nanoseconds.
    #[inline]
    pub fn sample_nanos(&self, rng: &mut SimRng) -> f64 {
        match self {
            TimeDistribution::Constant(nanos) => *nanos,
            TimeDistribution::Exponential(exp) => exp.sample(rng),
            TimeDistribution::LogNormal(lognormal) => lognormal.sample(rng),
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
    pub fn sample(&self, rng: &mut SimRng) -> SimDuration {
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
        for name in DISTRIBUTION_NAMES {
            let distribution = TimeDistribution::new(name, ms(10), ms(5), ms(100), 0.01, "service").unwrap();
            let expected = if *name == "bimodal" { 10e6 * 0.99 + 100e6 * 0.01 } else { 10e6 };
            let (mean, half_width) = sample_mean(&distribution, 200_000);
            assert!((mean - expected).abs() <= half_width.max(1.0), "{name}: {mean} vs {expected} ± {half_width}");
        }
    }

    #[test]
    fn lognormal_has_the_requested_spread() {
        let distribution = TimeDistribution::new(
            "lognormal",
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
