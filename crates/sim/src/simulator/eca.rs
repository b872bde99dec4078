//! The simulator's ECA set-up and timers (Barham, section IV.A.3, steps 1 to 9): building the
//! sources' WTP shapers and priority admission, waking a shaper, sending the out-of-band load
//! reports. The host stage (shaping, reflecting, applying RLOAD) is `stages/wtp_shaper.rs`;
//! the state lives in [`crate::eca`]; see its docs for the model.

use super::stages::StageTimer;
use super::{Event, Simulator};
use crate::eca::{EcaState, EcaTimer, HostEca};
use crate::packet::{FlowId, NodeId, Packet, Transport};
use crate::scenario::{EcaFlowSpec, Scenario};
use crate::trace::capture::CaptureError;
use concord_cc::eca::{PriorityAdmission, Reflector, ReflectorConfig, WtpConfig, WtpShaper};
use concord_cc::units::Rate;

impl Simulator {
    /// Builds the source hosts' shapers from the scenario (the queues' estimators live in the
    /// channels' disciplines, the `QueueDisc` in front of the discipline).
    pub(super) fn setup_eca(&mut self, sc: &Scenario) {
        let now = self.now;
        let mut state = EcaState {
            has_queues: self.channels.iter().any(|c| c.disc().eca().is_some()),
            admission: vec![None; sc.nodes.len()],
            ..EcaState::default()
        };
        for (f, spec) in sc.flows.iter().enumerate() {
            let host = match spec.eca {
                None => None,
                Some(EcaFlowSpec::Managed {
                    weight,
                    unit,
                    bucket,
                    queue,
                }) => {
                    let mut config = WtpConfig::new(weight * unit.bps_f64());
                    config.bucket_depth = bucket;
                    config.queue_limit = queue.max(1) as usize;
                    WtpShaper::new(config, now)
                        .ok()
                        .map(|shaper| HostEca::Managed {
                            shaper: Box::new(shaper),
                            armed: None,
                            drops: 0,
                        })
                }
                Some(EcaFlowSpec::Priority { peak }) => {
                    let capacity = self.first_hop_rate(spec.from as NodeId);
                    let slot = &mut state.admission[spec.from];
                    if slot.is_none() {
                        *slot = PriorityAdmission::new(capacity, 1.0).ok();
                    }
                    let admitted = slot
                        .as_mut()
                        .is_some_and(|a| a.admit(f as FlowId, peak).is_ok());
                    Some(if admitted {
                        HostEca::Priority
                    } else {
                        HostEca::Refused { drops: 0 }
                    })
                }
            };
            state.hosts.push(host);
        }
        if state.active() {
            state.reflector = Reflector::new(ReflectorConfig::default(), now).ok();
        }
        self.eca = state;
    }

    /// The rate of the first channel out of `node` (zero if it has none).
    fn first_hop_rate(&self, node: NodeId) -> Rate {
        self.channels
            .iter()
            .find(|c| c.from == node)
            .map_or(Rate::ZERO, |c| c.rate)
    }

    /// Schedules the next out-of-band report tick if none is pending.
    pub(super) fn arm_reports(&mut self) {
        let Some(at) = self.eca.reflector.as_ref().and_then(|r| r.poll_timeout()) else {
            return;
        };
        if self.eca.report_armed.is_none_or(|a| at < a) {
            self.eca.report_armed = Some(at);
            self.events
                .push(at, Event::Stage(StageTimer::Eca(EcaTimer::Report)));
        }
    }

    /// An ECA timer fired.
    pub(super) fn on_eca_timer(&mut self, t: EcaTimer) -> Result<(), CaptureError> {
        let now = self.now;
        match t {
            EcaTimer::Shaper(f) => {
                if let Some(Some(HostEca::Managed { armed, .. })) =
                    self.eca.hosts.get_mut(f as usize)
                {
                    if *armed != Some(now) {
                        return Ok(());
                    }
                    *armed = None;
                }
                self.release_shaped(f as usize)
            }
            EcaTimer::Report => {
                if self.eca.report_armed != Some(now) {
                    return Ok(());
                }
                self.eca.report_armed = None;
                let mut reports = Vec::new();
                if let Some(r) = self.eca.reflector.as_mut() {
                    while let Some(m) = r.poll_message(now) {
                        reports.push(m);
                    }
                }
                for m in reports {
                    let Some(flow) = self.flows.get(m.flow as usize) else {
                        continue;
                    };
                    let (src, dst) = (flow.src, flow.dst);
                    let mut p = Packet::new(
                        dst,
                        src,
                        m.flow,
                        super::UDP_IP_HEADER,
                        now,
                        Transport::Udp { seq: 0, len: 0 },
                    );
                    p.eca.set_rload(m.rload);
                    self.eca.reports_sent += 1;
                    self.forward(dst, p)?;
                }
                self.arm_reports();
                Ok(())
            }
        }
    }
}
