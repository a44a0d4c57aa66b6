//! A results folder replaced whole or not at all. Every file is written into a hidden staging folder inside the
//! output folder (so on its filesystem), and only once all are written do they move into place, by renames,
//! which need no room for data. A move that still fails is undone with the ones before it, so the folder holds
//! either the previous run's results or this run's, never a mix. A file written outside the folder with the
//! results (a trace) is staged beside its target instead ([`StagedFile`]) and moved into place after them.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::atomic;
use crate::Error;

/// The staging folders' name prefix; the process id follows.
const PREFIX: &str = ".retrylab-staging-";
/// Inside a staging folder: held locked while its process writes, so a later run removes only abandoned ones.
const LOCK: &str = ".lock";
/// Inside a staging folder: the previous run's files while the new ones move in.
const PREVIOUS: &str = ".previous";

/// A staging folder for results bound for `out`; removed (with anything still in it) when dropped.
pub(crate) struct Staging {
    out: PathBuf,
    dir: PathBuf,
    _lock: Option<fs::File>,
}

impl Staging {
    /// Creates the staging folder in `out` (which must exist), first removing those killed runs left there.
    pub(crate) fn create(out: &Path) -> Result<Staging, Error> {
        remove_abandoned(out);
        let dir = out.join(format!("{PREFIX}{}", std::process::id()));
        let failed = |source| Error::Write { path: dir.clone(), source };
        if dir.exists() {
            fs::remove_dir_all(&dir).map_err(failed)?;
        }
        fs::create_dir(&dir).map_err(failed)?;
        let lock = fs::File::create(dir.join(LOCK)).map_err(failed)?;
        let lock = lock.try_lock().is_ok().then_some(lock);
        Ok(Staging { out: out.to_owned(), dir, _lock: lock })
    }

    /// Where the files are written until [`Staging::commit`].
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// `error` naming the file it would have become in the output folder rather than its staged copy.
    pub(crate) fn in_place(&self, error: Error) -> Error {
        let moved = |path: PathBuf| match path.strip_prefix(&self.dir) {
            Ok(name) => self.out.join(name),
            Err(_) => path,
        };
        match error {
            Error::Write { path, source } => Error::Write { path: moved(path), source },
            Error::Chart { path, message } => Error::Chart { path: moved(path), message },
            Error::Results { path, message } => Error::Results { path: moved(path), message },
            other => other,
        }
    }

    /// Moves the staged `files` (named as in the staging folder) into the output folder, replacing files of the same
    /// name, and removes the files named in `dropped` this run does not write. Returns the files' new paths.
    pub(crate) fn commit(self, files: &[PathBuf], dropped: &[&str]) -> Result<Vec<PathBuf>, Error> {
        let names: Vec<&std::ffi::OsStr> = files.iter().filter_map(|file| file.file_name()).collect();
        let previous = self.dir.join(PREVIOUS);
        fs::create_dir(&previous).map_err(|source| Error::Write { path: previous.clone(), source })?;
        let replaced = names.iter().copied().chain(dropped.iter().map(std::ffi::OsStr::new));
        let mut undo: Vec<(PathBuf, PathBuf)> = Vec::new();
        let mut moves: Vec<(PathBuf, PathBuf)> = Vec::new();
        for name in replaced {
            let target = self.out.join(name);
            if target.exists() && !moves.iter().any(|(from, _)| *from == target) {
                moves.push((target, previous.join(name)));
            }
        }
        moves.extend(names.iter().map(|name| (self.dir.join(name), self.out.join(name))));
        for (from, to) in moves {
            if let Err(source) = fs::rename(&from, &to) {
                for (back, from) in undo.iter().rev() {
                    let _ = fs::rename(back, from);
                }
                return Err(Error::Write { path: self.in_place_path(&from, &to), source });
            }
            undo.push((to, from));
        }
        Ok(names.iter().map(|name| self.out.join(name)).collect())
    }

    /// The output folder's path of a move between `from` and `to`.
    fn in_place_path(&self, from: &Path, to: &Path) -> PathBuf {
        if to.starts_with(&self.out) && !to.starts_with(&self.dir) { to.to_owned() } else { from.to_owned() }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// One file written beside its target under a hidden temporary name (see [`atomic::temporary_path`]) and moved
/// into place only by [`StagedFile::commit`]; removed when dropped uncommitted. A run writes it before its
/// results, so a disk that cannot hold it fails the run before anything changes.
pub(crate) struct StagedFile {
    temporary: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl StagedFile {
    /// Writes `bytes` to the temporary beside `target`, flushed to disk; `target` itself is untouched.
    pub(crate) fn write(target: &Path, bytes: &[u8]) -> Result<StagedFile, Error> {
        let staged =
            StagedFile { temporary: atomic::temporary_path(target), target: target.to_owned(), committed: false };
        let written = fs::File::create(&staged.temporary).and_then(|mut file| {
            file.write_all(bytes)?;
            file.sync_all()
        });
        written.map_err(|source| Error::Write { path: target.to_owned(), source })?;
        Ok(staged)
    }

    /// Moves the file into place, replacing the target.
    pub(crate) fn commit(mut self) -> Result<(), Error> {
        atomic::commit(&self.temporary, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.temporary);
        }
    }
}

/// Removes the staging folders in `out` whose process is gone (their lock is free). Best effort: one that cannot
/// be removed is only clutter, hidden.
fn remove_abandoned(out: &Path) {
    for entry in fs::read_dir(out).into_iter().flatten().filter_map(Result::ok) {
        if !entry.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let abandoned = fs::File::open(entry.path().join(LOCK)).is_ok_and(|lock| lock.try_lock().is_ok());
        if abandoned {
            let _ = fs::remove_dir_all(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn a_commit_replaces_the_files_and_drops_the_stale_ones() {
        let out = tempfile::tempdir().unwrap();
        fs::write(out.path().join("summary.csv"), "old").unwrap();
        fs::write(out.path().join("paired.csv"), "old").unwrap();
        fs::write(out.path().join("notes.txt"), "mine").unwrap();
        let staging = Staging::create(out.path()).unwrap();
        let staged = [staging.dir().join("summary.csv"), staging.dir().join("runs.csv")];
        staged.iter().for_each(|file| fs::write(file, "new").unwrap());
        let moved = staging.commit(&staged, &["paired.csv", "runs.csv"]).unwrap();
        assert_eq!(moved, [out.path().join("summary.csv"), out.path().join("runs.csv")]);
        assert_eq!(names(out.path()), ["notes.txt", "runs.csv", "summary.csv"]);
        assert_eq!(fs::read_to_string(out.path().join("summary.csv")).unwrap(), "new");
    }

    #[test]
    fn a_failed_move_puts_every_previous_file_back() {
        let out = tempfile::tempdir().unwrap();
        fs::write(out.path().join("a.csv"), "old a").unwrap();
        fs::write(out.path().join("paired.csv"), "old paired").unwrap();
        let staging = Staging::create(out.path()).unwrap();
        fs::write(staging.dir().join("a.csv"), "new a").unwrap();
        // b.csv was never staged: its move fails after a.csv's and paired.csv's have been made.
        let staged = [staging.dir().join("a.csv"), staging.dir().join("b.csv")];
        let error = staging.commit(&staged, &["paired.csv"]).unwrap_err();
        assert!(matches!(&error, Error::Write { path, .. } if path.ends_with("b.csv")), "{error:?}");
        assert_eq!(names(out.path()), ["a.csv", "paired.csv"]);
        assert_eq!(fs::read_to_string(out.path().join("a.csv")).unwrap(), "old a");
        assert_eq!(fs::read_to_string(out.path().join("paired.csv")).unwrap(), "old paired");
    }

    #[test]
    fn a_staged_file_replaces_its_target_only_when_committed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("trace.json");
        fs::write(&target, "old").unwrap();
        drop(StagedFile::write(&target, b"dropped").unwrap());
        assert_eq!(names(dir.path()), ["trace.json"], "an uncommitted file leaves nothing");
        assert_eq!(fs::read_to_string(&target).unwrap(), "old");
        let staged = StagedFile::write(&target, b"new").unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "old", "untouched until the commit");
        staged.commit().unwrap();
        assert_eq!(fs::read_to_string(&target).unwrap(), "new");
        assert_eq!(names(dir.path()), ["trace.json"]);
    }

    #[test]
    fn abandoned_staging_folders_go_and_live_ones_stay() {
        let out = tempfile::tempdir().unwrap();
        let folder = |pid: u32| {
            let dir = out.path().join(format!("{PREFIX}{pid}"));
            fs::create_dir(&dir).unwrap();
            fs::File::create(dir.join(LOCK)).unwrap()
        };
        drop(folder(4_000_000_001));
        let held = folder(4_000_000_002);
        held.try_lock().unwrap();
        let staging = Staging::create(out.path()).unwrap();
        let mut expected = vec![format!("{PREFIX}4000000002"), format!("{PREFIX}{}", std::process::id())];
        expected.sort();
        assert_eq!(names(out.path()), expected, "the killed writer's folder goes, the live one's stays");
        drop(staging);
        assert_eq!(names(out.path()), [format!("{PREFIX}4000000002")]);
    }
}
