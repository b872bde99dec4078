//! The nodes and links of a scenario while it is being read: name lookup with suggestions,
//! one link per pair of nodes, channel names (`"r1->r2"`) and reachability.

use super::error::{ErrorKind, ScenarioError};
use super::model::{ChannelRef, LinkIdx, LinkSpec, NodeIdx, NodeKind, NodeSpec};
use super::suggest;
use super::value::Field;
use std::collections::{HashMap, VecDeque};

/// Who made a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LinkOrigin {
    /// The `[topology]` shorthand; an explicit `[[link]]` may replace it.
    Shorthand,
    /// A `[[link]]` section at this line.
    Explicit {
        /// 1-based line of its `between`.
        line: usize,
    },
}

/// Who made a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NodeOrigin {
    /// The `[topology]` shorthand.
    Shorthand,
    /// A `[[node]]` section; its name is at this line.
    Explicit {
        /// 1-based line of its `name`.
        line: usize,
    },
}

/// Nodes and links under construction.
#[derive(Default)]
pub(crate) struct Network {
    /// The nodes, in the order they were made.
    pub(crate) nodes: Vec<NodeSpec>,
    node_origins: Vec<NodeOrigin>,
    by_name: HashMap<String, NodeIdx>,
    /// The links, in the order they were made (a replaced link keeps its place).
    pub(crate) links: Vec<LinkSpec>,
    link_origins: Vec<LinkOrigin>,
    /// The link joining each pair of nodes, keyed by (lower index, higher index).
    by_pair: HashMap<(NodeIdx, NodeIdx), LinkIdx>,
}

impl Network {
    /// Adds a node; if the name is taken, returns the existing node and who made it.
    pub(crate) fn add_node(
        &mut self,
        name: &str,
        kind: NodeKind,
        origin: NodeOrigin,
    ) -> Result<NodeIdx, (NodeIdx, NodeOrigin)> {
        if let Some(&i) = self.by_name.get(name) {
            return Err((
                i,
                self.node_origins
                    .get(i)
                    .copied()
                    .unwrap_or(NodeOrigin::Shorthand),
            ));
        }
        let i = self.nodes.len();
        self.nodes.push(NodeSpec {
            name: name.to_string(),
            kind,
            gcca: None,
        });
        self.node_origins.push(origin);
        self.by_name.insert(name.to_string(), i);
        Ok(i)
    }

    /// The node named `name`.
    pub(crate) fn node(&self, name: &str) -> Option<NodeIdx> {
        self.by_name.get(name).copied()
    }

    /// The node named `name`, which `field` wrote (perhaps as a pattern that expanded to it), or
    /// an error at `field` listing the nodes.
    pub(crate) fn resolve(&self, name: &str, field: &Field<'_>) -> Result<NodeIdx, ScenarioError> {
        if let Some(i) = self.node(name) {
            return Ok(i);
        }
        let written = field.str().unwrap_or(name);
        let message = if written == name {
            format!("no node named `{name}`")
        } else {
            format!("no node named `{name}` (from `{written}`)")
        };
        Err(field.error(ErrorKind::UnknownName, message, self.nodes_hint(name)))
    }

    /// A fix for a missing node: the closest name, and the list of nodes.
    pub(crate) fn nodes_hint(&self, name: &str) -> String {
        if self.nodes.is_empty() {
            return "there are no nodes yet; add [[node]] sections or a [topology]".to_string();
        }
        let names = || self.nodes.iter().map(|n| n.name.as_str());
        suggest::did_you_mean(
            name,
            names(),
            &format!("nodes are: {}", suggest::list(names())),
        )
    }

    /// The name of node `i`.
    pub(crate) fn name(&self, i: NodeIdx) -> &str {
        self.nodes.get(i).map_or("?", |n| n.name.as_str())
    }

    /// The kind of node `i`.
    pub(crate) fn kind(&self, i: NodeIdx) -> NodeKind {
        self.nodes.get(i).map_or(NodeKind::Router, |n| n.kind)
    }

    /// The link joining `a` and `b` (either way round), with who made it.
    pub(crate) fn link_between(&self, a: NodeIdx, b: NodeIdx) -> Option<(LinkIdx, LinkOrigin)> {
        let i = *self.by_pair.get(&(a.min(b), a.max(b)))?;
        Some((
            i,
            self.link_origins
                .get(i)
                .copied()
                .unwrap_or(LinkOrigin::Shorthand),
        ))
    }

    /// Adds a link, or replaces the one joining the same pair of nodes.
    pub(crate) fn put_link(&mut self, link: LinkSpec, origin: LinkOrigin) -> LinkIdx {
        let pair = (link.a.min(link.b), link.a.max(link.b));
        if let Some(&i) = self.by_pair.get(&pair) {
            if let (Some(slot), Some(o)) = (self.links.get_mut(i), self.link_origins.get_mut(i)) {
                *slot = link;
                *o = origin;
                return i;
            }
        }
        let i = self.links.len();
        self.links.push(link);
        self.link_origins.push(origin);
        self.by_pair.insert(pair, i);
        i
    }

    /// The direction `from -> to` of the link joining them.
    pub(crate) fn channel(&self, from: NodeIdx, to: NodeIdx) -> Option<ChannelRef> {
        let (link, _) = self.link_between(from, to)?;
        let reverse = self.links.get(link).is_some_and(|l| l.a != from);
        Some(ChannelRef { link, reverse })
    }

    /// The nodes linked to `n`.
    pub(crate) fn neighbours(&self, n: NodeIdx) -> Vec<NodeIdx> {
        self.links
            .iter()
            .filter_map(|l| {
                if l.a == n {
                    Some(l.b)
                } else if l.b == n {
                    Some(l.a)
                } else {
                    None
                }
            })
            .collect()
    }

    /// Which nodes can reach which, computed once the links are final.
    pub(crate) fn reach(&self) -> Reach {
        let n = self.nodes.len();
        let mut router_links: Vec<Vec<NodeIdx>> = vec![Vec::new(); n];
        for l in &self.links {
            if self.kind(l.a) == NodeKind::Router && self.kind(l.b) == NodeKind::Router {
                if let Some(v) = router_links.get_mut(l.a) {
                    v.push(l.b);
                }
                if let Some(v) = router_links.get_mut(l.b) {
                    v.push(l.a);
                }
            }
        }
        // Label the connected components of the routers (packets cross routers only).
        let mut component = vec![usize::MAX; n];
        let mut next = 0;
        for start in 0..n {
            if self.kind(start) != NodeKind::Router || component[start] != usize::MAX {
                continue;
            }
            component[start] = next;
            let mut queue = VecDeque::from([start]);
            while let Some(r) = queue.pop_front() {
                for &m in router_links.get(r).map_or(&[][..], Vec::as_slice) {
                    if let Some(c) = component.get_mut(m) {
                        if *c == usize::MAX {
                            *c = next;
                            queue.push_back(m);
                        }
                    }
                }
            }
            next += 1;
        }
        // A node enters the router components it is in or linked to.
        let mut entries: Vec<Vec<usize>> = (0..n)
            .map(|i| {
                if self.kind(i) == NodeKind::Router {
                    vec![component[i]]
                } else {
                    Vec::new()
                }
            })
            .collect();
        for l in &self.links {
            for (x, y) in [(l.a, l.b), (l.b, l.a)] {
                if self.kind(y) == NodeKind::Router {
                    if let (Some(c), Some(e)) = (component.get(y).copied(), entries.get_mut(x)) {
                        if !e.contains(&c) {
                            e.push(c);
                        }
                    }
                }
            }
        }
        Reach { entries }
    }

    /// The finished nodes and links.
    pub(crate) fn into_parts(self) -> (Vec<NodeSpec>, Vec<LinkSpec>) {
        (self.nodes, self.links)
    }
}

/// Which router components each node can send into; two nodes reach each other if they share
/// one, or are linked directly.
pub(crate) struct Reach {
    entries: Vec<Vec<usize>>,
}

impl Reach {
    /// True if packets can travel from `from` to `to` in `net`: over a direct link, or through
    /// routers only (hosts do not forward).
    pub(crate) fn connects(&self, net: &Network, from: NodeIdx, to: NodeIdx) -> bool {
        if net.link_between(from, to).is_some() {
            return true;
        }
        match (self.entries.get(from), self.entries.get(to)) {
            (Some(a), Some(b)) => a.iter().any(|c| b.contains(c)),
            _ => false,
        }
    }
}

impl Network {
    /// Sets node `i`'s GCCA part.
    pub(crate) fn set_gcca(&mut self, i: NodeIdx, gcca: Option<super::model::GccaNodeSpec>) {
        if let Some(n) = self.nodes.get_mut(i) {
            n.gcca = gcca;
        }
    }
}
