//! The report as a reader meets it: `concord reproduce --quick --paper baseline --paper cm`
//! writes a page that headless Chromium loads with every figure present and drawn, CM Fig. 4 on
//! a real log axis (ticks 0.25 to 16, not exponents), and a screenshot of it. The table of
//! contents (`id="toc"`) and the verdict summary (`id="verdicts"`) are checked by a test of
//! their own, and ECA Fig. 7's delay axis, a log10 axis labelled 10, 100, 1000, by another.
//!
//! Needs Debian's `chromium` (or `chromium-browser`) on the PATH; without it the test is
//! skipped with a message, unless `CONCORD_REQUIRE_CHROMIUM=1`, when it fails.

use concord_repro::{registry, run_experiments, write_report, Ctx, Experiment, Report};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one Chromium invocation may take before it is killed.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);

fn find_chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|p| p.is_file())
    })
}

/// Runs Chromium headless on `url` with `args`, stdout into `stdout`; kills it after the timeout.
fn chromium(exe: &Path, work: &Path, args: &[String], url: &str, stdout: &Path) {
    let out = std::fs::File::create(stdout).expect("stdout file");
    let err = std::fs::File::create(work.join("chromium.stderr")).expect("stderr file");
    let profile = work.join("profile");
    let mut child = Command::new(exe)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--hide-scrollbars",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .expect("chromium starts");
    #[allow(clippy::disallowed_methods)] // a time limit on a browser, not simulated time
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            assert!(
                status.success(),
                "chromium {args:?} failed with {status}; see {}",
                work.join("chromium.stderr").display()
            );
            return;
        }
        if start.elapsed() > CHROMIUM_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} took longer than {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `(width, height)` from a PNG's header, pixels.
fn png_size(png: &[u8]) -> Option<(u32, u32)> {
    if png.len() < 24 || &png[..8] != b"\x89PNG\r\n\x1a\n" || &png[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&png[16..20]), be(&png[20..24])))
}

fn file_url(p: &Path) -> String {
    format!("file://{}", p.display())
}

#[test]
fn the_report_page_loads_in_chromium_with_every_figure_drawn() {
    let Some(exe) = find_chromium() else {
        if std::env::var("CONCORD_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium is not installed and CONCORD_REQUIRE_CHROMIUM=1; apt-get install chromium");
        }
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let work = work.canonicalize().expect("absolute work dir");
    let dir = work.join("report");

    let out = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args([
            "reproduce",
            "--quick",
            "--paper",
            "baseline",
            "--paper",
            "cm",
        ])
        .args(["--jobs", "2"])
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("concord runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "concord reproduce failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Every figure results.json lists is a complete, non-empty SVG.
    let results: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("results.json")).expect("results.json"),
    )
    .expect("results.json parses");
    let figures: Vec<String> = results["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .flat_map(|e| e["figures"].as_array().cloned().unwrap_or_default())
        .filter_map(|f| f["file"].as_str().map(str::to_string))
        .collect();
    assert!(figures.len() >= 3, "only {} figures", figures.len());
    for f in &figures {
        let svg = std::fs::read_to_string(dir.join("figures").join(f)).expect("figure file");
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>") && svg.len() > 500,
            "{f} is empty or torn ({} bytes)",
            svg.len()
        );
    }

    // CM Fig. 4's x axis is a log axis labelled in probes per RTT, not in exponents.
    let fig4 = std::fs::read_to_string(dir.join("figures").join("cm-fig4-feedback.svg"))
        .expect("CM Fig. 4");
    for tick in ["0.25", "0.5", "1", "2", "4", "8", "16"] {
        assert!(
            fig4.contains(&format!(r#"text-anchor="middle">{tick}</text>"#)),
            "CM Fig. 4 has no x tick {tick}"
        );
    }
    assert!(!fig4.contains(">-2</text>"), "CM Fig. 4 shows exponents");

    // The rendered page references every figure.
    let dom_file = work.join("dom.html");
    chromium(
        &exe,
        &work,
        &["--dump-dom".into()],
        &file_url(&dir.join("index.html")),
        &dom_file,
    );
    let dom = std::fs::read_to_string(&dom_file).expect("dom");
    assert!(dom.contains("concord: reproduced results"), "{dom}");
    for f in &figures {
        assert!(
            dom.contains(&format!("src=\"figures/{f}\"")),
            "{f} is not on the page"
        );
    }

    // Chromium decodes every figure to an image of positive size.
    let mut probe = String::from("<!DOCTYPE html><html><body><ul>\n");
    for f in &figures {
        probe.push_str(&format!(
            "<li><img src=\"report/figures/{f}\" data-figure=\"{f}\" \
             onload=\"this.parentNode.setAttribute('data-drawn', this.naturalWidth + 'x' + this.naturalHeight)\" \
             onerror=\"this.parentNode.setAttribute('data-drawn', 'error')\"></li>\n"
        ));
    }
    probe.push_str("</ul></body></html>\n");
    std::fs::write(work.join("probe.html"), probe).expect("probe page");
    let probe_dom = work.join("probe-dom.html");
    chromium(
        &exe,
        &work,
        &["--dump-dom".into(), "--virtual-time-budget=5000".into()],
        &file_url(&work.join("probe.html")),
        &probe_dom,
    );
    let probed = std::fs::read_to_string(&probe_dom).expect("probe dom");
    for f in &figures {
        let item = probed
            .split("<li")
            .find(|li| li.contains(&format!("data-figure=\"{f}\"")))
            .unwrap_or_else(|| panic!("{f} missing from the probe page"));
        assert!(
            item.contains("data-drawn=\"640x400\""),
            "{f} did not draw as a 640x400 image: {item}"
        );
    }

    // A screenshot of the whole page, for a person to look at.
    let shot = work.join("report.png");
    chromium(
        &exe,
        &work,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1280,4000".into(),
        ],
        &file_url(&dir.join("index.html")),
        &work.join("screenshot.stdout"),
    );
    let png = std::fs::read(&shot).expect("screenshot written");
    assert_eq!(png_size(&png), Some((1280, 4000)), "not a 1280x4000 PNG");
    assert!(
        png.len() > 50_000,
        "the screenshot is nearly blank ({} bytes)",
        png.len()
    );
    eprintln!("screenshot: {}", shot.display());
}

/// The ids a reader navigates by: the table of contents and the verdict summary at the top.
#[test]
fn the_report_page_has_a_table_of_contents_and_a_verdict_summary() {
    let Some(exe) = find_chromium() else {
        if std::env::var("CONCORD_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium is not installed and CONCORD_REQUIRE_CHROMIUM=1; apt-get install chromium");
        }
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser-toc");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let work = work.canonicalize().expect("absolute work dir");
    let dir = work.join("report");
    let out = Command::new(env!("CARGO_BIN_EXE_concord"))
        .args(["reproduce", "--quick", "--paper", "baseline", "--jobs", "2"])
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("concord runs");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom_file = work.join("dom.html");
    chromium(
        &exe,
        &work,
        &["--dump-dom".into()],
        &file_url(&dir.join("index.html")),
        &dom_file,
    );
    let dom = std::fs::read_to_string(&dom_file).expect("dom");
    for id in ["toc", "verdicts"] {
        assert!(
            dom.contains(&format!("id=\"{id}\"")),
            "no element with id {id}"
        );
    }
    // The table of contents links to the section that holds the baseline's rows: concord's own
    // checks (baselines are never counted as paper results).
    assert!(
        dom.contains("href=\"#checks\"") && dom.contains("id=\"checks\""),
        "the table of contents does not link the checks section"
    );
}

/// The x positions of the `<text>` elements of `svg` (as Chromium serialises the document)
/// whose content is exactly `label`.
fn label_positions(svg: &str, label: &str) -> Vec<f64> {
    svg.split("<text ")
        .skip(1)
        .filter(|t| {
            t.split_once('>')
                .is_some_and(|(_, rest)| rest.starts_with(&format!("{label}</text>")))
        })
        .filter_map(|t| {
            let x = t.split("x=\"").nth(1)?.split('"').next()?;
            x.parse().ok()
        })
        .collect()
}

/// ECA Fig. 7's delay axis is a real log axis, as Chromium reads and draws the figure: ticks
/// labelled with the values 10, 100 and 1000 (not exponents), a decade apart at equal
/// distances, with the minor grid line of 20 at log10(2) of a decade past 10.
#[test]
fn a_log_axis_is_labelled_10_a_decade_apart_in_chromium() {
    let Some(exe) = find_chromium() else {
        if std::env::var("CONCORD_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("chromium is not installed and CONCORD_REQUIRE_CHROMIUM=1; apt-get install chromium");
        }
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let work = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser-log");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).expect("work dir");
    let work = work.canonicalize().expect("absolute work dir");
    let dir = work.join("report");
    // The report of the one experiment that draws ECA Fig. 7, written as `reproduce` writes it.
    let experiments: Vec<Experiment> = registry()
        .into_iter()
        .filter(|e| e.id == "eca/delay")
        .collect();
    assert_eq!(
        experiments.len(),
        1,
        "the eca/delay experiment is registered"
    );
    let ctx = Ctx {
        quick: true,
        seed_base: 0,
        replicate: false,
    };
    let outcomes = run_experiments(&experiments, &ctx, 2, &|_, _| {});
    let report = Report::new(true, &experiments, &outcomes);
    write_report(&dir, &report, &outcomes).expect("report written");

    let figure = dir.join("figures").join("eca-fig7-delay.svg");
    let dom_file = work.join("fig7-dom.svg");
    chromium(
        &exe,
        &work,
        &["--dump-dom".into()],
        &file_url(&figure),
        &dom_file,
    );
    let dom = std::fs::read_to_string(&dom_file).expect("dom");
    let at = |label: &str| -> f64 {
        let xs = label_positions(&dom, label);
        assert_eq!(xs.len(), 1, "one x tick labelled {label:?}: {xs:?}");
        xs[0]
    };
    let (x10, x100, x1000) = (at("10"), at("100"), at("1000"));
    let decade = x100 - x10;
    assert!(decade > 50.0, "ticks 10 and 100 are {decade} px apart");
    assert!(
        (x1000 - x100 - decade).abs() < 0.05,
        "10, 100, 1000 at {x10}, {x100}, {x1000}: not a log axis"
    );
    let x20 = x10 + 2f64.log10() * decade;
    assert!(
        dom.contains(&format!("<line x1=\"{x20:.2}\"")),
        "no minor grid line of 20 at x = {x20:.2}"
    );
    // A picture of the figure and of its report, for a person to look at.
    for (url, png, size) in [
        (file_url(&figure), work.join("fig7.png"), "640,400"),
        (
            file_url(&dir.join("index.html")),
            work.join("report.png"),
            "1280,2000",
        ),
    ] {
        chromium(
            &exe,
            &work,
            &[
                format!("--screenshot={}", png.display()),
                format!("--window-size={size}"),
            ],
            &url,
            &work.join("screenshot.stdout"),
        );
        let bytes = std::fs::read(&png).expect("screenshot written");
        assert!(bytes.len() > 10_000, "{} is nearly blank", png.display());
        eprintln!("screenshot: {}", png.display());
    }
}
