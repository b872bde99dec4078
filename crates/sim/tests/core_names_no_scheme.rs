//! The simulator's core (the event loop and the generic packet paths) names no scheme: the
//! schemes plug in as agents and host stages, matched in `simulator/agents.rs` and
//! `simulator/stages.rs` only, and an agent's packet leaves through its host's chain of stages
//! (`send`), not through a scheme's hook.

/// The core functions of `simulator.rs`, each of which must name no scheme.
const CORE: [&str; 14] = [
    "dispatch",
    "run_until",
    "send",
    "send_after",
    "send_from",
    "send_slot",
    "forward",
    "forward_from",
    "forward_slot",
    "route",
    "route_by",
    "deliver",
    "on_tx_done",
    "on_queue_drop",
];

/// The scheme names, matched case-insensitively anywhere (so `Tcp` counts as `cp`).
const SCHEMES: [&str; 5] = ["cm", "gcca", "eca", "cp", "tfrc"];

/// The text of `fn name` in `src`, from its `fn` to its closing brace.
fn body<'a>(src: &'a str, name: &str) -> Option<&'a str> {
    let start = src.find(&format!("fn {name}("))?;
    let open = start + src[start..].find('{')?;
    let mut depth = 0usize;
    for (i, ch) in src[open..].char_indices() {
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&src[start..=open + i]);
                }
            }
            _ => {}
        }
    }
    None
}

#[test]
fn the_event_loop_and_packet_paths_name_no_scheme() {
    let src = include_str!("../src/simulator.rs");
    let mut found = Vec::new();
    for name in CORE {
        let text = body(src, name).unwrap_or_else(|| panic!("no `fn {name}` in simulator.rs"));
        for (n, line) in text.lines().enumerate() {
            let lower = line.to_lowercase();
            for scheme in SCHEMES {
                if lower.contains(scheme) {
                    found.push(format!("{name} (+{n}): `{scheme}` in `{}`", line.trim()));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "scheme names in the core:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_body_finder_sees_a_scheme_name_when_there_is_one() {
    let src = "fn a() { x }\nfn dispatch(e: E) {\n    if y { self.on_tcp(e) }\n}\n";
    let text = body(src, "dispatch").unwrap_or_default();
    assert_eq!(text, "fn dispatch(e: E) {\n    if y { self.on_tcp(e) }\n}");
    assert!(text.to_lowercase().contains("cp"));
}
