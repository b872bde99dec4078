//! The Congestion Manager's macroflows over time (`macroflows.csv`): at every queue sample
//! (`[record] queue_interval`, default `bin`), one row per macroflow of each host's CM with
//! its rate, window, smoothed RTT and variation, the halvings exponential aging applied
//! (paper section 2.2.3), and the loss estimate of its flows' probe feedback (packets the
//! responses say were lost over packets sent, paper section 2.3): what `concord-cm status`
//! shows of a live daemon. Reading the CMs changes nothing in the run.

use crate::cm::CmState;
use crate::packet::NodeId;
use concord_cc::cm::MacroflowId;
use concord_cc::time::{Duration, Instant};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;

/// One macroflow at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct MacroflowSample {
    /// When.
    pub at: Instant,
    /// The sending host.
    pub host: NodeId,
    /// The macroflow's handle in that host's CM.
    pub macroflow: u32,
    /// The destination it aggregates.
    pub dst: Ipv4Addr,
    /// Its open flows.
    pub flows: u32,
    /// Its rate, in bits per second.
    pub rate_bps: u64,
    /// Its window, in bytes.
    pub cwnd_bytes: u64,
    /// Its smoothed RTT, once measured.
    pub srtt: Option<Duration>,
    /// Its RTT variation, once measured.
    pub rttvar: Option<Duration>,
    /// Halvings exponential aging has applied.
    pub aged: u32,
    /// Packets its flows sent, as far as probe responses have accounted for them.
    pub sent_packets: u64,
    /// Of those, packets the responses say were lost.
    pub lost_packets: u64,
}

impl MacroflowSample {
    /// The loss estimate: lost over sent, `None` before anything was accounted for.
    pub fn loss_estimate(&self) -> Option<f64> {
        (self.sent_packets > 0).then(|| self.lost_packets as f64 / self.sent_packets as f64)
    }
}

/// The samples of a run.
#[derive(Clone, Debug, Default)]
pub struct MacroflowTrace {
    /// Every sample, in time order, then by host and macroflow.
    pub samples: Vec<MacroflowSample>,
}

impl MacroflowTrace {
    /// Records every macroflow that holds an open flow, on every host's CM, at `now`. Visits
    /// the hosts that run a CM (`cm.senders`), so a run with many hosts and no CM pays nothing.
    pub fn sample(&mut self, now: Instant, cm: &CmState) {
        for &host in &cm.senders {
            let Some(Some(h)) = cm.hosts.get(host as usize) else {
                continue;
            };
            let mut members: BTreeMap<MacroflowId, (u32, u64, u64)> = BTreeMap::new();
            for flow in h.flows.keys() {
                let Ok(id) = h.cm.get_macroflow(*flow) else {
                    continue;
                };
                let entry = members.entry(id).or_default();
                entry.0 += 1;
                if let Ok(Some(s)) = h.cm.flow_sample(*flow) {
                    entry.1 = entry.1.saturating_add(s.sent_packets);
                    entry.2 = entry.2.saturating_add(s.lost_packets);
                }
            }
            for (id, (flows, sent, lost)) in members {
                let Some(m) = h.cm.macroflow(id) else {
                    continue;
                };
                self.samples.push(MacroflowSample {
                    at: now,
                    host,
                    macroflow: id.0,
                    dst: m.dst(),
                    flows,
                    rate_bps: m.rate().bps(),
                    cwnd_bytes: m.aimd().cwnd(),
                    srtt: m.aimd().srtt(),
                    rttvar: m.aimd().rttvar(),
                    aged: m.aging().halvings(),
                    sent_packets: sent,
                    lost_packets: lost,
                });
            }
        }
    }

    /// True if nothing was recorded (no CM in the run).
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// `macroflows.csv`: hosts named by `host_name`; an RTT or loss estimate not yet measured
    /// is an empty field.
    pub fn csv(&self, host_name: impl Fn(NodeId) -> String) -> String {
        let mut s = String::from(
            "time_s,host,macroflow,dst,flows,rate_bps,cwnd_bytes,srtt_s,rttvar_s,aged,sent_packets,lost_packets,loss_estimate\n",
        );
        let secs = |d: Option<Duration>| d.map(|d| format!("{:.6}", d.as_secs_f64()));
        for m in &self.samples {
            let _ = writeln!(
                s,
                "{:.9},{},{},{},{},{},{},{},{},{},{},{},{}",
                m.at.as_secs_f64(),
                host_name(m.host),
                m.macroflow,
                m.dst,
                m.flows,
                m.rate_bps,
                m.cwnd_bytes,
                secs(m.srtt).unwrap_or_default(),
                secs(m.rttvar).unwrap_or_default(),
                m.aged,
                m.sent_packets,
                m.lost_packets,
                m.loss_estimate()
                    .map(|p| format!("{p:.6}"))
                    .unwrap_or_default()
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(sent: u64, lost: u64) -> MacroflowSample {
        MacroflowSample {
            at: Instant::from_millis(1_500),
            host: 2,
            macroflow: 0,
            dst: Ipv4Addr::new(10, 0, 0, 3),
            flows: 3,
            rate_bps: 1_000_000,
            cwnd_bytes: 15_000,
            srtt: Some(Duration::from_millis(120)),
            rttvar: None,
            aged: 1,
            sent_packets: sent,
            lost_packets: lost,
        }
    }

    #[test]
    fn the_loss_estimate_is_lost_over_sent_once_anything_was_sent() {
        assert_eq!(sample(200, 5).loss_estimate(), Some(0.025));
        assert_eq!(sample(0, 0).loss_estimate(), None);
    }

    #[test]
    fn a_row_gives_every_figure_with_units_and_blanks_for_what_is_not_measured() {
        let t = MacroflowTrace {
            samples: vec![sample(200, 5), sample(0, 0)],
        };
        let csv = t.csv(|n| format!("s{n}"));
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[1],
            "1.500000000,s2,0,10.0.0.3,3,1000000,15000,0.120000,,1,200,5,0.025000"
        );
        assert_eq!(
            lines[2],
            "1.500000000,s2,0,10.0.0.3,3,1000000,15000,0.120000,,1,0,0,"
        );
    }
}
