//! [`ShardedSet`]: a set spread over K items.

use std::sync::Arc;

use mcds_core::{Access, Io, Result, Scope, Store, block_on, blocking_and_async, stable_hash};

use crate::set::{Codec, Op, Set};

/// A set spread over `shards` keys by a stable hash of the member
/// (XXH3-64 mod K), each shard a [`Set`] of its own: to spread writes and
/// load over the servers of a pool.
///
/// * Batch `add`/`remove` touch each affected shard once (one append each).
/// * `members` reads all shards in one `get_multi` (one round trip per
///   server) and returns them shard by shard, each in first-insertion order.
/// * `contains` reads one shard.
/// * Every method that reaches the store has an async twin (`add_async`,
///   …), awaiting the store instead of blocking the thread.
///
/// Keys: `<prefix>sset:<name>:<shard>`.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_set::ShardedSet;
///
/// let online = ShardedSet::new(Arc::new(MemoryStore::new()), "online", 8)?;
/// online.add(&["ann", "bob", "cy"])?;
/// online.remove(&["bob"])?;
/// assert!(online.contains("cy")? && !online.contains("bob")?);
/// assert_eq!(online.len()?, 2);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// Each shard is a [`Set`] under the key `<prefix>sset:<name>:<shard>`,
/// with [its limits](Set#limits); `L` is the item limit (1 MiB by
/// default) and `S` the length of a member's shard key.
///
/// | limit | past it | written |
/// |---|---|---|
/// | shards: 1 to 4096 | [`Error::InvalidArgument`](mcds_core::Error::InvalidArgument) from [`ShardedSet::new`] | nothing |
/// | name: every shard key ≤ 218 bytes, room for a bucket's 32-byte suffix (without a prefix, a name of up to 212 bytes less the digits of the last shard index: 209 for 1000 shards, 208 for 4096) | [`Error::InvalidKey`](mcds_core::Error::InvalidKey) from `new` | nothing |
/// | member: token + `S` + 32 + 59 ≤ `L` fits any bucket of its shard | token + `S` + 59 > `L`: [`Error::ValueTooLarge`](mcds_core::Error::ValueTooLarge) before anything is sent | nothing |
/// | members: no count limit; each shard's directory bounds that shard as a `Set`'s does, so K shards take K times a `Set`'s splits | as a `Set` | as a `Set` |
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses shards' buckets (reads and writes of
/// that shard then fail with [`Lost`](mcds_core::Error::Lost), as a
/// [`Set`]'s) or directories (the shard's members; adds after the loss
/// start the shard again). No read can tell a lost
/// shard from an empty one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct ShardedSet {
    store: Arc<dyn Store>,
    shards: Vec<Set>,
}

impl ShardedSet {
    /// `shards` shards (1 to 4096) with the text codec, in `scope` (a
    /// store, or a [`Scope`] with a key prefix).
    pub fn new(scope: impl Into<Scope>, name: &str, shards: usize) -> Result<ShardedSet> {
        let scope = scope.into();
        if !(1..=4096).contains(&shards) {
            return Err(mcds_core::Error::InvalidArgument(format!(
                "a sharded set needs 1 to 4096 shards; got {shards}"
            )));
        }
        let store = Arc::clone(scope.store());
        let shards = (0..shards)
            .map(|i| {
                let key = scope.key("sset", name, i)?;
                crate::buckets::check_key(&key)?;
                Ok(Set::with_key(Arc::clone(&store), key))
            })
            .collect::<Result<_>>()?;
        Ok(ShardedSet { store, shards })
    }

    /// Use `codec` in every shard (every reader and writer must agree).
    pub fn with_codec(mut self, codec: Codec) -> ShardedSet {
        self.shards = self
            .shards
            .into_iter()
            .map(|s| s.with_codec(codec))
            .collect();
        self
    }

    /// The shard index of `member`.
    pub fn shard_of(&self, member: &[u8]) -> usize {
        (stable_hash(member) % self.shards.len() as u64) as usize
    }

    fn group<'a, M: AsRef<[u8]>>(&self, members: &'a [M]) -> Vec<Vec<&'a [u8]>> {
        let mut groups = vec![Vec::new(); self.shards.len()];
        for m in members {
            groups[self.shard_of(m.as_ref())].push(m.as_ref());
        }
        groups
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// Add `members`: one append per shard touched, all in one pipelined
    /// batch (one round trip per server).
    pub fn add<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        block_on(self.write_io(Io::Blocking, Op::Add, members))
    }

    /// [`add`](ShardedSet::add) without blocking the thread.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_set::ShardedSet;
    /// # mcds_core::block_on(async {
    /// let online = ShardedSet::new(Arc::new(MemoryStore::new()), "online", 8)?;
    /// online.add_async(&["ann", "bob"]).await?;
    /// assert!(online.contains_async("bob").await?);
    /// assert_eq!(online.len_async().await?, 2);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn add_async<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write_io(Io::Async, Op::Add, members).await
    }

    /// Remove `members`: one append per shard touched, all in one pipelined
    /// batch (one round trip per server).
    pub fn remove<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        block_on(self.write_io(Io::Blocking, Op::Remove, members))
    }

    /// [`remove`](ShardedSet::remove) without blocking the thread.
    pub async fn remove_async<M: AsRef<[u8]>>(&self, members: &[M]) -> Result<()> {
        self.write_io(Io::Async, Op::Remove, members).await
    }

    async fn write_io<M: AsRef<[u8]>>(&self, io: Io, op: Op, members: &[M]) -> Result<()> {
        let groups: Vec<(&Set, Vec<&[u8]>)> = self
            .shards
            .iter()
            .zip(self.group(members))
            .filter(|(_, group)| !group.is_empty())
            .collect();
        let sets: Vec<_> = groups.iter().map(|(shard, _)| shard.buckets()).collect();
        crate::buckets::prime(io, &sets).await?;
        let mut writes = Vec::with_capacity(groups.len());
        for (shard, group) in &groups {
            writes.push(shard.prepare(io, op, group).await?);
        }
        let ops: Vec<_> = groups
            .iter()
            .zip(&writes)
            .flat_map(|((shard, _), w)| shard.ops(w))
            .collect();
        let mut results = self.access(io).pipeline(&ops).await.into_iter();
        // Finish every shard (splits, retries), then report the first
        // failure.
        let mut first_error = None;
        for ((shard, group), appends) in groups.iter().zip(writes) {
            let n = shard.ops(&appends).len();
            let replies: Vec<_> = results.by_ref().take(n).collect();
            if let Err(e) = shard.finish(io, op, group, appends, replies).await {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Every member, shard by shard: every shard's directory and the
    /// buckets this handle last saw, in one batch (one round trip per
    /// server), and more only for shards that changed shape since.
    #[blocking_and_async(pub)]
    async fn members_io(&self, io: Io) -> Result<Vec<Vec<u8>>> {
        let mut keys = Vec::new();
        let mut firsts = Vec::with_capacity(self.shards.len());
        for shard in &self.shards {
            let (k, guess) = shard.first_keys()?;
            firsts.push((k.len(), guess));
            keys.extend(k);
        }
        let mut found = self.access(io).get_multi(&keys).await?.into_iter();
        let mut out = Vec::new();
        for (shard, (n, guess)) in self.shards.iter().zip(firsts) {
            let items: Vec<_> = found.by_ref().take(n).collect();
            out.extend(shard.decoded_from(io, guess, items).await?.members);
        }
        Ok(out)
    }

    /// Whether `member` is in the set: reads one shard.
    #[blocking_and_async(pub)]
    async fn contains_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<bool> {
        let member = member.as_ref();
        self.shards[self.shard_of(member)]
            .contains_io(io, member)
            .await
    }

    /// The number of members: one `get_multi`.
    #[blocking_and_async(pub)]
    async fn len_io(&self, io: Io) -> Result<usize> {
        Ok(self.members_io(io).await?.len())
    }

    /// Whether the set has no members.
    #[blocking_and_async(pub)]
    async fn is_empty_io(&self, io: Io) -> Result<bool> {
        Ok(self.len_io(io).await? == 0)
    }

    /// Compact every shard that has dead tokens.
    #[blocking_and_async(pub)]
    async fn compact_io(&self, io: Io) -> Result<()> {
        for shard in &self.shards {
            shard.compact_io(io).await?;
        }
        Ok(())
    }

    /// Delete every shard (each its directory read, then its buckets).
    #[blocking_and_async(pub)]
    async fn clear_io(&self, io: Io) -> Result<()> {
        for shard in &self.shards {
            shard.clear_io(io).await?;
        }
        Ok(())
    }
}
