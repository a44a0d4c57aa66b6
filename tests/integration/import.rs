//! `retrylab import` on the real binary: a gRPC service config and an AWS profile become a `[client]` table the
//! lab runs, whose backoff `retrylab delays` samples as the format's documentation gives it; traps are warned about
//! with the file's line and column; bad files are refused with exit code 2 and nothing written.

use crate::common::retrylab;

const SERVICE_CONFIG: &str = r#"{
  "methodConfig": [{
    "name": [{"service": "shop.Cart"}],
    "timeout": "3s",
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.1s",
      "maxBackoff": "1s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"],
      "perAttemptRecvTimeout": "0.5s"
    }
  }]
}
"#;

/// The `key = value` lines of the `[client]` table (comments dropped).
fn settings(block: &str) -> toml::Table {
    let table: toml::Table = block.parse().unwrap_or_else(|error| panic!("{error}\n{block}"));
    table["client"].as_table().unwrap().clone()
}

#[test]
fn a_grpc_policy_imported_backs_off_as_grfc_a6_says() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("cart.json");
    std::fs::write(&file, SERVICE_CONFIG).unwrap();
    let out = retrylab().arg("import").arg(&file).args(["--method", "shop.Cart/Checkout"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let block = String::from_utf8(out.stdout).unwrap();
    assert!(block.contains("(grpc, method shop.Cart/*)"), "{block}");
    let client = settings(&block);
    assert_eq!(client["strategy"].as_str(), Some("grpc-jitter"));
    assert_eq!(client["timeout"].as_str(), Some("500ms"));
    assert_eq!(client["deadline"].as_str(), Some("3s"));
    // `retrylab delays` on the imported keys: the n-th retry waits min(1 s, 100 ms · 2^(n−1)) on average (the
    // ±20% jitter is symmetric), for the 3 retries 4 attempts allow.
    let mut delays = retrylab();
    delays.args(["delays", client["strategy"].as_str().unwrap(), "--csv", "--samples", "100000"]);
    for key in ["base", "cap", "multiplier", "max_attempts"] {
        delays.args(["--set", &format!("{key}={}", client[key])]);
    }
    let out = delays.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let means: Vec<f64> = csv.lines().skip(1).map(|line| line.split(',').nth(1).unwrap().parse().unwrap()).collect();
    assert_eq!(means.len(), 3, "{csv}");
    for (n, mean) in means.iter().enumerate() {
        let expected = (100.0 * 2f64.powi(n as i32)).min(1000.0);
        // U(0.8, 1.2)·d has sd 0.115·d: 100,000 samples put the mean within 0.1% of d at 3 standard errors.
        assert!((mean - expected).abs() < 0.002 * expected, "retry {}: {mean} ms, expected {expected}", n + 1);
    }
}

#[test]
fn traps_are_warned_with_their_place_and_the_table_goes_where_asked() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("cart.json");
    std::fs::write(&file, SERVICE_CONFIG.replace("\"maxAttempts\": 4", "\"maxAttempts\": 9")).unwrap();
    let table = folder.path().join("client.toml");
    let out = retrylab().arg("import").arg(&file).arg("--out").arg(&table).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let expected = format!(
        "warning: {}:6:22: methodConfig[0].retryPolicy.maxAttempts: 9 is above gRPC's limit of 5; gRPC treats it as 5",
        file.display()
    );
    assert!(stderr.contains(&expected), "{stderr}");
    let block = std::fs::read_to_string(&table).unwrap();
    assert_eq!(settings(&block)["max_attempts"].as_integer(), Some(5));
    // The table pasted into a server scenario validates.
    let scenario = folder.path().join("pasted.toml");
    let text = format!(
        "schema_version = 1\n[model]\nkind = \"server\"\nworkers = 2\n[workload]\nkind = \"burst\"\nclients = 50\n{block}"
    );
    std::fs::write(&scenario, text).unwrap();
    let out = retrylab().arg("validate").arg(&scenario).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn bad_files_are_refused_with_their_place_and_nothing_is_written() {
    let folder = tempfile::tempdir().unwrap();
    let table = folder.path().join("client.toml");
    for (name, text, extra, expected) in [
        (
            "bad.json",
            SERVICE_CONFIG.replace("\"0.1s\"", "\"100ms\""),
            &[][..],
            "bad.json:7:25: methodConfig[0].retryPolicy.initialBackoff: expected a duration like \"0.1s\", found \"100ms\"",
        ),
        (
            "syntax.json",
            SERVICE_CONFIG.replace("\"timeout\": \"3s\",", "\"timeout\": \"3s\""),
            &[][..],
            "syntax.json:5:",
        ),
        (
            "config",
            "[profile prod]\nretry_mode = turbo\n".to_owned(),
            &["--profile", "prod"][..],
            "config:2:1: [profile prod] retry_mode: \"turbo\" is not a retry mode; valid: standard, adaptive, legacy",
        ),
        (
            "config",
            "[profile prod]\nretry_mode = standard\n".to_owned(),
            &["--profile", "dev"][..],
            "no profile \"dev\" in the file; it holds:\n  prod",
        ),
        ("other.yaml", "kind: Thing\n".to_owned(), &[][..], "no retry configuration of a format retrylab reads"),
    ] {
        let file = folder.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = retrylab().arg("import").arg(&file).args(extra).arg("--out").arg(&table).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains(expected), "{name}: {stderr}");
        assert!(!table.exists(), "{name}: nothing is written");
    }
    let out = retrylab().args(["import", "missing.json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = retrylab().args(["import", "x", "--format", "yaml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "clap refuses a format it does not list");
}

#[test]
fn an_aws_profile_becomes_its_modes_preset() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("config");
    std::fs::write(
        &file,
        "[default]\nregion = eu-west-1\n\n[profile batch]\nretry_mode = adaptive\nmax_attempts = 6\n",
    )
    .unwrap();
    let out = retrylab().arg("import").arg(&file).args(["--profile", "batch"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let client = settings(&String::from_utf8(out.stdout).unwrap());
    assert_eq!((client["strategy"].as_str(), client["max_attempts"].as_integer()), (Some("aws-sdk-adaptive"), Some(6)));
}

const SERVER: &str = "schema_version = 1\nseed = 5\nreplicates = 3\n[model]\nkind = \"server\"\nworkers = 2\n\
                      [workload]\nkind = \"burst\"\nclients = 40\n";

/// The CSV files of a results folder, by name.
fn csv_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "csv"))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap()))
        .collect();
    files.sort();
    files
}

#[test]
fn a_scenario_that_imports_a_file_runs_what_pasting_its_table_runs() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("configs")).unwrap();
    let config = folder.path().join("configs/cart.json");
    std::fs::write(&config, SERVICE_CONFIG).unwrap();
    let importing = folder.path().join("importing.toml");
    std::fs::write(&importing, format!("{SERVER}[client]\nimport = \"configs/cart.json\"\n")).unwrap();
    let out = retrylab().arg("import").arg(&config).output().unwrap();
    let pasted = folder.path().join("pasted.toml");
    std::fs::write(&pasted, format!("{SERVER}{}", String::from_utf8(out.stdout).unwrap())).unwrap();
    for (scenario, out) in [(&importing, "a"), (&pasted, "b")] {
        let run = retrylab().arg("run").arg(scenario).arg("--out").arg(folder.path().join(out)).output().unwrap();
        assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    }
    let (a, b) = (csv_files(&folder.path().join("a")), csv_files(&folder.path().join("b")));
    assert!(a.len() >= 3, "{:?}", a.iter().map(|(name, _)| name).collect::<Vec<_>>());
    assert_eq!(a, b, "the same seeds and the same policy: byte-identical CSV");
    // The manifest and --list-points print the effective policy, and where it came from.
    let manifest = std::fs::read_to_string(folder.path().join("a/manifest.json")).unwrap();
    assert!(manifest.contains("grpc-jitter b=100ms c=1s m=2, 4 attempts, deadline 3s"), "{manifest}");
    assert!(manifest.contains("imported from configs/cart.json (grpc, method shop.Cart/*)"), "{manifest}");
}

#[test]
fn a_sweep_compares_imported_configurations_and_set_imports_from_the_command_line() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("cart.json"), SERVICE_CONFIG).unwrap();
    std::fs::write(folder.path().join("config"), "[profile batch]\nretry_mode = standard\nmax_attempts = 2\n").unwrap();
    let scenario = folder.path().join("compare.toml");
    let text =
        format!("{SERVER}[client]\nimport = \"cart.json\"\n[sweep]\nimport = [\"cart.json\", \"config#batch\"]\n");
    std::fs::write(&scenario, text).unwrap();
    let out = retrylab().args(["run", "--list-points"]).arg(&scenario).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines[0].starts_with("scenario\tindex\tid\timport\tpolicy"), "{listed}");
    assert!(lines[1].contains("\tcart.json\tgrpc-jitter b=100ms c=1s m=2, 4 attempts"), "{listed}");
    // AWS standard mode: U(0, min(1 s · 2^(n−1), 20 s)), the profile's 2 attempts, the SDK's retry quota.
    let aws = "\tconfig#batch\tfull-jitter-from-base b=1s c=20s m=2, 2 attempts, Retry-After honour, limiter aws-quota";
    assert!(lines[2].contains(aws), "{listed}");
    assert!(lines[2].contains("; imported from config (aws-config, profile batch)\t"), "{listed}");
    // `--set` names a file relative to the scenario's folder, like the file does.
    let plain = folder.path().join("plain.toml");
    std::fs::write(&plain, SERVER).unwrap();
    let out = retrylab()
        .args(["run", "--list-points", "--set", "import=config", "--set", "import_profile=batch"])
        .arg(&plain)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8(out.stdout).unwrap().contains("imported from config (aws-config, profile batch)"));
    // A bad file: exit 2, located in the file, nothing written.
    std::fs::write(folder.path().join("config"), "[profile batch]\nretry_mode = turbo\n").unwrap();
    let results = folder.path().join("out");
    let out = retrylab().arg("run").arg(&scenario).arg("--out").arg(&results).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("config:2:1: [profile batch] retry_mode: \"turbo\" is not a retry mode"), "{stderr}");
    assert!(stderr.contains("(imported by "), "{stderr}");
    assert!(!results.exists());
}

#[test]
fn linkerd_s_backoff_imported_keeps_its_point_mass_at_the_cap() {
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("books.yaml");
    let service = "apiVersion: v1\nkind: Service\nmetadata:\n  name: books\n  annotations:\n    \
                   retry.linkerd.io/http: 5xx\n    retry.linkerd.io/limit: \"5\"\n";
    std::fs::write(&file, service).unwrap();
    let out = retrylab().arg("import").arg(&file).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let client = settings(&String::from_utf8(out.stdout).unwrap());
    let mut delays = retrylab();
    delays.args(["delays", client["strategy"].as_str().unwrap(), "--csv", "--samples", "100000"]);
    for key in ["base", "cap", "multiplier", "jitter_fraction", "max_attempts"] {
        delays.args(["--set", &format!("{key}={}", client[key])]);
    }
    let out = delays.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = String::from_utf8(out.stdout).unwrap();
    let means: Vec<f64> = csv.lines().skip(1).map(|line| line.split(',').nth(1).unwrap().parse().unwrap()).collect();
    // Linkerd's schedule: 25 ms doubling plus U(0, 1) of itself, never above 250 ms. Means 37.5, 75, 150 ms;
    // the 4th retry, 200 ms · (1 + U) capped, averages 243.75 ms; from the 5th on every wait is 250 ms.
    let expected = [37.5, 75.0, 150.0, 243.75, 250.0];
    assert_eq!(means.len(), expected.len(), "{csv}");
    for (n, (mean, expected)) in means.iter().zip(expected).enumerate() {
        // U(0, 1)·d has sd 0.29·d: 100,000 samples put the mean within 0.3% of it at more than 3 standard errors.
        assert!((mean - expected).abs() < 0.003 * expected, "retry {}: {mean} ms, expected {expected}", n + 1);
    }
}
