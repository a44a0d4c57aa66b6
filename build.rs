//! Embeds the committed scenarios and lessons in the binary for `retrylab serve`, which must work offline and
//! outside the repository: writes `$OUT_DIR/embedded.rs` with one `(name, text)` pair per `scenarios/*.toml` and
//! per `lessons/*.md`, sorted by name. A new scenario or lesson file needs no registration.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn main() {
    let root = env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let mut generated = String::new();
    for (folder, extension, constant) in [("scenarios", "toml", "SCENARIOS"), ("lessons", "md", "LESSONS")] {
        let dir = Path::new(&root).join(folder);
        println!("cargo::rerun-if-changed={}", dir.display());
        let mut files: Vec<_> = fs::read_dir(&dir)
            .map(|entries| entries.filter_map(Result::ok).map(|entry| entry.path()).collect())
            .unwrap_or_default();
        files.retain(|path| path.extension().is_some_and(|found| found == extension));
        files.sort();
        writeln!(generated, "pub(crate) static {constant}: &[(&str, &str)] = &[").unwrap();
        for path in files {
            println!("cargo::rerun-if-changed={}", path.display());
            let name = path.file_stem().and_then(|stem| stem.to_str()).expect("file names in the repo are UTF-8");
            writeln!(generated, "    ({name:?}, include_str!({:?})),", path.display().to_string()).unwrap();
        }
        writeln!(generated, "];").unwrap();
    }
    let out = Path::new(&env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("embedded.rs");
    fs::write(out, generated).expect("OUT_DIR is writable");
}
