//! One address of the store (a memcached server, or a proxy): its idle
//! connections, its health (backoff while it is down), and for a direct
//! server what its handshakes found (the latest incarnation, the best
//! estimate of its clock).

use mcds_core::Error;
use mcds_net::incarnation::Incarnation;
use mcds_net::transport::Endpoint;
use mcds_net::{Health, Learned};
use parking_lot::Mutex;

use crate::config::Config;
use crate::conn::Conn;

/// One address of the store.
pub(crate) struct Server {
    pub(crate) addr: String,
    endpoint: Endpoint,
    /// Connections in step with the latest incarnation, for reuse.
    idle: Mutex<Vec<Conn>>,
    health: Health,
    /// What the handshakes found (direct servers): the latest incarnation
    /// and the best clock estimate.
    learned: Learned,
}

impl Server {
    pub(crate) fn new(addr: String, endpoint: Endpoint) -> Server {
        Server {
            addr,
            endpoint,
            idle: Mutex::new(Vec::new()),
            health: Health::default(),
            learned: Learned::default(),
        }
    }

    /// The incarnation a connection's commands are encoded for: the
    /// connection's own, with the server's best clock estimate.
    pub(crate) fn effective(&self, conn: &Conn) -> Option<Incarnation> {
        self.learned.effective(conn.incarnation)
    }

    /// The incarnation the latest connection found.
    pub(crate) fn incarnation(&self) -> Option<Incarnation> {
        self.learned.incarnation()
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
        if conn.incarnation.is_some() && self.learned.incarnation() != conn.incarnation {
            return; // it read an older marker
        }
        let mut idle = self.idle.lock();
        if idle.len() < config.net.connections_per_server {
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
        let handshake = |stream| {
            Conn::open(
                stream,
                config.net.timing.io_timeout,
                !config.behind_proxy,
                &self.addr,
            )
        };
        let conn = config
            .net
            .dial(&self.health, &self.addr, &self.endpoint, handshake, || {})?;
        // A changed marker (a restart, a flush, an eviction): the pooled
        // connections read the old one, and are dropped.
        if let Some(incarnation) = conn.incarnation
            && self.learned.adopt(incarnation)
        {
            self.drain();
        }
        Ok(conn)
    }
}
