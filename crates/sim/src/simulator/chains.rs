//! Each node's chain of stages, behind a bitmap of the nodes that run any.
//!
//! A packet reads its node's chain at every send, forward and delivery. With thousands of
//! hosts and no stage at most of them, a `Vec` per node would be a cold 24-byte entry per host
//! visited; the bitmap (one bit a node: 2.5 kB for 20,000 nodes) stays in cache, and only a
//! node that runs a stage has its chain read.

use super::stages::Stage;
use crate::packet::NodeId;

/// The chains of every node.
#[derive(Debug, Default)]
pub(crate) struct Chains {
    /// Bit `n % 64` of word `n / 64`: node `n`'s chain is not empty.
    staged: Vec<u64>,
    /// Each node's chain, from the application side to the wire.
    chains: Vec<Vec<Stage>>,
}

impl Chains {
    /// The chains of nodes `0..chains.len()`.
    pub(crate) fn new(chains: Vec<Vec<Stage>>) -> Chains {
        let mut staged = vec![0u64; chains.len().div_ceil(64)];
        for (n, chain) in chains.iter().enumerate() {
            if !chain.is_empty() {
                staged[n / 64] |= 1 << (n % 64);
            }
        }
        Chains { staged, chains }
    }

    /// Node `node`'s chain (empty for a node that runs no stage, or no such node).
    #[inline]
    pub(crate) fn of(&self, node: NodeId) -> &[Stage] {
        let n = node as usize;
        let staged = self
            .staged
            .get(n / 64)
            .is_some_and(|w| (w >> (n % 64)) & 1 == 1);
        if !staged {
            return &[];
        }
        self.chains.get(n).map_or(&[], Vec::as_slice)
    }

    /// The number of nodes.
    #[cfg(test)]
    pub(crate) fn nodes(&self) -> usize {
        self.chains.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_past_the_first_word_finds_its_chain_and_its_neighbours_none() {
        let mut chains = vec![Vec::new(); 130];
        chains[0] = vec![Stage::Cm];
        chains[64] = vec![Stage::Eca, Stage::GccaBucket];
        chains[129] = vec![Stage::GccaBucket];
        let c = Chains::new(chains);
        assert_eq!(c.staged, [1, 1, 0b10]);
        assert_eq!(c.of(0), [Stage::Cm]);
        assert_eq!(c.of(64), [Stage::Eca, Stage::GccaBucket]);
        assert_eq!(c.of(129), [Stage::GccaBucket]);
        for n in [1, 63, 65, 128] {
            assert_eq!(c.of(n), [], "node {n}");
        }
        // No such node.
        assert_eq!(c.of(130), []);
        assert_eq!(c.of(u32::MAX), []);
        assert_eq!(c.nodes(), 130);
    }
}
