//! [`Set`]: an append-only set in one item.

use std::sync::Arc;

use mcds_core::{CasOutcome, Error, Key, Op as StoreOp, Reply, Result, Scope, Store, Ttl};

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
/// * An add that would push the item past the size limit compacts and tries
///   once more, then fails with [`Error::ValueTooLarge`]: nothing is dropped
///   silently. Use [`ShardedSet`](crate::ShardedSet) for larger sets.
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
#[derive(Clone, Debug)]
pub struct Set {
    store: Arc<dyn Store>,
    key: Key,
    codec: Codec,
    ttl: Ttl,
    compaction: Compaction,
}

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

    /// Add `members`: one append (creating the set if needed).
    pub fn add<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write(Op::Add, &as_slices(members))
    }

    /// Remove `members`: one append; a missing set stays missing.
    pub fn remove<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write(Op::Remove, &as_slices(members))
    }

    fn write(&self, op: Op, members: &[&[u8]]) -> Result<()> {
        if members.is_empty() {
            return Ok(());
        }
        let tokens = self.tokens(op, members);
        let first = self.store.execute(&self.store_op(op, &tokens));
        self.finish(op, &tokens, first)
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

    /// Handle the result of [`store_op`](Self::store_op): when the item is
    /// full, compact and write once more.
    pub(crate) fn finish(&self, op: Op, tokens: &[u8], result: Result<Reply>) -> Result<()> {
        match result {
            Ok(_) => Ok(()),
            Err(Error::ValueTooLarge { .. }) if self.compact()? => {
                self.store.execute(&self.store_op(op, tokens)).map(drop)
            }
            Err(e) => Err(e),
        }
    }

    /// Read and decode, without compacting.
    pub fn decoded(&self) -> Result<Decoded> {
        match self.store.get(&self.key)? {
            None => Ok(Decoded::default()),
            Some(item) => self.codec.decode(&self.key, &item.value),
        }
    }

    /// The members in first-insertion order. One round trip; two when the log
    /// is dirty enough to compact.
    pub fn members(&self) -> Result<Vec<Vec<u8>>> {
        let Some(item) = self.store.get(&self.key)? else {
            return Ok(Vec::new());
        };
        let decoded = self.codec.decode(&self.key, &item.value)?;
        if self.compaction.due(&decoded) {
            // Best effort: losing the race to an append is harmless.
            let _ = self.store.cas(
                &self.key,
                &self.encode_set(&decoded.members),
                self.ttl,
                item.cas,
            );
        }
        Ok(decoded.members)
    }

    /// The members as text (lossy for non-UTF-8 members).
    pub fn members_utf8(&self) -> Result<Vec<String>> {
        Ok(self
            .members()?
            .into_iter()
            .map(|m| String::from_utf8_lossy(&m).into_owned())
            .collect())
    }

    /// Whether `member` is in the set. One round trip.
    pub fn contains(&self, member: impl AsRef<[u8]>) -> Result<bool> {
        let member = member.as_ref();
        Ok(self.decoded()?.members.iter().any(|m| m == member))
    }

    /// The number of members. One round trip.
    pub fn len(&self) -> Result<usize> {
        Ok(self.decoded()?.members.len())
    }

    /// Whether the set has no members.
    pub fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Delete the set.
    pub fn clear(&self) -> Result<()> {
        self.store.delete(&self.key).map(drop)
    }

    /// Rewrite the log without dead tokens, by CAS. `Ok(true)` if it was
    /// rewritten, `Ok(false)` if there was nothing to do or a concurrent
    /// append won (nothing is lost either way).
    pub fn compact(&self) -> Result<bool> {
        let Some(item) = self.store.get(&self.key)? else {
            return Ok(false);
        };
        let decoded = self.codec.decode(&self.key, &item.value)?;
        if decoded.dirtiness == 0 {
            return Ok(false);
        }
        let compacted = self.encode_set(&decoded.members);
        Ok(matches!(
            self.store.cas(&self.key, &compacted, self.ttl, item.cas)?,
            CasOutcome::Stored(_)
        ))
    }

    fn encode_set(&self, members: &[Vec<u8>]) -> Vec<u8> {
        self.codec.encode(Op::Add, &as_slices(members))
    }
}
