//! How a connection reaches its server: plain TCP, a unix socket
//! (`unix:/path`), or TLS over TCP (rustls), and memcached's ASCII
//! authentication (`-Y`) once connected.
//!
//! Both backends dial through here ([`Stream::connect`]), so TLS, unix
//! sockets and credentials mean the same on the meta-protocol store and on
//! mcds-text's direct connections, and are configured the same way
//! ([`Security`]: a [`TlsOptions`] and [`Credentials`]).
//!
//! * **TLS** verifies the server's certificate against a CA file
//!   ([`TlsOptions::ca_file`]) or, without one, the system's trust store,
//!   and checks it names the server ([`TlsOptions::server_name`], by default
//!   the host of the server's address). A client certificate is optional
//!   (memcached's `ssl_verify_mode`). Verification can only be switched off
//!   by [`TlsOptions::danger_accept_invalid_certs`], which prints a warning
//!   on standard error each time a store is built with it.
//! * **ASCII auth** (`memcached -Y <authfile>`) is a `set` whose value is
//!   `<user> <password>`, sent once per connection before anything else,
//!   already expired so that a server without `-Y` keeps nothing of it.
//!   The password is never part of a message, a `Debug` output or a log.
//! * **Failures that retrying cannot fix** (refused credentials, a
//!   certificate that does not verify, a server that asks for credentials
//!   none were given for) are [`io::ErrorKind::PermissionDenied`] with a
//!   message saying what to change; the server is then left alone for the
//!   longest backoff, so a wrong password is not a storm of redials.

mod credentials;
mod endpoint;
mod tls;

pub use credentials::{
    Credentials, PASSWORD_VAR, UNAUTHENTICATED, USERNAME_VAR, needs_credentials,
};
pub use endpoint::{Endpoint, resolve_servers};
pub use tls::TlsOptions;
use tls::*;

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use mcds_core::Result;
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, StreamOwned};

/// The send buffer (`SO_SNDBUF`) every connection asks for. The kernel
/// grants at most its own limit (Linux: `net.core.wmem_max`, 208 KiB by
/// default, reported doubled); what it grants bounds the requests of one
/// write ([`request_budget`]).
pub const SEND_BUFFER: usize = 1 << 20;

/// The least [`request_budget`]: what a socket takes on any system.
pub const MIN_REQUEST_BUDGET: usize = 32 * 1024;

/// The most [`request_budget`]: past it a batch's replies wait long
/// behind its requests for little gain.
pub const MAX_REQUEST_BUDGET: usize = 256 * 1024;

/// How many request bytes one pipelined write may carry, so that it never
/// waits on the server: half the send buffer the kernel grants a socket
/// that asks for [`SEND_BUFFER`] (Linux reports twice what it grants),
/// between [`MIN_REQUEST_BUDGET`] and [`MAX_REQUEST_BUDGET`]; 208 KiB on a
/// default Linux.
///
/// What the cap is for: a batch is written whole before any reply is
/// read, and memcached stops reading a connection while its replies
/// cannot be sent. A batch of `mg`s for large values can fill both
/// directions: the server waits for the client to read, the client for
/// the server to take the rest of its requests. A write that fits the
/// client's own send buffer always completes, whatever the server does;
/// every connection asks for [`SEND_BUFFER`] to make that buffer known.
/// Computed once per process (one unconnected socket).
pub fn request_budget() -> usize {
    static BUDGET: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *BUDGET.get_or_init(|| {
        let granted = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None)
            .and_then(|s| {
                s.set_send_buffer_size(SEND_BUFFER)?;
                s.send_buffer_size()
            })
            .unwrap_or(0);
        (granted / 2).clamp(MIN_REQUEST_BUDGET, MAX_REQUEST_BUDGET)
    })
}

/// Ask the kernel for [`SEND_BUFFER`] on `socket` (see
/// [`request_budget`]); a refusal leaves the system's default, which the
/// budget's floor fits.
fn ask_send_buffer(socket: socket2::SockRef<'_>) {
    let _ = socket.set_send_buffer_size(SEND_BUFFER);
}

/// How connections to the servers are secured: TLS and credentials, both
/// optional. Built once per store, shared by its connections.
#[derive(Clone, Default)]
pub struct Security {
    tls: Option<TlsConnector>,
    credentials: Option<Credentials>,
}

impl fmt::Debug for Security {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Security")
            .field("tls", &self.tls.is_some())
            .field("credentials", &self.credentials)
            .finish()
    }
}

impl Security {
    /// Plain connections, with optional TLS and credentials. TLS files are
    /// read now (see [`TlsOptions`]).
    pub fn new(tls: Option<&TlsOptions>, credentials: Option<Credentials>) -> Result<Security> {
        Ok(Security {
            tls: tls.map(TlsOptions::connector).transpose()?,
            credentials,
        })
    }

    /// Whether connections use TLS.
    pub fn tls(&self) -> bool {
        self.tls.is_some()
    }
}

/// An open connection to a server, whichever way it was reached.
///
/// Reads and writes block until the stream's deadline
/// ([`set_deadline`](Stream::set_deadline)); past it they fail with
/// [`io::ErrorKind::TimedOut`]. Every system call on the socket is bounded
/// by it (a deadline-aware socket wrapper, also under rustls, which makes several per
/// record or flush), so a slow trickle of bytes cannot stretch an exchange.
pub struct Stream {
    inner: Inner,
    /// The server, as configured, for messages.
    server: String,
}

/// A socket whose every `read` and `write` is bounded by a deadline, and
/// which counts the bytes that left it.
///
/// The deadline is enforced with the socket's timeouts, re-armed lazily: a
/// `setsockopt` only when the time left has become shorter than the armed
/// timeout by more than [`SLACK`] (and a call that timed out before the
/// deadline, armed shorter than the time left, is re-armed and retried), so
/// back-to-back exchanges with the same timeout cost no system call for it,
/// and a deadline is overshot by at most [`SLACK`].
struct DeadlineSock<S> {
    sock: S,
    deadline: Instant,
    read_armed: Option<Duration>,
    write_armed: Option<Duration>,
    /// A clock reading the caller took just before this socket's next
    /// read or write ([`Stream::set_deadline_at`]): that one call's arm
    /// uses it instead of reading the clock again. Cleared by the call.
    primed: Option<Instant>,
    /// The clock reading of the last read or write's arm (a moment before
    /// that call began): [`Stream::last_clock`].
    checked: Instant,
    /// Bytes the socket took: what may have reached the server.
    sent: u64,
    /// The socket is in non-blocking mode ([`Stream::set_async_mode`] put
    /// it there for an async driver). A blocking read or write puts it
    /// back first: on a non-blocking socket its `WouldBlock` would read as
    /// a timeout.
    nonblocking: bool,
}

impl<S: AsFd> DeadlineSock<S> {
    fn new(sock: S, deadline: Instant) -> DeadlineSock<S> {
        DeadlineSock {
            sock,
            deadline,
            read_armed: None,
            write_armed: None,
            primed: None,
            checked: Instant::now(),
            sent: 0,
            nonblocking: false,
        }
    }

    /// Put the socket in blocking (`false`) or non-blocking mode, if it is
    /// not in it: one `fcntl` when the mode changes, none otherwise.
    fn mode(&mut self, nonblocking: bool) -> io::Result<()> {
        if self.nonblocking != nonblocking {
            socket2::SockRef::from(&self.sock).set_nonblocking(nonblocking)?;
            self.nonblocking = nonblocking;
        }
        Ok(())
    }

    /// [`Stream::set_async_mode`].
    fn async_mode(&mut self, write_at: Option<Instant>) -> io::Result<()> {
        self.mode(true)?;
        if let Some(at) = write_at {
            self.checked = at;
        }
        Ok(())
    }

    /// Arm the read (`read`) or write timeout for the time left until the
    /// deadline, unless what is armed is within [`SLACK`] of it or shorter.
    fn arm(&mut self, read: bool) -> io::Result<()> {
        let now = self.primed.take().unwrap_or_else(Instant::now);
        self.checked = now;
        let left = self.deadline.saturating_duration_since(now);
        if left.is_zero() {
            return Err(io::Error::from(io::ErrorKind::TimedOut));
        }
        let armed = if read {
            &mut self.read_armed
        } else {
            &mut self.write_armed
        };
        if armed.is_some_and(|a| a <= left + SLACK) {
            return Ok(());
        }
        let socket = socket2::SockRef::from(&self.sock);
        if read {
            socket.set_read_timeout(Some(left))?;
        } else {
            socket.set_write_timeout(Some(left))?;
        }
        *armed = Some(left);
        Ok(())
    }

    /// One blocking system call under the deadline: armed first, retried
    /// when the socket timed out before the deadline.
    fn timed<T>(
        &mut self,
        read: bool,
        mut op: impl FnMut(&mut S) -> io::Result<T>,
    ) -> io::Result<T> {
        self.mode(false)?;
        loop {
            self.arm(read)?;
            match op(&mut self.sock) {
                Err(e) if is_timeout(&e) => {
                    if Instant::now() + SLACK >= self.deadline {
                        return Err(io::Error::new(io::ErrorKind::TimedOut, e));
                    }
                    // Armed shorter than the time left: arm again.
                    if read {
                        self.read_armed = None;
                    } else {
                        self.write_armed = None;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return other,
            }
        }
    }
}

impl<S: AsFd + Read> Read for DeadlineSock<S> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.timed(true, |s| s.read(buf))
    }
}

impl<S: AsFd + Write> Write for DeadlineSock<S> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.timed(false, |s| s.write(buf))?;
        self.sent += n as u64;
        Ok(n)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        let n = self.timed(false, |s| s.write_vectored(bufs))?;
        self.sent += n as u64;
        Ok(n)
    }

    /// Sockets buffer nothing of their own: nothing to do, whatever the
    /// deadline (a write that put every byte on the wire must not be
    /// followed by a flush that fails and makes the request look unsent).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// How far past its deadline a read or write may block (see [`Stream`]).
pub const SLACK: Duration = Duration::from_millis(5);

/// A second handle on a stream's socket ([`Stream::try_clone_socket`]).
#[derive(Debug)]
pub enum Socket {
    /// A TCP connection's.
    Tcp(TcpStream),
    /// A unix socket's.
    Unix(UnixStream),
}

enum Inner {
    Tcp(DeadlineSock<TcpStream>),
    Unix(DeadlineSock<UnixStream>),
    Tls(Box<StreamOwned<ClientConnection, DeadlineSock<TcpStream>>>),
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.inner {
            Inner::Tcp(_) => "Stream::Tcp",
            Inner::Unix(_) => "Stream::Unix",
            Inner::Tls(_) => "Stream::Tls",
        })
    }
}

/// A failure that retrying cannot fix (see the module docs).
fn denied(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::PermissionDenied, message)
}

impl Stream {
    /// Connect to `endpoint` (each of its addresses in turn, each within
    /// `connect_timeout`), then run the TLS handshake and the ASCII
    /// authentication that `security` asks for, within `io_timeout`. The
    /// stream's timeouts are left at `io_timeout`. `server` names the server
    /// in messages.
    pub fn connect(
        server: &str,
        endpoint: &Endpoint,
        security: &Security,
        connect_timeout: Duration,
        io_timeout: Duration,
    ) -> io::Result<Stream> {
        let inner = match endpoint {
            Endpoint::Unix(path) => {
                if security.tls.is_some() {
                    return Err(io::Error::new(
                        io::ErrorKind::Unsupported,
                        "TLS over a unix socket is not supported: a unix socket is local already; drop tls for unix: servers",
                    ));
                }
                let socket = UnixStream::connect(path).map_err(|e| {
                    io::Error::new(
                        e.kind(),
                        format!("cannot connect to the unix socket {}: {e}", path.display()),
                    )
                })?;
                ask_send_buffer(socket2::SockRef::from(&socket));
                Inner::Unix(DeadlineSock::new(socket, Instant::now() + io_timeout))
            }
            Endpoint::Tcp { host, addrs } => {
                let mut last =
                    io::Error::new(io::ErrorKind::AddrNotAvailable, "no address to dial");
                let mut socket = None;
                for addr in addrs {
                    match TcpStream::connect_timeout(addr, connect_timeout) {
                        Ok(s) => {
                            socket = Some(s);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                let socket = socket.ok_or(last)?;
                socket.set_nodelay(true)?;
                ask_send_buffer(socket2::SockRef::from(&socket));
                match &security.tls {
                    None => Inner::Tcp(DeadlineSock::new(socket, Instant::now() + io_timeout)),
                    Some(tls) => Stream::tls(server, host, socket, tls, io_timeout)?,
                }
            }
        };
        let mut stream = Stream {
            inner,
            server: server.to_string(),
        };
        if let Some(credentials) = &security.credentials {
            stream.authenticate(server, credentials)?;
        }
        Ok(stream)
    }

    fn tls(
        server: &str,
        host: &str,
        socket: TcpStream,
        tls: &TlsConnector,
        io_timeout: Duration,
    ) -> io::Result<Inner> {
        let name = match &tls.server_name {
            Some(name) => name.clone(),
            None => match host.parse::<IpAddr>() {
                Ok(ip) => ServerName::IpAddress(ip.into()),
                Err(_) => ServerName::try_from(host.to_string()).map_err(|e| {
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{host:?} cannot be a TLS server name ({e}); set server_name"),
                    )
                })?,
            },
        };
        let mut conn = ClientConnection::new(tls.config.clone(), name)
            .map_err(|e| io::Error::other(format!("cannot start TLS to {server}: {e}")))?;
        // Every write is taken whole (see `write_tls_records`): a payload is
        // at most one batch, bounded by the item size limit per command.
        conn.set_buffer_limit(None);
        let mut socket = DeadlineSock::new(socket, Instant::now() + io_timeout);
        while conn.is_handshaking() {
            if let Err(e) = conn.complete_io(&mut socket) {
                return Err(tls_error(server, e));
            }
        }
        Ok(Inner::Tls(Box::new(StreamOwned::new(conn, socket))))
    }

    /// memcached's ASCII auth: `set` with `<user> <password>` as the value
    /// (the key is ignored), answered `STORED` or `CLIENT_ERROR
    /// authentication failure`. The item is sent already expired
    /// (exptime -1): a server without `-Y` stores it like any `set`, and an
    /// expired item is never served, so the password does not sit in that
    /// server's cache for anyone to `get`.
    fn authenticate(&mut self, server: &str, credentials: &Credentials) -> io::Result<()> {
        let secret = format!("{} {}", credentials.user, credentials.password);
        let mut request = format!("set mcds_auth 0 -1 {}\r\n", secret.len()).into_bytes();
        request.extend_from_slice(secret.as_bytes());
        request.extend_from_slice(b"\r\n");
        self.write_all(&request)?;
        self.flush()?;
        let reply = read_short_line(self)?;
        match reply.as_str() {
            "STORED" => Ok(()),
            "CLIENT_ERROR authentication failure" => Err(denied(format!(
                "memcached at {server} refused the credentials of user {:?} (ASCII auth, -Y): check the user and password (user:password@ in the URL, or {USERNAME_VAR}/{PASSWORD_VAR})",
                credentials.user
            ))),
            other => Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "unexpected reply to memcached's ASCII authentication from {server}: {other:?} (does the server run with -Y? TLS or a proxy in between?)"
                ),
            )),
        }
    }

    /// Bound every following read and write by `deadline` (see [`Stream`]:
    /// no system call until a read or write needs it).
    pub fn set_deadline(&mut self, deadline: Instant) {
        self.bound(deadline, None);
    }

    /// [`set_deadline`](Self::set_deadline), for a caller that read the
    /// clock (`now`) just before and is about to read or write: that
    /// call measures the time left from `now` and does not read the clock
    /// again (a request's path reads it once, not once a step). Only the
    /// next system call uses `now`; every later one reads the clock.
    pub fn set_deadline_at(&mut self, deadline: Instant, now: Instant) {
        self.bound(deadline, Some(now));
    }

    /// When the last read or write began, or a moment before: the clock
    /// reading it was armed with (for a caller that wants to know how
    /// long the connection has been unused, without reading the clock).
    pub fn last_clock(&self) -> Instant {
        match &self.inner {
            Inner::Tcp(s) => s.checked,
            Inner::Unix(s) => s.checked,
            Inner::Tls(s) => s.sock.checked,
        }
    }

    fn bound(&mut self, deadline: Instant, primed: Option<Instant>) {
        let (slot, prime) = match &mut self.inner {
            Inner::Tcp(s) => (&mut s.deadline, &mut s.primed),
            Inner::Unix(s) => (&mut s.deadline, &mut s.primed),
            Inner::Tls(s) => (&mut s.sock.deadline, &mut s.sock.primed),
        };
        *slot = deadline;
        *prime = primed;
    }

    /// How many bytes the socket has taken so far (under TLS, record
    /// bytes): a write that failed with this unchanged sent nothing.
    #[inline]
    pub fn sent(&self) -> u64 {
        match &self.inner {
            Inner::Tcp(s) => s.sent,
            Inner::Unix(s) => s.sent,
            Inner::Tls(s) => s.sock.sent,
        }
    }

    /// Write all of `payload` and flush, within the current deadline; the
    /// outcome and how many bytes of it reached the socket (failure or
    /// not: bytes that left cannot be taken back, so a caller that saw
    /// some leave must not send the request again). Counted at the socket,
    /// not at the TLS layer, which queues everything.
    #[inline]
    pub fn send_all(&mut self, payload: &[u8]) -> (io::Result<()>, u64) {
        let before = self.sent();
        let mut written = 0;
        let outcome = (|| {
            while written < payload.len() {
                match self.write(&payload[written..]) {
                    Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
                    Ok(n) => written += n,
                    Err(e) => return Err(e),
                }
            }
            self.flush()
        })();
        (outcome, self.sent() - before)
    }

    /// Whether the stream is TLS (no [`try_clone_socket`](Self::try_clone_socket)).
    pub fn is_tls(&self) -> bool {
        matches!(self.inner, Inner::Tls(_))
    }

    /// A second handle on the stream's socket (a `dup` of its descriptor),
    /// for an async runtime's reactor to watch and to read and write
    /// through while this stream's own blocking calls are not in use (see
    /// [`set_async_mode`](Self::set_async_mode)); `None` under TLS, whose
    /// records are read and written through rustls.
    pub fn try_clone_socket(&self) -> io::Result<Option<Socket>> {
        Ok(match &self.inner {
            Inner::Tcp(s) => Some(Socket::Tcp(s.sock.try_clone()?)),
            Inner::Unix(s) => Some(Socket::Unix(s.sock.try_clone()?)),
            Inner::Tls(_) => None,
        })
    }

    /// Put the socket in non-blocking mode for reads and writes made
    /// through a [`try_clone_socket`](Self::try_clone_socket) handle (the
    /// mode belongs to the socket, so both handles see it). One `fcntl`
    /// when the mode changes, none otherwise; this stream's next blocking
    /// read or write puts it back. `write_at`: a write is about to begin
    /// at that time, which becomes the [`last_clock`](Self::last_clock).
    /// Under TLS, `Unsupported`.
    pub fn set_async_mode(&mut self, write_at: Option<Instant>) -> io::Result<()> {
        match &mut self.inner {
            Inner::Tcp(s) => s.async_mode(write_at),
            Inner::Unix(s) => s.async_mode(write_at),
            Inner::Tls(_) => Err(io::Error::from(io::ErrorKind::Unsupported)),
        }
    }

    /// The socket under the stream.
    fn socket(&self) -> socket2::SockRef<'_> {
        match &self.inner {
            Inner::Tcp(s) => socket2::SockRef::from(&s.sock),
            Inner::Unix(s) => socket2::SockRef::from(&s.sock),
            Inner::Tls(s) => socket2::SockRef::from(&s.sock.sock),
        }
    }

    /// Whether an idle connection is still usable: no stray bytes and no
    /// EOF pending (a restarted server closes its connections). One
    /// `recv(MSG_PEEK | MSG_DONTWAIT)` on the socket. Under TLS, bytes may
    /// be pending that carry no data (a session ticket the server sent
    /// after the handshake): they are read and processed without blocking,
    /// and only application data, a close or an error count as dead.
    pub fn is_alive(&mut self) -> bool {
        let pending = {
            let socket = self.socket();
            let mut byte = [std::mem::MaybeUninit::<u8>::uninit(); 1];
            match socket.recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => false,
                Err(_) | Ok(0) => return false,
                Ok(_) => true,
            }
        };
        match &mut self.inner {
            Inner::Tls(s) => !pending || tls_idle_bytes_are_harmless(s),
            _ => !pending,
        }
    }
}

/// Read one short reply line (up to 1 KiB, without its `\r\n`) byte by byte
/// (nothing past it is taken from the stream), within the stream's deadline.
fn read_short_line(stream: &mut Stream) -> io::Result<String> {
    let mut line = Vec::with_capacity(40);
    let mut byte = [0u8; 1];
    while line.len() < 1024 {
        match stream.read(&mut byte)? {
            0 => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection during authentication",
                ));
            }
            _ if byte[0] == b'\n' => {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(String::from_utf8_lossy(&line).into_owned());
            }
            _ => line.push(byte[0]),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidData,
        "a reply line over 1 KiB during authentication",
    ))
}

/// Whether an I/O error is a timeout: a socket timeout (`SO_RCVTIMEO` /
/// `SO_SNDTIMEO`) surfaces as `WouldBlock` on most platforms.
pub fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    )
}

/// Whether a dial error is one retrying cannot fix (refused credentials, a
/// certificate that does not verify): the server is then left alone for the
/// longest backoff.
pub fn is_permanent(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::PermissionDenied
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Tcp(s) => s.read(buf),
            Inner::Unix(s) => s.read(buf),
            Inner::Tls(s) => match s.read(buf) {
                // Under TLS 1.3 a server that checks client certificates
                // refuses one after the client's side of the handshake is
                // done: its alert arrives with the first reply.
                Err(e) if is_tls_error(&e) => Err(tls_error(&self.server, e)),
                other => other,
            },
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.inner {
            Inner::Tcp(s) => s.write(buf),
            Inner::Unix(s) => s.write(buf),
            Inner::Tls(s) => {
                // Taken whole, in records that end where commands end, then
                // sent as `flush` sends (under the deadline). The bytes
                // count as written once queued: if sending fails, the
                // caller's `flush` (every writer here flushes) reports it;
                // what reached the socket is `sent`.
                write_tls_records(&mut s.conn, buf)?;
                let _ = s.flush();
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.inner {
            Inner::Tcp(_) | Inner::Unix(_) => Ok(()),
            Inner::Tls(s) if !s.conn.wants_write() => Ok(()),
            Inner::Tls(s) => s.flush(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_parse() {
        assert_eq!(
            Endpoint::resolve("unix:/tmp/m.sock").unwrap(),
            Endpoint::Unix("/tmp/m.sock".into())
        );
        assert!(Endpoint::resolve("unix:").is_err());
        match Endpoint::resolve("127.0.0.1:11211").unwrap() {
            Endpoint::Tcp { host, addrs } => {
                assert_eq!(host, "127.0.0.1");
                assert_eq!(addrs.len(), 1);
            }
            other => panic!("{other:?}"),
        }
        match Endpoint::resolve("[::1]:11211").unwrap() {
            Endpoint::Tcp { host, .. } => assert_eq!(host, "::1"),
            other => panic!("{other:?}"),
        }
        let e = Endpoint::resolve("nohostport").unwrap_err().to_string();
        assert!(e.contains("unix:/path"), "{e}");
    }

    #[test]
    fn every_command_ends_a_tls_record() {
        let buf = b"set a 0 0 3\r\nabc\r\ngets a\r\nms b 2 T0\r\nxy\r\nmg b v\r\ncas c 0 0 1 7\r\nz\r\nincr n 1\r\n";
        let ends = command_ends(buf);
        let pieces: Vec<&[u8]> = std::iter::once(0)
            .chain(ends.iter().copied())
            .zip(ends.iter().copied())
            .map(|(a, b)| &buf[a..b])
            .collect();
        assert_eq!(
            pieces,
            [
                &b"set a 0 0 3\r\nabc\r\n"[..],
                b"gets a\r\n",
                b"ms b 2 T0\r\nxy\r\n",
                b"mg b v\r\n",
                b"cas c 0 0 1 7\r\nz\r\n",
                b"incr n 1\r\n",
            ]
        );
        // Garbage, a truncated block, a line without its end: no panic,
        // and nothing past what can be read as commands is cut.
        assert!(command_ends(b"set a 0 0 99\r\nabc").is_empty());
        assert!(command_ends(b"set a 0 0 x\r\n").is_empty());
        assert_eq!(command_ends(b"get a"), Vec::<usize>::new());
        assert_eq!(command_ends(b"\n\n"), vec![1, 2]);
        assert!(command_ends(b"set a 0 0 18446744073709551615\r\n").is_empty());
    }

    #[test]
    fn credentials_never_show_the_password() {
        let c = Credentials::new("alice", "hunter2").unwrap();
        assert!(!format!("{c:?}").contains("hunter2"));
        let e = Credentials::new("alice", "bad\npassword").unwrap_err();
        assert!(!e.to_string().contains("bad"), "{e}");
        let e = Credentials::new("alice", "bad password").unwrap_err();
        assert!(!e.to_string().contains("bad"), "{e}");
        assert!(Credentials::new("a b", "x").is_err());
        assert!(Credentials::new("a:b", "x").is_err());
        assert!(Credentials::new("", "x").is_err());
        assert!(Credentials::new("a", "").is_err());
        let s = Security::new(None, Some(c)).unwrap();
        assert!(!format!("{s:?}").contains("hunter2"));
    }

    #[test]
    fn tls_files_are_read_when_the_store_is_built() {
        let e = Security::new(
            Some(&TlsOptions::new().ca_file("/nonexistent/ca.pem")),
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("/nonexistent/ca.pem") && e.contains("CA file"),
            "{e}"
        );
        let e = Security::new(Some(&TlsOptions::new().server_name("not a name!")), None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("server name"), "{e}");
    }
}
