//! Async callers on a multi-thread tokio runtime drive a connection
//! themselves (the `tokio` feature).
//!
//! Without it an async caller never touches the socket: its request is
//! queued and the lane's helper thread writes and reads for it, then wakes
//! its waker. That is two thread wake-ups per call (the helper's, then the
//! task's worker), and one task's `incr_async` ran at 0.58× the raw
//! socket.
//!
//! With it, an async caller on a multi-thread tokio runtime takes an idle
//! lane of the server's **async lanes**
//! ([`Server::async_lane`](crate::server::Server::async_lane)) and drives
//! it like a blocking caller drives a shared lane, but with the socket
//! non-blocking and registered with the runtime's reactor: it writes its
//! request, awaits readiness, reads and parses the reply from a buffer of
//! its own ([`NativeIo`]). One task's call is a `write`, an `epoll`
//! wake-up of its own worker and a `read`: no other thread.
//!
//! * **Nobody waits behind a driver.** A driver's progress is its caller's
//!   future being polled: a future polled once and then kept unpolled (or
//!   a pipeline that awaits one server's ticket while another's waits its
//!   turn) would hold up every caller queued behind it, without bound (an
//!   adversarial review's finding). So async lanes never queue: a caller
//!   that finds no idle async lane, or one whose request may not be driven
//!   ([`Session::queue_only`](crate::session::Session::queue_only): a
//!   pipeline's round that spans connections), queues on a shared lane,
//!   for its helper thread, as without the feature. Under contention,
//!   callers still go out together there, batched. A blocking caller never
//!   uses an async lane either: a blocking call made inside an async task
//!   (an anti-pattern, but a common one) holds a worker thread, and must
//!   not wait for a task.
//! * **Which runtime.** The socket is registered with the reactor of the
//!   runtime running the caller (a `dup` of it, taken by tokio's own
//!   socket types), and registered again when a caller runs in another
//!   runtime ([`tokio::runtime::Handle::id`]); a registration whose runtime
//!   has shut down is replaced once, then the connection fails.
//! * **Cancellation.** A caller's future may be dropped at any await (a
//!   `tokio::time::timeout`, a `select!`). A driver dropped while it holds
//!   the lane moves what it has in flight (the bytes of the write not yet
//!   sent, the replies read so far) to a task spawned on the runtime,
//!   which finishes the write and the read, so the connection stays in
//!   step and in use ([`Rescue`]). Until a rescue is done, new requests to
//!   its server wait for it (`Server::await_rescues`, at most 2 s): a
//!   cancelled request that was written is applied before the caller's
//!   next one, which could otherwise go out on another connection and be
//!   applied first. Without a multi-thread runtime to spawn
//!   on (it is shutting down, or the future was dropped inside a
//!   current-thread runtime, which would run the task only in its next
//!   `block_on`), the connection is closed instead.
//! * **Deadlines.** A request's deadline bounds the waits for readiness
//!   (tokio's timer): the runtime must have its I/O and time drivers
//!   enabled, as `#[tokio::main]` and `Runtime::new` do.
//! * **What stays on the helper thread:** TLS connections (rustls reads and
//!   writes records through the blocking socket), dials (on a thread of
//!   their own, as before), current-thread runtimes ([`on_runtime`]),
//!   other executors, and the cases above.
//!
//! Between drivers nothing is left buffered on either side: a blocking
//! driver takes over a connection whose async buffer is empty, and the
//! other way round ([`Conn::is_quiet`], checked when a driver puts the
//! lane down: leftover bytes close the connection).

use std::collections::VecDeque;
use std::io;
use std::sync::Arc;
use std::time::Instant;

use tokio::io::Interest;
use tokio::runtime::{Handle, RuntimeFlavor};

use mcds_net::transport::{Socket, Stream};

use super::driver::{Driver, Next, batch_bytes, deliver_lost, take_reply};
use super::request::{Delivery, Expect, Job, Own, Read, Request, Slot};
use super::{Lane, Ticket};
use crate::config::Config;
use crate::conn::Conn;
use crate::reply::MAX_LINE;
use crate::server::Server;

/// A second handle on a connection's socket (a `dup`), registered with the
/// reactor of one runtime: readiness comes from it, and reads and writes
/// go through it while the socket is in non-blocking mode.
enum Watched {
    Tcp(tokio::net::TcpStream),
    Unix(tokio::net::UnixStream),
}

impl Watched {
    async fn ready(&self, interest: Interest) -> io::Result<tokio::io::Ready> {
        match self {
            Watched::Tcp(s) => s.ready(interest).await,
            Watched::Unix(s) => s.ready(interest).await,
        }
    }

    /// A read or write without blocking: `WouldBlock` (and the readiness
    /// cleared) when the socket is not ready after all.
    fn try_io(&self, op: &mut Op<'_>) -> io::Result<usize> {
        match (self, op) {
            (Watched::Tcp(s), Op::Read(buf)) => s.try_read(buf),
            (Watched::Unix(s), Op::Read(buf)) => s.try_read(buf),
            (Watched::Tcp(s), Op::Write(buf)) => s.try_write(buf),
            (Watched::Unix(s), Op::Write(buf)) => s.try_write(buf),
        }
    }
}

/// A read into a buffer, or a write of bytes.
enum Op<'b> {
    Read(&'b mut [u8]),
    Write(&'b [u8]),
}

/// What a connection needs to be driven by async callers: its handle
/// registered with the reactor of the runtime that last drove it, and the
/// bytes read from the socket and not yet parsed.
pub(crate) struct NativeIo {
    registered: Option<(Watched, tokio::runtime::Id)>,
    /// Bytes read; `buf[start..end]` are not parsed yet. Grown (doubling)
    /// only for a reply larger than it, and never shrunk: it is the
    /// connection's, reused by every read.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// The first size of a connection's read buffer (as the blocking side's).
const BUFFER: usize = 16 * 1024;

impl NativeIo {
    pub(crate) fn new() -> NativeIo {
        NativeIo {
            registered: None,
            buf: vec![0; BUFFER],
            start: 0,
            end: 0,
        }
    }

    /// Whether every byte read has been parsed.
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The handle registered with the reactor of the runtime running the
    /// caller: made (a `dup` of the socket) on first use, and again when
    /// the caller runs in another runtime.
    fn registration<'r>(
        registered: &'r mut Option<(Watched, tokio::runtime::Id)>,
        stream: &Stream,
    ) -> io::Result<&'r Watched> {
        let runtime = Handle::try_current().map_err(io::Error::other)?.id();
        if registered.as_ref().is_none_or(|(_, id)| *id != runtime) {
            // Off the old reactor first (and its descriptor closed).
            *registered = None;
            let watched = match stream.try_clone_socket()? {
                Some(Socket::Tcp(s)) => Watched::Tcp(tokio::net::TcpStream::from_std(s)?),
                Some(Socket::Unix(s)) => Watched::Unix(tokio::net::UnixStream::from_std(s)?),
                None => {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        "a TLS connection is driven by the blocking path",
                    ));
                }
            };
            *registered = Some((watched, runtime));
        }
        match registered {
            Some((watched, _)) => Ok(watched),
            None => Err(io::Error::other("the socket was not registered")),
        }
    }

    /// Run `op` on the socket once the reactor reports it ready for
    /// `interest`; a stale report (`WouldBlock`) waits again. Bounded by
    /// `deadline`. A registration whose runtime shut down is made again
    /// once, in the caller's runtime.
    async fn when_ready(
        registered: &mut Option<(Watched, tokio::runtime::Id)>,
        stream: &Stream,
        interest: Interest,
        deadline: Instant,
        mut op: Op<'_>,
    ) -> io::Result<usize> {
        let mut remade = false;
        loop {
            let watched = Self::registration(registered, stream)?;
            let until = tokio::time::Instant::from_std(deadline);
            match tokio::time::timeout_at(until, watched.ready(interest)).await {
                Ok(Ok(_)) => match watched.try_io(&mut op) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    done => return done,
                },
                // The registration's runtime is gone: register in the
                // caller's, once.
                Ok(Err(_)) if !remade => {
                    remade = true;
                    *registered = None;
                }
                Ok(Err(e)) => return Err(e),
                Err(_) => {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the server did not answer within the I/O timeout",
                    ));
                }
            }
        }
    }

    /// Read more of the stream into the buffer, waiting (until `deadline`)
    /// for the reactor to report bytes. `UnexpectedEof` when the server
    /// closed the connection.
    async fn fill(&mut self, stream: &mut Stream, deadline: Instant) -> io::Result<()> {
        // (A rescue may read a socket its driver wrote: the mode is kept,
        // and this costs no system call then.)
        stream.set_async_mode(None)?;
        let NativeIo {
            registered,
            buf,
            start,
            end,
        } = self;
        if *start == *end {
            (*start, *end) = (0, 0);
        }
        if *end == buf.len() {
            if *start > 0 {
                buf.copy_within(*start..*end, 0);
                *end -= *start;
                *start = 0;
            } else {
                buf.resize(buf.len() * 2, 0);
            }
        }
        let room = Op::Read(&mut buf[*end..]);
        let read = Self::when_ready(registered, stream, Interest::READABLE, deadline, room).await?;
        if read == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection mid-reply",
            ));
        }
        *end += read;
        Ok(())
    }

    /// The bytes read and not parsed yet.
    fn pending(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Mark `n` more bytes parsed.
    fn consume(&mut self, n: usize) {
        self.start = (self.start + n).min(self.end);
    }

    /// Read one reply (with its data block), as [`Conn::receive`] does.
    pub(crate) async fn receive(
        &mut self,
        stream: &mut Stream,
        line: &mut Vec<u8>,
        deadline: Instant,
    ) -> Read {
        loop {
            let pending = self.pending();
            if needed(pending).is_some_and(|n| n <= pending.len()) {
                let mut rest = pending;
                match crate::reply::read_reply(&mut rest, line) {
                    // Longer than its first line said (a reply this parser
                    // reads differently): read more and parse again.
                    Err(memcache::exp::Error::Io(e))
                        if e.kind() == io::ErrorKind::UnexpectedEof => {}
                    parsed => {
                        let used = pending.len() - rest.len();
                        self.consume(used);
                        return parsed;
                    }
                }
            }
            self.fill(stream, deadline).await?;
        }
    }

    /// The bytes of a whole `stats` listing (up to its `END` line), once
    /// they are all read.
    pub(crate) async fn receive_listing(
        &mut self,
        stream: &mut Stream,
        deadline: Instant,
    ) -> io::Result<&[u8]> {
        loop {
            if let Some(n) = listing_len(self.pending()) {
                let start = self.start;
                self.consume(n);
                return Ok(&self.buf[start..start + n]);
            }
            self.fill(stream, deadline).await?;
        }
    }

    /// Write all of `payload[*written..]`, moving `written` on as bytes
    /// leave (so that a caller dropped meanwhile knows how far it got):
    /// at once when the socket takes it, else as the reactor reports room.
    pub(crate) async fn write_all(
        &mut self,
        stream: &mut Stream,
        payload: &[u8],
        written: &mut usize,
        deadline: Instant,
    ) -> io::Result<()> {
        stream.set_async_mode(Some(Instant::now()))?;
        while *written < payload.len() {
            let rest = &payload[*written..];
            let watched = Self::registration(&mut self.registered, stream)?;
            let n = match watched.try_io(&mut Op::Write(rest)) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let op = Op::Write(rest);
                    Self::when_ready(
                        &mut self.registered,
                        stream,
                        Interest::WRITABLE,
                        deadline,
                        op,
                    )
                    .await?
                }
                other => other?,
            };
            if n == 0 {
                return Err(io::Error::from(io::ErrorKind::WriteZero));
            }
            *written += n;
        }
        Ok(())
    }
}

/// How many bytes the reply at the front of `pending` needs, as far as its
/// first line tells (the line, and a `VA`/`VALUE` reply's data block and
/// its CRLF); `None` until that line is whole. A line longer than memcached
/// sends counts as whole, for the parser to refuse.
fn needed(pending: &[u8]) -> Option<usize> {
    let window = &pending[..pending.len().min(MAX_LINE + 1)];
    let Some(end) = window.iter().position(|&b| b == b'\n') else {
        return (pending.len() > MAX_LINE).then_some(pending.len());
    };
    let line = &window[..end];
    let mut tokens = line.split(|&b| b == b' ');
    let data = match tokens.next() {
        Some(b"VA") => tokens.next(),
        Some(b"VALUE") => tokens.nth(2),
        _ => None,
    };
    let data = data
        .and_then(|t| std::str::from_utf8(t.strip_suffix(b"\r").unwrap_or(t)).ok())
        .and_then(|t| t.parse::<usize>().ok())
        .map_or(0, |len| len.saturating_add(2));
    Some((end + 1).saturating_add(data))
}

/// The length of a whole `stats` listing at the front of `pending`, through
/// its `END` line; `None` until that line has been read.
fn listing_len(pending: &[u8]) -> Option<usize> {
    let mut at = 0;
    while let Some(end) = pending[at..].iter().position(|&b| b == b'\n') {
        let line = &pending[at..at + end];
        at += end + 1;
        if line == b"END\r" || line == b"END" {
            return Some(at);
        }
    }
    None
}

/// Whether the caller runs on a multi-thread tokio runtime. Only there do
/// async callers drive lanes: its workers run its tasks whatever any one
/// caller does, while a current-thread runtime runs them only inside its
/// `block_on`, and a driver's task spawned there could wait, holding a
/// lane other callers need, until the next one.
/// Not under [`mcds_core::block_on`] either: a task blocked there holds
/// its worker, and with every worker so held nothing would deliver the
/// readiness a driver waits for (the lock's tests run four such tasks on
/// two workers). Another executor's `block_on` inside a task is not
/// detected: as with tokio's own sockets, do not block a worker on an
/// async call.
pub(crate) fn on_runtime() -> bool {
    !mcds_core::in_block_on()
        && Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread)
}

/// Whether an async caller here can drive a lane: it runs on a
/// multi-thread tokio runtime ([`on_runtime`]), and the lane's connection
/// is not TLS.
pub(super) fn can_drive(conn: Option<&Conn>) -> bool {
    conn.is_some_and(Conn::has_fd) && on_runtime()
}

/// An async caller driving a lane on its runtime (see the module docs).
pub(crate) struct NativeDriver<'l> {
    driver: Driver<'l>,
    /// The jobs written and not yet all answered, in order; the front one
    /// is being read.
    pending: VecDeque<Job>,
    /// The replies read so far of the front job, and what its next one is.
    reading: Option<(Vec<Read>, Expect)>,
    /// The current write: its bytes (when it joins several jobs), how many
    /// have left, and the deadline bounding it and its replies.
    out: Vec<u8>,
    written: usize,
    deadline: Instant,
    /// Still holds the lane (not put down): dropping it then hands what it
    /// has in flight to a [`Rescue`].
    holding: bool,
}

impl<'l> NativeDriver<'l> {
    pub(super) fn new(driver: Driver<'l>) -> NativeDriver<'l> {
        NativeDriver {
            driver,
            pending: VecDeque::new(),
            reading: None,
            out: Vec::new(),
            written: 0,
            deadline: Instant::now(),
            holding: true,
        }
    }

    /// Write the jobs in flight, read every reply, and put the lane down
    /// (or hand it on); this caller's delivery.
    pub(crate) async fn finish(mut self) -> Delivery {
        self.start_write(Some(Instant::now()));
        self.write().await;
        self.read().await;
        let failed = self.driver.conn.is_none();
        let own = self.driver.own.take();
        self.put_down(failed);
        own.unwrap_or_else(|| Delivery {
            replies: vec![Err(
                io::Error::other("not sent: the connection failed").into()
            )],
            sent: false,
            generation: self.driver.generation,
            stats: None,
            payload: Vec::new(),
        })
    }

    /// Move the jobs in flight to the pending ones, and set up their write.
    /// A lane without a connection fails them unsent.
    fn start_write(&mut self, now: Option<Instant>) {
        if self.driver.in_flight.is_empty() {
            return;
        }
        if self.driver.conn.is_none() {
            let jobs = std::mem::take(&mut self.driver.in_flight);
            super::driver::fail_unsent(
                jobs,
                self.driver.generation,
                "not sent: the lane had no connection",
                &mut self.driver.own,
            );
            return;
        }
        let now = now.unwrap_or_else(Instant::now);
        self.deadline = self.driver.write_deadline(now);
        self.out.clear();
        if self.driver.in_flight.len() > 1 {
            self.out = batch_bytes(&self.driver.in_flight);
        }
        self.written = 0;
        self.pending.extend(self.driver.in_flight.drain(..));
    }

    /// Write the pending jobs' bytes (set up by [`start_write`](Self::start_write)).
    async fn write(&mut self) {
        let Some(conn) = self.driver.conn.as_mut() else {
            return;
        };
        let payload: &[u8] = match (self.out.is_empty(), self.pending.front()) {
            (true, Some(job)) => &job.request.payload,
            _ => &self.out,
        };
        if self.written >= payload.len() {
            return;
        }
        let (io, stream, _) = conn.native_parts();
        let outcome = io
            .write_all(stream, payload, &mut self.written, self.deadline)
            .await;
        if let Err(e) = outcome {
            let jobs = std::mem::take(&mut self.pending);
            self.driver.write_failed(jobs, &e, self.written);
        }
    }

    /// Read and deliver the replies of every pending job, in order.
    async fn read(&mut self) {
        while let Some(front) = self.pending.front() {
            let Some(conn) = self.driver.conn.as_mut() else {
                self.lose_pending("the connection failed before this reply");
                return;
            };
            let expect = front.request.expect;
            let (io, stream, line) = conn.native_parts();
            let (replies, stats, healthy) = if expect == Expect::Stats {
                match io.receive_listing(stream, self.deadline).await {
                    Ok(mut listing) => match crate::conn::read_listing(&mut listing) {
                        Ok(parsed) => (Vec::new(), Some(parsed), true),
                        Err(e) => (vec![Err(e.into())], None, false),
                    },
                    Err(e) => (vec![Err(e.into())], None, false),
                }
            } else {
                // Kept in the driver across the awaits: a driver dropped
                // here hands the replies read so far to its rescue.
                let reading = self
                    .reading
                    .get_or_insert_with(|| (Vec::with_capacity(expect.room()), expect));
                let healthy = loop {
                    let r = io.receive(stream, line, self.deadline).await;
                    match take_reply(reading.1, r, &mut reading.0) {
                        Next::More(next) => reading.1 = next,
                        Next::Done(healthy) => break healthy,
                    }
                };
                let replies = self.reading.take().map(|(r, _)| r).unwrap_or_default();
                (replies, None, healthy)
            };
            if let Some(job) = self.pending.pop_front() {
                let Job { request, slot, .. } = job;
                self.driver
                    .delivered(slot, request.payload, replies, stats, healthy);
            }
        }
    }

    /// Deliver every pending job as sent and lost (its reply will never be
    /// read), for `why`.
    fn lose_pending(&mut self, why: &str) {
        for job in std::mem::take(&mut self.pending) {
            deliver_lost(job, self.driver.generation, why, &mut self.driver.own);
        }
    }

    /// Let go of the lane (see [`Driver::put_down`]). Nobody queues on an
    /// async lane, so nobody is handed it; were anyone queued, the lane's
    /// helper thread would drive for them.
    fn put_down(&mut self, failed: bool) {
        self.holding = false;
        if self.driver.put_down(failed) {
            self.driver.lane.wake_helper();
        }
    }
}

impl Drop for NativeDriver<'_> {
    /// Dropped while it holds the lane (its caller's future was cancelled):
    /// what it has in flight is other callers' too, so a task finishes it
    /// (see the module docs).
    fn drop(&mut self) {
        if !self.holding {
            return;
        }
        self.holding = false;
        // A request not written yet is the cancelled caller's own: dropped.
        self.driver.in_flight.clear();
        let lane = self.driver.lane;
        let rescue = Rescue {
            server: lane.server.upgrade(),
            index: lane.index,
            conn: self.driver.conn.take(),
            generation: self.driver.generation,
            pending: std::mem::take(&mut self.pending),
            reading: self.reading.take(),
            out: std::mem::take(&mut self.out),
            written: self.written,
            deadline: self.deadline,
        };
        // (Nothing is left in the driver: its own drop delivers nothing.)
        // Only on a multi-thread runtime: a current-thread one runs the
        // rescue only inside its next `block_on`, and the lane would wait
        // for that (an adversarial review's finding).
        // Counted until it is done: new requests to the server wait for it
        // (`Server::await_rescues`).
        if let Some(server) = &rescue.server {
            server
                .rescues
                .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        }
        match Handle::try_current() {
            Ok(runtime) if on_runtime() && !std::thread::panicking() => {
                runtime.spawn(rescue.run());
            }
            // Dropped with the rescue: it fails what it holds.
            _ => drop(rescue),
        }
    }
}

/// What a cancelled driver had in flight, finished by a task of its own
/// (see the module docs). Dropped before it ran (its runtime shut down),
/// it fails what it holds: the jobs in flight are lost, the connection
/// closed and the queue given back unsent.
struct Rescue {
    server: Option<Arc<Server>>,
    index: usize,
    conn: Option<Box<Conn>>,
    generation: u64,
    pending: VecDeque<Job>,
    reading: Option<(Vec<Read>, Expect)>,
    out: Vec<u8>,
    written: usize,
    deadline: Instant,
}

impl Rescue {
    /// The driver that carries on, on `server`'s lane: the rescue is
    /// emptied into it.
    fn driver<'s>(&mut self, server: &'s Server) -> Option<NativeDriver<'s>> {
        let lane = server.lanes.get(self.index)?;
        let mut driver = NativeDriver::new(Driver {
            lane,
            conn: self.conn.take(),
            // Nobody waits for a cancelled caller's own reply.
            own: Own::Slot(Slot::new()),
            generation: self.generation,
            in_flight: Vec::new(),
        });
        driver.pending = std::mem::take(&mut self.pending);
        driver.reading = self.reading.take();
        driver.out = std::mem::take(&mut self.out);
        driver.written = self.written;
        driver.deadline = self.deadline;
        Some(driver)
    }

    async fn run(mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        if let Some(mut driver) = self.driver(&server) {
            driver.write().await;
            driver.read().await;
            let failed = driver.driver.conn.is_none();
            driver.put_down(failed);
        }
        server
            .rescues
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl Drop for Rescue {
    fn drop(&mut self) {
        let Some(server) = self.server.take() else {
            return;
        };
        if let Some(mut driver) = self.driver(&server) {
            driver.holding = false;
            driver.driver.conn = None;
            driver.lose_pending(
                "the async caller driving the connection was cancelled with no runtime left to finish its reads",
            );
            // (With the queue failed, nothing is handed on.)
            let _ = driver.driver.put_down(true);
        }
        server
            .rescues
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// Start a request as an async caller on a tokio runtime: if the lane is
/// idle and its connection can be driven here, the caller drives it
/// ([`Ticket::Native`]); `Err(request)` otherwise, to be queued.
pub(super) fn try_drive<'l>(
    lane: &'l Lane,
    config: &Config,
    state: &mut parking_lot::MutexGuard<'_, super::LaneState>,
    request: Request,
) -> Result<Ticket<'l>, Request> {
    if state.driving || !config.on_runtime || !can_drive(state.conn.as_deref()) {
        return Err(request);
    }
    state.driving = true;
    let conn = state.conn.take();
    let generation = state.generation;
    let mut in_flight = std::mem::take(&mut state.spare);
    in_flight.push(Job {
        request,
        slot: None,
        is_async: true,
    });
    let driver = NativeDriver::new(Driver {
        lane,
        conn,
        own: Own::Here(None),
        generation,
        in_flight,
    });
    Ok(Ticket::Native(Box::pin(driver.finish())))
}
