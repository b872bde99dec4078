//! The reproduce pipeline end to end on the baseline experiments.

use concord_repro::{registry, run_experiments, write_report, Ctx, Paper, Report};
use std::path::PathBuf;

mod common;

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("concord-repro-{}-{name}", std::process::id()))
}

fn run_baseline() -> (
    Vec<concord_repro::Experiment>,
    Vec<Result<concord_repro::Outcome, concord_repro::ReproError>>,
) {
    let exps: Vec<_> = registry()
        .into_iter()
        .filter(|e| e.paper == Paper::Baseline)
        .collect();
    let ctx = Ctx {
        quick: true,
        ..Ctx::default()
    };
    let outcomes = run_experiments(&exps, &ctx, 2, &|_, _| {});
    (exps, outcomes)
}

#[test]
fn the_baseline_report_is_complete_and_repeatable_and_its_claims_are_checks_with_ids() {
    let (exps, outcomes) = run_baseline();
    let report = Report::new(true, &exps, &outcomes);
    assert!(report.claims.len() >= 7, "{} claims", report.claims.len());
    let mut ids: Vec<&str> = report.claims.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), report.claims.len(), "claim ids are unique");
    for c in &report.claims {
        assert!(c.id.starts_with(&format!("{}/", c.experiment)), "{}", c.id);
        assert_eq!(
            c.kind,
            concord_repro::claim::Kind::Check,
            "a baseline is concord's check, never a paper result: {}",
            c.id
        );
    }
    assert_eq!(report.paper_claims().count(), 0);
    common::assert_well_formed(&report.claims);
    // The random loss draws from the seed: one Padhye ratio per seed at each loss rate.
    common::assert_over_quick_seeds(&report.claims, "random loss p =", 3);
    let dir = temp("a");
    write_report(&dir, &report, &outcomes).expect("report written");
    let html = std::fs::read_to_string(dir.join("index.html")).expect("index.html");
    for e in &report.experiments {
        assert!(e.error.is_none(), "{}: {:?}", e.id, e.error);
        for f in &e.figures {
            let svg =
                std::fs::read_to_string(dir.join("figures").join(&f.file)).expect("figure file");
            assert!(
                svg.starts_with("<svg") && svg.len() > 500,
                "{} is empty",
                f.file
            );
            assert!(
                html.contains(&format!("figures/{}", f.file)),
                "{} not on the page",
                f.file
            );
        }
    }
    // A second run gives byte-identical results.json and raw tables.
    let (exps2, outcomes2) = run_baseline();
    let dir2 = temp("b");
    write_report(&dir2, &Report::new(true, &exps2, &outcomes2), &outcomes2)
        .expect("report written");
    for f in ["results.json", "index.html"] {
        assert_eq!(
            std::fs::read(dir.join(f)).ok(),
            std::fs::read(dir2.join(f)).ok(),
            "{f} differs between runs"
        );
    }
    // The Markdown opens with the counts, then lists every check in the checks table.
    let md = concord_repro::report::render_markdown(&report);
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| baseline |")).count(),
        report.claims.len()
    );
    assert!(md.starts_with("Quick setting, seed base 0"), "{md}");
    assert!(md.contains("- Paper results: none (0 claims)."), "{md}");
    let held = report.claims.iter().filter(|c| c.holds()).count();
    assert!(
        md.contains(&format!(
            "not paper results): {held} of {} hold.",
            report.claims.len()
        )),
        "{md}"
    );
    // Re-rendering from results.json reproduces the page.
    std::fs::remove_file(dir.join("index.html")).expect("remove");
    concord_repro::report::rerender(&dir).expect("rerender");
    assert_eq!(
        std::fs::read_to_string(dir.join("index.html")).ok(),
        Some(html)
    );
}

#[test]
fn writing_a_report_over_an_old_one_replaces_it_whole() {
    let dir = temp("replace");
    std::fs::create_dir_all(dir.join("figures")).expect("dir");
    std::fs::write(dir.join("figures").join("stale.svg"), "old").expect("write");
    std::fs::write(dir.join("results.json"), "{}").expect("write");
    let report = Report {
        concord_version: "x".into(),
        quick: true,
        seed_base: 0,
        claims: vec![],
        experiments: vec![],
    };
    write_report(&dir, &report, &[]).expect("written");
    assert!(
        !dir.join("figures").join("stale.svg").exists(),
        "an old figure survived"
    );
    assert!(dir.join("results.json").exists());
    let leftovers: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .expect("list")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains(&format!("concord-repro-{}-replace.tmp", std::process::id()))
        })
        .collect();
    assert!(leftovers.is_empty(), "temporary directories left behind");
}

#[test]
fn a_directory_that_is_not_a_report_is_never_replaced() {
    let dir = temp("not-a-report");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("precious.txt"), "keep me").expect("write");
    let report = Report {
        concord_version: "x".into(),
        quick: true,
        seed_base: 0,
        claims: vec![],
        experiments: vec![],
    };
    let err = write_report(&dir, &report, &[]).expect_err("refused");
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(
        std::fs::read_to_string(dir.join("precious.txt"))
            .ok()
            .as_deref(),
        Some("keep me")
    );
    assert!(!dir.join("results.json").exists());
}
