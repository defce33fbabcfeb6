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
//!   time and numbered from the epoch (chunk `w` starts at `w · chunk`). A
//!   chunk's keys are never reused.
//! * **Slices.** A chunk is cut into slices of 250 ms (at most 1,024 a
//!   chunk: a 1024th of the chunk when that is longer, 3.5 s for an hour),
//!   and slice `s` of chunk `w` is a run of items, its **pieces**:
//!   `<prefix>log:<name>:<w>.<s>.0`, `.1`, … Slices keep items small where
//!   memcached's `append` is cheap (it copies the whole item, so 4 writers
//!   appending to one 1 MiB item managed 18k events/s; to slices of 250 ms,
//!   47k), and let [`since`](EventLog::since) read only the slices after
//!   its cursor.
//! * **Pieces.** A piece is made only when the one before refused a frame
//!   for the item limit, and an append that the limit refuses lands
//!   nothing, so every event is in exactly one piece. Before going on to the
//!   next piece a writer **seals** the full one: it appends filler frames
//!   that no read returns until not even the smallest frame fits (about
//!   `log2` of the refused frame's size in round trips, once per filled
//!   item), then creates the next piece empty and checks that the full one
//!   is still sealed (a restart or a trim in between cuts the run: the
//!   writer takes the empty piece back and starts the slice again at piece
//!   0). So nothing lands in a piece once the next one has events, and a
//!   run only ever grows at its end: the order a read sees is the order of
//!   the appends, which is what [`since`](EventLog::since)'s cursor counts
//!   on.
//! * **put** appends one self-delimiting, checksummed frame to its slice's
//!   current piece: one round trip (`add` for the first event of a slice or
//!   for a handle new to it, `append` after; two when the `add` finds the
//!   piece there, and more, as above, when a piece is full). A piece is
//!   created with TTL `(chunks + 1) · chunk`: it outlives every read that
//!   can ask for it, with a chunk to spare.
//!   A frame is the magic byte `0xE7`, the timestamp (Unix ms, 8 bytes
//!   little-endian), the payload length (4 bytes), a check of those 13
//!   bytes, the payload and a check of the payload (each check the low 32
//!   bits of XXH3-64): 21 bytes of overhead per event.
//! * **fetch(first, last)** asks for the first two pieces of every slice
//!   covering the range in one pipelined `get_multi` (the original article
//!   reads chunks one by one; a slice with no events costs a missing key of
//!   a few bytes, and a request is cut at the request budget, 208 KiB on a
//!   default Linux: about 7,000 keys), and
//!   for the next 4, 8, … pieces of a slice whose last piece asked for was
//!   there, in one more each; reads the pieces of a slice of several again,
//!   but for its last, in one more (a read is not a snapshot: a piece read
//!   before the next one was seen may have been read before its last
//!   appends; once the next one is seen it is sealed); decodes; keeps the
//!   events in `[first, last]`
//!   that belong to the slice each key is read for and lie within capacity;
//!   and returns them in time order (events with the same timestamp in the
//!   order they were appended). A range of a minute is one round trip.
//! * **The layout before slices:** chunks that an older mcds wrote whole
//!   (`<w>`, `<w>.1`, …) are read beside the slices (one more key a chunk)
//!   and trimmed with them, so a log written before an upgrade still reads.
//! * **since(cursor)** supports the original article's polling loop: the
//!   events after a cursor, and the cursor to poll with next. It reads the
//!   slices from the cursor's to a second past now: about what it returns
//!   (the cursor's slice again, at most 250 ms of events already seen),
//!   where a whole-chunk layout re-read the chunk every poll.
//! * **Newest first:** `fetch_rev(first, last)` is `fetch` reversed;
//!   `latest(n)` reads the newest two chunks, then, if they hold fewer
//!   than `n` events, the older ones.
//! * **count(first, last)** is the length of `fetch`, read as `fetch`
//!   reads, copying no payload. It cannot avoid transferring them: memcached
//!   returns whole values and a piece is one value (see
//!   [`EventLog::count`] for why a counter beside the frames would be
//!   wrong).
//! * **trim(before)** deletes the chunks that end at or before `before`
//!   (every piece of every slice, asked for as `fetch` asks) in pipelined
//!   batches of deletes; a chunk straddling `before` keeps all its events.
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
//!   are self-delimiting, and a chunk's keys are never reused, so no event
//!   depends on *when* memcached expires an item. (A ring of `chunks` keys
//!   reused every cycle did: memcached's clock ticks are not aligned to Unix
//!   seconds, so a key created just after the server's tick outlived its
//!   boundary by up to a second, and the next cycle's events landed in the
//!   old item and vanished with it.)
//! * Frames are checksummed: a damaged or truncated frame (garbage written
//!   by another program, a torn value) is skipped and counted
//!   ([`EventLog::fetch_checked`]); the others are still returned.
//! * **Eviction, restart or flush** lose events: a restart or a flush
//!   every piece; an eviction the pieces it takes *and the rest of their
//!   slice*, since a read stops at a slice's first missing piece, and
//!   memcached evicts the least recently used items first, a slice's
//!   first pieces before its last. A writer whose piece is gone starts its
//!   slice again at piece 0, so events put after the loss are read. What
//!   a writer cannot see: on a pool, an earlier piece of the slice lost
//!   with its server while the writer appends to a later piece on another
//!   server, which is still there. The events it puts there until the
//!   slice ends (250 ms, or a 1024th of the chunk) are lost with the
//!   earlier piece: no read gets past the gap. The next slice starts at
//!   piece 0. (Checking every earlier piece on every put would cost a
//!   round trip per put.)
//! * **Limits** (all of them: [`EventLog`'s docs](EventLog#limits)). One
//!   event's frame (payload + 21 bytes) must fit one item (1 MiB by
//!   default), else [`ValueTooLarge`](mcds_core::Error::ValueTooLarge)
//!   before anything is sent. A slice spreads over up to 65,536 pieces:
//!   no rate a memcached pool can take is refused. Checked from 4 writer
//!   processes putting as fast as they can into slices of 128 KiB items
//!   (`mcds-stress`, `growing_structures`). A read moves the slices (every
//!   piece) that cover its range; `since` moves about what it returns.
//! * Writers' clocks decide which slice an event lands in: skewed clocks put
//!   events out of order by the skew. A poller's cursor does not see events
//!   that arrive later with a timestamp before it (a writer whose clock is
//!   behind, or a put whose reply took longer than the polling interval):
//!   the log keeps no arrival order across slices, only time. Events at the
//!   cursor's own millisecond are counted in append order, which sealing
//!   keeps stable, so they are never skipped or returned twice.

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
/// to an item; a slice's longest piece key is
/// `<prefix>log:<name>:<w>.<s>.65535` (`w`, the chunk's number, is Unix
/// time over the chunk length; `s`, the slice, is below 1,024).
///
/// | limit | past it | written |
/// |---|---|---|
/// | name: `<prefix>log:<name>:18446744073709551615.1023.65535` ≤ 250 bytes (a name of up to 214 bytes without a prefix; 219 before slices) | [`Error::InvalidKey`] from [`EventLog::new`] | nothing |
/// | chunks: 2 to 10,000 | [`Error::InvalidArgument`] from `new` | nothing |
/// | chunk length: whole seconds, 1 to [`MAX_PERIOD_SECS`](mcds_core::MAX_PERIOD_SECS) (100 years) | [`Error::InvalidArgument`] from `new` | nothing |
/// | payload: its frame (payload + 21 bytes) + its slice's longest piece key + 59 ≤ `L` (1,048,468 bytes for `log:audit` with 10 s chunks and 1 MiB items) | [`Error::ValueTooLarge`] before anything is sent | nothing |
/// | events per slice: 65,536 pieces (items) of a slice, each filled until a frame does not fit (one event per piece at worst; with 1 MiB items, 64 GiB of frames a slice) | a put into a slice whose last piece is full: [`Error::ValueTooLarge`]; the next slice takes events again | nothing |
/// | put time ([`put_at`](EventLog::put_at)): from `now − capacity` (where reads start) to the end of the current chunk (by the scope's clock) | [`Error::InvalidArgument`] | nothing |
///
/// Set the store's item limit to the server's `-I`. memcached answers an
/// append past its `-I` as it answers one it has no memory for (`-M`), so
/// a piece counts as full only when the configured limit explains the
/// refusal; any other refusal is [`Error::OutOfMemory`], and writes
/// nothing. A server whose `-I` is below the configured limit therefore
/// refuses puts with `OutOfMemory` once a piece reaches its `-I`, until
/// the slice ends, and a frame over its `-I` with `OutOfMemory` (or
/// [`Error::ValueTooLarge`] from a piece just created).
///
/// No rate is refused: writers append to a slice's pieces without
/// reading. Reads take any range and clamp it to what is within capacity.
/// The rate one log takes is memcached's rate of appends to one item that
/// grows to a slice's events: 4 writer processes put 47k events/s into
/// slices of 250 ms (chunks of up to 4 minutes), and 21k into slices of
/// 3.5 s (hour chunks), on one memcached with 1 MiB items (release build,
/// 2 cores shared by writers and server; `scripts/bench-eventlog-writers.sh`).
/// A busy log wants chunks of a few minutes.
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
    /// The piece this handle last appended to, and its run: where the
    /// next put into that run starts (pieces before it are sealed).
    piece: Arc<Mutex<Option<(Run, u32)>>>,
}

/// The most pieces (items) one run spreads over: 65,536 items of up to
/// 1 MiB, far past any memcached's memory.
const MAX_PIECES: u32 = 1 << 16;

/// The most slices a chunk is cut into.
const MAX_SLICES: u64 = 1024;

/// The shortest slice, in milliseconds.
const MIN_SLICE_MS: u64 = 250;

/// Whether an append's error says the piece `key` is full: `Ok(())` for a
/// [`Error::ValueTooLarge`] that the item limit the store was configured
/// with explains (the piece's size plus the frame's passes it), the error
/// otherwise.
///
/// Why: memcached answers an append it has no memory for (`-M`) as it
/// answers one past its item limit, `NOT_STORED`. When the item exists and
/// the append fits the configured limit, the store's probe reports the
/// refusal as `ValueTooLarge` of size 0: the server would not grow the
/// item. A piece taken for full on such a refusal would be "sealed" by
/// fillers that failed for the same reason, and take appends again once
/// memory is freed, after the next piece has events: `since`, which counts
/// the events at its cursor's millisecond in append order, then returned an
/// event twice and skipped one (an adversarial review, `-m 8 -M`). Such a
/// refusal is [`Error::OutOfMemory`]: the put is not written, and the piece
/// stays open. (A server whose `-I` is below the store's configured
/// `item_size_limit` refuses the same way when a piece reaches its `-I`:
/// configure the store's limit to the server's.)
fn full_or(e: Error, key: &Key) -> std::result::Result<(), Error> {
    match e {
        Error::ValueTooLarge { size, .. } if size > 0 => Ok(()),
        Error::ValueTooLarge { .. } => Err(Error::OutOfMemory { key: key.display() }),
        e => Err(e),
    }
}

/// The time of a sealing frame: no chunk's, so no read returns it.
const SEAL_AT_MS: u64 = u64::MAX;

/// How far past its own clock [`EventLog::since`] reads: events stamped
/// further ahead (by a writer whose clock runs ahead, or by `put_at`) are
/// returned by a later call, once the clock has caught up.
const SINCE_AHEAD_MS: u64 = 1_000;

/// The most pieces of one run a read asks for in one batch.
const MAX_PROBE: u32 = 64;

/// What [`EventLog::open_piece`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opened {
    /// This call created the piece, empty; the one before is sealed.
    Created,
    /// Another writer created it (and checked the one before).
    Existed,
    /// The piece before is not sealed any more: the run was cut.
    Cut,
}

/// What one try at a piece found.
enum Piece {
    /// The frame was appended (or the piece created with it).
    Landed,
    /// The piece is not there (and was not to be created).
    Gone,
    /// The piece refused the frame: it is full, for this frame.
    Full,
}

/// `e`, from sealing the piece `key` after it refused an event's frame,
/// as the error of a put that wrote nothing: the event was refused
/// before, so whatever became of the filler, the put was not applied.
fn not_written(e: Error, key: &Key) -> Error {
    match e {
        Error::Ambiguous { server, reason, .. } => Error::Io {
            server,
            source: std::io::Error::other(format!(
                "sealing the full piece {} ({reason}); the event was refused before, so it was not written",
                key.display()
            )),
        },
        e => e,
    }
}

/// A run of pieces: the items that hold one stretch of time, filled one
/// after another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// A whole chunk `w`, as mcds wrote chunks before slices: `<w>`,
    /// `<w>.1`, `<w>.2`, … Read (and trimmed), never written.
    Whole(u64),
    /// Slice `s` of chunk `w`: `<w>.<s>.0`, `<w>.<s>.1`, …
    Slice(u64, u64),
}

/// Which pieces of which runs a read (or a trim) asks for next. Pieces of
/// a run are filled in order, so a run ends at its first missing piece:
/// the first batch asks for piece 0 of every run, the next for the next 2
/// pieces of every run whose last piece asked for was there, then 4, 8, …
/// (at most [`MAX_PROBE`]): a run of `k` pieces takes about `log2 k`
/// batches, and a missing key costs a few bytes.
struct Probe {
    open: Vec<usize>,
    next: u32,
    width: u32,
}

impl Probe {
    fn new(runs: usize) -> Probe {
        Probe {
            open: (0..runs).collect(),
            next: 0,
            width: 2,
        }
    }

    /// The next batch, as (run index, piece) in run order and piece order
    /// within a run; empty when every run has ended.
    fn batch(&self) -> Vec<(usize, u32)> {
        let end = self.next.saturating_add(self.width).min(MAX_PIECES);
        self.open
            .iter()
            .flat_map(|&r| (self.next..end).map(move |p| (r, p)))
            .collect()
    }

    /// Take the answers to [`batch`](Probe::batch) (whether each piece was
    /// there, in batch order): runs whose last piece was there go on.
    fn advance(&mut self, there: &[bool]) {
        let end = self.next.saturating_add(self.width).min(MAX_PIECES);
        let per_run = (end - self.next) as usize;
        if per_run == 0 {
            self.open.clear();
            return;
        }
        self.open = self
            .open
            .iter()
            .zip(there.chunks(per_run))
            .filter(|(_, pieces)| pieces.last() == Some(&true))
            .map(|(&r, _)| r)
            .collect();
        self.next = end;
        if self.next >= MAX_PIECES {
            self.open.clear();
        }
        self.width = (self.width * 2).min(MAX_PROBE);
    }
}

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
            piece: Arc::new(Mutex::new(None)),
        };
        // The longest key fits.
        log.piece_key(Run::Slice(u64::MAX, MAX_SLICES - 1), MAX_PIECES - 1)?;
        Ok(log)
    }

    /// How far back the log reaches: `(chunks − 1) · chunk`.
    pub fn capacity(&self) -> Duration {
        Duration::from_secs(self.chunk_secs * (self.chunks - 1))
    }

    fn chunk_ms(&self) -> u64 {
        self.chunk_secs * 1000
    }

    /// How long a slice is: a chunk is cut into slices of at least
    /// [`MIN_SLICE_MS`], at most [`MAX_SLICES`] of them (the last one may
    /// be shorter).
    fn slice_ms(&self) -> u64 {
        self.chunk_ms().div_ceil(MAX_SLICES).max(MIN_SLICE_MS)
    }

    /// How many slices a chunk has.
    fn slices(&self) -> u64 {
        self.chunk_ms().div_ceil(self.slice_ms())
    }

    /// The run an event at `at_ms` is written to.
    fn run_of(&self, at_ms: u64) -> Run {
        Run::Slice(
            at_ms / self.chunk_ms(),
            at_ms % self.chunk_ms() / self.slice_ms(),
        )
    }

    /// Whether a frame at `at_ms` belongs in `run`: a frame planted by
    /// another program (or a sealing frame) could claim any time.
    fn belongs(&self, run: Run, at_ms: u64) -> bool {
        match run {
            Run::Whole(w) => at_ms / self.chunk_ms() == w,
            Run::Slice(..) => self.run_of(at_ms) == run,
        }
    }

    /// The key of piece `p` of `run`.
    fn piece_key(&self, run: Run, p: u32) -> Result<Key> {
        match run {
            Run::Whole(w) if p == 0 => self.scope.key("log", &self.name, w),
            Run::Whole(w) => self.scope.key("log", &self.name, format_args!("{w}.{p}")),
            Run::Slice(w, s) => self
                .scope
                .key("log", &self.name, format_args!("{w}.{s}.{p}")),
        }
    }

    /// The keys of `pieces`, given as (index into `runs`, piece number).
    fn keys_of(&self, runs: &[Run], pieces: &[(usize, u32)]) -> Result<Vec<Key>> {
        pieces
            .iter()
            .map(|&(r, p)| self.piece_key(runs[r], p))
            .collect()
    }

    /// The runs that hold chunk `w`'s events in `[first, last]`, in read
    /// order: the whole-chunk run of the older layout, then the slices.
    fn runs_of(&self, w: u64, first: u64, last: u64) -> impl Iterator<Item = Run> + '_ {
        let start = w * self.chunk_ms();
        let end = start + (self.chunk_ms() - 1);
        let lo = if first > start {
            first % self.chunk_ms() / self.slice_ms()
        } else {
            0
        };
        let hi = if last < end {
            last % self.chunk_ms() / self.slice_ms()
        } else {
            self.slices() - 1
        };
        std::iter::once(Run::Whole(w)).chain((lo..=hi).map(move |s| Run::Slice(w, s)))
    }

    fn access(&self, io: Io) -> Access<'_> {
        Access::new(&**self.scope.store(), io)
    }

    /// Record `payload` now. One round trip (see the [crate docs](crate)
    /// for when it takes more). Returns the event as stored.
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
        let run = self.run_of(at_ms);
        let longest = self.piece_key(run, MAX_PIECES - 1)?;
        mcds_core::backend::check_item_size(
            &longest,
            frame.len(),
            self.scope.store().item_size_limit(),
        )?;
        // Where this handle wrote last in this run (append first: the
        // piece is there); else piece 0 of a run new to it (add first: on
        // a quiet log it is the run's first event).
        let (mut p, mut known) = match *self.piece.lock() {
            Some((r, p)) if r == run => (p, true),
            _ => (0, false),
        };
        // Times the run was found gone under this put (a trim, a restart,
        // an eviction) and started again at piece 0.
        let mut restarts = 0;
        let cut = |key: &Key, restarts: u32| {
            (restarts > 3).then(|| Error::Conflict {
                key: key.display(),
                attempts: restarts,
            })
        };
        loop {
            let key = self.piece_key(run, p)?;
            // A piece this handle wrote is only appended to: if it is gone,
            // writing it alone would leave a gap (a read stops at the first
            // missing piece, so events after it would never be read).
            // Piece 0 of a run new to the handle is added first (on a
            // quiet log it is the run's first event); a later piece may be
            // created, the one before it being sealed.
            let opened = if !known && p > 0 {
                self.open_piece(io, run, p, ttl).await?
            } else {
                Opened::Existed
            };
            // Whether this try created the piece (empty) itself.
            let created = opened == Opened::Created;
            let outcome = if opened == Opened::Cut {
                // The piece before is not sealed any more: the run was cut
                // (a restart, a trim) since it was; start it again.
                Piece::Gone
            } else {
                self.try_piece(io, &key, &frame, ttl, !known && p == 0, !known && p == 0)
                    .await?
            };
            match outcome {
                Piece::Landed => {
                    *self.piece.lock() = Some((run, p));
                    return Ok(());
                }
                // Gone (or cut, above): start the run again at piece 0.
                Piece::Gone => {
                    restarts += 1;
                    if let Some(e) = cut(&key, restarts) {
                        return Err(e);
                    }
                    (p, known) = (0, false);
                }
                // This piece is full (for this frame): the item limit
                // refuses an append whole, so nothing of it landed. Seal
                // the piece, then go on in the next. A frame that a piece
                // just opened (empty) refuses never fits any (a server
                // whose `-I` is below the configured limit): it is
                // `ValueTooLarge`, and nothing is filled on its account.
                Piece::Full => {
                    if created || p + 1 >= MAX_PIECES {
                        return Err(Error::ValueTooLarge {
                            key: key.display(),
                            size: 0,
                            limit: self.scope.store().item_size_limit(),
                        });
                    }
                    match self.seal(io, &key, frame.len()).await {
                        Ok(true) => (p, known) = (p + 1, false),
                        // Gone meanwhile: start the run again, as above.
                        Ok(false) => {
                            restarts += 1;
                            if let Some(e) = cut(&key, restarts) {
                                return Err(e);
                            }
                            (p, known) = (0, false);
                        }
                        // The event itself was refused: not written,
                        // whatever became of the filler.
                        Err(e) => return Err(not_written(e, &key)),
                    }
                }
            }
        }
    }

    /// Make piece `p` (at least 1) of `run` ready for appends: created by
    /// this call (empty) or by another writer, the piece before it sealed;
    /// or [`Opened::Cut`], the run cut under the writer.
    ///
    /// Why: a writer seals piece `p − 1`, then creates `p`. A restart or a
    /// trim in between would leave `p` alone (reads stop at the missing
    /// piece before it, and every later put of the writer, whose handle
    /// remembers `p`, would be acknowledged and never read), or in front of
    /// a new, open piece `p − 1` that another writer started again (whose
    /// events would land before ones a poller has seen). So the piece is
    /// created empty, then the piece before is checked to be still sealed
    /// (the smallest frame refused); if it is not, the empty piece is
    /// taken back (by CAS: a writer may have appended meanwhile) and the
    /// caller starts the run again at piece 0. Two round trips more per
    /// piece created, once per full item.
    async fn open_piece(&self, io: Io, run: Run, p: u32, ttl: Ttl) -> Result<Opened> {
        let access = self.access(io);
        let key = self.piece_key(run, p)?;
        if !access.add(&key, b"", ttl).await?.is_stored() {
            // Another writer created it, and checked the piece before.
            return Ok(Opened::Existed);
        }
        let before = self.piece_key(run, p - 1)?;
        let mut smallest = Vec::new();
        frame::encode(SEAL_AT_MS, b"", &mut smallest);
        match access
            .append(&before, &smallest)
            .await
            .map_err(|e| full_or(e, &before))
        {
            Err(Ok(())) => Ok(Opened::Created),
            Err(Err(e)) => Err(e),
            Ok(_) => {
                if let Some(item) = access.get(&key).await?
                    && item.value.is_empty()
                {
                    access.delete_cas(&key, item.cas).await?;
                }
                Ok(Opened::Cut)
            }
        }
    }

    /// One try at appending `frame` to the piece `key`: append, and if
    /// `create`, add the piece when it is missing (`add_first`: try the
    /// add before the append). The append and add race other writers: a
    /// lost race is tried again (64 rounds, then [`Error::Conflict`]).
    async fn try_piece(
        &self,
        io: Io,
        key: &Key,
        frame: &[u8],
        ttl: Ttl,
        create: bool,
        add_first: bool,
    ) -> Result<Piece> {
        let access = self.access(io);
        for round in 0..64 {
            if create && (add_first || round > 0) {
                // A frame refused by an empty item is refused for good:
                // its ValueTooLarge is returned as it is.
                if access.add(key, frame, ttl).await?.is_stored() {
                    return Ok(Piece::Landed);
                }
            }
            match access.append(key, frame).await {
                Ok(true) => return Ok(Piece::Landed),
                Ok(false) if !create => return Ok(Piece::Gone),
                Ok(false) => {}
                Err(e) => return full_or(e, key).map(|()| Piece::Full),
            }
        }
        Err(Error::Conflict {
            key: key.display(),
            attempts: 64,
        })
    }

    /// Fill the piece `key` until no frame fits in it, with frames at
    /// [`SEAL_AT_MS`] that no read returns; `refused` is the length of a
    /// frame it just refused. `false` if the piece is not there.
    ///
    /// Why: a writer that finds a piece full goes on in the next one, but
    /// another writer, not refused yet, could still append a smaller frame
    /// to the full piece. Then an event could land *before* events a
    /// reader has already seen at the same millisecond (in the next piece),
    /// and [`since`](EventLog::since)'s cursor, which counts the events
    /// seen at its millisecond, would skip it and return one twice. Once a
    /// piece is sealed nothing lands in it, so a run only grows at its
    /// end. Each try is one append that either lands whole or not at all;
    /// trying sizes of halving powers of two down to the smallest frame
    /// leaves less room than the smallest frame: at most about
    /// `log2(refused)` round trips, once per filled piece (and one for a
    /// writer that finds the piece already sealed).
    async fn seal(&self, io: Io, key: &Key, refused: usize) -> Result<bool> {
        let access = self.access(io);
        let smallest = frame::frame_len(0);
        let mut tries = vec![smallest];
        // The largest power of two below `refused`: the room left is less.
        let mut size = 1usize << (usize::BITS - 1 - (refused.max(2) - 1).leading_zeros());
        while size > smallest {
            tries.push(size);
            size /= 2;
        }
        tries.push(smallest);
        let mut pad = Vec::with_capacity(refused);
        for (i, len) in tries.into_iter().enumerate() {
            pad.clear();
            frame::encode(SEAL_AT_MS, &vec![0; len - smallest], &mut pad);
            match access.append(key, &pad).await.map_err(|e| full_or(e, key)) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                // Already sealed, by another writer: done in one try.
                Err(Ok(())) if i == 0 => return Ok(true),
                Err(Ok(())) => {}
                Err(Err(e)) => return Err(e),
            }
        }
        Ok(true)
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
    /// frame that belongs to the run its key is read for and lies in
    /// `[first, last]`: chunk by chunk in `chunks`' order, run by run
    /// within a chunk (see [`runs_of`](Self::runs_of)), piece by piece
    /// within a run, in log order within a piece; the damaged bytes
    /// skipped. The pieces are asked for in [`Probe`] batches, one
    /// `get_multi` each. Whether there is a next piece is asked of the
    /// server, never guessed from a piece's size: a client configured with
    /// another item limit than the server's would guess wrong.
    async fn read(
        &self,
        io: Io,
        chunks: &[u64],
        first: u64,
        last: u64,
        mut visit: impl FnMut(u64, &[u8]),
    ) -> Result<usize> {
        let runs: Vec<Run> = chunks
            .iter()
            .flat_map(|&w| self.runs_of(w, first, last))
            .collect();
        // Per run: the pieces read so far, in order, with their numbers.
        let mut pieces: Vec<Vec<(u32, Item)>> = vec![Vec::new(); runs.len()];
        let mut probe = Probe::new(runs.len());
        loop {
            let batch = probe.batch();
            if batch.is_empty() {
                break;
            }
            let keys = self.keys_of(&runs, &batch)?;
            let items = self.access(io).get_multi(&keys).await?;
            let there: Vec<bool> = items.iter().map(Option::is_some).collect();
            for (&(r, p), item) in batch.iter().zip(items) {
                pieces[r].extend(item.map(|item| (p, item)));
            }
            probe.advance(&there);
        }
        // A run of several pieces: read all but its last again. A piece
        // read before the next one was seen may have been read before its
        // last appends (a read is not a snapshot: the pieces come in
        // several batches, and from several servers). Now that the next
        // piece was seen, each of them is sealed and complete, and the
        // run's events read are a prefix of its appends, which is what
        // `since`'s count relies on. (Twice the bytes of a busy slice's
        // full pieces; a slice of one piece is read once.)
        let again: Vec<(usize, usize)> = pieces
            .iter()
            .enumerate()
            .flat_map(|(r, items)| (0..items.len().saturating_sub(1)).map(move |i| (r, i)))
            .collect();
        if !again.is_empty() {
            let numbered: Vec<(usize, u32)> =
                again.iter().map(|&(r, i)| (r, pieces[r][i].0)).collect();
            let keys = self.keys_of(&runs, &numbered)?;
            let items = self.access(io).get_multi(&keys).await?;
            for (&(r, i), item) in again.iter().zip(items) {
                match item {
                    Some(item) => pieces[r][i].1 = item,
                    // Gone since (trimmed, evicted): its events are lost
                    // with it, as any evicted piece's.
                    None => pieces[r][i].1.value.clear(),
                }
            }
        }
        let mut damaged = 0;
        for (&run, items) in runs.iter().zip(pieces) {
            for (_, item) in items {
                damaged += frame::scan(&item.value, |at_ms, payload| {
                    if self.belongs(run, at_ms) && (first..=last).contains(&at_ms) {
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
    /// in time order. One pipelined `get_multi` (a round trip per request
    /// budget of keys, about 7,000: one for a range of an hour of 60 s
    /// chunks), and one more per doubling of the pieces of a slice past two.
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
    /// (same-ms events last appended first), read as `fetch` reads.
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
    /// newest two chunks first (enough when they hold `n` events: a busy
    /// log transfers only those), then, if it needs more, all the older
    /// chunks within capacity, each as [`fetch`](Self::fetch) reads: never
    /// more bytes than `fetch`.
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
    /// the length of [`fetch`](Self::fetch), read as `fetch` reads, without
    /// copying a payload.
    ///
    /// It still transfers the payloads: memcached returns whole values (no
    /// byte ranges), and a piece's events are one value, frames back to
    /// back. A count kept beside the frames (a counter per chunk, one more
    /// command per put) would be cheaper to read but not correct: it is
    /// evicted apart from the frames, counts a put whose append failed
    /// after an ambiguous reply differently, and cannot tell planted or
    /// damaged bytes. So `count` reads the slices covering the range and
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
    /// before `before_ms` too, so reads may still return events up to a
    /// chunk older than `before_ms`. Returns how many items (pieces of
    /// slices, and of chunks of the layout before slices) it deleted.
    /// Pipelined batches of deletes over the first two pieces of every
    /// slice of the chunks that can still be stored (a round trip per
    /// server per request budget of keys), and one more per doubling of the pieces
    /// of a busy slice; none at all when no chunk ends by `before_ms`.
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
    /// // The chunk [0, 10 s): its two events, one item each (they are in
    /// // two slices). [10 s, 20 s) straddles 15 s and stays.
    /// assert_eq!(log.trim(start + 15_000)?, 2);
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
        // Every run of those chunks, whole: the pieces in Probe batches.
        let runs: Vec<Run> = (first..=last)
            .flat_map(|w| self.runs_of(w, 0, u64::MAX))
            .collect();
        let mut probe = Probe::new(runs.len());
        let mut deleted = 0;
        loop {
            let batch = probe.batch();
            if batch.is_empty() {
                break;
            }
            let keys = self.keys_of(&runs, &batch)?;
            let ops: Vec<Op<'_>> = keys.iter().map(Op::Delete).collect();
            let there = self
                .access(io)
                .pipeline(&ops)
                .await
                .into_iter()
                .map(|reply| reply.and_then(Reply::applied))
                .collect::<Result<Vec<bool>>>()?;
            deleted += there.iter().filter(|&&t| t).count();
            probe.advance(&there);
        }
        Ok(deleted)
    }

    /// The events after `cursor` (up to now), and the cursor to use next.
    /// It reads the slices from the cursor's to a second past now (one
    /// round trip for polls a few minutes apart): about what it returns.
    /// Events stamped further ahead (a writer's clock ahead of this one's,
    /// or [`put_at`](Self::put_at)) come in a later call.
    #[blocking_and_async(pub)]
    async fn since_io(&self, io: Io, cursor: &Cursor) -> Result<(Vec<Event>, Cursor)> {
        // Up to a little past now, not to the end of the current chunk:
        // the slices ahead are empty unless a writer's clock runs ahead,
        // and their events, later than anything returned now, come in a
        // later call.
        let ahead = self.scope.clock().now_ms().saturating_add(SINCE_AHEAD_MS);
        let events = self.fetch_io(io, cursor.at_ms, ahead).await?;
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
