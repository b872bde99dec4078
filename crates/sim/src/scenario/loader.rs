//! From scenario text to a validated [`Scenario`]: the top level, `[defaults]`, `[[node]]` and
//! `[[link]]`, with the other sections handed to their readers.

use super::channel::{LinkKeys, LINK_KEYS};
use super::error::{ErrorKind, ScenarioError};
use super::flows::{read_flows, FlowContext};
use super::gcca::read_gcca_node;
use super::model::{GccaNodeSpec, LinkSpec, NodeIdx, NodeKind, Scenario};
use super::network::{LinkOrigin, Network, NodeOrigin};
use super::queue::read_queue;
use super::record::read_record;
use super::source::Source;
use super::suggest;
use super::table::Table;
use super::tcp::read_tcp;
use super::topology;
use super::value::Field;
use concord_cc::aqm::{AqmConfig, QueueLimit};
use concord_cc::tcp::TcpConfig;
use std::path::Path;
use toml::de::DeTable;

/// The top-level keys.
pub(crate) const ROOT_KEYS: [&str; 11] = [
    "name", "duration", "seed", "topology", "node", "link", "defaults", "flow", "record", "cp",
    "cm",
];
/// The keys of `[defaults]`.
const DEFAULTS_KEYS: [&str; 2] = ["queue", "tcp"];
/// The keys of a `[[node]]`.
const NODE_KEYS: [&str; 3] = ["name", "kind", "gcca"];
/// The queue of a link that names none, unless `[defaults]` says otherwise.
const DEFAULT_QUEUE: AqmConfig = AqmConfig::DropTail {
    limit: QueueLimit::Packets(100),
};

/// Settings that override what a scenario file says, applied while it is read (so that, for
/// example, start times drawn from the seed follow an overridden seed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// Use this seed instead of the file's.
    pub seed: Option<u64>,
}

/// Reads and validates the scenario file at `path`.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    load_with(path, LoadOptions::default())
}

/// Reads and validates the scenario file at `path`, with `options` overriding the file.
pub fn load_with(path: &Path, options: LoadOptions) -> Result<Scenario, ScenarioError> {
    let text = super::limits::read_scenario_file(path)?;
    parse_str_with(&text, Some(path), options)
}

/// Reads and validates scenario `text`; `path`, if given, names it in errors and gives the
/// default scenario name (its file stem).
pub fn parse_str(text: &str, path: Option<&Path>) -> Result<Scenario, ScenarioError> {
    parse_str_with(text, path, LoadOptions::default())
}

/// [`parse_str`] with `options` overriding the text.
pub fn parse_str_with(
    text: &str,
    path: Option<&Path>,
    options: LoadOptions,
) -> Result<Scenario, ScenarioError> {
    let src = Source::new(text, path);
    let doc = DeTable::parse(src.text()).map_err(|e| syntax_error(&src, &e))?;
    read_document(
        &src,
        Table::root(&src, doc.get_ref()),
        path,
        options,
        super::limits::DEFAULT_MAX_MEMORY,
    )
}

/// Reads and validates the parsed document `root` of `src` (the file's tree, or the tree with
/// overrides put in by [`super::overrides::ScenarioSource`]), refusing a scenario whose memory
/// estimate is over `max_memory` bytes ([`super::limits`]).
pub(crate) fn read_document(
    src: &Source<'_>,
    root: Table<'_>,
    path: Option<&Path>,
    options: LoadOptions,
    max_memory: u64,
) -> Result<Scenario, ScenarioError> {
    let root = root.allow(&ROOT_KEYS)?;

    let name = match root.get("name") {
        Some(f) => f.name()?.to_string(),
        None => path
            .and_then(Path::file_stem)
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".to_string()),
    };
    if !root.has("duration") {
        if let Some((span, section)) = root.find_below("duration") {
            return Err(src.error(
                &span,
                ErrorKind::UnknownKey,
                format!("`duration` is inside {section}, where it means nothing"),
                "keys after a [section] header belong to that section; move `duration` above the first header",
            ));
        }
    }
    let duration = root.require("duration", "\"60s\"")?.positive_duration()?;
    let seed = match root.get("seed") {
        Some(f) => u64::try_from(f.integer(0, i64::MAX)?).unwrap_or(1),
        None => 1,
    };
    let seed = options.seed.unwrap_or(seed);
    let (default_queue, default_tcp) = read_defaults(root.get("defaults").as_ref())?;

    let mut net = Network::default();
    if let Some(f) = root.get("topology") {
        topology::build(&Table::of(&f, "[topology]")?, &default_queue, &mut net)?;
    }
    let mut gcca_keys = Vec::new();
    if let Some(f) = root.get("node") {
        for table in Table::array_of(&f)? {
            if let Some(explicit) = read_node(&table, &mut net)? {
                gcca_keys.push(explicit);
            }
        }
    }
    if let Some(f) = root.get("link") {
        for table in Table::array_of(&f)? {
            read_link(&table, &default_queue, &mut net)?;
        }
    }
    apply_gcca(&mut net, &gcca_keys, &root)?;

    let cp = super::cp::read_cp(root.get("cp").as_ref(), &net)?;
    let cm = super::cm::read_cm(root.get("cm").as_ref())?;
    let cp_apps: Vec<u32> = cp.iter().map(|a| a.app).collect();
    let reach = net.reach();
    let cx = FlowContext {
        cp_apps: &cp_apps,
        net: &net,
        reach: &reach,
        tcp: &default_tcp,
        seed,
        duration,
    };
    let flows = read_flows(root.get("flow").as_ref(), &cx)?;
    let record = read_record(root.get("record").as_ref(), &net, &flows, duration)?;
    let (nodes, links) = net.into_parts();
    let scenario = Scenario {
        name,
        source: path.map(Path::to_path_buf),
        duration,
        seed,
        nodes,
        links,
        flows,
        record,
        cp,
        cm,
    };
    super::limits::check(&scenario, max_memory)?;
    Ok(scenario)
}

/// `[defaults]`: the default queue and TCP settings.
fn read_defaults(field: Option<&Field<'_>>) -> Result<(AqmConfig, TcpConfig), ScenarioError> {
    let Some(field) = field else {
        return Ok((DEFAULT_QUEUE, TcpConfig::default()));
    };
    let table = Table::of(field, "[defaults]")?.allow(&DEFAULTS_KEYS)?;
    let queue = match table.get("queue") {
        Some(f) => read_queue(&f, "[defaults]", DEFAULT_QUEUE.limit())?,
        None => DEFAULT_QUEUE,
    };
    let tcp = match table.get("tcp") {
        Some(f) => read_tcp(&Table::of(&f, "[defaults.tcp]")?, &TcpConfig::default())?,
        None => TcpConfig::default(),
    };
    Ok((queue, tcp))
}

/// A `[[node]]`; returns the node and its `gcca` key, if written.
fn read_node<'a>(
    table: &Table<'a>,
    net: &mut Network,
) -> Result<Option<(NodeIdx, Field<'a>)>, ScenarioError> {
    let table = table.clone().allow(&NODE_KEYS)?;
    let name_field = table.require("name", "\"h1\"")?;
    let name = name_field.name()?;
    if name.contains("->") || name != name.trim() {
        return Err(name_field.error(
            ErrorKind::BadValue,
            format!("node name \"{name}\" has `->` or surrounding spaces"),
            "choose a name without `->` or surrounding spaces; channels are named \"a->b\"",
        ));
    }
    let kind_field = table.require("kind", "\"host\"")?;
    let kind = match kind_field.str()? {
        "host" => NodeKind::Host,
        "router" => NodeKind::Router,
        other => {
            return Err(kind_field.error(
                ErrorKind::BadValue,
                format!("unknown node kind `{other}`"),
                suggest::did_you_mean(other, ["host", "router"], "node kinds are: host, router"),
            ))
        }
    };
    let origin = NodeOrigin::Explicit {
        line: name_field.line(),
    };
    let idx =
        net.add_node(name, kind, origin).map_err(|(_, first)| {
            match first {
        NodeOrigin::Shorthand => name_field.error(
            ErrorKind::Duplicate,
            format!("the [topology] shorthand already makes a node named `{name}`"),
            "choose another name; a [[link]] can join the shorthand's nodes without declaring them",
        ),
        NodeOrigin::Explicit { line } => name_field.error(
            ErrorKind::Duplicate,
            format!("two nodes are named `{name}`"),
            format!("the other is at line {line}; give this one a different name"),
        ),
    }
        })?;
    let Some(f) = table.get("gcca") else {
        return Ok(None);
    };
    let spec = read_gcca_node(&f, &format!("node `{name}`"), kind == NodeKind::Host)?;
    net.set_gcca(idx, spec);
    Ok(Some((idx, f)))
}

/// GCCA deployment (Liu, Cheung & Baras, section 2: "deployed gradually in a node by node
/// fashion"): a router with a `kind = "gcca"` output queue runs GCCA unless its `gcca` key
/// says otherwise, which is an error; a host runs GCCA only if its `gcca` key says so, and its
/// own output queues cannot be GCCA queues (a host has no detector, section 3).
fn apply_gcca(
    net: &mut Network,
    explicit: &[(NodeIdx, Field<'_>)],
    root: &Table<'_>,
) -> Result<(), ScenarioError> {
    let mut has_queue = vec![false; net.nodes.len()];
    for l in &net.links {
        for (from, spec) in [(l.a, &l.forward), (l.b, &l.reverse)] {
            if spec.gcca.is_some() {
                if let Some(h) = has_queue.get_mut(from) {
                    *h = true;
                }
            }
        }
    }
    for (i, with_queue) in has_queue.into_iter().enumerate() {
        let written = explicit.iter().find(|(n, _)| *n == i).map(|(_, f)| f);
        let kind = net.kind(i);
        match (kind, written, with_queue) {
            (NodeKind::Host, _, true) => {
                let fix = "put the gcca queue on the router's side of the link; a host paces \
                           its flows with `gcca = true` on the host";
                let message = format!(
                    "host `{}` has a gcca output queue; hosts run no detector (GCCA section 3)",
                    net.name(i)
                );
                return Err(match written {
                    Some(f) => f.error(ErrorKind::Inconsistent, message, fix),
                    None => root.error(ErrorKind::Inconsistent, message, fix),
                });
            }
            (NodeKind::Router, Some(f), true) if net.nodes[i].gcca.is_none() => {
                return Err(f.error(
                    ErrorKind::Inconsistent,
                    format!(
                        "router `{}` has a gcca queue but `gcca = false`",
                        net.name(i)
                    ),
                    "remove `gcca = false`, or give its links a \"red\" or \"droptail\" queue",
                ));
            }
            (NodeKind::Router, None, true) => {
                net.set_gcca(i, Some(GccaNodeSpec::default()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// A `[[link]]`: a new link, or one replacing the shorthand's link between the same nodes.
fn read_link(
    table: &Table<'_>,
    default_queue: &AqmConfig,
    net: &mut Network,
) -> Result<(), ScenarioError> {
    let mut keys: Vec<&str> = vec!["between"];
    keys.extend(LINK_KEYS);
    let table = table.clone().allow(&keys)?;
    let between = table.require("between", "[\"h1\", \"r1\"]")?;
    let ends = between.entries()?;
    let [end_a, end_b] = ends.as_slice() else {
        return Err(between.error(
            ErrorKind::BadValue,
            format!(
                "`between` has {} {}; a link joins exactly two nodes",
                ends.len(),
                if ends.len() == 1 { "name" } else { "names" }
            ),
            "write `between = [\"h1\", \"r1\"]`",
        ));
    };
    let a = net.resolve(end_a.name()?, end_a)?;
    let b = net.resolve(end_b.name()?, end_b)?;
    if a == b {
        return Err(end_b.error(
            ErrorKind::Inconsistent,
            format!("the link joins `{}` to itself", net.name(a)),
            "give two different nodes in `between`",
        ));
    }
    let link_keys = LinkKeys::read(&table, default_queue)?;
    let inherited = match net.link_between(a, b) {
        None => None,
        Some((_, LinkOrigin::Explicit { line })) => {
            return Err(between.error(
                ErrorKind::Duplicate,
                format!(
                    "a second link between `{}` and `{}`",
                    net.name(a),
                    net.name(b)
                ),
                format!("the first is at line {line}; merge the two into one [[link]]"),
            ))
        }
        Some((i, LinkOrigin::Shorthand)) => net.links.get(i).map(|old| {
            if old.a == a {
                (old.forward.clone(), old.reverse.clone())
            } else {
                (old.reverse.clone(), old.forward.clone())
            }
        }),
    };
    let (forward, reverse) = link_keys.resolve(
        inherited.as_ref().map(|(f, r)| (f, r)),
        default_queue,
        &table,
    )?;
    for (from, spec) in [(a, &forward), (b, &reverse)] {
        if spec.gcca.is_some() && net.kind(from) == NodeKind::Host {
            return Err(table.error(
                ErrorKind::Inconsistent,
                format!(
                    "{} gives host `{}` a gcca output queue; hosts run no detector (GCCA section 3)",
                    table.what(),
                    net.name(from)
                ),
                "put the gcca queue in the router's direction only (use `reverse` for the other \
                 direction), and give the host `gcca = true` to pace its flows",
            ));
        }
    }
    net.put_link(
        LinkSpec {
            a,
            b,
            forward,
            reverse,
        },
        LinkOrigin::Explicit {
            line: between.line(),
        },
    );
    Ok(())
}

/// A TOML syntax error, with a fix for the common ones.
pub(crate) fn syntax_error(src: &Source<'_>, e: &toml::de::Error) -> ScenarioError {
    let span = e.span().unwrap_or(0..0);
    let message = e.message().trim().to_string();
    let fix = if message.contains("duplicate key") {
        "each key, and each [table] header, may appear once; remove or rename the repeat (use [[name]] for a list of tables)"
    } else if message.contains("must be quoted") {
        "put string values in double quotes, e.g. `rate = \"10Mbps\"`"
    } else if message.contains("unclosed")
        || message.contains("expected `]`")
        || message.contains("expected `}`")
    {
        "close the bracket, brace or quote that opens before this point"
    } else {
        "check the TOML syntax here: `key = value` pairs, strings in double quotes, [table] and [[array]] headers"
    };
    src.error(
        &span,
        ErrorKind::Syntax,
        format!("invalid TOML: {message}"),
        fix,
    )
}
