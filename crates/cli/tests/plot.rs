//! `concord plot DIR --format png`: the standard plots as PNG images that decode, at twice the
//! SVG figures' size.

use resvg::tiny_skia::Pixmap;

mod common;

/// A run with every plotted table: goodput, queues, delays and a cwnd trace.
const RUN: &str = r#"duration = "2s"
seed = 1

[topology]
kind = "dumbbell"
pairs = 2
bottleneck = { rate = "10Mbps", delay = "10ms" }
access = { rate = "1Gbps", delay = "1ms" }

[[flow]]
name = "f{i}"
kind = "tcp"
from = "s{i}"
to = "d{i}"
count = 2

[record]
cwnd = ["f1"]
"#;

#[test]
fn png_plots_decode_at_twice_the_svg_size() {
    let dir = common::temp("plot", "png");
    let scenario = dir.join("run.toml");
    std::fs::write(&scenario, RUN).expect("write");
    let out = dir.join("out");
    let run = common::concord(&[
        "run",
        &scenario.display().to_string(),
        "--out",
        &out.display().to_string(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    let svg = common::concord(&["plot", &out.display().to_string()]);
    assert!(svg.status.success());
    let png = common::concord(&["plot", &out.display().to_string(), "--format", "png"]);
    assert!(
        png.status.success(),
        "{}",
        String::from_utf8_lossy(&png.stderr)
    );
    let listed = String::from_utf8_lossy(&png.stdout).into_owned();
    for stem in ["goodput", "cwnd", "queue", "delay-cdf"] {
        let path = out.join("plots").join(format!("{stem}.png"));
        assert!(listed.contains(&path.display().to_string()), "{listed}");
        let image =
            Pixmap::decode_png(&std::fs::read(&path).expect("png written")).expect("decodes");
        // The figures are 640x400 SVG user units (the `width`/`height` of the SVG).
        let svg_text = std::fs::read_to_string(out.join("plots").join(format!("{stem}.svg")))
            .expect("svg written");
        let attr = |name: &str| -> u32 {
            let at = svg_text.find(&format!(" {name}=\"")).expect("attribute") + name.len() + 3;
            svg_text[at..]
                .split('"')
                .next()
                .expect("value")
                .parse()
                .expect("number")
        };
        assert_eq!(
            (image.width(), image.height()),
            (2 * attr("width"), 2 * attr("height")),
            "{stem}"
        );
        // Something is drawn on the white background.
        let dark = image
            .pixels()
            .iter()
            .filter(|p| p.red() < 128 && p.alpha() == 255)
            .count();
        assert!(dark > 1000, "{stem}: {dark} dark pixels");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_format_is_refused_naming_the_choices() {
    let out = common::concord(&["plot", ".", "--format", "gif"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("svg") && err.contains("png"), "{err}");
}
