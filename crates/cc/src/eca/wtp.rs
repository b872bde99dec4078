//! WTP, Weighted Token-bucket Pacing: the host's per-flow shaper at r_i = w_i / L
//! (sections III.A.3, III.B.2 and IV.A.3).
//!
//! "Hosts are expected to install a packet shaper for each flow" between the transport and the
//! first link; its token rate follows the reflected load, and its bucket "is chosen to allow
//! bursts of up to certain maximum size" so that TCP slow start, and short transfers, proceed
//! unshaped ("enough for 16K bytes of data", section III.B.2). Packets the bucket holds back
//! wait in the host, not in the network (section IV.A.3, step 3).
//!
//! Units: the weight w_i ("willingness to pay", section III.A) is in bit/s per unit of load:
//! the flow's rate when the path load L is 1. L is dimensionless (see
//! [`super::load_estimator`]), so r_i = w_i / L is in bit/s. Scaling every weight by k scales
//! the loads routers settle on by k and leaves every rate unchanged.
//!
//! Two layers: [`TokenBucket`] answers "when may `size` bytes go" ([`TokenBucket::earliest_send`])
//! and is charged with [`TokenBucket::on_send`], for a caller that keeps its own queue (the
//! real-socket runtime with a kernel shaper); [`WtpShaper`] adds the weight rule and owns the
//! FIFO of waiting packets, driven like every sans-IO machine here: [`WtpShaper::enqueue`],
//! then [`WtpShaper::poll_transmit`] at [`WtpShaper::poll_timeout`].

use super::error::{positive, valid_load, ConfigError, InvalidLoad};
use crate::time::{Duration, Instant, NANOS_PER_SEC};
use crate::units::{Bytes, Rate};
use std::collections::VecDeque;

/// The default bucket depth: 16 KiB, the paper's 16K (section III.B.2, figure 8's knee).
pub const DEFAULT_BUCKET_DEPTH: Bytes = 16 * 1024;
/// The default rate floor: one 1500-byte packet per second, 12 kbit/s.
pub const DEFAULT_MIN_RATE: Rate = Rate::from_bps(12_000);
/// The default host queue limit, in packets.
pub const DEFAULT_QUEUE_LIMIT: usize = 1000;

/// Token units per byte: tokens are counted in bit-nanoseconds per second, so that a rate of
/// r bit/s adds exactly r units per nanosecond and every send time is an exact integer.
const UNITS_PER_BYTE: i128 = 8 * NANOS_PER_SEC as i128;

/// A token bucket of `depth` bytes filling at `rate`, in exact integer arithmetic.
///
/// A packet may go when the bucket holds min(size, depth) bytes of tokens; sending takes its
/// full size, so a packet larger than the bucket leaves it in debt and the long-run rate holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    /// The fill rate, in bit/s.
    rate: Rate,
    /// The capacity, in bytes.
    depth: Bytes,
    /// Tokens at `updated`, in bit-nanoseconds per second (8e9 per byte); negative is debt.
    tokens: i128,
    /// When `tokens` was last brought up to date.
    updated: Instant,
}

impl TokenBucket {
    /// A full bucket of `depth` bytes filling at `rate` from `now`.
    pub fn new(rate: Rate, depth: Bytes, now: Instant) -> Self {
        TokenBucket {
            rate,
            depth,
            tokens: i128::from(depth) * UNITS_PER_BYTE,
            updated: now,
        }
    }

    /// The fill rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// The capacity, in bytes.
    pub fn depth(&self) -> Bytes {
        self.depth
    }

    /// The tokens at `now`, in bytes (negative while in debt).
    pub fn tokens(&self, now: Instant) -> f64 {
        self.level_at(now) as f64 / UNITS_PER_BYTE as f64
    }

    /// The earliest instant, not before `now`, at which `size` bytes may be sent; the far
    /// future ([`Instant::MAX`]) if the bucket does not fill (rate zero).
    pub fn earliest_send(&self, now: Instant, size: Bytes) -> Instant {
        let need = i128::from(size.min(self.depth)) * UNITS_PER_BYTE;
        let level = self.level_at(now);
        if level >= need {
            return now;
        }
        let rate = i128::from(self.rate.bps());
        if rate == 0 {
            return Instant::MAX;
        }
        // Ceiling division of a positive deficit by a positive rate: nanoseconds to wait.
        let wait = (need - level + rate - 1) / rate;
        now + Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
    }

    /// `size` bytes were sent at `now`: take their tokens (the bucket may go into debt).
    pub fn on_send(&mut self, now: Instant, size: Bytes) {
        self.settle(now);
        self.tokens = self
            .tokens
            .saturating_sub(i128::from(size) * UNITS_PER_BYTE);
    }

    /// From `now` on the bucket fills at `rate`; tokens gathered so far are kept.
    pub fn set_rate(&mut self, now: Instant, rate: Rate) {
        self.settle(now);
        self.rate = rate;
    }

    /// Brings the tokens up to `now` (never backwards).
    fn settle(&mut self, now: Instant) {
        if now > self.updated {
            self.tokens = self.level_at(now);
            self.updated = now;
        }
    }

    /// The tokens at `now`, in units, capped at the depth.
    fn level_at(&self, now: Instant) -> i128 {
        let full = i128::from(self.depth) * UNITS_PER_BYTE;
        if self.tokens >= full {
            return self.tokens;
        }
        let elapsed = u128::from(now.saturating_since(self.updated).as_nanos());
        let gain = u128::from(self.rate.bps()).saturating_mul(elapsed);
        // `room` is positive here, so the conversion is exact.
        let room = (full - self.tokens) as u128;
        if gain >= room {
            full
        } else {
            // gain < room <= i128::MAX.
            self.tokens + gain as i128
        }
    }
}

/// The parameters of a [`WtpShaper`].
#[derive(Clone, Debug, PartialEq)]
pub struct WtpConfig {
    /// w_i, the flow's weight, in bit/s per unit of load: its rate at L = 1 (section III.A).
    pub weight: f64,
    /// The bucket depth, in bytes (section III.B.2: 16K).
    pub bucket_depth: Bytes,
    /// The rate floor, so that a very high load never stops the flow (default: one 1500-byte
    /// packet per second).
    pub min_rate: Rate,
    /// The rate ceiling, e.g. the first link's rate (default: unlimited).
    pub max_rate: Rate,
    /// The rate before any RLOAD arrives; `None` means `max_rate`: the flow is unshaped until
    /// the network has said something.
    pub initial_rate: Option<Rate>,
    /// The most packets that may wait in the host; more are refused.
    pub queue_limit: usize,
}

impl WtpConfig {
    /// A flow of weight `weight` (bit/s per unit load) with the defaults: a 16 KiB bucket,
    /// 12 kbit/s floor, no ceiling, unshaped until the first RLOAD, 1000 packets of queue.
    pub fn new(weight: f64) -> Self {
        WtpConfig {
            weight,
            bucket_depth: DEFAULT_BUCKET_DEPTH,
            min_rate: DEFAULT_MIN_RATE,
            max_rate: Rate::MAX,
            initial_rate: None,
            queue_limit: DEFAULT_QUEUE_LIMIT,
        }
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        positive("weight", self.weight)?;
        if self.bucket_depth == 0 {
            return Err(ConfigError::Zero {
                name: "bucket_depth",
            });
        }
        if self.min_rate == Rate::ZERO {
            return Err(ConfigError::Zero { name: "min_rate" });
        }
        if self.min_rate > self.max_rate {
            return Err(ConfigError::Inverted {
                low: "min_rate",
                low_value: self.min_rate.bps_f64(),
                high: "max_rate",
                high_value: self.max_rate.bps_f64(),
            });
        }
        if self.queue_limit == 0 {
            return Err(ConfigError::Zero {
                name: "queue_limit",
            });
        }
        Ok(())
    }

    /// `rate` within [min_rate, max_rate].
    fn clamp(&self, rate: Rate) -> Rate {
        rate.clamp(self.min_rate, self.max_rate)
    }
}

/// One flow's WTP shaper: a token bucket at r = w / L and the FIFO of packets `T` waiting in
/// the host.
#[derive(Clone, Debug)]
pub struct WtpShaper<T> {
    /// The parameters.
    config: WtpConfig,
    /// The bucket.
    bucket: TokenBucket,
    /// Waiting packets with their sizes, oldest first.
    queue: VecDeque<(Bytes, T)>,
    /// The bytes waiting.
    queued_bytes: Bytes,
    /// The latest RLOAD taken.
    load: Option<f64>,
}

impl<T> WtpShaper<T> {
    /// A shaper with a full bucket at `now`. The configuration is checked first.
    pub fn new(config: WtpConfig, now: Instant) -> Result<Self, ConfigError> {
        config.validate()?;
        let rate = config.clamp(config.initial_rate.unwrap_or(config.max_rate));
        Ok(WtpShaper {
            bucket: TokenBucket::new(rate, config.bucket_depth, now),
            config,
            queue: VecDeque::new(),
            queued_bytes: 0,
            load: None,
        })
    }

    /// The parameters.
    pub fn config(&self) -> &WtpConfig {
        &self.config
    }

    /// The token rate now in force.
    pub fn rate(&self) -> Rate {
        self.bucket.rate()
    }

    /// w_i, in bit/s per unit load.
    pub fn weight(&self) -> f64 {
        self.config.weight
    }

    /// The latest RLOAD taken, if any.
    pub fn load(&self) -> Option<f64> {
        self.load
    }

    /// The bucket (for its tokens, or to ask about a packet without queueing it).
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }

    /// The rate for a path load `load`: w / L within [min_rate, max_rate] (section III.A).
    pub fn rate_for_load(&self, load: f64) -> Result<Rate, InvalidLoad> {
        let load = valid_load(load)?;
        Ok(self
            .config
            .clamp(Rate::from_bps_f64(self.config.weight / load)))
    }

    /// An RLOAD arrived at `now` (section IV.A.3, step 9): the token rate becomes w / RLOAD
    /// from now on. A zero, negative or non-finite RLOAD carries no information and changes
    /// nothing. Returns the new rate.
    pub fn on_rload(&mut self, now: Instant, rload: f64) -> Result<Rate, InvalidLoad> {
        let rate = self.rate_for_load(rload)?;
        self.load = Some(rload);
        self.bucket.set_rate(now, rate);
        Ok(rate)
    }

    /// Sets the token rate directly (within the floor and ceiling), for a flow whose rate comes
    /// from another controller such as [`super::kelly::KellyController`]. Returns the rate
    /// set.
    pub fn set_rate(&mut self, now: Instant, rate: Rate) -> Rate {
        let rate = self.config.clamp(rate);
        self.bucket.set_rate(now, rate);
        rate
    }

    /// Changes w_i at `now`; with an RLOAD already known the rate follows at once.
    pub fn set_weight(&mut self, now: Instant, weight: f64) -> Result<(), ConfigError> {
        positive("weight", weight)?;
        self.config.weight = weight;
        if let Some(load) = self.load {
            if let Ok(rate) = self.rate_for_load(load) {
                self.bucket.set_rate(now, rate);
            }
        }
        Ok(())
    }

    /// Puts a packet of `size` bytes at the back of the host queue. A full queue refuses it and
    /// hands it back.
    pub fn enqueue(&mut self, size: Bytes, packet: T) -> Result<(), T> {
        if self.queue.len() >= self.config.queue_limit {
            return Err(packet);
        }
        self.queue.push_back((size, packet));
        self.queued_bytes = self.queued_bytes.saturating_add(size);
        Ok(())
    }

    /// When the packet at the head of the queue may go; `None` with an empty queue. The
    /// instant may lie in the past: the packet is due at once.
    pub fn poll_timeout(&self) -> Option<Instant> {
        self.queue
            .front()
            .map(|&(size, _)| self.bucket.earliest_send(self.bucket.updated, size))
    }

    /// The head packet if the bucket lets it go at `now` (its tokens are taken); `None`
    /// otherwise. Call until `None`: a full bucket lets a burst through at one instant.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<T> {
        let &(size, _) = self.queue.front()?;
        if self.bucket.earliest_send(now, size) > now {
            return None;
        }
        let (size, packet) = self.queue.pop_front()?;
        self.bucket.on_send(now, size);
        self.queued_bytes = self.queued_bytes.saturating_sub(size);
        Some(packet)
    }

    /// Packets waiting in the host.
    pub fn queue_len(&self) -> usize {
        self.queue.len()
    }

    /// Bytes waiting in the host.
    pub fn queued_bytes(&self) -> Bytes {
        self.queued_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shaper(weight: f64) -> WtpShaper<u32> {
        WtpShaper::new(WtpConfig::new(weight), Instant::ZERO).expect("valid")
    }

    #[test]
    fn the_token_rate_is_the_weight_over_the_reflected_load() {
        let mut s = shaper(1_000_000.0);
        assert_eq!(s.rate(), Rate::MAX);
        assert_eq!(s.on_rload(Instant::ZERO, 2.0), Ok(Rate::from_bps(500_000)));
        assert_eq!(s.rate(), Rate::from_bps(500_000));
        assert_eq!(
            s.on_rload(Instant::ZERO, 0.8),
            Ok(Rate::from_bps(1_250_000))
        );
        assert_eq!(s.on_rload(Instant::ZERO, 0.0), Err(InvalidLoad(0.0)));
        assert_eq!(s.rate(), Rate::from_bps(1_250_000));
        s.set_weight(Instant::ZERO, 3_000_000.0).expect("valid");
        assert_eq!(s.rate(), Rate::from_bps(3_750_000));
    }

    #[test]
    fn the_rate_stays_between_the_floor_and_the_ceiling() {
        let mut config = WtpConfig::new(1_000_000.0);
        config.max_rate = Rate::from_mbps(10);
        let mut s: WtpShaper<u32> = WtpShaper::new(config, Instant::ZERO).expect("valid");
        assert_eq!(s.rate(), Rate::from_mbps(10));
        assert_eq!(s.on_rload(Instant::ZERO, 0.01), Ok(Rate::from_mbps(10)));
        assert_eq!(s.on_rload(Instant::ZERO, 1e6), Ok(DEFAULT_MIN_RATE));
        assert_eq!(s.set_rate(Instant::ZERO, Rate::ZERO), DEFAULT_MIN_RATE);
    }

    #[test]
    fn a_16_kib_burst_passes_at_once_then_packets_leave_at_the_token_rate() {
        let mut s = shaper(1_000_000.0);
        s.on_rload(Instant::ZERO, 1.0).expect("valid");
        for i in 0..20 {
            s.enqueue(1024, i).expect("room");
        }
        let mut sent = Vec::new();
        let mut now = Instant::ZERO;
        while let Some(at) = s.poll_timeout() {
            now = at.max(now);
            while let Some(p) = s.poll_transmit(now) {
                sent.push((p, now));
            }
        }
        // 16 x 1024 B fill the bucket; then one 1024 B packet per 8.192 ms at 1 Mbit/s.
        for (i, &(p, t)) in sent.iter().enumerate() {
            assert_eq!(p, i as u32);
            let expected = if i < 16 {
                Instant::ZERO
            } else {
                Instant::from_micros(8_192 * (i as u64 - 15))
            };
            assert_eq!(t, expected, "packet {i}");
        }
        assert_eq!(sent.len(), 20);
        assert_eq!(s.queued_bytes(), 0);
    }

    #[test]
    fn a_packet_is_not_sent_before_its_tokens_are_there() {
        let mut s = shaper(1_000_000.0);
        s.on_rload(Instant::ZERO, 1.0).expect("valid");
        s.enqueue(16 * 1024, 0).expect("room");
        s.enqueue(1000, 1).expect("room");
        assert_eq!(s.poll_transmit(Instant::ZERO), Some(0));
        assert_eq!(s.poll_timeout(), Some(Instant::from_millis(8)));
        assert_eq!(s.poll_transmit(Instant::from_nanos(7_999_999)), None);
        assert_eq!(s.poll_transmit(Instant::from_millis(8)), Some(1));
    }

    #[test]
    fn a_rate_change_keeps_the_tokens_gathered_at_the_old_rate() {
        let mut b = TokenBucket::new(Rate::from_mbps(1), 16_384, Instant::ZERO);
        b.on_send(Instant::ZERO, 16_384);
        // 4 ms at 1 Mbit/s gather 500 bytes; then 2 Mbit/s needs 2 ms more for 1000 bytes.
        b.set_rate(Instant::from_millis(4), Rate::from_mbps(2));
        assert_eq!(b.tokens(Instant::from_millis(4)), 500.0);
        assert_eq!(
            b.earliest_send(Instant::from_millis(4), 1000),
            Instant::from_millis(6)
        );
    }

    #[test]
    fn a_packet_larger_than_the_bucket_waits_for_a_full_bucket_and_leaves_a_debt() {
        let mut b = TokenBucket::new(Rate::from_mbps(1), 1000, Instant::ZERO);
        assert_eq!(b.earliest_send(Instant::ZERO, 3000), Instant::ZERO);
        b.on_send(Instant::ZERO, 3000);
        assert_eq!(b.tokens(Instant::ZERO), -2000.0);
        // 3000 bytes at 1 Mbit/s take 24 ms to repay and refill.
        assert_eq!(
            b.earliest_send(Instant::ZERO, 1000),
            Instant::from_millis(24)
        );
        let stuck = TokenBucket::new(Rate::ZERO, 100, Instant::ZERO);
        assert_eq!(stuck.earliest_send(Instant::ZERO, 100), Instant::ZERO);
        assert_eq!(stuck.earliest_send(Instant::ZERO, 101), Instant::ZERO);
        let mut empty = stuck.clone();
        empty.on_send(Instant::ZERO, 100);
        assert_eq!(empty.earliest_send(Instant::ZERO, 1), Instant::MAX);
    }

    #[test]
    fn a_full_host_queue_hands_the_packet_back() {
        let mut config = WtpConfig::new(1e6);
        config.queue_limit = 2;
        let mut s: WtpShaper<u32> = WtpShaper::new(config, Instant::ZERO).expect("valid");
        assert_eq!(s.enqueue(100, 1), Ok(()));
        assert_eq!(s.enqueue(100, 2), Ok(()));
        assert_eq!(s.enqueue(100, 3), Err(3));
        assert_eq!(s.queue_len(), 2);
        assert_eq!(s.queued_bytes(), 200);
    }

    #[test]
    fn impossible_configurations_are_refused() {
        assert!(WtpShaper::<u8>::new(WtpConfig::new(0.0), Instant::ZERO).is_err());
        assert!(WtpShaper::<u8>::new(WtpConfig::new(f64::NAN), Instant::ZERO).is_err());
        let mut c = WtpConfig::new(1.0);
        c.min_rate = Rate::from_mbps(2);
        c.max_rate = Rate::from_mbps(1);
        assert!(WtpShaper::<u8>::new(c, Instant::ZERO).is_err());
        let mut c = WtpConfig::new(1.0);
        c.bucket_depth = 0;
        assert!(WtpShaper::<u8>::new(c, Instant::ZERO).is_err());
    }
}
