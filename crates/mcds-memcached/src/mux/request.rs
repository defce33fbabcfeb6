//! One request on a lane: what it expects back ([`Expect`]), the slot its
//! replies are delivered to ([`Slot`]), and the future an async caller
//! awaits ([`Reply`]).

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use parking_lot::{Condvar, Mutex};

use crate::reply::MetaReply;

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
        /// The batch holds multi-key `gets` lines, so it must be the first
        /// request of its write: a `gets` that fails midway (memcached out
        /// of response objects) makes memcached drop every reply it has
        /// not sent yet on the connection (`conn_release_items`), and the
        /// replies of other callers' commands written before it would be
        /// lost. The driver reads all of a write's replies before the next
        /// write, so first in a write, nothing of anyone else's is pending
        /// (the batch's own lines are checked by count:
        /// `pipeline::read_gets_replies`).
        leads: bool,
    },
    /// `stats`: a listing up to `END` ([`Delivery::stats`]).
    Stats,
}

impl Expect {
    /// Room for the replies: made at once, not by doubling as they come.
    pub(super) fn room(self) -> usize {
        match self {
            // (Bounded: the number comes from the caller, and a stream
            // that fails early needs none of it.)
            Expect::UntilMn { replies, .. } => replies.clamp(1, 4096),
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
pub(super) struct Job {
    pub(super) request: Request,
    /// Where its caller waits for the delivery; `None` for the request of
    /// the caller that found the lane idle and drives it: its delivery is
    /// kept in its [`Driver`] ([`Own::Here`]), so the uncontended request
    /// costs no allocation and no lock for it.
    pub(super) slot: Option<Arc<Slot>>,
    /// Its caller is a future (it never drives: the lane's helper thread
    /// does it for it).
    pub(super) is_async: bool,
}

impl Job {
    /// The job of a request whose caller waits for it on `slot` (an
    /// async caller through the slot's waker).
    pub(super) fn waiting(request: Request, slot: &Arc<Slot>, is_async: bool) -> Job {
        Job {
            request,
            slot: Some(Arc::clone(slot)),
            is_async,
        }
    }
}

/// Where a waiting caller learns what became of its request.
pub(crate) struct Slot {
    pub(super) state: Mutex<SlotState>,
    pub(super) ready: Condvar,
}

pub(super) enum SlotState {
    /// With the waker of an async caller that polled.
    Waiting(Option<Waker>),
    /// The lane was handed to this caller: it drives next.
    Drive,
    Done(Delivery),
    Taken,
}

impl Slot {
    pub(super) fn new() -> Arc<Slot> {
        Arc::new(Slot {
            state: Mutex::new(SlotState::Waiting(None)),
            ready: Condvar::new(),
        })
    }

    pub(super) fn set(&self, state: SlotState) {
        let before = std::mem::replace(&mut *self.state.lock(), state);
        self.ready.notify_one();
        if let SlotState::Waiting(Some(waker)) = before {
            waker.wake();
        }
    }

    pub(super) fn is_done(&self) -> bool {
        matches!(*self.state.lock(), SlotState::Done(_))
    }

    pub(super) fn take(&self) -> Option<Delivery> {
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
pub(super) enum Own {
    /// Its caller found the lane idle: the delivery is kept here (its job
    /// has no slot).
    Here(Option<Delivery>),
    /// Its caller was handed the lane (or it is the helper thread, with a
    /// slot nobody waits on): the delivery goes to the slot, as to any
    /// waiting caller's.
    Slot(Arc<Slot>),
}

impl Own {
    pub(super) fn take(&mut self) -> Option<Delivery> {
        match self {
            Own::Here(delivery) => delivery.take(),
            Own::Slot(slot) => slot.take(),
        }
    }

    pub(super) fn is_done(&self) -> bool {
        match self {
            Own::Here(delivery) => delivery.is_some(),
            Own::Slot(slot) => slot.is_done(),
        }
    }
}

/// Hand `delivery` to the caller of the job whose slot is `slot` (`None`:
/// the driver's own, kept in `own`).
pub(super) fn deliver(own: &mut Own, slot: Option<Arc<Slot>>, delivery: Delivery) {
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

/// The future of an async caller's request ([`Lane::submit_async`]).
pub(crate) struct Reply(pub(super) Arc<Slot>);

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
