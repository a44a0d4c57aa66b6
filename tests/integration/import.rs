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
        ("other.yaml", "kind: Thing\n".to_owned(), &[][..], "not a format retrylab recognises"),
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
