//! Connections: dialing with a version handshake, a small idle pool per
//! server, backoff while a server is down, and error attribution.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use mc_core::{Backoff, Clock, Error, Key, SystemClock, Ttl, traffic};
use memcache::exp::{MetaCommand, MetaCommandResult, MetaConnection, parse_meta_result};
use parking_lot::Mutex;

use crate::Config;

/// A memcached version, read once per connection with `version`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `md <key> C<cas>` deletes only on a CAS match (broken before 1.6.13).
    pub fn has_delete_cas(self) -> bool {
        self >= Version(1, 6, 13)
    }

    /// `ms <key> <len> MA N<ttl>` creates a missing key (1.6.20 and later;
    /// 1.6.18 answers `NS`).
    pub fn has_append_vivify(self) -> bool {
        self >= Version(1, 6, 20)
    }

    /// Parse `VERSION 1.6.18`. Anything unparsable is 0.0.0, which the
    /// backend refuses (it needs the meta protocol of 1.6.0 and later).
    pub fn parse(line: &str) -> Version {
        let text = line.trim().strip_prefix("VERSION").unwrap_or("").trim();
        let mut parts = text
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse::<u32>().unwrap_or(0));
        Version(
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        )
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The key under which every memcached server keeps the random marker of its
/// current incarnation: every CAS id is masked with it, so an id from before
/// a restart matches nothing after it (see the [crate docs](crate)). It
/// never expires; the first client that connects after a restart or flush
/// creates it.
pub const INCARNATION_KEY: &str = "__mcds_incarnation";

/// What one server incarnation is: its version, whether it has CAS ids, and
/// the mask that ties every CAS id handed out to this incarnation.
///
/// memcached numbers CAS ids from 1 again after a restart, so an id read
/// before a restart can match a *different* item after it: a lock released
/// or extended by its old CAS would act on the next holder's lock. Every
/// connection therefore reads a random marker stored on the server
/// ([`INCARNATION_KEY`], in the same round trip as the `version`
/// handshake) and every CAS id crosses the API XOR-ed with a 64-bit mask
/// derived from it. An id from an earlier incarnation (whose marker died
/// with it) unmasks to a random number, which matches no item: the stale
/// operation answers EXISTS/NOT_FOUND and touches nothing. A server
/// started with `-C` answers every CAS id as 0; such a server is marked as
/// having no CAS, and operations that need one are refused.
///
/// Equality compares the incarnation (version, mask, CAS), not the clock
/// sample each connection took.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Incarnation {
    pub(crate) version: Version,
    mask: u64,
    /// CAS ids are enabled (the server was not started with `-C`).
    pub(crate) cas: bool,
    /// The server's clock as this connection's handshake read it (`None`:
    /// its `stats` had no `time`; relative TTLs are sent then).
    pub(crate) clock: Option<ServerClock>,
}

impl PartialEq for Incarnation {
    fn eq(&self, other: &Incarnation) -> bool {
        (self.version, self.mask, self.cas) == (other.version, other.mask, other.cas)
    }
}

impl Eq for Incarnation {}

impl Incarnation {
    /// The exptime to send for `ttl`: absolute, on the server's own clock
    /// (see [`ServerClock`]), or relative when the clock is unknown.
    pub(crate) fn exptime(&self, ttl: Ttl) -> u32 {
        match self.clock {
            Some(clock) => clock.exptime_at(ttl, Instant::now()),
            None => ttl.to_memcached_exptime(SystemClock.now_secs()),
        }
    }

    /// The id a caller sees for the server's CAS id `id` (0 stays 0: no id).
    pub(crate) fn cas_out(&self, id: u64) -> u64 {
        if id == 0 { 0 } else { id ^ self.mask }
    }

    /// The server's CAS id for a caller's `id`. Never 0, which `md`/`ms`
    /// would read as "no CAS": an id that unmasks to 0 becomes one no item
    /// ever has.
    pub(crate) fn cas_in(&self, id: u64) -> u64 {
        match id ^ self.mask {
            0 => u64::MAX,
            server => server,
        }
    }
}

/// The server's clock, read once per connection, so that every TTL can be
/// sent as an absolute time on that clock.
///
/// memcached turns a relative TTL into an expiry time with its own
/// seconds counter, which one thread updates once a second. A server that
/// was paused (SIGSTOP, a frozen VM, a swap storm) applies the writes
/// queued during the pause as soon as it resumes, before that thread has
/// caught up: their expiry is computed from the clock of before the pause,
/// so an item written with a TTL shorter than the pause expires the moment
/// the clock moves. A lock granted that way is free again at once, and a
/// counter's increments vanish. An absolute exptime does not depend on the
/// counter's value when the write is applied: memcached subtracts its start
/// time from it, and the item lives until the counter really gets there.
///
/// The absolute time is taken on the server's clock, not ours, so client
/// and server clocks need not agree: the handshake reads the server's
/// `time` (its start time plus its seconds counter, the base absolute
/// exptimes are measured against) and the monotonic instant the request was
/// sent. Later, the server's clock is at most `secs + ceil(elapsed)`, and
/// an item sent with `T<that + ttl>` lives at least as long as one sent
/// with a relative `T<ttl>` would on a server that was never paused (and up
/// to about two seconds longer).
///
/// A handshake answered just after a pause reads the clock of before the
/// pause, which would make items expire early. Such a sample is read again
/// when its round trip was slow, and every operation uses the highest
/// estimate any handshake with the server gave ([`Server::learn_clock`]), so
/// one stale sample lowers nothing. What is left: a client whose *first*
/// connection to a server is answered by a server resuming from a pause.
/// A connection whose sample is older than [`CLOCK_MAX_AGE`] is replaced,
/// so fresh samples keep coming (see [`Server::learn_clock`] for clock-rate
/// drift).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ServerClock {
    /// The server's `time` stat, in Unix seconds.
    secs: u64,
    /// When the request that read it was sent (the server read its clock
    /// after that).
    sent: Instant,
}

/// A connection whose clock sample is older than this is not reused.
pub(crate) const CLOCK_MAX_AGE: Duration = Duration::from_secs(600);

impl ServerClock {
    /// The most the server's clock can read at `now`: it read `secs` after
    /// `sent`, and it has ticked at most once per second since.
    fn upper_at(&self, now: Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.sent);
        let ticks = elapsed.as_secs() + u64::from(elapsed.subsec_nanos() > 0);
        self.secs.saturating_add(ticks)
    }

    /// The absolute exptime for `ttl` if sent at `now` (0 for never).
    fn exptime_at(&self, ttl: Ttl, now: Instant) -> u32 {
        let Some(n) = ttl.as_secs() else {
            return 0;
        };
        let at = self.upper_at(now).saturating_add(u64::from(n));
        // memcached parses the token as a signed 32-bit number.
        u32::try_from(at.min(i32::MAX as u64)).unwrap_or(i32::MAX as u32)
    }

    fn is_old(&self) -> bool {
        self.sent.elapsed() > CLOCK_MAX_AGE
    }
}

/// One open connection and what its server said it is.
pub(crate) struct Conn {
    meta: MetaConnection,
    /// A second handle on the same socket, for the liveness peek.
    probe: TcpStream,
    pub(crate) incarnation: Incarnation,
}

impl Conn {
    /// Whether a pooled connection is still usable: no stray bytes and no
    /// EOF pending (a restarted server closes its connections).
    ///
    /// One `recv(MSG_PEEK | MSG_DONTWAIT)`: a single syscall, where toggling
    /// O_NONBLOCK around a peek costs three on every checkout.
    fn is_alive(&self) -> bool {
        let mut byte = [std::mem::MaybeUninit::<u8>::uninit(); 1];
        let socket = socket2::SockRef::from(&self.probe);
        matches!(
            socket.recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock
        )
    }
}

#[derive(Default)]
struct Health {
    down_until: Option<Instant>,
    reason: String,
    backoff: Option<Backoff>,
}

/// One server of the pool.
pub(crate) struct Server {
    pub(crate) addr: String,
    socket_addrs: Vec<SocketAddr>,
    idle: Mutex<Vec<Conn>>,
    health: Mutex<Health>,
    /// What the most recently dialed connection found.
    incarnation: Mutex<Option<Incarnation>>,
    /// The highest estimate of the server's clock any handshake gave (see
    /// [`Server::learn_clock`]).
    clock: Mutex<Option<ServerClock>>,
}

impl Server {
    pub(crate) fn new(addr: String, socket_addrs: Vec<SocketAddr>) -> Server {
        Server {
            addr,
            socket_addrs,
            idle: Mutex::new(Vec::new()),
            health: Mutex::new(Health::default()),
            incarnation: Mutex::new(None),
            clock: Mutex::new(None),
        }
    }

    /// Keep the clock sample that puts the server's clock highest.
    ///
    /// Each sample gives an upper bound of the server's clock from then on,
    /// if the server's clock was current when it was read. A handshake
    /// answered by a server that had just resumed from a pause reads the
    /// clock of before the pause: its bound is too low, and an exptime
    /// built on it would expire early. Keeping the highest bound of every
    /// handshake (a too-high bound only makes items live a little longer)
    /// means one such sample lowers nothing, as long as one earlier
    /// handshake met a running server. A lower sample never replaces a
    /// higher one, however old: a drift of the two machines' clock rates
    /// that makes the kept estimate low is corrected by the next fresh
    /// sample (connections are replaced every [`CLOCK_MAX_AGE`]), and one
    /// that makes it high only lengthens items.
    fn learn_clock(&self, sample: Option<ServerClock>) {
        let Some(sample) = sample else {
            return;
        };
        let mut clock = self.clock.lock();
        let now = Instant::now();
        let keep = clock.is_some_and(|c| c.upper_at(now) >= sample.upper_at(now));
        if !keep {
            *clock = Some(sample);
        }
    }

    pub(crate) fn version(&self) -> Option<Version> {
        self.incarnation.lock().map(|i| i.version)
    }

    fn checkout(&self, config: &Config) -> Result<(Conn, bool), Error> {
        loop {
            let Some(conn) = self.idle.lock().pop() else {
                break;
            };
            let old = conn.incarnation.clock.is_some_and(|c| c.is_old());
            if !old && conn.is_alive() {
                return Ok((conn, true));
            }
        }
        self.dial(config).map(|c| (c, false))
    }

    fn put_back(&self, conn: Conn, config: &Config) {
        if *self.incarnation.lock() != Some(conn.incarnation) {
            return; // it read an older marker (see `dial`)
        }
        let mut idle = self.idle.lock();
        if idle.len() < config.max_idle {
            idle.push(conn);
        }
    }

    /// Drop every pooled connection (after a failure that suggests the
    /// server went away, they are all suspect).
    fn drain(&self) {
        self.idle.lock().clear();
    }

    fn dial(&self, config: &Config) -> Result<Conn, Error> {
        {
            let health = self.health.lock();
            if let Some(until) = health.down_until {
                let now = Instant::now();
                if now < until {
                    return Err(Error::ServerDown {
                        server: self.addr.clone(),
                        reason: health.reason.clone(),
                        retry_in: until - now,
                    });
                }
            }
        }
        match self.try_dial(config) {
            Ok(conn) => {
                let mut health = self.health.lock();
                health.down_until = None;
                health.backoff = None;
                self.learn_clock(conn.incarnation.clock);
                let previous = self.incarnation.lock().replace(conn.incarnation);
                if previous.is_some_and(|p| p != conn.incarnation) {
                    // The marker changed (a restart, a flush, an eviction):
                    // pooled connections read the old one. Retire them so
                    // every connection masks CAS ids the same way again.
                    self.drain();
                }
                Ok(conn)
            }
            Err(source) => {
                let mut health = self.health.lock();
                let backoff = health.backoff.get_or_insert_with(|| {
                    Backoff::new(config.down_backoff_base, config.down_backoff_max)
                });
                // At least half the ceiling, so a dead server is not redialed
                // in a busy loop, with jitter so clients spread out.
                let ceiling = backoff.ceiling();
                let wait = ceiling / 2 + backoff.next_delay() / 2;
                health.down_until = Some(Instant::now() + wait);
                health.reason = source.to_string();
                if is_timeout(&source) {
                    Err(Error::Timeout {
                        server: self.addr.clone(),
                        // Connecting, or the version handshake after it.
                        after: config.connect_timeout.max(config.io_timeout),
                    })
                } else {
                    Err(Error::Io {
                        server: self.addr.clone(),
                        source,
                    })
                }
            }
        }
    }

    fn try_dial(&self, config: &Config) -> io::Result<Conn> {
        let mut last = io::Error::new(io::ErrorKind::AddrNotAvailable, "no address to dial");
        for addr in &self.socket_addrs {
            match TcpStream::connect_timeout(addr, config.connect_timeout) {
                Ok(mut stream) => {
                    stream.set_nodelay(true)?;
                    stream.set_read_timeout(Some(config.io_timeout))?;
                    stream.set_write_timeout(Some(config.io_timeout))?;
                    let incarnation = handshake(&mut stream, config.version_cap)?;
                    let probe = stream.try_clone()?;
                    let mut meta = MetaConnection::from_stream(stream);
                    meta.set_io_timeout(Some(config.io_timeout));
                    return Ok(Conn {
                        meta,
                        probe,
                        incarnation,
                    });
                }
                Err(e) => last = e,
            }
        }
        Err(last)
    }
}

/// Read one reply line of the handshake (without its `\r\n`). The reader
/// buffers, but the handshake only reads replies it asked for, so nothing
/// past them is taken from the stream (checked at its end).
fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = Vec::with_capacity(32);
    reader.take(1024).read_until(b'\n', &mut line)?;
    if line.last() != Some(&b'\n') {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "closed during the connection handshake (or a reply line over 1 KiB)",
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
    let incarnation = |token: &[u8], cas| Incarnation {
        version,
        mask: mc_core::stable_hash(token),
        cas,
        clock,
    };
    let mut found = None;
    for _ in 0..4 {
        if let Some((token, cas)) = marker {
            found = Some(incarnation(&token, cas));
            break;
        }
        let token = mc_core::random_token();
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

/// A checked-out connection to one server for the length of one store
/// operation (which may take several exchanges on old servers).
pub(crate) struct Session<'a> {
    server: &'a Server,
    config: &'a Config,
    conn: Option<Conn>,
    /// Whether `conn` came from the pool and has not yet answered anything:
    /// a failure before the request left means it was stale, redial once.
    pooled: bool,
    /// The incarnation the session's commands were encoded for (see
    /// [`incarnation`](Self::incarnation)).
    pinned: Option<Incarnation>,
}

impl<'a> Session<'a> {
    pub(crate) fn open(server: &'a Server, config: &'a Config) -> Result<Session<'a>, Error> {
        let (conn, pooled) = server.checkout(config)?;
        Ok(Session {
            server,
            config,
            conn: Some(conn),
            pooled,
            pinned: None,
        })
    }

    /// The incarnation of the server this session talks to (dialing first
    /// if needed). Commands carrying CAS ids are encoded for it, so the
    /// session is pinned to it: if a redial (after a stale pooled
    /// connection) reaches another incarnation, the command is not sent and
    /// fails with [`Error::Io`], safe to retry.
    pub(crate) fn incarnation(&mut self) -> Result<Incarnation, Error> {
        let mut incarnation = self.conn()?.incarnation;
        self.pinned = Some(incarnation);
        // The server's best clock estimate, not just this connection's.
        if let Some(clock) = *self.server.clock.lock() {
            incarnation.clock = Some(clock);
        }
        Ok(incarnation)
    }

    fn conn(&mut self) -> Result<&mut Conn, Error> {
        if self.conn.is_none() {
            let conn = self.server.dial(self.config)?;
            let changed = self.pinned.is_some_and(|p| p != conn.incarnation);
            self.conn = Some(conn);
            self.pooled = false;
            if changed {
                self.pinned = None;
                return Err(Error::Io {
                    server: self.server.addr.clone(),
                    source: io::Error::other(
                        "not sent: the server restarted or was flushed (its incarnation marker changed) while the command was being prepared",
                    ),
                });
            }
        }
        // Just ensured above.
        self.conn.as_mut().ok_or_else(|| Error::Protocol {
            server: self.server.addr.clone(),
            message: "connection missing".into(),
        })
    }

    /// One request/response exchange, bounded by one `io_timeout` in all
    /// (send and reply together). A failure before the request was sent is
    /// `Io`/`Timeout` (not applied); after, it is `Ambiguous` when the
    /// command has side effects.
    pub(crate) fn exchange(
        &mut self,
        key: &Key,
        command: &MetaCommand,
    ) -> Result<MetaCommandResult, Error> {
        traffic::record(1);
        let deadline = Instant::now() + self.config.io_timeout;
        loop {
            let was_pooled = self.pooled;
            let sent = self.armed(deadline)?.meta.send(command);
            if let Err(e) = sent {
                let retry = self.pooled && is_transport(&e);
                self.discard();
                if retry {
                    continue;
                }
                return Err(self.map_error(key, e, false));
            }
            let received = self.armed(deadline)?.meta.receive();
            self.pooled = false;
            let error = match received.and_then(parse_meta_result) {
                Ok(result) => return Ok(result),
                Err(e) => e,
            };
            // Whatever went wrong, this connection is no longer trusted: an
            // error reply to a command with a data block may leave the data
            // unread, and a transport error leaves the stream mid-reply.
            self.discard();
            if matches!(
                error,
                memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)
            ) {
                // The server answered: the command was refused, not lost.
                return Err(self.map_error(key, error, false));
            }
            self.server.drain();
            // A pooled connection the server closed while it sat idle (a
            // restart): a read is safe to send again, once.
            if was_pooled && is_transport(&error) && !command.has_side_effect() {
                continue;
            }
            return Err(self.map_error(key, error, command.has_side_effect()));
        }
    }

    /// The connection (dialed if needed), with its exchange timeout set to
    /// what is left until `deadline`.
    fn armed(&mut self, deadline: Instant) -> Result<&mut Conn, Error> {
        let left = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1));
        let conn = self.conn()?;
        conn.meta.set_io_timeout(Some(left));
        Ok(conn)
    }

    /// Write a pre-encoded pipeline payload (one `write` loop on the
    /// socket), redialing once if a pooled connection fails before any byte
    /// left.
    pub(crate) fn send_payload(
        &mut self,
        payload: &[u8],
        deadline: Instant,
    ) -> Result<(), SendError> {
        loop {
            let conn = self.armed(deadline).map_err(SendError::Dial)?;
            let left = deadline
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            let mut written = 0;
            let outcome = conn.probe.set_write_timeout(Some(left)).and_then(|()| {
                while written < payload.len() {
                    match conn.probe.write(&payload[written..]) {
                        Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                        Ok(n) => written += n,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            });
            match outcome {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let retry = self.pooled && written == 0 && !is_timeout(&e);
                    self.discard();
                    if retry {
                        continue;
                    }
                    self.server.drain();
                    return Err(SendError::Io {
                        error: e,
                        sent: written > 0,
                    });
                }
            }
        }
    }

    /// Read one reply of a pipeline sent with [`send_payload`](Self::send_payload).
    /// `ERROR`/`CLIENT_ERROR`/`SERVER_ERROR` lines come back as
    /// `Err(Rejected | Server)` with the stream still in step; any other
    /// error leaves it unusable (the connection is dropped).
    pub(crate) fn receive(
        &mut self,
        deadline: Instant,
    ) -> Result<MetaCommandResult, memcache::exp::Error> {
        let conn = match self.armed(deadline) {
            Ok(conn) => conn,
            Err(_) => return Err(io::Error::from(io::ErrorKind::NotConnected).into()),
        };
        let received = conn.meta.receive().and_then(parse_meta_result);
        self.pooled = false;
        if let Err(e) = &received
            && !matches!(
                e,
                memcache::exp::Error::Server(_) | memcache::exp::Error::Rejected(_)
            )
        {
            self.discard();
            self.server.drain();
        }
        received
    }

    /// The server's address.
    pub(crate) fn server_addr(&self) -> &str {
        &self.server.addr
    }

    /// The configured exchange timeout.
    pub(crate) fn io_timeout(&self) -> Duration {
        self.config.io_timeout
    }

    /// Drop the connection instead of returning it to the pool.
    pub(crate) fn discard(&mut self) {
        self.conn = None;
        self.pooled = false;
    }

    pub(crate) fn map_error(&self, key: &Key, error: memcache::exp::Error, sent: bool) -> Error {
        use memcache::exp::Error as E;
        let server = self.server.addr.clone();
        match error {
            E::Io(e) if sent => Error::Ambiguous {
                key: key.display(),
                server,
                reason: if is_timeout(&e) {
                    format!("no reply within {:?}", self.config.io_timeout)
                } else {
                    e.to_string()
                },
            },
            E::Timeout { .. } if sent => Error::Ambiguous {
                key: key.display(),
                server,
                reason: format!("no reply within {:?}", self.config.io_timeout),
            },
            E::Io(e) if is_timeout(&e) => Error::Timeout {
                server,
                after: self.config.io_timeout,
            },
            E::Timeout { .. } => Error::Timeout {
                server,
                after: self.config.io_timeout,
            },
            E::Io(source) => Error::Io { server, source },
            E::Server(message) => {
                // memcached words these differently per command: "out of
                // memory storing object" (ms), "Out of memory allocating new
                // item" (ma creating a counter).
                let lower = message.to_ascii_lowercase();
                if lower.contains("too large") {
                    Error::ValueTooLarge {
                        key: key.display(),
                        size: 0,
                        limit: self.config.item_size_limit,
                    }
                } else if lower.contains("out of memory") {
                    Error::OutOfMemory { key: key.display() }
                } else {
                    Error::Server { server, message }
                }
            }
            E::Rejected(message) if message.contains("non-numeric") => {
                Error::NonNumeric { key: key.display() }
            }
            E::Rejected(message) => Error::Protocol {
                server,
                message: format!("the server rejected a command: {message}"),
            },
            E::Usage(message) => Error::InvalidArgument(message.to_string()),
            E::Ambiguous { source, .. } => Error::Ambiguous {
                key: key.display(),
                server,
                reason: source.to_string(),
            },
            other => Error::Protocol {
                server,
                message: other.to_string(),
            },
        }
    }
}

impl Drop for Session<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.server.put_back(conn, self.config);
        }
    }
}

/// Why [`Session::send_payload`] failed.
pub(crate) enum SendError {
    /// No connection could be made (nothing was sent).
    Dial(Error),
    /// Writing failed; `sent` if some bytes had left.
    Io { error: io::Error, sent: bool },
}

pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

fn is_transport(error: &memcache::exp::Error) -> bool {
    matches!(error, memcache::exp::Error::Io(e) if !is_timeout(e))
}

/// How long a dial may take by default, and each exchange.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: Duration = Duration::from_secs(1);

    #[test]
    fn an_exptime_is_the_servers_clock_rounded_up_plus_the_ttl() {
        let t0 = Instant::now();
        let clock = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        assert_eq!(clock.exptime_at(Ttl::Never, t0), 0);
        assert_eq!(clock.exptime_at(Ttl::secs(5), t0), 1_800_000_005);
        // Any part of a second may hold a tick of the server's clock.
        let later = t0 + Duration::from_millis(2_001);
        assert_eq!(clock.exptime_at(Ttl::secs(5), later), 1_800_000_008);
        assert_eq!(clock.exptime_at(Ttl::secs(5), t0 + 2 * SEC), 1_800_000_007);
        // 40 days stays 40 days, and the i32 limit of the token holds.
        assert_eq!(
            clock.exptime_at(Ttl::secs(40 * 86_400), t0),
            1_800_000_000 + 40 * 86_400
        );
        assert_eq!(clock.exptime_at(Ttl::secs(u32::MAX), t0), i32::MAX as u32);
    }

    #[test]
    fn a_stale_clock_sample_never_lowers_the_estimate() {
        let server = Server::new("127.0.0.1:1".into(), Vec::new());
        let t0 = Instant::now();
        let fresh = ServerClock {
            secs: 1_800_000_000,
            sent: t0,
        };
        server.learn_clock(Some(fresh));
        // A handshake answered 5 s later by a server that had been frozen
        // for those 5 s reads the clock of before the pause.
        let stale = ServerClock {
            secs: 1_800_000_000,
            sent: t0 + 5 * SEC,
        };
        server.learn_clock(Some(stale));
        let kept = server.clock.lock().unwrap();
        assert_eq!(kept.upper_at(t0 + 5 * SEC), 1_800_000_005);
        // A sample that puts the clock higher replaces it.
        let ahead = ServerClock {
            secs: 1_800_000_007,
            sent: t0 + 5 * SEC,
        };
        server.learn_clock(Some(ahead));
        assert_eq!(server.clock.lock().unwrap().secs, 1_800_000_007);
        // No sample (a server without `time` in its stats) changes nothing.
        server.learn_clock(None);
        assert_eq!(server.clock.lock().unwrap().secs, 1_800_000_007);
    }
}
