//! The pool identity: every server of a pool records the server list its
//! clients use, and a client whose own list differs refuses to work.
//!
//! Two clients with different server lists place some keys on different
//! servers. Each then grants the same lock on its own server, splits a
//! counter's increments, and so on, with no error anywhere (an adversarial
//! review saw a third of 300 locks held twice during a change from
//! `[A,B]` to `[A,B,C]`). So every server keeps the list under
//! `__mcds_pool` (`__mcds_pool:<name>` with [`Builder::pool_name`]), and
//! every connection's handshake reads it, in the same round trip as the
//! server's version and incarnation marker (no extra round trip). The
//! first client to find it missing writes its own (`add`: one of two
//! racing clients wins each server; two first clients racing on fresh
//! servers may each win some, and are then both refused until a list is
//! adopted). A client refused by a server never writes its own list there
//! when the record is lost (a flush, a restart): it stays refused.
//!
//! The record is an ordinary item: `flush_all` deletes it, and memcached
//! may evict it. So a pool's client writes its list only where the
//! server has lost nothing since it started (its `stats`: no evictions,
//! no `flush_all`), or where it recorded that list before (it writes it
//! back). A client new to a server that has lost items and holds no
//! record refuses, with an error that says to adopt the list
//! (`mcds pool adopt`): the missing record may have been another list's.
//! (An adversarial review saw a third of 60 locks held twice after a
//! flush, and two thirds after an eviction, when such a client wrote its
//! own.) What this cannot see: a server that lost the record and kept no
//! count of it — *restarted* empty; flushed and then `stats reset` (which
//! zeroes the loss counters); or whose record another program deleted,
//! or made expire with `touch` — looks like a server no client has used,
//! so a client with another list can claim it, until the clients of the
//! old list read its record again (at their next connection to it, or
//! within their recheck interval, [`Builder::pool_recheck`]). While both
//! work, a key the two lists place on different servers can be granted
//! twice (a third review saw 26 of 60 locks after `flush_all` and `stats
//! reset`). Change lists only with [`MemcachedStore::adopt_pool`]; restart
//! or flush a member only while every client uses the same list; a
//! shorter recheck interval shortens the window. A
//! server full under `-M` that has no record and cannot take one makes a
//! pool's client refuse (a client of one server places every key on it,
//! and works). Before its first operation a store dials
//! every server of its list once, so it has read every record, and its
//! connections are replaced every [`Builder::pool_recheck`] (default
//! 30 s), so each record is read again at that interval. While any server
//! records another list, every operation fails with
//! [`Error::InvalidArgument`] naming both lists, and nothing is sent. A
//! pool's client works only once it has read every server's record: one
//! started while a server of its list is down refuses
//! ([`Error::ServerDown`]) until that server answers, because another
//! list could claim the server when it comes back while this client has
//! granted its keys elsewhere. A server that dies after it was read keeps
//! its verdict (it grants nothing, and a dead member does not stop the
//! others). The dials before a first operation are made one after
//! another: with stopped servers a first operation can take one
//! `io_timeout` for each.
//!
//! Changing the list ([`MemcachedStore::adopt_pool`])
//! writes the new list to every server of it, to take effect `grace`
//! later by the servers' own clocks. Clients of the old list stop within
//! their recheck interval (the record now differs from their list);
//! clients of the new list start when the grace has passed (until then
//! they get [`Error::ServerDown`] with the time left). With a grace of at
//! least the old clients' recheck interval plus the longest lock lease
//! (plus 3 s: memcached's clock ticks in whole seconds and locks are
//! written with 2 s to spare), no lock is held by an old and a new client
//! at once, and no counter is incremented on two servers at once. When
//! the grace ends, a new client reads the records again before it works:
//! a server restarted meanwhile may hold the old list again (an old client
//! wrote it back), and then the new client refuses and the adoption must
//! be run again. Keys
//! that the new list places on another server start there afresh: their
//! old data stays on the old server, unread (as after that server's
//! restart).
//!
//! What it cannot see: a client behind a proxy (the proxy hides the
//! servers; `mcds-text`), and clients that name one server two ways
//! (`localhost:11211` and `127.0.0.1:11211` are two lists: refused, not
//! missed).
//!
//! [`Builder::pool_name`]: crate::Builder::pool_name
//! [`Builder::pool_recheck`]: crate::Builder::pool_recheck
//! [`MemcachedStore::adopt_pool`]: crate::MemcachedStore::adopt_pool

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mcds_core::{Error, Io, Key, Op, Result, Ttl};
use mcds_net::incarnation::ServerClock;
use parking_lot::Mutex;

use crate::server::Server;
use crate::session::Session;
use crate::store::MemcachedStore;

/// The key of the pool record (with `:<name>` for a named pool).
pub const POOL_KEY: &str = "__mcds_pool";

/// How often each connection reads the record again by default (it is
/// replaced by a new one, whose handshake reads it).
pub(crate) const DEFAULT_RECHECK: Duration = Duration::from_secs(30);

/// The first word and version of a record.
const MAGIC: &str = "mcds-pool 1";

/// This client's pool: the record's key and the list it expects there.
#[derive(Debug)]
pub(crate) struct PoolSpec {
    pub(crate) key: Key,
    /// The distribution and the servers as configured.
    pub(crate) view: String,
    /// More than one server: a server with no record (full under `-M`)
    /// cannot be vouched for, and refuses. (Clients of one server place
    /// every key on it, so two of them never split anything.)
    pub(crate) pooled: bool,
}

/// What a server's record says of this client's list, as a connection's
/// handshake read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PoolSeen {
    /// The same list, in effect.
    Agrees,
    /// Another list: this one.
    Differs(String),
    /// The same list, in effect from this Unix second of the server's
    /// clock on.
    NotBefore(u64),
    /// None could be stored (the server is full and may not evict, `-M`):
    /// nothing to compare. A pool's client refuses then (see
    /// [`PoolSpec::pooled`]).
    Unrecorded,
    /// None, and this client did not write its own: it had found another
    /// list there, and a record lost since (a flush, a restart) does not
    /// make its own list the pool's. It keeps refusing.
    Missing,
    /// None, on a server that has lost items since it started (this: how
    /// many): the record may have been among them, another list's, so a
    /// pool's client that never read it there does not write its own. It
    /// refuses until the list is adopted, or a client that agreed on it
    /// before writes it back.
    Lost(String),
}

impl PoolSpec {
    /// The pool `name` (empty: the default) of a store over `servers`
    /// placed by `distribution`.
    pub(crate) fn new(name: &str, distribution: &str, servers: &[String]) -> Result<PoolSpec> {
        let key = if name.is_empty() {
            Key::new(POOL_KEY)?
        } else {
            Key::new(format!("{POOL_KEY}:{name}"))?
        };
        // One server places every key on itself, whatever the
        // distribution.
        let view = match servers {
            [one] => one.clone(),
            _ => format!("{distribution} {}", servers.join(",")),
        };
        Ok(PoolSpec {
            key,
            view,
            pooled: servers.len() > 1,
        })
    }

    /// The record this client writes: its list, in effect from
    /// `not_before` (Unix seconds by the server's clock; 0: at once).
    pub(crate) fn record(&self, not_before: u64) -> Vec<u8> {
        format!("{MAGIC} {not_before} {}", self.view).into_bytes()
    }

    /// What `value`, a server's record, says of this client's list, the
    /// server's clock reading at least `server_secs`.
    pub(crate) fn judge(&self, value: &[u8], server_secs: u64) -> PoolSeen {
        let text = String::from_utf8_lossy(value);
        let parsed = text
            .strip_prefix(MAGIC)
            .and_then(|rest| rest.strip_prefix(' '))
            .and_then(|rest| rest.split_once(' '))
            .and_then(|(at, view)| Some((at.parse::<u64>().ok()?, view)));
        match parsed {
            Some((_, view)) if view != self.view => PoolSeen::Differs(view.to_string()),
            Some((not_before, _)) if not_before > server_secs => PoolSeen::NotBefore(not_before),
            Some(_) => PoolSeen::Agrees,
            None => PoolSeen::Differs(format!(
                "a record mcds cannot read: {:?}",
                text.chars().take(120).collect::<String>()
            )),
        }
    }
}

/// Not dialed yet.
const UNKNOWN: u8 = 0;
/// Agrees, unrecorded, or unreachable (a server that cannot be reached
/// grants nothing).
const FINE: u8 = 1;
/// Refuses: another list, or this one not in effect yet.
const REFUSES: u8 = 2;

/// Milliseconds since the first call in this process (a clock for the
/// atomics below).
fn now_ms() -> u64 {
    static BASE: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    u64::try_from(BASE.get_or_init(Instant::now).elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// One server's latest record, as its latest dial or reading saw it.
#[derive(Debug)]
pub(crate) struct ServerPool {
    state: AtomicU8,
    seen: Mutex<Option<PoolSeen>>,
    /// When it was read, by [`now_ms`].
    read_at: AtomicU64,
}

impl Default for ServerPool {
    fn default() -> ServerPool {
        ServerPool {
            state: AtomicU8::new(UNKNOWN),
            seen: Mutex::new(None),
            read_at: AtomicU64::new(0),
        }
    }
}

impl ServerPool {
    /// What a new connection's handshake (or a reading) found, for a
    /// client of a pool (`pooled`) or of one server.
    pub(crate) fn learn(&self, seen: PoolSeen, pooled: bool) {
        let mut current = self.seen.lock();
        let seen = match seen {
            // Still refused: keep the list that was seen.
            PoolSeen::Missing if current.is_some() => current.clone().unwrap_or(PoolSeen::Missing),
            other => other,
        };
        let state = match seen {
            PoolSeen::Agrees => FINE,
            PoolSeen::Unrecorded if !pooled => FINE,
            _ => REFUSES,
        };
        *current = Some(seen);
        drop(current);
        self.read_at.store(now_ms(), Ordering::Release);
        self.state.store(state, Ordering::Release);
    }

    /// What [`MemcachedStore::adopt_pool`] wrote: this client's list.
    fn adopted(&self, seen: PoolSeen) {
        *self.seen.lock() = None;
        self.learn(seen, false);
    }

    /// Whether a dial may write this client's list where none is: not
    /// once this server has refused it; only if the server lost nothing
    /// before this client read its record there; always once it recorded
    /// this list (the record was lost since: write it back).
    pub(crate) fn claim(&self) -> crate::conn::Claim {
        use crate::conn::Claim;
        match self.state.load(Ordering::Acquire) {
            REFUSES => Claim::Never,
            FINE if matches!(*self.seen.lock(), Some(PoolSeen::Agrees)) => Claim::Always,
            _ => Claim::IfNothingLost,
        }
    }

    /// `Err` if this server's record refuses this client's list (`spec`),
    /// or a pool's client has never read it. A list adopted for later is
    /// read again once the server's clock has passed its time.
    pub(crate) fn check(&self, server: &Server, spec: &PoolSpec) -> Result<()> {
        let view = &spec.view;
        match self.state.load(Ordering::Acquire) {
            FINE => return Ok(()),
            // (A client of one server reads it with its first dial.)
            UNKNOWN if !spec.pooled => return Ok(()),
            UNKNOWN => {
                return Err(server.down().unwrap_or_else(|| Error::ServerDown {
                    server: server.addr.clone(),
                    reason: format!(
                        "its pool record was never read: a client reads every server's record once before it works (this client: {view}), so that no server it has not seen can be claimed by another list meanwhile"
                    ),
                    retry_in: Duration::ZERO,
                }));
            }
            _ => {}
        }
        let seen = self.seen.lock().clone();
        match seen {
            Some(PoolSeen::Differs(theirs)) => Err(Error::InvalidArgument(format!(
                "this client's server list ({view}) differs from the one recorded on {server} by other clients of the same servers ({theirs}); clients whose lists differ place keys on different servers, and two of them could hold one lock or split a counter, so this client refuses every operation. Give every client the same list (the same addresses, in the same order, with the same distribution); to change the list, adopt the new one (MemcachedStore::adopt_pool) as RELIABILITY.md describes; clients that share servers but no keys can use pool names of their own (Builder::pool_name)",
                server = server.addr
            ))),
            Some(PoolSeen::NotBefore(at)) => {
                let now = server_lower_bound(server.learned.clock());
                if now >= at {
                    // Read again first (see `due`): the next check does.
                    self.read_at.store(0, Ordering::Release);
                    return Err(Error::ServerDown {
                        server: server.addr.clone(),
                        reason: format!(
                            "this client's server list ({view}) takes effect now; its record is read again before the next operation"
                        ),
                        retry_in: Duration::ZERO,
                    });
                }
                Err(Error::ServerDown {
                    server: server.addr.clone(),
                    reason: format!(
                        "this client's server list ({view}) was adopted to take effect {} s from now by the server's clock: clients of the previous list may still hold its locks until then",
                        at - now
                    ),
                    retry_in: Duration::from_secs(at - now),
                })
            }
            Some(PoolSeen::Lost(losses)) => Err(Error::InvalidArgument(format!(
                "{server} holds no record of its pool's server list, and it has lost items since it started ({losses}): the record may have been evicted or flushed, so this client ({view}) cannot tell whether other clients of these servers use another list — two such clients could hold one lock or split a counter — and it refuses every operation. If every client uses this list, adopt it once (`mcds pool adopt`, MemcachedStore::adopt_pool); clients that recorded it before write it back at their next reading (Builder::pool_recheck, 30 s by default)",
                server = server.addr
            ))),
            Some(PoolSeen::Unrecorded | PoolSeen::Missing) => Err(Error::InvalidArgument(format!(
                "{server} holds no record of its pool's server list and could not take one (memcached full, started with -M): this client ({view}) cannot tell whether other clients use another list, and two such clients could hold one lock, so it refuses every operation. Free memory on {server} or restart it with more (-m); or adopt this list (MemcachedStore::adopt_pool, `mcds pool adopt`) once there is room",
                server = server.addr
            ))),
            _ => Ok(()),
        }
    }

    /// A dial failed: the server grants nothing until it answers again.
    pub(crate) fn unreachable(&self) {
        // A server never read stays unknown (it refuses: when it comes
        // back, another list may claim it, and this client could have
        // granted its keys elsewhere meanwhile). One read before keeps
        // its verdict: a server that recorded this list and died grants
        // nothing, and its record, if lost, is not claimed by a client
        // it refused.
        self.read_at.store(now_ms(), Ordering::Release);
    }

    /// Whether this list, adopted for later, is due by the server's clock
    /// (its record is then read again before it is trusted: a restart
    /// may have lost it, and an old client written its own since).
    fn due(&self, server: &Server) -> bool {
        matches!(*self.seen.lock(), Some(PoolSeen::NotBefore(at)) if server_lower_bound(server.learned.clock()) >= at)
    }

    /// Whether the record was read more than `recheck` ago, claiming the
    /// next reading if so (one caller reads it; the others go on).
    fn claim_if_stale(&self, now: u64, recheck: u64) -> bool {
        let at = self.read_at.load(Ordering::Acquire);
        now.saturating_sub(at) > recheck
            && self
                .read_at
                .compare_exchange(at, now, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    }
}

/// The least a server's clock can read now, from a sample (it read
/// `secs` some time after the sample was sent, and ticks once a second).
fn server_lower_bound(clock: Option<ServerClock>) -> u64 {
    clock.map_or(0, |c| c.secs + c.sent.elapsed().as_secs().saturating_sub(1))
}

impl MemcachedStore {
    /// Let an operation through if no server of the list records another
    /// list (or this one for later), else its error; nothing is sent then.
    /// Before the first operation every server is dialed once, so that
    /// each one's record is read (a pool's client refuses while a server
    /// it never read cannot be reached). One atomic load per server and
    /// one clock reading after that: each connection's handshake reads the
    /// record again, connections are replaced every recheck interval, and
    /// records older than that are read again here.
    pub(crate) async fn pool_gate(&self, io: Io) -> Result<()> {
        let now = now_ms();
        let recheck = u64::try_from(self.config.pool_recheck.as_millis()).unwrap_or(u64::MAX);
        let (mut unknown, mut stale, mut refuses) = (false, false, false);
        for server in &self.servers {
            let state = server.pool.state.load(Ordering::Acquire);
            if state == REFUSES && server.pool.due(server) {
                server.pool.read_at.store(0, Ordering::Release);
            }
            let age = now.saturating_sub(server.pool.read_at.load(Ordering::Acquire));
            unknown |= state == UNKNOWN;
            refuses |= state == REFUSES;
            // A refusing record is read again too: it may have been
            // adopted since.
            stale |= state != UNKNOWN && age > recheck;
        }
        // (One server: its own session's dial reads the record, and the
        // session checks it; there is no other server to read first.)
        if unknown && self.servers.len() > 1 {
            Box::pin(self.dial_unknown(io)).await;
        }
        if stale {
            Box::pin(self.reread_stale(io, now, recheck)).await;
        }
        if !(unknown || stale || refuses) {
            return Ok(());
        }
        self.pool_refusal()
    }

    /// Read again the records read longer than `recheck` ago (a server
    /// this client has not used since then has no newer handshake): one
    /// `mg` each.
    async fn reread_stale(&self, io: Io, now: u64, recheck: u64) {
        let spec = &self.config.pool;
        for server in &self.servers {
            if !server.pool.claim_if_stale(now, recheck) {
                continue;
            }
            let read = Session::open_unchecked(server, &self.config)
                .execute(io, &Op::Get(&spec.key))
                .await
                .and_then(mcds_core::Reply::item);
            match read {
                Ok(Some(item)) => server.pool.learn(
                    spec.judge(&item.value, server_lower_bound(server.learned.clock())),
                    spec.pooled,
                ),
                // Gone (a flush, an eviction): written again if this
                // client recorded it there before; not if it was refused
                // there (it stays refused); and a pool's client that never
                // read it there leaves it to its next dial, whose
                // handshake reads what the server has lost.
                Ok(None) if server.pool.claim() == crate::conn::Claim::Never => {
                    server.pool.learn(PoolSeen::Missing, spec.pooled);
                }
                Ok(None)
                    if spec.pooled && server.pool.claim() == crate::conn::Claim::IfNothingLost =>
                {
                    continue;
                }
                Ok(None) => {
                    let add = Op::Add {
                        key: &spec.key,
                        value: &spec.record(0),
                        ttl: Ttl::Never,
                    };
                    let seen = match Session::open_unchecked(server, &self.config)
                        .execute(io, &add)
                        .await
                        .and_then(mcds_core::Reply::stored)
                    {
                        Ok(mcds_core::Stored::Stored(_)) => PoolSeen::Agrees,
                        // Another client's, now: read at the next check.
                        Ok(mcds_core::Stored::NotStored) => continue,
                        Err(Error::OutOfMemory { .. }) => PoolSeen::Unrecorded,
                        Err(_) => {
                            server.pool.unreachable();
                            continue;
                        }
                    };
                    server.pool.learn(seen, spec.pooled);
                }
                // Unreachable: it grants nothing (read again next interval).
                Err(_) => server.pool.unreachable(),
            }
        }
    }

    /// Dial the servers not dialed yet (their handshakes read the record).
    async fn dial_unknown(&self, io: Io) {
        for server in &self.servers {
            if server.pool.state.load(Ordering::Acquire) == UNKNOWN {
                // A failure marks it unreachable (`Server::dial`).
                let _ = Session::open_unchecked(server, &self.config)
                    .incarnation_io(io)
                    .await;
            }
        }
    }

    /// The error of the first server whose record refuses this client's
    /// list, if any.
    fn pool_refusal(&self) -> Result<()> {
        for server in &self.servers {
            server.pool.check(server, &self.config.pool)?;
        }
        Ok(())
    }

    fn pool_spec(&self) -> &PoolSpec {
        &self.config.pool
    }

    /// This client's server list as the pool records hold it: the
    /// distribution, then the servers as configured
    /// (`rendezvous 10.0.0.1:11211,10.0.0.2:11211`).
    pub fn pool_view(&self) -> &str {
        &self.pool_spec().view
    }

    /// Make this store's server list the pool's: write it to every server
    /// of the list, in effect `grace` from now by each server's own clock
    /// (`Duration::ZERO`: at once), for a change of the list that never
    /// lets two clients hold one lock (see [`pool`](crate::pool) and
    /// RELIABILITY.md). Clients of the old list refuse every operation
    /// from their next recheck on; clients of this list, from the moment
    /// the grace has passed. Choose `grace` at least the old clients'
    /// [`pool_recheck`](crate::Builder::pool_recheck) plus the longest
    /// lock lease plus 3 s. Every server must take the record: the first
    /// that does not is the error (run it again).
    ///
    /// ```
    /// use std::time::Duration;
    /// use mcds_core::{Key, Store, Ttl};
    /// use mcds_memcached::MemcachedStore;
    /// # let pool = mcds_testserver::ServerPool::start(3, Default::default());
    /// # let servers = pool.addrs();
    ///
    /// let old = MemcachedStore::connect(&servers[..2].join(","))?;
    /// old.set(&Key::new("k")?, b"v", Ttl::Never)?; // records [A,B]
    /// let new = MemcachedStore::connect(&servers.join(","))?;
    /// assert!(new.get(&Key::new("k")?).is_err(), "the lists differ");
    /// new.adopt_pool(Duration::ZERO)?; // every old client stopped first
    /// assert!(new.get(&Key::new("k")?).is_ok());
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn adopt_pool(&self, grace: Duration) -> Result<()> {
        mcds_core::block_on(self.adopt_pool_io(Io::Blocking, grace))
    }

    async fn adopt_pool_io(&self, io: Io, grace: Duration) -> Result<()> {
        let grace_secs = grace.as_secs() + u64::from(grace.subsec_nanos() > 0);
        let spec = self.pool_spec();
        for server in &self.servers {
            let mut session = Session::open_unchecked(server, &self.config);
            let clock = session.incarnation_io(io).await?.clock;
            // The most the server's clock can read now, so the grace is
            // never shorter than asked.
            let not_before = match (grace_secs, clock) {
                (0, _) => 0,
                (_, Some(c)) => c.upper_at(Instant::now()).saturating_add(grace_secs),
                // No clock to count on: the grace from now, in Unix time.
                (_, None) => mcds_core::Clock::now_ms(&mcds_core::SystemClock) / 1000 + grace_secs,
            };
            let set = Op::Set {
                key: &spec.key,
                value: &spec.record(not_before),
                ttl: Ttl::Never,
            };
            session.execute(io, &set).await?;
            // (Not `learn`: a refused list is not kept once replaced.)
            server.pool.adopted(if not_before == 0 {
                PoolSeen::Agrees
            } else {
                PoolSeen::NotBefore(not_before)
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(servers: &[&str]) -> PoolSpec {
        let servers: Vec<String> = servers.iter().map(|s| s.to_string()).collect();
        PoolSpec::new("", "rendezvous", &servers).unwrap()
    }

    #[test]
    fn records_are_judged_by_list_and_time() {
        let c = spec(&["a:1", "b:2"]);
        assert_eq!(c.judge(&c.record(0), 100), PoolSeen::Agrees);
        assert_eq!(c.judge(&c.record(100), 100), PoolSeen::Agrees);
        assert_eq!(c.judge(&c.record(105), 100), PoolSeen::NotBefore(105));
        let other = spec(&["a:1"]);
        assert_eq!(
            c.judge(&other.record(0), 100),
            PoolSeen::Differs("a:1".into())
        );
        for garbage in [
            &b""[..],
            b"mcds-pool 1",
            b"mcds-pool 1 x rendezvous a:1,b:2",
            b"\xff",
        ] {
            assert!(
                matches!(c.judge(garbage, 100), PoolSeen::Differs(_)),
                "{garbage:?}"
            );
        }
    }

    #[test]
    fn a_named_pool_has_a_key_of_its_own() {
        let named = PoolSpec::new("billing", "ketama", &["a:1".into(), "b:2".into()]).unwrap();
        assert_eq!(named.key.as_bytes(), b"__mcds_pool:billing");
        assert_eq!(named.view, "ketama a:1,b:2");
        // One server: the distribution places nothing elsewhere.
        assert_eq!(
            PoolSpec::new("", "ketama", &["a:1".into()]).unwrap().view,
            "a:1"
        );
        assert!(PoolSpec::new("has space", "ketama", &[]).is_err());
    }
}
