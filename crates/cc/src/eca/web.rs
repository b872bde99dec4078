//! A web workload after Mah's empirical model of HTTP traffic, as ns-2's WebTraf generator
//! implements it: the HTTP load of the paper's response-time experiment (section IV.B.4: "a
//! simulated HTTP workload averaging 30% of the link capacity ... bursty requests for compound
//! web pages with heavy-tailed object size and inter-request distributions").
//!
//! The model: user sessions arrive as a Poisson process; a session requests a number of pages,
//! one think time apart; a page is a primary object followed by embedded objects, one
//! inter-object time apart; every object's size is heavy-tailed. The distributions and their
//! defaults ([`WebConfig::new`]):
//!
//! | quantity | distribution | default | after |
//! |---|---|---|---|
//! | session arrivals | Poisson | rate solved from the offered load | WebTraf |
//! | pages per session | geometric on {1, 2, ...} | mean 5 | our choice (memoryless; see warm start) |
//! | think time between page starts | exponential | mean 15 s | WebTraf's large-scale example |
//! | embedded objects per page | geometric on {0, 1, ...} | mean 2 (3 objects per page) | Mah: most pages have one or a few objects, some many |
//! | time between objects of a page | exponential | mean 10 ms | WebTraf's examples |
//! | object size | bounded Pareto | shape 1.2, minimum 2000 B, maximum 2 MB | WebTraf's examples: Pareto, shape 1.2, mean 12 packets of 1000 B; Mah: heavy-tailed replies |
//!
//! The minimum of 2000 B gives an untruncated mean of 12 000 B (shape / (shape - 1) * minimum).
//! A Pareto of shape 1.2 has infinite variance, so a finite run's offered load would be
//! dominated by a handful of giant objects; the 2 MB cap makes the configured load reachable in
//! runs of reasonable length. It lowers the mean to about 8 990 B, and the rate solve uses the
//! capped mean exactly.
//!
//! Offered load: with E[objects per page] = 1 + E[embedded] and E[size] the bounded Pareto
//! mean, pages start at rate lambda_p = load * link_rate / (8 * E[objects] * E[size]) per
//! second and sessions arrive at lambda_s = lambda_p / E[pages per session]. Think times run
//! from page start to page start (WebTraf's other option, from the end of one page to the
//! start of the next, would make the offered load depend on the network).
//!
//! Warm start: a run that starts with no sessions under way offers less than the target until
//! the sessions' lifetime has passed (a minute with the defaults). With
//! [`WebConfig::warm_start`] the generator begins in the stationary state instead: a Poisson
//! number, with mean lambda_s * (E[pages] - 1) * E[think], of sessions already under way, each
//! with its next page an exponential think time away and its remaining pages drawn afresh. With
//! geometric pages (on {1, 2, ...}) and exponential think times this is exact, by
//! memorylessness; with other counts it is an approximation.
//!
//! Randomness comes from one [`Rng`] the caller derives from the scenario seed.

use super::error::{in_range, positive, ConfigError};
use crate::rng::Rng;
use crate::time::{Duration, Instant};
use crate::units::{Bytes, Rate};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// The most sessions a warm start puts under way (a bound on the start-up work).
pub const MAX_WARM_SESSIONS: u64 = 1_000_000;

/// A random count: pages per session or embedded objects per page.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Count {
    /// Always `n`.
    Constant(u32),
    /// Geometric on {min, min + 1, ...} with the given mean (at least `min`).
    Geometric {
        /// The smallest value.
        min: u32,
        /// The mean.
        mean: f64,
    },
}

impl Count {
    /// The mean.
    pub fn mean(&self) -> f64 {
        match *self {
            Count::Constant(n) => f64::from(n),
            Count::Geometric { mean, .. } => mean,
        }
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> u32 {
        match *self {
            Count::Constant(n) => n,
            Count::Geometric { min, mean } => {
                let extra = mean - f64::from(min);
                if extra <= 0.0 {
                    return min;
                }
                // Failures before the first success, success probability p = 1 / (1 + extra):
                // floor(ln U / ln(1 - p)) with U uniform in (0, 1].
                let q = extra / (1.0 + extra);
                let u = 1.0 - rng.uniform();
                let k = (u.ln() / q.ln()).floor();
                let k = if k.is_finite() && k > 0.0 { k } else { 0.0 };
                min.saturating_add(k.min(f64::from(u32::MAX)) as u32)
            }
        }
    }

    /// Checks that the count is usable, its mean at least `least`.
    fn validate(&self, name: &'static str, least: f64) -> Result<(), ConfigError> {
        match *self {
            Count::Constant(n) => in_range(name, f64::from(n), least, f64::from(u32::MAX)),
            Count::Geometric { min, mean } => {
                in_range(name, f64::from(min), least, f64::from(u32::MAX))?;
                in_range(name, mean, f64::from(min), 1e9)
            }
        }
    }
}

/// A bounded Pareto distribution of object sizes, in bytes: density proportional to
/// x^-(shape + 1) on [min_bytes, max_bytes].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParetoSize {
    /// The shape alpha (WebTraf's examples: 1.2).
    pub shape: f64,
    /// The scale, the smallest size, in bytes.
    pub min_bytes: f64,
    /// The largest size, in bytes; infinite for the plain Pareto (then shape must exceed 1).
    pub max_bytes: f64,
}

impl ParetoSize {
    /// The distribution whose untruncated mean is `mean` bytes (scale = mean * (shape - 1) /
    /// shape, as WebTraf parameterises it), capped at `max_bytes`.
    pub fn with_untruncated_mean(shape: f64, mean: f64, max_bytes: f64) -> Self {
        ParetoSize {
            shape,
            min_bytes: mean * (shape - 1.0) / shape,
            max_bytes,
        }
    }

    /// The mean, in bytes.
    pub fn mean(&self) -> f64 {
        let (a, k, p) = (self.shape, self.min_bytes, self.max_bytes);
        if p.is_infinite() {
            return a * k / (a - 1.0);
        }
        let tail = (k / p).powf(a);
        if (a - 1.0).abs() < 1e-12 {
            k * (p / k).ln() / (1.0 - k / p)
        } else {
            a * k.powf(a) * (k.powf(1.0 - a) - p.powf(1.0 - a)) / ((a - 1.0) * (1.0 - tail))
        }
    }

    /// One draw, rounded up to whole bytes, by inversion of the distribution function.
    pub fn sample(&self, rng: &mut Rng) -> Bytes {
        let (a, k, p) = (self.shape, self.min_bytes, self.max_bytes);
        let tail = if p.is_infinite() {
            0.0
        } else {
            (k / p).powf(a)
        };
        let u = rng.uniform();
        let x = k / (1.0 - u * (1.0 - tail)).powf(1.0 / a);
        let x = x.min(p).max(1.0).ceil();
        if x >= u64::MAX as f64 {
            u64::MAX
        } else {
            x as Bytes
        }
    }

    /// Checks the parameters.
    fn validate(&self) -> Result<(), ConfigError> {
        positive("object_size.shape", self.shape)?;
        positive("object_size.min_bytes", self.min_bytes)?;
        if self.max_bytes.is_nan() || self.max_bytes < self.min_bytes {
            return Err(ConfigError::Inverted {
                low: "object_size.min_bytes",
                low_value: self.min_bytes,
                high: "object_size.max_bytes",
                high_value: self.max_bytes,
            });
        }
        if self.max_bytes.is_infinite() && self.shape <= 1.0 {
            // The mean is infinite: no arrival rate gives a finite offered load.
            return Err(ConfigError::OutOfRange {
                name: "object_size.shape (uncapped)",
                value: self.shape,
                min: 1.0 + f64::EPSILON,
                max: f64::MAX,
            });
        }
        Ok(())
    }
}

/// The parameters of a [`WebGenerator`].
#[derive(Clone, Debug, PartialEq)]
pub struct WebConfig {
    /// The capacity the offered load is a fraction of.
    pub link_rate: Rate,
    /// The offered load as a fraction of `link_rate` (section IV.B.4: 0.3), in (0, 1].
    pub offered_load: f64,
    /// Pages per session.
    pub pages_per_session: Count,
    /// The mean of the exponential think time from one page start to the next.
    pub think_time: Duration,
    /// Embedded objects per page (besides the primary object).
    pub embedded_per_page: Count,
    /// The mean of the exponential time between the objects of a page.
    pub inter_object: Duration,
    /// Object sizes.
    pub object_size: ParetoSize,
    /// Start in the stationary state (see the module documentation).
    pub warm_start: bool,
    /// No page starts at or after this instant; objects of earlier pages still follow.
    pub stop: Option<Instant>,
}

impl WebConfig {
    /// The defaults of the module documentation for `offered_load` of `link_rate`.
    pub fn new(link_rate: Rate, offered_load: f64) -> Self {
        WebConfig {
            link_rate,
            offered_load,
            pages_per_session: Count::Geometric { min: 1, mean: 5.0 },
            think_time: Duration::from_secs(15),
            embedded_per_page: Count::Geometric { min: 0, mean: 2.0 },
            inter_object: Duration::from_millis(10),
            object_size: ParetoSize::with_untruncated_mean(1.2, 12_000.0, 2_000_000.0),
            warm_start: true,
            stop: None,
        }
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.link_rate == Rate::ZERO {
            return Err(ConfigError::Zero { name: "link_rate" });
        }
        in_range("offered_load", self.offered_load, f64::MIN_POSITIVE, 1.0)?;
        self.pages_per_session.validate("pages_per_session", 1.0)?;
        self.embedded_per_page.validate("embedded_per_page", 0.0)?;
        if self.think_time.is_zero() {
            return Err(ConfigError::Zero { name: "think_time" });
        }
        self.object_size.validate()
    }

    /// E[objects per page] * E[object size], in bytes.
    pub fn mean_page_bytes(&self) -> f64 {
        (1.0 + self.embedded_per_page.mean()) * self.object_size.mean()
    }

    /// lambda_p, pages started per second at the offered load.
    pub fn page_rate(&self) -> f64 {
        self.offered_load * self.link_rate.bps_f64() / (8.0 * self.mean_page_bytes())
    }

    /// lambda_s, sessions arriving per second.
    pub fn session_rate(&self) -> f64 {
        self.page_rate() / self.pages_per_session.mean()
    }
}

/// One object request: what a client asks a server for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// A number unique within the generator, in order of request time.
    pub id: u64,
    /// The session it belongs to.
    pub session: u64,
    /// The page it belongs to (unique within the generator).
    pub page: u64,
    /// Its place in the page: 0 for the primary object, 1.. for embedded ones.
    pub object: u32,
    /// The response size: the object's bytes the server sends.
    pub size_bytes: Bytes,
}

/// The log line of one request (section IV.B.4: "the size and response time of each HTTP
/// request were logged"): the simulator creates it when the request starts and completes it
/// when the last byte of the response arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ResponseRecord {
    /// The request's id.
    pub id: u64,
    /// The response size, in bytes.
    pub size_bytes: Bytes,
    /// When the request was issued.
    pub start: Instant,
    /// When the response was complete; `None` while it is not.
    pub completion: Option<Instant>,
}

impl ResponseRecord {
    /// The record of `request` issued at `start`.
    pub fn new(start: Instant, request: &Request) -> Self {
        ResponseRecord {
            id: request.id,
            size_bytes: request.size_bytes,
            start,
            completion: None,
        }
    }

    /// The response completed at `at`.
    pub fn complete(&mut self, at: Instant) {
        self.completion = Some(at);
    }

    /// completion - start, once complete.
    pub fn response_time(&self) -> Option<Duration> {
        self.completion.map(|c| c.saturating_since(self.start))
    }
}

/// What happens at a scheduled instant.
#[derive(Clone, Copy, Debug)]
enum Event {
    /// A new session arrives.
    SessionArrival,
    /// A session starts a page; `remaining` pages, this one included.
    Page {
        /// The session.
        session: u64,
        /// Pages left, this one included.
        remaining: u32,
    },
    /// An object is requested (its id is assigned when handed out).
    Object(Request),
}

/// A scheduled event, ordered by (time, insertion sequence).
#[derive(Clone, Copy, Debug)]
struct Scheduled {
    /// When.
    at: Instant,
    /// Insertion order, breaking ties.
    seq: u64,
    /// What.
    event: Event,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// The web workload generator: hands out object requests in time order.
#[derive(Clone, Debug)]
pub struct WebGenerator {
    /// The parameters.
    config: WebConfig,
    /// The random stream.
    rng: Rng,
    /// Pending events, earliest first.
    queue: BinaryHeap<Reverse<Scheduled>>,
    /// The next insertion sequence number.
    seq: u64,
    /// The next request id.
    next_request: u64,
    /// The next page id.
    next_page: u64,
    /// The next session id.
    next_session: u64,
}

impl WebGenerator {
    /// A generator starting at `now`, drawing from `rng`. The configuration is checked first.
    pub fn new(config: WebConfig, rng: Rng, now: Instant) -> Result<Self, ConfigError> {
        config.validate()?;
        let mut g = WebGenerator {
            config,
            rng,
            queue: BinaryHeap::new(),
            seq: 0,
            next_request: 0,
            next_page: 0,
            next_session: 0,
        };
        if g.config.warm_start {
            g.warm_start(now);
        }
        let first = now + g.session_gap();
        g.schedule(first, Event::SessionArrival);
        Ok(g)
    }

    /// The parameters.
    pub fn config(&self) -> &WebConfig {
        &self.config
    }

    /// The next request if it is due at or before `now`, with the instant it is issued; `None`
    /// if the next one comes later or the workload has ended. `Instant::MAX` pulls the next
    /// request whenever it comes.
    pub fn next_request(&mut self, now: Instant) -> Option<(Instant, Request)> {
        let at = self.poll_timeout()?;
        if at > now {
            return None;
        }
        let Reverse(s) = self.queue.pop()?;
        match s.event {
            Event::Object(mut r) => {
                r.id = self.next_request;
                self.next_request += 1;
                Some((s.at, r))
            }
            // poll_timeout left an object on top.
            _ => None,
        }
    }

    /// When the next request is issued; `None` once the workload has ended (only with a stop
    /// time). Sessions and pages due before it are set up on the way.
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        loop {
            let Reverse(top) = *self.queue.peek()?;
            if let Event::Object(_) = top.event {
                return Some(top.at);
            }
            self.queue.pop();
            if self.config.stop.is_some_and(|stop| top.at >= stop) {
                continue;
            }
            match top.event {
                Event::SessionArrival => {
                    let session = self.next_session;
                    self.next_session += 1;
                    let pages = self.config.pages_per_session.sample(&mut self.rng);
                    if pages > 0 {
                        self.start_page(top.at, session, pages);
                    }
                    let next = top.at + self.session_gap();
                    self.schedule(next, Event::SessionArrival);
                }
                Event::Page { session, remaining } => self.start_page(top.at, session, remaining),
                Event::Object(_) => {}
            }
        }
    }

    /// Requests handed out so far.
    pub fn requests_issued(&self) -> u64 {
        self.next_request
    }

    /// Sessions started so far (warm-start sessions included).
    pub fn sessions_started(&self) -> u64 {
        self.next_session
    }

    /// Starts a page of `session` at `at` with `remaining` pages left (this one included): its
    /// objects are scheduled, and the session's next page one think time on.
    fn start_page(&mut self, at: Instant, session: u64, remaining: u32) {
        let page = self.next_page;
        self.next_page += 1;
        let embedded = self.config.embedded_per_page.sample(&mut self.rng);
        let mut t = at;
        for object in 0..=embedded {
            if object > 0 {
                t += self.exponential(self.config.inter_object);
            }
            let size_bytes = self.config.object_size.sample(&mut self.rng);
            self.schedule(
                t,
                Event::Object(Request {
                    id: 0,
                    session,
                    page,
                    object,
                    size_bytes,
                }),
            );
        }
        if remaining > 1 {
            let next = at + self.exponential(self.config.think_time);
            self.schedule(
                next,
                Event::Page {
                    session,
                    remaining: remaining - 1,
                },
            );
        }
    }

    /// Puts sessions under way at `now` as in the stationary state (module documentation).
    fn warm_start(&mut self, now: Instant) {
        let mean = self.config.session_rate()
            * (self.config.pages_per_session.mean() - 1.0)
            * self.config.think_time.as_secs_f64();
        let sessions = self.poisson(mean);
        for _ in 0..sessions {
            let session = self.next_session;
            self.next_session += 1;
            let remaining = self.config.pages_per_session.sample(&mut self.rng);
            if remaining == 0 {
                continue;
            }
            let at = now + self.exponential(self.config.think_time);
            self.schedule(at, Event::Page { session, remaining });
        }
    }

    /// A Poisson count of mean `mean`: unit-rate arrivals in [0, mean], at most
    /// [`MAX_WARM_SESSIONS`].
    fn poisson(&mut self, mean: f64) -> u64 {
        let mut n = 0;
        let mut t = self.rng.exponential(1.0);
        while t <= mean && n < MAX_WARM_SESSIONS {
            n += 1;
            t += self.rng.exponential(1.0);
        }
        n
    }

    /// The time to the next session arrival.
    fn session_gap(&mut self) -> Duration {
        Duration::from_secs_f64(self.rng.exponential(1.0 / self.config.session_rate()))
    }

    /// An exponential span of mean `mean`.
    fn exponential(&mut self, mean: Duration) -> Duration {
        Duration::from_secs_f64(self.rng.exponential(mean.as_secs_f64()))
    }

    /// Schedules `event` at `at`.
    fn schedule(&mut self, at: Instant, event: Event) {
        let seq = self.seq;
        self.seq += 1;
        self.queue.push(Reverse(Scheduled { at, seq, event }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn generator(seed: u64) -> WebGenerator {
        WebGenerator::new(
            WebConfig::new(Rate::from_mbps(10), 0.3),
            Rng::new(seed),
            Instant::ZERO,
        )
        .expect("valid")
    }

    #[test]
    fn the_rates_are_solved_from_the_mean_page_size() {
        let c = WebConfig::new(Rate::from_mbps(10), 0.3);
        let size = c.object_size.mean();
        assert!((c.object_size.min_bytes - 2_000.0).abs() < 1e-9);
        assert!((size - 8_990.0).abs() < 10.0, "{size}");
        assert!((c.mean_page_bytes() - 3.0 * size).abs() < 1e-6);
        // 3 Mbit/s = 375 000 B/s of pages.
        assert!((c.page_rate() * c.mean_page_bytes() - 375_000.0).abs() < 1e-6);
        assert!((c.session_rate() * 5.0 - c.page_rate()).abs() < 1e-12);
        let unbounded = ParetoSize::with_untruncated_mean(1.2, 12_000.0, f64::INFINITY);
        assert!((unbounded.mean() - 12_000.0).abs() < 1e-9);
    }

    #[test]
    fn the_offered_load_is_within_5_percent_of_the_target_over_a_long_run() {
        let mut g = generator(1);
        let horizon = Instant::from_secs(20_000);
        let mut bytes: u128 = 0;
        while let Some((_, r)) = g.next_request(horizon) {
            bytes += u128::from(r.size_bytes);
        }
        let offered = bytes as f64 * 8.0 / 20_000.0;
        let target = 3_000_000.0;
        assert!(
            (offered - target).abs() / target < 0.05,
            "offered {offered} bit/s"
        );
    }

    #[test]
    fn object_sizes_have_the_bounded_pareto_mean_and_range() {
        let size = WebConfig::new(Rate::from_mbps(10), 0.3).object_size;
        let mut rng = Rng::new(5);
        let n = 400_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let s = size.sample(&mut rng);
            assert!((2_000..=2_000_000).contains(&s), "{s}");
            sum += s as f64;
        }
        let mean = sum / n as f64;
        assert!(
            (mean - size.mean()).abs() / size.mean() < 0.03,
            "mean {mean}"
        );
    }

    #[test]
    fn counts_have_their_means() {
        let mut rng = Rng::new(9);
        let n = 200_000;
        let g = Count::Geometric { min: 1, mean: 5.0 };
        let draws: Vec<u32> = (0..n).map(|_| g.sample(&mut rng)).collect();
        assert!(draws.iter().all(|&d| d >= 1));
        let mean = draws.iter().map(|&d| f64::from(d)).sum::<f64>() / n as f64;
        assert!((mean - 5.0).abs() < 0.05, "{mean}");
        assert_eq!(Count::Constant(3).sample(&mut rng), 3);
        assert_eq!(Count::Geometric { min: 2, mean: 2.0 }.sample(&mut rng), 2);
    }

    #[test]
    fn requests_come_in_time_order_with_unique_ids_and_primary_objects_first() {
        let mut g = generator(3);
        let mut last = Instant::ZERO;
        let mut seen_pages = std::collections::BTreeSet::new();
        for i in 0..10_000 {
            let (at, r) = g.next_request(Instant::MAX).expect("endless");
            assert!(at >= last);
            assert_eq!(r.id, i);
            if r.object == 0 {
                assert!(seen_pages.insert(r.page));
            } else {
                assert!(seen_pages.contains(&r.page));
            }
            last = at;
        }
        assert_eq!(g.requests_issued(), 10_000);
    }

    #[test]
    fn the_same_seed_gives_the_same_requests_and_another_seed_does_not() {
        let mut a = generator(42);
        let mut b = generator(42);
        let mut c = generator(43);
        let take = |g: &mut WebGenerator| -> Vec<(Instant, Request)> {
            (0..1_000)
                .map(|_| g.next_request(Instant::MAX).expect("endless"))
                .collect()
        };
        let ra = take(&mut a);
        assert_eq!(ra, take(&mut b));
        assert_ne!(ra, take(&mut c));
    }

    #[test]
    fn no_page_starts_after_the_stop_time() {
        let mut config = WebConfig::new(Rate::from_mbps(10), 0.3);
        config.stop = Some(Instant::from_secs(10));
        let mut g = WebGenerator::new(config, Rng::new(7), Instant::ZERO).expect("valid");
        let mut n = 0;
        while let Some((at, r)) = g.next_request(Instant::MAX) {
            if r.object == 0 {
                assert!(at < Instant::from_secs(10));
            }
            n += 1;
        }
        assert!(n > 100);
        assert_eq!(g.poll_timeout(), None);
    }

    #[test]
    fn a_record_gives_the_response_time_once_complete() {
        let r = Request {
            id: 7,
            session: 0,
            page: 0,
            object: 0,
            size_bytes: 5_000,
        };
        let mut rec = ResponseRecord::new(Instant::from_millis(100), &r);
        assert_eq!(rec.response_time(), None);
        rec.complete(Instant::from_millis(350));
        assert_eq!(rec.response_time(), Some(Duration::from_millis(250)));
        assert_eq!(rec.size_bytes, 5_000);
    }

    #[test]
    fn impossible_configurations_are_refused() {
        let good = WebConfig::new(Rate::from_mbps(10), 0.3);
        let mut c = good.clone();
        c.offered_load = 0.0;
        assert!(WebGenerator::new(c, Rng::new(1), Instant::ZERO).is_err());
        let mut c = good.clone();
        c.pages_per_session = Count::Constant(0);
        assert!(WebGenerator::new(c, Rng::new(1), Instant::ZERO).is_err());
        let mut c = good.clone();
        c.object_size.max_bytes = f64::INFINITY;
        c.object_size.shape = 1.0;
        assert!(WebGenerator::new(c, Rng::new(1), Instant::ZERO).is_err());
        let mut c = good;
        c.object_size.max_bytes = 10.0;
        assert!(WebGenerator::new(c, Rng::new(1), Instant::ZERO).is_err());
    }
}
