//! The Congestion Manager's applications (Balakrishnan, Rahul and Seshan, section 3.2): the
//! layered audio server's choice of encoding (section 3.2.2), the Web server's choice of
//! representation (section 3.2.1), and a `cmudp` sender's account of per-packet ACKs (the
//! per-ACK feedback of section 2.2.1). Sans-IO: each takes `now` and the CM's figures, and the
//! host (simulator or daemon) sends the packets.

use crate::time::{Duration, Instant};
use crate::units::Rate;

/// One rate report to an audio flow (`change_rate`) and the encoding it chose on it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EncodingChange {
    /// When.
    pub at: Instant,
    /// The encoding chosen.
    pub rate: Rate,
    /// The share of the macroflow's rate the choice was made from.
    pub share: Rate,
}

/// The layered audio server's state (paper section 3.2.2).
#[derive(Debug)]
pub struct AudioState {
    /// The encodings, ascending.
    pub encodings: Vec<Rate>,
    /// The index of the encoding in use.
    pub current: usize,
    /// When it came into use.
    pub since: Instant,
    /// Time spent on each encoding before `since`.
    pub time_on: Vec<Duration>,
    /// Every rate report (`change_rate`) and the encoding chosen on it, the first included.
    pub changes: Vec<EncodingChange>,
    /// When the server's next packet is due, as its driver's send timer stands (`None`: no
    /// send scheduled).
    pub armed: Option<Instant>,
}

impl AudioState {
    /// A server that starts on the lowest encoding: before the CM has an estimate, `cm_query`
    /// gives no rate to choose by.
    pub fn new(encodings: Vec<Rate>) -> AudioState {
        let n = encodings.len();
        AudioState {
            encodings,
            current: 0,
            since: Instant::ZERO,
            time_on: vec![Duration::ZERO; n],
            changes: Vec::new(),
            armed: None,
        }
    }

    /// The highest encoding not above `share`, or the lowest if every one is above it.
    pub fn choose(&self, share: Rate) -> usize {
        self.encodings
            .iter()
            .rposition(|e| *e <= share)
            .unwrap_or(0)
    }

    /// Switches to the encoding for `share` at `now`, recording the change.
    pub fn adapt(&mut self, now: Instant, share: Rate) {
        let next = self.choose(share);
        if next != self.current || self.changes.is_empty() {
            self.settle(now);
            self.current = next;
        }
        self.changes.push(EncodingChange {
            at: now,
            rate: self.rate(),
            share,
        });
    }

    /// Adds the time on the current encoding up to `now` to its account.
    pub fn settle(&mut self, now: Instant) {
        if let Some(t) = self.time_on.get_mut(self.current) {
            *t += now.saturating_since(self.since);
        }
        self.since = self.since.max(now);
    }

    /// The encoding in use.
    pub fn rate(&self) -> Rate {
        self.encodings
            .get(self.current)
            .copied()
            .unwrap_or(Rate::ZERO)
    }
}

/// A `cmudp` sender with per-packet ACKs (`feedback = "ack"`): what its ACKs have told it so
/// far. The receiver acknowledges every packet with the packet's sequence number and the
/// number of the flow's packets it has received in all; with data and ACKs each in order (one
/// FIFO path each way), every packet below the one acknowledged that the count leaves out is
/// lost, and a lost ACK loses nothing, as the next one carries the count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckFeedback {
    /// Packets whose fate is known: one above the highest sequence number acknowledged.
    pub through: u64,
    /// Packets the receiver had received, as of the newest ACK.
    pub received: u64,
    /// Packets known lost: `through - received` as of the newest ACK.
    pub lost: u64,
    /// ACKs taken.
    pub acks: u64,
}

/// What one ACK adds to the sender's account: packets newly received and newly lost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckNews {
    /// Packets the receiver got since the previous ACK taken.
    pub received: u64,
    /// Packets found lost since the previous ACK taken.
    pub lost: u64,
}

impl AckFeedback {
    /// Takes an ACK of packet `seq` that says `received` packets have arrived in all. An ACK
    /// older than one already taken (`seq` below `through`) tells nothing new: `None`.
    pub fn on_ack(&mut self, seq: u64, received: u64) -> Option<AckNews> {
        let through = seq.checked_add(1)?;
        if through <= self.through {
            return None;
        }
        // The receiver cannot have more packets than were sent up to the one it acknowledges;
        // a count beyond that is capped, so that it reports no delivery that did not happen.
        let received = received.clamp(self.received, through);
        let lost = through - received;
        let news = AckNews {
            received: received - self.received,
            lost: lost.saturating_sub(self.lost),
        };
        self.through = through;
        self.received = received;
        self.lost = self.lost.max(lost);
        self.acks += 1;
        Some(news)
    }
}

/// The largest of `representations` (ascending, in bytes) that `share` delivers within
/// `latency`, or the smallest if none does or there is no estimate (paper section 3.2.1: the
/// server picks the representation that maximises quality without incurring high latency).
pub fn pick_representation(
    representations: &[u64],
    share: Option<Rate>,
    latency: Duration,
) -> Option<u64> {
    let smallest = representations.first().copied();
    let Some(share) = share else {
        return smallest;
    };
    representations
        .iter()
        .rev()
        .find(|b| share.transmit_time(**b) <= latency)
        .copied()
        .or(smallest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audio() -> AudioState {
        AudioState::new([10, 20, 40, 80, 160, 320].map(Rate::from_kbps).to_vec())
    }

    #[test]
    fn the_audio_server_takes_the_highest_encoding_not_above_its_share() {
        let a = audio();
        assert_eq!(a.choose(Rate::from_kbps(5)), 0);
        assert_eq!(a.choose(Rate::from_kbps(80)), 3);
        assert_eq!(a.choose(Rate::from_kbps(159)), 3);
        assert_eq!(a.choose(Rate::from_kbps(1000)), 5);
    }

    #[test]
    fn a_web_object_takes_the_largest_representation_its_share_delivers_in_time() {
        let reps = [16_000, 64_000, 256_000];
        let second = Duration::from_secs(1);
        // 512 kbit/s delivers 64 KB in exactly one second, 256 KB in four.
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_kbps(512)), second),
            Some(64_000)
        );
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_kbps(511)), second),
            Some(16_000)
        );
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_kbps(10)), second),
            Some(16_000)
        );
        assert_eq!(
            pick_representation(&reps, Some(Rate::from_mbps(3)), second),
            Some(256_000)
        );
        assert_eq!(pick_representation(&reps, None, second), Some(16_000));
        assert_eq!(pick_representation(&[], None, second), None);
    }

    #[test]
    fn an_ack_reports_the_packets_received_and_lost_since_the_one_before() {
        let mut k = AckFeedback::default();
        // Packets 0..=3 all arrived.
        assert_eq!(
            k.on_ack(3, 4),
            Some(AckNews {
                received: 4,
                lost: 0
            })
        );
        // Packets 4 and 5 lost, 6 arrived: the ACK of 6 counts 5 received of 7 sent.
        assert_eq!(
            k.on_ack(6, 5),
            Some(AckNews {
                received: 1,
                lost: 2
            })
        );
        // The ACKs of 7 and 8 lost, the one of 9 arrives: 3 more received, nothing lost.
        assert_eq!(
            k.on_ack(9, 8),
            Some(AckNews {
                received: 3,
                lost: 0
            })
        );
        assert_eq!(
            k,
            AckFeedback {
                through: 10,
                received: 8,
                lost: 2,
                acks: 3
            }
        );
        // An ACK older than the newest taken changes nothing.
        assert_eq!(k.on_ack(8, 7), None);
        assert_eq!(k.on_ack(9, 8), None);
        assert_eq!(k.acks, 3);
    }

    #[test]
    fn an_ack_that_claims_more_than_was_sent_reports_no_more_than_was_sent() {
        let mut k = AckFeedback::default();
        assert_eq!(
            k.on_ack(1, 50),
            Some(AckNews {
                received: 2,
                lost: 0
            })
        );
        // A count below one already taken neither takes deliveries back nor invents losses
        // beyond the packets the ACK covers.
        assert_eq!(
            k.on_ack(2, 1),
            Some(AckNews {
                received: 0,
                lost: 1
            })
        );
        assert_eq!(k.on_ack(u64::MAX, 0), None);
    }

    #[test]
    fn time_on_each_encoding_adds_up_between_changes() {
        let mut a = audio();
        a.adapt(Instant::from_millis(100), Rate::from_kbps(100)); // 80 kbit/s from 0.1 s
        a.adapt(Instant::from_millis(600), Rate::from_kbps(90)); // still 80 kbit/s
        a.adapt(Instant::from_millis(1100), Rate::from_kbps(45)); // 40 kbit/s
        a.settle(Instant::from_millis(2100));
        assert_eq!(a.time_on[0], Duration::from_millis(100));
        assert_eq!(a.time_on[3], Duration::from_millis(1000));
        assert_eq!(a.time_on[2], Duration::from_millis(1000));
        assert_eq!(a.changes.len(), 3);
        assert_eq!(a.rate(), Rate::from_kbps(40));
    }
}
