//! Where a server listens ([`Endpoint`]) and how a list of addresses is
//! read and resolved ([`resolve_servers`]).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

use mcds_core::{Error, Result};

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
