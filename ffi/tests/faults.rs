//! libmcds when its server fails: a killed and a frozen memcached give
//! clear result codes within the timeout (1 s by default, or what
//! `mcds_store_builder_set_io_timeout_ms` set) plus 100 ms, and the same
//! handles work again once the server is back.

use std::ffi::{CStr, CString};
use std::ptr;
use std::time::{Duration, Instant};

use mcds_ffi::*;
use mcds_testkit::MemcachedServer;

const BOUND: Duration = Duration::from_millis(1100);

struct Handles {
    store: *mut mcds_store,
    counter: *mut mcds_counter,
}

impl Handles {
    fn new(addr: &str) -> Handles {
        let servers = CString::new(addr).unwrap();
        let name = CString::new("ffi-faults").unwrap();
        let (mut store, mut counter) = (ptr::null_mut(), ptr::null_mut());
        // SAFETY: valid strings and out-pointers.
        unsafe {
            assert_eq!(
                mcds_store_new_memcached(servers.as_ptr(), &mut store),
                MCDS_OK
            );
            assert_eq!(
                mcds_counter_new(store, name.as_ptr(), &mut counter),
                MCDS_OK
            );
        }
        Handles { store, counter }
    }

    /// `mcds_counter_incr`: its code, value and how long it took.
    fn incr(&self) -> (mcds_result, u64, Duration) {
        let mut value = 0;
        let started = Instant::now();
        // SAFETY: a live counter and a writable output.
        let r = unsafe { mcds_counter_incr(self.counter, 1, &mut value) };
        (r, value, started.elapsed())
    }
}

impl Drop for Handles {
    fn drop(&mut self) {
        // SAFETY: live handles, freed once.
        unsafe {
            mcds_counter_free(self.counter);
            mcds_store_free(self.store);
        }
    }
}

fn last_error() -> String {
    // SAFETY: libmcds returns a NUL-terminated thread-local string.
    unsafe { CStr::from_ptr(mcds_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn eventually_ok(h: &Handles) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let (r, value, _) = h.incr();
        if r == MCDS_OK {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "never recovered: {}",
            last_error()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn killed_and_frozen_servers_give_clear_codes() {
    let mut server = MemcachedServer::start_default();
    let h = Handles::new(&server.addr());
    assert_eq!(h.incr().0, MCDS_OK);

    server.kill();
    let mut codes = Vec::new();
    for _ in 0..5 {
        let (r, _, took) = h.incr();
        assert!(took <= BOUND, "took {took:?}");
        assert!(
            [MCDS_IO, MCDS_SERVER_DOWN, MCDS_AMBIGUOUS].contains(&r),
            "killed server: code {r}"
        );
        assert!(last_error().contains("memcached"), "{}", last_error());
        codes.push(r);
    }
    server.restart();
    assert_eq!(eventually_ok(&h), 1, "a restarted server starts empty");

    server.pause();
    let (r, _, took) = h.incr();
    assert!(took <= BOUND, "took {took:?}");
    assert!(
        [MCDS_AMBIGUOUS, MCDS_TIMEOUT, MCDS_SERVER_DOWN].contains(&r),
        "frozen server: code {r}"
    );
    let frozen_message = last_error();
    server.resume();
    let after = eventually_ok(&h);
    assert!(after >= 2, "the frozen server kept its data: {after}");
    println!(
        "libmcds: killed server -> codes {codes:?} within {BOUND:?}; frozen -> {r} ({frozen_message}); the same handles work after restart and SIGCONT"
    );
}

/// A release that fails with a transient error keeps the guard in the
/// handle: calling `mcds_lock_release` again retries it (it used to answer
/// MCDS_INVALID_ARGUMENT, the guard already gone), and the lock ends free.
#[test]
fn a_failed_lock_release_can_be_retried() {
    let server = MemcachedServer::start_default();
    let servers = CString::new(server.addr()).unwrap();
    let name = CString::new("ffi-retry").unwrap();
    let (mut store, mut lock) = (ptr::null_mut(), ptr::null_mut());
    let mut released = true;
    let mut acquired = false;
    // SAFETY: valid strings, out-pointers and live handles, freed once.
    unsafe {
        assert_eq!(
            mcds_store_new_memcached(servers.as_ptr(), &mut store),
            MCDS_OK
        );
        assert_eq!(mcds_lock_new(store, name.as_ptr(), 30, &mut lock), MCDS_OK);
        assert_eq!(mcds_lock_try_acquire(lock, &mut acquired), MCDS_OK);
        assert!(acquired);
        server.pause();
        let first = mcds_lock_release(lock, &mut released);
        let message = last_error();
        server.resume();
        let second = mcds_lock_release(lock, &mut released);
        println!(
            "frozen release: {first} ({message}); retried after SIGCONT: {second}, released {released}"
        );
        assert!(
            [MCDS_AMBIGUOUS, MCDS_TIMEOUT].contains(&first),
            "{first}: {message}"
        );
        assert_eq!(second, MCDS_OK, "{}", last_error());
        // The first release was applied on resume, so the retry finds the
        // lock already free: reported as not released by this call.
        assert_eq!(mcds_lock_try_acquire(lock, &mut acquired), MCDS_OK);
        assert!(acquired, "the lock is free again");
        mcds_lock_free(lock);
        mcds_store_free(store);
    }
}

/// The I/O timeout set through `mcds_store_builder` bounds a call on a
/// frozen server: a 150 ms timeout answers well before the 1 s default.
#[test]
fn a_builder_io_timeout_bounds_a_call_on_a_frozen_server() {
    let server = MemcachedServer::start_default();
    let servers = CString::new(server.addr()).unwrap();
    let name = CString::new("ffi-timeout").unwrap();
    let (mut builder, mut store, mut counter) = (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
    let mut value = 0;
    // SAFETY: valid strings, out-pointers and live handles, freed once.
    unsafe {
        assert_eq!(mcds_store_builder_new(&mut builder), MCDS_OK);
        assert_eq!(mcds_store_builder_set_io_timeout_ms(builder, 150), MCDS_OK);
        assert_eq!(
            mcds_store_builder_build_memcached(builder, servers.as_ptr(), &mut store),
            MCDS_OK
        );
        mcds_store_builder_free(builder);
        assert_eq!(
            mcds_counter_new(store, name.as_ptr(), &mut counter),
            MCDS_OK
        );
        assert_eq!(mcds_counter_incr(counter, 1, &mut value), MCDS_OK);
        server.pause();
        let started = Instant::now();
        let r = mcds_counter_incr(counter, 1, &mut value);
        let took = started.elapsed();
        let message = last_error();
        server.resume();
        println!("frozen server, 150 ms I/O timeout: code {r} after {took:?} ({message})");
        assert!(
            [MCDS_AMBIGUOUS, MCDS_TIMEOUT].contains(&r),
            "{r}: {message}"
        );
        assert!(took < Duration::from_millis(600), "took {took:?}");
        mcds_counter_free(counter);
        mcds_store_free(store);
    }
}
