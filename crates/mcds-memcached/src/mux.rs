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
//! * **Async callers** never drive: an async request is queued and, if
//!   nobody drives the lane, the lane's helper thread (started at the
//!   first async request, ended with the store) takes the lane, writes and
//!   reads for it, and wakes the caller's waker. A sync driver whose next
//!   queued caller is async hands the lane to the helper thread the same
//!   way. An async caller whose lane has no connection dials on a thread
//!   of its own; a dial never holds the lane's lock.
//! * **Timeouts.** Each request has a deadline; the driver bounds its reads
//!   and writes by the earliest deadline of the requests in flight (the
//!   socket's timeout, re-armed only when it changes by more than
//!   [`SLACK`](mcds_net::transport::SLACK): no system call per op).
//!
//! [`Error::Ambiguous`]: mcds_core::Error::Ambiguous

use std::collections::VecDeque;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use mcds_core::{Error, Io};
use mcds_net::incarnation::{Incarnation, ServerClock};
use memcache::exp::ReturnCode;
use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::config::Config;
use crate::conn::Conn;
use crate::reply::{MetaReply, Opaque};
use crate::server::Server;

/// How long a connection may sit unused before the next request checks it
/// (one `recv(MSG_PEEK | MSG_DONTWAIT)`), so that a request is not written
/// into a connection the server has closed (a restart, a kill), where it
/// would end ambiguous. Back-to-back requests, the hot path, never pay for
/// the check; a caller that pauses between requests pays one non-blocking
/// system call. A server that dies within this window of a request still
/// makes it ambiguous when it had effects (and a read is sent again).
pub(crate) const IDLE_CHECK: Duration = Duration::from_micros(200);

/// The most request bytes one write takes from the queue; more waits for
/// the next write (a reply to a huge batch must not delay the rest).
const MAX_WRITE: usize = 256 * 1024;

/// Where a request's replies end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Expect {
    /// One command: one reply line (an error line counts), which must echo
    /// the opaque the command carries.
    One {
        /// The command's `O<n>`.
        opaque: u32,
        /// Whether the command has a data block (`ms`): an error line to
        /// it may mean memcached read the block as a command of its own.
        data: bool,
    },
    /// A text-protocol write and the `mg` that follows it (see
    /// [`codec::is_pair`](crate::codec::is_pair)): the write's reply (a
    /// text reply or an error line, without an opaque), then the `mg`'s,
    /// which must echo the opaque.
    Pair {
        /// The `mg`'s `O<n>`.
        opaque: u32,
    },
    /// A batch of (possibly quiet) commands ending with `mn`: every reply
    /// up to and including `MN`.
    UntilMn {
        /// The most replies there can be (one per command and the `MN`):
        /// room for them is made at once, not by doubling as they come.
        replies: usize,
    },
    /// `stats`: a listing up to `END` ([`Delivery::stats`]).
    Stats,
}

impl Expect {
    /// Room for the replies: made at once, not by doubling as they come.
    fn room(self) -> usize {
        match self {
            // (Bounded: the number comes from the caller, and a stream
            // that fails early needs none of it.)
            Expect::UntilMn { replies } => replies.clamp(1, 4096),
            Expect::Pair { .. } => 2,
            Expect::One { .. } | Expect::Stats => 1,
        }
    }
}

/// A request for [`Lane::submit`]: its bytes, where its replies end, and
/// when it must have been answered.
pub(crate) struct Request {
    pub(crate) payload: Vec<u8>,
    pub(crate) expect: Expect,
    pub(crate) deadline: Instant,
}

/// A reply as read: a result, or an error line (`Server`/`Rejected`), or
/// the failure that ended the connection (last).
pub(crate) type Read = Result<MetaReply, memcache::exp::Error>;

/// What became of a request.
#[derive(Debug)]
pub(crate) struct Delivery {
    /// Its replies, in order. When the connection failed before they were
    /// all read, the last entry is that failure (not an error line).
    pub(crate) replies: Vec<Read>,
    /// Whether any byte of the request was written. `false`: the request
    /// never left (its one entry says why) and may be sent again.
    pub(crate) sent: bool,
    /// The connection it went out on (see [`Lane::retire`]).
    pub(crate) generation: u64,
    /// The listing, for [`Expect::Stats`] (`replies` is empty then, unless
    /// it failed).
    pub(crate) stats: Option<Vec<(String, String)>>,
    /// The request's bytes, given back (to be sent again when `sent` is
    /// false, without a copy kept meanwhile).
    pub(crate) payload: Vec<u8>,
}

/// A request waiting in a lane's queue.
struct Job {
    request: Request,
    /// Where its caller waits for the delivery; `None` for the request of
    /// the caller that found the lane idle and drives it: its delivery is
    /// kept in its [`Driver`] ([`Own::Here`]), so the uncontended request
    /// costs no allocation and no lock for it.
    slot: Option<Arc<Slot>>,
    /// Its caller is a future (it never drives: the lane's helper thread
    /// does it for it).
    is_async: bool,
}

impl Job {
    /// The job of a request whose caller waits for it on `slot` (an
    /// async caller through the slot's waker).
    fn waiting(request: Request, slot: &Arc<Slot>, is_async: bool) -> Job {
        Job {
            request,
            slot: Some(Arc::clone(slot)),
            is_async,
        }
    }
}

/// Where a waiting caller learns what became of its request.
pub(crate) struct Slot {
    state: Mutex<SlotState>,
    ready: Condvar,
}

enum SlotState {
    /// With the waker of an async caller that polled.
    Waiting(Option<Waker>),
    /// The lane was handed to this caller: it drives next.
    Drive,
    Done(Delivery),
    Taken,
}

impl Slot {
    fn new() -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(SlotState::Waiting(None)),
            ready: Condvar::new(),
        })
    }

    fn set(&self, state: SlotState) {
        let before = std::mem::replace(&mut *self.state.lock(), state);
        self.ready.notify_one();
        if let SlotState::Waiting(Some(waker)) = before {
            waker.wake();
        }
    }

    fn is_done(&self) -> bool {
        matches!(*self.state.lock(), SlotState::Done(_))
    }

    fn take(&self) -> Option<Delivery> {
        let mut state = self.state.lock();
        match std::mem::replace(&mut *state, SlotState::Taken) {
            SlotState::Done(d) => Some(d),
            other => {
                *state = other;
                None
            }
        }
    }
}

/// Where a driver's own request's delivery goes.
enum Own {
    /// Its caller found the lane idle: the delivery is kept here (its job
    /// has no slot).
    Here(Option<Delivery>),
    /// Its caller was handed the lane (or it is the helper thread, with a
    /// slot nobody waits on): the delivery goes to the slot, as to any
    /// waiting caller's.
    Slot(Arc<Slot>),
}

impl Own {
    fn take(&mut self) -> Option<Delivery> {
        match self {
            Own::Here(delivery) => delivery.take(),
            Own::Slot(slot) => slot.take(),
        }
    }

    fn is_done(&self) -> bool {
        match self {
            Own::Here(delivery) => delivery.is_some(),
            Own::Slot(slot) => slot.is_done(),
        }
    }
}

/// Hand `delivery` to the caller of the job whose slot is `slot` (`None`:
/// the driver's own, kept in `own`).
fn deliver(own: &mut Own, slot: Option<Arc<Slot>>, delivery: Delivery) {
    match slot {
        Some(slot) => slot.set(SlotState::Done(delivery)),
        None => {
            if let Own::Here(kept) = own {
                *kept = Some(delivery);
            }
            // (A job without a slot is only ever its driver's own, and
            // such a driver's `own` is `Here`.)
        }
    }
}

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
}

/// What [`Lane::submit_async`] made of a request.
pub(crate) enum Queued<'l> {
    /// Queued: the reply comes through the ticket.
    Ticket(Ticket<'l>),
    /// Not queued: the lane has no connection now. The request is given
    /// back unsent.
    NoConnection(Request),
}

/// The future of an async caller's request ([`Lane::submit_async`]).
pub(crate) struct Reply(Arc<Slot>);

impl Future for Reply {
    type Output = Delivery;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Delivery> {
        let mut state = self.0.state.lock();
        match std::mem::replace(&mut *state, SlotState::Taken) {
            SlotState::Done(d) => Poll::Ready(d),
            SlotState::Waiting(_) | SlotState::Drive => {
                // (An async request is never handed the lane.)
                *state = SlotState::Waiting(Some(cx.waker().clone()));
                Poll::Pending
            }
            SlotState::Taken => Poll::Ready(Delivery {
                replies: vec![Err(io::Error::other("the reply was already taken").into())],
                sent: true,
                generation: 0,
                stats: None,
                payload: Vec::new(),
            }),
        }
    }
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

    /// Whether the lane has a live connection (for the stats).
    pub(crate) fn is_open(&self) -> bool {
        self.state.lock().incarnation.is_some()
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
        let Some(owner) = self.server.upgrade() else {
            return Err(Error::Internal("the store was dropped".into()));
        };
        let config = config.clone();
        let index = self.index;
        let (done, result) = oneshot();
        std::thread::Builder::new()
            .name("mcds-dial".into())
            .spawn(move || {
                let lane = &owner.lanes[index];
                done.send(lane.incarnation(&owner, &config, &mut Instant::now()));
            })
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
        request: Request,
        incarnation: Incarnation,
        now: Instant,
    ) -> Result<Queued<'_>, Error> {
        // (Made before the lock is taken: other callers wait on it.)
        let slot = Slot::new();
        let mut state = self.state.lock();
        match self.check(&mut state, server, now) {
            Some(current) if current == incarnation => {}
            Some(_) => return Err(restarted(&server.addr)),
            None => return Ok(Queued::NoConnection(request)),
        }
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
        driver.put_down(failed);
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
/// one (commands are encoded with it, see [`Server::learn_clock`]).
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

/// The caller driving a lane: it holds the connection, wrote a batch, and
/// reads its replies.
pub(crate) struct Driver<'l> {
    lane: &'l Lane,
    conn: Option<Box<Conn>>,
    own: Own,
    generation: u64,
    /// The jobs of the current write, in order (empty between writes; its
    /// room goes back to the lane with the connection).
    in_flight: Vec<Job>,
}

impl Driver<'_> {
    /// Take what is queued (up to [`MAX_WRITE`] bytes) and write it in one
    /// write. On a failure every job of the batch is delivered at once
    /// (sent or not, by how far the write got) and the connection is gone.
    fn write(&mut self) {
        // (Empty: the last write's jobs were all delivered by `read`.)
        {
            let mut state = self.lane.state.lock();
            let mut bytes = 0;
            while let Some(job) = state.queue.front() {
                if bytes > 0 && bytes + job.request.payload.len() > MAX_WRITE {
                    break;
                }
                bytes += job.request.payload.len();
                self.in_flight.extend(state.queue.pop_front());
            }
        }
        self.send(None);
    }

    /// Write the jobs in flight in one write (see [`write`](Self::write)).
    /// `now`: a clock reading of a moment ago, if the caller has one.
    fn send(&mut self, now: Option<Instant>) {
        let batch = &mut self.in_flight;
        if batch.is_empty() {
            return;
        }
        let Some(conn) = self.conn.as_mut() else {
            fail_unsent(
                batch.drain(..),
                self.generation,
                "not sent: the lane had no connection",
                &mut self.own,
            );
            return;
        };
        let now = now.unwrap_or_else(Instant::now);
        let deadline = batch
            .iter()
            .map(|j| j.request.deadline)
            .min()
            .unwrap_or(now)
            .max(now + Duration::from_millis(1));
        conn.set_deadline_at(deadline, now);
        let counters = &self.lane.counters;
        counters.writes.fetch_add(1, Ordering::Relaxed);
        counters
            .requests
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        let (outcome, written) = if batch.len() == 1 {
            conn.write_payload(&batch[0].request.payload)
        } else {
            let mut buf = Vec::with_capacity(batch.iter().map(|j| j.request.payload.len()).sum());
            for job in batch.iter() {
                buf.extend_from_slice(&job.request.payload);
            }
            conn.write_payload(&buf)
        };
        if let Err(e) = outcome {
            self.conn = None;
            let mut start = 0;
            for job in batch.drain(..) {
                let end = start + job.request.payload.len();
                let sent = written > start;
                start = end;
                let error = io::Error::new(e.kind(), e.to_string());
                let delivery = Delivery {
                    replies: vec![Err(error.into())],
                    sent,
                    generation: self.generation,
                    stats: None,
                    payload: job.request.payload,
                };
                deliver(&mut self.own, job.slot, delivery);
            }
        }
    }

    /// Read the replies of the batch in flight, deliver them, and then either
    /// put the lane down (nothing queued), hand it to the next queued caller,
    /// or, if this caller's own request is still queued, write and read
    /// again. Returns this caller's delivery.
    pub(crate) fn finish(mut self) -> Delivery {
        loop {
            self.read();
            if let Some(own) = self.own.take() {
                self.put_down(false);
                return own;
            }
            if self.conn.is_none() {
                // Failed, and this caller's request is still queued: give
                // everything queued back unsent; each caller sends again.
                self.put_down(true);
                return self.own.take().unwrap_or_else(|| Delivery {
                    replies: vec![Err(
                        io::Error::other("not sent: the connection failed").into()
                    )],
                    sent: false,
                    generation: self.generation,
                    stats: None,
                    payload: Vec::new(),
                });
            }
            self.write();
        }
    }

    /// Read and deliver the replies of every job in flight, in order.
    fn read(&mut self) {
        let mut jobs = std::mem::take(&mut self.in_flight);
        for job in jobs.drain(..) {
            let Some(conn) = self.conn.as_mut() else {
                deliver_lost(
                    job,
                    self.generation,
                    "the connection failed before this reply",
                    &mut self.own,
                );
                continue;
            };
            let Job {
                request: Request {
                    payload, expect, ..
                },
                slot,
                ..
            } = job;
            let mut replies = Vec::with_capacity(expect.room());
            let mut stats = None;
            let healthy = if expect == Expect::Stats {
                match conn.receive_stats() {
                    Ok(listing) => {
                        stats = Some(listing);
                        true
                    }
                    Err(e) => {
                        replies.push(Err(e.into()));
                        false
                    }
                }
            } else {
                read_job(conn, expect, &mut replies)
            };
            let delivery = Delivery {
                replies,
                sent: true,
                generation: self.generation,
                stats,
                payload,
            };
            deliver(&mut self.own, slot, delivery);
            if !healthy {
                self.conn = None;
            }
        }
        self.in_flight = jobs;
    }

    /// Let go of the lane: keep the connection for the next caller (or close
    /// it if it failed or was retired), and either mark the lane idle or
    /// hand it to the first queued caller. With `fail_queue` (the
    /// connection failed) everything queued is given back unsent instead.
    fn put_down(&mut self, fail_queue: bool) {
        let mut state = self.lane.state.lock();
        if self.in_flight.is_empty() {
            state.spare = std::mem::take(&mut self.in_flight);
        }
        let alive = self.conn.is_some() && !state.retire;
        if let Some(conn) = &self.conn {
            state.check_after = conn.last_clock() + IDLE_CHECK;
        }
        if alive {
            state.conn = self.conn.take();
        } else {
            self.conn = None;
            state.conn = None;
            state.incarnation = None;
            state.retire = false;
        }
        // (Only a driver's own job has no slot, and it goes out in the
        // driver's first write: the queue never holds one. Were it first,
        // nobody could take the lane: the queue fails instead.)
        let stranded = state.queue.front().is_some_and(|j| j.slot.is_none());
        if !alive || fail_queue || stranded {
            let queued: Vec<Job> = state.queue.drain(..).collect();
            state.driving = false;
            drop(state);
            fail_unsent(
                queued,
                self.generation,
                "not sent: the connection failed before this request was written",
                &mut self.own,
            );
            return;
        }
        match state.queue.front() {
            None => state.driving = false,
            Some(next) => {
                // Still driving: the next caller takes the connection, or
                // the helper thread for an async one.
                self.lane.counters.handoffs.fetch_add(1, Ordering::Relaxed);
                if next.is_async {
                    drop(state);
                    self.lane.wake_helper();
                } else if let Some(slot) = &next.slot {
                    slot.set(SlotState::Drive);
                }
            }
        }
    }
}

impl Drop for Driver<'_> {
    /// A driver that unwinds (a panic) must not leave callers waiting: what
    /// it had in flight is lost, the lane is put down.
    fn drop(&mut self) {
        let jobs = std::mem::take(&mut self.in_flight);
        for job in jobs {
            deliver_lost(
                job,
                self.generation,
                "the caller reading this reply panicked",
                &mut self.own,
            );
        }
        if !self.own.is_done() && std::thread::panicking() {
            self.conn = None;
            self.put_down(true);
        }
    }
}

fn fail_unsent(jobs: impl IntoIterator<Item = Job>, generation: u64, why: &str, own: &mut Own) {
    for job in jobs {
        let delivery = Delivery {
            replies: vec![Err(io::Error::new(io::ErrorKind::NotConnected, why).into())],
            sent: false,
            generation,
            stats: None,
            payload: job.request.payload,
        };
        deliver(own, job.slot, delivery);
    }
}

fn deliver_lost(job: Job, generation: u64, why: &str, own: &mut Own) {
    let delivery = Delivery {
        replies: vec![Err(
            io::Error::new(io::ErrorKind::ConnectionAborted, why).into()
        )],
        sent: true,
        generation,
        stats: None,
        payload: job.request.payload,
    };
    deliver(own, job.slot, delivery);
}

/// The helper thread of lane `index`: drive the lane whenever asked, until
/// the lane is dropped.
fn helper_main(signal: &Helper, server: &Weak<Server>, index: usize) {
    loop {
        {
            let mut state = signal.state.lock();
            while !state.drive && !state.closed {
                signal.wake.wait(&mut state);
            }
            if state.closed {
                return;
            }
            state.drive = false;
        }
        let Some(server) = server.upgrade() else {
            return;
        };
        server.lanes[index].drive_for_helper();
    }
}

/// A value sent once from a thread to a future.
struct Oneshot<T> {
    state: Mutex<(Option<T>, Option<Waker>)>,
}

struct Sender<T>(Arc<Oneshot<T>>);

struct Receiver<T>(Arc<Oneshot<T>>);

fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Oneshot {
        state: Mutex::new((None, None)),
    });
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

impl<T> Sender<T> {
    fn send(self, value: T) {
        let waker = {
            let mut state = self.0.state.lock();
            state.0 = Some(value);
            state.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }
}

impl<T> Future for Receiver<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let mut state = self.0.state.lock();
        match state.0.take() {
            Some(value) => Poll::Ready(value),
            None => {
                state.1 = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

/// Read one job's replies into `replies`. `false`: the connection is no
/// longer usable (a transport failure, or replies out of step), and the
/// failure is the last entry.
fn read_job(conn: &mut Conn, expect: Expect, replies: &mut Vec<Read>) -> bool {
    match expect {
        Expect::One { opaque, data } => {
            let r = conn.receive();
            match r {
                Ok(r) if echoes(&r, opaque) => {
                    replies.push(Ok(r));
                    true
                }
                Ok(r) => {
                    replies.push(Err(out_of_step(&r, opaque)));
                    false
                }
                // The server answered, and a `SERVER_ERROR` (out of memory,
                // too large) comes after memcached swallowed the command's
                // data: the stream is still in step.
                Err(e @ memcache::exp::Error::Server(_)) => {
                    replies.push(Err(e));
                    true
                }
                // `CLIENT_ERROR`/`ERROR` to a command without a data block
                // (`ma` on a non-number, say): one line, the stream is in
                // step, and the next request's reply comes next.
                Err(e @ memcache::exp::Error::Rejected(_)) if !data => {
                    replies.push(Err(e));
                    true
                }
                // To a command with a data block, memcached may have read
                // the block as a command of its own; what follows cannot be
                // trusted to belong to the next request. Or a transport
                // failure.
                Err(e) => {
                    replies.push(Err(e));
                    false
                }
            }
        }
        Expect::Pair { opaque } => {
            match conn.receive() {
                Ok(r) if r.text => replies.push(Ok(r)),
                // Out of memory, too large: memcached swallowed the data
                // block and answers the `mg` next.
                Err(e @ memcache::exp::Error::Server(_)) => replies.push(Err(e)),
                Ok(r) => {
                    replies.push(Err(out_of_step(&r, opaque)));
                    return false;
                }
                // A `CLIENT_ERROR` to a command with a data block, or a
                // transport failure: nothing after it can be trusted.
                Err(e) => {
                    replies.push(Err(e));
                    return false;
                }
            }
            read_job(
                conn,
                Expect::One {
                    opaque,
                    data: false,
                },
                replies,
            )
        }
        Expect::Stats => true, // read by the caller of `read_job`
        Expect::UntilMn { .. } => loop {
            match conn.receive() {
                Ok(r) => {
                    let end = r.rc == ReturnCode::Mn;
                    replies.push(Ok(r));
                    if end {
                        return true;
                    }
                }
                Err(e) if is_error_line(&e) => replies.push(Err(e)),
                Err(e) => {
                    replies.push(Err(e));
                    return false;
                }
            }
        },
    }
}

/// The error for a reply `r` that is not the answer to the command sent
/// with `O<opaque>`.
fn out_of_step(r: &MetaReply, opaque: u32) -> memcache::exp::Error {
    memcache::exp::Error::Protocol(format!(
        "a reply out of step: it echoes opaque {:?}, the command sent O{opaque}",
        r.opaque
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default()
    ))
}

/// An error line (`SERVER_ERROR`, `CLIENT_ERROR`, `ERROR`): the server
/// answered, the stream is still framed.
pub(crate) fn is_error_line(e: &memcache::exp::Error) -> bool {
    matches!(
        e,
        memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)
    )
}

fn echoes(r: &MetaReply, opaque: u32) -> bool {
    r.opaque.as_ref().and_then(Opaque::number) == Some(opaque)
}

/// Insert ` O<opaque>` into an encoded single command, before the CRLF that
/// ends its command line.
pub(crate) fn tag(payload: &mut Vec<u8>, opaque: u32) {
    let end = payload
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(payload.len());
    let flag = format!(" O{opaque}");
    payload.splice(end..end, flag.bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_opaque_goes_at_the_end_of_the_command_line() {
        let mut p = b"ms k 2 T0\r\nhi\r\n".to_vec();
        tag(&mut p, 42);
        assert_eq!(p, b"ms k 2 T0 O42\r\nhi\r\n");
        let mut p = b"ma k D1 v\r\n".to_vec();
        tag(&mut p, 7);
        assert_eq!(p, b"ma k D1 v O7\r\n");
    }

    #[test]
    fn only_the_exact_opaque_is_an_echo() {
        let with =
            |line: &str| crate::reply::read_reply(&mut line.as_bytes(), &mut Vec::new()).unwrap();
        assert!(echoes(&with("HD O42\r\n"), 42));
        assert!(!echoes(&with("HD O420\r\n"), 42));
        assert!(!echoes(&with("HD\r\n"), 0));
        assert!(!echoes(&with("HD O4x\r\n"), 4));
        assert!(!echoes(&with("HD O99999999999999999999\r\n"), 42));
    }
}
