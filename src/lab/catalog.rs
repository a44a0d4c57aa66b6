//! What the lab serves: the committed scenarios (embedded in the binary by build.rs, so the lab works outside the
//! repository and offline), the scenario files and results folders given on the command line, and the lessons.
//! Everything is read and checked once, at start: a name the catalog does not hold is never looked up on disk.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::scenario::{Scenario, plan};

include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// Where a served scenario's text came from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Origin {
    /// A committed scenario, embedded in the binary; `retrylab run scenarios/<name>.toml` runs it in the repo.
    Committed,
    /// A file given on the command line.
    File(PathBuf),
}

/// A scenario the lab can run.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    pub(crate) title: String,
    pub(crate) description: String,
    pub(crate) model: &'static str,
    pub(crate) points: usize,
    pub(crate) replicates: u32,
    pub(crate) origin: Origin,
    pub(crate) source: String,
}

impl Entry {
    /// The path the CLI would be given to run this scenario (and that messages name).
    pub(crate) fn path(&self) -> PathBuf {
        match &self.origin {
            Origin::Committed => Path::new("scenarios").join(format!("{}.toml", self.name)),
            Origin::File(path) => path.clone(),
        }
    }

    /// The scenario with `set` applied, checked as `retrylab run --set` checks it. A request may not name a file
    /// to import: the lab reads no file a request names.
    pub(crate) fn load(&self, set: &[String]) -> Result<Scenario, Error> {
        for argument in set {
            let key = argument.split_once('=').map_or(argument.as_str(), |(key, _)| key).trim();
            let bare = key.rsplit('.').next().unwrap_or(key);
            if crate::model::client::IMPORT_KEYS.contains(&bare) {
                return Err(Error::Usage(format!(
                    "{key}: the browser lab reads no file a request names; write `import` in the scenario file, or \
                     run `retrylab run --set {key}=…`"
                )));
            }
        }
        Scenario::with_overrides(&self.path(), self.source.clone(), set)
    }
}

/// A results folder given on the command line: its files are served by name, nothing below it.
#[derive(Clone, Debug)]
pub(crate) struct ResultsEntry {
    pub(crate) name: String,
    pub(crate) dir: PathBuf,
    /// The plain files directly in the folder when the lab started (report.html, charts, CSV).
    pub(crate) files: Vec<String>,
}

/// Everything the lab serves, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Catalog {
    pub(crate) scenarios: BTreeMap<String, Entry>,
    pub(crate) results: BTreeMap<String, ResultsEntry>,
    /// The committed lessons (`lessons/*.md`), checked against the scenarios above.
    pub(crate) lessons: Vec<super::lessons::Lesson>,
}

impl Catalog {
    /// The committed scenarios, then each input: a `.toml` file is a scenario (replacing a committed one of the
    /// same name, so a teacher's edited copy wins), a folder is a results folder. Every input is checked here,
    /// before the server starts: a scenario must plan, a folder must hold a summary.csv.
    pub(crate) fn load(inputs: &[PathBuf]) -> Result<Catalog, Error> {
        let mut catalog = Catalog::default();
        for (name, text) in SCENARIOS {
            let path = Path::new("scenarios").join(format!("{name}.toml"));
            catalog.add_scenario(&path, (*text).to_owned(), Origin::Committed)?;
        }
        for input in inputs {
            if input.is_dir() {
                catalog.add_results(input)?;
            } else {
                let source = std::fs::read_to_string(input)
                    .map_err(|source| Error::ReadScenario { path: input.clone(), source })?;
                catalog.add_scenario(input, source, Origin::File(input.clone()))?;
            }
        }
        catalog.lessons = super::lessons::Lesson::committed(&catalog)?;
        Ok(catalog)
    }

    fn add_scenario(&mut self, path: &Path, source: String, origin: Origin) -> Result<(), Error> {
        let scenario = Scenario::from_source(path, source.clone())?;
        let points = plan(&scenario)?.len();
        let name = scenario.stem();
        let entry = Entry {
            name: name.clone(),
            title: scenario.name.clone(),
            description: scenario.description.clone(),
            model: scenario.model.name(),
            points,
            replicates: scenario.replicates,
            origin,
            source,
        };
        self.scenarios.insert(name, entry);
        Ok(())
    }

    fn add_results(&mut self, dir: &Path) -> Result<(), Error> {
        let unreadable = |message: String| Error::Results { path: dir.to_owned(), message };
        if !dir.join("summary.csv").is_file() {
            return Err(unreadable(
                "holds no summary.csv: give a folder `retrylab run` wrote, or a scenario file".into(),
            ));
        }
        let name = dir
            .canonicalize()
            .ok()
            .and_then(|full| full.file_name().map(|name| name.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "results".into());
        if self.results.contains_key(&name) {
            return Err(unreadable(format!("another results folder given is also named {name}; give one of them")));
        }
        let listing = std::fs::read_dir(dir).map_err(|error| unreadable(format!("cannot be listed: {error}")))?;
        let mut files: Vec<String> = listing
            .filter_map(Result::ok)
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_file()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|file| !file.starts_with('.'))
            .collect();
        files.sort();
        self.results.insert(name.clone(), ResultsEntry { name, dir: dir.to_owned(), files });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_committed_scenario_is_embedded_and_plans() {
        let catalog = Catalog::load(&[]).unwrap();
        let on_disk = std::fs::read_dir("scenarios")
            .unwrap()
            .filter(|entry| entry.as_ref().unwrap().path().extension().is_some_and(|ext| ext == "toml"))
            .count();
        assert_eq!(catalog.scenarios.len(), on_disk);
        let herd = &catalog.scenarios["thundering-herd"];
        assert_eq!(herd.path(), Path::new("scenarios/thundering-herd.toml"));
        assert_eq!(herd.model, "server");
        assert!(herd.points >= 2);
    }

    #[test]
    fn a_request_may_not_name_a_file_to_import() {
        let catalog = Catalog::load(&[]).unwrap();
        let herd = &catalog.scenarios["thundering-herd"];
        for set in ["import=/etc/passwd", "client.import_format=grpc", " client.import_route = x"] {
            let error = herd.load(&[set.to_owned()]).unwrap_err().to_string();
            assert!(error.contains(": the browser lab reads no file a request names"), "{set}: {error}");
        }
        assert!(herd.load(&["clients=10".to_owned()]).is_ok());
    }
}
