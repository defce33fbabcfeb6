//! The cleanup of adds that were given up: an `add` of a lock item whose
//! outcome nobody waited for (a cancelled async acquire, a quorum server
//! left behind as a straggler, an add that got no reply) may still take
//! the item, later, with no guard to release it. Its value is unique to
//! that add, so the item is deleted if it holds one of those values.
//!
//! One sweeper per server and key, not one per add: while a quorum member
//! is frozen, every acquire attempt of every waiter leaves an add to it,
//! and a thread for each (a review counted 1,200 threads, 4,400 in a tight
//! loop) is what a frozen server must not cost. Only one of those adds
//! can take the item at a time (they are `add`s), so one sweeper that
//! knows all their values does the work of all of them. It looks again
//! with growing pauses until no value was added for [`QUIET`] (the time a
//! late add has to land), then ends.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use mcds_core::{Access, Io, Key, Store, block_on};

use crate::background::in_background;

/// How long a sweeper goes on looking after the last value it was given:
/// about what one cleanup per add looked for before (25 ms doubling, 8
/// times).
const QUIET: Duration = Duration::from_millis(6_400);

/// The longest pause between two looks.
const MAX_PAUSE: Duration = Duration::from_millis(1_600);

/// What one sweeper looks for (each value with when it was given: a
/// value is looked for [`QUIET`] long, so the list stays as short as the
/// adds given up in that time), and since when nothing was added.
struct Wanted {
    values: Vec<(Vec<u8>, Instant)>,
    last_added: Instant,
}

type Sweepers = Mutex<HashMap<(usize, Key), Arc<Mutex<Wanted>>>>;

fn sweepers() -> &'static Sweepers {
    static SWEEPERS: OnceLock<Sweepers> = OnceLock::new();
    SWEEPERS.get_or_init(Sweepers::default)
}

/// Delete `key` on `store` if an add of `value` takes it (now or within
/// [`QUIET`] of the last such request for this server and key), in the
/// background.
pub(crate) fn sweep(store: Arc<dyn Store>, key: Key, value: String) {
    let id = (Arc::as_ptr(&store).cast::<()>() as usize, key.clone());
    let wanted = {
        let mut all = sweepers().lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(wanted) = all.get(&id) {
            let mut w = wanted.lock().unwrap_or_else(PoisonError::into_inner);
            w.values.push((value.into_bytes(), Instant::now()));
            w.last_added = Instant::now();
            return; // its sweeper looks for this value too
        }
        let wanted = Arc::new(Mutex::new(Wanted {
            values: vec![(value.into_bytes(), Instant::now())],
            last_added: Instant::now(),
        }));
        all.insert(id.clone(), Arc::clone(&wanted));
        wanted
    };
    let last = (
        Arc::clone(&store),
        key.clone(),
        Arc::clone(&wanted),
        id.clone(),
    );
    in_background(
        "mcds-lock cleanup",
        move |io| async move {
            // However the sweeper ends (done, or its task dropped with its
            // runtime), its entry goes, so that a value given later starts
            // a new one (a dropped runtime left the entry behind, and every
            // later value went to a sweeper that no longer ran: an
            // adversarial review's finding).
            let _entry = Entry(id.clone(), Arc::clone(&wanted));
            let mut pause = Duration::from_millis(25);
            loop {
                look(&*store, &key, &wanted, io).await;
                if retire(&id, &wanted) {
                    return;
                }
                Access::new(&*store, io).sleep(pause).await;
                pause = (pause * 2).min(MAX_PAUSE);
            }
        },
        // The runtime shut down before the looking was done: one last
        // look, blocking, on the thread dropping the task.
        move || {
            let (store, key, wanted, id) = last;
            block_on(look(&*store, &key, &wanted, Io::Blocking));
            forget(&id, &wanted);
        },
    );
}

/// A sweeper's place in the registry, removed when the sweeper ends
/// (unless a newer one took the place).
struct Entry((usize, Key), Arc<Mutex<Wanted>>);

impl Drop for Entry {
    fn drop(&mut self) {
        forget(&self.0, &self.1);
    }
}

/// Remove the sweeper of `id` from the registry if it is still `wanted`'s.
fn forget(id: &(usize, Key), wanted: &Arc<Mutex<Wanted>>) {
    let mut all = sweepers().lock().unwrap_or_else(PoisonError::into_inner);
    if all.get(id).is_some_and(|w| Arc::ptr_eq(w, wanted)) {
        all.remove(id);
    }
}

/// One look: delete the item if it holds a value looked for (by CAS, so
/// only that item). Values looked for longer than [`QUIET`] are dropped.
async fn look(store: &dyn Store, key: &Key, wanted: &Mutex<Wanted>, io: Io) {
    let access = Access::new(store, io);
    wanted
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values
        .retain(|(_, given)| given.elapsed() < QUIET);
    let Ok(Some(item)) = access.get(key).await else {
        return;
    };
    let ours = wanted
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .values
        .iter()
        .any(|(v, _)| *v == item.value);
    if ours {
        let _ = access.delete_cas(key, item.cas).await;
    }
}

/// Whether the sweeper of `id` is done (nothing added for [`QUIET`]); if
/// so it is removed, under the registry's lock, so that a value added
/// from now on starts a new one.
fn retire(id: &(usize, Key), wanted: &Arc<Mutex<Wanted>>) -> bool {
    let mut all = sweepers().lock().unwrap_or_else(PoisonError::into_inner);
    let quiet = wanted
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .last_added
        .elapsed()
        >= QUIET;
    if quiet && all.get(id).is_some_and(|w| Arc::ptr_eq(w, wanted)) {
        all.remove(id);
    }
    quiet
}
