//! Plain-text tables for the terminal, one line per row, as wide as the terminal allows.
//!
//! The table knows nothing of what its columns mean: a header and rows of strings. On a terminal
//! (or with `COLUMNS` set) a table wider than the terminal is narrowed: columns that fit their
//! share keep their width, the widest ones give up the rest, and a cell longer than its column
//! is cut with `…`. The full text stays in the machine-readable outputs (results.json, CSV).

use std::io::IsTerminal;

/// Columns between two cells.
const GAP: usize = 2;
/// The narrowest a shrunk column gets, in characters (the `…` included).
const MIN_COLUMN: usize = 6;

/// Renders rows under a header, fitted to the terminal's width ([`terminal_width`]).
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    render_width(header, rows, terminal_width())
}

/// The width to fit standard output's tables to, in characters: `COLUMNS` if it is a positive
/// number, else the terminal's width if standard output is a terminal, else none (no limit, so
/// that a pipe or a file gets every character).
pub fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return Some(n);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    tty_columns()
}

/// The terminal's columns, from standard output's window size.
fn tty_columns() -> Option<usize> {
    terminal_size::terminal_size_of(std::io::stdout())
        .map(|(terminal_size::Width(w), _)| usize::from(w))
        .filter(|&w| w > 0)
}

/// Column widths that fit `width` characters in all (gaps included), from the natural widths
/// `want`: columns narrower than an equal share of what is left keep their width, the others
/// share the rest equally (never below [`MIN_COLUMN`] or their natural width, whichever is
/// less). With no limit, or room for everything, the natural widths.
pub fn fit(want: &[usize], width: Option<usize>) -> Vec<usize> {
    let Some(width) = width else {
        return want.to_vec();
    };
    let gaps = GAP * want.len().saturating_sub(1);
    if want.iter().sum::<usize>() + gaps <= width {
        return want.to_vec();
    }
    let mut room = width.saturating_sub(gaps);
    let mut out = vec![0; want.len()];
    let mut open: Vec<usize> = (0..want.len()).collect();
    // Settle the columns that fit their share, narrowest first, until none does.
    loop {
        let share = room / open.len().max(1);
        let (fits, rest): (Vec<usize>, Vec<usize>) = open.iter().partition(|&&i| want[i] <= share);
        if fits.is_empty() || rest.is_empty() {
            for &i in &open {
                out[i] = want[i].min(share.max(MIN_COLUMN.min(want[i])));
            }
            // Hand out what rounding left to the first shrunk columns.
            let mut spare = room.saturating_sub(open.iter().map(|&i| out[i]).sum());
            for &i in &open {
                if spare == 0 {
                    break;
                }
                let more = (want[i] - out[i]).min(spare);
                out[i] += more;
                spare -= more;
            }
            return out;
        }
        for &i in &fits {
            out[i] = want[i];
            room -= want[i];
        }
        open = rest;
    }
}

/// `text` cut to `width` characters, its last one `…` when cut.
pub fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Renders rows under a header with columns padded to their widest cell, or narrower to fit
/// `width` characters; numbers right-aligned; one line per row.
pub fn render_width(header: &[&str], rows: &[Vec<String>], width: Option<usize>) -> String {
    let cols = header.len();
    let mut natural: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            natural[i] = natural[i].max(c.chars().count());
        }
    }
    let width = fit(&natural, width);
    let is_number = |s: &str| s.parse::<f64>().is_ok() || s.ends_with('%');
    // A column whose every cell is a number is right-aligned, its header too.
    let right: Vec<bool> = (0..cols)
        .map(|i| !rows.is_empty() && rows.iter().all(|r| r.get(i).is_some_and(|c| is_number(c))))
        .collect();
    let mut out = String::new();
    let line = |cells: Vec<&str>, out: &mut String| {
        let parts: Vec<String> = cells
            .iter()
            .enumerate()
            .take(cols)
            .map(|(i, c)| {
                let c = truncate(c, width[i]);
                if right[i] {
                    format!("{c:>w$}", w = width[i])
                } else {
                    format!("{c:<w$}", w = width[i])
                }
            })
            .collect();
        out.push_str(parts.join(&" ".repeat(GAP)).trim_end());
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    out.push_str(
        &width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join(&" ".repeat(GAP)),
    );
    out.push('\n');
    for r in rows {
        line(r.iter().map(String::as_str).collect(), &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_padded_and_numbers_right_aligned() {
        let t = render_width(
            &["flow", "Mbps"],
            &[
                vec!["f1".into(), "2.5".into()],
                vec!["long-name".into(), "10.25".into()],
            ],
            None,
        );
        assert_eq!(
            t,
            "flow        Mbps\n---------  -----\nf1           2.5\nlong-name  10.25\n"
        );
    }

    #[test]
    fn a_table_wider_than_the_terminal_is_cut_to_it_one_line_per_row() {
        let long = "normalised throughput ratio, BFLD m flowshares, highest over m".to_string();
        let rows = vec![
            vec![
                "cp".into(),
                "Fig. 10".into(),
                long.clone(),
                "1.063".into(),
                "pass".into(),
            ],
            vec![
                "cm".into(),
                "Fig. 4".into(),
                "short".into(),
                "0.5".into(),
                "pass".into(),
            ],
        ];
        let header = ["paper", "figure", "metric", "concord", "verdict"];
        let t = render_width(&header, &rows, Some(60));
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4, "header, rule and one line per row:\n{t}");
        for l in &lines {
            assert!(l.chars().count() <= 60, "{} > 60: {l:?}", l.chars().count());
        }
        // Only the wide column gave way; the narrow ones are whole.
        assert!(lines[2].starts_with("cp     Fig. 10  normalised"), "{t}");
        assert!(
            lines[2].contains('…') && lines[2].ends_with("1.063  pass"),
            "{t}"
        );
        // The full text is kept without a limit.
        assert!(render_width(&header, &rows, None).contains(&long));
    }

    #[test]
    fn fit_keeps_what_fits_and_splits_the_rest_between_the_widest() {
        assert_eq!(fit(&[5, 40, 30], None), [5, 40, 30]);
        assert_eq!(fit(&[5, 40, 30], Some(200)), [5, 40, 30]);
        // 50 wide: 4 for gaps, 5 kept, 41 shared by the two wide columns.
        assert_eq!(fit(&[5, 40, 30], Some(50)), [5, 21, 20]);
        // Too narrow for anything: shrunk columns keep MIN_COLUMN.
        assert_eq!(fit(&[3, 40, 30], Some(10)), [3, MIN_COLUMN, MIN_COLUMN]);
    }

    #[test]
    fn truncation_marks_the_cut_and_counts_characters_not_bytes() {
        assert_eq!(truncate("abcdef", 6), "abcdef");
        assert_eq!(truncate("abcdefg", 6), "abcde…");
        assert_eq!(truncate("1.0 ± 0.2", 5), "1.0 …");
        assert_eq!(truncate("abc", 0), "");
    }
}
