//! The lock's documented limits (the `# Limits` section of [`Lock`]'s
//! docs): the value at a limit works, one past it is the documented error,
//! and nothing was written (the store's item count, or the lock item,
//! read back, is unchanged). On the embedded store and on real memcached;
//! no sleeps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::{Error, Key, MemoryStore, Scope, Store};
use mcds_lock::{Extend, Lock, MAX_LEASE, Release};
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

/// A store under test and a way to count the items it holds.
enum Backend {
    Memory(Arc<MemoryStore>),
    Memcached(Box<MemcachedServer>, Arc<dyn Store>),
}

impl Backend {
    fn both() -> [Backend; 2] {
        let server = MemcachedServer::start_default();
        let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
        // The first exchange writes the store's own items (its restart
        // markers): counted before any test counts.
        store.get(&Key::new("warm").unwrap()).unwrap();
        [
            Backend::Memory(Arc::new(MemoryStore::new())),
            Backend::Memcached(Box::new(server), store),
        ]
    }

    fn name(&self) -> &'static str {
        match self {
            Backend::Memory(_) => "memory",
            Backend::Memcached(..) => "memcached",
        }
    }

    fn store(&self) -> Arc<dyn Store> {
        match self {
            Backend::Memory(store) => Arc::clone(store) as Arc<dyn Store>,
            Backend::Memcached(_, store) => Arc::clone(store),
        }
    }

    /// How many items the store holds.
    fn items(&self) -> u64 {
        match self {
            Backend::Memory(store) => store.len() as u64,
            Backend::Memcached(server, _) => server.stat("curr_items"),
        }
    }
}

/// A name of exactly `len` bytes in keys: `:` (3 bytes escaped) as far as
/// it goes, then plain bytes, so that the escaping is counted too.
fn name_of(len: usize) -> String {
    let colons = len / 3 - 1;
    format!("{}{}", ":".repeat(colons), "n".repeat(len - 3 * colons))
}

/// Acquire `lock` (with its fence counter when fencing), check it is held
/// by the guard, and release it.
fn acquire_and_release(lock: &Lock) {
    let guard = lock.try_acquire().unwrap().expect("free");
    assert_eq!(lock.holder().unwrap().as_deref(), Some(guard.owner_token()));
    assert_eq!(guard.release().unwrap(), Release::Released);
    assert_eq!(lock.holder().unwrap(), None);
}

#[test]
fn a_lock_name_of_239_bytes_locks_and_one_more_byte_is_invalid_key_and_nothing_is_written() {
    for backend in Backend::both() {
        let lock = Lock::new(backend.store(), &name_of(239), Duration::from_secs(30))
            .unwrap()
            .with_fencing(true);
        assert_eq!(lock.key().len(), 250);
        acquire_and_release(&lock);
        let before = backend.items();
        for name in [name_of(240), String::new(), "has space".into()] {
            let err = Lock::new(backend.store(), &name, Duration::from_secs(30)).unwrap_err();
            assert!(matches!(err, Error::InvalidKey { .. }), "{name:?}: {err}");
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
    }
}

#[test]
fn a_scope_prefix_takes_its_bytes_from_the_lock_name() {
    for backend in Backend::both() {
        let scope = Scope::new(backend.store()).with_prefix("jobs/").unwrap();
        let lock = Lock::new(&scope, &name_of(239 - 5), Duration::from_secs(30)).unwrap();
        acquire_and_release(&lock);
        let before = backend.items();
        let err = Lock::new(&scope, &name_of(239 - 4), Duration::from_secs(30)).unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
    }
}

#[test]
fn a_with_key_key_of_244_bytes_locks_with_fencing_and_245_is_invalid_key_and_nothing_is_written() {
    for backend in Backend::both() {
        let key = Key::new("k".repeat(244)).unwrap();
        let lock = Lock::with_key(backend.store(), key, Duration::from_secs(30))
            .unwrap()
            .with_fencing(true);
        let guard = lock.try_acquire().unwrap().expect("free");
        assert!(guard.fencing_token().is_some(), "the 250-byte fence key");
        assert_eq!(guard.release().unwrap(), Release::Released);
        let before = backend.items();
        let err = Lock::with_key(
            backend.store(),
            Key::new("k".repeat(245)).unwrap(),
            Duration::from_secs(30),
        )
        .unwrap_err();
        assert!(matches!(err, Error::InvalidKey { .. }), "{err}");
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
    }
}

#[test]
fn a_ttl_of_one_second_locks_and_a_shorter_one_is_invalid_argument_and_nothing_is_written() {
    for backend in Backend::both() {
        acquire_and_release(&Lock::new(backend.store(), "short", Duration::from_secs(1)).unwrap());
        let before = backend.items();
        for ttl in [Duration::ZERO, Duration::from_millis(999)] {
            let err = Lock::new(backend.store(), "short", ttl).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{ttl:?}: {err}");
            let key = Key::new("short-lock").unwrap();
            let err = Lock::with_key(backend.store(), key, ttl).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{ttl:?}: {err}");
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
    }
}

#[test]
fn a_ttl_of_max_lease_locks_and_a_nanosecond_more_is_invalid_argument_and_nothing_is_written() {
    for backend in Backend::both() {
        acquire_and_release(&Lock::new(backend.store(), "year", MAX_LEASE).unwrap());
        let before = backend.items();
        for ttl in [
            MAX_LEASE + Duration::from_nanos(1),
            MAX_LEASE + Duration::from_secs(1),
            Duration::MAX,
        ] {
            let err = Lock::new(backend.store(), "year", ttl).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{ttl:?}: {err}");
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
    }
}

#[test]
fn an_extend_past_the_ttl_bounds_is_invalid_argument_and_leaves_the_lease_as_it_was() {
    for backend in Backend::both() {
        let store = backend.store();
        let lock = Lock::new(Arc::clone(&store), "lease", Duration::from_secs(30)).unwrap();
        let mut guard = lock.try_acquire().unwrap().expect("free");
        // At the limits.
        assert_eq!(guard.extend(MAX_LEASE).unwrap(), Extend::Extended);
        assert_eq!(
            guard.extend(Duration::from_secs(1)).unwrap(),
            Extend::Extended
        );
        let item = store.get(lock.key()).unwrap().expect("held");
        for ttl in [
            Duration::from_millis(999),
            MAX_LEASE + Duration::from_nanos(1),
            Duration::MAX,
        ] {
            let err = guard.extend(ttl).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{ttl:?}: {err}");
            let err = guard.auto_extend(ttl).unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{ttl:?}: {err}");
        }
        let after = store.get(lock.key()).unwrap().expect("still held");
        assert_eq!(
            (after.value, after.cas),
            (item.value, item.cas),
            "{}: the lock item was not written",
            backend.name()
        );
        assert!(!guard.is_lost());
        assert_eq!(guard.release().unwrap(), Release::Released);
    }
}

#[test]
fn an_owner_label_of_200_bytes_names_the_holder_and_201_is_invalid_argument_and_nothing_is_written()
{
    for backend in Backend::both() {
        let longest = "host=web1 ".repeat(20);
        assert_eq!(longest.len(), 200);
        let lock = Lock::new(backend.store(), "labelled", Duration::from_secs(30))
            .unwrap()
            .with_owner_label(&longest)
            .unwrap();
        let guard = lock.try_acquire().unwrap().expect("free");
        let holder = lock.holder().unwrap().expect("held");
        assert!(holder.starts_with(&format!("{longest} ")), "{holder}");
        assert_eq!(guard.release().unwrap(), Release::Released);
        let before = backend.items();
        for label in [format!("{longest}x"), "line\nbreak".into(), "é".into()] {
            let err = Lock::new(backend.store(), "labelled", Duration::from_secs(30))
                .unwrap()
                .with_owner_label(&label)
                .unwrap_err();
            assert!(matches!(err, Error::InvalidArgument(_)), "{label:?}: {err}");
        }
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
    }
}

#[test]
fn an_acquire_that_times_out_is_wait_timeout_and_leaves_the_holder_alone() {
    for backend in Backend::both() {
        let lock = Lock::new(backend.store(), "busy", Duration::from_secs(30))
            .unwrap()
            .with_backoff(Duration::from_micros(100), Duration::from_millis(1));
        // No timeout at all: `Duration::MAX` waits for ever, and a free
        // lock is taken at once.
        let started = Instant::now();
        let guard = lock.acquire(Duration::MAX).unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        let holder = lock.holder().unwrap();
        let before = backend.items();
        for timeout in [Duration::ZERO, Duration::from_millis(20)] {
            let err = lock.acquire(timeout).unwrap_err();
            assert!(
                matches!(err, Error::WaitTimeout { .. }),
                "{timeout:?}: {err}"
            );
        }
        assert_eq!(lock.holder().unwrap(), holder, "{}", backend.name());
        assert_eq!(
            backend.items(),
            before,
            "{}: nothing written",
            backend.name()
        );
        assert_eq!(guard.release().unwrap(), Release::Released);
    }
}
