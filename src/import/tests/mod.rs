use super::*;
use crate::commands::check_runs;

mod extremes;
mod googleapis;
mod libraries;
mod mesh;

fn import(format: &Format, text: &str, choice: Option<&str>) -> Result<Imported, Problem> {
    (format.translate)(&Input::new(text), &Ask { choice, ..Ask::default() })
}

/// Reads `file` as `format` (or the format it looks like), the entry `choice` names.
fn import_file(
    file: &std::path::Path,
    format: Option<&str>,
    choice: Option<&str>,
) -> Result<(&'static Format, Imported), crate::Error> {
    super::import_file(file, format, &Ask { choice, ..Ask::default() })
}

fn value(imported: &Imported, key: &str) -> Option<String> {
    imported.settings.iter().find(|setting| setting.key == key).map(|setting| setting.value.to_string())
}

const GRPC: &str = r#"{
  "methodConfig": [{
    "name": [{"service": "helloworld.Greeter", "method": "SayHello"}],
    "timeout": "2s",
    "retryPolicy": {
      "maxAttempts": 7,
      "initialBackoff": "0.1s",
      "maxBackoff": "1.5s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "resource_exhausted", 13]
    }
  }, {
    "name": [{"service": "helloworld.Greeter"}],
    "waitForReady": true
  }],
  "retryThrottling": {"maxTokens": 10, "tokenRatio": 0.1234}
}"#;

#[test]
fn a_grpc_retry_policy_becomes_the_labs_keys_field_by_field() {
    let imported = import(&grpc::FORMAT, GRPC, Some("helloworld.Greeter/SayHello")).unwrap();
    for (key, expected) in [
        ("strategy", "\"grpc-jitter\""),
        ("max_attempts", "5"),
        ("base", "\"100ms\""),
        ("cap", "\"1500ms\""),
        ("multiplier", "2.0"),
        ("retry_on", "[\"502\", \"503\", \"reset\", \"429\"]"),
        ("timeout", "\"2s\""),
        ("deadline", "\"2s\""),
        ("retry_after", "\"ignore\""),
        ("pushback", "\"honour\""),
        ("limiter", "\"grpc\""),
        ("max_tokens", "10.0"),
        ("token_ratio", "0.123"),
        ("limiter_scope", "\"client\""),
    ] {
        assert_eq!(value(&imported, key).as_deref(), Some(expected), "{key}: {imported:#?}");
    }
    let warnings: Vec<String> = imported.warnings.iter().map(describe).collect();
    let said = |text: &str| warnings.iter().any(|warning| warning.contains(text));
    assert!(said("methodConfig[0].retryPolicy.maxAttempts (line 6): 7 is above gRPC's limit of 5"), "{warnings:#?}");
    assert!(said("INTERNAL: the server model never answers it"), "{warnings:#?}");
    assert!(said("0.1234 has more than 3 decimals; gRPC keeps 0.123"), "{warnings:#?}");
    assert!(
        said("[1] (line 10): \"resource_exhausted\": A6 allows any case, but the C core (grpcio) refuses"),
        "{warnings:#?}"
    );
    assert!(said("[2] (line 10): 13: A6 and grpc-go accept numbers"), "{warnings:#?}");
    assert!(said("perAttemptRecvTimeout: unset"), "{warnings:#?}");
    assert_eq!(imported.entry.as_deref(), Some("helloworld.Greeter/SayHello"));
}

#[test]
fn grpc_implementations_differences_are_warned_about() {
    let text = GRPC
        .replace("\"maxAttempts\": 7", "\"MaxAttempts\": 3")
        .replace("\"0.1s\"", "\".1s\"")
        .replace("\"maxTokens\": 10", "\"maxTokens\": 2000")
        .replace("\"backoffMultiplier\": 2", "\"backoffMultiplier\": 0.5")
        .replace("\"methodConfig\": [{", "\"methodConfig\": [{\"name\": [], \"timeout\": \"1s\"}, {");
    let imported = import(&grpc::FORMAT, &text, Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!(value(&imported, "max_attempts").as_deref(), Some("3"));
    assert_eq!(value(&imported, "base").as_deref(), Some("\"100ms\""));
    assert_eq!(value(&imported, "max_tokens").as_deref(), Some("2000.0"));
    let warnings: Vec<String> = imported.warnings.iter().map(describe).collect();
    let said = |text: &str| warnings.iter().any(|warning| warning.contains(text));
    assert!(said("MaxAttempts (line 6): grpc-go reads `MaxAttempts` as `maxAttempts`; the C core"), "{warnings:#?}");
    assert!(said("initialBackoff (line 7): \".1s\": grpc-go reads a duration without its leading 0"), "{warnings:#?}");
    assert!(said("write \"0.1s\""), "{warnings:#?}");
    assert!(said("2000 is above A6's limit of 1000"), "{warnings:#?}");
    assert!(said("below 1: the waits shrink"), "{warnings:#?}");
    assert!(said("methodConfig[0].name (line 2): no name: gRPC skips this method config"), "{warnings:#?}");
    let experimental =
        GRPC.replace("\"backoffMultiplier\": 2,", "\"backoffMultiplier\": 2, \"perAttemptRecvTimeout\": \"0.3s\",");
    let imported = import(&grpc::FORMAT, &experimental, Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!(value(&imported, "timeout").as_deref(), Some("\"300ms\""));
    assert!(value(&imported, "retry_on").unwrap().contains("timeout"));
    assert!(imported.warnings.iter().any(|w| w.message.contains("grpc.experimental.enable_hedging")));
    let hedged = GRPC.replace("\"retryPolicy\"", "\"hedgingPolicy\"");
    let hedged = import(&grpc::FORMAT, &hedged, Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!(value(&hedged, "max_attempts").as_deref(), Some("1"));
    assert!(hedged.warnings.iter().any(|w| w.message.contains("ignore hedgingPolicy")));
}

#[test]
fn grpcio_whole_milliseconds_are_warned_about() {
    let refused = "under 1 ms: the C core (grpcio) keeps whole milliseconds, reads 0 and refuses";
    let stalls = "< 1 ms: the C core (grpcio 1.85.3) truncates waits to whole milliseconds";
    for (initial, max, expected) in [
        ("0.0005s", "1.5s", Some(format!("initialBackoff (line 7): {refused}"))),
        ("0.1s", "0.0009s", Some(format!("maxBackoff (line 8): {refused}"))),
        ("0.001s", "1.5s", Some(format!("retryPolicy: a wait can be as short as 0.8 × \"0.001s\" {stalls}"))),
        ("0.1s", "0.00124s", Some(format!("0.8 × \"0.00124s\" {stalls}"))),
        ("0.00125s", "1.5s", None),
        ("0.1s", "0.00125s", None),
    ] {
        let text = GRPC.replace("\"0.1s\"", &format!("\"{initial}\"")).replace("\"1.5s\"", &format!("\"{max}\""));
        let imported = import(&grpc::FORMAT, &text, Some("helloworld.Greeter/SayHello")).unwrap();
        let warnings: Vec<String> = imported.warnings.iter().map(describe).collect();
        let milliseconds: Vec<&String> =
            warnings.iter().filter(|w| w.contains(refused) || w.contains(stalls)).collect();
        match expected {
            Some(text) => {
                assert!(milliseconds.len() == 1 && milliseconds[0].contains(&text), "{initial} {max}: {warnings:#?}")
            }
            None => assert!(milliseconds.is_empty(), "{initial} {max}: {warnings:#?}"),
        }
    }
}

#[test]
fn grpc_finds_a_method_as_grpc_does_and_lists_the_entries_otherwise() {
    // Another method of the service falls back to the service-wide config: no retry policy, one attempt.
    let service = import(&grpc::FORMAT, GRPC, Some("helloworld.Greeter/SayGoodbye")).unwrap();
    assert_eq!(service.entry.as_deref(), Some("helloworld.Greeter/*"));
    assert_eq!(value(&service, "max_attempts").as_deref(), Some("1"));
    let none = import(&grpc::FORMAT, GRPC, None).unwrap_err();
    assert!(none.message.contains("2 methods; choose one with --method NAME"), "{}", none.message);
    assert!(none.message.contains("  helloworld.Greeter/SayHello\n  helloworld.Greeter/*"), "{}", none.message);
    // A method no config applies to is sent once, as gRPC sends it, with the names listed in a warning.
    let missing = import(&grpc::FORMAT, GRPC, Some("other.Service/Call")).unwrap();
    assert_eq!(value(&missing, "max_attempts").as_deref(), Some("1"));
    let said = missing.warnings.iter().map(describe).collect::<Vec<_>>().join("\n");
    assert!(
        said.contains("no method config names other.Service/Call") && said.contains("helloworld.Greeter/*"),
        "{said}"
    );
}

#[test]
fn bad_grpc_files_are_refused_where_they_are_wrong() {
    let with =
        |from: &str, to: &str| import(&grpc::FORMAT, &GRPC.replace(from, to), Some("helloworld.Greeter/SayHello"));
    for (from, to, field, line, message) in [
        ("\"maxAttempts\": 7", "\"maxAttempts\": 1", "methodConfig[0].retryPolicy.maxAttempts", 6, "1 is below 2"),
        (
            "\"maxAttempts\": 7",
            "\"maxAttempts\": \"7\"",
            "methodConfig[0].retryPolicy.maxAttempts",
            6,
            "expected a whole",
        ),
        ("\"0.1s\"", "\"100ms\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "expected a duration like \"0.1s\""),
        ("\"0.1s\"", "\"0s\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "longer than 0s"),
        (
            "\"backoffMultiplier\": 2",
            "\"backoffMultiplier\": 0",
            "methodConfig[0].retryPolicy.backoffMultiplier",
            9,
            "a number > 0",
        ),
        ("13]", "\"SOMETIMES\"]", "methodConfig[0].retryPolicy.retryableStatusCodes[2]", 10, "not a gRPC status code"),
        ("\"maxTokens\": 10", "\"maxTokens\": 0", "retryThrottling.maxTokens", 16, "not above 0"),
        ("\"0.1s\"", "\"0.1234567891s\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "like \"0.1s\""),
        ("\"0.1s\"", "\"s\"", "methodConfig[0].retryPolicy.initialBackoff", 7, "like \"0.1s\""),
        (
            "\"service\": \"helloworld.Greeter\"}]",
            "\"service\": \"helloworld.Greeter\", \"method\": \"SayHello\"}]",
            "methodConfig[1].name",
            12,
            "named by two method configs",
        ),
        ("\"tokenRatio\": 0.1234", "\"tokenRatio\": 0", "retryThrottling.tokenRatio", 16, "greater than 0"),
        // gRPC skips a key it does not know, so a misspelt required one is missing, and the whole config refused.
        (
            "\"maxBackoff\"",
            "\"maxBackof\"",
            "methodConfig[0].retryPolicy.maxBackoff",
            5,
            "missing; gRFC A6 requires it",
        ),
    ] {
        let problem = with(from, to).expect_err(to);
        assert_eq!((problem.field.as_str(), problem.at.map(|at| at.line)), (field, Some(line)), "{to}: {problem:?}");
        assert!(problem.message.contains(message), "{to}: {problem:?}");
    }
    // A misspelt key that is not required is skipped by gRPC, silently: the import says so, loudly.
    let skipped = with("\"waitForReady\"", "\"waitForReadyy\"").unwrap();
    let warning = skipped.warnings.iter().find(|w| w.field == "methodConfig[1].waitForReadyy").unwrap();
    assert!(warning.message.starts_with("IGNORED") && warning.at.map(|at| at.line) == Some(14), "{warning:?}");
    let both = GRPC.replace("\"timeout\": \"2s\",", "\"timeout\": \"2s\", \"hedgingPolicy\": {},");
    let problem = import(&grpc::FORMAT, &both, Some("helloworld.Greeter/SayHello")).unwrap_err();
    assert!(problem.message.contains("not both"), "{problem:?}");
    let problem = import(&grpc::FORMAT, "{\"methodConfig\": [1, 2}", None).unwrap_err();
    assert!(problem.message.starts_with("invalid YAML/JSON"), "{problem:?}");
    assert_eq!(problem.at.map(|at| at.line), Some(1));
    let problem = import(&grpc::FORMAT, "{\"methodConfig\": [1]}", None).unwrap_err();
    assert_eq!(
        (problem.field.as_str(), problem.message.as_str()),
        ("methodConfig[0]", "expected a method config (a JSON object), found 1")
    );
}

const AWS: &str = "\
# shared config
[default]
region = eu-west-1
retry_mode = adaptive
max_attempts = 5

[profile batch]
retry_mode = legacy
s3 =
  max_concurrent_requests = 20

[sso-session corp]
sso_region = us-east-1
";

#[test]
fn an_aws_profile_becomes_the_preset_of_its_mode() {
    let default = import(&aws_config::FORMAT, AWS, Some("default")).unwrap();
    assert_eq!(value(&default, "strategy").as_deref(), Some("\"aws-sdk-adaptive\""));
    assert_eq!(value(&default, "max_attempts").as_deref(), Some("5"));
    assert!(default.warnings.iter().any(|warning| warning.message.contains("use strategy = \"botocore-adaptive\"")));
    let batch = import(&aws_config::FORMAT, AWS, Some("batch")).unwrap();
    assert_eq!(value(&batch, "strategy").as_deref(), Some("\"botocore-legacy\""));
    assert_eq!(value(&batch, "max_attempts"), None, "the preset's own attempts");
    assert_eq!(value(&default, "limiter_scope").as_deref(), Some("\"client\""), "a quota per client object");
    assert_eq!(value(&batch, "limiter_scope"), None, "legacy mode keeps no quota");
    let problem = import(&aws_config::FORMAT, AWS, None).unwrap_err();
    assert!(problem.message.contains("2 profiles; choose one with --profile NAME"), "{problem:?}");
    let unset = import(&aws_config::FORMAT, "[profile x]\nmax_attempts = 2\n", None).unwrap();
    assert_eq!(value(&unset, "strategy").as_deref(), Some("\"aws-sdk-standard\""));
    assert!(unset.warnings.iter().any(|warning| warning.message.starts_with("unset: each SDK picks")));
    let pointer = "use strategy = \"botocore-standard\" or \"aws-sdk-js-v3\"";
    assert!(unset.warnings.iter().any(|warning| warning.message.contains(pointer)), "{:?}", unset.warnings);
    assert!(batch.warnings.iter().all(|warning| !warning.message.contains("50 ms base")), "legacy is botocore's own");
}

#[test]
fn bad_aws_profiles_are_refused_where_they_are_wrong() {
    for (text, line, message) in [
        ("[default]\nretry_mode = fast\n", 2, "\"fast\" is not a retry mode; valid: standard, adaptive, legacy"),
        ("[default]\nmax_attempts = three\n", 2, "not a whole number"),
        ("[default]\nmax_attempts = 0\n", 2, "outside 1 to 1000"),
        ("[default]\nmax-attempts = 3\n", 2, "unknown retry setting `max-attempts`"),
        ("[default\nretry_mode = standard\n", 1, "must end with `]`"),
        ("[default]\nretry_mode standard\n", 2, "expected `key = value`"),
        (
            "[default]\n[default]\n",
            2,
            "a second section for profile \"default\"; botocore's parser refuses the whole file",
        ),
    ] {
        let problem = import(&aws_config::FORMAT, text, None).expect_err(text);
        assert_eq!(problem.at.map(|at| at.line), Some(line), "{text}: {problem:?}");
        assert!(problem.message.contains(message), "{text}: {problem:?}");
    }
    // A file no format recognises is refused with the cause the AWS reader sees, not as an unknown format.
    let near_miss = aws_config::FORMAT.near_miss.unwrap();
    let twice = near_miss(&Input::new("[profile a]\nretry_mode = standard\n[profile a]\n")).unwrap();
    assert_eq!(twice.at.map(|at| at.line), Some(3));
    assert!(near_miss(&Input::new("[profile a]\nregion = x\n")).is_none(), "a readable file has no near miss");
    assert!(near_miss(&Input::new("{\"a\": 1}")).is_none());
}

#[test]
fn a_file_is_recognised_by_its_shape_and_every_translation_runs() {
    let detected = |text: &str| FORMATS.iter().find(|format| (format.detect)(&Input::new(text))).map(|f| f.name);
    assert_eq!(detected(GRPC), Some("grpc"));
    assert_eq!(detected(AWS), Some("aws-config"));
    assert_eq!(detected("[default]\nregion = x\n"), None);
    assert_eq!(detected("{\"other\": 1}"), None);
    for (format, text, choice) in
        [(&grpc::FORMAT, GRPC, "helloworld.Greeter/SayHello"), (&aws_config::FORMAT, AWS, "default")]
    {
        let imported = import(format, text, Some(choice)).unwrap();
        check_runs(&imported, "test")
            .unwrap_or_else(|error| panic!("{}: {error}\n{}", format.name, imported.client_block("x")));
    }
}

#[test]
fn the_block_names_each_keys_source_and_lists_the_traps() {
    let imported = import(&grpc::FORMAT, GRPC, Some("helloworld.Greeter/SayHello")).unwrap();
    let block = imported.client_block("retrylab import svc.json (grpc, method helloworld.Greeter/SayHello)");
    assert!(
        block.starts_with(
            "# retrylab import svc.json (grpc, method helloworld.Greeter/SayHello)\n# the C core, grpc-go 1.69 or \
             later, grpc-java 1.80 or later and grpc-js 1.14 or later: ±20% jitter (before those releases full \
             jitter: --version grpc-go=1.68, grpc-java=1.70 or grpc-js=1.13; grpc-java 1.71 to 1.79 drew U(0.4, \
             1.2): --version grpc-java=1.79)\n[client]\n"
        ),
        "{block}"
    );
    assert!(block.contains("max_attempts = 5 "), "{block}");
    assert!(
        block.contains("# methodConfig[0].retryPolicy.maxAttempts = 7: every attempt, the first included\n"),
        "{block}"
    );
    assert!(
        block.contains("# Traps crossed on the way:\n# - methodConfig[0].retryPolicy.maxAttempts (line 6)"),
        "{block}"
    );
    let parsed: toml::Table = block.parse().unwrap();
    assert_eq!(parsed["client"]["max_attempts"].as_integer(), Some(5));
}

#[test]
fn a_file_must_hold_one_document_and_problems_read_as_the_clis_errors() {
    let empty = import(&grpc::FORMAT, "", None).unwrap_err();
    assert_eq!((empty.at, empty.message.as_str()), (None, "the file is empty"));
    let two = import(&grpc::FORMAT, "{\"methodConfig\": []}\n---\n{}\n", None).unwrap_err();
    assert_eq!(
        (two.at.map(|at| at.line), two.message.as_str()),
        (Some(3), "2 documents in one file; this format holds one")
    );
    let at = Some(LineCol { line: 4, column: 7 });
    assert_eq!(Problem::new(at, "", "bad").into_input_error("f.json").to_string(), "f.json:4:7: bad");
    assert_eq!(Problem::new(at, "a.b", "bad").into_input_error("f.json").to_string(), "f.json:4:7: a.b: bad");
    assert_eq!(Problem::new(None, "a.b", "bad").into_input_error("f.json").to_string(), "f.json: a.b: bad");
}

#[test]
fn a_translation_the_lab_cannot_run_is_refused_and_files_are_read_by_name_or_shape() {
    let mut broken = Imported::default();
    broken.set("strategy", "full-jitter", "test");
    broken.set("base", "2s", "test");
    broken.set("cap", "1s", "test: below the base");
    let error = check_runs(&broken, "x.json").unwrap_err().to_string();
    assert!(error.starts_with("x.json: the translation is not a policy the lab can run:"), "{error}");
    assert_eq!(names(), FORMATS.iter().map(|format| format.name).collect::<Vec<_>>());
    assert!(names().contains(&"grpc") && names().contains(&"client-go"));
    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("svc.txt");
    std::fs::write(&file, GRPC).unwrap();
    let (format, imported) = import_file(&file, Some("grpc"), Some("helloworld.Greeter/SayHello")).unwrap();
    assert_eq!((format.name, imported.entry.as_deref()), ("grpc", Some("helloworld.Greeter/SayHello")));
    // Envoy reads `retryPolicy` as its retry_policy, and refuses the gRPC fields in it.
    let error = import_file(&file, Some("envoy"), None).err().unwrap().to_string();
    assert!(error.contains("retry_policy.maxAttempts: unknown field `maxAttempts`"), "{error}");
    let error = import_file(&file, Some("nginx"), None).err().unwrap().to_string();
    assert!(error.contains("unknown format \"nginx\""), "{error}");
    // A .json file that does not parse is reported where it breaks; a file of another shape is not recognised.
    let broken_json = folder.path().join("broken.json");
    std::fs::write(&broken_json, "{\"methodConfig\": [1, 2}").unwrap();
    let error = import_file(&broken_json, None, None).err().unwrap().to_string();
    assert!(
        error.starts_with(&format!("{}:1:", broken_json.display())) && error.contains("invalid YAML/JSON"),
        "{error}"
    );
    let text = folder.path().join("notes.txt");
    std::fs::write(&text, "{\"methodConfig\": [1, 2}").unwrap();
    let error = import_file(&text, None, None).err().unwrap().to_string();
    assert!(error.contains("invalid YAML/JSON"), "a file that opens with {{ is read as JSON: {error}");
    std::fs::write(&text, "just words\n").unwrap();
    let error = import_file(&text, None, None).err().unwrap().to_string();
    assert!(error.contains("no retry configuration of a format retrylab reads was found"), "{error}");
}
