//! One address of the store (a memcached server, or a proxy): its idle
//! connections, its health (backoff while it is down), and for a direct
//! server what its handshakes found (the latest incarnation, the best
//! estimate of its clock).

use std::io;
use std::time::Instant;

use mcds_core::{Backoff, Error};
use mcds_net::transport::{self, Endpoint, Stream};
use parking_lot::Mutex;

use crate::config::Config;
use crate::conn::{Conn, is_timeout};
use crate::incarnation::{Incarnation, ServerClock};

#[derive(Default)]
struct Health {
    down_until: Option<Instant>,
    reason: String,
    backoff: Option<Backoff>,
}

/// One address of the store.
pub(crate) struct Server {
    pub(crate) addr: String,
    endpoint: Endpoint,
    idle: Mutex<Vec<Conn>>,
    health: Mutex<Health>,
    /// What the most recently dialed connection found (direct servers).
    incarnation: Mutex<Option<Incarnation>>,
    /// The highest estimate of the server's clock any handshake of the
    /// current incarnation gave.
    clock: Mutex<Option<ServerClock>>,
}

impl Server {
    pub(crate) fn new(addr: String, endpoint: Endpoint) -> Server {
        Server {
            addr,
            endpoint,
            idle: Mutex::new(Vec::new()),
            health: Mutex::new(Health::default()),
            incarnation: Mutex::new(None),
            clock: Mutex::new(None),
        }
    }

    /// Keep the clock sample that puts the server's clock highest (a stale
    /// sample, read by a server just resumed from a pause, lowers nothing).
    fn learn_clock(&self, sample: Option<ServerClock>) {
        let Some(sample) = sample else {
            return;
        };
        let mut clock = self.clock.lock();
        let now = Instant::now();
        if !clock.is_some_and(|c| c.upper_at(now) >= sample.upper_at(now)) {
            *clock = Some(sample);
        }
    }

    /// Record what a new connection's handshake read; whether the
    /// incarnation changed. A new incarnation (a restart, a flush, an
    /// evicted marker) replaces the clock estimate: a restarted server's
    /// clock may be behind the old one's.
    fn adopt(&self, incarnation: Incarnation) -> bool {
        let previous = self.incarnation.lock().replace(incarnation);
        let changed = previous.is_some_and(|p| p != incarnation);
        if changed {
            if let Some(sample) = incarnation.clock {
                *self.clock.lock() = Some(sample);
            }
        } else {
            self.learn_clock(incarnation.clock);
        }
        changed
    }

    /// The incarnation a connection's commands are encoded for: the
    /// connection's own, with the server's best clock estimate.
    pub(crate) fn effective(&self, conn: &Conn) -> Option<Incarnation> {
        let mut incarnation = conn.incarnation?;
        if let Some(clock) = *self.clock.lock() {
            incarnation.clock = Some(clock);
        }
        Some(incarnation)
    }

    /// The incarnation the latest connection found.
    pub(crate) fn incarnation(&self) -> Option<Incarnation> {
        *self.incarnation.lock()
    }

    /// A connection: a pooled one that is still alive and whose clock
    /// sample is fresh (`true`), or a new one (`false`).
    pub(crate) fn checkout(&self, config: &Config) -> Result<(Conn, bool), Error> {
        loop {
            let Some(mut conn) = self.idle.lock().pop() else {
                break;
            };
            let old = conn
                .incarnation
                .and_then(|i| i.clock)
                .is_some_and(|c| c.is_old());
            if !old && conn.is_alive() {
                return Ok((conn, true));
            }
        }
        self.dial(config).map(|c| (c, false))
    }

    /// Return a connection that is in step to the pool.
    pub(crate) fn put_back(&self, conn: Conn, config: &Config) {
        if conn.incarnation.is_some() && *self.incarnation.lock() != conn.incarnation {
            return; // it read an older marker
        }
        let mut idle = self.idle.lock();
        if idle.len() < config.max_idle {
            idle.push(conn);
        }
    }

    /// Drop every pooled connection (after a failure that suggests the
    /// server went away, they are all suspect).
    pub(crate) fn drain(&self) {
        self.idle.lock().clear();
    }

    /// A new connection, unless the server is in its backoff window
    /// ([`Error::ServerDown`]). A failed dial starts or lengthens the window.
    fn dial(&self, config: &Config) -> Result<Conn, Error> {
        {
            let health = self.health.lock();
            if let Some(until) = health.down_until {
                let now = Instant::now();
                if now < until {
                    return Err(Error::ServerDown {
                        server: self.addr.clone(),
                        reason: health.reason.clone(),
                        retry_in: until - now,
                    });
                }
            }
        }
        match self.try_dial(config) {
            Ok(conn) => {
                let mut health = self.health.lock();
                health.down_until = None;
                health.backoff = None;
                if let Some(incarnation) = conn.incarnation
                    && self.adopt(incarnation)
                {
                    // The marker changed: pooled connections read the old
                    // one. Retire them so every connection masks alike.
                    self.drain();
                }
                Ok(conn)
            }
            Err(source) => {
                let mut health = self.health.lock();
                let backoff = health.backoff.get_or_insert_with(|| {
                    Backoff::new(config.down_backoff_base, config.down_backoff_max)
                });
                // A failure no retry can fix (refused credentials, a
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

    fn try_dial(&self, config: &Config) -> io::Result<Conn> {
        let stream = Stream::connect(
            &self.addr,
            &self.endpoint,
            &config.security,
            config.connect_timeout,
            config.io_timeout,
        )?;
        Conn::open(stream, config.io_timeout, !config.behind_proxy, &self.addr)
    }
}
