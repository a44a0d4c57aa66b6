//! Any text as the retry configuration a scenario imports (`[client] import`), read as the format it looks like
//! or, by its first byte, as one `import_format` names: translated, merged into the client and planned as
//! `retrylab validate` would. Errors are expected; a panic or a hang is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use retrylab::scenario::Scenario;

/// `retrylab import --format` names; a first byte past them leaves the format to be recognised.
const FORMATS: [&str; 9] =
    ["grpc", "istio", "linkerd", "envoy", "resilience4j", "polly", "aws-config", "spring", "client-go"];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else { return };
    // A file that is not UTF-8 is refused when it is read, before any format sees it.
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let dir = std::env::temp_dir().join(format!("retrylab-fuzz-import-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a scratch folder");
    std::fs::write(dir.join("policy.conf"), text).expect("the configuration written");
    let format = FORMATS
        .get(usize::from(first) % (FORMATS.len() + 1))
        .map(|name| format!("import_format = \"{name}\"\n"))
        .unwrap_or_default();
    let scenario = format!(
        "schema_version = 1\n[model]\nkind = \"server\"\n[workload]\nkind = \"burst\"\nclients = 10\n\
         [client]\nimport = \"policy.conf\"\n{format}"
    );
    if let Ok(scenario) = Scenario::from_source(&dir.join("fuzz.toml"), scenario) {
        retrylab_fuzz::validate(&scenario);
    }
});
