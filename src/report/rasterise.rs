//! PNG charts: each chart's SVG text, rasterised by resvg, so a PNG shows the very text and shapes its SVG does.
//!
//! Text is set in the DejaVu Sans faces compiled into the binary (regular and bold, the two the charts use); no
//! system font is ever loaded, so a PNG is the same on every machine and needs no font library. The font
//! database is parsed once per process.

use std::sync::{Arc, OnceLock};

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg::{self, fontdb};

use super::charts::{DEJAVU_SANS, DEJAVU_SANS_BOLD};

/// The family name inside the bundled font files.
const FAMILY: &str = "DejaVu Sans";

/// The bundled faces, with every generic family (plotters writes `sans-serif`) mapped to them.
fn font_database() -> Arc<fontdb::Database> {
    static DATABASE: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DATABASE
        .get_or_init(|| {
            let mut database = fontdb::Database::new();
            for face in [DEJAVU_SANS, DEJAVU_SANS_BOLD] {
                database.load_font_source(fontdb::Source::Binary(Arc::new(face)));
            }
            database.set_sans_serif_family(FAMILY);
            database.set_serif_family(FAMILY);
            database.set_monospace_family(FAMILY);
            database.set_cursive_family(FAMILY);
            database.set_fantasy_family(FAMILY);
            Arc::new(database)
        })
        .clone()
}

/// Rasterises `svg` at scale 1 into a `width` × `height` PNG, returned as the file's bytes. The same SVG always
/// gives the same bytes.
pub(super) fn svg_to_png(svg: &str, (width, height): (u32, u32)) -> Result<Vec<u8>, String> {
    let options = usvg::Options { font_family: FAMILY.to_owned(), fontdb: font_database(), ..usvg::Options::default() };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| format!("the SVG does not parse: {e}"))?;
    let mut pixmap = Pixmap::new(width, height).ok_or_else(|| format!("cannot allocate a {width}×{height} image"))?;
    resvg::render(&tree, Transform::identity(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| format!("PNG encoding failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `(width, height)` and RGBA pixels of a PNG.
    fn decode(bytes: &[u8]) -> ((u32, u32), Vec<u8>) {
        let pixmap = Pixmap::decode_png(bytes).unwrap();
        ((pixmap.width(), pixmap.height()), pixmap.data().to_vec())
    }

    fn text_svg(attributes: &str) -> String {
        format!(
            "<svg width=\"120\" height=\"40\" viewBox=\"0 0 120 40\" xmlns=\"http://www.w3.org/2000/svg\">\
             <rect x=\"0\" y=\"0\" width=\"120\" height=\"40\" fill=\"#FFFFFF\"/>\
             <text x=\"4\" y=\"28\" font-family=\"sans-serif\" font-size=\"20\" fill=\"#000000\"{attributes}>\n\
             jitter\n</text></svg>"
        )
    }

    fn dark_pixels(pixels: &[u8]) -> usize {
        pixels.chunks(4).filter(|p| p[0] < 128).count()
    }

    #[test]
    fn keeps_the_svg_size_and_draws_its_text() {
        let ((width, height), pixels) = decode(&svg_to_png(&text_svg(""), (120, 40)).unwrap());
        assert_eq!((width, height), (120, 40));
        assert!(dark_pixels(&pixels) > 50, "no text drawn: {} dark pixels", dark_pixels(&pixels));
    }

    #[test]
    fn bold_text_uses_the_bold_face() {
        let (_, regular) = decode(&svg_to_png(&text_svg(""), (120, 40)).unwrap());
        let (_, bold) = decode(&svg_to_png(&text_svg(" font-weight=\"bold\""), (120, 40)).unwrap());
        assert!(
            dark_pixels(&bold) > dark_pixels(&regular) * 5 / 4,
            "bold {} dark pixels, regular {}",
            dark_pixels(&bold),
            dark_pixels(&regular)
        );
    }

    #[test]
    fn only_the_bundled_faces_are_loaded() {
        let families: Vec<String> =
            font_database().faces().flat_map(|face| face.families.iter().map(|(name, _)| name.clone())).collect();
        assert_eq!(families, [FAMILY, FAMILY]);
    }

    #[test]
    fn the_same_svg_gives_the_same_bytes() {
        let svg = text_svg(" font-weight=\"bold\"");
        assert_eq!(svg_to_png(&svg, (120, 40)).unwrap(), svg_to_png(&svg, (120, 40)).unwrap());
    }

    #[test]
    fn a_broken_svg_is_an_error() {
        let error = svg_to_png("<svg", (10, 10)).unwrap_err();
        assert!(error.contains("does not parse"), "{error}");
    }
}
