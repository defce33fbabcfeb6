//! What one server incarnation is, as a connection's handshake learns it:
//! its [`Version`] (which commands it has), the mask its CAS ids cross the
//! API with, whether it has CAS ids at all, and a sample of its clock.
//!
//! Plain data and the arithmetic on it, with no I/O: each backend's
//! handshake produces an [`Incarnation`] and its codec encodes ops and
//! decodes replies for one, while [`Learned`](crate::Learned) keeps the
//! latest one and the best clock estimate any handshake gave. Both
//! backends read the same marker and hand out the same CAS ids and
//! exptimes: one scheme, written once.

use std::time::{Duration, Instant};

use mcds_core::{Clock, SystemClock, Ttl};

/// A memcached version, read once per connection with `version`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `md <key> C<cas>` deletes only on a CAS match (broken before 1.6.13).
    pub fn has_delete_cas(self) -> bool {
        self >= Version(1, 6, 13)
    }

    /// `ms <key> <len> MA N<ttl>` creates a missing key (1.6.20 and later;
    /// 1.6.18 answers `NS`).
    pub fn has_append_vivify(self) -> bool {
        self >= Version(1, 6, 20)
    }

    /// Parse `VERSION 1.6.18`. Anything unparsable is 0.0.0, which the
    /// backend refuses (it needs the meta protocol of 1.6.0 and later).
    pub fn parse(line: &str) -> Version {
        let text = line.trim().strip_prefix("VERSION").unwrap_or("").trim();
        let mut parts = text
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse::<u32>().unwrap_or(0));
        Version(
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        )
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The key under which every memcached server keeps the random marker of its
/// current incarnation: every CAS id is masked with it, so an id from before
/// a restart matches nothing after it (see the [crate docs](crate)). It
/// never expires; the first client that connects after a restart or flush
/// creates it.
pub const INCARNATION_KEY: &str = "__mcds_incarnation";

/// What one server incarnation is: its version, whether it has CAS ids, and
/// the mask that ties every CAS id handed out to this incarnation.
///
/// memcached numbers CAS ids from 1 again after a restart, so an id read
/// before a restart can match a *different* item after it: a lock released
/// or extended by its old CAS would act on the next holder's lock. Every
/// connection therefore reads a random marker stored on the server
/// ([`INCARNATION_KEY`], in the same round trip as the `version`
/// handshake) and every CAS id crosses the API XOR-ed with a 64-bit mask
/// derived from it. An id from an earlier incarnation (whose marker died
/// with it) unmasks to a random number, which matches no item: the stale
/// operation answers EXISTS/NOT_FOUND and touches nothing. A server
/// started with `-C` answers every CAS id as 0; such a server is marked as
/// having no CAS, and operations that need one are refused.
///
/// Equality compares the incarnation (version, mask, CAS), not the clock
/// sample each connection took.
#[derive(Clone, Copy, Debug)]
pub struct Incarnation {
    /// The server's version.
    pub version: Version,
    mask: u64,
    /// CAS ids are enabled (the server was not started with `-C`).
    pub cas: bool,
    /// The server's clock as this connection's handshake read it (`None`:
    /// its `stats` had no `time`; relative TTLs are sent then).
    pub clock: Option<ServerClock>,
    /// No marker could be stored (the server is full and may not evict,
    /// `-M`): the mask is this connection's own, so CAS ids read on it
    /// match only on it. The server's sessions then all use one connection
    /// (see `Server::lane`).
    pub markerless: bool,
}

impl PartialEq for Incarnation {
    #[inline]
    fn eq(&self, other: &Incarnation) -> bool {
        (self.version, self.mask, self.cas) == (other.version, other.mask, other.cas)
    }
}

impl Eq for Incarnation {}

impl Incarnation {
    /// The incarnation whose marker (the value under [`INCARNATION_KEY`])
    /// is `marker`: its CAS mask is the marker's stable hash.
    pub fn new(
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
            markerless: false,
        }
    }

    /// This incarnation, marked as one whose marker could not be stored
    /// (its mask is one connection's own: see [`Incarnation::markerless`]).
    pub fn without_marker(self) -> Incarnation {
        Incarnation {
            markerless: true,
            ..self
        }
    }

    /// The exptime to send for `ttl`: absolute, on the server's own clock
    /// (see [`ServerClock`]), or relative when the clock is unknown.
    #[inline]
    pub fn exptime(&self, ttl: Ttl) -> u32 {
        // No clock read for an item that never expires (every counter
        // without a TTL): a pipeline encodes one per op.
        if ttl.as_secs().is_none() {
            return 0;
        }
        match self.clock {
            Some(clock) => clock.exptime_at(ttl, Instant::now()),
            None => ttl.to_memcached_exptime(SystemClock.now_secs()),
        }
    }

    /// The id a caller sees for the server's CAS id `id` (0 stays 0: no id).
    #[inline]
    pub fn cas_out(&self, id: u64) -> u64 {
        if id == 0 { 0 } else { id ^ self.mask }
    }

    /// The server's CAS id for a caller's `id`. Never 0, which `md`/`ms`
    /// would read as "no CAS": an id that unmasks to 0 becomes one no item
    /// ever has.
    #[inline]
    pub fn cas_in(&self, id: u64) -> u64 {
        match id ^ self.mask {
            0 => u64::MAX,
            server => server,
        }
    }

    /// A caller's id that matches no item of this incarnation (it unmasks
    /// to `u64::MAX`, which memcached's CAS counter never reaches): what a
    /// write can answer when it cannot learn its item's id.
    pub fn never_matching(&self) -> u64 {
        match u64::MAX ^ self.mask {
            // mask == u64::MAX: 0 would read as "no id"; u64::MAX - 1 is
            // as far out of reach.
            0 => (u64::MAX - 1) ^ self.mask,
            id => id,
        }
    }
}

/// The server's clock, read once per connection, so that every TTL can be
/// sent as an absolute time on that clock.
///
/// memcached turns a relative TTL into an expiry time with its own
/// seconds counter, which one thread updates once a second. A server that
/// was paused (SIGSTOP, a frozen VM, a swap storm) applies the writes
/// queued during the pause as soon as it resumes, before that thread has
/// caught up: their expiry is computed from the clock of before the pause,
/// so an item written with a TTL shorter than the pause expires the moment
/// the clock moves. A lock granted that way is free again at once, and a
/// counter's increments vanish. An absolute exptime does not depend on the
/// counter's value when the write is applied: memcached subtracts its start
/// time from it, and the item lives until the counter really gets there.
///
/// The absolute time is taken on the server's clock, not ours, so client
/// and server clocks need not agree: the handshake reads the server's
/// `time` (its start time plus its seconds counter, the base absolute
/// exptimes are measured against) and the monotonic instant the request was
/// sent. Later, the server's clock is at most `secs + ceil(elapsed)`, and
/// an item sent with `T<that + ttl>` lives at least as long as one sent
/// with a relative `T<ttl>` would on a server that was never paused (and up
/// to about two seconds longer).
///
/// A handshake answered just after a pause reads the clock of before the
/// pause, which would make items expire early. Such a sample is read again
/// when its round trip was slow, and every operation uses the highest
/// estimate any handshake with the same incarnation of the server gave
/// (`Server::learn_clock`), so one
/// stale sample lowers nothing; a new incarnation starts over
/// (`Server::adopt`). What is left: a
/// client whose *first* connection to an incarnation is answered by a
/// server resuming from a pause.
/// A connection whose sample is older than [`CLOCK_MAX_AGE`] is replaced,
/// so fresh samples keep coming (see `Server::learn_clock` for clock-rate
/// drift).
#[derive(Clone, Copy, Debug)]
pub struct ServerClock {
    /// The server's `time` stat, in Unix seconds.
    pub secs: u64,
    /// When the request that read it was sent (the server read its clock
    /// after that).
    pub sent: Instant,
}

/// A connection whose clock sample is older than this is not reused.
pub const CLOCK_MAX_AGE: Duration = Duration::from_secs(600);

impl ServerClock {
    /// The most the server's clock can read at `now`: it read `secs` after
    /// `sent`, and it has ticked at most once per second since.
    pub fn upper_at(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.sent);
        let ticks = elapsed.as_secs() + u64::from(elapsed.subsec_nanos() > 0);
        self.secs.saturating_add(ticks)
    }

    /// The absolute exptime for `ttl` if sent at `now` (0 for never).
    #[inline]
    pub fn exptime_at(&self, ttl: Ttl, now: Instant) -> u32 {
        let Some(n) = ttl.as_secs() else {
            return 0;
        };
        let at = self.upper_at(now).saturating_add(u64::from(n));
        // memcached parses the token as a signed 32-bit number.
        u32::try_from(at.min(i32::MAX as u64)).unwrap_or(i32::MAX as u32)
    }

    /// Whether the sample is older than [`CLOCK_MAX_AGE`].
    pub fn is_old(&self) -> bool {
        self.is_old_at(Instant::now())
    }

    /// [`is_old`](Self::is_old) at `now` (for a caller that read the clock
    /// already).
    pub fn is_old_at(&self, now: Instant) -> bool {
        now.saturating_duration_since(self.sent) > CLOCK_MAX_AGE
    }

    /// The instant after which the sample [`is_old`](Self::is_old) (for
    /// a caller that compares many times).
    pub fn old_after(&self) -> Instant {
        self.sent + CLOCK_MAX_AGE
    }
}

/// The exptime for `ttl` without a sample of the server's clock (a store
/// behind a proxy, which cannot read one server's clock): relative up to
/// 30 days, beyond that an absolute Unix time on this client's clock.
pub fn client_exptime(ttl: Ttl) -> u32 {
    ttl.to_memcached_exptime(SystemClock.now_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn an_exptime_is_the_servers_clock_rounded_up_plus_the_ttl() {
        let t0 = Instant::now();
        let clock = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        assert_eq!(clock.exptime_at(Ttl::Never, t0), 0);
        assert_eq!(clock.exptime_at(Ttl::secs(5), t0), 1_800_000_005);
        // Any part of a second may hold a tick of the server's clock.
        let later = t0 + Duration::from_millis(2_001);
        assert_eq!(clock.exptime_at(Ttl::secs(5), later), 1_800_000_008);
        assert_eq!(clock.exptime_at(Ttl::secs(5), t0 + 2 * SEC), 1_800_000_007);
        // 40 days stays 40 days, and the i32 limit of the token holds.
        assert_eq!(
            clock.exptime_at(Ttl::secs(40 * 86_400), t0),
            1_800_000_000 + 40 * 86_400
        );
        assert_eq!(clock.exptime_at(Ttl::secs(u32::MAX), t0), i32::MAX as u32);
    }

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
    fn a_client_exptime_is_relative_up_to_30_days() {
        assert_eq!(client_exptime(Ttl::secs(60)), 60);
        assert!(client_exptime(Ttl::secs(40 * 86_400)) > 1_700_000_000);
    }

    #[test]
    fn a_sample_is_old_exactly_after_old_after() {
        let t0 = Instant::now();
        let clock = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        let nano = Duration::from_nanos(1);
        for at in [t0, t0 + CLOCK_MAX_AGE - nano, t0 + CLOCK_MAX_AGE] {
            assert!(!clock.is_old_at(at) && at <= clock.old_after());
        }
        let at = t0 + CLOCK_MAX_AGE + nano;
        assert!(clock.is_old_at(at) && at > clock.old_after());
    }
}
