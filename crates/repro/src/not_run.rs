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

/// Every paper result that is not run, in report order.
pub const NOT_RUN: &[NotRun] = &[NotRun {
    paper: Paper::Eca,
    figure: "Fig. 9: ECN/RED with ECT on SYNs",
    section: "IV.B.4 HTTP Response Times, Figure 9",
    quote: "a modification was made to the ns2 implementation and the ECN experiments were repeated, \
            this time with the ECT bit set on SYN packets. The results obtained are shown in Figure 9. \
            When flows are not held up by the 'admission control' effect, the results are very similar \
            to those obtained from TCP. There is a marginal reduction in queue length which seems to \
            make about a 30% improvement in response times.",
    paper_value: "about 30% shorter HTTP response times with ECT set on SYNs",
    missing: "a TCP connection set-up: the simulator's TCP sends its first data segment at once, with \
              no SYN / SYN-ACK exchange, no initial 3 s or 6 s retransmission timer for a lost SYN and \
              no ECT marking choice for it, so RED can neither drop nor mark a SYN and the effect \
              Fig. 9 measures does not exist in the model",
    anchor: "eca-fig-9-not-run",
}];

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
