//! The loops that finish the writes memcached has no single command for,
//! written once for both backends over their single exchanges
//! ([`Steps`]): an append whose "not stored" may mean "missing" or "too
//! large" ([`concat()`]), an append that creates its key
//! ([`append_or_add`]), and, where the protocol lacks it, an increment
//! that creates its counter ([`incr_or_init`]).
//!
//! Each loop is bounded, and none loses or doubles a write: an append
//! either landed once or is retried after a read showed it did not; an
//! add that lost to another client's add is followed by an append, not a
//! second add.

use std::future::Future;

use mcds_core::{Error, Io, Key, Result, Ttl};

/// Why an append answered "not stored" (what [`Steps::probe`] found).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotStored {
    /// The key is missing.
    Missing,
    /// The key exists and the append would fit the configured limit; the
    /// item's version, if the protocol tells one (its CAS id, or its size
    /// on the text protocol): see [`Refusals`].
    Exists(Option<u64>),
}

/// One backend's single exchanges, which the loops are made of. `io`:
/// whether the caller may block ([`Io`]).
pub trait Steps: Send {
    /// `append` (`prepend` if `prepend`) `value` to `key`: whether it was
    /// stored.
    fn concat(
        &mut self,
        io: Io,
        key: &Key,
        value: &[u8],
        prepend: bool,
    ) -> impl Future<Output = Result<bool>> + Send;

    /// `add` `value` as `key` with `ttl`: whether it was stored.
    fn add(
        &mut self,
        io: Io,
        key: &Key,
        value: &[u8],
        ttl: Ttl,
    ) -> impl Future<Output = Result<bool>> + Send;

    /// After an append of `added` bytes answered "not stored": whether
    /// the key is missing, or exists and the append would fit; an append
    /// that would not fit is [`Error::ValueTooLarge`].
    fn probe(
        &mut self,
        io: Io,
        key: &Key,
        added: usize,
    ) -> impl Future<Output = Result<NotStored>> + Send;

    /// `incr` `key` by `delta`: the new value, `None` if it is missing.
    fn incr(
        &mut self,
        io: Io,
        key: &Key,
        delta: u64,
    ) -> impl Future<Output = Result<Option<u64>>> + Send;
}

/// What the probes after refused appends have seen: the same version of
/// the item twice means no other client wrote, deleted or re-created it
/// in between, so the refusal was not contention but the server's own
/// refusal to grow it (its `-I` smaller than the configured limit, or no
/// memory for the larger item). Without a version (memcached `-C`) it
/// cannot tell, and contention stays the diagnosis.
#[derive(Debug, Default)]
pub struct Refusals {
    last: Option<u64>,
}

impl Refusals {
    /// A probe saw the key at `version`: [`Error::ValueTooLarge`] if the
    /// previous probe saw the same.
    pub fn seen(&mut self, key: &Key, version: Option<u64>, limit: usize) -> Result<()> {
        if let Some(version) = version
            && self.last.replace(version) == Some(version)
        {
            return Err(Error::ValueTooLarge {
                key: key.display(),
                size: 0,
                limit,
            });
        }
        Ok(())
    }
}

/// Where [`concat()`] starts: with the append, or with the probe when the
/// append was already sent (in a pipeline) and answered "not stored".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// With the write itself.
    Write,
    /// With what follows a write that answered "not stored".
    AfterNotStored,
}

/// `append`/`prepend` that tells "missing" (`false`) from "too large"
/// ([`Error::ValueTooLarge`]): each "not stored" is followed by a probe,
/// and a key that exists and fits (created meanwhile) is appended to
/// again. Four appends and four probes at most, alternating from `start`;
/// then [`Error::Conflict`]. `limit` is the configured item size limit.
pub async fn concat<S: Steps>(
    steps: &mut S,
    io: Io,
    key: &Key,
    value: &[u8],
    prepend: bool,
    start: Start,
    limit: usize,
) -> Result<bool> {
    const ROUNDS: usize = 4;
    let mut refusals = Refusals::default();
    let append_first = start == Start::Write;
    for step in 0..2 * ROUNDS {
        if (step % 2 == 0) == append_first {
            if steps.concat(io, key, value, prepend).await? {
                return Ok(true);
            }
        } else {
            match steps.probe(io, key, value.len()).await? {
                NotStored::Missing => return Ok(false),
                // Created meanwhile, or grown by others: again.
                NotStored::Exists(version) => refusals.seen(key, version, limit)?,
            }
        }
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: ROUNDS as u32,
    })
}

/// `append_or_add`: append; on a miss add; if the add lost (the key exists
/// now), append again. Up to 16 rounds of append-then-add, then
/// [`Error::Conflict`]; from `start` ([`Start::AfterNotStored`]: a
/// pipelined append already missed, so the first round is the add alone).
///
/// While the key has not been seen, an append's "not stored" is taken as a
/// miss: the add follows at once (2 round trips on first touch, then 1).
/// Once the key has been seen to exist (an add lost, or a probe found it),
/// "not stored" may mean "too large": a probe tells, and a key that exists
/// and fits is appended to again, with no add.
#[allow(clippy::too_many_arguments)]
pub async fn append_or_add<S: Steps>(
    steps: &mut S,
    io: Io,
    key: &Key,
    value: &[u8],
    ttl: Ttl,
    start: Start,
    limit: usize,
) -> Result<()> {
    const ROUNDS: u32 = 16;
    let mut skip_append = start == Start::AfterNotStored;
    let mut seen_existing = false;
    let mut refusals = Refusals::default();
    for _ in 0..ROUNDS {
        if !std::mem::take(&mut skip_append) {
            if steps.concat(io, key, value, false).await? {
                return Ok(());
            }
            if seen_existing
                && let NotStored::Exists(version) = steps.probe(io, key, value.len()).await?
            {
                refusals.seen(key, version, limit)?;
                continue;
            }
        }
        if steps.add(io, key, value, ttl).await? {
            return Ok(());
        }
        seen_existing = true;
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: ROUNDS,
    })
}

/// `incr_or_init` after its `incr` missed, for a protocol without one
/// command for it: add the initial value; if the add lost (another client
/// created the counter), incr again. Up to 64 rounds, then
/// [`Error::Conflict`]; never a lost increment.
pub async fn incr_or_init<S: Steps>(
    steps: &mut S,
    io: Io,
    key: &Key,
    delta: u64,
    initial: u64,
    ttl: Ttl,
) -> Result<u64> {
    const ROUNDS: u32 = 64;
    for _ in 0..ROUNDS {
        if steps
            .add(io, key, initial.to_string().as_bytes(), ttl)
            .await?
        {
            return Ok(initial);
        }
        if let Some(v) = steps.incr(io, key, delta).await? {
            return Ok(v);
        }
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: ROUNDS,
    })
}
