//! One connection: to a memcached server directly (with its handshake: the
//! version, the incarnation marker and a sample of the clock, one round
//! trip) or to a proxy (no handshake), and moving bytes over it within a
//! deadline, over whichever [`Stream`] reached the server (TCP, a unix
//! socket, TLS: mcds-memcached's transport).

use std::io::{self, BufReader};
use std::time::{Duration, Instant};

pub(crate) use mcds_net::transport::is_timeout;
use mcds_net::transport::{self, Stream};
use mcds_net::{INCARNATION_KEY, Version};

use crate::wire::{self, Expect, Line, ReadError, Resp};
use mcds_net::incarnation::{Incarnation, ServerClock};

/// One open connection.
pub(crate) struct Conn {
    reader: BufReader<Stream>,
    /// What the direct server's handshake found; `None` behind a proxy.
    pub(crate) incarnation: Option<Incarnation>,
}

/// A clock sample whose round trip took longer than this may have been read
/// by a server that had just resumed from a pause; it is read again.
const SLOW_SAMPLE: Duration = Duration::from_millis(250);

/// The longest incarnation marker read: any value someone stored under the
/// key works as a marker (only its hash is used).
const MAX_MARKER_LEN: usize = 1 << 30;

impl Conn {
    /// Set up a freshly connected `stream`; with `direct`, run the
    /// handshake (within `io_timeout`). `server` names it in messages.
    pub(crate) fn open(
        stream: Stream,
        io_timeout: Duration,
        direct: bool,
        server: &str,
    ) -> io::Result<Conn> {
        let mut conn = Conn {
            reader: BufReader::with_capacity(64 * 1024, stream),
            incarnation: None,
        };
        if direct {
            conn.incarnation = Some(conn.handshake(Instant::now() + io_timeout, server)?);
        }
        Ok(conn)
    }

    /// Whether a pooled connection is still usable: nothing buffered, and
    /// no stray bytes or EOF pending on the socket (a restarted server
    /// closes its connections).
    pub(crate) fn is_alive(&mut self) -> bool {
        self.reader.buffer().is_empty() && self.reader.get_mut().is_alive()
    }

    /// Write `payload` before `deadline`; also gives whether any byte left.
    pub(crate) fn write(&mut self, payload: &[u8], deadline: Instant) -> (io::Result<()>, bool) {
        let stream = self.reader.get_mut();
        stream.set_deadline(deadline);
        let (outcome, sent) = stream.send_all(payload);
        (outcome, sent > 0)
    }

    /// Read one reply of the shape `expect` before `deadline`.
    pub(crate) fn read(&mut self, expect: Expect, deadline: Instant) -> Result<Resp, ReadError> {
        self.reader.get_mut().set_deadline(deadline);
        wire::read_reply(&mut self.reader, expect)
    }

    /// The handshake of a direct connection, one round trip: `version`, a
    /// read of the incarnation marker (`gets`) and `stats` (for the
    /// server's clock). When the marker is missing (the first connection
    /// after a restart or a flush) this client creates it with `add` and
    /// reads it back; a client that loses that race reads the winner's.
    ///
    /// A proxy gives itself away here: twemproxy forwards `version` and
    /// `gets` to one of its servers but closes the connection on `stats`.
    fn handshake(&mut self, deadline: Instant, server: &str) -> io::Result<Incarnation> {
        let read_marker = format!("gets {INCARNATION_KEY}\r\n");
        let sent = Instant::now();
        self.send(
            format!("version\r\n{read_marker}stats\r\n").as_bytes(),
            deadline,
        )?;
        let line = self.handshake_line(deadline, "version")?;
        let text = String::from_utf8_lossy(&line).to_string();
        if text == transport::UNAUTHENTICATED {
            return Err(transport::needs_credentials(server));
        }
        if !text.starts_with("VERSION ") {
            return Err(invalid(format!(
                "unexpected reply to version: {} (is this a memcached server?)",
                wire::show(&line)
            )));
        }
        let version = Version::parse(&text);
        let mut marker = self.marker(deadline)?;
        let mut clock = self.clock(sent, deadline)?;
        if sent.elapsed() > SLOW_SAMPLE {
            let sent = Instant::now();
            self.send(b"stats\r\n", deadline)?;
            clock = self.clock(sent, deadline)?;
        }
        let incarnation = |token: &[u8], cas| Incarnation::new(version, token, cas, clock);
        for _ in 0..4 {
            if let Some((token, cas)) = marker {
                return self.finish(incarnation(&token, cas));
            }
            let token = mcds_core::random_token();
            let mut add = Vec::new();
            let key = mcds_core::Key::new(INCARNATION_KEY).map_err(|e| invalid(e.to_string()))?;
            wire::storage(&mut add, "add", &key, 0, token.as_bytes(), None);
            self.send(&add, deadline)?;
            match self.handshake_reply(Expect::Line, deadline, "the marker add")? {
                Resp::Line(Line::Stored | Line::NotStored) => {}
                Resp::Line(Line::ServerError(_)) => {
                    // Out of memory (-M): no marker can be stored. A mask of
                    // this connection's own keeps stale ids from matching
                    // (ids then only work on the connection that read them:
                    // spurious mismatches, never a false match). Whether CAS
                    // is on is read from the server's settings.
                    self.send(b"stats settings\r\n", deadline)?;
                    let mut cas = false;
                    self.stats(deadline, "stats settings", |name, value| {
                        cas |= name == "cas_enabled" && value == "yes";
                    })?;
                    return self.finish(incarnation(token.as_bytes(), cas));
                }
                other => {
                    return Err(invalid(format!(
                        "unexpected reply to the incarnation marker add: {other:?}"
                    )));
                }
            }
            // Stored by us or by another client: read it back (its CAS id
            // tells whether the server has CAS ids at all).
            self.send(read_marker.as_bytes(), deadline)?;
            marker = self.marker(deadline)?;
        }
        Err(invalid(
            "the incarnation marker kept disappearing between add and read".into(),
        ))
    }

    fn finish(&mut self, incarnation: Incarnation) -> io::Result<Incarnation> {
        if !self.reader.buffer().is_empty() {
            return Err(invalid(
                "the server sent more than the handshake asked for".into(),
            ));
        }
        Ok(incarnation)
    }

    fn send(&mut self, bytes: &[u8], deadline: Instant) -> io::Result<()> {
        self.write(bytes, deadline).0
    }

    fn handshake_reply(
        &mut self,
        expect: Expect,
        deadline: Instant,
        what: &str,
    ) -> io::Result<Resp> {
        self.read(expect, deadline).map_err(|e| match e {
            ReadError::Io(e) => proxy_hint(e, what),
            ReadError::Bad(m) => invalid(format!("in the reply to {what}: {m}")),
        })
    }

    fn handshake_line(&mut self, deadline: Instant, what: &str) -> io::Result<Vec<u8>> {
        self.reader.get_mut().set_deadline(deadline);
        wire::read_line(&mut self.reader).map_err(|e| match e {
            ReadError::Io(e) => proxy_hint(e, what),
            ReadError::Bad(m) => invalid(format!("in the reply to {what}: {m}")),
        })
    }

    /// The reply to `gets <marker>`: the token and whether its CAS id is
    /// not 0 (0: CAS disabled, `-C`), or `None` when the marker is missing.
    fn marker(&mut self, deadline: Instant) -> io::Result<Option<(Vec<u8>, bool)>> {
        match self.handshake_reply(Expect::Values(1), deadline, "the incarnation marker read")? {
            Resp::Values(values) => match values.into_iter().next() {
                None => Ok(None),
                Some(v)
                    if v.key == INCARNATION_KEY.as_bytes() && v.data.len() <= MAX_MARKER_LEN =>
                {
                    Ok(Some((v.data, v.cas.unwrap_or(0) != 0)))
                }
                Some(v) => Err(invalid(format!(
                    "the incarnation marker read answered for key {}",
                    wire::show(&v.key)
                ))),
            },
            Resp::Line(line) => Err(invalid(format!(
                "unexpected reply to the incarnation marker read: {line:?}"
            ))),
        }
    }

    /// Read a `stats` listing up to `END`, giving each `STAT` line's name
    /// and value to `each`. A connection closed or an error line here is a
    /// proxy's refusal (twemproxy has no `stats`).
    fn stats(
        &mut self,
        deadline: Instant,
        what: &str,
        mut each: impl FnMut(&str, &str),
    ) -> io::Result<()> {
        for _ in 0..2000 {
            let line = self.handshake_line(deadline, what)?;
            if line == b"END" {
                return Ok(());
            }
            let text = String::from_utf8_lossy(&line);
            let mut parts = text.splitn(3, ' ');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("STAT"), Some(name), Some(value)) => each(name, value),
                _ if wire::parse_line(&line).is_ok_and(|l| l.is_error()) => {
                    return Err(proxy_hint(
                        io::Error::other(format!("it answered {}", wire::show(&line))),
                        what,
                    ));
                }
                _ => {
                    return Err(invalid(format!(
                        "unexpected line in a {what} reply: {}",
                        wire::show(&line)
                    )));
                }
            }
        }
        Err(invalid(format!("a {what} reply did not end")))
    }

    /// The server's clock from a `stats` reply whose request was sent at
    /// `sent`.
    fn clock(&mut self, sent: Instant, deadline: Instant) -> io::Result<Option<ServerClock>> {
        let mut secs = None;
        self.stats(deadline, "stats", |name, value| {
            if name == "time" {
                secs = value.parse().ok();
            }
        })?;
        Ok(secs.map(|secs| ServerClock { secs, sent }))
    }
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// A direct handshake cut off at `what`: if the connection was closed (or
/// refused the command), say that a proxy does that.
fn proxy_hint(e: io::Error, what: &str) -> io::Error {
    if is_timeout(&e) {
        return e;
    }
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "the server closed the connection or refused a command during the direct-connection handshake (`version`, `gets` of the incarnation marker, `stats`; at the reply to `{what}`: {e}); a proxy such as twemproxy (nutcracker) does that, refusing `stats` — if this address is a proxy, connect with TextStore::builder().behind_proxy(true)"
        ),
    )
}
