//! What a test server is started with: [`ServerOptions`] and [`Listen`].

use crate::memcached::Files;

/// The key of mcds's server incarnation marker (`mcds_memcached::INCARNATION_KEY`:
/// this crate sits below mcds-memcached, so it names the key itself; a test in
/// mcds-testkit checks that the two agree).
pub const INCARNATION_KEY: &str = "__mcds_incarnation";

/// How to start memcached.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// `-m`: memory for items, in megabytes (default 64).
    pub memory_mb: u32,
    /// `-M`: return an error instead of evicting when memory is full.
    pub no_evict: bool,
    /// `-I`: item size limit, e.g. `"1m"` (default: memcached's, 1 MiB).
    pub item_size: Option<String>,
    /// `-t`: worker threads (default 2, the machines have 2 cores).
    pub threads: u32,
    /// Any further arguments.
    pub extra_args: Vec<String>,
    /// Run with `-vv` and record every command line the server receives
    /// (see [`MemcachedServer::commands`](crate::MemcachedServer::commands)).
    pub log_commands: bool,
    /// How clients reach it: TCP (the default), TLS or a unix socket.
    pub listen: Listen,
    /// `-Y`: require memcached's ASCII authentication with this user and
    /// password.
    pub auth: Option<(String, String)>,
}

/// How a test server listens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Listen {
    /// Plain TCP on a free loopback port.
    #[default]
    Tcp,
    /// TLS (`-Z`) on a free loopback port, with a certificate for
    /// `127.0.0.1` and `localhost` from a CA made for the test (see
    /// [`TlsFiles`](crate::TlsFiles)). With `client_auth`, the server also requires a client
    /// certificate from that CA (`ssl_verify_mode=2`). The kit's own
    /// inspection ([`MemcachedServer::raw`](crate::MemcachedServer::raw), `stats`) goes through a second,
    /// plain listener (memcached's `notls:`).
    Tls {
        /// Require client certificates.
        client_auth: bool,
    },
    /// A unix-domain socket (`-s`) in a directory made for the test; no
    /// network listener.
    Unix,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            memory_mb: 64,
            no_evict: false,
            item_size: None,
            threads: 2,
            extra_args: Vec::new(),
            log_commands: false,
            listen: Listen::Tcp,
            auth: None,
        }
    }
}

impl ServerOptions {
    /// Set `-m`.
    pub fn memory_mb(mut self, mb: u32) -> Self {
        self.memory_mb = mb;
        self
    }

    /// Set `-M`.
    pub fn no_evict(mut self) -> Self {
        self.no_evict = true;
        self
    }

    /// Set `-I`.
    pub fn item_size(mut self, size: &str) -> Self {
        self.item_size = Some(size.to_string());
        self
    }

    /// Record the commands the server receives (`-vv`).
    pub fn log_commands(mut self) -> Self {
        self.log_commands = true;
        self
    }

    /// Listen with TLS (see [`Listen::Tls`]).
    pub fn tls(mut self) -> Self {
        self.listen = Listen::Tls { client_auth: false };
        self
    }

    /// Listen with TLS and require client certificates (see [`Listen::Tls`]).
    pub fn tls_client_auth(mut self) -> Self {
        self.listen = Listen::Tls { client_auth: true };
        self
    }

    /// Listen on a unix socket (see [`Listen::Unix`]).
    pub fn unix_socket(mut self) -> Self {
        self.listen = Listen::Unix;
        self
    }

    /// Require ASCII authentication (`-Y`) with this user and password.
    pub fn auth(mut self, user: &str, password: &str) -> Self {
        self.auth = Some((user.to_string(), password.to_string()));
        self
    }

    pub(crate) fn args(&self, port: u16, files: &Files) -> Vec<String> {
        let mut args = match self.listen {
            Listen::Tcp => vec![
                "-l".into(),
                "127.0.0.1".into(),
                "-p".into(),
                port.to_string(),
            ],
            Listen::Tls { client_auth } => {
                let tls = files.tls.as_ref().expect("TLS files are made at start");
                let mut settings = format!(
                    "ssl_chain_cert={},ssl_key={}",
                    tls.server_cert.display(),
                    tls.server_key.display()
                );
                if client_auth {
                    settings.push_str(&format!(
                        ",ssl_verify_mode=2,ssl_ca_cert={}",
                        tls.ca.display()
                    ));
                }
                vec![
                    "-Z".into(),
                    "-o".into(),
                    settings,
                    "-l".into(),
                    format!("127.0.0.1:{port},notls:127.0.0.1:{}", files.plain_port),
                ]
            }
            Listen::Unix => vec!["-s".into(), files.socket().display().to_string()],
        };
        if self.auth.is_some() {
            args.push("-Y".into());
            args.push(files.dir.join("authfile").display().to_string());
        }
        args.extend([
            "-U".into(),
            "0".into(),
            // Ignored unless running as root, where memcached requires it.
            "-u".into(),
            "root".into(),
            "-m".into(),
            self.memory_mb.to_string(),
            "-t".into(),
            self.threads.to_string(),
        ]);
        if self.no_evict {
            args.push("-M".into());
        }
        if self.log_commands {
            args.push("-vv".into());
        }
        if let Some(size) = &self.item_size {
            args.push("-I".into());
            args.push(size.clone());
        }
        args.extend(self.extra_args.iter().cloned());
        args
    }
}
