//! # mcds-lock
//!
//! An owner-safe distributed lock on memcached semantics, for the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached.
//!
//! The whole algorithm is in this file:
//!
//! * **Acquire** — `add <key> <random owner token>` with the lock's TTL,
//!   returning the item's CAS id. `add` succeeds for exactly one caller while
//!   the key exists. 1 round trip.
//! * **Release** — delete the key *only if its CAS id is still ours*
//!   (`md <key> C<cas>`). A holder whose lease expired can never delete the
//!   next holder's lock (the original article's bare `delete` could). 1 round trip.
//! * **Extend** — rewrite the token with a new TTL *only if the CAS id is
//!   still ours* (`ms <key> C<cas> T<ttl>`). 1 round trip.
//! * **Blocking acquire** — retries with jittered exponential backoff until a
//!   deadline, then [`Error::WaitTimeout`].
//! * **Fencing tokens** (opt-in) — a counter incremented at every acquire,
//!   strictly increasing per lock name. Pass it to the protected resource,
//!   which rejects writes carrying an older token than one it has seen: that
//!   is what makes the lock safe when a paused holder wakes up after its lease
//!   expired (Kleppmann, "How to do distributed locking"). The add and the
//!   increment go in one pipelined batch, so acquiring stays 1 round trip;
//!   on a pool where the fence counter lives on another server than the
//!   lock, the increment waits for the add's reply and a read then checks
//!   the lease was still held (3 round trips): only then do tokens follow
//!   the order of the leases.
//! * **Auto-extension** — a background thread renews the lease every TTL/3
//!   and reports when it was lost.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mcds_core::MemoryStore;
//! use mcds_lock::{Lock, Release};
//!
//! let store = Arc::new(MemoryStore::new());
//! let lock = Lock::new(store.clone(), "nightly-report", Duration::from_secs(30))?;
//! let guard = lock.try_acquire()?.expect("nobody else holds it");
//! assert!(lock.try_acquire()?.is_none(), "held");
//! // ... do the work ...
//! assert_eq!(guard.release()?, Release::Released);
//! assert!(lock.try_acquire()?.is_some(), "free again");
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! ## Guarantees, and what breaks them
//!
//! * **Mutual exclusion while the lease lasts.** At most one guard holds the
//!   lock until its TTL runs out. memcached expires items in whole seconds on
//!   its own seconds counter, which one thread moves once a second and which
//!   can lag real time by up to 2 s (the tick's phase drifts, and jumps after
//!   the server is paused), so the lock item is written with the TTL plus
//!   two seconds: a lease lasts at least its TTL, and the item can outlive
//!   a crashed holder by up to about 3 s. A holder that runs longer than its TTL
//!   without extending loses the lock; its `release` and `extend` then report
//!   [`Release::Lost`] / [`Extend::Lost`] and never touch the new holder's
//!   lock. Use [`Guard::auto_extend`] or a generous TTL, and fencing tokens
//!   where a late write must be refused.
//! * **Eviction** (memcached under memory pressure) or a **server restart** or
//!   **flush** deletes the lock early: another client can then acquire it
//!   while the first still believes it holds it. The first holder finds out
//!   at its next `extend`/`release` (Lost), and never touches the new
//!   holder's lock: memcached numbers CAS ids from 1 again after a restart,
//!   but the backend ties every CAS id to the server incarnation that issued
//!   it (see `mcds_memcached`), so an id from before a restart matches nothing
//!   after it. Use fencing tokens for anything that must never be written
//!   twice. Note that `-M` does not help on its own: memcached 1.6, failing
//!   to allocate an item, deletes the key's current value even for `add` — a
//!   contender's failed acquire can delete the holder's lock.
//! * **Replies that never came.** An `extend` or `release` that fails with
//!   `Ambiguous` may have been applied. The next `extend`/`release` then
//!   finds another CAS id than it expected, reads the lock, and if the item
//!   still holds this guard's random owner token, adopts its CAS id and
//!   carries on: the lock is neither stranded nor given up.
//! * **Servers without CAS** (`-C`, or the text protocol behind a proxy,
//!   `mcds-text`): [`Lock::try_acquire`] refuses with `Unsupported`. Without CAS ids a release could not tell this lease from
//!   the next holder's.
//! * **Fencing tokens** are strictly increasing while their counter lives.
//!   memcached can lose the counter (eviction, restart, flush) — perhaps
//!   with the lock item, while its holder still believes it holds the
//!   lease — and nothing of it is left to read. An acquire's increment
//!   never creates the counter: only a granted acquire that finds it
//!   missing does, starting it from its clock in microseconds plus
//!   [`FENCE_CLOCK_SKEW`] (60 s), times [`FENCE_TICKS_PER_MICROSECOND`],
//!   plus a random tie-break below [`FENCE_TIE_BREAK`], and above the time
//!   the store last reported a loss ([`Store::retention`]: memcached's
//!   `stats`, 2 or 3 round trips once per counter lifetime). So across a
//!   lost counter, **tokens are ordered by the clocks of the processes
//!   that re-create it**: on one host, or on hosts whose clocks agree to
//!   better than the time between two re-creations (each follows a loss
//!   and at least one round trip), a grant that begins after another's
//!   release returned gets a larger token. Clocks that disagree by more
//!   can order two lifetimes the wrong way, and no client can see it:
//!   memcached kept nothing of the lost counter. Two grants get equal
//!   tokens only if two processes re-create the counter at the same
//!   microsecond by their clocks and draw the same tie-break (1 in
//!   1,024). (Adversarial reviews saw the order broken when a refused
//!   acquire's increment re-created an evicted counter from its clock
//!   alone, 10 of 10 rounds, and when two processes re-created it after
//!   flushes within one millisecond, 69 to 83 of 300, with the earlier
//!   millisecond-and-random-offset start; tests replay both.) Within one
//!   process a token is also never at or below one the process handed out
//!   before for the same lock name (it remembers the highest token of up
//!   to 16,384 names, each in one of 16 slots from its hash's place — a
//!   name whose slots are all taken is not remembered, and its tokens
//!   follow the counter alone — and raises a counter that fell behind, 1
//!   more round trip).
//! * **Pools**: a lock lives on one server, chosen by its key. If that server
//!   is down, acquiring fails with an error; the lock never moves to another
//!   server.
//! * **A quorum** (a [`QuorumStore`](mcds_core::QuorumStore), the store URL
//!   `memcached://a,b,c?quorum`): the same `Lock` lives on every server and
//!   is held by whoever holds a majority, so it keeps working while a
//!   minority of the servers is down, and its fencing tokens increase
//!   across any minority's loss without relying on clocks. The algorithm,
//!   the argument and the timing assumptions are in [`quorum`].
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mcds_core::{MemoryStore, QuorumStore, Store};
//! use mcds_lock::Lock;
//!
//! // Three independent stores (on memcached: one server each, or the URL
//! // memcached://a,b,c?quorum).
//! let members: Vec<(String, Arc<dyn Store>)> = ["a:11211", "b:11211", "c:11211"]
//!     .iter()
//!     .map(|name| (name.to_string(), Arc::new(MemoryStore::new()) as Arc<dyn Store>))
//!     .collect();
//! let quorum: Arc<dyn Store> = Arc::new(QuorumStore::new(members)?);
//! let lock = Lock::new(quorum, "nightly", Duration::from_secs(30))?.with_fencing(true);
//! let guard = lock.try_acquire()?.expect("free");
//! assert!(guard.fencing_token().is_some());
//! assert!(lock.try_acquire()?.is_none(), "held on a majority");
//! guard.release()?;
//! # Ok::<(), mcds_core::Error>(())
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use mcds_core::{
    Access, Backoff, CasOutcome, Clock, DeleteOutcome, Error, Io, Key, Op, Reply, Result,
    Retention, Scope, Store, Stored, Ttl, block_on, blocking_and_async,
};

mod background;
mod fence;
pub mod quorum;
mod renewer;
mod sweeper;

use background::in_background;
use renewer::{Renewer, renew, renewal};

pub use fence::{FENCE_CLOCK_SKEW, FENCE_TICKS_PER_MICROSECOND, FENCE_TIE_BREAK};
use fence::{fence_floor, fence_initial, record_fence};
use quorum::QuorumLease;
pub use quorum::{QUORUM_RECORD_KEY, quorum_drift};

/// Outcome of [`Guard::release`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// The lock was ours and is now free.
    Released,
    /// The lease had already ended (expired, evicted, or taken by another
    /// owner after expiring). Nothing was deleted.
    Lost,
}

/// Outcome of [`Guard::extend`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extend {
    /// The lease now runs for the new TTL from now.
    Extended,
    /// The lease had already ended; the lock was not touched.
    Lost,
}

/// A named distributed lock with a lease of fixed TTL. See the
/// [crate docs](crate) for the algorithm and its guarantees.
///
/// The key is `<prefix>lock:<name>:owner` (and `<prefix>lock:<name>:fence`
/// for fencing tokens).
///
/// # Limits
///
/// | limit | past it | written? |
/// |---|---|---|
/// | name: 239 bytes, less the scope's prefix (the keys add `lock:` and `:owner` or `:fence` to reach memcached's 250; `%` and `:` count 3 bytes each, escaped) | [`Error::InvalidKey`] from [`new`](Lock::new) | no |
/// | name bytes: not empty, no spaces or control bytes | [`Error::InvalidKey`] from [`new`](Lock::new) | no |
/// | [`with_key`](Lock::with_key)'s key: 244 bytes (its fence key adds `:fence`) | [`Error::InvalidKey`] | no |
/// | TTL: at least 1 s (shorter is under memcached's resolution) | [`Error::InvalidArgument`] from [`new`](Lock::new), [`with_key`](Lock::with_key), [`Guard::extend`], [`Guard::auto_extend`] | no: an `extend` refused leaves the lease as it was |
/// | TTL: at most [`MAX_LEASE`] (365 days; longer would reach past memcached's 32-bit absolute times) | [`Error::InvalidArgument`], from the same methods | no |
/// | owner label: at most 200 bytes of printable ASCII (spaces included) | [`Error::InvalidArgument`] from [`with_owner_label`](Lock::with_owner_label) | no |
/// | fencing tokens: `u64`, a re-created counter starting below 2^63 until the year 2109 (see [`FENCE_TICKS_PER_MICROSECOND`]) | — | — |
/// | fence floors: the highest token of up to 16,384 lock names per process | a name that finds no free slot is not remembered: no error | — |
/// | [`acquire`](Lock::acquire)'s timeout: any; `Duration::MAX` waits for ever | [`Error::WaitTimeout`] when it runs out with the lock still held | no |
#[derive(Clone, Debug)]
pub struct Lock {
    store: Arc<dyn Store>,
    name: String,
    key: Key,
    fence_key: Key,
    ttl: Duration,
    clock: Arc<dyn Clock>,
    fencing: bool,
    backoff_min: Duration,
    backoff_max: Duration,
    /// Written before the random part of every owner token.
    label: String,
}

/// The TTL written for a lease of `ttl`: rounded up to whole seconds, plus
/// two. memcached expires an item when its seconds counter reaches the
/// expiry; the counter is set to the whole second at each tick, about once
/// a second, so it lags real time by up to 2 s, and the lag at expiry can
/// be up to 2 s smaller than at the write (a tick phase that drifted, or
/// a tick delayed by a pause, catches up at once). An item written with TTL
/// `n` therefore lives more than `n − 2` seconds; `n + 2` makes the lease
/// last at least `ttl`. (An adversarial test found `n + 1` short: a 1 s
/// pause half a second into a 3 s lease let another client in after
/// 2.5 s.)
///
/// A TTL over [`MAX_LEASE`] is refused: memcached takes an expiry beyond
/// 30 days as an absolute Unix time, a signed 32-bit one, so a lease
/// reaching past January 2038 would be cut short on the server while its
/// holder still counted on it (and `Duration::MAX`, "for ever", overflowed
/// the lease's deadline).
fn lease_ttl(ttl: Duration) -> Result<Ttl> {
    if ttl < Duration::from_secs(1) {
        return Err(Error::InvalidArgument(format!(
            "lock TTL {ttl:?} is under memcached's 1-second resolution; use at least 1 s"
        )));
    }
    if ttl > MAX_LEASE {
        return Err(Error::InvalidArgument(format!(
            "lock TTL {ttl:?} is over the longest lease, {} days; hold a shorter lease and renew it (Guard::auto_extend)",
            MAX_LEASE.as_secs() / 86_400
        )));
    }
    Ok(Ttl::from(ttl.saturating_add(Duration::from_secs(2))))
}

/// The longest lock TTL (and extension) accepted: 365 days.
pub const MAX_LEASE: Duration = Duration::from_secs(365 * 24 * 60 * 60);

/// A lock refused on a store without CAS ids (memcached `-C`, or the text
/// protocol behind a proxy): a release or extend could not tell our lock
/// from the next holder's.
fn without_cas(op: &'static str) -> Error {
    Error::Unsupported {
        op,
        backend: "no CAS ids: memcached started with -C, or a proxy such as twemproxy",
        hint: "an owner-safe lock needs CAS ids: restart memcached without -C, or connect to the memcached servers directly rather than through a proxy",
    }
}

impl Lock {
    /// A lock named `name` whose lease lasts `ttl` (at least 1 second,
    /// rounded up to whole seconds), in `scope`: a store, or a
    /// [`Scope`] with a key prefix (and the clock fencing counters are
    /// seeded from). No fencing tokens; [`acquire`](Lock::acquire) backs off
    /// from 1 ms up to 50 ms between tries.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcds_core::{MemoryStore, Scope};
    /// use mcds_lock::Lock;
    ///
    /// let scope = Scope::from(Arc::new(MemoryStore::new())).with_prefix("billing/")?;
    /// let lock = Lock::new(&scope, "ledger", Duration::from_secs(10))?.with_fencing(true);
    /// let first = lock.try_acquire()?.unwrap();
    /// let t1 = first.fencing_token().unwrap();
    /// first.release()?;
    /// let second = lock.try_acquire()?.unwrap();
    /// assert!(second.fencing_token().unwrap() > t1);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn new(scope: impl Into<Scope>, name: &str, ttl: Duration) -> Result<Lock> {
        let scope = scope.into();
        lease_ttl(ttl)?;
        Ok(Lock {
            key: scope.key("lock", name, "owner")?,
            fence_key: scope.key("lock", name, "fence")?,
            store: Arc::clone(scope.store()),
            clock: Arc::clone(scope.clock()),
            name: name.to_string(),
            ttl,
            fencing: false,
            backoff_min: Duration::from_millis(1),
            backoff_max: Duration::from_millis(50),
            label: String::new(),
        })
    }

    /// The lock kept under exactly `key` (no `lock:` naming, no prefix), for
    /// a lock other applications already take with memcached's `add`: the
    /// Symfony Lock `MemcachedStore`, or any code that takes a lock by
    /// adding the key with a random value and a TTL and releases it by
    /// deleting it. Both sides exclude each other, since whoever added the
    /// key first holds it until it is deleted or expires. This lock
    /// releases and extends only its own lease (by CAS); the other side
    /// must likewise never delete a key it did not add. Fencing tokens, if
    /// switched on, count in `<key>:fence`. On a pool, both sides must place
    /// the key on the same server (a single server, or the same
    /// distribution, such as ketama).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcds_core::{Key, MemoryStore, Stored, Store, Ttl};
    /// use mcds_lock::Lock;
    ///
    /// let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    /// let lock = Lock::with_key(Arc::clone(&store), Key::new("report-lock")?, Duration::from_secs(30))?;
    /// let guard = lock.try_acquire()?.unwrap();
    /// // Another application's add-based lock on the same key is refused:
    /// let key = Key::new("report-lock")?;
    /// assert_eq!(store.add(&key, b"php-token", Ttl::secs(30))?, Stored::NotStored);
    /// guard.release()?;
    /// assert!(matches!(store.add(&key, b"php-token", Ttl::secs(30))?, Stored::Stored(_)));
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn with_key(store: Arc<dyn Store>, key: Key, ttl: Duration) -> Result<Lock> {
        let scope = Scope::new(Arc::clone(&store));
        lease_ttl(ttl)?;
        Ok(Lock {
            fence_key: key.with_suffix(":fence")?,
            name: key.display(),
            key,
            store,
            clock: Arc::clone(scope.clock()),
            ttl,
            fencing: false,
            backoff_min: Duration::from_millis(1),
            backoff_max: Duration::from_millis(50),
            label: String::new(),
        })
    }

    /// Name the holder for whoever inspects the lock: every owner token
    /// this lock writes is `<label> <random hex>`, which
    /// [`holder`](Lock::holder) returns. `mcds lock run` uses
    /// `host=<hostname> pid=<pid>`. The random part alone makes a token
    /// unique, so two holders with the same label still never release or
    /// extend each other's lease. At most 200 bytes of printable ASCII
    /// (spaces included), else [`Error::InvalidArgument`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcds_core::MemoryStore;
    /// use mcds_lock::Lock;
    ///
    /// let lock = Lock::new(Arc::new(MemoryStore::new()), "cron", Duration::from_secs(60))?
    ///     .with_owner_label("host=web1 pid=4242")?;
    /// let _guard = lock.try_acquire()?.unwrap();
    /// assert!(lock.holder()?.unwrap().starts_with("host=web1 pid=4242 "));
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn with_owner_label(mut self, label: &str) -> Result<Lock> {
        if label.len() > 200 || !label.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            return Err(Error::InvalidArgument(format!(
                "a lock owner label is at most 200 bytes of printable ASCII, got {label:?}"
            )));
        }
        self.label = label.to_string();
        Ok(self)
    }

    /// Hand out fencing tokens (default off). The token's increment is
    /// pipelined with the acquire, so it adds a command but no round trip,
    /// except on a pool whose fence counter lives on another server than
    /// the lock: 3 round trips.
    pub fn with_fencing(mut self, fencing: bool) -> Lock {
        self.fencing = fencing;
        self
    }

    /// The backoff of [`acquire`](Lock::acquire) between tries: a random
    /// sleep under a ceiling that starts at `min` and doubles up to `max`
    /// (defaults 1 ms and 50 ms).
    pub fn with_backoff(mut self, min: Duration, max: Duration) -> Lock {
        self.backoff_min = min;
        self.backoff_max = max;
        self
    }

    /// The lock's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The lease TTL.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// The key of the lock item, whose value is the holder's owner token
    /// (`<prefix>lock:<name>:owner`).
    pub fn key(&self) -> &Key {
        &self.key
    }

    /// Take the lock if it is free: `Some(guard)`, or `None` if another owner
    /// holds it. One round trip, fencing token included (three with fencing
    /// on a pool where the lock and its fence counter are on different
    /// servers).
    pub fn try_acquire(&self) -> Result<Option<Guard>> {
        block_on(self.try_acquire_io(Io::Blocking, "Lock::try_acquire"))
    }

    /// [`try_acquire`](Lock::try_acquire) without blocking the thread. The
    /// guard it returns releases without blocking too: see [`Guard`].
    pub async fn try_acquire_async(&self) -> Result<Option<Guard>> {
        self.try_acquire_io(Io::Async, "Lock::try_acquire_async")
            .await
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&*self.store, io)
    }

    /// `caller` is the public method, for the error a store without CAS ids
    /// gets.
    async fn try_acquire_io(&self, io: Io, caller: &'static str) -> Result<Option<Guard>> {
        if let Some(quorum) = self.store.quorum() {
            return quorum::try_acquire(self, quorum, io, caller).await;
        }
        let access = self.access(io);
        let started = Instant::now();
        let token = self.owner_token();
        let ttl = lease_ttl(self.ttl)?;
        if !access.supports_cas(&self.key).await? {
            // Without CAS ids a release or extend could not tell our lock
            // from the next holder's: grant nothing.
            return Err(without_cas(caller));
        }
        // An async caller may be cancelled (this future dropped) while the
        // add is in flight, and an add may get no reply (`Ambiguous`, a
        // server frozen past the timeout); either way it can still be
        // applied, with no guard to release it. Then this cleans up (see
        // `Abandoned`): it is disarmed only once the outcome is known.
        let abandoned = Abandoned::new(self, &token);
        let added = if self.fencing {
            self.add_fenced(access, &token, ttl).await
        } else {
            access
                .add(&self.key, token.as_bytes(), ttl)
                .await
                .map(|added| (added, None))
        };
        let (added, fencing_token) = match added {
            Ok(added) => {
                abandoned.disarm();
                added
            }
            // (Dropped armed: it looks for the item in the background.)
            Err(e @ Error::Ambiguous { .. }) => return Err(e),
            Err(e) => {
                abandoned.disarm();
                return Err(e);
            }
        };
        let cas = match added {
            // CAS id 0 is a server without CAS (`-C`): it restarted that way
            // between the check above and the add. Grant nothing; the item
            // expires with its TTL.
            Stored::Stored(0) => {
                return Err(without_cas(caller));
            }
            Stored::Stored(cas) => cas,
            Stored::NotStored => return Ok(None),
        };
        // The server wrote the item after `started`, with at least the TTL.
        let state = Arc::new(GuardState::new(
            Arc::clone(&self.store),
            self.key.clone(),
            token,
            cas,
            started + self.ttl,
        ));
        let fencing_token = match fencing_token {
            Some(Err(e)) => {
                // Do not keep a lock we cannot fence.
                let _ = state.release(io).await;
                return Err(e);
            }
            Some(Ok(t)) => Some(t),
            None => None,
        };
        Ok(Some(Guard::holding(Held::One(state), fencing_token, io)))
    }

    /// A new owner token: `<label> <random hex>`, or the random part alone.
    fn owner_token(&self) -> String {
        if self.label.is_empty() {
            mcds_core::random_token()
        } else {
            format!("{} {}", self.label, mcds_core::random_token())
        }
    }

    /// The `add` of the lock item and the fence increment. When both keys
    /// are on the same server (always, except on a pool) they go in one
    /// pipelined batch, applied in order: the increment runs right after a
    /// successful add, inside the lease. Across two servers the increment
    /// waits for the add's reply (sent together, a slow fence server could
    /// apply this holder's increment after the next holder's), and a read
    /// of the lock item then checks the lease was still ours while the
    /// increment ran (a client that paused between the two would otherwise
    /// take a token larger than the next holder's): 3 round trips.
    ///
    /// The increment never creates the counter: only a granted acquire
    /// does, in [`create_fence`](Lock::create_fence), after asking the
    /// store since when it lost nothing. (A counter that a refused
    /// acquire's increment created, from its clock alone, could start below
    /// the tokens of the counter it replaced.)
    async fn add_fenced(
        &self,
        access: Access<'_>,
        token: &str,
        ttl: Ttl,
    ) -> Result<(Stored, Option<Result<u64>>)> {
        let fence = Op::Incr {
            key: &self.fence_key,
            delta: 1,
        };
        if !self.store.colocated(&self.key, &self.fence_key) {
            let added = access.add(&self.key, token.as_bytes(), ttl).await?;
            let Stored::Stored(cas) = added else {
                return Ok((added, None));
            };
            let tok = match access.execute(&fence).await.and_then(Reply::counter) {
                Ok(t) => self.granted_token(access, t).await,
                Err(e) => Err(e),
            };
            // The token is only ours if the lease still was when the
            // increment ran (this client may have paused in between):
            // check the lock item still holds our owner token.
            return match access.get(&self.key).await {
                Ok(Some(item)) if item.value == token.as_bytes() => Ok((added, Some(tok))),
                Ok(_) => Ok((Stored::NotStored, None)),
                Err(e) => {
                    let _ = access.delete_cas(&self.key, cas).await;
                    Err(e)
                }
            };
        }
        let add = Op::Add {
            key: &self.key,
            value: token.as_bytes(),
            ttl,
        };
        let [added, tok] = access.run_pipeline([add, fence]).await?;
        let added = added?.stored()?;
        if !added.is_stored() {
            // A refused add still bumped an existing counter: tokens skip
            // a number, which keeps them increasing.
            return Ok((added, None));
        }
        let tok = match tok.and_then(Reply::counter) {
            Ok(t) => self.granted_token(access, t).await,
            Err(e) => Err(e),
        };
        Ok((added, Some(tok)))
    }

    /// The token of a granted acquire whose increment answered `counted`
    /// (`None`: the counter does not exist, and this acquire creates it).
    /// A token not above every token this process has handed out for the
    /// lock (the counter was lost and re-created by a slower clock) is
    /// raised past them, 1 more round trip, while the lease is ours.
    async fn granted_token(&self, access: Access<'_>, counted: Option<u64>) -> Result<u64> {
        let token = match counted {
            Some(token) => token,
            None => self.create_fence(access).await?,
        };
        let floor = fence_floor(&self.fence_key);
        let token = if token > floor {
            token
        } else {
            let raise = Op::Incr {
                key: &self.fence_key,
                delta: floor - token + 1,
            };
            match access.execute(&raise).await.and_then(Reply::counter)? {
                Some(token) => token,
                // Lost again since the increment: start it again.
                None => self.create_fence(access).await?,
            }
        };
        record_fence(&self.fence_key, token);
        Ok(token)
    }

    /// Create the fence counter, which does not exist (it was never made,
    /// or memcached lost it), and return its first token.
    ///
    /// A lost counter's tokens may still be in use (its holder lost the
    /// lease in the same flush, restart or eviction, unseen), and nothing
    /// of it is left to read. Its tokens were all started from a clock, at
    /// most [`FENCE_CLOCK_SKEW`] ahead, before now: so the new counter
    /// starts at this process's clock in microseconds (the real clock, or
    /// the scope's if that is ahead) plus [`FENCE_CLOCK_SKEW`], and above
    /// the time the store last reported a loss on the counter's server
    /// ([`Access::retention`], memcached's `stats`: 2 or 3 round trips, once
    /// per counter lifetime; a time set by a client whose clock is ahead of
    /// this one's lifts this one). If another holder created it meanwhile
    /// (one whose lease ended unseen), this one increments theirs.
    async fn create_fence(&self, access: Access<'_>) -> Result<u64> {
        let since = match access.retention(&self.fence_key).await? {
            Retention::Since(since_ms) => Some(since_ms),
            _ => None,
        };
        let create = Op::IncrOrInit {
            key: &self.fence_key,
            delta: 1,
            initial: self.fence_start(since),
            ttl: Ttl::Never,
        };
        access.execute(&create).await.and_then(Reply::value)
    }

    /// The first token of a fence counter created now: this process's
    /// clock in microseconds (the real clock, or the scope's if that is
    /// ahead), and at least `since_ms`, the time its server last reported
    /// a loss, plus [`FENCE_CLOCK_SKEW`], in ticks (see [`create_fence`](Lock::create_fence)).
    fn fence_start(&self, since_ms: Option<u64>) -> u64 {
        let real_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        let mut at_us = real_us.max(self.clock.now_ms().saturating_mul(1_000));
        if let Some(since_ms) = since_ms {
            at_us = at_us.max(since_ms.saturating_mul(1_000));
        }
        let skew_us = u64::try_from(FENCE_CLOCK_SKEW.as_micros()).unwrap_or(u64::MAX);
        fence_initial(at_us.saturating_add(skew_us), &self.fence_key)
    }

    /// Wait up to `timeout` for the lock, retrying with jittered exponential
    /// backoff. [`Error::WaitTimeout`] if it stays taken. A timeout too large
    /// to add to the current instant (`Duration::MAX`) waits for ever.
    pub fn acquire(&self, timeout: Duration) -> Result<Guard> {
        block_on(self.acquire_io(Io::Blocking, timeout, "Lock::acquire"))
    }

    /// [`acquire`](Lock::acquire) without blocking the thread: the waits
    /// between tries are timers, and the guard releases without blocking
    /// (see [`Guard`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcds_core::MemoryStore;
    /// use mcds_lock::{Lock, Release};
    ///
    /// # mcds_core::block_on(async {
    /// let lock = Lock::new(Arc::new(MemoryStore::new()), "report", Duration::from_secs(30))?;
    /// let guard = lock.acquire_async(Duration::from_secs(5)).await?;
    /// // ... the work ...
    /// assert_eq!(guard.release_async().await?, Release::Released);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn acquire_async(&self, timeout: Duration) -> Result<Guard> {
        self.acquire_io(Io::Async, timeout, "Lock::acquire_async")
            .await
    }

    /// `caller` is the public method, for the error a store without CAS ids
    /// gets.
    async fn acquire_io(&self, io: Io, timeout: Duration, caller: &'static str) -> Result<Guard> {
        let deadline = Instant::now().checked_add(timeout);
        let mut backoff = Backoff::new(self.backoff_min, self.backoff_max);
        loop {
            if let Some(guard) = self.try_acquire_io(io, caller).await? {
                return Ok(guard);
            }
            let now = Instant::now();
            let delay = backoff.next_delay();
            let delay = match deadline {
                Some(deadline) if now >= deadline => {
                    return Err(Error::WaitTimeout {
                        what: format!("lock {:?}", self.name),
                        waited: timeout,
                    });
                }
                Some(deadline) => delay.min(deadline - now),
                None => delay,
            };
            self.access(io).sleep(delay).await;
        }
    }

    /// Run `f` while holding the lock (waiting up to `timeout` for it), then
    /// release it. Returns `f`'s result and whether the lease was still held
    /// at the end ([`Release::Lost`] means another owner may have run at the
    /// same time: consider a longer TTL or [`Guard::auto_extend`]).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcds_core::MemoryStore;
    /// use mcds_lock::{Lock, Release};
    ///
    /// let lock = Lock::new(Arc::new(MemoryStore::new()), "cron", Duration::from_secs(60))?;
    /// let (sum, release) = lock.with_lock(Duration::from_secs(1), |_guard| 2 + 2)?;
    /// assert_eq!((sum, release), (4, Release::Released));
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn with_lock<T>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&Guard) -> T,
    ) -> Result<(T, Release)> {
        let guard = block_on(self.acquire_io(Io::Blocking, timeout, "Lock::with_lock"))?;
        let out = f(&guard);
        let release = guard.release()?;
        Ok((out, release))
    }

    /// [`with_lock`](Lock::with_lock) for async work: wait up to `timeout`
    /// for the lock without blocking, run `f`, then release.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use mcds_core::MemoryStore;
    /// use mcds_lock::{Lock, Release};
    ///
    /// # mcds_core::block_on(async {
    /// let lock = Lock::new(Arc::new(MemoryStore::new()), "cron", Duration::from_secs(60))?;
    /// let (n, release) = lock
    ///     .with_lock_async(Duration::from_secs(1), async |guard| guard.owner_token().len())
    ///     .await?;
    /// assert!(n > 0);
    /// assert_eq!(release, Release::Released);
    /// # Ok::<(), mcds_core::Error>(())
    /// # }).unwrap();
    /// ```
    pub async fn with_lock_async<T>(
        &self,
        timeout: Duration,
        f: impl AsyncFnOnce(&Guard) -> T,
    ) -> Result<(T, Release)> {
        let guard = self
            .acquire_io(Io::Async, timeout, "Lock::with_lock_async")
            .await?;
        let out = f(&guard).await;
        let release = guard.release_async().await?;
        Ok((out, release))
    }

    /// The owner token of the current holder, if the lock is held.
    #[blocking_and_async(pub)]
    async fn holder_io(&self, io: Io) -> Result<Option<String>> {
        if let Some(quorum) = self.store.quorum() {
            return quorum::holder(self, quorum).await;
        }
        Ok(self
            .access(io)
            .get(&self.key)
            .await?
            .map(|item| String::from_utf8_lossy(&item.value).into_owned()))
    }
}

/// What the guard and its renewer share.
struct GuardState {
    store: Arc<dyn Store>,
    key: Key,
    token: String,
    /// The CAS id of our lock item, as last written or adopted. Locked only
    /// to read or replace it, never across a write: a release and an extend
    /// (the renewer's) may run at once, and the one that uses an id made
    /// stale by the other finds a mismatch, reads the item, still finds its
    /// own token and adopts the new id (see [`with_cas`](Self::with_cas)).
    /// (Held across a write, a blocking release inside a single-threaded
    /// runtime would wait for a renewer task that only that thread can run.)
    cas: Mutex<u64>,
    lost: AtomicBool,
    /// Until when the lease is certain: the TTL of the last successful
    /// write, counted from before it was sent.
    lease_until: Mutex<Instant>,
}

/// How many times a release or extend adopts a newer CAS id of its own
/// lock item before giving up (each adoption follows a write of ours that
/// was applied without our seeing the reply).
const ADOPT_ATTEMPTS: usize = 3;

impl GuardState {
    /// The state of a lock item holding `token`, with CAS id `cas`, the
    /// lease certain until `lease_until`.
    fn new(
        store: Arc<dyn Store>,
        key: Key,
        token: String,
        cas: u64,
        lease_until: Instant,
    ) -> GuardState {
        GuardState {
            store,
            key,
            token,
            cas: Mutex::new(cas),
            lost: AtomicBool::new(false),
            lease_until: Mutex::new(lease_until),
        }
    }

    /// The CAS id of the lock item if it still holds our owner token. After a
    /// CAS mismatch this tells "someone else's lock now" (or none) from "ours,
    /// changed by a write of ours whose reply was lost" (an `Ambiguous`
    /// extend that the server applied): the owner token is random and
    /// unique, so a match is our lease and nothing else.
    async fn adopt(&self, io: Io) -> Result<Option<u64>> {
        Ok(Access::new(&*self.store, io)
            .get(&self.key)
            .await?
            .filter(|item| item.value == self.token.as_bytes())
            .map(|item| item.cas))
    }

    /// Run one conditional `write` with the lock item's CAS id: `true`
    /// when it applied. After a mismatch the lock is read: still our token
    /// means a write of ours was applied unseen (or the renewer's extend
    /// ran meanwhile), so its id is adopted and the write runs again;
    /// anything else means the lease is over (`false`).
    async fn with_cas(&self, io: Io, write: Write) -> Result<bool> {
        let access = Access::new(&*self.store, io);
        let mut cas = *self.cas.lock().unwrap_or_else(PoisonError::into_inner);
        if self.lost.load(Ordering::SeqCst) {
            return Ok(false);
        }
        for _ in 0..ADOPT_ATTEMPTS {
            let applied = match write {
                Write::Release => match access.delete_cas(&self.key, cas).await? {
                    DeleteOutcome::Deleted => {
                        self.lost.store(true, Ordering::SeqCst); // no longer ours
                        true
                    }
                    DeleteOutcome::Exists | DeleteOutcome::NotFound => false,
                },
                Write::Extend { ttl, lease } => {
                    let sent = Instant::now();
                    match access
                        .cas(&self.key, self.token.as_bytes(), ttl, cas)
                        .await?
                    {
                        CasOutcome::Stored(new) => {
                            *self.cas.lock().unwrap_or_else(PoisonError::into_inner) = new;
                            *self
                                .lease_until
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner) = sent + lease;
                            true
                        }
                        CasOutcome::Exists | CasOutcome::NotFound => false,
                    }
                }
            };
            if applied {
                return Ok(true);
            }
            match self.adopt(io).await? {
                Some(current) => {
                    cas = current;
                    *self.cas.lock().unwrap_or_else(PoisonError::into_inner) = current;
                }
                None => {
                    self.lost.store(true, Ordering::SeqCst);
                    return Ok(false);
                }
            }
        }
        Err(Error::Conflict {
            key: self.key.display(),
            attempts: ADOPT_ATTEMPTS as u32,
        })
    }

    /// Release by CAS. After a delete whose reply was lost
    /// ([`Error::Ambiguous`]), a retry that finds no item reports
    /// [`Release::Lost`]: the lost delete may have applied, but the item may
    /// as well have gone before it (a flush, an eviction, a restart) and
    /// another holder may have come and gone since, and those cannot be told
    /// apart. `Lost` is the answer that never hides an overlap.
    async fn release(&self, io: Io) -> Result<Release> {
        Ok(if self.with_cas(io, Write::Release).await? {
            Release::Released
        } else {
            Release::Lost
        })
    }

    async fn extend(&self, io: Io, ttl: Duration) -> Result<Extend> {
        // Written as TTL + 2 s (see `lease_ttl`): it lasts at least `ttl`.
        let write = Write::Extend {
            ttl: lease_ttl(ttl)?,
            lease: ttl,
        };
        Ok(if self.with_cas(io, write).await? {
            Extend::Extended
        } else {
            Extend::Lost
        })
    }
}

/// The lease a guard holds: on one server, or on a majority of a quorum
/// (`quorum.rs`).
#[derive(Clone)]
pub(crate) enum Held {
    One(Arc<GuardState>),
    Quorum(Arc<QuorumLease>),
}

impl Held {
    async fn release(&self, io: Io) -> Result<Release> {
        match self {
            Held::One(state) => state.release(io).await,
            Held::Quorum(lease) => lease.release().await,
        }
    }

    async fn extend(&self, io: Io, ttl: Duration) -> Result<Extend> {
        match self {
            Held::One(state) => state.extend(io, ttl).await,
            Held::Quorum(lease) => lease.extend(ttl).await,
        }
    }

    fn key(&self) -> &Key {
        match self {
            Held::One(state) => &state.key,
            Held::Quorum(lease) => &lease.key,
        }
    }

    fn token(&self) -> &str {
        match self {
            Held::One(state) => &state.token,
            Held::Quorum(lease) => &lease.token,
        }
    }

    /// Set when the lease is known lost (or spent).
    pub(crate) fn lost(&self) -> &AtomicBool {
        match self {
            Held::One(state) => &state.lost,
            Held::Quorum(lease) => &lease.lost,
        }
    }

    /// Until when the lease is certain.
    pub(crate) fn lease_until(&self) -> Instant {
        *match self {
            Held::One(state) => &state.lease_until,
            Held::Quorum(lease) => &lease.lease_until,
        }
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
    }

    /// A store whose async timers the renewer task sleeps on.
    fn timer_store(&self) -> &dyn Store {
        match self {
            Held::One(state) => &*state.store,
            Held::Quorum(lease) => lease.any_store(),
        }
    }
}

/// The conditional write of [`GuardState::with_cas`].
#[derive(Clone, Copy)]
enum Write {
    /// `delete_cas` of the lock item.
    Release,
    /// A `cas` write of the owner token with the lease TTL `ttl` (a lease
    /// certain for `lease` from when it was sent).
    Extend { ttl: Ttl, lease: Duration },
}

/// Proof of holding a [`Lock`]. Dropping it releases the lock best-effort
/// (errors are ignored); call [`release`](Guard::release) (or
/// [`release_async`](Guard::release_async)) to learn the outcome.
///
/// A guard from the async API ([`Lock::acquire_async`],
/// [`Lock::try_acquire_async`]) never blocks in `Drop`: a dropped guard
/// hands its release to a task when a multi-thread tokio runtime is
/// running on the dropping thread, else to a short-lived thread of its own
/// (on a current-thread runtime too: it runs tasks only while someone is
/// in its `block_on`, and a program may never enter it again). Either way
/// the release runs after `drop` returns; await
/// [`release_async`](Guard::release_async) to know it is done. If the
/// runtime shuts down before the release is done (a guard dropped as a
/// `#[tokio::main]` function returns), the release runs, blocking, as the
/// runtime drops its tasks: a program that ends with its runtime leaves
/// no lock held. (Outside any runtime nothing is there to wait in: a
/// program that exits right after dropping an async guard may cut its
/// release short, and the lock is then held until its TTL.)
///
/// An async acquire that is cancelled (its future dropped, by
/// `tokio::time::timeout` or `select!`) after its write was queued does
/// not strand the lock: a cleanup, run in the background, deletes the lock
/// item if the cancelled attempt's write took it (looking for about 6 s;
/// a write applied later than that strands the lock until its TTL).
pub struct Guard {
    state: Held,
    fencing_token: Option<u64>,
    renewer: Option<Renewer>,
    done: bool,
    /// The API the guard came from: how its drop releases.
    io: Io,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("key", self.state.key())
            .field("token", &self.state.token())
            .field("fencing_token", &self.fencing_token)
            .field("lost", &self.is_lost())
            .finish()
    }
}

impl Guard {
    /// A guard of `state`, with its fencing token, from the API `io`.
    fn holding(state: Held, fencing_token: Option<u64>, io: Io) -> Guard {
        Guard {
            state,
            fencing_token,
            renewer: None,
            done: false,
            io,
        }
    }

    /// Release the lock if it is still ours. One round trip (two more when
    /// an earlier write of ours was applied unseen, see
    /// [`try_release`](Guard::try_release)).
    pub fn release(mut self) -> Result<Release> {
        let released = self.try_release();
        self.done = true; // an error is reported, not retried by Drop
        released
    }

    /// Release, keeping the guard usable if it fails: after an error
    /// ([`Error::Timeout`], [`Error::Ambiguous`], a server down) call it
    /// again. Once it returns `Ok` the guard is spent (dropping it does
    /// nothing more).
    ///
    /// A release or extend that finds a different CAS id than it expects
    /// reads the lock: if the item still holds this guard's owner token (an
    /// earlier `Ambiguous` extend was applied after all), it adopts the new
    /// id and carries on, so an unanswered write never strands the lock.
    /// After an `Ambiguous` release that was in fact applied, the retry
    /// reports [`Release::Lost`] (the lock is free either way): a missing
    /// item cannot tell our delete from a flush, eviction or restart that
    /// let another holder in, so the answer is the one that never hides an
    /// overlap.
    pub fn try_release(&mut self) -> Result<Release> {
        self.stop_renewer();
        let released = block_on(self.state.release(Io::Blocking))?;
        self.done = true;
        Ok(released)
    }

    /// [`release`](Guard::release) without blocking the thread.
    pub async fn release_async(mut self) -> Result<Release> {
        let released = self.try_release_async().await;
        self.done = true;
        released
    }

    /// [`try_release`](Guard::try_release) without blocking the thread.
    pub async fn try_release_async(&mut self) -> Result<Release> {
        self.stop_renewer();
        let released = self.state.release(Io::Async).await?;
        self.done = true;
        Ok(released)
    }

    /// Renew the lease for `ttl` from now, if it is still ours. One round
    /// trip (two more after an `Ambiguous` extend that the server applied:
    /// the guard reads its lock, finds its own token and adopts the item's
    /// new CAS id; see [`try_release`](Guard::try_release)).
    pub fn extend(&self, ttl: Duration) -> Result<Extend> {
        block_on(self.state.extend(Io::Blocking, ttl))
    }

    /// [`extend`](Guard::extend) without blocking the thread.
    pub async fn extend_async(&self, ttl: Duration) -> Result<Extend> {
        self.state.extend(Io::Async, ttl).await
    }

    /// The fencing token of this acquisition (with
    /// [`Lock::with_fencing`]): strictly greater than every token handed
    /// out before for this lock name, while the counter lives (see the
    /// [crate docs](crate)).
    pub fn fencing_token(&self) -> Option<u64> {
        self.fencing_token
    }

    /// The random owner token stored under the lock key.
    pub fn owner_token(&self) -> &str {
        self.state.token()
    }

    /// Whether the lease is known to be lost (reported by `extend`, the
    /// renewer, or `release`).
    pub fn is_lost(&self) -> bool {
        self.state.lost().load(Ordering::SeqCst)
    }

    /// Renew the lease in the background every TTL/3 until the guard is
    /// released or dropped. If a renewal finds the lease lost, the renewer
    /// stops and [`is_lost`](Guard::is_lost) turns true. Transient errors
    /// (a server briefly unreachable) are retried at the next tick.
    pub fn auto_extend(&mut self, ttl: Duration) -> Result<()> {
        self.auto_extend_with(ttl, |_| {})
    }

    /// Like [`auto_extend`](Guard::auto_extend), calling `on_lost` (from the
    /// renewer thread) when the lease is found lost, or with the last error
    /// when renewals keep failing and the next one would come after the lease
    /// ends. The lease is certain for its TTL from when the last successful
    /// renewal was *sent*, so `on_lost` runs about TTL/3 before another
    /// client can take the lock (given an exchange timeout under TTL/3): time
    /// for the holder to stop its work.
    ///
    /// ```
    /// use std::sync::{Arc, mpsc};
    /// use std::time::Duration;
    /// use mcds_core::{Key, MemoryStore, Store};
    /// use mcds_lock::Lock;
    ///
    /// let store = Arc::new(MemoryStore::new());
    /// let lock = Lock::new(store.clone(), "job", Duration::from_secs(1))?;
    /// let mut guard = lock.try_acquire()?.unwrap();
    /// let (tx, rx) = mpsc::channel();
    /// guard.auto_extend_with(Duration::from_secs(1), move |_| { let _ = tx.send(()); })?;
    /// // Someone deletes the lock behind our back:
    /// store.delete(&Key::new("lock:job:owner")?)?;
    /// rx.recv_timeout(Duration::from_secs(5)).expect("renewer reports the loss");
    /// assert!(guard.is_lost());
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn auto_extend_with(
        &mut self,
        ttl: Duration,
        on_lost: impl FnOnce(Option<Error>) + Send + 'static,
    ) -> Result<()> {
        lease_ttl(ttl)?;
        self.stop_renewer();
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let state = self.state.clone();
        let signal = Arc::clone(&stop);
        let interval = ttl / 3;
        let thread = std::thread::Builder::new()
            .name(format!("mcds-lock renewer {}", state.key()))
            .spawn(move || renew(&state, &signal, ttl, interval, on_lost))
            .map_err(|e| Error::InvalidArgument(format!("cannot start the renewer thread: {e}")))?;
        self.renewer = Some(Renewer::Thread {
            stop,
            thread: Some(thread),
        });
        Ok(())
    }

    /// [`auto_extend`](Guard::auto_extend) as a tokio task instead of a
    /// thread: the renewals are async, and stopping it (release, drop)
    /// cancels the task. Needs a tokio runtime on the calling thread, else
    /// [`Error::InvalidArgument`]. The task renews only while its runtime
    /// runs it: on a current-thread runtime, only while some thread is in
    /// its `block_on`. A program that leaves such a runtime idle while it
    /// holds the lock should use [`auto_extend`](Guard::auto_extend):
    /// otherwise the lease runs out unrenewed, and the guard learns it only
    /// at its next `extend` or `release` (or when the task runs again).
    pub fn auto_extend_async(&mut self, ttl: Duration) -> Result<()> {
        self.auto_extend_async_with(ttl, |_| {})
    }

    /// [`auto_extend_with`](Guard::auto_extend_with) as a tokio task (see
    /// [`auto_extend_async`](Guard::auto_extend_async)); `on_lost` runs on
    /// the task.
    pub fn auto_extend_async_with(
        &mut self,
        ttl: Duration,
        on_lost: impl FnOnce(Option<Error>) + Send + 'static,
    ) -> Result<()> {
        lease_ttl(ttl)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| {
            Error::InvalidArgument(
                "auto_extend_async needs a tokio runtime on this thread; use auto_extend (a thread) outside one".into(),
            )
        })?;
        self.stop_renewer();
        let state = self.state.clone();
        let interval = ttl / 3;
        let task = runtime.spawn(async move {
            let access = Access::new(state.timer_store(), Io::Async);
            loop {
                access.sleep(interval).await;
                match renewal(&state, state.extend(Io::Async, ttl).await, interval) {
                    Some(outcome) => return on_lost(outcome),
                    None => continue,
                }
            }
        });
        self.renewer = Some(Renewer::Task(task));
        Ok(())
    }

    fn stop_renewer(&mut self) {
        if let Some(mut renewer) = self.renewer.take() {
            renewer.stop();
        }
    }
}

/// An async acquire attempt in flight. Dropped armed (its future was
/// cancelled, by `tokio::time::timeout` or `select!`, between queueing the
/// `add` and reading its reply), it releases the lock if the add took it:
/// in the background (`sweeper.rs`: one sweeper per server and key for
/// all such adds), nobody waiting on it, it deletes the lock item if it
/// holds this attempt's random owner token, looking again with growing
/// pauses for about 6 s, since the add may still be queued. Without it the lock stayed held by nobody until
/// its TTL ran out (an adversarial review's finding). An add applied even
/// later (a server frozen for longer) still strands the lock for its TTL.
///
/// (A first fix ran each attempt as a task of its own and awaited it; a
/// caller driving the future with another executor on a runtime thread
/// then waited for ever, on current-thread and multi-thread runtimes.)
struct Abandoned {
    lock: Option<(Arc<dyn Store>, Key, String)>,
}

impl Abandoned {
    fn new(lock: &Lock, token: &str) -> Abandoned {
        Abandoned::on(Arc::clone(&lock.store), lock.key.clone(), token)
    }

    /// An attempt to add `key` holding `token` on `store` (one server of
    /// a quorum, or the lock's store).
    fn on(store: Arc<dyn Store>, key: Key, token: &str) -> Abandoned {
        Abandoned {
            lock: Some((store, key, token.to_string())),
        }
    }

    fn disarm(mut self) {
        self.lock = None;
    }
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some((store, key, token)) = self.lock.take() else {
            return;
        };
        // In the background: delete the item if this add took it (one
        // sweeper per server and key, see `sweeper.rs`).
        sweeper::sweep(store, key, token);
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.stop_renewer();
        if self.done {
            return;
        }
        match self.io {
            Io::Blocking => {
                let _ = block_on(self.state.release(Io::Blocking));
            }
            // Never block in an async caller's drop: the release goes to a
            // task (or a thread outside a tokio runtime).
            Io::Async => {
                let state = self.state.clone();
                let unfinished = self.state.clone();
                in_background(
                    "mcds-lock release",
                    move |io| async move {
                        let _ = state.release(io).await;
                    },
                    // Released again after an interrupted release: it
                    // finds the item gone, or no longer ours.
                    move || {
                        let _ = block_on(unfinished.release(Io::Blocking));
                    },
                );
            }
        }
    }
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
