//! Huge or hostile input is refused with exit code 2 before any work: an oversized scenario file, TOML nested
//! beyond the parser's depth, a sweep whose point count overflows, schedules and fault lists with too many
//! entries. No panic, and nothing written.

use super::common::{retrylab, write_scenario};

const HERD: &str = include_str!("../../scenarios/thundering-herd.toml");
const COLLAPSE: &str = include_str!("../../scenarios/brooker-2023-collapse.toml");

/// Runs `text` saved as `name` and returns stderr, after checking exit code 2, no panic and an empty output.
fn refused(name: &str, text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let scenario = write_scenario(dir.path(), name, text);
    let out = dir.path().join("out");
    let assert = retrylab().args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap()]).assert().code(2);
    let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
    assert!(stderr.starts_with("Error: ") && stderr.contains(name), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!out.exists(), "nothing written");
    stderr
}

#[test]
fn a_scenario_file_beyond_the_size_limit_is_refused_unread() {
    let text = format!("{HERD}{}", "# padding\n".repeat(500_000));
    let stderr = refused("huge.toml", &text);
    let expected = format!("{} bytes is more than a scenario file may hold (4194304)", text.len());
    assert!(stderr.contains(&expected), "{stderr}");
}

#[test]
fn toml_nested_beyond_the_parsers_depth_is_refused_with_its_place() {
    let deep = format!("nested = {}{}\n", "[".repeat(10_000), "]".repeat(10_000));
    let stderr = refused("deep.toml", &HERD.replacen("[model]", &format!("{deep}[model]"), 1));
    assert!(stderr.contains("deep.toml:") && stderr.contains("recursion"), "{stderr}");
}

#[test]
fn a_sweep_whose_point_count_overflows_is_refused() {
    let axis = |key: &str| format!("{key} = {{ from = 1, to = 100000, step = 1 }}\n");
    let sweep = ["clients", "workers", "queue_limit"].map(axis).concat()
        + "base = { from = \"1ms\", to = \"100s\", step = \"1ms\" }\n";
    let text = HERD.replace(
        "[sweep]\nstrategy = [\"none\", \"exponential\", \"full-jitter\", \"decorrelated-jitter\"]\n",
        &format!("[sweep]\n{sweep}"),
    );
    let stderr = refused("overflow.toml", &text);
    assert!(stderr.contains("overflow"), "{stderr}");
}

#[test]
fn a_schedule_with_too_many_points_is_refused() {
    let points: Vec<String> = (0..20_000).map(|i| format!("{i}ms=40")).collect();
    let text = COLLAPSE
        .replace(
            "schedule = [\"0s=40, 20s=80, 25s=40\", \"0s=40, ~25s=80, ~75s=0\"]",
            &format!("schedule = [\"{}\"]", points.join(", ")),
        )
        .replace("timeline_at = { schedule = \"0s=40, 20s=80, 25s=40\" }\n", "");
    let stderr = refused("schedule.toml", &text);
    assert!(stderr.contains("schedule") && stderr.contains("more than 10000 points"), "{stderr}");
}

#[test]
fn a_fault_list_with_too_many_windows_is_refused() {
    let windows: Vec<String> = (0..20_000).map(|i| format!("{}ms..{}ms black-hole", 2 * i, 2 * i + 1)).collect();
    let text = HERD.replace("[workload]", &format!("faults = \"{}\"\n\n[workload]", windows.join(", ")));
    let stderr = refused("faults.toml", &text);
    assert!(stderr.contains("faults") && stderr.contains("more than 10000 fault windows"), "{stderr}");
}
