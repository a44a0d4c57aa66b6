//! `import` in scenarios: what fills which key, which key wins, and every way a request can be refused.

use std::path::PathBuf;

use super::*;
use crate::scenario::{plan, point_of};

const SERVICE_CONFIG: &str = r#"{
  "methodConfig": [
    {"name": [{"service": "shop.Cart"}],
     "retryPolicy": {"maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
                     "retryableStatusCodes": ["UNAVAILABLE"]}},
    {"name": [{"service": "shop.Pay"}],
     "retryPolicy": {"maxAttempts": 2, "initialBackoff": "0.5s", "maxBackoff": "2s", "backoffMultiplier": 3,
                     "retryableStatusCodes": ["UNAVAILABLE"]}}
  ]
}
"#;

const ENVOY_ROUTE: &str =
    "retry_policy:\n  retry_on: 5xx\n  num_retries: 2\n  retry_back_off:\n    base_interval: 0.025s\n";

/// A folder holding `configs/grpc.json` and `configs/envoy.yaml`, and the scenario path beside them.
struct Folder {
    _dir: tempfile::TempDir,
    scenario: PathBuf,
}

fn folder() -> Folder {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("configs")).unwrap();
    std::fs::write(dir.path().join("configs/grpc.json"), SERVICE_CONFIG).unwrap();
    std::fs::write(dir.path().join("configs/envoy.yaml"), ENVOY_ROUTE).unwrap();
    let scenario = dir.path().join("s.toml");
    Folder { _dir: dir, scenario }
}

const SERVER: &str = "schema_version = 1\n[model]\nkind = \"server\"\n[workload]\nkind = \"burst\"\nclients = 5\n";

fn load(folder: &Folder, text: &str, set: &[&str]) -> Result<Scenario, crate::Error> {
    let set: Vec<String> = set.iter().map(|s| (*s).to_owned()).collect();
    Scenario::with_overrides(&folder.scenario, text.to_owned(), &set)
}

fn value(point: &crate::params::Point, key: &'static str) -> String {
    point.get(key).unwrap().map(|v| v.to_string()).unwrap_or_default()
}

#[test]
fn an_import_fills_the_keys_the_scenario_does_not_write_and_a_written_one_wins() {
    let folder = folder();
    let text = format!("{SERVER}[client]\nimport = \"configs/grpc.json#shop.Cart/*\"\ncap = \"700ms\"\n");
    let scenario = load(&folder, &text, &[]).unwrap();
    let point = point_of(&scenario, &[]);
    assert_eq!(value(&point, "strategy"), "grpc-jitter");
    assert_eq!(value(&point, "base"), "100ms");
    assert_eq!(value(&point, "max_attempts"), "4");
    assert_eq!(value(&point, "cap"), "700ms", "the scenario's own cap wins over the file's 1s");
    assert!(point.is_written("base"), "an imported value counts as written, so a preset gives way to it");
    let planned = plan(&scenario).unwrap();
    let policy = planned[0].policy.as_deref().unwrap();
    assert!(policy.ends_with("; imported from configs/grpc.json (grpc, method shop.Cart/*)"), "{policy}");
    assert!(policy.starts_with("grpc-jitter b=100ms c=700ms m=2, 4 attempts"), "{policy}");
}

#[test]
fn the_entry_is_named_by_its_key_or_after_a_hash_and_a_swept_import_reads_each_file() {
    let folder = folder();
    let text = format!(
        "{SERVER}[client]\nimport = \"configs/grpc.json\"\nimport_method = \"shop.Pay/Charge\"\n[sweep]\n\
         import = [\"configs/grpc.json\", \"configs/envoy.yaml\"]\n"
    );
    let error = load(&folder, &text, &[]).unwrap_err().to_string();
    assert!(error.contains("`import_method` names a method, but configs/envoy.yaml is a envoy file"), "{error}");
    let text = format!(
        "{SERVER}[client]\nimport = \"x\"\n[sweep]\nimport = [\"configs/grpc.json#shop.Pay/Charge\", \
         \"configs/envoy.yaml\"]\n"
    );
    let scenario = load(&folder, &text, &[]).unwrap();
    assert_eq!(scenario.imports.len(), 2);
    let pay = point_of(&scenario, &[Value::Text("configs/grpc.json#shop.Pay/Charge".into())]);
    assert_eq!((value(&pay, "base"), value(&pay, "multiplier")), ("500ms".into(), "3".into()));
    let envoy = point_of(&scenario, &[Value::Text("configs/envoy.yaml".into())]);
    assert_eq!((value(&envoy, "strategy"), value(&envoy, "limiter")), ("full-jitter-from-base".into(), "envoy".into()));
    assert!(!scenario.import_notes().is_empty(), "Envoy's retries-not-attempts trap is noted");
}

#[test]
fn requests_that_cannot_mean_one_file_and_one_entry_are_refused_at_their_key() {
    let folder = folder();
    let refused = |client: &str, set: &[&str]| {
        load(&folder, &format!("{SERVER}[client]\n{client}\n"), set).expect_err(client).to_string()
    };
    let error = refused("import_format = \"grpc\"", &[]);
    assert!(error.contains(":8:17: client.import_format: has no effect without `import`"), "{error}");
    let error = refused("import = \"configs/grpc.json#shop.Pay/Charge\"\nimport_method = \"shop.Pay/Charge\"", &[]);
    assert!(error.contains("client.import_method: a #ENTRY in `import` already names the entry"), "{error}");
    let error = refused("import = \"configs/grpc.json\"", &["import_route=a", "import_method=b"]);
    assert!(error.contains("`import_method` already names the entry to import"), "{error}");
    let error = refused("import = \"configs/grpc.json\"", &["import_route=shop.Cart/*"]);
    assert!(error.contains("write import_method (or configs/grpc.json#NAME)"), "{error}");
    let error = refused("import = \"#shop.Cart/*\"", &[]);
    assert!(error.contains("client.import: names no file"), "{error}");
    let error = refused("import = \"configs\"", &[]);
    assert!(error.contains("configs is a folder; give the configuration file itself"), "{error}");
    let error = refused("import = \"configs/none.json\"", &[]);
    assert!(error.contains(":8:10: client.import: cannot read"), "{error}");
    let error = refused("import = \"configs/grpc.json\"", &[]);
    assert!(error.contains("choose one with --method NAME"), "{error}");
}

#[test]
fn a_bad_file_is_reported_at_its_own_line_and_column_with_the_key_that_imported_it() {
    let folder = folder();
    let dir = folder.scenario.parent().unwrap();
    std::fs::write(dir.join("configs/bad.json"), "{\"methodConfig\": [{\"name\": [{}], \"retryPolicy\": 3}]}").unwrap();
    let error = load(&folder, &format!("{SERVER}[client]\nimport = \"configs/bad.json\"\n"), &[]).unwrap_err();
    let shown = error.to_string();
    let file = dir.join("configs/bad.json").display().to_string();
    assert!(shown.starts_with(&format!("{file}:1:")), "{shown}");
    assert!(shown.ends_with(&format!("(imported by {}:8:10 client.import)", folder.scenario.display())), "{shown}");
    let big = "#".repeat(crate::import::MAX_CONFIG_BYTES as usize + 1);
    std::fs::write(dir.join("configs/big.yaml"), big).unwrap();
    let error = load(&folder, &format!("{SERVER}[client]\nimport = \"configs/big.yaml\"\n"), &[]).unwrap_err();
    assert!(error.to_string().contains("more than a retry configuration may (1048576)"), "{error}");
    let many: Vec<String> = (0..=MAX_IMPORTS).map(|n| format!("\"c{n}.json\"")).collect();
    let text = format!("{SERVER}[client]\nimport = \"x\"\n[sweep]\nimport = [{}]\n", many.join(", "));
    let error = load(&folder, &text, &[]).unwrap_err().to_string();
    assert!(error.contains("more than 256 different imports"), "{error}");
    // Exactly the limit is allowed: the first file is then read (and missing).
    let text = format!("{SERVER}[client]\nimport = \"x\"\n[sweep]\nimport = [{}]\n", many[1..].join(", "));
    let error = load(&folder, &text, &[]).unwrap_err().to_string();
    assert!(error.contains("client.import: cannot read") && error.contains("c1.json"), "{error}");
}

#[test]
fn a_layer_imports_its_own_policy_which_beats_the_model_wide_keys_but_not_its_own() {
    let folder = folder();
    let text = "schema_version = 1\n[model]\nkind = \"layers\"\n[client]\nmax_attempts = 2\nhedge_delay = \"30ms\"\n\
                [layer.edge]\ncalls = [\"db\"]\nimport = \"configs/envoy.yaml\"\nbase = \"40ms\"\n[layer.db]\n";
    let scenario = load(&folder, text, &[]).unwrap();
    let point = point_of(&scenario, &[]);
    let edge = point.for_part(&point.parts()[0]);
    assert_eq!(value(&edge, "max_attempts"), "3", "Envoy's 2 retries are 3 attempts, over the model-wide 2");
    assert_eq!(value(&edge, "base"), "40ms", "the layer's own base wins over the file's 25ms");
    assert_eq!(value(&edge, "hedge_delay"), "30ms", "the file sets no hedge: the model-wide delay stays");
    let db = point.for_part(&point.parts()[1]);
    assert_eq!(value(&db, "max_attempts"), "2");
    let notes = scenario.import_notes().join("\n");
    assert!(notes.contains("`retry_after = \"ignore\"` (from no rate_limited_retry_back_off"), "{notes}");
    assert!(notes.contains("is left out: this model's services send no Retry-After"), "{notes}");
    let planned = plan(&scenario).unwrap();
    assert!(
        planned[0]
            .policy
            .as_deref()
            .unwrap()
            .ends_with("; edge imports configs/envoy.yaml (envoy, route retry_policy)")
    );
    assert!(spec_for(&scenario, "placement", true).is_none(), "a model-wide key a layer table cannot set");
    // A layer's bad import is located at that layer's key.
    let missing = text.replace("configs/envoy.yaml", "configs/none.yaml");
    let error = load(&folder, &missing, &[]).unwrap_err().to_string();
    assert!(error.contains(":9:10: layer.edge.import: cannot read"), "{error}");
    assert!(spec_for(&scenario, "placement", false).is_some());
}

#[test]
fn an_imported_value_the_model_refuses_is_blamed_on_the_import() {
    let folder = folder();
    let dir = folder.scenario.parent().unwrap();
    std::fs::write(dir.join("configs/slow.yaml"), ENVOY_ROUTE.replace("0.025s", "2s")).unwrap();
    let text = format!("{SERVER}[client]\nimport = \"configs/slow.yaml\"\ncap = \"1s\"\n");
    let error = plan(&load(&folder, &text, &[]).unwrap()).err().unwrap().to_string();
    assert!(error.contains("client.cap: cap (1s) must be at least base (2s)"), "{error}");
    let text = format!("{SERVER}[client]\nimport = \"configs/slow.yaml\"\nbase = \"1ms\"\nmultiplier = 1e6\n");
    assert!(plan(&load(&folder, &text, &[]).unwrap()).is_ok());
    // The imported cap (1 s) under a written base: the complaint names the import, at its line.
    let text = format!("{SERVER}[client]\nimport = \"configs/grpc.json#shop.Cart/*\"\nbase = \"5s\"\n");
    let error = plan(&load(&folder, &text, &[]).unwrap()).err().unwrap().to_string();
    assert!(
        error.contains(":8:10: client.import: cap (1s) must be at least base (5s) (imported from configs/grpc.json")
    );
    // 150 retries are more attempts than a caller of the layers model makes: refused when the file is read.
    std::fs::write(dir.join("configs/many.yaml"), ENVOY_ROUTE.replace("num_retries: 2", "num_retries: 150")).unwrap();
    let text = "schema_version = 1\n[model]\nkind = \"layers\"\n[client]\nimport = \"configs/many.yaml\"\n";
    let error = load(&folder, text, &[]).unwrap_err().to_string();
    assert!(error.contains("gives `max_attempts = 151` (from retry_policy.num_retries = 150"), "{error}");
    assert!(error.contains("which this model refuses: 151 is out of range; expected a whole number from 1 to 100"));
}

#[test]
fn a_layer_that_imports_names_the_callers_left_on_the_model_wide_policy() {
    let folder = folder();
    let graph = |client: &str| {
        format!(
            "schema_version = 1\n[model]\nkind = \"layers\"\n[workload]\nrequests = 10\n{client}\
             [layer.app]\ncalls = [\"proxy\", \"side\"]\n[layer.proxy]\ncalls = \"db\"\nimport = \"configs/grpc.json#shop.Cart/Checkout\"\n\
             [layer.db]\n[layer.side]\ncalls = \"db\"\nmax_attempts = 2\n"
        )
    };
    let notes = |client: &str| notes(&load(&folder, &graph(client), &[]).unwrap());
    let unwritten = notes("");
    let line = unwritten.iter().find(|note| note.starts_with("[layer.proxy] imports")).unwrap();
    assert_eq!(
        line,
        "[layer.proxy] imports a policy for its own service alone; the users' clients and [layer.app] run the \
         model-wide [client] policy: no max_attempts written, so 1 attempt each: no retries"
    );
    let written = notes("[client]\nmax_attempts = 4\n");
    assert!(written.iter().any(|note| note.ends_with("[client] policy: max_attempts = 4")), "{written:#?}");
    let swept = notes("[sweep]\nmax_attempts = [1, 3]\n");
    assert!(swept.iter().any(|note| note.ends_with("policy: the swept max_attempts (1, 3)")), "{swept:#?}");
}

#[test]
fn a_release_named_in_the_scenario_reads_the_file_as_that_release_and_a_wrong_one_is_refused_at_its_key() {
    let folder = folder();
    let text = format!(
        "{SERVER}[client]\nimport = \"configs/grpc.json#shop.Cart/*\"\n[sweep]\nimport_version = [\"grpc-go=1.68\", \"grpc-go=1.69\"]\n"
    );
    let scenario = load(&folder, &text, &[]).unwrap();
    let older = point_of(&scenario, &[Value::Text("grpc-go=1.68".into())]);
    assert_eq!(value(&older, "strategy"), "full-jitter-from-base");
    let newer = point_of(&scenario, &[Value::Text("grpc-go=1.69".into())]);
    assert_eq!(value(&newer, "strategy"), "grpc-jitter");
    let planned = plan(&scenario).unwrap();
    for point in &planned {
        let policy = point.policy.as_deref().unwrap();
        assert!(policy.contains("imported from"), "{policy}");
    }
    let wrong =
        format!("{SERVER}[client]\nimport = \"configs/grpc.json#shop.Cart/*\"\nimport_version = \"istio=1.23\"\n");
    let error = load(&folder, &wrong, &[]).unwrap_err().to_string();
    assert!(error.contains(":9:18: client.import_version: import_version istio: a grpc file is read by"), "{error}");
    let reading =
        format!("{SERVER}[client]\nimport = \"configs/grpc.json#shop.Cart/*\"\nimport_reading = \"channel\"\n");
    let error = load(&folder, &reading, &[]).unwrap_err().to_string();
    assert!(
        error.contains("client.import_reading: import_reading channel: a grpc file is read one way only"),
        "{error}"
    );
}
