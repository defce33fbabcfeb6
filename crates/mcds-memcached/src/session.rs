//! A session: one server's connection, checked out for the length of one
//! store operation; its exchanges (redialing a stale pooled connection
//! where that is safe), and what a failure means for the request
//! ([`ErrorMap`]): not sent (`Io`/`Timeout`, safe to retry), sent without
//! a reply (`Ambiguous`), or answered with an error.

use std::io;
use std::time::{Duration, Instant};

use mcds_core::{Error, Key, Op, Reply, traffic};
use memcache::exp::{MetaCommand, MetaCommandResult};

use crate::codec;
use crate::config::Config;
use crate::conn::{Conn, is_timeout};
use crate::incarnation::Incarnation;
use crate::server::Server;

/// A checked-out connection to one server for the length of one store
/// operation (which may take several exchanges on old servers).
pub(crate) struct Session<'a> {
    server: &'a Server,
    config: &'a Config,
    conn: Option<Conn>,
    /// Whether `conn` came from the pool and has not yet answered anything:
    /// a failure before the request left means it was stale, redial once.
    pooled: bool,
    /// The incarnation the session's commands were encoded for (see
    /// [`incarnation`](Self::incarnation)).
    pinned: Option<Incarnation>,
}

impl<'a> Session<'a> {
    pub(crate) fn open(server: &'a Server, config: &'a Config) -> Result<Session<'a>, Error> {
        let (conn, pooled) = server.checkout(config)?;
        Ok(Session {
            server,
            config,
            conn: Some(conn),
            pooled,
            pinned: None,
        })
    }

    /// One op in one exchange: encoded for this session's incarnation, sent,
    /// and its reply decoded as a pipelined one would be. The connection
    /// goes back to the pool before the reply is decoded.
    pub(crate) fn execute(mut self, op: &Op<'_>) -> Result<Reply, Error> {
        let incarnation = self.incarnation()?;
        let encoded = codec::encode(op, &incarnation, self.config.item_size_limit)?;
        let r = self.exchange(op.key(), &encoded.command)?;
        let server = self.server;
        drop(self);
        codec::decode(op, Some(r), &incarnation, &server.addr)
    }

    /// The incarnation of the server this session talks to (dialing first
    /// if needed). Commands carrying CAS ids are encoded for it, so the
    /// session is pinned to it: if a redial (after a stale pooled
    /// connection) reaches another incarnation, the command is not sent and
    /// fails with [`Error::Io`], safe to retry.
    pub(crate) fn incarnation(&mut self) -> Result<Incarnation, Error> {
        let mut incarnation = self.conn()?.incarnation;
        self.pinned = Some(incarnation);
        // The server's best clock estimate, not just this connection's.
        if let Some(clock) = self.server.clock() {
            incarnation.clock = Some(clock);
        }
        Ok(incarnation)
    }

    fn conn(&mut self) -> Result<&mut Conn, Error> {
        let conn = match self.conn.take() {
            Some(conn) => conn,
            None => {
                let conn = self.server.dial(self.config)?;
                self.pooled = false;
                if self.pinned.is_some_and(|p| p != conn.incarnation) {
                    self.pinned = None;
                    self.conn = Some(conn);
                    return Err(Error::Io {
                        server: self.server.addr.clone(),
                        source: io::Error::other(
                            "not sent: the server restarted or was flushed (its incarnation marker changed) while the command was being prepared",
                        ),
                    });
                }
                conn
            }
        };
        Ok(self.conn.insert(conn))
    }

    /// One request/response exchange, bounded by one `io_timeout` in all
    /// (send and reply together). A failure before the request was sent is
    /// `Io`/`Timeout` (not applied); after, it is `Ambiguous` when the
    /// command has side effects.
    pub(crate) fn exchange(
        &mut self,
        key: &Key,
        command: &MetaCommand,
    ) -> Result<MetaCommandResult, Error> {
        traffic::record(1);
        let deadline = Instant::now() + self.config.io_timeout;
        loop {
            let was_pooled = self.pooled;
            let sent = self.armed(deadline)?.send(command);
            if let Err((e, some_left)) = sent {
                let retry = self.pooled && !some_left && is_transport(&e);
                self.discard();
                if retry {
                    continue;
                }
                // Part of the command (maybe all of it) left: it may have
                // been applied.
                return Err(self
                    .errors()
                    .map(key, e, some_left && command.has_side_effect()));
            }
            let received = self.armed(deadline)?.receive();
            self.pooled = false;
            let error = match received {
                Ok(result) => return Ok(result),
                Err(e) => e,
            };
            // Whatever went wrong, this connection is no longer trusted: an
            // error reply to a command with a data block may leave the data
            // unread, and a transport error leaves the stream mid-reply.
            self.discard();
            if matches!(
                error,
                memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)
            ) {
                // The server answered: the command was refused, not lost.
                return Err(self.errors().map(key, error, false));
            }
            self.server.drain();
            // A pooled connection the server closed while it sat idle (a
            // restart): a read is safe to send again, once.
            if was_pooled && is_transport(&error) && !command.has_side_effect() {
                continue;
            }
            return Err(self.errors().map(key, error, command.has_side_effect()));
        }
    }

    /// The server's `stats` listing ([`Conn::stats`]), each read and write
    /// bounded by what is left of one `io_timeout` (the listing is one small
    /// reply, a few KiB). A pooled connection that fails with a transport error
    /// (the server closed it while it sat idle) is replaced once, as a read
    /// may be sent again. A failure is [`Error::Timeout`], [`Error::Io`], or
    /// [`Error::Protocol`] for a reply that is not a stats listing.
    pub(crate) fn stats(mut self) -> Result<crate::Stats, Error> {
        traffic::record(1);
        let deadline = Instant::now() + self.config.io_timeout;
        loop {
            let was_pooled = self.pooled;
            let error = match self.armed(deadline)?.stats() {
                Ok(stats) => return Ok(stats),
                Err(error) => error,
            };
            // The stream may be mid-reply: this connection is done.
            self.discard();
            self.server.drain();
            if was_pooled && !is_timeout(&error) && error.kind() != io::ErrorKind::InvalidData {
                continue;
            }
            let server = self.server.addr.clone();
            return Err(if is_timeout(&error) {
                Error::Timeout {
                    server,
                    after: self.config.io_timeout,
                }
            } else if error.kind() == io::ErrorKind::InvalidData {
                Error::Protocol {
                    server,
                    message: error.to_string(),
                }
            } else {
                Error::Io {
                    server,
                    source: error,
                }
            });
        }
    }

    /// The connection (dialed if needed), its reads and writes bounded by
    /// `deadline` (at least a millisecond from now).
    fn armed(&mut self, deadline: Instant) -> Result<&mut Conn, Error> {
        let deadline = deadline.max(Instant::now() + Duration::from_millis(1));
        let conn = self.conn()?;
        conn.set_deadline(deadline);
        Ok(conn)
    }

    /// Write a pre-encoded pipeline payload (one `write` loop on the
    /// socket), redialing once if a pooled connection fails before any byte
    /// left.
    pub(crate) fn send_payload(
        &mut self,
        payload: &[u8],
        deadline: Instant,
    ) -> Result<(), SendError> {
        loop {
            let conn = self.armed(deadline).map_err(SendError::Dial)?;
            let (outcome, written) = conn.write_payload(payload);
            match outcome {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let retry = self.pooled && written == 0 && !is_timeout(&e);
                    self.discard();
                    if retry {
                        continue;
                    }
                    self.server.drain();
                    return Err(SendError::Io {
                        error: e,
                        sent: written > 0,
                    });
                }
            }
        }
    }

    /// Read one reply of a pipeline sent with [`send_payload`](Self::send_payload).
    /// `ERROR`/`CLIENT_ERROR`/`SERVER_ERROR` lines come back as
    /// `Err(Rejected | Server)` with the stream still in step; any other
    /// error leaves it unusable (the connection is dropped).
    pub(crate) fn receive(
        &mut self,
        deadline: Instant,
    ) -> Result<MetaCommandResult, memcache::exp::Error> {
        let conn = match self.armed(deadline) {
            Ok(conn) => conn,
            Err(_) => return Err(io::Error::from(io::ErrorKind::NotConnected).into()),
        };
        let received = conn.receive();
        self.pooled = false;
        if let Err(e) = &received
            && !matches!(
                e,
                memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)
            )
        {
            self.discard();
            self.server.drain();
        }
        received
    }

    /// The server's address, as configured.
    pub(crate) fn server_addr(&self) -> &'a str {
        &self.server.addr
    }

    /// How this session's failures are reported: its server, its timeout,
    /// its item size limit.
    pub(crate) fn errors(&self) -> ErrorMap<'a> {
        ErrorMap {
            server: &self.server.addr,
            io_timeout: self.config.io_timeout,
            item_size_limit: self.config.item_size_limit,
        }
    }

    /// Drop the connection instead of returning it to the pool.
    pub(crate) fn discard(&mut self) {
        self.conn = None;
        self.pooled = false;
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.server.put_back(conn, self.config);
        }
    }
}

/// Why [`Session::send_payload`] failed.
pub(crate) enum SendError {
    /// No connection could be made (nothing was sent).
    Dial(Error),
    /// Writing failed; `sent` if some bytes had left.
    Io { error: io::Error, sent: bool },
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
            E::Server(message) => {
                // memcached words these differently per command: "out of
                // memory storing object" (ms), "Out of memory allocating new
                // item" (ma creating a counter).
                let lower = message.to_ascii_lowercase();
                if lower.contains("too large") {
                    Error::ValueTooLarge {
                        key: key.display(),
                        size: 0,
                        limit: self.item_size_limit,
                    }
                } else if lower.contains("out of memory") {
                    Error::OutOfMemory { key: key.display() }
                } else {
                    Error::Server { server, message }
                }
            }
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
