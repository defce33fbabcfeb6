//! A server's shared connections ("lanes") and the automatic pipelining
//! over them.
//!
//! Every caller of a store, whatever its thread, sends its requests on one
//! of a small, fixed number of connections per server
//! ([`Builder::connections_per_server`](crate::Builder::connections_per_server)),
//! instead of holding a connection of its own for the length of a round
//! trip. A lane is one such connection, with a queue:
//!
//! * A caller encodes its request (one command, or a batch ending in `mn`),
//!   puts it in the lane's queue, and, if nobody is driving the lane,
//!   becomes its **driver**: it takes everything queued, writes it in one
//!   `write`, and reads the replies of every request in that write, in
//!   order (memcached answers a connection's commands in order), handing
//!   each request's replies to its caller. Callers that arrive while a
//!   write is in flight wait in the queue and go out together in the next
//!   write: under load, one write carries many callers' requests.
//! * When the driver's own reply has come and others are queued, it hands
//!   the lane to the first of them, which writes the next batch (so no
//!   caller drives forever for others). With one caller and no contention
//!   the caller drives every time: one `write`, one `read`, no thread hop.
//! * Each single command carries an opaque (`O<n>`, fresh per request) and
//!   its reply must echo it; a batch ends at its `MN`. A reply out of step
//!   ends the connection: every request written on it and not yet answered
//!   fails (as [`Error::Ambiguous`] when it has effects), and requests not
//!   yet written are given back unsent, to be sent again on a new
//!   connection.
//! * **Liveness.** No probe per op: a dead connection shows as a failed
//!   read or write. A connection that sat idle for more than
//!   [`IDLE_CHECK`] is checked once before the next request is encoded for
//!   it, with one non-blocking peek, so a request is not written into a
//!   connection the server already closed, where a write with effects
//!   would end ambiguous.
//! * **Async callers** inside a tokio runtime (the `tokio` feature) drive
//!   the lane on the runtime, the socket registered with its reactor: see
//!   [`native`]. Elsewhere (other executors, TLS, the feature off, or
//!   [`Builder::drive_on_runtime(false)`](crate::Builder::drive_on_runtime))
//!   they never drive: an async request is queued and, if nobody drives
//!   the lane, the lane's helper thread (started at the first such
//!   request, ended with the store) takes the lane, writes and reads for
//!   it, and wakes the caller's waker. A sync driver whose next queued
//!   caller is async hands the lane to the helper thread the same way. An
//!   async caller whose lane has no connection dials on a thread of its
//!   own; a dial never holds the lane's lock.
//! * **Timeouts.** Each request has a deadline; the driver bounds its reads
//!   and writes by the earliest deadline of the requests in flight (the
//!   socket's timeout, re-armed only when it changes by more than
//!   [`SLACK`](mcds_net::transport::SLACK): no system call per op).
//!
//! [`Error::Ambiguous`]: mcds_core::Error::Ambiguous

mod driver;
#[cfg(feature = "tokio")]
pub(crate) mod native;
mod request;

pub(crate) use driver::{Driver, is_error_line, tag};
use driver::{fail_unsent, helper_main, oneshot};

pub(crate) use request::{Delivery, Expect, Read, Reply, Request};
use request::{Job, Own, Slot, SlotState};

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use mcds_core::{Error, Io};
use mcds_net::incarnation::{Incarnation, ServerClock};
use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::config::Config;
use crate::conn::Conn;
use crate::server::Server;

/// How long a connection may sit unused before the next request checks it
/// (one `recv(MSG_PEEK | MSG_DONTWAIT)`), so that a request is not written
/// into a connection the server has closed (a restart, a kill), where it
/// would end ambiguous. Back-to-back requests, the hot path, never pay for
/// the check; a caller that pauses between requests pays one non-blocking
/// system call. A server that dies within this window of a request still
/// makes it ambiguous when it had effects (and a read is sent again).
pub(crate) const IDLE_CHECK: Duration = Duration::from_micros(200);

/// Counters of one lane, summed into [`ConnectionStats`](crate::ConnectionStats).
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) dials: AtomicU64,
    pub(crate) writes: AtomicU64,
    pub(crate) requests: AtomicU64,
    pub(crate) handoffs: AtomicU64,
    pub(crate) idle_checks: AtomicU64,
}

/// One shared connection to a server and its queue (see the module docs).
pub(crate) struct Lane {
    state: Mutex<LaneState>,
    /// Signalled when a dial ends (see [`Lane::ensure`]).
    dialed: Condvar,
    opaque: AtomicU32,
    pub(crate) counters: Counters,
    /// The server the lane belongs to, for its helper thread.
    server: Weak<Server>,
    /// Its place in the server's lanes.
    index: usize,
    /// The thread that drives the lane for async callers.
    helper: Arc<Helper>,
}

/// The signal between a lane and its helper thread, which drives the lane
/// when an async caller's request is queued and no thread drives it (an
/// async caller must not block on the socket). Started at the first async
/// request; it ends when the lane is dropped with its store.
#[derive(Default)]
struct Helper {
    state: Mutex<HelperState>,
    wake: Condvar,
}

#[derive(Default)]
struct HelperState {
    /// Drive the lane (it is marked driven, its connection in the state).
    drive: bool,
    started: bool,
    closed: bool,
}

impl Drop for Lane {
    fn drop(&mut self) {
        self.helper.state.lock().closed = true;
        self.helper.wake.notify_one();
    }
}

struct LaneState {
    /// The connection while nobody drives (the driver holds it otherwise);
    /// `None` with `incarnation` `None`: no connection (never dialed, or it
    /// failed). Boxed: it passes between the lane and each request's
    /// driver, and a driver is moved through its caller's futures (a
    /// pointer is copied, not the connection and its buffers).
    conn: Option<Box<Conn>>,
    /// The live connection's incarnation (whoever holds it).
    incarnation: Option<Incarnation>,
    /// Counts connections: which one a delivery came on.
    generation: u64,
    /// The connection is to be closed when its driver is done with it.
    retire: bool,
    /// A caller is dialing the lane's connection (with the lock released).
    dialing: bool,
    /// How many dials of this lane have failed: a caller that waited for
    /// another's dial, which failed, fails too instead of dialing again
    /// (two dials in a row against a frozen server took twice the timeout).
    dial_failures: u64,
    driving: bool,
    queue: VecDeque<Job>,
    /// The in-flight list of the last driver, empty, kept for the next
    /// one (its room is reused: no allocation per request).
    spare: Vec<Job>,
    /// When the connection is to be checked before its next request: it
    /// was last used [`IDLE_CHECK`] before (or a moment more: the time is
    /// taken when its driver's last read or write began, so that a
    /// connection is checked early rather than late). Kept as the instant
    /// of the check, so that a request compares, not subtracts.
    check_after: Instant,
    /// When the connection's clock sample becomes too old and the
    /// connection is replaced ([`ServerClock::old_after`]).
    old_after: Option<Instant>,
    /// The server's latest incarnation and clock estimate as last read,
    /// with the server's [`epoch`](Server::epoch) they were read at.
    seen: Seen,
}

/// A lane's copy of what [`Server::latest`] gave, at `epoch`.
struct Seen {
    epoch: u64,
    latest: Option<Incarnation>,
    clock: Option<ServerClock>,
}

/// What submitting a request made of the caller.
pub(crate) enum Ticket<'l> {
    /// The lane was idle: the caller wrote the request (with whatever else
    /// was queued) and must now read the replies ([`Driver::finish`]).
    Drive(Driver<'l>),
    /// Another caller drives: wait for the reply ([`Ticket::delivery`]).
    Wait(&'l Lane, Arc<Slot>),
    /// An async caller's request: the reply comes through a waker.
    Async(Reply),
    /// An async caller on a tokio runtime found the lane idle: it drives
    /// it on the runtime ([`native`]). Boxed: its reads and timers would
    /// make every op's future larger than the allocator's per-thread cache
    /// serves.
    #[cfg(feature = "tokio")]
    Native(std::pin::Pin<Box<dyn std::future::Future<Output = Delivery> + Send + 'l>>),
}

/// What [`Lane::submit_async`] made of a request.
pub(crate) enum Queued<'l> {
    /// Queued: the reply comes through the ticket.
    Ticket(Ticket<'l>),
    /// Not queued: the lane has no connection now. The request is given
    /// back unsent.
    NoConnection(Request),
    /// Not queued: the lane is an async lane its caller cannot drive now
    /// (another caller drives it, or the request may not be driven). Async
    /// lanes never queue (see `native.rs`): the request is given back
    /// unsent, for a shared lane.
    #[cfg(feature = "tokio")]
    Elsewhere(Request),
}

impl Ticket<'_> {
    /// The request's replies (or its failure): blocking for a
    /// [`Drive`](Ticket::Drive) or [`Wait`](Ticket::Wait) ticket, awaited
    /// for an [`Async`](Ticket::Async) one.
    pub(crate) async fn delivery(self) -> Delivery {
        match self {
            Ticket::Drive(driver) => driver.finish(),
            Ticket::Wait(lane, slot) => lane.wait(slot),
            Ticket::Async(reply) => reply.await,
            #[cfg(feature = "tokio")]
            Ticket::Native(driving) => driving.await,
        }
    }
}

impl Lane {
    pub(crate) fn new(server: Weak<Server>, index: usize) -> Lane {
        Lane {
            server,
            index,
            helper: Arc::new(Helper::default()),
            dialed: Condvar::new(),
            state: Mutex::new(LaneState {
                conn: None,
                incarnation: None,
                generation: 0,
                retire: false,
                dialing: false,
                dial_failures: 0,
                driving: false,
                queue: VecDeque::new(),
                spare: Vec::new(),
                check_after: Instant::now() + IDLE_CHECK,
                old_after: None,
                // (No epoch is `u64::MAX`: the first check reads them.)
                seen: Seen {
                    epoch: u64::MAX,
                    latest: None,
                    clock: None,
                },
            }),
            opaque: AtomicU32::new(1),
            counters: Counters::default(),
        }
    }

    /// Its place in its server's lanes.
    #[cfg(feature = "tokio")]
    pub(crate) fn index(&self) -> usize {
        self.index
    }

    /// A fresh opaque for a single command's `O<n>`.
    pub(crate) fn next_opaque(&self) -> u32 {
        self.opaque.fetch_add(1, Ordering::Relaxed)
    }

    /// How busy the lane is, without waiting for its lock: `Some(0)` idle,
    /// `Some(n)` driven with `n - 1` requests queued, `None` locked just now.
    pub(crate) fn load(&self) -> Option<usize> {
        let state = self.state.try_lock()?;
        Some(if state.driving {
            state.queue.len() + 1
        } else {
            0
        })
    }

    /// Whether the lane's helper thread has been started (for the stats).
    pub(crate) fn has_helper(&self) -> bool {
        self.helper.state.lock().started
    }

    /// Whether the lane has a live connection (for the stats).
    pub(crate) fn is_open(&self) -> bool {
        self.state.lock().incarnation.is_some()
    }

    /// Whether the lane has a usable connection now (at most one
    /// non-blocking peek, as any request's check). If not, it is dialed on
    /// a thread of its own, not waited for, unless it is being dialed or
    /// its server is in its backoff window. For a batch of reads that
    /// could use the lane (`MemcachedStore::spread`): the batch does not
    /// wait for a dial (against a frozen server a handshake takes up to
    /// the I/O timeout); a later batch finds the connection open.
    pub(crate) fn ready_or_dial_later(&self, server: &Server, config: &Config) -> bool {
        {
            let mut state = self.state.lock();
            if self.check(&mut state, server, Instant::now()).is_some() {
                return true;
            }
            if state.dialing || server.down().is_some() {
                return false;
            }
        }
        // (A failed spawn leaves the lane as it was: a later batch asks
        // again.)
        let _ = self.dial_on_thread(config, drop);
        false
    }

    /// Dial this lane on a thread of its own (a dial never holds the
    /// lane's lock, and an async caller never blocks on one), handing the
    /// incarnation reached, or the failure, to `done`. `Err` when the
    /// store is gone or no thread could be started.
    fn dial_on_thread(
        &self,
        config: &Config,
        done: impl FnOnce(Result<Incarnation, Error>) + Send + 'static,
    ) -> io::Result<()> {
        let Some(owner) = self.server.upgrade() else {
            return Err(io::Error::other("the store was dropped"));
        };
        let config = config.clone();
        let index = self.index;
        std::thread::Builder::new()
            .name("mcds-dial".into())
            .spawn(move || {
                let lane = &owner.lanes[index];
                done(lane.incarnation(&owner, &config, &mut Instant::now()));
            })
            .map(drop)
    }

    /// The incarnation of the lane's connection, dialing one first if the
    /// lane has none (or an idle one that must be replaced: its clock
    /// sample is old, or the server has since been seen under another
    /// incarnation).
    ///
    /// The incarnation returned carries the server's best clock estimate
    /// (not the connection's own sample), for the commands encoded for it.
    /// `now`: the caller's clock reading of a moment ago; read again here
    /// when this waited for a dial (the caller's request counts its
    /// timeout, and the connection's idle check its idleness, from it: an
    /// adversarial review showed a request written after its deadline, and
    /// an idle check skipped, with a reading taken before a dial).
    pub(crate) fn incarnation(
        &self,
        server: &Server,
        config: &Config,
        now: &mut Instant,
    ) -> Result<Incarnation, Error> {
        let mut state = self.state.lock();
        self.ensure(&mut state, server, config, now)
    }

    /// The live connection's incarnation, dialing one if the lane has none.
    /// The dial runs with the lane's lock released (a connect and a
    /// handshake take a round trip or more, up to the timeouts): callers
    /// that need the connection meanwhile wait for that dial, and an async
    /// caller that only looks finds no connection yet, without waiting.
    /// `now` as for [`incarnation`](Self::incarnation).
    fn ensure(
        &self,
        state: &mut MutexGuard<'_, LaneState>,
        server: &Server,
        config: &Config,
        now: &mut Instant,
    ) -> Result<Incarnation, Error> {
        let mut waited = None;
        loop {
            if let Some(incarnation) = self.check(state, server, *now) {
                return Ok(incarnation);
            }
            if waited.is_some_and(|failures| failures != state.dial_failures) {
                return Err(server.down().unwrap_or_else(|| Error::Io {
                    server: server.addr.clone(),
                    source: io::Error::other(
                        "not sent: the dial of this connection, made by another caller meanwhile, failed",
                    ),
                }));
            }
            if !state.dialing {
                break;
            }
            waited.get_or_insert(state.dial_failures);
            self.dialed.wait(state);
            *now = Instant::now();
        }
        state.dialing = true;
        let dialed = MutexGuard::unlocked(state, || server.dial(config));
        *now = Instant::now();
        state.dialing = false;
        if dialed.is_err() {
            state.dial_failures += 1;
        }
        self.dialed.notify_all();
        let conn = dialed?;
        self.counters.dials.fetch_add(1, Ordering::Relaxed);
        let incarnation = conn.incarnation;
        state.conn = Some(Box::new(conn));
        state.incarnation = Some(incarnation);
        state.generation += 1;
        state.check_after = *now + IDLE_CHECK;
        // Replaced when its clock sample is old, and every pool recheck
        // interval, so that a new handshake reads the pool record again.
        let recheck = *now + config.pool_recheck;
        state.old_after = Some(
            incarnation
                .clock
                .map_or(recheck, |c| c.old_after().min(recheck)),
        );
        Ok(stamped(incarnation, Self::latest(state, server).1))
    }

    /// The server's latest incarnation and clock estimate, from the lane's
    /// copy when the server's epoch has not moved since it was taken (no
    /// lock shared with other lanes on the hot path).
    fn latest(
        state: &mut LaneState,
        server: &Server,
    ) -> (Option<Incarnation>, Option<ServerClock>) {
        let epoch = server.learned.epoch();
        if state.seen.epoch != epoch {
            let (latest, clock) = server.learned.latest();
            state.seen = Seen {
                epoch,
                latest,
                clock,
            };
        }
        (state.seen.latest, state.seen.clock)
    }

    /// The live connection's incarnation, after closing an idle connection
    /// that must be replaced (see [`incarnation`](Self::incarnation)); `None`
    /// when the lane needs a dial. No blocking: at most one non-blocking
    /// peek. `now`: the caller's clock reading of a moment ago (every
    /// request passes here, and the caller needs one too).
    fn check(&self, state: &mut LaneState, server: &Server, now: Instant) -> Option<Incarnation> {
        let (latest, clock) = Self::latest(state, server);
        if !state.driving
            && let Some(conn) = &state.conn
        {
            // Two marker-less connections never share a mask, and a dial
            // of another lane says nothing about this one's: this one is
            // kept (the server's sessions use it alone, `Server::lane`).
            let moved = latest != Some(conn.incarnation)
                && !(conn.incarnation.markerless && latest.is_some_and(|l| l.markerless));
            let old = state.old_after.is_some_and(|t| now > t);
            let mut stale = old || moved || state.retire;
            // Idle long enough for the server to have closed it (a restart):
            // peek before a request is encoded for its incarnation.
            if !stale && now > state.check_after {
                self.counters.idle_checks.fetch_add(1, Ordering::Relaxed);
                stale = state.conn.as_mut().is_none_or(|c| !c.is_alive());
                state.check_after = now + IDLE_CHECK;
            }
            if stale {
                state.conn = None;
                state.incarnation = None;
                state.retire = false;
            }
        }
        state.incarnation.map(|i| stamped(i, clock))
    }

    /// Queue a request encoded for `incarnation`. If nobody drives, the
    /// caller becomes the driver and the request (with all else queued) is
    /// written before this returns. `Err` when it cannot be sent: no
    /// connection could be made, or the server's incarnation is no longer
    /// the one the request was encoded for.
    pub(crate) fn submit(
        &self,
        server: &Server,
        config: &Config,
        mut request: Request,
        incarnation: Incarnation,
        now: Instant,
    ) -> Result<Ticket<'_>, Error> {
        let (before, mut now) = (now, now);
        let mut state = self.state.lock();
        let current = self.ensure(&mut state, server, config, &mut now)?;
        // A dial (or a wait for another caller's) is not counted against
        // the request's own timeout (see `Session::submit`): `ensure` read
        // the clock again after it.
        request.deadline = later_by(request.deadline, before, now);
        if current != incarnation {
            return Err(restarted(&server.addr));
        }
        // A caller that finds the lane driven waits on a slot. One that
        // finds it idle (so nothing is queued) drives, and its request
        // goes straight into its first write, with no slot (its delivery
        // stays in the driver).
        if state.driving {
            let slot = Slot::new();
            state.queue.push_back(Job::waiting(request, &slot, false));
            return Ok(Ticket::Wait(self, slot));
        }
        state.driving = true;
        let conn = state.conn.take();
        let generation = state.generation;
        let mut in_flight = std::mem::take(&mut state.spare);
        drop(state);
        in_flight.push(Job {
            request,
            slot: None,
            is_async: false,
        });
        // (`ensure` left a connection and nobody drove, so `conn` is
        // there; a driver without one would fail its batch cleanly.)
        let mut driver = Driver {
            lane: self,
            conn,
            own: Own::Here(None),
            generation,
            in_flight,
        };
        driver.send(Some(now));
        Ok(Ticket::Drive(driver))
    }

    /// [`incarnation`](Self::incarnation) or, given [`Io::Async`],
    /// [`incarnation_async`](Self::incarnation_async).
    pub(crate) async fn connection(
        &self,
        server: &Server,
        config: &Config,
        io: Io,
        now: &mut Instant,
    ) -> Result<Incarnation, Error> {
        match io {
            Io::Blocking => self.incarnation(server, config, now),
            Io::Async => self.incarnation_async(server, config, now).await,
        }
    }

    /// [`incarnation`](Self::incarnation) without blocking: a lane without
    /// a connection is dialed on a thread of its own, awaited (and `now`
    /// read again after it).
    pub(crate) async fn incarnation_async(
        &self,
        server: &Server,
        config: &Config,
        now: &mut Instant,
    ) -> Result<Incarnation, Error> {
        {
            let mut state = self.state.lock();
            if let Some(incarnation) = self.check(&mut state, server, *now) {
                return Ok(incarnation);
            }
        }
        // Down: fail at once, as a blocking dial would, without a thread.
        if let Some(down) = server.down() {
            return Err(down);
        }
        if self.server.strong_count() == 0 {
            return Err(Error::Internal("the store was dropped".into()));
        }
        let (done, result) = oneshot();
        self.dial_on_thread(config, move |r| done.send(r))
            .map_err(|e| Error::Io {
                server: server.addr.clone(),
                source: e,
            })?;
        let dialed = result.await;
        *now = Instant::now();
        dialed
    }

    /// Queue an async caller's request, encoded for `incarnation`. It never
    /// blocks: if nobody drives the lane, its helper thread is woken to.
    /// [`Queued::NoConnection`] when the lane has no connection now (dial
    /// with [`incarnation_async`](Self::incarnation_async) and submit
    /// again); `Err` when its connection is not to that incarnation.
    pub(crate) fn submit_async(
        &self,
        server: &Server,
        config: &Config,
        request: Request,
        incarnation: Incarnation,
        now: Instant,
        drive: bool,
    ) -> Result<Queued<'_>, Error> {
        // (Made before the lock is taken: other callers wait on it.)
        let slot = Slot::new();
        let mut state = self.state.lock();
        match self.check(&mut state, server, now) {
            Some(current) if current == incarnation => {}
            Some(_) => return Err(restarted(&server.addr)),
            None => return Ok(Queued::NoConnection(request)),
        }
        // Only on an async lane, which nobody ever queues on: a caller
        // waits behind no driver that only its own future moves on (see
        // `native.rs`).
        #[cfg(feature = "tokio")]
        if server.is_async_lane(self) {
            if !drive {
                return Ok(Queued::Elsewhere(request));
            }
            return Ok(match native::try_drive(self, config, &mut state, request) {
                Ok(ticket) => Queued::Ticket(ticket),
                Err(request) => Queued::Elsewhere(request),
            });
        }
        #[cfg(not(feature = "tokio"))]
        let _ = (config, drive);
        state.queue.push_back(Job::waiting(request, &slot, true));
        if !state.driving {
            state.driving = true;
            drop(state);
            self.wake_helper();
        }
        Ok(Queued::Ticket(Ticket::Async(Reply(slot))))
    }

    /// Have the helper thread drive the lane (marked driven, its connection
    /// left in the state), starting the thread if it is not running.
    fn wake_helper(&self) {
        let mut helper = self.helper.state.lock();
        helper.drive = true;
        if !helper.started {
            helper.started = true;
            let (signal, server, index) =
                (Arc::clone(&self.helper), self.server.clone(), self.index);
            let spawned = std::thread::Builder::new()
                .name("mcds-lane".into())
                .spawn(move || helper_main(&signal, &server, index));
            if spawned.is_err() {
                // No thread: fail what is queued rather than leave it.
                helper.started = false;
                helper.drive = false;
                drop(helper);
                let mut state = self.state.lock();
                let queued: Vec<Job> = state.queue.drain(..).collect();
                state.driving = false;
                drop(state);
                fail_unsent(
                    queued,
                    0,
                    "not sent: no thread could be started to drive the connection",
                    // (Queued jobs all have slots: see `Own::Here`.)
                    &mut Own::Here(None),
                );
                return;
            }
        }
        drop(helper);
        self.helper.wake.notify_one();
    }

    /// The driver of a lane handed over to `own`'s caller (or the helper
    /// thread): marked driven already, its connection left in the state.
    fn handed_over(&self, own: Arc<Slot>) -> Driver<'_> {
        let mut state = self.state.lock();
        let conn = state.conn.take();
        let generation = state.generation;
        let in_flight = std::mem::take(&mut state.spare);
        drop(state);
        Driver {
            lane: self,
            conn,
            own: Own::Slot(own),
            generation,
            in_flight,
        }
    }

    /// One turn of the helper thread: drive the lane for what is queued,
    /// then put it down (or hand it on).
    fn drive_for_helper(&self) {
        let mut driver = self.handed_over(Slot::new());
        driver.write();
        driver.read();
        let failed = driver.conn.is_none();
        driver.put_down_blocking(failed);
    }

    /// Wait for a queued request's delivery, taking the lane over if it is
    /// handed to this caller.
    fn wait(&self, slot: Arc<Slot>) -> Delivery {
        let mut state = slot.state.lock();
        loop {
            match std::mem::replace(&mut *state, SlotState::Taken) {
                SlotState::Done(d) => return d,
                SlotState::Drive => {
                    *state = SlotState::Waiting(None);
                    drop(state);
                    return self.take_over(slot);
                }
                other => {
                    *state = other;
                    slot.ready.wait(&mut state);
                }
            }
        }
    }

    /// Drive a lane handed over by the previous driver (its connection was
    /// left in the state, `driving` still set).
    fn take_over(&self, own: Arc<Slot>) -> Delivery {
        let mut driver = self.handed_over(own);
        driver.write();
        driver.finish()
    }

    /// Close the connection of `generation` (a batch's replies were out of
    /// step): now if it is idle, else when its driver puts it down.
    pub(crate) fn retire(&self, generation: u64) {
        let mut state = self.state.lock();
        if state.generation != generation || state.incarnation.is_none() {
            return;
        }
        if state.driving {
            state.retire = true;
        } else {
            state.conn = None;
            state.incarnation = None;
        }
    }
}

/// `deadline` moved by the time from `before` to `now` (a dial's): a
/// comparison, not a subtraction, when no time was counted (the hot path).
pub(crate) fn later_by(deadline: Instant, before: Instant, now: Instant) -> Instant {
    if now > before {
        deadline + (now - before)
    } else {
        deadline
    }
}

/// `incarnation` carrying the server's best clock estimate, where there is
/// one (commands are encoded with it, see [`mcds_net::Learned::learn_clock`]).
fn stamped(mut incarnation: Incarnation, clock: Option<ServerClock>) -> Incarnation {
    if let Some(clock) = clock {
        incarnation.clock = Some(clock);
    }
    incarnation
}

pub(crate) fn restarted(server: &str) -> Error {
    Error::Io {
        server: server.to_string(),
        source: io::Error::other(
            "not sent: the server restarted or was flushed (its incarnation marker changed) while the command was being prepared",
        ),
    }
}
