//! What a client has learned of one server from its connections'
//! handshakes: the latest [`Incarnation`], and the best estimate of the
//! server's clock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use parking_lot::Mutex;

use crate::incarnation::{Incarnation, ServerClock, Version};

/// One server's latest incarnation and clock estimate (see the
/// [module docs](self)).
#[derive(Default)]
pub struct Learned {
    /// What the most recently dialed connection found.
    incarnation: Mutex<Option<Incarnation>>,
    /// That incarnation's [`markerless`](Incarnation::markerless), kept
    /// where a hot path reads it without taking the lock above.
    markerless: AtomicBool,
    /// The highest estimate of the server's clock any handshake gave (see
    /// [`Learned::learn_clock`]).
    clock: Mutex<Option<ServerClock>>,
    /// Counts the changes of `incarnation` and `clock` (every handshake
    /// makes one). A connection can keep copies of both with the count
    /// they were read at, and read them again only when the count moved:
    /// the hot path reads one atomic instead of taking two locks every
    /// caller shares ([`Learned::latest`]).
    epoch: AtomicU64,
}

impl Learned {
    /// Keep the clock sample that puts the server's clock highest (within
    /// one incarnation: [`adopt`](Learned::adopt) starts over on a new one).
    ///
    /// Each sample gives an upper bound of the server's clock from then on,
    /// if the server's clock was current when it was read. A handshake
    /// answered by a server that had just resumed from a pause reads the
    /// clock of before the pause: its bound is too low, and an exptime
    /// built on it would expire early. Keeping the highest bound of every
    /// handshake (a too-high bound only makes items live a little longer)
    /// means one such sample lowers nothing, as long as one earlier
    /// handshake met a running server. A lower sample never replaces a
    /// higher one, however old: a drift of the two machines' clock rates
    /// that makes the kept estimate low is corrected by the next fresh
    /// sample (connections are replaced every
    /// [`CLOCK_MAX_AGE`](crate::incarnation::CLOCK_MAX_AGE)), and one
    /// that makes it high only lengthens items.
    pub fn learn_clock(&self, sample: Option<ServerClock>) {
        let Some(sample) = sample else {
            return;
        };
        let mut clock = self.clock.lock();
        let now = Instant::now();
        let keep = clock.is_some_and(|c| c.upper_at(now) >= sample.upper_at(now));
        if !keep {
            *clock = Some(sample);
            self.epoch.fetch_add(1, Ordering::Release);
        }
    }

    /// Record what a new connection's handshake read: its incarnation and
    /// its clock sample. Whether the incarnation changed.
    ///
    /// Within one incarnation the clock estimate only rises
    /// ([`learn_clock`](Learned::learn_clock)). A new incarnation replaces
    /// it: a restarted server (or another host behind the same address)
    /// may have a clock behind the old one's, and an estimate kept from
    /// before would stretch every TTL by the difference for as long as the
    /// client runs (an adversarial review showed a 2 s lock living an hour
    /// after a restart with the server's clock an hour behind). A marker
    /// lost to a flush or an eviction also counts as new; the fresh sample
    /// is then as good as the old estimate, unless the server was paused
    /// during that very handshake.
    pub fn adopt(&self, incarnation: Incarnation) -> bool {
        let previous = {
            let mut latest = self.incarnation.lock();
            self.markerless
                .store(incarnation.markerless, Ordering::Relaxed);
            latest.replace(incarnation)
        };
        let changed = previous.is_some_and(|p| p != incarnation);
        if changed {
            if let Some(sample) = incarnation.clock {
                *self.clock.lock() = Some(sample);
            }
        } else {
            self.learn_clock(incarnation.clock);
        }
        // After both are stored: a reader that sees the new count reads
        // them (one that saw the old count reads them again later).
        self.epoch.fetch_add(1, Ordering::Release);
        changed
    }

    /// How many times what [`latest`](Learned::latest) gives has changed.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The latest incarnation and the clock estimate.
    #[inline]
    pub fn latest(&self) -> (Option<Incarnation>, Option<ServerClock>) {
        (self.incarnation(), self.clock())
    }

    /// The clock estimate.
    #[inline]
    pub fn clock(&self) -> Option<ServerClock> {
        *self.clock.lock()
    }

    /// The latest incarnation's version.
    pub fn version(&self) -> Option<Version> {
        self.incarnation.lock().map(|i| i.version)
    }

    /// The latest incarnation.
    #[inline]
    pub fn incarnation(&self) -> Option<Incarnation> {
        *self.incarnation.lock()
    }

    /// Whether the latest incarnation is markerless (read without a lock).
    #[inline]
    pub fn markerless(&self) -> bool {
        self.markerless.load(Ordering::Relaxed)
    }

    /// `incarnation` (a connection's) with the server's best clock
    /// estimate in place of the connection's own sample.
    pub fn effective(&self, incarnation: Option<Incarnation>) -> Option<Incarnation> {
        let mut incarnation = incarnation?;
        if let Some(clock) = self.clock() {
            incarnation.clock = Some(clock);
        }
        Some(incarnation)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    use crate::incarnation::Version;

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn a_stale_clock_sample_never_lowers_the_estimate() {
        let server = Learned::default();
        let t0 = Instant::now();
        let fresh = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        server.learn_clock(Some(fresh));
        // A handshake answered 5 s later by a server that had been frozen
        // for those 5 s reads the clock of before the pause.
        let stale = ServerClock {
            secs: 1_800_000_000,
            sent: t0 + 5 * SEC,
        };
        server.learn_clock(Some(stale));
        let kept = server.clock().unwrap();
        assert_eq!(kept.upper_at(t0 + 5 * SEC), 1_800_000_005);
        // A sample that puts the clock higher replaces it.
        let ahead = ServerClock {
            secs: 1_800_000_007,
            sent: t0 + 5 * SEC,
        };
        server.learn_clock(Some(ahead));
        assert_eq!(server.clock().unwrap().secs, 1_800_000_007);
        // No sample (a server without `time` in its stats) changes nothing.
        server.learn_clock(None);
        assert_eq!(server.clock().unwrap().secs, 1_800_000_007);
    }

    /// A restarted server's clock may be behind the old one's: its first
    /// handshake replaces the estimate, which within one incarnation only
    /// rises.
    #[test]
    fn a_new_incarnation_replaces_the_clock_estimate() {
        let server = Learned::default();
        let t0 = Instant::now();
        let at = |secs| {
            Some(ServerClock {
                secs,
                sent: t0 + SEC,
            })
        };
        let v = Version(1, 6, 18);
        assert!(!server.adopt(Incarnation::new(v, b"first", true, at(1_800_003_600))));
        // The same process, a stale (lower) sample: kept high.
        assert!(!server.adopt(Incarnation::new(v, b"first", true, at(1_800_000_000))));
        assert_eq!(server.clock().unwrap().secs, 1_800_003_600);
        // Restarted, with its clock an hour behind: the estimate follows.
        assert!(server.adopt(Incarnation::new(v, b"second", true, at(1_800_000_000))));
        assert_eq!(server.clock().unwrap().secs, 1_800_000_000);
        // And rises again within the new incarnation.
        assert!(!server.adopt(Incarnation::new(v, b"second", true, at(1_800_000_002))));
        assert_eq!(server.clock().unwrap().secs, 1_800_000_002);
    }
}
