//! Every Markdown table in docs/ and the README renders as a table (GitHub-flavoured Markdown):
//! each row has as many cells as the header, and no table is cut in two by a blank line, which
//! would leave its remaining rows as stray text.

use std::path::{Path, PathBuf};

/// The cells of a table line: unescaped `|` separate them; a leading and a trailing `|` do not
/// make cells of their own.
fn cells(line: &str) -> usize {
    let t = line.trim();
    let mut bars = 0;
    let mut escaped = false;
    for c in t.chars() {
        match c {
            '\\' if !escaped => {
                escaped = true;
                continue;
            }
            '|' if !escaped => bars += 1,
            _ => {}
        }
        escaped = false;
    }
    let mut n = bars + 1;
    if t.starts_with('|') {
        n -= 1;
    }
    if t.ends_with('|') && !t.ends_with("\\|") {
        n -= 1;
    }
    n
}

fn is_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
}

/// A delimiter row: cells of dashes with optional colons.
fn is_delimiter(line: &str) -> bool {
    is_row(line)
        && line.trim().trim_matches('|').split('|').all(|c| {
            let c = c.trim();
            !c.is_empty() && c.trim_matches(':').chars().all(|ch| ch == '-') && c.contains('-')
        })
}

/// The problems of `text`'s tables, each "line N: what".
fn table_problems(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut in_code = false;
    // The column count of the table that ended at the last blank line, if one just ended.
    let mut just_ended: Option<usize> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            just_ended = None;
            i += 1;
            continue;
        }
        if in_code {
            i += 1;
            continue;
        }
        if is_row(line) && lines.get(i + 1).is_some_and(|l| is_delimiter(l)) {
            let width = cells(line);
            if cells(lines[i + 1]) != width {
                problems.push(format!(
                    "line {}: the delimiter row has {} cells, the header {width}",
                    i + 2,
                    cells(lines[i + 1])
                ));
            }
            let mut j = i + 2;
            while j < lines.len() && is_row(lines[j]) {
                if cells(lines[j]) != width {
                    problems.push(format!(
                        "line {}: {} cells, the header has {width}",
                        j + 1,
                        cells(lines[j])
                    ));
                }
                j += 1;
            }
            i = j;
            just_ended = Some(width);
            continue;
        }
        if is_row(line) {
            match just_ended {
                Some(_) => problems.push(format!(
                    "line {}: a table row after a blank line, outside the table above (remove the blank line)",
                    i + 1
                )),
                None => problems.push(format!(
                    "line {}: a table row with no header and delimiter row above it",
                    i + 1
                )),
            }
        }
        if !line.trim().is_empty() {
            just_ended = None;
        }
        i += 1;
    }
    problems
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "md") {
            out.push(p);
        }
    }
}

#[test]
fn every_markdown_table_in_the_docs_and_readme_renders() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = vec![root.join("README.md")];
    markdown_files(&root.join("docs"), &mut files);
    files.sort();
    assert!(files.len() > 2, "found the docs: {files:?}");
    let mut all = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).expect("readable");
        for p in table_problems(&text) {
            all.push(format!("{}: {p}", f.display()));
        }
    }
    assert!(
        all.is_empty(),
        "broken Markdown tables:\n{}",
        all.join("\n")
    );
}

#[test]
fn a_blank_line_inside_a_table_is_found() {
    let text = "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n";
    assert_eq!(
        table_problems(text),
        ["line 5: a table row after a blank line, outside the table above (remove the blank line)"]
    );
}

#[test]
fn a_row_with_too_many_cells_is_found_and_escaped_bars_do_not_count() {
    let text = "| a | b |\n|:--|--:|\n| 1 \\| x | 2 |\n| 1 | 2 | 3 |\n";
    assert_eq!(table_problems(text), ["line 4: 3 cells, the header has 2"]);
}

#[test]
fn two_tables_apart_and_tables_in_code_blocks_are_fine() {
    let text = "| a |\n|---|\n| 1 |\n\ntext\n\n| b | c |\n|---|---|\n| 2 | 3 |\n\n```\n| x\n```\n";
    assert!(table_problems(text).is_empty());
}
