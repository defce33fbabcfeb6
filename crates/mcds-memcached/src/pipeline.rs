//! [`Store::pipeline`] on memcached: each server's share of a batch is one
//! payload of meta commands, each tagged `O<position>`, quiet (`q`) where a
//! success reply carries nothing, and closed by `mn`. Payloads go to every
//! server before any reply is read, so the batch costs one round trip of
//! latency. Replies are matched by opaque; the run ends at `MN`.
//!
//! A share made only of reads of items (a `get_multi`) goes instead as
//! multi-key `gets` lines, which cost memcached about half as much CPU per
//! key (see `gets_payload`); their replies are matched by the key each
//! `VALUE` names (`read_gets_replies`).
//!
//! A share larger than the request budget goes as several payloads, one
//! round at a time. **Overlapped rounds:** in a batch of reads only, a
//! round that spans connections is sent before the replies of the round
//! before it are processed, so the connections' helper threads read it
//! while the caller matches the last one's replies (a write's round waits,
//! as memcached must see a connection's writes after what failed before). A share of reads only (a `get_multi` of thousands of
//! keys) sends a round's payloads on several of the server's connections
//! at once, one each: memcached serves each connection on one of its
//! worker threads, so two connections are served in parallel. It halved
//! `CounterMap::get_all` of 100,000 fields (see `spread`). A share with
//! writes stays on one connection, whose order memcached keeps.
//!
//! Quiet mode on memcached 1.6 suppresses `EN` of `mg` and `HD` of `ms`/`md`;
//! those ops come back only when they miss or fail. Ops whose reply carries
//! a value or a CAS id (`set`, `add`, `cas`, `incr`, ...) are sent without
//! `q`. A `CLIENT_ERROR`/`SERVER_ERROR` line has no opaque: it belongs to one
//! of the unanswered commands between the replies around it, and is
//! attributed exactly when that is determined, otherwise every candidate
//! gets an [`Error::Ambiguous`].

use std::time::Instant;

use mcds_core::{Error, Io, Key, Op, Reply, Result, Stored, traffic};
use mcds_net::incarnation::Incarnation;
use memcache::exp::ReturnCode;

use crate::codec;
use crate::conn::is_timeout;
use crate::reply::MetaReply;
use crate::session::{ErrorMap, Session};
use crate::store::MemcachedStore;

/// One op, encoded for its server into that server's buffer.
pub(crate) struct Planned {
    /// Position in the caller's batch.
    pub(crate) index: usize,
    /// Where its command (with its `O<index>` and `q` flags) stands in the
    /// server's buffer.
    pub(crate) wire: std::ops::Range<usize>,
    /// The bytes it adds to a payload (what [`chunk`] sizes payloads by):
    /// its command's, or its key and a space in a `gets` line.
    pub(crate) bytes: usize,
    pub(crate) quiet: bool,
    /// A text write and its tagged `mg` ([`codec::is_pair`]): two replies,
    /// the first without an opaque.
    pub(crate) pair: bool,
}

impl Planned {
    /// `op`, at `index` in its batch, encoded for a server `incarnation`:
    /// tagged `O<index>`, and quiet where its success reply carries nothing.
    /// Encoded once, at the end of `buf` (one buffer for all the ops of a
    /// server: no allocation per op): the bytes both size the payloads and
    /// are sent.
    pub(crate) fn new(
        op: &Op<'_>,
        index: usize,
        incarnation: &Incarnation,
        item_size_limit: usize,
        buf: &mut Vec<u8>,
    ) -> Result<Planned> {
        let opaque = u32::try_from(index).map_err(|_| {
            Error::InvalidArgument(format!(
                "a pipeline of more than {} ops; split it",
                u32::MAX
            ))
        })?;
        let start = buf.len();
        let quiet = codec::encode_wire(op, incarnation, item_size_limit, buf, opaque, true)?;
        Ok(Planned {
            index,
            wire: start..buf.len(),
            bytes: buf.len() - start,
            quiet,
            pair: codec::is_pair(op, incarnation),
        })
    }

    /// A get at `index` in its batch, to be sent in a `gets` line
    /// ([`gets_payload`] writes its key there): nothing is encoded ahead.
    /// Its bytes: the key, a space, and a share of the line's `gets` and
    /// line end (a line holds 7 keys or more).
    pub(crate) fn in_gets_line(key: &Key, index: usize) -> Planned {
        Planned {
            index,
            wire: 0..0,
            bytes: key.len() + 2,
            quiet: true,
            pair: false,
        }
    }
}

/// What happened to one op on the wire.
pub(crate) enum Outcome {
    /// A reply line (with its data block).
    Reply(MetaReply),
    /// No reply before `MN`: a quiet success.
    Quiet,
    /// Run it again on its own, through the ordinary method (an `NS` that
    /// needs a probe, or a command the server version lacks).
    Again,
    Failed(Error),
}

impl MemcachedStore {
    /// The [`Store::pipeline`] of this backend (see the module docs).
    ///
    /// Ops that may have to be finished after their batch (an append-like
    /// op answering NS) must not be followed by
    /// another op on the same key in the same batch, or the two would be
    /// applied out of order: such a batch is cut into consecutive segments
    /// there (structures never repeat a key in a batch, so they never pay
    /// for this).
    pub(crate) async fn run_pipeline(&self, io: Io, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        if let Err(e) = self.pool_gate(io).await {
            return ops.iter().map(|_| Err(e.duplicate())).collect();
        }
        let late = |op: &Op<'_>| {
            matches!(
                op,
                Op::Append { .. } | Op::Prepend { .. } | Op::AppendOrAdd { .. }
            )
        };
        let mut out = Vec::with_capacity(ops.len());
        for segment in mcds_net::batch::segments(ops, late) {
            out.extend(self.run_segment(io, &ops[segment]).await);
        }
        out
    }

    /// One segment of a batch: no key follows an op that may finish late.
    async fn run_segment(&self, io: Io, ops: &[Op<'_>]) -> Vec<Result<Reply>> {
        let mut outcomes: Vec<Option<Outcome>> = (0..ops.len()).map(|_| None).collect();
        // Each server's session is opened first: its ops are encoded for the
        // incarnation it reaches (CAS ids, version), and pinned to it.
        let owner: Vec<usize> = if self.servers.len() == 1 {
            vec![0; ops.len()]
        } else {
            ops.iter().map(|op| self.server_for(op.key())).collect()
        };
        let mut counts = vec![0usize; self.servers.len()];
        for &server in &owner {
            counts[server] += 1;
        }
        let mut groups: Vec<Vec<Planned>> = counts.iter().map(|&n| Vec::with_capacity(n)).collect();
        // A share of 2 or more reads of items goes as multi-key `gets`
        // lines (see `gets_payload`), whose keys are written when its
        // payloads are made.
        let mut multiget: Vec<bool> = counts.iter().map(|&n| n >= 2).collect();
        for (op, &server) in ops.iter().zip(&owner) {
            if !matches!(op, Op::Get(_)) {
                multiget[server] = false;
            }
        }
        // Each server's commands, one after the other (see `Planned::wire`),
        // with room for that many counter increments (about 64 bytes each)
        // made at once: grown by doubling, a batch of 100 was reallocated
        // ten times.
        let mut wires: Vec<Vec<u8>> = counts
            .iter()
            .zip(&multiget)
            .map(|(&n, &gets)| Vec::with_capacity(if gets { 0 } else { n * 64 }))
            .collect();
        let mut sessions: Vec<Option<Session<'_>>> =
            (0..self.servers.len()).map(|_| None).collect();
        let mut opened: Vec<Option<Result<Incarnation>>> =
            (0..self.servers.len()).map(|_| None).collect();
        // A pipeline over several servers reads its tickets in turn, so its
        // sessions only queue (`Session::queue_only`), from the start: on
        // shared lanes, dialed here, before any round's deadline is set (an
        // adversarial review saw a frozen server's dial, made inside a
        // round, leave the healthy server's payload no time at all).
        let several = counts.iter().filter(|&&n| n > 0).count() > 1;
        for &server in &owner {
            if opened[server].is_none() {
                let opening = match Session::open(&self.servers[server], &self.config) {
                    Ok(mut session) => {
                        session.queue_only(several);
                        match session.incarnation_io(io).await {
                            Ok(incarnation) => {
                                sessions[server] = Some(session);
                                Ok(incarnation)
                            }
                            Err(e) => Err(e),
                        }
                    }
                    Err(e) => Err(e),
                };
                opened[server] = Some(opening);
            }
        }
        let incarnations: Vec<Option<Incarnation>> = opened
            .iter()
            .map(|o| o.as_ref().and_then(|r| r.as_ref().ok()).copied())
            .collect();
        for (index, op) in ops.iter().enumerate() {
            let server = owner[index];
            let incarnation = match &opened[server] {
                Some(Ok(incarnation)) => *incarnation,
                Some(Err(e)) => {
                    outcomes[index] = Some(Outcome::Failed(e.duplicate()));
                    continue;
                }
                None => continue, // every owner was opened above
            };
            if multiget[server] {
                groups[server].push(Planned::in_gets_line(op.key(), index));
                continue;
            }
            match Planned::new(
                op,
                index,
                &incarnation,
                self.config.net.item_size_limit,
                &mut wires[server],
            ) {
                Ok(p) => groups[server].push(p),
                Err(e) => outcomes[index] = Some(Outcome::Failed(e)),
            }
        }
        // Each server's share, cut into payloads of bounded size: the whole
        // payload is written before any reply is read.
        let mut chunks: Vec<Vec<&[Planned]>> = groups.iter().map(|g| chunk(g)).collect();
        // A share of reads too large for one payload goes out on several of
        // the server's connections at once (see `spread`): `lanes[server]`
        // are its sessions, the first the one opened above; a round sends
        // one payload on each.
        let mut lanes: Vec<Vec<Session<'_>>> = sessions
            .into_iter()
            .map(|s| s.into_iter().collect())
            .collect();
        for (server, sessions) in lanes.iter_mut().enumerate() {
            let reads = groups[server]
                .iter()
                .all(|p| !ops[p.index].has_side_effect());
            if reads && let Some(pinned) = incarnations[server] {
                self.spread(io, server, pinned, chunks[server].len(), sessions)
                    .await;
            }
        }
        let width: Vec<usize> = lanes.iter().map(|l| l.len().max(1)).collect();
        // Whether a server's connection failed: its later payloads are not
        // sent (its sessions stay until the round's replies are read).
        let mut failed_server = vec![false; self.servers.len()];
        let rounds = (0..self.servers.len())
            .map(|s| chunks[s].len().div_ceil(width[s]))
            .max()
            .unwrap_or(0);
        // A batch of reads only sends each round that spans connections
        // before the replies of the round before it are read (see
        // "Overlapped rounds" in the module docs): `sent` rounds are out,
        // their tickets in `out`, oldest first.
        let reads_only = ops.iter().all(|op| !op.has_side_effect());
        let mut sent = 0;
        let mut out: std::collections::VecDeque<Vec<Sent<'_, '_>>> = Default::default();
        for round in 0..rounds {
            // A round that spans servers (or connections) is queued on each
            // connection as async requests, written and read by the
            // connections' helper threads at once: a caller that drove one
            // server's connection while waiting for another's reply would
            // hold up every caller of the first behind a slow second one.
            let spans = |r: usize, chunks: &[Vec<&[Planned]>]| {
                (0..self.servers.len())
                    .map(|s| {
                        let from = (r * width[s]).min(chunks[s].len());
                        (from..(from + width[s]).min(chunks[s].len())).len()
                    })
                    .sum::<usize>()
                    > 1
            };
            let last = if reads_only && round + 1 < rounds && spans(round + 1, &chunks) {
                round + 1
            } else {
                round
            };
            while sent <= last {
                let r = sent;
                sent += 1;
                // Every server's payload is queued (and written, where this
                // caller drives the lane) before any reply is read; the tickets
                // are then read in server order, which keeps two pipelines
                // waiting on each other's lanes from waiting forever.
                let deadline = Instant::now() + self.config.net.timing.io_timeout;
                let io = if spans(r, &chunks) { Io::Async } else { io };
                let mut tickets = Vec::new();
                for server in 0..self.servers.len() {
                    for lane in 0..width[server] {
                        let at = r * width[server] + lane;
                        let Some(part) = chunks[server].get(at).copied() else {
                            break;
                        };
                        let failed = match lanes[server].get_mut(lane) {
                            Some(session) if !failed_server[server] => {
                                // (Read in turn below: queued for the
                                // helper threads, see `Session::queue_only`.)
                                session.queue_only(io == Io::Async && spans(r, &chunks));
                                let (payload, lines) = if multiget[server] {
                                    gets_payload(part, ops)
                                } else {
                                    (payload(part, &wires[server]), Vec::new())
                                };
                                traffic::record(part.len() as u64);
                                let expect = (part.len() + lines.len() + 1, !lines.is_empty());
                                match session.submit_batch(io, payload, expect, deadline).await {
                                    Ok(ticket) => {
                                        tickets.push(Sent {
                                            server,
                                            lane,
                                            part,
                                            lines,
                                            expect,
                                            ticket,
                                            io,
                                            deadline,
                                        });
                                        continue;
                                    }
                                    Err(e) => e,
                                }
                            }
                            _ => Error::Io {
                                server: self.ids[server].clone(),
                                source: std::io::Error::other(
                                    "not sent: the server's session had failed",
                                ),
                            },
                        };
                        for p in part {
                            outcomes[p.index] = Some(Outcome::Failed(failed.duplicate()));
                        }
                        // The server failed: its later payloads are not sent.
                        self.skip_later(&mut chunks[server], at, server, &mut outcomes);
                        failed_server[server] = true;
                    }
                }
                out.push_back(tickets);
            }
            let tickets = out.pop_front().unwrap_or_default();
            for Sent {
                server,
                lane,
                part,
                lines,
                expect,
                ticket,
                io,
                deadline,
            } in tickets
            {
                // (A server with a ticket has both.)
                let (Some(session), Some(incarnation)) =
                    (lanes[server].get_mut(lane), incarnations[server])
                else {
                    continue;
                };
                let replies = session.batch_replies(io, ticket, expect, deadline).await;
                // The part's own entries of `outcomes` (all `None` until
                // now): a slice of them when its ops are consecutive in the
                // batch (with one server, unless an op was refused before
                // sending), else a list scattered back after.
                let (Some(first), Some(last)) = (part.first(), part.last()) else {
                    continue; // (a part is never empty: see `chunk`)
                };
                let (first, last) = (first.index, last.index);
                let consecutive = last - first + 1 == part.len();
                let mut scattered: Vec<Option<Outcome>> = Vec::new();
                let mine: &mut [Option<Outcome>] = if consecutive {
                    &mut outcomes[first..=last]
                } else {
                    scattered.resize_with(part.len(), || None);
                    &mut scattered
                };
                let broken = match replies {
                    Ok(delivery) if !delivery.sent => {
                        let error = PartError::Write {
                            server: self.ids[server].clone(),
                            error: unsent_reason(&delivery),
                            sent: false,
                            timeout: self.config.net.timing.io_timeout,
                        };
                        for (p, o) in part.iter().zip(mine) {
                            *o = Some(Outcome::Failed(error.for_op(&ops[p.index])));
                        }
                        true
                    }
                    Ok(delivery) => {
                        let errors = session.errors();
                        let mut replies = Delivered {
                            generation: delivery.generation,
                            replies: delivery.replies.into_iter(),
                            session,
                        };
                        if lines.is_empty() {
                            read_replies(&mut replies, &errors, &incarnation, part, ops, mine)
                        } else {
                            read_gets_replies(&mut replies, &errors, part, ops, &lines, mine)
                        }
                    }
                    Err(e) => {
                        for o in mine {
                            *o = Some(Outcome::Failed(e.duplicate()));
                        }
                        true
                    }
                };
                for (p, outcome) in part.iter().zip(scattered) {
                    outcomes[p.index] = outcome;
                }
                if broken {
                    // Sending more on a new connection could overtake what
                    // the server still has queued on the old one.
                    // (With the rounds sent ahead.)
                    let last_sent = sent * width[server] - 1;
                    self.skip_later(&mut chunks[server], last_sent, server, &mut outcomes);
                    failed_server[server] = true;
                }
            }
        }
        drop(lanes);
        // `append_or_add` of a missing key answered NS (its append has no
        // create-on-miss, see `codec`): add all of them in a second batch
        // (one more round trip, not one per key), in order, so a later op
        // on the same key still appends after the add.
        let mut adds: Vec<usize> = Vec::new();
        for (i, (op, outcome)) in ops.iter().zip(&outcomes).enumerate() {
            if let (Op::AppendOrAdd { .. }, Some(Outcome::Again)) = (op, outcome) {
                adds.push(i);
            }
        }
        // (Empty, and not allocated, when nothing was added.)
        let mut added: Vec<Option<Result<Reply>>> = Vec::new();
        if !adds.is_empty() {
            added.resize_with(ops.len(), || None);
            let batch: Vec<Op<'_>> = adds
                .iter()
                .filter_map(|&i| match ops[i] {
                    Op::AppendOrAdd { key, value, ttl } => Some(Op::Add { key, value, ttl }),
                    _ => None,
                })
                .collect();
            // (Boxed: an async fn that calls itself needs it.)
            let results = Box::pin(self.run_pipeline(io, &batch)).await;
            for (&i, r) in adds.iter().zip(results) {
                added[i] = Some(match r {
                    Ok(Reply::Stored(Stored::Stored(_))) => Ok(Reply::Done),
                    // Created meanwhile (or too large): the whole loop.
                    Ok(_) => self.finish_not_stored(io, &ops[i]).await,
                    Err(e) => Err(e),
                });
            }
        }
        let mut results = Vec::with_capacity(ops.len());
        for (index, (op, outcome)) in ops.iter().zip(outcomes).enumerate() {
            if let Some(result) = added.get_mut(index).and_then(Option::take) {
                results.push(result);
                continue;
            }
            // An increment's value, read without `decode`'s dispatch and
            // its moves of the reply (a batch of increments has a hundred).
            if let Some(Outcome::Reply(r)) = &outcome
                && let Some(n) = codec::incremented(op, r)
            {
                results.push(Ok(Reply::Value(n)));
                continue;
            }
            let server = owner[index];
            results.push(match (outcome, &incarnations[server]) {
                (Some(Outcome::Reply(r)), Some(i)) => {
                    codec::decode(op, Some(r), i, &self.ids[server])
                }
                (Some(Outcome::Quiet), Some(i)) => codec::decode(op, None, i, &self.ids[server]),
                (Some(Outcome::Failed(e)), _) => Err(e),
                (Some(Outcome::Again), _) => self.finish_not_stored(io, op).await,
                (None, _) => self.execute_io(io, op).await,
                // Replies come only from servers with a session.
                (Some(_), None) => Err(Error::Protocol {
                    server: self.ids[server].clone(),
                    message: "a reply from a server with no session".into(),
                }),
            });
        }
        results
    }

    /// Fail the payloads after the `sent`th of a server that failed, without
    /// sending them: not applied, safe to retry.
    fn skip_later(
        &self,
        chunks: &mut Vec<&[Planned]>,
        sent: usize,
        server: usize,
        outcomes: &mut [Option<Outcome>],
    ) {
        for later in chunks.iter().skip(sent + 1) {
            for p in later.iter() {
                outcomes[p.index] = Some(Outcome::Failed(Error::Io {
                    server: self.ids[server].clone(),
                    source: std::io::Error::other(
                        "not sent: an earlier part of this batch to the server failed",
                    ),
                }));
            }
        }
        chunks.truncate(sent + 1);
    }

    /// Add sessions on more of `server`'s connections to `sessions` (its
    /// first), for a share of reads that takes `payloads` payloads: up to
    /// one per connection, so that each round sends a payload on each.
    /// memcached serves a connection on one worker thread, so a share
    /// spread over two connections is served by two threads at once: 1e5
    /// `mg`s of counters took 59 ms on two connections and 96 ms on one
    /// (2 cores, medians of 5). Reads only: memcached applies one
    /// connection's commands in order, and a batch's writes keep that
    /// order. A session joins only if it reaches the incarnation the share
    /// was encoded for (`pinned`); not on a server without an incarnation
    /// marker, whose CAS ids are per connection (see `Server::lane`).
    /// While such a batch runs, another caller's request to that server
    /// waits behind at most one payload (up to the request budget of
    /// `mg`s, a few milliseconds) on whichever connection it takes. Only
    /// connections already open join: one not yet dialed is dialed in the
    /// background for the next batch, as a batch that waited for the dial
    /// took twice the I/O timeout against a frozen server (an adversarial
    /// review's finding).
    async fn spread<'s>(
        &'s self,
        io: Io,
        server: usize,
        pinned: Incarnation,
        payloads: usize,
        sessions: &mut Vec<Session<'s>>,
    ) {
        let target = &self.servers[server];
        if payloads < 2 || pinned.markerless || sessions.len() != 1 {
            return;
        }
        // (The batching lanes: a round that spans connections is queued,
        // async lanes never queue, see `Server::async_lane`, and the other
        // shared lanes are for callers that find them idle, `Server::pick`.)
        for lane in target.batching_lanes() {
            if sessions.len() >= payloads || sessions.iter().any(|s| s.uses(lane)) {
                continue;
            }
            if !lane.ready_or_dial_later(target, &self.config) {
                continue;
            }
            let mut session = Session::on_lane(target, &self.config, lane);
            if session.incarnation_io(io).await.ok() == Some(pinned) {
                sessions.push(session);
            }
        }
    }
}

/// A payload sent, waiting for its replies: its server, the lane it went
/// on, its ops, its `gets` lines (empty for meta commands), the replies it
/// expects, its ticket, and how and until when it is read.
struct Sent<'p, 's> {
    server: usize,
    lane: usize,
    part: &'p [Planned],
    lines: Vec<std::ops::Range<usize>>,
    expect: (usize, bool),
    ticket: crate::mux::Ticket<'s>,
    io: Io,
    deadline: Instant,
}

/// One payload's bytes: its commands, then `mn`, whose `MN` ends the
/// replies.
fn payload(part: &[Planned], wires: &[u8]) -> Vec<u8> {
    let (Some(first), Some(last)) = (part.first(), part.last()) else {
        return b"mn\r\n".to_vec();
    };
    // A part is a run of one server's ops, encoded one after the other.
    let commands = &wires[first.wire.start..last.wire.end];
    let mut payload = Vec::with_capacity(commands.len() + 4);
    payload.extend_from_slice(commands);
    payload.extend_from_slice(b"mn\r\n");
    payload
}

/// The longest `gets` line sent, `\r\n` included. memcached takes a
/// command line that has not ended within 2048 bytes for a "large
/// multiget" and moves the connection's read buffer to the heap; lines
/// kept under that stay on its ordinary path.
const GETS_LINE: usize = 2000;

/// One payload of reads of items as multi-key `gets` lines (each up to
/// [`GETS_LINE`] bytes), then `mn`; and the ops of each line, as ranges of
/// positions in `part`.
///
/// **Why.** memcached parses and dispatches each command line once: a
/// `gets` of 40 keys costs it about one `mg`'s overhead, not forty, and
/// it returns to its event loop (`-R`, 20 commands by default) forty
/// times less often. Reading 100,000 counters on one connection (keys of
/// 47 bytes, payloads of 256 KiB, medians of 7, 2 cores) took memcached
/// 110–120 ms of CPU as `mg <k> v f c O<n> q` and 60–70 ms as `gets`
/// lines of 40 keys; the wall time went from 109 to 69 ms. A `gets` hit
/// answers `VALUE <key> <flags> <bytes> <cas>`, what `mg <k> v f c`
/// answers, and a miss answers nothing, as a quiet `mg` does; the key in
/// each `VALUE` says which op it answers (`read_gets_replies`).
fn gets_payload(part: &[Planned], ops: &[Op<'_>]) -> (Vec<u8>, Vec<std::ops::Range<usize>>) {
    let keys: usize = part.iter().map(|p| ops[p.index].key().len() + 1).sum();
    let mut out = Vec::with_capacity(keys + 6 * (keys / GETS_LINE + 1) + 4);
    let mut lines = Vec::with_capacity(keys / GETS_LINE + 1);
    let (mut start, mut line) = (0, 0);
    for (pos, p) in part.iter().enumerate() {
        let key = ops[p.index].key().as_bytes();
        if line > 0 && line + 1 + key.len() + 2 > GETS_LINE {
            out.extend_from_slice(b"\r\n");
            lines.push(start..pos);
            (start, line) = (pos, 0);
        }
        if line == 0 {
            out.extend_from_slice(b"gets");
            line = 4;
        }
        out.push(b' ');
        out.extend_from_slice(key);
        line += 1 + key.len();
    }
    if line > 0 {
        out.extend_from_slice(b"\r\n");
        lines.push(start..part.len());
    }
    out.extend_from_slice(b"mn\r\n");
    (out, lines)
}

/// Why a payload that never left was not sent (its delivery's one entry).
fn unsent_reason(delivery: &crate::mux::Delivery) -> std::io::Error {
    match delivery.replies.first() {
        Some(Err(memcache::exp::Error::Io(e))) => std::io::Error::new(e.kind(), e.to_string()),
        Some(Err(e)) => std::io::Error::other(e.to_string()),
        _ => std::io::Error::other("not sent"),
    }
}

/// Why a payload could not be sent.
enum PartError {
    /// The write failed, after `sent` some bytes had left or not.
    Write {
        server: String,
        error: std::io::Error,
        sent: bool,
        timeout: std::time::Duration,
    },
}

impl PartError {
    fn for_op(&self, op: &Op<'_>) -> Error {
        match self {
            PartError::Write {
                server,
                error,
                sent,
                timeout,
            } => {
                if *sent && op.has_side_effect() {
                    Error::Ambiguous {
                        key: op.key().display(),
                        server: server.clone(),
                        reason: format!("pipelined request partly written: {error}"),
                    }
                } else if is_timeout(error) {
                    Error::Timeout {
                        server: server.clone(),
                        after: *timeout,
                    }
                } else {
                    Error::Io {
                        server: server.clone(),
                        source: std::io::Error::new(error.kind(), error.to_string()),
                    }
                }
            }
        }
    }
}

/// Cut one server's ops into payloads of at most
/// [`request_budget`](mcds_net::transport::request_budget) bytes (one
/// round trip each; 208 KiB on a default Linux): the whole payload is
/// written before any reply is read, so it must fit the connection's send
/// buffer, or a server busy writing replies could stop reading the rest
/// (see the budget's docs). A single larger op goes alone: its reply is
/// small.
fn chunk(ops: &[Planned]) -> Vec<&[Planned]> {
    let budget = mcds_net::transport::request_budget();
    let mut chunks = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (pos, p) in ops.iter().enumerate() {
        let len = p.bytes;
        if bytes + len > budget && pos > start {
            chunks.push(&ops[start..pos]);
            (start, bytes) = (pos, 0);
        }
        bytes += len;
    }
    if start < ops.len() {
        chunks.push(&ops[start..]);
    }
    chunks
}

/// Where the replies of one payload are read from: a session's connection
/// ([`Delivered`]), or bytes in memory (the fuzz harness).
pub(crate) trait Replies {
    /// The next reply. `ERROR`/`CLIENT_ERROR`/`SERVER_ERROR` lines come back
    /// as `Err(Rejected | Server)` with the stream still in step; after any
    /// other error the stream is unusable.
    fn next_reply(&mut self) -> std::result::Result<MetaReply, memcache::exp::Error>;

    /// Stop using the stream: it is out of step, or saw an error reply.
    fn discard(&mut self);
}

/// The replies of a payload as its lane delivered them (read by the
/// lane's driver, up to `MN` or the failure that ended the connection).
struct Delivered<'s, 'a> {
    replies: std::vec::IntoIter<crate::mux::Read>,
    session: &'s Session<'a>,
    generation: u64,
}

impl Replies for Delivered<'_, '_> {
    fn next_reply(&mut self) -> std::result::Result<MetaReply, memcache::exp::Error> {
        self.replies.next().unwrap_or_else(|| {
            Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "the connection ended before the batch's replies did",
            )
            .into())
        })
    }

    fn discard(&mut self) {
        self.session.retire(self.generation);
    }
}

/// A reply line without an opaque.
enum Untagged {
    /// An error line (`SERVER_ERROR`, `CLIENT_ERROR`, `ERROR`).
    Line(memcache::exp::Error),
    /// A text write's reply (`STORED` …).
    Text(MetaReply),
}

/// Read the replies of one payload up to `MN`, say what happened to each
/// op of `part` in `outcomes` (one entry per op of `part`, all `None` on
/// entry, all `Some` on return: filled in place, as a batch of a hundred
/// increments moved each reply once more through a returned list), and
/// return whether the connection broke (the server's later payloads must
/// then not be sent). A reply is attributed by the opaque it
/// echoes (`O<index>`), only to an op of `part` after the last one
/// answered; the line without an opaque just before the tagged `mg` of a
/// pair ([`codec::is_pair`]) is its text write's reply. `errors` says what
/// a failure means; CAS ids are those of `incarnation`.
pub(crate) fn read_replies(
    replies: &mut impl Replies,
    errors: &ErrorMap<'_>,
    incarnation: &Incarnation,
    part: &[Planned],
    ops: &[Op<'_>],
    outcomes: &mut [Option<Outcome>],
) -> bool {
    debug_assert_eq!(outcomes.len(), part.len());
    let position_of = |r: &MetaReply, last: Option<usize>| -> Option<usize> {
        // Replies come in order: nearly always the op after the last one
        // answered (always, in a batch of increments).
        next_in_line(r, part, last).or_else(|| {
            let index = r.opaque.as_ref()?.index()?;
            // A part's indices increase.
            part.binary_search_by_key(&index, |p| p.index).ok()
        })
    };
    // Lines without an opaque since the last reply, and where that reply was.
    let mut untagged: Vec<Untagged> = Vec::new();
    let mut last: Option<usize> = None;
    let mut had_error = false;
    loop {
        match replies.next_reply() {
            Ok(r) if r.text => untagged.push(Untagged::Text(r)),
            // The reply of the op after the last one answered, a single
            // command's, with nothing unplaced before it: what the general
            // case below concludes for it, without its bookkeeping (every
            // reply of a batch of increments).
            Ok(r)
                if untagged.is_empty()
                    && r.rc != ReturnCode::Mn
                    && next_in_line(&r, part, last).is_some_and(|p| !part[p].pair) =>
            {
                let pos = last.map_or(0, |l| l + 1);
                outcomes[pos] = Some(classify(&ops[part[pos].index], r));
                last = Some(pos);
            }
            Ok(r) => {
                let pos = if r.rc == ReturnCode::Mn {
                    Some(part.len())
                } else {
                    position_of(&r, last)
                        .filter(|&p| last.is_none_or(|l| p > l) && outcomes[p].is_none())
                };
                // A pair's own line is the last one before its `mg`'s reply.
                let own = match pos {
                    Some(p) if p < part.len() && part[p].pair => untagged.pop(),
                    _ => None,
                };
                let owned = pos.is_some_and(|p| p == part.len() || !part[p].pair || own.is_some());
                // The rest are error lines of the commands in between.
                let mut error_lines = Vec::with_capacity(untagged.len());
                let mut stray_text = false;
                for u in untagged.drain(..) {
                    match u {
                        Untagged::Line(e) => error_lines.push(e),
                        Untagged::Text(_) => stray_text = true,
                    }
                }
                // A reply we cannot place, a pair's `mg` without its text
                // reply, a text reply or an error line no command can own:
                // the stream is out of step.
                let in_step = owned
                    && !stray_text
                    && pos.is_some_and(|p| {
                        settle_gap(errors, part, ops, outcomes, last, p, &mut error_lines)
                    });
                let Some(pos) = pos.filter(|_| in_step) else {
                    replies.discard();
                    finish_failed(part, ops, outcomes, |op| {
                        protocol_or_ambiguous(errors.server, op, "pipelined replies out of step")
                    });
                    return true;
                };
                if pos == part.len() {
                    break;
                }
                let op = &ops[part[pos].index];
                outcomes[pos] = Some(match own {
                    None => classify(op, r),
                    Some(Untagged::Text(text)) => {
                        classify(op, codec::merge_pair(op, text, &r, incarnation))
                    }
                    Some(Untagged::Line(e)) => Outcome::Failed(errors.map(op.key(), e, false)),
                });
                last = Some(pos);
            }
            Err(e @ (memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_))) => {
                // A `SERVER_ERROR` (too large, out of memory) comes after
                // memcached swallowed the command's data; a `CLIENT_ERROR`
                // or `ERROR` may mean it read a data block as a command.
                had_error |= matches!(e, memcache::exp::Error::Rejected(_));
                untagged.push(Untagged::Line(e));
            }
            Err(e) => {
                let server = errors.server;
                let timeout = errors.io_timeout;
                let reason = e.to_string();
                let timed_out = matches!(&e, memcache::exp::Error::Io(io) if is_timeout(io))
                    || matches!(e, memcache::exp::Error::Timeout { .. });
                finish_failed(part, ops, outcomes, |op| {
                    if op.has_side_effect() {
                        Error::Ambiguous {
                            key: op.key().display(),
                            server: server.to_string(),
                            reason: if timed_out {
                                format!("no reply within {timeout:?}")
                            } else {
                                reason.clone()
                            },
                        }
                    } else if timed_out {
                        Error::Timeout {
                            server: server.to_string(),
                            after: timeout,
                        }
                    } else {
                        Error::Io {
                            server: server.to_string(),
                            source: std::io::Error::other(reason.clone()),
                        }
                    }
                });
                return true;
            }
        }
    }
    if had_error {
        // In step as far as `MN` shows, but a connection that may have
        // read a value as a command is not reused: the connection is
        // retired (shared: callers queued on it are sent again on a new
        // one).
        replies.discard();
    }
    for o in outcomes.iter_mut().filter(|o| o.is_none()) {
        *o = Some(Outcome::Quiet);
    }
    false
}

/// Read the replies of one payload of `gets` lines ([`gets_payload`]; the
/// ops of each line are `lines`, ranges of positions in `part`) up to
/// `MN`, and say what happened to each op in `outcomes`, as
/// [`read_replies`] does (the same contract, the same return value).
///
/// Each line is answered by a `VALUE` per hit, in the order of its keys,
/// then `END`: a `VALUE` answers the first op of the line, after the last
/// one answered, whose key it names, and the ops it passes over missed.
/// An error line instead of `END` fails the ops of its line not yet
/// answered. A `VALUE` for no such op, a reply of another kind, or `MN`
/// before every line has ended is a stream out of step: every op not yet
/// answered fails, the connection is given up.
///
/// **Why a count.** A `gets` that fails midway (out of memory for its
/// replies) makes memcached drop every reply it has not yet sent on the
/// connection, which may include whole earlier lines of this payload: the
/// error line would then stand where an earlier line's `END` should,
/// and the lines after it would be read as the wrong lines. Replies before
/// the first error line are what memcached sent, in order, and stand. From
/// the first error line on they stand only if every line has ended when
/// `MN` comes (a dropped line leaves one terminator short); if not, the
/// ops from that line on fail, answered or not, with [`Error::Server`]
/// saying that memcached dropped them. The connection is kept: its lane
/// read to `MN`, so what comes next on it is in step.
pub(crate) fn read_gets_replies(
    replies: &mut impl Replies,
    errors: &ErrorMap<'_>,
    part: &[Planned],
    ops: &[Op<'_>],
    lines: &[std::ops::Range<usize>],
    outcomes: &mut [Option<Outcome>],
) -> bool {
    debug_assert_eq!(outcomes.len(), part.len());
    let server = errors.server;
    // Where the first line answered by an error line starts.
    let mut suspect: Option<usize> = None;
    let mut rejected = false;
    // Fail the ops from `suspect` on (answered or not) and every op not
    // answered: the stream ended, or went out of step.
    let give_up = |outcomes: &mut [Option<Outcome>],
                   suspect: Option<usize>,
                   error: &dyn Fn(&Op<'_>) -> Error| {
        for (pos, (p, o)) in part.iter().zip(outcomes.iter_mut()).enumerate() {
            if o.is_none() || suspect.is_some_and(|s| pos >= s) {
                *o = Some(Outcome::Failed(error(&ops[p.index])));
            }
        }
    };
    // A stream out of step: every op not answered fails, and the
    // connection is given up. Whether it broke (see `read_replies`).
    let out_of_step = |outcomes: &mut [Option<Outcome>], replies: &mut _| {
        Replies::discard(replies);
        give_up(outcomes, None, &|_| Error::Protocol {
            server: server.to_string(),
            message: "multi-key gets replies out of step".into(),
        });
        true
    };
    // After an error line, a line short at `MN` (or a `VALUE` of a later
    // line where an earlier one should end) is memcached's own dropping of
    // the replies it had not sent (see above): the ops from the error's
    // line on fail, and the stream, read to `MN`, is in step.
    let dropped = |outcomes: &mut [Option<Outcome>], suspect: Option<usize>| {
        give_up(outcomes, suspect, &|_| Error::Server {
            server: server.to_string(),
            message: DROPPED.into(),
        });
        false
    };
    let broken =
        |outcomes: &mut [Option<Outcome>], suspect: Option<usize>, e: memcache::exp::Error| {
            let timed_out = matches!(&e, memcache::exp::Error::Io(io) if is_timeout(io))
                || matches!(e, memcache::exp::Error::Timeout { .. });
            let reason = e.to_string();
            give_up(outcomes, suspect, &|_| {
                if timed_out {
                    Error::Timeout {
                        server: server.to_string(),
                        after: errors.io_timeout,
                    }
                } else {
                    Error::Io {
                        server: server.to_string(),
                        source: std::io::Error::other(reason.clone()),
                    }
                }
            });
        };
    for line in lines {
        let mut next = line.start;
        loop {
            match replies.next_reply() {
                Ok(r) if r.value_key().is_some() => {
                    let key = r.value_key().unwrap_or_default();
                    let Some(pos) =
                        (next..line.end).find(|&p| ops[part[p].index].key().as_bytes() == key)
                    else {
                        return match suspect {
                            Some(_) => dropped(outcomes, suspect),
                            None => out_of_step(outcomes, replies),
                        };
                    };
                    for missed in &mut outcomes[next..pos] {
                        *missed = Some(Outcome::Quiet);
                    }
                    outcomes[pos] = Some(Outcome::Reply(r.into_value()));
                    next = pos + 1;
                }
                Ok(r) if r.is_end() => {
                    for missed in &mut outcomes[next..line.end] {
                        *missed = Some(Outcome::Quiet);
                    }
                    break;
                }
                Err(e @ (memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_))) => {
                    rejected |= matches!(e, memcache::exp::Error::Rejected(_));
                    suspect.get_or_insert(line.start);
                    for pos in next..line.end {
                        let op = &ops[part[pos].index];
                        outcomes[pos] = Some(Outcome::Failed(match &e {
                            // Not an item's: memcached had no memory for
                            // replies ("out of memory writing get
                            // response"), which is not a full store.
                            memcache::exp::Error::Server(message) => Error::Server {
                                server: server.to_string(),
                                message: format!("{message} — {NOT_READ}"),
                            },
                            _ => errors.map(op.key(), same_line(&e), false),
                        }));
                    }
                    break;
                }
                // A line's replies dropped after an error: `MN` early.
                Ok(r) if r.rc == ReturnCode::Mn && !r.text && suspect.is_some() => {
                    return dropped(outcomes, suspect);
                }
                Ok(_) => return out_of_step(outcomes, replies),
                Err(e) => {
                    broken(outcomes, suspect, e);
                    return true;
                }
            }
        }
    }
    match replies.next_reply() {
        Ok(r) if r.rc == ReturnCode::Mn && !r.text => {}
        Err(e) if !crate::mux::is_error_line(&e) => {
            broken(outcomes, suspect, e);
            return true;
        }
        _ => return out_of_step(outcomes, replies),
    }
    if rejected {
        // As in `read_replies`: a connection that answered `ERROR` or
        // `CLIENT_ERROR` is not reused.
        replies.discard();
    }
    false
}

/// What a read failed by an error line to its `gets` line was not.
const NOT_READ: &str = "memcached had no memory left for the replies of a multi-key read (not a full store: see its -o read_buf_mem_limit and -m); these keys were not read, so retrying is safe";

/// Why the reads of `gets` lines whose replies memcached dropped failed.
const DROPPED: &str = "memcached dropped the replies of part of a multi-key read after it ran out of memory for replies (SERVER_ERROR out of memory writing get response; see its -o read_buf_mem_limit and -m); these keys were not read, so retrying is safe";

/// An error line again, for the next op it fails.
fn same_line(e: &memcache::exp::Error) -> memcache::exp::Error {
    match e {
        memcache::exp::Error::Server(m) => memcache::exp::Error::Server(m.clone()),
        memcache::exp::Error::Rejected(m) => memcache::exp::Error::Rejected(m.clone()),
        other => memcache::exp::Error::Protocol(other.to_string()),
    }
}

/// The position in `part` of the op after the one at `last` (the first,
/// if none was answered yet), if `r` echoes that op's opaque.
fn next_in_line(r: &MetaReply, part: &[Planned], last: Option<usize>) -> Option<usize> {
    let index = r.opaque.as_ref()?.index()?;
    let next = last.map_or(0, |l| l + 1);
    part.get(next)
        .is_some_and(|p| p.index == index)
        .then_some(next)
}

fn protocol_or_ambiguous(server: &str, op: &Op<'_>, what: &str) -> Error {
    if op.has_side_effect() {
        Error::Ambiguous {
            key: op.key().display(),
            server: server.to_string(),
            reason: what.to_string(),
        }
    } else {
        Error::Protocol {
            server: server.to_string(),
            message: what.to_string(),
        }
    }
}

/// Ops not yet answered when the stream failed get `error(op)`.
fn finish_failed(
    part: &[Planned],
    ops: &[Op<'_>],
    outcomes: &mut [Option<Outcome>],
    error: impl Fn(&Op<'_>) -> Error,
) {
    for (p, o) in part.iter().zip(outcomes) {
        if o.is_none() {
            *o = Some(Outcome::Failed(error(&ops[p.index])));
        }
    }
}

/// The ops strictly between positions `after` and `before` got no reply:
/// quiet successes, or the owners of the error lines read in between.
/// `false` if there are error lines but no op to own them (out of step).
fn settle_gap(
    errors: &ErrorMap<'_>,
    part: &[Planned],
    ops: &[Op<'_>],
    outcomes: &mut [Option<Outcome>],
    after: Option<usize>,
    before: usize,
    error_lines: &mut Vec<memcache::exp::Error>,
) -> bool {
    let start = after.map_or(0, |a| a + 1);
    if start >= before && error_lines.is_empty() {
        // Nothing in between (every reply of a batch of increments).
        return true;
    }
    let gap: Vec<usize> = (start..before).filter(|&i| outcomes[i].is_none()).collect();
    let server = errors.server;
    if error_lines.is_empty() {
        for i in gap {
            outcomes[i] = Some(if part[i].quiet {
                Outcome::Quiet
            } else {
                Outcome::Failed(protocol_or_ambiguous(
                    server,
                    &ops[part[i].index],
                    "no reply to a pipelined command",
                ))
            });
        }
        return true;
    }
    if error_lines.len() > gap.len() {
        return false;
    }
    let lines = std::mem::take(error_lines);
    // A command without `q` always answers: each one in the gap owns an
    // error line. Quiet ones own the rest, if the count says which.
    let loud: Vec<usize> = gap.iter().copied().filter(|&i| !part[i].quiet).collect();
    let owners = if lines.len() == loud.len() {
        Some(loud)
    } else if lines.len() == gap.len() {
        Some(gap.clone())
    } else {
        None
    };
    let Some(owners) = owners else {
        let message = lines.first().map(ToString::to_string).unwrap_or_default();
        for i in gap {
            let op = &ops[part[i].index];
            outcomes[i] = Some(Outcome::Failed(protocol_or_ambiguous(
                server,
                op,
                &format!(
                    "{} of these pipelined commands failed ({message}); quiet mode does not say which",
                    lines.len()
                ),
            )));
        }
        return true;
    };
    for (&i, e) in owners.iter().zip(lines) {
        outcomes[i] = Some(Outcome::Failed(errors.map(
            ops[part[i].index].key(),
            e,
            false,
        )));
    }
    for i in gap {
        if outcomes[i].is_none() {
            outcomes[i] = Some(Outcome::Quiet);
        }
    }
    true
}

/// An `NS` to an append-like op needs the ordinary method (a probe tells
/// "missing" from "too large"; on servers before 1.6.20 `append_or_add`
/// then adds); everything else is its reply.
fn classify(op: &Op<'_>, r: MetaReply) -> Outcome {
    match (op, r.rc) {
        (Op::Append { .. } | Op::Prepend { .. } | Op::AppendOrAdd { .. }, ReturnCode::Ns) => {
            Outcome::Again
        }
        _ => Outcome::Reply(r),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::{Duration, Instant};

    use mcds_core::{Key, Store};

    use crate::MemcachedStore;

    /// How many requests each connection of the first server carried.
    fn requests(store: &MemcachedStore) -> Vec<u64> {
        store.servers[0]
            .lanes
            .iter()
            .map(|lane| lane.counters.requests.load(Ordering::Relaxed))
            .collect()
    }

    /// A batch of reads of several payloads goes out on every open
    /// connection of its server. The first finds only one open: it does
    /// not wait for a dial of the other, which is dialed in the background
    /// for the next.
    #[test]
    fn a_batch_of_reads_spreads_over_open_connections_and_dials_the_others_for_the_next() {
        let server = mcds_testserver::MemcachedServer::start_default();
        let store = MemcachedStore::builder()
            .connections_per_server(2)
            .connect([server.addr()])
            .unwrap();
        let keys: Vec<Key> = (0..20_000)
            .map(|i| Key::new(format!("spread:{i:0>30}")).unwrap())
            .collect();
        store.get_multi(&keys).unwrap();
        let first = requests(&store);
        assert!(first[0] >= 2 && first[1] == 0, "{first:?}");
        let start = Instant::now();
        while !store.servers[0].lanes[1].is_open() {
            assert!(start.elapsed() < Duration::from_secs(5), "never dialed");
            std::thread::sleep(Duration::from_millis(5));
        }
        store.get_multi(&keys).unwrap();
        let second = requests(&store);
        let (on_0, on_1) = (second[0] - first[0], second[1] - first[1]);
        println!("payloads of the second batch: {on_0} on one connection, {on_1} on the other");
        assert!(
            on_0 >= 1 && on_1 >= 1 && on_0.abs_diff(on_1) <= 1,
            "{first:?} -> {second:?}"
        );
    }
}
