//! [`BloomFilter`]: "have I seen this before?" with a bounded false-positive
//! rate and no false negatives.
//!
//! **Sizing.** For `n` expected items and false-positive rate `p` the filter
//! has `m = ⌈−n·ln p / (ln 2)²⌉` bits and `k = round(m/n · ln 2)` hash
//! functions (at least 1, at most 30).
//!
//! **Storage.** The bits live in one item, or in several *blocks* once they
//! pass the item limit (`<prefix>bloom:<name>:<block>`). An element's block
//! is chosen by its hash and all `k` of its bits are in that block, so an
//! add touches one item (a blocked Bloom filter; with blocks of a million
//! bits its false-positive rate is that of the plain filter). Each block is
//! a 17-byte header (`MBF1`, k, block count, bits per block, so a filter
//! reopened with other parameters is refused, not misread) and the bits.
//!
//! **Hashing.** XXH3-128 of the element gives two 64-bit halves `a` and
//! `b`; the block is `b·blocks >> 64` and the bits are
//! `a + i·b + (i³ − i)/6 mod bits` for `i` in `0..k` (enhanced double
//! hashing, Dillinger and Manolios).
//!
//! **Updates** are read-modify-write by CAS ([`Store::update`]); OR
//! commutes, so a retried update never drops another writer's elements.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcds_core::{
    Access, CasOutcome, Error, Io, Key, Op, Reply, Result, Scope, Store, Stored, Ttl,
    blocking_and_async, stable_hash128,
};

use crate::{corrupt, update_checked};

/// The stored form's first bytes.
pub const MAGIC: &[u8; 4] = b"MBF1";
/// Bytes before the bits: magic, k (1), blocks (4), bits per block (8).
pub(crate) const HEADER_LEN: usize = 17;
/// The most items (blocks) one filter may span: 65 536 items of 1 MiB hold
/// 2^39 bits, about 57 billion elements at 1 %. A filter is opened by every
/// client with its key list in memory, so an absurd size from a caller is
/// refused rather than allocated.
pub const MAX_BLOCKS: u32 = 65_536;

/// The shape of a filter: what every block's header records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// Hash functions per element.
    pub k: u8,
    /// Number of blocks (items).
    pub blocks: u32,
    /// Bits per block (a multiple of 64).
    pub block_bits: u64,
}

impl Shape {
    /// The shape for `expected_items` at `false_positive_rate`, with blocks
    /// of at most `max_block_bytes` of bits. [`Error::InvalidArgument`] when
    /// that takes more than [`MAX_BLOCKS`] blocks, before anything is
    /// allocated.
    pub fn for_capacity(
        expected_items: u64,
        false_positive_rate: f64,
        max_block_bytes: usize,
    ) -> Result<Shape> {
        if expected_items == 0 {
            return Err(Error::InvalidArgument(
                "a Bloom filter needs expected_items of at least 1".into(),
            ));
        }
        check_rate(false_positive_rate)?;
        let n = expected_items as f64;
        let ln2 = std::f64::consts::LN_2;
        let bits = (-n * false_positive_rate.ln() / (ln2 * ln2))
            .ceil()
            .max(64.0);
        let k = ((bits / n) * ln2).round().clamp(1.0, 30.0) as u8;
        let max_block_bits = (max_block_bytes as u64 / 8) * 64;
        if max_block_bits == 0 {
            return Err(Error::InvalidArgument(
                "the store's item limit leaves no room for a Bloom filter block".into(),
            ));
        }
        let blocks = (bits as u64).div_ceil(max_block_bits);
        if blocks > u64::from(MAX_BLOCKS) {
            return Err(Error::InvalidArgument(format!(
                "a Bloom filter for {expected_items} items at a false-positive rate of {false_positive_rate} needs {bits} bits in {blocks} items; at most {MAX_BLOCKS} items are allowed — expect fewer items, accept a higher rate, or split the data over several filters"
            )));
        }
        let blocks = blocks as u32;
        let block_bits = (bits as u64).div_ceil(u64::from(blocks)).div_ceil(64) * 64;
        Ok(Shape {
            k,
            blocks,
            block_bits,
        })
    }

    fn header(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[..4].copy_from_slice(MAGIC);
        h[4] = self.k;
        h[5..9].copy_from_slice(&self.blocks.to_le_bytes());
        h[9..17].copy_from_slice(&self.block_bits.to_le_bytes());
        h
    }

    /// Bytes of one stored block.
    pub fn block_len(&self) -> usize {
        HEADER_LEN + (self.block_bits / 8) as usize
    }

    /// The block of an element and its `k` bit positions in it.
    pub fn locate(&self, element: &[u8]) -> (usize, impl Iterator<Item = u64> + use<>) {
        let h = stable_hash128(element);
        let (a, b) = (h as u64, (h >> 64) as u64);
        let block = ((u128::from(b) * u128::from(self.blocks)) >> 64) as usize;
        let bits = self.block_bits;
        let positions = (0..u64::from(self.k)).map(move |i| {
            let cube = i.wrapping_mul(i).wrapping_mul(i).wrapping_sub(i) / 6;
            a.wrapping_add(i.wrapping_mul(b)).wrapping_add(cube) % bits
        });
        (block, positions)
    }

    /// The expected fraction of a block's bits that are set once `items`
    /// distinct elements are in the filter: `1 − e^(−k·items/bits)`. At
    /// the filter's capacity this is about one half.
    pub fn fill_at(&self, items: u64) -> f64 {
        let bits = self.block_bits as f64 * f64::from(self.blocks);
        1.0 - (-f64::from(self.k) * items as f64 / bits).exp()
    }

    /// The fraction of a checked block's bits that are set (blocks fill
    /// evenly: elements pick their block by hash).
    pub(crate) fn fill_of(&self, block: &[u8]) -> f64 {
        let set: u32 = block[HEADER_LEN..].iter().map(|b| b.count_ones()).sum();
        f64::from(set) / self.block_bits as f64
    }

    /// An empty block: the header and zero bits.
    pub fn empty_block(&self) -> Vec<u8> {
        let mut out = vec![0u8; self.block_len()];
        out[..HEADER_LEN].copy_from_slice(&self.header());
        out
    }

    /// Check a stored block against this shape (never panics).
    pub fn check_block(&self, bytes: &[u8]) -> std::result::Result<(), String> {
        if bytes.len() < HEADER_LEN || &bytes[..4] != MAGIC {
            return Err("not a Bloom filter block (no MBF1 header)".into());
        }
        if bytes[..HEADER_LEN] != self.header() {
            let k = bytes[4];
            let blocks = u32::from_le_bytes([bytes[5], bytes[6], bytes[7], bytes[8]]);
            let mut raw = [0u8; 8];
            raw.copy_from_slice(&bytes[9..17]);
            return Err(format!(
                "created with other parameters (k {k}, {blocks} blocks of {} bits; this filter wants k {}, {} blocks of {} bits) — open it with the capacity and rate it was created with, or clear it",
                u64::from_le_bytes(raw),
                self.k,
                self.blocks,
                self.block_bits
            ));
        }
        if bytes.len() != self.block_len() {
            return Err(format!(
                "a block is {} bytes; found {}",
                self.block_len(),
                bytes.len()
            ));
        }
        Ok(())
    }
}

/// [`Error::InvalidArgument`] unless `rate` is a false-positive rate
/// strictly between 0 and 1.
pub(crate) fn check_rate(rate: f64) -> Result<()> {
    if rate > 0.0 && rate < 1.0 {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "the false-positive rate must be between 0 and 1 (e.g. 0.01); got {rate}"
        )))
    }
}

/// Set the bits of `elements` in a stored block; how many elements had a
/// clear bit (were new).
pub(crate) fn set_elements(block: &mut [u8], elements: &[Vec<u64>]) -> usize {
    let bits = &mut block[HEADER_LEN..];
    elements
        .iter()
        .filter(|positions| {
            positions
                .iter()
                .fold(false, |new, &p| set_bit(bits, p) | new)
        })
        .count()
}

pub(crate) fn test_bit(bits: &[u8], i: u64) -> bool {
    bits[(i / 8) as usize] & (1 << (i % 8)) != 0
}

/// Set bit `i`; whether it was clear.
pub(crate) fn set_bit(bits: &mut [u8], i: u64) -> bool {
    let byte = &mut bits[(i / 8) as usize];
    let mask = 1 << (i % 8);
    let was_clear = *byte & mask == 0;
    *byte |= mask;
    was_clear
}

/// A distributed Bloom filter (the ReBloom pattern of the Redis best-practices article).
///
/// * [`add`](Self::add): one CAS read-modify-write of the element's block:
///   2 round trips when a bit changes, 1 when all were set already.
///   Returns whether the element was new (some bit was clear).
/// * [`add_many`](Self::add_many): one `get_multi` of the blocks touched,
///   then one pipelined batch of CAS writes (2 round trips however many
///   elements), retrying a block that lost a race on its own.
/// * [`contains`](Self::contains): 1 round trip; [`contains_many`](Self::contains_many)
///   1 for any number. No false negatives; false positives at about the
///   configured rate once `expected_items` are in.
/// * Every method that reaches the store has an async twin
///   ([`add_async`](Self::add_async), …): the same algorithm, awaiting the
///   store instead of blocking the thread.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_sketch::BloomFilter;
///
/// let names = BloomFilter::new(Arc::new(MemoryStore::new()), "usernames", 100_000, 0.01)?;
/// assert!(names.add("ann")?, "new");
/// assert!(!names.add("ann")?, "seen");
/// assert!(names.contains("ann")?);
/// assert!(!names.contains("bob")?);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | a name of at most 233 bytes less the scope's prefix (the block key `<prefix>bloom:<name>:<block>` with the longest block number fits 250 bytes; `:` and `%` are escaped to 3 bytes) | [`Error::InvalidKey`] from [`new`](Self::new) | nothing |
/// | `expected_items` at least 1; `false_positive_rate` strictly between 0 and 1 | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | one item holds the bits that fit the store's item limit less the key, the 17-byte header and 59 bytes of overhead: about 875 000 items at 1 % with memcached's 1 MiB | no error: the filter is split into blocks, one item each | — |
/// | at most [`MAX_BLOCKS`] (65 536) blocks: about 57 billion items at 1 % with 1 MiB items (fewer for a lower rate, a smaller item limit or a longer key) | [`Error::InvalidArgument`] from [`new`](Self::new), before anything is allocated | nothing |
/// | the item limit leaves at least 8 bytes of bits after the key and header | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | `k` is at most 30 hash functions: a rate below about 10⁻⁹ gets more bits, not more hashes | — | — |
/// | more than `expected_items` elements | no error: the false-positive rate rises above the configured one (a [`ScalableBloomFilter`](crate::ScalableBloomFilter) grows instead) | — |
///
/// Elements may be of any size: they are hashed, never stored.
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses blocks: elements added before the loss
/// that hash into a lost block then test absent (false negatives). No read
/// can tell a lost block from an empty one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone)]
pub struct BloomFilter {
    pub(crate) store: Arc<dyn Store>,
    keys: Vec<Key>,
    pub(crate) shape: Shape,
    ttl: Ttl,
}

impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BloomFilter")
            .field("key", &self.keys[0])
            .field("shape", &self.shape)
            .finish()
    }
}

impl BloomFilter {
    /// The filter `name` for `expected_items` at `false_positive_rate`
    /// (e.g. 0.01), in `scope` (a store, or a [`Scope`] with a key prefix).
    /// Every client must open it with the same two numbers.
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        expected_items: u64,
        false_positive_rate: f64,
    ) -> Result<BloomFilter> {
        let scope = scope.into();
        BloomFilter::open(&scope, expected_items, false_positive_rate, &|block| {
            scope.key("bloom", name, block)
        })
    }

    /// The filter for `expected_items` at `false_positive_rate` whose block
    /// `i` lives under `key(i)`: [`new`](Self::new)'s, and each layer of a
    /// [`ScalableBloomFilter`](crate::ScalableBloomFilter).
    pub(crate) fn open(
        scope: &Scope,
        expected_items: u64,
        false_positive_rate: f64,
        key: &dyn Fn(u32) -> Result<Key>,
    ) -> Result<BloomFilter> {
        let store = Arc::clone(scope.store());
        // The longest block key decides how many bytes of bits fit an item.
        let probe = key(u32::MAX)?;
        let room = store
            .item_size_limit()
            .saturating_sub(mcds_core::backend::item_size(probe.len(), HEADER_LEN));
        let shape = Shape::for_capacity(expected_items, false_positive_rate, room)?;
        let keys = (0..shape.blocks).map(key).collect::<Result<_>>()?;
        Ok(BloomFilter {
            store,
            keys,
            shape,
            ttl: Ttl::Never,
        })
    }

    /// Expire each block `ttl` after its last write.
    pub fn with_ttl(mut self, ttl: Ttl) -> BloomFilter {
        self.ttl = ttl;
        self
    }

    /// The filter's shape (k, blocks, bits per block).
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The keys of the blocks.
    pub fn keys(&self) -> &[Key] {
        &self.keys
    }

    fn checked<'a>(&self, block: usize, bytes: &'a [u8]) -> Result<&'a [u8]> {
        self.shape
            .check_block(bytes)
            .map_err(|reason| corrupt(&self.keys[block], reason))?;
        Ok(&bytes[HEADER_LEN..])
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// Add an element; whether it was new (some bit was clear).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_sketch::BloomFilter;
    /// # mcds_core::block_on(async {
    /// let names = BloomFilter::new(Arc::new(MemoryStore::new()), "usernames", 1000, 0.01)?;
    /// assert!(names.add_async("ann").await?);
    /// assert!(names.contains_async("ann").await?);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[blocking_and_async(pub)]
    async fn add_io(&self, io: Io, element: impl AsRef<[u8]>) -> Result<bool> {
        let element = element.as_ref();
        let (block, positions) = self.shape.locate(element);
        let elements: [Vec<u64>; 1] = [positions.collect()];
        Ok(self.add_to_block(self.access(io), block, &elements).await? > 0)
    }

    /// Add many elements: one read of the blocks they touch and one
    /// pipelined batch of CAS writes. Returns how many were new.
    #[blocking_and_async(pub)]
    async fn add_many_io<E: AsRef<[u8]>>(&self, io: Io, elements: &[E]) -> Result<usize> {
        let access = self.access(io);
        let mut by_block: BTreeMap<usize, Vec<Vec<u64>>> = BTreeMap::new();
        for e in elements {
            let (block, positions) = self.shape.locate(e.as_ref());
            by_block.entry(block).or_default().push(positions.collect());
        }
        let blocks: Vec<usize> = by_block.keys().copied().collect();
        let keys: Vec<Key> = blocks.iter().map(|&b| self.keys[b].clone()).collect();
        let items = access.get_multi(&keys).await?;
        let mut new_elements = 0;
        // (block, CAS read, new value, elements new in it)
        let mut writes: Vec<(usize, Option<u64>, Vec<u8>, usize)> = Vec::new();
        for (&block, item) in blocks.iter().zip(items) {
            let (mut value, cas) = match item {
                None => (self.shape.empty_block(), None),
                Some(item) => {
                    self.checked(block, &item.value)?;
                    (item.value, Some(item.cas))
                }
            };
            let new_here = set_elements(&mut value, &by_block[&block]);
            if new_here > 0 {
                writes.push((block, cas, value, new_here));
            }
        }
        let ops: Vec<Op<'_>> = writes
            .iter()
            .map(|(block, cas, value, _)| self.write_op(*block, *cas, value))
            .collect();
        let results = access.pipeline(&ops).await;
        for ((block, _, _, new_here), result) in writes.iter().zip(results) {
            if stored(&result?) {
                new_elements += new_here;
            } else {
                // Another writer changed the block: redo its elements in one
                // read-modify-write (OR commutes), counting anew.
                new_elements += self.add_to_block(access, *block, &by_block[block]).await?;
            }
        }
        Ok(new_elements)
    }

    /// The write of `value` to `block` read with CAS id `cas`: a `cas`, or
    /// an `add` where the block was missing. See [`stored`].
    pub(crate) fn write_op<'a>(
        &'a self,
        block: usize,
        cas: Option<u64>,
        value: &'a [u8],
    ) -> Op<'a> {
        crate::cas_or_add(&self.keys[block], value, self.ttl, cas)
    }

    /// Set the bits of `elements` (each its positions) in `block` by one CAS
    /// read-modify-write; how many elements had a clear bit in the value
    /// that was stored.
    async fn add_to_block(
        &self,
        access: Access<'_>,
        block: usize,
        elements: &[Vec<u64>],
    ) -> Result<usize> {
        let mut new_elements = 0;
        let stored = update_checked(access, &self.keys[block], self.ttl, &mut |current| {
            let mut value = match current {
                None => self.shape.empty_block(),
                Some(bytes) => {
                    self.shape.check_block(bytes)?;
                    bytes.to_vec()
                }
            };
            new_elements = set_elements(&mut value, elements);
            Ok((new_elements > 0).then_some(value))
        })
        .await?;
        Ok(if stored { new_elements } else { 0 })
    }

    /// Whether the element may have been added (false positives at about
    /// the configured rate; never a false negative). 1 round trip.
    #[blocking_and_async(pub)]
    async fn contains_io(&self, io: Io, element: impl AsRef<[u8]>) -> Result<bool> {
        let element = element.as_ref();
        let (block, mut positions) = self.shape.locate(element);
        match self.access(io).get(&self.keys[block]).await? {
            None => Ok(false),
            Some(item) => {
                let bits = self.checked(block, &item.value)?;
                Ok(positions.all(|p| test_bit(bits, p)))
            }
        }
    }

    /// [`contains`](Self::contains) for many elements: one `get_multi` of
    /// the blocks they fall in (1 round trip per server).
    ///
    /// [`contains_many`](BloomFilter::contains_many) without blocking the
    /// thread.
    #[blocking_and_async(pub)]
    async fn contains_many_io<E: AsRef<[u8]>>(&self, io: Io, elements: &[E]) -> Result<Vec<bool>> {
        let located: Vec<(usize, Vec<u64>)> = elements
            .iter()
            .map(|e| {
                let (block, positions) = self.shape.locate(e.as_ref());
                (block, positions.collect())
            })
            .collect();
        let mut blocks: Vec<usize> = located.iter().map(|(b, _)| *b).collect();
        blocks.sort_unstable();
        blocks.dedup();
        let keys: Vec<Key> = blocks.iter().map(|&b| self.keys[b].clone()).collect();
        let mut bits: Vec<Option<Vec<u8>>> = vec![None; self.keys.len()];
        let items = self.access(io).get_multi(&keys).await?;
        for (&block, item) in blocks.iter().zip(items) {
            if let Some(item) = item {
                self.checked(block, &item.value)?;
                bits[block] = Some(item.value);
            }
        }
        Ok(located
            .iter()
            .map(|(block, positions)| match &bits[*block] {
                None => false,
                Some(value) => positions.iter().all(|&p| test_bit(&value[HEADER_LEN..], p)),
            })
            .collect())
    }

    /// Check a block read from the store against the shape.
    pub(crate) fn check(&self, block: usize, bytes: &[u8]) -> Result<()> {
        self.checked(block, bytes).map(drop)
    }

    /// Delete every block.
    #[blocking_and_async(pub)]
    async fn clear_io(&self, io: Io) -> Result<()> {
        let ops: Vec<Op<'_>> = self.keys.iter().map(Op::Delete).collect();
        for r in self.access(io).pipeline(&ops).await {
            r?;
        }
        Ok(())
    }
}

/// Whether the reply to a [`BloomFilter::write_op`] says the block was
/// stored (else another writer changed it first).
pub(crate) fn stored(reply: &Reply) -> bool {
    matches!(
        reply,
        Reply::CasOutcome(CasOutcome::Stored(_)) | Reply::Stored(Stored::Stored(_))
    )
}
