//! One connection to a memcached server: its handshake (the
//! server's version, its incarnation marker and a sample of its clock, in
//! one round trip), and moving commands and replies over it.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use memcache::exp::{MetaCommand, MetaCommandResult, MetaConnection, parse_meta_result};

use crate::incarnation::{INCARNATION_KEY, Incarnation, ServerClock, Version};

/// One open connection and what its server said it is.
pub(crate) struct Conn {
    meta: MetaConnection,
    /// A second handle on the same socket, for the liveness peek and for
    /// writing pre-encoded pipeline payloads.
    probe: TcpStream,
    pub(crate) incarnation: Incarnation,
}

impl Conn {
    /// Set up a freshly connected `stream`: its options, and the handshake
    /// (within `io_timeout`). With `version_cap`, the server is taken to be
    /// no newer than that (tests of older servers' paths).
    pub(crate) fn open(
        mut stream: TcpStream,
        io_timeout: Duration,
        version_cap: Option<Version>,
    ) -> io::Result<Conn> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(io_timeout))?;
        stream.set_write_timeout(Some(io_timeout))?;
        let incarnation = handshake(&mut stream, version_cap)?;
        let probe = stream.try_clone()?;
        let mut meta = MetaConnection::from_stream(stream);
        meta.set_io_timeout(Some(io_timeout));
        Ok(Conn {
            meta,
            probe,
            incarnation,
        })
    }

    /// Whether a pooled connection is still usable: no stray bytes and no
    /// EOF pending (a restarted server closes its connections).
    ///
    /// One `recv(MSG_PEEK | MSG_DONTWAIT)`: a single syscall, where toggling
    /// O_NONBLOCK around a peek costs three on every checkout.
    pub(crate) fn is_alive(&self) -> bool {
        let mut byte = [std::mem::MaybeUninit::<u8>::uninit(); 1];
        let socket = socket2::SockRef::from(&self.probe);
        matches!(
            socket.recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock
        )
    }

    /// Bound the next exchange ([`send`](Self::send) and
    /// [`receive`](Self::receive) together) by `timeout`.
    pub(crate) fn set_io_timeout(&mut self, timeout: Duration) {
        self.meta.set_io_timeout(Some(timeout));
    }

    /// Write one command.
    pub(crate) fn send(&mut self, command: &MetaCommand) -> Result<(), memcache::exp::Error> {
        self.meta.send(command)
    }

    /// Read one reply (with its data block). `ERROR`/`CLIENT_ERROR`/
    /// `SERVER_ERROR` lines are `Err(Rejected | Server)`.
    pub(crate) fn receive(&mut self) -> Result<MetaCommandResult, memcache::exp::Error> {
        self.meta.receive().and_then(parse_meta_result)
    }

    /// Ask for the server's general-purpose statistics (`stats`) and read
    /// the listing up to `END`, each syscall bounded by `timeout`: every
    /// `STAT` line's name and value, in the server's order. The listing is
    /// read by the handshake's own parser, through a reader over the probe
    /// handle: the stream is quiet between exchanges, so the reply is all
    /// there is to read, and anything past `END` is an error.
    pub(crate) fn stats(&mut self, timeout: Duration) -> io::Result<Vec<(String, String)>> {
        self.probe.set_read_timeout(Some(timeout))?;
        self.probe.set_write_timeout(Some(timeout))?;
        (&self.probe).write_all(b"stats\r\n")?;
        let mut reader = BufReader::new(&self.probe);
        let mut stats = Vec::new();
        read_stats(&mut reader, |name, value| {
            stats.push((name.to_string(), value.to_string()));
        })?;
        if !reader.buffer().is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the server sent more than the stats listing",
            ));
        }
        Ok(stats)
    }

    /// Write a pre-encoded payload (one `write` loop on the socket) within
    /// `timeout`. Also gives how many bytes left, failure or not.
    pub(crate) fn write_payload(
        &mut self,
        payload: &[u8],
        timeout: Duration,
    ) -> (io::Result<()>, usize) {
        let mut written = 0;
        let outcome = self.probe.set_write_timeout(Some(timeout)).and_then(|()| {
            while written < payload.len() {
                match self.probe.write(&payload[written..]) {
                    Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                    Ok(n) => written += n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        });
        (outcome, written)
    }
}

/// Whether an I/O error is a timeout: a socket timeout (`SO_RCVTIMEO` /
/// `SO_SNDTIMEO`) surfaces as `WouldBlock` on most platforms.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
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

/// A clock sample whose round trip took longer than this may have been read
/// by a server that had just resumed from a pause, before its clock caught
/// up; it is read again.
const SLOW_SAMPLE: Duration = Duration::from_millis(250);

/// The handshake of a new connection, one round trip: `version`, a read of
/// the incarnation marker ([`INCARNATION_KEY`]) and `stats` (for the
/// server's clock, see [`ServerClock`]). When the marker is missing (the
/// first connection after a restart or a flush) this client creates it with
/// `add` (one more round trip); a client that loses that race reads the
/// winner's.
fn handshake(stream: &mut TcpStream, cap: Option<Version>) -> io::Result<Incarnation> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let read_marker = format!("mg {INCARNATION_KEY} v c\r\n");
    let sent = Instant::now();
    stream.write_all(format!("version\r\n{read_marker}stats\r\n").as_bytes())?;
    let text = read_line(&mut reader)?;
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
    let mut marker = read_marker_reply(&mut reader)?;
    let mut clock = read_clock(&mut reader, sent)?;
    if sent.elapsed() > SLOW_SAMPLE {
        let sent = Instant::now();
        stream.write_all(b"stats\r\n")?;
        clock = read_clock(&mut reader, sent)?;
    }
    let incarnation = |token: &[u8], cas| Incarnation::new(version, token, cas, clock);
    let mut found = None;
    for _ in 0..4 {
        if let Some((token, cas)) = marker {
            found = Some(incarnation(&token, cas));
            break;
        }
        let token = mcds_core::random_token();
        stream.write_all(
            format!("ms {INCARNATION_KEY} {} ME c\r\n{token}\r\n", token.len()).as_bytes(),
        )?;
        let stored = read_line(&mut reader)?;
        if stored.starts_with("HD") {
            found = Some(incarnation(token.as_bytes(), cas_flag(&stored) != Some(0)));
            break;
        }
        if stored.starts_with("SERVER_ERROR") {
            // Out of memory (-M): no marker can be stored. A mask of this
            // connection's own keeps stale ids from matching (ids then only
            // work on the connection that read them: spurious mismatches,
            // never a false match). Whether CAS is on is then read from the
            // server's settings (`cas_enabled yes`: started without -C).
            stream.write_all(b"stats settings\r\n")?;
            let mut cas = false;
            read_stats(&mut reader, |name, value| {
                cas |= name == "cas_enabled" && value == "yes";
            })?;
            found = Some(incarnation(token.as_bytes(), cas));
            break;
        }
        if !stored.starts_with("NS") {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("unexpected reply to the incarnation marker add: {stored:?}"),
            ));
        }
        // NS: another client created it first; read theirs.
        stream.write_all(read_marker.as_bytes())?;
        marker = read_marker_reply(&mut reader)?;
    }
    let found = found.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            "the incarnation marker kept disappearing between add and read",
        )
    })?;
    if !reader.buffer().is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "the server sent more than the handshake asked for",
        ));
    }
    Ok(found)
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
