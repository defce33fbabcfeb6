//! What one direct server incarnation is, as a connection's handshake learns
//! it over the text protocol: its version, the mask its CAS ids cross the
//! API with, whether it has CAS ids at all, and a sample of its clock.
//!
//! The same scheme as `mcds-memcached` (whose types are private to it), and
//! the same marker: the key [`INCARNATION_KEY`](mcds_memcached::INCARNATION_KEY)
//! and the mask `stable_hash(marker)`. A text client and a meta client on
//! one server therefore hand out the same CAS ids.
//!
//! Plain data and the arithmetic on it, with no I/O: the handshake
//! ([`conn`](crate::conn)) produces an [`Incarnation`], the encoder
//! ([`wire`](crate::wire) via [`store`](crate::store)) masks ids and computes
//! exptimes with it, and the server keeps the best clock estimate any
//! handshake gave ([`server`](crate::server)).

use std::time::{Duration, Instant};

use mcds_core::{Clock, SystemClock, Ttl};
use mcds_memcached::Version;

/// One server incarnation: a random marker stored on the server (under
/// [`INCARNATION_KEY`](mcds_memcached::INCARNATION_KEY)) that dies with a
/// restart or a flush. Every CAS id crosses the API XOR-ed with a mask
/// derived from it, so an id from an earlier incarnation unmasks to a random
/// number that matches no item.
///
/// Equality compares the incarnation (version, mask, CAS), not the clock
/// sample each connection took.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Incarnation {
    pub(crate) version: Version,
    mask: u64,
    /// CAS ids are enabled (the server was not started with `-C`).
    pub(crate) cas: bool,
    /// The server's clock as a handshake read it (`None`: its `stats` had
    /// no `time`; relative TTLs are sent then).
    pub(crate) clock: Option<ServerClock>,
}

impl PartialEq for Incarnation {
    fn eq(&self, other: &Incarnation) -> bool {
        (self.version, self.mask, self.cas) == (other.version, other.mask, other.cas)
    }
}

impl Eq for Incarnation {}

impl Incarnation {
    /// The incarnation whose marker is `marker`: its CAS mask is the
    /// marker's stable hash (as in `mcds-memcached`).
    pub(crate) fn new(
        version: Version,
        marker: &[u8],
        cas: bool,
        clock: Option<ServerClock>,
    ) -> Incarnation {
        Incarnation {
            version,
            mask: mcds_core::stable_hash(marker),
            cas,
            clock,
        }
    }

    /// The exptime to send for `ttl`: absolute, on the server's own clock
    /// (see [`ServerClock`]), or as [`client_exptime`] when the clock is
    /// unknown.
    pub(crate) fn exptime(&self, ttl: Ttl) -> u32 {
        match self.clock {
            Some(clock) => clock.exptime_at(ttl, Instant::now()),
            None => client_exptime(ttl),
        }
    }

    /// The id a caller sees for the server's CAS id `id` (0 stays 0: no id).
    pub(crate) fn cas_out(&self, id: u64) -> u64 {
        if id == 0 { 0 } else { id ^ self.mask }
    }

    /// The server's CAS id for a caller's `id`. Never 0: an id that unmasks
    /// to 0 becomes one no item ever has.
    pub(crate) fn cas_in(&self, id: u64) -> u64 {
        match id ^ self.mask {
            0 => u64::MAX,
            server => server,
        }
    }

    /// A caller's id that matches no item of this incarnation (it unmasks
    /// to `u64::MAX`, which memcached's CAS counter never reaches): what a
    /// write answers when its read-back found another writer's item.
    pub(crate) fn never_matching(&self) -> u64 {
        match u64::MAX ^ self.mask {
            // mask == u64::MAX: 0 would read as "no id"; u64::MAX - 1 is
            // as far out of reach.
            0 => (u64::MAX - 1) ^ self.mask,
            id => id,
        }
    }
}

/// The exptime for `ttl` without a sample of the server's clock (behind a
/// proxy): relative up to 30 days, beyond that an absolute Unix time on this
/// client's clock.
pub(crate) fn client_exptime(ttl: Ttl) -> u32 {
    ttl.to_memcached_exptime(SystemClock.now_secs())
}

/// The server's clock, read once per connection (`stats` → `time`), so
/// that every TTL can be sent as an absolute time on that clock. See
/// `mcds-memcached`'s `ServerClock` for why (a paused server computes
/// relative TTLs from a stale clock) and for the bounds: an item lives
/// between TTL − 1 and TTL + 1 seconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerClock {
    /// The server's `time` stat, in Unix seconds.
    pub(crate) secs: u64,
    /// When the request that read it was sent.
    pub(crate) sent: Instant,
}

/// A connection whose clock sample is older than this is not reused.
pub(crate) const CLOCK_MAX_AGE: Duration = Duration::from_secs(600);

impl ServerClock {
    /// The most the server's clock can read at `now`.
    pub(crate) fn upper_at(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.sent);
        let ticks = elapsed.as_secs() + u64::from(elapsed.subsec_nanos() > 0);
        self.secs.saturating_add(ticks)
    }

    /// The absolute exptime for `ttl` if sent at `now` (0 for never).
    pub(crate) fn exptime_at(&self, ttl: Ttl, now: Instant) -> u32 {
        let Some(n) = ttl.as_secs() else {
            return 0;
        };
        let at = self.upper_at(now).saturating_add(u64::from(n));
        // memcached parses the token as a signed 32-bit number.
        u32::try_from(at.min(i32::MAX as u64)).unwrap_or(i32::MAX as u32)
    }

    /// Whether the sample is older than [`CLOCK_MAX_AGE`].
    pub(crate) fn is_old(&self) -> bool {
        self.sent.elapsed() > CLOCK_MAX_AGE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masking_round_trips_and_never_matching_never_matches() {
        let i = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        for id in [1u64, 2, 12345, u64::MAX - 1] {
            assert_eq!(i.cas_in(i.cas_out(id)), id);
        }
        assert_eq!(i.cas_out(0), 0);
        assert_eq!(i.cas_in(i.never_matching()), u64::MAX);
        // Another incarnation reads the same caller id as another server id.
        let j = Incarnation::new(Version(1, 6, 18), b"other", true, None);
        assert_ne!(j.cas_in(i.cas_out(7)), 7);
    }

    #[test]
    fn exptimes_are_absolute_on_the_servers_clock() {
        let t0 = Instant::now();
        let clock = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        assert_eq!(clock.exptime_at(Ttl::Never, t0), 0);
        assert_eq!(clock.exptime_at(Ttl::secs(5), t0), 1_800_000_005);
        let later = t0 + Duration::from_millis(2_001);
        assert_eq!(clock.exptime_at(Ttl::secs(5), later), 1_800_000_008);
        assert_eq!(clock.exptime_at(Ttl::secs(u32::MAX), t0), i32::MAX as u32);
        assert_eq!(client_exptime(Ttl::secs(60)), 60);
        assert!(client_exptime(Ttl::secs(40 * 86_400)) > 1_700_000_000);
    }
}
