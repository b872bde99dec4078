//! The committed expectations (`crates/repro/expectations/quick.json`, what CI's
//! `concord reproduce --quick --check` compares with) are well formed, and every paper result
//! they record as not reproduced or paper inconsistent has its analysis in docs/analysis.md.

use concord_repro::claim::{slug, Verdict};
use concord_repro::report::Expectations;

const QUICK: &str = include_str!("../expectations/quick.json");
const ANALYSIS: &str = include_str!("../../../docs/analysis.md");

#[test]
fn the_quick_expectations_name_known_verdicts_for_the_quick_setting() {
    let e: Expectations = serde_json::from_str(QUICK).expect("quick.json parses");
    assert!(e.quick);
    assert_eq!(e.seed_base, 0, "the expectations are those of the default seeds");
    assert!(e.verdicts.len() > 100, "{} claims", e.verdicts.len());
    for (id, v) in &e.verdicts {
        assert!(Verdict::from_key(v).is_some(), "{id}: {v}");
        let experiment = id.rsplit_once('/').map_or("", |(e, _)| e);
        assert!(
            concord_repro::registry().iter().any(|x| x.id == experiment),
            "{id}: no experiment {experiment}"
        );
    }
}

#[test]
fn every_row_that_does_not_reproduce_has_its_analysis() {
    let e: Expectations = serde_json::from_str(QUICK).expect("quick.json parses");
    let missing: Vec<&String> = e
        .verdicts
        .iter()
        .filter(|(_, v)| {
            matches!(
                Verdict::from_key(v),
                Some(Verdict::NotReproduced | Verdict::PaperInconsistent)
            )
        })
        .map(|(id, _)| id)
        .filter(|id| !ANALYSIS.contains(&format!("<a id=\"{}\"></a>", slug(id))))
        .collect();
    assert!(
        missing.is_empty(),
        "write an analysis in docs/analysis.md for: {missing:#?}"
    );
    assert!(ANALYSIS.contains("<a id=\"seed-dependent-rows\"></a>"));
}
