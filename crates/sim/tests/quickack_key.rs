//! `tcp.quickack`: how many of the first in-order data segments the receiver acknowledges at
//! once, 0 by default, set by `[defaults.tcp]` or a flow; a negative or non-integer value
//! refused with the key and the fix.

use concord_cc::tcp::TcpConfig;
use concord_sim::scenario::{ErrorKind, Scenario};

mod common;
use common::{parse_two_pairs as parse, tcp_of};

const FLOWS: &str = "[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[[flow]]\nkind = \"tcp\"\nfrom = \"s2\"\nto = \"d2\"\ntcp = { quickack = 16 }\n";

fn quickack(s: &Scenario, i: usize) -> u32 {
    tcp_of(s, i).quickack
}

#[test]
fn the_defaults_set_quickack_and_a_flow_may_override_it() {
    let s = parse(&format!("[defaults.tcp]\nquickack = 1\n{FLOWS}")).expect("valid");
    assert_eq!((quickack(&s, 0), quickack(&s, 1)), (1, 16));
    let s = parse(&format!("[defaults.tcp]\nquickack = 0\n{FLOWS}")).expect("valid");
    assert_eq!((quickack(&s, 0), quickack(&s, 1)), (0, 16));
}

#[test]
fn without_the_key_there_are_no_quick_acks() {
    let s = parse(FLOWS).expect("valid");
    assert_eq!(quickack(&s, 0), 0);
    assert_eq!(TcpConfig::default().quickack, 0);
}

#[test]
fn a_negative_or_non_integer_quickack_is_refused_with_the_key_and_the_fix() {
    let e = parse("[defaults.tcp]\nquickack = -1\n").expect_err("negative");
    assert_eq!((e.kind, e.line), (ErrorKind::BadValue, 8), "{e}");
    assert!(e.message.contains("`quickack` = -1 is negative"), "{e}");
    assert!(e.fix.contains("give an integer from 0"), "{e}");
    assert!(e.fix.contains("1 ns-3's first-segment ACK"), "{e}");
    let e = parse("[defaults.tcp]\nquickack = 4294967296\n").expect_err("too large");
    assert_eq!((e.kind, e.line), (ErrorKind::BadValue, 8), "{e}");
    assert!(e.message.contains("too large"), "{e}");
    let e = parse("[defaults.tcp]\nquickack = \"1\"\n").expect_err("a string");
    assert_eq!((e.kind, e.line), (ErrorKind::WrongType, 8), "{e}");
    assert!(e.fix.contains("`quickack = 1`"), "{e}");
    let e = parse("[defaults.tcp]\nquickack = true\n").expect_err("a boolean");
    assert_eq!((e.kind, e.line), (ErrorKind::WrongType, 8), "{e}");
    assert!(e.message.contains("`quickack` must be an integer"), "{e}");
    let e = parse("[defaults.tcp]\nquickack = 1.5\n").expect_err("a float");
    assert_eq!((e.kind, e.line), (ErrorKind::WrongType, 8), "{e}");
}
