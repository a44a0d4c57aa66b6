//! `--set KEY=VALUE` overrides on a committed scenario, then the plan, as `retrylab validate FILE --set …` would
//! take them. The first byte picks the scenario (of `scenarios/*.toml`, sorted by name); each further line is one
//! `--set` argument, applied in order. Errors are expected; a panic or a hang is a finding.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use retrylab::scenario::Scenario;

/// The committed scenarios, read once: (path, text), sorted by path.
fn scenarios() -> &'static [(PathBuf, String)] {
    static SCENARIOS: OnceLock<Vec<(PathBuf, String)>> = OnceLock::new();
    SCENARIOS.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
        let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
            .map(|entry| entry.expect("a readable directory entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "no scenarios in {}", dir.display());
        paths.into_iter().map(|path| (path.clone(), std::fs::read_to_string(&path).expect("a scenario"))).collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else { return };
    // Command-line arguments reach the program as UTF-8 (clap refuses anything else).
    let Ok(text) = std::str::from_utf8(rest) else { return };
    let (path, source) = &scenarios()[usize::from(pick) % scenarios().len()];
    let overrides: Vec<String> = text.lines().map(str::to_owned).collect();
    if let Ok(scenario) = Scenario::with_overrides(path, source.clone(), &overrides) {
        retrylab_fuzz::validate(&scenario);
    }
});
