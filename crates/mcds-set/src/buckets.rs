//! How a [`Set`](crate::Set) grows past one item: a directory item and
//! buckets that split in two as they fill (extendible hashing over
//! memcached items).
//!
//! ## Layout
//!
//! * The **directory**, under the set's key: `b1 <id> ` (and `t ` for a set
//!   with a TTL), then tokens that record splits. `<id>` (8 random hex
//!   digits) names this life of the set: a set that is cleared, expires or
//!   whose directory is lost starts again under a new id, and every token
//!   carries the id, so a late append from an old life is ignored.
//! * **Buckets**: the root `<set key>.<id>.0.0`, and every other bucket
//!   `<set key>.<id>.<depth>.<index hex>.<nonce hex>`, where the nonce is
//!   the random one its parent's split drew. A member belongs to the bucket
//!   whose index is the top `depth` bits of its XXH3-64 hash; a member's
//!   bucket is the deepest one on its hash's path that the directory does
//!   not record as split. Each bucket is an append-only log in the set's
//!   [`Codec`].
//! * Tokens: `s<id>.<d>.<i>.<n>` (bucket `d.i` split into children of
//!   nonce `n`; the first such token of a bucket counts),
//!   `p<id>.<d>.<i>.<own>.<n>.<ms>` (a split of the bucket whose key has
//!   nonce `own` is under way, begun at Unix ms `ms` by its splitter's
//!   clock) and `x<id>.<d>.<i>.<own>.<n>` (that split gave up).
//! * The **life item**, `<set key>.l` (or `.l<salt>`, on the directory's
//!   server): the id of the current life, read in the same batch as every
//!   write and every `contains`. When it names another life or none, the
//!   directory is read: a handle whose cached life ended (the directory
//!   was cleared, or lost in a restart and made again) stops writing into
//!   the old life's buckets, which may still live on other servers. It is
//!   a hint that the directory overrules and a reader sets right by CAS.
//!   The same batch touches the directory: the touch says whether it still
//!   exists, and keeps it as recently used as the life item and the
//!   buckets, so that memcached's LRU does not evict it alone. A set made
//!   with a TTL reads its directory instead (its buckets outlive it).
//!
//! ## Why nothing is lost or listed twice while a bucket splits
//!
//! Writers append to a bucket blind (one round trip, no read), so the only
//! way to stop a writer that does not know about a split is to make its
//! append fail: memcached refuses an `append` to a missing item. A split
//! therefore ends by deleting the bucket, by CAS:
//!
//! 1. read the bucket (value and CAS id);
//! 2. `add` its live members, divided by the next bit of their hashes,
//!    into two children under a fresh nonce. No other split, and no
//!    earlier life of those buckets, ever used these keys, so no one else
//!    reads or writes them (and no `add` can bring back a bucket that
//!    split: that was the hole in a first design, where children were
//!    named by position only and a paused splitter re-created a child that
//!    had split since);
//! 3. append its `p` token to the directory;
//! 4. read the directory: only the first split of this bucket under way
//!    that has not given up may delete it. Any other gives up: it appends
//!    its `x` token and deletes its children. A split's `x` token is
//!    written only by its own process, so the first split under way is
//!    never told to give up by another;
//! 5. delete the bucket with the CAS id it read. If an append landed
//!    since, the delete fails: the split reads the bucket again, rewrites
//!    its children (by their CAS ids) and tries again, up to
//!    [`SPLIT_RETRIES`] times, then gives up (`x`, children deleted);
//! 6. append its `s` token.
//!
//! The delete succeeds only if no append landed since the children were
//! written from the bucket, so they hold exactly what it held, and only one
//! split may delete a given bucket. After step 5, an append to the old
//! bucket answers NOT_STORED: the writer reads the directory again and
//! routes afresh. If step 6 has not happened yet, the writer waits a few
//! directory reads (about 30 ms) for it. A bucket still missing then, whose
//! first split under way has children, was either deleted by that split
//! (whose splitter stopped between 5 and 6) or lost (evicted, its server
//! restarted) with writes the children never saw. Only a server that has
//! lost nothing since the split began ([`Retention`](mcds_core::Retention),
//! against the `p` token's time, less two seconds of clock skew) tells the
//! first case: then the writer appends the `s` token for it. Otherwise,
//! and for a missing bucket with no split under way, the bucket is
//! **lost**: writes and reads of it fail with [`Error::Lost`] rather than
//! answering without the members it held, until the set is cleared. (On a
//! server that evicts, or one younger than the skew, a splitter slower
//! than the wait between its delete and its record makes readers meanwhile
//! fail with `Lost` too, wrongly: they cannot tell it from a loss. Such a
//! split records itself, and the bucket reads again. A split whose record
//! the directory's item limit refuses, once splits that began meanwhile
//! took the room step 4 saw, stands if a writer recorded it first;
//! otherwise it writes the bucket again from its children, which no one
//! else knows, and gives up.) A
//! delete that finds the bucket already gone gives the split up, for the
//! same reason: its children are a copy from before the loss.
//!
//! **Clearing.** [`clear`](Buckets::clear) deletes the directory by CAS
//! (a split recorded since it read it makes it read again), then every
//! bucket that directory names and the children of its splits under way.
//! A split that records itself after that finds no directory and undoes
//! itself, so no bucket is left that a handle could go on writing to.
//!
//! Only two kinds of writer create buckets: the one that creates a set's
//! directory (the root, under a fresh id that no one else knows until the
//! directory names it, and before the directory exists), and a splitter
//! (its own children, under its own nonce). A writer never re-creates a
//! bucket it found missing, so a split bucket cannot come back.
//!
//! **What a split cannot survive.** A splitter that stops for good between
//! steps 5 and 6 while the directory item is full (other splits took the
//! room step 4 saw: their `p` and `x` tokens are appended without a check)
//! leaves its bucket deleted and its split unrecorded, and no writer can
//! record it for it: reads and writes of that bucket fail with
//! `ValueTooLarge` (or `Lost` on a young server) until the set is cleared.
//! Its members are in the children; nothing reads wrong. (An adversarial
//! review made it happen by holding a splitter there, 7 of 10 runs on
//! `-I 1k`; a splitter that is only slow writes its bucket again.) A
//! splitter that stops for good between
//! steps 3 and 5 (its process killed there) stays the first split under way
//! of its bucket: that bucket cannot split again, and once it fills one
//! item, adds to it fail with [`Error::ValueTooLarge`] (nothing written).
//! Clearing the set is the way out. Another process cannot safely take
//! the split over: it cannot know that the stopped one will not wake and
//! delete the bucket.
//!
//! ## When a bucket splits
//!
//! A write of `n` bytes reads its bucket back in the same batch with
//! probability `8·n / split_bytes` (a hash of the write decides, so a call's
//! round trips are repeatable): on average once per eighth of a bucket
//! appended, by any writer. A bucket over `split_bytes` splits; one whose
//! live members fill less than half of it (dead tokens from removals) is
//! compacted instead. An append that the item limit refuses splits the
//! bucket at once (a removal it refuses rewrites the bucket without the
//! members, by CAS). No read or write waits for a split: a reader that
//! meets a split mid-way follows it.

use std::collections::HashMap;
use std::sync::Arc;

use mcds_core::{
    Access, CasOutcome, DeleteOutcome, Error, Io, Item, Key, Op as StoreOp, Reply, Result, Store,
    Stored, Ttl, stable_hash,
};
use parking_lot::Mutex;

use crate::codec::{Decoded, Op};
use crate::set::Codec;

/// The bucket size past which a bucket splits (4 KiB): a member read moves
/// at most about this much (a 4 KiB value costs about what a `SISMEMBER`
/// reply does on loopback), and a set of 10
/// million 8-byte members has about 35,000 buckets.
pub(crate) const DEFAULT_SPLIT_BYTES: usize = 4 * 1024;

/// The deepest bucket: 2^40 buckets, far past any pool's memory.
const MAX_DEPTH: u8 = 40;

/// The longest suffix a bucket key adds to the set's key:
/// `.<8 hex>.<2 digits>.<10 hex>.<8 hex>`.
pub(crate) const BUCKET_SUFFIX_LEN: usize = 1 + 8 + 1 + 2 + 1 + 10 + 1 + 8;

/// Rounds of "route, append, follow a split" before [`Error::Conflict`].
const MAX_ROUNDS: u32 = 64;

/// Times a split brings its children up to date with appends that landed
/// while it ran, before it gives up.
const SPLIT_RETRIES: u32 = 8;

/// Re-reads of the directory (with backoff: about 30 ms in all) that a
/// reader waits for a split's record when it finds the split's bucket
/// deleted and its children written.
const FOLLOW_WAITS: u32 = 4;

/// How far the splitter's clock (in a `p` token) and the clock behind a
/// server's [`Retention`](mcds_core::Retention) may disagree.
const CLOCK_SKEW_MS: u64 = 2_000;

/// Draws of a new set's id that look for a root on the directory's server.
const COLOCATE_TRIES: u32 = 16;

/// The directory's first token.
const MAGIC: &[u8] = b"b1 ";

/// A bucket: its depth and its index (the top `depth` bits of a member's
/// hash).
pub(crate) type Bucket = (u8, u64);

/// The bucket index of `hash` at `depth`: its top `depth` bits.
fn index_at(hash: u64, depth: u8) -> u64 {
    if depth == 0 {
        0
    } else {
        hash >> (64 - u32::from(depth))
    }
}

fn children((depth, index): Bucket) -> [Bucket; 2] {
    [(depth + 1, index << 1), (depth + 1, index << 1 | 1)]
}

/// What a set's directory says: the life's id, whether it expires, the
/// split buckets (each with the nonce that names its children), and the
/// splits under way. Cheap to clone (a handle clones it for every
/// operation): the maps are shared, copied only when a split is recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    id: Arc<str>,
    /// Created with a TTL (the directory's `t` token): every operation
    /// reads the directory too, since the buckets outlive it.
    expiring: bool,
    /// Split bucket → the nonce in its children's keys.
    split: Arc<HashMap<Bucket, u32>>,
    /// Bucket → its splits under way that have not given up, in the
    /// directory's order: (the nonce in the split bucket's own key, the
    /// nonce of its children). The first of a bucket's is the only one
    /// that may delete it.
    pending: Arc<HashMap<Bucket, Vec<(u32, u32)>>>,
    /// When each split under way began (its `p` token's Unix ms, by its
    /// splitter's clock), by bucket and children's nonce.
    started: Arc<HashMap<(Bucket, u32), u64>>,
}

/// The parent of a bucket below the root.
fn parent((depth, index): Bucket) -> Bucket {
    (depth - 1, index >> 1)
}

impl Shape {
    fn new(id: &str, expiring: bool) -> Shape {
        Shape {
            id: id.into(),
            expiring,
            split: Arc::default(),
            pending: Arc::default(),
            started: Arc::default(),
        }
    }

    /// Splits under way of buckets not split yet: each will append an `s`
    /// or an `x` token to the directory.
    fn under_way(&self) -> usize {
        self.pending
            .iter()
            .filter(|(bucket, _)| !self.split.contains_key(*bucket))
            .map(|(_, splits)| splits.len())
            .sum()
    }

    /// The header of a new directory: `b1 <id> ` and `t ` if it expires.
    fn header(id: &str, expiring: bool) -> Vec<u8> {
        let mut header = [MAGIC, id.as_bytes(), b" "].concat();
        if expiring {
            header.extend_from_slice(b"t ");
        }
        header
    }

    /// The directory's bytes: `b1 <id> [t ]`, then tokens
    /// `s<id>.<depth>.<index hex>.<nonce hex>` (a split),
    /// `p<id>.<depth>.<index hex>.<own nonce hex>.<nonce hex>` (a split
    /// under way of the bucket whose key has the own nonce, 0 for the root)
    /// and `x…` with the same fields as `p` (that split gave up). Tokens of
    /// another life (a splitter of a cleared or expired set that appended
    /// late) are ignored, as is a split whose parent is not split.
    fn parse(bytes: &[u8]) -> std::result::Result<Shape, String> {
        let rest = bytes
            .strip_prefix(MAGIC)
            .ok_or("a set directory starts with `b1 `")?;
        let text = std::str::from_utf8(rest).map_err(|_| "a set directory is ASCII")?;
        let mut tokens = text.split(' ').filter(|t| !t.is_empty());
        let id = tokens.next().ok_or("a set directory names its id")?;
        if id.len() != 8 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "a set directory's id is 8 hex digits; found {id:?}"
            ));
        }
        let mut shape = Shape::new(id, false);
        let mut splits = Vec::new();
        let mut pending: HashMap<Bucket, Vec<(u32, u32)>> = HashMap::new();
        let mut started: HashMap<(Bucket, u32), u64> = HashMap::new();
        let mut gave_up: Vec<(Bucket, u32, u32)> = Vec::new();
        for token in tokens {
            if token == "t" {
                shape.expiring = true;
                continue;
            }
            let bad = || {
                format!(
                    "a set directory token is s<id>.<depth>.<index>.<nonce>, p<id>.<depth>.<index>.<nonce>.<nonce>.<ms> or x<id>.<depth>.<index>.<nonce>.<nonce>; found {token:?}"
                )
            };
            let (kind, body) = token.split_at_checked(1).ok_or_else(bad)?;
            let fields: Vec<&str> = body.split('.').collect();
            let nonce = |f: &str| u32::from_str_radix(f, 16).ok();
            let mut at_ms = None;
            let (life, d, i, own, n) = match (kind, fields.as_slice()) {
                ("s", [life, d, i, n]) => (*life, d, i, Some(0), nonce(n)),
                ("p", [life, d, i, own, n, ms]) => {
                    at_ms = Some(u64::from_str_radix(ms, 16).map_err(|_| bad())?);
                    (*life, d, i, nonce(own), nonce(n))
                }
                // A `p` token without its time (mcds before the time was
                // added): the split's start is unknown.
                ("p" | "x", [life, d, i, own, n]) => (*life, d, i, nonce(own), nonce(n)),
                _ => return Err(bad()),
            };
            let (Some(d), Some(i), Some(own), Some(n)) = (
                d.parse::<u8>().ok(),
                u64::from_str_radix(i, 16).ok(),
                own,
                n,
            ) else {
                return Err(bad());
            };
            if d >= MAX_DEPTH || (d > 0 && i >> d != 0) || (d == 0 && i != 0) {
                return Err(bad());
            }
            if life != id {
                continue; // another life's token: dirt
            }
            match kind {
                "s" => splits.push(((d, i), n)),
                "p" => {
                    pending.entry((d, i)).or_default().push((own, n));
                    started.insert(((d, i), n), at_ms.unwrap_or(u64::MAX));
                }
                _ => gave_up.push(((d, i), own, n)),
            }
        }
        for (bucket, own, n) in gave_up {
            if let Some(list) = pending.get_mut(&bucket) {
                list.retain(|&p| p != (own, n));
            }
        }
        // A split counts once its parent is split (the first token of a
        // bucket wins; a later one for the same bucket is dirt).
        let mut split: HashMap<Bucket, u32> = HashMap::new();
        loop {
            let before = split.len();
            for &(bucket, nonce) in &splits {
                if !split.contains_key(&bucket)
                    && (bucket.0 == 0 || split.contains_key(&parent(bucket)))
                {
                    split.insert(bucket, nonce);
                }
            }
            if split.len() == before {
                break;
            }
        }
        shape.split = Arc::new(split);
        shape.pending = Arc::new(pending);
        shape.started = Arc::new(started);
        Ok(shape)
    }

    /// Record `bucket` as split, its children named with `nonce`.
    fn record(&mut self, bucket: Bucket, nonce: u32) {
        if !self.split.contains_key(&bucket) {
            Arc::make_mut(&mut self.split).insert(bucket, nonce);
        }
    }

    /// The committed split's token.
    fn split_token(&self, (depth, index): Bucket, nonce: u32) -> String {
        format!("s{}.{depth}.{index:x}.{nonce:x} ", self.id)
    }

    /// The nonce in `bucket`'s own key: its parent's split's (0 for the
    /// root).
    fn own_nonce(&self, bucket: Bucket) -> u32 {
        if bucket.0 == 0 {
            0
        } else {
            self.split.get(&parent(bucket)).copied().unwrap_or(0)
        }
    }

    /// A split under way: `bucket` into children named with `nonce`.
    /// It records when it began (`began`, Unix ms, taken before the
    /// bucket was read), for [`Buckets::follow`]'s question whether the
    /// bucket's server lost anything since the split copied it.
    fn pending_token(&self, bucket: Bucket, nonce: u32, began: u64) -> String {
        let own = self.own_nonce(bucket);
        format!(
            "p{}.{}.{:x}.{own:x}.{nonce:x}.{began:x} ",
            self.id, bucket.0, bucket.1
        )
    }

    /// When the split of `bucket` into children named `nonce` began
    /// (`u64::MAX` when the directory does not say).
    fn started(&self, bucket: Bucket, nonce: u32) -> u64 {
        self.started
            .get(&(bucket, nonce))
            .copied()
            .unwrap_or(u64::MAX)
    }

    /// The split of `bucket` into children named with `nonce` gave up.
    fn gave_up_token(&self, bucket: Bucket, nonce: u32) -> String {
        let own = self.own_nonce(bucket);
        format!(
            "x{}.{}.{:x}.{own:x}.{nonce:x} ",
            self.id, bucket.0, bucket.1
        )
    }

    /// The one split of `bucket` (this bucket: the key with its own nonce)
    /// that may delete it: the first under way that has not given up. Its
    /// children's nonce.
    fn candidate(&self, bucket: Bucket) -> Option<u32> {
        let own = self.own_nonce(bucket);
        self.pending
            .get(&bucket)?
            .iter()
            .find(|&&(o, _)| o == own)
            .map(|&(_, n)| n)
    }

    /// The bucket that holds members of hash `hash`.
    fn leaf(&self, hash: u64) -> Bucket {
        let mut depth = 0;
        while depth < MAX_DEPTH && self.split.contains_key(&(depth, index_at(hash, depth))) {
            depth += 1;
        }
        (depth, index_at(hash, depth))
    }

    /// Every bucket that holds members, in hash order.
    fn leaves(&self) -> Vec<Bucket> {
        self.leaves_under((0, 0))
    }

    /// The buckets that hold members of `top`'s hash range, in hash order.
    fn leaves_under(&self, top: Bucket) -> Vec<Bucket> {
        let mut out = Vec::new();
        let mut stack = vec![top];
        while let Some(b) = stack.pop() {
            if self.split.contains_key(&b) && b.0 < MAX_DEPTH {
                let [low, high] = children(b);
                stack.push(high);
                stack.push(low);
            } else {
                out.push(b);
            }
        }
        out
    }

    /// Whether `bucket` holds members now.
    fn is_leaf(&self, bucket: Bucket) -> bool {
        !self.split.contains_key(&bucket)
            && (bucket.0 == 0 || self.split.contains_key(&parent(bucket)))
    }
}

/// Read, in one batch, the directories of the `sets` whose handles have
/// not read theirs yet (a sharded set's shards), so that routing their
/// writes costs one round trip, not one per set.
pub(crate) async fn prime(io: Io, sets: &[&Buckets]) -> Result<()> {
    let unknown: Vec<&Buckets> = sets
        .iter()
        .copied()
        .filter(|b| matches!(*b.shape.lock(), Known::Unknown))
        .collect();
    let Some(first) = unknown.first() else {
        return Ok(());
    };
    let keys: Vec<Key> = unknown.iter().map(|b| b.dir.clone()).collect();
    let items = first.access(io).get_multi(&keys).await?;
    for (b, item) in unknown.iter().zip(items) {
        // An old one-item log stays unknown: the set's own read moves it.
        if let Ok(shape) = b.shape_of(item.as_ref())? {
            b.remember(shape);
        }
    }
    Ok(())
}

/// [`Error::InvalidKey`] unless `dir` leaves room for a bucket's suffix.
pub(crate) fn check_key(dir: &Key) -> Result<()> {
    dir.with_suffix([b'x'; BUCKET_SUFFIX_LEN])
        .map(drop)
        .map_err(|_| Error::InvalidKey {
            key: dir.display(),
            reason: "a set's key leaves room for its buckets' suffix (32 bytes) within 250 bytes",
        })
}

/// Where a paged read of a set stands: the set's life and the first hash
/// not read yet.
#[derive(Clone, Debug)]
pub(crate) struct Cursor {
    id: Arc<str>,
    from: u64,
}

/// The first hash of `bucket`'s range, and its last.
fn range((depth, index): Bucket) -> (u64, u64) {
    if depth == 0 {
        return (0, u64::MAX);
    }
    let start = index << (64 - u32::from(depth));
    (start, start | (u64::MAX >> u32::from(depth)))
}

/// A set's buckets: the directory, a cached copy of its shape, and the
/// split and routing logic (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct Buckets {
    store: Arc<dyn Store>,
    dir: Key,
    codec: Codec,
    ttl: Ttl,
    split_bytes: usize,
    /// The directory as last read (shared by clones of the handle).
    shape: Arc<Mutex<Known>>,
    /// The life item: the id of the set's life, on the directory's server
    /// (see [`Buckets::life_holds`]).
    life: Key,
}

/// What a handle knows of its set's directory.
#[derive(Clone, Debug)]
enum Known {
    /// Not read yet.
    Unknown,
    /// Missing when last read (or cleared by this handle): a write creates
    /// the set without reading first; a read still looks.
    Missing,
    /// As last read or changed by this handle.
    Shape(Shape),
}

/// What a write of one bucket's members came to.
enum Landed {
    Done,
    /// Route these members again (the bucket split or the set is new).
    Again,
}

/// Splits that may begin while another one runs its steps 4 to 6, whose
/// `p` and `x` tokens the directory keeps room for (see [`Buckets::grow`]).
const SPLITS_AT_ONCE: usize = 16;

/// A planned append: the bucket, its key, the members and their tokens.
pub(crate) struct Append<'m> {
    op: Op,
    bucket: Bucket,
    key: Key,
    members: Vec<&'m [u8]>,
    tokens: Vec<u8>,
    /// Read the bucket back in the same batch, to see whether it is due
    /// to split (sampled: see the module docs).
    probe: bool,
    /// Whether the batch checks its life by reading the directory (else
    /// the life item: see [`Buckets::check_ops`]). Decided once, when
    /// planned: the batch's ops and the reading of its replies must agree
    /// even if another clone of the handle refreshes the cached shape in
    /// between.
    via_dir: bool,
}

impl Append<'_> {
    /// The store operations: the probe's `get` when sampled, then the
    /// append (tables and sharded sets put them in a pipelined batch with
    /// their own). The `get` goes first: a batch is cut after an append
    /// followed by an op on its key (the append may need finishing), and
    /// the bucket read just before the append tells its size as well.
    pub(crate) fn ops(&self) -> impl Iterator<Item = StoreOp<'_>> {
        let append = StoreOp::Append {
            key: &self.key,
            value: &self.tokens,
        };
        self.probe
            .then_some(StoreOp::Get(&self.key))
            .into_iter()
            .chain(std::iter::once(append))
    }

    fn op_count(&self) -> usize {
        1 + usize::from(self.probe)
    }
}

impl Buckets {
    /// The operations of `appends`, in order: the check of the set's life
    /// first ([`check_ops`](Self::check_ops)), so that a write finds out in
    /// the same round trip that the set it routed by has ended.
    pub(crate) fn ops<'a>(&'a self, appends: &'a [Append<'_>]) -> Vec<StoreOp<'a>> {
        let mut ops = Vec::new();
        if let Some(first) = appends.first() {
            ops.extend(self.check_ops(first.via_dir));
        }
        ops.extend(appends.iter().flat_map(Append::ops));
        ops
    }

    /// The ops that check a batch's life: a read of the directory (sets
    /// with a TTL), or a read of the life item and a touch of the
    /// directory. The touch says whether the directory still exists, and
    /// keeps it as recently used as the life item and the buckets, which
    /// every call reads: memcached's LRU would otherwise evict the
    /// directory first, and a handle could go on in a set no one else sees.
    fn check_ops(&self, via_dir: bool) -> Vec<StoreOp<'_>> {
        if via_dir {
            vec![StoreOp::Get(&self.dir)]
        } else {
            vec![
                StoreOp::Get(&self.life),
                StoreOp::Touch {
                    key: &self.dir,
                    ttl: Ttl::Never,
                },
            ]
        }
    }

    /// Take the replies of [`check_ops`](Self::check_ops) off the front
    /// of a batch's and say whether the life is still `id`
    /// ([`life_holds`](Self::life_holds)). In a batch of `writes`, an
    /// error is [`unread_life`](Self::unread_life)'s: the writes were sent.
    async fn check_life(
        &self,
        io: Io,
        via_dir: bool,
        replies: &mut std::vec::IntoIter<Result<Reply>>,
        id: &str,
        writes: bool,
    ) -> Result<bool> {
        let mut next = || {
            replies
                .next()
                .unwrap_or_else(|| Err(Error::Internal("a pipeline answers every op".into())))
        };
        let item = next().and_then(Reply::item);
        let found = if via_dir {
            Ok(true)
        } else {
            next().and_then(Reply::applied)
        };
        let holds = self.life_holds(io, via_dir, (item, found), id).await;
        match holds {
            Err(e) if writes => Err(self.unread_life(e, replies.as_slice())),
            other => other,
        }
    }

    /// Whether a batch checks its life by reading the directory (a set
    /// made with a TTL, whose buckets outlive it), rather than the small
    /// life item.
    fn via_dir(&self, shape: &Shape) -> bool {
        self.ttl != Ttl::Never || shape.expiring
    }

    /// The error of a batch whose life-check read failed: its appends were
    /// sent with it, so unless every one of them failed outright, some may
    /// have landed, and the call is [`Error::Ambiguous`], never a plain
    /// failure.
    fn unread_life(&self, e: Error, appends: &[Result<Reply>]) -> Error {
        let maybe = appends
            .iter()
            .any(|r| matches!(r, Ok(_) | Err(Error::Ambiguous { .. })));
        if !maybe || matches!(e, Error::Ambiguous { .. }) {
            return e;
        }
        Error::Ambiguous {
            key: self.dir.display(),
            server: String::new(),
            reason: format!(
                "the batch's appends were sent, but the read that checks the set's life failed ({e}), so whether they landed in the live set is not known; send the batch again (adds and removes are idempotent)"
            ),
        }
    }

    /// Whether the life-check read of a batch planned under `id` (by the
    /// directory, `via_dir`, or the life item) says the life is still `id`.
    /// The life item is a hint: when it names another life or none (a set
    /// made before it existed, or it was lost), the directory decides, and
    /// the hint is set right by CAS. The directory and the life item live
    /// on one server, so a restart that loses the directory loses the item
    /// too, and a handle whose cached life ended stops writing into it.
    async fn life_holds(
        &self,
        io: Io,
        via_dir: bool,
        (item, dir_found): (Result<Option<Item>>, Result<bool>),
        id: &str,
    ) -> Result<bool> {
        if via_dir {
            return self.same_life(item, id);
        }
        let item = item?;
        if dir_found? && item.as_ref().is_some_and(|i| i.value == id.as_bytes()) {
            return Ok(true);
        }
        match self.read_shape(io).await? {
            Some(shape) if &*shape.id == id => {
                let access = self.access(io);
                let _ = match &item {
                    Some(item) => access
                        .cas(&self.life, id.as_bytes(), Ttl::Never, item.cas)
                        .await
                        .map(drop),
                    None => access
                        .add(&self.life, id.as_bytes(), Ttl::Never)
                        .await
                        .map(drop),
                };
                Ok(true)
            }
            _ => {
                // Another life, or none: route afresh (read_shape cached
                // what it found).
                Ok(false)
            }
        }
    }

    /// Whether the directory `item` read in an operation's batch is still
    /// the life `id` (else the cached shape is forgotten and read again).
    fn same_life(&self, item: Result<Option<Item>>, id: &str) -> Result<bool> {
        // An old one-item log reads as no life: it is moved on the next read.
        let shape: Option<Shape> = self.shape_of(item?.as_ref())?.unwrap_or_default();
        let same = shape.as_ref().is_some_and(|s| &*s.id == id);
        if !same {
            *self.shape.lock() = Known::Unknown;
        }
        Ok(same)
    }

    pub(crate) fn new(store: Arc<dyn Store>, dir: Key) -> Buckets {
        // `<dir>.l`, or `<dir>.l<salt>` with the first salt that puts it on
        // the directory's server: a restart of that server then takes both.
        let life = (0..64u32)
            .filter_map(|salt| match salt {
                0 => dir.with_suffix(".l").ok(),
                _ => dir.with_suffix(format!(".l{salt}")).ok(),
            })
            .find(|k| store.colocated(k, &dir))
            .or_else(|| dir.with_suffix(".l").ok())
            .unwrap_or_else(|| dir.clone());
        Buckets {
            life,
            store,
            dir,
            codec: Codec::Text,
            ttl: Ttl::Never,
            split_bytes: DEFAULT_SPLIT_BYTES,
            shape: Arc::new(Mutex::new(Known::Unknown)),
        }
    }

    pub(crate) fn set_codec(&mut self, codec: Codec) {
        self.codec = codec;
    }

    pub(crate) fn set_ttl(&mut self, ttl: Ttl) {
        self.ttl = ttl;
    }

    pub(crate) fn set_split_bytes(&mut self, bytes: usize) {
        self.split_bytes = bytes.max(64);
    }

    pub(crate) fn dir(&self) -> &Key {
        &self.dir
    }

    pub(crate) fn codec(&self) -> Codec {
        self.codec
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// The TTL of a bucket: the set's, plus a minute, so that the directory
    /// (created after the root) expires first and a bucket is never found
    /// missing while its directory lives.
    fn bucket_ttl(&self) -> Ttl {
        match self.ttl {
            Ttl::Never => Ttl::Never,
            Ttl::Secs(n) => Ttl::secs(n.get().saturating_add(60)),
        }
    }

    /// The key of `bucket` in `shape`'s life: the root `<dir>.<id>.0.0`,
    /// any other `<dir>.<id>.<depth>.<index>.<nonce>` with the nonce of its
    /// parent's split (so a bucket's key is never used twice, whatever a
    /// late splitter does: see the module docs).
    pub(crate) fn key_of(&self, shape: &Shape, bucket: Bucket) -> Result<Key> {
        if bucket.0 == 0 {
            return self.root_key(&shape.id);
        }
        let nonce = shape.split.get(&parent(bucket)).ok_or_else(|| {
            Error::Internal(format!(
                "set {}: bucket {bucket:?} has no split parent",
                self.dir.display()
            ))
        })?;
        self.child_key(&shape.id, bucket, *nonce)
    }

    fn root_key(&self, id: &str) -> Result<Key> {
        self.dir.with_suffix(format!(".{id}.0.0"))
    }

    /// The key of `bucket`, a child made by the split with `nonce`.
    fn child_key(&self, id: &str, (depth, index): Bucket, nonce: u32) -> Result<Key> {
        self.dir
            .with_suffix(format!(".{id}.{depth}.{index:x}.{nonce:x}"))
    }

    /// The life id in a bucket key (`<dir>.<id>.<depth>.<index>`).
    fn key_life(&self, key: &Key) -> String {
        let rest = &key.as_bytes()[self.dir.len().min(key.len())..];
        String::from_utf8_lossy(rest.get(1..9).unwrap_or_default()).into_owned()
    }

    fn cached(&self) -> Option<Shape> {
        match &*self.shape.lock() {
            Known::Shape(shape) => Some(shape.clone()),
            _ => None,
        }
    }

    fn remember(&self, shape: Option<Shape>) {
        *self.shape.lock() = shape.map_or(Known::Missing, Known::Shape);
    }

    /// Read the directory: `None` when the set does not exist. A directory
    /// an older mcds wrote (one item holding the whole log) is moved into
    /// a root bucket first.
    async fn read_shape(&self, io: Io) -> Result<Option<Shape>> {
        Ok(self.read_shape_sized(io).await?.0)
    }

    /// [`read_shape`](Self::read_shape), and the directory item's length
    /// in bytes (0 when there is none).
    async fn read_shape_sized(&self, io: Io) -> Result<(Option<Shape>, usize)> {
        for _ in 0..MAX_ROUNDS {
            let item = self.access(io).get(&self.dir).await?;
            let len = item.as_ref().map_or(0, |i| i.value.len());
            match self.shape_of(item.as_ref())? {
                Ok(shape) => {
                    self.remember(shape.clone());
                    return Ok((shape, len));
                }
                Err(legacy) => self.migrate(io, legacy).await?,
            }
        }
        Err(self.conflict())
    }

    /// The shape a directory item describes, or the item itself when it is
    /// a one-item set of an older mcds.
    fn shape_of<'i>(
        &self,
        item: Option<&'i Item>,
    ) -> Result<std::result::Result<Option<Shape>, &'i Item>> {
        let Some(item) = item else {
            return Ok(Ok(None));
        };
        if !item.value.starts_with(MAGIC) {
            return Ok(Err(item));
        }
        Shape::parse(&item.value)
            .map(|s| Ok(Some(s)))
            .map_err(|reason| Error::Corrupt {
                key: self.dir.display(),
                reason: format!(
                    "{reason} (an mcds before 0.9 may have appended members to it: upgrade every client of the set)"
                ),
            })
    }

    /// Move a one-item set of an older mcds (its log under the set's key)
    /// into buckets of a new life (split as its size needs), then replace
    /// the log by the directory, by CAS: an old client's append in between
    /// makes the CAS fail, the new buckets are deleted, and the move starts
    /// again.
    async fn migrate(&self, io: Io, legacy: &Item) -> Result<()> {
        let decoded = self.codec.decode(&self.dir, &legacy.value)?;
        let id = new_id();
        let mut shape = Shape::new(&id, self.ttl != Ttl::Never);
        let buckets = self.layout(&mut shape, as_slices(&decoded.members));
        let keys: Vec<Key> = buckets
            .iter()
            .map(|(b, _)| self.key_of(&shape, *b))
            .collect::<Result<_>>()?;
        let ttl = self.bucket_ttl();
        let ops: Vec<StoreOp<'_>> = keys
            .iter()
            .zip(&buckets)
            .map(|(key, (_, bytes))| StoreOp::Add {
                key,
                value: bytes,
                ttl,
            })
            .collect();
        let access = self.access(io);
        let mut written = Vec::new();
        let mut failed = None;
        for (key, reply) in keys.iter().zip(access.pipeline(&ops).await) {
            match reply.and_then(Reply::stored) {
                Ok(Stored::Stored(cas)) => written.push((key, cas)),
                Ok(Stored::NotStored) => {} // 2^-32: another life's name
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        let mut header = Shape::header(&id, shape.expiring);
        let mut splits: Vec<(Bucket, u32)> = shape.split.iter().map(|(b, n)| (*b, *n)).collect();
        splits.sort(); // parents first
        for (b, n) in splits {
            header.extend_from_slice(shape.split_token(b, n).as_bytes());
        }
        let moved = failed.is_none()
            && written.len() == keys.len()
            && matches!(
                access.cas(&self.dir, &header, self.ttl, legacy.cas).await?,
                CasOutcome::Stored(_)
            );
        if !moved {
            for (key, cas) in written {
                access.delete_cas(key, cas).await?;
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Lay `members` out in buckets of at most the split size: the splits
    /// go into `shape` (each with a fresh nonce), and each leaf comes back
    /// with its log.
    fn layout(&self, shape: &mut Shape, members: Vec<&[u8]>) -> Vec<(Bucket, Vec<u8>)> {
        let mut leaves = Vec::new();
        let mut stack = vec![((0u8, 0u64), members)];
        while let Some((bucket, members)) = stack.pop() {
            let bytes = self.codec.encode(Op::Add, &members);
            if bytes.len() <= self.split_at() || members.len() < 2 || bucket.0 >= MAX_DEPTH {
                leaves.push((bucket, bytes));
                continue;
            }
            shape.record(bucket, new_nonce());
            let [low, high] = children(bucket);
            let (a, b): (Vec<&[u8]>, Vec<&[u8]>) = members
                .into_iter()
                .partition(|m| index_at(stable_hash(m), low.0) == low.1);
            stack.push((high, b));
            stack.push((low, a));
        }
        leaves
    }

    /// The shape to read by: the cached one, else the directory's.
    async fn shape(&self, io: Io) -> Result<Option<Shape>> {
        match self.cached() {
            Some(shape) => Ok(Some(shape)),
            None => self.read_shape(io).await,
        }
    }

    /// The shape to write by: as [`shape`](Self::shape), but an add to a
    /// set this handle last saw missing creates it without reading the
    /// directory again (the creation finds out if another writer was
    /// first).
    async fn write_shape(&self, io: Io, op: Op) -> Result<Option<Shape>> {
        let known = self.shape.lock().clone();
        match known {
            Known::Shape(shape) => Ok(Some(shape)),
            // A removal must not be dropped on an old belief.
            Known::Missing if op == Op::Add => Ok(None),
            Known::Missing => self.read_shape(io).await,
            Known::Unknown => self.read_shape(io).await,
        }
    }

    /// Create the set: its root bucket under a fresh id (holding `first`,
    /// the tokens of the creating write), then the directory naming it. A
    /// writer that loses the race to create the directory deletes its root
    /// and uses the winner's. `Ok(true)` when `first` was written.
    async fn create(&self, io: Io, first: &[u8]) -> Result<bool> {
        let access = self.access(io);
        let expiring = self.ttl != Ttl::Never;
        // Tokens too many for one bucket go in by the ordinary appends
        // (which split): the root starts empty.
        let first = if first.len() <= self.split_at() {
            first
        } else {
            &[][..]
        };
        // An id whose root lives on the directory's server, when one of a
        // few draws finds it: then both adds go in one batch, applied in
        // order (the root before the directory names it), one round trip.
        let mut id = new_id();
        let mut root = self.root_key(&id)?;
        for _ in 0..COLOCATE_TRIES {
            if self.store.colocated(&root, &self.dir) {
                break;
            }
            id = new_id();
            root = self.root_key(&id)?;
        }
        let header = Shape::header(&id, expiring);
        let add_root = StoreOp::Add {
            key: &root,
            value: first,
            ttl: self.bucket_ttl(),
        };
        let add_dir = StoreOp::Add {
            key: &self.dir,
            value: &header,
            ttl: self.ttl,
        };
        // The life item first (a hint: a creator that loses the race leaves
        // its id there, and the next reader sets it right from the
        // directory), so that once the directory names this life, the item
        // has named it too.
        let set_life = StoreOp::Set {
            key: &self.life,
            value: id.as_bytes(),
            ttl: Ttl::Never,
        };
        let (rooted, named) = if self.store.colocated(&root, &self.dir) {
            let [rooted, _, named] = access.run_pipeline([add_root, set_life, add_dir]).await?;
            (
                rooted.and_then(Reply::stored),
                named.and_then(Reply::stored),
            )
        } else {
            let rooted = access.execute(&add_root).await.and_then(Reply::stored);
            if !matches!(rooted, Ok(Stored::Stored(_))) {
                return rooted.map(|_| false); // 2^-32: try again with another id
            }
            let [_, named] = access.run_pipeline([set_life, add_dir]).await?;
            (rooted, named.and_then(Reply::stored))
        };
        match (rooted, named) {
            (Ok(Stored::Stored(_)), Ok(Stored::Stored(_))) => {
                self.remember(Some(Shape::new(&id, expiring)));
                Ok(!first.is_empty())
            }
            (Ok(Stored::Stored(cas)), named) => {
                // Another writer created the set first (or the directory's
                // write failed): ours is unnamed.
                access.delete_cas(&root, cas).await?;
                named?;
                self.read_shape(io).await?;
                Ok(false)
            }
            (rooted, Ok(Stored::Stored(cas))) => {
                // The directory names a root that was not written (an id
                // of another life, or the write failed): take it back.
                access.delete_cas(&self.dir, cas).await?;
                rooted?;
                Ok(false)
            }
            (rooted, named) => {
                rooted?;
                named?;
                self.read_shape(io).await?;
                Ok(false)
            }
        }
    }

    fn conflict(&self) -> Error {
        Error::Conflict {
            key: self.dir.display(),
            attempts: MAX_ROUNDS,
        }
    }

    /// Group `members` by bucket under `shape`.
    pub(crate) fn plan<'m>(
        &self,
        shape: &Shape,
        op: Op,
        members: &[&'m [u8]],
    ) -> Result<Vec<Append<'m>>> {
        let mut groups: Vec<(Bucket, Vec<&'m [u8]>)> = Vec::new();
        let mut index: HashMap<Bucket, usize> = HashMap::new();
        for &m in members {
            let bucket = shape.leaf(stable_hash(m));
            let i = *index.entry(bucket).or_insert_with(|| {
                groups.push((bucket, Vec::new()));
                groups.len() - 1
            });
            groups[i].1.push(m);
        }
        let mut appends = Vec::with_capacity(groups.len());
        let via_dir = self.via_dir(shape);
        for (bucket, members) in groups {
            let key = self.key_of(shape, bucket)?;
            // A group larger than a bucket goes in several appends (each at
            // most a bucket's worth): the bucket splits between them.
            let mut start = 0;
            while start < members.len() {
                let mut end = start;
                let mut bytes = 0;
                while end < members.len()
                    && (end == start || bytes + members[end].len() + 2 <= self.split_at())
                {
                    bytes += members[end].len() + 2;
                    end += 1;
                }
                let part = members[start..end].to_vec();
                let tokens = self.codec.encode(op, &part);
                appends.push(Append {
                    op,
                    key: key.clone(),
                    probe: sampled(&tokens, self.split_at()),
                    tokens,
                    bucket,
                    members: part,
                    via_dir,
                });
                start = end;
            }
        }
        Ok(appends)
    }

    /// The appends of a write of `members`, routed by the cached shape
    /// (read first when there is none). Empty for a removal from a set
    /// that does not exist; a new set is created by [`write`](Self::write).
    pub(crate) async fn prepare<'m>(
        &self,
        io: Io,
        op: Op,
        members: &[&'m [u8]],
    ) -> Result<Vec<Append<'m>>> {
        match self.write_shape(io, op).await? {
            Some(shape) => self.plan(&shape, op, members),
            None => Ok(Vec::new()),
        }
    }

    /// Add or remove `members`: one append per bucket touched, in one
    /// pipelined batch; following splits and creating the set as needed.
    pub(crate) async fn write(&self, io: Io, op: Op, members: &[&[u8]]) -> Result<()> {
        if members.is_empty() {
            return Ok(());
        }
        self.check_sizes(members)?;
        let appends = self.prepare(io, op, members).await?;
        let results = if appends.is_empty() {
            Vec::new()
        } else {
            self.access(io).pipeline(&self.ops(&appends)).await
        };
        self.finish(io, op, members, appends, results)
            .await
            .map(|_| ())
    }

    /// A member whose token alone exceeds the item limit can never be
    /// written: refused before anything is sent.
    pub(crate) fn check_sizes(&self, members: &[&[u8]]) -> Result<()> {
        let limit = self.store.item_size_limit();
        for m in members {
            let token = self.codec.encode(Op::Add, &[m]);
            mcds_core::backend::check_item_size(&self.dir, token.len(), limit)?;
        }
        Ok(())
    }

    /// Handle the replies of [`prepare`](Self::prepare)'s appends: grow
    /// the buckets that may be full, and write again (routed afresh) the
    /// members whose bucket was split, missing or too full. With no
    /// appends (no set yet), an add creates the set.
    ///
    /// `Ok(true)` when every member landed by an append of the batch these
    /// replies answer, `Ok(false)` when some were written later (routed
    /// again, the set created, a bucket rewritten): a caller that ordered
    /// another write after the appends in that batch (a table's delete)
    /// learns whether the order held.
    pub(crate) async fn finish(
        &self,
        io: Io,
        op: Op,
        members: &[&[u8]],
        appends: Vec<Append<'_>>,
        results: Vec<Result<Reply>>,
    ) -> Result<bool> {
        let mut written = 0;
        let mut in_batch = true;
        let result = self
            .finish_counting(
                io,
                op,
                members,
                appends,
                results,
                &mut written,
                &mut in_batch,
            )
            .await
            .map(|()| in_batch);
        match result {
            // Part of the batch landed (its buckets' appends did) before
            // the error: the call did not fail whole. Adds and removes
            // are idempotent, so sending the batch again is safe.
            Err(e) if written > 0 && !matches!(e, Error::Ambiguous { .. }) => {
                Err(Error::Ambiguous {
                    key: self.dir.display(),
                    server: String::new(),
                    reason: format!(
                        "{written} of the batch's {} members were written (their buckets took them) before this error, the rest were not: {e}; send the whole batch again (adds and removes are idempotent)",
                        members.len()
                    ),
                })
            }
            other => other,
        }
    }

    /// [`finish`](Self::finish), counting the members written, and
    /// clearing `in_batch` when some were written after the batch.
    #[expect(
        clippy::too_many_arguments,
        reason = "finish's arguments, and its two tallies"
    )]
    async fn finish_counting(
        &self,
        io: Io,
        op: Op,
        members: &[&[u8]],
        appends: Vec<Append<'_>>,
        results: Vec<Result<Reply>>,
        written: &mut usize,
        in_batch: &mut bool,
    ) -> Result<()> {
        let mut again: Vec<&[u8]> = Vec::new();
        let mut first_error = None;
        if appends.is_empty() {
            again.extend_from_slice(members);
        }
        let mut results = results.into_iter();
        if let Some(first) = appends.first() {
            let id = self.key_life(&first.key);
            if !self
                .check_life(io, first.via_dir, &mut results, &id, true)
                .await?
            {
                // Written into buckets of an expired set: write again.
                *in_batch = false;
                return Box::pin(self.finish_counting(
                    io,
                    op,
                    members,
                    Vec::new(),
                    Vec::new(),
                    written,
                    in_batch,
                ))
                .await;
            }
        }
        for append in &appends {
            let replies: Vec<_> = results.by_ref().take(append.op_count()).collect();
            // Landed by this batch's append itself (not rewritten after).
            let now =
                matches!(replies.last(), Some(Ok(r)) if matches!(r.clone().applied(), Ok(true)));
            *in_batch &= now;
            match self.landed(io, append, replies).await {
                Ok(Landed::Done) => *written += append.members.len(),
                Ok(Landed::Again) => again.extend_from_slice(&append.members),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        if !again.is_empty() {
            *in_batch = false;
        }
        for _ in 0..MAX_ROUNDS {
            if again.is_empty() {
                return Ok(());
            }
            let Some(shape) = self.write_shape(io, op).await? else {
                if op == Op::Remove {
                    return Ok(()); // removing from a missing set creates nothing
                }
                if self.create(io, &self.codec.encode(op, &again)).await? {
                    *written += again.len();
                    return Ok(());
                }
                continue;
            };
            let appends = self.plan(&shape, op, &again)?;
            let mut results = self
                .access(io)
                .pipeline(&self.ops(&appends))
                .await
                .into_iter();
            if let Some(first) = appends.first() {
                if !self
                    .check_life(io, first.via_dir, &mut results, &shape.id, true)
                    .await?
                {
                    continue;
                }
            }
            let mut next = Vec::new();
            for append in &appends {
                let replies: Vec<_> = results.by_ref().take(append.op_count()).collect();
                match self.landed(io, append, replies).await? {
                    Landed::Done => *written += append.members.len(),
                    Landed::Again => next.extend_from_slice(&append.members),
                }
            }
            again = next;
        }
        Err(self.conflict())
    }

    /// One append's replies: the append's, and the probe's when sampled.
    async fn landed(
        &self,
        io: Io,
        append: &Append<'_>,
        replies: Vec<Result<Reply>>,
    ) -> Result<Landed> {
        let mut replies = replies.into_iter();
        let probed = if append.probe {
            replies.next().and_then(|r| r.and_then(Reply::item).ok())
        } else {
            None
        };
        let result = replies
            .next()
            .unwrap_or_else(|| Err(Error::Internal("a pipeline answers every op".into())));
        match result.and_then(Reply::applied) {
            Ok(true) => {
                if let Some(Some(item)) = probed
                    && item.value.len() + append.tokens.len() > self.split_at()
                {
                    // Best effort: a split that fails leaves the bucket as
                    // it was, and the write has landed.
                    let _ = self.grow(io, append.bucket, false).await;
                }
                Ok(Landed::Done)
            }
            Ok(false) => {
                self.follow(io, append.bucket).await?;
                Ok(Landed::Again)
            }
            Err(Error::ValueTooLarge { .. }) if append.op == Op::Remove => {
                self.remove_by_rewrite(io, append).await
            }
            Err(Error::ValueTooLarge { .. }) => {
                if !self.grow(io, append.bucket, true).await? {
                    // Nothing left to split or compact: the members do not
                    // fit one bucket of this set.
                    return Err(Error::ValueTooLarge {
                        key: append.key.display(),
                        size: append.tokens.len(),
                        limit: self.store.item_size_limit(),
                    });
                }
                Ok(Landed::Again)
            }
            Err(e) => Err(e),
        }
    }

    /// The size past which a bucket splits: the set's, and at most a
    /// quarter of the item limit (so that a bucket always has room to
    /// grow while its split is due).
    fn split_at(&self) -> usize {
        self.split_bytes
            .min(self.store.item_size_limit() / 4)
            .max(64)
    }

    /// `bucket` was missing when a write or read expected it: read the
    /// directory again, and if it still routes there, find out why. A
    /// split that deleted the bucket and has not recorded itself yet is
    /// the bucket's [candidate](Shape::candidate) split: if its children
    /// exist, the split is recorded for it. A bucket with no such split
    /// that the directory, read once more, still lists is lost.
    async fn follow(&self, io: Io, bucket: Bucket) -> Result<()> {
        let Some(shape) = self.read_shape(io).await? else {
            return Ok(()); // cleared, or never created: routed afresh
        };
        if !shape.is_leaf(bucket) {
            return Ok(());
        }
        let key = self.key_of(&shape, bucket)?;
        let candidate = shape.candidate(bucket);
        let mut keys = vec![key.clone()];
        if let Some(nonce) = candidate {
            for child in children(bucket) {
                keys.push(self.child_key(&shape.id, child, nonce)?);
            }
        }
        let found = self.access(io).get_multi(&keys).await?;
        if found[0].is_some() {
            return Ok(()); // there after all: route again
        }
        // The split that deleted the bucket was its first under way, and
        // appended its token before the delete: a directory read after
        // the bucket was seen missing names it as the candidate. A read
        // before the probe may name one that has given up since (and is
        // deleting its children), so it is read again.
        let now = match self.read_shape(io).await? {
            None => return Ok(()),
            Some(now) if now.id != shape.id || !now.is_leaf(bucket) => return Ok(()),
            Some(now) => now,
        };
        if now.candidate(bucket) != candidate {
            return Ok(()); // a newer split: probe again
        }
        let Some(nonce) = candidate.filter(|_| found[1..].iter().any(Option::is_some)) else {
            return Err(self.lost(&key));
        };
        // The bucket is missing and its first split under way has children.
        // Either that split deleted it (by CAS: its children then hold
        // exactly what it held) and is about to record itself, or the
        // bucket was lost (evicted, a restart) and the children are a copy
        // from before the writes that landed since. A live splitter records
        // itself within a round trip: wait for it a little.
        let mut backoff = mcds_core::Backoff::default();
        for _ in 0..FOLLOW_WAITS {
            self.access(io).sleep(backoff.next_delay()).await;
            match self.read_shape(io).await? {
                Some(again) if again.id == now.id && again.is_leaf(bucket) => {}
                _ => return Ok(()), // recorded, or the set is gone: route again
            }
        }
        // Its splitter stopped between the delete and the record, or the
        // bucket was lost. Only a server that has lost nothing since the
        // split began proves the former: then the split is recorded for it.
        let began = now.started(bucket, nonce);
        let kept = match self.access(io).retention(&key).await? {
            mcds_core::Retention::Complete => true,
            mcds_core::Retention::Since(ms) => ms.saturating_add(CLOCK_SKEW_MS) <= began,
            mcds_core::Retention::Unknown(_) => false,
        };
        if kept && began != u64::MAX {
            return self.record_split(io, &now, bucket, nonce).await.map(drop);
        }
        Err(self.lost(&key))
    }

    fn lost(&self, key: &Key) -> Error {
        Error::Lost {
            key: key.display(),
            reason: format!(
                "set {}'s directory lists bucket {} but it is gone (evicted, or its server restarted or was flushed), with the members it held; clear the set to start it again",
                self.dir.display(),
                key.display()
            ),
        }
    }

    /// Append `bucket`'s split (children named with `nonce`) to the
    /// directory, tagged with the life's id (a late append to a later
    /// life's directory is ignored there), and to the cached shape.
    ///
    /// `Ok(false)` when the directory is gone (the set was cleared, or it
    /// expired): nothing is cached, and the handle reads the directory
    /// again, so that it never routes to buckets a clear did not know of.
    async fn record_split(
        &self,
        io: Io,
        shape: &Shape,
        bucket: Bucket,
        nonce: u32,
    ) -> Result<bool> {
        let token = shape.split_token(bucket, nonce);
        // The split has happened whether or not the token lands (a full
        // `-M` server refuses it): this handle routes by it, and any other
        // finds it through the split's `p` token, as after a splitter that
        // stopped before writing it. So a read that meets the split never
        // fails for want of memory to record it. Any other failure is the
        // caller's: a directory whose item limit refuses the token
        // (`Error::ValueTooLarge` with a size) can never record this split,
        // and the splitter writes its bucket again (see `grow`), so no one
        // may route by a split the directory does not hold; nor after an
        // I/O error, which leaves the split to be found as a stopped
        // splitter's is.
        match self.access(io).append(&self.dir, token.as_bytes()).await {
            Ok(false) => {
                *self.shape.lock() = Known::Unknown;
                return Ok(false);
            }
            Ok(true) | Err(Error::OutOfMemory { .. } | Error::ValueTooLarge { size: 0, .. }) => {}
            Err(e) => return Err(e),
        }
        let mut cache = self.shape.lock();
        match &mut *cache {
            Known::Shape(cached) if cached.id == shape.id => cached.record(bucket, nonce),
            _ => {
                let mut shape = shape.clone();
                shape.record(bucket, nonce);
                *cache = Known::Shape(shape);
            }
        }
        Ok(true)
    }

    /// Apply a removal that the item limit refused to append (a member
    /// near the limit): rewrite the bucket without the members, by CAS.
    async fn remove_by_rewrite(&self, io: Io, append: &Append<'_>) -> Result<Landed> {
        let access = self.access(io);
        for _ in 0..MAX_ROUNDS {
            let Some(item) = access.get(&append.key).await? else {
                self.follow(io, append.bucket).await?;
                return Ok(Landed::Again);
            };
            let mut live = self.codec.decode(&append.key, &item.value)?.members;
            live.retain(|m| !append.members.contains(&m.as_slice()));
            let bytes = self.codec.encode(Op::Add, &as_slices(&live));
            match access
                .cas(&append.key, &bytes, self.bucket_ttl(), item.cas)
                .await?
            {
                CasOutcome::Stored(_) => return Ok(Landed::Done),
                CasOutcome::Exists => continue,
                CasOutcome::NotFound => {
                    self.follow(io, append.bucket).await?;
                    return Ok(Landed::Again);
                }
            }
        }
        Err(self.conflict())
    }

    /// Delete the children a split wrote and gives up, by their CAS ids.
    async fn undo(&self, io: Io, written: Vec<(Key, u64)>) -> Result<()> {
        for (child, cas) in written {
            self.access(io).delete_cas(&child, cas).await?;
        }
        Ok(())
    }

    /// Split `bucket` if it is over the split size (or `force`d: the item
    /// limit refused an append), or compact it when dead tokens are most
    /// of it. `Ok(true)` when the bucket changed (split, compacted, or
    /// found gone: its writers are to route again). The split's steps and
    /// why they hold: the module docs.
    async fn grow(&self, io: Io, bucket: Bucket, force: bool) -> Result<bool> {
        let Some(shape) = self.cached() else {
            return Ok(true);
        };
        if !shape.is_leaf(bucket) {
            return Ok(true);
        }
        let access = self.access(io);
        let key = self.key_of(&shape, bucket)?;
        // When the split began: before its read of the bucket, so that a
        // loss after the read is one since the split began.
        let began = mcds_core::unix_ms(std::time::SystemTime::now());
        // Step 1.
        let Some(item) = access.get(&key).await? else {
            return Ok(true);
        };
        if !force && item.value.len() <= self.split_at() {
            return Ok(false);
        }
        if !access.supports_cas(&key).await? {
            return Ok(false); // a proxy or -C: one bucket, as documented
        }
        let decoded = self.codec.decode(&key, &item.value)?;
        let live = self.codec.encode(Op::Add, &as_slices(&decoded.members));
        let divisible = bucket.0 < MAX_DEPTH && (decoded.members.len() >= 2 || force);
        if live.len() <= item.value.len() / 2 || !divisible {
            // Compact: mostly dead tokens (or nothing a split can divide).
            if live.len() >= item.value.len() {
                return Ok(false);
            }
            return Ok(matches!(
                access.cas(&key, &live, self.bucket_ttl(), item.cas).await?,
                CasOutcome::Stored(_)
            ));
        }
        // Step 2: children under a fresh nonce, so no other split's (and
        // no earlier life of a child's) key is ever written.
        let nonce = new_nonce();
        let mut halves: [Vec<&[u8]>; 2] = [Vec::new(), Vec::new()];
        for m in &decoded.members {
            let bit = index_at(stable_hash(m), bucket.0 + 1) & 1;
            halves[bit as usize].push(m);
        }
        let child_keys = children(bucket).map(|c| self.child_key(&shape.id, c, nonce));
        let mut written: Vec<(Key, u64)> = Vec::new();
        let mut failed = None;
        for (child, half) in child_keys.into_iter().zip(&halves) {
            let child = child?;
            let bytes = self.codec.encode(Op::Add, half);
            match access.add(&child, &bytes, self.bucket_ttl()).await {
                Ok(Stored::Stored(cas)) => written.push((child, cas)),
                Ok(Stored::NotStored) => failed = Some(None),
                Err(e) => failed = Some(Some(e)),
            }
            if failed.is_some() {
                break;
            }
        }
        let undo = |written: Vec<(Key, u64)>| self.undo(io, written);
        if let Some(failed) = failed {
            undo(written).await?;
            return failed.map_or(Ok(false), Err);
        }
        // Step 3: the split under way, in the directory.
        let pending = shape.pending_token(bucket, nonce, began);
        if !access.append(&self.dir, pending.as_bytes()).await? {
            undo(written).await?;
            return Ok(true); // the set is gone
        }
        let give_up = || shape.gave_up_token(bucket, nonce);
        // Step 4: only the first split of this bucket under way may delete
        // it.
        let (Some(now), dir_len) = self.read_shape_sized(io).await? else {
            undo(written).await?;
            return Ok(true);
        };
        if now.id != shape.id || !now.is_leaf(bucket) {
            undo(written).await?;
            return Ok(true);
        }
        let first = now.candidate(bucket);
        if first != Some(nonce) {
            // Another split came first: ours gives up (only a split's own
            // process writes that it gave up: see the module docs).
            access.append(&self.dir, give_up().as_bytes()).await?;
            undo(written).await?;
            return Ok(true);
        }
        // Room in the directory for step 6: the `s` or `x` token of every
        // split under way (ours too), and of [`SPLITS_AT_ONCE`] more
        // splits that may begin meanwhile. Without it the bucket stays as
        // it is, its split left under way (it cannot split again; once it
        // fills one item, adds to it are `ValueTooLarge`, as at the
        // directory's limit). Why: a split that deleted its bucket and then
        // found no room for its `s` token left the bucket reading as lost,
        // though its children held every member, on a server too young to
        // vouch that it had lost nothing (an adversarial review, `-I 1k`, 3
        // of 5 runs with 4 writers).
        let token = give_up().len() + 1;
        let room = self
            .store
            .item_size_limit()
            .saturating_sub(mcds_core::backend::ITEM_OVERHEAD + self.dir.len() + dir_len);
        if room < (now.under_way() + SPLITS_AT_ONCE) * token {
            undo(written).await?;
            return Ok(false);
        }
        // Step 5: delete the bucket if nothing was appended since our read.
        // If something was, the children (ours alone: no one reads them
        // while the bucket lives) are brought up to date and the delete
        // is tried again, a few times: a busy bucket still splits.
        let mut read_cas = item.cas;
        for attempt in 0.. {
            match access.delete_cas(&key, read_cas).await? {
                DeleteOutcome::Deleted => break,
                // Gone without us, the one split that may delete it: lost
                // (evicted, its server restarted) or cleared after our
                // read. Our children hold what it held then, not what was
                // written since: the split gives up, and the bucket reads
                // as lost (see `follow`).
                DeleteOutcome::NotFound => {
                    access.append(&self.dir, give_up().as_bytes()).await?;
                    undo(written).await?;
                    return Ok(true);
                }
                DeleteOutcome::Exists => {}
            }
            let fresh = if attempt < SPLIT_RETRIES {
                access.get(&key).await?
            } else {
                None
            };
            let refreshed = match fresh {
                Some(fresh) => {
                    let members = self.codec.decode(&key, &fresh.value)?.members;
                    let mut halves: [Vec<&[u8]>; 2] = [Vec::new(), Vec::new()];
                    for m in &members {
                        let bit = index_at(stable_hash(m), bucket.0 + 1) & 1;
                        halves[bit as usize].push(m);
                    }
                    let mut ok = true;
                    for ((child, cas), half) in written.iter_mut().zip(&halves) {
                        let bytes = self.codec.encode(Op::Add, half);
                        match access.cas(child, &bytes, self.bucket_ttl(), *cas).await? {
                            CasOutcome::Stored(new) => *cas = new,
                            _ => ok = false,
                        }
                    }
                    read_cas = fresh.cas;
                    ok
                }
                None => false,
            };
            if !refreshed {
                // Still changing, or gone (evicted): nothing was
                // changed, and the split gives up.
                access.append(&self.dir, give_up().as_bytes()).await?;
                undo(written).await?;
                return Ok(false);
            }
        }
        // Step 6. A directory gone by now was cleared (or expired) while
        // the split ran: its children are garbage no one will route to.
        match self.record_split(io, &now, bucket, nonce).await {
            Ok(true) => {}
            Ok(false) => {
                let _ = undo(written).await;
            }
            // The directory's item limit refuses the split's record (its
            // room was taken by splits that began meanwhile). A writer that
            // found the bucket gone may have recorded the split for us
            // before the directory filled (see `follow`): then it stands,
            // and writers use the children. Otherwise no one can record it
            // any more (the same token fits no better), and the deleted
            // bucket would read as lost: it is written again from the
            // children (which no one else knows, so they hold exactly what
            // it held), and the split gives up.
            Err(Error::ValueTooLarge { .. }) => {
                if let Some(recorded) = self.read_shape(io).await?
                    && recorded.id == now.id
                    && recorded.split.get(&bucket) == Some(&nonce)
                {
                    return Ok(true);
                }
                let mut members = Vec::new();
                for (child, _) in &written {
                    if let Some(item) = access.get(child).await? {
                        members.extend(self.codec.decode(child, &item.value)?.members);
                    }
                }
                let bytes = self.codec.encode(Op::Add, &as_slices(&members));
                if !access
                    .add(&key, &bytes, self.bucket_ttl())
                    .await?
                    .is_stored()
                {
                    return Err(self.conflict());
                }
                undo(written).await?;
                let _ = access.append(&self.dir, give_up().as_bytes()).await;
                return Ok(false);
            }
            Err(e) => return Err(e),
        }
        Ok(true)
    }

    /// Whether `member` is in the set: one bucket read (and the directory
    /// first when this handle has not read it yet).
    pub(crate) async fn contains(&self, io: Io, member: &[u8]) -> Result<bool> {
        for _ in 0..MAX_ROUNDS {
            let Some(shape) = self.shape(io).await? else {
                return Ok(false);
            };
            let bucket = shape.leaf(stable_hash(member));
            let key = self.key_of(&shape, bucket)?;
            let via_dir = self.via_dir(&shape);
            let mut ops = self.check_ops(via_dir);
            ops.push(StoreOp::Get(&key));
            let mut replies = self.access(io).pipeline(&ops).await.into_iter();
            if !self
                .check_life(io, via_dir, &mut replies, &shape.id, false)
                .await?
            {
                continue;
            }
            let item = replies
                .next()
                .unwrap_or_else(|| Err(Error::Internal("a pipeline answers every op".into())))
                .and_then(Reply::item)?;
            match item {
                Some(item) => return self.codec.contains(&key, &item.value, member),
                None => self.follow(io, bucket).await?,
            }
        }
        Err(self.conflict())
    }

    /// Visit every bucket's decoded log, bucket by bucket in hash order,
    /// reading `page` buckets per batch. The directory and the buckets the
    /// cached shape names go in the first batch, so a handle that knows
    /// the set's shape reads a small set in one round trip. A bucket that
    /// split while the scan ran is read again as its children (which hold
    /// what it held, and what was written since); one that is lost is
    /// [`Error::Lost`].
    pub(crate) async fn scan(
        &self,
        io: Io,
        page: usize,
        visit: &mut (dyn FnMut(&Key, &Item, Decoded) -> Result<()> + Send),
    ) -> Result<()> {
        let (keys, guess) = self.first_keys(page)?;
        let found = self.access(io).get_multi(&keys).await?;
        self.scan_from(io, page, guess, found, visit).await
    }

    /// The keys of a scan's first batch: the directory, and the first
    /// page of buckets the cached shape names (the guess).
    pub(crate) fn first_keys(&self, page: usize) -> Result<(Vec<Key>, Option<Shape>)> {
        let guess = self.cached();
        let mut keys = vec![self.dir.clone()];
        if let Some(shape) = &guess {
            for b in shape.leaves().into_iter().take(page.max(1)) {
                keys.push(self.key_of(shape, b)?);
            }
        }
        Ok((keys, guess))
    }

    /// A scan from its first batch's items (see [`scan`](Self::scan)):
    /// sharded sets read every shard's first batch at once.
    pub(crate) async fn scan_from(
        &self,
        io: Io,
        page: usize,
        guess: Option<Shape>,
        found: Vec<Option<Item>>,
        visit: &mut (dyn FnMut(&Key, &Item, Decoded) -> Result<()> + Send),
    ) -> Result<()> {
        let page = page.max(1);
        let mut found = found.into_iter();
        let dir = found.next().flatten();
        let shape = match self.shape_of(dir.as_ref())? {
            Ok(shape) => shape,
            Err(legacy) => {
                let legacy = legacy.clone();
                self.migrate(io, &legacy).await?;
                self.read_shape(io).await?
            }
        };
        self.remember(shape.clone());
        let Some(shape) = shape else {
            return Ok(());
        };
        let mut prefetched: Vec<Option<Item>> = Vec::new();
        if guess.as_ref() == Some(&shape) {
            prefetched = found.collect();
        }
        let mut queue: std::collections::VecDeque<Bucket> = shape.leaves().into();
        let mut follows = 0;
        while !queue.is_empty() {
            let batch: Vec<Bucket> = queue.drain(..page.min(queue.len())).collect();
            let now = self.cached().unwrap_or_else(|| shape.clone());
            if now.id != shape.id {
                // Cleared and started again while we read: what was read
                // is of the old life.
                return Err(self.conflict());
            }
            let keys: Vec<Key> = batch
                .iter()
                .map(|&b| self.key_of(&now, b))
                .collect::<Result<_>>()?;
            let items = if prefetched.len() == keys.len() {
                std::mem::take(&mut prefetched)
            } else {
                prefetched.clear();
                self.access(io).get_multi(&keys).await?
            };
            let mut split = Vec::new();
            for ((key, item), &bucket) in keys.iter().zip(items).zip(&batch) {
                match item {
                    Some(item) => {
                        let decoded = self.codec.decode(key, &item.value)?;
                        visit(key, &item, decoded)?;
                    }
                    None => {
                        follows += 1;
                        if follows > MAX_ROUNDS {
                            return Err(self.conflict());
                        }
                        self.follow(io, bucket).await?;
                        let now = self.cached().unwrap_or_else(|| shape.clone());
                        split.extend(now.leaves_under(bucket));
                    }
                }
            }
            for b in split.into_iter().rev() {
                queue.push_front(b);
            }
        }
        Ok(())
    }

    /// Rewrite one bucket, read with CAS id `cas`, as its `live` members,
    /// by CAS (a concurrent append makes it fail, harmlessly). `Ok(true)`
    /// if rewritten.
    pub(crate) async fn compact(
        &self,
        io: Io,
        key: &Key,
        cas: u64,
        live: &[Vec<u8>],
    ) -> Result<bool> {
        let live = self.codec.encode(Op::Add, &as_slices(live));
        Ok(matches!(
            self.access(io)
                .cas(key, &live, self.bucket_ttl(), cas)
                .await?,
            CasOutcome::Stored(_)
        ))
    }

    /// Up to `page` buckets' members from `cursor` (the start when
    /// `None`), and the cursor of the rest (`None` at the end). The first
    /// page reads the directory; a bucket split since is read as its
    /// children; a set cleared between pages is [`Error::Conflict`].
    pub(crate) async fn page(
        &self,
        io: Io,
        cursor: Option<Cursor>,
        page: usize,
    ) -> Result<(Vec<Vec<Vec<u8>>>, Option<Cursor>)> {
        let from = cursor.as_ref().map_or(0, |c| c.from);
        for _ in 0..MAX_ROUNDS {
            let shape = match &cursor {
                None => self.read_shape(io).await?,
                Some(_) => self.shape(io).await?,
            };
            let shape = match (shape, &cursor) {
                (None, None) => return Ok((Vec::new(), None)),
                (Some(shape), None) => shape,
                (Some(shape), Some(c)) if shape.id == c.id => shape,
                _ => return Err(self.conflict()),
            };
            let batch: Vec<Bucket> = shape
                .leaves()
                .into_iter()
                .filter(|&b| range(b).0 >= from)
                .take(page.max(1))
                .collect();
            let keys: Vec<Key> = batch
                .iter()
                .map(|&b| self.key_of(&shape, b))
                .collect::<Result<_>>()?;
            let items = self.access(io).get_multi(&keys).await?;
            let mut out = Vec::with_capacity(batch.len());
            let mut missing = None;
            for ((key, item), &bucket) in keys.iter().zip(items).zip(&batch) {
                match item {
                    Some(item) => out.push(self.codec.decode(key, &item.value)?.members),
                    None => {
                        missing = Some(bucket);
                        break;
                    }
                }
            }
            if let Some(bucket) = missing {
                self.follow(io, bucket).await?;
                continue;
            }
            let next = batch
                .last()
                .and_then(|&b| range(b).1.checked_add(1))
                .map(|from| Cursor {
                    id: shape.id.clone(),
                    from,
                });
            return Ok((out, next));
        }
        Err(self.conflict())
    }

    /// Delete the set: its directory first, by CAS (a split recorded
    /// since it was read makes the delete fail, and the directory is read
    /// again), then every bucket that directory names (and the children of
    /// the splits it records as under way). So no bucket of the life stays
    /// behind that a handle could go on writing to: a split that records
    /// itself after the delete finds no directory, and undoes itself; a
    /// handle that routes to a deleted bucket finds it missing, and no
    /// directory. Writes concurrent with the clear may land before it (and
    /// go with it) or after it (in a new life).
    pub(crate) async fn clear(&self, io: Io) -> Result<()> {
        let access = self.access(io);
        let mut removed = None;
        for _ in 0..MAX_ROUNDS {
            let Some(item) = access.get(&self.dir).await? else {
                self.remember(None);
                return Ok(());
            };
            let shape = self.shape_of(Some(&item))?.ok().flatten();
            let deleted = match access.delete_cas(&self.dir, item.cas).await {
                Ok(DeleteOutcome::Deleted) => true,
                Ok(DeleteOutcome::Exists) => false,
                Ok(DeleteOutcome::NotFound) => {
                    self.remember(None);
                    return Ok(());
                }
                // No CAS (a proxy, -C): a set there is one item.
                Err(Error::Unsupported { .. }) => access.delete(&self.dir).await.map(|_| true)?,
                Err(e) => return Err(e),
            };
            if deleted {
                removed = Some(shape);
                break;
            }
        }
        let Some(shape) = removed else {
            return Err(self.conflict());
        };
        self.remember(None);
        let mut keys = vec![self.life.clone()];
        if let Some(shape) = &shape {
            for b in shape.leaves() {
                keys.push(self.key_of(shape, b)?);
            }
            for (&b, pending) in shape.pending.iter() {
                for &(_, nonce) in pending {
                    for c in children(b) {
                        keys.push(self.child_key(&shape.id, c, nonce)?);
                    }
                }
            }
        }
        let ops: Vec<StoreOp<'_>> = keys.iter().map(StoreOp::Delete).collect();
        let results = access.pipeline(&ops).await;
        results.into_iter().try_for_each(|r| r.map(drop))
    }
}

fn as_slices(members: &[Vec<u8>]) -> Vec<&[u8]> {
    members.iter().map(Vec::as_slice).collect()
}

/// A split's nonce: a random non-zero `u32`, so that no two splits name
/// their children alike.
fn new_nonce() -> u32 {
    (mcds_core::random_u64() as u32).max(1)
}

/// A new life's id: 8 random hex digits.
fn new_id() -> String {
    format!("{:08x}", mcds_core::random_u64() as u32)
}

/// Whether a write of `tokens` should look at its bucket's size: with
/// probability `8·n / split_bytes` for `n` bytes, drawn from a hash of the
/// tokens (XXH3-64 with a fixed seed), so that one call always does the
/// same round trips and a test that counts them is repeatable. Writes of
/// different members draw independently, so a bucket is looked at about
/// once per eighth of its split size appended, by whichever writers.
fn sampled(tokens: &[u8], split_bytes: usize) -> bool {
    let draw = xxhash_rust::xxh3::xxh3_64_with_seed(tokens, 0x5eed_b0c4);
    let threshold = (tokens.len().saturating_mul(8) as u128 * u128::from(u64::MAX))
        / split_bytes.max(1) as u128;
    u128::from(draw) < threshold
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape_of(tokens: &[&str]) -> Shape {
        let mut bytes = b"b1 0badcafe ".to_vec();
        for t in tokens {
            bytes.extend_from_slice(t.as_bytes());
            bytes.push(b' ');
        }
        Shape::parse(&bytes).unwrap()
    }

    #[test]
    fn a_batch_reads_the_life_check_it_planned_even_if_the_cached_shape_changes() {
        let store: Arc<dyn Store> = Arc::new(mcds_core::MemoryStore::new());
        let buckets = Buckets::new(store, Key::new("s").unwrap());
        let lasting = shape_of(&[]);
        let appends = buckets.plan(&lasting, Op::Add, &[b"a", b"b"]).unwrap();
        let ops = buckets.ops(&appends);
        assert!(
            matches!(ops[0], StoreOp::Get(k) if *k == buckets.life),
            "the life item"
        );
        // Another clone of the handle reads the directory of a set made
        // with a TTL before this batch's replies are read.
        let mut expiring = shape_of(&["t"]);
        expiring.expiring = true;
        buckets.remember(Some(expiring.clone()));
        let again = buckets.ops(&appends);
        assert_eq!(again.len(), ops.len(), "ops as planned");
        assert!(matches!(again[0], StoreOp::Get(k) if *k == buckets.life));
        let appends = buckets.plan(&expiring, Op::Add, &[b"a"]).unwrap();
        buckets.remember(Some(lasting));
        assert!(
            matches!(buckets.ops(&appends)[0], StoreOp::Get(k) if *k == buckets.dir),
            "the directory"
        );
    }

    #[test]
    fn a_shape_routes_each_hash_to_one_leaf_and_lists_every_leaf_once() {
        let shape = shape_of(&[
            "s0badcafe.0.0.1",
            "s0badcafe.1.1.2",
            "s0badcafe.2.2.3",
            "s0badcafe.3.4.4",
        ]);
        let leaves = shape.leaves();
        assert_eq!(
            leaves,
            [(1, 0), (4, 8), (4, 9), (3, 5), (2, 3)],
            "a DFS in hash order"
        );
        for h in [
            0u64,
            1 << 61,
            1 << 62,
            3 << 62,
            u64::MAX,
            0x5555_5555_5555_5555,
        ] {
            let leaf = shape.leaf(h);
            assert!(leaves.contains(&leaf), "{h:x} → {leaf:?}");
            assert!(shape.is_leaf(leaf));
        }
    }

    #[test]
    fn the_directory_ignores_other_lives_and_orphans_and_refuses_garbage() {
        let shape = shape_of(&[
            "s0badcafe.0.0.a",
            "sdeadbeef.1.0.b", // another life's: ignored
            "s0badcafe.2.3.c", // its parent (1, 1) is not split: ignored
            "p0badcafe.1.1.a.d",
            "p0badcafe.1.1.a.e",
            "p0badcafe.1.1.5.f", // another instance of (1, 1): not this one's
            "x0badcafe.1.1.a.d",
        ]);
        assert_eq!(&*shape.id, "0badcafe");
        assert_eq!(shape.leaves(), [(1, 0), (1, 1)]);
        assert_eq!(
            shape.candidate((1, 1)),
            Some(0xe),
            "the first split under way that has not given up"
        );
        assert_eq!(shape.candidate((1, 0)), None);
        for bad in [
            &b"b1 "[..],
            b"b1 xyz ",
            b"b1 0badcafe s1 ",
            b"b1 0badcafe s0badcafe.1.2 ",
            b"b1 0badcafe p0badcafe.1.1.2 ",
            b"b1 0badcafe s0badcafe.0.1.2 ",
            b"b1 0badcafe +a ",
        ] {
            assert!(
                Shape::parse(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn sampling_looks_about_once_per_eighth_of_a_bucket() {
        let looks = (0..100_000u32)
            .filter(|i| sampled(format!("+m{i:07} ").as_bytes(), 16 * 1024))
            .count();
        // Expected 100_000 × 8 · 10 / 16384 ≈ 488.
        assert!((350..650).contains(&looks), "{looks}");
    }
}
