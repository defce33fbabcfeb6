//! [`Set`]: an append-only set in one item.

use std::collections::HashSet;
use std::sync::Arc;

use mcds_core::{
    Access, CasOutcome, Error, Io, Key, Op as StoreOp, Reply, Result, Scope, Store, Ttl, block_on,
    blocking_and_async,
};

pub(crate) use crate::codec::Op;
use crate::codec::{Decoded, binary, text};

/// Which codec a set uses: how its log of `+member` (add) and `-member`
/// (remove) tokens is stored. Decoding replays the log and keeps members in
/// first-insertion order ([`Decoded`](crate::Decoded)).
///
/// * Text: each token is the op, the member and one space (`+a +b -a `);
///   whitespace, control bytes, DEL and `%` in a member are written `%XX`.
///   A token that starts with neither `+` nor `-` is skipped (and counted as
///   dirt).
/// * Binary: the op byte, the member length as an unsigned LEB128 varint,
///   then the member bytes; a truncated or malformed log is
///   [`Corrupt`](mcds_core::Error::Corrupt).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Codec {
    /// `+a -b ` tokens with `%XX` escapes (compatible with Dustin Sallings' set encoding).
    #[default]
    Text,
    /// Length-prefixed tokens, for arbitrary bytes.
    Binary,
}

impl Codec {
    pub(crate) fn encode(self, op: Op, members: &[&[u8]]) -> Vec<u8> {
        match self {
            Codec::Text => text::encode(op, members),
            Codec::Binary => binary::encode(op, members),
        }
    }

    pub(crate) fn decode(self, key: &Key, bytes: &[u8]) -> Result<Decoded> {
        match self {
            Codec::Text => Ok(text::decode(bytes)),
            Codec::Binary => binary::decode(bytes).map_err(|e| Error::Corrupt {
                key: key.display(),
                reason: format!("binary set log: {e}"),
            }),
        }
    }
}

/// When [`Set::members`] compacts: once dirtiness exceeds both `min_dirt`
/// and `ratio` × the number of members.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compaction {
    /// Never compact below this many dead tokens (default 64).
    pub min_dirt: usize,
    /// Compact when dead tokens exceed this many per live member (default 1.0).
    pub ratio: f64,
}

impl Default for Compaction {
    fn default() -> Self {
        Compaction {
            min_dirt: 64,
            ratio: 1.0,
        }
    }
}

impl Compaction {
    fn due(&self, d: &Decoded) -> bool {
        d.dirtiness > self.min_dirt && d.dirtiness as f64 > self.ratio * d.members.len() as f64
    }
}

/// A set of byte strings in one memcached item (Dustin Sallings' "Maintaining a set in memcached").
///
/// * `add`/`remove` append `+m`/`-m` tokens for the whole batch: **one
///   round trip per call**, whatever the batch size, no read, no lock.
///   Removing from a missing set creates nothing.
/// * `members` reads the log (one round trip) and, when too much of it is
///   dead ([`Compaction`]), rewrites it compacted with a CAS (a second round
///   trip). A compaction that loses a race to a concurrent append simply
///   fails: nothing is destroyed.
/// * A write that would push the item past the size limit rewrites the
///   set without its dead tokens, by CAS, with the write applied (2 more
///   round trips). If the live members with an add's still do not fit, the
///   add fails with [`Error::ValueTooLarge`] and nothing of it is written;
///   a remove always fits, so a full set can always shrink. Use
///   [`ShardedSet`](crate::ShardedSet) for larger sets (its shards are
///   written one item each: a batch over several shards can be refused in
///   one shard and written in the others, and the error names the shard's
///   key).
/// * Every method that reaches the store has an async twin (`add_async`,
///   …): the same algorithm (see [`Access`]), awaiting the store instead of
///   blocking the thread.
///
/// Key: `<prefix>set:<name>:log`.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_set::Set;
///
/// let tags = Set::new(Arc::new(MemoryStore::new()), "post:7:tags")?;
/// tags.add(&["rust", "memcached", "cas"])?;
/// tags.remove(&["cas"])?;
/// assert_eq!(tags.members_utf8()?, ["rust", "memcached"]);
/// assert!(tags.contains("rust")?);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses the set's one item: every member, and
/// adds after the loss start it again. No read can tell a lost set from one
/// never written: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct Set {
    store: Arc<dyn Store>,
    key: Key,
    codec: Codec,
    ttl: Ttl,
    compaction: Compaction,
}

/// CAS attempts of a [`Set::rewrite`] before [`Error::Conflict`]: each
/// failed attempt saw another client's append land between its read and
/// its write.
const REWRITE_ATTEMPTS: u32 = 64;

fn as_slices<M: AsRef<[u8]>>(members: &[M]) -> Vec<&[u8]> {
    members.iter().map(AsRef::as_ref).collect()
}

impl Set {
    /// The set `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix), with the text codec and no expiry.
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<Set> {
        let scope = scope.into();
        Ok(Set::with_key(
            Arc::clone(scope.store()),
            scope.key("set", name, "log")?,
        ))
    }

    /// A set stored under an explicit key (no prefix is added).
    pub fn with_key(store: Arc<dyn Store>, key: Key) -> Set {
        Set {
            store,
            key,
            codec: Codec::Text,
            ttl: Ttl::Never,
            compaction: Compaction::default(),
        }
    }

    /// Use `codec` (every reader and writer of the set must agree).
    pub fn with_codec(mut self, codec: Codec) -> Set {
        self.codec = codec;
        self
    }

    /// Expire the set `ttl` after it is created (and after each compaction).
    pub fn with_ttl(mut self, ttl: Ttl) -> Set {
        self.ttl = ttl;
        self
    }

    /// When to compact.
    pub fn with_compaction(mut self, compaction: Compaction) -> Set {
        self.compaction = compaction;
        self
    }

    /// The codec in use.
    pub fn codec(&self) -> Codec {
        self.codec
    }

    /// The key the set lives under.
    pub fn key(&self) -> &Key {
        &self.key
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// Add `members`: one append (creating the set if needed).
    pub fn add<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        block_on(self.write_io(Io::Blocking, Op::Add, &as_slices(members)))
    }

    /// [`add`](Set::add) without blocking the thread.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_set::Set;
    /// # mcds_core::block_on(async {
    /// let tags = Set::new(Arc::new(MemoryStore::new()), "tags")?;
    /// tags.add_async(&["rust", "cas"]).await?;
    /// assert_eq!(tags.members_utf8_async().await?, ["rust", "cas"]);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn add_async<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write_io(Io::Async, Op::Add, &as_slices(members)).await
    }

    /// Remove `members`: one append; a missing set stays missing.
    pub fn remove<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        block_on(self.write_io(Io::Blocking, Op::Remove, &as_slices(members)))
    }

    /// [`remove`](Set::remove) without blocking the thread.
    pub async fn remove_async<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write_io(Io::Async, Op::Remove, &as_slices(members))
            .await
    }

    async fn write_io(&self, io: Io, op: Op, members: &[&[u8]]) -> Result<()> {
        if members.is_empty() {
            return Ok(());
        }
        let tokens = self.tokens(op, members);
        let first = self.access(io).execute(&self.store_op(op, &tokens)).await;
        self.finish(io, op, members, first).await
    }

    /// The encoded tokens of an add or remove.
    pub(crate) fn tokens(&self, op: Op, members: &[&[u8]]) -> Vec<u8> {
        self.codec.encode(op, members)
    }

    /// The store operation that writes `tokens`: `append_or_add` for an
    /// add, `append` for a remove (a missing set stays missing). Tables and
    /// sharded sets put it in a pipelined batch.
    pub(crate) fn store_op<'a>(&'a self, op: Op, tokens: &'a [u8]) -> StoreOp<'a> {
        match op {
            Op::Add => StoreOp::AppendOrAdd {
                key: &self.key,
                value: tokens,
                ttl: self.ttl,
            },
            Op::Remove => StoreOp::Append {
                key: &self.key,
                value: tokens,
            },
        }
    }

    /// Handle the result of [`store_op`](Self::store_op) for `members`:
    /// when the item limit refused the append, [`rewrite`](Self::rewrite)
    /// the set with the write applied.
    pub(crate) async fn finish(
        &self,
        io: Io,
        op: Op,
        members: &[&[u8]],
        result: Result<Reply>,
    ) -> Result<()> {
        match result {
            Ok(_) => Ok(()),
            Err(Error::ValueTooLarge { .. }) => self.rewrite(io, op, members).await,
            Err(e) => Err(e),
        }
    }

    /// Apply `op` of `members` by rewriting the whole set compacted, by
    /// CAS: what a write does when the item limit refused its append. The
    /// dead tokens go, and the write lands if the live members with it fit
    /// one item; if they do not, nothing is written and the error is
    /// [`Error::ValueTooLarge`]. A remove always fits (it only shrinks the
    /// set), so a full set can always shrink. A concurrent append makes
    /// the CAS fail, and the rewrite starts again from a fresh read (up to
    /// [`REWRITE_ATTEMPTS`] times, then [`Error::Conflict`], nothing
    /// written). 2 round trips per attempt. Needs CAS: a store without it
    /// (`-C`, a proxy) refuses with [`Error::Unsupported`], nothing written.
    pub(crate) async fn rewrite(&self, io: Io, op: Op, members: &[&[u8]]) -> Result<()> {
        let limit = self.store.item_size_limit();
        let mut refusal: Option<Error> = None;
        let mut apply = |current: Option<&[u8]>| -> Option<Vec<u8>> {
            refusal = None;
            let mut live = match current.map(|bytes| self.codec.decode(&self.key, bytes)) {
                None => Vec::new(),
                Some(Ok(decoded)) => decoded.members,
                Some(Err(e)) => {
                    refusal = Some(e);
                    return None;
                }
            };
            match op {
                Op::Add => {
                    let mut have: HashSet<Vec<u8>> = live.iter().cloned().collect();
                    for &m in members {
                        if have.insert(m.to_vec()) {
                            live.push(m.to_vec());
                        }
                    }
                }
                Op::Remove => {
                    let gone: HashSet<&[u8]> = members.iter().copied().collect();
                    current?; // removing from a missing set creates nothing
                    live.retain(|m| !gone.contains(m.as_slice()));
                }
            }
            let bytes = self.encode_set(&live);
            if let Err(e) = mcds_core::backend::check_item_size(&self.key, bytes.len(), limit) {
                refusal = Some(e);
                return None;
            }
            Some(bytes)
        };
        self.access(io)
            .update(&self.key, self.ttl, REWRITE_ATTEMPTS, &mut apply)
            .await?;
        refusal.map_or(Ok(()), Err)
    }

    /// Read and decode, without compacting.
    #[blocking_and_async(pub)]
    async fn decoded_io(&self, io: Io) -> Result<Decoded> {
        match self.access(io).get(&self.key).await? {
            None => Ok(Decoded::default()),
            Some(item) => self.codec.decode(&self.key, &item.value),
        }
    }

    /// The members in first-insertion order. One round trip; two when the log
    /// is dirty enough to compact.
    #[blocking_and_async(pub)]
    pub(crate) async fn members_io(&self, io: Io) -> Result<Vec<Vec<u8>>> {
        let access = self.access(io);
        let Some(item) = access.get(&self.key).await? else {
            return Ok(Vec::new());
        };
        let decoded = self.codec.decode(&self.key, &item.value)?;
        if self.compaction.due(&decoded) {
            // Best effort: losing the race to an append is harmless.
            let _ = access
                .cas(
                    &self.key,
                    &self.encode_set(&decoded.members),
                    self.ttl,
                    item.cas,
                )
                .await;
        }
        Ok(decoded.members)
    }

    /// The members as text (lossy for non-UTF-8 members).
    #[blocking_and_async(pub)]
    async fn members_utf8_io(&self, io: Io) -> Result<Vec<String>> {
        Ok(self
            .members_io(io)
            .await?
            .into_iter()
            .map(|m| String::from_utf8_lossy(&m).into_owned())
            .collect())
    }

    /// Whether `member` is in the set. One round trip.
    #[blocking_and_async(pub)]
    pub(crate) async fn contains_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<bool> {
        let member = member.as_ref();
        Ok(self
            .decoded_io(io)
            .await?
            .members
            .iter()
            .any(|m| m == member))
    }

    /// The number of members. One round trip.
    #[blocking_and_async(pub)]
    async fn len_io(&self, io: Io) -> Result<usize> {
        Ok(self.decoded_io(io).await?.members.len())
    }

    /// Whether the set has no members.
    #[blocking_and_async(pub)]
    async fn is_empty_io(&self, io: Io) -> Result<bool> {
        Ok(self.len_io(io).await? == 0)
    }

    /// Delete the set.
    #[blocking_and_async(pub)]
    pub(crate) async fn clear_io(&self, io: Io) -> Result<()> {
        self.access(io).delete(&self.key).await.map(drop)
    }

    /// Rewrite the log without dead tokens, by CAS. `Ok(true)` if it was
    /// rewritten, `Ok(false)` if there was nothing to do or a concurrent
    /// append won (nothing is lost either way).
    #[blocking_and_async(pub)]
    pub(crate) async fn compact_io(&self, io: Io) -> Result<bool> {
        let access = self.access(io);
        let Some(item) = access.get(&self.key).await? else {
            return Ok(false);
        };
        let decoded = self.codec.decode(&self.key, &item.value)?;
        if decoded.dirtiness == 0 {
            return Ok(false);
        }
        let compacted = self.encode_set(&decoded.members);
        Ok(matches!(
            access
                .cas(&self.key, &compacted, self.ttl, item.cas)
                .await?,
            CasOutcome::Stored(_)
        ))
    }

    fn encode_set(&self, members: &[Vec<u8>]) -> Vec<u8> {
        self.codec.encode(Op::Add, &as_slices(members))
    }
}
