//! How an op becomes text commands for one server or proxy ([`Unit`]),
//! and how their replies become the op's [`Reply`]: the one place the
//! text protocol's encoding and decoding of each op kind live.

use mcds_core::{CasOutcome, DeleteOutcome, Error, Item, Key, Op, Reply, Result, Stored, Ttl};
use mcds_net::incarnation::{Incarnation, client_exptime};

use crate::store::TextStore;
use crate::wire::{self, Expect, Line, Resp};

/// Keys per multi-key `gets`, and its longest command line (memcached 1.4
/// reads a line of at most 2048 bytes before it must see the newline).
pub(crate) const MAX_GET_KEYS: usize = 64;
pub(crate) const MAX_GET_LINE: usize = 2000;

/// Commands for one server whose replies are read together: one op, or a
/// run of gets coalesced into one `gets k1 k2 …`.
pub(crate) struct Unit {
    /// Positions of the ops in their batch.
    pub(crate) ops: Vec<usize>,
    /// The (first) key, as shown in errors.
    pub(crate) key: String,
    /// Whether a lost reply may mean the command was applied.
    pub(crate) side_effect: bool,
    pub(crate) wire: Vec<u8>,
    pub(crate) expects: Vec<Expect>,
}

/// What the first exchange of an op gave.
pub(crate) enum Outcome {
    Done(Result<Reply>),
    /// Finish it with the loops of single exchanges: an append that
    /// answered NOT_STORED (missing or too large), an `incr_or_init` or
    /// `append_or_add` whose key was missing.
    Again,
}

pub(crate) fn unsupported(op: &'static str, hint: &'static str) -> Error {
    Error::Unsupported {
        op,
        backend: "memcached text protocol behind a proxy",
        hint,
    }
}

/// The hint of every op refused behind a proxy.
pub(crate) const PROXY_HINT: &str = "a proxy spreads keys over servers this client cannot see, so it cannot tell a server restart (which starts CAS ids again at 1) from a normal write, and an old CAS id could match a new item; connect to the memcached servers directly (TextStore without behind_proxy, or MemcachedStore) for CAS writes, conditional deletes, update() and the structures that need them (locks, set compaction, sketches)";

impl TextStore {
    /// The exptime for `ttl`: on the direct server's clock, or relative
    /// (absolute on this client's clock beyond 30 days) behind a proxy.
    pub(crate) fn exptime(inc: Option<&Incarnation>, ttl: Ttl) -> i64 {
        i64::from(inc.map_or_else(|| client_exptime(ttl), |i| i.exptime(ttl)))
    }

    /// `op` as the commands of its first exchange, for a server of
    /// incarnation `inc` (`None`: behind a proxy). Values over the item
    /// limit are [`Error::ValueTooLarge`], and ops that need CAS ids where
    /// there are none are [`Error::Unsupported`]: nothing is sent for
    /// either.
    pub(crate) fn plan(
        &self,
        op: &Op<'_>,
        index: usize,
        inc: Option<&Incarnation>,
    ) -> Result<Unit> {
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
    pub(crate) fn cas_incarnation<'i>(
        op: &Op<'_>,
        inc: Option<&'i Incarnation>,
    ) -> Result<&'i Incarnation> {
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
    pub(crate) fn decode(
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

    pub(crate) fn unexpected(&self, server: usize, what: &str, got: &str) -> Error {
        Error::Protocol {
            server: self.ids[server].clone(),
            message: format!("unexpected reply {got} to {what}"),
        }
    }

    /// The [`Error`] of an error reply (`ERROR`, `CLIENT_ERROR`,
    /// `SERVER_ERROR`) to a command on `key`.
    pub(crate) fn line_error(
        &self,
        server: usize,
        key: &Key,
        side_effect: bool,
        line: Line,
    ) -> Error {
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
}

/// Add the get of `key` (op `index`) to `last` if `last` is a run of gets
/// with room left.
pub(crate) fn extend_gets(last: &mut Unit, ops: &[Op<'_>], key: &Key, index: usize) -> bool {
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

/// The item of `key` in a retrieval reply (CAS ids unmasked for `inc`; 0
/// behind a proxy, where there are none).
pub(crate) fn item(values: Vec<wire::Value>, key: &Key, inc: Option<&Incarnation>) -> Option<Item> {
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
pub(crate) fn read_back(
    resp: Option<Resp>,
    key: &Key,
    value: &[u8],
    inc: Option<&Incarnation>,
) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::wire::Value;
    use mcds_net::Version;
    use mcds_net::incarnation::Incarnation;
    use mcds_net::transport::Endpoint;

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
