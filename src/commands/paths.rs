//! Output path arguments (`run --out`, `run --trace`, `tune --out`, …) checked before any work: the right kind
//! of path, under folders and not under a file, and writable. A bad one is bad input (exit 2) found before
//! anything is simulated, and nothing is created or left behind by the check.

use std::fs;
use std::path::{Path, PathBuf};

use crate::Error;

/// What an output path argument names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputKind {
    /// A folder, made (with its missing parents) when the results are written.
    Folder,
    /// A file, replaced whole when it is written; its folder must exist.
    File,
}

/// Checks the output path `path` given as `argument` (such as `--out`) before any work. A folder may be missing,
/// as long as its nearest existing ancestor is a writable folder; a file must not be a folder, and its folder
/// must exist and be writable. Writability is proven with a probe file, removed at once.
pub fn check_output_path(argument: &str, path: &Path, kind: OutputKind) -> Result<(), Error> {
    let refuse = |why: String| Err(Error::Usage(format!("{argument} {}: {why}", path.display())));
    if path.as_os_str().is_empty() {
        return refuse("an empty path; give a path".into());
    }
    match (kind, fs::metadata(path)) {
        (OutputKind::Folder, Ok(meta)) if !meta.is_dir() => {
            return refuse("is a file, not a folder; give a folder (it is made if missing)".into());
        }
        (OutputKind::Folder, Ok(_)) => return probe(argument, path, path),
        (OutputKind::File, Ok(meta)) if meta.is_dir() => {
            return refuse("is a folder; give the path of a file to write".into());
        }
        _ => {}
    }
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    };
    let ancestor = nearest_existing(&parent);
    if let Some(file) = ancestor.as_ref().filter(|found| !found.is_dir()) {
        return refuse(format!(
            "{} is a file, so nothing can be written under it; give a path whose folders are folders",
            file.display()
        ));
    }
    match (kind, ancestor) {
        (OutputKind::File, Some(found)) if found == parent => probe(argument, path, &parent),
        (OutputKind::File, _) => {
            refuse(format!("the folder {} does not exist; create it or give another path", parent.display()))
        }
        (OutputKind::Folder, Some(found)) => probe(argument, path, &found),
        (OutputKind::Folder, None) => refuse("no part of this path exists; give a path on a mounted disk".into()),
    }
}

/// The nearest of `dir` and its ancestors that exists (as a folder or a file), if any; a relative path ends in
/// the working folder.
fn nearest_existing(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|a| if a.as_os_str().is_empty() { Path::new(".") } else { a })
        .find(|a| fs::metadata(a).is_ok())
        .map(Path::to_owned)
}

/// Proves `dir` writable by creating and removing a hidden probe file in it.
fn probe(argument: &str, path: &Path, dir: &Path) -> Result<(), Error> {
    let probe = dir.join(format!(".retrylab-probe-{}", std::process::id()));
    match fs::File::create(&probe) {
        Ok(_) => {
            let _ = fs::remove_file(&probe);
            Ok(())
        }
        Err(error) => Err(Error::Usage(format!(
            "{argument} {}: cannot write in {} ({error}); give a path in a folder you can write",
            path.display(),
            dir.display()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(result: Result<(), Error>) -> String {
        match result {
            Err(Error::Usage(message)) => message,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn folders_may_be_missing_but_never_under_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("notes.txt");
        fs::write(&file, "x").unwrap();
        assert!(check_output_path("--out", &dir.path().join("a/b/c"), OutputKind::Folder).is_ok());
        assert!(!dir.path().join("a").exists(), "the check makes nothing");
        let under = message(check_output_path("--out", &file.join("a/b"), OutputKind::Folder));
        assert!(under.starts_with("--out ") && under.contains("notes.txt is a file"), "{under}");
        let itself = message(check_output_path("--out", &file, OutputKind::Folder));
        assert!(itself.contains("is a file, not a folder"), "{itself}");
    }

    #[test]
    fn files_need_their_folder_and_must_not_be_folders() {
        let dir = tempfile::tempdir().unwrap();
        assert!(check_output_path("--trace", &dir.path().join("t.json"), OutputKind::File).is_ok());
        let folder = message(check_output_path("--trace", dir.path(), OutputKind::File));
        assert!(folder.starts_with("--trace ") && folder.contains("is a folder"), "{folder}");
        let missing = message(check_output_path("--trace", &dir.path().join("no/t.json"), OutputKind::File));
        assert!(missing.contains("does not exist"), "{missing}");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert!(names.is_empty(), "no probe left behind");
    }
}
