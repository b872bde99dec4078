//! Per-link framing bytes (`framing_bytes`): read from a link, its `reverse` override and the
//! shorthand links, and refused out of range.

use concord_sim::scenario::parse_str;

fn scenario(bottleneck: &str) -> String {
    format!(
        r#"name = "framing"
duration = "1s"
[topology]
kind = "dumbbell"
pairs = 1
bottleneck = {{ rate = "10Mbps", delay = "10ms" {bottleneck} }}
access = {{ rate = "1Gbps", delay = "1ms" }}
[[flow]]
kind = "tcp"
from = "s1"
to = "d1"
"#
    )
}

#[test]
fn framing_bytes_are_read_per_direction_and_default_to_none() {
    let sc = parse_str(
        &scenario(", framing_bytes = 2, reverse = { framing_bytes = 0 }"),
        None,
    )
    .expect("valid scenario");
    let framing: Vec<(u32, u32)> = sc
        .links
        .iter()
        .map(|l| (l.forward.framing_bytes, l.reverse.framing_bytes))
        .collect();
    assert!(framing.contains(&(2, 0)), "{framing:?}");
    assert_eq!(
        framing.iter().filter(|f| **f == (0, 0)).count(),
        framing.len() - 1
    );
    let err = parse_str(&scenario(", framing_bytes = -1"), None)
        .expect_err("negative")
        .to_string();
    assert!(err.contains("framing_bytes"), "{err}");
}
