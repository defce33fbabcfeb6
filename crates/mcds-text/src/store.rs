//! [`TextStore`] and its [`Store`] impl: each op planned as text commands
//! for one server (or proxy) [`Unit`], sent by one engine
//! ([`TextStore::run_units`]) for single ops and pipelines alike, and its
//! replies decoded; ops that text lacks are finished by loops of single
//! exchanges.

use std::sync::Arc;
use std::time::Instant;

use mcds_core::{
    BoxFuture, CasOutcome, DeleteOutcome, Error, Io, Item, Key, Op, OwnedOp, Reply, Result, Store,
    Stored, Ttl, UpdateFn, Updated, backend, block_on, traffic,
};
use mcds_net::fallback::{self, NotStored, Start};
use mcds_net::transport::Endpoint;
use mcds_net::{Router, Version};

use crate::config::{Builder, Config};
use crate::conn::{Conn, is_timeout};
use crate::server::Server;
use crate::wire::{self, Expect, Line, ReadError, Resp};
use mcds_net::incarnation::{Incarnation, client_exptime};

/// A [`Store`] over memcached's classic text protocol: direct connections
/// to one server or a pool, or connections to a proxy. See the
/// [crate docs](crate) for what each path guarantees.
///
/// The store is `Send + Sync` and meant to be shared (`Arc`) by all threads
/// of a process; it keeps a small pool of connections per address.
///
/// ```
/// use mcds_core::{Key, Store, Ttl};
/// use mcds_text::TextStore;
/// # let server = mcds_testserver::MemcachedServer::start_default();
/// # let addr = server.addr();
///
/// // addr is "127.0.0.1:<port>" of a running memcached (any version)
/// let store = TextStore::connect(&addr)?;
/// let k = Key::new("visits")?;
/// assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 1);
/// assert_eq!(store.incr_or_init(&k, 1, 1, Ttl::secs(3600))?, 2);
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone)]
pub struct TextStore {
    // Each part shared (the store is a handful of `Arc`s, cloned cheaply):
    // the async API runs an op on a worker thread with a clone.
    servers: Arc<[Server]>,
    ids: Arc<[String]>,
    /// Where each key lives, computed once from `config.net.distribution`.
    router: Arc<Router>,
    config: Arc<Config>,
}

impl std::fmt::Debug for TextStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextStore")
            .field("servers", &self.ids)
            .field("config", &self.config)
            .finish()
    }
}

/// Request bytes per pipelined payload (one round trip each): the whole
/// payload is written before any reply is read, so it stays well under a
/// socket buffer.
const MAX_BATCH_REQUEST_BYTES: usize = 32 * 1024;

/// Keys per multi-key `gets`, and its longest command line (memcached 1.4
/// reads a line of at most 2048 bytes before it must see the newline).
const MAX_GET_KEYS: usize = 64;
const MAX_GET_LINE: usize = 2000;

/// Commands for one server whose replies are read together: one op, or a
/// run of gets coalesced into one `gets k1 k2 …`.
struct Unit {
    /// Positions of the ops in their batch.
    ops: Vec<usize>,
    /// The (first) key, as shown in errors.
    key: String,
    /// Whether a lost reply may mean the command was applied.
    side_effect: bool,
    wire: Vec<u8>,
    expects: Vec<Expect>,
}

/// A checked-out connection of one server for the length of one batch.
struct Session<'a> {
    server: &'a Server,
    config: &'a Config,
    conn: Option<Conn>,
    pooled: bool,
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

/// What the first exchange of an op gave.
enum Outcome {
    Done(Result<Reply>),
    /// Finish it with the loops of single exchanges: an append that
    /// answered NOT_STORED (missing or too large), an `incr_or_init` or
    /// `append_or_add` whose key was missing.
    Again,
}

fn unsupported(op: &'static str, hint: &'static str) -> Error {
    Error::Unsupported {
        op,
        backend: "memcached text protocol behind a proxy",
        hint,
    }
}

/// The hint of every op refused behind a proxy.
const PROXY_HINT: &str = "a proxy spreads keys over servers this client cannot see, so it cannot tell a server restart (which starts CAS ids again at 1) from a normal write, and an old CAS id could match a new item; connect to the memcached servers directly (TextStore without behind_proxy, or MemcachedStore) for CAS writes, conditional deletes, update() and the structures that need them (locks, set compaction, sketches)";

impl TextStore {
    /// Connect directly to one server or a comma-separated list
    /// (`"127.0.0.1:11211,127.0.0.1:11212"`) with the default settings.
    pub fn connect(servers: &str) -> Result<TextStore> {
        Builder::default().connect(servers.split(',').filter(|s| !s.trim().is_empty()))
    }

    /// Configure timeouts, limits, routing and proxy mode before
    /// connecting.
    pub fn builder() -> Builder {
        Builder::default()
    }

    pub(crate) fn new(servers: Vec<(String, Endpoint)>, config: Config) -> TextStore {
        let servers: Vec<Server> = servers
            .into_iter()
            .map(|(addr, endpoint)| Server::new(addr, endpoint))
            .collect();
        let ids: Vec<String> = servers.iter().map(|s| s.addr.clone()).collect();
        let router = Router::new(config.net.distribution, &ids);
        TextStore {
            servers: servers.into(),
            ids: ids.into(),
            router: Arc::new(router),
            config: Arc::new(config),
        }
    }

    /// The addresses, as configured.
    pub fn servers(&self) -> &[String] {
        &self.ids
    }

    /// Whether the addresses are proxies ([`Builder::behind_proxy`]).
    pub fn is_behind_proxy(&self) -> bool {
        self.config.behind_proxy
    }

    /// The index of the address that owns `key` (by the configured
    /// [`Distribution`](crate::Distribution)).
    pub fn server_for(&self, key: &Key) -> usize {
        if self.servers.len() == 1 {
            return 0;
        }
        self.router.server_for(key.as_bytes()) % self.servers.len()
    }

    /// The version the direct server at `index` reported on its latest
    /// connection, if one was made (`None` behind a proxy).
    pub fn server_version(&self, index: usize) -> Option<Version> {
        self.servers
            .get(index)
            .and_then(Server::incarnation)
            .map(|i| i.version)
    }

    fn check_size(&self, key: &Key, value_len: usize) -> Result<()> {
        backend::check_item_size(key, value_len, self.config.net.item_size_limit).map(drop)
    }

    fn open(&self, server: usize) -> Result<Session<'_>> {
        let (conn, pooled) = self.servers[server].checkout(&self.config)?;
        Ok(Session {
            server: &self.servers[server],
            config: &self.config,
            conn: Some(conn),
            pooled,
        })
    }

    // ---- planning and decoding ----

    /// The exptime for `ttl`: on the direct server's clock, or relative
    /// (absolute on this client's clock beyond 30 days) behind a proxy.
    fn exptime(inc: Option<&Incarnation>, ttl: Ttl) -> i64 {
        i64::from(inc.map_or_else(|| client_exptime(ttl), |i| i.exptime(ttl)))
    }

    /// `op` as the commands of its first exchange, for a server of
    /// incarnation `inc` (`None`: behind a proxy). Values over the item
    /// limit are [`Error::ValueTooLarge`], and ops that need CAS ids where
    /// there are none are [`Error::Unsupported`]: nothing is sent for
    /// either.
    fn plan(&self, op: &Op<'_>, index: usize, inc: Option<&Incarnation>) -> Result<Unit> {
        let key = op.key();
        let mut wire = Vec::new();
        let mut expects = vec![Expect::Line];
        let exptime = |ttl| Self::exptime(inc, ttl);
        // Direct: read the item back in the same payload, for its CAS id.
        let read_back = |wire: &mut Vec<u8>, expects: &mut Vec<Expect>| {
            if inc.is_some() {
                wire::retrieval(wire, true, &[key]);
                expects.push(Expect::Values(1));
            }
        };
        match *op {
            Op::Get(key) => {
                wire::retrieval(&mut wire, inc.is_some(), &[key]);
                expects = vec![Expect::Values(1)];
            }
            Op::Set { value, ttl, .. }
            | Op::Add { value, ttl, .. }
            | Op::Replace { value, ttl, .. } => {
                self.check_size(key, value.len())?;
                let verb = match op {
                    Op::Set { .. } => "set",
                    Op::Add { .. } => "add",
                    _ => "replace",
                };
                wire::storage(&mut wire, verb, key, exptime(ttl), value, None);
                read_back(&mut wire, &mut expects);
            }
            Op::Cas {
                value, ttl, cas, ..
            } => {
                self.check_size(key, value.len())?;
                let inc = Self::cas_incarnation(op, inc)?;
                let id = inc.cas_in(cas);
                wire::storage(&mut wire, "cas", key, exptime(ttl), value, Some(id));
                read_back(&mut wire, &mut expects);
            }
            Op::Append { value, .. } | Op::AppendOrAdd { value, .. } => {
                self.check_size(key, value.len())?;
                wire::storage(&mut wire, "append", key, 0, value, None);
            }
            Op::Prepend { value, .. } => {
                self.check_size(key, value.len())?;
                wire::storage(&mut wire, "prepend", key, 0, value, None);
            }
            Op::Incr { delta, .. } | Op::IncrOrInit { delta, .. } => {
                wire::arithmetic(&mut wire, true, key, delta);
            }
            Op::Decr { delta, .. } => wire::arithmetic(&mut wire, false, key, delta),
            Op::Delete(_) => wire::delete(&mut wire, key),
            Op::DeleteCas { cas, .. } => {
                let inc = Self::cas_incarnation(op, inc)?;
                // A CAS write of an empty item that is already expired
                // (exptime -1): deletes only on a CAS match, atomically.
                // STORED, EXISTS and NOT_FOUND mean deleted, changed, missing.
                wire::storage(&mut wire, "cas", key, -1, b"", Some(inc.cas_in(cas)));
            }
            Op::Touch { ttl, .. } => {
                let exp = u32::try_from(exptime(ttl)).unwrap_or(0);
                wire::touch(&mut wire, key, exp);
            }
        }
        Ok(Unit {
            ops: vec![index],
            key: key.display(),
            side_effect: op.has_side_effect(),
            wire,
            expects,
        })
    }

    /// The incarnation whose CAS ids `op` uses, or why there is none.
    fn cas_incarnation<'i>(op: &Op<'_>, inc: Option<&'i Incarnation>) -> Result<&'i Incarnation> {
        match inc {
            None => Err(unsupported(op.name(), PROXY_HINT)),
            Some(inc) if !inc.cas => Err(Error::Unsupported {
                op: op.name(),
                backend: "memcached started with -C: CAS disabled",
                hint: "restart memcached without -C: locks, CAS writes and update() need CAS ids",
            }),
            Some(inc) => Ok(inc),
        }
    }

    /// The reply of `op` from the replies to its [`plan`](Self::plan).
    fn decode(
        &self,
        op: &Op<'_>,
        resps: Vec<Resp>,
        inc: Option<&Incarnation>,
        server: usize,
    ) -> Outcome {
        let key = op.key();
        let mut resps = resps.into_iter();
        let first = resps.next();
        let line = match first {
            Some(Resp::Line(line)) => line,
            Some(Resp::Values(values)) if matches!(op, Op::Get(_)) => {
                if let Some(stray) = values.iter().find(|v| v.key != key.as_bytes()) {
                    return Outcome::Done(Err(self.unexpected(
                        server,
                        op.name(),
                        &format!("VALUE for another key, {}", wire::show(&stray.key)),
                    )));
                }
                return Outcome::Done(Ok(Reply::Item(item(values, key, inc))));
            }
            other => {
                return Outcome::Done(Err(self.unexpected(
                    server,
                    op.name(),
                    &format!("{other:?}"),
                )));
            }
        };
        if line.is_error() {
            return Outcome::Done(Err(self.line_error(
                server,
                key,
                op.has_side_effect(),
                line,
            )));
        }
        // The CAS id of the item a storage command just wrote (its read-back).
        let mut written = |value: &[u8]| read_back(resps.next(), key, value, inc);
        let reply = match (op, &line) {
            (Op::Set { value, .. }, Line::Stored) => Reply::Cas(written(value)),
            (Op::Add { value, .. } | Op::Replace { value, .. }, Line::Stored) => {
                Reply::Stored(Stored::Stored(written(value)))
            }
            (Op::Add { .. } | Op::Replace { .. }, Line::NotStored) => {
                Reply::Stored(Stored::NotStored)
            }
            (Op::Cas { value, .. }, Line::Stored) => {
                Reply::CasOutcome(CasOutcome::Stored(written(value)))
            }
            (Op::Cas { .. }, Line::Exists) => Reply::CasOutcome(CasOutcome::Exists),
            (Op::Cas { .. }, Line::NotFound) => Reply::CasOutcome(CasOutcome::NotFound),
            (Op::Append { .. } | Op::Prepend { .. }, Line::Stored) => Reply::Applied(true),
            (Op::AppendOrAdd { .. }, Line::Stored) => Reply::Done,
            (Op::Append { .. } | Op::Prepend { .. } | Op::AppendOrAdd { .. }, Line::NotStored) => {
                return Outcome::Again;
            }
            (Op::Incr { .. } | Op::Decr { .. }, Line::Number(n)) => Reply::Counter(Some(*n)),
            (Op::Incr { .. } | Op::Decr { .. }, Line::NotFound) => Reply::Counter(None),
            (Op::IncrOrInit { .. }, Line::Number(n)) => Reply::Value(*n),
            (Op::IncrOrInit { .. }, Line::NotFound) => return Outcome::Again,
            (Op::Delete(_), Line::Deleted) => Reply::Applied(true),
            (Op::Delete(_) | Op::Touch { .. }, Line::NotFound) => Reply::Applied(false),
            (Op::DeleteCas { .. }, Line::Stored) => Reply::Deleted(DeleteOutcome::Deleted),
            (Op::DeleteCas { .. }, Line::Exists) => Reply::Deleted(DeleteOutcome::Exists),
            (Op::DeleteCas { .. }, Line::NotFound) => Reply::Deleted(DeleteOutcome::NotFound),
            (Op::Touch { .. }, Line::Touched) => Reply::Applied(true),
            _ => {
                return Outcome::Done(Err(self.unexpected(
                    server,
                    op.name(),
                    &format!("{line:?}"),
                )));
            }
        };
        Outcome::Done(Ok(reply))
    }

    fn unexpected(&self, server: usize, what: &str, got: &str) -> Error {
        Error::Protocol {
            server: self.ids[server].clone(),
            message: format!("unexpected reply {got} to {what}"),
        }
    }

    /// The [`Error`] of an error reply (`ERROR`, `CLIENT_ERROR`,
    /// `SERVER_ERROR`) to a command on `key`.
    fn line_error(&self, server: usize, key: &Key, side_effect: bool, line: Line) -> Error {
        let addr = self.ids[server].clone();
        match line {
            Line::ClientError(m) if m.contains("non-numeric") => {
                Error::NonNumeric { key: key.display() }
            }
            Line::ServerError(m) => {
                if let Some(e) =
                    mcds_net::errors::item_error(key, &m, self.config.net.item_size_limit)
                {
                    e
                } else if self.config.behind_proxy && side_effect {
                    // twemproxy answers SERVER_ERROR when its own request to
                    // the server failed or timed out: that request may have
                    // been applied.
                    Error::Ambiguous {
                        key: key.display(),
                        server: addr,
                        reason: format!("the proxy answered SERVER_ERROR {m}"),
                    }
                } else {
                    Error::Server {
                        server: addr,
                        message: m,
                    }
                }
            }
            Line::ClientError(m) => Error::Protocol {
                server: addr,
                message: format!("the server rejected a command: CLIENT_ERROR {m}"),
            },
            other => Error::Protocol {
                server: addr,
                message: format!(
                    "the server does not know a command ({other:?}); touch needs memcached 1.4.8 or later"
                ),
            },
        }
    }

    // ---- the engine ----

    /// Send each server's units (in payloads of bounded size, every server
    /// written before any reply is read) and read their replies in order.
    /// One result per unit. A unit whose reply did not come is
    /// [`Error::Ambiguous`] if it has side effects; a server that failed is
    /// sent nothing more.
    fn run_units(
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
    fn not_sent(&self, server: usize, _unit: &Unit) -> Error {
        Error::Io {
            server: self.ids[server].clone(),
            source: std::io::Error::other(
                "not sent: an earlier part of this batch to the server failed",
            ),
        }
    }

    /// The error of a unit whose write or reply failed with `e`;
    /// `sent`: some of it had left.
    fn transport(&self, server: usize, unit: &Unit, e: &std::io::Error, sent: bool) -> Error {
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
    fn after_break(&self, server: usize, unit: &Unit, cause: &Error) -> Error {
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
    fn single(
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
    fn first_exchange(&self, op: &Op<'_>) -> Result<Outcome> {
        let server = self.server_for(op.key());
        let (resps, inc) = self.single(server, &|inc| self.plan(op, 0, inc))?;
        Ok(self.decode(op, resps, inc.as_ref(), server))
    }

    // ---- the ops that text lacks, finished by loops ----

    /// One status line from one command on `key`'s server.
    fn line(
        &self,
        key: &Key,
        side_effect: bool,
        encode: &dyn Fn(&mut Vec<u8>, Option<&Incarnation>),
    ) -> Result<Line> {
        let server = self.server_for(key);
        let (resps, _) = self.single(server, &|inc| {
            let mut wire = Vec::new();
            encode(&mut wire, inc);
            Ok(Unit {
                ops: vec![0],
                key: key.display(),
                side_effect,
                wire,
                expects: vec![Expect::Line],
            })
        })?;
        match resps.into_iter().next() {
            Some(Resp::Line(line)) if line.is_error() => {
                Err(self.line_error(server, key, side_effect, line))
            }
            Some(Resp::Line(line)) => Ok(line),
            other => Err(self.unexpected(server, "a command", &format!("{other:?}"))),
        }
    }

    /// `add` with no read-back: whether it stored.
    fn add_raw(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<bool> {
        match self.line(key, true, &|w, inc| {
            wire::storage(w, "add", key, Self::exptime(inc, ttl), value, None)
        })? {
            Line::Stored => Ok(true),
            Line::NotStored => Ok(false),
            other => Err(self.unexpected(self.server_for(key), "add", &format!("{other:?}"))),
        }
    }

    /// `append`/`prepend`: whether it stored.
    fn concat_once(&self, key: &Key, value: &[u8], verb: &'static str) -> Result<bool> {
        match self.line(key, true, &|w, _| {
            wire::storage(w, verb, key, 0, value, None)
        })? {
            Line::Stored => Ok(true),
            Line::NotStored => Ok(false),
            other => Err(self.unexpected(self.server_for(key), verb, &format!("{other:?}"))),
        }
    }

    /// `incr`: the new value, `None` on a miss.
    fn incr_once(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
        match self.line(key, true, &|w, _| wire::arithmetic(w, true, key, delta))? {
            Line::Number(n) => Ok(Some(n)),
            Line::NotFound => Ok(None),
            other => Err(self.unexpected(self.server_for(key), "incr", &format!("{other:?}"))),
        }
    }

    /// After an append answered NOT_STORED, one probe (`get`, the value's
    /// size from its header): the key is missing, or it exists and the
    /// append would exceed the item limit ([`Error::ValueTooLarge`]), or it
    /// exists and fits (created between the two commands).
    fn probe(&self, key: &Key, added: usize) -> Result<NotStored> {
        let server = self.server_for(key);
        let (resps, _) = self.single(server, &|_| {
            let mut wire = Vec::new();
            wire::retrieval(&mut wire, false, &[key]);
            Ok(Unit {
                ops: vec![0],
                key: key.display(),
                side_effect: false,
                wire,
                expects: vec![Expect::Values(1)],
            })
        })?;
        match resps.into_iter().next() {
            Some(Resp::Values(values)) => {
                match values.into_iter().find(|v| v.key == key.as_bytes()) {
                    None => Ok(NotStored::Missing),
                    Some(v) => {
                        self.check_size(key, v.data.len().saturating_add(added))?;
                        // The text protocol's `get` has no CAS id: the size
                        // is the version (an append that landed changes it).
                        Ok(NotStored::Exists(Some(v.data.len() as u64)))
                    }
                }
            }
            Some(Resp::Line(line)) if line.is_error() => {
                Err(self.line_error(server, key, false, line))
            }
            other => Err(self.unexpected(server, "get", &format!("{other:?}"))),
        }
    }

    /// The fallback loops' steps ([`fallback`]) on this store.
    fn steps(&self) -> TextSteps<'_> {
        TextSteps(self)
    }

    /// `append`/`prepend` after its first NOT_STORED: probe, and append
    /// again while the key exists and fits (it was created meanwhile).
    fn concat_after_miss(&self, key: &Key, value: &[u8], prepend: bool) -> Result<bool> {
        let limit = self.config.net.item_size_limit;
        let start = Start::AfterNotStored;
        block_on(fallback::concat(
            &mut self.steps(),
            Io::Blocking,
            key,
            value,
            prepend,
            start,
            limit,
        ))
    }

    /// `append_or_add` after its append missed: from the add.
    fn append_or_add_after_miss(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<()> {
        let limit = self.config.net.item_size_limit;
        let start = Start::AfterNotStored;
        block_on(fallback::append_or_add(
            &mut self.steps(),
            Io::Blocking,
            key,
            value,
            ttl,
            start,
            limit,
        ))
    }

    /// `incr_or_init` after its incr missed: add the initial value, or
    /// incr again if another client created the counter.
    fn incr_or_init_after_miss(
        &self,
        key: &Key,
        delta: u64,
        initial: u64,
        ttl: Ttl,
    ) -> Result<u64> {
        block_on(fallback::incr_or_init(
            &mut self.steps(),
            Io::Blocking,
            key,
            delta,
            initial,
            ttl,
        ))
    }

    /// Finish an op whose first exchange answered [`Outcome::Again`].
    fn finish(&self, op: &Op<'_>) -> Result<Reply> {
        match *op {
            Op::Append { key, value } => self
                .concat_after_miss(key, value, false)
                .map(Reply::Applied),
            Op::Prepend { key, value } => {
                self.concat_after_miss(key, value, true).map(Reply::Applied)
            }
            Op::AppendOrAdd { key, value, ttl } => self
                .append_or_add_after_miss(key, value, ttl)
                .map(|()| Reply::Done),
            Op::IncrOrInit {
                key,
                delta,
                initial,
                ttl,
            } => self
                .incr_or_init_after_miss(key, delta, initial, ttl)
                .map(Reply::Value),
            _ => Err(Error::Internal(format!(
                "nothing to finish for {}",
                op.name()
            ))),
        }
    }

    // ---- pipelines ----

    /// [`Store::pipeline`]: cut into segments where a key comes again
    /// after an op that may be finished late (and behind a proxy, wherever
    /// a key comes again: a proxy may send two commands on one key over
    /// different server connections), so ops on one key apply in order.
    fn run_pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        let late = |op: &Op<'_>| {
            self.config.behind_proxy
                || matches!(
                    op,
                    Op::Append { .. }
                        | Op::Prepend { .. }
                        | Op::AppendOrAdd { .. }
                        | Op::IncrOrInit { .. }
                )
        };
        let mut out = Vec::with_capacity(ops.len());
        for segment in mcds_net::batch::segments(ops, late) {
            out.extend(self.run_segment(&ops[segment]));
        }
        out
    }

    /// One segment: every server's share planned for the incarnation of its
    /// session, sent, decoded; then one pipelined round of `add`s for the
    /// `incr_or_init`/`append_or_add` ops whose key was missing, and the
    /// loops for what is left.
    fn run_segment(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        let n = self.servers.len();
        let mut results: Vec<Option<Result<Reply>>> = (0..ops.len()).map(|_| None).collect();
        let owner: Vec<usize> = ops.iter().map(|op| self.server_for(op.key())).collect();
        let mut sessions: Vec<Option<Session<'_>>> = (0..n).map(|_| None).collect();
        let mut incs: Vec<Option<Incarnation>> = vec![None; n];
        let mut open_errors: Vec<Option<Error>> = (0..n).map(|_| None).collect();
        for &server in &owner {
            if sessions[server].is_none() && open_errors[server].is_none() {
                match self.open(server) {
                    Ok(session) => {
                        incs[server] = session
                            .conn
                            .as_ref()
                            .and_then(|c| self.servers[server].effective(c));
                        sessions[server] = Some(session);
                    }
                    Err(e) => open_errors[server] = Some(e),
                }
            }
        }
        // Plan each server's share, coalescing runs of gets.
        let mut units: Vec<Vec<Unit>> = (0..n).map(|_| Vec::new()).collect();
        for (index, op) in ops.iter().enumerate() {
            let server = owner[index];
            if let Some(e) = &open_errors[server] {
                results[index] = Some(Err(e.duplicate()));
                continue;
            }
            let inc = incs[server].as_ref();
            if let Op::Get(key) = op
                && let Some(last) = units[server].last_mut()
                && extend_gets(last, ops, key, index)
            {
                continue;
            }
            match self.plan(op, index, inc) {
                Ok(unit) => units[server].push(unit),
                Err(e) => results[index] = Some(Err(e)),
            }
        }
        let replies = self.run_units(&mut sessions, &units);
        drop(sessions);
        let mut again = Vec::new();
        for (server, server_units) in units.iter().enumerate() {
            for (unit, result) in server_units.iter().zip(&replies[server]) {
                let result = match result {
                    Some(r) => r,
                    None => {
                        for &i in &unit.ops {
                            results[i] = Some(Err(Error::Internal(
                                "a pipelined unit got no result".into(),
                            )));
                        }
                        continue;
                    }
                };
                match result {
                    Err(e) => {
                        for &i in &unit.ops {
                            results[i] = Some(Err(e.duplicate()));
                        }
                    }
                    Ok(resps) if unit.ops.len() > 1 || matches!(ops[unit.ops[0]], Op::Get(_)) => {
                        // A (coalesced) retrieval: every VALUE must be for
                        // a key asked for.
                        if let Some(Resp::Values(values)) = resps.first()
                            && let Some(stray) = values.iter().find(|v| {
                                !unit.ops.iter().any(|&i| ops[i].key().as_bytes() == v.key)
                            })
                        {
                            let e = self.unexpected(
                                server,
                                "get",
                                &format!(
                                    "VALUE for a key not asked for, {}",
                                    wire::show(&stray.key)
                                ),
                            );
                            for &i in &unit.ops {
                                results[i] = Some(Err(e.duplicate()));
                            }
                            continue;
                        }
                        for &i in &unit.ops {
                            // Each get decodes the values of its own key.
                            let own: Vec<Resp> = resps
                                .iter()
                                .map(|r| match r {
                                    Resp::Values(values) => Resp::Values(
                                        values
                                            .iter()
                                            .filter(|v| v.key == ops[i].key().as_bytes())
                                            .cloned()
                                            .collect(),
                                    ),
                                    other => other.clone(),
                                })
                                .collect();
                            let outcome = self.decode(&ops[i], own, incs[server].as_ref(), server);
                            results[i] = Some(match outcome {
                                Outcome::Done(r) => r,
                                Outcome::Again => self.finish(&ops[i]),
                            });
                        }
                    }
                    Ok(resps) => {
                        let i = unit.ops[0];
                        match self.decode(&ops[i], resps.clone(), incs[server].as_ref(), server) {
                            Outcome::Done(r) => results[i] = Some(r),
                            Outcome::Again => again.push(i),
                        }
                    }
                }
            }
        }
        self.finish_batch(ops, &owner, &again, &mut results);
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| Err(Error::Internal("an op of a batch got no result".into())))
            })
            .collect()
    }

    /// The ops of a batch that answered [`Outcome::Again`]: the
    /// `incr_or_init`/`append_or_add` ones get their `add` in one more
    /// pipelined round (one round trip for all, not one per key); whatever
    /// is left runs its loop.
    fn finish_batch(
        &self,
        ops: &[Op<'_>],
        owner: &[usize],
        again: &[usize],
        results: &mut [Option<Result<Reply>>],
    ) {
        let n = self.servers.len();
        let adds: Vec<usize> = again
            .iter()
            .copied()
            .filter(|&i| matches!(ops[i], Op::IncrOrInit { .. } | Op::AppendOrAdd { .. }))
            .collect();
        let mut leftover: Vec<usize> = again
            .iter()
            .copied()
            .filter(|i| !adds.contains(i))
            .collect();
        if !adds.is_empty() {
            let mut sessions: Vec<Option<Session<'_>>> = (0..n).map(|_| None).collect();
            let mut units: Vec<Vec<Unit>> = (0..n).map(|_| Vec::new()).collect();
            for &i in &adds {
                let server = owner[i];
                if sessions[server].is_none() {
                    match self.open(server) {
                        Ok(s) => sessions[server] = Some(s),
                        Err(e) => {
                            results[i] = Some(Err(e));
                            continue;
                        }
                    }
                }
                let inc = sessions[server]
                    .as_ref()
                    .and_then(|s| s.conn.as_ref())
                    .and_then(|c| self.servers[server].effective(c));
                let (key, value, ttl) = match ops[i] {
                    Op::IncrOrInit {
                        key, initial, ttl, ..
                    } => (key, initial.to_string().into_bytes(), ttl),
                    Op::AppendOrAdd { key, value, ttl } => (key, value.to_vec(), ttl),
                    _ => continue,
                };
                let mut wire = Vec::new();
                wire::storage(
                    &mut wire,
                    "add",
                    key,
                    Self::exptime(inc.as_ref(), ttl),
                    &value,
                    None,
                );
                units[server].push(Unit {
                    ops: vec![i],
                    key: key.display(),
                    side_effect: true,
                    wire,
                    expects: vec![Expect::Line],
                });
            }
            let replies = self.run_units(&mut sessions, &units);
            drop(sessions);
            for (server, server_units) in units.iter().enumerate() {
                for (unit, result) in server_units.iter().zip(&replies[server]) {
                    let i = unit.ops[0];
                    let key = ops[i].key();
                    results[i] = Some(match result {
                        Some(Ok(resps)) => match resps.first() {
                            Some(Resp::Line(Line::Stored)) => Ok(match ops[i] {
                                Op::IncrOrInit { initial, .. } => Reply::Value(initial),
                                _ => Reply::Done,
                            }),
                            Some(Resp::Line(Line::NotStored)) => {
                                // Created meanwhile: the loop, in order.
                                leftover.push(i);
                                continue;
                            }
                            Some(Resp::Line(line)) if line.is_error() => {
                                Err(self.line_error(server, key, true, line.clone()))
                            }
                            other => Err(self.unexpected(server, "add", &format!("{other:?}"))),
                        },
                        Some(Err(e)) => Err(e.duplicate()),
                        None => Err(Error::Internal("a pipelined add got no result".into())),
                    });
                }
            }
        }
        leftover.sort_unstable();
        for i in leftover {
            results[i] = Some(match ops[i] {
                // Its add lost a race: the key exists, incr/append again.
                Op::IncrOrInit {
                    key,
                    delta,
                    initial,
                    ttl,
                } if adds.contains(&i) => match self.incr_once(key, delta) {
                    Ok(Some(v)) => Ok(Reply::Value(v)),
                    Ok(None) => self
                        .incr_or_init_after_miss(key, delta, initial, ttl)
                        .map(Reply::Value),
                    Err(e) => Err(e),
                },
                _ => self.finish(&ops[i]),
            });
        }
    }
}

/// Whether the stream is still in step after these replies: every reply
/// but `ERROR` and a `CLIENT_ERROR` other than memcached's arithmetic ones
/// (after which the server may have read a data block as a command).
fn in_step(resp: &Resp) -> bool {
    match resp {
        Resp::Line(Line::Error) => false,
        Resp::Line(Line::ClientError(m)) => {
            m.contains("non-numeric") || m.contains("numeric delta")
        }
        _ => true,
    }
}

/// Add the get of `key` (op `index`) to `last` if `last` is a run of gets
/// with room left.
fn extend_gets(last: &mut Unit, ops: &[Op<'_>], key: &Key, index: usize) -> bool {
    let is_gets = last.ops.iter().all(|&i| matches!(ops[i], Op::Get(_)));
    if !is_gets || last.ops.len() >= MAX_GET_KEYS || last.wire.len() + key.len() + 1 > MAX_GET_LINE
    {
        return false;
    }
    // "get[s] k1 k2\r\n": insert before the CRLF.
    let at = last.wire.len() - 2;
    let mut word = Vec::with_capacity(key.len() + 1);
    word.push(b' ');
    word.extend_from_slice(key.as_bytes());
    last.wire.splice(at..at, word);
    last.ops.push(index);
    let count = last.ops.len();
    last.expects = vec![Expect::Values(count)];
    true
}

/// Cut one server's units into payloads of at most
/// [`MAX_BATCH_REQUEST_BYTES`] (a single larger unit goes alone).
fn chunk(units: &[Unit]) -> Vec<std::ops::Range<usize>> {
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (pos, unit) in units.iter().enumerate() {
        let len = unit.wire.len();
        if bytes + len > MAX_BATCH_REQUEST_BYTES && pos > start {
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

/// The item of `key` in a retrieval reply (CAS ids unmasked for `inc`; 0
/// behind a proxy, where there are none).
fn item(values: Vec<wire::Value>, key: &Key, inc: Option<&Incarnation>) -> Option<Item> {
    let v = values.into_iter().find(|v| v.key == key.as_bytes())?;
    Some(Item {
        flags: v.flags,
        cas: inc.map_or(0, |i| i.cas_out(v.cas.unwrap_or(0))),
        value: v.data,
    })
}

/// The CAS id to answer for a storage command that stored `value` under
/// `key`, from the `gets` sent right after it: the item's id if it still
/// holds what was written (flags 0, same bytes), else an id that matches
/// nothing (another client wrote in between: a CAS write with our id must
/// not replace theirs). 0 behind a proxy and on servers without CAS.
fn read_back(resp: Option<Resp>, key: &Key, value: &[u8], inc: Option<&Incarnation>) -> u64 {
    let Some(inc) = inc else {
        return 0;
    };
    if !inc.cas {
        return 0;
    }
    match resp {
        Some(Resp::Values(values)) => match values.into_iter().find(|v| v.key == key.as_bytes()) {
            Some(v) if v.flags == 0 && v.data == value && v.cas.is_some_and(|c| c != 0) => {
                inc.cas_out(v.cas.unwrap_or(0))
            }
            _ => inc.never_matching(),
        },
        _ => inc.never_matching(),
    }
}

/// Run `work` on the `blocking` crate's thread pool, and count its round
/// trips on the awaiting thread.
async fn off_thread<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> T {
    let (out, traffic) = blocking::unblock(move || traffic::measure(work)).await;
    traffic::add(traffic);
    out
}

/// The single exchanges of the fallback loops ([`fallback`]): each one
/// blocking command on the key's server (the text store's exchanges
/// block; its async API runs them off the caller's executor).
struct TextSteps<'a>(&'a TextStore);

impl fallback::Steps for TextSteps<'_> {
    async fn concat(&mut self, _io: Io, key: &Key, value: &[u8], prepend: bool) -> Result<bool> {
        let verb = if prepend { "prepend" } else { "append" };
        self.0.concat_once(key, value, verb)
    }

    async fn add(&mut self, _io: Io, key: &Key, value: &[u8], ttl: Ttl) -> Result<bool> {
        self.0.add_raw(key, value, ttl)
    }

    async fn probe(&mut self, _io: Io, key: &Key, added: usize) -> Result<NotStored> {
        self.0.probe(key, added)
    }

    async fn incr(&mut self, _io: Io, key: &Key, delta: u64) -> Result<Option<u64>> {
        self.0.incr_once(key, delta)
    }
}

impl Store for TextStore {
    fn backend_name(&self) -> &'static str {
        if self.config.behind_proxy {
            "memcached-text-proxy"
        } else {
            "memcached-text"
        }
    }

    /// One exchange, except the ops that text lacks: `append`/`prepend`
    /// add a probe after NOT_STORED (missing, or too large?),
    /// `incr_or_init` and `append_or_add` run their loops after a miss.
    fn execute(&self, op: &Op<'_>) -> Result<Reply> {
        match self.first_exchange(op)? {
            Outcome::Done(r) => r,
            Outcome::Again => self.finish(op),
        }
    }

    /// [`execute`](Store::execute) on a worker thread of a shared pool
    /// (the `blocking` crate's), so the caller's executor thread never
    /// blocks: the op is copied (an [`OwnedOp`]) and the store cloned (a
    /// few `Arc`s). Its round trips are counted on the caller's thread.
    /// Dropping the future does not stop the op: it runs to its end.
    fn execute_async<'a>(&'a self, op: &'a Op<'a>) -> BoxFuture<'a, Result<Reply>> {
        let store = self.clone();
        let op = OwnedOp::from(op);
        Box::pin(off_thread(move || store.execute(&op.op())))
    }

    /// [`pipeline`](Store::pipeline) on a worker thread, as
    /// [`execute_async`](Store::execute_async).
    fn pipeline_async<'a>(&'a self, ops: &'a [Op<'a>]) -> BoxFuture<'a, Vec<Result<Reply>>> {
        let store = self.clone();
        let ops: Vec<OwnedOp> = ops.iter().map(OwnedOp::from).collect();
        Box::pin(off_thread(move || {
            let ops: Vec<Op<'_>> = ops.iter().map(OwnedOp::op).collect();
            store.pipeline(&ops)
        }))
    }

    /// [`supports_cas`](Store::supports_cas) on a worker thread (it may
    /// dial), as [`execute_async`](Store::execute_async).
    fn supports_cas_async<'a>(&'a self, key: &'a Key) -> BoxFuture<'a, Result<bool>> {
        let store = self.clone();
        let key = key.clone();
        Box::pin(off_thread(move || store.supports_cas(&key)))
    }

    /// Each server's share in payloads of pipelined commands, every server
    /// written before any reply is read: one round trip of latency for the
    /// batch (plus one for the `add`s of counters and logs it creates).
    fn pipeline(&self, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        self.run_pipeline(ops)
    }

    /// Behind a proxy: `false`, always (CAS ids cannot be tied to a
    /// server incarnation there). Direct: whether the server has CAS ids
    /// (not `-C`), as the handshake of a live connection found it.
    fn supports_cas(&self, key: &Key) -> Result<bool> {
        if self.config.behind_proxy {
            return Ok(false);
        }
        let server = self.server_for(key);
        let session = self.open(server)?;
        Ok(session
            .conn
            .as_ref()
            .and_then(|c| c.incarnation)
            .is_some_and(|i| i.cas))
    }

    /// Direct: by routing. Behind a proxy only a key with itself: the proxy
    /// places keys, and may apply commands to different servers in any
    /// order.
    fn colocated(&self, a: &Key, b: &Key) -> bool {
        if self.config.behind_proxy {
            return a == b;
        }
        self.server_for(a) == self.server_for(b)
    }

    fn item_size_limit(&self) -> usize {
        self.config.net.item_size_limit
    }

    /// The CAS loop of [`Store::update`]; behind a proxy
    /// [`Error::Unsupported`] before anything is read, whether or not the
    /// key exists: a read-modify-write that worked only while the key is
    /// missing (its first write is an `add`) would fail later instead of
    /// now.
    fn update(
        &self,
        key: &Key,
        ttl: Ttl,
        max_attempts: u32,
        f: &mut UpdateFn<'_>,
    ) -> Result<Updated> {
        if self.config.behind_proxy {
            return Err(unsupported("update", PROXY_HINT));
        }
        mcds_core::backend::update(self, key, ttl, max_attempts, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Value;
    use mcds_net::incarnation::Incarnation;

    fn store(behind_proxy: bool) -> TextStore {
        let config = Config {
            behind_proxy,
            ..Config::default()
        };
        TextStore::new(
            vec![(
                "127.0.0.1:1".into(),
                Endpoint::resolve("127.0.0.1:1").unwrap(),
            )],
            config,
        )
    }

    /// Every reply to every op decodes to a reply or an error, never a
    /// panic; what the op cannot get is a Protocol error (or the error the
    /// reply names).
    #[test]
    fn any_reply_to_any_op_is_a_reply_or_an_error() {
        let key = Key::new("k").unwrap();
        let other = Key::new("other").unwrap();
        let lines = [
            Line::Stored,
            Line::NotStored,
            Line::Exists,
            Line::NotFound,
            Line::Deleted,
            Line::Touched,
            Line::Number(7),
            Line::Error,
            Line::ClientError("cannot increment or decrement non-numeric value".into()),
            Line::ClientError("bad command line format".into()),
            Line::ServerError("object too large for cache".into()),
            Line::ServerError("out of memory storing object".into()),
            Line::ServerError("Connection refused".into()),
        ];
        let value = |k: &Key| Value {
            key: k.as_bytes().to_vec(),
            flags: 0,
            cas: Some(5),
            data: b"v".to_vec(),
        };
        let mut replies: Vec<Vec<Resp>> = Vec::new();
        for line in &lines {
            replies.push(vec![Resp::Line(line.clone())]);
            replies.push(vec![
                Resp::Line(line.clone()),
                Resp::Values(vec![value(&key)]),
            ]);
            replies.push(vec![Resp::Line(line.clone()), Resp::Line(Line::Error)]);
        }
        replies.push(vec![]);
        replies.push(vec![Resp::Values(vec![])]);
        replies.push(vec![Resp::Values(vec![value(&key)])]);
        replies.push(vec![Resp::Values(vec![value(&other)])]);
        let ops = [
            Op::Get(&key),
            Op::Set {
                key: &key,
                value: b"v",
                ttl: Ttl::Never,
            },
            Op::Add {
                key: &key,
                value: b"v",
                ttl: Ttl::Never,
            },
            Op::Replace {
                key: &key,
                value: b"v",
                ttl: Ttl::Never,
            },
            Op::Cas {
                key: &key,
                value: b"v",
                ttl: Ttl::Never,
                cas: 1,
            },
            Op::Append {
                key: &key,
                value: b"v",
            },
            Op::Prepend {
                key: &key,
                value: b"v",
            },
            Op::AppendOrAdd {
                key: &key,
                value: b"v",
                ttl: Ttl::Never,
            },
            Op::Incr {
                key: &key,
                delta: 1,
            },
            Op::Decr {
                key: &key,
                delta: 1,
            },
            Op::IncrOrInit {
                key: &key,
                delta: 1,
                initial: 0,
                ttl: Ttl::Never,
            },
            Op::Delete(&key),
            Op::DeleteCas { key: &key, cas: 1 },
            Op::Touch {
                key: &key,
                ttl: Ttl::Never,
            },
        ];
        let inc = Incarnation::new(Version(1, 4, 39), b"marker", true, None);
        for proxy in [false, true] {
            let s = store(proxy);
            let inc = (!proxy).then_some(inc);
            for op in &ops {
                for resps in &replies {
                    match s.decode(op, resps.clone(), inc.as_ref(), 0) {
                        Outcome::Done(Ok(_)) | Outcome::Again => {}
                        Outcome::Done(Err(e)) => assert!(
                            matches!(
                                e,
                                Error::Protocol { .. }
                                    | Error::Server { .. }
                                    | Error::NonNumeric { .. }
                                    | Error::ValueTooLarge { .. }
                                    | Error::OutOfMemory { .. }
                                    | Error::Ambiguous { .. }
                            ),
                            "{op:?} {resps:?}: {e:?}"
                        ),
                    }
                }
            }
        }
        // A VALUE for another key is not a hit.
        let s = store(false);
        assert!(matches!(
            s.decode(
                &ops[0],
                vec![Resp::Values(vec![value(&other)])],
                Some(&inc),
                0
            ),
            Outcome::Done(Err(Error::Protocol { .. }))
        ));
    }

    /// A write whose read-back finds another writer's item answers an id
    /// that matches nothing; its own item, the item's id.
    #[test]
    fn a_read_back_of_another_writers_item_matches_nothing() {
        let key = Key::new("k").unwrap();
        let inc = Incarnation::new(Version(1, 4, 39), b"marker", true, None);
        let read = |data: &[u8], flags| {
            Some(Resp::Values(vec![Value {
                key: b"k".to_vec(),
                flags,
                cas: Some(9),
                data: data.to_vec(),
            }]))
        };
        assert_eq!(
            read_back(read(b"v", 0), &key, b"v", Some(&inc)),
            inc.cas_out(9)
        );
        for other in [
            read(b"w", 0),
            read(b"v", 3),
            Some(Resp::Values(vec![])),
            None,
        ] {
            assert_eq!(
                inc.cas_in(read_back(other, &key, b"v", Some(&inc))),
                u64::MAX
            );
        }
        assert_eq!(read_back(read(b"v", 0), &key, b"v", None), 0);
    }
}
