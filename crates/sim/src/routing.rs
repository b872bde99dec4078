//! Static routing: for every node, the outgoing channel toward every destination, on a
//! shortest path by hop count. Among equal-length paths the one found first by a breadth-first
//! search backwards from the destination wins, with each node's incoming channels taken in
//! index order; the choice depends only on the topology, so routes are the same on every run.
//!
//! Memory is linear in the number of nodes for the usual networks: a breadth-first search and
//! a table of next hops (4 bytes per node) is kept only for *root* destinations, the routers
//! and the few hosts attached to more than one neighbour. A host whose only neighbour is a
//! router `r` (its "prefix" is `r`) is reached through `r`'s table: the search backwards from
//! such a host visits `r` first and then every other node in exactly the order the search from
//! `r` does (the host itself relays nothing), so the next hops are the same as a dense table's.
//!
//! A single-homed host's own next hop is its link up to its router for every destination the
//! router reaches (the search backwards from any root reaches the host through the router
//! alone), and none otherwise. Where every root's table says exactly that at the host, the host
//! keeps that link (`uplink`) beside its router, and a packet it sends is routed from the
//! router's entry of the destination's table (one entry per router, read by every packet, so
//! in cache) instead of the host's (one entry per host, cold among thousands).

use std::collections::VecDeque;

/// No route.
pub const NO_ROUTE: u32 = u32::MAX;

/// How a destination is reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Destination {
    /// Through its own next-hop table (index into the tables).
    Table(u32),
    /// A single-homed host behind `router`: `last_hop` is the first channel (by index) from
    /// `router` to the host; every other node goes toward `router`.
    Behind {
        /// The host's only neighbour (a router).
        router: u32,
        /// The channel `router` -> host.
        last_hop: u32,
        /// The host's next hop toward every destination `router` reaches (checked against
        /// every table at construction), or [`NO_ROUTE`]: look the host up in the tables.
        uplink: u32,
    },
    /// Nothing arrives at this node.
    Unreachable,
}

/// Next hops toward every node, stored per root destination (see the module comment).
#[derive(Clone, Debug)]
pub struct Routes {
    nodes: usize,
    destinations: Vec<Destination>,
    /// `tables[k * nodes + n]`: the channel from node `n` toward root `k`, or [`NO_ROUTE`].
    tables: Vec<u32>,
}

impl Routes {
    /// Routes of a network: `channels` lists (from, to) per channel; `forwards[n]` says whether
    /// node n forwards transit traffic (routers do, hosts do not).
    pub fn new(nodes: usize, channels: &[(u32, u32)], forwards: &[bool]) -> Routes {
        let incoming = incoming_channels(nodes, channels);
        let mut destinations = Vec::with_capacity(nodes);
        let mut roots = Vec::new();
        for dst in 0..nodes {
            let into = &incoming[dst];
            let Some(&first) = into.first() else {
                destinations.push(Destination::Unreachable);
                continue;
            };
            let router = channels[first as usize].0;
            let single_homed = !forwards[dst]
                && router as usize != dst
                && forwards[router as usize]
                && into.iter().all(|&c| channels[c as usize].0 == router);
            if single_homed {
                destinations.push(Destination::Behind {
                    router,
                    last_hop: first,
                    uplink: NO_ROUTE,
                });
            } else {
                destinations.push(Destination::Table(roots.len() as u32));
                roots.push(dst);
            }
        }
        let mut tables = vec![NO_ROUTE; roots.len() * nodes];
        let mut search = Search::new(nodes);
        for (k, &dst) in roots.iter().enumerate() {
            let next = &mut tables[k * nodes..(k + 1) * nodes];
            search.run(dst, channels, forwards, &incoming, next);
        }
        let mut routes = Routes {
            nodes,
            destinations,
            tables,
        };
        routes.set_uplinks(channels, roots.len());
        routes
    }

    /// Gives each single-homed host its `uplink`: the first channel (by index) from the host
    /// to its router, if every table holds it at the host exactly where the router has a route
    /// (or is the root) and [`NO_ROUTE`] elsewhere.
    fn set_uplinks(&mut self, channels: &[(u32, u32)], roots: usize) {
        let mut first_up = vec![NO_ROUTE; self.nodes];
        for (c, &(from, to)) in channels.iter().enumerate() {
            let from = from as usize;
            if let Some(&Destination::Behind { router, .. }) = self.destinations.get(from) {
                if router == to && first_up[from] == NO_ROUTE {
                    first_up[from] = c as u32;
                }
            }
        }
        for (h, &up) in first_up.iter().enumerate() {
            let Some(&Destination::Behind { router, .. }) = self.destinations.get(h) else {
                continue;
            };
            if up == NO_ROUTE {
                continue;
            }
            let own = self.root_index(router);
            let agrees = (0..roots).all(|k| {
                let base = k * self.nodes;
                let want = if self.router_reaches(base, own, router) {
                    up
                } else {
                    NO_ROUTE
                };
                self.tables.get(base + h) == Some(&want)
            });
            if agrees {
                if let Some(Destination::Behind { uplink, .. }) = self.destinations.get_mut(h) {
                    *uplink = up;
                }
            }
        }
    }

    /// True if `router` (whose own table starts at `own`) is the root of the table starting at
    /// `base` or has a route toward it.
    #[inline]
    fn router_reaches(&self, base: usize, own: usize, router: u32) -> bool {
        base == own
            || self
                .tables
                .get(base + router as usize)
                .is_some_and(|&c| c != NO_ROUTE)
    }

    /// The channel node `at` sends a packet for `dst` on, or [`NO_ROUTE`].
    #[inline]
    pub fn next_hop(&self, at: u32, dst: u32) -> u32 {
        let (at, dst) = (at as usize, dst as usize);
        if at >= self.nodes || at == dst {
            return NO_ROUTE;
        }
        // Where the table toward `dst` starts.
        let base = match self.destinations.get(dst) {
            Some(&Destination::Table(k)) => k as usize * self.nodes,
            Some(&Destination::Behind {
                router, last_hop, ..
            }) => {
                if at == router as usize {
                    return last_hop;
                }
                self.root_index(router)
            }
            Some(Destination::Unreachable) | None => return NO_ROUTE,
        };
        // A single-homed host with its uplink: up, if its router gets there.
        if let Some(&Destination::Behind { router, uplink, .. }) = self.destinations.get(at) {
            if uplink != NO_ROUTE {
                let own = self.root_index(router);
                return if self.router_reaches(base, own, router) {
                    uplink
                } else {
                    NO_ROUTE
                };
            }
        }
        self.tables.get(base + at).copied().unwrap_or(NO_ROUTE)
    }

    /// Where the table of router `r` (always a root) starts.
    fn root_index(&self, r: u32) -> usize {
        match self.destinations[r as usize] {
            Destination::Table(k) => k as usize * self.nodes,
            _ => usize::MAX / 2,
        }
    }

    /// Bytes the routes take (tables and per-node entries).
    pub fn memory_bytes(&self) -> usize {
        self.tables.len() * std::mem::size_of::<u32>()
            + self.destinations.len() * std::mem::size_of::<Destination>()
    }
}

/// Channels arriving at each node, in index order.
fn incoming_channels(nodes: usize, channels: &[(u32, u32)]) -> Vec<Vec<u32>> {
    let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    for (c, &(_, to)) in channels.iter().enumerate() {
        if let Some(list) = incoming.get_mut(to as usize) {
            list.push(c as u32);
        }
    }
    incoming
}

/// A breadth-first search backwards from a destination, with its buffers reused.
struct Search {
    dist: Vec<u32>,
    frontier: VecDeque<usize>,
}

impl Search {
    fn new(nodes: usize) -> Search {
        Search {
            dist: vec![u32::MAX; nodes],
            frontier: VecDeque::new(),
        }
    }

    /// Fills `next[n]` with node n's channel toward `dst` (untouched where there is none).
    fn run(
        &mut self,
        dst: usize,
        channels: &[(u32, u32)],
        forwards: &[bool],
        incoming: &[Vec<u32>],
        next: &mut [u32],
    ) {
        self.dist.iter_mut().for_each(|d| *d = u32::MAX);
        self.dist[dst] = 0;
        self.frontier.clear();
        self.frontier.push_back(dst);
        while let Some(n) = self.frontier.pop_front() {
            // Only routers (or the destination itself) relay toward dst.
            if n != dst && !forwards[n] {
                continue;
            }
            for &c in &incoming[n] {
                let from = channels[c as usize].0 as usize;
                if self.dist[from] == u32::MAX {
                    self.dist[from] = self.dist[n] + 1;
                    next[from] = c;
                    self.frontier.push_back(from);
                }
            }
        }
    }
}

/// The dense table `next[node][dst]` (nodes x nodes): the reference the compact [`Routes`] is
/// tested against.
#[cfg(test)]
fn dense_shortest_paths(nodes: usize, channels: &[(u32, u32)], forwards: &[bool]) -> Vec<Vec<u32>> {
    let incoming = incoming_channels(nodes, channels);
    let mut search = Search::new(nodes);
    let mut by_dst = vec![vec![NO_ROUTE; nodes]; nodes];
    for (dst, next) in by_dst.iter_mut().enumerate() {
        search.run(dst, channels, forwards, &incoming, next);
    }
    // Transpose to next[node][dst].
    (0..nodes)
        .map(|n| (0..nodes).map(|d| by_dst[d][n]).collect())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use concord_cc::rng::Rng;

    #[test]
    fn a_dumbbell_routes_through_both_routers() {
        // 0 = s, 1 = r1, 2 = r2, 3 = d; channels both ways.
        let ch = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)];
        let fwd = [false, true, true, false];
        let r = Routes::new(4, &ch, &fwd);
        assert_eq!(r.next_hop(0, 3), 0);
        assert_eq!(r.next_hop(1, 3), 2);
        assert_eq!(r.next_hop(2, 3), 4);
        assert_eq!(r.next_hop(3, 0), 5);
        assert_eq!(r.next_hop(3, 3), NO_ROUTE);
    }

    #[test]
    fn hosts_do_not_relay() {
        // 0 - 1 (host) - 2: no path from 0 to 2 through a host.
        let ch = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let r = Routes::new(3, &ch, &[false, false, false]);
        assert_eq!(r.next_hop(0, 2), NO_ROUTE);
        assert_eq!(r.next_hop(0, 1), 0);
    }

    #[test]
    fn a_large_dumbbell_keeps_two_tables_only() {
        // pairs s_i - r1 - r2 - d_i: nodes 0 = r1, 1 = r2, then s_i, d_i.
        let pairs = 10_000u32;
        let nodes = 2 + 2 * pairs as usize;
        let mut ch = vec![(0, 1), (1, 0)];
        for i in 0..pairs {
            let (s, d) = (2 + 2 * i, 3 + 2 * i);
            ch.extend([(s, 0), (0, s), (d, 1), (1, d)]);
        }
        let mut fwd = vec![false; nodes];
        fwd[0] = true;
        fwd[1] = true;
        let r = Routes::new(nodes, &ch, &fwd);
        assert_eq!(r.tables.len(), 2 * nodes);
        // s_7 -> d_7: s_7's access channel, then r1 -> r2, then r2 -> d_7.
        let (s, d) = (2 + 2 * 7, 3 + 2 * 7);
        assert_eq!(r.next_hop(s, d), 2 + 4 * 7);
        assert_eq!(r.next_hop(0, d), 0);
        assert_eq!(r.next_hop(1, d), 2 + 4 * 7 + 3);
        assert!(r.memory_bytes() < 40 * nodes);
        // Every host sends up its access channel without reading its own table entry.
        let uplink = |n: u32| match r.destinations[n as usize] {
            Destination::Behind { uplink, .. } => uplink,
            _ => NO_ROUTE,
        };
        assert_eq!(uplink(s), 2 + 4 * 7);
        assert_eq!(uplink(d), 2 + 4 * 7 + 2);
        assert_eq!(r.next_hop(d, s), 2 + 4 * 7 + 2);
    }

    #[test]
    fn a_host_with_a_one_way_shortcut_keeps_its_table_entries() {
        // 0 = router R, 1 = host h (single-homed: only R sends to it), 2 = router X; h also has
        // a one-way channel to X, its shortest way there.
        let ch = [(0, 1), (1, 0), (1, 2), (0, 2), (2, 0)];
        let r = Routes::new(3, &ch, &[true, false, true]);
        assert_eq!(
            r.destinations[1],
            Destination::Behind {
                router: 0,
                last_hop: 0,
                uplink: NO_ROUTE
            }
        );
        assert_eq!(r.next_hop(1, 2), 2);
        assert_eq!(r.next_hop(1, 0), 1);
    }

    /// Random graphs of routers and hosts (single- and multi-homed, parallel channels,
    /// one-way channels, host-to-host links): the compact routes equal the dense table's.
    #[test]
    fn compact_routes_equal_the_dense_table_on_random_networks() {
        let mut rng = Rng::stream(7, 1);
        for trial in 0..300 {
            let nodes = 2 + (rng.next_u64() % 14) as usize;
            let forwards: Vec<bool> = (0..nodes)
                .map(|_| rng.next_u64().is_multiple_of(3))
                .collect();
            let links = (rng.next_u64() % (2 * nodes as u64 + 1)) as usize;
            let mut ch = Vec::new();
            for _ in 0..links {
                let a = (rng.next_u64() % nodes as u64) as u32;
                let b = (rng.next_u64() % nodes as u64) as u32;
                if a == b {
                    continue;
                }
                ch.push((a, b));
                if !rng.next_u64().is_multiple_of(5) {
                    ch.push((b, a));
                }
            }
            let dense = dense_shortest_paths(nodes, &ch, &forwards);
            let r = Routes::new(nodes, &ch, &forwards);
            for (n, row) in dense.iter().enumerate() {
                for (d, &want) in row.iter().enumerate() {
                    assert_eq!(
                        r.next_hop(n as u32, d as u32),
                        want,
                        "trial {trial}: {n} -> {d} on {ch:?}, forwards {forwards:?}"
                    );
                }
            }
        }
    }
}
