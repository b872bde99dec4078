//! GCCA's host leaky bucket as a stage (Liu, Cheung & Baras, section 3.3): a GCCA host sends
//! each of its UDP flows through a leaky bucket whose rate the GCCP signals of the routers
//! set; a packet the bucket cannot send now waits in the flow's host queue, and one that finds
//! the queue full is dropped. The buckets live in [`crate::gcca`]; their timer in
//! `simulator/gcca.rs`.

use super::super::{Event, Simulator};
use super::{HostStage, Stage, StageTimer};
use crate::gcca::{GccaTimer, NodeGcca};
use crate::packet::{NodeId, Packet};
use crate::trace::capture::CaptureError;

/// The leaky-bucket stage of a GCCA host that sends UDP flows.
pub(in crate::simulator) struct HostBucket;

impl HostStage for HostBucket {
    /// The sources of the flows a GCCA host bucket shapes.
    fn nodes(sim: &Simulator) -> Vec<NodeId> {
        sim.gcca
            .shapers
            .iter()
            .zip(&sim.flows)
            .filter(|(s, _)| s.is_some())
            .map(|(_, f)| f.src)
            .collect()
    }

    /// A packet of a shaped flow leaving its source joins the flow's host queue and goes when
    /// the bucket lets it; the queue full, it is dropped.
    fn on_send(
        sim: &mut Simulator,
        node: NodeId,
        pkt: Packet,
    ) -> Result<Option<Packet>, CaptureError> {
        let f = pkt.flow as usize;
        if sim.flows.get(f).is_none_or(|fl| fl.src != node) {
            return Ok(Some(pkt));
        }
        let Some(Some(s)) = sim.gcca.shapers.get_mut(f) else {
            return Ok(Some(pkt));
        };
        if s.queue.len() >= s.limit as usize {
            s.drops += 1;
            return Ok(None);
        }
        s.queue.push_back(pkt);
        s.max_queue = s.max_queue.max(s.queue.len() as u32);
        sim.release_datagrams(f)?;
        Ok(None)
    }
}

impl Simulator {
    /// Lets out the datagrams of flow `f` its host bucket allows now, on to the stages after
    /// the bucket, and schedules a wake-up for the next one.
    pub(in crate::simulator) fn release_datagrams(&mut self, f: usize) -> Result<(), CaptureError> {
        let now = self.now;
        let Some(src) = self.flows.get(f).map(|fl| fl.src) else {
            return Ok(());
        };
        loop {
            let Some(Some(s)) = self.gcca.shapers.get_mut(f) else {
                return Ok(());
            };
            let Some(size) = s.queue.front().map(|p| p.size as u64) else {
                return Ok(());
            };
            let port = s.port;
            let Some(NodeGcca::Host(host)) = self.gcca.nodes.get_mut(src as usize) else {
                return Ok(());
            };
            let Some(bucket) = host.udp_bucket_mut(port) else {
                return Ok(());
            };
            if !bucket.can_send(now, size) {
                let mut at = bucket.next_departure(now, size);
                if let Some(r) = bucket.next_rate_change(now) {
                    at = at.min(r);
                }
                let at = at.max(now);
                s.wake = Some(at);
                if s.armed != Some(at) {
                    s.armed = Some(at);
                    self.events.push(
                        at,
                        Event::Stage(StageTimer::Gcca(GccaTimer::Host(f as u32))),
                    );
                }
                return Ok(());
            }
            bucket.on_send(now, size);
            let Some(pkt) = s.queue.pop_front() else {
                return Ok(());
            };
            s.sent += 1;
            self.send_after(src, Stage::GccaBucket, pkt)?;
        }
    }
}
