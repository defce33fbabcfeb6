//! The meta-protocol codec: an [`Op`] encoded as the command for one server
//! incarnation, and the reply to that command decoded into its [`Reply`].
//!
//! A leaf: no I/O, no sessions, no pool. What it depends on is handed in
//! as plain data: the [`Incarnation`] an op is encoded for (its version's
//! commands, its CAS mask, its clock for exptimes), the item size limit, and
//! the server's name for error messages. The single-op path, the pipeline
//! and the protocol variants of [`store`](crate::store) (the probe after an
//! `NS`, the append/add loop) all encode and decode here.
//!
//! | op | command | quiet in a pipeline |
//! |---|---|---|
//! | `get` | `mg <k> v f c`; in a batch of reads of items only, `gets <k1> <k2> …` lines (see `pipeline`) | yes (`EN` suppressed; a `gets` miss has no reply) |
//! | `set` | `ms <k> <n> T<exp> c` | no (the reply carries the CAS) |
//! | `add`, `replace` | `add`/`replace <k> 0 <exp> <n>`, then `mg <k> v c` | no |
//! | `cas` | `cas <k> 0 <exp> <n> <cas>`, then `mg <k> v c` | no |
//! | `append`, `prepend` | `append`/`prepend <k> 0 0 <n>`, then `mg <k>` | no |
//! | `append_or_add` | `append <k> 0 0 <n>`, then `mg <k>`; on a miss `add` (the append/add loop) | no |
//! | `incr`, `decr` | `ma <k> D<d> v` (`MD`) | no |
//! | `incr_or_init` | `ma <k> N<exp> J<init> D<d> v` | no |
//! | `delete` | `md <k>` | yes |
//! | `delete_cas` | `md <k> C<cas>`; before 1.6.13 (whose `md` ignores `C`) `cas <k> 0 -1 0 <cas>`, an empty item already expired, then `mg <k>` | yes (`md`); no |
//! | `touch` | `mg <k> T<exp>` | no |
//!
//! **Why the conditional writes are text commands.** When memcached
//! cannot allocate the item an `ms` would store (memory full under `-M`,
//! or a value over its `-I`), it answers `SERVER_ERROR` *and unlinks the
//! key's existing item*, whatever the mode (1.6.18 through current
//! releases: "NOTE: only if SET mode?" in `process_mset_command`). A failed
//! `ms ME` deleted the lock it failed to take, and the next add took it
//! again (two holders); a failed `ms MA` deleted the event log or sketch
//! segment it appended to. Its text commands unlink only for `set`. So
//! `add`, `replace`, `cas`, `append` and `prepend` (and, before 1.6.13,
//! the CAS write that stands for `delete_cas`) go as text commands,
//! each followed, in the same write, by a tagged `mg` whose reply carries
//! the opaque (and, after `add`/`replace`/`cas`, the item's CAS id, which
//! the text reply lacks: see [`merge_pair`]). The two replies come back
//! together: still one round trip. `append_or_add` gives up `ms MA N`
//! (create on a miss, 1.6.20+) for the same reason: on a miss the append
//! is followed by an `add`, as on servers before 1.6.20.

use std::time::Duration;

use mcds_core::{CasOutcome, DeleteOutcome, Error, Item, Key, Op, Reply, Result, Stored, backend};
use mcds_net::incarnation::Incarnation;
use memcache::exp::{MetaCommand, MetaOp, ReturnCode};

use crate::reply::{Block, MetaReply};

/// An op encoded for one server incarnation by `memcache`'s command
/// builder (see [`encode`]).
#[cfg(test)]
#[derive(Debug)]
pub(crate) struct Encoded {
    /// The command, without the `O<opaque>`/`q` flags a pipeline adds.
    pub(crate) command: MetaCommand,
    /// Its success reply carries nothing (no value, no CAS id), so in a
    /// pipeline it may be sent quiet (`q`): no reply then means success.
    /// ([`encode_wire`] decides the same; a test holds the two together.)
    pub(crate) quiet: bool,
}

fn cmd(op: MetaOp, key: &Key) -> MetaCommand {
    MetaCommand::new(op, key.as_bytes())
}

fn check_size(key: &Key, value_len: usize, item_size_limit: usize) -> Result<()> {
    backend::check_item_size(key, value_len, item_size_limit).map(drop)
}

/// Encode `op` for a server `incarnation` (its version's commands, its
/// CAS ids, its clock) and say whether it can be quiet, with `memcache`'s
/// command builder: the reference of the tests of [`encode_wire`], for the
/// ops sent as meta commands. Values whose item would exceed
/// `item_size_limit` are [`Error::ValueTooLarge`], and `cas` and
/// `delete_cas` on a server without CAS ids are [`Error::Unsupported`]:
/// nothing is sent for either.
#[cfg(test)]
pub(crate) fn encode(
    op: &Op<'_>,
    incarnation: &Incarnation,
    item_size_limit: usize,
) -> Result<Encoded> {
    let ttl_flag = |ttl| format!("T{}", incarnation.exptime(ttl));
    let size = |key, value: &[u8]| check_size(key, value.len(), item_size_limit);
    if matches!(op, Op::Cas { .. } | Op::DeleteCas { .. }) && !incarnation.cas {
        return Err(Error::Unsupported {
            op: op.name(),
            backend: "memcached started with -C: CAS disabled",
            hint: "restart memcached without -C: locks, CAS writes and update() need CAS ids",
        });
    }
    let (command, quiet) = match *op {
        Op::Get(key) => (cmd(MetaOp::Get, key).flag("v").flag("f").flag("c"), true),
        Op::Set { key, value, ttl } => {
            size(key, value)?;
            let c = cmd(MetaOp::Set, key).value(value).flag(ttl_flag(ttl));
            (c.flag("c"), false)
        }
        Op::Add { .. }
        | Op::Replace { .. }
        | Op::Cas { .. }
        | Op::Append { .. }
        | Op::Prepend { .. }
        | Op::AppendOrAdd { .. } => {
            return Err(Error::Internal(format!(
                "{} is sent as a text command (encode_wire), not a meta command",
                op.name()
            )));
        }
        Op::Incr { key, delta } | Op::Decr { key, delta } => {
            let mut c = cmd(MetaOp::Arithmetic, key)
                .flag(format!("D{delta}"))
                .flag("v");
            if matches!(op, Op::Decr { .. }) {
                c = c.flag("MD");
            }
            (c, false)
        }
        Op::IncrOrInit {
            key,
            delta,
            initial,
            ttl,
        } => {
            let c = cmd(MetaOp::Arithmetic, key)
                .flag(format!("N{}", incarnation.exptime(ttl)))
                .flag(format!("J{initial}"))
                .flag(format!("D{delta}"))
                .flag("v");
            (c, false)
        }
        Op::Delete(key) => (cmd(MetaOp::Delete, key), true),
        Op::DeleteCas { key, cas } if incarnation.version.has_delete_cas() => {
            let cas = format!("C{}", incarnation.cas_in(cas));
            (cmd(MetaOp::Delete, key).flag(cas), true)
        }
        Op::DeleteCas { .. } => {
            return Err(Error::Internal(
                "delete_cas before 1.6.13 is sent as a text command (encode_wire)".into(),
            ));
        }
        Op::Touch { key, ttl } => (cmd(MetaOp::Get, key).flag(ttl_flag(ttl)), false),
    };
    Ok(Encoded { command, quiet })
}

/// Whether `op` goes out to a server `incarnation` as a text-protocol
/// write followed by a tagged `mg` (`add`, `replace`, `cas`, `append`,
/// `prepend`, `append_or_add`, and `delete_cas` before 1.6.13: see the
/// module docs), two replies, instead of one meta command.
pub(crate) fn is_pair(op: &Op<'_>, incarnation: &Incarnation) -> bool {
    match op {
        Op::Add { .. }
        | Op::Replace { .. }
        | Op::Cas { .. }
        | Op::Append { .. }
        | Op::Prepend { .. }
        | Op::AppendOrAdd { .. } => true,
        Op::DeleteCas { .. } => !incarnation.version.has_delete_cas(),
        _ => false,
    }
}

/// The reply a pair's two replies amount to (see [`is_pair`]): the text
/// reply `text` (`STORED` as `HD`, …) with the `mg`'s opaque and, for
/// `add`, `replace` and `cas`, the CAS id of the item stored. That id
/// comes from the `mg` that followed when the item there holds the value
/// just written; if it holds another value or none,
/// the item was replaced or removed between the two commands (by another
/// client, an eviction, an expiry), its id is unknown, and the id given is
/// one that no item of the key can have now or later: one below the
/// current item's (ids only grow), or 1 when the key is gone. A CAS write
/// or delete with it fails, as it would with the real, stale, id. An item
/// replaced in between by one holding the very same bytes is taken for
/// the one written: structures that must tell writers apart (a lock's
/// owner token) write values unique to the writer.
pub(crate) fn merge_pair(
    op: &Op<'_>,
    text: MetaReply,
    mg: &MetaReply,
    incarnation: &Incarnation,
) -> MetaReply {
    let mut r = text;
    r.opaque.clone_from(&mg.opaque);
    let (Op::Add { value, .. } | Op::Replace { value, .. } | Op::Cas { value, .. }) = *op else {
        return r;
    };
    if r.rc == ReturnCode::Hd {
        let current = mg.cas().unwrap_or(0);
        r.set_cas(match (mg.rc, mg.value.as_deref()) {
            (ReturnCode::Va, Some(v)) if v == value => current,
            (ReturnCode::Va, _) => current.saturating_sub(1),
            _ if incarnation.cas => 1,
            _ => 0,
        });
    }
    r
}

/// Encode `op` for `incarnation` straight into `out` (no allocation of its
/// own): the meta command (as `memcache`'s builder would write it), with
/// ` O<opaque>` and, when `quiet_in_batch` and the op may be quiet in a
/// pipeline, ` q`; for a pair ([`is_pair`]), the text command and then
/// the `mg` tagged ` O<opaque>`.
/// Returns whether the command is quiet. On an error nothing is written.
pub(crate) fn encode_wire(
    op: &Op<'_>,
    incarnation: &Incarnation,
    item_size_limit: usize,
    out: &mut Vec<u8>,
    opaque: u32,
    quiet_in_batch: bool,
) -> Result<bool> {
    if matches!(op, Op::Cas { .. } | Op::DeleteCas { .. }) && !incarnation.cas {
        return Err(Error::Unsupported {
            op: op.name(),
            backend: "memcached started with -C: CAS disabled",
            hint: "restart memcached without -C: locks, CAS writes and update() need CAS ids",
        });
    }
    if let Op::Set { value, .. }
    | Op::Add { value, .. }
    | Op::Replace { value, .. }
    | Op::Cas { value, .. }
    | Op::Append { value, .. }
    | Op::Prepend { value, .. }
    | Op::AppendOrAdd { value, .. } = *op
    {
        check_size(op.key(), value.len(), item_size_limit)?;
    }
    let head = |out: &mut Vec<u8>, cmd: &[u8], key: &Key| {
        out.extend_from_slice(cmd);
        out.push(b' ');
        out.extend_from_slice(key.as_bytes());
    };
    let exptime = |ttl| u64::from(incarnation.exptime(ttl));
    let mut data: Option<&[u8]> = None;
    let set = |out: &mut Vec<u8>, key: &Key, value: &'_ [u8]| {
        head(out, b"ms", key);
        out.push(b' ');
        out.extend_from_slice(itoa::Buffer::new().format(value.len()).as_bytes());
    };
    let quiet = match *op {
        Op::Get(key) => {
            head(out, b"mg", key);
            out.extend_from_slice(b" v f c");
            true
        }
        Op::Set { key, value, ttl } => {
            set(out, key, value);
            put_number(out, b" T", exptime(ttl));
            out.extend_from_slice(b" c");
            data = Some(value);
            false
        }
        Op::Add { key, value, ttl } | Op::Replace { key, value, ttl } => {
            let command = if matches!(op, Op::Add { .. }) {
                &b"add"[..]
            } else {
                &b"replace"[..]
            };
            let exptime = i64::from(incarnation.exptime(ttl));
            text_pair(out, command, key, exptime, value, None, b" v c", opaque);
            return Ok(false);
        }
        Op::Cas {
            key,
            value,
            ttl,
            cas,
        } => {
            let (exptime, cas) = (i64::from(incarnation.exptime(ttl)), incarnation.cas_in(cas));
            text_pair(out, b"cas", key, exptime, value, Some(cas), b" v c", opaque);
            return Ok(false);
        }
        // The exptime of an append is ignored; an `append_or_add` that
        // misses is finished by an add that carries it.
        Op::Append { key, value }
        | Op::Prepend { key, value }
        | Op::AppendOrAdd { key, value, .. } => {
            let command = if matches!(op, Op::Prepend { .. }) {
                &b"prepend"[..]
            } else {
                &b"append"[..]
            };
            text_pair(out, command, key, 0, value, None, b"", opaque);
            return Ok(false);
        }
        Op::Incr { key, delta } | Op::Decr { key, delta } => {
            head(out, b"ma", key);
            put_number(out, b" D", delta);
            out.extend_from_slice(b" v");
            if matches!(op, Op::Decr { .. }) {
                out.extend_from_slice(b" MD");
            }
            false
        }
        Op::IncrOrInit {
            key,
            delta,
            initial,
            ttl,
        } => {
            head(out, b"ma", key);
            put_number(out, b" N", exptime(ttl));
            put_number(out, b" J", initial);
            put_number(out, b" D", delta);
            out.extend_from_slice(b" v");
            false
        }
        Op::Delete(key) => {
            head(out, b"md", key);
            true
        }
        Op::DeleteCas { key, cas } if incarnation.version.has_delete_cas() => {
            head(out, b"md", key);
            put_number(out, b" C", incarnation.cas_in(cas));
            true
        }
        // `md` ignores C before 1.6.13. A CAS write of an empty item that
        // is already expired (exptime -1) is the same conditional delete,
        // atomic, in one command: STORED, EXISTS and NOT_FOUND mean what
        // HD, EX and NF mean for `md`. As a text command: a meta `ms` that
        // memcached cannot allocate would delete the item whatever its CAS.
        Op::DeleteCas { key, cas } => {
            let cas = Some(incarnation.cas_in(cas));
            text_pair(out, b"cas", key, -1, b"", cas, b"", opaque);
            return Ok(false);
        }
        Op::Touch { key, ttl } => {
            head(out, b"mg", key);
            put_number(out, b" T", exptime(ttl));
            false
        }
    };
    put_number(out, b" O", u64::from(opaque));
    let quiet = quiet && quiet_in_batch;
    if quiet {
        out.extend_from_slice(b" q");
    }
    out.extend_from_slice(b"\r\n");
    if let Some(data) = data {
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
    }
    Ok(quiet)
}

/// `flag`, then `n` in decimal. One or two digits (a delta of 1, an
/// exptime of 0, the opaque of an op among the first hundred of a batch)
/// are written without the formatter and its copy: a batch of increments
/// writes four numbers per op. Always inlined: as a closure it was left
/// as a call when it grew, 80 instructions more per increment.
#[inline(always)]
fn put_number(out: &mut Vec<u8>, flag: &[u8], n: u64) {
    out.extend_from_slice(flag);
    match u8::try_from(n) {
        Ok(d @ 0..=9) => out.push(b'0' + d),
        Ok(d @ 10..=99) => out.extend_from_slice(&[b'0' + d / 10, b'0' + d % 10]),
        _ => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
    }
}

/// A pair's bytes (see [`is_pair`]): the text write `<command> <key> 0
/// <exptime> <length>[ <cas>]` with its data block, then
/// `mg <key><mg_flags> O<opaque>`.
#[expect(
    clippy::too_many_arguments,
    reason = "the text command's five fields, the mg's flags and opaque, and the buffer"
)]
fn text_pair(
    out: &mut Vec<u8>,
    command: &[u8],
    key: &Key,
    exptime: i64,
    value: &[u8],
    cas: Option<u64>,
    mg_flags: &[u8],
    opaque: u32,
) {
    let mut digits = itoa::Buffer::new();
    out.extend_from_slice(command);
    out.push(b' ');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b" 0 ");
    out.extend_from_slice(digits.format(exptime).as_bytes());
    out.push(b' ');
    out.extend_from_slice(digits.format(value.len()).as_bytes());
    if let Some(cas) = cas {
        out.push(b' ');
        out.extend_from_slice(digits.format(cas).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\nmg ");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(mg_flags);
    out.extend_from_slice(b" O");
    out.extend_from_slice(digits.format(opaque).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Decode the reply `r` to `op`'s command (`None`: a quiet success, no
/// reply before the pipeline's `mn`) into its [`Reply`]. CAS ids are
/// unmasked for `incarnation`; a reply the op cannot have is
/// [`Error::Protocol`] naming `server`.
pub(crate) fn decode(
    op: &Op<'_>,
    r: Option<MetaReply>,
    incarnation: &Incarnation,
    server: &str,
) -> Result<Reply> {
    let Some(r) = r else {
        return Ok(match op {
            Op::Get(_) => Reply::Item(None),
            Op::Append { .. } | Op::Prepend { .. } | Op::Delete(_) => Reply::Applied(true),
            Op::AppendOrAdd { .. } => Reply::Done,
            Op::DeleteCas { .. } => Reply::Deleted(DeleteOutcome::Deleted),
            _ => {
                return Err(Error::Protocol {
                    server: server.to_string(),
                    message: format!("no reply to a pipelined {}", op.name()),
                });
            }
        });
    };
    // A `VALUE` line answers only a multi-key `gets`, whose reader takes
    // its key off first (`MetaReply::into_value`); anywhere else it is a
    // reply out of place, not a value.
    if r.value_key().is_some() {
        return Err(unexpected(server, op.name(), &r));
    }
    let cas = |r: &MetaReply| incarnation.cas_out(r.cas().unwrap_or(0));
    Ok(match (op, r.rc) {
        (Op::Get(_), ReturnCode::Va) => Reply::Item(Some(Item {
            flags: r.client_flags().unwrap_or(0),
            cas: cas(&r),
            value: r.value.map(Block::into_vec).unwrap_or_default(),
        })),
        (Op::Get(_), ReturnCode::En) => Reply::Item(None),
        (Op::Set { .. }, ReturnCode::Hd) => Reply::Cas(cas(&r)),
        (Op::Add { .. } | Op::Replace { .. }, ReturnCode::Hd) => {
            Reply::Stored(Stored::Stored(cas(&r)))
        }
        (Op::Add { .. } | Op::Replace { .. }, ReturnCode::Ns) => Reply::Stored(Stored::NotStored),
        (Op::Cas { .. }, ReturnCode::Hd) => Reply::CasOutcome(CasOutcome::Stored(cas(&r))),
        (Op::Cas { .. }, ReturnCode::Ex) => Reply::CasOutcome(CasOutcome::Exists),
        (Op::Cas { .. }, ReturnCode::Nf) => Reply::CasOutcome(CasOutcome::NotFound),
        (Op::Append { .. } | Op::Prepend { .. } | Op::Delete(_), ReturnCode::Hd) => {
            Reply::Applied(true)
        }
        (Op::Delete(_), ReturnCode::Nf) => Reply::Applied(false),
        (Op::AppendOrAdd { .. }, ReturnCode::Hd) => Reply::Done,
        (Op::Incr { .. } | Op::Decr { .. }, ReturnCode::Va) => {
            Reply::Counter(Some(counter_value(&r, server)?))
        }
        (Op::Incr { .. } | Op::Decr { .. }, ReturnCode::Nf) => Reply::Counter(None),
        (Op::IncrOrInit { .. }, ReturnCode::Va) => Reply::Value(counter_value(&r, server)?),
        (Op::DeleteCas { .. }, ReturnCode::Hd) => Reply::Deleted(DeleteOutcome::Deleted),
        (Op::DeleteCas { .. }, ReturnCode::Ex) => Reply::Deleted(DeleteOutcome::Exists),
        (Op::DeleteCas { .. }, ReturnCode::Nf) => Reply::Deleted(DeleteOutcome::NotFound),
        (Op::Touch { .. }, ReturnCode::Hd) => Reply::Applied(true),
        (Op::Touch { .. }, ReturnCode::En) => Reply::Applied(false),
        _ => return Err(unexpected(server, op.name(), &r)),
    })
}

/// The new value an `incr_or_init` reply carries: what [`decode`] makes of
/// it (`Reply::Value`), without its dispatch and the move of the reply
/// into it, for the common case only; `None` for any other op or reply,
/// which [`decode`] then reads (and turns into an error where it must).
pub(crate) fn incremented(op: &Op<'_>, r: &MetaReply) -> Option<u64> {
    match (op, r.rc) {
        (Op::IncrOrInit { .. }, ReturnCode::Va) => {
            r.value.as_deref().and_then(backend::parse_counter)
        }
        _ => None,
    }
}

/// Whether a write that may answer `NS` for more than one reason (append,
/// prepend, `append_or_add`, the add of the append/add loop) stored (`HD`)
/// or not (`NS`). Any other reply is [`Error::Protocol`], naming the
/// command as `what`.
pub(crate) fn stored(r: &MetaReply, what: &str, server: &str) -> Result<bool> {
    match r.rc {
        ReturnCode::Hd => Ok(true),
        ReturnCode::Ns => Ok(false),
        _ => Err(unexpected(server, what, r)),
    }
}

/// The probe after an append-like write answered NS: `mg <k> s c`, the
/// size and CAS id of the item if it exists.
pub(crate) fn probe(key: &Key) -> MetaCommand {
    cmd(MetaOp::Get, key).flag("s").flag("c")
}

/// The raw CAS id of a [`probe`]'s reply (0 if it did not say, as on a
/// server without CAS ids): identifies this version of the item, which
/// any write or re-creation changes.
pub(crate) fn probed_cas(r: &MetaReply) -> u64 {
    r.cas().unwrap_or(0)
}

/// The reply to [`probe`]: `None` if the key is missing (`EN`), else the
/// item's size (0 if the reply did not say).
pub(crate) fn probed_size(r: &MetaReply) -> Option<usize> {
    if r.rc == ReturnCode::En {
        return None;
    }
    Some(usize::try_from(r.size().unwrap_or(0)).unwrap_or(usize::MAX))
}

/// `mg <k> v t`: the value and the seconds left before the item expires.
pub(crate) fn get_with_ttl(key: &Key) -> MetaCommand {
    cmd(MetaOp::Get, key).flag("v").flag("t")
}

/// The reply to [`get_with_ttl`]: `None` on a miss, else the value and the
/// time left on the server's clock (`None`: the item never expires, `t-1`).
/// A hit without a `t` flag, or a negative TTL other than -1, is
/// [`Error::Protocol`].
pub(crate) fn value_and_ttl(
    r: &MetaReply,
    server: &str,
) -> Result<Option<(Vec<u8>, Option<Duration>)>> {
    if r.rc == ReturnCode::En {
        return Ok(None);
    }
    let (Some(value), Some(ttl)) = (&r.value, r.ttl()) else {
        return Err(unexpected(server, "mg v t (no value or no TTL)", r));
    };
    let left = match ttl {
        -1 => None,
        t => {
            Some(Duration::from_secs(u64::try_from(t).map_err(|_| {
                unexpected(server, "mg v t (TTL below -1)", r)
            })?))
        }
    };
    Ok(Some((value.to_vec(), left)))
}

fn counter_value(r: &MetaReply, server: &str) -> Result<u64> {
    r.value
        .as_deref()
        .and_then(backend::parse_counter)
        .ok_or_else(|| unexpected(server, "ma (value is not a number)", r))
}

fn unexpected(server: &str, what: &str, r: &MetaReply) -> Error {
    Error::Protocol {
        server: server.to_string(),
        message: format!("unexpected reply {:?} to {what}", r.rc),
    }
}

/// A valid reply to `op` at batch `position`: its bytes, and what
/// [`decode`] makes of them (`None`: finished after the batch, an
/// append-like op that answered `NS`). Beside the encoder and the decoder
/// so that each op kind's three live together; the fuzz harness
/// (`fuzzing.rs`) feeds these, and bytes around them, to the decoder.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn example_reply(
    op: &Op<'_>,
    position: usize,
    incarnation: &Incarnation,
) -> (String, Option<Reply>) {
    let o = format!("O{position}");
    let cas = 1000 + position as u64;
    let out = incarnation.cas_out(cas);
    match op {
        Op::Get(_) => (
            format!("VA 2 f5 c{cas} {o}\r\nhi\r\n"),
            Some(Reply::Item(Some(Item {
                flags: 5,
                cas: out,
                value: b"hi".to_vec(),
            }))),
        ),
        Op::Set { .. } => (format!("HD c{cas} {o}\r\n"), Some(Reply::Cas(out))),
        // Add, replace and cas: the text write's reply, then the `mg`'s.
        Op::Add { .. } => (
            format!("NOT_STORED\r\nVA 1 c{cas} {o}\r\nx\r\n"),
            Some(Reply::Stored(Stored::NotStored)),
        ),
        Op::Replace { .. } => (
            format!("STORED\r\nVA 1 c{cas} {o}\r\nv\r\n"),
            Some(Reply::Stored(Stored::Stored(out))),
        ),
        Op::Cas { .. } => (
            format!("EXISTS\r\nEN {o}\r\n"),
            Some(Reply::CasOutcome(CasOutcome::Exists)),
        ),
        Op::Append { .. } => (format!("STORED\r\nHD {o}\r\n"), Some(Reply::Applied(true))),
        Op::Prepend { .. } => (format!("NOT_STORED\r\nEN {o}\r\n"), None),
        Op::AppendOrAdd { .. } => (format!("STORED\r\nHD {o}\r\n"), Some(Reply::Done)),
        Op::Incr { .. } => (
            format!("VA 2 {o}\r\n42\r\n"),
            Some(Reply::Counter(Some(42))),
        ),
        Op::Decr { .. } => (format!("NF {o}\r\n"), Some(Reply::Counter(None))),
        Op::IncrOrInit { .. } => (format!("VA 1 {o}\r\n7\r\n"), Some(Reply::Value(7))),
        Op::Delete(_) => (format!("NF {o}\r\n"), Some(Reply::Applied(false))),
        Op::DeleteCas { .. } => (
            format!("EX {o}\r\n"),
            Some(Reply::Deleted(DeleteOutcome::Exists)),
        ),
        Op::Touch { .. } => (format!("EN {o}\r\n"), Some(Reply::Applied(false))),
    }
}

#[cfg(test)]
mod wire_tests {
    use super::*;
    use mcds_core::Ttl;
    use mcds_net::incarnation::Version;

    /// [`incremented`] reads what [`decode`] reads, and leaves to it every
    /// reply it does not take (values that are not counters, other codes,
    /// other ops).
    #[test]
    fn incremented_agrees_with_decode() {
        let k = Key::new("n").unwrap();
        let inc = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        let ops = [
            Op::IncrOrInit {
                key: &k,
                delta: 1,
                initial: 1,
                ttl: Ttl::Never,
            },
            Op::Incr { key: &k, delta: 1 },
            Op::Get(&k),
        ];
        let values: [&[u8]; 8] = [
            b"0",
            b"7",
            b"42",
            b"18446744073709551615",
            b"12  ",
            b"",
            b"x1",
            b"-5",
        ];
        let mut taken = 0;
        for op in &ops {
            for rc in [ReturnCode::Va, ReturnCode::Hd, ReturnCode::Nf] {
                for value in values {
                    let mut r = MetaReply::nothing();
                    r.rc = rc;
                    r.value = Some(crate::reply::Block::from_slice(value));
                    let decoded = decode(op, Some(r.clone()), &inc, "s");
                    match incremented(op, &r) {
                        Some(n) => {
                            taken += 1;
                            assert!(
                                matches!(decoded, Ok(Reply::Value(m)) if m == n),
                                "{op:?} {value:?}"
                            );
                        }
                        // What is left to `decode` is not an incr_or_init's
                        // value: an error, or another op's reply.
                        None => assert!(
                            !matches!(op, Op::IncrOrInit { .. })
                                || !matches!(decoded, Ok(Reply::Value(_))),
                            "{op:?} {rc:?} {value:?}"
                        ),
                    }
                }
            }
        }
        // The five counters among the values, in an incr_or_init's VA.
        assert_eq!(taken, 5);
    }

    /// Numbers of one digit are written without the formatter: every
    /// width, 0 to `u64::MAX`, in every numeric field, is what the
    /// `memcache` builder writes.
    #[test]
    fn numbers_of_every_width() {
        let k = Key::new("n").unwrap();
        let inc = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        let numbers = [0, 1, 9, 10, 11, 99, 100, 255, 256, 1 << 32, u64::MAX];
        for &n in &numbers {
            for &m in &numbers {
                let ttl = Ttl::secs(u32::try_from(m % 2_000_000).unwrap());
                let ops = [
                    Op::IncrOrInit {
                        key: &k,
                        delta: n,
                        initial: m,
                        ttl,
                    },
                    Op::Incr { key: &k, delta: n },
                    Op::Touch { key: &k, ttl },
                ];
                for op in &ops {
                    let opaque = u32::try_from(n % (1 << 32)).unwrap();
                    let command = encode(op, &inc, 1 << 20)
                        .unwrap()
                        .command
                        .flag(format!("O{opaque}"));
                    let mut wire = Vec::new();
                    encode_wire(op, &inc, 1 << 20, &mut wire, opaque, false).unwrap();
                    assert_eq!(
                        String::from_utf8_lossy(&wire),
                        String::from_utf8_lossy(&command.encode().unwrap()),
                        "{op:?}"
                    );
                }
            }
        }
    }

    /// The direct encoder writes byte for byte what `encode` and the
    /// `memcache` crate's encoder write, for every op, on servers with and
    /// without `md … C`, quiet or not.
    #[test]
    fn the_direct_encoder_matches_the_command_builder() {
        let k = Key::new("k:1").unwrap();
        let v = b"value".as_slice();
        let ttl = Ttl::secs(30);
        let ops = [
            Op::Get(&k),
            Op::Set {
                key: &k,
                value: v,
                ttl,
            },
            Op::Add {
                key: &k,
                value: v,
                ttl: Ttl::Never,
            },
            Op::Replace {
                key: &k,
                value: v,
                ttl,
            },
            Op::Cas {
                key: &k,
                value: v,
                ttl,
                cas: 77,
            },
            Op::Append { key: &k, value: v },
            Op::Prepend { key: &k, value: v },
            Op::AppendOrAdd {
                key: &k,
                value: v,
                ttl,
            },
            Op::Incr { key: &k, delta: 5 },
            Op::Decr { key: &k, delta: 5 },
            Op::IncrOrInit {
                key: &k,
                delta: 2,
                initial: 9,
                ttl,
            },
            Op::Delete(&k),
            Op::DeleteCas { key: &k, cas: 12 },
            Op::Touch { key: &k, ttl },
        ];
        for version in [Version(1, 6, 18), Version(1, 6, 5)] {
            let inc = Incarnation::new(version, b"marker", true, None);
            for op in &ops {
                if is_pair(op, &inc) {
                    assert!(encode(op, &inc, 1 << 20).is_err(), "{op:?}");
                    continue;
                }
                for quiet_in_batch in [false, true] {
                    let Encoded { command, quiet } = encode(op, &inc, 1 << 20).unwrap();
                    let mut command = command.flag("O42");
                    if quiet && quiet_in_batch {
                        command = command.flag("q");
                    }
                    let mut wire = Vec::new();
                    let q = encode_wire(op, &inc, 1 << 20, &mut wire, 42, quiet_in_batch).unwrap();
                    assert_eq!(q, quiet && quiet_in_batch, "{op:?}");
                    assert_eq!(
                        String::from_utf8_lossy(&wire),
                        String::from_utf8_lossy(&command.encode().unwrap()),
                        "{op:?} on {version}"
                    );
                }
            }
        }
        // The conditional writes: the text command, then the tagged `mg`,
        // never quiet.
        let inc = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        let pairs = [
            (
                Op::Add {
                    key: &k,
                    value: v,
                    ttl: Ttl::Never,
                },
                "add k:1 0 0 5\r\nvalue\r\nmg k:1 v c O42\r\n",
            ),
            (
                Op::Replace {
                    key: &k,
                    value: v,
                    ttl: Ttl::Never,
                },
                "replace k:1 0 0 5\r\nvalue\r\nmg k:1 v c O42\r\n",
            ),
            (
                Op::Cas {
                    key: &k,
                    value: v,
                    ttl: Ttl::Never,
                    cas: inc.cas_out(77),
                },
                "cas k:1 0 0 5 77\r\nvalue\r\nmg k:1 v c O42\r\n",
            ),
            (
                Op::Append { key: &k, value: v },
                "append k:1 0 0 5\r\nvalue\r\nmg k:1 O42\r\n",
            ),
            (
                Op::Prepend { key: &k, value: v },
                "prepend k:1 0 0 5\r\nvalue\r\nmg k:1 O42\r\n",
            ),
            (
                Op::AppendOrAdd {
                    key: &k,
                    value: v,
                    ttl: Ttl::secs(30),
                },
                "append k:1 0 0 5\r\nvalue\r\nmg k:1 O42\r\n",
            ),
        ];
        let old = Incarnation::new(Version(1, 6, 12), b"marker", true, None);
        let mut wire = Vec::new();
        let delete_cas = Op::DeleteCas {
            key: &k,
            cas: old.cas_out(12),
        };
        assert!(!encode_wire(&delete_cas, &old, 1 << 20, &mut wire, 42, true).unwrap());
        assert_eq!(
            String::from_utf8_lossy(&wire),
            "cas k:1 0 -1 0 12\r\n\r\nmg k:1 O42\r\n"
        );
        for (op, expected) in pairs {
            for quiet_in_batch in [false, true] {
                let mut wire = Vec::new();
                assert!(!encode_wire(&op, &inc, 1 << 20, &mut wire, 42, quiet_in_batch).unwrap());
                assert_eq!(String::from_utf8_lossy(&wire), expected);
            }
        }
        let mut wire = b"kept".to_vec();
        let big = vec![0u8; 2 << 20];
        let too_big = Op::Set {
            key: &k,
            value: &big,
            ttl,
        };
        let inc = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        assert!(encode_wire(&too_big, &inc, 1 << 20, &mut wire, 1, false).is_err());
        assert_eq!(wire, b"kept", "nothing written on an error");
    }

    fn reply(bytes: &str) -> MetaReply {
        crate::reply::read_reply(&mut bytes.as_bytes(), &mut Vec::new()).unwrap()
    }

    /// The CAS id a pair reports: the `mg`'s when the item holds the value
    /// written, else one no item of the key can have.
    #[test]
    fn a_pair_reports_the_id_of_the_item_it_wrote_or_one_that_never_matches() {
        let inc = Incarnation::new(Version(1, 6, 18), b"marker", true, None);
        let k = Key::new("k").unwrap();
        let add = Op::Add {
            key: &k,
            value: b"mine",
            ttl: Ttl::Never,
        };
        let merge = |text: &str, mg: &str| merge_pair(&add, reply(text), &reply(mg), &inc);
        let ours = merge("STORED\r\n", "VA 4 c9 O1\r\nmine\r\n");
        assert_eq!(
            (ours.rc, ours.cas(), ours.text),
            (ReturnCode::Hd, Some(9), true)
        );
        assert_eq!(merge("STORED\r\n", "VA 6 c9\r\ntheirs\r\n").cas(), Some(8));
        assert_eq!(merge("STORED\r\n", "EN O1\r\n").cas(), Some(1));
        let refused = merge("NOT_STORED\r\n", "VA 6 c9\r\ntheirs\r\n");
        assert_eq!((refused.rc, refused.cas()), (ReturnCode::Ns, None));
        let exists = merge("EXISTS\r\n", "VA 6 c9\r\ntheirs\r\n");
        assert_eq!((exists.rc, exists.cas()), (ReturnCode::Ex, None));
        let no_cas = Incarnation::new(Version(1, 6, 18), b"marker", false, None);
        let gone = merge_pair(&add, reply("STORED\r\n"), &reply("EN\r\n"), &no_cas);
        assert_eq!(gone.cas(), Some(0));
        // An append's reply carries no CAS id.
        let append = Op::Append {
            key: &k,
            value: b"mine",
        };
        let appended = merge_pair(&append, reply("STORED\r\n"), &reply("HD O3\r\n"), &inc);
        assert_eq!((appended.rc, appended.cas()), (ReturnCode::Hd, None));
        assert_eq!(appended.opaque.map(|o| o.index()), Some(Some(3)));
    }
}
