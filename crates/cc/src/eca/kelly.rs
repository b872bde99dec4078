//! Kelly's primal rate controller (the paper's equation (2), in its review of congestion
//! pricing, section II.B.4), for flows with no adaptation of their own: section III.A.3 sets
//! the token rate of such a flow by "a simple and stable feedback scheme ... such as
//! Equation 2".
//!
//! dx_r/dt = kappa * (w_r - x_r(t) * sum_j mu_j(t))
//!
//! with x_r the flow's rate in bit/s, w_r its willingness to pay in bit/s per unit load (the
//! same unit as the WTP weight, see [`super::wtp`]), mu_j the load signalled by resource j
//! (in ECA the RLOAD: the max or the sum of the routers' L, see
//! [`super::load_estimator::LoadCombine`]) and kappa the gain in 1/s. The equilibrium is
//! x = w / sum(mu), the rate WTP would set directly.
//!
//! Discretisation: explicit Euler over the time since the last update, with the price held at
//! its last value over the step (zero-order hold):
//! x <- x + kappa * (w - x * mu) * dt. For fixed mu the exact solution relaxes toward w / mu
//! with rate a = kappa * mu; the Euler step multiplies the distance by (1 - a * dt), which
//! converges without oscillating only while a * dt <= 1 (and diverges beyond 2). The step is
//! therefore clamped to a * dt <= 1: a long gap between updates moves x at most all the way to
//! w / mu and never past it. The rate is then kept within [min_rate, max_rate].

use super::error::{positive, valid_load, ConfigError, InvalidLoad};
use crate::time::{Duration, Instant};
use crate::units::Rate;

/// The parameters of a [`KellyController`].
#[derive(Clone, Debug, PartialEq)]
pub struct KellyConfig {
    /// w_r, the willingness to pay, in bit/s per unit load.
    pub weight: f64,
    /// kappa, the gain, in 1/s. The paper notes it "must be chosen carefully" and depends on
    /// the RTT; the default 1/s is slow next to a 100 ms price update.
    pub kappa: f64,
    /// x_r at the start.
    pub initial_rate: Rate,
    /// The rate floor.
    pub min_rate: Rate,
    /// The rate ceiling.
    pub max_rate: Rate,
    /// How often the host should integrate when no new price arrives
    /// ([`KellyController::poll_timeout`]).
    pub update_interval: Duration,
}

impl KellyConfig {
    /// A controller for willingness to pay `weight` (bit/s per unit load): kappa 1/s, starting
    /// at the floor of 12 kbit/s (one 1500-byte packet per second), no ceiling, integrating
    /// every 10 ms.
    pub fn new(weight: f64) -> Self {
        KellyConfig {
            weight,
            kappa: 1.0,
            initial_rate: Rate::from_bps(12_000),
            min_rate: Rate::from_bps(12_000),
            max_rate: Rate::MAX,
            update_interval: Duration::from_millis(10),
        }
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("weight", self.weight)?;
        positive("kappa", self.kappa)?;
        if self.min_rate > self.max_rate {
            return Err(ConfigError::Inverted {
                low: "min_rate",
                low_value: self.min_rate.bps_f64(),
                high: "max_rate",
                high_value: self.max_rate.bps_f64(),
            });
        }
        if self.update_interval.is_zero() {
            return Err(ConfigError::Zero {
                name: "update_interval",
            });
        }
        Ok(())
    }
}

/// One flow's primal controller (equation (2)).
#[derive(Clone, Debug)]
pub struct KellyController {
    /// The parameters.
    config: KellyConfig,
    /// x_r, in bit/s.
    x: f64,
    /// sum_j mu_j, the price in force; 0 before the first one.
    mu: f64,
    /// When x was last integrated.
    updated: Instant,
}

impl KellyController {
    /// A controller at its initial rate at `now`, with no price known yet (mu = 0: the rate
    /// grows at kappa * w until one arrives). The configuration is checked first.
    pub fn new(config: KellyConfig, now: Instant) -> Result<Self, ConfigError> {
        config.validate()?;
        let x = config
            .initial_rate
            .clamp(config.min_rate, config.max_rate)
            .bps_f64();
        Ok(KellyController {
            config,
            x,
            mu: 0.0,
            updated: now,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &KellyConfig {
        &self.config
    }

    /// x_r as a [`Rate`].
    pub fn rate(&self) -> Rate {
        Rate::from_bps_f64(self.x)
    }

    /// x_r in bit/s, unrounded.
    pub fn rate_bps(&self) -> f64 {
        self.x
    }

    /// The price in force.
    pub fn price(&self) -> f64 {
        self.mu
    }

    /// w / mu, the rate the controller converges to under `price` (unclamped).
    pub fn equilibrium(&self, price: f64) -> Result<f64, InvalidLoad> {
        Ok(self.config.weight / valid_load(price)?)
    }

    /// Integrates equation (2) from the last update to `now` with the price in force.
    pub fn advance(&mut self, now: Instant) {
        let Some(elapsed) = now.checked_since(self.updated) else {
            return;
        };
        let KellyConfig { weight, kappa, .. } = self.config;
        let mut dt = elapsed.as_secs_f64();
        // Stability: kappa * mu * dt <= 1 (see the module documentation).
        if kappa * self.mu * dt > 1.0 {
            dt = 1.0 / (kappa * self.mu);
        }
        let x = self.x + kappa * (weight - self.x * self.mu) * dt;
        self.x = x.clamp(
            self.config.min_rate.bps_f64(),
            self.config.max_rate.bps_f64(),
        );
        self.updated = now;
    }

    /// A new price `price` (sum of mu_j, or ECA's RLOAD) arrived at `now`: the interval since
    /// the last update is integrated with the old price, then the new one holds. A zero,
    /// negative or non-finite price changes nothing. Returns the rate.
    pub fn on_price(&mut self, now: Instant, price: f64) -> Result<Rate, InvalidLoad> {
        let price = valid_load(price)?;
        self.advance(now);
        self.mu = price;
        Ok(self.rate())
    }

    /// When to call [`advance`](Self::advance) next if no price arrives.
    pub fn poll_timeout(&self) -> Option<Instant> {
        Some(self.updated + self.config.update_interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn controller(x0: u64) -> KellyController {
        let mut c = KellyConfig::new(1_000_000.0);
        c.kappa = 0.5;
        c.initial_rate = Rate::from_bps(x0);
        KellyController::new(c, Instant::ZERO).expect("valid")
    }

    #[test]
    fn one_euler_step_moves_the_rate_by_kappa_times_the_error_times_dt() {
        // x = 200 kbit/s, w = 1 Mbit/s, mu = 2, kappa = 0.5/s, dt = 125 ms:
        // x + 0.5 * (1e6 - 2e5 * 2) * 0.125 = 200 000 + 37 500.
        let mut k = controller(200_000);
        k.on_price(Instant::ZERO, 2.0).expect("valid");
        assert_eq!(k.rate_bps(), 200_000.0);
        k.advance(Instant::from_millis(125));
        assert_eq!(k.rate_bps(), 237_500.0);
        // The next price applies from here on: mu = 4, dt = 250 ms:
        // 237 500 + 0.5 * (1e6 - 950 000) * 0.25 = 243 750.
        k.on_price(Instant::from_millis(125), 4.0).expect("valid");
        k.advance(Instant::from_millis(375));
        assert_eq!(k.rate_bps(), 243_750.0);
    }

    #[test]
    fn the_rate_converges_to_the_weight_over_the_price_within_one_percent() {
        let mut k = controller(12_000);
        let mut now = Instant::ZERO;
        for _ in 0..2_000 {
            now += Duration::from_millis(10);
            k.on_price(now, 2.0).expect("valid");
        }
        let target = k.equilibrium(2.0).expect("valid");
        assert_eq!(target, 500_000.0);
        assert!(
            (k.rate_bps() - target).abs() / target < 0.01,
            "{}",
            k.rate_bps()
        );
    }

    #[test]
    fn a_long_gap_moves_the_rate_to_the_equilibrium_and_never_past_it() {
        // kappa * mu * dt = 0.5 * 2 * 10 = 10 > 1: clamped to one full step.
        let mut k = controller(200_000);
        k.on_price(Instant::ZERO, 2.0).expect("valid");
        k.advance(Instant::from_secs(10));
        assert_eq!(k.rate_bps(), 500_000.0);
    }

    #[test]
    fn a_price_that_carries_no_information_changes_nothing() {
        let mut k = controller(200_000);
        assert_eq!(k.on_price(Instant::ZERO, 0.0), Err(InvalidLoad(0.0)));
        assert!(k.on_price(Instant::ZERO, f64::NAN).is_err());
        assert_eq!(k.price(), 0.0);
        assert_eq!(k.rate_bps(), 200_000.0);
    }

    #[test]
    fn the_rate_stays_within_its_bounds() {
        let mut c = KellyConfig::new(1_000_000.0);
        c.max_rate = Rate::from_bps(300_000);
        let mut k = KellyController::new(c, Instant::ZERO).expect("valid");
        k.advance(Instant::from_secs(100));
        assert_eq!(k.rate(), Rate::from_bps(300_000));
        k.on_price(Instant::from_secs(100), 1e9).expect("valid");
        k.advance(Instant::from_secs(200));
        assert_eq!(k.rate(), Rate::from_bps(12_000));
    }
}
