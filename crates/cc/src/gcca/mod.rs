//! GCCA, the Generic Congestion Control Architecture (Liu, Cheung & Baras, "Generic Congestion
//! Control Through Network Coordination"), as sans-IO pieces.
//!
//! Routers detect incipient congestion on their output queues and tell the upstream neighbour
//! that sent the packet; that neighbour slows the queue feeding the congested one; a congestion
//! that lasts travels back hop by hop to the host, which slows the flow itself (sections 2 and
//! 3, Fig. 1). The pieces, one per file:
//!
//! - [`message`]: the GCCP message (Fig. 2) and its link-layer frame;
//! - [`detector`]: the GCCP-capable RED on a router's output queue (Fig. 3);
//! - [`leaky_bucket`]: the adjustable leaky bucket, the rate controller of a router's output
//!   queue and of a host's UDP port (section 3.3);
//! - [`window_adjuster`]: the rate controller of a host's TCP connection (section 3.3);
//! - [`edge`]: who gets which message: padding for hosts, nothing for neighbours that do not
//!   speak GCCP;
//! - [`host`]: a host's dispatch of a message to the UDP port or TCP connection it names.
//!
//! A router receiving a message from downstream neighbour `n` applies it to the leaky bucket of
//! its output queue towards `n`; a host applies it through [`host::GccpHost`]. Destinations
//! never send messages (section 3).

pub mod detector;
pub mod edge;
pub mod host;
pub mod leaky_bucket;
pub mod message;
pub mod window_adjuster;

pub use detector::{DetectorConfig, DetectorVerdict, GccpDetector, Signal};
pub use edge::{GccpCapability, Neighbour, NeighbourTable, NodeRole, Outgoing};
pub use host::{ConnId, Delivery, GccpHost, TcpConnections, TcpWindow};
pub use leaky_bucket::{LeakyBucket, LeakyBucketConfig, LeakyBucketConfigError, Restore};
pub use message::{Code, GccpError, GccpMessage, Padding, GCCP_ETHERTYPE};
pub use window_adjuster::{Reduction, WindowAdjuster};

#[cfg(test)]
mod tests {
    use super::message::{decode_frame, encode_frame};
    use super::*;
    use crate::aqm::{QueueLen, QueueLimit, RedConfig, Verdict};
    use crate::rng::Rng;
    use crate::time::{Duration, Instant};
    use crate::units::Rate;
    use std::net::Ipv4Addr;

    struct NoTcp;
    impl TcpConnections for NoTcp {
        fn window(&mut self, _conn: ConnId) -> Option<TcpWindow<'_>> {
            None
        }
    }

    fn packets(n: u32) -> QueueLen {
        QueueLen {
            packets: n,
            bytes: u64::from(n) * 1000,
        }
    }

    #[test]
    fn an_edge_routers_congestion_throttles_the_hosts_udp_port_and_its_normal_restores_it() {
        const HOST: u32 = 1;
        let red = RedConfig {
            w_q: 1.0,
            gentle: false,
            ..RedConfig::for_limit(QueueLimit::Packets(100))
        };
        let mut detector = GccpDetector::new(DetectorConfig::new(red), 10_000_000);
        let mut table = NeighbourTable::new();
        table.insert(
            HOST,
            Neighbour {
                role: NodeRole::Host,
                capability: GccpCapability::Capable,
            },
        );
        let mut host = GccpHost::new();
        let bucket = LeakyBucket::new(LeakyBucketConfig::for_rate(Rate::from_mbps(10)))
            .expect("default configuration is valid");
        host.attach_udp(5004, bucket);
        let flow = Padding {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 2, 1),
            src_port: 5004,
            dst_port: 6000,
        };
        let mut rng = Rng::new(3);
        let (host_mac, edge_mac) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);

        // Delivers the messages for a batch of signals over the wire to the host.
        let deliver = |signals: Vec<Signal>,
                       table: &mut NeighbourTable,
                       host: &mut GccpHost,
                       now: Instant| {
            let mut out = Vec::new();
            for s in signals {
                table.address(s, Some(flow), &mut out);
            }
            for o in out {
                let mut frame = Vec::new();
                encode_frame(edge_mac, host_mac, &o.message, &mut frame);
                let (_, msg) = decode_frame(&frame).expect("our own frame decodes");
                host.on_message(now, &msg, &mut NoTcp);
            }
        };

        let t0 = Instant::from_millis(1);
        detector.on_arrival(Instant::ZERO, packets(0), 1000, HOST, &mut rng);
        let v = detector.on_arrival(t0, packets(80), 1000, HOST, &mut rng);
        assert_eq!(v.verdict, Verdict::Enqueue);
        deliver(v.signal.into_iter().collect(), &mut table, &mut host, t0);
        let rate = |host: &GccpHost, t| host.udp_bucket(5004).map(|b| b.rate(t));
        assert_eq!(rate(&host, t0), Some(Rate::from_mbps(9)));

        let t1 = t0 + Duration::from_millis(5);
        let normal = detector.on_departure(t1, packets(10));
        assert_eq!(normal.len(), 1);
        deliver(normal, &mut table, &mut host, t1);
        assert_eq!(rate(&host, t1), Some(Rate::from_mbps(10)));
    }
}
