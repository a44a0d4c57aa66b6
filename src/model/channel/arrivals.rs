//! New frames of the queued populations (slotted ALOHA with `population = "poisson"` or `"bernoulli"`): which
//! stations receive one in a slot, from the arrivals stream.
//!
//! - `poisson`: K ~ Poisson(λ) frames in all, each to a station uniform over the N (one station may get several);
//! - `bernoulli`: each station receives a frame with probability λ/N, independently of the others, the arrivals of
//!   Håstad, Leighton & Rogoff (1996). The slot draws K ~ Binomial(N, λ/N) and then K distinct stations, uniform
//!   among the N (Floyd's sampling without replacement): the same law as N coins, at a cost per slot of K² and
//!   not of N.

use rand::RngExt;
use rand_distr::{Binomial, Distribution, Poisson};

use crate::engine::SimRng;

/// The arrival law of one run.
#[derive(Clone, Debug)]
pub(super) enum NewFrames {
    /// A rate of 0: no frame ever arrives.
    Never,
    Poisson(Poisson<f64>),
    Bernoulli(Binomial),
}

impl NewFrames {
    /// `rate` frames per slot in all, over `stations` stations; `bernoulli` needs `rate ≤ stations` (checked when
    /// the point is configured).
    pub(super) fn new(bernoulli: bool, rate: f64, stations: u32) -> NewFrames {
        if rate <= 0.0 {
            NewFrames::Never
        } else if bernoulli {
            let p = (rate / f64::from(stations)).min(1.0);
            NewFrames::Bernoulli(Binomial::new(u64::from(stations), p).expect("0 < λ/N ≤ 1"))
        } else {
            NewFrames::Poisson(Poisson::new(rate).expect("rate > 0"))
        }
    }

    /// Replaces `stations` with the stations receiving a frame in this slot, in the order drawn.
    pub(super) fn draw(&self, rng: &mut SimRng, n: usize, stations: &mut Vec<usize>) {
        stations.clear();
        match self {
            NewFrames::Never => {}
            NewFrames::Poisson(frames) => {
                for _ in 0..frames.sample(rng) as u64 {
                    stations.push(rng.random_range(0..n));
                }
            }
            NewFrames::Bernoulli(frames) => {
                let k = usize::try_from(frames.sample(rng)).expect("at most N stations");
                for top in n - k..n {
                    let pick = rng.random_range(0..=top);
                    stations.push(if stations.contains(&pick) { top } else { pick });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RunSeeds, Stream};

    /// Per station and slot, the frames that arrive: Bernoulli(λ/N), so over many slots each station's count has
    /// mean λ/N per slot and the slot's total K has mean λ and variance λ(1 − λ/N); no station gets two in a slot.
    #[test]
    fn bernoulli_arrivals_have_the_binomial_mean_and_variance_and_never_repeat_a_station() {
        let (n, rate, slots) = (16_usize, 0.7, 400_000);
        let frames = NewFrames::new(true, rate, n as u32);
        let mut rng = RunSeeds::single(7).stream(Stream::Arrivals);
        let mut drawn = Vec::new();
        let mut per_station = vec![0_u64; n];
        let (mut sum, mut squares) = (0.0, 0.0);
        for _ in 0..slots {
            frames.draw(&mut rng, n, &mut drawn);
            let mut sorted = drawn.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), drawn.len(), "distinct stations");
            for &station in &drawn {
                per_station[station] += 1;
            }
            let k = drawn.len() as f64;
            sum += k;
            squares += k * k;
        }
        let count = f64::from(slots);
        let mean = sum / count;
        let variance = (squares - count * mean * mean) / (count - 1.0);
        let p = rate / n as f64;
        let (theory_mean, theory_variance) = (rate, rate * (1.0 - p));
        // The sample mean's standard error is sqrt(var/slots); the sample variance's, for a Binomial count, about
        // sqrt((μ4 − σ⁴)/slots), μ4 ≤ σ² + 3σ⁴ for a small p: 4 standard errors either way.
        assert!((mean - theory_mean).abs() < 4.0 * (theory_variance / count).sqrt(), "mean {mean}");
        let variance_error = ((theory_variance + 2.0 * theory_variance.powi(2)) / count).sqrt();
        assert!((variance - theory_variance).abs() < 4.0 * variance_error, "variance {variance} against {theory_variance}");
        // A Poisson count would have variance λ = 0.7 against 0.669 here: the test tells the two apart.
        assert!(4.0 * variance_error < rate - theory_variance);
        for (station, &got) in per_station.iter().enumerate() {
            let expected = count * p;
            assert!((got as f64 - expected).abs() < 5.0 * (expected * (1.0 - p)).sqrt(), "station {station}: {got}");
        }
    }

    #[test]
    fn poisson_arrivals_draw_what_the_model_drew_before_and_a_rate_of_zero_draws_nothing() {
        let frames = NewFrames::new(false, 2.5, 8);
        let (mut ours, mut theirs) = (RunSeeds::single(3).stream(Stream::Arrivals), RunSeeds::single(3).stream(Stream::Arrivals));
        let law = Poisson::new(2.5).unwrap();
        let mut drawn = Vec::new();
        for _ in 0..1_000 {
            frames.draw(&mut ours, 8, &mut drawn);
            let expected: Vec<usize> =
                (0..law.sample(&mut theirs) as u64).map(|_| theirs.random_range(0..8_usize)).collect();
            assert_eq!(drawn, expected);
        }
        NewFrames::new(true, 0.0, 8).draw(&mut ours, 8, &mut drawn);
        assert!(drawn.is_empty());
        assert!(matches!(NewFrames::new(true, 8.0, 8), NewFrames::Bernoulli(_)));
    }
}
