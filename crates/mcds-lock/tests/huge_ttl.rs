//! An adversarial review found: a lock whose TTL is huge (`Duration::MAX`, `u64::MAX`
//! seconds: "never expires", as `acquire(Duration::MAX)` means "wait for
//! ever"). `Lock::new` must refuse it or the lock must work; instead:
//! `Lock::new` panics in `Ttl::from` (debug; in release the TTL becomes
//! 1 s, see mcds-core's `ttl_overflow`), and `try_acquire` panics adding the
//! TTL to an `Instant` after its add was written.

use std::sync::Arc;
use std::time::Duration;

use mcds_core::Store;
use mcds_lock::Lock;
use mcds_memcached::MemcachedStore;
use mcds_testkit::MemcachedServer;

fn message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn a_lock_with_a_huge_ttl_never_panics() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let mut panics = Vec::new();
    for ttl in [
        Duration::MAX,
        Duration::from_secs(u64::MAX),
        Duration::from_secs(u64::MAX / 2),
        Duration::from_secs(u64::from(u32::MAX)),
        mcds_lock::MAX_LEASE + Duration::from_secs(1),
    ] {
        let lock = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            Lock::new(Arc::clone(&store), "forever", ttl)
        })) {
            Ok(Ok(lock)) => lock,
            Ok(Err(e)) => {
                println!("{ttl:?}: refused by Lock::new: {e}");
                continue;
            }
            Err(panic) => {
                let m = message(panic);
                println!("{ttl:?}: Lock::new panicked: {m}");
                panics.push(format!("{ttl:?}: Lock::new: {m}"));
                continue;
            }
        };
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let guard = lock.try_acquire().unwrap().expect("free");
            guard.release().unwrap()
        }));
        match result {
            Ok(release) => println!("{ttl:?}: acquired and {release:?}"),
            Err(panic) => {
                let m = message(panic);
                let holder = lock.holder().unwrap();
                println!(
                    "{ttl:?}: try_acquire panicked ({m}); the lock item left behind: {holder:?}"
                );
                panics.push(format!("{ttl:?}: try_acquire: {m}"));
                let key = String::from_utf8(lock.key().as_bytes().to_vec()).unwrap();
                server.raw(format!("delete {key}\r\n").as_bytes(), |_| true);
            }
        }
    }
    assert!(panics.is_empty(), "huge lock TTLs panic: {panics:?}");
}

/// The longest lease is granted, and lasts: its item's expiry, read back,
/// is a year away (not cut to a past or near second by memcached's 32-bit
/// absolute times).
#[test]
fn the_longest_lease_is_granted_whole() {
    let server = MemcachedServer::start_default();
    let store: Arc<dyn Store> = Arc::new(MemcachedStore::connect(&server.addr()).unwrap());
    let lock = Lock::new(Arc::clone(&store), "year", mcds_lock::MAX_LEASE).unwrap();
    let guard = lock.try_acquire().unwrap().expect("free");
    let key = String::from_utf8(lock.key().as_bytes().to_vec()).unwrap();
    let reply = server.raw(format!("mg {key} t\r\n").as_bytes(), |_| true);
    println!("the lock item: {reply:?}");
    let left: u64 = reply[0]
        .split(' ')
        .find_map(|f| f.strip_prefix('t'))
        .and_then(|t| t.parse().ok())
        .expect("a TTL");
    assert!(
        left >= mcds_lock::MAX_LEASE.as_secs(),
        "the year lease has {left} s left on the server"
    );
    assert_eq!(guard.release().unwrap(), mcds_lock::Release::Released);
}
