//! Round-trip accounting.
//!
//! Every backend calls [`record`] once per network exchange (or, for the
//! embedded store, once per operation, as if it were a server), on the
//! calling thread. Counters are thread-local, so [`CountingStore`] and
//! [`measure`] attribute traffic exactly to the operation that caused it,
//! even while other threads use the same store.
//!
//! [`CountingStore`]: crate::CountingStore

use std::cell::Cell;

/// Network traffic: exchanges and commands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Request/response exchanges with a server (a pipelined batch to one
    /// server is one).
    pub round_trips: u64,
    /// Commands sent (a batch of ten `mg` is ten).
    pub commands: u64,
}

impl std::ops::Sub for Traffic {
    type Output = Traffic;
    fn sub(self, rhs: Traffic) -> Traffic {
        Traffic {
            round_trips: self.round_trips.wrapping_sub(rhs.round_trips),
            commands: self.commands.wrapping_sub(rhs.commands),
        }
    }
}

impl std::ops::AddAssign for Traffic {
    fn add_assign(&mut self, rhs: Traffic) {
        self.round_trips += rhs.round_trips;
        self.commands += rhs.commands;
    }
}

thread_local! {
    static COUNTERS: Cell<Traffic> = const { Cell::new(Traffic { round_trips: 0, commands: 0 }) };
}

/// Record one round trip carrying `commands` commands, on this thread.
pub fn record(commands: u64) {
    COUNTERS.with(|c| {
        let mut t = c.get();
        t.round_trips += 1;
        t.commands += commands;
        c.set(t);
    });
}

/// Count `traffic`, measured on another thread, as this thread's (a store
/// that runs an op on a worker thread credits its caller with the round
/// trips, so [`measure`] around an async call sees them).
pub fn add(traffic: Traffic) {
    COUNTERS.with(|c| {
        let mut t = c.get();
        t += traffic;
        c.set(t);
    });
}

/// Everything recorded on this thread so far.
pub fn current() -> Traffic {
    COUNTERS.with(Cell::get)
}

/// Run `f` and return its result with the traffic it caused on this thread.
///
/// ```
/// use mcds_core::{Key, MemoryStore, Store, Ttl, traffic};
///
/// let store = MemoryStore::new();
/// let k = Key::new("n")?;
/// let (v, t) = traffic::measure(|| store.incr_or_init(&k, 1, 1, Ttl::Never));
/// assert_eq!(v?, 1);
/// assert_eq!(t.round_trips, 1);
/// # Ok::<(), mcds_core::Error>(())
/// ```
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, Traffic) {
    let before = current();
    let out = f();
    (out, current() - before)
}

/// Run `f` and count everything it sent as `round_trips` round trips,
/// keeping its command count: how the embedded store reports a pipelined
/// batch (one "round trip", as a server would see it).
pub fn as_round_trips<T>(round_trips: u64, f: impl FnOnce() -> T) -> T {
    let (out, t) = measure(f);
    COUNTERS.with(|c| {
        let mut now = c.get();
        now.round_trips = now.round_trips.wrapping_sub(t.round_trips) + round_trips;
        c.set(now);
    });
    out
}
