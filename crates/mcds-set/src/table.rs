//! [`Table`]: O(1) membership through a key per member, plus a member list.

use std::sync::Arc;

use mcds_core::{
    Access, DeleteOutcome, Error, Io, Key, Op as StoreOp, Reply, Result, Scope, Store, Stored, Ttl,
    block_on, blocking_and_async, is_key_byte, stable_hash128,
};

use crate::set::{Op, Set};

/// A distributed table (the table of the memcached data-structures article, part 2): `has(member)` in O(1) through a key per
/// member, plus the member list kept as a [`Set`] — appended to, so no lock
/// is needed (the article's lock is not). With values it is a distributed map.
///
/// * `set(member, value)` (and `add(member)`) writes the member's key,
///   then appends it to the list: in one pipelined batch when the key and
///   the list's bucket live on one server (always on one server), 1 round
///   trip (on memcached before 1.6.20, 2 the first time, when the list is
///   created); on a pool where they do not, 2, one after the other. The
///   key is written with an `add`, and, if that stores nothing (the
///   member exists), with a `replace` in one more round trip: a new value
///   for an existing member takes 2. Not with a `set`: a `set` that
///   memcached refuses for memory (`-M`) deletes the old value, and these
///   leave it.
/// * `has`/`get` read the member's key: 1 round trip.
/// * `delete` appends a removal to the list, then deletes the member's key:
///   1 round trip on one server, 2 on a pool where they live apart.
/// * `keys` and `entries` read the list and then every listed member's key
///   in one `get_multi`: 2, and leave out a listed member whose key is
///   gone.
/// * Every method that reaches the store has an async twin (`set_async`,
///   …), awaiting the store instead of blocking the thread.
///
/// Keys: `<prefix>table:<name>:members` for the list and
/// `<prefix>table:<name>:v:<member>` per member, where a member that is not
/// a valid key part (whitespace, control bytes, over 150 bytes, or starting
/// with `#`) is named `#<XXH3-128 hex>` instead.
///
/// **Consistency.** The row and its listing are two items, written in an
/// order that keeps them agreeing while clients race: `set` writes the
/// row before it lists the member, and `delete` unlists the member before
/// it deletes the row (in one batch on one server, where memcached applies
/// a connection's commands in order; one after the other otherwise). So a
/// member whose row exists is listed, whatever a delete racing a set of
/// the same member does. The other disagreement, a member listed without
/// a row (a delete's removal landing before a racing set's row, its row
/// delete after it), is what `keys` and `entries` leave out by reading the
/// rows: every read agrees with `has`. (Sent together to two servers, the
/// two writes of a set and a delete racing on one member left `has` true
/// for an unlisted member, found by an adversarial review.)
///
/// The writes are not atomic: one can fail while the other lands (a crash,
/// a server of a pool down, memory full; a value over the item limit is
/// refused before anything is sent). A set whose listing fails takes its
/// new row back; a delete whose row's delete fails after the member was
/// unlisted is [`Error::Ambiguous`] (delete it again). Eviction can drop
/// either side.
///
/// **The item limit.** The member list is a [`Set`]: its buckets split as
/// they fill, so it has no item wall. When it still refuses a member (see
/// [Limits](#limits)), the member is refused whole:
/// [`Error::ValueTooLarge`], and a row its `add` wrote is taken back (by
/// its CAS id; for a moment a reader may see it). A new value for a listed
/// member and a delete always go through.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_set::Table;
///
/// let users = Table::new(Arc::new(MemoryStore::new()), "users")?;
/// users.set("ann", b"admin")?;
/// users.add("bob")?;
/// assert!(users.has("ann")?);
/// assert_eq!(users.get("ann")?, Some(b"admin".to_vec()));
/// users.delete("bob")?;
/// assert_eq!(users.keys()?, vec![b"ann".to_vec()]);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// `L` is the item limit ([`Store::item_size_limit`], 1 MiB by default);
/// 59 bytes is what memcached adds to an item. A member's row key is
/// `<prefix>table:<name>:v:<member>` when the member is key-safe UTF-8 of
/// 1 to 150 bytes not starting with `#`, else
/// `<prefix>table:<name>:v:#<32 hex digits>` ([`Table::member_key`]).
///
/// | limit | past it | written |
/// |---|---|---|
/// | name: the longest row key, with a 150-byte member, ≤ 250 bytes (a name of up to 91 bytes without a prefix) | [`Error::InvalidKey`] from [`Table::new`] | nothing |
/// | value: row key + value + 59 ≤ `L` (1,048,498 bytes for a 19-byte row key and 1 MiB items) | [`Error::ValueTooLarge`] before anything is sent | nothing: the old value stays, a new member is not listed |
/// | member: a member of the list `<prefix>table:<name>:members`, with a [`Set`]'s limits (token + list key + 32 + 59 ≤ `L` fits) | token + list key + 59 > `L`: [`Error::ValueTooLarge`] before anything is sent | nothing |
/// | members: a row per member (servers' memory), and the list's limits as a `Set` | as a `Set`; a refused new member's row is taken back | no row, not listed |
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses member items (`has` false, `entries`
/// skips them) or the member list (`keys` and `entries` miss members whose
/// items remain). No read can tell a lost row from one never written, or a
/// lost list from a new table: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct Table {
    store: Arc<dyn Store>,
    prefix: String,
    name: String,
    list: Set,
    ttl: Ttl,
}

impl Table {
    /// The table `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix).
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<Table> {
        let scope = scope.into();
        let list = Set::with_key(
            Arc::clone(scope.store()),
            scope.key("table", name, "members")?,
        );
        let table = Table {
            store: Arc::clone(scope.store()),
            prefix: scope.prefix().to_string(),
            name: name.to_string(),
            list,
            ttl: Ttl::Never,
        };
        table.member_key(&[b'x'; 150])?; // the longest member key must fit
        Ok(table)
    }

    /// Split the member list's buckets past `bytes` (see
    /// [`Set::with_bucket_bytes`]).
    pub fn with_bucket_bytes(mut self, bytes: usize) -> Table {
        self.list = self.list.with_bucket_bytes(bytes);
        self
    }

    /// The key of `member`'s entry: `v:<member>` when the member is UTF-8,
    /// key-safe, 1 to 150 bytes and does not start with `#`; otherwise
    /// `v:#<XXH3-128 hex>`.
    pub fn member_key(&self, member: &[u8]) -> Result<Key> {
        let plain = std::str::from_utf8(member).ok().filter(|m| {
            (1..=150).contains(&m.len()) && !m.starts_with('#') && m.bytes().all(is_key_byte)
        });
        let part = match plain {
            Some(m) => format!("v:{m}"),
            None => format!("v:#{:032x}", stable_hash128(member)),
        };
        Key::parts(&self.prefix, "table", &self.name, part)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// Add `member` with an empty value (a plain membership table).
    pub fn add(&self, member: impl AsRef<[u8]>) -> Result<()> {
        block_on(self.set_io(Io::Blocking, member.as_ref(), b""))
    }

    /// [`add`](Table::add) without blocking the thread.
    pub async fn add_async(&self, member: impl AsRef<[u8]>) -> Result<()> {
        self.set_io(Io::Async, member.as_ref(), b"").await
    }

    /// Set `member`'s value, adding the member if it is new: the member's
    /// key and the list append go in one pipelined batch (one round trip).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_set::Table;
    /// # mcds_core::block_on(async {
    /// let users = Table::new(Arc::new(MemoryStore::new()), "users")?;
    /// users.set_async("ann", b"admin").await?;
    /// assert_eq!(users.get_async("ann").await?, Some(b"admin".to_vec()));
    /// assert_eq!(users.keys_async().await?, vec![b"ann".to_vec()]);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[blocking_and_async(pub)]
    async fn set_io(&self, io: Io, member: impl AsRef<[u8]>, value: &[u8]) -> Result<()> {
        let member = member.as_ref();
        let key = self.member_key(member)?;
        // Refuse an oversized value before anything is written: the list
        // append goes in the same batch and would list a member that has no
        // value.
        mcds_core::backend::check_item_size(&key, value.len(), self.store.item_size_limit())?;
        // A `replace` or an `add`, not a `set`: memcached unlinks the old
        // item when it cannot allocate a `set`'s new one (memory full under
        // `-M`), so a refused `set` would lose the row's previous value;
        // `replace` and `add` (text commands, see mcds-memcached) leave it.
        // One write at a time, the next only when the last stored nothing
        // (the row went, or came, in between), so the value is stored once:
        // sent together, a `replace` and an `add` both stored when another
        // client deleted the row between them, and the deleted value came
        // back (an adversarial review saw it within 0.3 s of racing).
        let replace = StoreOp::Replace {
            key: &key,
            value,
            ttl: self.ttl,
        };
        let add = StoreOp::Add {
            key: &key,
            value,
            ttl: self.ttl,
        };
        // The add first: a new member takes 1 round trip, a new value for
        // an existing one 2.
        let (mut next, mut then) = (add, replace);
        let access = self.access(io);
        let mut rounds = 0;
        loop {
            if rounds == MAX_ROUNDS {
                return Err(Error::Conflict {
                    key: key.display(),
                    attempts: rounds,
                });
            }
            rounds += 1;
            let is_add = matches!(next, StoreOp::Add { .. });
            // The row's write, and the member's listing behind it: in one
            // batch when the row and the list's buckets share a server
            // (memcached applies one connection's commands in order), else
            // after the write's reply. Listed after its row is written,
            // and unlisted before it is deleted (`delete`), a member whose
            // row exists is listed, whatever a delete racing this set does
            // (see "Consistency"). A `replace` lists too: the row it found
            // may be one whose listing another set is taking back.
            let appends = self.list.prepare(io, Op::Add, &[member]).await?;
            let list_ops = self.list.ops(&appends);
            let together = list_ops
                .iter()
                .all(|op| self.store.colocated(op.key(), &key));
            let (written, listed) = if together {
                let mut ops = vec![next];
                ops.extend(list_ops);
                let mut replies = access.pipeline(&ops).await.into_iter();
                let written = replies
                    .next()
                    .unwrap_or_else(|| Err(Error::Internal("a pipeline answers every op".into())));
                let list: Vec<_> = replies.collect();
                let listed = self
                    .list
                    .finish(io, Op::Add, &[member], appends, list)
                    .await;
                (written, Some(listed))
            } else {
                let written = access.execute(&next).await;
                let listed = if matches!(written, Ok(Reply::Stored(Stored::Stored(_)))) {
                    let list = access.pipeline(&list_ops).await;
                    drop(list_ops);
                    Some(
                        self.list
                            .finish(io, Op::Add, &[member], appends, list)
                            .await,
                    )
                } else {
                    None
                };
                (written, listed)
            };
            let ours = match &written {
                Ok(Reply::Stored(Stored::Stored(cas))) => Some(*cas),
                _ => None,
            };
            match (ours, listed) {
                (Some(cas), Some(Err(e))) => {
                    return self.unlisted_write(io, &key, member, cas, is_add, e).await;
                }
                (Some(_), _) => return Ok(()),
                // The write stored nothing (the row came or went): the
                // listing sent with it was not needed, whatever became of
                // it.
                (None, _) => {}
            }
            if !stored(written)? {
                std::mem::swap(&mut next, &mut then);
            }
        }
    }

    /// A row this call wrote (`cas`: by an `add` when `new`, else by a
    /// `replace`) whose listing failed with `e`: what the call returns.
    ///
    /// A new row is taken back (by its CAS id: a later writer's value
    /// stays), and nothing was written: `e`. A replaced row's member is
    /// usually listed already (the list refused another token for it): a
    /// read of the list tells, and then the set succeeded. An unlisted one
    /// (its own writer was taking it back when this `replace` stored over
    /// it: an adversarial review found the row kept, unlisted, in 122 of
    /// 300 rounds of 2 racing sets at the list's limit) is taken back too.
    async fn unlisted_write(
        &self,
        io: Io,
        key: &Key,
        member: &[u8],
        cas: u64,
        new: bool,
        e: Error,
    ) -> Result<()> {
        let ambiguous = |why: String| Error::Ambiguous {
            key: key.display(),
            server: String::new(),
            reason: format!("the member could not be listed ({e}), and {why}"),
        };
        if !new {
            match self.list.contains_io(io, member).await {
                Ok(true) => return Ok(()),
                Ok(false) => {}
                Err(check) => {
                    return Err(ambiguous(format!(
                        "whether it was listed already could not be read ({check}): the row may stay, unlisted"
                    )));
                }
            }
        }
        match self.access(io).delete_cas(key, cas).await {
            Ok(DeleteOutcome::Deleted | DeleteOutcome::NotFound) => Err(e),
            Ok(DeleteOutcome::Exists) => Err(ambiguous(
                "another writer's value replaced this call's before it could be taken back: that writer lists it or takes it back".into(),
            )),
            Err(undo) => Err(ambiguous(format!(
                "taking its row back failed ({undo}): the row may stay, unlisted"
            ))),
        }
    }

    /// Whether `member` is present: one round trip.
    #[blocking_and_async(pub)]
    async fn has_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<bool> {
        let member = member.as_ref();
        Ok(self
            .access(io)
            .get(&self.member_key(member)?)
            .await?
            .is_some())
    }

    /// `member`'s value.
    #[blocking_and_async(pub)]
    async fn get_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let member = member.as_ref();
        Ok(self
            .access(io)
            .get(&self.member_key(member)?)
            .await?
            .map(|i| i.value))
    }

    /// Remove `member`; whether it was present. The member is unlisted
    /// first, and its row deleted after: in one pipelined batch (one round
    /// trip) when the row and the list's bucket share a server, else one
    /// after the other (see "Consistency").
    #[blocking_and_async(pub)]
    async fn delete_io(&self, io: Io, member: impl AsRef<[u8]>) -> Result<bool> {
        let member = member.as_ref();
        let key = self.member_key(member)?;
        let access = self.access(io);
        let appends = self.list.prepare(io, Op::Remove, &[member]).await?;
        let mut ops = self.list.ops(&appends);
        let together = ops.iter().all(|op| self.store.colocated(op.key(), &key));
        if !together {
            let replies = access.pipeline(&ops).await;
            drop(ops);
            self.list
                .finish(io, Op::Remove, &[member], appends, replies)
                .await?;
            return access.delete(&key).await.map_err(|e| unlisted(&key, e));
        }
        ops.push(StoreOp::Delete(&key));
        let mut replies = access.pipeline(&ops).await;
        let deleted = replies
            .pop()
            .unwrap_or_else(|| Err(Error::Internal("a pipeline answers every op".into())));
        let in_batch = self
            .list
            .finish(io, Op::Remove, &[member], appends, replies)
            .await?;
        let existed = deleted
            .and_then(Reply::applied)
            .map_err(|e| unlisted(&key, e))?;
        if in_batch {
            return Ok(existed);
        }
        // The removal landed after the batch (a bucket split, ...): the
        // row is deleted again, after it.
        let again = access.delete(&key).await.map_err(|e| unlisted(&key, e))?;
        Ok(again || existed)
    }

    /// The members, in insertion order: the member list, then every
    /// listed member's row in one `get_multi`, as for
    /// [`entries`](Self::entries). A listed member whose row is gone is
    /// left out: a delete racing a set can leave a member listed without
    /// its row (see "Consistency"), and `has` is what decides.
    #[blocking_and_async(pub)]
    async fn keys_io(&self, io: Io) -> Result<Vec<Vec<u8>>> {
        Ok(self
            .entries_io(io)
            .await?
            .into_iter()
            .map(|(m, _)| m)
            .collect())
    }

    /// Members with their values (members whose entry is gone are
    /// skipped): the member list, then every row in one `get_multi`.
    #[blocking_and_async(pub)]
    async fn entries_io(&self, io: Io) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let members = self.list.members_io(io).await?;
        let mut out = std::collections::VecDeque::with_capacity(members.len());
        self.rows_io(io, members, &mut out).await?;
        Ok(out.into())
    }

    /// [`entries`](Self::entries) as a stream: a member-list bucket at a
    /// time, each with one `get_multi` of its rows, `page` buckets of the
    /// list per batch. Memory stays bounded by a page.
    pub fn entries_iter(&self, page: usize) -> EntriesIter<'_> {
        EntriesIter {
            table: self,
            buckets: self.list.members_iter(page),
            ready: std::collections::VecDeque::new(),
        }
    }

    /// The rows of `members` that exist, in one `get_multi`, onto `out`.
    async fn rows_io(
        &self,
        io: Io,
        members: Vec<Vec<u8>>,
        out: &mut std::collections::VecDeque<(Vec<u8>, Vec<u8>)>,
    ) -> Result<()> {
        let keys: Vec<Key> = members
            .iter()
            .map(|m| self.member_key(m))
            .collect::<Result<_>>()?;
        let items = self.access(io).get_multi(&keys).await?;
        out.extend(
            members
                .into_iter()
                .zip(items)
                .filter_map(|(m, item)| item.map(|i| (m, i.value))),
        );
        Ok(())
    }
}

/// The stream of [`Table::entries_iter`]: members with their values, a
/// member-list bucket at a time.
#[derive(Debug)]
pub struct EntriesIter<'t> {
    table: &'t Table,
    buckets: crate::MembersIter<'t>,
    ready: std::collections::VecDeque<(Vec<u8>, Vec<u8>)>,
}

impl EntriesIter<'_> {
    /// The next member and its value without blocking the thread.
    pub async fn next_async(&mut self) -> Option<Result<(Vec<u8>, Vec<u8>)>> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                return Some(Ok(next));
            }
            let bucket = match self.buckets.next_async().await? {
                Ok(bucket) => bucket,
                Err(e) => return Some(Err(e)),
            };
            if let Err(e) = self.table.rows_io(Io::Async, bucket, &mut self.ready).await {
                return Some(Err(e));
            }
        }
    }
}

impl Iterator for EntriesIter<'_> {
    type Item = Result<(Vec<u8>, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                return Some(Ok(next));
            }
            let bucket = match self.buckets.next()? {
                Ok(bucket) => bucket,
                Err(e) => return Some(Err(e)),
            };
            if let Err(e) = block_on(self.table.rows_io(Io::Blocking, bucket, &mut self.ready)) {
                return Some(Err(e));
            }
        }
    }
}

/// A delete whose member was unlisted but whose row's delete failed: the
/// row may stay, unlisted.
fn unlisted(key: &Key, e: Error) -> Error {
    match e {
        Error::Ambiguous { .. } => e,
        e => Error::Ambiguous {
            key: key.display(),
            server: String::new(),
            reason: format!(
                "the member was unlisted, and deleting its row failed ({e}): `has` may still find it; delete it again"
            ),
        },
    }
}

/// Rounds of `replace`/`add` before [`Error::Conflict`]: each round that
/// stores nothing saw another writer create or delete the row since the
/// round before.
const MAX_ROUNDS: u32 = 64;

/// Whether a row's write stored the value, or its error.
fn stored(write: Result<Reply>) -> Result<bool> {
    Ok(write?.stored()?.is_stored())
}
