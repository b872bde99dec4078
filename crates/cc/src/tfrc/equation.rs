//! The TCP throughput equation of RFC 5348 section 3.1 and its inverse (section 6.3.1).
//!
//! ```text
//!                               s
//! X = ----------------------------------------------------------
//!     R*sqrt(2*b*p/3) + t_RTO * (3*sqrt(3*b*p/8)) * p * (1 + 32*p^2)
//! ```
//!
//! with X the transmit rate in bytes/second, s the segment size in bytes, R the round-trip time
//! in seconds, p the loss event rate (0 < p <= 1), b the packets acknowledged by one TCP ACK and
//! t_RTO the TCP retransmission timeout in seconds. RFC 5348 section 3.1 sets b = 1 and
//! t_RTO = 4R ([`throughput_rfc`]). Plain `f64` in and out: these are pure functions, the
//! callers convert from [`Duration`](crate::time::Duration) and [`Rate`](crate::units::Rate).

/// The smallest loss event rate [`loss_event_rate_for`] returns (one loss in 10^10 packets).
pub const P_MIN: f64 = 1e-10;

/// The relative tolerance of [`loss_event_rate_for`]: the returned p lies within this fraction
/// of the exact solution.
pub const INVERSE_TOLERANCE: f64 = 1e-9;

/// The RFC 5348 section 3.1 choice of t_RTO as a multiple of R: t_RTO = 4R.
pub const T_RTO_FACTOR: f64 = 4.0;

/// The transmit rate X in bytes/second for segment size `s` (bytes), round-trip time `r`
/// (seconds), loss event rate `p`, `b` packets per ACK and retransmission timeout `t_rto`
/// (seconds) (RFC 5348 section 3.1).
///
/// Without loss the equation does not apply (RFC 5348 section 4.3 uses it only when p > 0):
/// `p <= 0` (or NaN) gives `f64::INFINITY`. A `p` above 1 is taken as 1. Negative or NaN `r`,
/// `b` and `t_rto` are taken as 0; a zero denominator gives `f64::INFINITY`. A non-positive
/// `s` gives 0. The result is never NaN.
pub fn throughput(s: f64, r: f64, p: f64, b: f64, t_rto: f64) -> f64 {
    if p.is_nan() || p <= 0.0 {
        return f64::INFINITY;
    }
    if s.is_nan() || s <= 0.0 {
        return 0.0;
    }
    let p = p.min(1.0);
    // f64::max ignores a NaN operand, so each of these is a number >= 0.
    let r = r.max(0.0);
    let b = b.max(0.0);
    let t_rto = t_rto.max(0.0);
    let first = r * (2.0 * b * p / 3.0).sqrt();
    let second = t_rto * (3.0 * (3.0 * b * p / 8.0).sqrt()) * p * (1.0 + 32.0 * p * p);
    let denominator = first + second;
    if denominator > 0.0 {
        s / denominator
    } else {
        f64::INFINITY
    }
}

/// [`throughput`] with the parameters RFC 5348 section 3.1 recommends: b = 1, t_RTO = 4R.
pub fn throughput_rfc(s: f64, r: f64, p: f64) -> f64 {
    throughput(s, r, p, 1.0, T_RTO_FACTOR * r)
}

/// The loss event rate p for which [`throughput`] gives `x` bytes/second, for segment size `s`
/// (bytes), round-trip time `r` (seconds), `b` packets per ACK and timeout `t_rto` (seconds).
///
/// This is the inverse the receiver uses to turn a target rate into a synthetic first loss
/// interval of 1/p packets (RFC 5348 section 6.3.1, which asks for a p whose rate is within 5%
/// of the target). The equation falls strictly as p grows, so bisection applies; it runs on
/// log(p) between [`P_MIN`] and 1 until the bracket is narrower than [`INVERSE_TOLERANCE`]
/// (relative), which takes about 35 steps.
///
/// When no p in [`P_MIN`, 1] gives `x`, the nearest bound is returned: [`P_MIN`] for a rate
/// above `throughput(.., P_MIN, ..)`, 1 for a rate at or below `throughput(.., 1, ..)`
/// (including `x <= 0` or NaN).
pub fn loss_event_rate_for(x: f64, s: f64, r: f64, b: f64, t_rto: f64) -> f64 {
    let rate = |p: f64| throughput(s, r, p, b, t_rto);
    if x.is_nan() || x <= 0.0 || rate(1.0) >= x {
        return 1.0;
    }
    if rate(P_MIN) <= x {
        return P_MIN;
    }
    // Invariant: rate(lo) > x > rate(hi).
    let (mut lo, mut hi) = (P_MIN, 1.0_f64);
    // 200 steps bound the loop whatever happens to the floats; 35 suffice.
    for _ in 0..200 {
        if hi <= lo * (1.0 + INVERSE_TOLERANCE) {
            break;
        }
        let mid = (lo * hi).sqrt();
        if rate(mid) > x {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo * hi).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_equation_matches_a_hand_computed_value() {
        // s = 1000 B, R = 0.1 s, p = 0.01, b = 1, t_RTO = 0.4 s:
        //   R * sqrt(2bp/3)                   = 0.1 * sqrt(0.02/3)        = 0.008164965809277260
        //   t_RTO * 3 sqrt(3bp/8) p (1+32p^2) = 0.4 * 3 * sqrt(0.00375) * 0.01 * 1.0032
        //                                     = 0.000737198432988025
        //   X = 1000 / 0.008902164242265286   = 112332.234362992994 bytes/s
        let x = throughput(1000.0, 0.1, 0.01, 1.0, 0.4);
        let expected = 112_332.234_362_993;
        assert!(((x - expected) / expected).abs() < 1e-9, "X = {x}");
        assert_eq!(throughput_rfc(1000.0, 0.1, 0.01), x);
    }

    #[test]
    fn the_rate_falls_as_the_loss_event_rate_rises() {
        let mut previous = f64::INFINITY;
        for i in 1..=1000 {
            let p = i as f64 / 1000.0;
            let x = throughput_rfc(1460.0, 0.05, p);
            assert!(x < previous, "not decreasing at p = {p}");
            previous = x;
        }
    }

    #[test]
    fn no_loss_gives_an_infinite_rate_and_never_nan() {
        assert_eq!(throughput_rfc(1000.0, 0.1, 0.0), f64::INFINITY);
        assert_eq!(throughput_rfc(1000.0, 0.1, -0.5), f64::INFINITY);
        assert_eq!(throughput_rfc(1000.0, 0.1, f64::NAN), f64::INFINITY);
        assert_eq!(throughput(1000.0, 0.0, 0.01, 1.0, 0.0), f64::INFINITY);
        assert_eq!(throughput(0.0, 0.1, 0.01, 1.0, 0.4), 0.0);
        assert!(!throughput(1000.0, f64::NAN, 0.01, f64::NAN, f64::NAN).is_nan());
        // p above 1 is taken as 1.
        assert_eq!(
            throughput_rfc(1000.0, 0.1, 3.0),
            throughput_rfc(1000.0, 0.1, 1.0)
        );
    }

    #[test]
    fn the_inverse_recovers_p_within_one_part_in_a_million() {
        for &p in &[1e-6, 1e-4, 0.001, 0.01, 0.05, 0.1, 0.3, 0.5, 0.9] {
            for &(s, r) in &[(1000.0, 0.1), (1460.0, 0.02), (200.0, 0.5)] {
                let x = throughput(s, r, p, 1.0, 4.0 * r);
                let found = loss_event_rate_for(x, s, r, 1.0, 4.0 * r);
                assert!(((found - p) / p).abs() < 1e-6, "p = {p}, found {found}");
                assert!((found - p).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn the_inverse_clamps_to_its_bounds() {
        assert_eq!(loss_event_rate_for(0.0, 1000.0, 0.1, 1.0, 0.4), 1.0);
        assert_eq!(loss_event_rate_for(f64::NAN, 1000.0, 0.1, 1.0, 0.4), 1.0);
        assert_eq!(loss_event_rate_for(1.0, 1000.0, 0.1, 1.0, 0.4), 1.0);
        assert_eq!(loss_event_rate_for(1e30, 1000.0, 0.1, 1.0, 0.4), P_MIN);
    }
}
