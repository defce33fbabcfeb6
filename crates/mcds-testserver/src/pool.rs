//! Several memcached servers started together ([`ServerPool`]).

use crate::memcached::MemcachedServer;
use crate::options::ServerOptions;

/// Several servers, for a pool.
#[derive(Debug)]
pub struct ServerPool {
    /// The servers, in configuration order.
    pub servers: Vec<MemcachedServer>,
}

impl ServerPool {
    /// Start `n` servers with the same options.
    pub fn start(n: usize, options: ServerOptions) -> ServerPool {
        ServerPool {
            servers: (0..n)
                .map(|_| MemcachedServer::start(options.clone()))
                .collect(),
        }
    }

    /// Their addresses.
    pub fn addrs(&self) -> Vec<String> {
        self.servers.iter().map(MemcachedServer::addr).collect()
    }

    /// `host:port,host:port,...`.
    pub fn servers_arg(&self) -> String {
        self.addrs().join(",")
    }
}
