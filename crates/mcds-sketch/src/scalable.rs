//! [`ScalableBloomFilter`]: a Bloom filter that grows by layers, as
//! RedisBloom's `BF.ADD` does by default, so no capacity needs to be known
//! up front.
//!
//! **Layers.** Layer `i` is a fixed [`BloomFilter`] (the same hashing,
//! blocks and block format) for `n₀·gⁱ` elements at a false-positive rate
//! of `p·(1 − r)·rⁱ = p/2ⁱ⁺¹`, where `n₀` is the initial capacity, `g` the
//! growth factor (2 unless [`with_growth`](ScalableBloomFilter::with_growth))
//! and `r = ½` the tightening ratio. An element is added to the newest
//! layer; a query asks every layer. The compound false-positive rate is at
//! most the sum of the layers' rates, `p·Σ 2⁻⁽ⁱ⁺¹⁾ < p`, however many
//! layers there are.
//!
//! **When a layer is full.** Fullness is *measured*, not counted: a layer
//! holding its capacity of distinct elements has a fraction
//! `1 − e^(−k·n/bits)` (about ½) of its bits set ([`Shape::fill_at`](crate::bloom::Shape::fill_at)). The
//! adder that writes a block of the newest layer sees the block it stored,
//! and when that block's fraction of set bits reaches this mark it grows
//! the filter; an adder that *reads* a block already past the mark grows
//! the filter first and writes to the new layer, and one whose CAS write
//! lost a race reads again, so a layer is overfilled by at most the one
//! write that crossed the mark. There is no counter to lose to eviction or
//! to a lost reply, and elements added twice are not counted twice.
//!
//! **Where the layer count lives.** In a small header item,
//! `<prefix>sbloom:<name>:meta` (`MSB1`, the layer count, and the initial
//! capacity, rate and growth, so a filter reopened with other parameters is
//! refused, not misread). A filter still on its first layer has no header:
//! a missing header means one layer. Layer `i`'s block `b` is
//! `<prefix>sbloom:<name>:<i>.<b>`.
//!
//! **Growing, concurrently.** Every add and query reads the header in the
//! same `get_multi` as the element's block in each layer it knows of (and,
//! if the header names newer layers, reads those in a second one). Growing
//! is a CAS update of the header from "at most `L` layers" to `L + 1`:
//! idempotent, so two processes growing at once make one new layer (the
//! loser of the CAS rereads, finds `L + 1`, and changes nothing), and a
//! grow whose reply was lost ([`Error::Ambiguous`])
//! is simply done again by the next adder that finds the layer full. An add
//! that raced a grow may still land in the previous layer, which then holds
//! a few elements past its capacity; queries ask every layer, so nothing is
//! missed.
//!
//! **Guarantee.** An element whose `add` returned `Ok` is in the layer it
//! was written to, and that layer is below the header's count (a layer is
//! written only after the header named it), which every later query reads:
//! no false negatives, as long as the store keeps the items. Eviction or a
//! restart deletes blocks or the header (give the servers enough memory
//! for a filter that must not forget; with `-M`, an add refused for memory
//! fails and changes nothing); each handle remembers the most layers it
//! has seen, and an adder that finds the header missing writes it again.
//! There is no TTL: layers stop being written once full, so per-item TTLs
//! would expire old layers first.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use mcds_core::{Access, Backoff, Error, Io, Item, Key, Op, Result, Scope, blocking_and_async};

use crate::bloom::{BloomFilter, check_rate, set_bit, set_elements, stored, test_bit};
use crate::{MAX_ATTEMPTS, corrupt, update_checked};

/// The header item's first bytes.
pub const MAGIC: &[u8; 4] = b"MSB1";
/// Bytes of the header: magic, layers (`u32`), initial capacity (`u64`),
/// rate (`f64` bits), growth (`u32`), little-endian.
const HEADER_LEN: usize = 4 + 4 + 8 + 8 + 4;
/// The most layers a filter grows to. Past the last one, adds go on into
/// it and its false-positive rate rises above its share. With growth 2
/// that is 2³² times the initial capacity; the filter also stops growing
/// when the next layer would not fit [`crate::bloom::MAX_BLOCKS`] items.
pub const MAX_LAYERS: u32 = 32;
/// The most a layer's capacity grows over the previous one's.
pub const MAX_GROWTH: u32 = 16;

/// What a read of some elements' blocks found: the layers there are, and
/// each (layer, block) read, with its CAS id for a write.
struct Probe {
    layers: Vec<Arc<BloomFilter>>,
    /// The header's layer count, 0 if it is missing.
    header_count: usize,
    blocks: BTreeMap<(usize, usize), Option<Item>>,
}

impl Probe {
    /// Whether `element` is in layer `layer` (its block was read).
    fn contains(&self, layer: usize, element: &[u8]) -> bool {
        let (block, mut positions) = self.layers[layer].shape.locate(element);
        match self.blocks.get(&(layer, block)) {
            Some(Some(item)) => {
                let bits = &item.value[crate::bloom::HEADER_LEN..];
                positions.all(|p| test_bit(bits, p))
            }
            _ => false,
        }
    }
}

/// A block of the newest layer as an [`add_many`](ScalableBloomFilter::add_many)
/// pass leaves it: the CAS id it was read with (`None`: missing), its new
/// value, and the elements (batch positions) new in it.
struct BlockWrite {
    cas: Option<u64>,
    value: Vec<u8>,
    added: Vec<usize>,
    /// How many of its bits are set, kept as elements are added (counting
    /// a block of 64 KiB again for each element of a batch of 5,000 took
    /// most of the batch's time).
    set: u64,
}

/// A distributed Bloom filter that grows by layers (RedisBloom's scalable
/// filter), keeping its false-positive rate under the target however many
/// elements it takes. See the [module](self) docs for the layout and how
/// concurrent adders agree on growing.
///
/// * [`add`](Self::add): one `get_multi` of the header and the element's
///   block in each layer, then one CAS write of the newest layer's block:
///   2 round trips, 1 when the element is already in; 2 more when the add
///   fills the layer and grows the filter.
/// * [`add_many`](Self::add_many): the same 2 round trips for a whole
///   batch that fits the newest layer; 4 more for each layer it fills.
/// * [`contains`](Self::contains): 1 round trip (2 when another client
///   grew the filter since this handle last looked);
///   [`contains_many`](Self::contains_many) the same for any number.
/// * Every method that reaches the store has an async twin
///   ([`add_async`](Self::add_async), [`contains_async`](Self::contains_async),
///   …): the same algorithm, awaiting the store and its backoff timer
///   instead of blocking the thread. The handle's cache of layers is behind
///   a mutex that is never held across an await.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_sketch::ScalableBloomFilter;
///
/// let seen = ScalableBloomFilter::new(Arc::new(MemoryStore::new()), "seen", 100, 0.01)?;
/// for i in 0..1000 {
///     seen.add(format!("user{i}"))?;
/// }
/// assert!(seen.layers()? >= 4, "100, 200, 400, 800: grown past its first layer");
/// assert!(seen.contains("user7")?);
/// assert!(!seen.add("user7")?, "already in");
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | a name of at most 229 bytes less the scope's prefix (the last layer's block keys, `<prefix>sbloom:<name>:31.<block>`, fit 250 bytes for any block number; `:` and `%` are escaped to 3 bytes) | [`Error::InvalidKey`] from [`new`](Self::new) | nothing |
/// | `initial_capacity` at least 1; `error_rate` strictly between 0 and 1; the first layer (at `error_rate / 2`) fits [`MAX_BLOCKS`](crate::bloom::MAX_BLOCKS) items, as a [`BloomFilter`]'s must | [`Error::InvalidArgument`] from [`new`](Self::new) | nothing |
/// | growth 1 to [`MAX_GROWTH`] (16) | [`Error::InvalidArgument`] from [`with_growth`](Self::with_growth) | nothing |
/// | at most [`MAX_LAYERS`] (32) layers, and no layer past one that would need more than [`MAX_BLOCKS`](crate::bloom::MAX_BLOCKS) items or hold more than 2^64 elements | no error: adds go on into the newest layer, whose false-positive rate then rises above its share | — |
///
/// Elements may be of any size: they are hashed, never stored.
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses layer blocks or the header: elements
/// added before the loss that hash into a lost block then test absent
/// (false negatives). No read can tell a lost block from an empty one:
/// [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct ScalableBloomFilter {
    scope: Scope,
    name: String,
    header: Key,
    initial: u64,
    rate: f64,
    growth: u32,
    /// The layers this handle knows of (at least the first), opened.
    layers: Arc<Mutex<Vec<Arc<BloomFilter>>>>,
}

impl ScalableBloomFilter {
    /// The filter `name` in `scope`: a first layer for `initial_capacity`
    /// elements, then layers twice as large, for a compound false-positive
    /// rate below `error_rate` (e.g. 0.01). Every client must open it with
    /// the same numbers.
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        initial_capacity: u64,
        error_rate: f64,
    ) -> Result<ScalableBloomFilter> {
        let scope = scope.into();
        // Layer i gets error_rate / 2^(i+1): check the caller's number.
        check_rate(error_rate)?;
        // The longest block key (of the last layer) must fit, or the filter
        // would stop growing at the layer whose keys first do not.
        scope.key(
            "sbloom",
            name,
            // As a layer's filter checks its own keys: room for any block.
            format!("{}.{}", MAX_LAYERS - 1, u32::MAX),
        )?;
        let mut filter = ScalableBloomFilter {
            header: scope.key("sbloom", name, "meta")?,
            scope,
            name: name.to_string(),
            initial: initial_capacity,
            rate: error_rate,
            growth: 2,
            layers: Arc::new(Mutex::new(Vec::new())),
        };
        let first = filter.open_layer(0)?;
        filter.layers = Arc::new(Mutex::new(vec![first]));
        Ok(filter)
    }

    /// Make each layer `growth` (1 to [`MAX_GROWTH`]) times the previous
    /// one's capacity instead of 2 (RedisBloom's `EXPANSION`). A larger
    /// factor means fewer layers (fewer reads per query), more memory ahead
    /// of need.
    pub fn with_growth(mut self, growth: u32) -> Result<ScalableBloomFilter> {
        if !(1..=MAX_GROWTH).contains(&growth) {
            return Err(Error::InvalidArgument(format!(
                "a scalable Bloom filter grows each layer 1 to {MAX_GROWTH} times; got {growth}"
            )));
        }
        self.growth = growth;
        // Layers past the first depend on the growth: this handle starts
        // again from the first (which does not), in a cache of its own, so
        // neither it nor the handle it was cloned from uses the other's.
        let first = self.open_layer(0)?;
        self.layers = Arc::new(Mutex::new(vec![first]));
        Ok(self)
    }

    /// The key of the header item (the layer count).
    pub fn header_key(&self) -> &Key {
        &self.header
    }

    /// Layer `i`: capacity `n₀·gⁱ`, rate `p/2ⁱ⁺¹`.
    fn open_layer(&self, i: usize) -> Result<Arc<BloomFilter>> {
        let capacity = u64::from(self.growth)
            .checked_pow(i as u32)
            .and_then(|g| g.checked_mul(self.initial))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "layer {i} of a scalable Bloom filter would hold more than 2^64 elements"
                ))
            })?;
        let rate = self.rate / 2f64.powi(i as i32 + 1);
        let layer = BloomFilter::open(&self.scope, capacity, rate, &|block| {
            self.scope.key("sbloom", &self.name, format!("{i}.{block}"))
        })?;
        Ok(Arc::new(layer))
    }

    fn known(&self) -> Vec<Arc<BloomFilter>> {
        self.layers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The layers up to `count`, opening those this handle did not know
    /// of (see [`remember`](Self::remember)).
    fn layers_up_to(&self, count: usize) -> Result<Vec<Arc<BloomFilter>>> {
        let mut known = self.known();
        while known.len() < count {
            known.push(self.open_layer(known.len())?);
        }
        Ok(known)
    }

    /// Remember `layers` once the header names them all: this handle then
    /// reads them all, and adds to the newest, even if the header is lost.
    fn remember(&self, layers: Vec<Arc<BloomFilter>>) {
        let mut cached = self.layers.lock().unwrap_or_else(|e| e.into_inner());
        if cached.len() < layers.len() {
            *cached = layers;
        }
    }

    fn encode_header(&self, layers: u32) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER_LEN);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&layers.to_le_bytes());
        out.extend_from_slice(&self.initial.to_le_bytes());
        out.extend_from_slice(&self.rate.to_bits().to_le_bytes());
        out.extend_from_slice(&self.growth.to_le_bytes());
        out
    }

    /// The layer count of a stored header (never panics).
    fn decode_header(&self, bytes: &[u8]) -> std::result::Result<u32, String> {
        if bytes.len() != HEADER_LEN || &bytes[..4] != MAGIC {
            return Err("not a scalable Bloom filter header (no MSB1 header)".into());
        }
        let ours = self.encode_header(0);
        if bytes[8..] != ours[8..] {
            return Err(format!(
                "created with other parameters (this filter wants initial capacity {}, rate {}, growth {}) — open it with the numbers it was created with, or clear it",
                self.initial, self.rate, self.growth
            ));
        }
        let layers = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
        if !(1..=MAX_LAYERS).contains(&layers) {
            return Err(format!("{layers} layers (1 to {MAX_LAYERS})"));
        }
        Ok(layers)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }

    /// Read the header and each element's block in every layer.
    async fn probe(&self, access: Access<'_>, elements: &[&[u8]]) -> Result<Probe> {
        // A copy of the cache: its lock is never held across an await.
        let mut layers = self.known();
        let mut probe = Probe {
            layers: Vec::new(),
            header_count: 0,
            blocks: BTreeMap::new(),
        };
        let header = self
            .read_blocks(access, &layers, 0, elements, Some(&self.header), &mut probe)
            .await?;
        if let Some(item) = header {
            probe.header_count =
                self.decode_header(&item.value)
                    .map_err(|reason| corrupt(&self.header, reason))? as usize;
        }
        if probe.header_count > layers.len() {
            let from = layers.len();
            layers = self.layers_up_to(probe.header_count)?;
            self.remember(layers.clone());
            self.read_blocks(access, &layers, from, elements, None, &mut probe)
                .await?;
        }
        probe.layers = layers;
        Ok(probe)
    }

    /// One `get_multi` of `header` (if any) and each element's block in
    /// `layers[from..]`, checked, into `probe`; the header's item.
    async fn read_blocks(
        &self,
        access: Access<'_>,
        layers: &[Arc<BloomFilter>],
        from: usize,
        elements: &[&[u8]],
        header: Option<&Key>,
        probe: &mut Probe,
    ) -> Result<Option<Item>> {
        let mut wanted: Vec<(usize, usize)> = layers
            .iter()
            .enumerate()
            .skip(from)
            .flat_map(|(l, layer)| elements.iter().map(move |e| (l, layer.shape.locate(e).0)))
            .collect();
        wanted.sort_unstable();
        wanted.dedup();
        let mut keys: Vec<Key> = header.into_iter().cloned().collect();
        keys.extend(wanted.iter().map(|&(l, b)| layers[l].keys()[b].clone()));
        let mut items = access.get_multi(&keys).await?.into_iter();
        let header = if header.is_some() {
            items.next().flatten()
        } else {
            None
        };
        for (&(l, b), item) in wanted.iter().zip(items) {
            if let Some(item) = &item {
                layers[l].check(b, &item.value)?;
            }
            probe.blocks.insert((l, b), item);
        }
        Ok(header)
    }

    /// Add an element; whether it was new (in no layer yet). See the type's
    /// docs for the round trips.
    ///
    /// [`add`](ScalableBloomFilter::add) without blocking the thread (the
    /// backoff after a lost race is a timer).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_sketch::ScalableBloomFilter;
    /// # mcds_core::block_on(async {
    /// let seen = ScalableBloomFilter::new(Arc::new(MemoryStore::new()), "seen", 100, 0.01)?;
    /// assert!(seen.add_async("user7").await?);
    /// assert!(seen.contains_async("user7").await?);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[blocking_and_async(pub)]
    async fn add_io(&self, io: Io, element: impl AsRef<[u8]>) -> Result<bool> {
        let element = element.as_ref();
        let access = self.access(io);
        let mut backoff = Backoff::default();
        let mut attempts = 0;
        loop {
            let probe = self.probe(access, &[element]).await?;
            if (0..probe.layers.len()).any(|l| probe.contains(l, element)) {
                return Ok(false);
            }
            let newest = probe.layers.len() - 1;
            if newest > 0 && probe.header_count <= newest {
                // This handle knows of layers the header does not name (it
                // was evicted, or cleared): name them before writing to the
                // newest, or other readers would not look there.
                self.ensure_layers(access, newest + 1).await?;
            }
            let layer = &probe.layers[newest];
            let (block, positions) = layer.shape.locate(element);
            let read = &probe.blocks[&(newest, block)];
            let limit = layer.shape.fill_at(self.capacity_of(newest));
            let growable = newest + 1 < MAX_LAYERS as usize;
            if let Some(item) = read {
                // Full already (its filler's grow is in flight, or failed):
                // grow, and add to the new layer, rather than overfill this
                // one.
                if growable
                    && layer.shape.fill_of(&item.value) >= limit
                    && self.ensure_layers(access, newest + 2).await.is_ok()
                {
                    continue;
                }
            }
            let mut value = match read {
                Some(item) => item.value.clone(),
                None => layer.shape.empty_block(),
            };
            set_elements(&mut value, &[positions.collect()]);
            let write = layer.write_op(block, read.as_ref().map(|i| i.cas), &value);
            if stored(&Access::new(&*layer.store, io).execute(&write).await?) {
                if growable && layer.shape.fill_of(&value) >= limit {
                    // The element is in a layer the header names: a grow
                    // that fails (a lost reply, a conflict) is done again
                    // by the next add that finds the layer full, so its
                    // error is not the caller's.
                    let _ = self.ensure_layers(access, newest + 2).await;
                }
                return Ok(true);
            }
            // Another writer changed the block: read again (the layer may
            // be full now, or the element in).
            attempts += 1;
            if attempts == MAX_ATTEMPTS {
                return Err(Error::Conflict {
                    key: layer.keys()[block].display(),
                    attempts,
                });
            }
            access.sleep(backoff.next_delay()).await;
        }
    }

    /// Add many elements; whether each was new (in no layer yet, and not
    /// an earlier element of the batch). What [`add`](Self::add) does for
    /// each, in order, batched: one `get_multi` of the header and the
    /// blocks the elements fall in, in every layer, then one pipelined
    /// batch of CAS writes to the newest layer's blocks: **2 round trips**
    /// for a batch that fits the newest layer. An element whose block is
    /// full (its share of the layer's capacity, as `add` measures it)
    /// waits for the filter to grow and goes to the new layer in the next
    /// pass (2 more round trips, and 2 for the grow); the elements of a
    /// block another writer changed meanwhile are read again and retried.
    /// 50,000 adds took 8 s one by one and a fraction of a second here (the
    /// `peers` bench).
    ///
    /// On an error, the elements of the blocks written before it are in
    /// the filter: the error is then [`Error::Ambiguous`] (adding them
    /// again is safe: a Bloom filter only gains bits).
    ///
    /// [`add_many`](ScalableBloomFilter::add_many) without blocking the
    /// thread.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_sketch::ScalableBloomFilter;
    /// let seen = ScalableBloomFilter::new(Arc::new(MemoryStore::new()), "seen", 100, 0.01)?;
    /// let users: Vec<String> = (0..1000).map(|i| format!("user{i}")).collect();
    /// let new = seen.add_many(&users)?;
    /// assert!(new.iter().filter(|&&n| n).count() > 990, "about all were new");
    /// assert!(seen.layers()? >= 4, "grown as 1,000 adds one by one would");
    /// assert_eq!(seen.add_many(&["user7", "user7"])?, [false, false]);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    #[blocking_and_async(pub)]
    async fn add_many_io<E: AsRef<[u8]>>(&self, io: Io, elements: &[E]) -> Result<Vec<bool>> {
        let elements: Vec<&[u8]> = elements.iter().map(AsRef::as_ref).collect();
        let access = self.access(io);
        let mut new = vec![false; elements.len()];
        let mut pending: Vec<usize> = (0..elements.len()).collect();
        // Elements written so far (for the error of a later failure).
        let mut written = 0usize;
        let mut backoff = Backoff::default();
        let mut attempts = 0;
        // Set when a grow failed: the next pass writes to the full layer
        // (as `add` does) rather than wait for a layer that is not coming.
        let mut overfill = false;
        while !pending.is_empty() {
            let batch: Vec<&[u8]> = pending.iter().map(|&i| elements[i]).collect();
            let probe = self.probe(access, &batch).await?;
            let newest = probe.layers.len() - 1;
            if newest > 0 && probe.header_count <= newest {
                // As in `add`: name the layers this handle knows of first.
                self.ensure_layers(access, newest + 1).await?;
            }
            let layer = &probe.layers[newest];
            let limit = layer.shape.fill_at(self.capacity_of(newest));
            let growable = newest + 1 < MAX_LAYERS as usize && !overfill;
            // The newest layer's blocks as this pass leaves them.
            let mut blocks: BTreeMap<usize, BlockWrite> = BTreeMap::new();
            let mut full = Vec::new();
            for &i in &pending {
                let element = elements[i];
                if (0..=newest).any(|l| probe.contains(l, element)) {
                    continue; // in already: not new
                }
                let (block, positions) = layer.shape.locate(element);
                let BlockWrite {
                    value, added, set, ..
                } = blocks.entry(block).or_insert_with(|| {
                    let value = match &probe.blocks[&(newest, block)] {
                        Some(item) => item.value.clone(),
                        None => layer.shape.empty_block(),
                    };
                    BlockWrite {
                        cas: probe.blocks[&(newest, block)].as_ref().map(|item| item.cas),
                        set: value[crate::bloom::HEADER_LEN..]
                            .iter()
                            .map(|b| u64::from(b.count_ones()))
                            .sum(),
                        value,
                        added: Vec::new(),
                    }
                });
                if growable && *set as f64 / layer.shape.block_bits as f64 >= limit {
                    full.push(i); // for the next layer, once it is there
                    continue;
                }
                let bits = &mut value[crate::bloom::HEADER_LEN..];
                let newly = positions.filter(|&p| set_bit(bits, p)).count() as u64;
                if newly > 0 {
                    *set += newly;
                    added.push(i);
                }
                // (Else its bits were all set by this batch: not new.)
            }
            let writes: Vec<(usize, &BlockWrite)> = blocks
                .iter()
                .filter(|(_, w)| !w.added.is_empty())
                .map(|(&block, w)| (block, w))
                .collect();
            let ops: Vec<Op<'_>> = writes
                .iter()
                .map(|(block, w)| layer.write_op(*block, w.cas, &w.value))
                .collect();
            let results = Access::new(&*layer.store, io).pipeline(&ops).await;
            let mut lost = Vec::new();
            let mut filled = false;
            let mut failed = None;
            for ((block, BlockWrite { added, set, .. }), result) in writes.iter().zip(results) {
                match result {
                    Ok(reply) if stored(&reply) => {
                        for &i in added {
                            new[i] = true;
                        }
                        written += added.len();
                        filled |= *set as f64 / layer.shape.block_bits as f64 >= limit;
                    }
                    // Another writer changed the block: its elements again.
                    Ok(_) => lost.extend_from_slice(added),
                    Err(e) => {
                        failed.get_or_insert((layer.keys()[*block].clone(), e));
                    }
                }
            }
            if let Some((key, e)) = failed {
                return Err(if written == 0 {
                    e
                } else {
                    Error::Ambiguous {
                        key: key.display(),
                        server: String::new(),
                        reason: format!(
                            "{written} elements of this batch were added before it failed ({e}); adding them again is safe"
                        ),
                    }
                });
            }
            if growable && (filled || !full.is_empty()) {
                // The written elements are in a layer the header names: a
                // grow that fails is done again by the next add that finds
                // the layer full (as in `add`); only waiting elements need
                // it now.
                let grown = self.ensure_layers(access, newest + 2).await;
                if grown.is_err() && !full.is_empty() {
                    overfill = true;
                }
            }
            if !lost.is_empty() {
                attempts += 1;
                if attempts == MAX_ATTEMPTS {
                    return Err(Error::Conflict {
                        key: layer.keys()[layer.shape.locate(elements[lost[0]]).0].display(),
                        attempts,
                    });
                }
                access.sleep(backoff.next_delay()).await;
            }
            full.extend(lost);
            full.sort_unstable();
            pending = full;
        }
        Ok(new)
    }

    fn capacity_of(&self, layer: usize) -> u64 {
        u64::from(self.growth)
            .saturating_pow(layer as u32)
            .saturating_mul(self.initial)
    }

    /// Make the header name at least `count` layers (CAS; idempotent), if
    /// that many are allowed and the newest can be built.
    async fn ensure_layers(&self, access: Access<'_>, count: usize) -> Result<()> {
        let count = count.min(MAX_LAYERS as usize);
        let layers = self.layers_up_to(count)?;
        update_checked(
            access,
            &self.header,
            mcds_core::Ttl::Never,
            &mut |current| {
                let stored = match current {
                    None => 1,
                    Some(bytes) => self.decode_header(bytes)? as usize,
                };
                Ok((stored < count).then(|| self.encode_header(count as u32)))
            },
        )
        .await?;
        self.remember(layers);
        Ok(())
    }

    /// Whether the element may have been added (no false negatives; false
    /// positives below the configured rate). 1 round trip.
    ///
    /// [`contains`](ScalableBloomFilter::contains) without blocking the
    /// thread.
    #[blocking_and_async(pub)]
    async fn contains_io(&self, io: Io, element: impl AsRef<[u8]>) -> Result<bool> {
        let element = element.as_ref();
        Ok(self.contains_many_io(io, &[element]).await?[0])
    }

    /// [`contains`](Self::contains) for many elements: one `get_multi` of
    /// the header and the blocks they fall in, in every layer.
    ///
    /// [`contains_many`](ScalableBloomFilter::contains_many) without
    /// blocking the thread.
    #[blocking_and_async(pub)]
    async fn contains_many_io<E: AsRef<[u8]>>(&self, io: Io, elements: &[E]) -> Result<Vec<bool>> {
        let elements: Vec<&[u8]> = elements.iter().map(AsRef::as_ref).collect();
        let probe = self.probe(self.access(io), &elements).await?;
        Ok(elements
            .iter()
            .map(|e| (0..probe.layers.len()).any(|l| probe.contains(l, e)))
            .collect())
    }

    /// How many layers the filter has (the header's count; 1 round trip).
    #[blocking_and_async(pub)]
    async fn layers_io(&self, io: Io) -> Result<usize> {
        Ok(self.probe(self.access(io), &[]).await?.layers.len())
    }

    /// Delete the header and every block of every layer. A filter that has
    /// grown (it has a header) is cleared with the parameters its header
    /// records, whatever this handle was opened with: clearing is how a
    /// filter opened with the wrong numbers is started again. A filter
    /// still on its first layer has no header, and its blocks are found
    /// from this handle's parameters: when it has a block past them (it
    /// was made with a larger capacity) or a second layer (its header was
    /// lost), the clear is refused with [`Error::InvalidArgument`] before
    /// anything is deleted (1 more round trip): open it with the capacity
    /// it was created with.
    #[blocking_and_async(pub)]
    async fn clear_io(&self, io: Io) -> Result<()> {
        if let Some(stored) = self.as_stored(io).await? {
            return stored.clear_as_opened(io).await;
        }
        self.clear_as_opened(io).await
    }

    /// This filter opened with the parameters its header records, if it
    /// has a header naming other ones (1 round trip).
    async fn as_stored(&self, io: Io) -> Result<Option<ScalableBloomFilter>> {
        let Some(item) = self.access(io).get(&self.header).await? else {
            return Ok(None);
        };
        let b = &item.value;
        if b.len() != HEADER_LEN || &b[..4] != MAGIC || b[8..] == self.encode_header(0)[8..] {
            return Ok(None); // ours, or not a header: clear_as_opened reports it
        }
        let word = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or_default());
        let growth = u32::from_le_bytes(b[24..28].try_into().unwrap_or_default());
        ScalableBloomFilter::new(
            self.scope.clone(),
            &self.name,
            word(8),
            f64::from_bits(word(16)),
        )
        .and_then(|f| f.with_growth(growth))
        .map(Some)
        .map_err(|e| {
            corrupt(
                &self.header,
                format!("its recorded parameters do not open a filter: {e}"),
            )
        })
    }

    /// With no header, nothing records the filter's shape: a first layer
    /// made with a larger capacity has blocks past the ones this handle's
    /// capacity makes, and a grown filter whose header was lost has a
    /// second layer. Either way a clear from this handle would leave blocks
    /// behind and report success: refuse it before deleting anything
    /// (1 round trip).
    async fn refuse_other_shapes(&self, access: Access<'_>, first: &BloomFilter) -> Result<()> {
        let beyond = self
            .scope
            .key("sbloom", &self.name, format!("0.{}", first.keys().len()))?;
        let second = self.scope.key("sbloom", &self.name, "1.0")?;
        let found = access.get_multi(&[beyond, second]).await?;
        let why = match (&found[0], &found[1]) {
            (Some(_), _) => format!(
                "its first layer has more blocks than a capacity of {} makes",
                self.initial
            ),
            (None, Some(_)) => "it has a second layer, but no header (lost)".to_string(),
            (None, None) => return Ok(()),
        };
        Err(Error::InvalidArgument(format!(
            "scalable Bloom filter {}: {why}, so a clear with this capacity would leave blocks behind; nothing was deleted — clear it with the capacity it was created with",
            self.name
        )))
    }

    async fn clear_as_opened(&self, io: Io) -> Result<()> {
        let access = self.access(io);
        let probe = self.probe(access, &[]).await?;
        if probe.header_count == 0 {
            self.refuse_other_shapes(access, &probe.layers[0]).await?;
        }
        let layers = probe.layers;
        let mut ops: Vec<Op<'_>> = vec![Op::Delete(&self.header)];
        ops.extend(layers.iter().flat_map(|l| l.keys().iter().map(Op::Delete)));
        for r in access.pipeline(&ops).await {
            r?;
        }
        // Taken after the last await, and dropped at the end of the
        // statement.
        *self.layers.lock().unwrap_or_else(|e| e.into_inner()) = vec![layers[0].clone()];
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcds_core::MemoryStore;

    /// A grown filter is cleared whatever parameters the clearing handle
    /// was opened with: its header's.
    #[test]
    fn clear_uses_the_parameters_the_header_records() {
        let store = Arc::new(MemoryStore::new());
        let real = ScalableBloomFilter::new(store.clone(), "c", 10, 0.01).unwrap();
        for i in 0..100 {
            real.add(format!("e{i}")).unwrap();
        }
        assert!(real.layers().unwrap() >= 3);
        let other = ScalableBloomFilter::new(store.clone(), "c", 51, 0.05).unwrap();
        assert!(other.layers().is_err(), "other parameters are refused");
        other.clear().unwrap();
        assert_eq!(store.len(), 0, "every block and the header deleted");
        assert!(!real.contains("e7").unwrap());
    }

    /// A first-layer filter (no header) cleared from a handle of a smaller
    /// capacity is refused, and keeps every block; of its own capacity,
    /// cleared.
    #[test]
    fn a_clear_that_would_leave_blocks_behind_is_refused() {
        let store = Arc::new(MemoryStore::new());
        let big = ScalableBloomFilter::new(store.clone(), "f", 2_000_000, 0.01).unwrap();
        for i in 0..30 {
            big.add(format!("e{i}")).unwrap();
        }
        let blocks = store.len();
        assert!(blocks > 1, "a first layer of several blocks");
        let small = ScalableBloomFilter::new(store.clone(), "f", 10, 0.01).unwrap();
        match small.clear() {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("capacity"), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(store.len(), blocks, "nothing deleted");
        big.clear().unwrap();
        assert_eq!(store.len(), 0);
    }

    /// A clone given another growth keeps no layer of the original's, and
    /// the original none of its.
    #[test]
    fn with_growth_gives_a_cache_of_its_own() {
        let store = Arc::new(MemoryStore::new());
        let base = ScalableBloomFilter::new(store, "g", 10, 0.01).unwrap();
        for i in 0..100 {
            base.add(format!("e{i}")).unwrap();
        }
        let grown = base.layers.lock().unwrap().len();
        assert!(grown >= 3, "{grown} layers");
        let other = base.clone().with_growth(4).unwrap();
        assert!(!Arc::ptr_eq(&base.layers, &other.layers));
        assert_eq!(other.layers.lock().unwrap().len(), 1);
        assert_eq!(base.layers.lock().unwrap().len(), grown);
    }
}
