//! Proportional Rate Reduction (RFC 6937): how much a sender in fast recovery may send on each
//! ACK, so that the data in flight falls smoothly to ssthresh instead of halting for half a
//! window (RFC 6582 inflation) and then bursting.
//!
//! All quantities are bytes. The sender calls [`Prr::start`] when recovery begins,
//! [`Prr::on_ack`] on every ACK in recovery (it returns `sndcnt`, RFC 6937 section 3) and
//! [`Prr::on_sent`] for every byte sent during recovery, retransmissions included.

/// The bound on sending once the data in flight is at or below ssthresh (RFC 6937 section 3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReductionBound {
    /// PRR-SSRB, the RFC's recommendation: slow start toward ssthresh, at most one segment
    /// more than was delivered on each ACK.
    #[default]
    SlowStart,
    /// PRR-CRB: never send more than was delivered (strict packet conservation).
    Conservative,
}

/// The PRR state of one recovery episode (RFC 6937 section 3's variables).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prr {
    /// ssthresh set by the congestion controller when recovery began, bytes.
    ssthresh: u64,
    /// `RecoverFS`: snd.nxt - snd.una when recovery began, bytes.
    recover_fs: u64,
    /// `prr_delivered`: bytes delivered to the receiver since recovery began.
    prr_delivered: u64,
    /// `prr_out`: bytes sent since recovery began.
    prr_out: u64,
    bound: ReductionBound,
}

impl Prr {
    /// A new recovery episode: "At the beginning of recovery" in RFC 6937 section 3.
    pub fn start(ssthresh: u64, recover_fs: u64, bound: ReductionBound) -> Prr {
        Prr {
            ssthresh,
            recover_fs: recover_fs.max(1),
            prr_delivered: 0,
            prr_out: 0,
            bound,
        }
    }

    /// "On every ACK during recovery": `delivered` is DeliveredData (the change in snd.una plus
    /// the change in SACKed bytes), `pipe` the sender's estimate of the data in flight (RFC
    /// 6675). Returns `sndcnt`, the bytes the sender may send now (`cwnd = pipe + sndcnt`);
    /// never negative.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, mss: u64) -> u64 {
        self.prr_delivered = self.prr_delivered.saturating_add(delivered);
        let sndcnt: i128 = if pipe > self.ssthresh {
            // Proportional Rate Reduction:
            // sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out, the ceiling taken
            // in whole segments as in the RFC's examples and Linux's `tcp_cwnd_reduction`
            // (packets): a sender of full segments is not held back by a fraction of one.
            let num = u128::from(self.prr_delivered) * u128::from(self.ssthresh);
            let den = u128::from(self.recover_fs) * u128::from(mss.max(1));
            (num.div_ceil(den) * u128::from(mss.max(1))) as i128 - i128::from(self.prr_out)
        } else {
            let owed = i128::from(self.prr_delivered) - i128::from(self.prr_out);
            let limit = match self.bound {
                // PRR-CRB: limit = prr_delivered - prr_out.
                ReductionBound::Conservative => owed,
                // PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS.
                ReductionBound::SlowStart => owed.max(i128::from(delivered)) + i128::from(mss),
            };
            // Attempt to catch up, as permitted by limit: sndcnt = MIN(ssthresh - pipe, limit).
            (i128::from(self.ssthresh) - i128::from(pipe)).min(limit)
        };
        sndcnt.max(0) as u64
    }

    /// "On any data transmission or retransmission": prr_out += data sent.
    pub fn on_sent(&mut self, bytes: u64) {
        self.prr_out = self.prr_out.saturating_add(bytes);
    }

    /// ssthresh of this episode: the window on leaving recovery (RFC 6937 section 3, "cwnd =
    /// ssthresh" at the end of recovery).
    pub fn ssthresh(&self) -> u64 {
        self.ssthresh
    }

    /// Bytes delivered since recovery began.
    pub fn prr_delivered(&self) -> u64 {
        self.prr_delivered
    }

    /// Bytes sent since recovery began.
    pub fn prr_out(&self) -> u64 {
        self.prr_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    /// Runs RFC 6937 section 6's scenario: cwnd = FlightSize = 20 segments, so ssthresh = 10
    /// and RecoverFS = 20; each ACK delivers one segment; the sender sends all it may and its
    /// pipe falls by the delivered segment and rises by what it sends. Returns the segments
    /// sent on each ACK and the pipe it saw (after the delivery, before sending).
    fn run(bound: ReductionBound, pipe_at_start: u64, acks: usize) -> (Vec<u64>, Vec<u64>) {
        let mut prr = Prr::start(10 * MSS, 20 * MSS, bound);
        let mut pipe = pipe_at_start * MSS;
        let (mut sent, mut pipes) = (Vec::new(), Vec::new());
        for _ in 0..acks {
            pipe -= MSS;
            pipes.push(pipe / MSS);
            let sndcnt = prr.on_ack(MSS, pipe, MSS);
            let segments = sndcnt / MSS;
            prr.on_sent(segments * MSS);
            pipe += segments * MSS;
            sent.push(segments);
        }
        (sent, pipes)
    }

    #[test]
    fn a_single_loss_sends_one_segment_on_every_other_ack_down_to_ssthresh() {
        // Section 6, first example: one loss in a window of 20. From the third duplicate ACK
        // on, 19 segments remain to be acknowledged; PRR sends on alternate ACKs (the
        // retransmission first), ending with pipe = ssthresh = 10.
        let (sent, pipes) = run(ReductionBound::SlowStart, 20, 18);
        assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]);
        assert_eq!(
            pipes,
            [19, 19, 18, 18, 17, 17, 16, 16, 15, 15, 14, 14, 13, 13, 12, 12, 11, 11]
        );
        // The proportional branch alone ran: both bounds agree.
        assert_eq!(run(ReductionBound::Conservative, 20, 18).0, sent);
    }

    #[test]
    fn the_proportional_part_is_the_ceiling_of_delivered_times_ssthresh_over_recover_fs() {
        let mut prr = Prr::start(7 * MSS, 15 * MSS, ReductionBound::SlowStart);
        // 1000 * 7000 / 15000 = 466.7 bytes: the ceiling is one whole segment.
        assert_eq!(prr.on_ack(MSS, 12 * MSS, MSS), MSS);
        prr.on_sent(MSS);
        // 3000 * 7000 / 15000 = 1400 bytes: two segments, less the one sent.
        assert_eq!(prr.on_ack(2 * MSS, 12 * MSS, MSS), MSS);
        // 6000 * 7000 / 15000 = 2800 bytes: three segments, less the two sent (the ACK's
        // own share and the one before).
        prr.on_sent(MSS);
        assert_eq!(prr.on_ack(3 * MSS, 12 * MSS, MSS), MSS);
        assert_eq!((prr.prr_delivered(), prr.prr_out()), (6 * MSS, 2 * MSS));
    }

    #[test]
    fn after_a_burst_of_losses_crb_sends_what_was_delivered() {
        // Section 6, second example: 15 of the 20 segments lost; after the third duplicate
        // ACK pipe is 4 (RFC 6675's count: 20 sent + 2 by limited transmit, 3 SACKed, 15
        // lost), below ssthresh. PRR-CRB keeps pipe at 4: one segment per segment delivered.
        let (sent, pipes) = run(ReductionBound::Conservative, 5, 6);
        assert_eq!(sent, [1, 1, 1, 1, 1, 1]);
        assert_eq!(pipes, [4, 4, 4, 4, 4, 4]);
    }

    #[test]
    fn after_a_burst_of_losses_ssrb_slow_starts_to_ssthresh() {
        // The same burst under PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData)
        // + MSS = 2 segments per ACK, so pipe grows by one per ACK until it reaches ssthresh,
        // then one per ACK holds it there.
        let (sent, pipes) = run(ReductionBound::SlowStart, 5, 9);
        assert_eq!(sent, [2, 2, 2, 2, 2, 1, 1, 1, 1]);
        assert_eq!(pipes, [4, 5, 6, 7, 8, 9, 9, 9, 9]);
    }

    #[test]
    fn ssrb_sends_what_is_owed_when_more_was_delivered_than_sent() {
        // pipe 6 <= ssthresh 10; prr_delivered 5000, prr_out 1000: limit = MAX(4000, 3000) +
        // 1000 = 5000; ssthresh - pipe = 4000: sndcnt = 4000.
        let mut prr = Prr::start(10 * MSS, 20 * MSS, ReductionBound::SlowStart);
        prr.on_ack(2 * MSS, 12 * MSS, MSS);
        prr.on_sent(MSS);
        assert_eq!(prr.on_ack(3 * MSS, 6 * MSS, MSS), 4 * MSS);
        // CRB in the same state: limit = 4000, ssthresh - pipe = 4000.
        let mut crb = Prr::start(10 * MSS, 20 * MSS, ReductionBound::Conservative);
        crb.on_ack(2 * MSS, 12 * MSS, MSS);
        crb.on_sent(MSS);
        assert_eq!(crb.on_ack(3 * MSS, 8 * MSS, MSS), 2 * MSS);
    }

    #[test]
    fn having_sent_more_than_the_proportion_allows_gives_zero_not_a_negative_count() {
        let mut prr = Prr::start(10 * MSS, 20 * MSS, ReductionBound::SlowStart);
        prr.on_sent(3 * MSS);
        // CEIL(1000 * 10000 / 20000), one segment, less 3000 sent: below zero.
        assert_eq!(prr.on_ack(MSS, 15 * MSS, MSS), 0);
    }
}
