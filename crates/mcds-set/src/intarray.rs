//! [`IntArray`]: the set codec over integers.

use std::sync::Arc;

use mcds_core::{Error, Io, Result, Scope, blocking_and_async};

use crate::set::Set;

/// A set of 64-bit integers (the array of the memcached data-structures article, part 2), written as decimal members
/// of a text-codec [`Set`]: `+17 +42 -17 `. Same costs as [`Set`]: one
/// append per batch, one read for the members. Every method that reaches
/// the store has an async twin (`add_async`, …).
///
/// Key: `<prefix>ints:<name>:log`.
///
/// ```
/// use std::sync::Arc;
/// use mcds_core::MemoryStore;
/// use mcds_set::IntArray;
///
/// let ids = IntArray::new(Arc::new(MemoryStore::new()), "active-ids")?;
/// ids.add(&[3, -1, 7])?;
/// ids.remove(&[3])?;
/// assert_eq!(ids.members()?, vec![-1, 7]);
/// # Ok::<(), mcds_core::Error>(())
/// ```
///
/// # Limits
///
/// | limit | past it | written |
/// |---|---|---|
/// | values: every `i64`, `i64::MIN` to `i64::MAX` (at most 20 decimal bytes, so no value is too large) | — | — |
/// | name: key `<prefix>ints:<name>:log` ≤ 218 bytes, room for a bucket's 32-byte suffix (a name of up to 209 bytes without a prefix) | [`Error::InvalidKey`] from `new` | nothing |
/// | values held: as a [`Set`]'s members ([its limits](Set#limits)) | as a `Set` | as a `Set` |
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses the array's buckets (its values, or
/// [`Error::Lost`] as for a [`Set`]) or its directory (every value; adds
/// after the loss start it again). No read can tell a lost array from
/// one never written: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct IntArray {
    set: Set,
}

fn decimal(values: &[i64]) -> Vec<String> {
    values.iter().map(i64::to_string).collect()
}

impl IntArray {
    /// The array `name` in `scope` (a store, or a [`Scope`] with a key
    /// prefix).
    pub fn new(scope: impl Into<Scope>, name: &str) -> Result<IntArray> {
        let scope = scope.into();
        let key = scope.key("ints", name, "log")?;
        crate::buckets::check_key(&key)?;
        Ok(IntArray {
            set: Set::with_key(Arc::clone(scope.store()), key),
        })
    }

    /// Add `values` (one append).
    pub fn add(&self, values: &[i64]) -> Result<()> {
        self.set.add(&decimal(values))
    }

    /// [`add`](IntArray::add) without blocking the thread.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use mcds_core::MemoryStore;
    /// # use mcds_set::IntArray;
    /// # mcds_core::block_on(async {
    /// let ids = IntArray::new(Arc::new(MemoryStore::new()), "ids")?;
    /// ids.add_async(&[3, -1]).await?;
    /// assert_eq!(ids.members_async().await?, vec![3, -1]);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn add_async(&self, values: &[i64]) -> Result<()> {
        self.set.add_async(&decimal(values)).await
    }

    /// Remove `values` (one append).
    pub fn remove(&self, values: &[i64]) -> Result<()> {
        self.set.remove(&decimal(values))
    }

    /// [`remove`](IntArray::remove) without blocking the thread.
    pub async fn remove_async(&self, values: &[i64]) -> Result<()> {
        self.set.remove_async(&decimal(values)).await
    }

    /// The values in first-insertion order. A member that is not a decimal
    /// `i64` (someone else wrote the key) is [`Error::Corrupt`].
    #[blocking_and_async(pub)]
    async fn members_io(&self, io: Io) -> Result<Vec<i64>> {
        self.set
            .members_io(io)
            .await?
            .into_iter()
            .map(|m| {
                std::str::from_utf8(&m)
                    .ok()
                    .and_then(|s| s.parse::<i64>().ok())
                    .ok_or_else(|| Error::Corrupt {
                        key: self.set.key().display(),
                        reason: format!(
                            "member {:?} is not an integer",
                            String::from_utf8_lossy(&m)
                        ),
                    })
            })
            .collect()
    }

    /// Whether `value` is present.
    pub fn contains(&self, value: i64) -> Result<bool> {
        self.set.contains(value.to_string())
    }

    /// [`contains`](IntArray::contains) without blocking the thread.
    pub async fn contains_async(&self, value: i64) -> Result<bool> {
        self.set.contains_async(value.to_string()).await
    }

    /// Delete the array.
    pub fn clear(&self) -> Result<()> {
        self.set.clear()
    }

    /// [`clear`](IntArray::clear) without blocking the thread.
    pub async fn clear_async(&self) -> Result<()> {
        self.set.clear_async().await
    }
}
