//! ECA's end-system half (Barham, sections III.A.1 and III.A.3), run by the router at a host's
//! edge for hosts whose kernel TCP knows nothing of ECA, as the paper's prototype ran it in a
//! daemon beside an unmodified stack (section V.A.3):
//!
//! - [`WtpEdge`]: a sending host's WTP shapers, one token bucket per flow at r_i = w_i / RLOAD
//!   ([`concord_cc::eca::WtpShaper`]), holding the flow's packets as the host's shaper queue
//!   would, before they reach the edge router's output queue.
//! - [`ReflectEdge`]: a receiving host's load reflector ([`concord_cc::eca::Reflector`]): the
//!   LOAD of each flow's packets as they are delivered, returned as RLOAD on the packets the host
//!   sends back (its TCP ACKs; section IV.A.3, step 8).
//!
//! Flows are told apart by [`FlowKey`]; the packet type `T` is the caller's.

use crate::config::WtpProxy;
use concord_cc::eca::{Reflection, Reflector, ReflectorConfig, WtpConfig, WtpShaper};
use concord_cc::time::Instant;
use concord_cc::units::Bytes;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// The most flows one host's shapers are kept for; beyond it idle shapers are forgotten first,
/// and a packet of a further flow passes unshaped (counted by the caller).
pub const MAX_FLOWS: usize = 4096;

/// A transport flow, as its packets name it: addresses, ports (0 when there are none) and
/// the IP protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    /// The source address.
    pub src: Ipv4Addr,
    /// The source port.
    pub src_port: u16,
    /// The destination address.
    pub dst: Ipv4Addr,
    /// The destination port.
    pub dst_port: u16,
    /// The IP protocol number.
    pub protocol: u8,
}

impl FlowKey {
    /// The same flow seen from the other end: the key of the packets travelling back.
    pub fn reverse(&self) -> FlowKey {
        FlowKey {
            src: self.dst,
            src_port: self.dst_port,
            dst: self.src,
            dst_port: self.src_port,
            protocol: self.protocol,
        }
    }
}

/// Where a packet offered to [`WtpEdge::admit`] went.
#[derive(Debug, PartialEq, Eq)]
pub enum Admit<T> {
    /// Into its flow's shaper queue.
    Held,
    /// The flow's queue is full: the packet is refused (a host-side drop).
    Full(T),
    /// No shaper could be kept for the flow: the packet goes on unshaped.
    Unshaped(T),
}

/// One sending host's WTP shapers, one per flow.
#[derive(Debug)]
pub struct WtpEdge<T> {
    proxy: WtpProxy,
    shapers: BTreeMap<FlowKey, WtpShaper<T>>,
}

impl<T> WtpEdge<T> {
    /// No flows yet; each flow gets a shaper of weight `proxy.weight` at its first packet.
    pub fn new(proxy: WtpProxy) -> Self {
        WtpEdge {
            proxy,
            shapers: BTreeMap::new(),
        }
    }

    /// The flows with a shaper.
    pub fn flows(&self) -> usize {
        self.shapers.len()
    }

    /// The shaper of `flow`, if it has one.
    pub fn shaper(&self, flow: &FlowKey) -> Option<&WtpShaper<T>> {
        self.shapers.get(flow)
    }

    /// A packet of `size` bytes of `flow` from the host at `now`: into the flow's shaper (made
    /// on the flow's first packet, unshaped until its first RLOAD, section III.B.2). Take what
    /// may leave with [`poll_transmit`](Self::poll_transmit).
    pub fn admit(&mut self, now: Instant, flow: FlowKey, size: Bytes, packet: T) -> Admit<T> {
        if !self.shapers.contains_key(&flow) && self.shapers.len() >= MAX_FLOWS {
            self.shapers.retain(|_, s| s.queue_len() > 0);
        }
        if !self.shapers.contains_key(&flow) && self.shapers.len() >= MAX_FLOWS {
            return Admit::Unshaped(packet);
        }
        if !self.shapers.contains_key(&flow) {
            let mut config = WtpConfig::new(self.proxy.weight.bps_f64());
            config.queue_limit = self.proxy.queue;
            match WtpShaper::new(config, now) {
                Ok(s) => {
                    self.shapers.insert(flow, s);
                }
                Err(_) => return Admit::Unshaped(packet),
            }
        }
        match self.shapers.get_mut(&flow) {
            Some(s) => match s.enqueue(size, packet) {
                Ok(()) => Admit::Held,
                Err(p) => Admit::Full(p),
            },
            None => Admit::Unshaped(packet),
        }
    }

    /// An RLOAD for `flow` (the key of its packets from the host) arrived at `now`: its rate
    /// becomes w / RLOAD (section IV.A.3, step 9). False if the flow has no shaper or the load
    /// is not a load.
    pub fn on_rload(&mut self, now: Instant, flow: &FlowKey, rload: f64) -> bool {
        self.shapers
            .get_mut(flow)
            .is_some_and(|s| s.on_rload(now, rload).is_ok())
    }

    /// A packet whose bucket lets it go at `now`, if any; call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<T> {
        self.shapers.values_mut().find_map(|s| s.poll_transmit(now))
    }

    /// When the next held packet may go, if any is held.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.shapers
            .values()
            .filter_map(WtpShaper::poll_timeout)
            .min()
    }
}

/// One receiving host's load reflector.
#[derive(Debug)]
pub struct ReflectEdge {
    reflector: Reflector<FlowKey>,
}

impl ReflectEdge {
    /// A reflector with the paper's parameters (flows forgotten after 1 s of silence).
    pub fn new(now: Instant) -> Self {
        ReflectEdge {
            // The default configuration is valid (a unit test of concord-cc checks it).
            reflector: Reflector::new(ReflectorConfig::default(), now)
                .unwrap_or_else(|_| unreachable!("the default reflector configuration is valid")),
        }
    }

    /// A packet of `flow` is delivered to the host at `now` carrying `load` (section IV.A.3,
    /// step 6). False if `load` is no load (0 means no ECA router stamped it).
    pub fn on_load(&mut self, now: Instant, flow: FlowKey, load: f64) -> bool {
        self.reflector
            .on_load(now, flow, load, Reflection::Piggyback)
            .is_ok()
    }

    /// The RLOAD for a packet the host sends at `now` with key `back` (the reverse of the
    /// flow's): the latest LOAD recorded for the flow, unless it is older than 1 s.
    pub fn rload(&self, now: Instant, back: &FlowKey) -> Option<f64> {
        self.reflector.rload(now, &back.reverse())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::units::Rate;

    fn key(src_port: u16) -> FlowKey {
        FlowKey {
            src: Ipv4Addr::new(10, 1, 1, 1),
            src_port,
            dst: Ipv4Addr::new(10, 1, 9, 2),
            dst_port: 5001,
            protocol: 6,
        }
    }

    #[test]
    fn a_flow_is_unshaped_until_its_rload_and_then_paced_at_weight_over_load() {
        let mut e = WtpEdge::new(WtpProxy {
            weight: Rate::from_mbps(1),
            queue: 100,
        });
        let t0 = Instant::from_secs(1);
        // Two 1500-byte packets: before any RLOAD the flow is unshaped.
        assert_eq!(e.admit(t0, key(1), 1500, 1), Admit::Held);
        assert_eq!(e.admit(t0, key(1), 1500, 2), Admit::Held);
        assert_eq!(e.poll_transmit(t0), Some(1));
        assert_eq!(e.poll_transmit(t0), Some(2));
        // RLOAD 0.5: r = 1 Mbit/s / 0.5 = 2 Mbit/s, 6 ms per 1500 bytes once the 16 KiB bucket
        // is spent.
        assert!(e.on_rload(t0, &key(1), 0.5));
        assert_eq!(
            e.shaper(&key(1)).map(|s| s.rate()),
            Some(Rate::from_mbps(2))
        );
        let mut sent = 0;
        for i in 0..20 {
            assert_eq!(e.admit(t0, key(1), 1500, 10 + i), Admit::Held);
        }
        while e.poll_transmit(t0).is_some() {
            sent += 1;
        }
        // 16384 - 3000 = 13384 bytes of tokens left: 8 packets of 1500 go at once.
        assert_eq!(sent, 8);
        let next = e.poll_timeout().expect("packets wait");
        assert!(e.poll_transmit(next).is_some());
        assert!(e.poll_transmit(next).is_none());
        let gap = e
            .poll_timeout()
            .expect("packets wait")
            .saturating_since(next);
        assert_eq!(gap, concord_cc::time::Duration::from_millis(6));
    }

    #[test]
    fn a_full_flow_queue_refuses_and_an_unknown_flow_takes_no_rload() {
        let mut e = WtpEdge::new(WtpProxy {
            weight: Rate::from_mbps(1),
            queue: 2,
        });
        let t0 = Instant::ZERO;
        assert_eq!(e.admit(t0, key(1), 100, 1), Admit::Held);
        assert_eq!(e.admit(t0, key(1), 100, 2), Admit::Held);
        assert_eq!(e.admit(t0, key(1), 100, 3), Admit::Full(3));
        assert!(!e.on_rload(t0, &key(2), 1.0));
        assert!(!e.on_rload(t0, &key(1), f64::NAN));
        assert_eq!(e.flows(), 1);
    }

    #[test]
    fn the_reflector_returns_the_latest_load_on_the_reverse_flow_until_it_goes_stale() {
        let mut r = ReflectEdge::new(Instant::ZERO);
        let t = Instant::from_secs(2);
        assert!(!r.on_load(t, key(1), 0.0));
        assert!(r.on_load(t, key(1), 0.7));
        assert!(r.on_load(t, key(1), 0.6));
        assert_eq!(r.rload(t, &key(1).reverse()), Some(0.6));
        assert_eq!(r.rload(t, &key(1)), None);
        assert_eq!(r.rload(t, &key(2).reverse()), None);
        assert_eq!(
            r.rload(Instant::from_millis(3_001), &key(1).reverse()),
            None
        );
    }
}
