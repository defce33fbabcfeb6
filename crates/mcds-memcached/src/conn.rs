//! One connection to a memcached server: its handshake (the server's
//! version, its incarnation marker and a sample of its clock, in one round
//! trip), and the meta protocol's framing over it: commands written, reply
//! lines and data blocks read, over whichever [`Stream`] reached the server
//! (TCP, a unix socket, TLS).

use mcds_net::incarnation::{INCARNATION_KEY, Incarnation, ServerClock, Version};
pub(crate) use mcds_net::transport::is_timeout;
use mcds_net::transport::{self, Stream};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::time::{Duration, Instant};

use crate::pool::{PoolSeen, PoolSpec};
use crate::reply::{MetaReply, read_reply};

/// One open connection and what its server said it is.
pub(crate) struct Conn {
    /// Its registration with a tokio reactor and the bytes read ahead of
    /// parsing, once an async caller on a tokio runtime drove it (see
    /// [`crate::mux::native`]). First, so that it is dropped (and the
    /// socket taken off the reactor) before the socket is closed.
    #[cfg(feature = "tokio")]
    native: Option<crate::mux::native::NativeIo>,
    reader: BufReader<Stream>,
    /// The reply line being parsed, kept across replies (see
    /// [`read_reply`]).
    line: Vec<u8>,
    pub(crate) incarnation: Incarnation,
    /// What the server's pool record said of this client's list.
    pub(crate) pool: PoolSeen,
}

impl Conn {
    /// Set up a freshly connected `stream` and run the handshake (within
    /// `io_timeout`). With `version_cap`, the server is taken to be no newer
    /// than that (tests of older servers' paths). `server` names it in
    /// messages. `pool`: the pool record to read (see [`crate::pool`]).
    pub(crate) fn open(
        stream: Stream,
        io_timeout: Duration,
        version_cap: Option<Version>,
        server: &str,
        pool: &PoolSpec,
        claim: Claim,
    ) -> io::Result<Conn> {
        let mut reader = BufReader::with_capacity(16 * 1024, stream);
        reader.get_mut().set_deadline(Instant::now() + io_timeout);
        let (incarnation, pool) = handshake(&mut reader, version_cap, server, pool, claim)?;
        Ok(Conn {
            #[cfg(feature = "tokio")]
            native: None,
            reader,
            line: Vec::with_capacity(128),
            incarnation,
            pool,
        })
    }

    /// Whether a pooled connection is still usable: nothing buffered, no
    /// stray bytes and no EOF pending (a restarted server closes its
    /// connections). One `recv(MSG_PEEK | MSG_DONTWAIT)`.
    pub(crate) fn is_alive(&mut self) -> bool {
        self.is_quiet() && self.reader.get_mut().is_alive()
    }

    /// Whether nothing is buffered on either side (blocking or async) of
    /// the connection: between drivers, nothing should be.
    #[inline]
    pub(crate) fn is_quiet(&self) -> bool {
        #[cfg(feature = "tokio")]
        if self.native.as_ref().is_some_and(|n| !n.is_empty()) {
            return false;
        }
        self.reader.buffer().is_empty()
    }

    /// The connection's parts for the async side: its read buffer and
    /// registration ([`NativeIo`](crate::mux::native::NativeIo), made on
    /// first use), the stream and the line buffer.
    #[cfg(feature = "tokio")]
    pub(crate) fn native_parts(
        &mut self,
    ) -> (&mut crate::mux::native::NativeIo, &mut Stream, &mut Vec<u8>) {
        let native = self
            .native
            .get_or_insert_with(crate::mux::native::NativeIo::new);
        (native, self.reader.get_mut(), &mut self.line)
    }

    /// Bound the following writes and reads by `deadline`, the clock read
    /// at `now` just before the next write (see [`Stream::set_deadline_at`]).
    ///
    /// [`Stream::set_deadline_at`]: mcds_net::transport::Stream::set_deadline_at
    pub(crate) fn set_deadline_at(&mut self, deadline: Instant, now: Instant) {
        self.reader.get_mut().set_deadline_at(deadline, now);
    }

    /// When the connection's last read or write began, or a moment before
    /// (see [`Stream::last_clock`]).
    ///
    /// [`Stream::last_clock`]: mcds_net::transport::Stream::last_clock
    pub(crate) fn last_clock(&self) -> Instant {
        self.reader.get_ref().last_clock()
    }

    /// Read one reply (with its data block). `ERROR`/`CLIENT_ERROR`/
    /// `SERVER_ERROR` lines are `Err(Rejected | Server)`.
    pub(crate) fn receive(&mut self) -> Result<MetaReply, memcache::exp::Error> {
        read_reply(&mut self.reader, &mut self.line)
    }

    /// Whether the connection has a file descriptor an async driver can
    /// watch (not TLS).
    #[cfg(feature = "tokio")]
    pub(crate) fn has_fd(&self) -> bool {
        !self.reader.get_ref().is_tls()
    }

    /// Read a `stats` listing (the reply to `stats`, up to `END`).
    pub(crate) fn receive_stats(&mut self) -> io::Result<Vec<(String, String)>> {
        read_listing(&mut self.reader)
    }

    /// Write a pre-encoded payload within the deadline. Also gives whether
    /// any byte left, failure or not.
    pub(crate) fn write_payload(&mut self, payload: &[u8]) -> (io::Result<()>, usize) {
        let (outcome, sent) = self.reader.get_mut().send_all(payload);
        (outcome, sent as usize)
    }
}

/// Read one reply line of the handshake or of a `stats` listing (without
/// its `\r\n`). The reader buffers, but both only read replies they asked
/// for, so nothing past them is taken from the stream (checked at their
/// end).
fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = Vec::with_capacity(32);
    reader.take(1024).read_until(b'\n', &mut line)?;
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the server closed the connection mid-reply (during the handshake or a stats listing), or sent a reply line over 1 KiB",
        ));
    }
    Ok(String::from_utf8_lossy(&line).trim_end().to_string())
}

/// The `c<cas>` flag of a meta reply line, if present.
fn cas_flag(line: &str) -> Option<u64> {
    line.split(' ')
        .find_map(|t| t.strip_prefix('c'))
        .and_then(|n| n.parse().ok())
}

/// A `stats` listing's names and values, as [`Conn::receive_stats`] gives
/// them (an async driver reads the whole listing first, then parses it).
pub(crate) fn read_listing(reader: &mut impl BufRead) -> io::Result<Vec<(String, String)>> {
    let mut stats = Vec::new();
    read_stats(reader, |name, value| {
        stats.push((name.to_string(), value.to_string()));
    })?;
    Ok(stats)
}

/// Read a `stats`-style listing up to `END`, giving each `STAT` line's name
/// and value to `each`.
fn read_stats(reader: &mut impl BufRead, mut each: impl FnMut(&str, &str)) -> io::Result<()> {
    for _ in 0..2000 {
        let line = read_line(reader)?;
        if line == "END" {
            return Ok(());
        }
        let mut parts = line.splitn(3, ' ');
        if let (Some("STAT"), Some(name), Some(value)) = (parts.next(), parts.next(), parts.next())
        {
            each(name, value);
        } else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected line in a stats reply: {line:?}"),
            ));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "a stats reply did not end",
    ))
}

/// The server's clock from a `stats` reply whose request was sent at `sent`.
fn read_clock(reader: &mut impl BufRead, sent: Instant) -> io::Result<Option<ServerClock>> {
    let mut secs = None;
    read_stats(reader, |name, value| {
        if name == "time" {
            secs = value.parse().ok();
        }
    })?;
    Ok(secs.map(|secs| ServerClock { secs, sent }))
}

/// What a server has lost since it started, from its `stats` (the
/// counters of [`crate::retention::LOSS_STATS`]): a pool record missing
/// from a server that has evicted, rebalanced away or flushed items may
/// have been among them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Losses {
    /// Each nonzero counter, by name.
    counts: Vec<(String, u64)>,
}

impl Losses {
    fn any(&self) -> bool {
        !self.counts.is_empty()
    }

    fn describe(&self) -> String {
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(name, n)| format!("{name} {n}"))
            .collect();
        format!("{} since it started", counts.join(", "))
    }
}

/// Whether a connection's handshake may write this client's list where the
/// server has no pool record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Claim {
    /// No: the server refused this client's list before (a lost record
    /// does not make this list the pool's).
    Never,
    /// Only if the server has lost nothing since it started (this client
    /// has never read the record there: a missing one may have been
    /// another list's, evicted or flushed).
    IfNothingLost,
    /// Yes: the server recorded this client's list before, and lost it.
    Always,
}

/// [`read_clock`], and what the server has lost since it started.
fn read_clock_and_losses(
    reader: &mut impl BufRead,
    sent: Instant,
) -> io::Result<(Option<ServerClock>, Losses)> {
    let mut secs = None;
    let mut losses = Losses::default();
    read_stats(reader, |name, value| {
        if name == "time" {
            secs = value.parse().ok();
        } else if crate::retention::LOSS_STATS.contains(&name)
            && let Some(n) = value.parse::<u64>().ok().filter(|n| *n > 0)
        {
            losses.counts.push((name.to_string(), n));
        }
    })?;
    Ok((secs.map(|secs| ServerClock { secs, sent }), losses))
}

/// A clock sample whose round trip took longer than this may have been read
/// by a server that had just resumed from a pause, before its clock caught
/// up; it is read again.
const SLOW_SAMPLE: Duration = Duration::from_millis(250);

/// The handshake of a new connection, one round trip: `version`, a read of
/// the incarnation marker ([`INCARNATION_KEY`]), a read of the pool record
/// ([`crate::pool`]) and `stats` (for the server's clock, see
/// [`ServerClock`]). When the marker is missing (the first connection
/// after a restart or a flush) this client creates it with `add` (one more
/// round trip); a client that loses that race reads the winner's. The same
/// for a missing pool record.
fn handshake(
    reader: &mut BufReader<Stream>,
    cap: Option<Version>,
    server: &str,
    pool: &PoolSpec,
    claim: Claim,
) -> io::Result<(Incarnation, PoolSeen)> {
    let read_marker = format!("mg {INCARNATION_KEY} v c\r\n");
    let read_pool = format!("mg {} v\r\n", pool.key);
    let sent = Instant::now();
    send(
        reader,
        format!("version\r\n{read_marker}{read_pool}stats\r\n").as_bytes(),
    )?;
    let text = read_line(reader)?;
    if text == transport::UNAUTHENTICATED {
        return Err(transport::needs_credentials(server));
    }
    if !text.starts_with("VERSION") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected reply to version: {text:?} (is this a memcached server?)"),
        ));
    }
    let mut version = Version::parse(&text);
    if let Some(cap) = cap {
        version = version.min(cap);
    }
    if version < Version(1, 6, 0) {
        // No meta protocol (it answers the `mg` with ERROR): a meta
        // command's data block would be read as a command. Refuse it.
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "memcached {version} has no meta protocol; mcds needs memcached 1.6.0 or later"
            ),
        ));
    }
    let mut marker = read_marker_reply(reader)?;
    let record = read_marker_reply(reader)?;
    let (mut clock, losses) = read_clock_and_losses(reader, sent)?;
    if sent.elapsed() > SLOW_SAMPLE {
        let sent = Instant::now();
        send(reader, b"stats\r\n")?;
        clock = read_clock(reader, sent)?;
    }
    let incarnation = |token: &[u8], cas| Incarnation::new(version, token, cas, clock);
    let mut found = None;
    for _ in 0..4 {
        if let Some((token, cas)) = marker {
            found = Some(incarnation(&token, cas));
            break;
        }
        let token = mcds_core::random_token();
        // A text `add` (a meta `ms` refused for memory would delete a
        // marker another client just made), then `mg … c` for whether the
        // server has CAS ids (`-C`: c0).
        send(
            reader,
            format!(
                "add {INCARNATION_KEY} 0 0 {}\r\n{token}\r\nmg {INCARNATION_KEY} c\r\n",
                token.len()
            )
            .as_bytes(),
        )?;
        let stored = read_line(reader)?;
        let fetched = read_line(reader)?;
        if stored == "STORED" {
            found = Some(incarnation(token.as_bytes(), cas_flag(&fetched) != Some(0)));
            break;
        }
        if stored.starts_with("SERVER_ERROR") {
            // Out of memory (-M): no marker can be stored. A mask of this
            // connection's own keeps stale ids from matching (ids then only
            // work on the connection that read them: spurious mismatches,
            // never a false match), and the server's sessions keep to one
            // connection meanwhile (`Server::lane`), so that they match.
            // Whether CAS is on is then read from the server's settings
            // (`cas_enabled yes`: started without -C).
            send(reader, b"stats settings\r\n")?;
            let mut cas = false;
            read_stats(reader, |name, value| {
                cas |= name == "cas_enabled" && value == "yes";
            })?;
            found = Some(incarnation(token.as_bytes(), cas).without_marker());
            break;
        }
        if stored != "NOT_STORED" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected reply to the incarnation marker add: {stored:?}"),
            ));
        }
        // NS: another client created it first; read theirs.
        send(reader, read_marker.as_bytes())?;
        marker = read_marker_reply(reader)?;
    }
    let found = found.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the incarnation marker kept disappearing between add and read",
        )
    })?;
    let seen = pool_record(reader, pool, record, clock, claim, &losses)?;
    if !reader.buffer().is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the server sent more than the handshake asked for",
        ));
    }
    Ok((found, seen))
}

/// What the pool record (`record`, as the handshake read it) says of this
/// client's list; a missing one is written first (`add`, then read again:
/// one more round trip, the first time only), if this client may `claim`
/// it: not where it was refused before, and, for a pool's client that has
/// never read the record there, not where the server has lost items
/// (`losses`), since another list's record may be among them.
fn pool_record(
    reader: &mut BufReader<Stream>,
    pool: &PoolSpec,
    mut record: Option<(Vec<u8>, bool)>,
    clock: Option<ServerClock>,
    claim: Claim,
    losses: &Losses,
) -> io::Result<PoolSeen> {
    // What the server's clock read during the handshake.
    let secs = clock.map_or(0, |c| c.secs);
    for _ in 0..4 {
        if let Some((value, _)) = record {
            return Ok(pool.judge(&value, secs));
        }
        match claim {
            Claim::Never => return Ok(PoolSeen::Missing),
            Claim::IfNothingLost if pool.pooled && losses.any() => {
                return Ok(PoolSeen::Lost(losses.describe()));
            }
            _ => {}
        }
        let mine = pool.record(0);
        let mut request = format!("add {} 0 0 {}\r\n", pool.key, mine.len()).into_bytes();
        request.extend_from_slice(&mine);
        request.extend_from_slice(format!("\r\nmg {} v\r\n", pool.key).as_bytes());
        send(reader, &request)?;
        let stored = read_line(reader)?;
        record = read_marker_reply(reader)?;
        if stored == "STORED" {
            return Ok(PoolSeen::Agrees);
        }
        if stored.starts_with("SERVER_ERROR") {
            // Full under -M: nothing can be recorded.
            return Ok(record.map_or(PoolSeen::Unrecorded, |(value, _)| pool.judge(&value, secs)));
        }
        if stored != "NOT_STORED" {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected reply to the pool record add: {stored:?}"),
            ));
        }
    }
    // Written and gone again and again (flushes): nothing to compare.
    Ok(PoolSeen::Unrecorded)
}

/// Write and flush a handshake request.
fn send(reader: &mut BufReader<Stream>, request: &[u8]) -> io::Result<()> {
    let stream = reader.get_mut();
    stream.write_all(request)?;
    stream.flush()
}

/// The longest incarnation marker read: mcds writes 32 bytes, but any value
/// someone stored under the key works as a marker (only its hash is used),
/// and refusing it would leave every new connection failing until the key
/// is deleted by hand. memcached's largest item (`-I`) is 1 GiB.
const MAX_MARKER_LEN: usize = 1 << 30;

/// The reply to `mg <marker> v c`: the token and whether its CAS id is not
/// 0 (0: CAS disabled, `-C`), or `None` when the marker is missing (`EN`).
fn read_marker_reply(reader: &mut impl BufRead) -> io::Result<Option<(Vec<u8>, bool)>> {
    let reply = read_line(reader)?;
    if reply == "EN" {
        return Ok(None);
    }
    let bad = || {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("unexpected reply to the incarnation marker read: {reply:?}"),
        )
    };
    let rest = reply.strip_prefix("VA ").ok_or_else(bad)?;
    let len: usize = rest
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .filter(|&n| n <= MAX_MARKER_LEN)
        .ok_or_else(bad)?;
    // Grown as bytes arrive, not allocated from the length a reply claims.
    let mut token = Vec::new();
    reader.take(len as u64 + 2).read_to_end(&mut token)?;
    if token.len() != len + 2 || !token.ends_with(b"\r\n") {
        return Err(bad());
    }
    token.truncate(len);
    Ok(Some((token, cas_flag(&reply) != Some(0))))
}
