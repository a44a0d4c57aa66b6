//! Lessons: guided pages a teacher can copy and edit, one Markdown file each in `lessons/` (embedded by build.rs).
//!
//! A lesson opens with TOML between `+++` lines (`title`, `summary`, `scenario`: a served scenario's name, `set`:
//! overrides for every figure), then prose. Fenced blocks are its live parts: ```` ```predict ```` asks the reader
//! to commit to an answer before the figure runs (its first line the question, `- ` lines the choices), and
//! ```` ```lab ```` is a live figure, TOML with `set` (more overrides), `controls` (the keys the reader may move),
//! `show` (`timeline`, `panes`, `dots`, `summary`) and `claims`, checked on the live numbers
//! ([`super::claims`]). Everything is checked when the lab starts, and a test runs every committed lesson with its
//! defaults and requires its claims to hold.

use serde::{Deserialize, Serialize};

use super::catalog::{Catalog, LESSONS};
use super::claims::Claim;
use crate::Error;

/// A lesson's front matter.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Front {
    pub(crate) title: String,
    pub(crate) summary: String,
    pub(crate) scenario: String,
    #[serde(default)]
    pub(crate) set: Vec<String>,
}

/// A ```` ```lab ```` block: one live figure.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Figure {
    #[serde(default)]
    pub(crate) set: Vec<String>,
    #[serde(default)]
    pub(crate) controls: Vec<String>,
    #[serde(default = "default_show")]
    pub(crate) show: Vec<String>,
    #[serde(default)]
    pub(crate) claims: Vec<String>,
}

fn default_show() -> Vec<String> {
    vec!["timeline".into(), "summary".into()]
}

const VIEWS: [&str; 4] = ["timeline", "panes", "dots", "summary"];

/// A lesson as served: its front matter, its text and its figures in order.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct Lesson {
    pub(crate) name: String,
    #[serde(flatten)]
    pub(crate) front: Front,
    pub(crate) markdown: String,
    pub(crate) figures: Vec<Figure>,
}

impl Lesson {
    /// Parses and checks a lesson against the scenarios the lab serves: the scenario exists, every figure's
    /// overrides apply to it and plan, its controls are keys of the scenario, its views and claims are known.
    pub(crate) fn parse(name: &str, text: &str, catalog: &Catalog) -> Result<Lesson, Error> {
        let bad = |message: String| Error::Usage(format!("lessons/{name}.md: {message}"));
        let body = text
            .strip_prefix("+++\n")
            .ok_or_else(|| bad("must open with TOML front matter between +++ lines".into()))?;
        let (front, markdown) =
            body.split_once("\n+++\n").ok_or_else(|| bad("the front matter has no closing +++".into()))?;
        let front: Front = toml::from_str(front).map_err(|error| bad(format!("front matter: {error}")))?;
        let entry = catalog
            .scenarios
            .get(&front.scenario)
            .ok_or_else(|| bad(format!("no scenario named {:?}", front.scenario)))?;
        let mut figures = Vec::new();
        for block in fenced(markdown, "lab") {
            let figure: Figure = toml::from_str(&block).map_err(|error| bad(format!("lab block: {error}")))?;
            let set: Vec<String> = front.set.iter().chain(&figure.set).cloned().collect();
            let scenario = entry.load(&set).map_err(|error| bad(format!("lab block: {error}")))?;
            crate::scenario::plan(&scenario).map_err(|error| bad(format!("lab block: {error}")))?;
            let controls = super::controls::controls(&scenario);
            for key in &figure.controls {
                if !controls.iter().any(|control| control["key"] == key.as_str()) {
                    return Err(bad(format!(
                        "control {key:?} is not a key of {} (write it as section.key)",
                        front.scenario
                    )));
                }
            }
            if let Some(view) = figure.show.iter().find(|view| !VIEWS.contains(&view.as_str())) {
                return Err(bad(format!("show {view:?} is not one of {}", VIEWS.join(", "))));
            }
            for claim in &figure.claims {
                Claim::parse(claim).map_err(bad)?;
            }
            figures.push(figure);
        }
        Ok(Lesson { name: name.to_owned(), front, markdown: markdown.to_owned(), figures })
    }

    /// Every committed lesson, checked against `catalog`.
    pub(crate) fn committed(catalog: &Catalog) -> Result<Vec<Lesson>, Error> {
        LESSONS.iter().map(|(name, text)| Lesson::parse(name, text, catalog)).collect()
    }
}

/// The bodies of the fenced blocks of `language` in `markdown`, in order.
fn fenced(markdown: &str, language: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in markdown.lines() {
        match (&mut current, line.trim_end()) {
            (None, fence) if fence == format!("```{language}") => current = Some(String::new()),
            (Some(_), "```") => blocks.extend(current.take()),
            (Some(block), text) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_committed_lesson_parses_against_the_committed_scenarios() {
        let catalog = Catalog::load(&[]).unwrap();
        let lessons = Lesson::committed(&catalog).unwrap();
        assert!(lessons.len() >= 2, "{} lessons", lessons.len());
        assert!(lessons.iter().all(|lesson| !lesson.figures.is_empty()));
    }

    #[test]
    fn a_lesson_with_a_mistake_is_refused_with_its_file_and_what_is_wrong() {
        let catalog = Catalog::load(&[]).unwrap();
        let lesson = |figure: &str| {
            let text = format!(
                "+++\ntitle = \"t\"\nsummary = \"s\"\nscenario = \"thundering-herd\"\n+++\n```lab\n{figure}\n```\n"
            );
            Lesson::parse("x", &text, &catalog).map(|_| ()).unwrap_err().to_string()
        };
        assert!(lesson("controls = [\"clients\"]").contains("lessons/x.md: control \"clients\" is not a key"));
        assert!(lesson("show = [\"movie\"]").contains("show \"movie\" is not one of"));
        assert!(lesson("claims = [\"calls is low\"]").contains("no comparison"));
        assert!(lesson("set = [\"clients=abc\"]").contains("--set clients=abc"));
        assert!(lesson("speed = 2").contains("unknown field `speed`"));
        let missing = Lesson::parse("y", "no front matter", &catalog).unwrap_err().to_string();
        assert!(missing.contains("lessons/y.md: must open with TOML front matter"));
    }

    #[test]
    fn fenced_blocks_are_found_by_language() {
        let text = "a\n```lab\nset = []\n```\n```predict\nq\n```\n```lab\nshow = [\"panes\"]\n```\n";
        assert_eq!(fenced(text, "lab"), ["set = []\n", "show = [\"panes\"]\n"]);
        assert_eq!(fenced(text, "predict"), ["q\n"]);
    }
}
