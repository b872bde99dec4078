//! Selective acknowledgment: the SACK blocks an ACK carries (RFC 2018) and the sender's
//! scoreboard with RFC 6675's routines (`Update`, `IsLost`, `SetPipe`, `NextSeg`).
//!
//! Sequence numbers are the sender's 64-bit byte offsets; every range is half-open,
//! `[start, end)` in bytes. The scoreboard works on bytes rather than on a list of segments: a
//! byte is SACKed, or lost by `IsLost`, or neither, and `pipe` counts bytes.

use crate::units::Bytes;

/// The SACK blocks of one ACK, at most [`SackBlocks::MAX`] (RFC 2018 section 3: three fit
/// beside the timestamps option), the first the block holding the most recently received
/// segment (section 4). Edges are kept as 32-bit offsets above the ACK's cumulative
/// acknowledgment, as the wire's 32-bit sequence numbers are, so that an ACK stays small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SackBlocks {
    len: u8,
    /// `(left - ack, right - ack)` of each block, bytes.
    edges: [(u32, u32); SackBlocks::MAX],
}

impl SackBlocks {
    /// Blocks an ACK carries at most, with the timestamps option (RFC 2018 section 3).
    pub const MAX: usize = 3;

    /// The blocks of an ACK of `ack`, in the order given; blocks that are empty, not above
    /// `ack`, or more than 2^32 - 1 bytes above it (not expressible in 32-bit sequence space)
    /// are left out, as are any beyond the first [`SackBlocks::MAX`] kept.
    pub fn new(ack: u64, blocks: impl IntoIterator<Item = (u64, u64)>) -> SackBlocks {
        let mut out = SackBlocks::default();
        for (left, right) in blocks {
            if usize::from(out.len) == SackBlocks::MAX {
                break;
            }
            if left <= ack || right <= left {
                continue;
            }
            let (Ok(l), Ok(r)) = (u32::try_from(left - ack), u32::try_from(right - ack)) else {
                continue;
            };
            out.edges[usize::from(out.len)] = (l, r);
            out.len += 1;
        }
        out
    }

    /// No blocks.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The number of blocks.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Bytes the blocks' SACK option adds to the ACK on the wire: 0 without a block, else
    /// `4 + 8n` (RFC 2018 section 3: kind, length and 8 bytes a block, after two NOPs that keep
    /// the options on a 32-bit boundary, as Linux sends it).
    pub fn wire_bytes(&self) -> u32 {
        crate::wire::SackOption::wire_len(self.len()) as u32
    }

    /// The blocks as absolute `[left, right)` ranges, given the ACK's cumulative `ack`.
    pub fn ranges(&self, ack: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.edges[..self.len()]
            .iter()
            .map(move |&(l, r)| (ack + u64::from(l), ack + u64::from(r)))
    }
}

/// Which rule of `NextSeg ()` (RFC 6675 section 4) chose a segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextSeg {
    /// Rule 1: the first unSACKed range above HighRxt that `IsLost` says is lost.
    Lost {
        /// First byte.
        seq: u64,
        /// Bytes.
        len: Bytes,
    },
    /// Rule 2: previously unsent data (the caller sends from SND.NXT).
    NewData,
    /// Rule 3: the first unSACKed range above HighRxt below the highest SACKed byte, not yet
    /// deemed lost.
    Unsacked {
        /// First byte.
        seq: u64,
        /// Bytes.
        len: Bytes,
    },
    /// Rule 4: the rescue retransmission of the highest unSACKed data.
    Rescue {
        /// First byte.
        seq: u64,
        /// Bytes.
        len: Bytes,
    },
}

/// The RFC 6675 scoreboard of one sender.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    /// SACKed ranges above HighACK (SND.UNA), sorted and disjoint, merged where they touch.
    sacked: Vec<(u64, u64)>,
    /// Sum of the SACKed ranges' lengths, bytes.
    sacked_bytes: Bytes,
    /// HighRxt as an exclusive end: one past the highest byte retransmitted in this recovery
    /// (RFC 6675 section 2); bytes below it that are not SACKed have been retransmitted.
    high_rxt: u64,
    /// RescueRxt as an exclusive end (RFC 6675 keeps the highest byte; this is one past it):
    /// the end of the fast retransmit when recovery began (step 4.3), then RecoveryPoint after
    /// a rescue retransmission (NextSeg rule 4); a rescue needs SND.UNA beyond it.
    rescue_rxt: Option<u64>,
    /// `pipe` (section 4, SetPipe), bytes; raised by the sender on each transmission in
    /// recovery (section 5 step C.4).
    pipe: Bytes,
    /// DupThresh (3).
    dup_thresh: u32,
    /// SMSS, bytes.
    mss: Bytes,
}

impl Scoreboard {
    /// An empty scoreboard for segments of `mss` bytes and the given DupThresh.
    pub fn new(mss: Bytes, dup_thresh: u32) -> Scoreboard {
        Scoreboard {
            sacked: Vec::new(),
            sacked_bytes: 0,
            high_rxt: 0,
            rescue_rxt: None,
            pipe: 0,
            dup_thresh: dup_thresh.max(1),
            mss: mss.max(1),
        }
    }

    /// Bytes SACKed above SND.UNA.
    pub fn sacked_bytes(&self) -> Bytes {
        self.sacked_bytes
    }

    /// The SACKed ranges, lowest first.
    pub fn sacked(&self) -> &[(u64, u64)] {
        &self.sacked
    }

    /// HighRxt (exclusive end).
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt
    }

    /// RescueRxt, if a rescue retransmission went out in this recovery.
    pub fn rescue_rxt(&self) -> Option<u64> {
        self.rescue_rxt
    }

    /// `pipe` as last set, plus what was sent since, bytes.
    pub fn pipe(&self) -> Bytes {
        self.pipe
    }

    /// `Update ()` (RFC 6675 section 4) for an ACK of every byte below `snd_una` with `blocks`:
    /// forgets what the cumulative ACK covers, records each block clipped to
    /// `[snd_una, snd_max)` (a block beyond what was sent is not believed). Returns the bytes
    /// newly SACKed.
    pub fn update(
        &mut self,
        snd_una: u64,
        snd_max: u64,
        blocks: impl IntoIterator<Item = (u64, u64)>,
    ) -> Bytes {
        let covered = self.sacked.partition_point(|&(_, e)| e <= snd_una);
        if covered > 0 {
            for &(s, e) in &self.sacked[..covered] {
                self.sacked_bytes -= e - s;
            }
            self.sacked.drain(..covered);
        }
        if let Some(first) = self.sacked.first_mut() {
            if first.0 < snd_una {
                self.sacked_bytes -= snd_una - first.0;
                first.0 = snd_una;
            }
        }
        let before = self.sacked_bytes;
        for (s, e) in blocks {
            let (s, e) = (s.max(snd_una), e.min(snd_max));
            if s < e {
                self.insert(s, e);
            }
        }
        self.sacked_bytes - before
    }

    /// Adds `[start, end)` to the SACKed ranges, merging every range it overlaps or touches.
    fn insert(&mut self, start: u64, end: u64) {
        let first = self.sacked.partition_point(|&(_, e)| e < start);
        let last = self.sacked.partition_point(|&(s, _)| s <= end);
        if first == last {
            self.sacked.insert(first, (start, end));
            self.sacked_bytes += end - start;
            return;
        }
        let merged = (
            start.min(self.sacked[first].0),
            end.max(self.sacked[last - 1].1),
        );
        for &(s, e) in &self.sacked[first..last] {
            self.sacked_bytes -= e - s;
        }
        self.sacked[first] = merged;
        self.sacked.drain(first + 1..last);
        self.sacked_bytes += merged.1 - merged.0;
    }

    /// Forgets every SACK (RFC 2018 section 8, RFC 6675 section 5.1: after a retransmission
    /// timeout the receiver may have reneged) and the recovery's HighRxt and RescueRxt.
    pub fn clear(&mut self, snd_una: u64) {
        self.sacked.clear();
        self.sacked_bytes = 0;
        self.high_rxt = snd_una;
        self.rescue_rxt = None;
    }

    /// Loss recovery begins at `snd_una` (RFC 6675 section 5 step 4.3, before the first
    /// retransmission raises HighRxt): no retransmission of this recovery yet.
    pub fn start_recovery(&mut self, snd_una: u64) {
        self.high_rxt = snd_una;
        self.rescue_rxt = None;
    }

    /// The lowest sequence number above which `IsLost` is false: every unSACKed byte below it
    /// is lost, none at or above it. `IsLost (SeqNum)` (RFC 6675 section 4) holds when more than
    /// (DupThresh - 1) * SMSS bytes above SeqNum are SACKed, or DupThresh discontiguous SACKed
    /// ranges lie above it (a range of several segments counts once: the conservative reading
    /// for segments of any size).
    pub fn lost_below(&self) -> u64 {
        let bytes = u64::from(self.dup_thresh - 1) * self.mss;
        let mut above: Bytes = 0;
        for (ranges, &(s, e)) in self.sacked.iter().rev().enumerate() {
            above += e - s;
            if above > bytes || ranges + 1 >= self.dup_thresh as usize {
                return s;
            }
        }
        0
    }

    /// `IsLost (seq)` for an unSACKed byte `seq` (RFC 6675 section 4).
    pub fn is_lost(&self, seq: u64) -> bool {
        seq < self.lost_below()
    }

    /// SACKed bytes within `[start, end)`.
    fn sacked_within(&self, start: u64, end: u64) -> Bytes {
        if start >= end {
            return 0;
        }
        let first = self.sacked.partition_point(|&(_, e)| e <= start);
        self.sacked[first..]
            .iter()
            .take_while(|&&(s, _)| s < end)
            .map(|&(s, e)| e.min(end) - s.max(start))
            .sum()
    }

    /// Bytes in `[start, end)` not SACKed.
    fn unsacked_within(&self, start: u64, end: u64) -> Bytes {
        end.saturating_sub(start) - self.sacked_within(start, end)
    }

    /// `SetPipe ()` (RFC 6675 section 4): for each unSACKed byte in `[snd_una, snd_max)`, one if
    /// `IsLost` is false (the original is still in flight) and one more if it is below HighRxt
    /// (its retransmission is). Returns and stores `pipe`, bytes.
    pub fn set_pipe(&mut self, snd_una: u64, snd_max: u64) -> Bytes {
        self.pipe = self.pipe_of(snd_una, snd_max);
        self.pipe
    }

    /// What [`Scoreboard::set_pipe`] would set, without storing it.
    pub fn pipe_of(&self, snd_una: u64, snd_max: u64) -> Bytes {
        let original = self.unsacked_within(self.lost_below().max(snd_una), snd_max);
        let retransmitted = self.unsacked_within(snd_una, self.high_rxt.min(snd_max));
        original + retransmitted
    }

    /// The first byte at or above `seq` and below `limit` that is not SACKed, with the
    /// length of the segment from it (at most SMSS, not into SACKed data).
    pub fn hole_at(&self, seq: u64, limit: u64) -> Option<(u64, Bytes)> {
        self.first_hole(seq, limit)
    }

    /// The first unSACKed byte at or above `from` and below `limit`, with the length of the
    /// segment from it: at most SMSS, ending at the next SACKed range or at `limit`.
    fn first_hole(&self, from: u64, limit: u64) -> Option<(u64, Bytes)> {
        let mut seq = from;
        let i = self.sacked.partition_point(|&(_, e)| e <= seq);
        let mut next = self.sacked.get(i).copied();
        if let Some((s, e)) = next {
            if s <= seq {
                seq = e;
                next = self.sacked.get(i + 1).copied();
            }
        }
        if seq >= limit {
            return None;
        }
        let hole_end = next.map_or(limit, |(s, _)| s.min(limit));
        Some((seq, (hole_end - seq).min(self.mss)))
    }

    /// `NextSeg ()` (RFC 6675 section 4) in recovery:
    /// rule 1 the first lost unSACKed segment above HighRxt; else rule 2 new data if
    /// `new_data` (unsent data exists and the receiver's window allows); else rule 3 the
    /// first unSACKed segment above HighRxt below the highest SACKed byte; else rule 4 one
    /// rescue retransmission per recovery point reached (HighACK > RescueRxt).
    pub fn next_seg(&self, snd_una: u64, snd_max: u64, new_data: bool) -> Option<NextSeg> {
        let from = self.high_rxt.max(snd_una);
        let lost_below = self.lost_below().min(snd_max);
        if let Some((seq, len)) = self.first_hole(from, lost_below) {
            return Some(NextSeg::Lost { seq, len });
        }
        if new_data {
            return Some(NextSeg::NewData);
        }
        let highest_sacked = self.sacked.last().map_or(0, |&(_, e)| e).min(snd_max);
        if let Some((seq, len)) = self.first_hole(from, highest_sacked) {
            return Some(NextSeg::Unsacked { seq, len });
        }
        if self.rescue_rxt.is_none_or(|r| snd_una > r) {
            // The segment holding the highest outstanding unSACKed byte.
            let top = match self.sacked.last() {
                Some(&(s, e)) if e >= snd_max => s,
                _ => snd_max,
            };
            if top > snd_una {
                let floor = self
                    .sacked
                    .iter()
                    .rev()
                    .map(|&(_, e)| e)
                    .find(|&e| e < top)
                    .unwrap_or(snd_una)
                    .max(snd_una);
                let seq = top.saturating_sub(self.mss).max(floor);
                return Some(NextSeg::Rescue {
                    seq,
                    len: top - seq,
                });
            }
        }
        None
    }

    /// The fast retransmit of `len` bytes at `seq` (RFC 6675 section 5 step 4.3): HighRxt and
    /// RescueRxt are set to its end, so that neither it nor a premature rescue is sent again.
    pub fn on_fast_retransmit(&mut self, seq: u64, len: Bytes) {
        self.high_rxt = self.high_rxt.max(seq + len);
        self.rescue_rxt = Some(seq + len);
        self.pipe += len;
    }

    /// A retransmission of `len` bytes at `seq` by NextSeg rule 1 or 3 (step C.2, C.4):
    /// HighRxt rises to its end; `pipe` grows by `len`.
    pub fn on_retransmit(&mut self, seq: u64, len: Bytes) {
        self.high_rxt = self.high_rxt.max(seq + len);
        self.pipe += len;
    }

    /// The rescue retransmission of `len` bytes (rule 4): RescueRxt = RecoveryPoint, HighRxt
    /// unchanged; `pipe` grows by `len`.
    pub fn on_rescue(&mut self, recovery_point: u64, len: Bytes) {
        self.rescue_rxt = Some(recovery_point);
        self.pipe += len;
    }

    /// `len` bytes of new data sent (step C.3, C.4): `pipe` grows by `len`.
    pub fn on_sent_new(&mut self, len: Bytes) {
        self.pipe += len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: Bytes = 1000;

    #[test]
    fn the_option_takes_two_nops_kind_length_and_eight_bytes_a_block() {
        assert_eq!(SackBlocks::new(100, std::iter::empty()).wire_bytes(), 0);
        assert_eq!(SackBlocks::new(100, [(200, 300)]).wire_bytes(), 12);
        let four = [(200, 300), (400, 500), (600, 700), (800, 900)];
        assert_eq!(SackBlocks::new(100, four).wire_bytes(), 28, "three kept");
    }

    fn board(ranges: &[(u64, u64)], snd_max: u64) -> Scoreboard {
        let mut sb = Scoreboard::new(MSS, 3);
        sb.update(0, snd_max, ranges.iter().copied());
        sb
    }

    #[test]
    fn blocks_keep_three_above_the_ack_in_the_order_given() {
        let b = SackBlocks::new(
            1000,
            [
                (5000, 6000),
                (500, 900),
                (3000, 4000),
                (7000, 7000),
                (8000, 9000),
                (10_000, 11_000),
            ],
        );
        assert_eq!(b.len(), 3);
        assert_eq!(
            b.ranges(1000).collect::<Vec<_>>(),
            vec![(5000, 6000), (3000, 4000), (8000, 9000)]
        );
        assert!(SackBlocks::new(0, [(1u64 << 33, (1u64 << 33) + 1)]).is_empty());
    }

    #[test]
    fn update_merges_touching_blocks_and_forgets_what_the_cumulative_ack_covers() {
        let mut sb = Scoreboard::new(MSS, 3);
        assert_eq!(sb.update(0, 10_000, [(2000, 3000), (4000, 5000)]), 2000);
        assert_eq!(sb.update(0, 10_000, [(3000, 4000), (2000, 3000)]), 1000);
        assert_eq!(sb.sacked(), &[(2000, 5000)]);
        // A block beyond what was sent is clipped to SND.MAX.
        assert_eq!(sb.update(0, 10_000, [(9000, 12_000)]), 1000);
        // The cumulative ACK reaches into the first range.
        assert_eq!(sb.update(2500, 10_000, []), 0);
        assert_eq!(sb.sacked(), &[(2500, 5000), (9000, 10_000)]);
        assert_eq!(sb.sacked_bytes(), 3500);
    }

    #[test]
    fn is_lost_needs_more_than_two_segments_or_three_ranges_sacked_above() {
        // Two separate segments SACKed above 1000: not lost (2000 bytes is not more than
        // (DupThresh - 1) * SMSS, two ranges are fewer than DupThresh).
        let sb = board(&[(2000, 3000), (4000, 5000)], 10_000);
        assert!(!sb.is_lost(0));
        // A third range above: everything below the lowest of the three is lost.
        let sb = board(&[(2000, 3000), (4000, 5000), (6000, 7000)], 10_000);
        assert_eq!(sb.lost_below(), 2000);
        assert!(sb.is_lost(1000) && !sb.is_lost(3000));
        // One range of three segments: more than 2 SMSS SACKed above 0.
        let sb = board(&[(1000, 4000)], 10_000);
        assert_eq!(sb.lost_below(), 1000);
        assert!(sb.is_lost(0));
        // 2500 bytes in two ranges: above 500 lies more than 2000 SACKed bytes.
        let sb = board(&[(1000, 2000), (3000, 4500)], 10_000);
        assert_eq!(sb.lost_below(), 1000);
        assert!(!sb.is_lost(2000));
    }

    #[test]
    fn set_pipe_counts_unsacked_bytes_not_lost_and_again_those_retransmitted() {
        // 0..10000 sent, 1000..4000 SACKed: 0..1000 is lost, 4000..10000 in flight.
        let mut sb = board(&[(1000, 4000)], 10_000);
        sb.start_recovery(0);
        assert_eq!(sb.set_pipe(0, 10_000), 6000);
        // The fast retransmit adds its bytes (step C.4) and SetPipe agrees (S1 <= HighRxt).
        sb.on_fast_retransmit(0, 1000);
        assert_eq!(sb.pipe(), 7000);
        assert_eq!(sb.set_pipe(0, 10_000), 7000);
        assert_eq!((sb.high_rxt(), sb.rescue_rxt()), (1000, Some(1000)));
    }

    #[test]
    fn next_seg_takes_lost_data_then_new_data_then_unsacked_data() {
        let mut sb = board(&[(1000, 2000), (3000, 4000), (5000, 6000)], 8000);
        sb.start_recovery(0);
        // Rule 1: 0..1000 is lost (three ranges above it); 2000..3000 is not (two above).
        assert_eq!(
            sb.next_seg(0, 8000, true),
            Some(NextSeg::Lost { seq: 0, len: 1000 })
        );
        sb.on_fast_retransmit(0, 1000);
        // Rule 2 before rule 3.
        assert_eq!(sb.next_seg(0, 8000, true), Some(NextSeg::NewData));
        // Rule 3: the first unSACKed segment above HighRxt below the highest SACK.
        assert_eq!(
            sb.next_seg(0, 8000, false),
            Some(NextSeg::Unsacked {
                seq: 2000,
                len: 1000
            })
        );
        sb.on_retransmit(2000, 1000);
        assert_eq!(
            sb.next_seg(0, 8000, false),
            Some(NextSeg::Unsacked {
                seq: 4000,
                len: 1000
            })
        );
        sb.on_retransmit(4000, 1000);
        // Rule 4 waits for HighACK beyond RescueRxt (the fast retransmit's end, step 4.3).
        assert_eq!(sb.next_seg(0, 8000, false), None);
        // HighACK moves past it: the rescue is the highest unSACKed segment, 7000..8000.
        sb.update(2000, 8000, []);
        assert_eq!(
            sb.next_seg(2000, 8000, false),
            Some(NextSeg::Rescue {
                seq: 7000,
                len: 1000
            })
        );
        sb.on_rescue(8000, 1000);
        assert_eq!(sb.high_rxt(), 5000, "a rescue does not move HighRxt");
        assert_eq!(
            sb.next_seg(2000, 8000, false),
            None,
            "one rescue per recovery"
        );
    }

    #[test]
    fn a_segment_stops_at_the_next_sacked_byte() {
        let mut sb = board(
            &[(1500, 2000), (2500, 3000), (3500, 4000), (4500, 5000)],
            6000,
        );
        sb.start_recovery(0);
        assert_eq!(
            sb.next_seg(0, 6000, false),
            Some(NextSeg::Lost { seq: 0, len: 1000 })
        );
        sb.on_retransmit(0, 1000);
        assert_eq!(
            sb.next_seg(0, 6000, false),
            Some(NextSeg::Lost {
                seq: 1000,
                len: 500
            })
        );
    }

    #[test]
    fn the_rescue_covers_the_highest_unsacked_byte_below_a_sack_at_the_top() {
        let mut sb = board(&[(3000, 5000)], 5000);
        sb.start_recovery(0);
        sb.on_fast_retransmit(0, 1000);
        sb.on_retransmit(1000, 1000);
        sb.on_retransmit(2000, 1000);
        sb.update(1500, 5000, []);
        assert_eq!(
            sb.next_seg(1500, 5000, false),
            Some(NextSeg::Rescue {
                seq: 2000,
                len: 1000
            })
        );
    }

    #[test]
    fn clear_forgets_every_sack_and_the_recovery_marks() {
        let mut sb = board(&[(1000, 4000)], 10_000);
        sb.on_fast_retransmit(0, 1000);
        sb.clear(0);
        assert_eq!(
            (sb.sacked_bytes(), sb.high_rxt(), sb.rescue_rxt()),
            (0, 0, None)
        );
        assert_eq!(sb.set_pipe(0, 10_000), 10_000);
    }
}
