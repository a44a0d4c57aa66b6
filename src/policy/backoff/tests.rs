//! Strategy tests: bounds for every registered strategy, sample means against each formula (tolerance from the
//! sample's own 99.9% confidence interval), and the attempt numbering.

use super::*;
use crate::policy::test_rng;
use rand_xoshiro::Xoshiro256PlusPlus;

const PARAMS: BackoffParams = BackoffParams::AWS_2015;
const MS: f64 = 1e6;

fn draws(strategy: Strategy, n: u32, samples: usize, seed: u64) -> Vec<f64> {
    let mut rng: Xoshiro256PlusPlus = test_rng(seed);
    (0..samples)
        .map(|_| {
            let mut memory = BackoffMemory::default();
            for earlier in 1..n {
                strategy.delay(&PARAMS, earlier, &mut memory, &mut rng);
            }
            strategy.delay(&PARAMS, n, &mut memory, &mut rng).as_nanos_f64()
        })
        .collect()
}

/// Asserts that the sample mean is within the 99.9% confidence interval (z = 3.29) of `expected`.
fn assert_mean_near(samples: &[f64], expected: f64, what: &str) {
    let count = samples.len() as f64;
    let mean = samples.iter().sum::<f64>() / count;
    let variance = samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (count - 1.0);
    let half_width = 3.29 * (variance / count).sqrt();
    assert!(
        (mean - expected).abs() <= half_width,
        "{what}: sample mean {mean} is not within ±{half_width} of {expected}"
    );
}

#[test]
fn names_round_trip_and_are_unique() {
    for &strategy in Strategy::ALL {
        assert_eq!(Strategy::from_name(strategy.name()), Some(strategy));
        assert!(!strategy.formula().is_empty() && !strategy.about().is_empty());
    }
    let mut names: Vec<_> = Strategy::ALL.iter().map(|s| s.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), Strategy::ALL.len());
    assert_eq!(Strategy::from_name("ful-jitter"), None);
}

#[test]
fn every_strategy_stays_within_the_cap() {
    let mut rng = test_rng(7);
    for &strategy in Strategy::ALL {
        let mut memory = BackoffMemory::default();
        // gRPC's ±20% jitter is applied after the cap (gRFC A6 since 2024): the one strategy that may exceed it.
        let limit = if strategy == Strategy::GrpcJitter {
            SimDuration::from_nanos_f64(PARAMS.cap_nanos() * 1.2)
        } else {
            PARAMS.cap
        };
        for n in 1..200 {
            let sleep = strategy.delay(&PARAMS, n, &mut memory, &mut rng);
            assert!(sleep <= limit, "{strategy} slept {sleep} > {limit} at n = {n}");
        }
    }
}

#[test]
fn deterministic_strategies_follow_their_formulas_with_first_retry_n_1() {
    let mut rng = test_rng(1);
    let mut memory = BackoffMemory::default();
    let mut sleep_ms = |strategy: Strategy, n| strategy.delay(&PARAMS, n, &mut memory, &mut rng).as_millis_f64();
    assert_eq!(sleep_ms(Strategy::None, 1), 0.0);
    assert_eq!(sleep_ms(Strategy::Constant, 9), 5.0);
    assert_eq!(sleep_ms(Strategy::Linear, 1), 5.0);
    assert_eq!(sleep_ms(Strategy::Linear, 3), 15.0);
    // AWS 2015 numbering: the first retry already doubles the base.
    assert_eq!(sleep_ms(Strategy::Exponential, 1), 10.0);
    assert_eq!(sleep_ms(Strategy::Exponential, 2), 20.0);
    assert_eq!(sleep_ms(Strategy::Exponential, 8), 1280.0);
    assert_eq!(sleep_ms(Strategy::Exponential, 9), 2000.0, "5 ms · 2^9 = 2560 ms is capped at 2 s");
    assert_eq!(sleep_ms(Strategy::Linear, 1000), 2000.0);
}

#[test]
fn multiplier_sets_the_growth_rate() {
    let params = BackoffParams { multiplier: 3.0, ..PARAMS };
    let mut rng = test_rng(1);
    let sleep = Strategy::Exponential.delay(&params, 2, &mut BackoffMemory::default(), &mut rng);
    assert_eq!(sleep.as_millis_f64(), 45.0);
}

#[test]
fn full_jitter_is_uniform_over_the_window() {
    for n in [1, 4, 12] {
        let window = PARAMS.capped_exponential_nanos(n);
        let samples = draws(Strategy::FullJitter, n, 40_000, u64::from(n));
        assert!(samples.iter().all(|&x| (0.0..=window).contains(&x)));
        assert_mean_near(&samples, window / 2.0, &format!("full jitter n={n}"));
    }
}

#[test]
fn equal_jitter_keeps_half_the_window() {
    for n in [1, 5, 12] {
        let window = PARAMS.capped_exponential_nanos(n);
        let samples = draws(Strategy::EqualJitter, n, 40_000, 100 + u64::from(n));
        assert!(samples.iter().all(|&x| x >= window / 2.0 - 1.0 && x <= window));
        assert_mean_near(&samples, 0.75 * window, &format!("equal jitter n={n}"));
    }
}

#[test]
fn decorrelated_jitter_first_sleep_is_uniform_between_base_and_three_bases() {
    let samples = draws(Strategy::DecorrelatedJitter, 1, 40_000, 3);
    assert!(samples.iter().all(|&x| (5.0 * MS - 1.0..=15.0 * MS).contains(&x)));
    assert_mean_near(&samples, 10.0 * MS, "decorrelated s_1");
    // E[s_2] = E[(b + 3·s_1)/2] = (5 + 30)/2 ms before the cap matters.
    let second = draws(Strategy::DecorrelatedJitter, 2, 40_000, 4);
    assert_mean_near(&second, 17.5 * MS, "decorrelated s_2");
}

#[test]
fn decorrelated_variants_differ_only_once_the_cap_binds() {
    // Same seed, same draws: the two forms agree while 3·s_{n−1} ≤ c, then part ways.
    let cap = PARAMS.cap_nanos();
    let (mut published_rng, mut clamped_rng) = (test_rng(5), test_rng(5));
    let (mut published_memory, mut clamped_memory) = (BackoffMemory::default(), BackoffMemory::default());
    let (mut at_cap, mut diverged_at) = (0, None);
    let mut previous = PARAMS.base_nanos();
    for n in 1..=2_000 {
        let published =
            Strategy::DecorrelatedJitter.delay(&PARAMS, n, &mut published_memory, &mut published_rng).as_nanos_f64();
        let clamped =
            Strategy::DecorrelatedRangeClamp.delay(&PARAMS, n, &mut clamped_memory, &mut clamped_rng).as_nanos_f64();
        if diverged_at.is_none() {
            if 3.0 * previous <= cap {
                assert_eq!(published, clamped, "n={n}: the cap does not bind yet");
            } else {
                diverged_at = Some(n);
            }
            previous = published;
        }
        assert!(clamped < cap && clamped >= PARAMS.base_nanos() - 1.0);
        at_cap += usize::from(published == cap);
    }
    assert!(diverged_at.is_some(), "the cap must come to bind within 2000 retries");
    assert!(at_cap > 200, "the published form piles up exactly at the cap ({at_cap} of 2000)");
}

#[test]
fn polly_v2_sleeps_telescope_to_the_curve() {
    // The first k sleeps add up to f(t_{k−1})·b/1.4 with t_{k−1} in [k−1, k), and f increases.
    let params = BackoffParams { cap: SimDuration::from_secs(3600), ..PARAMS };
    let mut rng = test_rng(11);
    for _ in 0..1_000 {
        let mut memory = BackoffMemory::default();
        let mut total = 0.0;
        for n in 1..=6_u32 {
            total += Strategy::PollyV2.delay(&params, n, &mut memory, &mut rng).as_nanos_f64();
            let scale = params.base_nanos() / 1.4;
            let k = f64::from(n);
            let low = polly_v2::polly_curve(k - 1.0) * scale;
            let high = polly_v2::polly_curve(k) * scale;
            assert!(total >= low - 6.0 && total <= high + 6.0, "n={n}: {total} not in [{low}, {high}]");
        }
    }
}

#[test]
fn polly_v2_first_delay_mean_matches_the_integral_of_the_curve() {
    // E[sleep_1] = (b/1.4)·∫₀¹ f(t) dt; the integral by Simpson's rule with 10^4 panels.
    let panels = 10_000;
    let h = 1.0 / f64::from(panels);
    let integral = (0..=panels)
        .map(|i| {
            let weight = if i == 0 || i == panels {
                1.0
            } else if i % 2 == 1 {
                4.0
            } else {
                2.0
            };
            weight * polly_v2::polly_curve(f64::from(i) * h)
        })
        .sum::<f64>()
        * h
        / 3.0;
    let samples = draws(Strategy::PollyV2, 1, 40_000, 12);
    assert_mean_near(&samples, integral * PARAMS.base_nanos() / 1.4, "polly-v2 first delay");
}

#[test]
fn ethernet_beb_draws_whole_slots_from_a_window_that_stops_doubling_at_2_to_the_10() {
    let slot = SimDuration::from_nanos(51_200);
    let params = BackoffParams::new(slot, SimDuration::from_secs(1), 2.0);
    let mut rng = test_rng(21);
    for (n, window) in [(1_u32, 2_u64), (3, 8), (10, 1024), (15, 1024)] {
        let mut seen_max = 0;
        let draws: Vec<f64> = (0..40_000)
            .map(|_| {
                let sleep = Strategy::EthernetBeb.delay(&params, n, &mut BackoffMemory::default(), &mut rng);
                assert_eq!(sleep.as_nanos() % slot.as_nanos(), 0, "whole slots");
                let slots = sleep.as_nanos() / slot.as_nanos();
                assert!(slots < window);
                seen_max = seen_max.max(slots);
                slots as f64
            })
            .collect();
        assert_eq!(seen_max, window - 1, "n={n}: the top of the window is reachable");
        assert_mean_near(&draws, (window - 1) as f64 / 2.0, &format!("beb n={n}"));
    }
}

#[test]
fn quadratic_windows_grow_as_n_plus_one_squared() {
    let params = BackoffParams::new(SimDuration::from_millis(1), SimDuration::from_secs(1), 2.0);
    let mut rng = test_rng(22);
    for n in [1_u32, 2, 5, 9] {
        let draws: Vec<f64> = (0..40_000)
            .map(|_| Strategy::Quadratic.delay(&params, n, &mut BackoffMemory::default(), &mut rng).as_millis_f64())
            .collect();
        let window = f64::from((n + 1) * (n + 1));
        assert!(draws.iter().all(|&d| d < window));
        assert_mean_near(&draws, (window - 1.0) / 2.0, &format!("quadratic n={n}"));
    }
}

/// The `hlr-*` strategies send in each slot with probability p = 1/f(n): W silent slots, W ~ Geometric(p) on
/// {0, 1, …}, mean f(n) − 1 and P(W = 0) = p. `hlr-exponential` keeps doubling past 802.3's 2^10.
#[test]
fn hlr_strategies_wait_geometric_whole_slots_with_mean_f_of_n_minus_one() {
    let slot = SimDuration::from_millis(1);
    let cases = [
        (Strategy::HlrExponential, 2.0, 1_u32, 2.0),
        (Strategy::HlrExponential, 2.0, 4, 16.0),
        (Strategy::HlrExponential, 2.0, 12, 4096.0),
        (Strategy::HlrPolynomial, 2.0, 1, 4.0),
        (Strategy::HlrPolynomial, 2.0, 9, 100.0),
        (Strategy::HlrPolynomial, 3.0, 3, 64.0),
        (Strategy::HlrPolynomial, 1.0, 7, 8.0),
    ];
    for (index, (strategy, m, n, f)) in cases.into_iter().enumerate() {
        let params = BackoffParams::new(slot, SimDuration::from_secs(1_000_000), m);
        let mut rng = test_rng(40 + index as u64);
        let draws: Vec<f64> = (0..40_000)
            .map(|_| {
                let sleep = strategy.delay(&params, n, &mut BackoffMemory::default(), &mut rng);
                assert_eq!(sleep.as_nanos() % slot.as_nanos(), 0, "whole slots");
                sleep.as_millis_f64()
            })
            .collect();
        let what = format!("{strategy} m={m} n={n}");
        assert_mean_near(&draws, f - 1.0, &what);
        // P(W = 0) = 1/f: a share of draws, within 3.29 standard errors.
        let zeros = draws.iter().filter(|&&d| d == 0.0).count() as f64 / draws.len() as f64;
        let error = 3.29 * (1.0 / f * (1.0 - 1.0 / f) / draws.len() as f64).sqrt();
        assert!((zeros - 1.0 / f).abs() <= error, "{what}: P(W = 0) = {zeros}, not 1/{f}");
    }
}

#[test]
fn hlr_waits_stop_at_the_cap_and_a_vanishing_probability_waits_the_cap() {
    let slot = SimDuration::from_micros(51);
    let params = BackoffParams::new(slot, SimDuration::from_secs(3600), 2.0);
    let mut rng = test_rng(50);
    // 2^−2000 is 0 in floating point: the station never sends again before the cap.
    assert_eq!(Strategy::HlrExponential.delay(&params, 2_000, &mut BackoffMemory::default(), &mut rng), params.cap);
    // 2^−60: the mean wait, 2^60 slots, is far past an hour of 51 µs slots.
    let far = Strategy::HlrExponential.delay(&params, 60, &mut BackoffMemory::default(), &mut rng);
    assert_eq!(far, params.cap);
    let zero_base = BackoffParams::new(SimDuration::ZERO, SimDuration::from_secs(1), 2.0);
    assert_eq!(
        Strategy::HlrPolynomial.delay(&zero_base, 3, &mut BackoffMemory::default(), &mut rng),
        SimDuration::ZERO
    );
    // A zero base sleeps nothing, even where the coin never comes up (not the cap).
    let never = Strategy::HlrExponential.delay(&zero_base, 2_000, &mut BackoffMemory::default(), &mut rng);
    assert_eq!(never, SimDuration::ZERO);
}

fn draws_with(strategy: Strategy, params: &BackoffParams, n: u32, samples: usize, seed: u64) -> Vec<f64> {
    let mut rng: Xoshiro256PlusPlus = test_rng(seed);
    (0..samples).map(|_| strategy.delay(params, n, &mut BackoffMemory::default(), &mut rng).as_nanos_f64()).collect()
}

#[test]
fn the_from_base_formulas_start_their_first_retry_at_b() {
    let mut rng = test_rng(30);
    let mut sleep_ms = |n| Strategy::ExponentialFromBase.delay(&PARAMS, n, &mut BackoffMemory::default(), &mut rng);
    assert_eq!(sleep_ms(1).as_millis_f64(), 5.0);
    assert_eq!(sleep_ms(2).as_millis_f64(), 10.0);
    assert_eq!(sleep_ms(9).as_millis_f64(), 1280.0);
    assert_eq!(sleep_ms(10).as_millis_f64(), 2000.0, "5 ms · 2^9 = 2560 ms is capped");
    for n in [1, 3, 12] {
        let window = PARAMS.capped_exponential_nanos(n - 1);
        let samples = draws(Strategy::FullJitterFromBase, n, 40_000, 31 + u64::from(n));
        assert!(samples.iter().all(|&x| (0.0..window).contains(&x)));
        assert_mean_near(&samples, window / 2.0, &format!("full jitter from base n={n}"));
    }
}

#[test]
fn grpc_jitter_stays_within_twenty_percent_of_the_capped_exponential() {
    for n in [1, 4, 12] {
        let centre = PARAMS.capped_exponential_nanos(n - 1);
        let samples = draws(Strategy::GrpcJitter, n, 40_000, 40 + u64::from(n));
        assert!(samples.iter().all(|&x| x >= 0.8 * centre - 1.0 && x < 1.2 * centre + 1.0), "n={n}");
        assert!(samples.iter().any(|&x| x > centre * 1.19) && samples.iter().any(|&x| x < centre * 0.81));
        assert_mean_near(&samples, centre, &format!("grpc jitter n={n}"));
    }
}

#[test]
fn envoy_jitter_draws_below_2_to_the_n_minus_1_bases_and_caps_the_draw() {
    let params = BackoffParams::new(SimDuration::from_millis(25), SimDuration::from_millis(250), 2.0);
    // Windows 25, 75, 175 ms, then 375 ms (the first above the cap) for every later retry.
    for (n, window_ms) in [(1_u32, 25.0), (2, 75.0), (3, 175.0), (4, 375.0), (9, 375.0)] {
        let window = window_ms * MS;
        assert_eq!(EnvoyJitter::window_nanos(&params, n), window, "n={n}");
        let samples = draws_with(Strategy::EnvoyJitter, &params, n, 40_000, 50 + u64::from(n));
        let cap = params.cap_nanos();
        assert!(samples.iter().all(|&x| x < window.min(cap) + 1.0), "n={n}");
        // E[min(c, U(0, w))] = w/2 when w ≤ c, else c − c²/(2w).
        let expected = if window <= cap { window / 2.0 } else { cap - cap * cap / (2.0 * window) };
        assert_mean_near(&samples, expected, &format!("envoy n={n}"));
        let at_cap = samples.iter().filter(|&&x| x == cap).count() as f64 / samples.len() as f64;
        let expected_at_cap = if window > cap { 1.0 - cap / window } else { 0.0 };
        // 99.9% interval of a binomial proportion (exactly 0 when the window is below the cap).
        let half_width = 3.29 * (expected_at_cap * (1.0 - expected_at_cap) / samples.len() as f64).sqrt();
        assert!((at_cap - expected_at_cap).abs() <= half_width, "n={n}: {at_cap} of draws at the cap");
    }
}

#[test]
fn proportional_jitter_capped_stretches_then_caps_so_the_jitter_is_lost_at_the_cap() {
    // Linkerd's annotation backoff: 25 ms doubling, up to 100% extra, capped at 250 ms.
    let params = BackoffParams { jitter_fraction: 1.0, ..BackoffParams::new(MS_25, MS_250, 2.0) };
    for n in 1..=6_u32 {
        let d = 25.0 * MS * 2f64.powi(n as i32 - 1);
        let cap = params.cap_nanos();
        let samples = draws_with(Strategy::ProportionalJitterCapped, &params, n, 40_000, 60 + u64::from(n));
        assert!(samples.iter().all(|&x| x >= d.min(cap) && x <= cap.min(2.0 * d)), "n={n}");
        // d·(1 + U) is uniform on [d, 2d): its mean capped at c is c when d ≥ c, else ∫ min(c, x) dx / d.
        let expected = if d >= cap {
            cap
        } else if 2.0 * d <= cap {
            1.5 * d
        } else {
            ((cap * cap - d * d) / 2.0 + cap * (2.0 * d - cap)) / d
        };
        assert_mean_near(&samples, expected, &format!("proportional-jitter-capped n={n}"));
        let at_cap = samples.iter().filter(|&&x| x == cap).count();
        assert_eq!(at_cap == samples.len(), d >= cap, "n={n}: every draw is the cap once d passes it");
    }
    // A huge exponent stretches to infinity and is capped, never wraps.
    let late =
        Strategy::ProportionalJitterCapped.delay(&params, 5_000, &mut BackoffMemory::default(), &mut test_rng(1));
    assert_eq!(late.as_nanos_f64(), params.cap_nanos());
}

const MS_25: SimDuration = SimDuration::from_millis(25);
const MS_250: SimDuration = SimDuration::from_millis(250);

#[test]
fn the_library_formulas_floor_jitter_and_cap_where_their_sources_do() {
    let ms = SimDuration::from_millis;
    let mut rng = test_rng(11);
    let mut memory = BackoffMemory::default();
    // tenacity's wait_exponential(multiplier=0.5, min=1, max=10): never below the floor, then capped.
    let tenacity = BackoffParams { floor: ms(1_000), ..BackoffParams::new(ms(500), ms(10_000), 2.0) };
    let mut sleep_ms = |strategy: Strategy, params: &BackoffParams, n| {
        strategy.delay(params, n, &mut memory, &mut rng).as_millis_f64()
    };
    let clamped: Vec<f64> = (1..=7).map(|n| sleep_ms(Strategy::ClampedExponential, &tenacity, n)).collect();
    assert_eq!(clamped, [1_000.0, 1_000.0, 2_000.0, 4_000.0, 8_000.0, 10_000.0, 10_000.0]);
    // wait_random_exponential: between the floor and what wait_exponential waits.
    for n in 1..=7 {
        let high = clamped[n as usize - 1];
        for _ in 0..200 {
            let sleep = sleep_ms(Strategy::FlooredFullJitter, &tenacity, n);
            assert!((1_000.0..=high).contains(&sleep), "n = {n}: {sleep}");
        }
    }
    // wait_exponential_jitter(initial=1, max=30, jitter=1): the jitter goes in before the cap, so once the
    // exponential passes the cap every sleep is the cap exactly.
    let jittered = BackoffParams { jitter: ms(1_000), ..BackoffParams::new(ms(1_000), ms(30_000), 2.0) };
    for _ in 0..200 {
        let third = sleep_ms(Strategy::ExponentialPlusJitter, &jittered, 3);
        assert!((4_000.0..5_000.0).contains(&third), "{third}");
        assert_eq!(sleep_ms(Strategy::ExponentialPlusJitter, &jittered, 6), 30_000.0);
    }
    // urllib3 with backoff_factor 0 (its default) sleeps 0 however many retries, and with a factor the first
    // retry is still immediate.
    let urllib3 = BackoffParams { jitter: ms(200), ..BackoffParams::new(SimDuration::ZERO, ms(120_000), 2.0) };
    assert_eq!(sleep_ms(Strategy::ZeroThenExponential, &urllib3, 1), 0.0);
    assert!(sleep_ms(Strategy::ZeroThenExponential, &urllib3, 2_000) <= 200.0, "b = 0 never reaches the cap");
}

/// Properties over any base, cap, multiplier and retry number (proptest shrinks a failure to a small case).
mod properties {
    use proptest::prelude::{ProptestConfig, any, prop_assert, prop_assert_eq, proptest};
    use proptest::strategy::Strategy as _;

    use super::*;

    /// The documented bound: the cap, except gRPC's ±20% jitter, which gRFC A6 applies after the cap.
    fn bound(strategy: Strategy, params: &BackoffParams) -> f64 {
        if strategy == Strategy::GrpcJitter { params.cap_nanos() * 1.2 } else { params.cap_nanos() }
    }

    fn params() -> impl proptest::strategy::Strategy<Value = BackoffParams> {
        // Base up to an hour in ns, the cap at least the base (the scenario checks refuse cap < base), multiplier
        // from 1 to 10 (the `multiplier` key's range).
        (0..3_600_000_000_000_u64, 0..3_600_000_000_000_u64, 1.0..=10.0_f64).prop_map(|(base, extra, multiplier)| {
            BackoffParams::new(SimDuration::from_nanos(base), SimDuration::from_nanos(base + extra), multiplier)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn every_strategy_sleeps_between_zero_and_its_bound(
            params in params(),
            retries in 1..64_u32,
            late in 1..u32::MAX,
            seed in any::<u64>(),
        ) {
            for &strategy in Strategy::ALL {
                let mut rng = test_rng(seed);
                let mut memory = BackoffMemory::default();
                // The first retries in order (formulas that remember their last draw), then one far later.
                for n in (1..=retries).chain([late]) {
                    let sleep = strategy.delay(&params, n, &mut memory, &mut rng).as_nanos_f64();
                    prop_assert!(
                        (0.0..=bound(strategy, &params)).contains(&sleep),
                        "{strategy} slept {sleep} ns at n = {n} with {params:?}"
                    );
                }
            }
        }

        #[test]
        fn every_strategy_draws_the_same_sleeps_from_the_same_seed(params in params(), seed in any::<u64>()) {
            for &strategy in Strategy::ALL {
                let sleeps = || {
                    let (mut rng, mut memory) = (test_rng(seed), BackoffMemory::default());
                    (1..20).map(|n| strategy.delay(&params, n, &mut memory, &mut rng)).collect::<Vec<_>>()
                };
                prop_assert_eq!(sleeps(), sleeps(), "{}", strategy);
            }
        }
    }
}
