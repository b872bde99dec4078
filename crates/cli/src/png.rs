//! SVG figures as PNG images: resvg renders concord's SVG (tiny-skia rasterises it) on white,
//! at [`SCALE`] times the SVG's size, with the machine's fonts (fontdb reads the system's font
//! directories, e.g. /usr/share/fonts; no font is embedded in concord).

use resvg::tiny_skia::{Color, Pixmap, Transform};
use resvg::usvg::{fontdb, Options, Tree};
use std::sync::Arc;

/// Pixels per SVG user unit: a 640x400 figure becomes a 1280x800 image, sharp on a slide or a
/// high-density screen.
pub const SCALE: f32 = 2.0;

/// Families tried, in order, for `sans-serif` when the figures' first choices (Helvetica,
/// Arial) are not installed: metric-compatible with Arial first, then common free fonts.
const SANS_FALLBACKS: [&str; 5] = [
    "Liberation Sans",
    "Arimo",
    "DejaVu Sans",
    "Noto Sans",
    "FreeSans",
];

/// The system's fonts, with `sans-serif` pointing at one that is installed.
pub struct Fonts {
    db: Arc<fontdb::Database>,
}

impl Fonts {
    /// Loads the system's fonts once (for every figure of a run).
    pub fn system() -> Fonts {
        let mut db = fontdb::Database::new();
        db.load_system_fonts();
        let has = |family: &str| {
            db.faces()
                .any(|f| f.families.iter().any(|(name, _)| name == family))
        };
        if !has("Arial") {
            if let Some(family) = SANS_FALLBACKS.iter().find(|f| has(f)) {
                db.set_sans_serif_family(*family);
            }
        }
        Fonts { db: Arc::new(db) }
    }

    /// No font was found: text would not be drawn.
    pub fn is_empty(&self) -> bool {
        self.db.is_empty()
    }
}

/// `svg` rendered to a PNG file's bytes, or what is wrong with the SVG.
pub fn svg_to_png(svg: &str, fonts: &Fonts) -> Result<Vec<u8>, String> {
    let options = Options {
        fontdb: fonts.db.clone(),
        ..Options::default()
    };
    let tree = Tree::from_str(svg, &options).map_err(|e| format!("the SVG does not parse: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(SCALE)
        .ok_or("the figure has no size")?;
    let mut pixmap =
        Pixmap::new(size.width(), size.height()).ok_or("the figure is too large to render")?;
    pixmap.fill(Color::WHITE);
    resvg::render(
        &tree,
        Transform::from_scale(SCALE, SCALE),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("the PNG could not be encoded: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_renders_at_twice_its_size_and_decodes() {
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 40" width="64" height="40">
            <rect x="8" y="8" width="16" height="8" fill="#000000"/></svg>"##;
        let png = svg_to_png(svg, &Fonts::system()).expect("renders");
        let back = Pixmap::decode_png(&png).expect("a PNG");
        assert_eq!((back.width(), back.height()), (128, 80));
        // The background is white, the rectangle black (16..48 x 16..32 at scale 2).
        let at = |x: u32, y: u32| back.pixel(x, y).expect("inside");
        assert_eq!(
            (at(0, 0).red(), at(0, 0).green(), at(0, 0).blue()),
            (255, 255, 255)
        );
        assert_eq!((at(20, 20).red(), at(20, 20).alpha()), (0, 255));
    }

    #[test]
    fn a_broken_svg_is_an_error_not_a_panic() {
        let e = svg_to_png("<svg", &Fonts::system()).expect_err("not an SVG");
        assert!(e.contains("does not parse"), "{e}");
    }
}
