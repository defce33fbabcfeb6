//! twemproxy (nutcracker) in front of memcached servers
//! ([`NutcrackerServer`]).

use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::pool::ServerPool;

use crate::memcached::MemcachedServer;
use crate::options::ServerOptions;
use crate::process::{free_port, spawn_tied};

/// A twemproxy (`nutcracker`) process in front of memcached servers of its
/// own, for tests of the text-protocol backend behind a proxy. It listens
/// on a free 127.0.0.1 port (its stats listener on another one), spreads
/// keys with `distribution: ketama` and `hash: md5` (libketama's placement), and keeps one
/// connection per server (`server_connections: 1`). It and its servers are
/// killed when dropped; its configuration lives in a scratch directory
/// removed then.
///
/// ```no_run
/// use mcds_testserver::{NutcrackerServer, ServerOptions};
///
/// let proxy = NutcrackerServer::start(3, ServerOptions::default());
/// let addr = proxy.addr(); // "127.0.0.1:<port>" of nutcracker
/// assert_eq!(proxy.backends().len(), 3);
/// # let _ = addr;
/// ```
#[derive(Debug)]
pub struct NutcrackerServer {
    child: Option<Child>,
    port: u16,
    dir: std::path::PathBuf,
    backends: ServerPool,
}

pub(crate) fn nutcracker_binary() -> String {
    if let Ok(bin) = std::env::var("MCDS_NUTCRACKER_BIN") {
        return bin;
    }
    // Debian installs it in /usr/sbin, which a non-root PATH may lack.
    let on_path = std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| dir.join("nutcracker").is_file())
    });
    if !on_path && std::path::Path::new("/usr/sbin/nutcracker").is_file() {
        return "/usr/sbin/nutcracker".into();
    }
    "nutcracker".into()
}

impl NutcrackerServer {
    /// Start `n` memcached servers with `options`, then nutcracker in
    /// front of them, and wait until it accepts connections. Panics with a
    /// clear message if the binary is missing.
    pub fn start(n: usize, options: ServerOptions) -> NutcrackerServer {
        let mut backends = ServerPool::start(n, options);
        let mut last = String::new();
        for attempt in 0..10 {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!(
                "mcds-nutcracker-{}-{port}-{attempt}",
                std::process::id()
            ));
            let mut proxy = NutcrackerServer {
                child: None,
                port,
                dir,
                backends,
            };
            match proxy.spawn() {
                Ok(()) => return proxy,
                Err(e) => last = e,
            }
            backends = std::mem::replace(
                &mut proxy.backends,
                ServerPool {
                    servers: Vec::new(),
                },
            );
        }
        panic!("could not start nutcracker: {last}");
    }

    fn config(&self) -> String {
        let mut conf = format!(
            "mcds:\n  listen: 127.0.0.1:{}\n  hash: md5\n  distribution: ketama\n  timeout: 2000\n  server_connections: 1\n  auto_eject_hosts: false\n  servers:\n",
            self.port
        );
        for addr in self.backends.addrs() {
            conf.push_str(&format!("   - {addr}:1\n"));
        }
        conf
    }

    fn spawn(&mut self) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("scratch directory: {e}"))?;
        let conf = self.dir.join("nutcracker.yml");
        std::fs::write(&conf, self.config()).map_err(|e| format!("writing {conf:?}: {e}"))?;
        let stats_port = free_port();
        let log = self.dir.join("nutcracker.log");
        let mut child = spawn_tied(nutcracker_binary(), |c| {
            c.arg("-c")
                .arg(&conf)
                .args(["-a", "127.0.0.1", "-s", &stats_port.to_string()])
                .arg("-o")
                .arg(&log)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
        })
        .map_err(|e| {
            format!(
                "cannot run `{}`: {e} — install it (apt-get install nutcracker) or set MCDS_NUTCRACKER_BIN; ./scripts/test.sh installs it",
                nutcracker_binary()
            )
        })?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(if matches!(status.code(), Some(126 | 127)) {
                    format!(
                        "cannot run `{}` ({status}) — install it (apt-get install nutcracker) or set MCDS_NUTCRACKER_BIN; ./scripts/test.sh installs it",
                        nutcracker_binary()
                    )
                } else {
                    format!(
                        "nutcracker on port {} exited at start: {status}: {log}",
                        self.port
                    )
                });
            }
            if TcpStream::connect(self.addr()).is_ok() {
                // Ours, not another process that took the port: ours would
                // have exited failing to bind it.
                std::thread::sleep(Duration::from_millis(50));
                if let Ok(None) = child.try_wait() {
                    self.child = Some(child);
                    return Ok(());
                }
                continue;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = child.kill();
        let _ = child.wait();
        Err(format!(
            "nutcracker on port {} did not accept connections within 5 s",
            self.port
        ))
    }

    /// `127.0.0.1:<port>` of the proxy.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The proxy's process id, while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// The memcached servers behind the proxy.
    pub fn backends(&self) -> &[MemcachedServer] {
        &self.backends.servers
    }

    /// The memcached servers behind the proxy, to kill or restart one.
    pub fn backends_mut(&mut self) -> &mut [MemcachedServer] {
        &mut self.backends.servers
    }

    /// Take the memcached servers out (they then live as long as the
    /// caller keeps them; the proxy is killed when dropped).
    pub fn into_parts(mut self) -> (NutcrackerProcess, Vec<MemcachedServer>) {
        let backends = std::mem::take(&mut self.backends.servers);
        let process = NutcrackerProcess {
            child: self.child.take(),
            dir: std::mem::take(&mut self.dir),
        };
        (process, backends)
    }
}

impl Drop for NutcrackerServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The nutcracker process of a [`NutcrackerServer`] split by
/// [`into_parts`](NutcrackerServer::into_parts): killed, and its scratch
/// directory removed, when dropped.
#[derive(Debug)]
pub struct NutcrackerProcess {
    child: Option<Child>,
    dir: std::path::PathBuf,
}

impl Drop for NutcrackerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if !self.dir.as_os_str().is_empty() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
