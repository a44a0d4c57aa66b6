//! Reading a configuration file before any translation: bounded (a FIFO, a device or a file past the size limit
//! is refused at once, before anything blocks or fills memory), recognised (a file no format reads is refused with
//! the cause the nearest format sees, not only "unknown"), and checked against what the user asked (`--version`
//! and `--reading` name only what the file's format knows).

use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use super::{Ask, FORMATS, Format, Imported, Input, Problem, format_named};
use crate::error::{InputError, Origin};

/// The largest configuration file read: far beyond any retry configuration written by hand.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The text of the configuration file at `path` (shown as `shown`), or why it is not read: not a regular file (a
/// FIFO or a device, which could block or never end), more than [`MAX_CONFIG_BYTES`], not UTF-8, or unreadable.
/// The file is opened without blocking and checked on the open handle, so a FIFO swapped in after a check cannot
/// stall the read.
pub(crate) fn read_config(path: &Path, shown: &str) -> Result<String, String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|error| format!("cannot read {shown}: {error}"))?;
    let metadata = file.metadata().map_err(|error| format!("cannot read {shown}: {error}"))?;
    if !metadata.is_file() {
        let kind = if metadata.is_dir() { "a folder" } else { "not a regular file (a FIFO, socket or device)" };
        return Err(format!("{shown} is {kind}; give the configuration file itself"));
    }
    let too_big = |bytes: u64| {
        format!(
            "{shown} holds {bytes} bytes, more than a retry configuration may ({MAX_CONFIG_BYTES}); give the file's retry part"
        )
    };
    if metadata.len() > MAX_CONFIG_BYTES {
        return Err(too_big(metadata.len()));
    }
    let mut bytes = Vec::with_capacity(metadata.len() as usize);
    file.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes).map_err(|error| format!("cannot read {shown}: {error}"))?;
    if bytes.len() as u64 > MAX_CONFIG_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|error| {
        format!("{shown} is not UTF-8 text (byte {} is not); save it as UTF-8", error.utf8_error().valid_up_to() + 1)
    })
}

/// Reads `path` as `format` (or the format it looks like) and translates what `ask` asks for.
pub(crate) fn import_file(
    path: &Path,
    format: Option<&str>,
    ask: &Ask<'_>,
) -> Result<(&'static Format, Imported), crate::Error> {
    let file = path.display().to_string();
    let format = match format {
        Some(name) => Some(format_named(name).ok_or_else(|| {
            crate::Error::Usage(format!("unknown format {name:?}; valid: {}", super::FORMAT_NAMES.join(", ")))
        })?),
        None => None,
    };
    let text = read_config(path, &file).map_err(crate::Error::Usage)?;
    let input = Input::new(&text);
    let format = match format {
        Some(format) => format,
        None => recognise(&file, &input)?,
    };
    check_ask(format, ask).map_err(crate::Error::Usage)?;
    let imported = (format.translate)(&input, ask).map_err(|problem| problem.into_input_error(&file))?;
    Ok((format, imported))
}

/// `text` (the file `file`, as messages name it) read as `format` (or the format it looks like), what `ask` asks
/// for translated; what is wrong is located in the file where it can be. `ask` must have passed [`check_ask`].
pub(crate) fn translate(
    file: &str,
    text: &str,
    format: Option<&'static Format>,
    ask: &Ask<'_>,
) -> Result<(&'static Format, Imported), InputError> {
    let input = Input::new(text);
    let format = match format {
        Some(format) => format,
        None => recognise(file, &input)?,
    };
    let imported = (format.translate)(&input, ask).map_err(|problem| problem.into_input_error(file))?;
    Ok((format, imported))
}

/// The format `text` (the file `file`) looks like.
pub(crate) fn format_of(file: &str, text: &str) -> Result<&'static Format, InputError> {
    recognise(file, &Input::new(text))
}

/// Refuses a `--version` naming a consumer that does not read `format`'s files, and a `--reading` the format does
/// not have; the message lists what would be valid.
pub(crate) fn check_ask(format: &Format, ask: &Ask<'_>) -> Result<(), String> {
    for pin in ask.pins {
        if !format.consumers.iter().any(|consumer| consumer.name == pin.consumer.name) {
            let valid: Vec<&str> = format.consumers.iter().map(|consumer| consumer.name).collect();
            return Err(match valid.as_slice() {
                [] => format!(
                    "--version {}: no default of a {} file changed between the releases the import knows; drop it",
                    pin.consumer.name, format.name
                ),
                _ => format!(
                    "--version {}: a {} file is read by {}; name one of those",
                    pin.consumer.name,
                    format.name,
                    valid.join(", ")
                ),
            });
        }
    }
    match ask.reading {
        Some(reading) if !format.readings.iter().any(|(name, _)| *name == reading) => Err(match format.readings {
            [] => format!("--reading {reading}: a {} file is read one way only; drop it", format.name),
            readings => {
                let listed: Vec<String> =
                    readings.iter().map(|(name, about)| format!("  {name:<10} {about}")).collect();
                format!("--reading {reading}: a {} file can be read as:\n{}", format.name, listed.join("\n"))
            }
        }),
        _ => Ok(()),
    }
}

/// The first format the file looks like; otherwise the reason the nearest one gives, and otherwise the list.
fn recognise(file: &str, input: &Input<'_>) -> Result<&'static Format, InputError> {
    if let Some(format) = FORMATS.iter().copied().find(|format| (format.detect)(input)) {
        return Ok(format);
    }
    // A YAML or JSON file that does not parse is reported where it breaks, not as an unknown format.
    let extension = Path::new(file).extension().and_then(|e| e.to_str());
    let tree_like = matches!(extension, Some("json" | "yaml" | "yml")) || input.text.trim_start().starts_with('{');
    if let (true, Err(error)) = (tree_like, &input.tree) {
        let message = format!("invalid YAML/JSON: {}", error.message);
        return Err(Problem::new(Some(error.at), "", message).into_input_error(file));
    }
    for format in FORMATS {
        if let Some(problem) = format.near_miss.and_then(|near_miss| near_miss(input)) {
            let message = format!("read as {} ({}): {}", format.name, format.about, problem.message);
            return Err(Problem { message, ..problem }.into_input_error(file));
        }
    }
    let listed: Vec<String> = FORMATS.iter().map(|format| format!("  {:<12} {}", format.name, format.about)).collect();
    let message = format!(
        "no retry configuration of a format retrylab reads was found in it (no format's keys are there); if it is \
         one, name its format with --format to see what is missing:\n{}",
        listed.join("\n")
    );
    Err(InputError::new(file, Origin::Default, None, message))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_under_the_limit_is_read() {
        let folder = tempfile::tempdir().unwrap();
        let shown = |name: &str| folder.path().join(name).display().to_string();
        let small = folder.path().join("small.json");
        std::fs::write(&small, "{}").unwrap();
        assert_eq!(read_config(&small, "small.json").unwrap(), "{}");

        let exact = folder.path().join("exact.json");
        std::fs::write(&exact, vec![b' '; MAX_CONFIG_BYTES as usize]).unwrap();
        assert_eq!(read_config(&exact, "exact.json").unwrap().len(), MAX_CONFIG_BYTES as usize);
        let big = folder.path().join("big.json");
        std::fs::write(&big, vec![b' '; MAX_CONFIG_BYTES as usize + 1]).unwrap();
        let error = read_config(&big, &shown("big.json")).unwrap_err();
        assert!(error.contains(&format!("holds {} bytes", MAX_CONFIG_BYTES + 1)), "{error}");

        let error = read_config(folder.path(), "the folder").unwrap_err();
        assert!(error.contains("is a folder"), "{error}");
        let error = read_config(Path::new("/dev/zero"), "/dev/zero").unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
        let error = read_config(&folder.path().join("missing.json"), "missing.json").unwrap_err();
        assert!(error.starts_with("cannot read missing.json"), "{error}");

        let latin1 = folder.path().join("latin1.yaml");
        std::fs::write(&latin1, b"name: caf\xe9\n").unwrap();
        let error = read_config(&latin1, "latin1.yaml").unwrap_err();
        assert!(error.contains("byte 10 is not"), "{error}");
    }

    #[test]
    fn a_fifo_is_refused_without_waiting_for_a_writer() {
        let folder = tempfile::tempdir().unwrap();
        let fifo = folder.path().join("pipe.json");
        let path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo reads a NUL-terminated path, which `path` is, and keeps nothing of it.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let error = read_config(&fifo, "pipe.json").unwrap_err();
        assert!(error.contains("not a regular file"), "{error}");
    }
}
