//! TLS over TCP with rustls: the options ([`TlsOptions`]), the verified
//! client configuration built from them, and what the stream needs to
//! keep TLS records whole and idle connections honest.

use std::fmt;
use std::io::{self, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use mcds_core::{Error, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{AlertDescription, ClientConfig, ClientConnection, RootCertStore, StreamOwned};

use super::{DeadlineSock, denied};

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
    pub(super) fn connector(&self) -> Result<TlsConnector> {
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

pub(super) fn read_certs(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>> {
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

pub(super) fn server_name(name: &str) -> Result<ServerName<'static>> {
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
pub(super) struct AcceptAnyCert(Arc<rustls::crypto::CryptoProvider>);

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
pub(super) struct TlsConnector {
    pub(super) config: Arc<ClientConfig>,
    pub(super) server_name: Option<ServerName<'static>>,
}

/// Read what a TLS server sent to an idle connection, without blocking:
/// harmless if it was only TLS housekeeping (session tickets, key updates).
pub(super) fn tls_idle_bytes_are_harmless(
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
pub(super) fn write_tls_records(conn: &mut ClientConnection, buf: &[u8]) -> io::Result<()> {
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
pub(super) fn command_ends(buf: &[u8]) -> Vec<usize> {
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
pub(super) fn is_tls_error(e: &io::Error) -> bool {
    e.get_ref()
        .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some())
}

/// A TLS failure (in the handshake, or a TLS 1.3 refusal that arrives with
/// the first reply), worded for the user: a certificate that does not
/// verify, or an alert refusing this client's certificate, is
/// [`io::ErrorKind::PermissionDenied`] (retrying will not help); a corrupt
/// record or any other alert is [`io::ErrorKind::InvalidData`] (retried
/// after the usual backoff); a timeout stays a timeout.
pub(super) fn tls_error(server: &str, e: io::Error) -> io::Error {
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
