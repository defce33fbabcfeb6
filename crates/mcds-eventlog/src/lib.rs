//! # mcds-eventlog
//!
//! An event log on memcached semantics (the event log of the design
//! sources): the events of the last `(chunks − 1) · chunk` seconds, written
//! by any number of processes, read by time range. Works on the embedded
//! [`MemoryStore`](mcds_core::MemoryStore) or real memcached.
//!
//! The whole algorithm is in this file (and the frame codec in `frame.rs`):
//!
//! * **Chunks.** Time is cut into chunks of `chunk` seconds aligned to Unix
//!   time and numbered from the epoch; chunk number `w` is stored under the
//!   key `<prefix>log:<name>:<w>`. A key is never reused.
//! * **Pieces.** A chunk has no size wall: its first item is
//!   `<prefix>log:<name>:<w>` and, when an append to it is refused for the
//!   item limit, its events go on in `<w>.1`, `<w>.2`, … A piece is made
//!   only when the one before refused a frame, and an append that the
//!   limit refuses lands nothing, so every event is in exactly one piece.
//! * **put** appends one self-delimiting, checksummed frame to the
//!   chunk's current piece with `append_or_add`: one round trip (on
//!   memcached 1.6.18 the first event of a chunk takes two: append, then
//!   add; a put that finds its piece full takes one more per piece). The key is
//!   created with TTL `(chunks + 1) · chunk`: it outlives every read that
//!   can ask for it, with a chunk to spare.
//!   A frame is the magic byte `0xE7`, the timestamp (Unix ms, 8 bytes
//!   little-endian), the payload length (4 bytes), a check of those 13
//!   bytes, the payload and a check of the payload (each check the low 32
//!   bits of XXH3-64): 21 bytes of overhead per event.
//! * **fetch(first, last)** reads the first two pieces of every chunk
//!   covering the range in one `get_multi` (the original article reads
//!   chunks one by one), and the next two of a chunk whose second exists
//!   in one more, decodes, keeps the events
//!   in `[first, last]` that belong to the chunk each key is read for and lie
//!   within capacity, and returns them in time order (events with the same
//!   timestamp in the order they were appended).
//! * **since(cursor)** supports the original article's polling loop: the events after a
//!   cursor, and the cursor to poll with next.
//! * **Newest first:** `fetch_rev(first, last)` is `fetch` reversed (one
//!   `get_multi`); `latest(n)` reads the newest two chunks, then, if they
//!   hold fewer than `n` events, the older ones (1 round trip, or 2).
//! * **count(first, last)** is the length of `fetch`, in one `get_multi`,
//!   copying no payload. It cannot avoid transferring them: memcached
//!   returns whole values and a chunk is one value (see
//!   [`EventLog::count`] for why a counter beside the frames would be
//!   wrong).
//! * **trim(before)** deletes the chunks that end at or before `before`
//!   in one pipelined batch of deletes; a chunk straddling `before` keeps
//!   all its events.
//! * **Async:** every method that reaches the store has an async twin
//!   (`put_async`, `fetch_async`, …): the same algorithm (see [`Access`]),
//!   awaiting the store instead of blocking the thread.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use mcds_core::{blocking_and_async, ManualClock, MemoryStore, Scope};
//! use mcds_eventlog::{Cursor, EventLog};
//!
//! let clock = ManualClock::new(1_800_000_000_000);
//! let store = Arc::new(MemoryStore::builder().clock(Arc::new(clock.clone())).build());
//! let scope = Scope::from(store).with_clock(Arc::new(clock.clone()));
//! let log = EventLog::new(&scope, "audit", Duration::from_secs(10), 7)?;
//! log.put(b"ann logged in")?;
//! clock.advance(Duration::from_secs(3));
//! log.put(b"bob logged in")?;
//! let (events, cursor) = log.since(&Cursor::start())?;
//! assert_eq!(events.len(), 2);
//! log.put(b"ann logged out")?;
//! let (new, _) = log.since(&cursor)?;
//! assert_eq!(new[0].payload, b"ann logged out");
//! # Ok::<(), mcds_core::Error>(())
//! ```
//!
//! ## Guarantees, and what breaks them
//!
//! * Every event put within the last `(chunks − 1) · chunk` seconds is
//!   returned exactly once by a fetch covering it: appends are atomic, frames
//!   are self-delimiting, and a chunk's key is never reused, so no event
//!   depends on *when* memcached expires an item. (A ring of `chunks` keys
//!   reused every cycle did: memcached's clock ticks are not aligned to Unix
//!   seconds, so a key created just after the server's tick outlived its
//!   boundary by up to a second, and the next cycle's events landed in the
//!   old item and vanished with it.)
//! * Frames are checksummed: a damaged or truncated frame (garbage written
//!   by another program, a torn value) is skipped and counted
//!   ([`EventLog::fetch_checked`]); the others are still returned.
//! * **Eviction, restart or flush** lose whole chunks of events.
//! * **Limits** (all of them: [`EventLog`'s docs](EventLog#limits)). One
//!   event's frame (payload + 21 bytes) must fit one item (1 MiB by
//!   default), else [`ValueTooLarge`](mcds_core::Error::ValueTooLarge)
//!   before anything is sent. A chunk spreads over up to 65,536 pieces:
//!   no rate a memcached pool can take is refused. Checked from 4 writer
//!   processes putting as fast as they can into one chunk of 128 KiB items
//!   (`mcds-stress`, `growing_structures`). A read moves the chunks (every
//!   piece) that cover its range: `since` reads from the chunk its cursor
//!   is in, so it moves about what it returns when the chunk is about the
//!   polling interval; longer chunks make it re-read up to a chunk of
//!   events it has seen.
//! * Writers' clocks decide which chunk an event lands in: skewed clocks put
//!   events out of order by the skew. A poller's cursor does not see events
//!   that arrive later with a timestamp before it.

mod frame;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::time::Duration;

use mcds_core::{
    Access, Error, Io, Item, Key, Op, Reply, Result, Scope, Ttl, UnixMs, blocking_and_async,
};
use parking_lot::Mutex;

pub use frame::Event;

/// A polling position: the timestamp of the last event seen and how many
/// events with exactly that timestamp were seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Unix milliseconds of the last event seen.
    pub at_ms: UnixMs,
    /// How many events at `at_ms` were seen.
    pub seen_at_ms: usize,
}

impl Cursor {
    /// Before everything still in the log.
    pub fn start() -> Cursor {
        Cursor::default()
    }

    /// After every event up to and including `at_ms`.
    pub fn after(at_ms: UnixMs) -> Cursor {
        Cursor {
            at_ms: at_ms.saturating_add(1),
            seen_at_ms: 0,
        }
    }
}

/// The chunks and the clamped time range of one read.
struct Plan {
    first: u64,
    last: u64,
    chunks: Vec<u64>,
}

/// A ring-buffer event log. See the [crate docs](crate).
///
/// # Limits
///
/// `L` is the item limit ([`Store::item_size_limit`](mcds_core::Store::item_size_limit),
/// 1 MiB by default, memcached's `-I`); 59 bytes is what memcached adds
/// to an item; a chunk's longest piece key is
/// `<prefix>log:<name>:<w>.65536` (`w`, the chunk's number, is Unix time
/// over the chunk length).
///
/// | limit | past it | written |
/// |---|---|---|
/// | name: `<prefix>log:<name>:18446744073709551615.65536` ≤ 250 bytes (a name of up to 219 bytes without a prefix) | [`Error::InvalidKey`] from [`EventLog::new`] | nothing |
/// | chunks: 2 to 10,000 | [`Error::InvalidArgument`] from `new` | nothing |
/// | chunk length: whole seconds, 1 to [`MAX_PERIOD_SECS`](mcds_core::MAX_PERIOD_SECS) (100 years) | [`Error::InvalidArgument`] from `new` | nothing |
/// | payload: its frame (payload + 21 bytes) + the longest piece key + 59 ≤ `L` (1,048,471 bytes for `log:audit:<w>` with 10 s chunks and 1 MiB items) | [`Error::ValueTooLarge`] before anything is sent | nothing |
/// | events per chunk: 65,536 pieces (items) of a chunk, each filled until a frame does not fit (one event per piece at worst; with 1 MiB items, 64 GiB of frames a chunk) | a put into a chunk whose last piece is full: [`Error::ValueTooLarge`]; the next chunk takes events again | nothing |
/// | put time ([`put_at`](EventLog::put_at)): from `now − capacity` (where reads start) to the end of the current chunk (by the scope's clock) | [`Error::InvalidArgument`] | nothing |
///
/// No rate is refused: writers append to a chunk's pieces without
/// reading. Reads take any range and clamp it to what is within capacity.
///
/// # What a restart or an eviction loses
///
/// A restart or an eviction loses whole chunks: their events are gone,
/// and puts after the loss start the chunk again. No read can tell a lost
/// chunk from a quiet one: [why a read cannot see it](mcds_core::Retention#what-a-read-cannot-see).
#[derive(Clone, Debug)]
pub struct EventLog {
    scope: Scope,
    name: String,
    chunks: u64,
    chunk_secs: u64,
    /// The piece this handle last appended to, and its chunk: where the
    /// next put of that chunk starts (pieces before it are full).
    piece: Arc<Mutex<(u64, u32)>>,
}

/// The most pieces (items) one chunk spreads over: 65,536 items of up to
/// 1 MiB, far past any memcached's memory.
const MAX_PIECES: u32 = 1 << 16;

impl EventLog {
    /// A log of `chunks` (2 to 10 000) chunks of `chunk` (whole seconds, at
    /// least 1): it keeps `(chunks − 1) · chunk` seconds of events. In
    /// `scope`: a store, or a [`Scope`] with a key prefix and a clock.
    pub fn new(
        scope: impl Into<Scope>,
        name: &str,
        chunk: Duration,
        chunks: usize,
    ) -> Result<EventLog> {
        let chunk_secs = mcds_core::whole_secs("the event log chunk", chunk)?;
        if !(2..=10_000).contains(&chunks) {
            return Err(Error::InvalidArgument(format!(
                "an event log needs 2 to 10000 chunks (one is always being reused); got {chunks}"
            )));
        }
        let log = EventLog {
            scope: scope.into(),
            name: name.to_string(),
            chunks: chunks as u64,
            chunk_secs,
            piece: Arc::new(Mutex::new((0, 0))),
        };
        log.key_for_piece(u64::MAX, MAX_PIECES)?; // the longest key fits
        Ok(log)
    }

    /// How far back the log reaches: `(chunks − 1) · chunk`.
    pub fn capacity(&self) -> Duration {
        Duration::from_secs(self.chunk_secs * (self.chunks - 1))
    }

    fn chunk_ms(&self) -> u64 {
        self.chunk_secs * 1000
    }

    /// The key of piece `p` of chunk `w`: `<w>` for the first (the key of
    /// a chunk before pieces existed), `<w>.<p>` after it.
    fn key_for_piece(&self, w: u64, p: u32) -> Result<Key> {
        if p == 0 {
            self.scope.key("log", &self.name, w)
        } else {
            self.scope.key("log", &self.name, format_args!("{w}.{p}"))
        }
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }

    /// Record `payload` now. One round trip. Returns the event as stored.
    #[blocking_and_async(pub)]
    async fn put_io(&self, io: Io, payload: &[u8]) -> Result<Event> {
        let at_ms = self.scope.clock().now_ms();
        self.put_at_io(io, at_ms, payload).await?;
        Ok(Event {
            at_ms,
            payload: payload.to_vec(),
        })
    }

    /// Record `payload` with timestamp `at_ms`, which must lie within the
    /// log's capacity and not after the current chunk.
    #[blocking_and_async(pub)]
    async fn put_at_io(&self, io: Io, at_ms: u64, payload: &[u8]) -> Result<()> {
        let now_ms = self.scope.clock().now_ms();
        let n = self.chunks;
        let (w_now, w) = (now_ms / self.chunk_ms(), at_ms / self.chunk_ms());
        // Reads start at `now − capacity`: an event before it (in the
        // oldest chunk) would be stored and never read back.
        let oldest = now_ms.saturating_sub(self.capacity().as_millis() as u64);
        if w > w_now || w + (n - 1) < w_now || at_ms < oldest {
            return Err(Error::InvalidArgument(format!(
                "event time {at_ms} ms is outside the log's window ({oldest} ms, {} s back from {now_ms} ms, to the end of the current chunk)",
                self.capacity().as_secs()
            )));
        }
        // Read for at most n chunks from its start: n + 1 leaves a chunk of
        // slack (and covers the server's clock ticking off Unix seconds).
        let ttl = (n + 1) * self.chunk_secs;
        let mut frame = Vec::with_capacity(frame::frame_len(payload.len()));
        frame::encode(at_ms, payload, &mut frame);
        let ttl = Ttl::from(Duration::from_secs(ttl));
        // A frame that no piece could hold is refused before anything is
        // sent.
        let longest = self.key_for_piece(w, MAX_PIECES)?;
        mcds_core::backend::check_item_size(
            &longest,
            frame.len(),
            self.scope.store().item_size_limit(),
        )?;
        let mut p = match *self.piece.lock() {
            (chunk, p) if chunk == w => p,
            _ => 0,
        };
        loop {
            let key = self.key_for_piece(w, p)?;
            match self.access(io).append_or_add(&key, &frame, ttl).await {
                Ok(()) => {
                    *self.piece.lock() = (w, p);
                    return Ok(());
                }
                // This piece is full (for this frame): the next one. The
                // item limit refuses an append whole, so nothing of it
                // landed here.
                Err(Error::ValueTooLarge { .. }) if p + 1 < MAX_PIECES => p += 1,
                Err(e) => return Err(e),
            }
        }
    }

    /// The chunks a read of `[first_ms, last_ms]` covers (oldest first, the
    /// readable ones only) and the range clamped to what is within
    /// capacity; `None` when nothing is.
    fn plan(&self, first_ms: u64, last_ms: u64) -> Option<Plan> {
        let now_ms = self.scope.clock().now_ms();
        let w_now = now_ms / self.chunk_ms();
        let oldest = now_ms.saturating_sub(self.capacity().as_millis() as u64);
        let first = first_ms.max(oldest);
        let last = last_ms.min((w_now + 1) * self.chunk_ms() - 1);
        if first > last {
            return None;
        }
        let chunks = (first / self.chunk_ms()..=last / self.chunk_ms())
            .filter(|&w| w + self.chunks > w_now)
            .collect();
        Some(Plan {
            first,
            last,
            chunks,
        })
    }

    /// Read `chunks` and call `visit(at_ms, payload)` for each intact
    /// frame that belongs to the chunk its key is read for and lies in
    /// `[first, last]`, chunk by chunk in `chunks`' order, piece by piece
    /// within a chunk, in log order within a piece; the damaged bytes
    /// skipped. The first two pieces of every chunk go in one `get_multi`
    /// (a missing key costs its few bytes); a chunk whose second piece
    /// exists has the next two read in one more batch, and so on: a piece
    /// exists only once the one before refused a frame. Whether there is a
    /// next piece is asked of the server, never guessed from a piece's
    /// size: a client configured with another item limit than the
    /// server's would guess wrong.
    async fn read(
        &self,
        io: Io,
        chunks: &[u64],
        first: u64,
        last: u64,
        mut visit: impl FnMut(u64, &[u8]),
    ) -> Result<usize> {
        // Per chunk: the pieces read so far, in order.
        let mut pieces: Vec<Vec<Item>> = vec![Vec::new(); chunks.len()];
        let mut open: Vec<usize> = (0..chunks.len()).collect();
        let mut next = 0u32;
        while !open.is_empty() && next < MAX_PIECES {
            let keys: Vec<Key> = open
                .iter()
                .flat_map(|&c| [(chunks[c], next), (chunks[c], next + 1)])
                .map(|(w, p)| self.key_for_piece(w, p))
                .collect::<Result<_>>()?;
            let mut items = self.access(io).get_multi(&keys).await?.into_iter();
            let mut still = Vec::new();
            for &c in &open {
                let (a, b) = (items.next().flatten(), items.next().flatten());
                if b.is_some() {
                    still.push(c);
                }
                pieces[c].extend(a.into_iter().chain(b));
            }
            open = still;
            next += 2;
        }
        let mut damaged = 0;
        for (&w, items) in chunks.iter().zip(pieces) {
            for item in items {
                damaged += frame::scan(&item.value, |at_ms, payload| {
                    // Only this chunk's events (a frame planted by another
                    // program could claim any time).
                    if at_ms / self.chunk_ms() == w && (first..=last).contains(&at_ms) {
                        visit(at_ms, payload);
                    }
                });
            }
        }
        Ok(damaged)
    }

    /// Read `chunks` and return their events in `[first, last]` in time
    /// order (same-ms events in append order), and the damaged bytes.
    async fn events(
        &self,
        io: Io,
        chunks: &[u64],
        first: u64,
        last: u64,
    ) -> Result<(Vec<Event>, usize)> {
        let mut events = Vec::new();
        let damaged = self
            .read(io, chunks, first, last, |at_ms, payload| {
                events.push(Event {
                    at_ms,
                    payload: payload.to_vec(),
                })
            })
            .await?;
        events.sort_by_key(|e| e.at_ms); // stable: same-ms events keep append order
        Ok((events, damaged))
    }

    /// The events with `first_ms ≤ at ≤ last_ms` that are within capacity,
    /// in time order. One `get_multi`.
    #[blocking_and_async(pub)]
    async fn fetch_io(&self, io: Io, first_ms: u64, last_ms: u64) -> Result<Vec<Event>> {
        Ok(self.fetch_checked_io(io, first_ms, last_ms).await?.0)
    }

    /// [`fetch`](Self::fetch) as a stream: the same events in the same
    /// order, read `page` chunks per batch, so memory holds one page of
    /// chunks rather than the whole range. The chunks are chosen when the
    /// iterator is made (by the log's clock then); a chunk that leaves
    /// capacity while the iterator runs reads as what is left of it.
    ///
    /// ```
    /// # let (_, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    /// use std::time::Duration;
    /// use mcds_eventlog::EventLog;
    ///
    /// let log = EventLog::new(&scope, "audit", Duration::from_secs(10), 7)?;
    /// for i in 0..30 {
    ///     log.put(format!("{i}").as_bytes())?;
    ///     clock.advance(Duration::from_secs(2));
    /// }
    /// let streamed: Vec<_> = log.fetch_iter(0, u64::MAX, 1).collect::<Result<_, _>>()?;
    /// assert_eq!(streamed, log.fetch(0, u64::MAX)?);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    pub fn fetch_iter(&self, first_ms: u64, last_ms: u64, page: usize) -> FetchIter<'_> {
        let plan = self.plan(first_ms, last_ms);
        FetchIter {
            log: self,
            page: page.max(1),
            first: plan.as_ref().map_or(0, |p| p.first),
            last: plan.as_ref().map_or(0, |p| p.last),
            chunks: plan.map(|p| p.chunks).unwrap_or_default().into(),
            ready: std::collections::VecDeque::new(),
        }
    }

    /// [`fetch`](Self::fetch), also returning how many bytes of the chunks
    /// read were damaged (not intact frames) and skipped.
    ///
    /// [`fetch_checked`](EventLog::fetch_checked) without blocking the
    /// thread.
    #[blocking_and_async(pub)]
    async fn fetch_checked_io(
        &self,
        io: Io,
        first_ms: u64,
        last_ms: u64,
    ) -> Result<(Vec<Event>, usize)> {
        match self.plan(first_ms, last_ms) {
            None => Ok((Vec::new(), 0)),
            Some(plan) => self.events(io, &plan.chunks, plan.first, plan.last).await,
        }
    }

    /// [`fetch`](Self::fetch) newest first: the same events in reverse
    /// (same-ms events last appended first). One `get_multi`.
    ///
    /// ```
    /// # let (_, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    /// use std::time::Duration;
    /// use mcds_eventlog::EventLog;
    ///
    /// let log = EventLog::new(&scope, "audit", Duration::from_secs(10), 7)?;
    /// for what in ["a", "b", "c"] {
    ///     log.put(what.as_bytes())?;
    ///     clock.advance(Duration::from_secs(4));
    /// }
    /// let newest_first: Vec<_> = log.fetch_rev(0, u64::MAX)?.into_iter().map(|e| e.payload).collect();
    /// assert_eq!(newest_first, [b"c", b"b", b"a"]);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    #[blocking_and_async(pub)]
    async fn fetch_rev_io(&self, io: Io, first_ms: u64, last_ms: u64) -> Result<Vec<Event>> {
        let mut events = self.fetch_io(io, first_ms, last_ms).await?;
        events.reverse();
        Ok(events)
    }

    /// The `n` newest events within capacity, newest first (the first `n`
    /// of [`fetch_rev`](Self::fetch_rev) over the whole log). It reads the
    /// newest two chunks first (one round trip, enough when they hold `n`
    /// events: a busy log transfers only those), then, if it needs more, all
    /// the older chunks within capacity in one more `get_multi`: 2 round
    /// trips at most, never more bytes than [`fetch`](Self::fetch).
    /// ```
    /// # let (_, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    /// use std::time::Duration;
    /// use mcds_eventlog::EventLog;
    ///
    /// let log = EventLog::new(&scope, "audit", Duration::from_secs(10), 7)?;
    /// for i in 0..20 {
    ///     log.put(format!("{i}").as_bytes())?;
    ///     clock.advance(Duration::from_secs(2));
    /// }
    /// let latest: Vec<_> = log.latest(3)?.into_iter().map(|e| e.payload).collect();
    /// assert_eq!(latest, [b"19", b"18", b"17"]);
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    #[blocking_and_async(pub)]
    async fn latest_io(&self, io: Io, n: usize) -> Result<Vec<Event>> {
        let Some(plan) = self.plan(0, u64::MAX).filter(|_| n > 0) else {
            return Ok(Vec::new());
        };
        let (older, newest) = plan.chunks.split_at(plan.chunks.len().saturating_sub(2));
        // Sized by what a read can hold, not by n (usize::MAX is a valid n).
        let mut newest_first = Vec::with_capacity(n.min(1024));
        for batch in [newest, older] {
            if newest_first.len() >= n || batch.is_empty() {
                break;
            }
            // Chunks partition time: every event of `newest` is newer than
            // every event of `older`.
            let (mut events, _) = self.events(io, batch, plan.first, plan.last).await?;
            events.reverse();
            newest_first.extend(events);
        }
        newest_first.truncate(n);
        Ok(newest_first)
    }

    /// How many events with `first_ms ≤ at ≤ last_ms` are within capacity:
    /// the length of [`fetch`](Self::fetch), in one `get_multi`, without
    /// copying a payload.
    ///
    /// It still transfers the payloads: memcached returns whole values (no
    /// byte ranges), and a chunk's events are one value, frames back to
    /// back. A count kept beside the frames (a counter per chunk, one more
    /// command per put) would be cheaper to read but not correct: it is
    /// evicted apart from the frames, counts a put whose append failed
    /// after an ambiguous reply differently, and cannot tell planted or
    /// damaged bytes. So `count` reads the chunks covering the range and
    /// walks their frames' headers and checks, allocating nothing per
    /// event.
    #[blocking_and_async(pub)]
    async fn count_io(&self, io: Io, first_ms: u64, last_ms: u64) -> Result<u64> {
        let Some(plan) = self.plan(first_ms, last_ms) else {
            return Ok(0);
        };
        let mut count = 0;
        self.read(io, &plan.chunks, plan.first, plan.last, |_, _| count += 1)
            .await?;
        Ok(count)
    }

    /// Delete every chunk that ends at or before `before_ms`: whole chunks
    /// only. A chunk straddling `before_ms` keeps all its events, those
    /// before `before_ms` too (one item holds a chunk's events; memcached
    /// cannot cut part of a value, and a rewrite would race the appends),
    /// so reads may still return events up to a chunk older than
    /// `before_ms`. Returns how many items (pieces of chunks) it deleted.
    /// One pipelined batch of deletes (one round trip per server) over the
    /// first two pieces of the chunks that can still be stored, and one
    /// more per two further pieces of a busy chunk; none at all when no
    /// chunk ends by `before_ms`.
    ///
    /// A `before_ms` past the current chunk's end deletes the current
    /// chunk too; events put after that start it afresh.
    ///
    /// ```
    /// # let (_, clock, scope) = mcds_testkit::embedded_at(1_800_000_000_000);
    /// use std::time::Duration;
    /// use mcds_core::Clock;
    /// use mcds_eventlog::EventLog;
    ///
    /// let log = EventLog::new(&scope, "audit", Duration::from_secs(10), 7)?;
    /// let start = clock.now_ms(); // a chunk starts here
    /// for i in 0..6 {
    ///     log.put(format!("{i}").as_bytes())?; // at 0, 5, 10, ... 25 s
    ///     clock.advance(Duration::from_secs(5));
    /// }
    /// assert_eq!(log.trim(start + 15_000)?, 1); // the chunk [0, 10 s); [10 s, 20 s) straddles
    /// assert_eq!(log.count(0, u64::MAX)?, 4);
    /// assert_eq!(log.fetch(0, u64::MAX)?[0].payload, b"2"); // at 10 s, before 15 s, kept
    /// # Ok::<(), mcds_core::Error>(())
    /// ```
    #[blocking_and_async(pub)]
    async fn trim_io(&self, io: Io, before_ms: u64) -> Result<usize> {
        let w_now = self.scope.clock().now_ms() / self.chunk_ms();
        let Some(last) = (before_ms / self.chunk_ms()).checked_sub(1) else {
            return Ok(0);
        };
        // A chunk's item lives (chunks + 1) chunks from its last put, up to
        // a second more on the server's clock: older ones are gone.
        let first = w_now.saturating_sub(self.chunks + 2);
        let last = last.min(w_now);
        if first > last {
            return Ok(0);
        }
        // Two pieces of every chunk a batch; chunks whose last piece was
        // there go on with the next two.
        let mut open: Vec<u64> = (first..=last).collect();
        let mut next = 0u32;
        let mut deleted = 0;
        while !open.is_empty() && next < MAX_PIECES {
            let keys: Vec<Key> = open
                .iter()
                .flat_map(|&w| [(w, next), (w, next + 1)])
                .map(|(w, p)| self.key_for_piece(w, p))
                .collect::<Result<_>>()?;
            let ops: Vec<Op<'_>> = keys.iter().map(Op::Delete).collect();
            let mut last_there = Vec::with_capacity(open.len());
            for (i, reply) in self.access(io).pipeline(&ops).await.into_iter().enumerate() {
                let there = reply.and_then(Reply::applied)?;
                deleted += usize::from(there);
                if i % 2 == 1 {
                    last_there.push(there);
                }
            }
            open = open
                .into_iter()
                .zip(last_there)
                .filter_map(|(w, there)| there.then_some(w))
                .collect();
            next += 2;
        }
        Ok(deleted)
    }

    /// The events after `cursor` (up to now), and the cursor to use next.
    /// One `get_multi`.
    #[blocking_and_async(pub)]
    async fn since_io(&self, io: Io, cursor: &Cursor) -> Result<(Vec<Event>, Cursor)> {
        let events = self.fetch_io(io, cursor.at_ms, u64::MAX).await?;
        let mut skip = cursor.seen_at_ms;
        let new: Vec<Event> = events
            .into_iter()
            .filter(|e| {
                if e.at_ms == cursor.at_ms && skip > 0 {
                    skip -= 1;
                    return false;
                }
                true
            })
            .collect();
        let next = match new.last() {
            None => *cursor,
            Some(last) => {
                let at_last = new.iter().filter(|e| e.at_ms == last.at_ms).count();
                let carried = if last.at_ms == cursor.at_ms {
                    cursor.seen_at_ms
                } else {
                    0
                };
                Cursor {
                    at_ms: last.at_ms,
                    seen_at_ms: carried + at_last,
                }
            }
        };
        Ok((new, next))
    }
}

/// The README's examples, run as doctests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// The iterator of [`EventLog::fetch_iter`]: a range's events in time
/// order, a page of chunks at a time.
#[derive(Debug)]
pub struct FetchIter<'l> {
    log: &'l EventLog,
    page: usize,
    first: u64,
    last: u64,
    /// The chunks not read yet, oldest first.
    chunks: std::collections::VecDeque<u64>,
    ready: std::collections::VecDeque<Event>,
}

impl FetchIter<'_> {
    /// The next page's chunks, oldest first.
    fn take_page(&mut self) -> Vec<u64> {
        let n = self.page.min(self.chunks.len());
        self.chunks.drain(..n).collect()
    }

    /// The next event without blocking the thread: `None` at the end.
    pub async fn next_async(&mut self) -> Option<Result<Event>> {
        self.next_io(Io::Async).await
    }

    /// The next event, reading the next page of chunks in `io` mode when
    /// the last one is used up.
    async fn next_io(&mut self, io: Io) -> Option<Result<Event>> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(Ok(event));
            }
            if self.chunks.is_empty() {
                return None;
            }
            let page = self.take_page();
            match self.log.events(io, &page, self.first, self.last).await {
                // Chunks partition time: a page's events all follow the
                // previous page's.
                Ok((events, _)) => self.ready.extend(events),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for FetchIter<'_> {
    type Item = Result<Event>;

    fn next(&mut self) -> Option<Self::Item> {
        mcds_core::block_on(self.next_io(Io::Blocking))
    }
}
