//! The macroflow pages of the status: every macroflow holding open flows, once, in handle
//! order, with its flow count, over as many pages as it takes.

use concord_cc::cm::FlowKey;
use concord_net::client::EmbeddedCm;
use concord_net::hub::HubConfig;
use std::net::Ipv4Addr;

#[tokio::test(flavor = "current_thread")]
async fn every_macroflow_with_flows_is_listed_once_across_pages() {
    let cm = EmbeddedCm::new(HubConfig::default()).expect("valid config");
    let client = cm.client();
    // 30 destinations (three pages of 12): destination i holds i % 3 + 1 flows.
    let mut flows = Vec::new();
    for i in 0..30u8 {
        for port in 0..=u16::from(i % 3) {
            let key = FlowKey::new(Ipv4Addr::new(192, 0, 2, i), 80, 1000 + port);
            flows.push((i, client.open(key).await.expect("open")));
        }
    }
    // Destination 5's flows close: its macroflow lingers empty and is not listed.
    for (_, f) in flows.extract_if(.., |(i, _)| *i == 5) {
        f.close().await.expect("close");
    }
    let list = client.macroflows().await.expect("macroflows");
    let got: Vec<(Ipv4Addr, u32)> = list.iter().map(|m| (m.dst, m.flows)).collect();
    let want: Vec<(Ipv4Addr, u32)> = (0..30u8)
        .filter(|i| *i != 5)
        .map(|i| (Ipv4Addr::new(192, 0, 2, i), u32::from(i % 3) + 1))
        .collect();
    assert_eq!(got, want);
    assert!(list.windows(2).all(|w| w[0].id < w[1].id));
}
