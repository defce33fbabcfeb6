//! [`RateLimiter`]: requests per window, fixed or sliding.

use std::time::Duration;

use mcds_core::{Access, Error, Io, Key, Op, Result, Scope, Ttl, blocking_and_async};

use crate::read_counter;

/// Which window a [`RateLimiter`] counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Windows aligned to Unix time; the count resets at each boundary. A
    /// burst of up to 2×limit can straddle a boundary.
    Fixed,
    /// The fixed-window count plus the previous window's count weighted by
    /// how much of it still overlaps the last `window` seconds (the Redis best-practices article's
    /// sliding approximation). Smooths the boundary burst.
    Sliding,
}

/// The answer of [`RateLimiter::check`] and [`RateLimiter::peek`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the request is allowed.
    pub allowed: bool,
    /// How many more requests would be allowed now.
    pub remaining: u64,
    /// When denied, how long until a request would be allowed (zero when
    /// allowed).
    pub retry_after: Duration,
    /// The count the decision was based on (for sliding windows the
    /// weighted estimate, rounded up).
    pub count: u64,
}

/// A distributed rate limiter: at most `limit` requests per `window`
/// (the Redis best-practices article).
///
/// The count of window number `w = now / window` lives under
/// `<prefix>rate:<name>:<w>`, created by `incr_or_init` with a TTL of two
/// windows (the sliding mode reads the previous one); a key is never reused,
/// so expiry timing cannot mix windows.
///
/// * [`check`](Self::check) counts the request and decides: one round trip
///   (sliding: the increment of the current window and the read of the
///   previous one go in one pipelined batch; on a pool whose two window keys
///   live on different servers, both servers are asked at once). Denied requests are counted too, so a client that keeps
///   hammering stays limited.
/// * [`peek`](Self::peek) decides without counting: one round trip.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use mcds_core::MemoryStore;
/// use mcds_counter::{RateLimiter, Window};
///
/// let limiter = RateLimiter::new(Arc::new(MemoryStore::new()), "api:user7", 2, Duration::from_secs(60), Window::Fixed)?;
/// assert!(limiter.check()?.allowed);
/// assert_eq!(limiter.check()?.remaining, 0);
/// let denied = limiter.check()?;
/// assert!(!denied.allowed && denied.retry_after > Duration::ZERO);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses a window's count: that window admits
/// up to its limit again (at most one more limit's worth per loss). No
/// check can tell a lost count from a window with no requests yet:
/// [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | name: 224 bytes, less the scope's prefix (the key adds `rate:`, `:` and a window number of up to 20 digits to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`](mcds_core::Error::InvalidKey) from [`new`](RateLimiter::new) | no |
/// | limit: at least 1 | [`Error::InvalidArgument`] from [`new`](RateLimiter::new) | no |
/// | limit: up to `u64::MAX` | — (decisions weigh counts as `f64`: exact below 2^53) | — |
/// | window: whole seconds, at least 1 | [`Error::InvalidArgument`] from [`new`](RateLimiter::new) | no |
/// | window: at most [`MAX_PERIOD_SECS`](mcds_core::MAX_PERIOD_SECS) (100 years) | [`Error::InvalidArgument`](mcds_core::Error::InvalidArgument) from `new` | nothing |
/// | TTL (two windows): up to `u32::MAX` seconds | saturates there; beyond 30 days it is sent as an absolute time, which memcached caps at January 2038 | — |
/// | a window's count: up to `u64::MAX` | wraps modulo 2^64, as memcached's `incr` does: no error | yes, the wrapped value |
#[derive(Clone, Debug)]
pub struct RateLimiter {
    scope: Scope,
    name: String,
    limit: u64,
    window: u64,
    mode: Window,
}

impl RateLimiter {
    /// At most `limit` requests per `window` (whole seconds, at least 1), in
    /// `scope` (a store, or a [`Scope`] with a key prefix and a clock).
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        limit: u64,
        window: Duration,
        mode: Window,
    ) -> Result<RateLimiter> {
        if limit == 0 {
            return Err(Error::InvalidArgument(
                "a rate limit of 0 allows nothing; use at least 1".into(),
            ));
        }
        let limiter = RateLimiter {
            scope: scope.into(),
            name: name.to_string(),
            limit,
            window: mcds_core::whole_secs("the rate limiter window", window)?,
            mode,
        };
        // Validate the longest key now rather than at the first check.
        limiter.key(u64::MAX)?;
        Ok(limiter)
    }

    fn key(&self, window_no: u64) -> Result<Key> {
        self.scope.key("rate", &self.name, window_no)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(self.scope.store().as_ref(), io)
    }

    /// Count this request and decide whether it is allowed.
    #[blocking_and_async(pub)]
    async fn check_io(&self, io: Io) -> Result<Decision> {
        let access = self.access(io);
        let now_ms = self.scope.clock().now_ms();
        let w = now_ms / 1000 / self.window;
        let current_key = self.key(w)?;
        let count = Op::IncrOrInit {
            key: &current_key,
            delta: 1,
            initial: 1,
            ttl: Ttl::from(Duration::from_secs(2 * self.window)),
        };
        let (current, previous) = match self.mode {
            Window::Fixed => (access.execute(&count).await?.value()?, 0),
            Window::Sliding => {
                // Both in one pipelined batch: one round trip.
                let previous_key = self.key(w.wrapping_sub(1))?;
                let [current, previous] =
                    access.run_pipeline([count, Op::Get(&previous_key)]).await?;
                let current = current?.value()?;
                let previous = read_counter(previous?.item()?, &previous_key)?;
                (current, previous)
            }
        };
        Ok(self.decide(now_ms, previous, current, 0))
    }

    /// Decide whether a request would be allowed now, without counting one.
    /// One round trip.
    #[blocking_and_async(pub)]
    async fn peek_io(&self, io: Io) -> Result<Decision> {
        let access = self.access(io);
        let now_ms = self.scope.clock().now_ms();
        let w = now_ms / 1000 / self.window;
        let current_key = self.key(w)?;
        let (previous, current) = match self.mode {
            Window::Fixed => (
                0,
                read_counter(access.get(&current_key).await?, &current_key)?,
            ),
            Window::Sliding => {
                let previous_key = self.key(w.wrapping_sub(1))?;
                let keys = [previous_key, current_key];
                let items = access.get_multi(&keys).await?;
                let [previous_key, current_key] = &keys;
                let mut items = items.into_iter();
                (
                    read_counter(items.next().flatten(), previous_key)?,
                    read_counter(items.next().flatten(), current_key)?,
                )
            }
        };
        Ok(self.decide(now_ms, previous, current, 1))
    }

    /// The decision for `current` requests in this window (plus `pending`
    /// not yet counted) and `previous` in the one before.
    fn decide(&self, now_ms: u64, previous: u64, current: u64, pending: u64) -> Decision {
        let window_ms = self.window * 1000;
        let elapsed_ms = now_ms % window_ms;
        let left_ms = window_ms - elapsed_ms;
        let limit = self.limit as f64;
        let weight = left_ms as f64 / window_ms as f64;
        let counted = previous as f64 * weight + current as f64;
        let estimate = counted + pending as f64;
        let allowed = estimate <= limit;
        let retry_after = if allowed {
            Duration::ZERO
        } else {
            Duration::from_millis(self.wait_ms(elapsed_ms, previous, current + pending))
        };
        Decision {
            allowed,
            remaining: (limit - counted).max(0.0).floor() as u64,
            retry_after,
            count: counted.ceil() as u64,
        }
    }

    /// How long until one more request fits, assuming no other requests.
    fn wait_ms(&self, elapsed_ms: u64, previous: u64, current: u64) -> u64 {
        let window_ms = (self.window * 1000) as f64;
        let limit = self.limit as f64;
        let left = window_ms - elapsed_ms as f64;
        if self.mode == Window::Fixed || current as f64 > limit {
            if self.mode == Window::Fixed {
                return left.ceil() as u64;
            }
            // Wait for the next window, where this window's count weighs
            // (1 - x/W): need current·(1 - x/W) + 1 <= limit.
            let x = window_ms * (1.0 - (limit - 1.0) / current as f64);
            return (left + x.max(0.0)).ceil() as u64;
        }
        // In this window: previous·(W - e - d)/W + current <= limit.
        let room = limit - current as f64;
        let d = window_ms - elapsed_ms as f64 - room * window_ms / previous.max(1) as f64;
        d.clamp(0.0, left).ceil() as u64
    }
}
