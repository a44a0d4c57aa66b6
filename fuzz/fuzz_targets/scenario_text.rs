//! Any text as a scenario file: parsed, checked and planned as `retrylab validate FILE` would (the file size limit
//! aside: libFuzzer's `-max_len` keeps inputs far below it). Errors are expected; a panic or a hang is a finding.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use retrylab::scenario::Scenario;

fuzz_target!(|data: &[u8]| {
    // A file that is not UTF-8 is refused when it is read, before the parser sees it.
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(scenario) = Scenario::from_source(Path::new("fuzz.toml"), text.to_owned()) {
        retrylab_fuzz::validate(&scenario);
    }
});
