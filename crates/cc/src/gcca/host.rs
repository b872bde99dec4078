//! The host side of GCCA: from a GCCP message to the flow it concerns (Liu, Cheung & Baras,
//! sections 2 and 3.3, Fig. 1).
//!
//! A host runs no detector; it only receives messages from its edge router, which adds the
//! PADDING block (source and destination address and port of the flow) so that "the host
//! identifies the flows contributing to the congestion and slows down their rates". Each UDP
//! port has an adjustable [`LeakyBucket`]; each TCP connection has a [`WindowAdjuster`] acting
//! on the connection's own window controller, which the host reaches through
//! [`TcpConnections`] because the TCP sender, not the dispatcher, owns it.
//!
//! The padding carries no protocol number, so a message is matched first against the TCP
//! connections by the whole four-tuple, then against the UDP ports by its source port (the
//! host's own port). Padding is read as the data packet carried it: the source is this host.

use super::leaky_bucket::LeakyBucket;
use super::message::{GccpMessage, Padding};
use super::window_adjuster::WindowAdjuster;
use crate::tcp::WindowController;
use crate::time::{Duration, Instant};
use crate::units::Bytes;
use std::collections::BTreeMap;

/// A TCP connection's identifier, in the caller's numbering.
pub type ConnId = u64;

/// What the window adjuster needs from a TCP connection.
pub struct TcpWindow<'a> {
    /// The connection's window controller.
    pub controller: &'a mut dyn WindowController,
    /// Its smoothed round-trip time.
    pub srtt: Duration,
    /// Its FlightSize, in bytes.
    pub bytes_in_flight: Bytes,
}

/// The host's TCP connections, as the dispatcher sees them (the simulator's or the runtime's
/// socket table implements this).
pub trait TcpConnections {
    /// The window of connection `conn`, or `None` if it no longer exists.
    fn window(&mut self, conn: ConnId) -> Option<TcpWindow<'_>>;
}

/// Where a message went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// To a TCP connection's window adjuster; `reduced` says whether the window was cut.
    Tcp {
        /// The connection.
        conn: ConnId,
        /// True if the window was halved (false for NORMAL or within an RTT of a cut).
        reduced: bool,
    },
    /// To a UDP port's leaky bucket.
    Udp {
        /// The port.
        port: u16,
    },
    /// Nowhere: the message has no padding, so it names no flow (a host only acts on
    /// messages from its edge router, section 3.1).
    NoPadding,
    /// Nowhere: no local TCP connection or UDP port matches the padding.
    UnknownFlow,
}

/// Counts of what the dispatcher did with the messages it got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostStats {
    /// Messages delivered to a TCP connection.
    pub tcp: u64,
    /// Messages delivered to a UDP port.
    pub udp: u64,
    /// Messages without padding.
    pub no_padding: u64,
    /// Messages whose flow is not known here.
    pub unknown_flow: u64,
}

/// A host's GCCA state: the UDP ports' leaky buckets and the TCP connections' window adjusters.
#[derive(Clone, Debug, Default)]
pub struct GccpHost {
    /// Leaky buckets by local UDP port.
    udp: BTreeMap<u16, LeakyBucket>,
    /// Window adjusters by the connection's four-tuple as this host sends it.
    tcp: BTreeMap<Padding, (ConnId, WindowAdjuster)>,
    stats: HostStats,
}

impl GccpHost {
    /// A host with no ports or connections attached.
    pub fn new() -> GccpHost {
        GccpHost::default()
    }

    /// Attaches a leaky bucket to local UDP port `port`; returns the one it replaces.
    pub fn attach_udp(&mut self, port: u16, bucket: LeakyBucket) -> Option<LeakyBucket> {
        self.udp.insert(port, bucket)
    }

    /// Detaches and returns the leaky bucket of UDP port `port`.
    pub fn detach_udp(&mut self, port: u16) -> Option<LeakyBucket> {
        self.udp.remove(&port)
    }

    /// The leaky bucket of UDP port `port`.
    pub fn udp_bucket(&self, port: u16) -> Option<&LeakyBucket> {
        self.udp.get(&port)
    }

    /// The leaky bucket of UDP port `port`, for the send path's pacing calls.
    pub fn udp_bucket_mut(&mut self, port: u16) -> Option<&mut LeakyBucket> {
        self.udp.get_mut(&port)
    }

    /// Attaches a window adjuster to TCP connection `conn`, whose segments this host sends with
    /// the four-tuple `flow`; replaces any connection attached with the same four-tuple.
    pub fn attach_tcp(&mut self, conn: ConnId, flow: Padding, adjuster: WindowAdjuster) {
        self.tcp.insert(flow, (conn, adjuster));
    }

    /// Detaches the TCP connection with four-tuple `flow`; returns its id.
    pub fn detach_tcp(&mut self, flow: &Padding) -> Option<ConnId> {
        self.tcp.remove(flow).map(|(conn, _)| conn)
    }

    /// The window adjuster of the TCP connection with four-tuple `flow`.
    pub fn window_adjuster(&self, flow: &Padding) -> Option<&WindowAdjuster> {
        self.tcp.get(flow).map(|(_, adjuster)| adjuster)
    }

    /// Counters of what the dispatcher did.
    pub fn stats(&self) -> HostStats {
        self.stats
    }

    /// A GCCP message arrived at `now`: apply it to the flow its padding names.
    pub fn on_message<T: TcpConnections + ?Sized>(
        &mut self,
        now: Instant,
        msg: &GccpMessage,
        connections: &mut T,
    ) -> Delivery {
        let Some(flow) = msg.padding else {
            self.stats.no_padding += 1;
            return Delivery::NoPadding;
        };
        if let Some((conn, adjuster)) = self.tcp.get_mut(&flow) {
            let conn = *conn;
            let Some(window) = connections.window(conn) else {
                self.stats.unknown_flow += 1;
                return Delivery::UnknownFlow;
            };
            let reduced = adjuster.on_message(
                now,
                msg.code,
                window.srtt,
                window.bytes_in_flight,
                window.controller,
            );
            self.stats.tcp += 1;
            return Delivery::Tcp { conn, reduced };
        }
        if let Some(bucket) = self.udp.get_mut(&flow.src_port) {
            bucket.on_message(now, msg.code);
            self.stats.udp += 1;
            return Delivery::Udp {
                port: flow.src_port,
            };
        }
        self.stats.unknown_flow += 1;
        Delivery::UnknownFlow
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gcca::leaky_bucket::LeakyBucketConfig;
    use crate::gcca::message::Code;
    use crate::tcp::NewReno;
    use crate::units::Rate;
    use std::net::Ipv4Addr;

    const MSS: Bytes = 1000;

    /// A socket table of NewReno connections with a fixed RTT.
    struct Table(BTreeMap<ConnId, NewReno>);

    impl TcpConnections for Table {
        fn window(&mut self, conn: ConnId) -> Option<TcpWindow<'_>> {
            self.0.get_mut(&conn).map(|c| TcpWindow {
                controller: c,
                srtt: Duration::from_millis(50),
                bytes_in_flight: 10 * MSS,
            })
        }
    }

    fn flow(src_port: u16, dst_port: u16) -> Padding {
        Padding {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 1, 1),
            src_port,
            dst_port,
        }
    }

    fn message(code: Code, padding: Option<Padding>) -> GccpMessage {
        GccpMessage { code, padding }
    }

    fn host() -> (GccpHost, Table) {
        let mut h = GccpHost::new();
        let bucket = LeakyBucket::new(LeakyBucketConfig::for_rate(Rate::from_mbps(10)))
            .expect("default configuration is valid");
        h.attach_udp(5004, bucket.clone());
        h.attach_udp(5006, bucket);
        h.attach_tcp(7, flow(40_000, 80), WindowAdjuster::new());
        let table = Table(BTreeMap::from([(7, NewReno::new(MSS, 20 * MSS, 40 * MSS))]));
        (h, table)
    }

    #[test]
    fn a_message_reaches_the_udp_port_its_padding_names_and_no_other() {
        let (mut h, mut table) = host();
        let t = Instant::from_millis(1);
        let d = h.on_message(
            t,
            &message(Code::Congestion, Some(flow(5006, 9))),
            &mut table,
        );
        assert_eq!(d, Delivery::Udp { port: 5006 });
        assert_eq!(
            h.udp_bucket(5006).map(|b| b.rate(t)),
            Some(Rate::from_mbps(9))
        );
        assert_eq!(
            h.udp_bucket(5004).map(|b| b.rate(t)),
            Some(Rate::from_mbps(10))
        );
        let d = h.on_message(t, &message(Code::Normal, Some(flow(5006, 9))), &mut table);
        assert_eq!(d, Delivery::Udp { port: 5006 });
        assert_eq!(
            h.udp_bucket(5006).map(|b| b.rate(t)),
            Some(Rate::from_mbps(10))
        );
    }

    #[test]
    fn a_message_reaches_the_tcp_connection_with_that_four_tuple() {
        let (mut h, mut table) = host();
        let t = Instant::from_millis(1);
        let d = h.on_message(
            t,
            &message(Code::Congestion, Some(flow(40_000, 80))),
            &mut table,
        );
        assert_eq!(
            d,
            Delivery::Tcp {
                conn: 7,
                reduced: true
            }
        );
        let c = &table.0[&7];
        assert_eq!((c.cwnd(), c.ssthresh()), (10 * MSS, 20 * MSS));
        let d = h.on_message(
            t,
            &message(Code::Normal, Some(flow(40_000, 80))),
            &mut table,
        );
        assert_eq!(
            d,
            Delivery::Tcp {
                conn: 7,
                reduced: false
            }
        );
        // Same source port, other destination port: not the connection, and no UDP port.
        let d = h.on_message(
            t,
            &message(Code::Congestion, Some(flow(40_000, 81))),
            &mut table,
        );
        assert_eq!(d, Delivery::UnknownFlow);
    }

    #[test]
    fn messages_without_padding_or_for_unknown_flows_change_nothing() {
        let (mut h, mut table) = host();
        let t = Instant::from_millis(1);
        assert_eq!(
            h.on_message(t, &GccpMessage::congestion(), &mut table),
            Delivery::NoPadding
        );
        assert_eq!(
            h.on_message(t, &message(Code::Congestion, Some(flow(1, 2))), &mut table),
            Delivery::UnknownFlow
        );
        table.0.clear();
        assert_eq!(
            h.on_message(
                t,
                &message(Code::Congestion, Some(flow(40_000, 80))),
                &mut table
            ),
            Delivery::UnknownFlow,
            "a closed connection"
        );
        assert_eq!(
            h.stats(),
            HostStats {
                tcp: 0,
                udp: 0,
                no_padding: 1,
                unknown_flow: 2
            }
        );
        assert_eq!(
            h.udp_bucket(5004).map(|b| b.rate(t)),
            Some(Rate::from_mbps(10))
        );
    }
}
