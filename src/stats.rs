//! Replicate statistics: mean, sample standard deviation and the half-width of the 95% confidence interval of
//! the mean, `t(0.975, n−1)·sd/√n` (Student's t).

/// Mean, sample standard deviation (n − 1) and 95% CI half-width of a set of replicate values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub sd: f64,
    pub ci95: f64,
}

impl Estimate {
    /// Summarises `values` in the order given (the order is fixed by the caller, so sums are reproducible).
    /// NaN values (a metric a run could not define, such as recovery time in a run that never recovered) are
    /// left out. With one value, `sd` and `ci95` are 0; with none, everything is NaN.
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
            return Estimate { mean: f64::NAN, sd: f64::NAN, ci95: f64::NAN };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n == 1 {
            return Estimate { mean, sd: 0.0, ci95: 0.0 };
        }
        let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let sd = variance.sqrt();
        Estimate { mean, sd, ci95: t_975(n - 1) * sd / (n as f64).sqrt() }
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
        assert_eq!(Estimate::of(&[3.0]), Estimate { mean: 3.0, sd: 0.0, ci95: 0.0 });
        assert!(Estimate::of(&[]).mean.is_nan());
        assert_eq!(Estimate::of(&[f64::NAN, 3.0, f64::NAN]), Estimate { mean: 3.0, sd: 0.0, ci95: 0.0 });
        assert!(Estimate::of(&[f64::NAN]).mean.is_nan());
    }
}
