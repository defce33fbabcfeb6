//! [`Set`]: an append-only set whose buckets split as they fill.

use std::sync::Arc;

use mcds_core::{Error, Io, Key, Reply, Result, Scope, Store, Ttl, block_on, blocking_and_async};

use crate::buckets::{Append, Buckets};

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

    /// Whether `member` is live in the log `bytes`, by a scan (no decode).
    pub(crate) fn contains(self, key: &Key, bytes: &[u8], member: &[u8]) -> Result<bool> {
        match self {
            Codec::Text => Ok(text::contains(bytes, member)),
            Codec::Binary => binary::contains(bytes, member).map_err(|e| Error::Corrupt {
                key: key.display(),
                reason: format!("binary set log: {e}"),
            }),
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

/// A set of byte strings on memcached (Dustin Sallings' "Maintaining a
/// set in memcached", grown past one item): append-only logs of `+m`/`-m`
/// tokens in buckets that split in two as they fill, so a set has no size
/// wall and a member's read moves one bucket, not the set.
///
/// * `add`/`remove` append `+m`/`-m` tokens to the member's bucket: **one
///   round trip per call** (one append per bucket touched, pipelined),
///   whatever the batch size, no read, no lock. Removing from a missing
///   set creates nothing. The first add creates the set (3 round trips:
///   the directory read, the root bucket, the directory).
/// * `contains` reads the member's bucket: 1 round trip, about 4 KiB at
///   most ([`with_bucket_bytes`](Set::with_bucket_bytes)).
/// * `members` reads the directory and every bucket, `page` buckets per
///   pipelined batch ([`members_iter`](Set::members_iter) streams them); a
///   small set is one round trip. Buckets dirty enough
///   ([`Compaction`]) are rewritten compacted with a CAS, which a
///   concurrent append makes fail harmlessly.
/// * A bucket grows to about 4 KiB and then splits (see the
///   [layout](#layout-and-limits)); writers that meet a split follow it.
/// * Every method that reaches the store has an async twin (`add_async`,
///   …): the same algorithm (see [`mcds_core::Access`]), awaiting the store
///   instead of blocking the thread.
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
/// # Layout and limits
///
/// Key `<prefix>set:<name>:log` holds the **directory**: `b1 <id> ` and a
/// token per split bucket. Buckets live under `<key>.<id>.<depth>.<index>.<nonce>`,
/// spread over a pool's servers by their keys. A member goes to the
/// bucket named by the top bits of its XXH3-64 hash. A split copies a
/// bucket's live members into its two children and then deletes it by
/// CAS, so that an append racing the split fails and is sent again to the
/// right child: no member is lost or listed twice (the algorithm and why
/// it holds: the `buckets` module of this crate).
///
/// * **Members:** no limit but the servers' memory: a member costs its
///   token (its bytes, escaped, plus 2) and its share of a bucket item's
///   overhead, about 10 bytes for an 8-byte member. 10 million such
///   members fill about 100 MB of a pool.
/// * **Member size:** one member's token must fit one item (1 MiB by
///   default), else [`Error::ValueTooLarge`] (see [Limits](#limits)).
/// * **Directory:** about 60 bytes per split (its `p` and `s` tokens),
///   in one item: some 18,000 splits with 1 MiB items (see
///   [Limits](#limits)).
/// * **Order:** members come bucket by bucket (in hash order), each
///   bucket's in first-insertion order. A set that never split keeps plain
///   first-insertion order.
/// * **Behind a proxy or with `-C`** (no CAS) a bucket cannot split: the
///   set is one bucket, and an add that does not fit is
///   [`Error::ValueTooLarge`], nothing written.
/// * **A handle caches the directory.** Keep one `Set` per set and reuse
///   it: a new handle reads the directory on its first call (one more
///   round trip).
///
/// # Limits
///
/// `L` is the item limit ([`Store::item_size_limit`], 1 MiB by default,
/// memcached's `-I`); `K` the length of the set's key,
/// `<prefix>set:<name>:log`; 59 bytes is what memcached adds to an item
/// ([`ITEM_OVERHEAD`](mcds_core::backend::ITEM_OVERHEAD)). A member's
/// **token** is what one add of it stores: text codec, the member (`%XX`
/// escapes counted) plus 2; binary codec, the member plus 2 to 6 (op byte
/// and length).
///
/// | limit | past it | written |
/// |---|---|---|
/// | name: `K` ≤ 218 bytes, room for a bucket's 32-byte suffix (a name of up to 210 bytes without a prefix) | [`Error::InvalidKey`] from [`Set::new`] | nothing |
/// | member: token + `K` + 32 + 59 ≤ `L` fits any bucket (a token of 1,048,465 bytes for `K` = 20 and 1 MiB items) | token + `K` + 59 > `L`: [`Error::ValueTooLarge`] before anything is sent | nothing |
/// | member between those two (32 bytes of token) | goes in if its bucket's key is short enough, else [`Error::ValueTooLarge`] after the append is refused | no member; its bucket may have split |
/// | members: no count limit. The directory takes about 60 bytes per split: some (`L` − `K` − 59) / 60 splits, about 18,000 with 1 MiB items (4 KiB buckets: some 7 million 8-byte members) | buckets stop splitting (a split deletes its bucket only while the directory has room for the tokens of every split under way and of 16 more) and grow to an item each; an add to a bucket that is full then: [`Error::ValueTooLarge`] (naming the directory's key) | nothing for that bucket; a batch whose other buckets took their members: [`Error::Ambiguous`] (send it again: adds and removes are idempotent) |
/// | behind a proxy or with `-C` (no CAS): one bucket, one item | [`Error::ValueTooLarge`] | nothing |
///
/// Servers' memory bounds a set before any of these: about 10 bytes per
/// 8-byte member. A member may be empty. A removal takes the same member
/// sizes; one that a full bucket refuses rewrites the bucket without the
/// member.
///
/// Sets an mcds before 0.9 wrote (the whole log in the key's one item)
/// are moved into a root bucket on first use, by CAS. Stop every older
/// writer of a set first: an older client's append to the directory makes
/// it [`Error::Corrupt`].
///
/// # What a restart or an eviction loses
///
/// A bucket that is evicted, or whose server restarts, is detected: the
/// directory still lists it, and reads and writes of it fail with
/// [`Error::Lost`] instead of answering without its members, until the
/// set is [cleared](Set::clear). A lost **directory** (or every item) is
/// not detectable: the set reads as empty, and the next add starts a new
/// one (its old buckets are never read again).
/// [Why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct Set {
    buckets: Buckets,
    compaction: Compaction,
}

/// How many buckets [`Set::members`] and friends read per pipelined batch.
const PAGE: usize = 512;

fn as_slices<M: AsRef<[u8]>>(members: &[M]) -> Vec<&[u8]> {
    members.iter().map(AsRef::as_ref).collect()
}

impl Set {
    /// The set `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix), with the text codec and no expiry.
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<Set> {
        let scope = scope.into();
        let key = scope.key("set", name, "log")?;
        crate::buckets::check_key(&key)?;
        Ok(Set::with_key(Arc::clone(scope.store()), key))
    }

    /// A set stored under an explicit key (no prefix is added). Its
    /// buckets add up to 32 bytes to it, and the key is not checked here:
    /// keep it to 218 bytes. A longer one works until a bucket's key would
    /// pass 250 bytes (at the first add past 237 bytes), and then the
    /// writes that need that bucket fail with [`Error::InvalidKey`] or
    /// [`Error::ValueTooLarge`].
    pub fn with_key(store: Arc<dyn Store>, key: Key) -> Set {
        Set {
            buckets: Buckets::new(store, key),
            compaction: Compaction::default(),
        }
    }

    /// Use `codec` (every reader and writer of the set must agree).
    pub fn with_codec(mut self, codec: Codec) -> Set {
        self.buckets.set_codec(codec);
        self
    }

    /// Expire the set `ttl` after it is created (its buckets a minute
    /// later, so that the directory goes first and no bucket is missed
    /// while it lives).
    pub fn with_ttl(mut self, ttl: Ttl) -> Set {
        self.buckets.set_ttl(ttl);
        self
    }

    /// When [`members`](Set::members) compacts a bucket.
    pub fn with_compaction(mut self, compaction: Compaction) -> Set {
        self.compaction = compaction;
        self
    }

    /// Split buckets past `bytes` (default 4 KiB, at least 64): smaller
    /// buckets make `contains` cheaper and `members` take more items.
    /// Every writer of a set should use the same size; a different one
    /// only changes when buckets split, not where members are.
    pub fn with_bucket_bytes(mut self, bytes: usize) -> Set {
        self.buckets.set_split_bytes(bytes);
        self
    }

    /// The codec in use.
    pub fn codec(&self) -> Codec {
        self.buckets.codec()
    }

    /// The key the set's directory lives under.
    pub fn key(&self) -> &Key {
        self.buckets.dir()
    }

    /// Add `members`: one append per bucket touched, in one pipelined
    /// batch (creating the set if needed).
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

    /// Remove `members`: one append per bucket touched; a missing set
    /// stays missing.
    pub fn remove<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        block_on(self.write_io(Io::Blocking, Op::Remove, &as_slices(members)))
    }

    /// [`remove`](Set::remove) without blocking the thread.
    pub async fn remove_async<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write_io(Io::Async, Op::Remove, &as_slices(members))
            .await
    }

    async fn write_io(&self, io: Io, op: Op, members: &[&[u8]]) -> Result<()> {
        self.buckets.write(io, op, members).await
    }

    /// The appends that write `members` (empty when the set must be
    /// created first, or a removal finds no set): tables and sharded sets
    /// put them in a pipelined batch with their own ops, then hand the
    /// replies to [`finish`](Self::finish).
    pub(crate) async fn prepare<'m>(
        &self,
        io: Io,
        op: Op,
        members: &[&'m [u8]],
    ) -> Result<Vec<Append<'m>>> {
        self.buckets.check_sizes(members)?;
        self.buckets.prepare(io, op, members).await
    }

    /// The set's directory structure, for [`buckets::prime`](crate::buckets::prime).
    pub(crate) fn buckets(&self) -> &Buckets {
        &self.buckets
    }

    /// The store operations of `appends`, for a pipelined batch.
    pub(crate) fn ops<'a>(&'a self, appends: &'a [Append<'_>]) -> Vec<mcds_core::Op<'a>> {
        self.buckets.ops(appends)
    }

    /// Finish a write from the replies of [`prepare`](Self::prepare)'s
    /// appends: follow splits, create the set, retry what did not land.
    /// Whether every member landed in the batch those replies answer (see
    /// `Buckets::finish`).
    pub(crate) async fn finish(
        &self,
        io: Io,
        op: Op,
        members: &[&[u8]],
        appends: Vec<Append<'_>>,
        results: Vec<Result<Reply>>,
    ) -> Result<bool> {
        self.buckets.finish(io, op, members, appends, results).await
    }

    /// The keys of the first batch of a read of every bucket, and the
    /// shape they were chosen by (see `ShardedSet::members`).
    pub(crate) fn first_keys(&self) -> Result<(Vec<Key>, Option<crate::buckets::Shape>)> {
        self.buckets.first_keys(PAGE)
    }

    /// [`decoded`](Self::decoded) from the items of its first batch.
    pub(crate) async fn decoded_from(
        &self,
        io: Io,
        guess: Option<crate::buckets::Shape>,
        found: Vec<Option<mcds_core::Item>>,
    ) -> Result<Decoded> {
        let mut all = Decoded::default();
        self.buckets
            .scan_from(io, PAGE, guess, found, &mut |_, _, decoded| {
                all.members.extend(decoded.members);
                all.dirtiness += decoded.dirtiness;
                Ok(())
            })
            .await?;
        Ok(all)
    }

    /// Read and decode every bucket, without compacting: the members
    /// bucket by bucket, and the dead tokens of all.
    #[blocking_and_async(pub)]
    pub(crate) async fn decoded_io(&self, io: Io) -> Result<Decoded> {
        let mut all = Decoded::default();
        self.buckets
            .scan(io, PAGE, &mut |_, _, decoded| {
                all.members.extend(decoded.members);
                all.dirtiness += decoded.dirtiness;
                Ok(())
            })
            .await?;
        Ok(all)
    }

    /// The members, bucket by bucket (see the [type docs](Set)). One round
    /// trip for a set this handle has seen before with at most 512
    /// buckets, one more per 512 buckets, and a CAS per bucket dirty
    /// enough to compact.
    #[blocking_and_async(pub)]
    pub(crate) async fn members_io(&self, io: Io) -> Result<Vec<Vec<u8>>> {
        let mut members = Vec::new();
        let mut dirty = Vec::new();
        self.buckets
            .scan(io, PAGE, &mut |key, item, decoded| {
                if self.compaction.due(&decoded) {
                    dirty.push((key.clone(), item.cas, decoded.members.clone()));
                }
                members.extend(decoded.members);
                Ok(())
            })
            .await?;
        for (key, cas, live) in dirty {
            // Best effort: losing the race to an append is harmless.
            let _ = self.buckets.compact(io, &key, cas, &live).await;
        }
        Ok(members)
    }

    /// The members a page of buckets at a time, with bounded memory: each
    /// item of the iterator is one bucket's members (in first-insertion
    /// order), read `page` buckets per pipelined batch. The whole set is
    /// never held at once; a bucket that splits while the iterator runs is
    /// read as its children, so no member is skipped or returned twice.
    pub fn members_iter(&self, page: usize) -> MembersIter<'_> {
        MembersIter {
            set: self,
            page: page.max(1),
            pending: std::collections::VecDeque::new(),
            cursor: None,
            done: false,
        }
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

    /// Whether `member` is in the set: one round trip, reading one bucket
    /// (a new handle reads the directory first).
    #[blocking_and_async(pub)]
    pub(crate) async fn contains_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<bool> {
        self.buckets.contains(io, member.as_ref()).await
    }

    /// The number of members: reads every bucket.
    #[blocking_and_async(pub)]
    async fn len_io(&self, io: Io) -> Result<usize> {
        let mut n = 0;
        self.buckets
            .scan(io, PAGE, &mut |_, _, decoded| {
                n += decoded.members.len();
                Ok(())
            })
            .await?;
        Ok(n)
    }

    /// Whether the set has no members.
    #[blocking_and_async(pub)]
    async fn is_empty_io(&self, io: Io) -> Result<bool> {
        Ok(self.len_io(io).await? == 0)
    }

    /// Delete the set: its buckets and its directory, in one pipelined
    /// batch after a directory read.
    #[blocking_and_async(pub)]
    pub(crate) async fn clear_io(&self, io: Io) -> Result<()> {
        self.buckets.clear(io).await
    }

    /// Rewrite every bucket that has dead tokens without them, by CAS.
    /// `Ok(true)` if any was rewritten; a bucket whose CAS a concurrent
    /// append beat stays as it was (nothing is lost either way).
    #[blocking_and_async(pub)]
    pub(crate) async fn compact_io(&self, io: Io) -> Result<bool> {
        let mut dirty = Vec::new();
        self.buckets
            .scan(io, PAGE, &mut |key, item, decoded| {
                if decoded.dirtiness > 0 {
                    dirty.push((key.clone(), item.cas, decoded.members));
                }
                Ok(())
            })
            .await?;
        let mut any = false;
        for (key, cas, live) in dirty {
            any |= self.buckets.compact(io, &key, cas, &live).await?;
        }
        Ok(any)
    }

    /// One page of buckets from `cursor` (see [`MembersIter`]).
    async fn page_io(
        &self,
        io: Io,
        cursor: Option<crate::buckets::Cursor>,
        page: usize,
    ) -> Result<(Vec<Vec<Vec<u8>>>, Option<crate::buckets::Cursor>)> {
        self.buckets.page(io, cursor, page).await
    }
}

/// The iterator of [`Set::members_iter`]: one item per bucket, its members.
/// It reads `page` buckets per batch, and holds one page at a time.
#[derive(Debug)]
pub struct MembersIter<'s> {
    set: &'s Set,
    page: usize,
    pending: std::collections::VecDeque<Vec<Vec<u8>>>,
    cursor: Option<crate::buckets::Cursor>,
    done: bool,
}

impl MembersIter<'_> {
    /// The next bucket's members without blocking the thread: `None` at
    /// the end.
    pub async fn next_async(&mut self) -> Option<Result<Vec<Vec<u8>>>> {
        self.next_io(Io::Async).await
    }

    async fn next_io(&mut self, io: Io) -> Option<Result<Vec<Vec<u8>>>> {
        loop {
            if let Some(bucket) = self.pending.pop_front() {
                return Some(Ok(bucket));
            }
            if self.done {
                return None;
            }
            match self.set.page_io(io, self.cursor.take(), self.page).await {
                Ok((buckets, next)) => {
                    self.pending.extend(buckets);
                    self.done = next.is_none();
                    self.cursor = next;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Iterator for MembersIter<'_> {
    type Item = Result<Vec<Vec<u8>>>;

    fn next(&mut self) -> Option<Self::Item> {
        block_on(self.next_io(Io::Blocking))
    }
}
