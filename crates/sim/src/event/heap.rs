//! A binary min-heap of [`Entry`]s by `(time, sequence)`.
//!
//! The same algorithm as the standard library's `BinaryHeap` (a pop moves children up to the
//! bottom and sifts the last entry back up from there, the fewest comparisons), written so that
//! a pop never stores an entry and then reloads it: the standard library's pop swaps the last
//! entry into the root with 8-byte stores and at once reads the root back as 16-byte loads,
//! which the processor cannot forward from its store buffer (a stall of tens of cycles on
//! every event). Here the last entry stays in registers until its final place is known.
//!
//! Keys are unique (the sequence number is), so the order of pops is fully determined by the
//! keys: any correct heap gives the same order.

use super::Entry;

/// A min-heap of entries.
#[derive(Debug)]
pub(super) struct Heap<E> {
    data: Vec<Entry<E>>,
}

impl<E> Default for Heap<E> {
    fn default() -> Self {
        Heap { data: Vec::new() }
    }
}

impl<E: Copy> Heap<E> {
    /// The earliest entry.
    #[inline]
    pub(super) fn peek(&self) -> Option<&Entry<E>> {
        self.data.first()
    }

    /// The first `n` entries of the heap's array (fewer if it holds fewer): the earliest, then
    /// its two children, one of which is the next earliest, then the first grandchild.
    #[inline]
    pub(super) fn first(&self, n: usize) -> &[Entry<E>] {
        &self.data[..n.min(self.data.len())]
    }

    /// Entries held.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.data.len()
    }

    /// No entry held.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Adds `e`.
    #[inline]
    pub(super) fn push(&mut self, e: Entry<E>) {
        let last = self.data.len();
        self.data.push(e);
        self.rise(last, e);
    }

    /// Puts `e` in the hole at `hole` or above it: parents later than `e` move down into the
    /// hole until `e`'s place is found.
    #[inline]
    fn rise(&mut self, mut hole: usize, e: Entry<E>) {
        let key = e.key();
        while hole > 0 {
            let parent = (hole - 1) / 2;
            let p = self.data[parent];
            if p.key() <= key {
                break;
            }
            self.data[hole] = p;
            hole = parent;
        }
        self.data[hole] = e;
    }

    /// Removes and returns the earliest entry.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        let last = self.data.pop()?;
        let n = self.data.len();
        if n == 0 {
            return Some(last);
        }
        let top = self.data[0];
        // The hole left by the top goes down along the earlier child to the bottom ...
        let mut hole = 0;
        let mut child = 1;
        while child + 1 < n {
            if self.data[child + 1].key() < self.data[child].key() {
                child += 1;
            }
            self.data[hole] = self.data[child];
            hole = child;
            child = 2 * hole + 1;
        }
        if child == n - 1 {
            self.data[hole] = self.data[child];
            hole = child;
        }
        // ... and the last entry rises from there to its place.
        self.rise(hole, last);
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::rng::Rng;

    fn entry(at: u64, seq: u64) -> Entry<u64> {
        Entry {
            at,
            seq,
            event: seq,
        }
    }

    #[test]
    fn pops_come_out_by_time_then_sequence() {
        let mut h = Heap::default();
        for (at, seq) in [(5, 0), (1, 1), (5, 2), (1, 3), (0, 4), (9, 5)] {
            h.push(entry(at, seq));
        }
        assert_eq!(h.len(), 6);
        assert_eq!(h.peek().map(|e| (e.at, e.seq)), Some((0, 4)));
        let order: Vec<_> = std::iter::from_fn(|| h.pop())
            .map(|e| (e.at, e.seq))
            .collect();
        assert_eq!(order, vec![(0, 4), (1, 1), (1, 3), (5, 0), (5, 2), (9, 5)]);
        assert!(h.is_empty());
        assert!(h.pop().is_none());
        assert!(h.peek().is_none());
    }

    /// Random pushes and pops against a sorted reference.
    #[test]
    fn the_order_equals_a_sort_of_the_keys() {
        let mut rng = Rng::stream(5, 2);
        let mut h = Heap::default();
        let mut reference: Vec<(u64, u64)> = Vec::new();
        for seq in 0..50_000u64 {
            if rng.below(3) == 0 {
                reference.sort_unstable_by(|a, b| b.cmp(a));
                let want = reference.pop();
                assert_eq!(h.pop().map(|e| (e.at, e.seq)), want);
            } else {
                let at = rng.below(1_000);
                h.push(entry(at, seq));
                reference.push((at, seq));
            }
            assert_eq!(h.len(), reference.len());
        }
        for s in 0..100 {
            let e = entry(rng.below(50), 100_000 + s);
            reference.push((e.at, e.seq));
            h.push(e);
        }
        reference.sort_unstable();
        let rest: Vec<_> = std::iter::from_fn(|| h.pop())
            .map(|e| (e.at, e.seq))
            .collect();
        assert_eq!(rest, reference);
    }
}
