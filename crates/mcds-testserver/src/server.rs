//! Real memcached processes on free loopback ports.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

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
    /// (see [`MemcachedServer::commands`]).
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
    /// [`TlsFiles`]). With `client_auth`, the server also requires a client
    /// certificate from that CA (`ssl_verify_mode=2`). The kit's own
    /// inspection ([`MemcachedServer::raw`], `stats`) goes through a second,
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

    fn args(&self, port: u16, files: &Files) -> Vec<String> {
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

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("cannot bind a loopback port to find a free one")
}

fn binary() -> String {
    std::env::var("MCDS_MEMCACHED_BIN").unwrap_or_else(|_| "memcached".into())
}

/// A request to the spawner thread: the command, and where to send the child.
type SpawnJob = (Command, Sender<std::io::Result<Child>>);

/// Start `program` so that the process dies with the test process, however
/// the test process ends: by returning, by a panic, or by SIGKILL.
/// `configure` sets its arguments, environment and standard streams.
///
/// Dropping a [`MemcachedServer`] kills it, but a test killed with `-9` (or a
/// server kept in a `static`, which Rust never drops) runs no destructor. So
/// the process is started under `setpriv --pdeathsig KILL` (util-linux, part
/// of every Debian system), which asks the kernel to SIGKILL it when its
/// parent goes away, and then execs `program` under the same pid.
///
/// The kernel's notion of "parent" here is the *thread* that forked, not the
/// process: a server forked from a test's own thread would be killed when
/// that test's thread ends, even while a `static` still hands it out to other
/// tests. Every process is therefore forked from one spawner thread that
/// lives as long as the test process, so the signal comes exactly when the
/// test process dies.
///
/// Where `setpriv` is missing, `program` is started directly, with a warning:
/// it is then still killed on drop and on panic, but not when the test
/// process itself is killed.
///
/// ```no_run
/// let child = mcds_testserver::spawn_tied("sleep", |c| {
///     c.arg("60");
/// })
/// .unwrap();
/// // `sleep` is SIGKILLed by the kernel if this process dies first.
/// # drop(child);
/// ```
pub fn spawn_tied(
    program: impl AsRef<OsStr>,
    configure: impl FnOnce(&mut Command),
) -> std::io::Result<Child> {
    static SPAWNER: OnceLock<Sender<SpawnJob>> = OnceLock::new();
    let mut command = if have_setpriv() {
        let mut command = Command::new("setpriv");
        command.args(["--pdeathsig", "KILL", "--"]).arg(program);
        command
    } else {
        Command::new(program)
    };
    configure(&mut command);
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = channel::<SpawnJob>();
        std::thread::Builder::new()
            .name("mcds-testkit-spawner".into())
            .spawn(move || {
                for (mut command, reply) in rx {
                    let _ = reply.send(command.spawn());
                }
            })
            .expect("cannot start the test kit's spawner thread");
        tx
    });
    let gone = || std::io::Error::other("the test kit's spawner thread is gone");
    let (reply, result) = channel();
    spawner.send((command, reply)).map_err(|_| gone())?;
    result.recv().map_err(|_| gone())?
}

/// Whether process `pid` is alive: it exists and is not a zombie (Linux
/// `/proc`). For tests that check a process is gone.
pub fn process_alive(pid: u32) -> bool {
    proc_state(format!("/proc/{pid}/stat")).is_some_and(|state| state != 'Z' && state != 'X')
}

/// The state letter of a `/proc/.../stat` file (R, S, T, Z, ...).
fn proc_state(stat: impl AsRef<std::path::Path>) -> Option<char> {
    let stat = std::fs::read_to_string(stat).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// Whether `setpriv --pdeathsig` works here (checked once).
/// `MC_TESTKIT_NO_SETPRIV=1` turns it off, to see `tests/no_leaks.rs` fail
/// without it.
fn have_setpriv() -> bool {
    static HAVE: OnceLock<bool> = OnceLock::new();
    std::env::var_os("MC_TESTKIT_NO_SETPRIV").is_none()
        && *HAVE.get_or_init(|| {
            let ok = Command::new("setpriv")
                .args(["--pdeathsig", "KILL", "--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "mcds-testkit: `setpriv --pdeathsig` is unavailable (install util-linux): \
                 processes a test starts will outlive it if it is killed with SIGKILL"
                );
            }
            ok
        })
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
trait ReadWrite: Read + Write {
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
struct Files {
    dir: PathBuf,
    tls: Option<TlsFiles>,
    /// The plain listener of a TLS server.
    plain_port: u16,
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

    fn socket(&self) -> PathBuf {
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

fn nutcracker_binary() -> String {
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
