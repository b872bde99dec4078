//! `tcp.ns3_departures`: the names of ns-3 3.44's departures a sender reproduces, none by
//! default, an unknown name refused with the names there are.

use concord_cc::tcp::{Ns3Departures, TcpConfig};
use concord_sim::scenario::{ErrorKind, Scenario};

mod common;
use common::{parse_two_pairs as parse, tcp_of};

const FLOWS: &str = "[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n[[flow]]\nkind = \"tcp\"\nfrom = \"s2\"\nto = \"d2\"\ntcp = { ns3_departures = [] }\n";

fn departures(s: &Scenario, i: usize) -> Ns3Departures {
    tcp_of(s, i).ns3_departures
}

#[test]
fn the_defaults_name_departures_and_a_flow_may_clear_them() {
    let s = parse(&format!(
        "[defaults.tcp]\nns3_departures = [\"loss-exit\", \"recover\"]\n{FLOWS}"
    ))
    .expect("valid");
    assert_eq!(
        departures(&s, 0),
        Ns3Departures {
            recover: true,
            loss_exit: true,
            ecn_once: false,
            limited_transmit: false,
            recovery_ssthresh: false,
            reno_sack: false
        }
    );
    assert_eq!(departures(&s, 1), Ns3Departures::default());
    let s = parse(&format!(
        "[defaults.tcp]\nns3_departures = [\"recover\", \"loss-exit\", \"ecn-once\"]\n{FLOWS}"
    ))
    .expect("valid");
    assert_eq!(departures(&s, 0), Ns3Departures::corrected_by_validate());
    let s = parse(&format!(
        "[defaults.tcp]\nns3_departures = [\"recover\", \"loss-exit\", \"ecn-once\", \"limited-transmit\", \"recovery-ssthresh\", \"reno-sack\"]\n{FLOWS}"
    ))
    .expect("valid");
    assert_eq!(departures(&s, 0), Ns3Departures::all());
}

#[test]
fn without_the_key_there_is_no_departure() {
    let s = parse("[[flow]]\nkind = \"tcp\"\nfrom = \"s1\"\nto = \"d1\"\n").expect("valid");
    assert_eq!(departures(&s, 0), Ns3Departures::default());
    assert_eq!(
        TcpConfig::default().ns3_departures,
        Ns3Departures::default()
    );
}

#[test]
fn an_unknown_departure_or_a_value_that_is_not_a_list_is_refused() {
    let e = parse("[defaults.tcp]\nns3_departures = [\"recover\", \"loss_exit\"]\n")
        .expect_err("unknown name");
    assert_eq!((e.kind, e.line), (ErrorKind::BadValue, 8), "{e}");
    assert!(
        e.message.contains("unknown ns-3 departure `loss_exit`"),
        "{e}"
    );
    assert!(e.fix.contains("loss-exit"), "{e}");
    let e = parse("[defaults.tcp]\nns3_departures = \"recover\"\n").expect_err("not a list");
    assert_eq!((e.kind, e.line), (ErrorKind::WrongType, 8), "{e}");
}
