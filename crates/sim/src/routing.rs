//! Static routing: for every node, the outgoing channel toward every destination, on a
//! shortest path by hop count. Among equal-length paths the one found first by a breadth-first
//! search backwards from the destination wins, with each node's incoming channels taken in
//! index order; the choice depends only on the topology, so routes are the same on every run.

use std::collections::VecDeque;

/// No route.
pub const NO_ROUTE: u32 = u32::MAX;

/// `next[node][dst]` = channel index, or [`NO_ROUTE`]. `channels` lists (from, to) per channel;
/// `forwards[n]` says whether node n forwards transit traffic (routers do, hosts do not).
pub fn shortest_paths(nodes: usize, channels: &[(u32, u32)], forwards: &[bool]) -> Vec<Vec<u32>> {
    // Channels arriving at each node, for a breadth-first search backwards from a destination.
    let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); nodes];
    for (c, &(_, to)) in channels.iter().enumerate() {
        if let Some(list) = incoming.get_mut(to as usize) {
            list.push(c as u32);
        }
    }
    let mut next = vec![vec![NO_ROUTE; nodes]; nodes];
    let mut dist = vec![u32::MAX; nodes];
    let mut frontier = VecDeque::new();
    for dst in 0..nodes {
        dist.iter_mut().for_each(|d| *d = u32::MAX);
        dist[dst] = 0;
        frontier.clear();
        frontier.push_back(dst);
        while let Some(n) = frontier.pop_front() {
            // Only routers (or the destination itself) relay toward dst.
            if n != dst && !forwards[n] {
                continue;
            }
            for &c in &incoming[n] {
                let from = channels[c as usize].0 as usize;
                if dist[from] == u32::MAX {
                    dist[from] = dist[n] + 1;
                    next[from][dst] = c;
                    frontier.push_back(from);
                }
            }
        }
    }
    next
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dumbbell_routes_through_both_routers() {
        // 0 = s, 1 = r1, 2 = r2, 3 = d; channels both ways.
        let ch = [(0, 1), (1, 0), (1, 2), (2, 1), (2, 3), (3, 2)];
        let fwd = [false, true, true, false];
        let next = shortest_paths(4, &ch, &fwd);
        assert_eq!(next[0][3], 0);
        assert_eq!(next[1][3], 2);
        assert_eq!(next[2][3], 4);
        assert_eq!(next[3][0], 5);
    }

    #[test]
    fn hosts_do_not_relay() {
        // 0 - 1 (host) - 2: no path from 0 to 2 through a host.
        let ch = [(0, 1), (1, 0), (1, 2), (2, 1)];
        let next = shortest_paths(3, &ch, &[false, false, false]);
        assert_eq!(next[0][2], NO_ROUTE);
        assert_eq!(next[0][1], 0);
    }
}
