//! The suite's output: `results.json` (everything), `results.csv` (one row per case),
//! `results.md` (the table), `figures/*.svg` (concord against ns-3, one point per case) and
//! `index.html` (the table and figures on one page).

use crate::compare::{Summary, GOODPUT_UNDER_LOSS, JAIN_DIFFERENCE, UTILISATION_POINTS};
use crate::suite::{CaseResult, Verdict};
use concord_repro::plot::{Plot, Style};
use std::fmt::Write as _;
use std::path::Path;

/// CSV columns, in order.
pub const CSV_HEADER: &str = "case,group,flows,rate_bps,rtt_s,queue,loss,duration_s,seeds,\
concord_utilisation,ns3_utilisation,concord_jain,ns3_jain,concord_goodput_bps,ns3_goodput_bps,\
concord_drops,ns3_drops,concord_marks,ns3_marks,concord_timeouts,ns3_timeouts,\
concord_fast_retransmits,ns3_fast_retransmits,ns3_spurious_fast_retransmits,concord_cwnd_mean_segments,ns3_cwnd_mean_segments,\
concord_cwnd_cv,ns3_cwnd_cv,concord_cwnd_max_segments,ns3_cwnd_max_segments,verdict,outside,cause";

fn num(x: Option<f64>) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.6}"),
        Some(_) => "nan".into(),
        None => String::new(),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The failing metrics of a case, `utilisation;jain`.
pub fn outside(r: &CaseResult) -> String {
    r.checks
        .iter()
        .filter(|c| !c.pass)
        .map(|c| c.metric.name())
        .collect::<Vec<_>>()
        .join(";")
}

/// One row per case.
pub fn csv(results: &[CaseResult]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in results {
        let pair = |f: &dyn Fn(&Summary) -> f64| {
            format!(
                "{},{}",
                num(r.concord.as_ref().map(f)),
                num(r.ns3.as_ref().map(f))
            )
        };
        let seeds: Vec<String> = r.seeds.iter().map(u64::to_string).collect();
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(&r.id),
            csv_field(&r.group),
            r.flows,
            r.rate_bps,
            r.rtt_s,
            r.queue,
            r.loss,
            r.duration_s,
            seeds.join(" "),
            pair(&|x| x.utilisation),
            pair(&|x| x.jain),
            pair(&|x| x.goodput_bps),
            pair(&|x| x.drops),
            pair(&|x| x.marks),
            pair(&|x| x.timeouts),
            pair(&|x| x.fast_retransmits),
            num(r.ns3.as_ref().and_then(|x| x.spurious_fast_retransmits)),
            pair(&|x| x.cwnd_mean),
            pair(&|x| x.cwnd_cv),
            pair(&|x| x.cwnd_max),
            r.verdict.word(),
            outside(r),
            csv_field(&r.cause),
        );
    }
    s
}

/// Fast retransmits per run, with the spurious ones where measured: `90.0 (88.0 spurious)`.
fn fast_retransmits(x: &Summary) -> String {
    match x.spurious_fast_retransmits {
        Some(s) => format!("{} ({} spurious)", f1(x.fast_retransmits), f1(s)),
        None => f1(x.fast_retransmits),
    }
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", x * 100.0)
    } else {
        "-".into()
    }
}

fn f3(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "-".into()
    }
}

fn f1(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.1}")
    } else {
        "-".into()
    }
}

/// A run's figures as the tables give them: utilisation % / Jain / goodput Mbit/s / timeouts.
fn run_figures(x: &Summary) -> String {
    format!(
        "{} / {} / {} / {}",
        pct(x.utilisation),
        f3(x.jain),
        f3(x.goodput_bps / 1e6),
        f1(x.timeouts)
    )
}

/// The counts of verdicts: (within, outside, errors, not compared).
pub fn tally(results: &[CaseResult]) -> (usize, usize, usize, usize) {
    let n = |v: Verdict| results.iter().filter(|r| r.verdict == v).count();
    (
        n(Verdict::Within),
        n(Verdict::Outside),
        n(Verdict::Error),
        n(Verdict::NotCompared),
    )
}

/// The diagnosed cases by symptom, in the order their first case appears.
pub fn diagnosis_groups(results: &[CaseResult]) -> Vec<(String, Vec<&CaseResult>)> {
    let mut groups: Vec<(String, Vec<&CaseResult>)> = Vec::new();
    for r in results.iter().filter(|r| !r.symptom.is_empty()) {
        match groups.iter_mut().find(|(k, _)| *k == r.symptom) {
            Some((_, m)) => m.push(r),
            None => groups.push((r.symptom.clone(), vec![r])),
        }
    }
    groups
}

/// The cases outside a target by their diagnosis: (explained by one switch, partly, neither).
/// The rows of concord run with ns-3 3.44's departures from the RFCs (`tcp.ns3_departures`; a
/// deviation of concord, run in the diagnosis) against ns-3 as shipped, the reference rows
/// unchanged beside them.
fn departures_table(s: &mut String, results: &[CaseResult]) {
    let rows: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.concord_departures.is_some())
        .collect();
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nconcord ns-3-departures: concord with ns-3 3.44's departures from the RFCs (`tcp.ns3_departures = [{}]`, a deviation of concord) against ns-3 as shipped, on the cases outside a target; the reference verdict stays concord's own. Utilisation % / Jain / goodput Mbit/s / timeouts:\n",
        crate::concord_run::DEPARTURES
            .iter()
            .map(|d| format!("\"{d}\""))
            .collect::<Vec<_>>()
            .join(", ")
    );
    s.push_str("| case | concord | concord ns-3-departures | ns-3 | concord ns-3-departures against ns-3 |\n|---|---|---|---|---|\n");
    let fig = run_figures;
    for r in rows {
        let failing: Vec<&str> = r
            .departures_checks
            .iter()
            .filter(|c| !c.pass)
            .map(|c| c.metric.name())
            .collect();
        let verdict = match r.departures_verdict {
            Verdict::Outside => format!("**outside** ({})", failing.join("; ")),
            ref v => v.word().to_string(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} |",
            r.id,
            r.concord.as_ref().map_or("-".into(), fig),
            r.concord_departures.as_ref().map_or("-".into(), fig),
            r.ns3.as_ref().map_or("-".into(), fig),
            verdict
        );
    }
}

pub fn diagnosis_tally(results: &[CaseResult]) -> (usize, usize, usize) {
    let outside: Vec<&CaseResult> = results
        .iter()
        .filter(|r| r.verdict == Verdict::Outside)
        .collect();
    let e = outside
        .iter()
        .filter(|r| r.cause.starts_with("explained"))
        .count();
    let p = outside
        .iter()
        .filter(|r| r.cause.starts_with("partly"))
        .count();
    (e, p, outside.len() - e - p)
}

/// What a seeds cell marked "(1 run)" means, said above the table.
pub const ONE_RUN_NOTE: &str = "Seeds: how many seeds the means are over; \"3 (1 run)\" marks a case whose seeds all gave the same concord run (the same window sequences, whichever flow carries them): the seed only moved when the flows started, the DropTail bottleneck absorbed it, and the concord mean is one run's figures, cut at different points by the fixed end. results.json gives every case's distinct concord runs (`concord_runs`) and which seeds gave the same run (`concord_seed_runs`).";

/// The seeds cell: their number, marked "(1 run)" when several seeds gave one concord run.
pub fn seeds(r: &CaseResult) -> String {
    match r.concord_runs {
        Some(1) if r.seeds.len() > 1 => format!("{} (1 run)", r.seeds.len()),
        _ => r.seeds.len().to_string(),
    }
}

/// The table in Markdown: each cell "concord / ns-3".
pub fn markdown(results: &[CaseResult]) -> String {
    let (within, out, err, nc) = tally(results);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Targets (fixed before any result was seen): utilisation within {:.0} points, Jain's index within {}, total goodput under random loss within {:.0}% of ns-3's. Each cell: concord / ns-3, means over the seeds.\n",
        UTILISATION_POINTS * 100.0,
        JAIN_DIFFERENCE,
        GOODPUT_UNDER_LOSS * 100.0
    );
    let _ = writeln!(
        s,
        "{} cases: {within} within the targets, {out} outside, {err} errors, {nc} not compared.\n",
        results.len()
    );
    let _ = writeln!(s, "{ONE_RUN_NOTE}\n");
    s.push_str("| case | seeds | utilisation % | Jain | goodput Mbit/s | drops | timeouts | fast retransmits | cwnd mean (segments) | cwnd CV | verdict | cause (measured) |\n");
    s.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in results {
        let cell = |f: &dyn Fn(&Summary) -> String| {
            let c = r.concord.as_ref().map_or("-".into(), f);
            let n = r.ns3.as_ref().map_or("-".into(), f);
            format!("{c} / {n}")
        };
        let verdict = match r.verdict {
            Verdict::Outside => format!("**outside** ({})", outside(r)),
            Verdict::Error => format!("error: {}", r.errors.join("; ").replace('|', "/")),
            ref v => v.word().to_string(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.id,
            seeds(r),
            cell(&|x| pct(x.utilisation)),
            cell(&|x| f3(x.jain)),
            cell(&|x| f3(x.goodput_bps / 1e6)),
            cell(&|x| f1(x.drops)),
            cell(&|x| f1(x.timeouts)),
            cell(&|x| fast_retransmits(x)),
            cell(&|x| f1(x.cwnd_mean)),
            cell(&|x| f3(x.cwnd_cv)),
            verdict,
            r.cause
        );
    }
    let groups = diagnosis_groups(results);
    if !groups.is_empty() {
        let (explained, partly, not) = diagnosis_tally(results);
        let _ = writeln!(
            s,
            "\nDiagnosis of the {out} cases outside: {explained} explained by one ns-3 switch, {partly} partly, {not} not diagnosed. By symptom group (every switch on the representative, then the switches that explain it, or its partial cause, in turn on each other case of the group until one explains it):\n"
        );
        s.push_str("| symptom | cases | representative | switches tried on it | its cause | the group's cases explained / partly / not |\n|---|---|---|---|---|---|\n");
        for (symptom, members) in &groups {
            let rep = members
                .iter()
                .find(|r| r.representative == r.id)
                .unwrap_or(&members[0]);
            let count = |p: &str| members.iter().filter(|r| r.cause.starts_with(p)).count();
            let e = count("explained");
            let p = count("partly");
            let _ = writeln!(
                s,
                "| {} | {} | `{}` | {} | {} | {e} / {p} / {} |",
                symptom,
                members.len(),
                rep.id,
                crate::suite::tried(rep),
                rep.cause,
                members.len() - e - p
            );
        }
    }
    let diagnosed: Vec<&CaseResult> = results.iter().filter(|r| !r.variants.is_empty()).collect();
    if !diagnosed.is_empty() {
        s.push_str("\nns-3 variants run for the cases outside a target (one mechanism switched each; utilisation % / Jain / goodput Mbit/s / timeouts):\n\n");
        s.push_str("| case | concord | ns-3 | variants |\n|---|---|---|---|\n");
        let fig = run_figures;
        for r in diagnosed {
            let vs: Vec<String> = r
                .variants
                .iter()
                .map(|v| format!("{}: {}", v.source.trim_start_matches("ns-3 "), fig(v)))
                .collect();
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} |",
                r.id,
                r.concord.as_ref().map_or("-".into(), fig),
                r.ns3.as_ref().map_or("-".into(), fig),
                vs.join("<br>")
            );
        }
    }
    departures_table(&mut s, results);
    let on_linux: Vec<&CaseResult> = results.iter().filter(|r| !r.linux.is_empty()).collect();
    if !on_linux.is_empty() {
        s.push_str("\nLinux kernel TCP on the namespace test bed (one real-time run each; kernel defaults: SACK, timestamps, PRR, RACK; the window is not sampled). Same targets, concord against the kernel; utilisation % / Jain / goodput Mbit/s / timeouts / drops:\n\n");
        s.push_str("| case | concord | kernel | verdict |\n|---|---|---|---|\n");
        let fig = |x: &Summary| format!("{} / {}", run_figures(x), f1(x.drops));
        for r in on_linux {
            for l in &r.linux {
                let failing: Vec<&str> = l
                    .checks
                    .iter()
                    .filter(|c| !c.pass)
                    .map(|c| c.metric.name())
                    .collect();
                let verdict = match l.verdict {
                    Verdict::Outside => format!("**outside** ({})", failing.join(";")),
                    Verdict::Error => format!("error: {}", l.error.replace('|', "/")),
                    ref v => v.word().to_string(),
                };
                let _ = writeln!(
                    s,
                    "| `{}` | {} | {} {} | {} |",
                    r.id,
                    r.concord.as_ref().map_or("-".into(), fig),
                    l.cc,
                    l.summary.as_ref().map_or("-".into(), fig),
                    verdict
                );
            }
        }
    }
    s
}

/// concord against ns-3 for one metric, one point per compared case, with y = x and the
/// target band drawn as lines.
fn scatter(
    results: &[CaseResult],
    title: &str,
    label: &str,
    f: &dyn Fn(&Summary) -> f64,
    band: Option<(f64, bool)>,
) -> String {
    let mut within = Vec::new();
    let mut outside_pts = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in results {
        let (Some(c), Some(n)) = (&r.concord, &r.ns3) else {
            continue;
        };
        let (x, y) = (f(n), f(c));
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        lo = lo.min(x).min(y);
        hi = hi.max(x).max(y);
        if r.verdict == Verdict::Within {
            within.push((x, y));
        } else {
            outside_pts.push((x, y));
        }
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    let mut p = Plot::new(
        title,
        &format!("ns-3: {label}"),
        &format!("concord: {label}"),
    )
    .series("within targets", Style::Points, within)
    .series("outside", Style::Points, outside_pts)
    .series("y = x", Style::Line, vec![(lo, lo), (hi, hi)]);
    if let Some((w, relative)) = band {
        let (a, b) = if relative {
            ((lo, lo * (1.0 + w)), (hi, hi * (1.0 + w)))
        } else {
            ((lo, lo + w), (hi, hi + w))
        };
        let (c, d) = if relative {
            ((lo, lo * (1.0 - w)), (hi, hi * (1.0 - w)))
        } else {
            ((lo, lo - w), (hi, hi - w))
        };
        p = p.series("target band", Style::Line, vec![a, b]).series(
            "target band ",
            Style::Line,
            vec![c, d],
        );
    }
    p.to_svg()
}

/// The figures, by file stem.
pub fn figures(results: &[CaseResult]) -> Vec<(String, String)> {
    let lossy: Vec<CaseResult> = results.iter().filter(|r| r.loss > 0.0).cloned().collect();
    vec![
        (
            "utilisation".into(),
            scatter(
                results,
                "Bottleneck utilisation, concord vs ns-3",
                "utilisation",
                &|s| s.utilisation,
                Some((UTILISATION_POINTS, false)),
            ),
        ),
        (
            "jain".into(),
            scatter(
                results,
                "Jain's index, concord vs ns-3",
                "Jain's index",
                &|s| s.jain,
                Some((JAIN_DIFFERENCE, false)),
            ),
        ),
        (
            "goodput-loss".into(),
            scatter(
                &lossy,
                "Total goodput under random loss, concord vs ns-3",
                "goodput (Mbit/s)",
                &|s| s.goodput_bps / 1e6,
                Some((GOODPUT_UNDER_LOSS, true)),
            ),
        ),
        (
            "timeouts".into(),
            scatter(
                results,
                "Retransmission timeouts per run, concord vs ns-3",
                "timeouts",
                &|s| s.timeouts,
                None,
            ),
        ),
        (
            "cwnd".into(),
            scatter(
                results,
                "Mean congestion window, concord vs ns-3",
                "cwnd (segments)",
                &|s| s.cwnd_mean,
                None,
            ),
        ),
    ]
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A page with the table (as preformatted Markdown-free HTML) and the figures.
pub fn html(results: &[CaseResult], figures: &[(String, String)]) -> String {
    let (within, out, err, nc) = tally(results);
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>concord validate</title>\n<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child{text-align:left}.outside{background:#fde2d4}.error{background:#f6c}</style></head><body>\n");
    let _ = writeln!(s, "<h1>concord against ns-3 3.44</h1>\n<p>{} cases: {within} within the targets, {out} outside, {err} errors, {nc} not compared. Targets: utilisation within {:.0} points, Jain within {}, goodput under random loss within {:.0}%. Each cell: concord / ns-3.</p>\n<p>{}</p>", results.len(), UTILISATION_POINTS * 100.0, JAIN_DIFFERENCE, GOODPUT_UNDER_LOSS * 100.0, html_escape(ONE_RUN_NOTE));
    s.push_str("<table><tr><th>case</th><th>seeds</th><th>utilisation %</th><th>Jain</th><th>goodput Mbit/s</th><th>drops</th><th>timeouts</th><th>cwnd mean</th><th>verdict</th><th>cause</th></tr>\n");
    for r in results {
        let cell = |f: &dyn Fn(&Summary) -> String| {
            format!(
                "{} / {}",
                r.concord.as_ref().map_or("-".into(), f),
                r.ns3.as_ref().map_or("-".into(), f)
            )
        };
        let class = match r.verdict {
            Verdict::Outside => " class=\"outside\"",
            Verdict::Error => " class=\"error\"",
            _ => "",
        };
        let _ = writeln!(
            s,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} {}</td><td>{}</td></tr>",
            html_escape(&r.id),
            seeds(r),
            cell(&|x| pct(x.utilisation)),
            cell(&|x| f3(x.jain)),
            cell(&|x| f3(x.goodput_bps / 1e6)),
            cell(&|x| f1(x.drops)),
            cell(&|x| f1(x.timeouts)),
            cell(&|x| f1(x.cwnd_mean)),
            r.verdict.word(),
            html_escape(&outside(r)),
            html_escape(&r.cause)
        );
    }
    s.push_str("</table>\n");
    for (stem, _) in figures {
        let _ = writeln!(s, "<p><img src=\"figures/{stem}.svg\" alt=\"{stem}\"></p>");
    }
    s.push_str("</body></html>\n");
    s
}

/// Writes every output into `dir`.
pub fn write(dir: &Path, results: &[CaseResult]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("figures"))?;
    let json = serde_json::to_string_pretty(results).map_err(std::io::Error::other)?;
    std::fs::write(dir.join("results.json"), json)?;
    std::fs::write(dir.join("results.csv"), csv(results))?;
    std::fs::write(dir.join("results.md"), markdown(results))?;
    let figs = figures(results);
    for (stem, svg) in &figs {
        std::fs::write(dir.join("figures").join(format!("{stem}.svg")), svg)?;
    }
    std::fs::write(dir.join("index.html"), html(results, &figs))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::{checks, summarise};
    use crate::grid::parse;
    use crate::measurement::Measurement;

    fn result(util_c: f64, util_n: f64) -> CaseResult {
        let case = parse("[[case]]\ntopology = \"dumbbell\"\nflows = 2\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\n", "g")
            .expect("valid")
            .remove(0);
        let m = |source: &str, u: f64| Measurement {
            source: source.into(),
            seed: 1,
            goodput_bps: vec![4e6, 5e6],
            utilisation: u,
            drops: 3,
            marks: 0,
            wire_losses: 0,
            timeouts: 1,
            fast_retransmits: 2,
            spurious_fast_retransmits: None,
            cwnd_mean: 12.5,
            cwnd_cv: 0.25,
            cwnd_max: 30.0,
            windows: Default::default(),
        };
        let c = summarise(&[m("concord", util_c)]).expect("c");
        let n = summarise(&[m("ns-3", util_n)]).expect("n");
        let k = checks(&case, &c, &n);
        let verdict = if k.iter().all(|x| x.pass) {
            Verdict::Within
        } else {
            Verdict::Outside
        };
        CaseResult {
            id: case.id.clone(),
            group: case.group.clone(),
            note: String::new(),
            flows: 2,
            rate_bps: 10_000_000,
            rtt_s: 0.02,
            queue: "droptail".into(),
            loss: 0.0,
            duration_s: 30.0,
            seeds: vec![1],
            concord_runs: Some(1),
            concord_seed_runs: "1".into(),
            concord: Some(c),
            ns3: Some(n),
            variants: Vec::new(),
            checks: k,
            verdict,
            concord_departures: None,
            departures_checks: Vec::new(),
            departures_verdict: Verdict::NotCompared,
            cause: String::new(),
            symptom: String::new(),
            representative: String::new(),
            errors: Vec::new(),
            linux: Vec::new(),
            runs: Vec::new(),
        }
    }

    #[test]
    fn a_case_whose_seeds_gave_one_run_is_marked_in_every_table() {
        let mut one = result(90.0 / 100.0, 91.0 / 100.0);
        one.seeds = vec![1, 2, 3];
        one.concord_runs = Some(1);
        one.concord_seed_runs = "1=2=3".into();
        let mut three = one.clone();
        three.id = "three-runs".into();
        three.concord_runs = Some(3);
        three.concord_seed_runs = "1 2 3".into();
        let mut alone = one.clone();
        alone.id = "one-seed".into();
        alone.seeds = vec![1];
        let mut failed = one.clone();
        failed.id = "not-counted".into();
        failed.concord_runs = None;
        let all = [one, three, alone, failed];
        let cells: Vec<String> = all.iter().map(seeds).collect();
        assert_eq!(cells, ["3 (1 run)", "3", "1", "3"]);
        let md = markdown(&all);
        assert!(md.contains(ONE_RUN_NOTE), "{md}");
        assert!(
            md.contains("| `dumbbell-2f-10Mbps-20ms-droptail` | 3 (1 run) | 90.0 / 91.0 |"),
            "{md}"
        );
        assert!(md.contains("| `three-runs` | 3 | 90.0 / 91.0 |"), "{md}");
        let page = html(&all, &[]);
        assert!(
            page.contains("<td>dumbbell-2f-10Mbps-20ms-droptail</td><td>3 (1 run)</td>"),
            "{page}"
        );
        assert!(page.contains("<th>case</th><th>seeds</th>"), "{page}");
        let json = serde_json::to_value(&all[0]).expect("serialises");
        assert_eq!(json["concord_runs"], 1);
        assert_eq!(json["concord_seed_runs"], "1=2=3");
    }

    #[test]
    fn a_csv_row_carries_both_simulators_figures_and_the_verdict() {
        let text = csv(&[result(0.9, 0.95)]);
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().expect("header").split(',').collect();
        let row: Vec<&str> = lines.next().expect("row").split(',').collect();
        assert_eq!(header.len(), row.len());
        let col = |name: &str| row[header.iter().position(|h| *h == name).expect(name)];
        assert_eq!(col("case"), "dumbbell-2f-10Mbps-20ms-droptail");
        assert_eq!(col("concord_utilisation"), "0.900000");
        assert_eq!(col("ns3_utilisation"), "0.950000");
        assert_eq!(col("verdict"), "outside");
        assert_eq!(col("outside"), "utilisation");
        assert_eq!(col("concord_goodput_bps"), "9000000.000000");
    }

    #[test]
    fn ns3s_spurious_fast_retransmits_are_shown_beside_its_fast_retransmits() {
        let mut r = result(0.9, 0.95);
        if let Some(n) = r.ns3.as_mut() {
            n.fast_retransmits = 90.0;
            n.spurious_fast_retransmits = Some(88.0);
        }
        let md = markdown(&[r.clone()]);
        assert!(md.contains("| 2.0 / 90.0 (88.0 spurious) |"), "{md}");
        let text = csv(&[r]);
        let mut lines = text.lines();
        let header: Vec<&str> = lines.next().expect("header").split(',').collect();
        let row: Vec<&str> = lines.next().expect("row").split(',').collect();
        let col = |name: &str| row[header.iter().position(|h| *h == name).expect(name)];
        assert_eq!(col("ns3_spurious_fast_retransmits"), "88.000000");
        assert_eq!(col("ns3_fast_retransmits"), "90.000000");
    }

    #[test]
    fn the_markdown_table_counts_verdicts_and_marks_the_failing_metric() {
        let md = markdown(&[result(0.9, 0.95), result(0.95, 0.95)]);
        assert!(
            md.contains("2 cases: 1 within the targets, 1 outside, 0 errors, 0 not compared."),
            "{md}"
        );
        assert!(md.contains("| 90.0 / 95.0 |"), "{md}");
        assert!(md.contains("**outside** (utilisation)"), "{md}");
    }

    #[test]
    fn concord_with_ns3s_departures_gets_its_own_rows_against_ns3_as_shipped() {
        let plain = result(0.9, 0.95);
        assert!(!markdown(std::slice::from_ref(&plain)).contains("ns-3-departures"));
        let mut r = plain;
        let mut d = r.concord.clone().expect("concord");
        d.source = crate::concord_run::DEPARTURES_SOURCE.into();
        d.utilisation = 0.94;
        let n = r.ns3.clone().expect("ns-3");
        let case = parse("[[case]]\ntopology = \"dumbbell\"\nflows = 2\nrate = \"10Mbps\"\nrtt = \"20ms\"\nqueue = \"droptail\"\n", "g")
            .expect("valid")
            .remove(0);
        r.departures_checks = checks(&case, &d, &n);
        r.departures_verdict = Verdict::Within;
        r.concord_departures = Some(d);
        let md = markdown(&[r]);
        assert!(
            md.contains("| `dumbbell-2f-10Mbps-20ms-droptail` | 90.0 / 0.988 / 9.000 / 1.0 | 94.0 / 0.988 / 9.000 / 1.0 | 95.0 / 0.988 / 9.000 / 1.0 | within |"),
            "{md}"
        );
        // The reference verdict is concord's own.
        assert!(md.contains("**outside** (utilisation)"), "{md}");
    }

    #[test]
    fn figures_are_svg_documents() {
        let figs = figures(&[result(0.9, 0.95)]);
        assert_eq!(figs.len(), 5);
        assert!(figs
            .iter()
            .all(|(_, svg)| svg.starts_with("<svg") || svg.starts_with("<?xml")));
    }
}
