//! The shared channel against its anchors (docs/references.md#shared-channel). Each estimate comes from independent
//! replicates; the analytic value must lie inside the 99% confidence interval, and the 95% interval must be
//! tighter than the stated tolerance.

use super::*;
use crate::model::ModelKind;
use crate::stats::{Estimate, t_975};

const BUCKET: SimDuration = SimDuration::from_millis(100);
const REPLICATES: u64 = 20;
/// Student's t, 99.5% quantile, 19 degrees of freedom.
const T_995_DF19: f64 = 2.860935;

fn config(changes: &[(&str, Value)]) -> ChannelConfig {
    Channel::configure(&ModelKind::Channel.point_with(changes)).unwrap()
}

fn estimate(config: &ChannelConfig, metric: usize) -> Estimate {
    let values: Vec<f64> =
        (0..REPLICATES).map(|seed| Channel::simulate(config, RunSettings::new(seed, BUCKET)).metrics[metric]).collect();
    Estimate::of(&values)
}

fn assert_matches(what: &str, estimate: Estimate, theory: f64, tolerance: f64) {
    let ci99 = estimate.ci95 / t_975(REPLICATES as usize - 1) * T_995_DF19;
    assert!((estimate.mean - theory).abs() <= ci99, "{what}: {} ± {ci99} (99% CI) misses {theory}", estimate.mean);
    assert!(estimate.ci95 <= tolerance, "{what}: 95% CI ±{} is wider than {tolerance}", estimate.ci95);
}

fn choice(name: &'static str) -> Value {
    Value::Choice(name)
}

#[test]
fn pure_aloha_peaks_at_one_over_2e() {
    // S = G·e^(−2G); at G = 0.5, 1/(2e) = 0.183940. 20 × 10^5 frame times.
    for g in [0.25, 0.5, 1.5] {
        let c = config(&[("protocol", choice("pure-aloha")), ("load", Value::Real(g))]);
        assert_matches(&format!("pure S at G={g}"), estimate(&c, metric::THROUGHPUT), g * (-2.0 * g).exp(), 0.003);
    }
    let c = config(&[("protocol", choice("pure-aloha")), ("load", Value::Real(0.5))]);
    assert_matches("pure max", estimate(&c, metric::THROUGHPUT), 0.183940, 0.003);
    assert_matches("pure G", estimate(&c, metric::OFFERED_LOAD), 0.5, 0.01);
}

#[test]
fn slotted_aloha_peaks_at_one_over_e() {
    // S = G·e^(−G); at G = 1, 1/e = 0.367879.
    for g in [0.3, 1.0, 2.5] {
        let c = config(&[("load", Value::Real(g))]);
        assert_matches(&format!("slotted S at G={g}"), estimate(&c, metric::THROUGHPUT), g * (-g).exp(), 0.003);
    }
}

#[test]
fn finite_slotted_aloha_peaks_at_one_minus_one_over_n_to_the_n_minus_one() {
    // N stations sending with p = 1/N: S = (1 − 1/N)^(N−1): 0.5 at N = 2, 0.4096 at N = 5, 0.387420 at N = 10.
    for (n, expected) in [(2, 0.5), (5, 0.4096), (10, 0.387420)] {
        let c = config(&[("population", choice("saturated")), ("stations", Value::Count(n)), ("load", Value::Real(1.0))]);
        assert_matches(&format!("finite N={n}"), estimate(&c, metric::THROUGHPUT), expected, 0.003);
    }
}

#[test]
fn ideal_contention_matches_metcalfe_and_boggs() {
    for (q, bytes) in [(2, 64), (10, 64), (50, 512), (256, 1518)] {
        let c = config(&[
            ("protocol", choice("ideal")),
            ("population", choice("saturated")),
            ("stations", Value::Count(q)),
            ("frame_bytes", Value::Count(bytes)),
        ]);
        let expected = metcalfe_boggs_efficiency(q as f64, c.frame, c.slot);
        assert_matches(&format!("ideal Q={q}, {bytes} B"), estimate(&c, metric::THROUGHPUT), expected, 0.004);
    }
}

#[test]
fn two_fresh_stations_need_1_641633_collisions_on_average() {
    // Both send at t = 0 and collide; after the n-th collision each picks r in {0 … 2^min(n,10) − 1} and they
    // collide again with probability 2^−min(n,10): E = 1 + 1/2 + 1/8 + 1/64 + … = 1.641633.
    let c = config(&[("protocol", choice("ethernet")), ("population", choice("saturated")), ("slots", Value::Count(200))]);
    let values: Vec<f64> = (0..100_000)
        .map(|seed| Channel::simulate(&c, RunSettings::new(seed, BUCKET)).metrics[metric::FIRST_SUCCESS_COLLISIONS])
        .collect();
    let estimate = Estimate::of(&values);
    let ci99 = estimate.ci95 / 1.959964 * 2.575829;
    assert!((estimate.mean - 1.641633).abs() <= ci99, "{} ± {ci99}", estimate.mean);
    assert!(estimate.ci95 < 0.01);
}

#[test]
fn a_station_that_keeps_colliding_drops_its_frame_after_exactly_16_attempts() {
    // With no backoff two saturated stations collide forever: every 16 collisions both drop their frames.
    let c = config(&[
        ("protocol", choice("ethernet")),
        ("population", choice("saturated")),
        ("strategy", choice("none")),
        ("slots", Value::Count(1_000)),
    ]);
    let m = Channel::simulate(&c, RunSettings::new(1, BUCKET)).metrics;
    assert_eq!(m[metric::SUCCESSES], 0.0);
    assert!(m[metric::COLLISIONS].is_nan(), "collisions per success is undefined without successes");
    // Every transmission is one of the two stations' share of a collision.
    let collisions = m[metric::ATTEMPTS] / 2.0;
    assert_eq!(m[metric::DROPS], 2.0 * (collisions / 16.0).floor());
    assert!(m[metric::DROPS] > 0.0);
}

#[test]
fn two_saturated_stations_under_beb_show_the_capture_effect() {
    // The winner resets its backoff, the loser's keeps growing: over short windows one station hogs the
    // channel, and one run's shares are far from equal.
    let c = config(&[
        ("protocol", choice("ethernet")),
        ("population", choice("saturated")),
        ("frame_bytes", Value::Count(64)),
        ("slots", Value::Count(2_000)),
    ]);
    let top = estimate(&c, metric::TOP_SHARE);
    assert!(top.mean - top.ci95 > 0.7, "the top station takes most of the channel: {top:?}");
}

#[test]
fn ethernet_with_long_frames_stays_efficient_and_fair_where_ideal_contention_says_it_should() {
    // With 1518-byte frames a lost contention slot costs 4% of a frame, so even 32 busy stations keep the
    // channel well above the ideal model's contention overhead for short frames; all stations get a turn.
    let c = config(&[
        ("protocol", choice("ethernet")),
        ("population", choice("saturated")),
        ("stations", Value::Count(32)),
        ("frame_bytes", Value::Count(1518)),
    ]);
    let throughput = estimate(&c, metric::THROUGHPUT);
    // Upper bound: a frame plus its gap, no contention at all.
    let ceiling = c.frame.as_nanos_f64() / (c.frame + INTER_FRAME_GAP).as_nanos_f64();
    assert!(throughput.mean + throughput.ci95 < ceiling, "{throughput:?} vs {ceiling}");
    let ideal_short = metcalfe_boggs_efficiency(32.0, SimDuration::from_nanos(64 * 8 * 100), c.slot);
    assert!(throughput.mean - throughput.ci95 > ideal_short, "{throughput:?} vs {ideal_short}");
    assert!(estimate(&c, metric::FAIRNESS).mean > 0.9);
}

#[test]
fn a_run_stops_at_its_event_cap_and_says_so() {
    let c = config(&[("slots", Value::Count(1_000_000))]);
    let out = Channel::simulate(&c, RunSettings { max_events: 1_000, ..RunSettings::new(1, BUCKET) });
    assert!(out.truncated);
    assert_eq!(out.events, 1_000);
    // Throughput is measured over the 1,000 slots simulated, not the million asked for.
    assert!(out.metrics[metric::THROUGHPUT] > 0.2, "{}", out.metrics[metric::THROUGHPUT]);
}

#[test]
fn bad_channel_parameters_are_refused() {
    let refuse = |changes: &[(&str, Value)], key: &str| {
        let error = Channel::configure(&ModelKind::Channel.point_with(changes)).err().unwrap();
        assert_eq!(error.key, key, "{}", error.message);
    };
    refuse(&[("load", Value::Real(0.0))], "load");
    refuse(&[("slot_time", Value::Duration(SimDuration::ZERO))], "slot_time");
    refuse(&[("protocol", choice("pure-aloha")), ("population", choice("saturated"))], "population");
    refuse(&[("population", choice("saturated")), ("stations", Value::Count(2)), ("load", Value::Real(3.0))], "load");
    // Bernoulli stations receive a frame with probability λ/N: λ may reach N, not pass it.
    let bernoulli = |rate| [("population", choice("bernoulli")), ("stations", Value::Count(4)), ("arrival_rate", Value::Real(rate))];
    refuse(&bernoulli(4.5), "arrival_rate");
    assert!(Channel::configure(&ModelKind::Channel.point_with(&bernoulli(4.0))).is_ok());
    assert!(Channel::configure(&ModelKind::Channel.point_with(&[("population", choice("poisson")), ("stations", Value::Count(4)), ("arrival_rate", Value::Real(4.5))])).is_ok(), "Poisson rates are not bounded by N");
}

#[test]
fn theory_curves_follow_the_protocol() {
    let pure = config(&[("protocol", choice("pure-aloha"))]);
    assert_eq!(Channel::theory(&pure, "throughput", "load", 0.5), Some(0.5 * (-1.0_f64).exp()));
    let slotted = config(&[]);
    assert_eq!(Channel::theory(&slotted, "throughput", "load", 1.0), Some((-1.0_f64).exp()));
    assert_eq!(Channel::theory(&slotted, "collisions", "load", 1.0), None);
}

/// Checks one run's shares of idle, successful and colliding slots against K ~ Binomial(N, p): P(K = 0) =
/// (1 − p)^N, P(K = 1) = N·p·(1 − p)^(N−1); each share must lie within 3.29 standard errors (99.9%) of its own
/// count's binomial proportion, and the senders per slot within 3.29 standard errors of N·p.
fn assert_binomial_slots(what: &str, c: &ChannelConfig, n: f64, p: f64) {
    let out = Channel::simulate(c, RunSettings::new(7, BUCKET));
    assert!(!out.truncated);
    let m = &out.metrics;
    let slots = out.events as f64;
    let (successes, collisions) = (m[metric::SUCCESSES], (m[metric::COLLISIONS] * m[metric::SUCCESSES]).round());
    let idle_p = (1.0 - p).powf(n);
    let success_p = n * p * (1.0 - p).powf(n - 1.0);
    let shares = [("idle", slots - successes - collisions, idle_p), ("success", successes, success_p), ("collision", collisions, 1.0 - idle_p - success_p)];
    for (name, count, expected) in shares {
        let share = count / slots;
        let se = (share * (1.0 - share) / slots).sqrt();
        assert!((share - expected).abs() <= 3.29 * se, "{what}: {name} share {share} ± {} misses {expected}", 3.29 * se);
    }
    let per_slot = m[metric::ATTEMPTS] / slots;
    let se = (n * p * (1.0 - p) / slots).sqrt();
    assert!((per_slot - n * p).abs() <= 3.29 * se, "{what}: {per_slot} senders per slot, expected {}", n * p);
    // A uniform lone sender spreads S successes multinomially: Jain's index ≈ S / (S + N − 1) (0.973 for 10^4
    // stations and 3.7·10^5 successes, with a standard deviation near 0.003); one favoured station pulls it to 1/N.
    let jain = successes / (successes + n - 1.0);
    assert!((m[metric::FAIRNESS] - jain).abs() < 0.01, "{what}: fairness {} vs {jain}", m[metric::FAIRNESS]);
}

#[test]
fn saturated_senders_per_slot_follow_the_binomial_law() {
    // p = G/N: 0.2 (N = 5), 0.75 (N = 2, the distribution's flipped branch) and 10^−4 (N = 10^4).
    for (n, g) in [(5, 1.0), (2, 1.5), (10_000, 1.0)] {
        let c = config(&[
            ("population", choice("saturated")),
            ("stations", Value::Count(n)),
            ("load", Value::Real(g)),
            ("slots", Value::Count(1_000_000)),
        ]);
        assert_binomial_slots(&format!("slotted N={n}, G={g}"), &c, n as f64, g / n as f64);
    }
    // Ideal contention: p = 1/Q; a success holds the channel for a frame, so more slots of time are needed.
    for q in [3, 64] {
        let c = config(&[
            ("protocol", choice("ideal")),
            ("population", choice("saturated")),
            ("stations", Value::Count(q)),
            ("frame_bytes", Value::Count(64)),
            ("slots", Value::Count(2_000_000)),
        ]);
        assert_binomial_slots(&format!("ideal Q={q}"), &c, q as f64, 1.0 / q as f64);
    }
}

#[test]
fn a_traced_run_draws_what_the_untraced_one_does_and_names_distinct_colliders() {
    for protocol in ["slotted-aloha", "ideal"] {
        let c = config(&[
            ("protocol", choice(protocol)),
            ("population", choice("saturated")),
            ("stations", Value::Count(6)),
            ("load", Value::Real(3.0)),
            ("slots", Value::Count(2_000)),
        ]);
        let plain = Channel::simulate(&c, RunSettings::new(3, BUCKET));
        let traced = Channel::simulate(&c, RunSettings { trace: true, ..RunSettings::new(3, BUCKET) });
        let bits = |metrics: &[f64]| metrics.iter().map(|m| m.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&plain.metrics), bits(&traced.metrics), "{protocol}");
        assert_eq!(traced.spans.len() as f64, traced.metrics[metric::ATTEMPTS], "{protocol}");
        // Spans of one slot share a start; the colliders of a slot are distinct stations, in station order.
        for slot in traced.spans.chunk_by(|a, b| a.start == b.start) {
            assert!(slot.windows(2).all(|pair| pair[0].owner < pair[1].owner), "{protocol}: {slot:?}");
            let outcome = if slot.len() == 1 { "success" } else { "collision" };
            assert!(slot.iter().all(|span| span.outcome == outcome && span.owner < 6), "{protocol}: {slot:?}");
        }
    }
}

/// A raised abort flag (the process's stop signal) ends a long run as truncated at the next poll, as the engine's
/// loop does, though the channel keeps its own loop.
#[test]
fn a_raised_abort_flag_ends_a_channel_run_at_the_next_poll() {
    static ABORT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    let c = config(&[("protocol", choice("slotted-aloha")), ("slots", Value::Count(10 * ABORT_POLL_EVENTS as i64))]);
    let limit = RunLimit { max_events: u64::MAX, abort: Some(&ABORT), ..RunLimit::default() };
    let mut sim = ChannelRun::<false>::new(&c, RunSeeds::single(4), BUCKET, limit);
    sim.slotted_infinite();
    assert!(sim.truncated);
    assert_eq!(sim.events, ABORT_POLL_EVENTS, "stopped at the first poll");
    let unflagged = Channel::simulate(&c, RunSettings::new(4, BUCKET));
    assert!(!unflagged.truncated && unflagged.events == 10 * ABORT_POLL_EVENTS);
}
