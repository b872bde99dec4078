//! Every way a scenario can be wrong is refused with the exact line, a message naming the
//! mistake and a fix that says what to write instead.

use concord_sim::scenario::{load, parse_str, ErrorKind, ScenarioError};
use std::path::Path;

mod common;
// A valid two-pair dumbbell, six lines long: tests append to it from line 7 on.
use common::TWO_PAIRS as BASE;

/// The error `text` is rejected with.
fn reject(text: &str) -> ScenarioError {
    match parse_str(text, Some(Path::new("scenarios/x.toml"))) {
        Ok(s) => panic!("accepted a bad scenario: {s:?}\n{text}"),
        Err(e) => e,
    }
}

/// `BASE` followed by `tail`, rejected.
fn reject_base(tail: &str) -> ScenarioError {
    reject(&format!("{BASE}{tail}"))
}

/// Asserts the error's kind, line, and that message and fix contain the given texts.
#[track_caller]
fn check(e: &ScenarioError, kind: ErrorKind, line: usize, in_message: &str, in_fix: &str) {
    eprintln!("{e}");
    assert_eq!(e.kind, kind, "{e}");
    assert_eq!(e.line, line, "{e}");
    assert!(
        e.message.contains(in_message),
        "message lacks {in_message:?}: {e}"
    );
    assert!(e.fix.contains(in_fix), "fix lacks {in_fix:?}: {e}");
    let shown = e.to_string();
    assert!(!shown.contains('\n'), "not one line: {shown}");
    assert!(
        shown.starts_with(&format!("scenarios/x.toml:{line}:{}: ", e.column)),
        "{shown}"
    );
}

#[test]
fn the_base_scenario_is_valid() {
    assert!(parse_str(BASE, None).is_ok());
}

#[test]
fn an_error_displays_as_path_line_column_message_and_fix() {
    let e = reject("duration = \"10s\"\n[[link]]\nbetween = [\"a\", \"b\"]\nrat = \"10Mbps\"\n");
    assert_eq!(
        e.to_string(),
        "scenarios/x.toml:4:1: unknown key `rat` in [[link]] #1; fix: did you mean `rate`?"
    );
}

#[test]
fn unknown_key_points_at_the_key_and_suggests_the_nearest() {
    let e =
        reject_base("[[link]]\nbetween = [\"s1\", \"r2\"]\nrate = \"1Mbps\"\ndealy = \"1ms\"\n");
    check(
        &e,
        ErrorKind::UnknownKey,
        10,
        "unknown key `dealy` in [[link]] #1",
        "did you mean `delay`?",
    );
    assert_eq!(e.column, 1);
}

#[test]
fn unknown_key_without_a_near_match_lists_the_keys() {
    let e = reject_base("[record]\nbandwidth_graph = true\n");
    check(
        &e,
        ErrorKind::UnknownKey,
        8,
        "unknown key `bandwidth_graph` in [record]",
        "the keys of [record] are: bin, warmup",
    );
}

#[test]
fn a_top_level_key_under_a_section_header_is_explained() {
    let e = reject("[topology]\nkind = \"dumbbell\"\nduration = \"10s\"\n");
    check(
        &e,
        ErrorKind::UnknownKey,
        3,
        "`duration` is inside [topology]",
        "move `duration` above the first header",
    );
    let e = reject(&format!("{BASE}[record]\nbin = \"1s\"\nseed = 4\n"));
    check(
        &e,
        ErrorKind::UnknownKey,
        9,
        "unknown key `seed` in [record]",
        "move it above the first header",
    );
}

#[test]
fn negative_rate_is_refused_at_the_value() {
    let e = reject("duration = \"10s\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\nbottleneck = { rate = \"-5Mbps\", delay = \"10ms\" }\naccess = { rate = \"1Gbps\", delay = \"1ms\" }\n");
    check(
        &e,
        ErrorKind::BadValue,
        5,
        "`rate` = \"-5Mbps\" is negative",
        "cannot be negative",
    );
    assert_eq!(e.column, 23, "points at the value: {e}");
}

#[test]
fn link_to_a_missing_node_lists_the_nodes() {
    let e =
        reject_base("[[link]]\nbetween = [\"r1\", \"r9\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n");
    check(
        &e,
        ErrorKind::UnknownName,
        8,
        "no node named `r9`",
        "nodes are: r1, r2, s1, s2, d1, d2",
    );
    assert_eq!(e.column, 18, "points at the name: {e}");
}

#[test]
fn a_long_node_list_is_cut() {
    let text = BASE.replace("pairs = 2", "pairs = 20");
    let e = reject(&format!(
        "{text}[[link]]\nbetween = [\"r1\", \"q\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n"
    ));
    check(&e, ErrorKind::UnknownName, 8, "no node named `q`", "more)");
}

#[test]
fn flow_stopping_before_it_starts_is_refused_at_stop() {
    let e = reject_base(
        "[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\nstart = \"5s\"\nstop = \"1s\"\n",
    );
    check(
        &e,
        ErrorKind::Inconsistent,
        12,
        "stop (1s) is before start (5s)",
        "make `stop` later than `start`",
    );
}

#[test]
fn toml_syntax_errors_point_at_the_fault() {
    let e = reject("duration = \"10s\"\nseed = \n");
    check(&e, ErrorKind::Syntax, 2, "invalid TOML", "");
    let e = reject("duration = \"10s\"\nseed = 1\nseed = 2\n");
    check(&e, ErrorKind::Syntax, 3, "duplicate key", "may appear once");
    let e = reject("duration = \"10s\"\n[record]\nqueues = [\"r1->r2\"\n");
    check(&e, ErrorKind::Syntax, 3, "invalid TOML", "");
}

#[test]
fn wrong_types_say_what_was_expected() {
    let e = reject_base("[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = 10\n");
    check(
        &e,
        ErrorKind::WrongType,
        11,
        "`rate` = 10 has no unit",
        "rate = \"10Mbps\"",
    );
    let e = reject(&BASE.replace("pairs = 2", "pairs = \"2\""));
    check(
        &e,
        ErrorKind::WrongType,
        4,
        "`pairs` must be an integer",
        "pairs = 2",
    );
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = [\"s1\"]\nto = \"d1\"\n");
    check(
        &e,
        ErrorKind::WrongType,
        9,
        "`from` must be a string, not an array",
        "",
    );
    let e = reject_base("[link]\nbetween = [\"s1\", \"d1\"]\n");
    check(
        &e,
        ErrorKind::WrongType,
        7,
        "`link` must be an array of tables",
        "[[link]]",
    );
}

#[test]
fn a_rate_that_could_be_misread_or_is_not_whole_is_refused_with_the_fix() {
    let flow = |rate: &str| {
        reject_base(&format!(
            "[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"{rate}\"\n"
        ))
    };
    check(
        &flow("0.5bps"),
        ErrorKind::BadValue,
        11,
        "is not a whole number of bit/s",
        "write `1bps`",
    );
    check(
        &flow("10MBPS"),
        ErrorKind::BadValue,
        11,
        "does not say bits or bytes",
        "`10Mbps` for bits per second or `10MBps` for bytes",
    );
    check(
        &flow("10MB"),
        ErrorKind::BadValue,
        11,
        "is an amount of data, not a rate",
        "`10MB/s`",
    );
}

#[test]
fn a_rate_in_bytes_per_second_is_eight_times_the_bits() {
    let text = BASE.replace("rate = \"10Mbps\"", "rate = \"10MB/s\"");
    let s = parse_str(&text, None).expect("valid");
    let bottleneck = format!("{s:?}");
    assert!(bottleneck.contains("80000000"), "{bottleneck}");
    let text = BASE.replace("rate = \"10Mbps\"", "rate = \"1.25MBps\"");
    let t = parse_str(&text, None).expect("valid");
    assert_eq!(
        format!("{t:?}"),
        format!("{:?}", parse_str(BASE, None).expect("valid"))
    );
}

#[test]
fn bad_units_and_numbers_name_the_accepted_units() {
    let e =
        reject_base("[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"10Mpbs\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        11,
        "unknown unit `Mpbs`",
        "did you mean `Mbps`?",
    );
    let e = reject(&BASE.replace("delay = \"10ms\"", "delay = \"10\""));
    check(
        &e,
        ErrorKind::BadValue,
        5,
        "`delay` = \"10\" has no unit",
        "\"10ms\"",
    );
    let e = reject("duration = \"soon\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        1,
        "does not start with a number",
        "duration = \"25ms\"",
    );
    let e = reject_base("[defaults]\nqueue = \"100 packets please\"\n");
    check(&e, ErrorKind::BadValue, 8, "unknown unit", "pkt");
}

#[test]
fn zero_rate_is_refused() {
    let e = reject(&BASE.replace("rate = \"10Mbps\"", "rate = \"0Mbps\""));
    check(&e, ErrorKind::BadValue, 5, "is zero", "above zero");
}

#[test]
fn loss_outside_zero_one_is_refused() {
    let e = reject(&BASE.replace("delay = \"10ms\" }", "delay = \"10ms\", loss = \"150%\" }"));
    check(
        &e,
        ErrorKind::BadValue,
        5,
        "`loss` = \"150%\" is above 1",
        "[0, 1]",
    );
    let e = reject(&BASE.replace("delay = \"10ms\" }", "delay = \"10ms\", loss = -0.1 }"));
    check(
        &e,
        ErrorKind::BadValue,
        5,
        "`loss` = -0.1 is negative",
        "[0, 1]",
    );
    let e = reject(&BASE.replace("delay = \"10ms\" }", "delay = \"10ms\", loss = 2 }"));
    check(&e, ErrorKind::BadValue, 5, "is above 1", "");
}

#[test]
fn missing_required_keys_are_named_at_their_table() {
    let e = reject("seed = 3\n");
    check(
        &e,
        ErrorKind::MissingKey,
        1,
        "has no `duration`",
        "duration = \"60s\"",
    );
    let e = reject_base("[[link]]\nbetween = [\"s1\", \"d1\"]\nrate = \"1Mbps\"\n");
    check(
        &e,
        ErrorKind::MissingKey,
        7,
        "[[link]] #1 has no `delay`",
        "add `delay =",
    );
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\n");
    check(
        &e,
        ErrorKind::MissingKey,
        7,
        "[[flow]] #1 has no `to`",
        "to = \"d1\"",
    );
    let e = reject_base("[[flow]]\nfrom = \"s1\"\nto = \"d1\"\n");
    check(
        &e,
        ErrorKind::MissingKey,
        7,
        "has no `kind`",
        "kind = \"tcp\"",
    );
    let e = reject("duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\npairs = 1\naccess = { rate = \"1Gbps\", delay = \"1ms\" }\n");
    check(
        &e,
        ErrorKind::MissingKey,
        2,
        "[topology] has no `bottleneck`",
        "bottleneck = {",
    );
}

#[test]
fn duplicate_node_names_are_refused() {
    let e = reject("duration = \"1s\"\n[[node]]\nname = \"h1\"\nkind = \"host\"\n[[node]]\nname = \"h1\"\nkind = \"router\"\n");
    check(
        &e,
        ErrorKind::Duplicate,
        6,
        "two nodes are named `h1`",
        "the other is at line 3",
    );
    let e = reject_base("[[node]]\nname = \"r1\"\nkind = \"router\"\n");
    check(
        &e,
        ErrorKind::Duplicate,
        8,
        "shorthand already makes a node named `r1`",
        "another name",
    );
}

#[test]
fn duplicate_flow_names_are_refused() {
    let e = reject_base(
        "[[flow]]\nname = \"a\"\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[[flow]]\nname = \"a\"\nkind = \"tcp\"\nfrom = \"s2\"\nto = \"d2\"\n",
    );
    check(
        &e,
        ErrorKind::Duplicate,
        13,
        "two flows are named `a`",
        "the other is at line 8",
    );
    // A name given by hand may clash with a default one.
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[[flow]]\nname = \"f1\"\nkind = \"tcp\"\nfrom = \"s2\"\nto = \"d2\"\n");
    check(
        &e,
        ErrorKind::Duplicate,
        12,
        "two flows are named `f1`",
        "line 7",
    );
}

#[test]
fn a_second_explicit_link_between_the_same_nodes_is_refused() {
    let e = reject_base(
        "[[link]]\nbetween = [\"s1\", \"d1\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n[[link]]\nbetween = [\"d1\", \"s1\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n",
    );
    check(
        &e,
        ErrorKind::Duplicate,
        12,
        "a second link between `d1` and `s1`",
        "the first is at line 8",
    );
}

#[test]
fn link_from_a_node_to_itself_is_refused() {
    let e =
        reject_base("[[link]]\nbetween = [\"r1\", \"r1\"]\nrate = \"1Mbps\"\ndelay = \"1ms\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        8,
        "joins `r1` to itself",
        "two different nodes",
    );
    let e = reject_base("[[link]]\nbetween = [\"r1\"]\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "`between` has 1 name;",
        "between = [",
    );
}

#[test]
fn flows_must_run_between_two_different_hosts() {
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"r1\"\nto = \"d1\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        9,
        "has `from` = `r1`, a router",
        "hosts are: s1, s2, d1, d2",
    );
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"s1\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        10,
        "goes from `s1` to itself",
        "different host",
    );
}

#[test]
fn a_flow_starting_at_or_after_the_end_is_refused() {
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\nstart = \"10s\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        11,
        "start (10s) is not before the end of the run (duration = 10s)",
        "start earlier",
    );
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\nstart = \"9s\"\nstart_jitter = \"2s\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        12,
        "reaches past the end of the run",
        "at most 1s",
    );
}

#[test]
fn count_below_one_is_refused() {
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ncount = 0\n");
    check(
        &e,
        ErrorKind::BadValue,
        11,
        "count = 0 is out of range",
        "count = 1 or more",
    );
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ncount = -3\n");
    check(&e, ErrorKind::BadValue, 11, "count = -3", "");
}

#[test]
fn count_with_a_fixed_name_would_duplicate_names() {
    let e = reject_base(
        "[[flow]]\nname = \"bulk\"\nkind = \"tcp\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ncount = 2\n",
    );
    check(
        &e,
        ErrorKind::Duplicate,
        8,
        "all 2 flows of this [[flow]] would be named `bulk`",
        "name = \"bulk{i}\"",
    );
}

#[test]
fn count_expanding_to_a_missing_host_names_the_expansion() {
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ncount = 3\n");
    check(
        &e,
        ErrorKind::UnknownName,
        9,
        "no node named `s3` (from `s{i}`)",
        "nodes are:",
    );
}

#[test]
fn hosts_without_a_path_are_refused() {
    let text = r#"duration = "10s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[node]]
name = "ra"
kind = "router"
[[node]]
name = "rb"
kind = "router"
[[link]]
between = ["a", "ra"]
rate = "1Mbps"
delay = "1ms"
[[link]]
between = ["b", "rb"]
rate = "1Mbps"
delay = "1ms"
[[flow]]
kind = "cbr"
from = "a"
to = "b"
rate = "1Mbps"
"#;
    let e = reject(text);
    check(
        &e,
        ErrorKind::Inconsistent,
        25,
        "no path from `a` to `b`",
        "hosts do not forward",
    );
}

#[test]
fn hosts_do_not_forward() {
    // a - h - b: the middle host does not route.
    let text = r#"duration = "10s"
[[node]]
name = "a"
kind = "host"
[[node]]
name = "h"
kind = "host"
[[node]]
name = "b"
kind = "host"
[[link]]
between = ["a", "h"]
rate = "1Mbps"
delay = "1ms"
[[link]]
between = ["h", "b"]
rate = "1Mbps"
delay = "1ms"
[[flow]]
kind = "tcp"
from = "a"
to = "b"
"#;
    let e = reject(text);
    check(
        &e,
        ErrorKind::Inconsistent,
        22,
        "no path from `a` to `b`",
        "",
    );
}

#[test]
fn invalid_red_settings_point_at_the_setting() {
    let e = reject_base(
        "[defaults]\nqueue = { kind = \"red\", limit = \"100pkt\",\n  min_th = 80,\n  max_th = 40 }\n",
    );
    check(
        &e,
        ErrorKind::BadValue,
        10,
        "min_th (80) is not below max_th (40)",
        "smaller than max_th",
    );
    let e = reject_base("[defaults]\nqueue = { kind = \"red\", limit = \"100pkt\", w_q = 2 }\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "w_q = 2 is outside (0, 1]",
        "0.002",
    );
    let e =
        reject_base("[defaults]\nqueue = { kind = \"red\", limit = \"100pkt\", max_th = 150 }\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "max_th = 150 lies outside the queue (0 to 100)",
        "",
    );
    let e = reject_base("[defaults]\nqueue = { kind = \"red\", limit = \"0pkt\" }\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "the queue limit is zero",
        "100pkt",
    );
    let e = reject_base(
        "[defaults]\nqueue = { kind = \"droptail\", limit = \"10pkt\", max_p = 0.1 }\n",
    );
    check(
        &e,
        ErrorKind::UnknownKey,
        8,
        "`max_p` is a RED setting",
        "kind = \"red\"",
    );
    let e = reject_base("[defaults]\nqueue = { kind = \"red\", min_th = \"25\" }\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "neither a number nor a percentage",
        "\"25%\"",
    );
}

#[test]
fn record_names_must_exist() {
    let e = reject_base("[record]\nqueues = [\"r1->r2\", \"r1->r9\"]\n");
    check(
        &e,
        ErrorKind::UnknownName,
        8,
        "channel `r1->r9` names no node `r9`",
        "nodes are:",
    );
    let e = reject_base("[record]\npcap = [\"s1->d1\"]\n");
    check(
        &e,
        ErrorKind::UnknownName,
        8,
        "no link joins `s1` and `d1`",
        "`s1` is linked to: r1",
    );
    let e = reject_base("[record]\nbottleneck = \"r1 to r2\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "is not a channel name",
        "\"r1->r2\"",
    );
    let e = reject_base(
        "[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[record]\ncwnd = [\"f2\"]\n",
    );
    check(
        &e,
        ErrorKind::UnknownName,
        12,
        "no flow named `f2`",
        "did you mean `f1`?",
    );
    let e = reject_base("[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\n[record]\ncwnd = [\"f1\"]\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        13,
        "not a TCP flow",
        "only tcp flows",
    );
    let e = reject_base("[record]\nwarmup = \"10s\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        8,
        "warmup (10s) leaves nothing to measure",
        "",
    );
}

#[test]
fn access_delays_length_mismatch_is_refused() {
    let text = BASE.replace(
        "pairs = 2\n",
        "pairs = 2\naccess_delays = [\"1ms\", \"2ms\", \"3ms\"]\n",
    );
    let e = reject(&text);
    check(
        &e,
        ErrorKind::Inconsistent,
        5,
        "`access_delays` has 3 entries but pairs = 2",
        "one delay per pair (2)",
    );
    let text = BASE.replace(
        "pairs = 2\n",
        "pairs = 2\naccess_delays = [\"1ms\", \"-2ms\"]\n",
    );
    let e = reject(&text);
    check(
        &e,
        ErrorKind::BadValue,
        5,
        "`access_delays` entry 2 = \"-2ms\" is negative",
        "",
    );
}

#[test]
fn shorthands_need_enough_hosts_and_routers() {
    let e = reject(&BASE.replace("pairs = 2", "pairs = 0"));
    check(
        &e,
        ErrorKind::BadValue,
        4,
        "pairs = 0 is out of range",
        "at least 1 pair",
    );
    let line = "duration = \"1s\"\n[topology]\nkind = \"line\"\nrouters = 1\nlink = { rate = \"1Mbps\", delay = \"1ms\" }\naccess = { rate = \"1Gbps\", delay = \"1ms\" }\n";
    let e = reject(line);
    check(
        &e,
        ErrorKind::BadValue,
        4,
        "routers = 1 is out of range (2 to",
        "at least 2 routers",
    );
    let e = reject(&line.replace("\"line\"", "\"parking_lot\""));
    check(
        &e,
        ErrorKind::BadValue,
        4,
        "routers = 1",
        "at least 2 routers",
    );
    let e = reject(&BASE.replace("pairs = 2", "routers = 2"));
    check(
        &e,
        ErrorKind::UnknownKey,
        4,
        "`routers` belongs to a line or parking_lot",
        "a dumbbell takes",
    );
}

#[test]
fn unknown_kinds_list_the_valid_ones() {
    let e = reject(&BASE.replace("\"dumbbell\"", "\"dumbel\""));
    check(
        &e,
        ErrorKind::BadValue,
        3,
        "unknown topology kind `dumbel`",
        "did you mean `dumbbell`?",
    );
    let e = reject(&BASE.replace("\"dumbbell\"", "\"star\""));
    check(
        &e,
        ErrorKind::BadValue,
        3,
        "unknown topology kind `star`",
        "dumbbell, line, parking_lot",
    );
    let e = reject_base("[[flow]]\nkind = \"quic\"\nfrom = \"s1\"\nto = \"d1\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "unknown flow kind `quic`",
        "flow kinds are: tcp, cbr, onoff, tfrc, cudp",
    );
    assert!(!e.fix.contains("did you mean"), "{e}");
    let e = reject_base("[defaults]\nqueue = { kind = \"pie\", limit = \"100pkt\" }\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "unknown queue kind `pie`",
        "queue kinds are: droptail, red, gcca, codel, fq_codel",
    );
    let e = reject_base("[[node]]\nname = \"x\"\nkind = \"switch\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        9,
        "unknown node kind `switch`",
        "host, router",
    );
}

#[test]
fn keys_of_another_flow_kind_are_explained() {
    let e = reject_base(
        "[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\nbytes = \"1MB\"\n",
    );
    check(
        &e,
        ErrorKind::UnknownKey,
        12,
        "`bytes` does not apply to a cbr flow",
        "for tcp and cmudp flows",
    );
}

#[test]
fn udp_packets_must_hold_their_headers() {
    let e = reject_base("[[flow]]\nkind = \"cbr\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\npacket_size = \"20B\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        12,
        "packet_size = 20 bytes",
        "28 bytes",
    );
}

#[test]
fn on_off_flows_need_their_periods() {
    let e = reject_base(
        "[[flow]]\nkind = \"onoff\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\non = \"1s\"\n",
    );
    check(&e, ErrorKind::MissingKey, 7, "has no `off`", "off = \"1s\"");
    let e = reject_base("[[flow]]\nkind = \"onoff\"\nfrom = \"s1\"\nto = \"d1\"\nrate = \"1Mbps\"\non = \"1s\"\noff = \"1s\"\ndistribution = \"pareto\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        14,
        "unknown distribution `pareto`",
        "\"exponential\" or \"fixed\"",
    );
}

#[test]
fn tcp_settings_are_checked() {
    let e = reject_base("[defaults.tcp]\ncc = \"vegas\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "unknown congestion control `vegas`",
        "newreno, westwood+, mccp, cubic",
    );
    let e = reject_base("[defaults.tcp]\nrecovery = \"rack\"\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "unknown recovery `rack`",
        "classic, prr, prr-crb",
    );
    let e = reject_base("[defaults.tcp]\nsack = \"on\"\n");
    check(
        &e,
        ErrorKind::WrongType,
        8,
        "`sack` must be a boolean, not a string",
        "sack = true",
    );
    let e = reject_base("[defaults.tcp]\nsak = true\n");
    check(&e, ErrorKind::UnknownKey, 8, "unknown key `sak`", "`sack`");
    let e = reject_base("[defaults.tcp]\nmin_rto = \"2s\"\nmax_rto = \"1s\"\n");
    check(
        &e,
        ErrorKind::Inconsistent,
        8,
        "min_rto (2s) is above max_rto (1s)",
        "",
    );
    let e = reject_base("[defaults.tcp]\nmss = -1\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "`mss` = -1 is negative",
        "cannot be negative",
    );
    let e = reject_base("[defaults.tcp]\ninitial_cwnd = 0\n");
    check(
        &e,
        ErrorKind::BadValue,
        8,
        "`initial_cwnd` = 0 is too small",
        "from 1 to",
    );
    let e = reject_base("[defaults.tcp]\ndelayed_ack = \"yes\"\n");
    check(
        &e,
        ErrorKind::WrongType,
        8,
        "`delayed_ack` must be a boolean",
        "delayed_ack = true",
    );
    let e = reject_base("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ntcp = { ecn = true, rwnd = \"lots\" }\n");
    check(
        &e,
        ErrorKind::BadValue,
        11,
        "`rwnd` = \"lots\" is neither a size nor \"unbounded\"",
        "\"unbounded\"",
    );
}

#[test]
fn negative_seed_is_refused() {
    let e = reject("duration = \"1s\"\nseed = -1\n");
    check(
        &e,
        ErrorKind::BadValue,
        2,
        "`seed` = -1 is negative",
        "at least 0",
    );
}

#[test]
fn an_unreadable_file_is_reported_without_a_position() {
    let e = load(Path::new("/nonexistent/concord/x.toml")).expect_err("no such file");
    assert_eq!(e.kind, ErrorKind::Io);
    assert_eq!(e.line, 0);
    assert!(
        e.to_string()
            .starts_with("/nonexistent/concord/x.toml: cannot read the scenario"),
        "{e}"
    );
}

#[test]
fn text_without_a_path_is_named_input() {
    let e = parse_str("seed = 1\n", None).expect_err("no duration");
    assert!(e.to_string().starts_with("<input>:1:1: "), "{e}");
}

#[test]
fn no_input_makes_the_loader_panic() {
    use concord_cc::rng::Rng;
    let deep = format!(
        "duration = \"1s\"\nx = {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let odd = [
        deep.as_str(),
        "",
        "\u{0}",
        "duration = \"1e999s\"\n",
        "duration = \"99999999999999999999999s\"\n",
        "duration = \"1s\"\nseed = 99999999999999999999\n",
        "duration = \"1s\"\nseed = 0x7fffffffffffffff\n",
        "duration = \"1s\"\n[defaults]\nqueue = \"99999999999pkt\"\n",
        "duration = \"1s\"\n[defaults]\nqueue = { kind = \"red\", limit = \"1pkt\", min_th = nan }\n",
        "duration = \"1s\"\n[defaults]\nqueue = { kind = \"red\", limit = \"10pkt\", min_th = \"-5%\" }\n",
        "duration = \"\u{b5}s\"\n",
        "duration = \"1s\"\n[topology]\nkind = \"dumbbell\"\npairs = 9223372036854775807\n",
        "duration = \"1s\"\nname = \"\"\n",
        "\"duration\" = \"1s\"\n\"a\nb\" = 1\n",
    ];
    for text in odd {
        let _ = parse_str(text, None);
    }
    // Random damage to valid scenarios.
    let valid = [
        BASE.to_string()
            + "[[flow]]\nname = \"f{i}\"\nkind = \"tcp\"\nfrom = \"s{i}\"\nto = \"d{i}\"\ncount = 2\nstart_jitter = \"5ms\"\n\
               tcp = { ecn = true, mss = \"1000B\" }\n[defaults]\nqueue = { kind = \"red\", limit = \"100pkt\", min_th = \"20%\" }\n\
               [record]\nqueues = [\"r1->r2\"]\ncwnd = [\"f1\"]\n",
        "duration = \"10s\"\n[topology]\nkind = \"parking_lot\"\nrouters = 3\nlink = { rate = \"5Mbps\", delay = \"5ms\" }\n\
         access = { rate = \"1Gbps\", delay = \"1ms\", reverse = { loss = \"1%\" } }\n[[flow]]\nkind = \"onoff\"\nfrom = \"c1\"\n\
         to = \"x1\"\nrate = \"1Mbps\"\non = \"1s\"\noff = \"1s\"\nstop = \"5s\"\n"
            .to_string(),
    ];
    let pieces = [
        "-", "0", "\"", "[", "]", "{", "}", "=", "\n", "x", "%", "9", "{i}", "->", ".", ",", "1e9",
        "#", "\u{b5}",
    ];
    let mut rng = Rng::new(42);
    for base in &valid {
        let chars: Vec<char> = base.chars().collect();
        for _ in 0..3000 {
            let mut c = chars.clone();
            for _ in 0..=rng.below(3) {
                let at = rng.below(c.len() as u64) as usize;
                match rng.below(3) {
                    0 => {
                        let end = (at + 1 + rng.below(4) as usize).min(c.len());
                        c.drain(at..end);
                    }
                    1 => {
                        let p = pieces[rng.below(pieces.len() as u64) as usize];
                        c.splice(at..at, p.chars());
                    }
                    _ => {
                        let p = pieces[rng.below(pieces.len() as u64) as usize];
                        c.splice(at..(at + 1).min(c.len()), p.chars());
                    }
                }
                if c.is_empty() {
                    break;
                }
            }
            let text: String = c.into_iter().collect();
            if let Err(e) = parse_str(&text, None) {
                let shown = e.to_string();
                assert!(!shown.contains('\n'), "{shown}");
                assert!(e.line >= 1 && e.column >= 1, "{shown}");
            }
        }
    }
}

#[test]
fn a_receive_window_below_one_segment_is_rejected_at_its_line() {
    let text = "duration = \"1s\"\n\n[topology]\nkind = \"dumbbell\"\npairs = 1\nbottleneck = { rate = \"10Mbps\", delay = \"1ms\" }\naccess = { rate = \"1Gbps\", delay = \"1ms\" }\n\n[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\ntcp = { rwnd = \"1000B\" }\n";
    let e = concord_sim::scenario::parse_str(text, None).expect_err("rejected");
    assert_eq!(e.line, 13, "{e}");
    assert!(e.to_string().contains("rwnd"), "{e}");
}
