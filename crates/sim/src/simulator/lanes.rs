//! The propagation lanes: one per distinct propagation delay.
//!
//! A packet that finishes its transmission on a channel of delay `d` at time `t` arrives at
//! `t + d`. Transmissions end in time order, so the arrivals on all the channels that share a
//! delay are in time order as well, and one FIFO lane of the event queue holds them all (see
//! [`crate::event`]). A dumbbell has two or three delays whatever the number of flows.

use crate::channel::Channel;
use std::collections::HashMap;

/// Gives each channel its lane and returns the number of lanes: lanes are numbered in the order
/// their delay first appears among the channels (by index), so the numbering depends on the
/// scenario alone.
pub(super) fn propagation_lanes(channels: &mut [Channel]) -> usize {
    let mut by_delay: HashMap<u64, u32> = HashMap::new();
    for ch in channels.iter_mut() {
        let next = by_delay.len() as u32;
        let lane = *by_delay.entry(ch.delay.as_nanos()).or_insert(next);
        ch.set_arrival_lane(lane);
    }
    by_delay.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{ChannelSpec, LossFilter};
    use concord_cc::aqm::{AqmConfig, QueueLimit};
    use concord_cc::rng::Rng;
    use concord_cc::time::Duration;
    use concord_cc::units::Rate;

    fn channel(delay_us: u64) -> Channel {
        let spec = ChannelSpec {
            rate: Rate::from_mbps(10),
            delay: Duration::from_micros(delay_us),
            queue: AqmConfig::DropTail {
                limit: QueueLimit::Packets(10),
            },
            loss: 0.0,
            loss_applies_to: LossFilter::All,
            gcca: None,
            eca: None,
            framing_bytes: 0,
        };
        Channel::new("a->b".into(), 0, 1, &spec, Rng::new(1))
    }

    #[test]
    fn channels_of_one_delay_share_a_lane_numbered_by_first_appearance() {
        let mut channels: Vec<Channel> = [1_000, 25_000, 1_000, 25_000, 3, 1_000]
            .into_iter()
            .map(channel)
            .collect();
        assert_eq!(propagation_lanes(&mut channels), 3);
        let lanes: Vec<u32> = channels.iter().map(Channel::arrival_lane).collect();
        assert_eq!(lanes, vec![0, 1, 0, 1, 2, 0]);
        assert_eq!(propagation_lanes(&mut []), 0);
    }
}
