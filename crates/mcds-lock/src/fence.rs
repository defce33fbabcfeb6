//! Fencing tokens' arithmetic: how a fence counter a client creates is
//! started (from its clock, above every token this process handed out for
//! the lock), and the per-process floors that remember those tokens.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mcds_core::Key;

/// Fence counter values per microsecond: a counter a client creates
/// starts at its clock's Unix microseconds times this (plus a tie-break
/// below [`FENCE_TIE_BREAK`]), which stays below 2^63 until the year 2109.
/// A counter's later tokens stay below the start of one created a
/// microsecond after it as long as it was acquired fewer than about a
/// thousand times per microsecond of its life (an acquire takes a round
/// trip: tens of microseconds). 2,100 rather than 2,048 so that a counter
/// started this way is above one started the earlier way, at `unix_ms ·
/// 2^21`, for the same instant.
pub const FENCE_TICKS_PER_MICROSECOND: u64 = 2_100;

/// A new fence counter's random tie-break (below this): two processes
/// whose clocks read the same microsecond when each re-creates a lost
/// counter start it at different values but for a 1 in 1,024 chance.
pub const FENCE_TIE_BREAK: u64 = 1_024;

/// How far ahead of its clock a client starts a fence counter it
/// creates: above every counter that a client whose clock is up to this
/// much ahead started from its clock alone (an older mcds, or one through
/// a proxy, `mcds-text`, which starts counters at its clock's time).
pub const FENCE_CLOCK_SKEW: Duration = Duration::from_secs(60);

/// How many lock names' highest tokens a process remembers (at most: a
/// name whose slots are taken is not remembered, and its tokens start from
/// the clock, as before this process handed any out).
const FENCE_FLOORS: usize = 16_384;

/// How many slots a name may take after its own, when others hold those.
const FENCE_FLOOR_PROBES: usize = 16;

/// One remembered name: its hash (0: a free slot) and its highest token.
struct FloorSlot {
    name: AtomicU64,
    floor: AtomicU64,
}

/// The highest fencing token this process has handed out, per fence key
/// (by its 64-bit hash): an open-addressed table of atomics, with no lock.
/// Not a mutex around a map: a mutex that another thread holds when the
/// process forks stays locked forever in the child (a Python worker forked
/// by gunicorn or Celery would hang at its first fenced acquire), and a
/// fixed table allocates nothing per name.
static FLOORS: [FloorSlot; FENCE_FLOORS] = [const {
    FloorSlot {
        name: AtomicU64::new(0),
        floor: AtomicU64::new(0),
    }
}; FENCE_FLOORS];

/// The slot that remembers `fence_key`: found, or (with `claim`) taken
/// from the free ones after its place; `None` if there is none.
fn floor_slot(fence_key: &Key, claim: bool) -> Option<&'static FloorSlot> {
    // Never 0, which marks a free slot.
    let name = mcds_core::stable_hash(fence_key.as_bytes()) | 1;
    let start = (name >> 32) as usize % FENCE_FLOORS;
    for i in 0..FENCE_FLOOR_PROBES {
        let slot = &FLOORS[(start + i) % FENCE_FLOORS];
        match slot.name.load(Ordering::Acquire) {
            held if held == name => return Some(slot),
            0 if claim => {
                match slot
                    .name
                    .compare_exchange(0, name, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => return Some(slot),
                    Err(other) if other == name => return Some(slot),
                    Err(_) => {}
                }
            }
            0 => return None,
            _ => {}
        }
    }
    None
}

/// The highest token this process has handed out for `fence_key` (0 if
/// none, or not remembered).
pub(crate) fn fence_floor(fence_key: &Key) -> u64 {
    floor_slot(fence_key, false).map_or(0, |slot| slot.floor.load(Ordering::Acquire))
}

/// Remember that `token` was handed out for `fence_key`.
pub(crate) fn record_fence(fence_key: &Key, token: u64) {
    if let Some(slot) = floor_slot(fence_key, true) {
        slot.floor.fetch_max(token, Ordering::AcqRel);
    }
}

/// The value a fence counter that does not exist is created with, at
/// `now_us` (Unix microseconds): [`FENCE_TICKS_PER_MICROSECOND`] per
/// microsecond, a random tie-break below [`FENCE_TIE_BREAK`], and never at
/// or below a token this process has handed out for the lock (then the
/// highest such token, plus 2, plus the tie-break).
pub(crate) fn fence_initial(now_us: u64, fence_key: &Key) -> u64 {
    let tie_break = mcds_core::random_u64() % FENCE_TIE_BREAK;
    let from_clock = now_us
        .saturating_mul(FENCE_TICKS_PER_MICROSECOND)
        .saturating_add(tie_break);
    from_clock.max(
        fence_floor(fence_key)
            .saturating_add(2)
            .saturating_add(tie_break),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fence_floors_remember_each_names_highest_token() {
        let a = Key::new("lock:floor-test-a:fence").unwrap();
        let b = Key::new("lock:floor-test-b:fence").unwrap();
        assert_eq!(fence_floor(&a), 0, "not handed out yet");
        record_fence(&a, 50);
        record_fence(&a, 40);
        record_fence(&b, 7);
        assert_eq!(fence_floor(&a), 50, "the highest, not the latest");
        assert_eq!(fence_floor(&b), 7);
        // Many names: each remembered exactly, or not at all (0: its
        // tokens start from the clock), never another name's floor.
        for i in 0..2_000u64 {
            let k = Key::new(format!("lock:floor-many-{i}:fence")).unwrap();
            record_fence(&k, 1_000 + i);
        }
        for i in 0..2_000u64 {
            let k = Key::new(format!("lock:floor-many-{i}:fence")).unwrap();
            assert!(matches!(fence_floor(&k), 0) || fence_floor(&k) == 1_000 + i);
        }
        assert_eq!(fence_floor(&a), 50);
    }
}
