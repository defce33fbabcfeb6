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
use crate::key::Key;
use crate::store::Store;
use crate::ttl::Ttl;

/// **The op table**: every memcached operation mcds uses, declared once.
///
/// `for_each_op!(m)` calls the macro `m` with the whole table, and each
/// place that needs one thing per op generates it from there:
///
/// * here: the [`Op`] variants, [`OpKind`], [`Op::key`], [`Op::name`],
///   [`Op::has_side_effect`], [`Op::build`], the [`Reply`] variants and
///   their accessors;
/// * in `store.rs`: the typed [`Store`] method of each op (its doc comment
///   is the one written in the table);
/// * in `access.rs`: its async twin on [`Access`](crate::Access).
///
/// The differential test and the fuzz harnesses build their ops with
/// [`Op::build`] over [`OpKind::ALL`], so a new op is generated, compared
/// and fuzzed without touching them. What stays per backend is encoding
/// and decoding (see [`Store`]'s docs for the list of places a new op
/// touches).
///
/// An entry reads: doc comment (the typed method's), `read` or `write`
/// (whether the op may change the store), the method's name, the variant
/// with its fields (a tuple variant has one field, the key), `->` the
/// typed method's result and the [`Reply`] accessor that reads it. The
/// reply kinds follow the ops.
#[doc(hidden)]
#[macro_export]
macro_rules! for_each_op {
    ($callback:ident) => {
        $callback! {
            ops {
                /// Read one item.
                read get Get(&'a $crate::Key) -> Option<$crate::Item>, item;

                /// Store unconditionally; returns the new CAS id.
                write set Set {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The value.
                    value: &'a [u8],
                    /// Its TTL.
                    ttl: $crate::Ttl,
                } -> u64, cas;

                /// Store only if the key does not exist.
                write add Add {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The value.
                    value: &'a [u8],
                    /// Its TTL.
                    ttl: $crate::Ttl,
                } -> $crate::Stored, stored;

                /// Store only if the key exists.
                write replace Replace {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The value.
                    value: &'a [u8],
                    /// Its TTL.
                    ttl: $crate::Ttl,
                } -> $crate::Stored, stored;

                /// Store only if the item's CAS id is still `cas`.
                write cas Cas {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The value.
                    value: &'a [u8],
                    /// Its TTL.
                    ttl: $crate::Ttl,
                    /// The CAS id the item must still have.
                    cas: u64,
                } -> $crate::CasOutcome, cas_outcome;

                /// Append to an existing value, keeping its TTL. `false` if the key does
                /// not exist. An item that would grow past the item limit is
                /// [`Error::ValueTooLarge`] and is left as it was.
                write append Append {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The bytes to append.
                    value: &'a [u8],
                } -> bool, applied;

                /// Prepend to an existing value, keeping its TTL. `false` if the key does
                /// not exist.
                write prepend Prepend {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The bytes to prepend.
                    value: &'a [u8],
                } -> bool, applied;

                /// Append, creating the key with `value` and `ttl` if it is missing. The
                /// TTL applies only on creation.
                write append_or_add AppendOrAdd {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The bytes to append (or the new value).
                    value: &'a [u8],
                    /// The TTL if the key is created.
                    ttl: $crate::Ttl,
                } -> (), done;

                /// Add `delta` to a counter, wrapping at 2^64. `None` if the key does not
                /// exist; [`Error::NonNumeric`] if the value is not a number.
                write incr Incr {
                    /// The key.
                    key: &'a $crate::Key,
                    /// How much to add.
                    delta: u64,
                } -> Option<u64>, counter;

                /// Subtract `delta` from a counter, stopping at 0. `None` if the key does
                /// not exist; [`Error::NonNumeric`] if the value is not a number.
                write decr Decr {
                    /// The key.
                    key: &'a $crate::Key,
                    /// How much to subtract.
                    delta: u64,
                } -> Option<u64>, counter;

                /// Add `delta` to a counter, or create it with the value `initial` (not
                /// `initial + delta`; memcached's `ma … N J D` also stores just J) and
                /// `ttl` if it is missing. Atomic: concurrent callers never lose an
                /// update. Returns the counter's new value.
                write incr_or_init IncrOrInit {
                    /// The key.
                    key: &'a $crate::Key,
                    /// How much to add.
                    delta: u64,
                    /// The value of a new counter.
                    initial: u64,
                    /// The TTL of a new counter.
                    ttl: $crate::Ttl,
                } -> u64, value;

                /// Delete a key; `false` if it did not exist.
                write delete Delete(&'a $crate::Key) -> bool, applied;

                /// Delete a key only if its CAS id is still `cas`, atomically. A backend
                /// that cannot do it in one atomic step answers [`Error::Unsupported`]:
                /// a conditional delete built from other operations (read, compare,
                /// delete) has a window in which it deletes another writer's item, and a
                /// lock released that way could delete the next holder's lock.
                write delete_cas DeleteCas {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The CAS id the item must still have.
                    cas: u64,
                } -> $crate::DeleteOutcome, deleted;

                /// Give an existing key a new TTL; `false` if it does not exist.
                write touch Touch {
                    /// The key.
                    key: &'a $crate::Key,
                    /// The new TTL.
                    ttl: $crate::Ttl,
                } -> bool, applied;
            }
            replies {
                /// From [`Op::Get`].
                Item(Option<$crate::Item>) item;
                /// From [`Op::Set`]: the new CAS id.
                Cas(u64) cas;
                /// From [`Op::Add`] and [`Op::Replace`].
                Stored($crate::Stored) stored;
                /// From [`Op::Cas`].
                CasOutcome($crate::CasOutcome) cas_outcome;
                /// From [`Op::Append`], [`Op::Prepend`], [`Op::Delete`], [`Op::Touch`]:
                /// whether the key existed.
                Applied(bool) applied;
                /// From [`Op::AppendOrAdd`].
                Done done;
                /// From [`Op::Incr`] and [`Op::Decr`]: the new value, `None` if the key
                /// is missing.
                Counter(Option<u64>) counter;
                /// From [`Op::IncrOrInit`]: the new value.
                Value(u64) value;
                /// From [`Op::DeleteCas`].
                Deleted($crate::DeleteOutcome) deleted;
            }
        }
    };
}

/// The pattern of an op of kind `$variant` that binds its key to `$key`.
macro_rules! key_pattern {
    ($variant:ident ($ty:ty), $key:ident) => {
        Op::$variant($key)
    };
    ($variant:ident { $($fields:tt)* }, $key:ident) => {
        Op::$variant { $key, .. }
    };
}

/// An op of kind `$variant`, each field from [`OpArg::take`].
macro_rules! build_op {
    ($variant:ident ($ty:ty), $args:ident) => {
        Op::$variant(OpArg::take($args, "key"))
    };
    ($variant:ident { $( $(#[$doc:meta])* $field:ident : $ty:ty ),* $(,)? }, $args:ident) => {
        Op::$variant { $( $field: OpArg::take($args, stringify!($field)) ),* }
    };
}

/// Give each field of an op of kind `$variant`, bound by [`key_pattern!`]
/// style, to an [`OpFields`] sink.
macro_rules! give_fields {
    ($op:expr, $variant:ident ($ty:ty), $sink:ident) => {
        if let Op::$variant(key) = $op {
            OpArg::give(key, $sink, "key");
        }
    };
    ($op:expr, $variant:ident { $( $(#[$doc:meta])* $field:ident : $ty:ty ),* $(,)? }, $sink:ident) => {
        if let Op::$variant { $($field),* } = $op {
            $( OpArg::give($field, $sink, stringify!($field)); )*
        }
    };
}

/// `true` for `write`, `false` for `read`.
macro_rules! writes {
    (read) => {
        false
    };
    (write) => {
        true
    };
}

/// The accessor of one [`Reply`] kind.
macro_rules! reply_accessor {
    ($(#[doc = $doc:literal])* $variant:ident ($ty:ty) $accessor:ident) => {
        #[doc = concat!("The content of a [`Reply::", stringify!($variant), "`].")]
        #[inline]
        pub fn $accessor(self) -> Result<$ty> {
            match self {
                Reply::$variant(v) => Ok(v),
                other => Err(mismatch(stringify!($variant), &other)),
            }
        }
    };
    ($(#[doc = $doc:literal])* $variant:ident $accessor:ident) => {
        #[doc = concat!("Check that this is a [`Reply::", stringify!($variant), "`].")]
        #[inline]
        pub fn $accessor(self) -> Result<()> {
            match self {
                Reply::$variant => Ok(()),
                other => Err(mismatch(stringify!($variant), &other)),
            }
        }
    };
}

/// Generates [`Op`], [`OpKind`] and [`Reply`] from the table.
macro_rules! define_ops {
    (
        ops { $(
            $(#[doc = $doc:literal])*
            $rw:ident $method:ident $variant:ident $shape:tt -> $ret:ty, $accessor:ident;
        )* }
        replies { $(
            $(#[doc = $rdoc:literal])*
            $rvariant:ident $( ($rty:ty) )? $raccessor:ident;
        )* }
    ) => {
        /// One operation of a [`Store::pipeline`] batch: the arguments of the
        /// [`Store`] method of the same name. Generated from the op table
        /// (`for_each_op!` in `op.rs`), like [`OpKind`], [`Reply`] and the
        /// typed methods of [`Store`] and [`Access`](crate::Access).
        #[derive(Clone, Copy, Debug)]
        pub enum Op<'a> { $(
            #[doc = concat!("[`Store::", stringify!($method), "`]; its reply is read by [`Reply::", stringify!($accessor), "`].")]
            $variant $shape,
        )* }

        /// The kind of an [`Op`], without its arguments: [`Op::kind`], and
        /// [`OpKind::ALL`] for code that covers every op (the differential
        /// test, the fuzz harnesses).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum OpKind { $(
            #[doc = concat!("[`Op::", stringify!($variant), "`].")]
            $variant,
        )* }

        impl OpKind {
            /// Every kind, in the table's order.
            pub const ALL: &'static [OpKind] = &[$(OpKind::$variant),*];

            /// The [`Store`] method's name ("get", "incr_or_init", ...).
            pub fn name(self) -> &'static str {
                match self { $( OpKind::$variant => stringify!($method), )* }
            }

            /// Whether an op of this kind may change the store (everything
            /// but `get`).
            pub fn has_side_effect(self) -> bool {
                match self { $( OpKind::$variant => writes!($rw), )* }
            }
        }

        impl<'a> Op<'a> {
            /// The op's kind.
            #[inline]
            pub fn kind(&self) -> OpKind {
                match self { $( Op::$variant { .. } => OpKind::$variant, )* }
            }

            /// The op's key.
            #[inline]
            pub fn key(&self) -> &'a Key {
                match *self { $( key_pattern!($variant $shape, key) => key, )* }
            }

            /// An op of kind `kind`, each argument taken from `args` by its
            /// field name ("key", "value", "ttl", "delta", "cas", ...): how
            /// the differential test and the fuzz harnesses make one op of
            /// every kind without a list of their own.
            pub fn build(kind: OpKind, args: &mut dyn OpArgs<'a>) -> Op<'a> {
                match kind { $( OpKind::$variant => build_op!($variant $shape, args), )* }
            }

            /// Give each argument of the op, by field name, to `sink`: the
            /// inverse of [`Op::build`] ([`OwnedOp`] keeps an op this way).
            pub fn fields(&self, sink: &mut dyn OpFields) {
                match self.kind() { $( OpKind::$variant => give_fields!(*self, $variant $shape, sink), )* }
            }
        }

        /// The result of one [`Op`]: the return value of the [`Store`] method of the
        /// same name. The accessors return [`Error::Internal`] when the reply is of
        /// another kind than asked for (a bug in the caller or the backend).
        #[derive(Clone, Debug, PartialEq, Eq)]
        pub enum Reply { $(
            $(#[doc = $rdoc])*
            $rvariant $( ($rty) )?,
        )* }

        impl Reply { $(
            reply_accessor!($rvariant $( ($rty) )? $raccessor);
        )* }
    };
}

for_each_op!(define_ops);

impl Op<'_> {
    /// The [`Store`] method's name ("get", "incr_or_init", ...).
    #[inline]
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// Whether the op may change the store (everything but `get`).
    #[inline]
    pub fn has_side_effect(&self) -> bool {
        self.kind().has_side_effect()
    }
}

/// Where [`Op::build`] takes an op's arguments from: one method per
/// argument type, each told the field's name.
pub trait OpArgs<'a> {
    /// The key (every op has one; `field` is "key").
    fn key(&mut self, field: &'static str) -> &'a Key;
    /// A byte string ("value").
    fn bytes(&mut self, field: &'static str) -> &'a [u8];
    /// A TTL ("ttl").
    fn ttl(&mut self, field: &'static str) -> Ttl;
    /// A number ("delta", "initial", "cas").
    fn number(&mut self, field: &'static str) -> u64;
}

/// Where [`Op::fields`] gives an op's arguments: one method per argument
/// type, each told the field's name.
pub trait OpFields {
    /// The key ("key").
    fn key(&mut self, field: &'static str, key: &Key);
    /// A byte string ("value").
    fn bytes(&mut self, field: &'static str, bytes: &[u8]);
    /// A TTL ("ttl").
    fn ttl(&mut self, field: &'static str, ttl: Ttl);
    /// A number ("delta", "initial", "cas").
    fn number(&mut self, field: &'static str, n: u64);
}

/// An argument type of an [`Op`] field: which [`OpArgs`] method supplies
/// it, and which [`OpFields`] method takes it.
pub trait OpArg<'a>: Sized {
    /// Take the field `field` from `args`.
    fn take(args: &mut dyn OpArgs<'a>, field: &'static str) -> Self;
    /// Give this value of the field `field` to `sink`.
    fn give(self, sink: &mut dyn OpFields, field: &'static str);
}

impl<'a> OpArg<'a> for &'a Key {
    fn take(args: &mut dyn OpArgs<'a>, field: &'static str) -> Self {
        args.key(field)
    }
    fn give(self, sink: &mut dyn OpFields, field: &'static str) {
        sink.key(field, self)
    }
}

impl<'a> OpArg<'a> for &'a [u8] {
    fn take(args: &mut dyn OpArgs<'a>, field: &'static str) -> Self {
        args.bytes(field)
    }
    fn give(self, sink: &mut dyn OpFields, field: &'static str) {
        sink.bytes(field, self)
    }
}

impl<'a> OpArg<'a> for Ttl {
    fn take(args: &mut dyn OpArgs<'a>, field: &'static str) -> Self {
        args.ttl(field)
    }
    fn give(self, sink: &mut dyn OpFields, field: &'static str) {
        sink.ttl(field, self)
    }
}

impl<'a> OpArg<'a> for u64 {
    fn take(args: &mut dyn OpArgs<'a>, field: &'static str) -> Self {
        args.number(field)
    }
    fn give(self, sink: &mut dyn OpFields, field: &'static str) {
        sink.number(field, self)
    }
}

/// An [`Op`] that owns its arguments, for code that must keep an op past
/// the borrow it was made from (a store that runs the op on another
/// thread). [`OwnedOp::op`] gives the op back.
///
/// ```
/// use mcds_core::{Key, Op, OwnedOp, Ttl};
///
/// let key = Key::new("k")?;
/// let owned = OwnedOp::from(&Op::Set { key: &key, value: b"v", ttl: Ttl::secs(9) });
/// drop(key);
/// let Op::Set { key, value, ttl } = owned.op() else { unreachable!() };
/// assert_eq!((key.as_bytes(), value, ttl), (&b"k"[..], &b"v"[..], Ttl::secs(9)));
/// # Ok::<(), mcds_core::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct OwnedOp {
    kind: OpKind,
    keys: Vec<(&'static str, Key)>,
    bytes: Vec<(&'static str, Vec<u8>)>,
    ttls: Vec<(&'static str, Ttl)>,
    numbers: Vec<(&'static str, u64)>,
}

impl From<&Op<'_>> for OwnedOp {
    fn from(op: &Op<'_>) -> OwnedOp {
        let mut owned = OwnedOp {
            kind: op.kind(),
            keys: Vec::new(),
            bytes: Vec::new(),
            ttls: Vec::new(),
            numbers: Vec::new(),
        };
        op.fields(&mut owned);
        owned
    }
}

impl OpFields for OwnedOp {
    fn key(&mut self, field: &'static str, key: &Key) {
        self.keys.push((field, key.clone()));
    }
    fn bytes(&mut self, field: &'static str, bytes: &[u8]) {
        self.bytes.push((field, bytes.to_vec()));
    }
    fn ttl(&mut self, field: &'static str, ttl: Ttl) {
        self.ttls.push((field, ttl));
    }
    fn number(&mut self, field: &'static str, n: u64) {
        self.numbers.push((field, n));
    }
}

/// The field `field` of `list` (every field an op gave is there: the list
/// was filled by the same op kind's [`Op::fields`]).
fn named<'v, T>(list: &'v [(&'static str, T)], field: &str) -> &'v T {
    &list
        .iter()
        .find(|(name, _)| *name == field)
        .unwrap_or_else(|| panic!("OwnedOp has no field {field:?}"))
        .1
}

impl<'a> OpArgs<'a> for &'a OwnedOp {
    fn key(&mut self, field: &'static str) -> &'a Key {
        named(&self.keys, field)
    }
    fn bytes(&mut self, field: &'static str) -> &'a [u8] {
        named::<Vec<u8>>(&self.bytes, field)
    }
    fn ttl(&mut self, field: &'static str) -> Ttl {
        *named(&self.ttls, field)
    }
    fn number(&mut self, field: &'static str) -> u64 {
        *named(&self.numbers, field)
    }
}

impl OwnedOp {
    /// The op, borrowing from this.
    pub fn op(&self) -> Op<'_> {
        Op::build(self.kind, &mut &*self)
    }

    /// Its kind.
    pub fn kind(&self) -> OpKind {
        self.kind
    }
}

fn mismatch(want: &str, got: &Reply) -> Error {
    Error::Internal(format!(
        "a backend answered {got:?} where a Reply::{want} was expected"
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Distinct arguments per field, so a field given back in another's
    /// place shows.
    struct Distinct<'a>(&'a Key);

    impl<'a> OpArgs<'a> for Distinct<'a> {
        fn key(&mut self, _field: &'static str) -> &'a Key {
            self.0
        }
        fn bytes(&mut self, _field: &'static str) -> &'a [u8] {
            b"bytes"
        }
        fn ttl(&mut self, _field: &'static str) -> Ttl {
            Ttl::secs(77)
        }
        fn number(&mut self, field: &'static str) -> u64 {
            field.len() as u64 * 1000 + 7
        }
    }

    #[test]
    fn every_kind_survives_owning_and_back() {
        let key = Key::new("k").unwrap();
        for &kind in OpKind::ALL {
            let op = Op::build(kind, &mut Distinct(&key));
            assert_eq!(op.kind(), kind);
            assert_eq!(op.name(), kind.name());
            let owned = OwnedOp::from(&op);
            assert_eq!(format!("{:?}", owned.op()), format!("{op:?}"), "{kind:?}");
        }
    }
}
