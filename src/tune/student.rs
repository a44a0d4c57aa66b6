//! The upper tail of Student's t distribution, for the race's one-sided tests at levels far below 5%:
//! P(T > t) = ½·I_x(ν/2, ½) with x = ν/(ν + t²) for t ≥ 0 (Abramowitz & Stegun 1964, 26.7.1), the regularized
//! incomplete beta function I_x(a, b) by its continued fraction (A&S 26.5.8), ln Γ by Stirling's series (A&S
//! 6.1.41) after shifting the argument above 10.

/// P(T > t) for Student's t with `df` degrees of freedom (NaN for `df` = 0 or a NaN `t`).
pub(crate) fn upper_tail(t: f64, df: usize) -> f64 {
    if df == 0 || t.is_nan() {
        return f64::NAN;
    }
    if t.is_infinite() {
        return if t > 0.0 { 0.0 } else { 1.0 };
    }
    let v = df as f64;
    let tail = 0.5 * incomplete_beta(v / (v + t * t), v / 2.0, 0.5);
    if t >= 0.0 { tail } else { 1.0 - tail }
}

/// The regularized incomplete beta function I_x(a, b), for 0 ≤ x ≤ 1 and a, b > 0.
fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    // The continued fraction converges fast for x < (a + 1)/(a + b + 2); beyond, I_x(a, b) = 1 − I_{1−x}(b, a).
    if x > (a + 1.0) / (a + b + 2.0) {
        return 1.0 - incomplete_beta(1.0 - x, b, a);
    }
    let log_front = a * x.ln() + b * (1.0 - x).ln() - ln_beta(a, b);
    log_front.exp() / a * continued_fraction(x, a, b)
}

/// 1 / (1 + d₁/(1 + d₂/(1 + …))) with A&S 26.5.8's coefficients, by the modified Lentz method.
fn continued_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let guard = |value: f64| if value.abs() < TINY { TINY } else { value };
    let mut c = 1.0;
    let mut d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0));
    let mut fraction = d;
    for m in 1..=10_000 {
        let m = f64::from(m);
        // The even coefficient d₂ₘ, then the odd one d₂ₘ₊₁.
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        for coefficient in [even, odd] {
            d = 1.0 / guard(1.0 + coefficient * d);
            c = guard(1.0 + coefficient / c);
            fraction *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    fraction
}

fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// ln Γ(x) for x > 0: Γ(x) = Γ(x + k)/(x(x + 1)…(x + k − 1)) brings the argument to 10 or more, where Stirling's
/// series to its x⁻⁷ term is exact to about 1e-13.
fn ln_gamma(x: f64) -> f64 {
    let mut shift = 0.0;
    let mut x = x;
    while x < 10.0 {
        shift -= x.ln();
        x += 1.0;
    }
    let inverse = 1.0 / x;
    let square = inverse * inverse;
    let series = inverse * (1.0 / 12.0 - square * (1.0 / 360.0 - square * (1.0 / 1260.0 - square / 1680.0)));
    shift + (x - 0.5) * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI).ln() + series
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::t_975;

    #[test]
    fn the_tail_matches_closed_forms_and_published_quantiles() {
        for t in [-3.0, -0.5, 0.0, 0.7, 2.0, 31.8, 318.3, 3183.1] {
            // One degree of freedom is Cauchy's distribution; two have a closed form too.
            let cauchy = 0.5 - f64::atan(t) / std::f64::consts::PI;
            assert!((upper_tail(t, 1) - cauchy).abs() < 1e-12 * cauchy.max(1e-3), "t = {t}: {cauchy}");
            let two = 0.5 * (1.0 - t / (t * t + 2.0).sqrt());
            assert!((upper_tail(t, 2) - two).abs() < 1e-12, "t = {t}");
        }
        for df in [1, 3, 4, 9, 19, 30, 60, 500, 100_000] {
            let tail = upper_tail(t_975(df), df);
            assert!((tail - 0.025).abs() < 2e-6, "df = {df}: {tail}");
        }
        assert_eq!((upper_tail(f64::INFINITY, 3), upper_tail(f64::NEG_INFINITY, 3)), (0.0, 1.0));
        assert!(upper_tail(1.0, 0).is_nan() && upper_tail(f64::NAN, 5).is_nan());
    }

    #[test]
    fn ln_gamma_matches_factorials_and_the_half() {
        let half = ln_gamma(0.5) - std::f64::consts::PI.sqrt().ln();
        assert!(half.abs() < 1e-12, "{half}");
        let mut factorial = 1.0_f64;
        for n in 1..30 {
            assert!((ln_gamma(f64::from(n)) - factorial.ln()).abs() < 1e-11 * factorial.ln().max(1.0), "{n}");
            factorial *= f64::from(n);
        }
    }
}
