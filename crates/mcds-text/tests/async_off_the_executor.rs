//! The text store's async API runs each op off the caller's thread: a
//! future polled while its server is frozen (SIGSTOP) is pending, where a
//! blocking `execute` would have held the thread until the I/O timeout.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Waker};
use std::time::Duration;

use mcds_core::{Access, Io, Key, Store, Ttl, block_on, traffic};
use mcds_testserver::MemcachedServer;
use mcds_text::TextStore;

#[test]
fn an_async_op_on_a_frozen_server_is_pending_not_blocking() {
    let server = MemcachedServer::start_default();
    let store = TextStore::builder()
        .io_timeout(Duration::from_secs(5))
        .connect([server.addr()])
        .unwrap();
    let key = Key::new("frozen").unwrap();
    store.set(&key, b"v", Ttl::Never).unwrap();

    server.pause();
    let access = Access::new(&store, Io::Async);
    let mut get = pin!(access.get(&key));
    let first = get.as_mut().poll(&mut Context::from_waker(Waker::noop()));
    assert!(
        first.is_pending(),
        "the first poll answered {first:?}: it ran the exchange on the caller's thread"
    );
    server.resume();
    let item = block_on(get).unwrap().unwrap();
    assert_eq!(item.value, b"v");
}

#[test]
fn async_round_trips_count_on_the_callers_thread() {
    let server = MemcachedServer::start_default();
    let store = TextStore::connect(&server.addr()).unwrap();
    let key = Key::new("counted").unwrap();
    let access = Access::new(&store, Io::Async);
    let (set, t) = traffic::measure(|| block_on(access.set(&key, b"v", Ttl::Never)));
    set.unwrap();
    assert_eq!(t.round_trips, store_round_trips_of_a_set(&store, &key));
    let batch = [
        mcds_core::Op::Get(&key),
        mcds_core::Op::Touch {
            key: &key,
            ttl: Ttl::secs(60),
        },
    ];
    let (replies, t) = traffic::measure(|| block_on(access.pipeline(&batch)));
    assert!(replies.iter().all(Result::is_ok), "{replies:?}");
    assert_eq!(t.round_trips, 1);
    let pending = access.supports_cas(&key);
    assert!(matches!(block_on(pending), Ok(true)));
}

/// The blocking set's round trips, for the async one to match.
fn store_round_trips_of_a_set(store: &TextStore, key: &Key) -> u64 {
    traffic::measure(|| store.set(key, b"v", Ttl::Never).unwrap())
        .1
        .round_trips
}
