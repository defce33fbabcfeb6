//! Jittered exponential backoff, shared by CAS loops, lock acquisition and
//! reconnects.

use std::time::Duration;

use rand::RngExt;

/// Jittered exponential backoff ("full jitter"): each delay is drawn
/// uniformly from `[0, min(max, base * 2^attempt)]`, so contending clients
/// spread out instead of retrying in lockstep.
///
/// ```
/// use std::time::Duration;
/// use mcds_core::Backoff;
///
/// let mut b = Backoff::new(Duration::from_millis(1), Duration::from_millis(50));
/// for _ in 0..10 {
///     assert!(b.next_delay() <= Duration::from_millis(50));
/// }
/// ```
#[derive(Clone, Debug)]
pub struct Backoff {
    base: Duration,
    max: Duration,
    attempt: u32,
}

impl Default for Backoff {
    /// 1 ms doubling up to 100 ms.
    fn default() -> Backoff {
        Backoff::new(Duration::from_millis(1), Duration::from_millis(100))
    }
}

impl Backoff {
    /// Start at `base`, doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Backoff {
        Backoff {
            base,
            max: max.max(base),
            attempt: 0,
        }
    }

    /// The upper bound of the next delay, without jitter.
    pub fn ceiling(&self) -> Duration {
        let factor = 1u32 << self.attempt.min(20);
        self.base.saturating_mul(factor).min(self.max)
    }

    /// The next delay: uniform in `[0, ceiling]`, then the ceiling doubles.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.ceiling();
        self.attempt = self.attempt.saturating_add(1);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(rand::rng().random_range(0..=nanos))
    }

    /// Sleep for [`next_delay`](Self::next_delay).
    pub fn sleep(&mut self) {
        std::thread::sleep(self.next_delay());
    }

    /// Start over from `base`.
    pub fn reset(&mut self) {
        self.attempt = 0;
    }
}
