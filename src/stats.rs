//! Replicate statistics: mean, sample standard deviation, the half-width of the 95% confidence interval of the
//! mean, `t(0.975, n−1)·sd/√n` (Student's t), and that interval's ends kept inside the values' range: a share of
//! runs gets the Wilson score interval, a bounded quantity the t interval cut at its bounds.

/// What values a quantity can take, which decides the interval of their mean.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Support {
    /// Any number.
    Real,
    /// Numbers from `min` to `max` (`max` may be infinite).
    Within { min: f64, max: f64 },
    /// 0 or 1 per run, so the mean is a proportion: the Wilson score interval.
    Binary,
}

/// Mean, sample standard deviation (n − 1), 95% CI half-width, and the 95% interval's ends of a set of replicate
/// values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub sd: f64,
    /// The half-width of Student's t interval, `mean ± ci95`.
    pub ci95: f64,
    /// The 95% interval of the mean, inside the values' range (see [`Support`]).
    pub lo95: f64,
    pub hi95: f64,
}

/// The 97.5% quantile of the standard normal distribution.
const Z_975: f64 = 1.959_963_985;

impl Estimate {
    /// The estimate with every field undefined.
    pub const UNDEFINED: Estimate =
        Estimate { mean: f64::NAN, sd: f64::NAN, ci95: f64::NAN, lo95: f64::NAN, hi95: f64::NAN };

    /// Summarises `values` of a quantity with the given support: [`Estimate::of`], with the interval's ends kept
    /// inside it. For [`Support::Binary`], the Wilson score interval of the proportion `p̂ = mean` over `n` runs:
    /// `(p̂ + z²/2n ± z·√(p̂(1 − p̂)/n + z²/4n²)) / (1 + z²/n)`, z = 1.96 (Wilson 1927), which stays in [0, 1] and
    /// is not empty when every run agrees.
    pub fn within(values: &[f64], support: Support) -> Estimate {
        let estimate = Estimate::of(values);
        match support {
            Support::Real => estimate,
            Support::Within { min, max } => {
                Estimate { lo95: estimate.lo95.clamp(min, max), hi95: estimate.hi95.clamp(min, max), ..estimate }
            }
            Support::Binary => {
                let n = values.iter().filter(|x| !x.is_nan()).count() as f64;
                if n == 0.0 {
                    return estimate;
                }
                let (p, z2) = (estimate.mean, Z_975 * Z_975);
                let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
                let half = Z_975 / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
                // At p̂ = 0 (or 1) the end is exactly 0 (or 1); the formula would leave a rounding residue.
                let lo95 = if p == 0.0 { 0.0 } else { (centre - half).max(0.0) };
                let hi95 = if p == 1.0 { 1.0 } else { (centre + half).min(1.0) };
                Estimate { lo95, hi95, ..estimate }
            }
        }
    }

    /// Summarises `values` in the order given (the order is fixed by the caller, so sums are reproducible).
    /// NaN values (a metric a run could not define, such as recovery time in a run that never recovered) are
    /// left out. With one value, `sd` and `ci95` are 0; with none, everything is NaN. The interval is
    /// `mean ± ci95`; [`Estimate::within`] keeps it inside a range.
    pub fn of(values: &[f64]) -> Estimate {
        let defined: Vec<f64>;
        let values = if values.iter().any(|x| x.is_nan()) {
            defined = values.iter().copied().filter(|x| !x.is_nan()).collect();
            &defined[..]
        } else {
            values
        };
        let n = values.len();
        if n == 0 {
            return Estimate::UNDEFINED;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if values.iter().all(|&x| x == values[0]) {
            // Exact, where the two-pass formula would leave a rounding residue (sd 4e-13 for equal values).
            return Estimate::symmetric(values[0], 0.0, 0.0);
        }
        let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = variance.sqrt();
        Estimate::symmetric(mean, sd, t_975(n - 1) * sd / (n as f64).sqrt())
    }

    /// An estimate whose interval is `mean ± ci95`.
    pub fn symmetric(mean: f64, sd: f64, ci95: f64) -> Estimate {
        Estimate { mean, sd, ci95, lo95: mean - ci95, hi95: mean + ci95 }
    }
}

/// The difference of two quantities measured on the same replicates (common random numbers): its mean and two 95%
/// half-widths, the paired one and the one the same runs would give if their pairing were ignored.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    /// Mean of `a − b` over the replicates where both are defined.
    pub mean: f64,
    /// `t(n−1) · sd(a − b) / √n`: Student's interval of the per-replicate differences.
    pub paired_ci95: f64,
    /// `t(ν) · √(s²a/n + s²b/n)` with Welch–Satterthwaite's ν: the interval two independent samples of this
    /// size would give (Welch 1947).
    pub unpaired_ci95: f64,
    /// Replicates where both are defined.
    pub replicates: usize,
}

impl Difference {
    /// Compares `a` and `b`, replicate by replicate (`a[i]` and `b[i]` share replicate i's world); replicates
    /// where either is NaN are left out. NaN intervals with fewer than two pairs.
    pub fn paired(a: &[f64], b: &[f64]) -> Difference {
        let pairs: Vec<(f64, f64)> =
            a.iter().zip(b).map(|(&x, &y)| (x, y)).filter(|(x, y)| !x.is_nan() && !y.is_nan()).collect();
        let n = pairs.len();
        let (xs, ys): (Vec<f64>, Vec<f64>) = pairs.iter().copied().unzip();
        let diffs: Vec<f64> = pairs.iter().map(|(x, y)| x - y).collect();
        let difference = Estimate::of(&diffs);
        if n < 2 {
            return Difference { mean: difference.mean, paired_ci95: f64::NAN, unpaired_ci95: f64::NAN, replicates: n };
        }
        let (sa, sb) = (Estimate::of(&xs).sd, Estimate::of(&ys).sd);
        let (va, vb) = (sa * sa / n as f64, sb * sb / n as f64);
        let unpaired_ci95 = if va + vb == 0.0 {
            0.0
        } else {
            let dof = (va + vb).powi(2) / ((va * va + vb * vb) / (n - 1) as f64);
            t_975(dof.floor().max(1.0) as usize) * (va + vb).sqrt()
        };
        Difference { mean: difference.mean, paired_ci95: difference.ci95, unpaired_ci95, replicates: n }
    }
}

/// The 97.5% quantile of Student's t with `df` degrees of freedom: tabulated to 30, then the Cornish-Fisher
/// expansion around the normal quantile 1.959964 (error below 1e-4 for df > 30).
pub fn t_975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706205, 4.302653, 3.182446, 2.776445, 2.570582, 2.446912, 2.364624, 2.306004, 2.262157, 2.228139, 2.200985,
        2.178813, 2.160369, 2.144787, 2.131450, 2.119905, 2.109816, 2.100922, 2.093024, 2.085963, 2.079614, 2.073873,
        2.068658, 2.063899, 2.059539, 2.055529, 2.051831, 2.048407, 2.045230, 2.042272,
    ];
    match df {
        0 => f64::NAN,
        1..=30 => TABLE[df - 1],
        _ => {
            let z = 1.959_963_985_f64;
            let v = df as f64;
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
                + (3.0 * z.powi(7) + 19.0 * z.powi(5) + 17.0 * z.powi(3) - 15.0 * z) / (384.0 * v.powi(3))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paired_difference_keeps_only_the_noise_the_pair_does_not_share() {
        // a = world + 1, b = world: the paired interval is 0, the unpaired one is as wide as the world's spread.
        let world = [3.0, 9.0, 1.0, 7.0, 5.0];
        let a: Vec<f64> = world.iter().map(|w| w + 1.0).collect();
        let difference = Difference::paired(&a, &world);
        assert_eq!((difference.mean, difference.paired_ci95, difference.replicates), (1.0, 0.0, 5));
        // sd of the world is √10; Welch's ν = 8 here: t(8) · √(2 · 10 / 5).
        assert!((difference.unpaired_ci95 - 2.306004 * 2.0).abs() < 1e-9, "{difference:?}");
        let with_gap = Difference::paired(&[1.0, f64::NAN, 4.0], &[0.0, 5.0, 2.0]);
        assert_eq!((with_gap.mean, with_gap.replicates), (1.5, 2));
        assert!(Difference::paired(&[1.0], &[2.0]).paired_ci95.is_nan());
    }

    #[test]
    fn t_quantiles_match_published_tables() {
        assert_eq!(t_975(1), 12.706205);
        assert!((t_975(40) - 2.021075).abs() < 1e-4);
        assert!((t_975(60) - 2.000298).abs() < 1e-4);
        assert!((t_975(99) - 1.984217).abs() < 1e-4);
        assert!((t_975(1_000_000) - 1.959964).abs() < 1e-5);
        assert!(t_975(31) < t_975(30), "the expansion continues the table downwards");
    }

    #[test]
    fn estimate_of_known_values() {
        let e = Estimate::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(e.mean, 5.0);
        assert!((e.sd - (32.0_f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((e.ci95 - 2.364624 * e.sd / 8.0_f64.sqrt()).abs() < 1e-12);
        assert_eq!(Estimate::of(&[3.0]), Estimate::symmetric(3.0, 0.0, 0.0));
        assert_eq!(
            Estimate::of(&[0.1 + 0.2; 7]),
            Estimate::symmetric(0.1 + 0.2, 0.0, 0.0),
            "no residue for equal values"
        );
        assert!(Estimate::of(&[]).mean.is_nan());
        assert_eq!(Estimate::of(&[f64::NAN, 3.0, f64::NAN]), Estimate::symmetric(3.0, 0.0, 0.0));
        assert!(Estimate::of(&[f64::NAN]).mean.is_nan());
    }

    #[test]
    fn a_share_of_runs_gets_the_wilson_interval_inside_zero_to_one() {
        // 9 of 10 runs recovered: Student's t would give 0.9 ± 0.226, above 1.
        let recovered = [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
        let t = Estimate::of(&recovered);
        assert!(t.hi95 > 1.0, "the symmetric interval leaves the range: {t:?}");
        let wilson = Estimate::within(&recovered, Support::Binary);
        // Wilson (1927) for 9/10: 0.5958 to 0.9821.
        assert!((wilson.lo95 - 0.5958).abs() < 1e-4 && (wilson.hi95 - 0.9821).abs() < 1e-4, "{wilson:?}");
        assert_eq!((wilson.mean, wilson.ci95), (t.mean, t.ci95), "mean and half-width stay as they were");
        // Every run agrees: the interval is not empty, and still inside [0, 1].
        let all = Estimate::within(&[1.0; 5], Support::Binary);
        assert!(all.lo95 > 0.5 && all.lo95 < 1.0 && all.hi95 == 1.0, "{all:?}");
        // With 8 runs the formula's lower end is 2.8e-17, not 0: the end must be exact.
        let none = Estimate::within(&[0.0; 8], Support::Binary);
        assert!(none.lo95 == 0.0 && none.hi95 > 0.0 && none.hi95 < 0.5, "{none:?}");
    }

    #[test]
    fn a_bounded_quantity_keeps_its_interval_inside_its_bounds() {
        // A recovery time of 0 in two runs and 3 s in a third: mean ± t·sd/√n goes below 0.
        let recovery = [0.0, 0.0, 3_000.0];
        let t = Estimate::of(&recovery);
        assert!(t.lo95 < 0.0);
        let bounded = Estimate::within(&recovery, Support::Within { min: 0.0, max: f64::INFINITY });
        assert_eq!((bounded.lo95, bounded.hi95), (0.0, t.hi95));
        assert!(Estimate::within(&[], Support::Binary).lo95.is_nan());
    }
}
