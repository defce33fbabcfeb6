//! [`Table`]: O(1) membership through a key per member, plus a member list.

use std::sync::Arc;

use mcds_core::{
    Access, Error, Io, Key, Op as StoreOp, Reply, Result, Scope, Store, Ttl, block_on, is_key_byte,
    stable_hash128,
};

use crate::set::{Op, Set};

/// A distributed table (the table of the memcached data-structures article, part 2): `has(member)` in O(1) through a key per
/// member, plus the member list kept as a [`Set`] — appended to, so no lock
/// is needed (the article's lock is not). With values it is a distributed map.
///
/// * `set(member, value)` (and `add(member)`) writes the member's key and
///   appends to the list in one pipelined batch: 1 round trip (on memcached
///   before 1.6.20, 2 the first time, when the list is created). The key
///   is written with a `replace` and an `add`, not a `set`: a `set` that
///   memcached refuses for memory (`-M`) deletes the old value, and these
///   leave it. A value over 4 KiB goes in the `replace` alone first, so
///   that it is not sent twice: 2 round trips for a new member (the
///   `add` alone; if others change the row meanwhile, both together).
/// * `has`/`get` read the member's key: 1 round trip.
/// * `delete` deletes the member's key and appends a removal, pipelined: 1.
/// * `keys` reads the list: 1. `entries` reads the list and then every
///   member's key in one `get_multi`: 2.
/// * Every method that reaches the store has an async twin (`set_async`,
///   …), awaiting the store instead of blocking the thread.
///
/// Keys: `<prefix>table:<name>:members` for the list and
/// `<prefix>table:<name>:v:<member>` per member, where a member that is not
/// a valid key part (whitespace, control bytes, over 150 bytes, or starting
/// with `#`) is named `#<XXH3-128 hex>` instead.
///
/// **Consistency.** The two writes are not atomic: they are sent together
/// and each is applied on its own. One can fail while the other lands (a
/// crash, a server of a pool down, memory full; a value over the item limit
/// is refused before anything is sent):
/// a member key without a list entry (`has` true, `keys` without it), or a
/// list entry without a member key (`keys` lists it, `has` false). `entries`
/// only returns members whose key exists. Eviction can drop either side.
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
    pub fn set(&self, member: impl AsRef<[u8]>, value: &[u8]) -> Result<()> {
        block_on(self.set_io(Io::Blocking, member.as_ref(), value))
    }

    /// [`set`](Table::set) without blocking the thread.
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
    pub async fn set_async(&self, member: impl AsRef<[u8]>, value: &[u8]) -> Result<()> {
        self.set_io(Io::Async, member.as_ref(), value).await
    }

    async fn set_io(&self, io: Io, member: &[u8], value: &[u8]) -> Result<()> {
        let key = self.member_key(member)?;
        // Refuse an oversized value before anything is written: the list
        // append goes in the same batch and would list a member that has no
        // value.
        mcds_core::backend::check_item_size(&key, value.len(), self.store.item_size_limit())?;
        let tokens = self.list.tokens(Op::Add, &[member]);
        // A `replace` and an `add`, not a `set`: memcached unlinks the old
        // item when it cannot allocate a `set`'s new one (memory full under
        // `-M`), so a refused `set` would lose the row's previous value.
        // `replace` and `add` (text commands, see mcds-memcached) leave it.
        // One of the two stores the value; a small value goes out in both
        // at once (one round trip), a large one in the replace first (the
        // add only for a new row: the value is not sent twice).
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
        let both = value.len() <= BOTH_AT_ONCE;
        let access = self.access(io);
        let (mut writes, list) = if both {
            let [replaced, added, list] = access
                .run_pipeline([replace, add, self.list.store_op(Op::Add, &tokens)])
                .await?;
            (vec![replaced, added], list)
        } else {
            let [replaced, list] = access
                .run_pipeline([replace, self.list.store_op(Op::Add, &tokens)])
                .await?;
            (vec![replaced], list)
        };
        // Neither stored, and no error: the row appeared (for the add) or
        // went (for the replace) in between. Again, within bounds.
        let mut rounds = 1;
        while !stored(writes)? {
            if rounds == MAX_ROUNDS {
                return Err(Error::Conflict {
                    key: key.display(),
                    attempts: rounds,
                });
            }
            rounds += 1;
            // A large value's next round is its add alone; from the third
            // on both go together, as for a small value: alone, each write
            // can lose to a row that others delete and set again between
            // our rounds (an adversarial review saw `Conflict` 58 times in
            // 3000 such sets), while two writes sent together leave only
            // the moment between them.
            writes = if both || rounds > 2 {
                access.pipeline(&[replace, add]).await
            } else {
                vec![access.execute(&add).await]
            };
        }
        self.list.finish(io, Op::Add, &tokens, list).await
    }

    /// Whether `member` is present: one round trip.
    pub fn has(&self, member: impl AsRef<[u8]>) -> Result<bool> {
        block_on(self.has_io(Io::Blocking, member.as_ref()))
    }

    /// [`has`](Table::has) without blocking the thread.
    pub async fn has_async(&self, member: impl AsRef<[u8]>) -> Result<bool> {
        self.has_io(Io::Async, member.as_ref()).await
    }

    async fn has_io(&self, io: Io, member: &[u8]) -> Result<bool> {
        Ok(self
            .access(io)
            .get(&self.member_key(member)?)
            .await?
            .is_some())
    }

    /// `member`'s value.
    pub fn get(&self, member: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        block_on(self.get_io(Io::Blocking, member.as_ref()))
    }

    /// [`get`](Table::get) without blocking the thread.
    pub async fn get_async(&self, member: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_io(Io::Async, member.as_ref()).await
    }

    async fn get_io(&self, io: Io, member: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self
            .access(io)
            .get(&self.member_key(member)?)
            .await?
            .map(|i| i.value))
    }

    /// Remove `member`; whether it was present. The delete and the list
    /// append go in one pipelined batch (one round trip).
    pub fn delete(&self, member: impl AsRef<[u8]>) -> Result<bool> {
        block_on(self.delete_io(Io::Blocking, member.as_ref()))
    }

    /// [`delete`](Table::delete) without blocking the thread.
    pub async fn delete_async(&self, member: impl AsRef<[u8]>) -> Result<bool> {
        self.delete_io(Io::Async, member.as_ref()).await
    }

    async fn delete_io(&self, io: Io, member: &[u8]) -> Result<bool> {
        let key = self.member_key(member)?;
        let tokens = self.list.tokens(Op::Remove, &[member]);
        let [existed, list] = self
            .access(io)
            .run_pipeline([
                StoreOp::Delete(&key),
                self.list.store_op(Op::Remove, &tokens),
            ])
            .await?;
        let existed = existed?.applied()?;
        self.list.finish(io, Op::Remove, &tokens, list).await?;
        Ok(existed)
    }

    /// The members, in insertion order.
    pub fn keys(&self) -> Result<Vec<Vec<u8>>> {
        block_on(self.list.members_io(Io::Blocking))
    }

    /// [`keys`](Table::keys) without blocking the thread.
    pub async fn keys_async(&self) -> Result<Vec<Vec<u8>>> {
        self.list.members_io(Io::Async).await
    }

    /// Members with their values (members whose entry is gone are skipped).
    pub fn entries(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        block_on(self.entries_io(Io::Blocking))
    }

    /// [`entries`](Table::entries) without blocking the thread.
    pub async fn entries_async(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.entries_io(Io::Async).await
    }

    async fn entries_io(&self, io: Io) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let members = self.list.members_io(io).await?;
        let keys: Vec<Key> = members
            .iter()
            .map(|m| self.member_key(m))
            .collect::<Result<_>>()?;
        let items = self.access(io).get_multi(&keys).await?;
        Ok(members
            .into_iter()
            .zip(items)
            .filter_map(|(m, item)| item.map(|i| (m, i.value)))
            .collect())
    }
}

/// Values up to this size go out in a `replace` and an `add` together (one
/// round trip for any row); larger ones in the `replace` alone first, so
/// that they are not sent twice (a second round trip for a new row).
const BOTH_AT_ONCE: usize = 4096;

/// Rounds of `replace`/`add` before [`Error::Conflict`]: each round that
/// stores nothing saw another writer create or delete the row in between.
const MAX_ROUNDS: u32 = 10;

/// Whether one of a row's writes (its `replace`, its `add`) stored the
/// value. If none did, the first error, if any: a write that failed and one
/// that found the row in the other state say the value was not stored.
fn stored(writes: Vec<Result<Reply>>) -> Result<bool> {
    let mut error = None;
    for write in writes {
        match write.and_then(Reply::stored) {
            Ok(s) if s.is_stored() => return Ok(true),
            Ok(_) => {}
            Err(e) => {
                error.get_or_insert(e);
            }
        }
    }
    error.map_or(Ok(false), Err)
}
