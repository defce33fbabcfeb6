//! # mcds-testkit
//!
//! Test kit for **mcds**. Tests run against real memcached processes, never
//! a mock:
//!
//! * [`MemcachedServer`] starts the `memcached` binary from `PATH` on a free
//!   127.0.0.1 port with chosen flags (`-m`, `-M`, `-I`), and can SIGKILL,
//!   SIGSTOP/SIGCONT and restart it. It is killed when dropped. It lives in
//!   the crate `mcds-testserver` (re-exported here), which depends on no mcds
//!   crate, so that mcds-memcached's own tests can use it without a
//!   dependency loop.
//! * [`conformance`] is the backend conformance suite: the same cases run
//!   against the embedded store, one memcached and a 3-server pool
//!   ([`conformance_suite!`]).
//! * [`differential`] runs random op sequences on two stores and compares
//!   every result (used with proptest).
//! * [`seed`] gives every random test a printed seed that replays it
//!   (`PROPTEST_RNG_SEED`, `MCDS_TEST_SEED`).
//! * [`embedded_at`] is the embedded store and a scope on one manual clock,
//!   for structure tests that move time by hand.
//! * [`counting_memcached`] and [`round_trips`] are the setup and the
//!   measure of the round-trip tests.
//! * [`spawn_tied`] starts any helper process so that it dies with the test
//!   process, even when that is killed with SIGKILL.
//! * [`fill_until_out_of_memory`] fills a `memcached -M` until every small
//!   write is refused, for the tests of what a full server does.
//!
//! * [`HookStore`] runs a test's code just before or after the batches it
//!   forwards to a real store: a client descheduled between round trips.
//!
//! The fuzz harnesses are in the crate `mcds-fuzz`.

pub mod conformance;
pub mod differential;
mod hook_store;
pub mod seed;
pub use hook_store::{Hook, HookStore};
pub use mcds_testserver::{
    MemcachedServer, NutcrackerServer, ServerOptions, ServerPool, process_alive, spawn_tied,
};

/// The tokio runtime of the async tests: 2 worker threads (the CI machine
/// has 2 cores), timers and I/O on. Tasks spawned on it must be `Send`, so
/// a test that spawns an async structure call also shows its future is.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime for the async tests")
}

/// A current-thread tokio runtime with timers and I/O on: what
/// `#[tokio::main(flavor = "current_thread")]` builds, for the tests of
/// what mcds does on such a runtime (it runs tasks only inside its
/// `block_on`).
pub fn current_thread_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a current-thread tokio runtime for the async tests")
}

/// The first whole hour (Unix ms) that starts at least 125 s from now: the
/// earliest hour bucket a time series read can vouch for on a memcached
/// server started before this call (reads vouch for buckets that start 2
/// minutes or more after their server's last loss, its start included;
/// see `mcds_timeseries::TimeSeries`). Tests of time series on a fresh
/// server record from there, with a manual clock set to it.
///
/// ```
/// let t0 = mcds_testkit::vouched_hour();
/// let now = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
/// assert_eq!(t0 % 3_600_000, 0);
/// assert!(t0 >= now + 125_000 && t0 < now + 125_000 + 3_600_000);
/// ```
pub fn vouched_hour() -> u64 {
    let now = mcds_core::Clock::now_ms(&mcds_core::SystemClock);
    (now + 125_000).div_ceil(3_600_000) * 3_600_000
}

/// A scope on `store` whose manual clock stands at [`vouched_hour`] (so
/// that time series reads on a server started before the call vouch for
/// every bucket from there, and memcached, which expires by its own clock,
/// sees a clock about real), with that clock and that hour's start. For
/// tests where no data is lost: a loss is timed by the real clock, which
/// this one runs up to an hour ahead of (use [`a_second_after_now`]).
pub fn vouched_scope(
    store: std::sync::Arc<dyn mcds_core::Store>,
) -> (mcds_core::ManualClock, mcds_core::Scope, u64) {
    let t0 = vouched_hour();
    let clock = mcds_core::ManualClock::new(t0);
    let scope = mcds_core::Scope::new(store).with_clock(std::sync::Arc::new(clock.clone()));
    (clock, scope, t0)
}

/// The whole second at least 1 s after the real time, once the real time
/// has reached it (sleeps up to 2 s): a time series bucket of 1 s starting
/// there, on a memcached server started before this call, is vouched for
/// with no clock skew allowed (memcached times its start to within 1 s),
/// and a clock set to it is not ahead of the real one. Tests that make a
/// server lose data use it: their clocks must be about real, since the
/// loss check times losses by the real clock.
pub fn a_second_after_now() -> u64 {
    let real = || mcds_core::Clock::now_ms(&mcds_core::SystemClock);
    let second = (real() + 1_000).div_ceil(1_000) * 1_000;
    while real() < second {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    second
}

/// The embedded store on a [`ManualClock`](mcds_core::ManualClock)
/// standing at `unix_ms`, and a [`Scope`](mcds_core::Scope) on it with the
/// same clock: the setup of every structure test that moves time by hand
/// (the store expires items by that clock, so tests never sleep).
///
/// ```
/// use std::time::Duration;
/// use mcds_core::{Key, Store, Ttl};
///
/// let (store, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
/// let k = Key::new("k")?;
/// store.set(&k, b"v", Ttl::secs(5))?;
/// clock.advance(Duration::from_secs(5));
/// assert!(store.get(&k)?.is_none());
/// assert_eq!(scope.clock().now_ms(), 1_800_000_005_000);
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub fn embedded_at(
    unix_ms: u64,
) -> (
    std::sync::Arc<dyn mcds_core::Store>,
    mcds_core::ManualClock,
    mcds_core::Scope,
) {
    use std::sync::Arc;
    let clock = mcds_core::ManualClock::new(unix_ms);
    let store: Arc<dyn mcds_core::Store> = Arc::new(
        mcds_core::MemoryStore::builder()
            .clock(Arc::new(clock.clone()))
            .build(),
    );
    let scope = mcds_core::Scope::new(Arc::clone(&store)).with_clock(Arc::new(clock.clone()));
    (store, clock, scope)
}

/// A [`CountingStore`](mcds_core::CountingStore) over a
/// [`MemcachedStore`](mcds_memcached::MemcachedStore) on `server`, its
/// connection already made: the store of a test that counts an op's round
/// trips with [`round_trips`], so the dial is not counted in the first op.
pub fn counting_memcached(server: &MemcachedServer) -> std::sync::Arc<dyn mcds_core::Store> {
    let store = mcds_core::CountingStore::new(
        mcds_memcached::MemcachedStore::connect(&server.addr()).expect("connect"),
    );
    use mcds_core::Store;
    store
        .get(&mcds_core::Key::new("warm").expect("a key"))
        .expect("warm the connection");
    std::sync::Arc::new(store)
}

/// memcached with its smallest items (`-I 1k -o slab_chunk_max=512`):
/// a set's directory and buckets, or a table's member list, reach the item
/// limit within a few hundred members. Use [`one_k_store`] with it.
pub fn one_k_items_server() -> MemcachedServer {
    let mut options = ServerOptions::default().item_size("1k");
    options.extra_args = vec!["-o".into(), "slab_chunk_max=512".into()];
    MemcachedServer::start(options)
}

/// A store for [`one_k_items_server`] at `addr`: an item limit of 1,024
/// bytes, and replies awaited for `io_timeout`.
pub fn one_k_store(
    addr: &str,
    io_timeout: std::time::Duration,
) -> std::sync::Arc<dyn mcds_core::Store> {
    std::sync::Arc::new(
        mcds_memcached::MemcachedStore::builder()
            .item_size_limit(1024)
            .io_timeout(io_timeout)
            .connect([addr])
            .expect("a store for a local memcached"),
    )
}

/// A store on `server` alone, connections and replies awaited for
/// `timeout`, a server that refused a dial left alone 20 ms to 200 ms: a
/// quorum member of the quorum lock's tests of servers killed, frozen
/// and restarted.
pub fn quorum_member(
    server: &MemcachedServer,
    timeout: std::time::Duration,
) -> std::sync::Arc<mcds_memcached::MemcachedStore> {
    std::sync::Arc::new(
        mcds_memcached::MemcachedStore::builder()
            .io_timeout(timeout)
            .connect_timeout(timeout)
            .down_backoff(
                std::time::Duration::from_millis(20),
                std::time::Duration::from_millis(200),
            )
            .connect([server.addr()])
            .expect("a store for a local memcached"),
    )
}

/// A [`QuorumStore`](mcds_core::QuorumStore) of `servers`, each member a
/// [`quorum_member`].
pub fn quorum_store<'s>(
    servers: impl IntoIterator<Item = &'s MemcachedServer>,
    timeout: std::time::Duration,
) -> std::sync::Arc<dyn mcds_core::Store> {
    let members = servers
        .into_iter()
        .map(|s| {
            let store: std::sync::Arc<dyn mcds_core::Store> = quorum_member(s, timeout);
            (s.addr(), store)
        })
        .collect();
    std::sync::Arc::new(mcds_core::QuorumStore::new(members).expect("3 to 15 servers"))
}

/// A [`MemcachedStore`](mcds_memcached::MemcachedStore) on `server` with
/// `connections` shared connections (lanes): the store of the tests of
/// what happens across a server's connections.
pub fn store_with_connections(
    server: &MemcachedServer,
    connections: usize,
) -> std::sync::Arc<mcds_memcached::MemcachedStore> {
    std::sync::Arc::new(
        mcds_memcached::MemcachedStore::builder()
            .connections_per_server(connections)
            .connect([server.addr()])
            .expect("connect"),
    )
}

/// The round trips `f` makes through [`CountingStore`](mcds_core::CountingStore)s
/// on this thread.
pub fn round_trips(f: impl FnOnce()) -> u64 {
    mcds_core::traffic::measure(f).1.round_trips
}

/// Fill `store` (a `memcached -M`, no eviction) with items of every value
/// size from 1 to 400 bytes, in pipelined rounds, until a whole round is
/// refused with [`OutOfMemory`](mcds_core::Error::OutOfMemory): every slab
/// class an item of that size range falls in is then full, and the next
/// write of such an item fails. Returns the keys stored (`fill:<round>:<i>`),
/// so a test can make room again by deleting some.
///
/// # Panics
///
/// On any other error, or if the server still takes writes after 10,000
/// rounds (it is not `-M`, or has far more memory than a test needs).
pub fn fill_until_out_of_memory(store: &dyn mcds_core::Store) -> Vec<mcds_core::Key> {
    use mcds_core::{Error, Key, Op, Ttl};
    let mut stored = Vec::new();
    let values: Vec<Vec<u8>> = (1..=400).map(|n| vec![b'x'; n]).collect();
    for round in 0..10_000 {
        let keys: Vec<Key> = (0..values.len())
            .map(|i| Key::new(format!("fill:{round}:{i}")).expect("a valid key"))
            .collect();
        let ops: Vec<Op<'_>> = keys
            .iter()
            .zip(&values)
            .map(|(key, value)| Op::Set {
                key,
                value,
                ttl: Ttl::Never,
            })
            .collect();
        let mut any = false;
        for (key, result) in keys.iter().zip(store.pipeline(&ops)) {
            match result {
                Ok(_) => {
                    any = true;
                    stored.push(key.clone());
                }
                Err(Error::OutOfMemory { .. }) => {}
                Err(e) => panic!("filling the server: {e}"),
            }
        }
        if !any {
            return stored;
        }
    }
    panic!("the server never filled up: is it memcached -M with a small -m?");
}

/// Write `value` under every key of `keys` (a plain `set`, no expiry), in
/// pipelined batches of 2,000: ordinary cache traffic, to fill a server's
/// memory and make it evict. The replies, in order.
///
/// ```
/// let store = mcds_core::MemoryStore::new();
/// let keys: Vec<mcds_core::Key> = (0..3)
///     .map(|i| mcds_core::Key::new(format!("fill:{i}")).unwrap())
///     .collect();
/// assert!(mcds_testkit::set_all(&store, &keys, b"x").iter().all(|r| r.is_ok()));
/// ```
pub fn set_all(
    store: &dyn mcds_core::Store,
    keys: &[mcds_core::Key],
    value: &[u8],
) -> Vec<mcds_core::Result<mcds_core::Reply>> {
    let mut replies = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(2_000) {
        let ops: Vec<mcds_core::Op<'_>> = chunk
            .iter()
            .map(|key| mcds_core::Op::Set {
                key,
                value,
                ttl: mcds_core::Ttl::Never,
            })
            .collect();
        replies.extend(store.pipeline(&ops));
    }
    replies
}

/// A `memcached -M` with 2 MB of memory, restarted and filled by "another
/// application" before any mcds client connected, so that it has no
/// incarnation marker and cannot take one ([`fill_without_marker`]).
pub fn markerless_server() -> MemcachedServer {
    let mut server = MemcachedServer::start(ServerOptions::default().memory_mb(2).no_evict());
    server.restart();
    fill_without_marker(&server);
    server
}

/// Fill `server` (a `memcached -M`, no eviction, restarted or fresh) the
/// way another application would, so that no incarnation marker is made:
/// raw text `set`s of every value size from 1 to 400 bytes, until a whole
/// round is refused. Then delete 40 of the items of 300 to 400 bytes:
/// writes of that size fit again, and the marker's `add` still does not
/// (checked). The state of a server restarted and refilled before any
/// mcds client connected; the same every time.
///
/// # Panics
///
/// If the server never fills, or still takes the marker.
pub fn fill_without_marker(server: &MemcachedServer) {
    use std::io::{BufRead, BufReader, Write};
    let mut stream = std::net::TcpStream::connect(server.addr()).expect("a raw connection");
    let mut reader = BufReader::new(stream.try_clone().expect("a reader"));
    let mut large = Vec::new();
    for round in 0.. {
        assert!(round < 10_000, "the server never filled up: is it -M?");
        let mut batch = Vec::new();
        for n in 1..=400usize {
            batch.extend_from_slice(format!("set app:{round}:{n} 0 0 {n}\r\n").as_bytes());
            batch.extend(std::iter::repeat_n(b'x', n));
            batch.extend_from_slice(b"\r\n");
        }
        stream.write_all(&batch).expect("the fill's write");
        let mut any = false;
        for n in 1..=400usize {
            let mut line = String::new();
            reader.read_line(&mut line).expect("the fill's reply");
            if line == "STORED\r\n" {
                any = true;
                if n >= 300 {
                    large.push(format!("app:{round}:{n}"));
                }
            } else {
                assert!(line.starts_with("SERVER_ERROR"), "{line:?}");
            }
        }
        if !any {
            break;
        }
    }
    for key in large.iter().take(40) {
        assert_eq!(
            server.raw(format!("delete {key}\r\n").as_bytes(), |_| true),
            ["DELETED"]
        );
    }
    let marker = format!(
        "add {} 0 0 32\r\n{}\r\n",
        mcds_memcached::INCARNATION_KEY,
        "0".repeat(32)
    );
    let refused = server.raw(marker.as_bytes(), |_| true);
    assert!(
        refused[0].starts_with("SERVER_ERROR"),
        "the marker fits: {refused:?}"
    );
}

#[cfg(test)]
mod tests {
    /// mcds-testserver names the marker key itself (it sits below
    /// mcds-memcached); it must be the key mcds-memcached uses, or command logs
    /// would count the handshake's marker reads as test traffic.
    #[test]
    fn the_test_server_knows_the_marker_key() {
        assert_eq!(
            mcds_testserver::INCARNATION_KEY,
            mcds_memcached::INCARNATION_KEY
        );
    }
}
