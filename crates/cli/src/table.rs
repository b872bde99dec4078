//! Plain-text tables for the terminal.

/// Renders rows under a header, columns padded to their widest cell; numbers right-aligned.
pub fn render(header: &[&str], rows: &[Vec<String>]) -> String {
    let cols = header.len();
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(cols) {
            width[i] = width[i].max(c.chars().count());
        }
    }
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
                if right[i] {
                    format!("{c:>w$}", w = width[i])
                } else {
                    format!("{c:<w$}", w = width[i])
                }
            })
            .collect();
        out.push_str(parts.join("  ").trim_end());
        out.push('\n');
    };
    line(header.to_vec(), &mut out);
    out.push_str(
        &width
            .iter()
            .map(|w| "-".repeat(*w))
            .collect::<Vec<_>>()
            .join("  "),
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
        let t = render(
            &["flow", "Mbps"],
            &[
                vec!["f1".into(), "2.5".into()],
                vec!["long-name".into(), "10.25".into()],
            ],
        );
        assert_eq!(
            t,
            "flow        Mbps\n---------  -----\nf1           2.5\nlong-name  10.25\n"
        );
    }
}
