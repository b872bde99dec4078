//! The event queue: events ordered by `(time, sequence)`, ties broken by insertion order.
//!
//! Three heaps share one sequence counter, and a pop takes the earliest of their three tops:
//!
//! - a binary min-heap ([`heap`]) of entries `(time, sequence)` with the (small) event beside
//!   its key, so a pop moves the event out of the heap itself, with no slab or free list to
//!   visit (a pop sifts to the bottom and back up, the fewest comparisons; a 4-ary heap with the
//!   children compared in turn took 40% more instructions per event on the 64-flow benchmark);
//! - *lanes*: FIFOs of items that come out in the order they went in. The simulator keeps one
//!   lane per propagation delay: every packet leaving a channel of delay `d` at time `t`
//!   arrives at `t + d`, and departures are handled in time order, so the arrivals of all the
//!   channels that share a delay are in time order too. Only a lane's head has a heap entry, in
//!   a second heap of its own that holds one entry per busy lane (a handful), and a pop takes
//!   the earlier of the two heaps' tops: an arrival is a sift through a few entries, not through
//!   every pending transmission and timer. Each item keeps the sequence number it was given
//!   when pushed, so the global order is exactly the order a single heap of every item would
//!   give. A lane is a ring buffer: its items are taken in the order they were written, from
//!   consecutive memory, which the processor's prefetchers stream in ahead of the pops;
//! - *far timers*: events that are usually due long after the events around them (a TCP
//!   sender's retransmission timer, a receiver's delayed ACK) wait in a third heap, with the
//!   sequence number they were given when pushed. A new timer is later than most of those
//!   waiting, so its push rarely rises more than a level; the main heap holds the events of the
//!   near future, not one timer per flow, and its sifts stay short. A pop compares the three
//!   tops by `(time, sequence)`, so the order is again exactly that of one heap.

use concord_cc::time::Instant;
use std::collections::VecDeque;

mod heap;
use heap::Heap;

/// A heap entry: an event with its key.
#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    /// Time in ns.
    at: u64,
    /// Insertion order.
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// `(time, sequence)` as one number, in the same order: time in the high 64 bits. A
    /// comparison of two keys is one of 128-bit numbers (a compare and a subtract with borrow)
    /// rather than a tuple's compare-and-branch chain.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at) << 64) | u128::from(self.seq)
    }
}

/// One lane item with the key it was given when pushed.
#[derive(Debug)]
struct LaneItem<L> {
    /// Time in ns.
    at: u64,
    /// Insertion order.
    seq: u64,
    item: L,
}

/// The heap an entry comes from.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The main heap.
    Heap,
    /// The busy lanes' heads.
    Heads,
    /// The far timers.
    Far,
}

/// A queue of events of type `E`, with lanes of items of type `L`.
#[derive(Debug)]
pub struct EventQueue<E, L = ()> {
    heap: Heap<E>,
    /// The busy lanes' heads, one entry per lane holding at least one item: a heap of its own,
    /// so that a packet's arrival costs a sift through a handful of entries rather than through
    /// every pending transmission and timer.
    heads: Heap<E>,
    /// Each lane's items, earliest first.
    lanes: Vec<VecDeque<LaneItem<L>>>,
    /// Items in lanes.
    lane_items: usize,
    /// Far timers: a heap of their own.
    far: Heap<E>,
    next_seq: u64,
    processed: u64,
}

impl<E, L> Default for EventQueue<E, L> {
    fn default() -> Self {
        EventQueue {
            heap: Heap::default(),
            heads: Heap::default(),
            lanes: Vec::new(),
            lane_items: 0,
            far: Heap::default(),
            next_seq: 0,
            processed: 0,
        }
    }
}

impl<E: Copy, L> EventQueue<E, L> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty queue with `lanes` empty lanes.
    pub fn with_lanes(lanes: usize) -> Self {
        EventQueue {
            lanes: (0..lanes).map(|_| VecDeque::new()).collect(),
            ..Self::default()
        }
    }

    /// Schedules `event` at `at`; events at the same instant come out in insertion order.
    #[inline]
    pub fn push(&mut self, at: Instant, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry {
            at: at.as_nanos(),
            seq,
            event,
        });
    }

    /// Schedules `event` at `at` like [`EventQueue::push`] (the same order), for a timer that is
    /// usually far off and often superseded: it waits in the far timers' heap, out of the main
    /// one.
    #[inline]
    pub fn push_far(&mut self, at: Instant, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.far.push(Entry {
            at: at.as_nanos(),
            seq,
            event,
        });
    }

    /// Queues `item` on `lane` to come out at `at`, which must not be earlier than the lane's
    /// last item (a lane is a FIFO). `head` is the event that stands for the lane's head in the
    /// queue: when it is popped, the caller takes the item with [`EventQueue::pop_lane`].
    /// Returns false (and queues nothing) for an unknown lane or an item out of time order.
    #[inline]
    pub fn push_lane(&mut self, lane: u32, at: Instant, item: L, head: E) -> bool {
        let at_ns = at.as_nanos();
        let Some(items) = self.lanes.get_mut(lane as usize) else {
            return false;
        };
        if items.back().is_some_and(|last| last.at > at_ns) {
            return false;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        if items.is_empty() {
            self.heads.push(Entry {
                at: at_ns,
                seq,
                event: head,
            });
        }
        items.push_back(LaneItem {
            at: at_ns,
            seq,
            item,
        });
        self.lane_items += 1;
        true
    }

    /// Takes the head item of `lane` (its event has just been popped) and schedules `head` for
    /// the next item, if any, at that item's own time and sequence number.
    #[inline]
    pub fn pop_lane(&mut self, lane: u32, head: E) -> Option<L> {
        let items = self.lanes.get_mut(lane as usize)?;
        let first = items.pop_front()?;
        self.lane_items -= 1;
        if let Some(next) = items.front() {
            self.heads.push(Entry {
                at: next.at,
                seq: next.seq,
                event: head,
            });
        }
        Some(first.item)
    }

    /// The item `k` places behind the head of `lane` (0: the head), if any, with its time.
    #[inline]
    pub fn lane_ahead(&self, lane: u32, k: usize) -> Option<(Instant, &L)> {
        self.lanes
            .get(lane as usize)?
            .get(k)
            .map(|i| (Instant::from_nanos(i.at), &i.item))
    }

    /// The far timers that will come out next, at most three: the earliest waiting, then two of
    /// which one is the next earliest (its children in the far timers' heap). A timer pushed
    /// meanwhile may come out before them.
    #[inline]
    pub fn far_ahead(&self) -> impl Iterator<Item = &E> {
        self.far.first(3).iter().map(|e| &e.event)
    }

    /// The time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Instant> {
        self.earliest().map(|(_, at)| Instant::from_nanos(at))
    }

    /// Which heap holds the earliest entry, and its time in ns. Keys are unique, and an empty
    /// heap's `u128::MAX` is no entry's key (its sequence number would be `u64::MAX`).
    #[inline]
    fn earliest(&self) -> Option<(Source, u64)> {
        let key = |h: &Heap<E>| h.peek().map_or(u128::MAX, Entry::key);
        let (e, h, f) = (key(&self.heap), key(&self.heads), key(&self.far));
        let (source, k) = if e <= h && e <= f {
            (Source::Heap, e)
        } else if h <= f {
            (Source::Heads, h)
        } else {
            (Source::Far, f)
        };
        // The time is the key's high 64 bits.
        (k != u128::MAX).then_some((source, (k >> 64) as u64))
    }

    /// Removes and returns the top entry of `source`'s heap.
    #[inline]
    fn pop_from(&mut self, source: Source) -> Option<Entry<E>> {
        match source {
            Source::Heap => self.heap.pop(),
            Source::Heads => self.heads.pop(),
            Source::Far => self.far.pop(),
        }
    }

    /// Removes and returns the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let (source, _) = self.earliest()?;
        let e = self.pop_from(source)?;
        self.processed += 1;
        Some((Instant::from_nanos(e.at), e.event))
    }

    /// Removes and returns the earliest event with its time if it is not later than `until`.
    #[inline]
    pub fn pop_until(&mut self, until: Instant) -> Option<(Instant, E)> {
        let (source, at) = self.earliest()?;
        if at > until.as_nanos() {
            return None;
        }
        let e = self.pop_from(source)?;
        self.processed += 1;
        Some((Instant::from_nanos(e.at), e.event))
    }

    /// Events waiting (a lane counts its items).
    pub fn len(&self) -> usize {
        // A busy lane's head entry in `heads` stands for an item of `lane_items`.
        self.heap.len() + self.lane_items + self.far.len()
    }

    /// No events wait.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty() && self.heads.is_empty() && self.far.is_empty()
    }

    /// Events popped so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::rng::Rng;

    /// A span of time for the far timers' tests: 2^20 ns.
    const SPAN_NS: u64 = 1 << 20;

    #[test]
    fn events_come_out_in_time_order_and_ties_in_insertion_order() {
        let mut q: EventQueue<&str> = EventQueue::new();
        q.push(Instant::from_millis(5), "c");
        q.push(Instant::from_millis(1), "a");
        q.push(Instant::from_millis(5), "d");
        q.push(Instant::from_millis(1), "b");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, vec!["a", "b", "c", "d"]);
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn a_lane_item_keeps_its_place_among_events_at_the_same_instant() {
        let mut q: EventQueue<char, u32> = EventQueue::with_lanes(1);
        q.push(Instant::from_millis(5), 'a');
        assert!(q.push_lane(0, Instant::from_millis(5), 10, 'L'));
        q.push(Instant::from_millis(5), 'b');
        assert!(q.push_lane(0, Instant::from_millis(5), 11, 'L'));
        q.push(Instant::from_millis(5), 'c');
        let mut order = String::new();
        let mut items = Vec::new();
        while let Some((_, e)) = q.pop() {
            order.push(e);
            if e == 'L' {
                items.extend(q.pop_lane(0, 'L'));
            }
        }
        assert_eq!(order, "aLbLc");
        assert_eq!(items, vec![10, 11]);
        assert_eq!(q.processed(), 5);
    }

    #[test]
    fn a_far_timer_keeps_its_place_among_events_at_the_same_instant() {
        let mut q: EventQueue<char> = EventQueue::new();
        let t = Instant::from_nanos(3 * SPAN_NS);
        q.push(t, 'a');
        q.push_far(t, 'b');
        q.push(t, 'c');
        q.push_far(Instant::from_nanos(3 * SPAN_NS - 1), 'z');
        q.push(Instant::from_nanos(4 * SPAN_NS), 'd');
        assert_eq!(q.len(), 5);
        assert_eq!(q.peek_time(), Some(Instant::from_nanos(3 * SPAN_NS - 1)));
        let order: String = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, "zabcd");
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
        assert_eq!(q.pop_until(Instant::from_nanos(u64::MAX)), None);
    }

    #[test]
    fn the_earliest_of_the_three_tops_pops_and_ties_go_by_insertion() {
        let mut q: EventQueue<char, u32> = EventQueue::with_lanes(1);
        let t = Instant::from_nanos(7);
        q.push_far(t, 'f');
        assert!(q.push_lane(0, t, 1, 'l'));
        q.push(t, 'h');
        q.push_far(Instant::from_nanos(6), 'e');
        // Each in its own heap: the far timers out of the main one.
        assert_eq!((q.heap.len(), q.heads.len(), q.far.len()), (1, 1, 2));
        assert_eq!(q.peek_time(), Some(Instant::from_nanos(6)));
        let order: String = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, "eflh");
        assert_eq!(q.processed(), 4);
    }

    #[test]
    fn pop_until_leaves_a_far_timer_after_the_limit() {
        let mut q: EventQueue<char> = EventQueue::new();
        q.push_far(Instant::from_nanos(2 * SPAN_NS + 7), 'x');
        assert_eq!(q.pop_until(Instant::from_nanos(2 * SPAN_NS + 6)), None);
        assert_eq!(
            q.pop_until(Instant::from_nanos(2 * SPAN_NS + 7)),
            Some((Instant::from_nanos(2 * SPAN_NS + 7), 'x'))
        );
        assert_eq!(q.processed(), 1);
    }

    #[test]
    fn a_lane_refuses_an_item_earlier_than_its_last() {
        let mut q: EventQueue<char, u32> = EventQueue::with_lanes(1);
        assert!(q.push_lane(0, Instant::from_millis(5), 1, 'L'));
        assert!(!q.push_lane(0, Instant::from_millis(4), 2, 'L'));
        assert!(!q.push_lane(1, Instant::from_millis(6), 3, 'L'));
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn lanes_keep_their_items_apart_and_each_head_in_the_heap() {
        let mut q: EventQueue<u32, u32> = EventQueue::with_lanes(3);
        assert!(q.push_lane(0, Instant::from_nanos(10), 100, 0));
        assert!(q.push_lane(2, Instant::from_nanos(20), 300, 2));
        assert!(q.push_lane(0, Instant::from_nanos(30), 101, 0));
        // One head entry per busy lane: lanes 0 and 2; nothing in the main heap.
        assert_eq!((q.heads.len(), q.lane_items), (2, 3));
        assert!(q.heap.is_empty());
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop(), Some((Instant::from_nanos(10), 0)));
        assert_eq!(q.pop_lane(0, 0), Some(100));
        // Lane 0's next item is back in the heap with its own time.
        assert_eq!(q.peek_time(), Some(Instant::from_nanos(20)));
        assert!(q.push_lane(1, Instant::from_nanos(25), 200, 1));
        let mut items = Vec::new();
        while let Some((at, lane)) = q.pop() {
            items.push((at.as_nanos(), q.pop_lane(lane, lane)));
        }
        assert_eq!(
            items,
            vec![(20, Some(300)), (25, Some(200)), (30, Some(101))]
        );
        assert!(q.is_empty());
        assert_eq!((q.lane_items, q.heads.len()), (0, 0));
        // An empty lane, or one that does not exist, yields nothing.
        assert_eq!(q.pop_lane(1, 1), None);
        assert_eq!(q.pop_lane(7, 7), None);
    }

    #[test]
    fn a_lane_shows_its_items_behind_the_head_with_their_times() {
        let mut q: EventQueue<u32, char> = EventQueue::with_lanes(2);
        for (at, item) in [(10, 'a'), (10, 'b'), (25, 'c')] {
            assert!(q.push_lane(0, Instant::from_nanos(at), item, 0));
        }
        let ahead =
            |q: &EventQueue<u32, char>, k| q.lane_ahead(0, k).map(|(t, &i)| (t.as_nanos(), i));
        assert_eq!(ahead(&q, 0), Some((10, 'a')));
        assert_eq!(ahead(&q, 2), Some((25, 'c')));
        assert_eq!(ahead(&q, 3), None);
        assert_eq!(q.lane_ahead(1, 0), None);
        assert_eq!(q.lane_ahead(9, 0), None);
        // Once the head is taken, the item behind it heads the lane.
        assert_eq!(q.pop().map(|(_, e)| e), Some(0));
        assert_eq!(q.pop_lane(0, 0), Some('a'));
        assert_eq!(ahead(&q, 0), Some((10, 'b')));
        assert_eq!(ahead(&q, 1), Some((25, 'c')));
    }

    #[test]
    fn the_far_timers_ahead_start_with_the_next_and_hold_the_one_after() {
        let mut q: EventQueue<char> = EventQueue::new();
        assert_eq!(q.far_ahead().count(), 0);
        for (at, e) in [(50, 'e'), (20, 'b'), (40, 'd'), (10, 'a'), (30, 'c')] {
            q.push_far(Instant::from_nanos(at), e);
        }
        // A plain event is not among the far timers.
        q.push(Instant::from_nanos(5), 'z');
        assert_eq!(q.far_ahead().next(), Some(&'a'));
        assert_eq!(q.pop().map(|(_, e)| e), Some('z'));
        for want in ['a', 'b', 'c', 'd', 'e'] {
            let ahead: Vec<char> = q.far_ahead().copied().collect();
            assert_eq!(ahead.first(), Some(&want));
            assert!(ahead.len() <= 3);
            assert_eq!(q.pop().map(|(_, e)| e), Some(want));
            // The next earliest was one of the two behind it.
            if let Some(next) = q.far_ahead().next() {
                assert!(ahead[1..].contains(next), "{next} not in {ahead:?}");
            }
        }
        assert_eq!(q.far_ahead().count(), 0);
    }

    /// Random pushes, lane pushes and pops against a sorted reference of (time, sequence).
    #[test]
    fn the_order_equals_a_sort_by_time_then_insertion() {
        let mut rng = Rng::stream(3, 9);
        let lanes = 5u32;
        let mut q: EventQueue<(u32, u64), u64> = EventQueue::with_lanes(lanes as usize);
        // Reference: every pending (time, seq, id), and each lane's last time.
        let mut reference: Vec<(u64, u64, u64)> = Vec::new();
        let mut lane_last = vec![0u64; lanes as usize];
        let (mut seq, mut now, mut id) = (0u64, 0u64, 0u64);
        for _ in 0..20_000 {
            match rng.below(4) {
                3 => {
                    // A far timer, up to five buckets ahead, or as near as the plain events
                    // (ties with them).
                    let at = now
                        + if rng.below(2) == 0 {
                            rng.below(5 * SPAN_NS)
                        } else {
                            rng.below(50)
                        };
                    q.push_far(Instant::from_nanos(at), (u32::MAX, id));
                    reference.push((at, seq, id));
                    seq += 1;
                    id += 1;
                }
                0 => {
                    let at = now + rng.below(50);
                    q.push(Instant::from_nanos(at), (u32::MAX, id));
                    reference.push((at, seq, id));
                    seq += 1;
                    id += 1;
                }
                1 => {
                    let lane = rng.below(lanes as u64) as u32;
                    let at = lane_last[lane as usize].max(now) + rng.below(20);
                    assert!(q.push_lane(lane, Instant::from_nanos(at), id, (lane, 0)));
                    lane_last[lane as usize] = at;
                    reference.push((at, seq, id));
                    seq += 1;
                    id += 1;
                }
                _ => {
                    reference.sort_unstable();
                    let got = q.pop();
                    if reference.is_empty() {
                        assert!(got.is_none());
                        continue;
                    }
                    let (t, _, want) = reference.remove(0);
                    let Some((at, (lane, eid))) = got else {
                        panic!("the queue is empty where {want} waits");
                    };
                    let eid = if lane == u32::MAX {
                        Some(eid)
                    } else {
                        q.pop_lane(lane, (lane, 0))
                    };
                    assert_eq!((at.as_nanos(), eid), (t, Some(want)));
                    now = t;
                }
            }
        }
    }
}
