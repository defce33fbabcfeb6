//! The caller driving a lane ([`Driver`]): it writes what is queued in one
//! write, reads the replies of every request in it, in order, and hands
//! each to its caller; on a failure, every request it wrote fails and the
//! ones it had not written go back unsent.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use memcache::exp::ReturnCode;
use parking_lot::Mutex;

use crate::conn::Conn;
use crate::reply::{MetaReply, Opaque};
use crate::server::Server;

use super::request::{Delivery, Expect, Job, Own, Read, Request, SlotState, deliver};
use super::{Helper, IDLE_CHECK, Lane};

/// The most request bytes one write takes from the queue; more waits for
/// the next write (a reply to a huge batch must not delay the rest).
pub(super) const MAX_WRITE: usize = 256 * 1024;

/// The caller driving a lane: it holds the connection, wrote a batch, and
/// reads its replies.
pub(crate) struct Driver<'l> {
    pub(super) lane: &'l Lane,
    pub(super) conn: Option<Box<Conn>>,
    pub(super) own: Own,
    pub(super) generation: u64,
    /// The jobs of the current write, in order (empty between writes; its
    /// room goes back to the lane with the connection).
    pub(super) in_flight: Vec<Job>,
}

impl Driver<'_> {
    /// Take what is queued (up to [`MAX_WRITE`] bytes) and write it in one
    /// write. On a failure every job of the batch is delivered at once
    /// (sent or not, by how far the write got) and the connection is gone.
    pub(super) fn write(&mut self) {
        self.take_queued();
        self.send(None);
    }

    /// Take what is queued, up to [`MAX_WRITE`] bytes, into the jobs in
    /// flight (empty: the last write's jobs were all delivered).
    pub(super) fn take_queued(&mut self) {
        let mut state = self.lane.state.lock();
        let mut bytes = 0;
        while let Some(job) = state.queue.front() {
            let leads = matches!(job.request.expect, Expect::UntilMn { leads: true, .. });
            if bytes > 0 && (leads || bytes + job.request.payload.len() > MAX_WRITE) {
                break;
            }
            bytes += job.request.payload.len();
            self.in_flight.extend(state.queue.pop_front());
        }
    }

    /// The deadline of a write of the jobs in flight (the earliest of
    /// theirs, at least a millisecond from `now`), counted as a write.
    pub(super) fn write_deadline(&self, now: Instant) -> Instant {
        let batch = &self.in_flight;
        let counters = &self.lane.counters;
        counters.writes.fetch_add(1, Ordering::Relaxed);
        counters
            .requests
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        batch
            .iter()
            .map(|j| j.request.deadline)
            .min()
            .unwrap_or(now)
            .max(now + Duration::from_millis(1))
    }

    /// Write the jobs in flight in one write (see [`write`](Self::write)).
    /// `now`: a clock reading of a moment ago, if the caller has one.
    pub(super) fn send(&mut self, now: Option<Instant>) {
        let batch = &mut self.in_flight;
        if batch.is_empty() {
            return;
        }
        if self.conn.is_none() {
            fail_unsent(
                batch.drain(..),
                self.generation,
                "not sent: the lane had no connection",
                &mut self.own,
            );
            return;
        }
        let now = now.unwrap_or_else(Instant::now);
        let deadline = self.write_deadline(now);
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        conn.set_deadline_at(deadline, now);
        // (One job's bytes as they are: no copy on the hot path.)
        let (outcome, written) = match &self.in_flight[..] {
            [job] => conn.write_payload(&job.request.payload),
            jobs => conn.write_payload(&batch_bytes(jobs)),
        };
        if let Err(e) = outcome {
            let mut jobs = std::mem::take(&mut self.in_flight);
            self.write_failed(jobs.drain(..), &e, written);
            self.in_flight = jobs;
        }
    }

    /// A write of `jobs` failed with `e` after `written` of its bytes: the
    /// connection is gone, and each job is delivered the failure, as sent
    /// if any byte of it left (then it may have been applied).
    pub(super) fn write_failed(
        &mut self,
        jobs: impl IntoIterator<Item = Job>,
        e: &io::Error,
        written: usize,
    ) {
        self.conn = None;
        let mut start = 0;
        for job in jobs {
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

    /// Read the replies of the batch in flight, deliver them, and then either
    /// put the lane down (nothing queued), hand it to the next queued caller,
    /// or, if this caller's own request is still queued, write and read
    /// again. Returns this caller's delivery.
    pub(crate) fn finish(mut self) -> Delivery {
        loop {
            self.read();
            if let Some(own) = self.own.take() {
                self.put_down_blocking(false);
                return own;
            }
            if self.conn.is_none() {
                // Failed, and this caller's request is still queued: give
                // everything queued back unsent; each caller sends again.
                self.put_down_blocking(true);
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
    pub(super) fn read(&mut self) {
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
            self.delivered(slot, payload, replies, stats, healthy);
        }
        self.in_flight = jobs;
    }

    /// Deliver a job's replies (or its listing) as read; a connection no
    /// longer `healthy` is dropped.
    pub(super) fn delivered(
        &mut self,
        slot: Option<Arc<super::Slot>>,
        payload: Vec<u8>,
        replies: Vec<Read>,
        stats: Option<Vec<(String, String)>>,
        healthy: bool,
    ) {
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

    /// Let go of the lane: keep the connection for the next caller (or close
    /// it if it failed or was retired), and either mark the lane idle or
    /// hand it to the first queued caller. With `fail_queue` (the
    /// connection failed) everything queued is given back unsent instead.
    /// `true`: the first queued caller is async, and the lane (still
    /// driven, its connection in the state) must be driven for it: by the
    /// helper thread ([`Lane::wake_helper`]) or a task of a tokio runtime.
    #[must_use = "a lane handed to an async caller must be driven for it"]
    pub(super) fn put_down(&mut self, fail_queue: bool) -> bool {
        let mut state = self.lane.state.lock();
        if self.in_flight.is_empty() {
            state.spare = std::mem::take(&mut self.in_flight);
        }
        // Bytes left unread after every reply (nothing a server should
        // send): the connection is out of step, and closed.
        let alive = self.conn.as_ref().is_some_and(|c| c.is_quiet()) && !state.retire;
        if let Some(conn) = &self.conn {
            state.check_after = conn.last_clock() + IDLE_CHECK;
        }
        if alive {
            // The lane holds no connection while a driver has it: filling
            // the empty slot, rather than assigning over it (a drop of the
            // old value), keeps a connection's drop off the hot path.
            // (Nobody dials while a driver drives: `check` answers the
            // lane's incarnation, which only the driver clears.)
            debug_assert!(state.conn.is_none());
            if let Some(conn) = self.conn.take() {
                state.conn.get_or_insert(conn);
            }
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
            return false;
        }
        match state.queue.front() {
            None => state.driving = false,
            Some(next) => {
                // Still driving: the next caller takes the connection, or
                // whoever drives for an async one.
                self.lane.counters.handoffs.fetch_add(1, Ordering::Relaxed);
                if next.is_async {
                    return true;
                } else if let Some(slot) = &next.slot {
                    slot.set(SlotState::Drive);
                }
            }
        }
        false
    }

    /// [`put_down`](Self::put_down) for a blocking driver: a lane handed
    /// to an async caller goes to the helper thread.
    pub(super) fn put_down_blocking(&mut self, fail_queue: bool) {
        if self.put_down(fail_queue) {
            self.lane.wake_helper();
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
            // (With the queue failed, nothing is handed on.)
            let _ = self.put_down(true);
        }
    }
}

pub(super) fn fail_unsent(
    jobs: impl IntoIterator<Item = Job>,
    generation: u64,
    why: &str,
    own: &mut Own,
) {
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

pub(super) fn deliver_lost(job: Job, generation: u64, why: &str, own: &mut Own) {
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
pub(super) fn helper_main(signal: &Helper, server: &Weak<Server>, index: usize) {
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
pub(super) struct Oneshot<T> {
    pub(super) state: Mutex<(Option<T>, Option<Waker>)>,
}

pub(super) struct Sender<T>(Arc<Oneshot<T>>);

pub(super) struct Receiver<T>(Arc<Oneshot<T>>);

pub(super) fn oneshot<T>() -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Oneshot {
        state: Mutex::new((None, None)),
    });
    (Sender(Arc::clone(&shared)), Receiver(shared))
}

impl<T> Sender<T> {
    pub(super) fn send(self, value: T) {
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

/// The bytes of a write of several `jobs`, together.
pub(super) fn batch_bytes(jobs: &[Job]) -> Vec<u8> {
    let mut buf = Vec::with_capacity(jobs.iter().map(|j| j.request.payload.len()).sum());
    for job in jobs {
        buf.extend_from_slice(&job.request.payload);
    }
    buf
}

/// Read one job's replies into `replies`. `false`: the connection is no
/// longer usable (a transport failure, or replies out of step), and the
/// failure is the last entry.
pub(super) fn read_job(conn: &mut Conn, mut expect: Expect, replies: &mut Vec<Read>) -> bool {
    loop {
        match take_reply(expect, conn.receive(), replies) {
            Next::More(next) => expect = next,
            Next::Done(healthy) => return healthy,
        }
    }
}

/// What one more reply made of a job being read ([`take_reply`]).
pub(super) enum Next {
    /// The job has more replies: read the next one as this expects.
    More(Expect),
    /// The job's replies are all read. `false`: the connection is no
    /// longer usable (a transport failure, or replies out of step), and
    /// the failure is the last entry.
    Done(bool),
}

/// Take `r`, the next reply of a job that expects `expect`, into
/// `replies`: where the job's replies end, and whether the stream is still
/// in step. The one place that judges replies, for the blocking driver
/// ([`read_job`]) and the async one (`native.rs`) alike.
#[inline]
pub(super) fn take_reply(expect: Expect, r: Read, replies: &mut Vec<Read>) -> Next {
    match expect {
        Expect::One { opaque, data } => {
            let healthy = match r {
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
            };
            Next::Done(healthy)
        }
        Expect::Pair { opaque } => {
            match r {
                Ok(r) if r.text => replies.push(Ok(r)),
                // Out of memory, too large: memcached swallowed the data
                // block and answers the `mg` next.
                Err(e @ memcache::exp::Error::Server(_)) => replies.push(Err(e)),
                Ok(r) => {
                    replies.push(Err(out_of_step(&r, opaque)));
                    return Next::Done(false);
                }
                // A `CLIENT_ERROR` to a command with a data block, or a
                // transport failure: nothing after it can be trusted.
                Err(e) => {
                    replies.push(Err(e));
                    return Next::Done(false);
                }
            }
            Next::More(Expect::One {
                opaque,
                data: false,
            })
        }
        // Read by the caller (a listing, not replies); never passed here.
        Expect::Stats => Next::Done(true),
        Expect::UntilMn { .. } => match r {
            Ok(r) => {
                let end = r.rc == ReturnCode::Mn;
                replies.push(Ok(r));
                if end {
                    Next::Done(true)
                } else {
                    Next::More(expect)
                }
            }
            Err(e) if is_error_line(&e) => {
                replies.push(Err(e));
                Next::More(expect)
            }
            Err(e) => {
                replies.push(Err(e));
                Next::Done(false)
            }
        },
    }
}

/// The error for a reply `r` that is not the answer to the command sent
/// with `O<opaque>`.
pub(super) fn out_of_step(r: &MetaReply, opaque: u32) -> memcache::exp::Error {
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

pub(super) fn echoes(r: &MetaReply, opaque: u32) -> bool {
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
