//! The fluid limit against closed forms: M/M/c without retries, Bronson's boundary, DesCartes' stuck point and
//! Metafor's stuck regime; mass conservation and the step's convergence.

use super::*;
use crate::model::Configured;
use crate::scenario::{Scenario, plan};

/// The server configuration of a one-point scenario written in TOML.
pub(crate) fn config_of(text: &str, set: &[&str]) -> ServerConfig {
    let set: Vec<String> = set.iter().map(|s| (*s).to_owned()).collect();
    let scenario = Scenario::with_overrides("fluid-test.toml".as_ref(), text.to_owned(), &set).expect("scenario");
    let points = plan(&scenario).expect("plan");
    assert_eq!(points.len(), 1, "one point");
    let Configured::Server(config) = &points[0].config.0 else { panic!("a server scenario") };
    (**config).clone()
}

fn settings(bucket_ms: u64) -> StepSettings {
    StepSettings { bucket: SimDuration::from_millis(bucket_ms), step: None, scale: 1.0 }
}

fn point(text: &str, set: &[&str], bucket_ms: u64) -> FluidPoint {
    FluidPoint::new(&config_of(text, set), settings(bucket_ms)).expect("a fluid form")
}

fn scenario_file(name: &str) -> String {
    std::fs::read_to_string(format!("{}/scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"))).expect("scenario file")
}

fn regime(regimes: &Regimes, kind: RegimeKind) -> Option<Regime> {
    regimes.list.iter().copied().find(|r| r.kind == kind)
}

const MMC: &str = r#"
schema_version = 1
[model]
kind = "server"
workers = 4
service = "exponential"
service_mean = "100ms"
network_delay = "0s"
[workload]
kind = "open"
rate = 30
duration = "60s"
[client]
strategy = "none"
max_attempts = 1
"#;

#[test]
fn an_mmc_queue_without_retries_serves_its_load_and_fills_its_workers_exponentially() {
    let fluid = point(MMC, &[], 1000);
    let regimes = fluid.regimes().expect("regimes");
    assert!((regimes.capacity - 40.0).abs() < 1e-9, "4 workers / 100 ms: {}", regimes.capacity);
    let healthy = regime(&regimes, RegimeKind::Healthy).expect("healthy below capacity");
    assert!((healthy.goodput - 30.0).abs() < 1e-9 && healthy.retries == 0.0, "{healthy:?}");
    assert_eq!(regimes.list.len(), 1, "no stuck regime without retries: {regimes:?}");
    let trajectory = fluid.integrate();
    // B(t) = λm(1 − e^(−t/m)) while no queue forms; the served mass per second approaches λ.
    let goodput = trajectory.rows[10][1];
    assert!((goodput - 30.0).abs() < 0.05, "goodput per second at 10 s: {goodput}");
    let totals = trajectory.totals;
    assert!((totals.requests - 1800.0).abs() < 1e-6, "{totals:?}");
    assert!((totals.succeeded - totals.requests).abs() < 1e-6 * totals.requests, "{totals:?}");
    assert!(trajectory.drained);
}

#[test]
fn an_overloaded_queue_serves_its_capacity_and_refuses_the_rest() {
    let fluid = point(MMC, &["model.queue_limit=20", "workload.rate=50"], 1000);
    let trajectory = fluid.integrate();
    let row = trajectory.rows[30];
    assert!((row[1] - 40.0).abs() < 0.1, "goodput at capacity: {row:?}");
    assert!((row[5] - 10.0).abs() < 0.1, "refusals λ − C: {row:?}");
    assert!((row[6] - 20.0).abs() < 1e-6, "a full queue: {row:?}");
}

#[test]
fn bronsons_boundary_is_where_two_services_per_request_exceed_capacity() {
    let text = scenario_file("bronson-2021");
    let stuck_exists = |rate: f64| {
        let fluid = point(&text, &[&format!("workload.rate={rate}"), "model.faults=\"60s..70s slowdown x10\""], 1000);
        regime(&fluid.regimes().unwrap(), RegimeKind::Growing).is_some()
    };
    let boundary = bisect(100.0, 200.0, 0.0, stuck_exists);
    assert!((boundary - 150.0).abs() < 1.5, "C/(R+1) = 150 within 1%: {boundary}");
}

#[test]
fn the_descartes_storm_has_its_closed_form_stuck_point() {
    let fluid = point(&scenario_file("descartes-retry-storm"), &[], 1000);
    let regimes = fluid.regimes().unwrap();
    let stuck = regime(&regimes, RegimeKind::Stuck).expect("a stuck regime");
    let close = |x: f64, expected: f64| (x - expected).abs() <= 0.02 * expected;
    assert!(close(stuck.attempts, 18.507) && close(stuck.retries, 9.207), "{stuck:?}");
    assert!(close(stuck.rejected, 8.507) && close(stuck.late, 10.0) && stuck.goodput < 1e-9, "{stuck:?}");
    assert!(regime(&regimes, RegimeKind::Healthy).is_some_and(|h| (h.goodput - 9.3).abs() < 1e-9));
    let separatrix = regime(&regimes, RegimeKind::Separatrix).expect("a separatrix");
    // 9.3(1 + p + p² + p³) = 10, p = e^(−(4 − W)/0.1): W* = 4 − 0.1 ln(1/p*), Q* = 10 W*.
    assert!((separatrix.queue - 37.3).abs() < 0.5 && !separatrix.stable, "{separatrix:?}");
}

#[test]
fn metafors_stuck_regime_sends_every_attempt() {
    let fluid = point(&scenario_file("metafor-service52"), &["model.faults=\"10s..15s slowdown x5\""], 1000);
    let stuck = regime(&fluid.regimes().unwrap(), RegimeKind::Stuck).expect("stuck");
    assert!((stuck.attempts - 31_000.0).abs() < 1.0 && (stuck.late - 6250.0).abs() < 1.0, "{stuck:?}");
    assert!((stuck.rejected - 24_750.0).abs() < 1.0, "{stuck:?}");
}

/// Per-second means of the timeline's `column` over buckets [from, to).
fn mean_of(trajectory: &Trajectory, column: &str, from: usize, to: usize) -> f64 {
    let index = SERIES.iter().position(|s| *s == column).expect("a series");
    trajectory.rows[from..to].iter().map(|row| row[index]).sum::<f64>() / (to - from) as f64
}

#[test]
fn the_descartes_trajectory_settles_on_the_stuck_point_after_the_spike() {
    let fluid = point(&scenario_file("descartes-retry-storm"), &[], 1000);
    let trajectory = fluid.integrate();
    for (column, expected) in [("calls", 18.507), ("retries", 9.207), ("rejected", 8.507), ("late", 10.0)] {
        let mean = mean_of(&trajectory, column, 130, 400);
        assert!((mean - expected).abs() <= 0.02 * expected, "{column}: {mean} against {expected}");
    }
    assert!(mean_of(&trajectory, "goodput", 130, 400) < 1e-6);
    // Before the spike the fluid is healthy: the load is served with no queue.
    assert!((mean_of(&trajectory, "goodput", 10, 120) - 9.3).abs() < 1e-6);
    assert_eq!(mean_of(&trajectory, "retries", 0, 120), 0.0);
    // The queue fills during the spike, (30 − 10)/s for 5 s: full at the spike's end.
    assert!(trajectory.rows[124][6] > 99.0 && trajectory.rows[121][6] < 60.0, "{:?}", &trajectory.rows[120..126]);
    assert_eq!(fluid.verdict(&trajectory, SimDuration::from_secs(1)).stuck, 1.0);
}

#[test]
fn bronsons_blip_recovers_as_the_simulation_does_and_sticks_inside_its_bracket() {
    let text = scenario_file("bronson-2021");
    let verdict = |rate: f64| {
        let fluid = point(&text, &[&format!("workload.rate={rate}"), "model.faults=\"60s..70s slowdown x10\""], 1000);
        fluid.verdict(&fluid.integrate(), SimDuration::from_secs(1))
    };
    // docs/models.md: recovery after a 10 s blip in the committed simulation, 10 replicates each.
    for (rate, simulated_s) in [(100.0, 12.5), (120.0, 28.4), (130.0, 45.4), (140.0, 97.0), (145.0, 215.0)] {
        let fluid_s = verdict(rate).recovery_ms / 1000.0;
        assert!((fluid_s - simulated_s).abs() <= 0.1 * simulated_s, "at {rate}/s: {fluid_s} s against {simulated_s} s");
    }
    // `retrylab boundary` brackets the simulated boundary in [145.31, 146.88].
    let boundary = bisect(140.0, 150.0, 0.05, |rate| verdict(rate).stuck == 1.0);
    assert!((145.31..=146.88).contains(&boundary), "{boundary}");
}

#[test]
fn metafors_cut_tips_the_fluid_between_the_committed_bracket_and_the_first_order_bound() {
    let text = scenario_file("metafor-service52");
    let stuck = |length_s: f64| {
        let faults = format!("model.faults=\"10s..{}ms slowdown x5\"", (10_000.0 + length_s * 1000.0).round());
        let fluid = point(&text, &[&faults, "workload.duration=40s"], 1000);
        fluid.verdict(&fluid.integrate(), SimDuration::from_secs(1)).stuck == 1.0
    };
    assert!(!stuck(3.5) && stuck(3.79), "the simulation recovers from 3.5 s; 3.79 s is the first-order bound");
    let length = bisect(3.5, 3.79, 0.02, stuck);
    assert!(length < 3.7, "waits from early in the cut and the exponential tail tip it sooner: {length}");
}

#[test]
fn every_request_ends_once_and_every_call_is_a_first_try_or_a_retry() {
    // The last case is a closed workload of 50 clients thinking 1 s, three attempts of 150 ms each, at a queue of
    // two places whose 503s are retried: every client comes back to think, whichever way its request ended.
    let cases: [(&str, &[&str]); 6] = [
        (MMC, &["client.max_attempts=4", "model.queue_limit=10", "workload.rate=60", "client.timeout=300ms"]),
        (MMC, &["client.max_attempts=3", "model.error_probability=0.2", "model.permanent_probability=0.1"]),
        (MMC, &["client.max_attempts=5", "client.timeout=1s", "model.faults=\"10s..20s black-hole\""]),
        (MMC, &["client.max_attempts=5", "model.faults=\"10s..20s fail-fast, 30s..31s reset\""]),
        (MMC, &["client.max_attempts=3", "client.timeout=200ms", "client.on_timeout=\"cancel\"", "workload.rate=45"]),
        (MMC, &["model.queue_limit=2"]),
    ];
    let closed = MMC
        .replace("kind = \"open\"\nrate = 30", "kind = \"closed\"\nclients = 50\nthink_time = \"1s\"")
        .replace("max_attempts = 1", "max_attempts = 3\ntimeout = \"150ms\"");
    for (index, (text, set)) in cases.into_iter().enumerate() {
        let is_closed = index == cases.len() - 1;
        let text = if is_closed { closed.as_str() } else { text };
        let trajectory = point(text, set, 1000).integrate();
        let totals = trajectory.totals;
        if is_closed {
            assert!(totals.rejected > 1.0 && totals.gave_up > 1.0, "503s retried and given up: {totals:?}");
            assert!((trajectory.thinking - 50.0).abs() < 1e-6, "{}", trajectory.thinking);
        }
        let ended = totals.succeeded + totals.gave_up + totals.failed_permanently;
        assert!((ended - totals.requests).abs() <= 1e-6 * totals.requests, "{set:?}: {totals:?}");
        assert!((totals.calls - totals.requests - totals.retries).abs() <= 1e-6 * totals.calls, "{set:?}: {totals:?}");
        assert!(totals.requests > 0.0 && totals.succeeded > 0.0, "{set:?}: {totals:?}");
    }
}

#[test]
fn halving_the_step_moves_a_storm_by_less_than_a_percent() {
    let text = scenario_file("descartes-retry-storm");
    let config = config_of(&text, &[]);
    let run = |step_ms: u64| {
        let step = Some(SimDuration::from_millis(step_ms));
        let fluid = FluidPoint::new(&config, StepSettings { step, ..settings(1000) }).unwrap();
        mean_of(&fluid.integrate(), "late", 130, 400)
    };
    let (coarse, fine, finer) = (run(20), run(10), run(5));
    assert!((fine - finer).abs() < (coarse - fine).abs() + 1e-12, "{coarse} {fine} {finer}");
    assert!((fine - finer).abs() < 0.01 * finer, "{fine} {finer}");
}

#[test]
fn the_first_services_complete_as_an_infinite_server_queue_fills() {
    // Workers never run out: the completions per 10 ms bucket are ∫ λ(1 − e^(−s/m)) ds over the bucket.
    let fluid = point(MMC, &["model.workers=1000"], 10);
    let trajectory = fluid.integrate();
    let (rate, mean) = (30.0_f64, 0.1_f64);
    for bucket in [2_usize, 5, 10, 30] {
        let (a, b) = (bucket as f64 * 0.01, bucket as f64 * 0.01 + 0.01);
        let expected = rate * ((b - a) - mean * ((-a / mean).exp() - (-b / mean).exp()));
        let goodput = trajectory.rows[bucket][1];
        assert!((goodput - expected).abs() < 0.01 * expected, "bucket {bucket}: {goodput} against {expected}");
    }
}

#[test]
fn a_scaled_fleet_has_the_same_counts_per_client() {
    let text = scenario_file("thundering-herd");
    let config = config_of(&text, &["sweep.strategy=[\"full-jitter\"]"]);
    let run = |scale: f64| FluidPoint::new(&config, StepSettings { scale, ..settings(10) }).unwrap().integrate();
    let (one, million) = (run(1.0), run(1e6));
    assert!((million.totals.calls / 1e6 - one.totals.calls).abs() <= 1e-6 * one.totals.calls);
    assert_eq!(one.rows.len(), million.rows.len());
    assert!(one.totals.calls > one.totals.requests, "a herd retries");
}

#[test]
fn unlimited_attempts_add_their_whole_geometric_tail() {
    // Half the services answer 502, retried without end: 1/(1 − ½) = 2 attempts per request.
    let unlimited = MMC.replace("strategy = \"none\"\nmax_attempts = 1", "strategy = \"constant\"\nbase = \"10ms\"");
    let fluid = point(&unlimited, &["model.error_probability=0.5", "workload.rate=10"], 1000);
    let healthy = regime(&fluid.regimes().unwrap(), RegimeKind::Healthy).expect("20 attempts/s against 40");
    assert!((healthy.attempts - 20.0).abs() < 1e-9 && (healthy.goodput - 10.0).abs() < 1e-9, "{healthy:?}");
    let totals = fluid.integrate().totals;
    assert!((totals.calls - 2.0 * totals.requests).abs() < 1e-6 * totals.calls, "{totals:?}");
}

#[test]
fn a_fleet_budget_holds_the_stuck_storms_retries_to_its_share_of_requests() {
    let storm = scenario_file("descartes-retry-storm");
    // Half of 9.3 requests/s may be retried: 4.65/s of the 9.207 the stuck storm asks for.
    let fluid = point(&storm, &["client.limiter=\"budget\"", "client.budget=0.5"], 1000);
    let regimes = fluid.regimes().unwrap();
    let stuck = regime(&regimes, RegimeKind::Stuck).expect("13.95 attempts/s still exceed 10");
    assert!((stuck.retries - 4.65).abs() < 1e-6 && (stuck.attempts - 13.95).abs() < 1e-6, "{stuck:?}");
    assert!(stuck.refused > 1.0 && (stuck.rejected - 3.95).abs() < 1e-6, "{stuck:?}");
    let healthy = regime(&regimes, RegimeKind::Healthy).expect("healthy");
    assert_eq!((healthy.refused, healthy.retries), (0.0, 0.0));
    // Finagle's 20% + 10/s allows 11.86/s: more than the storm asks, so nothing changes.
    let finagle = point(&storm, &["client.limiter=\"finagle\""], 1000);
    let unbound = regime(&finagle.regimes().unwrap(), RegimeKind::Stuck).expect("stuck");
    assert!((unbound.retries - 9.207).abs() < 0.01 && unbound.refused == 0.0, "{unbound:?}");
    assert_eq!(finagle.budget(), Some((0.2, 10.0)));
}

#[test]
fn a_fleet_budget_in_a_black_hole_grants_its_share_of_first_tries_plus_its_reserve_each_second() {
    // Every attempt times out for a minute and would be retried without end: Finagle grants 20% of the 30 first
    // tries' outcomes per second, plus the 100 retries of its reserve freed over each 10 s: 16 retries/s.
    let endless = MMC.replace("strategy = \"none\"\nmax_attempts = 1", "strategy = \"constant\"\nbase = \"10ms\"");
    let set = ["client.limiter=\"finagle\"", "client.timeout=100ms", "model.faults=\"10s..70s black-hole\""];
    // The same where a queue of five serves nothing: the failures are its 503s as well as timeouts.
    let full = ["client.limiter=\"finagle\"", "client.timeout=100ms", "model.faults=\"10s..70s slowdown x1000\""];
    let jammed = point(&endless, &[&full[..], &["model.queue_limit=5"]].concat(), 1000).integrate();
    assert!(mean_of(&jammed, "rejected", 30, 60) > 16.0, "503s as well as timeouts");
    let fluid = point(&endless, &set, 1000);
    let trajectory = fluid.integrate();
    for run in [&trajectory, &jammed] {
        let retries = mean_of(run, "retries", 30, 60);
        assert!((retries - 16.0).abs() < 0.01 * 16.0, "{retries}");
    }
    let retries = mean_of(&trajectory, "retries", 30, 60);
    let totals = trajectory.totals;
    assert!(totals.refused > 0.0 && totals.refused <= totals.gave_up, "{totals:?}");
    let ended = totals.succeeded + totals.gave_up + totals.failed_permanently;
    assert!((ended - totals.requests).abs() <= 1e-6 * totals.requests, "{totals:?}");
    // The reserve scales with the fleet: ten times the fleet, ten times the retries.
    let config = config_of(&endless, &set);
    let scaled = FluidPoint::new(&config, StepSettings { scale: 10.0, ..settings(1000) }).unwrap().integrate();
    assert!((mean_of(&scaled, "retries", 30, 60) - 10.0 * retries).abs() < 1e-6 * retries);
}

#[test]
fn a_budget_rescues_the_metastable_service_as_the_simulation_does() {
    // results/metastable's point at 900 requests/s with a 5 s black hole: without a limiter it sticks; with the
    // 10% budget it recovers, and the fluid's retries and refusals per request fall inside the simulation's 95%
    // intervals (8 replicates).
    let text = scenario_file("metastable");
    let set = ["workload.rate=900", "model.outage_duration=5s", "sweep.limiter=[\"budget\"]", "replicates=8"];
    let none = point(&text, &["workload.rate=900", "model.outage_duration=5s", "sweep.limiter=[\"none\"]"], 100);
    assert_eq!(none.verdict(&none.integrate(), SimDuration::from_millis(100)).stuck, 1.0);
    let scenario = Scenario::with_overrides("metastable.toml".as_ref(), text.clone(), &set.map(String::from)).unwrap();
    let planned = plan(&scenario).unwrap();
    let Configured::Server(config) = &planned[0].config.0 else { panic!("a server point") };
    let fluid = FluidPoint::new(config, settings(100)).unwrap();
    let trajectory = fluid.integrate();
    assert_eq!(fluid.verdict(&trajectory, SimDuration::from_millis(100)).stuck, 0.0);
    let settings = crate::sweep::SweepSettings::for_scenario(&scenario, Some(1));
    let runs = crate::sweep::run_sweep(&planned, settings, &|| {}).unwrap();
    let index = |name: &str| scenario.model.metrics().iter().position(|m| m.name == name).unwrap();
    let per_request = |name: &str| -> Vec<f64> {
        runs.iter().map(|run| run.output.metrics[index(name)] / run.output.metrics[index("requests")]).collect()
    };
    let totals = trajectory.totals;
    for (name, fluid_value) in [("retries", totals.retries), ("refused", totals.refused)] {
        let simulated = crate::stats::Estimate::of(&per_request(name));
        let fluid_value = fluid_value / totals.requests;
        let inside = (simulated.lo95..=simulated.hi95).contains(&fluid_value);
        assert!(inside, "{name}: {fluid_value} against {simulated:?}");
        assert!(fluid_value > 0.02, "{name} is no small share: {fluid_value}");
    }
}

#[test]
fn what_has_no_fluid_form_is_refused_at_its_key() {
    let cases = [
        ("client.limiter=\"grpc\"", "limiter"),
        ("client.limiter=[\"finagle\", \"budget\"]", "limiter"),
        ("client.limiter_scope=\"client\"", "limiter_scope"),
        ("model.network=\"exponential\"", "network"),
        ("client.deadline=\"10s\"", "deadline"),
        ("model.rate_limit=20", "rate_limit"),
    ];
    for (set, key) in cases {
        let (limiter, instances) = if key == "limiter_scope" {
            ("client.limiter=\"budget\"", "client.client_instances=10")
        } else {
            ("model.network_delay=1ms", "model.network_delay=1ms")
        };
        let refusal =
            FluidPoint::new(&config_of(MMC, &[set, "model.network_delay=1ms", limiter, instances]), settings(1000))
                .expect_err(set);
        assert_eq!(refusal.key, key, "{set}");
        assert!(refusal.message.starts_with("the fluid limit cannot express"), "{}", refusal.message);
    }
    assert!(FluidPoint::new(&config_of(MMC, &[]), settings(1000)).is_ok());
}

#[test]
fn a_memoryless_policy_ends_its_classes_at_the_cap_and_a_decorrelated_one_is_flagged() {
    let text = scenario_file("thundering-herd");
    let classes = |strategy: &str| {
        let config = config_of(&text, &[&format!("sweep.strategy=[\"{strategy}\"]")]);
        let table = tables::RetryTable::of(&config);
        (table.classes, table.correlated)
    };
    // base 10 ms, cap 10 s: 10·2^n reaches the cap at n = 10.
    assert_eq!(classes("exponential"), (10, false));
    assert_eq!(classes("full-jitter"), (10, false));
    assert!(classes("decorrelated-jitter").1);
}

#[test]
fn the_simulated_herd_approaches_the_fluid_as_the_fleet_grows() {
    // The herd with N clients, N/100 workers and N/10 places, 5 replicates per N: the largest gap per client in
    // calls per 10 ms bucket, against the fluid of the same point (scripts/fluid-convergence goes to 10^7).
    let text = scenario_file("thundering-herd");
    let mut points = Vec::new();
    for clients in [1_000_u32, 10_000, 100_000] {
        let set: Vec<String> = vec![
            format!("workload.clients={clients}"),
            format!("model.workers={}", clients / 100),
            format!("model.queue_limit={}", clients / 10),
            "sweep.strategy=[\"full-jitter\"]".into(),
            "replicates=5".into(),
        ];
        let scenario = Scenario::with_overrides("herd.toml".as_ref(), text.clone(), &set).unwrap();
        let planned = plan(&scenario).unwrap();
        let Configured::Server(config) = &planned[0].config.0 else { panic!("a server point") };
        let fluid = FluidPoint::new(config, settings(10)).unwrap().integrate();
        let settings = crate::sweep::SweepSettings::for_scenario(&scenario, Some(1));
        let runs = crate::sweep::run_sweep(&planned, settings, &|| {}).unwrap();
        let series = scenario.model.timeline_series().len();
        let gaps: Vec<f64> = runs
            .iter()
            .map(|run| {
                let buckets = (run.output.timeline.len() / series).max(fluid.rows.len());
                (0..buckets)
                    .map(|b| {
                        let simulated = run.output.timeline.get(b * series).copied().unwrap_or(0.0);
                        let expected = fluid.rows.get(b).map_or(0.0, |row| row[0]);
                        (simulated - expected).abs() / f64::from(clients)
                    })
                    .fold(0.0, f64::max)
            })
            .collect();
        points.push((f64::from(clients).log10(), (gaps.iter().sum::<f64>() / gaps.len() as f64).log10()));
    }
    assert!(points.windows(2).all(|pair| pair[1].1 < pair[0].1), "the gap falls: {points:?}");
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / 3.0;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / 3.0;
    let slope = points.iter().map(|(x, y)| (x - mean_x) * (y - mean_y)).sum::<f64>()
        / points.iter().map(|(x, _)| (x - mean_x).powi(2)).sum::<f64>();
    assert!(slope <= -0.35, "near Kurtz's N^-1/2: slope {slope}, {points:?}");
}
