//! Multiple flowshares (slides, "MULTIPLE FLOWSHARES", Fig. 7 and Fig. 10): how many
//! flowshares an application's aggregate takes and which packet events drive its loss event
//! rate.
//!
//! - [`Flowshares::Single`]: the aggregate is one flow; every packet event enters the loss
//!   history and the application is told the algorithm's rate.
//! - [`Flowshares::Naive`]: the algorithm runs on every packet event of the aggregate, as for
//!   one flow, and the application is told m times its rate (Fig. 7). The aggregate then packs
//!   m times more packets into each RTT than the flow the equation models, so its loss event
//!   rate is too low and it takes more than m flowshares.
//! - [`Flowshares::Bfld`]: the algorithm runs on the virtual packet event stream of
//!   [`bfld`](super::bfld) (Fig. 9), which carries about one flowshare of packets, and the
//!   application is told m times its rate (Fig. 10).

use super::bfld::BfldSampler;
use crate::rng::Rng;
use crate::units::Rate;

/// How many flowshares an application's aggregate takes, and how.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Flowshares {
    /// One flowshare.
    #[default]
    Single,
    /// m flowshares by multiplying the single-flow rate by m (the naive approach, Fig. 7).
    Naive {
        /// The number of flowshares, at least 1.
        m: u32,
    },
    /// m flowshares by bandwidth filtered loss detection (Fig. 9 and Fig. 10).
    Bfld {
        /// The number of flowshares, at least 1.
        m: u32,
    },
}

/// Why a [`Flowshares`] choice is impossible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FlowshareError {
    /// m is zero.
    #[error("an application takes at least one flowshare; m is 0")]
    ZeroFlowshares,
}

impl Flowshares {
    /// m, the number of flowshares (1 for [`Flowshares::Single`]).
    pub fn shares(&self) -> u32 {
        match *self {
            Flowshares::Single => 1,
            Flowshares::Naive { m } | Flowshares::Bfld { m } => m,
        }
    }

    /// Checks that m is at least 1.
    pub fn validate(&self) -> Result<(), FlowshareError> {
        if self.shares() == 0 {
            return Err(FlowshareError::ZeroFlowshares);
        }
        Ok(())
    }

    /// The bandwidth available to the application when one flowshare gets `flowshare_rate`:
    /// m times it, saturating.
    pub fn available_bandwidth(&self, flowshare_rate: Rate) -> Rate {
        Rate::from_bps(
            flowshare_rate
                .bps()
                .saturating_mul(u64::from(self.shares())),
        )
    }
}

/// Decides, packet event by packet event, which events of an aggregate reach its loss history.
#[derive(Clone, Debug)]
pub struct FlowshareFilter {
    /// The choice.
    mode: Flowshares,
    /// The BFLD draw (used by [`Flowshares::Bfld`] only).
    sampler: BfldSampler,
}

impl FlowshareFilter {
    /// A filter for `mode`; m must be at least 1.
    pub fn new(mode: Flowshares) -> Result<FlowshareFilter, FlowshareError> {
        mode.validate()?;
        Ok(FlowshareFilter {
            mode,
            sampler: BfldSampler::new(),
        })
    }

    /// The choice this filter applies.
    pub fn mode(&self) -> Flowshares {
        self.mode
    }

    /// Whether the next packet event enters the loss history. `f` is BFLD's sampling fraction
    /// F = B_avail / B_arriv; [`Flowshares::Single`] and [`Flowshares::Naive`] keep every event
    /// and draw nothing from `rng`.
    pub fn keep(&mut self, f: f64, rng: &mut Rng) -> bool {
        match self.mode {
            Flowshares::Single | Flowshares::Naive { .. } => true,
            Flowshares::Bfld { .. } => self.sampler.keep(f, rng),
        }
    }

    /// The BFLD sampler's counts (all zero unless the mode is [`Flowshares::Bfld`]).
    pub fn sampler(&self) -> &BfldSampler {
        &self.sampler
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn m_flowshares_make_m_times_the_flowshare_rate_available() {
        let x = Rate::from_kbps(300);
        assert_eq!(Flowshares::Single.available_bandwidth(x), x);
        assert_eq!(
            Flowshares::Naive { m: 4 }.available_bandwidth(x),
            Rate::from_kbps(1200)
        );
        assert_eq!(
            Flowshares::Bfld { m: 3 }.available_bandwidth(x),
            Rate::from_kbps(900)
        );
        assert_eq!(
            Flowshares::Naive { m: 0 }.validate(),
            Err(FlowshareError::ZeroFlowshares)
        );
        assert!(FlowshareFilter::new(Flowshares::Bfld { m: 0 }).is_err());
    }

    #[test]
    fn only_bfld_thins_the_event_stream() {
        let mut rng = Rng::new(5);
        for mode in [Flowshares::Single, Flowshares::Naive { m: 8 }] {
            let mut f = FlowshareFilter::new(mode).unwrap_or_else(|e| panic!("{e}"));
            assert!((0..1000).all(|_| f.keep(0.125, &mut rng)));
        }
        let mut f =
            FlowshareFilter::new(Flowshares::Bfld { m: 8 }).unwrap_or_else(|e| panic!("{e}"));
        let kept = (0..8000).filter(|_| f.keep(0.125, &mut rng)).count();
        assert!((800..1200).contains(&kept), "{kept}");
        assert_eq!(f.sampler().offered(), 8000);
    }
}
