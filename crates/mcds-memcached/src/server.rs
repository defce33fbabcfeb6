//! One server of the pool: its addresses, its shared connections (lanes,
//! `mux.rs`), its health
//! (backoff while it is down), and what its handshakes found (the latest
//! incarnation, the best estimate of its clock).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use mcds_core::Error;
use mcds_net::transport::Endpoint;
use mcds_net::{Health, Learned};

use crate::config::Config;
use crate::conn::Conn;
use crate::mux::Lane;
use crate::pool::ServerPool;

/// How many of a server's shared lanes carry the batches of callers that
/// queue; the others take only callers that find them idle while no lane
/// has a queue ([`Server::lane`]).
pub(crate) const BATCHING_LANES: usize = 2;

/// One server of the pool.
pub(crate) struct Server {
    pub(crate) addr: String,
    endpoint: Endpoint,
    /// The shared connections, a fixed number (see `mux.rs`): first the
    /// ones every caller uses, then (with the `tokio` feature) as many
    /// again for async callers that drive them on a tokio runtime
    /// (`async_lane`).
    pub(crate) lanes: Vec<Lane>,
    /// How many of `lanes` are the shared ones (the rest are async).
    shared: usize,
    next_lane: AtomicUsize,
    health: Health,
    /// Its latest incarnation and clock estimate (a lane keeps copies,
    /// read again when [`Learned::epoch`] moves).
    pub(crate) learned: Learned,
    /// What the latest dial read of the pool record (see [`crate::pool`]).
    pub(crate) pool: ServerPool,
    /// Cancelled async callers' exchanges still being finished on this
    /// server's async lanes (`mux/native.rs`'s rescues): a new request
    /// waits for them ([`await_rescues`](Self::await_rescues)).
    #[cfg(feature = "tokio")]
    pub(crate) rescues: AtomicUsize,
}

impl Server {
    /// `lanes` shared connections, and as many for async callers on a
    /// tokio runtime when `async_lanes` (see `async_lane`).
    pub(crate) fn new(
        addr: String,
        endpoint: Endpoint,
        lanes: usize,
        async_lanes: bool,
    ) -> Arc<Server> {
        let shared = lanes.max(1);
        let all = if async_lanes { 2 * shared } else { shared };
        Arc::new_cyclic(|me| Server {
            addr,
            endpoint,
            lanes: (0..all).map(|i| Lane::new(me.clone(), i)).collect(),
            shared,
            next_lane: AtomicUsize::new(0),
            health: Health::default(),
            learned: Learned::default(),
            pool: ServerPool::default(),
            #[cfg(feature = "tokio")]
            rescues: AtomicUsize::new(0),
        })
    }

    /// Wait (at most 2 s) until no cancelled async caller's exchange is
    /// still being finished on this server. Why: a cancelled request may
    /// have been written, and be applied after its caller's next request
    /// had it gone out on another connection (memcached serves
    /// connections in parallel): a `set` cancelled by a timeout, then a
    /// `set` that succeeded, and a `get` that read the first value (a
    /// test found it in 3 of 40 runs). Waiting for the rescue keeps one
    /// caller's requests in the order it made them.
    #[cfg(feature = "tokio")]
    pub(crate) async fn await_rescues(&self, io: mcds_core::Io) {
        if self.rescues.load(Ordering::Acquire) == 0 {
            return;
        }
        let until = std::time::Instant::now() + std::time::Duration::from_secs(2);
        while self.rescues.load(Ordering::Acquire) > 0 && std::time::Instant::now() < until {
            if io == mcds_core::Io::Async && crate::mux::native::on_runtime() {
                tokio::task::yield_now().await;
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// The lane for the next session: the first idle one (so one caller at
    /// a time uses one connection, and a second connection is opened only
    /// when two callers overlap), else the least loaded of the lanes that
    /// carry batches (see [`pick`](Self::pick) for when the others are
    /// used).
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
        self.pick(self.shared_lanes())
    }

    /// An idle lane for an async caller that will drive it on a tokio
    /// runtime (see `mux/native.rs`), among lanes of their own, which
    /// nobody queues on: no caller waits behind a driver that only its
    /// own future moves on. `None` when every one is driven (the caller
    /// then queues on a shared lane, for its helper thread), when the
    /// server has none (the feature is off, TLS, or
    /// `drive_on_runtime(false)`), or when it is marker-less (its sessions
    /// keep to one connection, see [`lane`](Self::lane)).
    ///
    /// Only while every shared lane is idle too: when one is busy, callers
    /// are arriving faster than round trips end, and they go
    /// out faster batched on the shared lanes (one write, one read for
    /// many) than one by one on async lanes, each a round trip's system
    /// calls and wake-ups on the same 2 cores (64 tasks: 336k increments a
    /// second with async lanes taken whenever idle, against about 400k
    /// batched).
    #[cfg(feature = "tokio")]
    pub(crate) fn async_lane(&self) -> Option<&Lane> {
        if self.learned.markerless() {
            return None;
        }
        let idle = |lane: &&Lane| lane.load() == Some(0);
        if !self.shared_lanes().iter().all(|lane| idle(&lane)) {
            return None;
        }
        self.lanes.get(self.shared..)?.iter().find(idle)
    }

    /// The lanes every caller may queue on (not the async ones).
    pub(crate) fn shared_lanes(&self) -> &[Lane] {
        &self.lanes[..self.shared]
    }

    /// Whether `lane` is one of the async lanes (`async_lane`, with the `tokio` feature).
    #[cfg(feature = "tokio")]
    pub(crate) fn is_async_lane(&self, lane: &Lane) -> bool {
        lane.index() >= self.shared
    }

    /// The lane for a caller among `lanes` (see [`lane`](Self::lane)):
    ///
    /// * an idle one of the first [`BATCHING_LANES`], the lanes that carry
    ///   the batches;
    /// * else an idle one of the others, but only while no lane has a
    ///   queue: every caller then has a connection to itself (a few
    ///   threads, each one round trip at a time), and a caller that waited
    ///   behind another would take two round trips for one;
    /// * else the least loaded of the batching lanes, else one of them in
    ///   turn (their locks were held just then).
    ///
    /// Why not spread callers over every lane: once callers queue, the
    /// machine's cores, not round trips, bound the rate, and a write
    /// carrying 8 callers' requests costs the client and the server about
    /// what a write carrying 1 does (the peers bench on 2 cores: 16
    /// threads reach 1.16× 16 raw sockets on 2 lanes, 0.97× on 4). Before
    /// they queue, each waiting caller is a round trip lost (4 threads:
    /// 0.76× 4 raw sockets on 2 lanes, 1.0× on 4).
    #[inline]
    fn pick<'l>(&'l self, lanes: &'l [Lane]) -> &'l Lane {
        if self.learned.markerless() {
            return &self.lanes[0];
        }
        let batching = lanes.len().min(BATCHING_LANES);
        let mut best: Option<(usize, &Lane)> = None;
        let mut idle_other: Option<&Lane> = None;
        let mut queued = false;
        for (i, lane) in lanes.iter().enumerate() {
            match lane.load() {
                Some(0) if i < batching => return lane,
                Some(0) => {
                    idle_other.get_or_insert(lane);
                }
                Some(n) => {
                    queued |= n > 1;
                    if i < batching && best.is_none_or(|(b, _)| n < b) {
                        best = Some((n, lane));
                    }
                }
                None => {}
            }
        }
        if let Some(lane) = idle_other.filter(|_| !queued) {
            return lane;
        }
        match best {
            Some((_, lane)) => lane,
            None => {
                let n = self.next_lane.fetch_add(1, Ordering::Relaxed);
                &lanes[n % batching]
            }
        }
    }

    /// The lanes that carry the batches when callers queue (the first
    /// [`BATCHING_LANES`] shared ones): a batch of reads spreads over these.
    pub(crate) fn batching_lanes(&self) -> &[Lane] {
        &self.lanes[..self.shared.min(BATCHING_LANES)]
    }

    /// [`Error::ServerDown`] while the server is in its backoff window.
    pub(crate) fn down(&self) -> Option<Error> {
        self.health.down(&self.addr)
    }

    /// A new connection, unless the server is in its backoff window
    /// ([`Error::ServerDown`]). A failed dial starts or lengthens the window.
    pub(crate) fn dial(&self, config: &Config) -> Result<Conn, Error> {
        let handshake = |stream| {
            Conn::open(
                stream,
                config.net.timing.io_timeout,
                config.version_cap,
                &self.addr,
                &config.pool,
                self.pool.claim(),
            )
        };
        let conn = config
            .net
            .dial(&self.health, &self.addr, &self.endpoint, handshake, || {
                self.pool.unreachable()
            })?;
        // If the marker changed (a restart, a flush, an eviction), the
        // other lanes' connections read the old one: each lane replaces its
        // idle connection before its next request (`Lane::incarnation`), so
        // every connection masks CAS ids the same way again.
        self.learned.adopt(conn.incarnation);
        self.pool.learn(conn.pool.clone(), config.pool.pooled);
        Ok(conn)
    }
}
