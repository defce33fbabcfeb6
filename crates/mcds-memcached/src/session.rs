//! A session: one store operation's use of one server, through one of its
//! shared connections (a lane, `mux.rs`); its exchanges (sending again
//! what never left, and reads whose connection failed), and what a
//! failure means for the request ([`ErrorMap`]): not sent (`Io`/`Timeout`,
//! safe to retry), sent without a reply (`Ambiguous`), or answered with an
//! error.

use std::io;
use std::time::{Duration, Instant};

use mcds_core::{Error, Io, Key, Op, Reply, block_on, traffic};
use mcds_net::incarnation::Incarnation;
use memcache::exp::MetaCommand;

use crate::codec;
use crate::config::Config;
use crate::conn::is_timeout;
use crate::mux::{self, Delivery, Expect, Lane, Queued, Request, Ticket};
use crate::reply::MetaReply;
use crate::server::Server;

/// How many times a request that never left (its connection was found
/// dead before the write) is sent again on a new connection.
const UNSENT_RETRIES: usize = 2;

/// One store operation's use of one server (which may take several
/// exchanges on old servers). Its exchanges go out on one lane, in order.
pub(crate) struct Session<'a> {
    server: &'a Server,
    config: &'a Config,
    lane: &'a Lane,
    /// The incarnation the session's commands were encoded for (see
    /// [`incarnation`](Self::incarnation)).
    pinned: Option<Incarnation>,
    /// Whether a server whose pool record refuses this client's list
    /// refuses the session too (all but the pool's own upkeep and `stats`).
    pool_checked: bool,
    /// Whether an async request of this session may be driven by its
    /// caller on a tokio runtime (`mux/native.rs`). Not for a pipeline's
    /// round that spans connections ([`queue_only`](Self::queue_only)).
    drive_here: bool,
}

impl<'a> Session<'a> {
    /// A session on the server's next lane. Nothing is dialed yet.
    pub(crate) fn open(server: &'a Server, config: &'a Config) -> Result<Session<'a>, Error> {
        Ok(Session::on_lane(server, config, server.lane()))
    }

    /// A session on `lane`, one of `server`'s (a batch of reads spread
    /// over its connections: `MemcachedStore::spread`).
    pub(crate) fn on_lane(server: &'a Server, config: &'a Config, lane: &'a Lane) -> Session<'a> {
        Session {
            server,
            config,
            lane,
            pinned: None,
            pool_checked: true,
            drive_here: true,
        }
    }

    /// Whether the session's async requests are only queued, for the
    /// lane's helper thread to write and read, never driven by their
    /// caller. A pipeline's round that spans connections reads its
    /// tickets one after another: a driver's ticket is only driven while
    /// it is awaited, so the lanes whose tickets wait their turn would
    /// hold up every other caller of theirs behind the slowest server (an
    /// adversarial review measured 450 ms for a single `get` of a healthy
    /// server behind a pipeline that also read from a frozen one).
    pub(crate) fn queue_only(&mut self, only: bool) {
        self.drive_here = !only;
    }

    /// Whether the session's exchanges go out on `lane`.
    pub(crate) fn uses(&self, lane: &Lane) -> bool {
        std::ptr::eq(self.lane, lane)
    }

    /// [`open`](Self::open), for a session that works whatever the pool
    /// record says: the record's own upkeep ([`crate::pool`]) and `stats`.
    pub(crate) fn open_unchecked(server: &'a Server, config: &'a Config) -> Session<'a> {
        Session {
            pool_checked: false,
            ..Session::on_lane(server, config, server.lane())
        }
    }

    /// One op in one exchange: encoded for this session's incarnation, sent,
    /// and its reply decoded as a pipelined one would be.
    pub(crate) async fn execute(mut self, io: Io, op: &Op<'_>) -> Result<Reply, Error> {
        let (r, incarnation) = self.exchange_op(io, op).await?;
        codec::decode(op, Some(r), &incarnation, &self.server.addr)
    }

    /// One op in one exchange, its reply not yet decoded (a pair's two
    /// replies merged, see [`codec::merge_pair`]), and the incarnation it
    /// was encoded for.
    pub(crate) async fn exchange_op(
        &mut self,
        io: Io,
        op: &Op<'_>,
    ) -> Result<(MetaReply, Incarnation), Error> {
        // The exchange's one clock reading: its checks, its deadline and
        // its write's timeout all count from it (read again if getting the
        // connection waited for a dial).
        let mut now = Instant::now();
        let incarnation = self.incarnation_at(io, &mut now).await?;
        let opaque = self.lane.next_opaque();
        let mut payload = Vec::with_capacity(64);
        codec::encode_wire(
            op,
            &incarnation,
            self.config.net.item_size_limit,
            &mut payload,
            opaque,
            false,
        )?;
        let effects = op.has_side_effect();
        let r = if codec::is_pair(op, &incarnation) {
            let expect = Expect::Pair { opaque };
            match self
                .send_expecting(io, op.key(), payload, expect, effects, now)
                .await?
            {
                (text, Some(mg)) => codec::merge_pair(op, text, &mg, &incarnation),
                (text, None) => text,
            }
        } else {
            self.send(io, op.key(), payload, opaque, effects, now)
                .await?
        };
        Ok((r, incarnation))
    }

    /// The incarnation of the server this session talks to (dialing first
    /// if the lane has no connection). Commands carrying CAS ids are encoded
    /// for it, so the session is pinned to it: if the connection fails and
    /// its replacement reaches another incarnation, the command is not sent
    /// and fails with [`Error::Io`], safe to retry.
    pub(crate) fn incarnation(&mut self) -> Result<Incarnation, Error> {
        block_on(self.incarnation_io(Io::Blocking))
    }

    /// [`incarnation`](Self::incarnation), dialing without blocking the
    /// thread when `io` is [`Io::Async`].
    pub(crate) async fn incarnation_io(&mut self, io: Io) -> Result<Incarnation, Error> {
        self.incarnation_at(io, &mut Instant::now()).await
    }

    /// [`incarnation_io`](Self::incarnation_io), for a caller that read the
    /// clock (`now`) a moment ago; `now` is read again if this waited for a
    /// dial (see [`Lane::incarnation`]).
    async fn incarnation_at(&mut self, io: Io, now: &mut Instant) -> Result<Incarnation, Error> {
        // Nothing overtakes a cancelled caller's request still in flight.
        #[cfg(feature = "tokio")]
        self.server.await_rescues(io).await;
        // An async caller on a tokio runtime takes an async lane, which it
        // will drive there (`mux/native.rs`), before anything is sent.
        #[cfg(feature = "tokio")]
        if io == Io::Async
            && self.drive_here
            && self.pinned.is_none()
            && !self.server.is_async_lane(self.lane)
            && mux::native::on_runtime()
            && let Some(lane) = self.server.async_lane()
        {
            self.lane = lane;
        }
        let incarnation = match self.pinned {
            // The server's best clock estimate, not just the one it had
            // when the session was pinned (the lane's answer below carries
            // it already).
            Some(mut pinned) => {
                if let Some(clock) = self.server.learned.clock() {
                    pinned.clock = Some(clock);
                }
                pinned
            }
            None => {
                let found = self
                    .lane
                    .connection(self.server, self.config, io, now)
                    .await?;
                let server: &'a Server = self.server;
                let first = &server.lanes[0];
                if found.markerless && !std::ptr::eq(self.lane, first) {
                    // No marker, so this connection's CAS ids are its own,
                    // and a marker-less server's sessions all use the
                    // first lane (`Server::lane`). This session picked
                    // another before the server was known to be
                    // marker-less (the first dials race, or the server
                    // came back full); nothing was sent yet: move.
                    self.lane = first;
                    self.lane
                        .connection(self.server, self.config, io, now)
                        .await?
                } else {
                    found
                }
            }
        };
        // The connection may be new, and its handshake may have found the
        // pool record changed: checked after it, so that no op goes out on
        // a connection whose server refuses this client's list.
        if self.pool_checked {
            self.server.pool.check(self.server, &self.config.pool)?;
        }
        self.pinned = Some(incarnation);
        Ok(incarnation)
    }

    /// Queue a request on the lane (see [`Lane::submit`]), for the pinned
    /// incarnation.
    async fn submit(
        &mut self,
        io: Io,
        mut request: Request,
        mut now: Instant,
    ) -> Result<Ticket<'a>, Error> {
        // Compared, not encoded for: a pinned session needs no fresh clock.
        // A dial here (its own, or another caller's it waited for) moves
        // the request's deadline by as long as it took: the exchange's own
        // `io_timeout` is not spent on it (the builder documents that an
        // op that dials may also spend up to the connect timeout on the
        // dial). An adversarial review showed an async set, retried after
        // its connection failed, redialed and written with 1 ms left: the
        // server applied it, and it was reported `Ambiguous`.
        let before = now;
        let pinned = match self.pinned {
            Some(pinned) => pinned,
            None => self.incarnation_at(io, &mut now).await?,
        };
        request.deadline = mux::later_by(request.deadline, before, now);
        match io {
            Io::Blocking => self
                .lane
                .submit(self.server, self.config, request, pinned, now),
            Io::Async => {
                // The lane's connection may have failed since the session
                // was pinned: then dial again (without blocking), to the
                // same incarnation only, and queue on the new one. An
                // async lane this caller cannot drive now sends it to a
                // shared lane (async lanes never queue: `mux/native.rs`).
                // (Given back into the same variable: an async fn keeps a
                // slot for each binding held across an await.)
                let mut dialed = false;
                loop {
                    let dial;
                    (request, dial) = match self.lane.submit_async(
                        self.server,
                        self.config,
                        request,
                        pinned,
                        now,
                        self.drive_here,
                    )? {
                        Queued::Ticket(ticket) => return Ok(ticket),
                        #[cfg(feature = "tokio")]
                        Queued::Elsewhere(request) => {
                            self.lane = self.server.lane();
                            dialed = false;
                            (request, false)
                        }
                        Queued::NoConnection(_) if dialed => {
                            return Err(Error::Io {
                                server: self.server.addr.clone(),
                                source: io::Error::new(
                                    io::ErrorKind::NotConnected,
                                    "not sent: the connection closed before the request was queued",
                                ),
                            });
                        }
                        Queued::NoConnection(request) => (request, true),
                    };
                    if dial {
                        dialed = true;
                        let before = now;
                        let current = self
                            .lane
                            .incarnation_async(self.server, self.config, &mut now)
                            .await?;
                        request.deadline = mux::later_by(request.deadline, before, now);
                        if current != pinned {
                            return Err(mux::restarted(&self.server.addr));
                        }
                    }
                }
            }
        }
    }

    /// One request/response exchange, bounded by one `io_timeout`. A failure
    /// before the request was sent is `Io`/`Timeout` (not applied); after,
    /// it is `Ambiguous` when the command has side effects. A request that
    /// never left is sent again (up to [`UNSENT_RETRIES`] times), and so is
    /// a read whose connection failed before its reply (once).
    pub(crate) fn exchange(
        &mut self,
        key: &Key,
        command: &MetaCommand,
    ) -> Result<MetaReply, Error> {
        block_on(self.exchange_io(Io::Blocking, key, command))
    }

    /// [`exchange`](Self::exchange), in `io` mode.
    pub(crate) async fn exchange_io(
        &mut self,
        io: Io,
        key: &Key,
        command: &MetaCommand,
    ) -> Result<MetaReply, Error> {
        let opaque = self.lane.next_opaque();
        let mut payload = Vec::with_capacity(64);
        command
            .encode_into(&mut payload)
            .map_err(|e| Error::Internal(format!("cannot encode a command: {e}")))?;
        mux::tag(&mut payload, opaque);
        let effects = command.has_side_effect();
        self.send(io, key, payload, opaque, effects, Instant::now())
            .await
    }

    /// Send one encoded command (`payload`, carrying ` O<opaque>`) and
    /// read its reply: the exchange of [`exchange`](Self::exchange), for a
    /// command encoded by the caller. `effects`: whether it changes
    /// anything on the server (then a lost reply is `Ambiguous`). `now`: a
    /// clock reading of a moment ago; the exchange's timeout counts from
    /// it.
    pub(crate) async fn send(
        &mut self,
        io: Io,
        key: &Key,
        payload: Vec<u8>,
        opaque: u32,
        effects: bool,
        now: Instant,
    ) -> Result<MetaReply, Error> {
        // `ms` is the one meta command with a data block.
        let data = payload.starts_with(b"ms ");
        let (r, _) = self
            .send_expecting(io, key, payload, Expect::One { opaque, data }, effects, now)
            .await?;
        Ok(r)
    }

    /// [`send`](Self::send) for a request read as `expect` says: one
    /// command's reply, or a text write's and its `mg`'s (the second), or
    /// the first failure among them (an error line to the text write comes
    /// first, and is the answer).
    async fn send_expecting(
        &mut self,
        io: Io,
        key: &Key,
        mut payload: Vec<u8>,
        expect: Expect,
        effects: bool,
        mut now: Instant,
    ) -> Result<(MetaReply, Option<MetaReply>), Error> {
        traffic::record(1);
        let deadline = now + self.config.net.timing.io_timeout;
        let mut unsent = 0;
        let mut reread = 0;
        loop {
            let request = Request {
                payload,
                expect,
                deadline,
            };
            let ticket = self.submit(io, request, now).await?;
            let Delivery {
                replies,
                sent,
                payload: back,
                ..
            } = ticket.delivery().await;
            payload = back;
            let error = match taken(replies, matches!(expect, Expect::Pair { .. })) {
                Ok(replies) => return Ok(replies),
                Err(e) => e,
            };
            if mux::is_error_line(&error) {
                // The server answered: the command was refused, not lost.
                return Err(self.errors().map(key, error, false));
            }
            if !sent
                && unsent < UNSENT_RETRIES
                && self.time_left(deadline)
                && !is_timeout_error(&error)
            {
                unsent += 1;
                now = Instant::now();
                continue;
            }
            // A read that lost its reply with its connection may be sent
            // again, once.
            if sent && !effects && reread == 0 && self.time_left(deadline) && is_transport(&error) {
                reread += 1;
                now = Instant::now();
                continue;
            }
            return Err(self.errors().map(key, error, sent && effects));
        }
    }

    /// Queue a batch (commands ending in `mn`) and return the ticket to its
    /// replies, written already if this caller drives the lane. A batch
    /// that never left is sent again (up to [`UNSENT_RETRIES`] times) by
    /// [`batch_replies`](Self::batch_replies).
    /// `replies`: the most replies it can have (its commands and the `MN`);
    /// `leads`: it holds multi-key `gets` lines and must start its write
    /// (see [`Expect::UntilMn`]).
    pub(crate) async fn submit_batch(
        &mut self,
        io: Io,
        payload: Vec<u8>,
        (replies, leads): (usize, bool),
        deadline: Instant,
    ) -> Result<Ticket<'a>, Error> {
        let request = Request {
            payload,
            expect: Expect::UntilMn { replies, leads },
            deadline,
        };
        self.submit(io, request, Instant::now()).await
    }

    /// Whether a request that failed unsent may be sent again: at least
    /// half of its timeout is left (a new connection's handshake takes
    /// time too).
    fn time_left(&self, deadline: Instant) -> bool {
        Instant::now() + self.config.net.timing.io_timeout / 2 <= deadline
    }

    /// Wait for a batch's replies; a batch that never left is submitted
    /// again (`payload` is its bytes).
    pub(crate) async fn batch_replies(
        &mut self,
        io: Io,
        ticket: Ticket<'a>,
        replies: (usize, bool),
        deadline: Instant,
    ) -> Result<Delivery, Error> {
        let mut delivery = ticket.delivery().await;
        for _ in 0..UNSENT_RETRIES {
            let retry = !delivery.sent
                && self.time_left(deadline)
                && !delivery
                    .replies
                    .first()
                    .is_some_and(|r| matches!(r, Err(e) if is_timeout_error(e)));
            if !retry {
                break;
            }
            delivery = self
                .submit_batch(io, std::mem::take(&mut delivery.payload), replies, deadline)
                .await?
                .delivery()
                .await;
        }
        Ok(delivery)
    }

    /// Close the connection a delivery came on (its replies were out of
    /// step, or carried an error line that may have left the stream so).
    pub(crate) fn retire(&self, generation: u64) {
        self.lane.retire(generation);
    }

    /// The server's `stats` listing, on the lane like any request (read up
    /// to `END` by the driver). A failure is [`Error::Timeout`],
    /// [`Error::Io`], or [`Error::Protocol`] for a reply that is not a stats
    /// listing. `stats` has no effects: a request that never left, or whose
    /// connection failed before the listing came, is sent again.
    pub(crate) fn stats(self) -> Result<crate::Stats, Error> {
        block_on(self.stats_io(Io::Blocking))
    }

    /// [`stats`](Self::stats), blocking or not as `io` says.
    pub(crate) async fn stats_io(mut self, io: Io) -> Result<crate::Stats, Error> {
        traffic::record(1);
        let mut error = None;
        for _ in 0..=UNSENT_RETRIES {
            let now = Instant::now();
            let request = Request {
                payload: b"stats\r\n".to_vec(),
                expect: Expect::Stats,
                deadline: now + self.config.net.timing.io_timeout,
            };
            let ticket = self.submit(io, request, now).await?;
            let delivery = ticket.delivery().await;
            if let Some(stats) = delivery.stats {
                return Ok(stats);
            }
            let e = delivery.replies.into_iter().next();
            let timed_out = matches!(&e, Some(Err(e)) if is_timeout_error(e));
            error = e;
            if timed_out {
                break;
            }
        }
        let server = self.server.addr.clone();
        Err(match error {
            Some(Err(e)) if is_timeout_error(&e) => Error::Timeout {
                server,
                after: self.config.net.timing.io_timeout,
            },
            Some(Err(memcache::exp::Error::Io(e))) if e.kind() == io::ErrorKind::InvalidData => {
                Error::Protocol {
                    server,
                    message: e.to_string(),
                }
            }
            Some(Err(memcache::exp::Error::Io(source))) => Error::Io { server, source },
            other => Error::Protocol {
                server,
                message: format!("no stats listing: {other:?}"),
            },
        })
    }

    /// The server's address, as configured.
    pub(crate) fn server_addr(&self) -> &'a str {
        &self.server.addr
    }

    /// The configured item size limit.
    pub(crate) fn item_size_limit(&self) -> usize {
        self.config.net.item_size_limit
    }

    /// How failures are reported for this session's server.
    pub(crate) fn errors(&self) -> ErrorMap<'a> {
        ErrorMap {
            server: &self.server.addr,
            io_timeout: self.config.net.timing.io_timeout,
            item_size_limit: self.config.net.item_size_limit,
        }
    }
}

/// A request's replies as delivered: the first, and for a `pair` the
/// second, or the first failure. When a pair's text write answered and its
/// `mg` got an error line (memcached refuses a fetch on a refcount
/// overflow), the write's outcome is known and only the CAS id is not: the
/// `mg` is taken to have found nothing, which gives an id that never
/// matches.
fn taken(
    replies: Vec<mux::Read>,
    pair: bool,
) -> Result<(MetaReply, Option<MetaReply>), memcache::exp::Error> {
    let missing = || io::Error::other("not every reply was delivered").into();
    let mut replies = replies.into_iter();
    let first = replies.next().unwrap_or_else(|| Err(missing()))?;
    if !pair {
        return Ok((first, None));
    }
    match replies.next() {
        Some(Ok(mg)) => Ok((first, Some(mg))),
        Some(Err(e)) if mux::is_error_line(&e) => Ok((first, Some(MetaReply::nothing()))),
        Some(Err(e)) => Err(e),
        None => Err(missing()),
    }
}

fn is_timeout_error(error: &memcache::exp::Error) -> bool {
    matches!(error, memcache::exp::Error::Io(e) if is_timeout(e))
        || matches!(error, memcache::exp::Error::Timeout { .. })
}

fn is_transport(error: &memcache::exp::Error) -> bool {
    matches!(error, memcache::exp::Error::Io(e) if !is_timeout(e))
}

/// What a failed exchange with one server means for the request: plain
/// data (the server's name, the configured timeout and item size limit),
/// so the pipeline and the fuzz harness map errors the way a session does.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ErrorMap<'a> {
    /// The server, as configured.
    pub(crate) server: &'a str,
    /// The exchange timeout, reported in timeouts.
    pub(crate) io_timeout: Duration,
    /// The item size limit, reported when the server refuses a value.
    pub(crate) item_size_limit: usize,
}

impl ErrorMap<'_> {
    /// The [`Error`] for `error` on a request for `key`. `sent`: the request
    /// left (a lost reply then means it may have been applied:
    /// [`Error::Ambiguous`]).
    pub(crate) fn map(&self, key: &Key, error: memcache::exp::Error, sent: bool) -> Error {
        use memcache::exp::Error as E;
        let server = self.server.to_string();
        match error {
            E::Io(e) if sent => Error::Ambiguous {
                key: key.display(),
                server,
                reason: if is_timeout(&e) {
                    format!("no reply within {:?}", self.io_timeout)
                } else {
                    e.to_string()
                },
            },
            E::Timeout { .. } if sent => Error::Ambiguous {
                key: key.display(),
                server,
                reason: format!("no reply within {:?}", self.io_timeout),
            },
            E::Io(e) if is_timeout(&e) => Error::Timeout {
                server,
                after: self.io_timeout,
            },
            E::Timeout { .. } => Error::Timeout {
                server,
                after: self.io_timeout,
            },
            E::Io(source) => Error::Io { server, source },
            E::Server(message) => mcds_net::errors::item_error(key, &message, self.item_size_limit)
                .unwrap_or(Error::Server { server, message }),
            E::Rejected(message) if message.contains("non-numeric") => {
                Error::NonNumeric { key: key.display() }
            }
            E::Rejected(message) => Error::Protocol {
                server,
                message: format!("the server rejected a command: {message}"),
            },
            // The encoder refused a command mcds built from a validated key
            // and value: a bug in mcds, not the caller's input.
            E::Usage(message) => Error::Internal(format!("cannot encode a command: {message}")),
            E::Ambiguous { source, .. } => Error::Ambiguous {
                key: key.display(),
                server,
                reason: source.to_string(),
            },
            other => Error::Protocol {
                server,
                message: other.to_string(),
            },
        }
    }
}
