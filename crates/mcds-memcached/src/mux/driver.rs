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
        // (Empty: the last write's jobs were all delivered by `read`.)
        {
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
        self.send(None);
    }

    /// Write the jobs in flight in one write (see [`write`](Self::write)).
    /// `now`: a clock reading of a moment ago, if the caller has one.
    pub(super) fn send(&mut self, now: Option<Instant>) {
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
    pub(super) fn put_down(&mut self, fail_queue: bool) {
        let mut state = self.lane.state.lock();
        if self.in_flight.is_empty() {
            state.spare = std::mem::take(&mut self.in_flight);
        }
        let alive = self.conn.is_some() && !state.retire;
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

/// Read one job's replies into `replies`. `false`: the connection is no
/// longer usable (a transport failure, or replies out of step), and the
/// failure is the last entry.
pub(super) fn read_job(conn: &mut Conn, expect: Expect, replies: &mut Vec<Read>) -> bool {
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
