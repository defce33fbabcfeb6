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

use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcds_core::{Error, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{AlertDescription, ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// Where a server listens: `host:port` (resolved when the store is built)
/// or a unix socket's path (`unix:/path`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A TCP server: the host as written (for TLS's server name) and every
    /// address it resolved to, tried in order.
    Tcp {
        /// The host part of `host:port`, without brackets for IPv6.
        host: String,
        /// What it resolved to.
        addrs: Vec<SocketAddr>,
    },
    /// A unix-domain stream socket (memcached's `-s <path>`).
    Unix(PathBuf),
}

impl Endpoint {
    /// Parse and resolve a server as written in a configuration:
    /// `unix:/path/to/socket`, or `host:port` (`127.0.0.1:11211`,
    /// `cache.internal:11211`, `[::1]:11211`).
    pub fn resolve(server: &str) -> Result<Endpoint> {
        let server = server.trim();
        if let Some(path) = server.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(Error::InvalidArgument(
                    "unix: needs the socket's path, e.g. unix:/run/memcached/memcached.sock".into(),
                ));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        let addrs: Vec<SocketAddr> = server
            .to_socket_addrs()
            .map_err(|e| {
                // A resolver that could not answer now (glibc's EAI_AGAIN,
                // "Temporary failure in name resolution") may answer on a
                // retry: an I/O error, like a refused connection. Any
                // other failure (no such name, a bad port) is the address.
                if e.to_string().contains("Temporary failure") {
                    return Error::Io {
                        server: server.to_string(),
                        source: e,
                    };
                }
                Error::InvalidArgument(format!(
                    "cannot resolve memcached server {server:?}: {e}; use host:port (e.g. 127.0.0.1:11211) or unix:/path/to/socket"
                ))
            })?
            .collect();
        if addrs.is_empty() {
            return Err(Error::InvalidArgument(format!(
                "memcached server {server:?} resolved to no address"
            )));
        }
        let host = match server.rsplit_once(':') {
            Some((host, _)) => host.trim_start_matches('[').trim_end_matches(']'),
            None => server,
        };
        Ok(Endpoint::Tcp {
            host: host.to_string(),
            addrs,
        })
    }
}

/// Resolve each server as written (`host:port` or `unix:/path`) into its
/// [`Endpoint`]; `tls`: refuse unix sockets (TLS is for `host:port` servers).
pub fn resolve_servers<I, S>(servers: I, tls: bool) -> Result<Vec<(String, Endpoint)>>
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    let mut list = Vec::new();
    for s in servers {
        let addr = s.as_ref().trim().to_string();
        let endpoint = Endpoint::resolve(&addr)?;
        if tls && matches!(endpoint, Endpoint::Unix(_)) {
            return Err(Error::InvalidArgument(format!(
                "{addr:?} is a unix socket: TLS is for host:port servers (a unix socket is local already); drop TLS or use host:port"
            )));
        }
        list.push((addr, endpoint));
    }
    if list.is_empty() {
        return Err(Error::InvalidArgument(
            "no memcached servers given; pass at least one host:port or unix:/path".into(),
        ));
    }
    Ok(list)
}

/// TLS settings for connections to memcached started with `-Z`.
///
/// Given to a backend's `Builder::tls` (`mcds_memcached::MemcachedStore`
/// or `mcds_text::TextStore`, which re-export this type):
///
/// ```
/// use mcds_net::TlsOptions;
///
/// let tls = TlsOptions::new()
///     .ca_file("/etc/memcached/ca.pem")
///     .server_name("cache.internal");
/// // MemcachedStore::builder().tls(tls).connect(["cache.internal:11211"])?
/// # let _ = tls;
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsOptions {
    ca_file: Option<PathBuf>,
    client_cert: Option<(PathBuf, PathBuf)>,
    server_name: Option<String>,
    accept_invalid_certs: bool,
}

impl TlsOptions {
    /// Verify servers against the system's trust store, by the host of each
    /// server's address.
    pub fn new() -> TlsOptions {
        TlsOptions::default()
    }

    /// Trust the CA certificates in this PEM file (instead of the system's
    /// trust store): the CA that signed memcached's `ssl_chain_cert`.
    pub fn ca_file(mut self, path: impl Into<PathBuf>) -> TlsOptions {
        self.ca_file = Some(path.into());
        self
    }

    /// Present this client certificate (PEM, with its chain) and private key
    /// (PEM: PKCS#8, PKCS#1 or SEC1), for a server that checks clients
    /// (memcached's `ssl_verify_mode` with `ssl_ca_cert`).
    pub fn client_cert(mut self, cert: impl Into<PathBuf>, key: impl Into<PathBuf>) -> TlsOptions {
        self.client_cert = Some((cert.into(), key.into()));
        self
    }

    /// The name the server's certificate must carry, for every server (by
    /// default each server's own host: its name, or its IP address).
    pub fn server_name(mut self, name: impl Into<String>) -> TlsOptions {
        self.server_name = Some(name.into());
        self
    }

    /// Accept any certificate: encryption without authentication, open to
    /// anyone who can intercept the connection. For tests and diagnosis
    /// only. Every store built with it prints a warning on standard error.
    pub fn danger_accept_invalid_certs(mut self) -> TlsOptions {
        self.accept_invalid_certs = true;
        self
    }

    /// Whether [`danger_accept_invalid_certs`](Self::danger_accept_invalid_certs) is set.
    pub fn accepts_invalid_certs(&self) -> bool {
        self.accept_invalid_certs
    }

    /// Build the client configuration: read the CA file (or the system's
    /// trust store) and the client certificate now, so a missing or
    /// unreadable file is an error when the store is built, not on its
    /// first operation.
    fn connector(&self) -> Result<TlsConnector> {
        let server_name = match &self.server_name {
            None => None,
            Some(name) => Some(server_name(name)?),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::Internal(format!("TLS protocol versions: {e}")))?;
        let builder = if self.accept_invalid_certs {
            eprintln!(
                "mcds: WARNING: TLS certificate verification is OFF (danger_accept_invalid_certs / tls_insecure): \
                 connections are encrypted but the server is not authenticated; never use this in production"
            );
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AcceptAnyCert(provider)))
        } else {
            builder.with_root_certificates(self.roots()?)
        };
        let mut config = match &self.client_cert {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = read_certs(cert, "client certificate")?;
                let key = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    Error::InvalidArgument(format!(
                        "cannot read the TLS client key {}: {e}; give a PEM private key (PKCS#8, PKCS#1 or SEC1)",
                        key.display()
                    ))
                })?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    Error::InvalidArgument(format!(
                        "the TLS client certificate {} and its key do not go together: {e}",
                        cert.display()
                    ))
                })?
            }
        };
        // No session resumption: memcached (OpenSSL, no session id context)
        // answers a resumed handshake with an internal_error alert when it
        // checks client certificates. Connections are pooled, so the full
        // handshake is paid once per connection, not per operation.
        config.resumption = rustls::client::Resumption::disabled();
        Ok(TlsConnector {
            config: Arc::new(config),
            server_name,
        })
    }

    fn roots(&self) -> Result<RootCertStore> {
        let mut roots = RootCertStore::empty();
        match &self.ca_file {
            Some(path) => {
                for cert in read_certs(path, "CA file")? {
                    roots.add(cert).map_err(|e| {
                        Error::InvalidArgument(format!(
                            "the TLS CA file {} holds a certificate that cannot be a trust anchor: {e}",
                            path.display()
                        ))
                    })?;
                }
            }
            None => {
                let found = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(found.certs);
                if roots.is_empty() {
                    return Err(Error::InvalidArgument(
                        "no CA certificates found in the system's trust store; give the CA that signed memcached's certificate with ca_file".into(),
                    ));
                }
            }
        }
        Ok(roots)
    }
}

fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
    let bad = |e: &dyn fmt::Display| {
        Error::InvalidArgument(format!(
            "cannot read the TLS {what} {}: {e}; give a PEM file of certificates",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(&e))?
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| bad(&e))?;
    if certs.is_empty() {
        return Err(bad(&"no certificate in it"));
    }
    Ok(certs)
}

fn server_name(name: &str) -> Result<ServerName<'static>> {
    ServerName::try_from(name.to_string()).map_err(|e| {
        Error::InvalidArgument(format!(
            "invalid TLS server name {name:?}: {e}; give a DNS name or an IP address"
        ))
    })
}

/// A certificate "verifier" that accepts every certificate but still checks
/// the handshake's signatures (so the connection is at least encrypted to
/// whoever holds the key of the certificate shown).
#[derive(Debug)]
struct AcceptAnyCert(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AcceptAnyCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// A built TLS client configuration, shared by every connection of a store.
#[derive(Clone)]
struct TlsConnector {
    config: Arc<ClientConfig>,
    server_name: Option<ServerName<'static>>,
}

/// A user and password for memcached's ASCII authentication (`-Y`).
///
/// The password is kept out of every message and of `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    user: String,
    password: String,
}

impl fmt::Debug for Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<redacted>")
            .finish()
    }
}

/// The environment variables [`Credentials::from_env`] reads.
pub const USERNAME_VAR: &str = "MCDS_USERNAME";
/// See [`USERNAME_VAR`].
pub const PASSWORD_VAR: &str = "MCDS_PASSWORD";

impl Credentials {
    /// A user and password as listed in memcached's auth file
    /// (`user:password` lines). The user may not contain a space, a colon or
    /// a line break, the password no space or line break: memcached 1.6.18
    /// refuses a password with a space even when its auth file lists it.
    pub fn new(user: impl Into<String>, password: impl Into<String>) -> Result<Credentials> {
        let (user, password) = (user.into(), password.into());
        if user.is_empty() || user.contains([' ', ':', '\r', '\n', '\0']) {
            return Err(Error::InvalidArgument(format!(
                "invalid memcached user {user:?}: it must be non-empty, without spaces, colons or line breaks"
            )));
        }
        if password.is_empty() || password.contains([' ', '\r', '\n', '\0']) {
            return Err(Error::InvalidArgument(
                "invalid memcached password: it must be non-empty, without spaces or line breaks (memcached's ASCII auth cannot carry them; the password itself is not shown)".into(),
            ));
        }
        Ok(Credentials { user, password })
    }

    /// The credentials in `MCDS_USERNAME` and `MCDS_PASSWORD`, if both are
    /// set (`None` if neither is; an error if only one is, or either is
    /// invalid).
    pub fn from_env() -> Result<Option<Credentials>> {
        let user = std::env::var(USERNAME_VAR).ok();
        let password = std::env::var(PASSWORD_VAR).ok();
        match (user, password) {
            (None, None) => Ok(None),
            (Some(user), Some(password)) => Credentials::new(user, password).map(Some),
            _ => Err(Error::InvalidArgument(format!(
                "set both {USERNAME_VAR} and {PASSWORD_VAR} for memcached's authentication, or neither"
            ))),
        }
    }

    /// The user name.
    pub fn user(&self) -> &str {
        &self.user
    }
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
        }
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

/// Read what a TLS server sent to an idle connection, without blocking:
/// harmless if it was only TLS housekeeping (session tickets, key updates).
fn tls_idle_bytes_are_harmless(
    s: &mut StreamOwned<ClientConnection, DeadlineSock<TcpStream>>,
) -> bool {
    let StreamOwned { conn, sock } = s;
    let sock = &mut sock.sock;
    if sock.set_nonblocking(true).is_err() {
        return false;
    }
    let harmless = (|| loop {
        match conn.read_tls(sock) {
            Ok(0) => return false, // EOF
            Ok(_) => {
                let Ok(state) = conn.process_new_packets() else {
                    return false;
                };
                if state.plaintext_bytes_to_read() > 0 || state.peer_has_closed() {
                    return false;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
            Err(_) => return false,
        }
    })();
    sock.set_nonblocking(false).is_ok() && harmless
}

/// Queue `buf` (whole commands, as every caller writes) on a TLS
/// connection, each command (with its data block) in TLS records of its
/// own.
///
/// Why: memcached (1.6.18, checked) reads TLS with one `SSL_read` per
/// readiness event, into the space left in its read buffer, or for the
/// rest of a data block exactly the bytes left. When a record holds more
/// than that read takes, the rest stays decrypted inside OpenSSL, the
/// socket has nothing more to read, memcached waits for it, and the
/// pipelined commands in that rest are never answered (seen here with a
/// `gets` after a 20 KB `set`, and 3000 pipelined `incr`s). With one
/// command per record, every read takes whole records (a command is far
/// smaller than the 16 KiB buffer, which holds no partial command between
/// records), and a data block's last record ends with the block. Commands
/// are found by their text: a line, plus for storage commands (`set`,
/// `add`, `replace`, `append`, `prepend`, `cas`: the length is the fifth
/// word) and meta `ms` (the third) the data block; what cannot be read as
/// commands goes as one run.
fn write_tls_records(conn: &mut ClientConnection, buf: &[u8]) -> io::Result<()> {
    let mut start = 0;
    for end in command_ends(buf) {
        conn.writer().write_all(&buf[start..end])?;
        start = end;
    }
    if start < buf.len() {
        conn.writer().write_all(&buf[start..])?;
    }
    Ok(())
}

/// Where each command of `buf` ends (past its line, or past its data
/// block's `\r\n`), for [`write_tls_records`]. Stops at the first command
/// it cannot read.
fn command_ends(buf: &[u8]) -> Vec<usize> {
    let mut ends = Vec::new();
    let mut pos = 0;
    while let Some(nl) = buf[pos..].iter().position(|&b| b == b'\n') {
        let line_end = pos + nl + 1;
        let line = &buf[pos..pos + nl];
        let mut words = line
            .strip_suffix(b"\r")
            .unwrap_or(line)
            .split(|&b| b == b' ')
            .filter(|w| !w.is_empty());
        let length_word = match words.next() {
            Some(b"set" | b"add" | b"replace" | b"append" | b"prepend" | b"cas") => 3,
            Some(b"ms") => 1,
            _ => {
                ends.push(line_end);
                pos = line_end;
                continue;
            }
        };
        let Some(len) = words
            .nth(length_word)
            .and_then(|w| std::str::from_utf8(w).ok()?.parse::<usize>().ok())
        else {
            break;
        };
        let end = line_end.saturating_add(len).saturating_add(2);
        if end > buf.len() {
            break;
        }
        ends.push(end);
        pos = end;
    }
    ends
}

/// Whether `e` carries a rustls error (an alert, a bad record).
fn is_tls_error(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
}

/// A TLS failure (in the handshake, or a TLS 1.3 refusal that arrives with
/// the first reply), worded for the user: a certificate that does not
/// verify, or an alert refusing this client's certificate, is
/// [`io::ErrorKind::PermissionDenied`] (retrying will not help); a corrupt
/// record or any other alert is [`io::ErrorKind::InvalidData`] (retried
/// after the usual backoff); a timeout stays a timeout.
fn tls_error(server: &str, e: io::Error) -> io::Error {
    if matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        return e;
    }
    let tls = e
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>());
    match tls {
        Some(rustls::Error::InvalidCertificate(why)) => denied(format!(
            "the TLS certificate of memcached at {server} did not verify ({why:?}): give the CA that signed it (ca_file), or the name it was issued for (server_name)"
        )),
        // Alerts about certificates or access: the server refuses this
        // client as configured; retrying cannot fix it.
        Some(rustls::Error::AlertReceived(
            alert @ (AlertDescription::BadCertificate
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateRevoked
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnknownCA
            | AlertDescription::AccessDenied
            | AlertDescription::CertificateRequired
            | AlertDescription::HandshakeFailure),
        )) => denied(format!(
            "memcached at {server} refused the TLS handshake ({alert:?}): if it checks clients (ssl_verify_mode), give a client certificate it trusts (client_cert, client_key)"
        )),
        // A corrupt record is not a refusal: memcached over its connection
        // limit writes "ERROR Too many open connections" in clear text
        // before any TLS. Retrying can fix it.
        Some(other @ rustls::Error::InvalidMessage(_)) => io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "TLS with {server} failed: {other} (not TLS: does it run with -Z? memcached over its connection limit also answers in clear text)"
            ),
        ),
        // Anything else (an internal_error alert, say) may pass.
        Some(other) => io::Error::new(
            io::ErrorKind::InvalidData,
            format!("TLS with {server} failed: {other}"),
        ),
        None if e.kind() == io::ErrorKind::UnexpectedEof
            || e.kind() == io::ErrorKind::ConnectionReset =>
        {
            io::Error::new(
                e.kind(),
                format!(
                    "{server} closed the connection during the TLS handshake ({e}): does it run with -Z (TLS)?"
                ),
            )
        }
        None => io::Error::new(e.kind(), format!("TLS handshake with {server} failed: {e}")),
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

/// A server that wants credentials answers everything else with this line.
pub const UNAUTHENTICATED: &str = "CLIENT_ERROR unauthenticated";

/// The error for a server that answered [`UNAUTHENTICATED`].
pub fn needs_credentials(server: &str) -> io::Error {
    denied(format!(
        "memcached at {server} requires authentication (-Y): give a user and password (user:password@ in the URL, or {USERNAME_VAR}/{PASSWORD_VAR})"
    ))
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
