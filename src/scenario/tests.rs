use std::path::Path;

use crate::params::Point;

use super::*;

const GOOD: &str = r#"
schema_version = 1
name = "demo"
seed = 7
replicates = 3

[model]
kind = "occ"
clients = 20

[client]
strategy = "exponential"
base = "5ms"
cap = "2s"

[sweep]
clients = { from = 10, to = 30, step = 10 }
strategy = ["none", "full-jitter"]

[charts]
timeline_at = { clients = 20 }
"#;

fn parse(text: &str) -> Result<Scenario, InputError> {
    Scenario::from_source(Path::new("demo.toml"), text.to_owned())
}

fn error_of(text: &str) -> String {
    parse(text).expect_err("should be refused").to_string()
}

#[test]
fn a_good_scenario_expands_to_the_cartesian_product_in_order() {
    let scenario = parse(GOOD).unwrap();
    assert_eq!((scenario.seed, scenario.replicates, scenario.name.as_str()), (7, 3, "demo"));
    let points = plan(&scenario).unwrap();
    let labels: Vec<String> = points.iter().map(|p| format!("{}/{}", p.swept[0], p.swept[1])).collect();
    assert_eq!(labels, ["10/none", "10/full-jitter", "20/none", "20/full-jitter", "30/none", "30/full-jitter"]);
    let mut hashes: Vec<u64> = points.iter().map(|p| p.hash).collect();
    hashes.sort_unstable();
    hashes.dedup();
    assert_eq!(hashes.len(), 6, "every point hashes differently");
}

#[test]
fn hashes_depend_on_parameters_not_on_position() {
    let a = plan(&parse(GOOD).unwrap()).unwrap();
    let reordered = GOOD.replace(r#"strategy = ["none", "full-jitter"]"#, r#"strategy = ["full-jitter", "none"]"#);
    let b = plan(&parse(&reordered).unwrap()).unwrap();
    assert_eq!(a[0].hash, b[1].hash, "10/none keeps its hash wherever it sits");
}

#[test]
fn malformed_toml_is_located() {
    let text = "schema_version = 1\n[model\nkind = \"occ\"\n";
    let message = error_of(text);
    assert!(message.starts_with("demo.toml:2:"), "{message}");
    assert!(message.contains("invalid TOML"), "{message}");
}

#[test]
fn unknown_keys_are_refused_with_the_valid_ones() {
    let message = error_of(&GOOD.replace("cap = \"2s\"", "cap = \"2s\"\nspread = true"));
    assert!(message.starts_with("demo.toml:15:1: client.spread: unknown key"), "{message}");
    assert!(message.contains("strategy, base, cap"), "{message}");
    let message = error_of(&GOOD.replace("seed = 7", "sed = 7"));
    assert!(message.contains("demo.toml:4:1: sed: unknown key `sed`"), "{message}");
}

#[test]
fn wrong_types_and_bad_values_name_key_and_expectation() {
    let cases = [
        ("clients = 20", "clients = \"many\"", "model.clients: expected a whole number"),
        ("clients = 20", "clients = 0", "model.clients: 0 is out of range"),
        ("base = \"5ms\"", "base = 5", "client.base: a duration needs its unit"),
        ("base = \"5ms\"", "base = \"-5ms\"", "client.base: durations cannot be negative"),
        ("base = \"5ms\"", "base = \"5\"", "client.base: \"5\" has no unit"),
        ("replicates = 3", "replicates = 0", "replicates: expected a whole number from 1"),
        (
            "strategy = \"exponential\"",
            "strategy = \"ful-jitter\"",
            "unknown strategy \"ful-jitter\"; valid: none, constant",
        ),
        ("kind = \"occ\"", "kind = \"occc\"", "model.kind: unknown model \"occc\"; valid kinds: occ"),
        ("schema_version = 1", "schema_version = 2", "schema_version: version 2 is not supported"),
        ("step = 10 }", "step = 0 }", "sweep.clients.step: expected a whole number > 0"),
        ("timeline_at = { clients = 20 }", "timeline_at = { clients = 25 }", "25 is not one of the swept values"),
    ];
    for (from, to, expected) in cases {
        let text = GOOD.replace(from, to);
        assert_ne!(text, GOOD, "case {to} did not change the file");
        let message = error_of(&text);
        assert!(message.contains(expected), "{to}: got {message}");
        assert!(message.starts_with("demo.toml:"), "{message}");
    }
}

#[test]
fn cap_below_base_is_caught_at_the_point_that_breaks_it() {
    let text = GOOD.replace("cap = \"2s\"", "cap = \"1ms\"");
    let scenario = parse(&text).unwrap();
    let message = plan(&scenario).err().unwrap().to_string();
    assert!(message.starts_with("demo.toml:14:7: client.cap: cap (1ms) must be at least base (5ms)"), "{message}");
}

#[test]
fn missing_required_parameter_is_named() {
    let text = GOOD.replace("clients = 20\n", "").replace("clients = { from = 10, to = 30, step = 10 }\n", "");
    let message = error_of(&text);
    assert!(message.contains("model.clients: missing"), "{message}");
}

#[test]
fn lists_outside_the_sweep_are_pointed_there() {
    let message = error_of(&GOOD.replace("clients = 20", "clients = [1, 2]"));
    assert!(message.contains("belongs in [sweep]"), "{message}");
}

#[test]
fn overrides_fix_or_sweep_parameters() {
    let mut scenario = parse(GOOD).unwrap();
    overrides::apply(&mut scenario, "strategy=decorrelated-jitter").unwrap();
    overrides::apply(&mut scenario, "client.base=10ms").unwrap();
    overrides::apply(&mut scenario, "replicates=9").unwrap();
    overrides::apply(&mut scenario, "sweep.clients=[5, 6]").unwrap();
    assert_eq!(scenario.replicates, 9);
    assert_eq!(scenario.sweep.len(), 1, "a scalar removes the strategy axis");
    assert_eq!(scenario.sweep[0].values, vec![Value::Count(5), Value::Count(6)]);
    let base = scenario.settings.iter().find(|s| s.spec.key == "base").unwrap();
    assert_eq!(base.value, Some(Value::Duration(SimDuration::from_millis(10))));
    assert_eq!(plan(&scenario).unwrap().len(), 2);
}

#[test]
fn bad_overrides_name_the_argument() {
    let mut scenario = parse(GOOD).unwrap();
    let message = overrides::apply(&mut scenario, "clientz=5").unwrap_err().to_string();
    assert!(message.starts_with("demo.toml: --set clientz=5: clientz: unknown key `clientz`"), "{message}");
    assert!(message.contains("clients"), "{message}");
    let message = overrides::apply(&mut scenario, "cap=fast").unwrap_err().to_string();
    assert!(message.contains("client.cap: \"fast\" is not a duration"), "{message}");
    let message = overrides::apply(&mut scenario, "seed").unwrap_err().to_string();
    assert!(message.contains("expected KEY=VALUE"), "{message}");
}

#[test]
fn overrides_written_into_the_file_give_what_set_gives() {
    let overrides: Vec<String> =
        ["strategy=decorrelated-jitter", "replicates=9", "sweep.clients=[5, 6]", "charts.timeline_at={ clients = 5 }"]
            .map(str::to_owned)
            .to_vec();
    let given = Scenario::with_overrides(Path::new("demo.toml"), GOOD.to_owned(), &overrides).unwrap();
    let text = write_into_source(&format!("# A demo.{GOOD}"), &overrides).unwrap();
    assert!(text.starts_with("# A demo.\n# Changed in the retrylab lab."), "{text}");
    assert!(text.contains("set = [\n  \"strategy=decorrelated-jitter\",\n"), "{text}");
    let written = parse(&text).unwrap();
    let ids = |scenario: &Scenario| plan(scenario).unwrap().iter().map(PlannedPoint::id).collect::<Vec<_>>();
    assert_eq!(ids(&written), ids(&given));
    assert_eq!((written.replicates, written.seed), (9, 7));
    assert_eq!(format!("{:?}", written.charts), format!("{:?}", given.charts));
    let strategy = written.settings.iter().find(|setting| setting.spec.key == "strategy").unwrap();
    assert!(matches!(&strategy.origin, Origin::File(at) if at.line == 5), "{:?}", strategy.origin);
    assert!(matches!(&written.sweep[0].origin, Origin::File(at) if at.line == 7), "{:?}", written.sweep[0].origin);
    // Downloading again adds to the list the file holds.
    let again = write_into_source(&text, &["seed=8".to_owned()]).unwrap();
    assert_eq!(again.matches("set = [").count(), 1, "{again}");
    let twice = parse(&again).unwrap();
    assert_eq!((twice.replicates, twice.seed), (9, 8));
    assert_eq!(write_into_source(GOOD, &[]).unwrap(), GOOD);
    // A file that opens with a key gets the list at its top.
    let bare = write_into_source(GOOD.trim_start(), &["seed=3".to_owned()]).unwrap();
    assert!(bare.starts_with("# Changed"), "{bare}");
    assert_eq!(parse(&bare).unwrap().seed, 3);
}

#[test]
fn a_bad_entry_in_the_files_own_set_is_located_in_the_file() {
    let with = |line: &str| error_of(&GOOD.replace("seed = 7", &format!("seed = 7\n{line}")));
    let message = with(r#"set = ["clients=2", "clientz=5"]"#);
    assert!(message.starts_with("demo.toml:5:21: clientz: unknown key `clientz`"), "{message}");
    let message = with(r#"set = ["cap=fast"]"#);
    assert!(message.starts_with("demo.toml:5:8: client.cap: \"fast\" is not a duration"), "{message}");
    let message = with(r#"set = "clients=5""#);
    assert!(message.starts_with("demo.toml:5:7: set: expected a list of \"KEY=VALUE\" strings"), "{message}");
    let message = with("set = [5]");
    assert!(message.starts_with("demo.toml:5:8: set: expected a list"), "{message}");
    assert!(message.ends_with("found an integer"), "{message}");
}

#[test]
fn ranges_cover_counts_reals_and_durations() {
    let text = GOOD.replace(
        "strategy = [\"none\", \"full-jitter\"]",
        "multiplier = { from = 1.5, to = 2.1, step = 0.3 }\nbase = { from = \"1ms\", to = \"2ms\", step = \"0.5ms\" }",
    );
    let scenario = parse(&text).unwrap();
    let values = |key: &str| scenario.axis(key).unwrap().values.iter().map(|v| v.to_string()).collect::<Vec<_>>();
    assert_eq!(values("clients"), ["10", "20", "30"]);
    assert_eq!(values("multiplier").len(), 3, "{:?}", values("multiplier"));
    assert_eq!(values("base"), ["1ms", "1.5ms", "2ms"]);
}

/// GOOD with a third swept parameter and `charts_text` as its `[charts]` table.
fn with_charts(charts_text: &str) -> String {
    GOOD.replace("[charts]\ntimeline_at = { clients = 20 }\n", "").replace(
        "strategy = [\"none\", \"full-jitter\"]",
        "strategy = [\"none\", \"full-jitter\"]\nbase = [\"5ms\", \"10ms\"]",
    ) + charts_text
}

#[test]
fn heatmap_and_bars_options_are_read() {
    let text = with_charts(
        r#"
[[charts.heatmap]]
x = "clients"
y = "strategy"
metric = "calls"
at = { base = "10ms" }

[[charts.heatmap]]
x = "base"
y = "clients"
metric = "completion_ms"
name = "completion"
y_label = "clients at once"

[charts.bars]
metrics = ["calls", "attempts"]
series = "strategy"
at = { clients = 30 }
"#,
    );
    let charts = parse(&text).unwrap().charts;
    assert_eq!(charts.heatmaps.len(), 2);
    let first = &charts.heatmaps[0];
    assert_eq!(
        (first.x, first.y, first.metric, first.name.as_str()),
        ("clients", "strategy", "calls", "heatmap_calls")
    );
    assert_eq!(first.at, vec![("base", Value::Duration(SimDuration::from_millis(10)))]);
    assert_eq!(charts.heatmaps[1].name, "completion");
    assert_eq!(charts.heatmaps[1].y_label.as_deref(), Some("clients at once"));
    assert_eq!(charts.bars.len(), 1);
    let bars = &charts.bars[0];
    assert_eq!(
        (bars.metrics.as_slice(), bars.series, bars.name.as_str()),
        (&["calls", "attempts"][..], Some("strategy"), "bars")
    );
    assert_eq!(bars.at, vec![("clients", Value::Count(30))]);
    // The inline form reads the same.
    let inline = with_charts("[charts]\nheatmap = { x = \"clients\", y = \"strategy\", metric = \"calls\" }\n");
    assert_eq!(parse(&inline).unwrap().charts.heatmaps[0].y, "strategy");
}

#[test]
fn bad_heatmap_and_bars_options_are_located() {
    let heatmap = "[charts.heatmap]\nx = \"clients\"\ny = \"strategy\"\nmetric = \"calls\"\n";
    let bars = "[charts.bars]\nmetrics = [\"calls\", \"attempts\"]\nseries = \"strategy\"\n";
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            heatmap,
            "x = \"clients\"",
            "x = \"multiplier\"",
            "charts.heatmap.x: \"multiplier\" is not swept; swept parameters: clients, strategy, base",
        ),
        (heatmap, "x = \"clients\"", "x = \"strategy\"", "charts.heatmap.y: \"strategy\" is already on the x axis"),
        (heatmap, "x = \"clients\"\n", "", "charts.heatmap.x: missing; give the swept parameter along the x axis"),
        (
            heatmap,
            "metric = \"calls\"",
            "metric = \"cals\"",
            "charts.heatmap.metric: unknown metric \"cals\"; valid: calls, reads",
        ),
        (
            heatmap,
            "metric = \"calls\"",
            "metric = \"calls\"\ncolour = \"red\"",
            "charts.heatmap.colour: unknown key `charts.heatmap.colour` in a heatmap; valid keys: x, y, metric, at, name",
        ),
        (
            heatmap,
            "metric = \"calls\"",
            "metric = \"calls\"\nat = { clients = 20 }",
            "charts.heatmap.at: \"clients\" is on an axis of the heatmap",
        ),
        (
            heatmap,
            "metric = \"calls\"",
            "metric = \"calls\"\nat = { base = \"7ms\" }",
            "charts.heatmap.at.base: 7ms is not one of the swept values",
        ),
        (
            heatmap,
            "metric = \"calls\"",
            "metric = \"calls\"\nname = \"timeline\"",
            "charts.heatmap.name: another chart is already written as \"timeline\"",
        ),
        (
            heatmap,
            "metric = \"calls\"",
            "metric = \"calls\"\nname = \"../up\"",
            "charts.heatmap.name: expected a file name of letters, digits",
        ),
        (
            bars,
            "metrics = [\"calls\", \"attempts\"]",
            "metrics = []",
            "charts.bars.metrics: expected a non-empty list of metric names",
        ),
        (
            bars,
            "metrics = [\"calls\", \"attempts\"]",
            "metrics = [\"calls\", \"atempts\"]",
            "charts.bars.metrics: unknown metric \"atempts\"",
        ),
        (
            bars,
            "series = \"strategy\"",
            "series = \"strategy\"\nat = { strategy = \"none\" }",
            "charts.bars.at: \"strategy\" is the series",
        ),
        (bars, "series = \"strategy\"", "series = \"jitter\"", "charts.bars.series: \"jitter\" is not swept"),
    ];
    for (table, from, to, expected) in cases {
        let text = with_charts(&table.replace(from, to));
        assert_ne!(text, with_charts(table), "{to} changed nothing");
        let message = error_of(&text);
        assert!(message.starts_with("demo.toml:"), "{message}");
        assert!(message.contains(expected), "{to}: got {message}");
    }
    let twice = with_charts(&format!("{heatmap}\n[charts.bars]\nmetrics = [\"calls\"]\nname = \"heatmap_calls\"\n"));
    assert!(error_of(&twice).contains("already written as \"heatmap_calls\""), "{}", error_of(&twice));
}

#[test]
fn a_heatmap_with_too_many_panels_asks_for_at() {
    let text = with_charts("[charts.heatmap]\nx = \"clients\"\ny = \"base\"\nmetric = \"calls\"\n")
        .replace("strategy = [\"none\", \"full-jitter\"]", "max_attempts = { from = 1, to = 13, step = 1 }");
    let message = error_of(&text);
    assert!(
        message.contains(&format!("13 panels (one per combination of max_attempts) is more than {MAX_HEATMAP_PANELS}")),
        "{message}"
    );
    assert!(message.contains("pin some with `at = { max_attempts = … }`"), "{message}");
}

/// A layers scenario in the names of the first release (`[model] attempts`, `service_time`, `hop_delay`,
/// `limiter`, `budget`), and the same in today's vocabulary.
const LAYERS_FORMER: &str = r#"
schema_version = 1
[model]
kind = "layers"
layers = 2
attempts = 4
service_time = "2ms"
hop_delay = "3ms"
limiter = "budget"
budget = 0.3
[sweep]
attempts = [2, 3]
"#;

const LAYERS_TODAY: &str = r#"
schema_version = 1
[model]
kind = "layers"
layers = 2
service_mean = "2ms"
network_delay = "3ms"
[client]
max_attempts = 4
limiter = "budget"
budget = 0.3
[sweep]
max_attempts = [2, 3]
"#;

#[test]
fn former_names_are_accepted_and_hash_as_before() {
    let (former, today) = (parse(LAYERS_FORMER).unwrap(), parse(LAYERS_TODAY).unwrap());
    let hashes = |scenario: &Scenario| plan(scenario).unwrap().iter().map(|point| point.hash).collect::<Vec<_>>();
    assert_eq!(hashes(&former), hashes(&today), "one parameter, one seed, whichever name the file uses");
    // The seed text keeps the former name, so renaming moved no published number.
    let point = Point::new(today.settings.iter().map(|s| (s.spec, s.value.clone())).collect());
    let text = point.canonical_text();
    assert!(text.contains("model.attempts=4;") && text.contains("model.service_time=2ms;"), "{text}");
    assert!(!text.contains("client.multiplier"), "a key added later is hashed only when set: {text}");
    // Each file's sweep column keeps the spelling it used.
    assert_eq!((former.sweep[0].name, today.sweep[0].name), ("attempts", "max_attempts"));
    assert!(former.axis("max_attempts").is_some() && today.axis("attempts").is_some());
}

#[test]
fn a_parameter_given_under_both_names_is_refused() {
    let text = LAYERS_TODAY.replace("layers = 2\n", "layers = 2\nattempts = 5\n");
    let message = error_of(&text);
    assert!(message.contains("client.max_attempts` (formerly `model.attempts`) is set twice"), "{message}");
    let text = LAYERS_TODAY.replace("[sweep]\nmax_attempts = [2, 3]", "[sweep]\nmax_attempts = [2, 3]\nattempts = [4]");
    assert!(error_of(&text).contains("already swept above (as `max_attempts`)"), "{}", error_of(&text));
}

#[test]
fn layers_take_the_client_keys_other_models_take() {
    let text = LAYERS_TODAY.replace("budget = 0.3\n", "budget = 0.3\nmultiplier = 3\ndeadline = \"2s\"\n");
    let points = plan(&parse(&text).unwrap()).unwrap();
    let crate::model::Configured::Layers(config) = &points[0].config.0 else { panic!("a layers configuration") };
    assert_eq!(config.user.backoff.backoff.multiplier, 3.0);
    assert_eq!(config.user.backoff.deadline, Some(SimDuration::from_secs(2)));
}

#[test]
fn a_model_refuses_what_it_cannot_run_and_lists_what_it_can() {
    let occ = GOOD.replace("strategy = \"exponential\"", "strategy = \"grpc\"");
    let message = error_of(&occ);
    assert!(
        message.contains("client.strategy: the grpc preset brings the grpc retry limiter, which this model"),
        "{message}"
    );
    assert!(message.contains("k8s-crashloop") && message.contains("full-jitter"), "{message}");
    let channel = "schema_version = 1\n[model]\nkind = \"channel\"\n[client]\nstrategy = \"k8s-crashloop\"\n";
    let message = error_of(channel);
    assert!(
        message.contains("the k8s-crashloop preset is a whole client policy, and this model takes backoff"),
        "{message}"
    );
    let server = "schema_version = 1\n[model]\nkind = \"server\"\n[workload]\nkind = \"open\"\n[client]\nlimiter = \"systemd\"\n";
    let message = plan(&parse(server).unwrap()).err().expect("systemd with many clients is refused").to_string();
    assert!(message.contains("client.limiter: systemd's start limit counts the starts of one unit"), "{message}");
}

#[test]
fn overrides_reach_charts_names_and_parts() {
    let mut scenario = parse(GOOD).unwrap();
    overrides::apply(&mut scenario, "charts.timeline_until=25s").unwrap();
    overrides::apply(&mut scenario, "charts.x=clients").unwrap();
    overrides::apply(&mut scenario, "name=renamed").unwrap();
    assert_eq!(scenario.charts.timeline_until, Some(SimDuration::from_secs(25)));
    assert_eq!((scenario.charts.x, scenario.name.as_str()), (Some("clients"), "renamed"));
    assert_eq!(scenario.charts.timeline_at.len(), 1, "other chart options are kept");
    let message = overrides::apply(&mut scenario, "charts.x=base").unwrap_err().to_string();
    assert!(message.starts_with("demo.toml: --set charts.x=base: charts.x: \"base\" is not swept"), "{message}");
    let message = overrides::apply(&mut scenario, "charts.heatmap.x=clients").unwrap_err().to_string();
    assert!(message.contains("set the whole `charts.heatmap`"), "{message}");

    let graph = r#"
schema_version = 1
[model]
kind = "layers"
[layer.api]
calls = ["db"]
[layer.db]
service_time = "1ms"
"#;
    let mut scenario = parse(graph).unwrap();
    overrides::apply(&mut scenario, "layer.db.workers=4").unwrap();
    overrides::apply(&mut scenario, "layer.db.service_mean=5ms").unwrap();
    let db = &scenario.parts[1];
    assert_eq!(db.get("workers"), Some(&Value::Count(4)));
    assert_eq!(db.get("service_mean"), Some(&Value::Duration(SimDuration::from_millis(5))), "replaced, not added");
    assert_eq!(db.overrides.len(), 2);
    let message = overrides::apply(&mut scenario, "layer.db.calls=api").unwrap_err().to_string();
    assert!(message.contains("--set layer.db.calls=api") && message.contains("cycle in the graph"), "{message}");
    let message = overrides::apply(&mut scenario, "layer.cache.workers=1").unwrap_err().to_string();
    assert!(message.contains("there is no [layer.cache]; declared: layer.api, layer.db"), "{message}");
    let message = overrides::apply(&mut scenario, "layers=5").unwrap_err().to_string();
    assert!(message.contains("the [layer.*] tables give the graph here"), "{message}");
}

/// Properties of the planner over generated sweeps and key orders (proptest).
mod properties {
    use proptest::prelude::*;

    use super::*;

    const MODEL_LINES: [&str; 5] = [
        "workers = 4",
        "queue_limit = 50",
        "service = \"exponential\"",
        "service_mean = \"20ms\"",
        "network_delay = \"1ms\"",
    ];
    const CLIENT_LINES: [&str; 4] = ["base = \"5ms\"", "cap = \"2s\"", "timeout = \"500ms\"", "max_attempts = 4"];
    const STRATEGIES: [&str; 4] = ["\"none\"", "\"exponential\"", "\"full-jitter\"", "\"decorrelated-jitter\""];

    /// A server scenario with its [model] and [client] keys in the given orders and a sweep of `clients` values,
    /// `strategies` strategies and `workers` values.
    fn scenario(model: &[&str], client: &[&str], clients: usize, strategies: usize, workers: usize) -> Scenario {
        let list = |values: Vec<String>| format!("[{}]", values.join(", "));
        let text = format!(
            "schema_version = 1\nseed = 3\n\n[model]\nkind = \"server\"\n{}\n\n[workload]\nkind = \"burst\"\nclients = 10\n\n\
             [client]\n{}\n\n[sweep]\nclients = {}\nstrategy = {}\nworkers = {}\n",
            model.join("\n"),
            client.join("\n"),
            list((1..=clients).map(|c| (c * 10).to_string()).collect()),
            list(STRATEGIES[..strategies].iter().map(|s| s.to_string()).collect()),
            list((1..=workers).map(|w| w.to_string()).collect()),
        );
        parse(&text).expect("a valid scenario")
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn the_point_count_is_the_product_of_the_axes_lengths(clients in 1..7_usize, strategies in 1..5_usize, workers in 1..6_usize) {
            let scenario = scenario(&MODEL_LINES, &CLIENT_LINES, clients, strategies, workers);
            let points = plan(&scenario).unwrap();
            prop_assert_eq!(scenario.point_count(), clients * strategies * workers);
            prop_assert_eq!(points.len(), clients * strategies * workers);
        }

        #[test]
        fn a_points_id_does_not_depend_on_the_order_of_other_keys(
            model in Just(MODEL_LINES.to_vec()).prop_shuffle(),
            client in Just(CLIENT_LINES.to_vec()).prop_shuffle(),
        ) {
            let ids = |scenario: &Scenario| plan(scenario).unwrap().iter().map(PlannedPoint::id).collect::<Vec<_>>();
            let canonical = ids(&scenario(&MODEL_LINES, &CLIENT_LINES, 2, 2, 2));
            prop_assert_eq!(ids(&scenario(&model, &client, 2, 2, 2)), canonical);
        }
    }
}
