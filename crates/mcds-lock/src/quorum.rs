//! The quorum lock: a [`Lock`] made from a [`QuorumStore`] (independent
//! memcached servers, `memcached://a,b,c?quorum`) is held by whoever holds
//! its item on a **majority** of them. The whole algorithm is in this file;
//! each server's part of a lease is the single-server lock's (CAS-guarded
//! release and extend, restart-safe CAS ids, adoption after a lost
//! reply).
//!
//! * **Acquire.** To every server at once, one pipeline each: `add` of the
//!   lock item (a random owner token, the lease's TTL), the fence
//!   counter's increment (with fencing), and a read of the quorum record
//!   (below). Granted when a majority added within the lease's validity:
//!   the TTL less the drift allowance ([`quorum_drift`]), counted from before
//!   the first request went out. Once the outcome is known, servers that
//!   have not answered get a grace (as long as the answers took, at least
//!   2 ms) and are then left: an `add` of theirs applied later is deleted
//!   in the background if it holds this attempt's value (for about 6 s).
//!   A refused or failed attempt deletes what it added (a partial acquire
//!   is undone), and so does one whose future is dropped (a cancelled
//!   async call): every add's cleanup stays armed until the guard exists,
//!   the undo deleted its item, or the add is known not to have been
//!   applied; an add that got no reply keeps it.
//!   One round trip of wall time while the fence counters agree.
//! * **Release** goes to every server; `Released` when a majority still
//!   held this lease's item when the release began (a CAS delete of each
//!   succeeded, in this call or an earlier try of it), so no other holder
//!   can have had a majority before then. A release retried after an
//!   error counts the items its earlier tries deleted: another client may
//!   take the lock between two tries, once the work under the lease is
//!   over, and the retry still reports `Released`.
//! * **Extend** goes to every server. The lease vouches only for what it
//!   can prove: that at every instant its items were on a majority. A
//!   CAS-guarded write of a server's item succeeds only if that item has
//!   been there since it was written, so `Extended` needs a majority of
//!   items written before the lease was last vouched for (the grant, or
//!   the last `Extended`) to be extended in time. A server that lost its
//!   item (restarted, evicted), or never had it, is given it back (`add`)
//!   first; that item counts from the next `Extended` on. When a renewal
//!   finds an item gone, it gives it back at once and vouches again, so
//!   the lease regains its margin in that renewal and survives a second
//!   minority's loss after it. An item given back after the lease had
//!   lapsed vouches for nothing: such an extend is `Lost`.
//! * **Every add writes a value of its own** (the owner token, `~` and a
//!   random number), so that the background cleanup of an add that was
//!   given up (a server left behind as a straggler, a cancelled call)
//!   deletes only what that add wrote, never an item a later renewal
//!   wrote on the same server. [`Guard::owner_token`](crate::Guard::owner_token)
//!   and [`Lock::holder`](crate::Lock::holder) give the owner token.
//! * **The quorum record.** Every server keeps the sorted list of the
//!   quorum's servers under [`QUORUM_RECORD_KEY`]: each acquire's pipeline
//!   `add`s it, then reads it, before the lock's own `add`, so of two
//!   clients that find it missing one writes it and the other reads it.
//!   A client whose list differs from a server's record is refused
//!   ([`Error::InvalidArgument`]): two clients with different lists could
//!   each take a majority of their own list. An acquire reads the record
//!   only on the servers that answer before it settles, so a client can
//!   still be granted when the servers that kept the other record answer
//!   late and the ones that answered lost theirs (a restart): no acquire
//!   can tell without waiting for every server, which a frozen server
//!   would make as long as the timeout. Every renewal therefore reads
//!   every server's record too: both holders learn it at their next
//!   extend (`InvalidArgument`) and give the lease up.
//!   This is caught wherever the lists share a server that kept its
//!   record; lists with no server in common are two different quorums,
//!   which no client can tell from one.
//!
//! # Fencing tokens across a minority's loss
//!
//! Each server keeps a fence counter for the lock. An acquire increments
//! it on every server (in the acquire's pipeline; an increment never
//! creates a missing counter), and its token `t` is the largest value
//! returned, raised past the highest token this process handed out for
//! the name, and, if any server's counter was missing, past a new start
//! from the clock (as the single-server lock starts a lost counter:
//! microseconds plus [`FENCE_CLOCK_SKEW`](crate::FENCE_CLOCK_SKEW), times
//! [`FENCE_TICKS_PER_MICROSECOND`](crate::FENCE_TICKS_PER_MICROSECOND),
//! above the time the server last reported a loss). Before the token is
//! returned, every server that answered with a lower value (or none) is
//! raised to `t` (one more round trip, only then), and the acquire fails
//! unless a majority holds a counter of at least `t`, and returns no
//! lease unless the raise was done while the lease certainly held (a
//! client stopped between its grant and its raise could otherwise raise
//! the counters after the next holder's increment).
//!
//! So when an acquire returns `t`, a majority `W` holds counters `≥ t`.
//! A later grant increments on a majority `M`; `W` and `M` share a
//! server, whose increment returns more than `t`, so the later token is
//! larger: **no clock is involved while the servers of `W` that lost
//! their counters (a restart, a flush, an eviction) are a minority**, and
//! a counter lost and re-created in the same millisecond, by any clock,
//! changes nothing. Servers that missed the raise (down at the time)
//! count with the ones that lost their counters. Only when both leave a
//! majority of `M` without the counter does the order fall back to the
//! clocks of the processes re-creating it, as for the single-server lock
//! (see the crate docs); in-process, tokens also never fall below one the
//! process handed out before for the same name.
//!
//! # Timing: what the lease assumes, and what protects a resource
//!
//! The lease is certain for its TTL, less [`quorum_drift`], from before the
//! acquire's requests were sent, as long as (1) the servers' clocks run at
//! the client's rate to within 1% (memcached expires items by its own
//! seconds counter; the item is written with the TTL plus 2 s to cover
//! that counter's lag, see the crate docs) and (2) the holder is not
//! paused: a process stopped by the kernel, a long GC pause or a
//! swapped-out page does not know its lease ran out, and may write to the
//! protected resource after another holder was granted the lock. No lease
//! can prevent that. The fencing token does: the resource remembers the
//! largest token it has seen and refuses a write with a smaller one, so
//! the paused holder's late write is refused (Kleppmann, "How to do
//! distributed locking", on Redlock).
//!
//! # Restarts
//!
//! A server that restarts empty loses the lease's item there; the
//! holder keeps its majority on the others, so no second holder can take
//! a majority while the first holds one (a contender gets at most the
//! restarted server and the servers nobody holds). CAS ids are tied to
//! the server's incarnation (`mcds_memcached`), so no release or extend
//! of the old item can touch a new holder's item on the restarted server.
//! The next extend adds the item there again.
//!
//! What no quorum survives: a majority of the servers losing the item
//! between two renewals (two of three restarted within one renewal
//! interval, TTL/3 with auto-extension). A lease granted on a bare
//! majority (a server slow or down at the grant) has no margin until a
//! renewal gives the others the item: until then one server's loss is
//! enough. A contender can then take the
//! restarted servers while the first holder still counts on its lease,
//! until that holder's next extend finds it lost. The fencing token still
//! orders the two (the contender's counters were lost too, so its token
//! starts from the clock, past the first holder's), and the resource
//! refuses the older holder's writes.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::Poll;
use std::time::{Duration, Instant};

use mcds_core::{
    Access, BoxFuture, Error, Io, Item, Key, Op, QuorumStore, Reply, Result, Retention, Store,
    Stored, Ttl,
};

use crate::fence::{fence_floor, record_fence};
use crate::{Abandoned, Extend, Guard, GuardState, Held, Lock, Release, lease_ttl, without_cas};

/// The key under which every server of a quorum records the quorum's
/// servers (sorted, joined with `,`).
pub const QUORUM_RECORD_KEY: &str = "mcds:quorum";

/// The allowance for clock drift taken off a quorum lease: 1% of the TTL
/// plus 2 ms (Redlock's). It covers servers whose clocks run up to 1%
/// faster than the client's.
pub fn quorum_drift(ttl: Duration) -> Duration {
    ttl / 100 + Duration::from_millis(2)
}

/// The least a straggler of an acquire is waited for once the outcome
/// is known.
const GRACE: Duration = Duration::from_millis(2);

/// The least a straggler of an extend is waited for once a majority
/// extended: long enough for a server that restarted to be dialed again
/// and given the lease's item back (a few round trips), so that the
/// lease regains its margin before another server fails.
const EXTEND_GRACE: Duration = Duration::from_millis(50);

/// Run `futures` side by side until all are done, or, once `settled`
/// says the outcome is known, for a grace as long as it took so far (at
/// least `least`); the ones still running then are dropped (`None`).
async fn gather<'a, T>(
    futures: Vec<BoxFuture<'a, T>>,
    sleeper: &'a dyn Store,
    least: Duration,
    settled: impl Fn(&[Option<T>]) -> bool,
) -> Vec<Option<T>> {
    let started = Instant::now();
    let mut running: Vec<Option<BoxFuture<'a, T>>> = futures.into_iter().map(Some).collect();
    let mut out: Vec<Option<T>> = running.iter().map(|_| None).collect();
    let mut grace: Option<BoxFuture<'a, ()>> = None;
    std::future::poll_fn(|cx| {
        for (slot, result) in running.iter_mut().zip(out.iter_mut()) {
            if let Some(future) = slot
                && let Poll::Ready(value) = future.as_mut().poll(cx)
            {
                *result = Some(value);
                *slot = None;
            }
        }
        if running.iter().all(Option::is_none) {
            return Poll::Ready(());
        }
        if grace.is_none() && settled(&out) {
            let wait = started.elapsed().max(least);
            grace = Some(Box::pin(async move {
                Access::new(sleeper, Io::Async).sleep(wait).await;
            }));
        }
        match grace.as_mut().map(|g| Pin::new(g).poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(()),
            _ => Poll::Pending,
        }
    })
    .await;
    out
}

/// What one server answered to an acquire.
struct Answer {
    added: Result<Stored>,
    /// The fence increment's reply (`None` without fencing).
    counted: Option<Result<Option<u64>>>,
    record: Result<Option<Item>>,
    /// The cleanup of this server's add, armed while the add may have
    /// taken the item and nothing else answers for it: until the guard is
    /// made (its release then does), or the undo deleted it. Dropped armed
    /// (the call failed with the add's outcome unknown, or the caller's
    /// future was dropped), it deletes the item in the background if it
    /// holds this add's value.
    cleanup: Option<Abandoned>,
}

impl Answer {
    fn failed(e: Error) -> Answer {
        Answer {
            counted: Some(Err(e.duplicate())),
            record: Err(e.duplicate()),
            added: Err(e),
            cleanup: None,
        }
    }
}

/// Whether an add that answered `added` may have taken the item: stored,
/// or sent with no reply (`Ambiguous`: it may be applied later, after the
/// call gave up on it, as a frozen server resumes).
fn may_hold(added: &Result<Stored>) -> bool {
    matches!(added, Ok(Stored::Stored(_)) | Err(Error::Ambiguous { .. }))
}

/// Settle each answer's cleanup: disarmed where `keep` says the item is
/// accounted for (or was never taken), dropped armed elsewhere.
fn settle_cleanups(answers: Vec<Option<Answer>>, accounted: impl Fn(usize, &Answer) -> bool) {
    for (i, answer) in answers.into_iter().enumerate() {
        let Some(mut answer) = answer else {
            continue;
        };
        if let Some(cleanup) = answer.cleanup.take()
            && accounted(i, &answer)
        {
            cleanup.disarm();
        }
    }
}

/// The error of a call that fewer than a majority of the servers `names`
/// answered: how many did, how many were needed, and each failure.
pub(crate) fn no_quorum(
    names: &[&str],
    majority: usize,
    answered: usize,
    failures: &[(usize, Error)],
) -> Error {
    let detail: Vec<String> = failures
        .iter()
        .map(|(i, e)| format!("{}: {}", names.get(*i).copied().unwrap_or("?"), briefly(e)))
        .collect();
    let retry_in = failures
        .iter()
        .filter_map(|(_, e)| match e {
            Error::ServerDown { retry_in, .. } => Some(*retry_in),
            _ => None,
        })
        .min()
        .unwrap_or(Duration::ZERO);
    Error::ServerDown {
        server: format!("a quorum of {} ({})", names.len(), names.join(", ")),
        reason: format!(
            "{answered} of {} servers answered, {majority} needed; {}",
            names.len(),
            if detail.is_empty() {
                "the others did not answer in time".to_string()
            } else {
                detail.join("; ")
            }
        ),
        retry_in,
    }
}

/// What went wrong with one server, in a few words (the whole message of
/// each would bury the count).
fn briefly(e: &Error) -> String {
    match e {
        Error::Io { source, .. } => format!("unreachable ({source})"),
        Error::ServerDown { reason, .. } => format!("marked down ({reason})"),
        Error::Timeout { after, .. } => format!("no answer within {after:?}"),
        Error::Ambiguous { reason, .. } => format!("no reply ({reason})"),
        other => other.to_string(),
    }
}

/// [`no_quorum`] for `quorum`.
fn quorum_down(quorum: &QuorumStore, answered: usize, failures: &[(usize, Error)]) -> Error {
    let names: Vec<&str> = quorum.members().iter().map(|m| m.name.as_str()).collect();
    no_quorum(&names, quorum.majority(), answered, failures)
}

/// The refusal of a client whose list of servers differs from a server's
/// record.
fn other_list(member: &str, recorded: &[u8], mine: &str) -> Error {
    Error::InvalidArgument(format!(
        "the quorum's servers differ between clients: {member} records the quorum {:?}, this client lists {mine:?}; a majority keeps one holder only when every client lists the same servers (fix the lists, then delete the key {QUORUM_RECORD_KEY} on the servers whose record is wrong)",
        String::from_utf8_lossy(recorded),
    ))
}

/// Run `a` and `b` side by side; both outputs.
async fn both<A: Future, B: Future>(a: A, b: B) -> (A::Output, B::Output) {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    let (mut ra, mut rb) = (None, None);
    std::future::poll_fn(|cx| {
        if ra.is_none()
            && let Poll::Ready(v) = a.as_mut().poll(cx)
        {
            ra = Some(v);
        }
        if rb.is_none()
            && let Poll::Ready(v) = b.as_mut().poll(cx)
        {
            rb = Some(v);
        }
        match (ra.take(), rb.take()) {
            (Some(x), Some(y)) => Poll::Ready((x, y)),
            (x, y) => {
                (ra, rb) = (x, y);
                Poll::Pending
            }
        }
    })
    .await
}

/// The value one `add` of a lease's item writes: the lease's owner token,
/// `~`, and a random number of this add alone. Each add writing a value of
/// its own, the cleanup of an add that was given up (a straggler, a
/// cancelled call) deletes only what that add wrote, never an item the
/// lease wrote again later on the same server; and a part's CAS-guarded
/// writes adopt only their own item (an adversarial review saw a
/// straggler's cleanup delete the item a later renewal had given back,
/// and the lease then survive on paper only).
fn attempt_value(token: &str) -> String {
    format!("{token}~{:016x}", mcds_core::random_u64())
}

/// The owner token in a lease item's value (see [`attempt_value`]).
fn owner_of(value: &[u8]) -> &[u8] {
    match value.iter().rposition(|&b| b == b'~') {
        Some(at) => &value[..at],
        None => value,
    }
}

/// How many times an acquire whose votes split (it was granted some
/// servers, but not a majority: other contenders took the rest) tries
/// again, after a random pause, before it reports the lock taken.
const SPLIT_RETRIES: u64 = 3;

/// What one attempt of [`try_acquire`] came to.
enum Attempt {
    Granted(Guard),
    /// Refused: another holds the lock (or held it too recently).
    Held,
    /// Granted some servers, not a majority: contenders split the votes
    /// (with a server down, three at once can each get one of the two
    /// left), and each undid its part.
    Split,
}

/// Try to take `lock` on a majority of `quorum` (see the module docs).
/// When the votes split among contenders, each undoes its part and tries
/// again after a random pause (up to [`SPLIT_RETRIES`] times): else
/// with a server down, `mcds lock run -n` on three hosts at once could
/// all give up, and a cron job's slot would not run at all (a CI run
/// saw it).
pub(crate) async fn try_acquire(
    lock: &Lock,
    quorum: &QuorumStore,
    io: Io,
    caller: &'static str,
) -> Result<Option<Guard>> {
    let mut splits = 0;
    loop {
        match attempt(lock, quorum, io, caller).await? {
            Attempt::Granted(guard) => return Ok(Some(guard)),
            Attempt::Split if splits < SPLIT_RETRIES => {
                splits += 1;
                let pause = Duration::from_micros(200 + mcds_core::random_u64() % (2_000 * splits));
                Access::new(&*quorum.members()[0].store, Io::Async)
                    .sleep(pause)
                    .await;
            }
            Attempt::Held | Attempt::Split => return Ok(None),
        }
    }
}

/// One attempt of [`try_acquire`].
async fn attempt(
    lock: &Lock,
    quorum: &QuorumStore,
    io: Io,
    caller: &'static str,
) -> Result<Attempt> {
    let started = Instant::now();
    let token = lock.owner_token();
    let item_ttl = lease_ttl(lock.ttl)?;
    let record_key = Key::new(QUORUM_RECORD_KEY)?;
    let members = quorum.members();
    let majority = quorum.majority();
    let fencing = lock.fencing;
    let values: Vec<String> = members.iter().map(|_| attempt_value(&token)).collect();
    let futures: Vec<BoxFuture<'_, Answer>> = members
        .iter()
        .zip(&values)
        .map(|(m, value)| {
            let record_key = &record_key;
            Box::pin(async move {
                let access = Access::new(&*m.store, Io::Async);
                // Armed until the reply is read: dropped before (the
                // caller cancelled, or the server was left as a
                // straggler), it deletes the item if this add took it.
                let abandoned = Abandoned::on(Arc::clone(&m.store), lock.key.clone(), value);
                match access.supports_cas(&lock.key).await {
                    Ok(true) => {}
                    Ok(false) => {
                        abandoned.disarm();
                        return Answer::failed(without_cas(caller));
                    }
                    Err(e) => {
                        abandoned.disarm();
                        return Answer::failed(e);
                    }
                }
                // The record first, in the same pipeline as the lock's
                // add: two clients whose lists differ and both find it
                // missing race on its `add`, and the one that loses reads
                // the other's list before its own lock counts (read after
                // the grant, both could find it missing and both be
                // granted: an adversarial review's finding).
                let mut ops = vec![
                    Op::Add {
                        key: record_key,
                        value: quorum.record().as_bytes(),
                        ttl: Ttl::Never,
                    },
                    Op::Get(record_key),
                    Op::Add {
                        key: &lock.key,
                        value: value.as_bytes(),
                        ttl: item_ttl,
                    },
                ];
                if fencing {
                    ops.push(Op::Incr {
                        key: &lock.fence_key,
                        delta: 1,
                    });
                }
                let mut replies = access.pipeline(&ops).await.into_iter();
                let mut next = || {
                    replies.next().unwrap_or_else(|| {
                        Err(Error::Internal("a pipeline answered too few ops".into()))
                    })
                };
                // (The record's own add: refused when it exists, which is
                // the usual case; what counts is the read after it.)
                let _ = next();
                let record = next().and_then(Reply::item);
                let added = next().and_then(Reply::stored);
                let counted = fencing.then(|| next().and_then(Reply::counter));
                // Kept armed while the add may hold the item (see `Answer`).
                let cleanup = if may_hold(&added) {
                    Some(abandoned)
                } else {
                    abandoned.disarm();
                    None
                };
                Answer {
                    added,
                    counted,
                    record,
                    cleanup,
                }
            }) as BoxFuture<'_, Answer>
        })
        .collect();
    let n = members.len();
    // Settled once granted, or once a majority answered and a grant is
    // out of reach (held by another: the outcome and what to report are
    // both known). Until then every server is waited for, each up to its
    // own timeout: a failure is reported only from what the servers said.
    let answers = gather(futures, &*members[0].store, GRACE, |answers| {
        let count = |f: fn(&Result<Stored>) -> bool| {
            answers.iter().flatten().filter(|a| f(&a.added)).count()
        };
        let granted = count(|a| matches!(a, Ok(Stored::Stored(c)) if *c != 0));
        let refused = count(|a| matches!(a, Ok(Stored::NotStored)));
        let done = answers.iter().filter(|a| a.is_some()).count();
        granted >= majority || (granted + refused >= majority && granted + (n - done) < majority)
    })
    .await;

    let mut granted: Vec<(usize, u64)> = Vec::new();
    let mut refused = 0;
    let mut failures: Vec<(usize, Error)> = Vec::new();
    let mut mismatch = None;
    for (i, answer) in answers.iter().enumerate() {
        let Some(answer) = answer else {
            continue;
        };
        match &answer.added {
            // CAS id 0: a server without CAS ids (`-C`).
            Ok(Stored::Stored(0)) => failures.push((i, without_cas(caller))),
            Ok(Stored::Stored(cas)) => granted.push((i, *cas)),
            Ok(Stored::NotStored) => refused += 1,
            Err(e) => failures.push((i, e.duplicate())),
        }
        if let Ok(Some(item)) = &answer.record
            && item.value != quorum.record().as_bytes()
        {
            mismatch
                .get_or_insert_with(|| other_list(&members[i].name, &item.value, quorum.record()));
        }
    }
    let parts = |granted: &[(usize, u64)]| -> Vec<(usize, Arc<GuardState>)> {
        granted
            .iter()
            .map(|&(i, cas)| {
                (
                    i,
                    Arc::new(GuardState::new(
                        Arc::clone(&members[i].store),
                        lock.key.clone(),
                        values[i].clone(),
                        cas,
                        started + lock.ttl,
                    )),
                )
            })
            .collect()
    };
    // Delete what this attempt added; the servers where that is done
    // (or the item found gone) need no cleanup after.
    let undo = |granted: &[(usize, u64)]| {
        let parts = parts(granted);
        async move {
            let releases: Vec<BoxFuture<'_, Result<Release>>> = parts
                .iter()
                .map(|(_, p)| Box::pin(p.release(Io::Async)) as BoxFuture<'_, _>)
                .collect();
            let outcomes = gather(releases, &*members[0].store, GRACE, |_| false).await;
            parts
                .iter()
                .zip(outcomes)
                .filter(|(_, outcome)| matches!(outcome, Some(Ok(_))))
                .map(|((i, _), _)| *i)
                .collect::<Vec<usize>>()
        }
    };
    // After an undo: a cleanup stays armed only where the add may hold
    // the item and the undo could not delete it.
    let undone = |answers: Vec<Option<Answer>>, deleted: Vec<usize>| {
        settle_cleanups(answers, |i, a| !may_hold(&a.added) || deleted.contains(&i));
    };
    if let Some(e) = mismatch {
        undone(answers, undo(&granted).await);
        return Err(e);
    }
    if granted.len() < majority {
        undone(answers, undo(&granted).await);
        let answered = granted.len() + refused;
        if answered >= majority {
            // Held by another (or by leftovers of one), or split.
            return Ok(if granted.is_empty() {
                Attempt::Held
            } else {
                Attempt::Split
            });
        }
        return Err(quorum_down(quorum, answered, &failures));
    }
    let valid_until = started + lock.ttl - quorum_drift(lock.ttl);
    if Instant::now() >= valid_until {
        // Granted too late to be worth anything.
        undone(answers, undo(&granted).await);
        return Ok(Attempt::Held);
    }
    let fencing_token = if fencing {
        match fence(lock, quorum, &answers).await {
            Ok(t) => Some(t),
            Err(e) => {
                undone(answers, undo(&granted).await);
                return Err(e);
            }
        }
    } else {
        None
    };
    // The token counts only if every server of its majority had it while
    // the lease certainly held: a client stopped between the grant and
    // the raise (a pause, a swapped-out page) could otherwise raise the
    // counters after a later holder's increment and hand out a token
    // above that holder's (an adversarial review's finding).
    if Instant::now() >= valid_until {
        undone(answers, undo(&granted).await);
        return Ok(Attempt::Held);
    }
    let held = parts(&granted);
    let lease = QuorumLease {
        key: lock.key.clone(),
        token,
        majority,
        parts: members
            .iter()
            .enumerate()
            .map(|(i, m)| Part {
                store: Arc::clone(&m.store),
                held: Mutex::new(match held.iter().find(|(j, _)| *j == i) {
                    Some((_, state)) => PartState::Held {
                        state: Arc::clone(state),
                        fresh: false,
                    },
                    None => PartState::NotHeld,
                }),
            })
            .collect(),
        names: members.iter().map(|m| m.name.clone()).collect(),
        record: quorum.record().to_string(),
        lost: AtomicBool::new(false),
        lease_until: Mutex::new(valid_until),
        released: AtomicUsize::new(0),
        rounds: AtomicUsize::new(0),
    };
    let guard = Guard::holding(Held::Quorum(Arc::new(lease)), fencing_token, io);
    // The guard answers for the granted items now (its release, or its
    // drop's); an ambiguous add elsewhere keeps its cleanup.
    settle_cleanups(answers, |_, a| {
        !matches!(a.added, Err(Error::Ambiguous { .. }))
    });
    Ok(Attempt::Granted(guard))
}

/// The fencing token of a granted acquire whose servers answered
/// `answers` (see the module docs): the largest count, raised past this
/// process's last token for the name and, if a counter was missing, past
/// a start from the clock; then every server that answered below it is
/// raised to it, and a majority must hold at least it.
async fn fence(lock: &Lock, quorum: &QuorumStore, answers: &[Option<Answer>]) -> Result<u64> {
    let members = quorum.members();
    // Each answering server's count: `Some(Some(v))`, or `Some(None)` for a
    // missing counter.
    let counts: Vec<Option<Option<u64>>> = answers
        .iter()
        .map(|a| match a.as_ref().and_then(|a| a.counted.as_ref()) {
            Some(Ok(count)) => Some(*count),
            _ => None,
        })
        .collect();
    let missing: Vec<usize> = (0..members.len())
        .filter(|&i| counts[i] == Some(None))
        .collect();
    let mut target = counts
        .iter()
        .flatten()
        .flatten()
        .copied()
        .max()
        .unwrap_or(0);
    let floor = fence_floor(&lock.fence_key);
    if floor > 0 {
        target = target.max(floor.saturating_add(1));
    }
    if !missing.is_empty() {
        // Above every token of a lost counter's lifetime by the clock, as
        // the single-server lock starts one, and above the time each
        // server that lost it says it lost something.
        let asks: Vec<BoxFuture<'_, Result<Retention>>> = missing
            .iter()
            .map(|&i| {
                let store = &*members[i].store;
                Box::pin(async move {
                    Access::new(store, Io::Async)
                        .retention(&lock.fence_key)
                        .await
                }) as BoxFuture<'_, _>
            })
            .collect();
        let since = gather(asks, &*members[0].store, GRACE, |_| false)
            .await
            .into_iter()
            .flatten()
            .filter_map(|r| match r {
                Ok(Retention::Since(ms)) => Some(ms),
                _ => None,
            })
            .max();
        target = target.max(lock.fence_start(since));
    }
    if target == 0 {
        return Err(quorum_down(quorum, 0, &[]));
    }
    let raises: Vec<BoxFuture<'_, Result<u64>>> = counts
        .iter()
        .enumerate()
        .filter_map(|(i, count)| {
            let count = (*count)?;
            Some(
                Box::pin(raise(&*members[i].store, &lock.fence_key, count, target))
                    as BoxFuture<'_, _>,
            )
        })
        .collect();
    let raised = gather(raises, &*members[0].store, GRACE, |_| false).await;
    let at_least = raised
        .iter()
        .filter(|r| matches!(r, Some(Ok(v)) if *v >= target))
        .count();
    if at_least < quorum.majority() {
        let failures: Vec<(usize, Error)> = raised
            .into_iter()
            .enumerate()
            .filter_map(|(i, r)| match r {
                Some(Err(e)) => Some((i, e)),
                _ => None,
            })
            .collect();
        return Err(quorum_down(quorum, at_least, &failures));
    }
    record_fence(&lock.fence_key, target);
    Ok(target)
}

/// Raise one server's fence counter to at least `target`, from `known`
/// (its value, `None` if missing): an increment by the difference, or
/// the counter created at `target`. Its value after.
async fn raise(store: &dyn Store, key: &Key, known: Option<u64>, target: u64) -> Result<u64> {
    let access = Access::new(store, Io::Async);
    let mut known = known;
    for _ in 0..4 {
        known = match known {
            Some(v) if v >= target => return Ok(v),
            Some(v) => access
                .execute(&Op::Incr {
                    key,
                    delta: target - v,
                })
                .await
                .and_then(Reply::counter)?,
            None => Some(
                access
                    .execute(&Op::IncrOrInit {
                        key,
                        delta: 0,
                        initial: target,
                        ttl: Ttl::Never,
                    })
                    .await
                    .and_then(Reply::value)?,
            ),
        };
    }
    Err(Error::Conflict {
        key: key.display(),
        attempts: 4,
    })
}

/// The owner token held by a majority of `quorum`'s servers, if one is.
pub(crate) async fn holder(lock: &Lock, quorum: &QuorumStore) -> Result<Option<String>> {
    let members = quorum.members();
    let reads: Vec<BoxFuture<'_, Result<Option<Item>>>> = members
        .iter()
        .map(|m| {
            Box::pin(async move { Access::new(&*m.store, Io::Async).get(&lock.key).await })
                as BoxFuture<'_, _>
        })
        .collect();
    let read = gather(reads, &*members[0].store, GRACE, |_| false).await;
    let mut failures = Vec::new();
    let mut tokens: Vec<Vec<u8>> = Vec::new();
    for (i, r) in read.into_iter().enumerate() {
        match r {
            Some(Ok(Some(item))) => tokens.push(owner_of(&item.value).to_vec()),
            Some(Ok(None)) => {}
            Some(Err(e)) => failures.push((i, e)),
            None => {}
        }
    }
    let answered = members.len() - failures.len();
    if answered < quorum.majority() {
        return Err(quorum_down(quorum, answered, &failures));
    }
    Ok(tokens
        .iter()
        .find(|t| tokens.iter().filter(|u| u == t).count() >= quorum.majority())
        .map(|t| String::from_utf8_lossy(t).into_owned()))
}

/// A quorum lease, shared by its guard and the guard's renewer.
///
/// What it claims is that, at every instant since the grant, its items
/// were on a majority of the servers (so no other holder can have had a
/// majority meanwhile). A CAS-guarded write of a part's item succeeds only
/// if that item has been there since it was written, so an extend or a
/// release counts a part only if it is **not fresh**: held since before
/// the last time the lease was vouched for (the grant, or an extend that
/// succeeded). A part given back to a server (see
/// [`extend`](Self::extend)) is fresh until the next extend that succeeds
/// without it; only then does it count. An item given back to every
/// server after the lease had lapsed therefore vouches for nothing (an
/// adversarial review saw a lease whose items had all expired come back
/// as `Extended`, and release as `Released`, after another client had
/// been granted the lock and released it).
pub(crate) struct QuorumLease {
    pub(crate) key: Key,
    pub(crate) token: String,
    majority: usize,
    /// One per server, in the quorum's order.
    parts: Vec<Part>,
    names: Vec<String>,
    /// The quorum's record of its servers (see [`QuorumStore::record`]).
    record: String,
    pub(crate) lost: AtomicBool,
    /// Until when a majority certainly holds the lease.
    pub(crate) lease_until: Mutex<Instant>,
    /// Parts that counted (not fresh) released so far, over every try.
    released: AtomicUsize,
    /// Extend rounds begun, to tell a round that ran alone (see
    /// [`round`](Self::round)).
    rounds: AtomicUsize,
}

/// The lease's part on one server.
struct Part {
    store: Arc<dyn Store>,
    held: Mutex<PartState>,
}

/// A give-back add's outcome (its CAS id if it stored) and its cleanup,
/// armed while the add may hold an item no part answers for.
type GivenBack = (Result<Option<u64>>, Option<Abandoned>);

/// What one round of an extend found.
enum Round {
    /// A majority of the parts that count was extended in time;
    /// `found_gone`: some server's item was found gone.
    Vouched { found_gone: bool },
    /// Too few: the lease may have lapsed.
    Lost,
}

#[derive(Clone)]
enum PartState {
    /// The lease's item is there, as far as we know, with its state;
    /// `fresh`: given back since the lease was last vouched for.
    Held { state: Arc<GuardState>, fresh: bool },
    /// Released by this lease.
    Released,
    /// Not there: never added, refused, or found gone.
    NotHeld,
}

impl QuorumLease {
    fn state(&self, i: usize) -> PartState {
        self.parts[i]
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set(&self, i: usize, state: PartState) {
        *self.parts[i]
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = state;
    }

    /// Replace part `i`'s state with `new(state)` only if it still holds
    /// `was` (the same item): two calls on one guard may run at once (an
    /// `extend` and the renewer's), and one must not write over what the
    /// other found since (an adversarial review saw a stale extend mark a
    /// server's given-back item as counting, and a lapsed lease report
    /// `Extended`).
    fn set_if_same(
        &self,
        i: usize,
        was: &Arc<GuardState>,
        new: impl FnOnce(Arc<GuardState>) -> PartState,
    ) {
        let mut held = self.parts[i]
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let PartState::Held { state, .. } = &*held
            && Arc::ptr_eq(state, was)
        {
            *held = new(Arc::clone(state));
        }
    }

    /// The parts held now: index, state, and whether fresh.
    fn held(&self) -> Vec<(usize, Arc<GuardState>, bool)> {
        (0..self.parts.len())
            .filter_map(|i| match self.state(i) {
                PartState::Held { state, fresh } => Some((i, state, fresh)),
                _ => None,
            })
            .collect()
    }

    fn names(&self) -> Vec<&str> {
        self.names.iter().map(String::as_str).collect()
    }

    /// Release every part still held (see the module docs).
    pub(crate) async fn release(&self) -> Result<Release> {
        if self.lost.load(Ordering::SeqCst) {
            return Ok(Release::Lost);
        }
        self.release_parts().await
    }

    /// Release the parts still held, whether or not the lease is known
    /// lost: `Released` if a majority of parts that were not fresh has
    /// been released by this lease (this call or an earlier try).
    async fn release_parts(&self) -> Result<Release> {
        let held = self.held();
        let releases: Vec<BoxFuture<'_, Result<Release>>> = held
            .iter()
            .map(|(_, s, _)| Box::pin(s.release(Io::Async)) as BoxFuture<'_, _>)
            .collect();
        let outcomes = gather(releases, &*self.parts[0].store, GRACE, |_| false).await;
        let mut failures = Vec::new();
        let mut released = self.released.load(Ordering::SeqCst);
        for ((i, state, fresh), outcome) in held.iter().zip(outcomes) {
            match outcome {
                Some(Ok(Release::Released)) => {
                    self.set_if_same(*i, state, |_| PartState::Released);
                    released += usize::from(!fresh);
                }
                Some(Ok(Release::Lost)) => self.set_if_same(*i, state, |_| PartState::NotHeld),
                Some(Err(e)) => failures.push((*i, e, *fresh)),
                None => {}
            }
        }
        self.released.store(released, Ordering::SeqCst);
        if released >= self.majority {
            self.lost.store(true, Ordering::SeqCst); // spent
            return Ok(Release::Released);
        }
        let unknown = failures.iter().filter(|(_, _, fresh)| !fresh).count();
        if unknown > 0 && released + unknown >= self.majority {
            // A retry may still find a majority released.
            return Err(failures.swap_remove(0).1);
        }
        self.lost.store(true, Ordering::SeqCst);
        Ok(Release::Lost)
    }

    /// Extend on a majority (see [`QuorumLease`] for what counts). First,
    /// the item is given back (`add`) to every server where the lease does
    /// not hold it: there it is fresh. Then every held part is extended by
    /// CAS; `Extended` if a majority of parts that were not fresh were, in
    /// time. Fresh parts extended with them stop being fresh. When that
    /// round found a server's item gone, a second round gives it back at
    /// once, so the lease regains its margin in this renewal. One round
    /// trip; two while a server is to be given the item back; three when a
    /// renewal finds an item gone.
    pub(crate) async fn extend(&self, ttl: Duration) -> Result<Extend> {
        let item_ttl = lease_ttl(ttl)?;
        if self.lost.load(Ordering::SeqCst) {
            return Ok(Extend::Lost);
        }
        match self.round(ttl, item_ttl).await? {
            Round::Vouched { found_gone: true } => {
                // Give the item back now; the first round's outcome stands
                // if this one cannot tell.
                if let Ok(Round::Lost) = self.round(ttl, item_ttl).await {
                    return self.lose().await;
                }
            }
            Round::Vouched { found_gone: false } => {}
            Round::Lost => return self.lose().await,
        }
        // A call that ran meanwhile (a release, the renewer's extend) may
        // have found the lease lost after this one vouched for it.
        if self.lost.load(Ordering::SeqCst) {
            return Ok(Extend::Lost);
        }
        Ok(Extend::Extended)
    }

    /// The lease is lost: give back what is still ours, so the next holder
    /// need not wait for it to expire.
    async fn lose(&self) -> Result<Extend> {
        let _ = self.release_parts().await;
        self.lost.store(true, Ordering::SeqCst);
        Ok(Extend::Lost)
    }

    /// One round of [`extend`](Self::extend): the item given back where it
    /// is missing, then every held part extended, and the lease vouched
    /// for or not. An error when too few servers answered to tell, while
    /// the lease still certainly holds.
    async fn round(&self, ttl: Duration, item_ttl: Ttl) -> Result<Round> {
        let started_round = self.rounds.fetch_add(1, Ordering::SeqCst);
        let sent = Instant::now();
        let missing: Vec<usize> = (0..self.parts.len())
            .filter(|&i| matches!(self.state(i), PartState::NotHeld))
            .collect();
        if !missing.is_empty() {
            let values: Vec<String> = missing.iter().map(|_| attempt_value(&self.token)).collect();
            let adds: Vec<BoxFuture<'_, GivenBack>> = missing
                .iter()
                .zip(&values)
                .map(|(&i, value)| {
                    let store = &self.parts[i].store;
                    Box::pin(async move {
                        // Left as a straggler (or the call dropped), this
                        // add's cleanup deletes only its own value; kept
                        // armed until the part records the item, or when
                        // the add's outcome is unknown.
                        let abandoned = Abandoned::on(Arc::clone(store), self.key.clone(), value);
                        let added = Access::new(&**store, Io::Async)
                            .add(&self.key, value.as_bytes(), item_ttl)
                            .await;
                        if !may_hold(&added) {
                            abandoned.disarm();
                            return (added.map(|_| None), None);
                        }
                        match added {
                            Ok(Stored::Stored(cas)) if cas != 0 => (Ok(Some(cas)), Some(abandoned)),
                            other => (other.map(|_| None), Some(abandoned)),
                        }
                    }) as BoxFuture<'_, _>
                })
                .collect();
            let added = gather(adds, &*self.parts[0].store, EXTEND_GRACE, |_| true).await;
            for ((&i, value), outcome) in missing.iter().zip(values).zip(added) {
                let Some((added, cleanup)) = outcome else {
                    continue;
                };
                if let Ok(Some(cas)) = added {
                    let state = Arc::new(GuardState::new(
                        Arc::clone(&self.parts[i].store),
                        self.key.clone(),
                        value,
                        cas,
                        sent + ttl,
                    ));
                    self.set(i, PartState::Held { state, fresh: true });
                    // The part answers for the item now.
                    if let Some(cleanup) = cleanup {
                        cleanup.disarm();
                    }
                }
                // (An ambiguous add's cleanup is dropped armed here.)
            }
        }
        let held = self.held();
        let extends: Vec<BoxFuture<'_, Result<Extend>>> = held
            .iter()
            .map(|(_, s, _)| Box::pin(s.extend(Io::Async, ttl)) as BoxFuture<'_, _>)
            .collect();
        let majority = self.majority;
        let vouching = held.iter().filter(|(_, _, fresh)| !fresh).count();
        let fresh_of: Vec<bool> = held.iter().map(|(_, _, fresh)| *fresh).collect();
        // Settled once a majority of the parts that count extended, or once
        // too many of them said the lease is gone there; errors and slow
        // servers are waited for, each up to its timeout, and then the
        // others a little longer (a part that is extended stops being
        // fresh).
        // Each server's record is read in the same round: a client whose
        // list differs from this one's can be granted while a server that
        // holds the other record answers late (a restart lost the record
        // of the servers that answered), and each holder then learns it
        // here, at its next renewal, and gives the lease up.
        let record_key = Key::new(QUORUM_RECORD_KEY)?;
        let reads: Vec<BoxFuture<'_, Result<Option<Item>>>> = self
            .parts
            .iter()
            .map(|p| {
                let record_key = &record_key;
                Box::pin(async move { Access::new(&*p.store, Io::Async).get(record_key).await })
                    as BoxFuture<'_, _>
            })
            .collect();
        let records = gather(reads, &*self.parts[0].store, EXTEND_GRACE, |_| true);
        let extended = gather(extends, &*self.parts[0].store, EXTEND_GRACE, |done| {
            let counting = |f: fn(&Extend) -> bool| {
                done.iter()
                    .zip(&fresh_of)
                    .filter(|(o, fresh)| !**fresh && matches!(o, Some(Ok(e)) if f(e)))
                    .count()
            };
            let extended = counting(|e| *e == Extend::Extended);
            let gone = counting(|e| *e == Extend::Lost);
            extended >= majority || vouching - gone < majority
        });
        let (outcomes, records) = both(extended, records).await;
        if let Some((i, recorded)) = records.iter().enumerate().find_map(|(i, r)| match r {
            Some(Ok(Some(item))) if item.value != self.record.as_bytes() => Some((i, &item.value)),
            _ => None,
        }) {
            let e = other_list(&self.names[i], recorded, &self.record);
            let _ = self.release_parts().await;
            self.lost.store(true, Ordering::SeqCst);
            return Err(e);
        }
        let mut extended = 0;
        let mut found_gone = false;
        let mut failures = Vec::new();
        let mut renewed = Vec::new();
        for ((i, state, fresh), outcome) in held.iter().zip(outcomes) {
            match outcome {
                Some(Ok(Extend::Extended)) => {
                    extended += usize::from(!fresh);
                    renewed.push((*i, state));
                }
                Some(Ok(Extend::Lost)) => {
                    self.set_if_same(*i, state, |_| PartState::NotHeld);
                    found_gone = true;
                }
                Some(Err(e)) if !fresh => failures.push((*i, e)),
                _ => {}
            }
        }
        // A call that ran meanwhile found the lease lost: so it is.
        if self.lost.load(Ordering::SeqCst) {
            return Ok(Round::Lost);
        }
        if extended >= majority && sent.elapsed() + quorum_drift(ttl) < ttl {
            // Vouched for: the parts extended now count from here on
            // (those that still hold the item this round extended).
            for (i, state) in renewed {
                self.set_if_same(i, state, |state| PartState::Held {
                    state,
                    fresh: false,
                });
            }
            // The deadline of this round's writes. When another round ran
            // meanwhile (a user's extend beside the renewer's), either
            // one's writes may have been applied last, with its own TTL:
            // the earlier deadline of the two is the one certain (a
            // deadline kept at the latest, after an extend of 60 s and
            // renewals of 5 s, hid a lapsed lease from the renewer: an
            // adversarial review's finding).
            let mine = sent + ttl - quorum_drift(ttl);
            let alone = self.rounds.load(Ordering::SeqCst) == started_round + 1;
            let mut until = self
                .lease_until
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            *until = if alone { mine } else { (*until).min(mine) };
            return Ok(Round::Vouched { found_gone });
        }
        let until = *self
            .lease_until
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !failures.is_empty() && extended + failures.len() >= majority && Instant::now() < until {
            // Not known yet: the lease still holds until `until`, and the
            // next try may reach the servers that failed.
            let answered = self.parts.len() - failures.len();
            return Err(no_quorum(&self.names(), majority, answered, &failures));
        }
        Ok(Round::Lost)
    }

    /// The first server's store: the lease's timers run on it.
    pub(crate) fn any_store(&self) -> &dyn Store {
        &*self.parts[0].store
    }
}
