//! The engine: each server's units sent in payloads of bounded size (every
//! server written before any reply is read) on a checked-out connection
//! ([`Session`]), their replies read in order, and what a failure means
//! for each unit.

use std::time::Instant;

use mcds_core::{Error, Op, Result, traffic};
use mcds_net::incarnation::Incarnation;

use crate::config::Config;
use crate::conn::{Conn, is_timeout};
use crate::plan::{Outcome, Unit};
use crate::server::Server;
use crate::store::TextStore;
use crate::wire::{Line, ReadError, Resp};

/// Request bytes per pipelined payload (one round trip each): the whole
/// payload is written before any reply is read, so it must fit the
/// connection's send buffer
/// ([`request_budget`](mcds_net::transport::request_budget), 208 KiB on a
/// default Linux; the budget's docs say why).
pub(crate) fn max_batch_request_bytes() -> usize {
    mcds_net::transport::request_budget()
}

/// A checked-out connection of one server for the length of one batch.
pub(crate) struct Session<'a> {
    pub(crate) server: &'a Server,
    pub(crate) config: &'a Config,
    pub(crate) conn: Option<Conn>,
    pub(crate) pooled: bool,
}

impl Session<'_> {
    fn discard(&mut self) {
        self.conn = None;
        self.server.drain();
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.server.put_back(conn, self.config);
        }
    }
}

impl TextStore {
    /// Send each server's units (in payloads of bounded size, every server
    /// written before any reply is read) and read their replies in order.
    /// One result per unit. A unit whose reply did not come is
    /// [`Error::Ambiguous`] if it has side effects; a server that failed is
    /// sent nothing more.
    pub(crate) fn run_units(
        &self,
        sessions: &mut [Option<Session<'_>>],
        units: &[Vec<Unit>],
    ) -> Vec<Vec<Option<Result<Vec<Resp>>>>> {
        let mut results: Vec<Vec<Option<Result<Vec<Resp>>>>> = units
            .iter()
            .map(|u| (0..u.len()).map(|_| None).collect())
            .collect();
        let chunks: Vec<Vec<std::ops::Range<usize>>> = units.iter().map(|u| chunk(u)).collect();
        let rounds = chunks.iter().map(Vec::len).max().unwrap_or(0);
        let mut failed = vec![false; units.len()];
        for round in 0..rounds {
            let deadline = Instant::now() + self.config.net.timing.io_timeout;
            let mut written = Vec::new();
            for (server, ranges) in chunks.iter().enumerate() {
                let Some(range) = ranges.get(round).cloned() else {
                    continue;
                };
                let part = &units[server][range.clone()];
                if failed[server] {
                    for (i, unit) in range.clone().zip(part) {
                        results[server][i] = Some(Err(self.not_sent(server, unit)));
                    }
                    continue;
                }
                let Some(session) = sessions[server].as_mut() else {
                    failed[server] = true;
                    for (i, unit) in range.clone().zip(part) {
                        results[server][i] = Some(Err(self.not_sent(server, unit)));
                    }
                    continue;
                };
                let mut payload = Vec::new();
                for unit in part {
                    payload.extend_from_slice(&unit.wire);
                }
                traffic::record(part.iter().map(|u| u.ops.len() as u64).sum());
                let Some(conn) = session.conn.as_mut() else {
                    failed[server] = true;
                    continue;
                };
                let (outcome, some_left) = conn.write(&payload, deadline);
                if let Err(e) = outcome {
                    session.discard();
                    failed[server] = true;
                    for (i, unit) in range.clone().zip(part) {
                        results[server][i] = Some(Err(self.transport(server, unit, &e, some_left)));
                    }
                    continue;
                }
                written.push((server, range));
            }
            for (server, range) in written {
                let Some(session) = sessions[server].as_mut() else {
                    continue; // written only through a session
                };
                let mut broken: Option<Error> = None;
                for i in range {
                    let unit = &units[server][i];
                    if let Some(e) = &broken {
                        results[server][i] = Some(Err(self.after_break(server, unit, e)));
                        continue;
                    }
                    let Some(conn) = session.conn.as_mut() else {
                        break;
                    };
                    let mut resps = Vec::with_capacity(unit.expects.len());
                    let mut error = None;
                    for &expect in &unit.expects {
                        match conn.read(expect, deadline) {
                            Ok(resp) => resps.push(resp),
                            Err(ReadError::Io(e)) => {
                                error = Some(self.transport(server, unit, &e, true));
                                break;
                            }
                            Err(ReadError::Bad(m)) => {
                                error = Some(Error::Protocol {
                                    server: self.ids[server].clone(),
                                    message: m,
                                });
                                break;
                            }
                        }
                    }
                    match error {
                        Some(e) => {
                            session.discard();
                            failed[server] = true;
                            broken = Some(e.duplicate());
                            results[server][i] = Some(Err(e));
                        }
                        None => {
                            if !resps.iter().all(in_step) {
                                // After ERROR or a CLIENT_ERROR the server
                                // may read a data block as a command: the
                                // replies that follow cannot be trusted.
                                session.discard();
                                failed[server] = true;
                                broken = Some(Error::Protocol {
                                    server: self.ids[server].clone(),
                                    message: format!(
                                        "the server rejected an earlier command of the batch ({resps:?})"
                                    ),
                                });
                            }
                            results[server][i] = Some(Ok(resps));
                        }
                    }
                }
            }
        }
        results
    }

    /// The error of a unit not sent because its server failed earlier.
    pub(crate) fn not_sent(&self, server: usize, _unit: &Unit) -> Error {
        Error::Io {
            server: self.ids[server].clone(),
            source: std::io::Error::other(
                "not sent: an earlier part of this batch to the server failed",
            ),
        }
    }

    /// The error of a unit whose write or reply failed with `e`;
    /// `sent`: some of it had left.
    pub(crate) fn transport(
        &self,
        server: usize,
        unit: &Unit,
        e: &std::io::Error,
        sent: bool,
    ) -> Error {
        let addr = self.ids[server].clone();
        if sent && unit.side_effect {
            Error::Ambiguous {
                key: unit.key.clone(),
                server: addr,
                reason: if is_timeout(e) {
                    format!("no reply within {:?}", self.config.net.timing.io_timeout)
                } else {
                    e.to_string()
                },
            }
        } else if is_timeout(e) {
            Error::Timeout {
                server: addr,
                after: self.config.net.timing.io_timeout,
            }
        } else {
            Error::Io {
                server: addr,
                source: std::io::Error::new(e.kind(), e.to_string()),
            }
        }
    }

    /// The error of a unit that was sent after one whose reply broke the
    /// stream: it may have been applied.
    pub(crate) fn after_break(&self, server: usize, unit: &Unit, cause: &Error) -> Error {
        if unit.side_effect {
            Error::Ambiguous {
                key: unit.key.clone(),
                server: self.ids[server].clone(),
                reason: format!("an earlier reply of the batch failed: {cause}"),
            }
        } else {
            cause.duplicate()
        }
    }

    /// One unit on the server that owns `key`, planned for the incarnation
    /// of the connection it is sent on: its replies and that incarnation. A
    /// pooled connection that fails with an I/O error (the request was not
    /// applied, or was a read) is replaced once.
    pub(crate) fn single(
        &self,
        server: usize,
        plan: &dyn Fn(Option<&Incarnation>) -> Result<Unit>,
    ) -> Result<(Vec<Resp>, Option<Incarnation>)> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let session = self.open(server)?;
            let pooled = session.pooled;
            let inc = session
                .conn
                .as_ref()
                .and_then(|c| self.servers[server].effective(c));
            let unit = plan(inc.as_ref())?;
            let mut sessions: Vec<Option<Session<'_>>> =
                (0..self.servers.len()).map(|_| None).collect();
            sessions[server] = Some(session);
            let mut units: Vec<Vec<Unit>> = (0..self.servers.len()).map(|_| Vec::new()).collect();
            units[server].push(unit);
            let result = self.run_units(&mut sessions, &units)[server][0]
                .take()
                .unwrap_or_else(|| Err(Error::Internal("a unit got no result".into())));
            match result {
                Err(Error::Io { .. }) if pooled && attempt == 1 => continue,
                Err(e) => return Err(e),
                Ok(resps) => return Ok((resps, inc)),
            }
        }
    }

    /// Plan, send and decode one op.
    pub(crate) fn first_exchange(&self, op: &Op<'_>) -> Result<Outcome> {
        let server = self.server_for(op.key());
        let (resps, inc) = self.single(server, &|inc| self.plan(op, 0, inc))?;
        Ok(self.decode(op, resps, inc.as_ref(), server))
    }
}

/// Cut one server's units into payloads of at most
/// [`max_batch_request_bytes`] (a single larger unit goes alone).
pub(crate) fn chunk(units: &[Unit]) -> Vec<std::ops::Range<usize>> {
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (pos, unit) in units.iter().enumerate() {
        let len = unit.wire.len();
        if bytes + len > max_batch_request_bytes() && pos > start {
            chunks.push(start..pos);
            (start, bytes) = (pos, 0);
        }
        bytes += len;
    }
    if start < units.len() {
        chunks.push(start..units.len());
    }
    chunks
}

/// Whether the stream is still in step after these replies: every reply
/// but `ERROR` and a `CLIENT_ERROR` other than memcached's arithmetic ones
/// (after which the server may have read a data block as a command).
pub(crate) fn in_step(resp: &Resp) -> bool {
    match resp {
        Resp::Line(Line::Error) => false,
        Resp::Line(Line::ClientError(m)) => {
            m.contains("non-numeric") || m.contains("numeric delta")
        }
        _ => true,
    }
}
