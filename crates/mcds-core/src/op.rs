//! Operations as values: [`Op`] (the arguments of one [`Store`] operation)
//! and [`Reply`] (its result). [`Store::execute`] runs one;
//! [`Store::pipeline`] runs a batch, one round trip per server.
//!
//! [`Store::pipeline`] takes a slice of [`Op`]s and returns one
//! `Result<`[`Reply`]`>` per op, in order. The default runs them one by one;
//! the memcached backend sends each server's share as one payload of meta
//! commands (quiet where the reply carries nothing, all tagged with an
//! opaque) ending in `mn`, writing to every server before reading any reply,
//! so a batch costs one round trip of latency however many servers it
//! touches. The embedded store applies a batch as one "round trip".
//!
//! Ops in a batch are **not** a transaction: each is applied on its own, in
//! order per server, and each has its own result. A failure on one server
//! fails only the ops sent there.
//!
//! ```
//! use mcds_core::{Key, MemoryStore, Op, Store, Ttl, traffic};
//!
//! let store = MemoryStore::new();
//! let (a, b) = (Key::new("a")?, Key::new("b")?);
//! let ops = [
//!     Op::IncrOrInit { key: &a, delta: 1, initial: 1, ttl: Ttl::Never },
//!     Op::Set { key: &b, value: b"x", ttl: Ttl::secs(60) },
//!     Op::Get(&b),
//! ];
//! let (replies, t) = traffic::measure(|| store.pipeline(&ops));
//! assert_eq!(t.round_trips, 1);
//! let mut replies = replies.into_iter();
//! assert_eq!(replies.next().unwrap()?.value()?, 1);
//! replies.next().unwrap()?;
//! assert_eq!(replies.next().unwrap()?.item()?.unwrap().value, b"x");
//! # Ok::<(), mcds_core::Error>(())
//! ```

use crate::error::{Error, Result};
use crate::item::{CasOutcome, DeleteOutcome, Item, Stored};
use crate::key::Key;
use crate::store::Store;
use crate::ttl::Ttl;

/// One operation of a [`Store::pipeline`] batch: the arguments of the
/// [`Store`] method of the same name.
#[derive(Clone, Copy, Debug)]
pub enum Op<'a> {
    /// [`Store::get`] → [`Reply::Item`].
    Get(&'a Key),
    /// [`Store::set`] → [`Reply::Cas`].
    Set {
        /// The key.
        key: &'a Key,
        /// The value.
        value: &'a [u8],
        /// Its TTL.
        ttl: Ttl,
    },
    /// [`Store::add`] → [`Reply::Stored`].
    Add {
        /// The key.
        key: &'a Key,
        /// The value.
        value: &'a [u8],
        /// Its TTL.
        ttl: Ttl,
    },
    /// [`Store::replace`] → [`Reply::Stored`].
    Replace {
        /// The key.
        key: &'a Key,
        /// The value.
        value: &'a [u8],
        /// Its TTL.
        ttl: Ttl,
    },
    /// [`Store::cas`] → [`Reply::CasOutcome`].
    Cas {
        /// The key.
        key: &'a Key,
        /// The value.
        value: &'a [u8],
        /// Its TTL.
        ttl: Ttl,
        /// The CAS id the item must still have.
        cas: u64,
    },
    /// [`Store::append`] → [`Reply::Applied`].
    Append {
        /// The key.
        key: &'a Key,
        /// The bytes to append.
        value: &'a [u8],
    },
    /// [`Store::prepend`] → [`Reply::Applied`].
    Prepend {
        /// The key.
        key: &'a Key,
        /// The bytes to prepend.
        value: &'a [u8],
    },
    /// [`Store::append_or_add`] → [`Reply::Done`].
    AppendOrAdd {
        /// The key.
        key: &'a Key,
        /// The bytes to append (or the new value).
        value: &'a [u8],
        /// The TTL if the key is created.
        ttl: Ttl,
    },
    /// [`Store::incr`] → [`Reply::Counter`].
    Incr {
        /// The key.
        key: &'a Key,
        /// How much to add.
        delta: u64,
    },
    /// [`Store::decr`] → [`Reply::Counter`].
    Decr {
        /// The key.
        key: &'a Key,
        /// How much to subtract.
        delta: u64,
    },
    /// [`Store::incr_or_init`] → [`Reply::Value`].
    IncrOrInit {
        /// The key.
        key: &'a Key,
        /// How much to add.
        delta: u64,
        /// The value of a new counter.
        initial: u64,
        /// The TTL of a new counter.
        ttl: Ttl,
    },
    /// [`Store::delete`] → [`Reply::Applied`].
    Delete(&'a Key),
    /// [`Store::delete_cas`] → [`Reply::Deleted`].
    DeleteCas {
        /// The key.
        key: &'a Key,
        /// The CAS id the item must still have.
        cas: u64,
    },
    /// [`Store::touch`] → [`Reply::Applied`].
    Touch {
        /// The key.
        key: &'a Key,
        /// The new TTL.
        ttl: Ttl,
    },
}

impl<'a> Op<'a> {
    /// The op's key.
    pub fn key(&self) -> &'a Key {
        match *self {
            Op::Get(key) | Op::Delete(key) => key,
            Op::Set { key, .. }
            | Op::Add { key, .. }
            | Op::Replace { key, .. }
            | Op::Cas { key, .. }
            | Op::Append { key, .. }
            | Op::Prepend { key, .. }
            | Op::AppendOrAdd { key, .. }
            | Op::Incr { key, .. }
            | Op::Decr { key, .. }
            | Op::IncrOrInit { key, .. }
            | Op::DeleteCas { key, .. }
            | Op::Touch { key, .. } => key,
        }
    }

    /// The [`Store`] method's name ("get", "incr_or_init", ...).
    pub fn name(&self) -> &'static str {
        match self {
            Op::Get(_) => "get",
            Op::Set { .. } => "set",
            Op::Add { .. } => "add",
            Op::Replace { .. } => "replace",
            Op::Cas { .. } => "cas",
            Op::Append { .. } => "append",
            Op::Prepend { .. } => "prepend",
            Op::AppendOrAdd { .. } => "append_or_add",
            Op::Incr { .. } => "incr",
            Op::Decr { .. } => "decr",
            Op::IncrOrInit { .. } => "incr_or_init",
            Op::Delete(_) => "delete",
            Op::DeleteCas { .. } => "delete_cas",
            Op::Touch { .. } => "touch",
        }
    }

    /// Whether the op may change the store (everything but `get`).
    pub fn has_side_effect(&self) -> bool {
        !matches!(self, Op::Get(_))
    }
}

/// The result of one [`Op`]: the return value of the [`Store`] method of the
/// same name. The accessors return [`Error::Protocol`] when the reply is of
/// another kind than asked for (a bug in the caller or the backend).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// From [`Op::Get`].
    Item(Option<Item>),
    /// From [`Op::Set`]: the new CAS id.
    Cas(u64),
    /// From [`Op::Add`] and [`Op::Replace`].
    Stored(Stored),
    /// From [`Op::Cas`].
    CasOutcome(CasOutcome),
    /// From [`Op::Append`], [`Op::Prepend`], [`Op::Delete`], [`Op::Touch`]:
    /// whether the key existed.
    Applied(bool),
    /// From [`Op::AppendOrAdd`].
    Done,
    /// From [`Op::Incr`] and [`Op::Decr`]: the new value, `None` if the key
    /// is missing.
    Counter(Option<u64>),
    /// From [`Op::IncrOrInit`]: the new value.
    Value(u64),
    /// From [`Op::DeleteCas`].
    Deleted(DeleteOutcome),
}

fn mismatch(want: &str, got: &Reply) -> Error {
    Error::Internal(format!(
        "a backend answered a {want} operation with {got:?}"
    ))
}

impl Reply {
    /// The item of a [`Reply::Item`].
    #[inline]
    pub fn item(self) -> Result<Option<Item>> {
        match self {
            Reply::Item(item) => Ok(item),
            other => Err(mismatch("get", &other)),
        }
    }

    /// The CAS id of a [`Reply::Cas`].
    #[inline]
    pub fn cas(self) -> Result<u64> {
        match self {
            Reply::Cas(cas) => Ok(cas),
            other => Err(mismatch("set", &other)),
        }
    }

    /// The outcome of a [`Reply::Stored`].
    #[inline]
    pub fn stored(self) -> Result<Stored> {
        match self {
            Reply::Stored(s) => Ok(s),
            other => Err(mismatch("add/replace", &other)),
        }
    }

    /// The outcome of a [`Reply::CasOutcome`].
    #[inline]
    pub fn cas_outcome(self) -> Result<CasOutcome> {
        match self {
            Reply::CasOutcome(c) => Ok(c),
            other => Err(mismatch("cas", &other)),
        }
    }

    /// The flag of a [`Reply::Applied`].
    #[inline]
    pub fn applied(self) -> Result<bool> {
        match self {
            Reply::Applied(b) => Ok(b),
            other => Err(mismatch("append/prepend/delete/touch", &other)),
        }
    }

    /// Check that this is a [`Reply::Done`].
    #[inline]
    pub fn done(self) -> Result<()> {
        match self {
            Reply::Done => Ok(()),
            other => Err(mismatch("append_or_add", &other)),
        }
    }

    /// The value of a [`Reply::Counter`].
    #[inline]
    pub fn counter(self) -> Result<Option<u64>> {
        match self {
            Reply::Counter(v) => Ok(v),
            other => Err(mismatch("incr/decr", &other)),
        }
    }

    /// The value of a [`Reply::Value`].
    #[inline]
    pub fn value(self) -> Result<u64> {
        match self {
            Reply::Value(v) => Ok(v),
            other => Err(mismatch("incr_or_init", &other)),
        }
    }

    /// The outcome of a [`Reply::Deleted`].
    #[inline]
    pub fn deleted(self) -> Result<DeleteOutcome> {
        match self {
            Reply::Deleted(d) => Ok(d),
            other => Err(mismatch("delete_cas", &other)),
        }
    }
}

/// Run exactly `N` ops in one batch and get their `N` results; a backend
/// that answers with another number of results is an [`Error::Protocol`].
///
/// ```
/// use mcds_core::{Key, MemoryStore, Op, Ttl, run_pipeline};
///
/// let store = MemoryStore::new();
/// let k = Key::new("k")?;
/// let [set, get] = run_pipeline(&store, [
///     Op::Set { key: &k, value: b"v", ttl: Ttl::Never },
///     Op::Get(&k),
/// ])?;
/// set?;
/// assert_eq!(get?.item()?.unwrap().value, b"v");
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub fn run_pipeline<S: Store + ?Sized, const N: usize>(
    store: &S,
    ops: [Op<'_>; N],
) -> Result<[Result<Reply>; N]> {
    exactly(store.pipeline(&ops), store.backend_name())
}

/// A batch's results as an array of `N`, or [`Error::Internal`] naming the
/// backend when it answered with another number (shared by
/// [`run_pipeline`] and [`Access::run_pipeline`](crate::Access::run_pipeline)).
pub(crate) fn exactly<const N: usize>(
    replies: Vec<Result<Reply>>,
    backend: &str,
) -> Result<[Result<Reply>; N]> {
    let got = replies.len();
    <[Result<Reply>; N]>::try_from(replies).map_err(|_| {
        Error::Internal(format!(
            "the {backend} backend returned {got} results for a batch of {N} ops"
        ))
    })
}
