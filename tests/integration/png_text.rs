//! The charts' PNGs read right: tesseract reads back, from PNGs the real binary wrote, every series name of a
//! legend and of the timeline's bold panel labels, spelled as the scenario spells them. plotters' own bitmap text
//! dropped glyphs ("full-jtter"), which this catches. The PNGs also have their SVGs' pixel size, and a slide
//! (`[charts] size = "slide"`, 1920 × 1080) reads as drawn, title included, without enlarging it.
//!
//! The OCR test needs `tesseract` on the PATH. Without it the test prints a note and passes, unless
//! `RETRYLAB_REQUIRE_TESSERACT=1` (set by `.ci/run`, which installs tesseract-ocr), when it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{SMALL, listing, retrylab, write_scenario};

/// The series names in the charts: hyphens and the letters "ji" that ab_glyph ran together or dropped.
const STRATEGIES: [&str; 4] = ["exponential", "full-jitter", "equal-jitter", "decorrelated-jitter"];

/// Tesseract reads the charts' 13 px legend text reliably only when it is larger.
const UPSCALE: usize = 3;

/// The small OCC sweep over the four strategies.
fn scenario_text() -> String {
    let text = SMALL.replace(
        "strategy = [\"exponential\", \"full-jitter\", \"decorrelated-jitter\"]",
        &format!("strategy = {STRATEGIES:?}"),
    );
    assert_ne!(text, SMALL, "the scenario template changed");
    text
}

/// Runs the scenario into `dir/out` and returns the folder.
fn run(dir: &Path) -> PathBuf {
    run_with(dir, "out", &[])
}

/// Runs the scenario into `dir/out` with extra arguments and returns the folder.
fn run_with(dir: &Path, out: &str, extra: &[&str]) -> PathBuf {
    let scenario = write_scenario(dir, "strategies.toml", &scenario_text());
    let out = dir.join(out);
    retrylab()
        .args(["run", scenario.to_str().unwrap(), "--out", out.to_str().unwrap(), "--quiet"])
        .args(extra)
        .assert()
        .success();
    out
}

/// An 8-bit RGB image.
struct Rgb {
    width: usize,
    height: usize,
    pixels: Vec<[u8; 3]>,
}

fn decode(path: &Path) -> Rgb {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap_or_else(|e| panic!("{}: not a PNG: {e}", path.display()));
    let mut bytes = vec![0; reader.output_buffer_size().expect("a PNG small enough to decode")];
    let frame = reader.next_frame(&mut bytes).unwrap_or_else(|e| panic!("{}: undecodable: {e}", path.display()));
    let channels = frame.color_type.samples();
    assert!(channels >= 3 && frame.bit_depth == png::BitDepth::Eight, "{:?} {:?}", frame.color_type, frame.bit_depth);
    let pixels = bytes[..frame.buffer_size()].chunks(channels).map(|p| [p[0], p[1], p[2]]).collect();
    Rgb { width: frame.width as usize, height: frame.height as usize, pixels }
}

/// `image` enlarged `factor` times, each pixel becoming a square of the same colour (no new colours, no blur).
fn upscale(image: &Rgb, factor: usize) -> Rgb {
    let (width, height) = (image.width * factor, image.height * factor);
    let pixels = (0..height)
        .flat_map(|y| (0..width).map(move |x| (x / factor, y / factor)))
        .map(|(x, y)| image.pixels[y * image.width + x])
        .collect();
    Rgb { width, height, pixels }
}

fn encode(image: &Rgb, path: &Path) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut encoder = png::Encoder::new(file, image.width as u32, image.height as u32);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let bytes: Vec<u8> = image.pixels.iter().flatten().copied().collect();
    encoder.write_header().unwrap().write_image_data(&bytes).unwrap();
}

/// Whether `tesseract` runs.
fn tesseract_installed() -> bool {
    Command::new("tesseract")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success())
}

/// The words tesseract reads in `chart` (upscaled `factor` times first, into `scratch`).
fn ocr_words(chart: &Path, scratch: &Path, factor: usize) -> Vec<String> {
    let enlarged = scratch.join(format!("{}-x{factor}.png", chart.file_stem().unwrap().to_string_lossy()));
    encode(&upscale(&decode(chart), factor), &enlarged);
    let output = Command::new("tesseract")
        .arg(&enlarged)
        .args(["stdout", "-l", "eng"])
        // One thread: the machine is shared, and the reading does not depend on it.
        .env("OMP_THREAD_LIMIT", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "tesseract failed on {} ({}):\n{stderr}", enlarged.display(), output.status);
    String::from_utf8_lossy(&output.stdout).split_whitespace().map(str::to_owned).collect()
}

#[test]
fn pngs_have_the_pixel_size_of_their_svgs() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path());
    let pngs: Vec<String> = listing(&out).into_iter().filter(|name| name.ends_with(".png")).collect();
    assert_eq!(
        pngs,
        ["calls.png", "completion_ms.png", "retry_dispersion.png", "retry_peak_to_mean.png", "timeline.png"]
    );
    for name in &pngs {
        let svg = std::fs::read_to_string(out.join(name).with_extension("svg")).unwrap();
        let attribute = |key: &str| -> usize {
            let start = svg.find(&format!(" {key}=\"")).unwrap() + key.len() + 3;
            svg[start..start + svg[start..].find('"').unwrap()].parse().unwrap()
        };
        let png = decode(&out.join(name));
        assert_eq!((png.width, png.height), (attribute("width"), attribute("height")), "{name}");
    }
}

/// Whether the OCR tests can run: tesseract is installed, or it is missing and not required (a note, then skip).
fn can_read() -> bool {
    if tesseract_installed() {
        return true;
    }
    if std::env::var("RETRYLAB_REQUIRE_TESSERACT").is_ok_and(|value| value == "1") {
        panic!("RETRYLAB_REQUIRE_TESSERACT=1 but tesseract is not on the PATH (.ci/run installs it)");
    }
    println!("skipped: tesseract not installed (.ci/run installs it)");
    false
}

#[test]
fn ocr_reads_every_series_name_in_the_legend_and_panel_labels() {
    if !can_read() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path());
    // calls.png: the names in the legend, regular weight; timeline.png: one bold label per panel.
    for chart in ["calls.png", "timeline.png"] {
        let words = ocr_words(&out.join(chart), dir.path(), UPSCALE);
        let missing: Vec<&str> = STRATEGIES.into_iter().filter(|name| !words.iter().any(|word| word == name)).collect();
        assert!(missing.is_empty(), "{chart}: OCR did not read {missing:?}; it read: {}", words.join(" "));
    }
}

#[test]
fn ocr_reads_a_slide_as_it_is_drawn_its_title_and_every_series_name() {
    if !can_read() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let title = "Jitter spreads retries";
    let out =
        run_with(dir.path(), "slide", &["--set", "charts.size=slide", "--set", &format!("charts.title=\"{title}\"")]);
    // 1920 × 1080, text large enough to read without enlarging it.
    for chart in ["calls.png", "timeline.png"] {
        let image = decode(&out.join(chart));
        assert_eq!((image.width, image.height), (1920, 1080), "{chart}");
        let words = ocr_words(&out.join(chart), dir.path(), 1);
        let missing: Vec<&str> = STRATEGIES
            .into_iter()
            .chain(title.split(' '))
            .filter(|name| !words.iter().any(|word| word == name))
            .collect();
        assert!(missing.is_empty(), "{chart}: OCR did not read {missing:?}; it read: {}", words.join(" "));
    }
}
