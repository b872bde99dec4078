//! Paper results concord does not run, because its model lacks what they need: each with the
//! paper's words and what is missing (the analysis is in docs/analysis.md under its anchor).
//! They are listed in the report beside the claims and counted apart from every verdict.

use crate::claim::Paper;

/// A paper result that is not run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotRun {
    /// The paper.
    pub paper: Paper,
    /// The figure or table, as the paper names it.
    pub figure: &'static str,
    /// The paper's section the quote comes from.
    pub section: &'static str,
    /// The paper's words.
    pub quote: &'static str,
    /// What the paper reports.
    pub paper_value: &'static str,
    /// What concord's model lacks to run it.
    pub missing: &'static str,
    /// The anchor of its analysis in docs/analysis.md.
    pub anchor: &'static str,
}

/// Every paper result that is not run, in report order: none since the simulator's TCP gained
/// its SYN exchange and ECA Fig. 9 became a claim (`eca/web-syn`).
pub const NOT_RUN: &[NotRun] = &[];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_names_its_paper_words_what_is_missing_and_an_anchor() {
        for n in NOT_RUN {
            assert!(!n.quote.is_empty() && !n.section.is_empty(), "{}", n.figure);
            assert!(!n.missing.is_empty(), "{}", n.figure);
            assert_eq!(crate::claim::slug(n.anchor), n.anchor, "{}", n.figure);
        }
    }
}
