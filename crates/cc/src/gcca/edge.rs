//! Addressing GCCP messages to neighbours: the edge-router rule and partial deployment (Liu,
//! Cheung & Baras, sections 2 and 3.1).
//!
//! A router knows which of its neighbours are hosts. To a router it sends the bare one-word
//! message; to a host, as an edge router, it adds the PADDING block with the flow of the packet
//! that triggered the message (OPTIONS = 1, section 3.1). "The architecture can be deployed
//! gradually in a node by node fashion" (section 2): a neighbour that does not speak GCCP, or
//! one the table does not know, is sent nothing, and the omission is counted.
//!
//! NORMAL to a host needs a flow as well, but the detector sends NORMAL when the queue drains,
//! not for a packet. The table therefore remembers, for each host neighbour, the flows it told
//! CONGESTION since that host's last NORMAL (at most [`NeighbourTable::flow_memory`] of them,
//! oldest forgotten first), and a NORMAL to the host goes to each of them. This state exists
//! only for directly attached hosts and only while they are congested; the core keeps none
//! (section 2: "it does not need to maintain the per-flow status").

use super::detector::Signal;
use super::message::{Code, GccpMessage, Padding};
use std::collections::{BTreeMap, VecDeque};

/// The default number of flows remembered per host neighbour for its NORMAL messages.
pub const DEFAULT_FLOW_MEMORY: usize = 256;

/// What a neighbour is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRole {
    /// An end host: messages to it carry the padding.
    Host,
    /// A router: messages to it carry no padding.
    Router,
}

/// Whether a neighbour runs GCCA (partial deployment, section 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GccpCapability {
    /// It understands GCCP messages.
    Capable,
    /// It does not; it is sent nothing.
    Incapable,
}

/// One neighbour's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Neighbour {
    /// Host or router.
    pub role: NodeRole,
    /// Whether it speaks GCCP.
    pub capability: GccpCapability,
}

/// A message ready to go out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outgoing {
    /// The neighbour it goes to.
    pub to: u32,
    /// The message.
    pub message: GccpMessage,
}

/// Counts of what was sent and what was not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EdgeStats {
    /// Messages produced.
    pub sent: u64,
    /// Signals for neighbours that do not speak GCCP.
    pub not_capable: u64,
    /// Signals for neighbours the table does not know (treated as not speaking GCCP).
    pub unknown_neighbour: u64,
    /// CONGESTION signals for a host without the flow that would fill the padding.
    pub no_flow: u64,
    /// Flows forgotten because a host's flow memory was full (they get no NORMAL).
    pub flows_forgotten: u64,
}

/// A router's neighbours, and the flows its host neighbours were told CONGESTION about.
#[derive(Clone, Debug)]
pub struct NeighbourTable {
    neighbours: BTreeMap<u32, Neighbour>,
    /// Per host neighbour: flows told CONGESTION since its last NORMAL, oldest first.
    told: BTreeMap<u32, VecDeque<Padding>>,
    flow_memory: usize,
    stats: EdgeStats,
}

impl Default for NeighbourTable {
    fn default() -> Self {
        NeighbourTable::new()
    }
}

impl NeighbourTable {
    /// An empty table remembering up to [`DEFAULT_FLOW_MEMORY`] flows per host.
    pub fn new() -> NeighbourTable {
        NeighbourTable::with_flow_memory(DEFAULT_FLOW_MEMORY)
    }

    /// An empty table remembering up to `flows` flows per host (at least one).
    pub fn with_flow_memory(flows: usize) -> NeighbourTable {
        NeighbourTable {
            neighbours: BTreeMap::new(),
            told: BTreeMap::new(),
            flow_memory: flows.max(1),
            stats: EdgeStats::default(),
        }
    }

    /// Adds or replaces neighbour `id`; returns the entry it replaces.
    pub fn insert(&mut self, id: u32, neighbour: Neighbour) -> Option<Neighbour> {
        self.told.remove(&id);
        self.neighbours.insert(id, neighbour)
    }

    /// Neighbour `id`'s entry.
    pub fn get(&self, id: u32) -> Option<Neighbour> {
        self.neighbours.get(&id).copied()
    }

    /// True if neighbour `id` is known and speaks GCCP.
    pub fn speaks_gccp(&self, id: u32) -> bool {
        self.get(id)
            .is_some_and(|n| n.capability == GccpCapability::Capable)
    }

    /// The number of flows remembered per host.
    pub fn flow_memory(&self) -> usize {
        self.flow_memory
    }

    /// Counters of what was sent and what was not.
    pub fn stats(&self) -> EdgeStats {
        self.stats
    }

    /// Turns a detector's signal into the messages to send, appended to `out`; returns how
    /// many. `flow` is the four-tuple of the packet that triggered a CONGESTION signal, as that
    /// packet carried it; it is needed only when the upstream is a host and ignored for NORMAL.
    pub fn address(
        &mut self,
        signal: Signal,
        flow: Option<Padding>,
        out: &mut Vec<Outgoing>,
    ) -> usize {
        let to = signal.upstream;
        let Some(neighbour) = self.neighbours.get(&to).copied() else {
            self.stats.unknown_neighbour += 1;
            return 0;
        };
        if neighbour.capability == GccpCapability::Incapable {
            self.stats.not_capable += 1;
            return 0;
        }
        let before = out.len();
        match (neighbour.role, signal.code) {
            (NodeRole::Router, code) => out.push(Outgoing {
                to,
                message: GccpMessage {
                    code,
                    padding: None,
                },
            }),
            (NodeRole::Host, Code::Congestion) => {
                let Some(flow) = flow else {
                    self.stats.no_flow += 1;
                    return 0;
                };
                self.remember(to, flow);
                out.push(Outgoing {
                    to,
                    message: GccpMessage {
                        code: Code::Congestion,
                        padding: Some(flow),
                    },
                });
            }
            (NodeRole::Host, Code::Normal) => {
                let flows = self.told.remove(&to).unwrap_or_default();
                out.extend(flows.into_iter().map(|flow| Outgoing {
                    to,
                    message: GccpMessage {
                        code: Code::Normal,
                        padding: Some(flow),
                    },
                }));
            }
        }
        let added = out.len() - before;
        self.stats.sent += added as u64;
        added
    }

    /// Records that host `host` was told CONGESTION about `flow`.
    fn remember(&mut self, host: u32, flow: Padding) {
        let flows = self.told.entry(host).or_default();
        if flows.contains(&flow) {
            return;
        }
        if flows.len() >= self.flow_memory {
            flows.pop_front();
            self.stats.flows_forgotten += 1;
        }
        flows.push_back(flow);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const HOST: u32 = 1;
    const ROUTER: u32 = 2;
    const LEGACY: u32 = 3;

    fn table() -> NeighbourTable {
        let mut t = NeighbourTable::new();
        let capable = GccpCapability::Capable;
        t.insert(
            HOST,
            Neighbour {
                role: NodeRole::Host,
                capability: capable,
            },
        );
        t.insert(
            ROUTER,
            Neighbour {
                role: NodeRole::Router,
                capability: capable,
            },
        );
        t.insert(
            LEGACY,
            Neighbour {
                role: NodeRole::Router,
                capability: GccpCapability::Incapable,
            },
        );
        t
    }

    fn flow(port: u16) -> Padding {
        Padding {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 9, 9),
            src_port: port,
            dst_port: 9,
        }
    }

    fn signal(upstream: u32, code: Code) -> Signal {
        Signal { upstream, code }
    }

    #[test]
    fn a_router_neighbour_gets_the_message_without_padding() {
        let mut t = table();
        let mut out = Vec::new();
        t.address(signal(ROUTER, Code::Congestion), Some(flow(5)), &mut out);
        t.address(signal(ROUTER, Code::Normal), None, &mut out);
        assert_eq!(
            out,
            [
                Outgoing {
                    to: ROUTER,
                    message: GccpMessage::congestion()
                },
                Outgoing {
                    to: ROUTER,
                    message: GccpMessage::normal()
                },
            ]
        );
        assert!(out.iter().all(|o| o.message.options() == 0));
    }

    #[test]
    fn a_host_neighbour_gets_the_padding_and_normal_for_each_flow_it_was_told_about() {
        let mut t = table();
        let mut out = Vec::new();
        for port in [5, 6, 5] {
            t.address(signal(HOST, Code::Congestion), Some(flow(port)), &mut out);
        }
        assert_eq!(out.len(), 3);
        assert!(out.iter().all(|o| o.to == HOST && o.message.options() == 1));
        assert_eq!(out[1].message.padding, Some(flow(6)));
        out.clear();
        assert_eq!(t.address(signal(HOST, Code::Normal), None, &mut out), 2);
        let normals: Vec<_> = out.iter().map(|o| o.message).collect();
        assert_eq!(
            normals,
            [
                GccpMessage {
                    code: Code::Normal,
                    padding: Some(flow(5))
                },
                GccpMessage {
                    code: Code::Normal,
                    padding: Some(flow(6))
                },
            ]
        );
        out.clear();
        assert_eq!(t.address(signal(HOST, Code::Normal), None, &mut out), 0);
    }

    #[test]
    fn a_neighbour_that_does_not_speak_gccp_gets_nothing_and_the_omission_is_counted() {
        let mut t = table();
        let mut out = Vec::new();
        assert!(!t.speaks_gccp(LEGACY));
        assert_eq!(
            t.address(signal(LEGACY, Code::Congestion), Some(flow(5)), &mut out),
            0
        );
        assert_eq!(t.address(signal(LEGACY, Code::Normal), None, &mut out), 0);
        assert_eq!(t.address(signal(99, Code::Congestion), None, &mut out), 0);
        assert!(out.is_empty());
        let s = t.stats();
        assert_eq!((s.sent, s.not_capable, s.unknown_neighbour), (0, 2, 1));
    }

    #[test]
    fn a_host_cannot_be_told_congestion_without_the_flow() {
        let mut t = table();
        let mut out = Vec::new();
        assert_eq!(t.address(signal(HOST, Code::Congestion), None, &mut out), 0);
        assert_eq!(t.stats().no_flow, 1);
    }

    #[test]
    fn when_a_hosts_flow_memory_is_full_the_oldest_flow_is_forgotten() {
        let mut t = NeighbourTable::with_flow_memory(2);
        t.insert(
            HOST,
            Neighbour {
                role: NodeRole::Host,
                capability: GccpCapability::Capable,
            },
        );
        let mut out = Vec::new();
        for port in [1, 2, 3] {
            t.address(signal(HOST, Code::Congestion), Some(flow(port)), &mut out);
        }
        out.clear();
        t.address(signal(HOST, Code::Normal), None, &mut out);
        let ports: Vec<_> = out
            .iter()
            .filter_map(|o| o.message.padding.map(|p| p.src_port))
            .collect();
        assert_eq!(ports, [2, 3]);
        assert_eq!(t.stats().flows_forgotten, 1);
    }
}
