//! The ops the text protocol has no single command for, finished after
//! their first exchange by the loops both backends share
//! ([`mcds_net::fallback`]) over this store's single exchanges.

use mcds_core::{Error, Io, Key, Op, Reply, Result, Ttl, block_on};
use mcds_net::fallback::{self, NotStored, Start};
use mcds_net::incarnation::Incarnation;

use crate::plan::Unit;
use crate::store::TextStore;
use crate::wire::{self, Expect, Line, Resp};

impl TextStore {
    /// One status line from one command on `key`'s server.
    pub(crate) fn line(
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
    pub(crate) fn add_raw(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<bool> {
        match self.line(key, true, &|w, inc| {
            wire::storage(w, "add", key, Self::exptime(inc, ttl), value, None)
        })? {
            Line::Stored => Ok(true),
            Line::NotStored => Ok(false),
            other => Err(self.unexpected(self.server_for(key), "add", &format!("{other:?}"))),
        }
    }

    /// `append`/`prepend`: whether it stored.
    pub(crate) fn concat_once(&self, key: &Key, value: &[u8], verb: &'static str) -> Result<bool> {
        match self.line(key, true, &|w, _| {
            wire::storage(w, verb, key, 0, value, None)
        })? {
            Line::Stored => Ok(true),
            Line::NotStored => Ok(false),
            other => Err(self.unexpected(self.server_for(key), verb, &format!("{other:?}"))),
        }
    }

    /// `incr`: the new value, `None` on a miss.
    pub(crate) fn incr_once(&self, key: &Key, delta: u64) -> Result<Option<u64>> {
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
    pub(crate) fn probe(&self, key: &Key, added: usize) -> Result<NotStored> {
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
    pub(crate) fn concat_after_miss(&self, key: &Key, value: &[u8], prepend: bool) -> Result<bool> {
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
    pub(crate) fn append_or_add_after_miss(&self, key: &Key, value: &[u8], ttl: Ttl) -> Result<()> {
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
    pub(crate) fn incr_or_init_after_miss(
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

    /// Finish an op whose first exchange answered [`Outcome::Again`](crate::plan::Outcome::Again).
    pub(crate) fn finish(&self, op: &Op<'_>) -> Result<Reply> {
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
