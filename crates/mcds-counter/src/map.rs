//! [`CounterMap`]: named fields, each an atomic signed counter (Redis'
//! `HINCRBY`/`HINCRBYFLOAT`), listed by a field registry and read all at
//! once; [`Decimal`], its fixed-point amounts.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use mcds_core::{
    Access, DeleteOutcome, Error, Io, Item, Key, Result, Scope, Stored, Ttl, block_on,
    blocking_and_async, stable_hash128,
};
use mcds_set::Set;

/// The longest field name, in bytes.
pub const MAX_FIELD_LEN: usize = 1024;

/// The most decimal places of a [`CounterMap::with_scale`] map: 10^18 units
/// still fit an `i64`.
pub const MAX_SCALE: u32 = 18;

/// Stored counters are `value + 2^61`, so that the unsigned counters of
/// memcached carry signed values, and stay below 2^63: memcached (1.6.18,
/// and every version with its `safe_strtoull`) refuses a counter of 2^63
/// or more as non-numeric whenever a `-` byte lies anywhere after the
/// item's digits in its memory (it looks for a minus sign with `strchr`
/// past the end of the value), so such counters fail at random.
const OFFSET: u64 = 1 << 61;

/// The largest value a field holds: `2^61 − 1`.
pub const MAX_VALUE: i64 = (1 << 61) - 1;

/// The smallest value a field holds: `−2^61` (decrements stop there).
pub const MIN_VALUE: i64 = -(1 << 61);

/// The largest amount one `incr` adds or subtracts, 2^56 − 1: a valid
/// stored counter (below 2^62) stays below 2^63 on the server (see
/// [`OFFSET`]) unless more than 64 increments of this size race each other
/// past [`MAX_VALUE`] before any is undone.
const MAX_AMOUNT: u64 = (1 << 56) - 1;

/// Rounds of "increment, else create" before [`Error::Conflict`]: a round
/// is lost only when another client removes the field between our create
/// failing (someone else created it) and our increment.
const MAX_ATTEMPTS: u32 = 16;

/// How many salts to try when placing a field's counter on the registry's
/// server (see [`CounterMap`]): on a pool of `s` servers a salt fails with
/// probability `1 − 1/s`, so 64 salts all fail with probability
/// `(1 − 1/s)^64`: 5·10⁻¹² for 3 servers, 0.2 % for 10.
const PLACEMENT_TRIES: u32 = 64;

/// A fixed-point number: `units` of `10^-scale`. The amounts and values of
/// a [`CounterMap`] with a scale; exact, so 0.1 added ten times is 1.0.
///
/// ```
/// use mcds_counter::Decimal;
///
/// let d = Decimal::parse("-1.25", 2)?;
/// assert_eq!((d.units, d.scale), (-125, 2));
/// assert_eq!(d.to_string(), "-1.25");
/// assert_eq!(Decimal { units: 10, scale: 1 }.to_string(), "1.0");
/// assert!(Decimal::parse("0.125", 2).is_err()); // more places than the scale
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decimal {
    /// The value in units of `10^-scale`.
    pub units: i64,
    /// Decimal places.
    pub scale: u32,
}

impl Decimal {
    /// Parse `text` (`[+-]digits[.digits]`) exactly at `scale` places:
    /// extra places must be zeros, and the value must fit `i64` units, else
    /// [`Error::InvalidArgument`]. No float is involved.
    pub fn parse(text: &str, scale: u32) -> Result<Decimal> {
        parse_units(text, scale, false).map(|units| Decimal { units, scale })
    }

    /// Parse `text` as [`parse`](Self::parse) does, rounding half away from
    /// zero at `scale` places instead of refusing more places: the digits
    /// as written, never through a float (`9007199254740993` stays itself).
    ///
    /// ```
    /// use mcds_counter::Decimal;
    /// assert_eq!(Decimal::parse_rounded("0.125", 2)?.to_string(), "0.13");
    /// assert_eq!(Decimal::parse_rounded("9007199254740993", 0)?.units, 9007199254740993);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn parse_rounded(text: &str, scale: u32) -> Result<Decimal> {
        parse_units(text, scale, true).map(|units| Decimal { units, scale })
    }

    /// The nearest `f64` (for display and arithmetic outside the map; the
    /// map itself never rounds).
    pub fn to_f64(self) -> f64 {
        self.to_string().parse().unwrap_or(f64::NAN)
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.units < 0 { "-" } else { "" };
        let magnitude = u128::from(self.units.unsigned_abs());
        if self.scale == 0 {
            return write!(f, "{sign}{magnitude}");
        }
        let one = 10u128.pow(self.scale.min(38));
        let width = self.scale as usize;
        write!(f, "{sign}{}.{:0width$}", magnitude / one, magnitude % one)
    }
}

/// `text` as units of `10^-scale`: exact, or (with `round`) rounded half
/// away from zero at the last place.
pub(crate) fn parse_units(text: &str, scale: u32, round: bool) -> Result<i64> {
    let bad = |why: &str| {
        Error::InvalidArgument(format!(
            "{text:?} is not a decimal amount at {scale} places: {why}"
        ))
    };
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !all_digits(int) || !all_digits(frac) || digits.ends_with('.') {
        return Err(bad("write it as [+-]digits[.digits]"));
    }
    let too_big = || bad("it does not fit a 64-bit counter at this scale");
    let mut units: i128 = 0;
    for b in int.bytes().chain(
        frac.bytes()
            .chain(std::iter::repeat(b'0'))
            .take(scale as usize),
    ) {
        units = units
            .checked_mul(10)
            .and_then(|u| u.checked_add(i128::from(b - b'0')))
            .ok_or_else(too_big)?;
    }
    let rest = frac.get(scale as usize..).unwrap_or("");
    if round {
        if rest.as_bytes().first().is_some_and(|&b| b >= b'5') {
            units += 1;
        }
    } else if rest.bytes().any(|b| b != b'0') {
        return Err(bad("it has more decimal places than the map's scale"));
    }
    let units = if negative { -units } else { units };
    i64::try_from(units).map_err(|_| too_big())
}

/// The stored form of a signed value in [`MIN_VALUE`]..=[`MAX_VALUE`].
pub(crate) fn encode_value(value: i64) -> u64 {
    value.wrapping_add(OFFSET as i64) as u64
}

/// The signed value of a stored counter (above [`MAX_VALUE`] for one that
/// racing increments took past the bound, saturating rather than wrapping).
pub(crate) fn decode_value(stored: u64) -> i64 {
    stored.min(i64::MAX as u64) as i64 - OFFSET as i64
}

/// A registered field's name from the registry's bytes, or why it is not
/// one: UTF-8 of 1 to [`MAX_FIELD_LEN`] bytes, as the map writes them.
pub(crate) fn field_name(member: Vec<u8>) -> std::result::Result<String, String> {
    if member.is_empty() || member.len() > MAX_FIELD_LEN {
        return Err(format!(
            "a registered field name is 1 to {MAX_FIELD_LEN} bytes; found {}",
            member.len()
        ));
    }
    String::from_utf8(member).map_err(|_| "a registered field name is not UTF-8".into())
}

fn corrupt(key: &Key, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        key: key.display(),
        reason: reason.into(),
    }
}

/// The error of a first touch whose field counter (`key`) may exist
/// unlisted: `what` happened to it, and the way out.
fn counting_unlisted(key: &Key, what: String) -> Error {
    let field_key = key.display();
    Error::Ambiguous {
        key: field_key.clone(),
        server: String::new(),
        reason: format!(
            "field {field_key} {what}: its amount may count, unlisted; remove the field to clear it"
        ),
    }
}

/// Named fields, each an atomic signed counter, listed and read all at
/// once: Redis' `HINCRBY`, `HINCRBYFLOAT` (without float drift),
/// `HGET`, `HGETALL`, `HKEYS`, `HDEL` and `HLEN` on memcached.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_counter::CounterMap;
///
/// let store = Arc::new(MemoryStore::new());
/// let stock = CounterMap::new(store.clone(), "stock")?;
/// stock.incr("apples", 10)?;
/// stock.incr("pears", 3)?;
/// assert_eq!(stock.incr("apples", -12)?, -2);
/// assert_eq!(stock.get_all()?, [("apples".to_string(), -2), ("pears".to_string(), 3)]);
/// assert!(stock.remove("pears")?);
/// assert_eq!(stock.fields()?, ["apples"]);
///
/// // Fixed point: units of 0.01, parsed exactly.
/// let balance = CounterMap::new(store, "balance")?.with_scale(2)?;
/// for _ in 0..10 {
///     balance.incr_decimal("ann", "0.10")?;
/// }
/// assert_eq!(balance.get_decimal("ann")?.to_string(), "1.00");
/// assert_eq!(balance.incr_f64("ann", -0.25)?.to_string(), "0.75");
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// Every method that reaches the store has an async twin (`incr_async`,
/// `get_all_async`, …): the same algorithm (see [`Access`]), awaiting the
/// store instead of blocking the thread.
///
/// ## Keys and the field registry
///
/// A map `name` keeps
///
/// * its **field registry** under `<prefix>cmap:<name>:fields`: an
///   [`mcds_set::Set`] of the field names (text codec, `%XX` escapes), so
///   it has no size wall: its buckets of about 4 KiB split as they fill
///   and spread over a pool. Writers only append (`+field ` to register,
///   `-field ` to unregister), so none loses another's token; a read that
///   finds a bucket dirty compacts it by CAS (behind a proxy, which has no
///   CAS, buckets neither split nor compact, and the registry is one item
///   of about 1 MiB of names). A registry an older mcds wrote in one item
///   is moved into buckets on first use.
/// * each field's **counter** under `<prefix>cmap:<name>:v:<h>`, `<h>` the
///   32 hex digits of the field's 128-bit XXH3 (so any field of up to
///   [`MAX_FIELD_LEN`] bytes makes a valid key), or `<h>.<salt>`: on a pool
///   the first salt (of 64) whose key lives on the server of the registry's
///   directory (where the one-item registry of earlier versions lived:
///   the placement is kept so that existing counters keep their keys).
///   Behind a proxy (no placement known) or when no salt lands there,
///   salt 0.
///
/// ## Operations and round trips (warm connection)
///
/// * [`incr`](Self::incr): one `incr` (or `decr`) of the field's counter: 1
///   round trip. On the **first touch** (the counter is missing: a new,
///   removed or evicted field) that misses, the counter is created with
///   `add`, and then the field is registered (one append to its registry
///   bucket): 3 round trips (one more when the registry itself is new, one
///   more on a handle that has not read the registry's directory yet). If
///   another client created the counter first, the `add` fails and the
///   increment is sent again.
/// * [`get`](Self::get): 1 round trip.
/// * [`get_all`](Self::get_all): **2 round trips** for a registry of up to
///   512 buckets (some 150,000 8-byte names): the registry's directory and
///   buckets first (the counters' keys are not known before), then every
///   counter in one `get_multi`; one more per 512 buckets, and one more
///   when it compacts a bucket. [`get_all_iter`](Self::get_all_iter)
///   streams it a page of buckets at a time.
/// * [`fields`](Self::fields), [`len`](Self::len): 1 (the registry).
/// * [`remove`](Self::remove): 2, the unregistration, then the delete of
///   the counter.
///
/// ## Amounts, bounds and scale
///
/// memcached's counters are unsigned 64-bit; `incr` wraps at 2^64 and
/// `decr` stops at 0. A field's value `v` is stored as `v + 2^61`, so a
/// positive amount is an `incr`, a negative one a `decr`, each atomic and
/// returning the new value. The stored counter stays below 2^63 because
/// memcached misreads larger ones: its check for a minus sign scans past
/// the value's digits into whatever memory follows the item, and refuses
/// the counter as non-numeric if it meets a `-` there. Bounds:
///
/// * a field holds [`MIN_VALUE`] (−2^61) to [`MAX_VALUE`] (2^61 − 1), about
///   ±2.3·10^18 (±2.3 at scale 18); one call adds at most 2^56 − 1 (about
///   7.2·10^16, 0.072 at scale 18) either way, else
///   [`Error::InvalidArgument`] before anything is sent;
/// * decrements **saturate at [`MIN_VALUE`]** (`decr` stops at 0);
/// * an increment past [`MAX_VALUE`] is undone (a `decr` of the same
///   amount) and refused with [`Error::InvalidArgument`]; between the two a
///   reader may see the value past the bound. A valid value plus one
///   allowed amount stays below 2^63 on the server; more than 64
///   increments of the largest size racing each other past the bound
///   before any is undone could take it further.
///
/// With [`with_scale(places)`](Self::with_scale) a field counts units of
/// `10^-places`: [`incr_decimal`](Self::incr_decimal) parses its amount
/// exactly (refusing more places than the scale), [`incr_f64`](Self::incr_f64)
/// takes the float's shortest decimal form rounded to the scale, and
/// [`get_decimal`](Self::get_decimal) / [`get_all_decimal`](Self::get_all_decimal)
/// give [`Decimal`]s. No float is stored: 0.1 added ten times is exactly
/// 1.0. The scale is not stored: every client of a map must use the same.
///
/// ## Guarantees, and what breaks them
///
/// * No increment is lost to a race: each is one atomic `incr`/`decr`, and
///   a counter is created once (`add`; the loser increments the winner's).
/// * A field whose counter exists is listed. A `remove` racing the first
///   increment of the same field ends either with the field listed and
///   counting or listed with no counter (read as absent, recreated by the
///   next increment), never counting unlisted: the first touch creates the
///   counter before it registers the field (it waits for the `add`'s
///   reply), and `remove` unregisters before it deletes (it waits for the
///   first reply before it sends the second). So if the registration
///   lands before the unregistration, the counter's creation was earlier
///   still, and the delete removes it.
/// * [`get_all`](Self::get_all) is not a snapshot: increments between its
///   two round trips may show for some fields. A listed field whose
///   counter is missing (removed meanwhile, evicted) is left out;
///   [`fields`](Self::fields) lists it.
/// * **Restart and flush** lose the counters and registry buckets of the
///   server. **Eviction** can take a counter (the field counts from 0
///   again, listed as before) or a registry bucket (detected: `fields` and
///   `get_all` fail with [`Error::Lost`] until
///   [`clear_registry`](Self::clear_registry)), or the registry's directory (its fields are no longer
///   listed, though [`get`](Self::get) still reads their counters; the
///   next first touch of a field starts a new registry). With `-M` a full server refuses
///   writes with [`Error::OutOfMemory`]; memcached 1.6 then also deletes
///   the item it could not write, so a failed first touch can take the
///   registry with it (as eviction does).
/// * An increment failing with [`Error::Ambiguous`] may or may not have
///   counted. A first touch that cannot tell whether it created the
///   counter (no reply came) registers the field before it fails, so a
///   counter it may have made is listed. A first touch whose registration
///   fails after the counter was created takes the counter back (deleted
///   by its CAS id, or, when another client's increment found it
///   meanwhile, `by` subtracted again) and returns the error: the call did
///   not happen. If taking it back fails too, the error is
///   [`Error::Ambiguous`]. What this cannot undo: another client whose
///   increment found the new counter in that moment was told `Ok`, and its
///   amount counts unlisted; `remove` the field to clear it.
/// * `remove` sends its unregistration and its delete one after the other
///   (2 round trips). Checked from 3 processes over 1000 rounds, each on a
///   missing registry (`mcds-stress` `processes`).
/// * **A counter at 2^63 or more** is one memcached may refuse to increment
///   ([`Error::NonNumeric`]: its check for a minus sign reads past the
///   digits into the memory after the item). Stored values stay below 2^62
///   and one call adds under 2^56 (see the bounds above), so only many
///   maximal increments racing past [`MAX_VALUE`] could get there; `remove`
///   the field to recover.
/// * Bytes no map writes (another program's) under its keys are
///   [`Error::Corrupt`] on reads and [`Error::NonNumeric`] on increments,
///   never a panic or a misread.
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses counters (a field counts again from 0,
/// listed) or the field registry (fields stay countable with `get` but are
/// unlisted by `fields` and `get_all` until their next first touch). No
/// read can tell a lost counter from a field never touched, or a lost
/// registry from a new map: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | map name: 206 bytes, less the scope's prefix (the registry's key adds `cmap:`, `:fields` and a bucket suffix of up to 32 bytes to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`] from [`new`](Self::new) | no |
/// | field name: 1 to [`MAX_FIELD_LEN`] (1024) bytes of any UTF-8 (hashed into the key) | [`Error::InvalidArgument`] from every method taking it | no: refused before anything is sent |
/// | fields: no limit but the servers' memory (the registry's buckets split) | — | — |
/// | fields behind a proxy or with `-C` (no CAS): the registry is one item (1 MiB by default) | the first touch of a field that does not fit is [`Error::Ambiguous`], its cause the registry's [`Error::ValueTooLarge`]: without CAS ids the new counter cannot be taken back | yes: the counter holds the amount, unlisted, and later increments of the field succeed on it, still unlisted; `remove` the field to clear it |
/// | one amount: at most 2^56 − 1 units either way | [`Error::InvalidArgument`] | no: refused before anything is sent |
/// | a field's value: at most [`MAX_VALUE`] (2^61 − 1) | [`Error::InvalidArgument`] | written, then undone (a `decr` of the amount): a reader may see the value past the bound in between |
/// | a field's value: at least [`MIN_VALUE`] (−2^61) | decrements stop at [`MIN_VALUE`]: no error | yes, [`MIN_VALUE`] |
/// | scale: 0 to [`MAX_SCALE`] (18) places | [`Error::InvalidArgument`] from [`with_scale`](Self::with_scale) | no |
/// | a decimal amount: no more places than the scale (unless zeros), and an `i64` of units | [`Error::InvalidArgument`] from [`incr_decimal`](Self::incr_decimal) | no |
/// | a float amount: finite, an `i64` of units once rounded | [`Error::InvalidArgument`] from [`incr_f64`](Self::incr_f64) | no |
#[derive(Clone, Debug)]
pub struct CounterMap {
    scope: Scope,
    name: String,
    registry: Key,
    /// What every counter's key starts with (`…cmap:<name>:v:`), made once:
    /// [`field_key`](Self::field_key) appends the field's hash to it (a map
    /// of 100,000 fields spent a fifth of `get_all`'s own time formatting
    /// whole keys).
    values: Key,
    /// The field registry: a growing set under `registry`.
    fields: Set,
    scale: u32,
}

impl CounterMap {
    /// The map `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix), counting whole units (scale 0), never expiring.
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<CounterMap> {
        let scope = scope.into();
        let registry = scope.key("cmap", name, "fields")?;
        // The registry's buckets add a suffix of up to 32 bytes to its key
        // (`.<id>.<depth>.<index>.<nonce>`, see mcds-set): refused here,
        // not on the map's first write.
        registry.with_suffix([b'x'; 32])?;
        let values = scope.key("cmap", name, "v:")?;
        let map = CounterMap {
            fields: Set::with_key(Arc::clone(scope.store()), registry.clone()),
            values,
            scope,
            name: name.to_string(),
            registry,
            scale: 0,
        };
        map.scope
            .key("cmap", name, format_args!("v:{:032x}.{PLACEMENT_TRIES}", 0))?; // the longest key fits
        Ok(map)
    }

    /// This map counting units of `10^-places` (0 to [`MAX_SCALE`]): see
    /// the [type docs](CounterMap). Every client of the map must use the
    /// same scale.
    pub fn with_scale(mut self, places: u32) -> Result<CounterMap> {
        if places > MAX_SCALE {
            return Err(Error::InvalidArgument(format!(
                "a counter map has 0 to {MAX_SCALE} decimal places (10^18 units fill an i64); got {places}"
            )));
        }
        self.scale = places;
        Ok(self)
    }

    /// Split the field registry's buckets past `bytes` (see
    /// [`Set::with_bucket_bytes`]; 4 KiB by default). Every client of the
    /// map should use the same size; a mismatch only changes when buckets
    /// split, never what they hold.
    pub fn with_bucket_bytes(mut self, bytes: usize) -> CounterMap {
        self.fields = self.fields.with_bucket_bytes(bytes);
        self
    }

    /// The map's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its decimal places.
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// The key of the field registry.
    pub fn registry_key(&self) -> &Key {
        &self.registry
    }

    /// The key of `field`'s counter (see the [type docs](CounterMap)).
    pub fn field_key(&self, field: &str) -> Result<Key> {
        if field.is_empty() || field.len() > MAX_FIELD_LEN {
            return Err(Error::InvalidArgument(format!(
                "a counter map field is 1 to {MAX_FIELD_LEN} bytes; got {}",
                field.len()
            )));
        }
        // `v:<hash as 32 hex digits>`, then `.<salt>` past the first try.
        let mut hex = [0u8; 32];
        let hash = stable_hash128(field.as_bytes());
        for (i, digit) in hex.iter_mut().enumerate() {
            *digit = b"0123456789abcdef"[((hash >> (124 - 4 * i)) & 0xf) as usize];
        }
        let store = self.scope.store();
        let key = |salt: u32| {
            if salt == 0 {
                self.values.with_suffix(hex)
            } else {
                self.values
                    .with_suffix([&hex[..], format!(".{salt}").as_bytes()].concat())
            }
        };
        for salt in 0..PLACEMENT_TRIES {
            let k = key(salt)?;
            if store.colocated(&k, &self.registry) {
                return Ok(k);
            }
        }
        key(0)
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(self.scope.store().as_ref(), io)
    }

    /// Add `by` (negative to subtract) to `field`, creating it at `by` if it
    /// does not exist; the new value, in units. 1 round trip, 2 on the
    /// field's first touch. Bounds and failures: see the
    /// [type docs](CounterMap).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_counter::CounterMap;
    /// # mcds_core::block_on(async {
    /// let stock = CounterMap::new(Arc::new(MemoryStore::new()), "stock")?;
    /// assert_eq!(stock.incr_async("apples", 10).await?, 10);
    /// assert_eq!(stock.get_all_async().await?, [("apples".to_string(), 10)]);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    #[blocking_and_async(pub)]
    async fn incr_io(&self, io: Io, field: &str, by: i64) -> Result<i64> {
        let magnitude = by.unsigned_abs();
        if magnitude > MAX_AMOUNT {
            return Err(Error::InvalidArgument(format!(
                "a counter map adds at most 2^56 − 1 ({MAX_AMOUNT}) units either way in one call, and a field holds {MIN_VALUE} to {MAX_VALUE}; got {by}"
            )));
        }
        let key = self.field_key(field)?;
        let access = self.access(io);
        for _ in 0..MAX_ATTEMPTS {
            let stored = if by >= 0 {
                access.incr(&key, magnitude).await?
            } else {
                access.decr(&key, magnitude).await?
            };
            if let Some(stored) = stored {
                return self.checked(access, field, &key, by, stored).await;
            }
            if self.create(access, field, &key, by).await? {
                return Ok(by);
            }
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: MAX_ATTEMPTS,
        })
    }

    /// The new value of an increment whose reply was `stored`; an
    /// increment that went past [`MAX_VALUE`] is undone and refused.
    async fn checked(
        &self,
        access: Access<'_>,
        field: &str,
        key: &Key,
        by: i64,
        stored: u64,
    ) -> Result<i64> {
        // Compared stored, not decoded: a counter that racing increments
        // took to 2^63 or more must be undone too.
        if by > 0 && stored > encode_value(MAX_VALUE) {
            access.decr(key, by.unsigned_abs()).await?;
            return Err(Error::InvalidArgument(format!(
                "adding {by} to field {field:?} of counter map {} would pass {MAX_VALUE} (2^61 − 1), the most a field holds; it was undone",
                self.name
            )));
        }
        Ok(decode_value(stored))
    }

    /// The first touch: create the counter at `by`, then register the
    /// field (in that order: see the guarantees). `false` if another
    /// client created the counter first.
    async fn create(&self, access: Access<'_>, field: &str, key: &Key, by: i64) -> Result<bool> {
        // A first touch starts at `by`, within the bounds like any value.
        if !(MIN_VALUE..=MAX_VALUE).contains(&by) {
            return Err(Error::InvalidArgument(format!(
                "field {field:?} of counter map {} would start at {by}, outside {MIN_VALUE} to {MAX_VALUE}",
                self.name
            )));
        }
        let initial = encode_value(by).to_string();
        let io = access.io();
        let added = match access.add(key, initial.as_bytes(), Ttl::Never).await {
            Ok(added) => added,
            // Unanswered (a lost reply, a cancelled call): the counter may
            // exist, and a later increment would find it and never
            // register it. List the field whatever happened (a listed
            // field with no counter reads as absent), then fail: the
            // amount may count.
            Err(e @ Error::Ambiguous { .. }) => {
                return Err(match self.register(io, field, true).await {
                    Ok(()) => e,
                    Err(again) => counting_unlisted(
                        key,
                        format!("may have been created ({e}), and registering it failed ({again})"),
                    ),
                });
            }
            Err(e) => return Err(e),
        };
        let Stored::Stored(cas) = added else {
            return Ok(false); // the winner registers it
        };
        match self.register(io, field, true).await {
            Ok(()) => Ok(true),
            Err(e) => Err(self.undo_create(access, key, cas, by, e).await),
        }
    }

    /// Register (`add`) or unregister `field` in the registry set: one
    /// append to its bucket, following the registry's splits.
    async fn register(&self, io: Io, field: &str, add: bool) -> Result<()> {
        match (io, add) {
            (Io::Blocking, true) => self.fields.add(&[field]),
            (Io::Blocking, false) => self.fields.remove(&[field]),
            (Io::Async, true) => self.fields.add_async(&[field]).await,
            (Io::Async, false) => self.fields.remove_async(&[field]).await,
        }
    }

    /// Take back a counter this first touch created and could not
    /// register, so that the call that fails with `e` did not happen: the
    /// counter is deleted if no one changed it since (its CAS id), else
    /// (another client's increment found it) `by` is subtracted again.
    /// The error to return: `e`, or [`Error::Ambiguous`] when the undo
    /// itself failed and the amount may still count, unlisted.
    async fn undo_create(
        &self,
        access: Access<'_>,
        key: &Key,
        cas: u64,
        by: i64,
        e: Error,
    ) -> Error {
        let undone = match access.delete_cas(key, cas).await {
            Ok(DeleteOutcome::Exists) if by >= 0 => access.decr(key, by.unsigned_abs()).await,
            Ok(DeleteOutcome::Exists) => access.incr(key, by.unsigned_abs()).await,
            Ok(_) => Ok(None),
            Err(undo) => Err(undo),
        };
        match undone {
            Ok(_) => e,
            Err(undo) => counting_unlisted(
                key,
                format!(
                    "was created but could not be registered ({e}), and taking it back failed ({undo})"
                ),
            ),
        }
    }

    /// [`incr`](Self::incr) by an exact decimal amount (`"1.25"`, `"-3"`)
    /// at the map's scale; the new value. More decimal places than the
    /// scale (unless zeros) is [`Error::InvalidArgument`]: nothing is
    /// rounded.
    ///
    /// [`incr_decimal`](CounterMap::incr_decimal) without blocking the
    /// thread.
    #[blocking_and_async(pub)]
    async fn incr_decimal_io(&self, io: Io, field: &str, amount: &str) -> Result<Decimal> {
        let units = parse_units(amount, self.scale, false)?;
        self.incr_io(io, field, units)
            .await
            .map(|units| self.decimal(units))
    }

    /// [`incr`](Self::incr) by `amount`'s shortest decimal form (the digits
    /// `{}` prints: `0.1`, not 0.1000000000000000055…), rounded half away
    /// from zero to the map's scale; the new value. NaN, infinities and
    /// amounts beyond `i64` units are [`Error::InvalidArgument`].
    #[blocking_and_async(pub)]
    async fn incr_f64_io(&self, io: Io, field: &str, amount: f64) -> Result<Decimal> {
        if !amount.is_finite() {
            return Err(Error::InvalidArgument(format!(
                "a counter map adds finite amounts; got {amount}"
            )));
        }
        let units = parse_units(&amount.to_string(), self.scale, true)?;
        self.incr_io(io, field, units)
            .await
            .map(|units| self.decimal(units))
    }

    fn decimal(&self, units: i64) -> Decimal {
        Decimal {
            units,
            scale: self.scale,
        }
    }

    /// `field`'s value in units, 0 if it does not exist. 1 round trip.
    #[blocking_and_async(pub)]
    async fn get_io(&self, io: Io, field: &str) -> Result<i64> {
        let key = self.field_key(field)?;
        let item = self.access(io).get(&key).await?;
        Ok(self.value(&key, item)?.unwrap_or(0))
    }

    /// [`get`](Self::get) as a [`Decimal`] at the map's scale.
    pub fn get_decimal(&self, field: &str) -> Result<Decimal> {
        self.get(field).map(|units| self.decimal(units))
    }

    /// [`get_decimal`](CounterMap::get_decimal) without blocking the
    /// thread.
    pub async fn get_decimal_async(&self, field: &str) -> Result<Decimal> {
        self.get_async(field).await.map(|units| self.decimal(units))
    }

    /// A counter item's value: `None` when missing, `Corrupt` when not one.
    fn value(&self, key: &Key, item: Option<Item>) -> Result<Option<i64>> {
        item.map(|item| {
            item.counter().map(decode_value).ok_or_else(|| {
                corrupt(
                    key,
                    format!(
                        "expected a counter map's decimal counter, found {} bytes that are not one",
                        item.value.len()
                    ),
                )
            })
        })
        .transpose()
    }

    /// Every field with its value in units, in first-registration order. 2
    /// round trips (1 when the map is empty): see the
    /// [type docs](CounterMap).
    #[blocking_and_async(pub)]
    async fn get_all_io(&self, io: Io) -> Result<Vec<(String, i64)>> {
        let fields = self.fields_io(io).await?;
        self.values_of(io, fields).await
    }

    /// [`get_all`](Self::get_all) as [`Decimal`]s at the map's scale.
    ///
    /// [`get_all_decimal`](CounterMap::get_all_decimal) without blocking
    /// the thread.
    #[blocking_and_async(pub)]
    async fn get_all_decimal_io(&self, io: Io) -> Result<Vec<(String, Decimal)>> {
        Ok(self
            .get_all_io(io)
            .await?
            .into_iter()
            .map(|(field, units)| (field, self.decimal(units)))
            .collect())
    }

    /// The registered fields: the registry's buckets one after another,
    /// each in first-registration order (a map whose registry never split
    /// keeps plain registration order). 1 round trip for a registry of up
    /// to 512 buckets this handle has read before (2 on a new handle),
    /// one more per 512 buckets, and a CAS per bucket compacted.
    #[blocking_and_async(pub)]
    async fn fields_io(&self, io: Io) -> Result<Vec<String>> {
        let members = match io {
            Io::Blocking => self.fields.members()?,
            Io::Async => self.fields.members_async().await?,
        };
        members
            .into_iter()
            .map(|m| field_name(m).map_err(|r| corrupt(&self.registry, r)))
            .collect()
    }

    /// The registered fields, a registry bucket at a time, `page` buckets
    /// per batch: [`fields`](Self::fields) with memory bounded by a page,
    /// for maps too large to list whole. A bucket that splits while the
    /// iterator runs is read as its children: no field is skipped or
    /// returned twice.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_counter::CounterMap;
    /// let hits = CounterMap::new(Arc::new(MemoryStore::new()), "hits")?;
    /// hits.incr("/a", 1)?;
    /// hits.incr("/b", 1)?;
    /// let mut fields: Vec<String> = hits.fields_iter(16).collect::<Result<_, _>>()?;
    /// fields.sort();
    /// assert_eq!(fields, ["/a", "/b"]);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn fields_iter(&self, page: usize) -> FieldsIter<'_> {
        FieldsIter {
            map: self,
            buckets: self.fields.members_iter(page),
            ready: VecDeque::new(),
        }
    }

    /// Every field with its value, a registry bucket at a time: each item
    /// is one bucket's fields with their values, read with one `get_multi`
    /// of their counters, `page` buckets of the registry per batch. Memory
    /// stays bounded by a page, for maps too large to read whole. Fields
    /// whose counter is missing are left out, as in
    /// [`get_all`](Self::get_all).
    pub fn get_all_iter(&self, page: usize) -> GetAllIter<'_> {
        GetAllIter {
            map: self,
            buckets: self.fields.members_iter(page),
            ready: VecDeque::new(),
        }
    }

    /// The values of `fields`, in one `get_multi`, leaving out fields whose
    /// counter is missing.
    async fn values_of(&self, io: Io, fields: Vec<String>) -> Result<Vec<(String, i64)>> {
        if fields.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<Key> = fields
            .iter()
            .map(|f| self.field_key(f))
            .collect::<Result<_>>()?;
        let items = self.access(io).get_multi(&keys).await?;
        let mut all = Vec::with_capacity(fields.len());
        for ((field, key), item) in fields.into_iter().zip(&keys).zip(items) {
            if let Some(value) = self.value(key, item)? {
                all.push((field, value));
            }
        }
        Ok(all)
    }

    /// How many fields are registered. 1 round trip.
    pub fn len(&self) -> Result<usize> {
        self.fields().map(|f| f.len())
    }

    /// [`len`](CounterMap::len) without blocking the thread.
    pub async fn len_async(&self) -> Result<usize> {
        self.fields_async().await.map(|f| f.len())
    }

    /// Whether no field is registered. 1 round trip.
    pub fn is_empty(&self) -> Result<bool> {
        self.len().map(|n| n == 0)
    }

    /// [`is_empty`](CounterMap::is_empty) without blocking the thread.
    pub async fn is_empty_async(&self) -> Result<bool> {
        self.len_async().await.map(|n| n == 0)
    }

    /// Delete the field registry (every bucket, then its directory): the
    /// way out of an [`Error::Lost`] registry bucket. The counters stay,
    /// unlisted until their next first touch, and [`get`](Self::get) still
    /// reads them.
    #[blocking_and_async(pub)]
    async fn clear_registry_io(&self, io: Io) -> Result<()> {
        match io {
            Io::Blocking => self.fields.clear(),
            Io::Async => self.fields.clear_async().await,
        }
    }

    /// Remove `field`: unregister it, then delete its counter. Whether its
    /// counter existed. 2 round trips.
    #[blocking_and_async(pub)]
    async fn remove_io(&self, io: Io, field: &str) -> Result<bool> {
        let key = self.field_key(field)?;
        // Unregistered, then deleted, one after the other: a first touch
        // creates the counter, then registers, so no counter created after
        // this delete can be left unregistered by it (see the type docs).
        self.register(io, field, false).await?;
        self.access(io).delete(&key).await
    }
}

/// The iterator of [`CounterMap::get_all_iter`]: every field with its
/// value, a registry bucket at a time.
#[derive(Debug)]
pub struct GetAllIter<'m> {
    map: &'m CounterMap,
    buckets: mcds_set::MembersIter<'m>,
    ready: VecDeque<(String, i64)>,
}

impl GetAllIter<'_> {
    /// The next field and its value without blocking the thread: `None`
    /// at the end.
    pub async fn next_async(&mut self) -> Option<Result<(String, i64)>> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                return Some(Ok(next));
            }
            let bucket = match self.buckets.next_async().await? {
                Ok(bucket) => bucket,
                Err(e) => return Some(Err(e)),
            };
            match self.fill(Io::Async, bucket).await {
                Ok(()) => {}
                Err(e) => return Some(Err(e)),
            }
        }
    }

    async fn fill(&mut self, io: Io, bucket: Vec<Vec<u8>>) -> Result<()> {
        let fields = bucket
            .into_iter()
            .map(|m| field_name(m).map_err(|r| corrupt(&self.map.registry, r)))
            .collect::<Result<Vec<_>>>()?;
        self.ready.extend(self.map.values_of(io, fields).await?);
        Ok(())
    }
}

/// The iterator of [`CounterMap::fields_iter`]: every registered field, a
/// registry bucket at a time.
#[derive(Debug)]
pub struct FieldsIter<'m> {
    map: &'m CounterMap,
    buckets: mcds_set::MembersIter<'m>,
    ready: VecDeque<String>,
}

impl FieldsIter<'_> {
    /// The next field without blocking the thread: `None` at the end.
    pub async fn next_async(&mut self) -> Option<Result<String>> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                return Some(Ok(next));
            }
            match self.buckets.next_async().await? {
                Ok(bucket) => {
                    if let Err(e) = self.fill(bucket) {
                        return Some(Err(e));
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }

    fn fill(&mut self, bucket: Vec<Vec<u8>>) -> Result<()> {
        for m in bucket {
            let field = field_name(m).map_err(|r| corrupt(&self.map.registry, r))?;
            self.ready.push_back(field);
        }
        Ok(())
    }
}

impl Iterator for FieldsIter<'_> {
    type Item = Result<String>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                return Some(Ok(next));
            }
            match self.buckets.next()? {
                Ok(bucket) => {
                    if let Err(e) = self.fill(bucket) {
                        return Some(Err(e));
                    }
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for GetAllIter<'_> {
    type Item = Result<(String, i64)>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(next) = self.ready.pop_front() {
                return Some(Ok(next));
            }
            let bucket = match self.buckets.next()? {
                Ok(bucket) => bucket,
                Err(e) => return Some(Err(e)),
            };
            if let Err(e) = block_on(self.fill(Io::Blocking, bucket)) {
                return Some(Err(e));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of earlier releases (`v:<hash as {:032x}>`, `.<salt>` past
    /// the first try): made from a prefix since, they must not change.
    #[test]
    fn field_keys_keep_their_layout() {
        use mcds_core::MemoryStore;
        let scope = Scope::new(Arc::new(MemoryStore::new()))
            .with_prefix("app:")
            .unwrap();
        let map = CounterMap::new(scope.clone(), "hits:%x").unwrap();
        for field in ["/a", "", "ü", &"x".repeat(MAX_FIELD_LEN)] {
            if field.is_empty() {
                assert!(map.field_key(field).is_err());
                continue;
            }
            let hash = stable_hash128(field.as_bytes());
            let expected = scope
                .key("cmap", "hits:%x", format_args!("v:{hash:032x}"))
                .unwrap();
            assert_eq!(map.field_key(field).unwrap(), expected, "{field}");
        }
    }

    #[test]
    fn values_round_trip_through_the_offset() {
        for v in [MIN_VALUE, -1, 0, 1, MAX_VALUE] {
            assert_eq!(decode_value(encode_value(v)), v);
        }
        assert_eq!(encode_value(MIN_VALUE), 0, "decr's floor is MIN_VALUE");
        assert_eq!(encode_value(0), 1 << 61);
        // A valid value plus the largest amount stays below 2^63, where
        // memcached's incr starts to misread counters.
        assert!(encode_value(MAX_VALUE) + MAX_AMOUNT < 1 << 63);
        assert_eq!(decode_value(encode_value(MAX_VALUE) + 1), MAX_VALUE + 1);
    }

    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(parse_units("1.25", 2, false).unwrap(), 125);
        assert_eq!(parse_units("-0.1", 3, false).unwrap(), -100);
        assert_eq!(parse_units("+7", 0, false).unwrap(), 7);
        assert_eq!(parse_units("1.500", 1, false).unwrap(), 15);
        assert!(parse_units("1.55", 1, false).is_err());
        assert_eq!(parse_units("1.55", 1, true).unwrap(), 16);
        assert_eq!(parse_units("-1.55", 1, true).unwrap(), -16);
        for bad in ["", "-", ".5", "1.", "1e3", "1,5", " 1", "0x10", "--1"] {
            assert!(parse_units(bad, 2, false).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_units("-9223372036854775808", 0, false).unwrap(),
            i64::MIN
        );
        assert!(parse_units("9223372036854775808", 0, false).is_err());
        assert!(parse_units("10", 18, false).is_err());
        assert!(parse_units(&"9".repeat(100), 0, false).is_err());
        assert_eq!(
            Decimal {
                units: i64::MIN,
                scale: 18
            }
            .to_string(),
            "-9.223372036854775808"
        );
        assert_eq!(
            Decimal {
                units: -5,
                scale: 2
            }
            .to_string(),
            "-0.05"
        );
    }

    #[test]
    fn registry_members_must_be_field_names() {
        assert_eq!(field_name(b"a b".to_vec()).unwrap(), "a b");
        assert!(field_name(Vec::new()).is_err());
        assert!(field_name(vec![b'x'; MAX_FIELD_LEN + 1]).is_err());
        assert!(field_name(vec![0xff]).is_err());
    }
}
