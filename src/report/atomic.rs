//! Atomic file output: write beside the target under a hidden temporary name, then rename into place, so an
//! interrupted run never leaves a truncated file where a complete one is expected.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;

/// The hidden temporary path used while `target` is being written. It keeps `target`'s extension, so a
/// leftover still shows what kind of file it was.
pub(crate) fn temporary_path(target: &Path) -> PathBuf {
    let name = target.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    target.with_file_name(format!(".{}.partial-{name}", std::process::id()))
}

/// Removes the temporary files (see [`temporary_path`]) that writers killed mid-write left in `dir`, whatever
/// their process. Best effort: one that cannot be removed is only clutter.
pub(crate) fn remove_temporary_files(dir: &Path) {
    for entry in fs::read_dir(dir).into_iter().flatten().filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') && name.contains(".partial-") {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Moves a finished temporary file into place.
pub(crate) fn commit(temporary: &Path, target: &Path) -> Result<(), Error> {
    fs::rename(temporary, target).map_err(|source| Error::Write { path: target.to_owned(), source })
}

/// Writes `bytes` to `target` atomically, flushed to disk before the rename.
pub(crate) fn write_atomic(target: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_renamed(target, bytes, true)
}

/// Writes `bytes` to `target` atomically but without waiting for the disk: for files whose readers detect
/// damage (checksummed checkpoints), where a power cut may cost the file but never passes a corrupt one on.
pub(crate) fn write_atomic_unsynced(target: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_renamed(target, bytes, false)
}

fn write_renamed(target: &Path, bytes: &[u8], sync: bool) -> Result<(), Error> {
    let temporary = temporary_path(target);
    let written = fs::File::create(&temporary).and_then(|mut file| {
        file.write_all(bytes)?;
        if sync { file.sync_all() } else { Ok(()) }
    });
    if let Err(source) = written {
        let _ = fs::remove_file(&temporary);
        return Err(Error::Write { path: target.to_owned(), source });
    }
    commit(&temporary, target)
}

/// Creates `dir` if needed and proves it writable with a probe file, before any simulation time is spent.
pub(crate) fn ensure_writable_dir(dir: &Path) -> Result<(), Error> {
    let folder_error = |source| Error::OutputFolder { path: dir.to_owned(), source };
    fs::create_dir_all(dir).map_err(folder_error)?;
    let probe = dir.join(format!(".retrylab-probe-{}", std::process::id()));
    fs::File::create(&probe).map_err(folder_error)?;
    fs::remove_file(&probe).map_err(folder_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_whole_files_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("summary.csv");
        write_atomic(&target, b"a,b\n1,2\n").unwrap();
        write_atomic(&target, b"a,b\n3,4\n").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"a,b\n3,4\n");
        let names: Vec<_> = fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["summary.csv"]);
    }

    #[test]
    fn temporary_names_keep_the_extension() {
        let path = temporary_path(Path::new("out/calls.png"));
        assert_eq!(path.extension().unwrap(), "png");
        assert!(path.file_name().unwrap().to_string_lossy().starts_with('.'));
    }
}
