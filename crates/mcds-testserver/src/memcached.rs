//! One real memcached process on a free loopback port
//! ([`MemcachedServer`]), its TLS files, and the raw access tests use.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::options::{INCARNATION_KEY, Listen, ServerOptions};
use crate::process::{free_port, proc_state, spawn_tied};

/// A memcached process owned by a test. It listens on 127.0.0.1 only, on a
/// free port, and is killed when dropped.
///
/// ```no_run
/// use mcds_testserver::{MemcachedServer, ServerOptions};
///
/// let server = MemcachedServer::start(ServerOptions::default());
/// let addr = server.addr(); // "127.0.0.1:<port>"
/// server.pause();   // SIGSTOP
/// server.resume();  // SIGCONT
/// let mut server = server;
/// server.kill();    // SIGKILL
/// server.restart(); // same port, empty cache
/// assert_eq!(server.stat("curr_items"), 0);
/// # let _ = addr;
/// ```
#[derive(Debug)]
pub struct MemcachedServer {
    child: Option<Child>,
    port: u16,
    options: ServerOptions,
    /// The test's own files (certificates, socket, auth file) and the
    /// plain inspection port of a TLS server.
    files: Files,
    /// Command lines seen in `-vv` output, across restarts.
    log: Arc<Mutex<Vec<String>>>,
}

pub(crate) fn binary() -> String {
    std::env::var("MCDS_MEMCACHED_BIN").unwrap_or_else(|_| "memcached".into())
}

impl MemcachedServer {
    /// Start memcached on a free loopback port and wait until it accepts
    /// connections. Panics with a clear message if the binary is missing.
    pub fn start(options: ServerOptions) -> MemcachedServer {
        let mut last = String::new();
        for _ in 0..10 {
            let port = free_port();
            let files = match Files::new(&options) {
                Ok(files) => files,
                Err(e) => panic!("could not make the test server's files: {e}"),
            };
            let mut server = MemcachedServer {
                child: None,
                port,
                options: options.clone(),
                files,
                log: Arc::default(),
            };
            match server.spawn() {
                Ok(()) => return server,
                Err(e) => last = e,
            }
        }
        panic!("could not start memcached: {last}");
    }

    /// Start with the default options.
    pub fn start_default() -> MemcachedServer {
        MemcachedServer::start(ServerOptions::default())
    }

    fn spawn(&mut self) -> Result<(), String> {
        let stderr = if self.options.log_commands {
            Stdio::piped()
        } else {
            Stdio::null()
        };
        let args = self.options.args(self.port, &self.files);
        let mut child = spawn_tied(binary(), |c| {
            c.args(args)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(stderr);
        })
        .map_err(|e| {
                format!(
                    "cannot run `{}`: {e} — install it (apt-get install memcached) or set MCDS_MEMCACHED_BIN; ./scripts/test.sh installs it",
                    binary()
                )
            })?;
        if let Some(err) = child.stderr.take() {
            let log = Arc::clone(&self.log);
            std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    // "<24 mg key v": a command line received on fd 24.
                    let Some(rest) = line.strip_prefix('<') else {
                        continue;
                    };
                    let Some((_, command)) = rest.split_once(' ') else {
                        continue;
                    };
                    let mut words = command.split(' ');
                    let first = words.next().unwrap_or("");
                    if matches!(first, "new" | "server" | "connection")
                        || command.ends_with("connection closed.")
                    {
                        continue;
                    }
                    // A new connection's handshake reads (and after a
                    // restart creates) the incarnation marker: logged as
                    // "version", like the handshake it belongs to.
                    if words.next() == Some(INCARNATION_KEY) {
                        continue;
                    }
                    log.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(command.to_string());
                }
            });
        }
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                self.child = None;
                // setpriv exits 126/127 when it cannot exec the binary.
                if matches!(status.code(), Some(126 | 127)) {
                    return Err(format!(
                        "cannot run `{}` ({status}) — install it (apt-get install memcached) or set MCDS_MEMCACHED_BIN; ./scripts/test.sh installs it",
                        binary()
                    ));
                }
                return Err(format!(
                    "memcached on port {} exited at start: {status}",
                    self.port
                ));
            }
            if self.inspect().is_ok() {
                // Make sure it is *our* process answering, not another
                // test's server that grabbed the port first.
                let ours = self.child.as_ref().map(Child::id);
                let pid = self.stats().get("pid").and_then(|p| p.parse::<u32>().ok());
                if pid.is_some() && pid == ours {
                    return Ok(());
                }
                if pid.is_some() {
                    self.kill();
                    return Err(format!("port {} is taken by another memcached", self.port));
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        self.kill();
        Err(format!(
            "memcached on port {} did not accept connections within 5 s",
            self.port
        ))
    }

    /// Where clients connect: `127.0.0.1:<port>`, or `unix:<path>` for a
    /// server on a unix socket.
    pub fn addr(&self) -> String {
        match self.options.listen {
            Listen::Unix => format!("unix:{}", self.files.socket().display()),
            _ => format!("127.0.0.1:{}", self.port),
        }
    }

    /// The TCP port (unused by a server on a unix socket).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The certificates of a TLS server ([`Listen::Tls`]).
    pub fn tls_files(&self) -> Option<&TlsFiles> {
        self.files.tls.as_ref()
    }

    /// A plain connection for the kit's inspection: the TCP port, the plain
    /// listener of a TLS server, or the unix socket; authenticated first
    /// on a server that requires it.
    fn inspect(&self) -> std::io::Result<Box<dyn ReadWrite>> {
        let mut stream: Box<dyn ReadWrite> = match self.options.listen {
            Listen::Tcp => Box::new(TcpStream::connect(self.addr())?),
            Listen::Tls { .. } => {
                Box::new(TcpStream::connect(("127.0.0.1", self.files.plain_port))?)
            }
            Listen::Unix => Box::new(UnixStream::connect(self.files.socket())?),
        };
        stream.set_timeout(Duration::from_secs(5))?;
        if let Some((user, password)) = &self.options.auth {
            let secret = format!("{user} {password}");
            stream
                .write_all(format!("set auth 0 0 {}\r\n{secret}\r\n", secret.len()).as_bytes())?;
            let mut reply = [0u8; 8];
            stream.read_exact(&mut reply)?;
            if &reply != b"STORED\r\n" {
                return Err(std::io::Error::other(format!(
                    "the test server refused its own credentials: {:?}",
                    String::from_utf8_lossy(&reply)
                )));
            }
        }
        Ok(stream)
    }

    /// The process id, while running.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Whether the process is running.
    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// SIGKILL the process and reap it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start it again on the same port with the same options (after
    /// [`kill`](Self::kill); kills first if still running). The cache is empty.
    pub fn restart(&mut self) {
        self.kill();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.spawn() {
                Ok(()) => return,
                Err(e) if Instant::now() > deadline => panic!("could not restart memcached: {e}"),
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }

    /// Start it again on the same port with other `options` (e.g. `-C`
    /// added): a server that restarts with a different configuration.
    pub fn restart_with(&mut self, options: ServerOptions) {
        self.options = options;
        self.restart();
    }

    fn signal(&self, signal: &str) {
        if let Some(pid) = self.pid() {
            let status = Command::new("kill")
                .args([signal, &pid.to_string()])
                .status()
                .expect("cannot run kill(1)");
            assert!(status.success(), "kill {signal} {pid} failed");
        }
    }

    /// Whether every thread of the process is stopped (Linux `/proc`).
    fn stopped(&self) -> bool {
        let Some(pid) = self.pid() else { return false };
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return false;
        };
        tasks.filter_map(Result::ok).all(|task| {
            proc_state(task.path().join("stat")).is_none_or(|state| state == 'T' || state == 't')
        })
    }

    fn wait_until(&self, stopped: bool) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.stopped() != stopped && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// SIGSTOP: the server stops answering but keeps its connections.
    /// Returns once every thread has stopped.
    pub fn pause(&self) {
        self.signal("-STOP");
        self.wait_until(true);
    }

    /// SIGCONT after [`pause`](Self::pause). Returns once it runs again.
    pub fn resume(&self) {
        self.signal("-CONT");
        self.wait_until(false);
    }

    /// Send a raw text-protocol command and read the reply up to and
    /// including a line for which `done` is true. For inspection only.
    pub fn raw(&self, command: &[u8], done: impl Fn(&str) -> bool) -> Vec<String> {
        // A loaded machine (a test binary starting 150 servers at once) can
        // reset a connection on a full accept queue: retry for a while.
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut stream = loop {
            match self.inspect() {
                Ok(stream) => break stream,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => panic!("connect for a raw command: {e}"),
            }
        };
        stream.write_all(command).expect("write raw command");
        let mut reader = BufReader::new(stream);
        let mut lines = Vec::new();
        loop {
            // Bytes, shown lossily: a reply may echo a key that is not UTF-8.
            let mut bytes = Vec::new();
            if reader.read_until(b'\n', &mut bytes).unwrap_or(0) == 0 {
                break;
            }
            let line = String::from_utf8_lossy(&bytes).trim_end().to_string();
            let finished = done(&line);
            lines.push(line);
            if finished {
                break;
            }
        }
        lines
    }

    /// The server's `stats`, by name.
    pub fn stats(&self) -> HashMap<String, String> {
        self.raw(b"stats\r\n", |l| l == "END" || l.starts_with("ERROR"))
            .into_iter()
            .filter_map(|l| {
                let mut parts = l.splitn(3, ' ');
                match (parts.next(), parts.next(), parts.next()) {
                    (Some("STAT"), Some(name), Some(value)) => {
                        Some((name.to_string(), value.to_string()))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// One numeric stat (0 if absent).
    pub fn stat(&self, name: &str) -> u64 {
        self.stats()
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Every command line the server has received from clients, in order of
    /// arrival (`version` handshakes included), without the kit's own
    /// `stats` calls. Needs [`ServerOptions::log_commands`]. Everything a client sent
    /// before this call is included.
    pub fn commands(&self) -> Vec<String> {
        assert!(
            self.options.log_commands,
            "start the server with ServerOptions::log_commands() to record commands"
        );
        // A marker: once the server logged this `stats`, it has logged every
        // command that was answered before it.
        let seen = |log: &Vec<String>| log.iter().filter(|c| c.as_str() == "stats").count();
        let before = seen(&self.log.lock().unwrap_or_else(|e| e.into_inner()));
        self.stats();
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let log = self.log.lock().unwrap_or_else(|e| e.into_inner()).clone();
            if seen(&log) > before || Instant::now() > deadline {
                return log.into_iter().filter(|c| c != "stats").collect();
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// How many data commands clients have sent: [`commands`](Self::commands)
    /// without the `version` handshakes.
    pub fn command_count(&self) -> u64 {
        self.commands().iter().filter(|c| *c != "version").count() as u64
    }

    /// Store a raw value with the classic `set` command, bypassing mcds (to
    /// plant garbage under a structure's key, for example).
    pub fn raw_set(&self, key: &str, value: &[u8]) {
        let mut command = format!("set {key} 0 0 {}\r\n", value.len()).into_bytes();
        command.extend_from_slice(value);
        command.extend_from_slice(b"\r\n");
        let reply = self.raw(&command, |_| true);
        assert_eq!(
            reply.first().map(String::as_str),
            Some("STORED"),
            "raw set {key}"
        );
    }
}

/// A connection the kit inspects a server through.
pub(crate) trait ReadWrite: Read + Write {
    fn set_timeout(&self, timeout: Duration) -> std::io::Result<()>;
}

impl ReadWrite for TcpStream {
    fn set_timeout(&self, timeout: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(timeout))?;
        self.set_write_timeout(Some(timeout))
    }
}

impl ReadWrite for UnixStream {
    fn set_timeout(&self, timeout: Duration) -> std::io::Result<()> {
        self.set_read_timeout(Some(timeout))?;
        self.set_write_timeout(Some(timeout))
    }
}

/// The certificates of a TLS test server, PEM files in a directory of the
/// test's own (removed with the server).
#[derive(Debug)]
pub struct TlsFiles {
    /// The CA that signed the server's (and the client's) certificate: a
    /// client's `ca_file`.
    pub ca: PathBuf,
    /// The server's certificate, for `127.0.0.1` and `localhost`.
    pub server_cert: PathBuf,
    /// The server's key.
    pub server_key: PathBuf,
    /// A client certificate signed by [`ca`](Self::ca).
    pub client_cert: PathBuf,
    /// Its key.
    pub client_key: PathBuf,
    /// Another CA, which signed nothing here: a `ca_file` the server's
    /// certificate does not verify against.
    pub other_ca: PathBuf,
    /// A client certificate signed by [`other_ca`](Self::other_ca), which a
    /// server that checks clients refuses.
    pub other_client_cert: PathBuf,
    /// Its key.
    pub other_client_key: PathBuf,
}

impl TlsFiles {
    fn make(dir: &std::path::Path) -> Result<TlsFiles, String> {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let e = |e: rcgen::Error| e.to_string();
        let ca = |name: &str| -> Result<(rcgen::Certificate, KeyPair), String> {
            let mut params = CertificateParams::new(Vec::<String>::new()).map_err(e)?;
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, name);
            let key = KeyPair::generate().map_err(e)?;
            let cert = params.self_signed(&key).map_err(e)?;
            Ok((cert, key))
        };
        let leaf = |names: Vec<String>, issuer: &(rcgen::Certificate, KeyPair)| {
            let params = CertificateParams::new(names).map_err(e)?;
            let key = KeyPair::generate().map_err(e)?;
            let cert = params.signed_by(&key, &issuer.0, &issuer.1).map_err(e)?;
            Ok::<_, String>((cert, key))
        };
        let write = |name: &str, pem: String| -> Result<PathBuf, String> {
            let path = dir.join(name);
            std::fs::write(&path, pem).map_err(|e| format!("{}: {e}", path.display()))?;
            Ok(path)
        };
        let ca_pair = ca("mcds test CA")?;
        let other = ca("another CA")?;
        let server = leaf(vec!["127.0.0.1".into(), "localhost".into()], &ca_pair)?;
        let client = leaf(vec!["mcds-test-client".into()], &ca_pair)?;
        let stranger = leaf(vec!["mcds-test-client".into()], &other)?;
        Ok(TlsFiles {
            ca: write("ca.pem", ca_pair.0.pem())?,
            server_cert: write("server.pem", server.0.pem())?,
            server_key: write("server.key", server.1.serialize_pem())?,
            client_cert: write("client.pem", client.0.pem())?,
            client_key: write("client.key", client.1.serialize_pem())?,
            other_ca: write("other-ca.pem", other.0.pem())?,
            other_client_cert: write("other-client.pem", stranger.0.pem())?,
            other_client_key: write("other-client.key", stranger.1.serialize_pem())?,
        })
    }
}

/// A test server's own files: a directory (removed on drop) with its
/// certificates, its unix socket and its auth file, as its options need.
#[derive(Debug)]
pub(crate) struct Files {
    pub(crate) dir: PathBuf,
    pub(crate) tls: Option<TlsFiles>,
    /// The plain listener of a TLS server.
    pub(crate) plain_port: u16,
}

impl Files {
    fn new(options: &ServerOptions) -> Result<Files, String> {
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mcds-testserver-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut files = Files {
            dir,
            tls: None,
            plain_port: 0,
        };
        if matches!(options.listen, Listen::Tls { .. }) {
            files.tls = Some(TlsFiles::make(&files.dir)?);
            files.plain_port = free_port();
        }
        if let Some((user, password)) = &options.auth {
            let path = files.dir.join("authfile");
            std::fs::write(&path, format!("{user}:{password}\n"))
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(files)
    }

    pub(crate) fn socket(&self) -> PathBuf {
        self.dir.join("memcached.sock")
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for MemcachedServer {
    fn drop(&mut self) {
        // A paused process must be continued to die promptly on some
        // systems; SIGKILL works on stopped processes on Linux.
        self.kill();
    }
}
