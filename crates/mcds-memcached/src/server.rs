//! One server of the pool: its addresses, its shared connections (lanes,
//! `mux.rs`), its health
//! (backoff while it is down), and what its handshakes found (the latest
//! incarnation, the best estimate of its clock).

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use mcds_core::{Backoff, Error};
use mcds_net::incarnation::{Incarnation, ServerClock, Version};
use mcds_net::transport::{self, Endpoint, Stream};
use parking_lot::Mutex;

use crate::config::Config;
use crate::conn::{Conn, is_timeout};
use crate::mux::Lane;
use crate::pool::ServerPool;

#[derive(Default)]
struct Health {
    down_until: Option<Instant>,
    reason: String,
    backoff: Option<Backoff>,
}

/// One server of the pool.
pub(crate) struct Server {
    pub(crate) addr: String,
    endpoint: Endpoint,
    /// The shared connections, a fixed number (see `mux.rs`).
    pub(crate) lanes: Vec<Lane>,
    next_lane: AtomicUsize,
    health: Mutex<Health>,
    /// What the most recently dialed connection found.
    incarnation: Mutex<Option<Incarnation>>,
    /// That incarnation's [`markerless`](Incarnation::markerless), kept
    /// where [`lane`](Server::lane), which every session calls, reads it
    /// without taking the lock above.
    markerless: AtomicBool,
    /// The highest estimate of the server's clock any handshake gave (see
    /// [`Server::learn_clock`]).
    clock: Mutex<Option<ServerClock>>,
    /// Counts the changes of `incarnation` and `clock` (every handshake
    /// makes one). A lane keeps copies of both with the count they were
    /// read at, and reads them again only when the count moved: the hot
    /// path reads one atomic instead of taking two locks every caller
    /// shares ([`Server::latest`]).
    epoch: AtomicU64,
    /// What the latest dial read of the pool record (see [`crate::pool`]).
    pub(crate) pool: ServerPool,
}

impl Server {
    pub(crate) fn new(addr: String, endpoint: Endpoint, lanes: usize) -> Arc<Server> {
        Arc::new_cyclic(|me| Server {
            addr,
            endpoint,
            lanes: (0..lanes.max(1))
                .map(|i| Lane::new(me.clone(), i))
                .collect(),
            next_lane: AtomicUsize::new(0),
            health: Mutex::new(Health::default()),
            incarnation: Mutex::new(None),
            markerless: AtomicBool::new(false),
            clock: Mutex::new(None),
            epoch: AtomicU64::new(0),
            pool: ServerPool::default(),
        })
    }

    /// Keep the clock sample that puts the server's clock highest (within
    /// one incarnation: [`adopt`](Server::adopt) starts over on a new one).
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
    /// [`CLOCK_MAX_AGE`](mcds_net::incarnation::CLOCK_MAX_AGE)), and one
    /// that makes it high only lengthens items.
    pub(crate) fn learn_clock(&self, sample: Option<ServerClock>) {
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
    /// ([`learn_clock`](Server::learn_clock)). A new incarnation replaces it:
    /// a restarted server (or another host behind the same address) may
    /// have a clock behind the old one's, and an estimate kept from before
    /// would stretch every TTL by the difference for as long as the client
    /// runs (an adversarial review showed a 2 s lock living an hour after
    /// a restart with the server's clock an hour behind). A marker lost to
    /// a flush or an eviction also counts as new; the fresh sample is then
    /// as good as the old estimate, unless the server was paused during
    /// that very handshake.
    fn adopt(&self, incarnation: Incarnation) -> bool {
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
        // After both are stored: a lane that reads the new count reads
        // them (a lane that read the old count reads them again later).
        self.epoch.fetch_add(1, Ordering::Release);
        changed
    }

    /// How many times what [`latest`](Server::latest) gives has changed.
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// The latest incarnation and the best clock estimate together, for a
    /// lane's copy of them (taken with [`epoch`](Server::epoch) read
    /// first).
    pub(crate) fn latest(&self) -> (Option<Incarnation>, Option<ServerClock>) {
        (self.incarnation(), self.clock())
    }

    /// The highest estimate of the server's clock any handshake gave.
    pub(crate) fn clock(&self) -> Option<ServerClock> {
        *self.clock.lock()
    }

    pub(crate) fn version(&self) -> Option<Version> {
        self.incarnation.lock().map(|i| i.version)
    }

    /// The incarnation the most recently dialed connection found.
    pub(crate) fn incarnation(&self) -> Option<Incarnation> {
        *self.incarnation.lock()
    }

    /// The lane for the next session: the first idle one (so one caller at
    /// a time uses one connection, and a second connection is opened only
    /// when two callers overlap), else the least loaded; in turn when every
    /// lane's lock was held just then.
    ///
    /// While the server has no incarnation marker (full under `-M` when
    /// the marker was to be made: [`Incarnation::markerless`]), every
    /// session takes the first lane. Each connection then masks CAS ids
    /// with a token of its own, and an id read on one connection never
    /// matches on another: spread over lanes, a `get` and its `cas`, or a
    /// lock's `add` and its release, met different masks, and each new
    /// dial's mask sent the other lanes to dial again (an adversarial
    /// review counted 234 dials for 4 connections, and lock releases that
    /// failed). On one connection the ids match as long as it lives; a new
    /// connection (after a failure, or the periodic replacement that also
    /// retries the marker) starts a new mask, which refuses the old ids,
    /// as it must when the server may have restarted. A session that
    /// picked another lane before the server was known to be marker-less
    /// moves to the first before it sends anything (`Session`).
    pub(crate) fn lane(&self) -> &Lane {
        if self.markerless.load(Ordering::Relaxed) {
            return &self.lanes[0];
        }
        let mut best: Option<(usize, &Lane)> = None;
        for lane in &self.lanes {
            match lane.load() {
                Some(0) => return lane,
                Some(n) if best.is_none_or(|(b, _)| n < b) => best = Some((n, lane)),
                _ => {}
            }
        }
        match best {
            Some((_, lane)) => lane,
            None => {
                let n = self.next_lane.fetch_add(1, Ordering::Relaxed);
                &self.lanes[n % self.lanes.len()]
            }
        }
    }

    /// [`Error::ServerDown`] while the server is in its backoff window.
    pub(crate) fn down(&self) -> Option<Error> {
        let health = self.health.lock();
        let until = health.down_until?;
        let now = Instant::now();
        (now < until).then(|| Error::ServerDown {
            server: self.addr.clone(),
            reason: health.reason.clone(),
            retry_in: until - now,
        })
    }

    /// A new connection, unless the server is in its backoff window
    /// ([`Error::ServerDown`]). A failed dial starts or lengthens the window.
    pub(crate) fn dial(&self, config: &Config) -> Result<Conn, Error> {
        if let Some(down) = self.down() {
            return Err(down);
        }
        match self.try_dial(config) {
            Ok(conn) => {
                let mut health = self.health.lock();
                health.down_until = None;
                health.backoff = None;
                // If the marker changed (a restart, a flush, an eviction),
                // the other lanes' connections read the old one: each lane
                // replaces its idle connection before its next request
                // (`Lane::incarnation`), so every connection masks CAS ids
                // the same way again.
                self.adopt(conn.incarnation);
                self.pool.learn(conn.pool.clone(), config.pool.pooled);
                Ok(conn)
            }
            Err(source) => {
                self.pool.unreachable();
                let mut health = self.health.lock();
                let backoff = health.backoff.get_or_insert_with(|| {
                    Backoff::new(config.down_backoff_base, config.down_backoff_max)
                });
                // At least half the ceiling, so a dead server is not redialed
                // in a busy loop, with jitter so clients spread out. A
                // failure no retry can fix (refused credentials, a
                // certificate that does not verify) waits the longest.
                let ceiling = backoff.ceiling();
                let wait = if transport::is_permanent(&source) {
                    config.down_backoff_max
                } else {
                    ceiling / 2 + backoff.next_delay() / 2
                };
                health.down_until = Some(Instant::now() + wait);
                health.reason = source.to_string();
                if is_timeout(&source) {
                    Err(Error::Timeout {
                        server: self.addr.clone(),
                        // Connecting, or the version handshake after it.
                        after: config.connect_timeout.max(config.io_timeout),
                    })
                } else {
                    Err(Error::Io {
                        server: self.addr.clone(),
                        source,
                    })
                }
            }
        }
    }

    /// Connect (the first address that accepts, TLS and authentication as
    /// configured), and run the handshake on that connection.
    fn try_dial(&self, config: &Config) -> io::Result<Conn> {
        let stream = Stream::connect(
            &self.addr,
            &self.endpoint,
            &config.security,
            config.connect_timeout,
            config.io_timeout,
        )?;
        Conn::open(
            stream,
            config.io_timeout,
            config.version_cap,
            &self.addr,
            &config.pool,
            self.pool.claim(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn a_stale_clock_sample_never_lowers_the_estimate() {
        let server = Server::new(
            "127.0.0.1:1".into(),
            Endpoint::Unix("/nonexistent".into()),
            1,
        );
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
        let kept = server.clock.lock().unwrap();
        assert_eq!(kept.upper_at(t0 + 5 * SEC), 1_800_000_005);
        // A sample that puts the clock higher replaces it.
        let ahead = ServerClock {
            secs: 1_800_000_007,
            sent: t0 + 5 * SEC,
        };
        server.learn_clock(Some(ahead));
        assert_eq!(server.clock.lock().unwrap().secs, 1_800_000_007);
        // No sample (a server without `time` in its stats) changes nothing.
        server.learn_clock(None);
        assert_eq!(server.clock.lock().unwrap().secs, 1_800_000_007);
    }

    /// A restarted server's clock may be behind the old one's: its first
    /// handshake replaces the estimate, which within one incarnation only
    /// rises.
    #[test]
    fn a_new_incarnation_replaces_the_clock_estimate() {
        use mcds_net::incarnation::{Incarnation, Version};
        let server = Server::new(
            "127.0.0.1:1".into(),
            Endpoint::Unix("/nonexistent".into()),
            1,
        );
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
