//! "Did you mean" for misspelt keys and names, and short lists of the valid choices.

/// Lists longer than this are cut, with a count of what was left out.
const LIST_MAX: usize = 12;

/// The optimal-string-alignment distance between `a` and `b`: insertions, deletions,
/// substitutions and swaps of two neighbouring characters each cost one.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    // Three rows of the dynamic-programming table: i - 2, i - 1 and i.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur: Vec<usize> = vec![0; b.len() + 1];
    for i in 1..=a.len() {
        cur[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(before[j - 2] + 1);
            }
            cur[j] = d;
        }
        std::mem::swap(&mut before, &mut prev);
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `word`, if one is close enough to be a plausible misspelling.
pub(crate) fn closest<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    let lower = word.to_lowercase();
    let len = word.chars().count();
    let allowed = match len {
        0..=3 => 1,
        4..=6 => 2,
        _ => 3,
    };
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        // The distance is at least the difference in length: skip hopeless candidates cheaply.
        if c.chars().count().abs_diff(len) > allowed {
            continue;
        }
        let d = if c.to_lowercase() == lower {
            0
        } else {
            edit_distance(&lower, &c.to_lowercase())
        };
        if d <= allowed && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `a, b, c`, cut after a dozen items with `... (N more)`.
pub(crate) fn list<'c>(items: impl IntoIterator<Item = &'c str>) -> String {
    let items: Vec<&str> = items.into_iter().collect();
    let mut out = items
        .iter()
        .take(LIST_MAX)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if items.len() > LIST_MAX {
        out.push_str(&format!(", ... ({} more)", items.len() - LIST_MAX));
    }
    out
}

/// `did you mean `x`? ` followed by `tail`, or only `tail` when nothing is close.
pub(crate) fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    tail: &str,
) -> String {
    match closest(word, candidates) {
        Some(c) => format!("did you mean `{c}`? {tail}"),
        None => tail.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_counts_edits_and_swaps() {
        assert_eq!(edit_distance("rat", "rate"), 1);
        assert_eq!(edit_distance("dealy", "delay"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn closest_ignores_case_and_far_candidates() {
        assert_eq!(closest("Rate", ["rate", "delay"]), Some("rate"));
        assert_eq!(closest("rat", ["rate", "delay"]), Some("rate"));
        assert_eq!(closest("bandwidth", ["rate", "delay"]), None);
    }

    #[test]
    fn long_lists_are_cut() {
        let names: Vec<String> = (1..=20).map(|i| format!("n{i}")).collect();
        let l = list(names.iter().map(String::as_str));
        assert!(l.starts_with("n1, n2,"));
        assert!(l.ends_with("n12, ... (8 more)"));
    }
}
