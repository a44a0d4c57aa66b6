//! The questions folder (issue 32): every scenario in scenarios/questions/ names the public issue it answers,
//! validates, has committed results, and has its answer in docs/questions.md with the command that regenerates
//! it and a chart that exists; the cheapest one is reproduced byte for byte by today's binary.

use std::path::{Path, PathBuf};

use crate::common::{listing, retrylab};

/// The question whose results are rerun in full here: the cheapest of the folder.
const REPRODUCED: &str = "max-attempts-first-try";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every question's name (the scenario's file stem), sorted.
fn questions() -> Vec<String> {
    let mut names: Vec<String> = listing(&root().join("scenarios/questions"))
        .into_iter()
        .filter_map(|file| file.strip_suffix(".toml").map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[test]
fn every_question_names_its_issue_validates_and_has_results_and_an_answer() {
    let names = questions();
    assert!(names.len() >= 12, "at least 12 questions, found {names:?}");
    let page = std::fs::read_to_string(root().join("docs/questions.md")).unwrap();
    for name in &names {
        let scenario = root().join(format!("scenarios/questions/{name}.toml"));
        let text = std::fs::read_to_string(&scenario).unwrap();
        let table: toml::Table = text.parse().unwrap();
        let description = table["description"].as_str().unwrap_or_default();
        assert!(description.contains("https://github.com/"), "{name}: the description names no public issue");
        let out =
            retrylab().current_dir(root()).args(["validate", &format!("scenarios/questions/{name}.toml")]).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let results = root().join(format!("results/questions/{name}"));
        assert!(results.join("summary.csv").is_file(), "{name}: no committed results in {}", results.display());
        let command = format!("retrylab run scenarios/questions/{name}.toml --out results/questions/{name}");
        assert!(page.contains(&command), "docs/questions.md does not give `{command}`");
    }
    for chart in charts_shown(&page) {
        assert!(
            root().join("docs").join(&chart).is_file(),
            "docs/questions.md shows {} which does not exist",
            chart.display()
        );
    }
}

/// The images docs/questions.md shows, relative to docs/.
fn charts_shown(page: &str) -> Vec<PathBuf> {
    page.split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .filter(|target| target.ends_with(".png") || target.ends_with(".svg"))
        .map(PathBuf::from)
        .collect()
}

#[test]
fn a_question_s_committed_numbers_are_reproduced_byte_for_byte() {
    let committed = root().join(format!("results/questions/{REPRODUCED}"));
    let dir = tempfile::tempdir().unwrap();
    let scenario = format!("scenarios/questions/{REPRODUCED}.toml");
    retrylab()
        .current_dir(root())
        .args(["run", &scenario, "--out", dir.path().to_str().unwrap(), "-q"])
        .assert()
        .success();
    let csv: Vec<String> = listing(&committed).into_iter().filter(|name| name.ends_with(".csv")).collect();
    assert!(!csv.is_empty());
    for name in csv {
        let (expected, actual) =
            (std::fs::read(committed.join(&name)).unwrap(), std::fs::read(dir.path().join(&name)).unwrap());
        assert!(actual == expected, "{name} differs from the committed one; regenerate results/ if that is meant");
    }
}
